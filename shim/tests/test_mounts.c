// SPDX-License-Identifier: GPL-2.0-or-later
/* What a host-root container's mounts expose: mountinfo tables, no namespaces. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "mounts.h"
#include "test.h"
#include "util.h"

/* A row names only what it needs: the rest is zero (no config, accepted). */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

/* The runtime's namespace: the host's mounts. */
static const char ours[] = "1 0 8:1 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"
			   "20 1 0:20 / /sys rw shared:2 - sysfs sysfs rw\n"
			   "21 20 0:26 / /sys/fs/cgroup rw shared:3 - cgroup2 cgroup2 rw\n"
			   "22 20 0:30 / /sys/fs/bpf rw shared:4 - bpf bpf rw,mode=700\n"
			   "23 1 0:40 / /run rw shared:5 - tmpfs tmpfs rw\n"
			   "24 1 0:5 / /proc rw shared:6 - proc proc rw\n"
			   "25 1 0:91 / /var/lib/ct/merged rw shared:7 - overlay overlay "
			   "rw,lowerdir=/l,upperdir=/u,workdir=/w\n";

/* The container's copy of them, the rootfs bound onto itself, its own mounts. */
#define COPIES                                                            \
	"101 100 8:1 / / rw master:1 - ext4 /dev/vda rw\n"                \
	"102 101 0:20 / /sys rw - sysfs sysfs rw\n"                       \
	"103 102 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"         \
	"104 102 0:30 / /sys/fs/bpf rw - bpf bpf rw,mode=700\n"           \
	"105 101 0:40 / /run rw - tmpfs tmpfs rw\n"                       \
	"106 101 0:5 / /proc rw - proc proc rw\n"
#define ROOTFS                                                                \
	"110 101 8:1 /ct/rootfs /ct/rootfs rw - ext4 /dev/vda rw\n"           \
	"111 110 0:50 / /ct/rootfs/proc rw - proc proc rw\n"                  \
	"113 110 0:51 / /ct/rootfs/sys ro - sysfs sysfs rw\n"                 \
	"112 113 0:26 /nsg/c1 /ct/rootfs/sys/fs/cgroup ro - cgroup2 cgroup2 rw\n"
/* docker run -v /sys:/h:ro: runc and crun make only the top mount read-only. */
#define RBIND_RO_TOP                                                       \
	"120 110 0:20 / /ct/rootfs/h ro - sysfs sysfs rw\n"                \
	"121 120 0:26 / /ct/rootfs/h/fs/cgroup rw - cgroup2 cgroup2 rw\n" \
	"122 120 0:30 / /ct/rootfs/h/fs/bpf rw - bpf bpf rw\n"

static const struct oci_mount cfg_b_ro[] = { { .destination = "/b", .ro = true } };
static const struct oci_mount cfg_b_rw[] = { { .destination = "/b", .ro = false } };
static const struct oci_mount cfg_space_ro[] = { { .destination = "/a b/./", .ro = true } };
static const struct oci_mount cfg_h_ro[] = { { .destination = "/h", .ro = true } };
/* Review: "/x" a symlink in the rootfs to "/b": the rw entry lands on the ro one. */
static const struct oci_mount cfg_symlinked_rw[] = { { .destination = "/b", .ro = true },
						     { .destination = "/x", .ro = false } };
static const struct oci_mount cfg_dotdot_ro[] = { { .destination = "/a/../b", .ro = true } };
static const struct oci_mount cfg_b_c_ro_then_b[] = { { .destination = "/b/c", .ro = true },
						      { .destination = "/q", .ro = true } };
#define CFG(a) a, ARRAY_SIZE(a)

/* Review: stacked, an ro entry then a rw one at the same destination. */
static const struct oci_mount cfg_x_ro_then_rw[] = { { .destination = "/x", .ro = true },
						     { .destination = "/x", .ro = false } };
/* Review: decoys where an rbind's submounts will land, the rbind after them. */
static const struct oci_mount cfg_decoys[] = { { .destination = "/h/fs/bpf", .ro = true },
					       { .destination = "/h/fs/cgroup", .ro = true },
					       { .destination = "/h", .ro = true } };

/* linux.readonlyPaths / maskedPaths: Docker's, and others. */
static char *docker_ro[] = { "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys",
			     "/proc/sysrq-trigger" };
static char *none[] = { NULL };
static char *p_sysrq[] = { "/proc/sys", "/proc/sysrq-trigger", "/p/sysrq-trigger" };
static char *only_sys[] = { "/proc/sys" };
static char *whole_proc[] = { "/proc" };
static char *unclean[] = { "/proc//sys/", "/proc/./sysrq-trigger" };
static char *relative[] = { "proc/sys", "proc/sysrq-trigger" };
static char *masked_sys[] = { "/proc/sys", "/proc/sysrq-trigger" };
/* Review: runtimes resolve ".." physically (after a symlink "x"), nsguard lexically. */
static char *root_only[] = { "/" };
static char *dotdot[] = { "/proc/x/../sys", "/proc/sysrq-trigger" };
#define PATHS(a) a, ARRAY_SIZE(a)

static const struct {
	const char *name, *theirs;
	const struct oci_mount *cfg;
	size_t n_cfg;
	int err; /* 0: accepted */
	const char *msg;
	const char *made_ro; /* the point make_ro was asked for, if any */
	bool userns; /* a user namespace that maps the host's root: ro does not hold */
	bool unmapped; /* a user namespace that maps no host owner: host_root false */
	bool admin; /* its capabilities may name CAP_SYS_ADMIN: ro_holds false */
	const char *detached; /* the mount of ours detach was asked for, if any */
	const char *ours_add; /* more lines of ours */
	/* readonlyPaths (NULL: docker_ro), maskedPaths */
	char **ro;
	size_t n_ro;
	char **masked;
	size_t n_masked;
} rows[] = {
	/* The host's own mounts are left behind by pivot_root: not judged. */
	{ "plain", COPIES ROOTFS },
	{ "rbind-ro-top-only", COPIES ROOTFS RBIND_RO_TOP, CFG(cfg_h_ro), -EPERM,
	  "mount at /ct/rootfs/h/fs/cgroup shows cgroup / read-write, above or beside the "
	  "guarded /nsg/c1" },
	{ "rbind-ro-top-only-bpf",
	  COPIES ROOTFS "120 110 0:20 / /ct/rootfs/h ro - sysfs sysfs rw\n"
			"121 120 0:26 / /ct/rootfs/h/fs/cgroup ro - cgroup2 cgroup2 rw\n"
			"122 120 0:30 / /ct/rootfs/h/fs/bpf rw - bpf bpf rw\n",
	  CFG(cfg_h_ro), -EPERM, "mount at /ct/rootfs/h/fs/bpf is a bpf file system" },
	/* #40: read-only protects nothing the kernel checks by inode. */
	{ "rbind-each-submount-ro",
	  COPIES ROOTFS "120 110 0:20 / /ct/rootfs/h ro - sysfs sysfs rw\n"
			"121 120 0:26 / /ct/rootfs/h/fs/cgroup ro - cgroup2 cgroup2 rw\n"
			"122 120 0:30 / /ct/rootfs/h/fs/bpf ro - bpf bpf rw\n",
	  NULL, 0, -EPERM, "mount at /ct/rootfs/h/fs/bpf is a bpf file system: bpffs grants "
			   "BPF_OBJ_GET by the pin's inode, read-only or not" },
	/* A user namespace that maps the host's root owns its mounts: refused. */
	{ "userns-maps-root",
	  COPIES ROOTFS "130 110 0:30 / /ct/rootfs/b ro - bpf bpf rw\n", CFG(cfg_b_ro), -EPERM,
	  "user namespace maps the host's root (uid 0) and owns its mounts", .userns = true },
	{ "userns-maps-root-nothing-mounted", COPIES ROOTFS, NULL, 0, -EPERM,
	  "may write /proc/sys", .userns = true },
	{ "bpf-super-ro", COPIES ROOTFS "130 110 0:30 / /ct/rootfs/b rw - bpf bpf ro\n", NULL, 0,
	  -EPERM, "mount at /ct/rootfs/b is a bpf file system" },
	{ "bind-bpffs-rw", COPIES ROOTFS "130 110 0:30 / /ct/rootfs/b rw - bpf bpf rw\n", NULL, 0,
	  -EPERM, "mount at /ct/rootfs/b is a bpf file system" },
	{ "bind-bpffs-ro", COPIES ROOTFS "130 110 0:30 / /ct/rootfs/b ro - bpf bpf rw\n",
	  CFG(cfg_b_ro), -EPERM, "mount at /ct/rootfs/b is a bpf file system" },
	{ "bind-bpffs-subdir-ro",
	  COPIES ROOTFS "130 110 0:30 /nsguard/links /ct/rootfs/b ro - bpf bpf rw\n", NULL, 0,
	  -EPERM, "is a bpf file system" },
	/* Any bpffs instance at all, not only the host's. */
	{ "other-bpffs-instance", COPIES ROOTFS "130 110 0:77 / /ct/rootfs/b ro - bpf bpf rw\n",
	  NULL, 0, -EPERM, "is a bpf file system" },
	/* crun makes `ro` read-only after the hook: nsguard does it first, top mount only. */
	{ "crun-ro-later", COPIES ROOTFS "130 110 0:26 /nsg /ct/rootfs/b rw - cgroup2 cgroup2 rw\n",
	  CFG(cfg_b_ro), .made_ro = "/ct/rootfs/b" },
	{ "crun-ro-later-sysfs", COPIES ROOTFS "130 110 0:51 / /ct/rootfs/b rw - sysfs sysfs rw\n",
	  CFG(cfg_b_ro), .made_ro = "/ct/rootfs/b" },
	/* No concession where read-only is no protection. */
	{ "crun-ro-later-bpffs", COPIES ROOTFS "130 110 0:30 / /ct/rootfs/b rw - bpf bpf rw\n",
	  CFG(cfg_b_ro), -EPERM, "mount at /ct/rootfs/b is a bpf file system" },
	{ "crun-ro-later-make-ro-fails",
	  COPIES ROOTFS "130 110 0:26 /nsg /ct/rootfs/b rw - cgroup2 cgroup2 rw\n", CFG(cfg_b_ro),
	  -EPERM, "mount at /ct/rootfs/b shows cgroup /nsg read-write", .made_ro = "fail" },
	{ "crun-rw", COPIES ROOTFS "130 110 0:26 /nsg /ct/rootfs/b rw - cgroup2 cgroup2 rw\n",
	  CFG(cfg_b_rw), -EPERM, "shows cgroup /nsg read-write" },
	{ "crun-ro-covered",
	  COPIES ROOTFS "130 110 0:26 /nsg /ct/rootfs/b rw - cgroup2 cgroup2 rw\n"
			"131 130 0:60 / /ct/rootfs/b rw - tmpfs tmpfs rw\n",
	  CFG(cfg_b_ro), -EPERM, "mount at /ct/rootfs/b shows cgroup /nsg read-write" },
	{ "crun-ro-submount",
	  COPIES ROOTFS "130 110 0:20 / /ct/rootfs/b rw - sysfs sysfs rw\n"
			"131 130 0:30 / /ct/rootfs/b/fs/bpf rw - bpf bpf rw\n",
	  CFG(cfg_b_ro), -EPERM, "mount at /ct/rootfs/b/fs/bpf is a bpf file system",
	  .made_ro = "/ct/rootfs/b" },
	{ "crun-ro-mangled",
	  COPIES ROOTFS "130 110 0:26 /nsg /ct/rootfs/a\\040b rw - cgroup2 cgroup2 rw\n",
	  CFG(cfg_space_ro), .made_ro = "/ct/rootfs/a b" },
	/* Review: the last entry at /x is rw: whatever sits on top stays writable. */
	{ "stacked-ro-then-rw",
	  COPIES ROOTFS "130 110 0:60 / /ct/rootfs/x rw - tmpfs tmpfs rw\n"
			"131 130 0:26 /nsg /ct/rootfs/x rw - cgroup2 cgroup2 rw\n",
	  CFG(cfg_x_ro_then_rw), -EPERM, "mount at /ct/rootfs/x shows cgroup /nsg read-write" },
	/* Review: decoy ro entries under a later rbind: its submounts land there. */
	{ "decoys-under-later-rbind",
	  COPIES ROOTFS "130 110 0:60 / /ct/rootfs/h/fs/bpf rw - tmpfs tmpfs rw\n"
			"131 110 0:20 / /ct/rootfs/h ro - sysfs sysfs rw\n"
			"132 131 0:26 / /ct/rootfs/h/fs/cgroup rw - cgroup2 cgroup2 rw\n"
			"133 131 0:30 / /ct/rootfs/h/fs/bpf rw - bpf bpf rw\n",
	  CFG(cfg_decoys), -EPERM, "mount at /ct/rootfs/h/fs/cgroup shows cgroup / read-write" },
	/* cgroup2: its own subtree only. */
	{ "cgroup-own-subtree-rw",
	  COPIES ROOTFS "130 110 0:26 /nsg/c1/sub /ct/rootfs/c rw - cgroup2 cgroup2 rw\n" },
	{ "cgroup-parent-rw",
	  COPIES ROOTFS "130 110 0:26 /nsg /ct/rootfs/c rw - cgroup2 cgroup2 rw\n", NULL, 0,
	  -EPERM, "shows cgroup /nsg read-write" },
	{ "cgroup-parent-ro",
	  COPIES ROOTFS "130 110 0:26 /nsg /ct/rootfs/c ro - cgroup2 cgroup2 rw\n" },
	{ "cgroup-sibling-rw",
	  COPIES ROOTFS "130 110 0:26 /nsg/c10 /ct/rootfs/c rw - cgroup2 cgroup2 rw\n", NULL, 0,
	  -EPERM, "shows cgroup /nsg/c10 read-write" },
	/* Review: escapes are compared decoded: "c1\040x" is not "c1 x"'s sibling. */
	{ "cgroup-escaped-sibling",
	  COPIES ROOTFS "130 110 0:26 /nsg/c1\\040x /ct/rootfs/c rw - cgroup2 cgroup2 rw\n", NULL,
	  0, -EPERM, "shows cgroup /nsg/c1 x read-write" },
	/* /run/nsguard, from above, itself or below, read-only too (#40). */
	{ "run-rw", COPIES ROOTFS "130 110 0:40 / /ct/rootfs/r rw - tmpfs tmpfs rw\n", NULL, 0,
	  -EPERM, "mount at /ct/rootfs/r shows /run/nsguard (nsguard's lock, records" },
	{ "run-ro", COPIES ROOTFS "130 110 0:40 / /ct/rootfs/r ro - tmpfs tmpfs rw\n", NULL, 0,
	  -EPERM, "shows /run/nsguard (nsguard's lock, records and agent socket): read-only or "
		  "not, it could hold the lock" },
	{ "run-nsguard-below-ro",
	  COPIES ROOTFS "130 110 0:40 /nsguard/containers /ct/rootfs/r ro - tmpfs tmpfs rw\n",
	  NULL, 0, -EPERM, "shows /run/nsguard (" },
	{ "agent-socket-ro",
	  COPIES ROOTFS "130 110 0:40 /nsguard/agent.sock /ct/rootfs/s ro - tmpfs tmpfs rw\n",
	  NULL, 0, -EPERM, "mount at /ct/rootfs/s shows /run/nsguard (" },
	{ "run-other-rw", COPIES ROOTFS "130 110 0:40 /other /ct/rootfs/r rw - tmpfs tmpfs rw\n" },
	/* The host's proc: /proc/PID/root of its processes leads anywhere. */
	{ "host-proc-ro", COPIES ROOTFS "130 110 0:5 / /ct/rootfs/hp ro - proc proc rw\n", NULL,
	  0, -EPERM, "mount at /ct/rootfs/hp is a proc file system of the host's" },
	{ "host-proc-as-proc",
	  COPIES "110 101 8:1 /ct/rootfs /ct/rootfs rw - ext4 /dev/vda rw\n"
		 "111 110 0:5 / /ct/rootfs/proc rw - proc proc rw\n",
	  NULL, 0, -EPERM, "mount at /ct/rootfs/proc is a proc file system of the host's" },
	/* nsfs: a namespace to setns() into. */
	{ "nsfs-file",
	  COPIES ROOTFS "130 110 0:4 user:[4026532200] /ct/rootfs/n ro - nsfs nsfs rw\n", NULL,
	  0, -EPERM, "mount at /ct/rootfs/n is a namespace file (nsfs)" },
	/* sysfs writable. */
	{ "sysfs-rw", COPIES ROOTFS "130 110 0:52 / /ct/rootfs/s rw - sysfs sysfs rw\n", NULL, 0,
	  -EPERM, "mount at /ct/rootfs/s is a writable sysfs: a kernel interface" },
	{ "binfmt-misc-rw",
	  COPIES ROOTFS "130 113 0:54 / /ct/rootfs/sys/fs/binfmt_misc rw - binfmt_misc binfmt_misc rw\n",
	  NULL, 0, -EPERM, "is a writable binfmt_misc" },
	{ "debugfs-ro", COPIES ROOTFS "130 113 0:7 / /ct/rootfs/sys/kernel/debug ro - debugfs debugfs rw\n" },
	/* nsguard's config and binary, writable. */
	{ "config-dir-rw", COPIES ROOTFS "130 110 8:1 /etc/nsguard /ct/rootfs/e rw - ext4 /dev/vda rw\n",
	  NULL, 0, -EPERM, "shows nsguard's configuration /etc/nsguard/nsguard.conf read-write" },
	{ "config-file-rw",
	  COPIES ROOTFS "130 110 8:1 /etc/nsguard/nsguard.conf /ct/rootfs/c rw - ext4 /dev/vda rw\n",
	  NULL, 0, -EPERM, "shows nsguard's configuration" },
	{ "config-etc-rw", COPIES ROOTFS "130 110 8:1 /etc /ct/rootfs/e rw - ext4 /dev/vda rw\n",
	  NULL, 0, -EPERM, "shows nsguard's configuration" },
	{ "config-etc-ro", COPIES ROOTFS "130 110 8:1 /etc /ct/rootfs/e ro - ext4 /dev/vda rw\n" },
	{ "config-sibling-rw",
	  COPIES ROOTFS "130 110 8:1 /etc/nsguardx /ct/rootfs/e rw - ext4 /dev/vda rw\n" },
	{ "binary-dir-rw",
	  COPIES ROOTFS "130 110 8:1 /usr/local/bin /ct/rootfs/b rw - ext4 /dev/vda rw\n", NULL, 0,
	  -EPERM, "shows nsguard's binary /usr/local/bin/nsguard read-write" },
	{ "binary-file-rw",
	  COPIES ROOTFS "130 110 8:1 /usr/local/bin/nsguard /ct/rootfs/x rw - ext4 /dev/vda rw\n",
	  NULL, 0, -EPERM, "shows nsguard's binary" },
	{ "binary-dir-ro",
	  COPIES ROOTFS "130 110 8:1 /usr/local/bin /ct/rootfs/b ro - ext4 /dev/vda rw\n" },
	/* /proc/sys and /proc/sysrq-trigger: what the runtime will make of them. */
	{ "proc-sys-writable", COPIES ROOTFS, NULL, 0, -EPERM,
	  "the container's /proc at /ct/rootfs/proc leaves /proc/sys writable",
	  .ro = none, .n_ro = 0 },
	{ "proc-sysrq-writable", COPIES ROOTFS, NULL, 0, -EPERM,
	  "leaves /proc/sysrq-trigger writable", .ro = PATHS(only_sys) },
	{ "proc-sys-whole-proc-ro", COPIES ROOTFS, .ro = PATHS(whole_proc) },
	{ "proc-sys-unclean", COPIES ROOTFS, .ro = PATHS(unclean) },
	{ "proc-sys-relative", COPIES ROOTFS, NULL, 0, -EPERM, "leaves /proc/sys writable",
	  .ro = PATHS(relative) },
	{ "proc-sys-masked", COPIES ROOTFS, .ro = none, .n_ro = 0, .masked = PATHS(masked_sys) },
	{ "proc-sys-kernel-view",
	  COPIES ROOTFS "130 111 0:50 /sys /ct/rootfs/proc/sys ro - proc proc rw\n"
			"131 111 0:50 /sysrq-trigger /ct/rootfs/proc/sysrq-trigger ro - proc proc rw\n",
	  .ro = none, .n_ro = 0 },
	{ "proc-elsewhere",
	  COPIES ROOTFS "130 110 0:53 / /ct/rootfs/p rw - proc proc rw\n", NULL, 0, -EPERM,
	  "the container's /proc at /ct/rootfs/p leaves /p/sys writable" },
	/* Review: an empty source is an empty field, not a shift of the others. */
	{ "empty-source", COPIES ROOTFS "130 110 0:61 / /ct/rootfs/e rw - tmpfs  rw\n" },
	/* A rootfs of "/": the runtime's bind of / onto itself keeps every host mount. */
	{ "rootfs-slash", COPIES "110 101 8:1 / / rw - ext4 /dev/vda rw\n", NULL, 0, -EPERM,
	  "mount at / shows nsguard's configuration" },
	/* After pivot_root nothing is the host's: all judged. */
	{ "pivoted",
	  "200 199 8:1 /ct/rootfs / rw - ext4 /dev/vda rw\n"
	  "201 200 0:30 / /b ro - bpf bpf rw\n",
	  NULL, 0, -EPERM, "mount at /b is a bpf file system" },
	{ "unreadable", "12 1 0:20\n", NULL, 0, -EINVAL, "a line nsguard cannot read" },
	/* Review: a new overlay's layers are paths nsguard cannot judge by device. */
	{ "overlay-new-upper-config",
	  COPIES ROOTFS "130 110 0:90 / /ct/rootfs/o rw - overlay overlay "
			"rw,lowerdir=/x,upperdir=/etc/nsguard,workdir=/etc/w\n",
	  NULL, 0, -EPERM, "mount at /ct/rootfs/o is a new overlay file system, made for the "
			   "container" },
	{ "overlay-new-lower-only",
	  COPIES ROOTFS "130 110 0:90 / /ct/rootfs/o ro - overlay overlay ro,lowerdir=/run\n",
	  NULL, 0, -EPERM, "is a new overlay file system" },
	{ "aufs-new", COPIES ROOTFS "130 110 0:92 / /ct/rootfs/o rw - aufs none rw,br=/etc\n",
	  NULL, 0, -EPERM, "is a new aufs file system" },
	/* One the host mounted (containerd's and podman's rootfs): judged as a bind. */
	{ "overlay-of-the-host",
	  COPIES ROOTFS "130 110 0:91 / /ct/rootfs/o rw - overlay overlay "
			"rw,lowerdir=/l,upperdir=/u,workdir=/w\n" },
	{ "overlay-new-unmapped",
	  COPIES ROOTFS "130 110 0:90 / /ct/rootfs/o rw - overlay overlay "
			"rw,lowerdir=/x,upperdir=/etc/nsguard,workdir=/etc/w\n",
	  .unmapped = true },
	/* Review: nothing added, nothing judged; now a refusal. */
	{ "nothing-added", COPIES, NULL, 0, -EPERM, "holds no mount its runtime added for it" },
	/* Review: ".." in readonlyPaths counts for nothing. */
	{ "proc-sys-dotdot", COPIES ROOTFS, NULL, 0, -EPERM,
	  "leaves /proc/sys writable (config.json linux.readonlyPaths and maskedPaths do not "
	  "name it at or below the proc mount; an entry with a \"..\" component counts for "
	  "nothing)",
	  .ro = PATHS(dotdot) },
	{ "proc-sys-dotdot-masked", COPIES ROOTFS, NULL, 0, -EPERM, "leaves /proc/sys writable",
	  .ro = none, .n_ro = 0, .masked = PATHS(dotdot) },
	/* Review: crun's ro concession only where every entry landed where it says. */
	{ "crun-ro-symlinked-rw-entry",
	  COPIES ROOTFS "130 110 0:26 /nsg /ct/rootfs/b rw - cgroup2 cgroup2 rw\n"
			"131 130 0:26 /nsg /ct/rootfs/b rw - cgroup2 cgroup2 rw\n",
	  CFG(cfg_symlinked_rw), -EPERM, "mount at /ct/rootfs/b shows cgroup /nsg read-write" },
	/* A symlinked destination that lands elsewhere (/etc/resolv.conf, often). */
	{ "crun-ro-symlinked-entry-elsewhere",
	  COPIES ROOTFS "130 110 0:26 /nsg /ct/rootfs/b rw - cgroup2 cgroup2 rw\n"
			"131 110 0:60 / /ct/rootfs/run/resolv.conf rw - tmpfs tmpfs rw\n",
	  CFG(cfg_symlinked_rw), .made_ro = "/ct/rootfs/b" },
	{ "crun-ro-dotdot-destination",
	  COPIES ROOTFS "130 110 0:26 /nsg /ct/rootfs/b rw - cgroup2 cgroup2 rw\n",
	  CFG(cfg_dotdot_ro), -EPERM, "mount at /ct/rootfs/b shows cgroup /nsg read-write" },
	{ "crun-ro-hidden-by-later-ancestor",
	  COPIES ROOTFS "130 110 0:26 /nsg /ct/rootfs/b/c rw - cgroup2 cgroup2 rw\n"
			"131 110 0:60 / /ct/rootfs/q rw - tmpfs tmpfs rw\n"
			"132 110 0:61 / /ct/rootfs/b rw - tmpfs tmpfs rw\n",
	  CFG(cfg_b_c_ro_then_b), -EPERM, "mount at /ct/rootfs/b/c shows cgroup /nsg read-write" },
	/* 6.8+ list mounts by when each was made: crun's open_tree clone of a
	 * user namespace's bind comes before the rootfs it is attached to. */
	{ "crun-ro-listed-before-its-parent",
	  COPIES "130 110 0:26 /nsg /ct/rootfs/b rw - cgroup2 cgroup2 rw\n" ROOTFS,
	  CFG(cfg_b_ro), .made_ro = "/ct/rootfs/b" },
	{ "crun-ro-hidden-listed-first",
	  COPIES "132 110 0:61 / /ct/rootfs/b rw - tmpfs tmpfs rw\n"
		 "130 110 0:26 /nsg /ct/rootfs/b/c rw - cgroup2 cgroup2 rw\n"
		 "131 110 0:60 / /ct/rootfs/q rw - tmpfs tmpfs rw\n" ROOTFS,
	  CFG(cfg_b_c_ro_then_b), -EPERM, "mount at /ct/rootfs/b/c shows cgroup /nsg read-write" },
	/* Its parent covered by a later mount at the parent's point. */
	{ "crun-ro-parent-covered",
	  COPIES ROOTFS "120 110 0:61 / /ct/rootfs/b rw - tmpfs tmpfs rw\n"
			"130 120 0:26 /nsg /ct/rootfs/b/c rw - cgroup2 cgroup2 rw\n"
			"131 120 0:62 / /ct/rootfs/b rw - tmpfs tmpfs rw\n",
	  CFG(cfg_b_c_ro_then_b), -EPERM, "mount at /ct/rootfs/b/c shows cgroup /nsg read-write" },
	{ "crun-ro-every-entry-landed",
	  COPIES ROOTFS "130 110 0:26 /nsg /ct/rootfs/b/c rw - cgroup2 cgroup2 rw\n"
			"131 110 0:60 / /ct/rootfs/q rw - tmpfs tmpfs rw\n",
	  CFG(cfg_b_c_ro_then_b), .made_ro = "/ct/rootfs/b/c" },
	/* A user namespace that maps no host owner: only the rows that hold read-only. */
	{ "unmapped-bpffs-ro", COPIES ROOTFS "130 110 0:30 / /ct/rootfs/b ro - bpf bpf rw\n", NULL,
	  0, -EPERM, "is a bpf file system", .unmapped = true },
	{ "unmapped-run-ro", COPIES ROOTFS "130 110 0:40 / /ct/rootfs/r ro - tmpfs tmpfs rw\n",
	  NULL, 0, -EPERM, "it runs as a user namespace's root (it could hand what it opens there",
	  .unmapped = true },
	{ "unmapped-host-proc", COPIES ROOTFS "130 110 0:5 / /ct/rootfs/hp ro - proc proc rw\n",
	  NULL, 0, -EPERM, "is a proc file system of the host's", .unmapped = true },
	{ "unmapped-nsfs",
	  COPIES ROOTFS "130 110 0:4 user:[4026532200] /ct/rootfs/n ro - nsfs nsfs rw\n", NULL,
	  0, -EPERM, "is a namespace file (nsfs)", .unmapped = true },
	/* Review: writability travels with a descriptor handed to a host-root container. */
	{ "unmapped-cgroup-parent-rw",
	  COPIES ROOTFS "130 110 0:26 /nsg /ct/rootfs/c rw - cgroup2 cgroup2 rw\n", NULL, 0,
	  -EPERM, "shows cgroup /nsg read-write", .unmapped = true },
	{ "unmapped-sysfs-rw", COPIES ROOTFS "130 110 0:52 / /ct/rootfs/s rw - sysfs sysfs rw\n",
	  NULL, 0, -EPERM, "is a writable sysfs", .unmapped = true },
	{ "unmapped-config-dir-rw",
	  COPIES ROOTFS "130 110 8:1 /etc/nsguard /ct/rootfs/e rw - ext4 /dev/vda rw\n", NULL, 0,
	  -EPERM, "runs as a user namespace's root (it could hand what it opens there",
	  .unmapped = true },
	{ "unmapped-proc-sys-writable", COPIES ROOTFS, NULL, 0, -EPERM,
	  "a descriptor of it, handed to a container that runs as the host's root, writes there",
	  .ro = none, .n_ro = 0, .unmapped = true },
	{ "unmapped-config-dir-ro",
	  COPIES ROOTFS "130 110 8:1 /etc/nsguard /ct/rootfs/e ro - ext4 /dev/vda rw\n",
	  .unmapped = true },
	/* Review: a peer of the container's tmpfs over the host's records (rshared):
	 * detached, so that later starts are not refused for it. */
	{ "propagated-over-records-detached",
	  COPIES ROOTFS "130 110 0:77 / /ct/rootfs/v/nsguard/containers rw shared:77 - tmpfs tmpfs rw\n",
	  NULL, 0, -EPERM, "is a peer of nsguard's mount at /run/nsguard/containers (shared:77)",
	  .ours_add = "200 23 0:77 / /run/nsguard/containers rw shared:77 - tmpfs tmpfs rw\n",
	  .detached = "/run/nsguard/containers" },
	/* Review: its hook may never run (a later mount fails) or refuse first:
	 * any start detaches what is over the run directory, peer or not, and
	 * goes on. */
	{ "mount-over-records-not-a-peer",
	  COPIES ROOTFS,
	  .ours_add = "200 23 0:77 / /run/nsguard/containers rw shared:78 - tmpfs tmpfs rw\n",
	  .detached = "/run/nsguard/containers" },
	/* Review: with CAP_SYS_ADMIN over its own mounts, read-only does not hold. */
	{ "unmapped-admin-config-dir-ro",
	  COPIES ROOTFS "130 110 8:1 /etc/nsguard /ct/rootfs/e ro - ext4 /dev/vda rw\n", NULL, 0,
	  -EPERM, "may hold CAP_SYS_ADMIN (config.json process.capabilities) it could remount",
	  .unmapped = true, .admin = true },
	{ "unmapped-admin-cgroup-parent-ro",
	  COPIES ROOTFS "130 110 0:26 /nsg /ct/rootfs/c ro - cgroup2 cgroup2 rw\n", NULL, 0,
	  -EPERM, "could remount it read-write", .unmapped = true, .admin = true },
	/* Every container has a sysfs: not closed here (docs/design.md). */
	{ "unmapped-admin-sysfs-ro", COPIES ROOTFS "130 110 0:52 / /ct/rootfs/s ro - sysfs sysfs rw\n",
	  .unmapped = true, .admin = true },
	/* crun's shortcut is no help where ro does not hold. */
	{ "unmapped-admin-crun-ro-later",
	  COPIES ROOTFS "130 110 0:26 /nsg /ct/rootfs/b rw - cgroup2 cgroup2 rw\n",
	  CFG(cfg_b_ro), -EPERM, "could remount it read-write", .unmapped = true, .admin = true },
	/* Review: a part of the container's proc, read-write: readonlyPaths reach nothing in it. */
	{ "proc-subtree-rw",
	  COPIES ROOTFS "130 110 0:50 /sys /ct/rootfs/p rw - proc proc rw\n", NULL, 0, -EPERM,
	  "mount at /ct/rootfs/p is /sys of a proc file system, not a whole one, read-write" },
	{ "proc-subtree-ro",
	  COPIES ROOTFS "130 110 0:50 /sys /ct/rootfs/p ro - proc proc rw\n" },
	/* Review: a ro bind on one proc's sys hides nothing of another stacked at the point. */
	{ "proc-stacked-over-ro-bind",
	  COPIES ROOTFS "130 110 0:53 / /ct/rootfs/p rw - proc proc rw\n"
			"131 130 0:60 / /ct/rootfs/p/sys ro - tmpfs tmpfs rw\n"
			"132 130 0:54 / /ct/rootfs/p rw - proc proc rw\n",
	  NULL, 0, -EPERM, "the container's /proc at /ct/rootfs/p leaves /p/sys writable",
	  .ro = PATHS(p_sysrq) },
	{ "proc-ro-bind-on-its-sys",
	  COPIES ROOTFS "130 110 0:53 / /ct/rootfs/p rw - proc proc rw\n"
			"131 130 0:60 / /ct/rootfs/p/sys ro - tmpfs tmpfs rw\n",
	  .ro = PATHS(p_sysrq) },
	/* Review: an entry above the proc mount covers nothing in it. */
	{ "proc-sys-ro-root", COPIES ROOTFS, NULL, 0, -EPERM, "leaves /proc/sys writable",
	  .ro = PATHS(root_only) },
	{ "proc-sys-masked-root", COPIES ROOTFS, NULL, 0, -EPERM, "leaves /proc/sys writable",
	  .ro = none, .n_ro = 0, .masked = PATHS(root_only) },
	/* Review: rshared rootfsPropagation: the container's mounts propagate to the host. */
	{ "peer-of-ours",
	  COPIES "110 101 8:1 /ct/rootfs /ct/rootfs rw shared:1 - ext4 /dev/vda rw\n"
		 "111 110 0:50 / /ct/rootfs/proc rw - proc proc rw\n",
	  NULL, 0, -EPERM, "mount at /ct/rootfs is a peer of nsguard's mount at / (shared:1)" },
	{ "peer-of-ours-unmapped",
	  COPIES "110 101 8:1 /ct/rootfs /ct/rootfs rw shared:1 - ext4 /dev/vda rw\n"
		 "111 110 0:50 / /ct/rootfs/proc rw - proc proc rw\n",
	  NULL, 0, -EPERM, "is a peer of nsguard's mount", .unmapped = true },
	{ "own-peer-group", COPIES ROOTFS "130 110 0:60 / /ct/rootfs/t rw shared:77 - tmpfs tmpfs rw\n" },
	/* Review: nsguard's own state overmounted in ours (propagated from a container). */
	{ "run-dir-overmounted", COPIES ROOTFS,
	  .ours_add = "26 23 0:95 / /run/nsguard rw - tmpfs tmpfs rw\n", .detached = "/run/nsguard" },
	{ "pins-overmounted", COPIES ROOTFS,
	  .ours_add = "26 22 0:96 / /sys/fs/bpf/nsguard/links rw - bpf bpf rw\n",
	  .detached = "/sys/fs/bpf/nsguard/links" },
	{ "config-dir-overmounted", COPIES ROOTFS, NULL, 0, -EPERM, "nsguard's /etc/nsguard has a mount",
	  .ours_add = "26 1 0:97 / /etc/nsguard rw - tmpfs tmpfs rw\n" },
	/* The top of two stacked is asked first. */
	{ "stacked-over-records", COPIES ROOTFS,
	  .ours_add = "200 23 0:77 / /run/nsguard/containers rw - tmpfs tmpfs rw\n"
		      "201 200 0:78 / /run/nsguard/containers rw - tmpfs tmpfs rw\n",
	  .detached = "/run/nsguard/containers" },
	{ "etc-mounted", COPIES ROOTFS, .ours_add = "26 1 0:97 / /etc rw - tmpfs tmpfs rw\n" },
	{ "fuse-new", COPIES ROOTFS "130 110 0:93 / /ct/rootfs/f rw - fuse.sshfs host:/ rw\n", NULL,
	  0, -EPERM, "is a new fuse.sshfs file system" },
};

static char made_ro[256];

static char detached[256];

static int fake_detach(const char *point, unsigned long id, void *data)
{
	(void)id;
	(void)data;
	snprintf(detached, sizeof(detached), "%s", point);
	return 0;
}

static int fake_make_ro(const char *point, unsigned long id, void *data)
{
	(void)id;
	const char *want = data;

	snprintf(made_ro, sizeof(made_ro), "%s", point);
	return want && strcmp(want, "fail") == 0 ? nsg_fail(EPERM, "fake: cannot") : 0;
}

static void row(size_t i)
{
	char a[] = "/tmp/nsguard-test-theirs.XXXXXX", b[] = "/tmp/nsguard-test-ours.XXXXXX";
	struct mounts_ctx c = { .guarded = "/nsg/c1", .cfg = rows[i].cfg, .n_cfg = rows[i].n_cfg,
				.ro_paths = rows[i].ro ? rows[i].ro : docker_ro,
				.n_ro_paths = rows[i].ro ? rows[i].n_ro : ARRAY_SIZE(docker_ro),
				.masked_paths = rows[i].masked, .n_masked_paths = rows[i].n_masked,
				.run_dir = "/run/nsguard", .pin_dir = "/sys/fs/bpf/nsguard",
				.config = "/etc/nsguard/nsguard.conf",
				.binary = "/usr/local/bin/nsguard", .ro_holds = !rows[i].userns && !rows[i].admin,
				.host_root = !rows[i].unmapped,
				.make_ro = fake_make_ro, .detach = fake_detach,
				.data = (void *)rows[i].made_ro };
	int fa = mkstemp(a), fb = mkstemp(b), err;

	ASSERT_TRUE(fa >= 0 && fb >= 0);
	ASSERT_TRUE(write(fa, rows[i].theirs, strlen(rows[i].theirs)) > 0);
	ASSERT_TRUE(write(fb, ours, strlen(ours)) > 0);
	if (rows[i].ours_add)
		ASSERT_TRUE(write(fb, rows[i].ours_add, strlen(rows[i].ours_add)) > 0);
	close(fa);
	close(fb);
	made_ro[0] = '\0';
	detached[0] = '\0';
	err = mounts_check_files(a, b, &c);
	unlink(a);
	unlink(b);
	ASSERT_EQ(rows[i].err, err);
	if (rows[i].msg)
		ASSERT_MSG(rows[i].msg);
	ASSERT_STREQ(rows[i].detached ? rows[i].detached : "", detached);
	if (rows[i].made_ro && strcmp(rows[i].made_ro, "fail") != 0)
		ASSERT_STREQ(rows[i].made_ro, made_ro);
	else if (!rows[i].made_ro)
		ASSERT_STREQ("", made_ro);
}

static void t_gone(void)
{
	struct mounts_ctx c = { .guarded = "/nsg/c1", .run_dir = "/run/nsguard", .ro_holds = true };

	ASSERT_ERR(-ESRCH, mounts_check("/nonexistent", 42, &c));
	ASSERT_MSG("cannot read /nonexistent/42/mountinfo");
}

void suite_mounts(void)
{
	char name[128];

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		snprintf(name, sizeof(name), "%s-%s", rows[i].name, rows[i].err ? "refused" : "ok");
		TEST_CASE("mounts", name, row, i);
	}
	TEST_CASE("mounts", "mountinfo-gone", t_gone);
}
