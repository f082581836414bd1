// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Move every guarded cgroup from a program pinned by another nsguard build to
 * this build's program (upgrade.h): `nsguard upgrade`, and a hook that meets
 * another build's pins.
 *
 * The new set is built beside the old one (NSGUARD_PIN_DIR-new): this build's
 * program and maps, and a link per guarded cgroup with its policy written
 * from the record.  Only then are the two directories exchanged in one
 * rename (RENAME_EXCHANGE), so NSGUARD_PIN_DIR always holds a complete set,
 * and the old set, now in NEW_DIR, is removed, which detaches the old links.
 * Until the exchange both programs run for each cgroup and any deny wins, so
 * no cgroup is ever unguarded.  Cut short at any point, NEW_DIR holds either
 * an unfinished new set or the old one: the next run removes it first.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "guard.h"
#include "log.h"
#include "record.h"
#include "upgrade.h"
#include "util.h"

#define NEW_DIR NSGUARD_PIN_DIR "-new" /* bpffs refuses names with a dot */

struct upgrade {
	struct guard *g; /* the new set */
	__u64 *moved; /* cgroup ids attached so far, at most cap */
	size_t n_moved, cap;
	size_t n_denied; /* links without a record: kept, with deny */
	size_t n_relinked; /* of those moved, the ones whose old link was detached */
};

static bool already_moved(const struct upgrade *u, __u64 id)
{
	for (size_t i = 0; i < u->n_moved; i++)
		if (u->moved[i] == id)
			return true;
	return false;
}

/* Attach the new program to the cgroup of id, wherever it is now. */
static int move_one(struct upgrade *u, __u64 id, const struct nsguard_policy *pol)
{
	struct nsguard_usage learned = { 0 };
	struct nsguard_policy p = *pol;
	cleanup_close int fd = -1;
	int err = 0, state;

	/* The count limit is over the container's life: carry its usage. */
	err = guard_read_usage_any(NSGUARD_PIN_DIR, "policies", id, &p.created, &p.depths);
	if (!err && p.mode == NSGUARD_MODE_LEARN)
		err = guard_read_usage_any(NSGUARD_PIN_DIR, "learned", id, &learned.created,
					   &learned.depths);
	if (err)
		return nsg_fail_context(err, "cgroup %llu", (unsigned long long)id);

	if (u->n_moved == u->cap)
		return nsg_fail(EAGAIN, "the links changed during the upgrade");
	fd = cgroup_open_id(CGROUP_ROOT, id);
	if (fd == -ENOENT)
		return 0; /* gone: nothing to guard (gc forgets its record) */
	if (fd < 0)
		return nsg_fail(-fd, "cannot open cgroup %llu: %s", (unsigned long long)id,
				strerror(-fd));
	/*
	 * A link detached under the old set guarded nothing: it gets a new
	 * link like the others (so it is guarded again), and is counted and
	 * said, never carried over as if it had guarded all along.
	 */
	state = guard_link_state(NSGUARD_PIN_DIR, id);
	if (state < 0)
		return nsg_fail_context(state, "cgroup %llu", (unsigned long long)id);
	if (state == GUARD_LINK_DETACHED)
		nsg_warn("warning: upgrade: the link of cgroup %llu was detached (not by nsguard): "
			 "the new program guards it again",
			 (unsigned long long)id);
	err = guard_attach(u->g, fd, id, &p, NULL, NULL);
	if (!err && p.mode == NSGUARD_MODE_LEARN)
		err = guard_learn_start(u->g, id, &learned);
	if (err)
		return nsg_fail_context(err, "cgroup %llu", (unsigned long long)id);
	u->moved[u->n_moved++] = id;
	u->n_relinked += state == GUARD_LINK_DETACHED;
	return 0;
}

static int move_record(const struct nsguard_record *rec, void *data)
{
	struct upgrade *u = data;

	/* A detached record stays detached; one cgroup is moved once. */
	if (!guard_link_pinned(rec->cgroup_id) || already_moved(u, rec->cgroup_id))
		return 0;
	return move_one(u, rec->cgroup_id, &rec->policy);
}

static int build_new_set(struct upgrade *u, const __u64 *old, size_t n_old)
{
	static const struct nsguard_policy deny = { 0 };
	int err = 0;

	err = record_foreach(NSGUARD_RECORD_DIR, move_record, u);
	if (err)
		return err;
	/* A link without a record (a failed write, detach --cgroup pending). */
	for (size_t i = 0; i < n_old; i++) {
		size_t before = u->n_moved;

		if (already_moved(u, old[i]))
			continue;
		err = move_one(u, old[i], &deny);
		if (err)
			return err;
		u->n_denied += u->n_moved > before;
	}
	return 0;
}

int guard_upgrade_locked(struct upgrade_result *res)
{
	struct guard g = GUARD_INIT, ng = GUARD_INIT;
	cleanup_free __u64 *old = NULL, *moved = NULL;
	struct upgrade u = { 0 };
	size_t n_old = 0;
	int err = 0;

	*res = (struct upgrade_result){ 0 };
	/* What an earlier run left: an unfinished new set, or the old set. */
	err = guard_remove_dir(NEW_DIR);
	if (err)
		return err;
	if (access(NSGUARD_PIN_DIR "/prog", F_OK) < 0) {
		res->nothing_loaded = true;
		return 0;
	}
	err = guard_open(&g, false);
	guard_close(&g);
	if (err == 0) {
		res->current = true;
		return 0;
	}
	/* Another build's set, or one missing a pin: rebuild it either way. */
	snprintf(res->why, sizeof(res->why), "%s", nsg_last_error());
	nsg_clear_error();

	err = guard_links_list(NSGUARD_PIN_DIR, &old, &n_old);
	if (err)
		return err;
	moved = calloc(n_old ?: 1, sizeof(*moved));
	if (!moved)
		return nsg_fail(ENOMEM, "out of memory");
	u = (struct upgrade){ .g = &ng, .moved = moved, .cap = n_old };
	err = guard_open_at(&ng, NEW_DIR, true) ?: build_new_set(&u, old, n_old);
	guard_close(&ng);
	if (err) {
		nsg_fail_context(err, "upgrade: building the new program's set");
		guard_remove_dir(NEW_DIR);
		return nsg_fail_context(err, "nothing changed, the old program still guards");
	}
	if (renameat2(AT_FDCWD, NEW_DIR, AT_FDCWD, NSGUARD_PIN_DIR, RENAME_EXCHANGE) < 0) {
		err = nsg_fail(errno, "upgrade: cannot exchange %s and %s: %s; nothing changed",
			       NEW_DIR, NSGUARD_PIN_DIR, strerror(errno));
		guard_remove_dir(NEW_DIR);
		return err;
	}
	res->moved = u.n_moved;
	res->denied = u.n_denied;
	res->relinked = u.n_relinked;
	/* Done: leftovers of the old set only warn (the next upgrade removes them). */
	if (guard_remove_dir(NEW_DIR) < 0) {
		nsg_warn("warning: upgrade done, but the old program's pins remain in %s: %s",
			 NEW_DIR, nsg_last_error());
		nsg_clear_error();
	}
	return 0;
}
