// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Guarding one container: attach + record, detach + forget, gc, under one
 * lock.  No bpf(), cgroupfs or /proc here: those go through env.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "container.h"
#include "guard.h" /* GUARD_LINK_*: declarations only, no bpf() here */
#include "learn.h"
#include "log.h"
#include "record.h"
#include "util.h"

/* The cgroup a record names is still the one it guarded. */
static bool record_cgroup_alive(const struct container_env *env, const struct nsguard_record *rec)
{
	__u64 id = 0;

	if (env->cgroup_id(rec->cgroup_path, &id) == 0 && id == rec->cgroup_id)
		return true;
	nsg_clear_error();
	/* Moved or renamed: still alive if the kernel knows the id. */
	return env->cgroup_alive(rec->cgroup_id);
}

/*
 * The record guarding cgid: its index entry; or, when the index has none but
 * a link is pinned there (a record from an older nsguard, an entry lost in a
 * crash), the one a read of every record finds.  -ENOENT, no message, if none.
 */
static int find_guard(const struct container_env *env, __u64 cgid, struct nsguard_record *rec)
{
	int err = record_read_cgroup(env->record_dir, cgid, rec);

	if (err != -ENOENT || !env->link_pinned(cgid))
		return err;
	err = record_find_cgroup(env->record_dir, cgid, rec);
	if (err == -ENOENT)
		nsg_clear_error();
	return err;
}

struct claim_ctx {
	const struct container_env *env;
	const char *id;
	const char *cgroup_path;
};

/* Another id's live guard on cgid (with a link: a record alone holds no place). */
static int other_guard(const struct claim_ctx *c, __u64 cgid, struct nsguard_record *rec)
{
	int err = 0;

	if (!c->env->link_pinned(cgid))
		return -ENOENT;
	err = find_guard(c->env, cgid, rec);
	if (err == 0 && strcmp(rec->id, c->id) == 0) {
		record_free(rec);
		return -ENOENT;
	}
	return err;
}

/* A guarded cgroup below this one: its processes would get this policy too. */
static int claim_below_cb(__u64 cgid, void *data)
{
	struct claim_ctx *c = data;
	struct nsguard_record rec = { 0 };
	int err = other_guard(c, cgid, &rec);

	if (err == -ENOENT)
		return 0;
	if (err == 0)
		err = nsg_fail(EBUSY,
			       "cgroup %s is above cgroup %s, which is guarded for container %s; "
			       "its policy would apply there too",
			       c->cgroup_path, rec.cgroup_path, rec.id);
	record_free(&rec);
	return err;
}

/* Nor below another container's guard: its policy and events would cover this one. */
static int claim_above(struct claim_ctx *c)
{
	cleanup_free char *p = strdup(c->cgroup_path);
	struct nsguard_record rec = { 0 };
	char *slash;
	__u64 cgid = 0;
	int err = 0;

	if (!p)
		return nsg_fail(ENOMEM, "out of memory");
	while (!err && (slash = strrchr(p, '/')) && slash != p) {
		*slash = '\0';
		err = c->env->cgroup_id(p, &cgid);
		if (err == -ENOENT) { /* removed since: nothing there to guard */
			nsg_clear_error();
			err = 0;
			continue;
		}
		if (err)
			break;
		err = other_guard(c, cgid, &rec);
		if (err == -ENOENT) {
			err = 0;
			continue;
		}
		/* Guards made by nsguard attach (pid 0) may nest: the admin's choice. */
		if (err == 0 && rec.pid)
			err = nsg_fail(EBUSY,
				       "cgroup %s is below cgroup %s, which is guarded for container "
				       "%s; that container's policy would apply here too",
				       c->cgroup_path, rec.cgroup_path, rec.id);
		record_free(&rec);
	}
	return err;
}

/*
 * Under the lock: may id guard cgid?  *stale is a record of id to move.
 * Lookups by cgroup id and walks of this cgroup's own ancestors and
 * descendants: nothing here grows with the number of guarded containers.
 */
static int check_claims(const struct container_env *env, const char *id, const char *cgroup_path,
			__u64 cgid, pid_t pid, struct nsguard_record *stale, bool *move,
			bool *walk_failed)
{
	struct claim_ctx c = { .env = env, .id = id, .cgroup_path = cgroup_path };
	struct nsguard_record other = { 0 };
	__u64 t = 0;
	int err = 0;

	*move = false;
	/* One guard per cgroup: any record of another id, even without a link. */
	err = find_guard(env, cgid, &other);
	if (err == 0 && strcmp(other.id, id) != 0)
		err = nsg_fail(EBUSY, "cgroup %s is already guarded for container %s; detach it first",
			       cgroup_path, other.id);
	record_free(&other);
	if (err && err != -ENOENT)
		return err;
	/* A container's guard neither covers another's nor sits under one. */
	if (pid > 0) {
		err = claim_above(&c) ?: env->cgroups_below(cgroup_path, claim_below_cb, &c);
		/* Looking around the creator's cgroup path failed: never opened either. */
		*walk_failed = err && err != -EBUSY;
		if (err)
			return err;
	}
	/*
	 * One cgroup per id: a second container that takes a guarded id (under
	 * another runtime root) must not move the first one's guard away.  A
	 * re-created container, whose old cgroup is gone, may.
	 */
	err = record_read(env->record_dir, id, stale);
	if (err == -ENOENT) {
		nsg_clear_error();
		return 0;
	}
	if (err)
		return err;
	/*
	 * The same cgroup: the runtime running the same container's hook again
	 * rewrites the policy.  Another container that took the id and shares
	 * the cgroup (shared-cgroups = allow) may not: its rewrites, under a
	 * running container, would each lose the count of requests in flight.
	 */
	if (stale->cgroup_id == cgid) {
		if (pid > 0 && stale->pid && stale->pid != (__u32)pid &&
		    env->start_time((pid_t)stale->pid, &t) == 0 && t == stale->start_time)
			return nsg_fail(EBUSY,
					"the id is already guarding cgroup %s for a running container "
					"(pid %u); a second container cannot take it",
					stale->cgroup_path, stale->pid);
		return 0;
	}
	if (record_cgroup_alive(env, stale) && env->link_pinned(stale->cgroup_id))
		return nsg_fail(EBUSY,
				"the id is already guarding cgroup %s, which is still alive; a "
				"second container cannot take it (another runtime root?)",
				stale->cgroup_path);
	*move = true;
	return 0;
}

/* The init's pid and start time for a record; zeros for pid 0. */
static int init_identity(const struct container_env *env, pid_t pid, __u32 *pid_out,
			 __u64 *start_out)
{
	int err;

	*pid_out = 0;
	*start_out = 0;
	if (pid <= 0)
		return 0;
	err = env->start_time(pid, start_out);
	if (err)
		return nsg_fail(-err, "cannot read the start time of pid %d: %s", (int)pid,
				strerror(-err));
	*pid_out = (__u32)pid;
	return 0;
}

int container_guard(const struct container_env *env, const struct container_spec *spec,
		    struct nsguard_policy *pol, bool *claim_refused)
{
	const char *id = spec->id, *cgroup_path = spec->cgroup_path;
	pid_t pid = spec->pid;
	struct nsguard_record rec = { 0 }, stale = { 0 };
	cleanup_close int own_cgfd = -1, lock = -1;
	int cgfd;
	char *link_pin = NULL;
	bool had_link, move = false;
	__u64 cgid = 0;
	int err = 0;

	*claim_refused = false;
	/* One open: the id checked is the id of the cgroup attached to. */
	if (spec->have_cgroup_fd) {
		cgid = spec->cgroup_id;
		cgfd = spec->cgroup_fd;
	} else {
		cgfd = own_cgfd = env->cgroup_open(cgroup_path, &cgid);
	}
	if (cgfd < 0)
		return cgfd;
	/* Before anything is attached: a failure here leaves nothing behind. */
	err = init_identity(env, pid, &rec.pid, &rec.start_time);
	if (err)
		return err;
	/* Check, attach and record as one step against other hooks and gc. */
	err = env->lock(&lock);
	if (err) {
		/* Held too long: perhaps by another container's doing, never a reason to open. */
		*claim_refused = err == -ETIMEDOUT;
		return err;
	}
	err = check_claims(env, id, cgroup_path, cgid, pid, &stale, &move, claim_refused);
	if (err) {
		/* The id, the cgroup path and what is below it are the container creator's. */
		*claim_refused = *claim_refused || err == -EBUSY;
		goto out;
	}
	had_link = env->link_pinned(cgid);
	pol->cgroup_id = cgid;
	/* A new link whose policy write fails stays and denies (detach --cgroup). */
	err = env->attach(cgfd, cgid, pol, &link_pin);
	/*
	 * Another build's pins this hook may not move (an older nsguard on the
	 * route the container's creator chose): never opened, or fail-mode
	 * open would start it unguarded on that route every time.  Nor is
	 * -EPERM, which after the privilege check means an LSM refused bpf():
	 * nsguard's own bpf() guard does for a hook run from a guarded cgroup
	 * (a runtime inside a guarded container).
	 */
	if (err) {
		*claim_refused = *claim_refused || err == -ESTALE || err == -EPERM;
		goto out;
	}

	rec.id = (char *)id;
	rec.cgroup_path = (char *)cgroup_path;
	rec.cgroup_id = cgid;
	rec.link_pin = link_pin;
	rec.policy = *pol;
	rec.shared = spec->shared;
	rec.learn_dir = pol->mode == NSGUARD_MODE_LEARN ? (char *)spec->learn_dir : NULL;
	if (spec->identity)
		rec.identity = *spec->identity; /* borrowed, like the rest: never freed here */
	err = record_write(env->record_dir, &rec);
	if (err) {
		/* Without a record nothing would ever detach it. */
		if (!had_link)
			env->detach(cgid);
		/* A full /run may be other containers' doing: never opened. */
		*claim_refused = *claim_refused || err == -ENOSPC || err == -EDQUOT;
		nsg_fail_context(err, "writing the record of container %s", id);
		goto out;
	}
	if (move) {
		env->detach(stale.cgroup_id);
		record_index_forget(env->record_dir, stale.cgroup_id);
	}
out:
	free(link_pin);
	record_free(&stale);
	return err;
}

/*
 * Learn mode ends: write what the container needed, from the usage the
 * program kept, before the link (and with it the usage) goes.
 */
static int learn_finish(const struct container_env *env, const struct nsguard_record *rec)
{
	struct nsguard_usage used;
	int err = 0;

	if (rec->policy.mode != NSGUARD_MODE_LEARN || !rec->learn_dir ||
	    !env->link_pinned(rec->cgroup_id))
		return 0;
	err = env->read_learned(rec->cgroup_id, &used);
	if (err == -ENOENT) {
		/* The attach could not keep it (the map was full): nothing to write. */
		nsg_warn("warning: learn mode: no usage was kept for %s, no suggestion written",
			 rec->id);
		nsg_clear_error();
		return 0;
	}
	if (!err)
		err = learn_write(rec->learn_dir, rec, &used);
	if (err)
		return nsg_fail_context(err, "learn mode: no suggestion written for %s", rec->id);
	return 0;
}

/* container_unguard, for a caller that holds the lock. */
static int unguard_locked(const struct container_env *env, const char *id, bool force)
{
	struct nsguard_record rec = { 0 };
	bool populated = false;
	__u64 t = 0;
	int err = 0;

	err = record_read(env->record_dir, id, &rec);
	if (err)
		return err;
	/*
	 * Runtimes pass poststop no pid.  While the guarded instance's init
	 * runs (same pid, same start time), a poststop for its id is another
	 * instance's: a second container that took the id, a late one.
	 */
	if (!force && rec.pid) {
		err = env->start_time((pid_t)rec.pid, &t);
		if (err == 0 && t == rec.start_time) {
			err = nsg_fail(EBUSY,
				       "the guarded instance's init (pid %u) is still running, so "
				       "this is another container with the same id, and the guard "
				       "stays",
				       rec.pid);
			goto out;
		}
		/* Anything but "gone" or "another process now": cannot tell. */
		if (err && err != -ESRCH) {
			err = nsg_fail(-err, "cannot tell whether the guarded instance's init (pid "
					     "%u) still runs: %s; the guard stays",
				       rec.pid, strerror(-err));
			goto out;
		}
	}
	/*
	 * Runtimes empty the cgroup before poststop.  Processes left there
	 * (init gone, its children not: no pid namespace) are still the
	 * guarded instance's, unless the admin allowed a shared cgroup.
	 */
	if (!force && !rec.shared && record_cgroup_alive(env, &rec) &&
	    env->cgroup_populated(rec.cgroup_path, &populated) == 0 && populated) {
		err = nsg_fail(EBUSY,
			       "its cgroup %s still holds processes, so the guard stays (nsguard "
			       "detach --id removes it)",
			       rec.cgroup_path);
		goto out;
	}
	nsg_clear_error();
	err = learn_finish(env, &rec);
	if (err && !force) {
		nsg_fail_context(err, "the guard stays");
		goto out;
	}
	if (err)
		nsg_warn("warning: %s; detaching anyway", nsg_last_error());
	err = env->detach(rec.cgroup_id);
	/* Retired, not removed: an event read later still names it. */
	if (!err)
		err = record_retire(env->record_dir, id, rec.cgroup_id);
out:
	record_free(&rec);
	return err;
}

int container_unguard(const struct container_env *env, const char *id, bool force)
{
	cleanup_close int lock = -1;
	int err = env->lock(&lock);

	return err ?: unguard_locked(env, id, force);
}

int container_unguard_cgroup(const struct container_env *env, const char *cgroup_path,
			     char **id_out)
{
	struct nsguard_record rec = { 0 };
	cleanup_close int lock = -1;
	__u64 cgid = 0;
	int err = 0;

	*id_out = NULL;
	/* Under the lock: a hook's link about to be recorded is not a bare link. */
	err = env->lock(&lock);
	if (err)
		return err;
	err = env->cgroup_id(cgroup_path, &cgid);
	if (err == 0) {
		err = find_guard(env, cgid, &rec);
		if (err == -ENOENT) {
			/* A link without a record: a failed attach. */
			if (!env->link_pinned(cgid))
				return nsg_fail(ENOENT, "cgroup %s is not guarded", cgroup_path);
			return env->detach(cgid);
		}
	} else if (err == -ENOENT) {
		nsg_clear_error();
		/* The cgroup is gone: its record by path. */
		err = record_find_path(env->record_dir, cgroup_path, &rec);
		if (err == -ENOENT)
			return nsg_fail(ENOENT, "cgroup %s does not exist and no record names it",
					cgroup_path);
	}
	if (err)
		return err;
	err = unguard_locked(env, rec.id, true);
	if (!err)
		*id_out = steal_pointer(&rec.id);
	record_free(&rec);
	return err;
}

struct gc {
	const struct container_env *env;
	void (*removed)(const struct gc_removal *r, void *data);
	void *data;
	__u64 *kept; /* cgroup ids of the records that stay */
	size_t n_kept;
	int failed;
};

/*
 * A live cgroup whose pinned link was detached under nsguard is not
 * guarded, whatever its pin says: attach it anew with pol (the record's;
 * deny for a bare link), usage and counters kept.  gc is root's periodic
 * pass, so it is what puts the guard back on a container that starts
 * nothing more (no next hook); the line it prints says it happened.
 */
static void gc_relink(struct gc *gc, __u64 cgid, const struct nsguard_policy *pol, const char *id,
		      const char *cgroup_path)
{
	struct nsguard_policy p = *pol;
	int state = gc->env->link_state(cgid), fd, err;

	if (state == GUARD_LINK_ATTACHED || state == GUARD_LINK_NONE)
		return;
	if (state < 0) {
		nsg_warn("gc: cgroup %llu: %s", (unsigned long long)cgid, nsg_last_error());
		gc->failed = state;
		return;
	}
	fd = gc->env->cgroup_open_id(cgid);
	if (fd == -ENOENT) { /* gone since: the next pass forgets it */
		nsg_clear_error();
		return;
	}
	p.cgroup_id = cgid;
	err = fd < 0 ? fd : gc->env->attach(fd, cgid, &p, NULL);
	if (fd >= 0)
		close(fd);
	if (err) {
		nsg_warn("gc: cgroup %llu%s%s: its link was detached, and attaching it anew failed: "
			 "%s",
			 (unsigned long long)cgid, id ? ", container " : "", id ? id : "",
			 nsg_last_error());
		gc->failed = err;
		return;
	}
	gc->removed(&(struct gc_removal){ .id = id, .cgroup_path = cgroup_path, .cgroup_id = cgid,
					  .why = "link detached", .relinked = true },
		    gc->data);
}

static int gc_record(const struct nsguard_record *rec, void *data)
{
	struct gc *gc = data;
	__u64 id = 0, *k;
	int err = gc->env->cgroup_id(rec->cgroup_path, &id);

	if (err == 0 && id == rec->cgroup_id) {
		/* A lost entry only costs lookups their speed: put it back. */
		if (record_index_repair(gc->env->record_dir, rec))
			nsg_warn("gc: cannot index the record of %s by cgroup id", rec->id);
		k = realloc(gc->kept, (gc->n_kept + 1) * sizeof(*k));
		if (!k)
			return nsg_fail(ENOMEM, "out of memory");
		gc->kept = k;
		gc->kept[gc->n_kept++] = id;
		gc_relink(gc, id, &rec->policy, rec->id, rec->cgroup_path);
		return 0;
	}
	/* Only "gone" or "re-created" count; anything else leaves it alone. */
	if (err && err != -ENOENT)
		return 0;
	nsg_clear_error();
	/* The cgroup is gone either way: a suggestion that fails is warned about. */
	if (learn_finish(gc->env, rec))
		nsg_warn("gc: %s", nsg_last_error());
	err = gc->env->detach(rec->cgroup_id);
	if (!err)
		err = record_retire(gc->env->record_dir, rec->id, rec->cgroup_id);
	if (err) {
		nsg_warn("gc: container %s: %s", rec->id, nsg_last_error());
		gc->failed = err;
		return 0;
	}
	gc->removed(&(struct gc_removal){ .id = rec->id, .cgroup_path = rec->cgroup_path,
					  .cgroup_id = rec->cgroup_id,
					  .why = id ? "re-created" : "gone" },
		    gc->data);
	return 0;
}

static int gc_links(struct gc *gc)
{
	cleanup_free __u64 *ids = NULL;
	size_t n = 0;
	bool kept;
	int err = gc->env->links(&ids, &n);

	if (err)
		return err;
	for (size_t i = 0; i < n; i++) {
		kept = false;
		for (size_t j = 0; j < gc->n_kept && !kept; j++)
			kept = gc->kept[j] == ids[i];
		if (kept)
			continue;
		/* No record, a live cgroup (a failed attach): kept, and kept denying. */
		if (gc->env->cgroup_alive(ids[i])) {
			gc_relink(gc, ids[i], &(struct nsguard_policy){ 0 }, NULL, NULL);
			continue;
		}
		err = gc->env->detach(ids[i]);
		if (err) {
			nsg_warn("gc: link %llu: %s", (unsigned long long)ids[i], nsg_last_error());
			gc->failed = err;
			continue;
		}
		gc->removed(&(struct gc_removal){ .cgroup_id = ids[i],
						  .why = "no record, cgroup gone" },
			    gc->data);
	}
	return 0;
}

void container_gc_print(const struct gc_removal *r, void *out)
{
	if (r->relinked && r->id)
		fprintf(out, "re-linked container %s (cgroup %s, id %llu: its link was detached)\n",
			r->id, r->cgroup_path, (unsigned long long)r->cgroup_id);
	else if (r->relinked)
		fprintf(out, "re-linked link %s/%llu (it was detached; no record: deny)\n",
			NSGUARD_PIN_LINKS, (unsigned long long)r->cgroup_id);
	else if (r->id)
		fprintf(out, "removed container %s (cgroup %s, id %llu: %s)\n", r->id,
			r->cgroup_path, (unsigned long long)r->cgroup_id, r->why);
	else
		fprintf(out, "removed link %s/%llu (%s)\n", NSGUARD_PIN_LINKS,
			(unsigned long long)r->cgroup_id, r->why);
}

int container_gc(const struct container_env *env,
		 void (*removed)(const struct gc_removal *r, void *data), void *data)
{
	struct gc gc = { .env = env, .removed = removed, .data = data };
	cleanup_close int lock = -1;
	int err = 0;

	/* Not while a hook checks, attaches and records. */
	err = env->lock(&lock);
	if (err)
		return err;
	err = record_foreach(env->record_dir, gc_record, &gc);
	/* Links are judged against the records: skip them if those failed. */
	if (!err)
		err = gc_links(&gc);
	if (!err && record_index_sweep(env->record_dir) < 0)
		nsg_warn("gc: cannot sweep %s/by-cgroup-id", env->record_dir);
	if (!err && record_gone_sweep(env->record_dir, NSGUARD_GONE_KEEP_SECS) < 0) {
		nsg_warn("gc: %s", nsg_last_error());
		nsg_clear_error();
	}
	free(gc.kept);
	if (!err && gc.failed)
		err = nsg_fail(-gc.failed, "gc: some entries could not be removed (see above)");
	return err;
}
