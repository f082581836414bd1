/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Guarding one container: the step the hook, attach, detach and gc share.
 * Every change to pins and records happens under guard_lock().
 */
#ifndef NSGUARD_CONTAINER_H
#define NSGUARD_CONTAINER_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>
#include "../bpf/nsguard.h"

/*
 * Guard cgroup_path (relative to the cgroup2 root, starting with '/') for
 * container id, whose init is pid (0: none, nsguard attach): refuse a cgroup
 * guarded for another id, and an id still guarding another live cgroup (-EBUSY);
 * for a container (pid > 0) also a cgroup above another id's live guarded
 * cgroup, whose processes would get this policy too, or below another
 * container's (nsguard attach may nest: that is the admin's choice);
 * load or reuse the program, attach, write the policy and the record.  The
 * same id on a cgroup that is gone (a re-created container) moves the guard.
 * *claim_refused says the refusal came from the id or the cgroup path, which
 * the container's creator chose (never opened by fail-mode open).  shared:
 * the admin allowed a cgroup with other processes (shared-cgroups = allow).
 */
int container_guard(const char *id, pid_t pid, const char *cgroup_path, bool shared,
		    struct nsguard_policy *pol, bool *claim_refused);

/*
 * Detach and forget the container of record id; -ENOENT if unknown.  Unless
 * force, only once the guarded instance is over: -EBUSY, with a message and
 * nothing changed, while its init (recorded pid and start time) still runs
 * or cannot be checked, or while its cgroup still holds processes (unless
 * recorded as shared).
 */
int container_unguard(const char *id, bool force);

#endif
