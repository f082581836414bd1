// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What a host-root container's mounts expose (mounts.h), from the kernel's
 * mount table.  config.json says what the runtime was asked to mount; the
 * kernel says what it did: an rbind's `ro` reaches its top mount only
 * (runc 1.1, crun 1.8), so only the per-mount flags tell.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/mount.h>
#include <linux/openat2.h>

#include "fileio.h"
#include "log.h"
#include "mounts.h"
#include "util.h"

/* A node's mount table is a few hundred KiB at most; bounds all the same. */
#define MOUNTINFO_MAX (16 * 1024 * 1024)
#define MOUNTS_MAX 16384

/* One mountinfo line, split in place. */
struct mnt {
	unsigned long id, parent;
	unsigned long shared; /* its peer group ("shared:N"), 0 if none */
	const char *majmin, *root, *point, *opts, *fstype, *super;
	bool added; /* a mount the runtime made for the container */
	bool judged; /* reachable from the container */
	bool gone; /* ours: detached by detach_propagated (still a copy's match in theirs) */
};

struct table {
	char *buf;
	struct mnt *m;
	size_t n;
};

static void table_free(struct table *t)
{
	free(t->buf);
	free(t->m);
}

/* mountinfo's octal escapes (space, tab, newline, backslash) back to bytes, in place. */
static void unmangle(char *f)
{
	char *o = f;

	for (; *f; f++) {
		if (f[0] == '\\' && f[1] >= '0' && f[1] <= '3' && f[2] >= '0' && f[2] <= '7' &&
		    f[3] >= '0' && f[3] <= '7') {
			*o++ = (char)((f[1] - '0') << 6 | (f[2] - '0') << 3 | (f[3] - '0'));
			f += 3;
		} else {
			*o++ = *f;
		}
	}
	*o = '\0';
}

/*
 * "36 25 0:30 / /sys/fs/cgroup rw,nosuid shared:9 - cgroup2 cgroup2 rw,nsdelegate":
 * fields split on single spaces (an empty source is an empty field).
 */
static bool split_line(char *line, struct mnt *m)
{
	char *f[6], *tok = NULL, *src;
	int k = 0;

	while (k < 6 && (tok = strsep(&line, " ")))
		f[k++] = tok;
	if (k < 6)
		return false;
	/* Optional fields up to the separator. */
	m->shared = 0;
	while ((tok = strsep(&line, " ")) && strcmp(tok, "-") != 0)
		if (strncmp(tok, "shared:", 7) == 0)
			m->shared = strtoul(tok + 7, NULL, 10);
	m->fstype = tok ? strsep(&line, " ") : NULL;
	src = m->fstype ? strsep(&line, " ") : NULL;
	m->super = src ? strsep(&line, " ") : NULL;
	if (!m->super)
		return false;
	m->id = strtoul(f[0], NULL, 10);
	m->parent = strtoul(f[1], NULL, 10);
	m->majmin = f[2];
	unmangle(f[3]);
	unmangle(f[4]);
	m->root = f[3];
	m->point = f[4];
	m->opts = f[5];
	return true;
}

static int table_read(const char *path, struct table *t)
{
	cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len = 0, lines = 0;
	char *line, *end;
	int err = 0;

	*t = (struct table){ 0 };
	if (fd < 0)
		return nsg_fail(errno == ENOENT ? ESRCH : errno, "cannot read %s: %s", path,
				strerror(errno));
	err = read_capped(fd, MOUNTINFO_MAX, &t->buf, &len);
	/* A table too large to judge is the container's doing: a refusal. */
	if (err == -EFBIG)
		return nsg_fail(EPERM, "%s is larger than %d MiB: too many mounts to judge", path,
				MOUNTINFO_MAX >> 20);
	if (err)
		return nsg_fail(-err, "cannot read %s: %s", path, strerror(-err));
	for (size_t i = 0; i < len; i++)
		lines += t->buf[i] == '\n';
	if (lines > MOUNTS_MAX)
		return nsg_fail(EPERM, "%s has more than %d mounts: too many to judge", path,
				MOUNTS_MAX);
	t->m = calloc(lines + 1, sizeof(*t->m));
	if (!t->m)
		return nsg_fail(ENOMEM, "out of memory");
	for (line = t->buf; *line; line = end + 1) {
		end = strchr(line, '\n');
		if (!end)
			end = line + strlen(line) - 1;
		else
			*end = '\0';
		if (!split_line(line, &t->m[t->n]))
			return nsg_fail(EINVAL, "%s: a line nsguard cannot read", path);
		t->n++;
		if (!end[1])
			break;
	}
	if (t->n == 0)
		return nsg_fail(ESRCH, "%s is empty (the process has exited)", path);
	return 0;
}

/* path is base or below it (mountinfo paths: absolute, no trailing '/'). */
static bool at_or_below(const char *path, const char *base)
{
	size_t n = strlen(base);

	if (strcmp(base, "/") == 0)
		return true;
	return strncmp(path, base, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/*
 * A ".." component: the runtimes resolve it physically in the container's
 * rootfs (after any symlink before it), nsguard only lexically, so such a
 * path may name for them what it does not for nsguard.
 */
static bool has_dotdot(const char *path)
{
	for (const char *p = path; (p = strstr(p, "..")); p += 2)
		if ((p == path || p[-1] == '/') && (p[2] == '/' || p[2] == '\0'))
			return true;
	return false;
}

static bool first_opt_is(const char *opts, const char *want)
{
	size_t n = strlen(want);

	return strncmp(opts, want, n) == 0 && (opts[n] == ',' || opts[n] == '\0');
}

/* Read-write in both the mount's and the super block's options. */
static bool writable(const struct mnt *m)
{
	return first_opt_is(m->opts, "rw") && first_opt_is(m->super, "rw");
}

static int by_key(const void *a, const void *b)
{
	const struct mnt *x = *(const struct mnt *const *)a, *y = *(const struct mnt *const *)b;

	return strcmp(x->point, y->point) ?: strcmp(x->majmin, y->majmin)
					    ?: strcmp(x->root, y->root);
}

static struct mnt **sorted(const struct table *t)
{
	struct mnt **p = calloc(t->n + 1, sizeof(*p));

	if (!p)
		return NULL;
	for (size_t i = 0; i < t->n; i++)
		p[i] = &t->m[i];
	qsort(p, t->n, sizeof(*p), by_key);
	return p;
}

/*
 * Mark the mounts of theirs that ours (the namespace it was copied from)
 * does not hold as often, by mount point, device and root: those the runtime
 * added.  Stacked look-alikes are all marked: which one is new cannot be told.
 */
static int mark_added(struct table *theirs, const struct table *ours)
{
	cleanup_free struct mnt **a = sorted(theirs), **b = sorted(ours);
	size_t i = 0, j = 0;

	if (!a || !b)
		return nsg_fail(ENOMEM, "out of memory");
	while (i < theirs->n) {
		size_t gi = i, gj, na, nb = 0;

		while (i < theirs->n && by_key(&a[gi], &a[i]) == 0)
			i++;
		na = i - gi;
		while (j < ours->n && by_key(&b[j], &a[gi]) < 0)
			j++;
		for (gj = j; gj < ours->n && by_key(&b[gj], &a[gi]) == 0; gj++)
			nb++;
		if (na > nb)
			for (size_t k = gi; k < i; k++)
				a[k]->added = true;
	}
	return 0;
}

/* Whether a mount other than but at m's point sits on m (m is covered, not the top). */
static bool covered_but(const struct table *t, const struct mnt *m, const struct mnt *but)
{
	for (size_t i = 0; i < t->n; i++)
		if (&t->m[i] != but && t->m[i].parent == m->id && strcmp(t->m[i].point, m->point) == 0)
			return true;
	return false;
}

static bool covered(const struct table *t, const struct mnt *m)
{
	return covered_but(t, m, NULL);
}

static const struct mnt *by_id(const struct table *t, unsigned long id)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->m[i].id == id)
			return &t->m[i];
	return NULL;
}

/*
 * Whether a path lookup of m's point from the rootfs mount misses m: on the
 * way up from m to the mount at rootfs, a mount sits on one of the chain's
 * (stacked at its point) or on a parent of the chain at a point between it
 * and the next one down (mounted later on an ancestor directory).  Told by
 * the tree, not by the table's order: 6.8 and later list mounts by when each
 * was made, and a mount made early (crun's open_tree for a user namespace)
 * and attached later comes before its parent.
 */
#define HIDDEN_HOPS_MAX 64 /* deeper is taken for hidden: no table's tree walks on for ever */
static bool hidden(const struct table *t, const struct mnt *m, const char *rootfs)
{
	const struct mnt *c = m, *below = NULL;

	for (size_t hops = 0; hops <= t->n && hops < HIDDEN_HOPS_MAX; hops++) {
		const struct mnt *p;

		if (covered_but(t, c, below))
			return true;
		if (strcmp(c->point, rootfs) == 0)
			return false;
		p = by_id(t, c->parent);
		if (!p || p == c || !at_or_below(c->point, p->point) || !at_or_below(p->point, rootfs))
			return true;
		for (size_t i = 0; i < t->n; i++) {
			const struct mnt *o = &t->m[i];

			if (o != c && o->parent == p->id && strcmp(o->point, p->point) != 0 &&
			    at_or_below(c->point, o->point))
				return true;
		}
		below = c;
		c = p;
	}
	return true;
}

/*
 * R + destination of config entry i is point (R the rootfs bind's point,
 * "/" allowed), destinations cleaned as the runtimes clean them.
 */
static bool entry_at(const struct oci_mount *e, const char *rootfs, const char *point)
{
	cleanup_free char *clean = NULL;
	size_t n = strcmp(rootfs, "/") == 0 ? 0 : strlen(rootfs);

	if (!e->destination || e->destination[0] != '/')
		return false;
	clean = path_clean(e->destination);
	if (!clean || strncmp(point, rootfs, n) != 0)
		return false;
	return strcmp(clean, "/") == 0 ? point[n] == '\0' || (n == 0 && !strcmp(point, "/"))
				       : strcmp(point + n, clean) == 0;
}

/*
 * The mounts at m's point are exactly the config.json entries that name it:
 * no entry has a ".." (the runtimes resolve it physically, after any symlink
 * before it), as many added mounts stack there as entries name it (an entry
 * whose destination is a symbolic link in the rootfs, which crun and runc
 * follow, would add one more: which entry a later remount acts on could not
 * be told), and a lookup of the point from the rootfs reaches m (hidden()).
 */
static bool landed_as_written(const struct table *t, const struct mnt *m, const char *rootfs,
			      const struct oci_mount *cfg, size_t n_cfg)
{
	size_t named = 0, stacked = 0;

	for (size_t i = 0; i < n_cfg; i++) {
		if (cfg[i].destination && has_dotdot(cfg[i].destination))
			return false;
		named += entry_at(&cfg[i], rootfs, m->point);
	}
	for (size_t i = 0; i < t->n; i++)
		stacked += t->m[i].added && strcmp(t->m[i].point, m->point) == 0;
	return named == stacked && !hidden(t, m, rootfs);
}

/*
 * crun makes `ro` mounts read-only after the createRuntime hooks (its
 * remounts follow the sync that runs them).  m, the top mount at its point,
 * may be made read-only now, as the runtime is about to, only when the last
 * config.json entry at that destination asks for ro (no rrw) and no later
 * entry is mounted at or above it (which would put something else there).
 */
static bool ro_requested(const struct table *t, const struct mnt *m, const char *rootfs,
			 const struct oci_mount *cfg, size_t n_cfg)
{
	size_t last = n_cfg;

	if (!rootfs || covered(t, m))
		return false;
	if (!landed_as_written(t, m, rootfs, cfg, n_cfg))
		return false;
	for (size_t i = 0; i < n_cfg; i++)
		if (entry_at(&cfg[i], rootfs, m->point))
			last = i;
	if (last == n_cfg || !cfg[last].ro)
		return false;
	for (size_t j = last + 1; j < n_cfg; j++) {
		cleanup_free char *d = cfg[j].destination ? path_clean(cfg[j].destination) : NULL;
		cleanup_free char *mine = path_clean(cfg[last].destination);

		if (!d || !mine || at_or_below(mine, d))
			return false;
	}
	return true;
}

/* Where path lives in ours: its file system's device and its path in it. */
struct spot {
	const char *majmin; /* NULL: no mount of ours holds it */
	char *in_fs;
};

static int locate(const struct table *ours, const char *path, struct spot *out)
{
	const struct mnt *best = NULL;
	const char *rest;

	out->majmin = NULL;
	out->in_fs = NULL;
	if (!path)
		return 0;
	for (size_t i = 0; i < ours->n; i++) {
		const struct mnt *m = &ours->m[i];

		if (!at_or_below(path, m->point))
			continue;
		if (!best || strlen(m->point) > strlen(best->point) ||
		    (strcmp(m->point, best->point) == 0 && !covered(ours, m)))
			best = m;
	}
	if (!best)
		return 0;
	rest = path + (strcmp(best->point, "/") == 0 ? 0 : strlen(best->point));
	if (asprintf(&out->in_fs, "%s%s", strcmp(best->root, "/") == 0 ? "" : best->root, rest) < 0) {
		out->in_fs = NULL;
		return nsg_fail(ENOMEM, "out of memory");
	}
	out->majmin = best->majmin;
	return 0;
}

/* m shows the file or directory at spot: its root is at or above it. */
static bool shows(const struct mnt *m, const struct spot *s)
{
	return s->majmin && s->in_fs && strcmp(m->majmin, s->majmin) == 0 &&
	       at_or_below(s->in_fs, m->root);
}

/*
 * What a host-root container must not reach, one row each: `even_ro`
 * views are refused read-only too, because the kernel checks what they
 * expose by inode, not by mount (bpffs grants BPF_OBJ_GET by the pin's
 * mode, flock() takes a read-only descriptor, connect() to a socket needs
 * no writable mount, setns() takes any nsfs descriptor, /proc/PID/root
 * leads anywhere its processes' roots do); the rest only when writable.
 */
enum danger { SAFE, BPFFS, RUN_DIR, HOST_PROC, NSFS, STACKED, CGROUP, SYSFS, CONFIG, BINARY };
static const struct {
	bool even_ro;
	const char *fmt; /* the mount point, the detail (see refuse), the guarded cgroup */
} dangers[] = {
	[BPFFS] = { true, "the container's mount at %.200s is a bpf file system%.0s: bpffs grants "
			  "BPF_OBJ_GET by the pin's inode, read-only or not, so it could open "
			  "nsguard's links and maps and detach or rewrite any guard" },
	[RUN_DIR] = { true, "the container's mount at %.200s shows %.200s (nsguard's lock, records "
			    "and agent socket): read-only or not, it could hold the lock (flock), "
			    "connect to the agent and read every container's record" },
	[HOST_PROC] = { true, "the container's mount at %.200s is a proc file system of the host's%.0s: "
			      "through /proc/PID/root of host processes (and other containers') it "
			      "reaches their file systems, nsguard's pins included" },
	[NSFS] = { true, "the container's mount at %.200s is a namespace file (nsfs)%.0s: setns() "
			 "into it joins a namespace nsguard never judged (a user namespace owned by "
			 "uid 0 gives every capability without userns_create)" },
	[STACKED] = { true, "the container's mount at %.200s is a new %.200s file system, made "
			    "for the container: its layers are directories the kernel shows only "
			    "as the paths given at mount time, which nsguard cannot judge (an upper "
			    "directory of nsguard's configuration or binary would make them "
			    "writable); mount it on the host first, or give the container a user "
			    "namespace" },
	[CGROUP] = { false, "the container's mount at %1$.200s shows cgroup %2$.200s read-write, "
			    "above or beside the guarded %3$.200s: its processes could move out of "
			    "the cgroup nsguard guards" },
	[SYSFS] = { false, "the container's mount at %.200s is a writable %.200s: a kernel interface "
			   "(/sys/kernel/uevent_helper, binfmt_misc and the like run programs as "
			   "the host's root)" },
	[CONFIG] = { false, "the container's mount at %.200s shows nsguard's configuration %.200s "
			    "read-write: it could loosen every later container's policy" },
	[BINARY] = { false, "the container's mount at %.200s shows nsguard's binary %.200s "
			    "read-write: it could replace the hook" },
};

/* What nsguard's own state looks like from ours (mounts_check_files). */
struct protected {
	struct spot run, config, config_dir, binary, binary_dir;
	const struct table *ours;
};

/*
 * File systems that show other directories under a device of their own
 * (the STACKED row): judged by device, their layers would pass unseen.
 */
static const char *const stacking_fs[] = { "overlay", "overlayfs", "aufs",  "shiftfs", "ecryptfs",
					   "fuse",    "fuseblk",   "fuse.*", "nfs",     "nfs4",
					   "cifs",    "smb3",      "9p",     "virtiofs" };

/* The kernel's interfaces that sit in /sys and /proc/sys/fs (the SYSFS row). */
static const char *const kernel_fs[] = { "sysfs", "securityfs", "debugfs", "tracefs", "configfs",
					 "pstore", "efivarfs", "binfmt_misc" };

/* Some mount of t is of device majmin. */
static bool holds_device(const struct table *t, const char *majmin)
{
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->m[i].majmin, majmin) == 0)
			return true;
	return false;
}

/*
 * The row m falls under (SAFE: none), writable or not.  A container whose
 * uid 0 is not the host's is held to every row but STACKED: it could not
 * use what they show itself, but it could open it and hand the descriptor
 * to a host-root container, whose root passes the checks beneath (the
 * mount's writability travels with the descriptor).
 */
static enum danger danger(const struct mnt *m, const struct mounts_ctx *c,
			  const struct protected *p)
{
	if (strcmp(m->fstype, "bpf") == 0)
		return BPFFS;
	if (p->run.majmin && strcmp(m->majmin, p->run.majmin) == 0 &&
	    (at_or_below(m->root, p->run.in_fs) || at_or_below(p->run.in_fs, m->root)))
		return RUN_DIR;
	if (strcmp(m->fstype, "proc") == 0)
		for (size_t i = 0; i < p->ours->n; i++)
			if (strcmp(p->ours->m[i].fstype, "proc") == 0 &&
			    strcmp(p->ours->m[i].majmin, m->majmin) == 0)
				return HOST_PROC;
	if (strcmp(m->fstype, "nsfs") == 0)
		return NSFS;
	/*
	 * Overlay checks the mounter's credentials on its layers: a descriptor
	 * handed over from a user namespace gains nothing there.
	 */
	for (size_t i = 0; c->host_root && i < ARRAY_SIZE(stacking_fs); i++)
		if (fnmatch(stacking_fs[i], m->fstype, 0) == 0 && !holds_device(p->ours, m->majmin))
			return STACKED;
	if (strcmp(m->fstype, "cgroup2") == 0 && !at_or_below(m->root, c->guarded))
		return CGROUP;
	for (size_t i = 0; i < ARRAY_SIZE(kernel_fs); i++)
		if (strcmp(m->fstype, kernel_fs[i]) == 0)
			return SYSFS;
	if (shows(m, &p->config) || shows(m, &p->config_dir))
		return CONFIG;
	if (shows(m, &p->binary) || shows(m, &p->binary_dir))
		return BINARY;
	return SAFE;
}

/*
 * Is a read-only view of row d enough?  Where it holds, yes.  Where it may
 * not (a user namespace's root with CAP_SYS_ADMIN over its own mounts
 * remounts them read-write), not for the views no container needs
 * (nsguard's config or binary, another cgroup): a descriptor of one,
 * handed to a host-root container, would write there.  Every container has
 * a sysfs and a proc: that hand-off is not closed here (docs/design.md).
 */
static bool ro_enough(enum danger d, const struct mounts_ctx *c)
{
	return c->ro_holds || c->host_root || d == SYSFS;
}

static int refuse(const struct mnt *m, enum danger d, const struct mounts_ctx *c)
{
	const char *detail = d == RUN_DIR ? c->run_dir : d == CGROUP ? m->root :
			     d == SYSFS || d == STACKED ? m->fstype :
			     d == CONFIG ? (c->config ? c->config : "") :
			     d == BINARY ? (c->binary ? c->binary : "") : "";
	char what[768];

	/* The format is one of dangers[]: fixed, never the tenant's. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	snprintf(what, sizeof(what), dangers[d].fmt, m->point, detail, c->guarded);
#pragma GCC diagnostic pop
	/* Review: nothing locks a read-only flag set after its namespace was made. */
	if (!dangers[d].even_ro && !ro_enough(d, c))
		return nsg_fail(EPERM,
				"%s, and as a user namespace's root that may hold CAP_SYS_ADMIN "
				"(config.json process.capabilities) it could remount it read-write "
				"and hand it to a host-root container; drop CAP_SYS_ADMIN or do not "
				"mount it",
				what);
	return nsg_fail(EPERM, "%s, and it runs as %s; %s", what,
			c->host_root ? "the host's root" : "a user namespace's root (it could "
			"hand what it opens there to a container that runs as the host's root)",
			dangers[d].even_ro ? "do not mount it at all"
					   : "mount it read-only (each submount of an rbind too) or "
					     "not at all");
}

/*
 * path (container-absolute, clean) is name or below one of names, cleaned,
 * each at or below proc.
 */
static bool listed(const char *path, const char *proc, char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		cleanup_free char *clean = names[i] && names[i][0] == '/' && !has_dotdot(names[i])
						   ? path_clean(names[i])
						   : NULL;

		/*
		 * Within the proc mount (at proc) itself: runtimes make an entry
		 * above it read-only at its own top mount only, and a mask laid
		 * over the rootfs is under a process whose root is the mount
		 * beneath it (review: readonlyPaths ["/"]).
		 */
		if (clean && at_or_below(clean, proc) && at_or_below(path, clean))
			return true;
	}
	return false;
}

/*
 * A host-root container's own proc mount at m: /proc/sys (kernel.core_pattern,
 * kernel.modprobe run a program as the host's root) and /proc/sysrq-trigger
 * must be read-only or masked.  The runtime applies linux.readonlyPaths and
 * maskedPaths after the createRuntime hooks, so the spec it will apply is
 * what tells; the kernel's view tells where it already shows one read-only.
 */
static int proc_sys_check(const struct table *t, const struct mnt *m, const char *rootfs,
			  const struct mounts_ctx *c)
{
	static const char *const kept[] = { "sys", "sysrq-trigger" };
	size_t n = rootfs && strcmp(rootfs, "/") != 0 ? strlen(rootfs) : 0;
	const char *dest = rootfs && at_or_below(m->point, rootfs) ? m->point + n : m->point;

	/*
	 * A part of proc (a bind of /proc/sys, say) is the tree itself:
	 * readonlyPaths name paths below a proc's root, and the runtimes skip
	 * those that are not there (review: /p/sys for a bind of sys at /p).
	 */
	if (strcmp(m->root, "/") != 0 && writable(m))
		return nsg_fail(EPERM,
				"the container's mount at %.200s is %.200s of a proc file system, "
				"not a whole one, read-write: no linux.readonlyPaths entry reaches "
				"into it, and %s; mount it read-only or mount proc whole",
				m->point, m->root,
				c->host_root ? "it runs as the host's root"
					     : "a descriptor of it could be handed to a container "
					       "that runs as the host's root");
	if (!writable(m))
		return 0;
	for (size_t k = 0; k < ARRAY_SIZE(kept); k++) {
		cleanup_free char *inside = NULL, *point = NULL;
		bool ro_now = false;

		if (asprintf(&inside, "%s/%s", dest[0] ? dest : "", kept[k]) < 0 ||
		    asprintf(&point, "%s/%s", strcmp(m->point, "/") ? m->point : "", kept[k]) < 0)
			return nsg_fail(ENOMEM, "out of memory");
		/*
		 * A read-only mount on this proc's sys, reached from the rootfs:
		 * one on another proc at the same point (stacked over it) hides
		 * nothing of this one (review).
		 */
		for (size_t i = 0; i < t->n && !ro_now; i++)
			ro_now = t->m[i].judged && t->m[i].parent == m->id &&
				 strcmp(t->m[i].point, point) == 0 && !writable(&t->m[i]) &&
				 !hidden(t, &t->m[i], rootfs ? rootfs : "/");
		if (ro_now || listed(inside, dest[0] ? dest : "/", c->ro_paths, c->n_ro_paths) ||
		    listed(inside, dest[0] ? dest : "/", c->masked_paths, c->n_masked_paths))
			continue;
		return nsg_fail(EPERM,
				"the container's /proc at %.200s leaves %.200s writable (config.json "
				"linux.readonlyPaths and maskedPaths do not name it at or below the "
				"proc mount; an entry with a \"..\" component counts for nothing), "
				"and %s: %s; add it to linux.readonlyPaths (Docker, "
				"containerd, podman and CRI-O do by default)",
				m->point, inside,
				c->host_root ? "it runs as the host's root"
					     : "a descriptor of it, handed to a container that runs "
					       "as the host's root, writes there",
				k == 0 ? "kernel.core_pattern and kernel.modprobe run programs as the "
					 "host's root"
				       : "it can crash or reboot the host");
	}
	return 0;
}

static void protected_free(struct protected *p)
{
	free(p->run.in_fs);
	free(p->config.in_fs);
	free(p->config_dir.in_fs);
	free(p->binary.in_fs);
	free(p->binary_dir.in_fs);
}

/* path's directory (malloc'd; path itself when it has none); NULL for NULL. */
static char *parent_of(const char *path)
{
	char *dir = path ? strdup(path) : NULL, *slash;

	if (dir && (slash = strrchr(dir, '/')) && slash != dir)
		*slash = '\0';
	return dir;
}

/* Where each piece of nsguard's state is, in ours. */
static int protected_locate(const struct table *ours, const struct mounts_ctx *c,
			    struct protected *p)
{
	/* The directories too: a new file there replaces the one named. */
	cleanup_free char *config_dir = parent_of(c->config);
	cleanup_free char *binary_dir = parent_of(c->binary);

	p->ours = ours;
	if ((c->config && !config_dir) || (c->binary && !binary_dir))
		return nsg_fail(ENOMEM, "out of memory");
	return locate(ours, c->run_dir, &p->run) ?: locate(ours, c->config, &p->config)
	       ?: locate(ours, config_dir, &p->config_dir) ?: locate(ours, c->binary, &p->binary)
	       ?: locate(ours, binary_dir, &p->binary_dir);
}

/*
 * nsguard's own run directory, pins and config directory are no mount
 * points in ours, nor below one: a mount there came from outside (a
 * container's, propagated before its hook), and what it shows is not
 * nsguard's state.
 */
static int state_not_covered(const struct table *ours, const struct mounts_ctx *c)
{
	cleanup_free char *config_dir = parent_of(c->config);
	const char *const dirs[] = { c->run_dir, c->pin_dir, config_dir };

	for (size_t i = 0; i < ours->n; i++)
		for (size_t k = 0; k < ARRAY_SIZE(dirs); k++)
			if (!ours->m[i].gone && dirs[k] && at_or_below(ours->m[i].point, dirs[k]))
				return nsg_fail(EPERM,
						"nsguard's %.200s has a mount at %.200s in the hook's "
						"own mount namespace: it is not the state nsguard "
						"made (a container's mount propagated onto the "
						"host?); unmount it and check the node",
						dirs[k], ours->m[i].point);
	return 0;
}

/*
 * Detach mounts of ours over nsguard's state, at every start: nothing is
 * ever mounted at or below its run or pin directory (state_not_covered), so
 * one there is a tenant's, propagated onto the host through a shared
 * rootfsPropagation before any hook (its own hook may never run, or refuse
 * before this: review), and left it would refuse every later start.  At or
 * below the config directory only a peer of one of theirs is detached (the
 * config was read before this: any other mount there stays a refusal).
 * The top mount at a point goes first; *changed when one did.
 */
static int detach_propagated(const struct table *theirs, struct table *ours,
			     const struct mounts_ctx *c, bool *changed)
{
	cleanup_free char *config_dir = parent_of(c->config);

	*changed = false;
	if (c->config && !config_dir)
		return nsg_fail(ENOMEM, "out of memory");
	for (size_t i = 0; c->detach && i < ours->n; i++) {
		struct mnt *o = &ours->m[i];
		const struct mnt *peer = NULL;
		bool under = false;
		bool state = (c->run_dir && at_or_below(o->point, c->run_dir)) ||
			     (c->pin_dir && at_or_below(o->point, c->pin_dir));

		if (!state && config_dir && at_or_below(o->point, config_dir))
			for (size_t j = 0; o->shared && !peer && j < theirs->n; j++)
				if (theirs->m[j].shared == o->shared)
					peer = &theirs->m[j];
		for (size_t k = 0; k < ours->n && !under; k++)
			under = !ours->m[k].gone && ours->m[k].parent == o->id &&
				strcmp(ours->m[k].point, o->point) == 0;
		if (o->gone || (!state && !peer) || under)
			continue; /* the one on top first: the next pass reaches this one */
		if (c->detach(o->point, o->id, c->data) < 0) {
			nsg_warn("%s; it stays", nsg_last_error());
			continue;
		}
		nsg_warn("detached the mount at %.200s from nsguard's state: nothing of "
			 "nsguard's is mounted there (a container's, propagated onto the host "
			 "through rootfsPropagation%s%.200s)",
			 o->point, peer ? ", a peer of its mount at " : "", peer ? peer->point : "");
		o->gone = true;
		*changed = true;
	}
	return 0;
}

static bool any_added(const struct table *t)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->m[i].added)
			return true;
	return false;
}

int mounts_check_files(const char *theirs_path, const char *ours_path, const struct mounts_ctx *c)
{
	struct table theirs, ours;
	struct protected prot = { 0 };
	const char *rootfs = NULL;
	int err = 0;

	/*
	 * A mount namespace owned by a user namespace the container has every
	 * capability in (one that maps the host's root): it may umount and
	 * remount what it likes, and as the host's uid 0 write /proc/sys.
	 */
	if (c->host_root && !c->ro_holds)
		return nsg_fail(EPERM,
				"the container's user namespace maps the host's root (uid 0) and owns "
				"its mounts: no read-only mount holds there, and as the host's uid 0 "
				"it may write /proc/sys (kernel.core_pattern runs a program as the "
				"host's root); map it to an unprivileged range of ids");
	err = table_read(theirs_path, &theirs);
	if (!err)
		err = table_read(ours_path, &ours);
	else
		ours = (struct table){ 0 };
	/*
	 * Until a pass detaches nothing (stacked ones come off top first).
	 * The table stays as read: theirs was copied with those mounts in it,
	 * and its copies of them are no mounts its runtime added.
	 */
	for (int pass = 0; !err && pass < 16; pass++) {
		bool changed = false;

		err = detach_propagated(&theirs, &ours, c, &changed);
		if (err || !changed)
			break;
	}
	if (!err)
		err = mark_added(&theirs, &ours);
	if (!err)
		err = protected_locate(&ours, c, &prot);
	if (!err)
		err = state_not_covered(&ours, c);
	if (err)
		goto out;
	/* The shallowest added mount point, if every added one is below it. */
	for (size_t i = 0; i < theirs.n; i++)
		if (theirs.m[i].added &&
		    (!rootfs || strlen(theirs.m[i].point) < strlen(rootfs)))
			rootfs = theirs.m[i].point;
	for (size_t i = 0; i < theirs.n && rootfs; i++)
		if (theirs.m[i].added && !at_or_below(theirs.m[i].point, rootfs))
			rootfs = NULL;
	/* None added (runc and crun bind the rootfs onto itself): what it sees is unknown. */
	if (!rootfs && !any_added(&theirs)) {
		err = nsg_fail(EPERM,
			       "the container's mount table holds no mount its runtime added for "
			       "it (not even the rootfs bind): nsguard cannot tell which mounts it "
			       "will see");
		goto out;
	}
	for (size_t i = 0; i < theirs.n; i++) {
		if (!theirs.m[i].added || (rootfs && strcmp(theirs.m[i].point, rootfs) != 0))
			continue;
		for (size_t k = 0; k < theirs.n; k++)
			if (at_or_below(theirs.m[k].point, theirs.m[i].point))
				theirs.m[k].judged = true;
	}
	for (size_t i = 0; i < theirs.n && !err; i++) {
		const struct mnt *m = &theirs.m[i];
		enum danger d;

		if (!m->judged)
			continue;
		/* A peer of ours: what is mounted beneath it is mounted in ours too. */
		if (m->shared)
			for (size_t k = 0; k < ours.n && !err; k++)
				if (ours.m[k].shared == m->shared)
					err = nsg_fail(EPERM,
						       "the container's mount at %.200s is a peer of "
						       "nsguard's mount at %.200s (shared:%lu): what "
						       "the runtime mounts beneath it lands in the host's "
						       "mount namespace too (rootfsPropagation or a "
						       "shared/rshared option in config.json); make it "
						       "slave or private",
						       m->point, ours.m[k].point, m->shared);
		if (err)
			break;
		d = danger(m, c, &prot);
		/* Its own proc: what the runtime will make of /proc/sys. */
		if (d == SAFE && strcmp(m->fstype, "proc") == 0) {
			err = proc_sys_check(&theirs, m, rootfs, c);
			continue;
		}
		if (d == SAFE || (!dangers[d].even_ro && !writable(m) && ro_enough(d, c)))
			continue;
		/* What the runtime is about to do anyway, done now: then it is read-only. */
		if (!dangers[d].even_ro && ro_enough(d, c) && c->make_ro &&
		    ro_requested(&theirs, m, rootfs, c->cfg, c->n_cfg)) {
			cleanup_free char *why = NULL, *refusal = NULL;

			err = c->make_ro(m->point, m->id, c->data);
			if (!err)
				continue;
			why = strdup(nsg_last_error());
			refuse(m, d, c);
			refusal = strdup(nsg_last_error());
			err = nsg_fail(EPERM, "%s (config.json asks for it read-only, but %s)",
				       refusal ? refusal : "", why ? why : "out of memory");
			continue;
		}
		err = refuse(m, d, c);
	}
out:
	protected_free(&prot);
	table_free(&theirs);
	table_free(&ours);
	return err;
}

struct live {
	const char *proc_root;
	pid_t pid;
};

/*
 * Make the top mount at point (as pid's mountinfo shows it) read-only, in
 * pid's mount namespace: opened from its root without following symlinks,
 * then mount_setattr there (it acts on mounts of the caller's namespace
 * only), then back to ours.
 */
static int make_ro_live(const char *point, unsigned long id, void *data)
{
	const struct live *l = data;
	struct mount_attr attr = { .attr_set = MOUNT_ATTR_RDONLY };
	struct open_how how = { .flags = O_PATH | O_CLOEXEC,
				.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
					   RESOLVE_IN_ROOT };
	cleanup_close int root = -1, fd = -1, theirs = -1, ours = -1, cwd = -1;
	cleanup_free char *rootp = NULL, *nsp = NULL;
	int err = 0;

	if (asprintf(&rootp, "%s/%d/root", l->proc_root, (int)l->pid) < 0)
		rootp = NULL;
	if (asprintf(&nsp, "%s/%d/ns/mnt", l->proc_root, (int)l->pid) < 0)
		nsp = NULL;
	if (!rootp || !nsp)
		return nsg_fail(ENOMEM, "out of memory");
	root = open(rootp, O_PATH | O_DIRECTORY | O_CLOEXEC);
	theirs = open(nsp, O_RDONLY | O_CLOEXEC);
	ours = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
	cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0 || theirs < 0 || ours < 0 || cwd < 0)
		return nsg_fail(errno, "cannot open the mount namespace of pid %d: %s", (int)l->pid,
				strerror(errno));
	fd = (int)syscall(SYS_openat2, root, point[1] ? point + 1 : ".", &how, sizeof(how));
	if (fd < 0)
		return nsg_fail(errno, "open %s in pid %d's mount namespace: %s", point,
				(int)l->pid, strerror(errno));
	/* The mount judged, in a namespace that is not ours (a reused pid). */
	{
		struct statx sx;
		struct stat a, b;

		if (statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &sx) < 0 ||
		    !(sx.stx_mask & STATX_MNT_ID) || sx.stx_mnt_id != id)
			return nsg_fail(ESTALE, "%s is no longer the mount judged", point);
		if (fstat(theirs, &a) < 0 || fstat(ours, &b) < 0 ||
		    (a.st_dev == b.st_dev && a.st_ino == b.st_ino))
			return nsg_fail(ESTALE, "pid %d is in nsguard's own mount namespace",
					(int)l->pid);
	}
	if (setns(theirs, CLONE_NEWNS) < 0)
		return nsg_fail(errno, "cannot join the mount namespace of pid %d: %s", (int)l->pid,
				strerror(errno));
	if (syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0)
		err = -errno;
	/* Back before anything else: every later path is this namespace's. */
	if (setns(ours, CLONE_NEWNS) < 0 || fchdir(cwd) < 0)
		return nsg_fail(errno, "cannot return to nsguard's own mount namespace: %s",
				strerror(errno));
	if (err)
		return nsg_fail(-err, "cannot make %s read-only: %s", point, strerror(-err));
	return 0;
}

/* Detach the top mount at point in ours, if it is mount id (detach_propagated). */
static int detach_live(const char *point, unsigned long id, void *data)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC,
				.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	cleanup_close int fd = -1;
	struct statx sx;
	char self[64];

	(void)data;
	fd = (int)syscall(SYS_openat2, AT_FDCWD, point, &how, sizeof(how));
	if (fd < 0)
		return nsg_fail(errno, "cannot open %s: %s", point, strerror(errno));
	if (statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &sx) < 0 || !(sx.stx_mask & STATX_MNT_ID) ||
	    sx.stx_mnt_id != id)
		return nsg_fail(ESTALE, "the mount at %s is not the top one there", point);
	/* The mount the descriptor holds, whatever the path names by now. */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	if (umount2(self, MNT_DETACH) < 0)
		return nsg_fail(errno, "cannot detach the mount at %s: %s", point, strerror(errno));
	return 0;
}

int mounts_check(const char *proc_root, pid_t pid, const struct mounts_ctx *base)
{
	cleanup_free char *theirs = NULL, *ours = NULL;
	struct live l = { proc_root, pid };
	struct mounts_ctx c = *base;

	c.make_ro = make_ro_live;
	c.detach = detach_live;
	c.data = &l;
	if (asprintf(&theirs, "%s/%d/mountinfo", proc_root, (int)pid) < 0)
		theirs = NULL;
	if (asprintf(&ours, "%s/self/mountinfo", proc_root) < 0)
		ours = NULL;
	if (!theirs || !ours)
		return nsg_fail(ENOMEM, "out of memory");
	return mounts_check_files(theirs, ours, &c);
}
