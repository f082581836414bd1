// SPDX-License-Identifier: GPL-2.0-or-later
/* The real world behind container.c: bpf() through guard.c, cgroupfs, /proc. */
#include <errno.h>

#include "cgroup.h"
#include "container.h"
#include "guard.h"
#include "log.h"
#include "upgrade.h"

static int live_cgroup_open(const char *path, __u64 *id_out)
{
	return cgroup_open(CGROUP_ROOT, path, id_out);
}

static int live_cgroup_id(const char *path, __u64 *id_out)
{
	return cgroup_id_of_path(CGROUP_ROOT, path, id_out);
}

static bool live_cgroup_alive(__u64 id)
{
	return cgroup_id_alive(CGROUP_ROOT, id);
}

static int live_cgroup_populated(const char *path, bool *populated)
{
	return cgroup_populated(CGROUP_ROOT, path, populated);
}

static int live_cgroup_open_id(__u64 id)
{
	return cgroup_open_id(CGROUP_ROOT, id);
}

static int live_link_state(__u64 cgroup_id)
{
	return guard_link_state(NSGUARD_PIN_DIR, cgroup_id);
}

static int live_start_time(pid_t pid, __u64 *start)
{
	return proc_start_time(pid, start);
}

/*
 * The hook's open: pins of another build (a package update while
 * containers run) are moved to this build's program first, under the lock
 * the caller holds, so the first container start after an install is the
 * upgrade: none fails and none starts unguarded in between, and every
 * guarded cgroup keeps its policy and usage (upgrade.c).
 */
static int open_upgrading(struct guard *g, unsigned which)
{
	unsigned long long ours = guard_build_seq(), theirs;
	struct upgrade_result r;
	int err = guard_open_some(g, true, which);

	if (err != -ESTALE)
		return err;
	/* Only now: a hook that finds its own pins reads no marker twice. */
	theirs = guard_pinned_seq(NSGUARD_PIN_DIR);
	/*
	 * Forward only: a hook of an older build (one left on disk, a second
	 * registration) must not move the whole node back to its program.  A
	 * build of unknown time (0: no git, no SOURCE_DATE_EPOCH) moves none;
	 * pins without a seq marker (0) come from before markers, so any
	 * dated build is newer.  A set of this build's that lacks a pin is
	 * rebuilt all the same.
	 */
	if ((ours == 0 || ours <= theirs) && !guard_pinned_abi_is_ours(NSGUARD_PIN_DIR))
		return nsg_fail_context(err,
					"this nsguard (build %llu) is not newer than the pinned "
					"program's (build %llu), so its hook does not move the "
					"guarded cgroups; run the newer nsguard's hooks, or "
					"'nsguard upgrade' to move them on purpose",
					ours, theirs);
	nsg_clear_error();
	err = guard_upgrade_locked(&r);
	if (err)
		return nsg_fail_context(err, "moving the guarded cgroups to this build's program");
	nsg_warn("upgraded: %zu guarded cgroup%s moved to this build's program (%s)", r.moved,
		 r.moved == 1 ? "" : "s", r.why);
	return guard_open_some(g, true, which);
}

static int live_attach_with(int cgroup_fd, __u64 cgroup_id, const struct nsguard_policy *pol,
			    char **link_pin_out, bool upgrade)
{
	struct guard g = GUARD_INIT;
	/* The caller holds the lock: load and pin on first use. */
	bool learn = pol->mode == NSGUARD_MODE_LEARN;
	/* Only learn mode needs to know (a failed first attach forgets its entry). */
	bool fresh = learn && !guard_link_pinned(cgroup_id);
	/* What an attach writes: the policy, the counters, a learn-mode usage. */
	unsigned which = GUARD_PIN_POLICIES | GUARD_PIN_COUNTERS | (learn ? GUARD_PIN_LEARNED : 0);
	int err = upgrade ? open_upgrading(&g, which) : guard_open_some(&g, true, which);

	/*
	 * Learn mode: its usage where it outlives the cgroup, before any
	 * request can be allowed.  A full map only costs the suggestion: the
	 * policy (allow within the admin's limits) is attached all the same,
	 * so filling the map never turns into a fail-mode open.
	 */
	if (!err && learn) {
		err = guard_learn_start(&g, cgroup_id, &(struct nsguard_usage){ 0 });
		if (err == -E2BIG) {
			nsg_warn("warning: %s; no suggestion will be written for cgroup %llu",
				 nsg_last_error(), (unsigned long long)cgroup_id);
			nsg_clear_error();
			err = 0;
			learn = false;
		}
	}
	if (!err) {
		err = guard_attach(&g, cgroup_fd, cgroup_id, pol, link_pin_out, NULL);
		/* A rewrite that failed keeps what its container learned. */
		if (err && learn && fresh)
			guard_learn_forget(cgroup_id);
	}
	guard_close(&g);
	return err;
}

static int live_attach(int cgroup_fd, __u64 cgroup_id, const struct nsguard_policy *pol,
		       char **link_pin_out)
{
	return live_attach_with(cgroup_fd, cgroup_id, pol, link_pin_out, false);
}

static int hook_attach(int cgroup_fd, __u64 cgroup_id, const struct nsguard_policy *pol,
		       char **link_pin_out)
{
	return live_attach_with(cgroup_fd, cgroup_id, pol, link_pin_out, true);
}

static int live_detach(__u64 cgroup_id)
{
	return guard_detach(cgroup_id) ?: guard_learn_forget(cgroup_id);
}

static int live_links(__u64 **ids, size_t *n)
{
	return guard_links_list(NSGUARD_PIN_DIR, ids, n);
}

static int live_cgroups_below(const char *path, int (*fn)(__u64 id, void *data), void *data)
{
	return cgroup_walk_below(CGROUP_ROOT, path, fn, data);
}

#define LIVE_ENV(attach_fn)                                                     \
	{                                                                       \
		.record_dir = NSGUARD_RECORD_DIR, .lock = guard_lock,             \
		.cgroup_open = live_cgroup_open, .cgroup_id = live_cgroup_id,     \
		.cgroup_alive = live_cgroup_alive,                                \
		.cgroup_populated = live_cgroup_populated,                        \
		.start_time = live_start_time, .link_pinned = guard_link_pinned,  \
		.link_state = live_link_state,                                    \
		.cgroup_open_id = live_cgroup_open_id,                            \
		.attach = attach_fn, .read_learned = guard_learn_read,            \
		.detach = live_detach, .links = live_links,                       \
		.cgroups_below = live_cgroups_below,                              \
	}

/* attach (the command) refuses another build's pins, naming `nsguard upgrade`. */
const struct container_env container_env_live = LIVE_ENV(live_attach);
/* The createRuntime hook moves them to this build's program first. */
const struct container_env container_env_hook = LIVE_ENV(hook_attach);
