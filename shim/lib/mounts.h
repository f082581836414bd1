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

/* What mounts_check_files judges with. */
struct mounts_ctx {
	const char *guarded; /* the guarded cgroup, as /proc/PID/cgroup shows it */
	const struct oci_mount *cfg; /* config.json "mounts", for the ro concession */
	size_t n_cfg;
	const char *run_dir; /* NSGUARD_RUN_DIR */
	/*
	 * A read-only mount stays read-only: the container is in the host's
	 * user namespace (and without CAP_SYS_ADMIN, scope_host_caps).  False
	 * for a user namespace that maps the host's root: it owns its mount
	 * namespace and may remount, so only the super block's ro counts.
	 */
	bool ro_holds;
	/* Make the top mount at point, mount id, read-only now (NULL: never). */
	int (*make_ro)(const char *point, unsigned long id, void *data);
	void *data;
};

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
 * super block's options (the mount's own only counts with ro_holds), each
 * submount of an rbind on its own.  crun makes `ro` mounts read-only only
 * after the createRuntime hooks: such a mount, the top one at exactly the
 * destination of the last config.json entry there, whose options ask for ro
 * (no rrw), with no later entry at or above it, is made read-only now
 * (make_ro), as the runtime is about to.  A table that cannot be read, or
 * one too large to judge (-EPERM), is a refusal too.
 */
int mounts_check_files(const char *theirs, const char *ours, const struct mounts_ctx *c);
/* The same for pid: proc_root/PID/mountinfo against proc_root/self/mountinfo. */
int mounts_check(const char *proc_root, pid_t pid, const char *guarded,
		 const struct oci_mount *cfg, size_t n_cfg, const char *run_dir, bool ro_holds);

#endif
