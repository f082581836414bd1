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
	/* config.json linux.readonlyPaths and maskedPaths (for /proc/sys) */
	char *const *ro_paths;
	size_t n_ro_paths;
	char *const *masked_paths;
	size_t n_masked_paths;
	const char *run_dir; /* NSGUARD_RUN_DIR */
	const char *pin_dir; /* NSGUARD_PIN_DIR; may be NULL */
	const char *config; /* nsguard's config file (and so its directory); may be NULL */
	const char *binary; /* nsguard's binary file (and its directory); may be NULL */
	/*
	 * Its uid 0 is the host's (no user namespace, or one that maps it):
	 * every row.  Otherwise only those refused read-only too, and no
	 * /proc/sys, stacking or ro_holds judgement.
	 */
	bool host_root;
	/*
	 * A read-only mount stays read-only.  Host root: the container is in
	 * the host's user namespace and its mount namespace is owned by it
	 * (false, a user namespace that maps the host's root: refused
	 * outright).  Otherwise: no set of process.capabilities names
	 * CAP_SYS_ADMIN (or another that could detach), which in the user
	 * namespace that owns its mounts would remount them read-write
	 * (false: the writable-only rows are refused read-only too).
	 */
	bool ro_holds;
	/* Make the top mount at point, mount id, read-only now (NULL: never). */
	int (*make_ro)(const char *point, unsigned long id, void *data);
	/* Detach the top mount at point, mount id, in nsguard's namespace (NULL: never). */
	int (*detach)(const char *point, unsigned long id, void *data);
	void *data;
};

/*
 * The mounts of a container (theirs, its init's mountinfo) that
 * it will reach: every mount at or below a mount point the runtime added for
 * it (mounts that ours, the mountinfo of the namespace the runtime copied,
 * does not hold as often; the runtime's bind of the rootfs onto itself is
 * one of them, so after pivot_root this is all it can see).  Refused (-EPERM,
 * one line naming the mount and what it exposes), read-only or not, because
 * the kernel checks what they expose by inode: a bpf file system (any); a
 * mount that shows run_dir (nsguard's lock, records and agent socket) or
 * anything above or below it; a proc file system the runtime's namespace has
 * too (the host's: /proc/PID/root); an nsfs file.  Those rows hold for every
 * container (one in a user namespace could hand a descriptor to a host-root
 * one); the rest for host_root only.  Refused too: a new overlay (or other
 * stacking file system) whose device ours does not hold, whose layers
 * mountinfo shows only as the paths given at mount time.  Refused when writable
 * ("rw" in both the mount's and the super block's options, each submount of
 * an rbind on its own): a cgroup2 mount whose root is not the guarded cgroup
 * or below it; a sysfs; a mount that shows nsguard's config file, its
 * directory, its binary or the binary's directory.  The container's own
 * proc must leave /proc/sys and /proc/sysrq-trigger read-only or masked by
 * linux.readonlyPaths/maskedPaths (which the runtime applies after the
 * hooks; an entry with a ".." component counts for nothing), unless the
 * kernel already shows them read-only.  crun makes `ro`
 * mounts read-only only after the createRuntime hooks: such a mount (a
 * writable-only row), the top one at exactly the destination of the last
 * config.json entry there, whose options ask for ro (no rrw), with no later
 * entry at or above it, and every entry at the place it names (no "..", a
 * mount at exactly that point that no later mount hides), is made read-only
 * now (make_ro), as the runtime is about to.  A table that cannot be read,
 * one too large to judge, or one with no mount the runtime added (-EPERM),
 * is a refusal too; so is !ro_holds for host_root, a judged mount in the
 * same peer group as one of ours (shared:N: mounts beneath it propagate to
 * the host), and a mount of ours at or below run_dir, pin_dir or the
 * config's directory (not nsguard's state any more).  Before that, a mount
 * of ours there that is a peer of one of theirs (shared:N in both: the
 * runtime mounted it through rootfsPropagation shared, before any hook) is
 * detached (detach), so that one tenant's refused start does not refuse
 * every later one.
 */
int mounts_check_files(const char *theirs, const char *ours, const struct mounts_ctx *c);
/*
 * The same for pid: proc_root/PID/mountinfo against proc_root/self/mountinfo,
 * making mounts read-only in pid's mount namespace (c's make_ro is replaced).
 */
int mounts_check(const char *proc_root, pid_t pid, const struct mounts_ctx *c);

#endif
