/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the createRuntime hooks decided, counted across hook processes
 * (outcomes.c), for `status --format prometheus`: one small file under
 * /run/nsguard, a line "RESULT REASON COUNT" per pair, updated under its
 * own flock.  REASON is the step that refused (or, for "opened", the one
 * that failed under fail-mode open): one table of steps, so the metric's
 * label set stays small and fixed.
 */
#ifndef NSGUARD_OUTCOMES_H
#define NSGUARD_OUTCOMES_H

#define NSGUARD_OUTCOMES_FILE "/run/nsguard/hook-outcomes"
/*
 * Its lock's bounds.  A writer holds it for one read and one write of a
 * small file, so a longer hold is no hook's: a hook gives up counting after
 * OUTCOMES_ADD_WAIT_MS (a warning), status after OUTCOMES_READ_WAIT_MS.
 */
#define OUTCOMES_ADD_WAIT_MS 500
#define OUTCOMES_READ_WAIT_MS 2000

enum hook_result { HOOK_GUARDED, HOOK_REFUSED, HOOK_OPENED, HOOK_RESULT_COUNT };

enum hook_reason {
	HOOK_REASON_NONE, /* guarded */
	HOOK_REASON_PRIVILEGES, /* the hook runs without root's capabilities */
	HOOK_REASON_STATE, /* the OCI state or config.json is unreadable or ambiguous */
	HOOK_REASON_CONFIG, /* nsguard.conf is unreadable or invalid */
	HOOK_REASON_ANNOTATION, /* an annotation the admin's limits refuse, or a bad one */
	HOOK_REASON_SCOPE, /* cgroup and namespaces: what its processes could reach */
	HOOK_REASON_HOST_CAPS, /* host capabilities that detach a guard */
	HOOK_REASON_SHARED_CGROUP, /* a cgroup with other processes in it */
	HOOK_REASON_ATTACH, /* loading, attaching, the lock, the record */
	HOOK_REASON_COUNT
};

const char *hook_result_name(enum hook_result r);
const char *hook_reason_name(enum hook_reason r);

/*
 * Add one to (result, reason) in path: -ENOENT (no message) when its
 * directory does not exist (nsguard load, or the first hook that takes the
 * lock, makes /run/nsguard), -EACCES (no message) without the right to
 * write it, another -errno with a message.
 */
int outcomes_add(const char *path, enum hook_result result, enum hook_reason reason);
/*
 * The counts in path (all 0 when it does not exist); -ETIMEDOUT, naming the
 * lock's holder, when no read lock comes within OUTCOMES_READ_WAIT_MS.
 */
int outcomes_read(const char *path,
		  unsigned long long counts[HOOK_RESULT_COUNT][HOOK_REASON_COUNT]);

#endif
