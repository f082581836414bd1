/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The only module that calls bpf(): load-or-reuse the pinned program and maps,
 * attach/detach one cgroup, read policies and counters.  Host unit tests never
 * link it.
 */
#ifndef NSGUARD_GUARD_H
#define NSGUARD_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "../../bpf/nsguard.h"

struct guard {
	int prog_fd;
	int policies_fd;
	int counters_fd;
	int stats_fd;
	int events_fd;
	int learned_fd;
	int bpfguard_fd; /* the bpf() guard, opened when an attach needs it */
	bool loaded_now; /* this process loaded and pinned the program */
	const char *dir; /* where the pins are: NSGUARD_PIN_DIR but in an upgrade */
};

/* A closed guard: guard_close() on it is a no-op. */
#define GUARD_INIT                                                                         \
	{                                                                                  \
		.prog_fd = -1, .policies_fd = -1, .counters_fd = -1, .stats_fd = -1,       \
		.events_fd = -1, .learned_fd = -1, .bpfguard_fd = -1,                      \
		.dir = NSGUARD_PIN_DIR                                                     \
	}

/* How long guard_open waits for NSGUARD_LOCK_FILE before it gives up. */
#define NSGUARD_LOCK_WAIT_SECS 20

/*
 * Take the flock on NSGUARD_LOCK_FILE, which serialises every change to pins
 * and records (load, attach + record write, poststop, gc); -ETIMEDOUT after
 * NSGUARD_LOCK_WAIT_SECS, naming the holder (lockfile.h: the file is made
 * mode 0000, /run/nsguard 0700).  *fd_out holds it until closed.
 */
int guard_lock(int *fd_out);
/*
 * Open the pinned objects.  With load (the caller holds guard_lock), load and
 * pin them first if they are not pinned yet.  Without load, -ENOENT if
 * nothing is pinned.  Pins of another build (its abi-<hash> marker, or a
 * map's type or value size, differ) are -ESTALE with a message that names
 * `nsguard upgrade`: never written to, never read at this build's offsets.
 */
int guard_open(struct guard *g, bool load);
/*
 * The same, opening only the maps which names (the program always; the
 * others stay -1): a hook's attach writes two or three of the five, and
 * each costs an OBJ_GET, an OBJ_GET_INFO and a close.  The bpf() guard's
 * program too is opened only when named (guard_attach opens it when it
 * makes a link).  A program and its marker of this build mean a complete
 * set: the program is pinned last.
 */
enum guard_pin_index { /* guard.c's pins[], the program last */
	GUARD_PIN_I_POLICIES,
	GUARD_PIN_I_COUNTERS,
	GUARD_PIN_I_STATS,
	GUARD_PIN_I_EVENTS,
	GUARD_PIN_I_LEARNED,
	GUARD_PIN_I_BPFGUARD,
	GUARD_PIN_I_PROG,
};
enum {
	GUARD_PIN_POLICIES = 1u << GUARD_PIN_I_POLICIES,
	GUARD_PIN_COUNTERS = 1u << GUARD_PIN_I_COUNTERS,
	GUARD_PIN_STATS = 1u << GUARD_PIN_I_STATS,
	GUARD_PIN_EVENTS = 1u << GUARD_PIN_I_EVENTS,
	GUARD_PIN_LEARNED = 1u << GUARD_PIN_I_LEARNED,
	GUARD_PIN_BPFGUARD = 1u << GUARD_PIN_I_BPFGUARD,
	GUARD_PINS_ALL = (1u << GUARD_PIN_I_PROG) - 1,
};
int guard_open_some(struct guard *g, bool load, unsigned which);
/* The same for the pins in dir (nsguard upgrade builds the new set aside). */
int guard_open_at(struct guard *g, const char *dir, bool load);
/* This build's ABI: 16 hex digits hashed from its BPF object. */
#define GUARD_ABI_LEN 17
void guard_abi(char out[GUARD_ABI_LEN]);
/* Whether the object this binary carries hashes to its ABI (nsguard check). */
bool guard_abi_embedded(void);
/* This build's sequence (its commit's time), and the pinned set's (0: none). */
unsigned long long guard_build_seq(void);
unsigned long long guard_pinned_seq(const char *dir);
/* The set pinned in dir carries this build's ABI marker (complete or not). */
bool guard_pinned_abi_is_ours(const char *dir);
void guard_close(struct guard *g);
/*
 * Attach to the cgroup (link pinned at <g->dir>/links/<id>, and the bpf()
 * guard's at <g->dir>/bpflinks/<id>), then write the policy.  Until the
 * write lands the all-zero policy denies.  Re-attaching the same cgroup only
 * rewrites the policy.  The usage (created, depths) is the caller's on a new
 * link (zero for a new container, the old program's in an upgrade) and the
 * live one on a rewrite.  A pinned link that no longer guards the cgroup
 * (LINK_DETACH'ed: the pin stays) is unpinned and made anew, with a warning;
 * the usage and counters its storage kept are kept.  *relinked (may be
 * NULL) says one was.
 */
int guard_attach(struct guard *g, int cgroup_fd, __u64 cgroup_id, const struct nsguard_policy *pol,
		 char **link_pin_out, bool *relinked);
/*
 * Remove every link pin, pin and marker in dir, then dir itself: its links
 * detach and its program goes once nothing holds it.  Success if absent.
 */
int guard_remove_dir(const char *dir);
/* The cgroup ids with a link pinned in dir/links or dir/bpflinks (*ids malloc'd). */
int guard_links_list(const char *dir, __u64 **ids, size_t *n);
/* Remove the link pins (both); success if they do not exist. */
int guard_detach(__u64 cgroup_id);
int guard_read_policy(struct guard *g, __u64 cgroup_id, struct nsguard_policy *pol);
/*
 * The usage of a cgroup in the pinned map (policies or learned) in dir,
 * whatever build made it (its BTF names the members); zeros when it has none.
 */
int guard_read_usage_any(const char *dir, const char *map, __u64 cgroup_id, __u32 *created,
			 __u64 *depths);
/* Learn mode: make the cgroup's entry in the learned map (kept if there is
 * one: a rewrite), read it, forget it (success if there is none). */
int guard_learn_start(struct guard *g, __u64 cgroup_id, const struct nsguard_usage *from);
int guard_learn_read(__u64 cgroup_id, struct nsguard_usage *u);
int guard_learn_forget(__u64 cgroup_id);
int guard_read_counters(struct guard *g, __u64 cgroup_id, struct nsguard_counters *cnt);
int guard_read_stats(struct guard *g, struct nsguard_stats *stats);
/*
 * A link is pinned for the cgroup in NSGUARD_PIN_DIR (a claim: attached or
 * not).  Whether it guards is guard_link_state's to say.
 */
bool guard_link_pinned(__u64 cgroup_id);
enum guard_link_state {
	GUARD_LINK_NONE, /* nothing pinned for the cgroup */
	GUARD_LINK_ATTACHED, /* its links are attached to it: it is guarded */
	GUARD_LINK_DETACHED, /* pinned, but a link no longer guards it */
};
/*
 * Whether the cgroup is guarded by the set in dir, by what the kernel says
 * of its links (link info: a cgroup link of BPF_LSM_CGROUP whose cgroup id
 * is this one; a detached link says 0), not by the pins' existence: NONE
 * when neither link is pinned, ATTACHED when links/<id> and (where the set
 * has the bpf() guard: an older build's has not) bpflinks/<id> both are,
 * DETACHED otherwise.  A negative errno, with a message, when it cannot
 * tell.
 */
int guard_link_state(const char *dir, __u64 cgroup_id);
const char *guard_link_state_name(int state);
/*
 * Is "bpf" in /sys/kernel/security/lsm?  0 if so; -EOPNOTSUPP (not active) or
 * the read error otherwise, with a message saying what to do.  The list read
 * is copied to list (may be NULL).
 */
int guard_lsm_check(char *list, size_t len);
/*
 * check: load a fresh (unpinned) copy of the programs, attach both (the
 * userns_create policy, the bpf() guard) to cgroup_fd with a deny policy,
 * run probe(data) (may be NULL), read the counters into cnt, then detach
 * and unload.  Independent of the pins.
 */
/* The bpf() guard refuses this process a LINK_DETACH (EPERM, not EBADF). */
bool guard_bpf_refused(void);
int guard_trial(int cgroup_fd, __u64 cgroup_id, int (*probe)(void *data), void *data,
		struct nsguard_counters *cnt);

#endif
