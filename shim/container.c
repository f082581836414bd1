// SPDX-License-Identifier: GPL-2.0-or-later
/* Guarding one container: attach + record, detach + forget, under one lock. */
#include <errno.h>
#include <string.h>

#include "cgroup.h"
#include "container.h"
#include "guard.h"
#include "log.h"
#include "record.h"
#include "util.h"

/* The cgroup a record names is still the one it guarded. */
static bool record_cgroup_alive(const struct nsguard_record *rec)
{
	__u64 id = 0;

	if (cgroup_id_of_path(CGROUP_ROOT, rec->cgroup_path, &id) == 0 && id == rec->cgroup_id)
		return true;
	nsg_clear_error();
	/* Moved or renamed: still alive if the kernel knows the id. */
	return cgroup_id_alive(CGROUP_ROOT, rec->cgroup_id);
}

/* child is strictly below parent ("/a/b" below "/a", not "/ab"). */
static bool path_below(const char *child, const char *parent)
{
	size_t n = strlen(parent);

	return strncmp(child, parent, n) == 0 && child[n] == '/' && child[n + 1];
}

struct claim_ctx {
	const char *id;
	const char *cgroup_path;
	__u64 cgid;
	bool container; /* a container's hook, not the admin's nsguard attach */
};

/*
 * Another container's record that this guard would act on: one for the same
 * cgroup, or a live guarded cgroup below it (its processes, now or after a
 * later exec, would get this container's policy too); nor may a container sit
 * below another container's live guard (guards made by nsguard attach, pid 0,
 * may nest: the admin's choice).
 */
static int claim_cb(const struct nsguard_record *rec, void *data)
{
	const struct claim_ctx *c = data;

	if (strcmp(rec->id, c->id) == 0)
		return 0;
	if (rec->cgroup_id == c->cgid)
		return nsg_fail(EBUSY, "cgroup %s is already guarded for container %s; detach it first",
				c->cgroup_path, rec->id);
	if (c->container && path_below(rec->cgroup_path, c->cgroup_path) &&
	    guard_link_pinned(rec->cgroup_id) &&
	    record_cgroup_alive(rec))
		return nsg_fail(EBUSY,
				"cgroup %s is above cgroup %s, which is guarded for container %s; "
				"its policy would apply there too",
				c->cgroup_path, rec->cgroup_path, rec->id);
	/* Nor below another container's: its policy and events would cover this one. */
	if (c->container && rec->pid && path_below(c->cgroup_path, rec->cgroup_path) &&
	    guard_link_pinned(rec->cgroup_id) && record_cgroup_alive(rec))
		return nsg_fail(EBUSY,
				"cgroup %s is below cgroup %s, which is guarded for container %s; "
				"that container's policy would apply here too",
				c->cgroup_path, rec->cgroup_path, rec->id);
	return 0;
}

/* Under the lock: may id guard cgid?  *stale is a record of id to move. */
static int check_claims(const char *id, const char *cgroup_path, __u64 cgid, bool container,
			struct nsguard_record *stale, bool *move)
{
	struct claim_ctx c = { .id = id, .cgroup_path = cgroup_path, .cgid = cgid,
			       .container = container };
	int err = 0;

	*move = false;
	/* One guard per cgroup, and none above another container's. */
	err = record_foreach(NSGUARD_RECORD_DIR, claim_cb, &c);
	if (err)
		return err;
	/*
	 * One cgroup per id: a second container that takes a guarded id (under
	 * another runtime root) must not move the first one's guard away.  A
	 * re-created container, whose old cgroup is gone, may.
	 */
	err = record_read(NSGUARD_RECORD_DIR, id, stale);
	if (err == -ENOENT) {
		nsg_clear_error();
		return 0;
	}
	if (err)
		return err;
	if (stale->cgroup_id == cgid)
		return 0;
	if (record_cgroup_alive(stale) && guard_link_pinned(stale->cgroup_id))
		return nsg_fail(EBUSY,
				"the id is already guarding cgroup %s, which is still alive; a "
				"second container cannot take it (another runtime root?)",
				stale->cgroup_path);
	*move = true;
	return 0;
}

/* The init's pid and start time for a record; zeros for pid 0. */
static int init_identity(pid_t pid, __u32 *pid_out, __u64 *start_out)
{
	char state;
	int err;

	*pid_out = 0;
	*start_out = 0;
	if (pid <= 0)
		return 0;
	err = proc_stat_read("/proc", pid, &state, start_out);
	if (err)
		return nsg_fail(-err, "cannot read the start time of pid %d: %s", (int)pid,
				strerror(-err));
	*pid_out = (__u32)pid;
	return 0;
}

int container_guard(const char *id, pid_t pid, const char *cgroup_path, bool shared,
		    struct nsguard_policy *pol, bool *claim_refused)
{
	struct nsguard_record rec = { 0 }, stale = { 0 };
	struct guard g = GUARD_INIT;
	cleanup_close int cgfd = -1, lock = -1;
	char *link_pin = NULL;
	bool had_link, move = false;
	__u64 cgid = 0;
	int err = 0;

	*claim_refused = false;
	/* One open: the id checked is the id of the cgroup attached to. */
	cgfd = cgroup_open(CGROUP_ROOT, cgroup_path, &cgid);
	if (cgfd < 0)
		return cgfd;
	/* Before anything is attached: a failure here leaves nothing behind. */
	err = init_identity(pid, &rec.pid, &rec.start_time);
	if (err)
		return err;
	/* Check, attach and record as one step against other hooks and gc. */
	err = guard_lock(&lock);
	if (err)
		return err;
	err = check_claims(id, cgroup_path, cgid, pid > 0, &stale, &move);
	if (err) {
		/* The id and the cgroup path are the container creator's. */
		*claim_refused = err == -EBUSY;
		goto out;
	}
	err = guard_open(&g, true);
	if (err)
		goto out;
	had_link = guard_link_pinned(cgid);
	pol->cgroup_id = cgid;
	/* A new link whose policy write fails stays and denies (detach --cgroup). */
	err = guard_attach(&g, cgfd, cgid, pol, &link_pin);
	if (err)
		goto out;

	rec.id = (char *)id;
	rec.cgroup_path = (char *)cgroup_path;
	rec.cgroup_id = cgid;
	rec.link_pin = link_pin;
	rec.policy = *pol;
	rec.shared = shared;
	err = record_write(NSGUARD_RECORD_DIR, &rec);
	if (err) {
		/* Without a record nothing would ever detach it. */
		if (!had_link)
			guard_detach(cgid);
		nsg_fail_context(err, "writing the record of container %s", id);
		goto out;
	}
	if (move)
		guard_detach(stale.cgroup_id);
out:
	free(link_pin);
	guard_close(&g);
	record_free(&stale);
	return err;
}

int container_unguard(const char *id, bool force)
{
	struct nsguard_record rec = { 0 };
	cleanup_close int lock = -1;
	bool populated = false;
	__u64 t = 0;
	char state;
	int err = 0;

	err = guard_lock(&lock);
	if (err)
		return err;
	err = record_read(NSGUARD_RECORD_DIR, id, &rec);
	if (err)
		return err;
	/*
	 * Runtimes pass poststop no pid.  While the guarded instance's init
	 * runs (same pid, same start time), a poststop for its id is another
	 * instance's: a second container that took the id, a late one.
	 */
	if (!force && rec.pid) {
		err = proc_stat_read("/proc", (pid_t)rec.pid, &state, &t);
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
	if (!force && !rec.shared && record_cgroup_alive(&rec) &&
	    cgroup_populated(CGROUP_ROOT, rec.cgroup_path, &populated) == 0 && populated) {
		err = nsg_fail(EBUSY,
			       "its cgroup %s still holds processes, so the guard stays (nsguard "
			       "detach --id removes it)",
			       rec.cgroup_path);
		goto out;
	}
	nsg_clear_error();
	err = guard_detach(rec.cgroup_id);
	if (!err)
		err = record_remove(NSGUARD_RECORD_DIR, id);
out:
	record_free(&rec);
	return err;
}
