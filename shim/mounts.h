/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a host-root container's mount namespace exposes, judged from the
 * kernel's mount table (/proc/PID/mountinfo), not from config.json.
 */
#ifndef NSGUARD_MOUNTS_H
#define NSGUARD_MOUNTS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "oci.h"

/*
 * The mounts of the container (theirs, its init's mountinfo) that it will
 * reach: every mount at or below a mount point the runtime added for it
 * (mounts that ours, the mountinfo of the namespace the runtime copied, does
 * not hold as often; the runtime's bind of the rootfs onto itself is one of
 * them, so after pivot_root this is all it can see).  Of those, refused
 * (-EPERM, one line naming the mount): a writable bpf file system (the pins,
 * any program's); a writable cgroup2 mount whose root is not guarded or below
 * it; a writable mount that shows run_dir (nsguard's records and lock) or
 * anything above or below it.  Writable: "rw" in both the mount's and the
 * super block's options, each submount of an rbind on its own.  One
 * concession, for crun, which makes `ro` mounts read-only only after the
 * createRuntime hooks: the top mount at exactly a config.json destination
 * whose options end in "ro" counts as read-only (runc has applied it already).
 * A mountinfo that cannot be read is a refusal too.
 */
int mounts_check_files(const char *theirs, const char *ours, const char *guarded,
		       const struct oci_mount *cfg, size_t n_cfg, const char *run_dir);
/* The same for pid: proc_root/PID/mountinfo against proc_root/self/mountinfo. */
int mounts_check(const char *proc_root, pid_t pid, const char *guarded,
		 const struct oci_mount *cfg, size_t n_cfg, const char *run_dir);

#endif
