/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Which cgroup to guard for a container: all that its processes can reach by
 * moving themselves between cgroups, never a leaf below that.
 */
#ifndef NSGUARD_SCOPE_H
#define NSGUARD_SCOPE_H

#include <stdbool.h>
#include <sys/types.h>

#include "oci.h"

/*
 * The cgroup to guard for the container of st (its pid, and the mounts of its
 * config.json); init_path is init's cgroup (cgroup_path_of_pid).
 * - Its own cgroup namespace: the namespace root, which is all the container
 *   sees (crun's run.oci.delegate-cgroup and systemd's subgroup put init
 *   below it).  The host's cgroup namespace: init's cgroup.
 * - A move between cgroups needs write access to cgroup.procs above both.
 *   In a user namespace that does not map host uid 0, the container's root
 *   has that only where a cgroup above is delegated: refused if one is, or
 *   if it shares the host's mount namespace or a mount shows what it could
 *   hand to a host-root container (mounts.h's rows that hold read-only).
 *   As the host's root (no user namespace, or one mapping uid 0) it has it
 *   wherever it can see, so it must not see the host's hierarchy: refused
 *   in the host's cgroup or mount namespace, or when a mount it will reach
 *   exposes nsguard's state or the host (mounts.h: a bpf file system, the
 *   run directory, the host's proc or an nsfs file even read-only; a cgroup2
 *   file system outside the guarded cgroup, a sysfs, nsguard's config or
 *   binary writable; /proc/sys left writable).  config_path is the config
 *   the caller read (its file and directory are protected).  nsdelegate
 *   is not relied on: any cgroup2 mount made in the host's cgroup
 *   namespace, by any runtime for any container, clears it node-wide.
 * Refusals are -EPERM with one line saying why.  *target_out is a path like
 * init_path; *how says which rule chose it.  proc_root and cgroup_root are
 * "/proc" and CGROUP_ROOT except in tests.
 */
int scope_resolve(const char *proc_root, const char *cgroup_root, const struct oci_state *st,
		  const char *init_path, const char *config_path, char **target_out,
		  const char **how);

/*
 * -EPERM (one line) if the init of st runs in the host's user namespace with
 * CAP_SYS_ADMIN or CAP_BPF in its bounding set and config.json's
 * process.capabilities keeps either (or is missing): such a container could
 * detach its own guard or rewrite its policy through bpf().  Never opened by
 * fail-mode open; host-capabilities = allow skips it.
 */
int scope_host_caps(const char *proc_root, const struct oci_state *st);

/* Forget what one hook read of /proc (the agent, before its next request). */
void scope_forget(void);

/*
 * target is the cgroup the runtime made for the container from config.json's
 * linux.cgroupsPath, or below it (-EPERM naming both otherwise):
 * - "/a/b" (cgroupfs): target is /a/b or below it;
 * - "slice:prefix:name" (systemd): a component of target is the unit,
 *   "prefix-name.scope" as runc names it ("name" itself for a .slice);
 * - "a/b" (relative to a place the runtime picks): target has the components
 *   a/b in a row.
 * Paths are cleaned first, as the runtimes do ("a/./b/", "/a//b").
 * NULL or "" (the runtime's default place) is not checked.
 */
int scope_in_runtime_cgroup(const char *target, const char *cgroups_path);

/* Parts, for tests. */

/*
 * init_path minus the path its cgroup namespace shows (rel, "/" or "/a/b"):
 * the namespace root.  -EPERM if rel leaves the namespace ("/.." first) or
 * the root would be the cgroup root; -EINVAL if rel is not init_path's tail.
 */
int scope_strip(const char *init_path, const char *rel, char **root_out);
/* Whether a uid_map ("inside outside count" lines) maps host uid 0. */
int scope_maps_host_root(const char *uid_map, bool *mapped);
/*
 * Each cgroup above path, the root included, has a cgroup.procs owned by
 * uid 0 and not group/other writable; -EPERM naming the first that is not.
 */
int scope_ancestors_closed(const char *cgroup_root, const char *path);

#endif
