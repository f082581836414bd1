// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What a host-root container's mounts expose (mounts.h), from the kernel's
 * mount table.  config.json says what the runtime was asked to mount; the
 * kernel says what it did: an rbind's `ro` reaches its top mount only
 * (runc 1.1, crun 1.8), so only the per-mount flags tell.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "log.h"
#include "mounts.h"
#include "scope.h"
#include "util.h"

/* A node's mount table is a few hundred KiB at most; a bound all the same. */
#define MOUNTINFO_MAX (16 * 1024 * 1024)

/* One mountinfo line, split in place. */
struct mnt {
	unsigned long id, parent;
	const char *majmin, *root, *point, *opts, *fstype, *super;
	bool added; /* a mount the runtime made for the container */
	bool judged; /* reachable from the container */
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

/* "36 25 0:30 / /sys/fs/cgroup rw,nosuid shared:9 - cgroup2 cgroup2 rw,nsdelegate" */
static bool split_line(char *line, struct mnt *m)
{
	char *f[6], *save = NULL, *tok;
	int k = 0;

	for (tok = strtok_r(line, " ", &save); tok && k < 6; tok = strtok_r(NULL, " ", &save))
		f[k++] = tok;
	if (k < 6)
		return false;
	/* Optional fields up to the separator. */
	while (tok && strcmp(tok, "-") != 0)
		tok = strtok_r(NULL, " ", &save);
	if (!tok)
		return false;
	m->fstype = strtok_r(NULL, " ", &save);
	if (!m->fstype || !strtok_r(NULL, " ", &save)) /* the source */
		return false;
	m->super = strtok_r(NULL, " ", &save);
	if (!m->super)
		return false;
	m->id = strtoul(f[0], NULL, 10);
	m->parent = strtoul(f[1], NULL, 10);
	m->majmin = f[2];
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
	if (err)
		return nsg_fail(-err, "cannot read %s: %s", path, strerror(-err));
	for (size_t i = 0; i < len; i++)
		lines += t->buf[i] == '\n';
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

static bool first_opt_is(const char *opts, const char *want)
{
	size_t n = strlen(want);

	return strncmp(opts, want, n) == 0 && (opts[n] == ',' || opts[n] == '\0');
}

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

/* Whether another mount at m's point sits on m (m is covered, not the top). */
static bool covered(const struct table *t, const struct mnt *m)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->m[i].parent == m->id && strcmp(t->m[i].point, m->point) == 0)
			return true;
	return false;
}

/* s as mountinfo prints a path: space, tab, newline and backslash in octal. */
static char *mangle(const char *s)
{
	char *out = malloc(strlen(s) * 4 + 1), *o = out;

	if (!out)
		return NULL;
	for (; *s; s++) {
		if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\\')
			o += sprintf(o, "\\%03o", (unsigned char)*s);
		else
			*o++ = *s;
	}
	*o = '\0';
	return out;
}

/*
 * crun applies `ro` after the createRuntime hooks (its remounts come after
 * the sync that runs them): the top mount at rootfs + a destination whose
 * options end in "ro" is taken as the read-only mount it is about to be.
 * rootfs is the runtime's bind of the rootfs onto itself; unknown: none.
 */
static bool becomes_ro(const struct table *t, const struct mnt *m, const char *rootfs,
		       const struct oci_mount *cfg, size_t n_cfg)
{
	if (!rootfs || covered(t, m))
		return false;
	for (size_t i = 0; i < n_cfg; i++) {
		cleanup_free char *clean = NULL, *mangled = NULL, *want = NULL;

		if (!cfg[i].ro || !cfg[i].destination || cfg[i].destination[0] != '/')
			continue;
		clean = scope_clean_path(cfg[i].destination);
		mangled = clean ? mangle(clean) : NULL;
		if (!mangled)
			return false;
		if (asprintf(&want, "%s%s", strcmp(rootfs, "/") == 0 ? "" : rootfs,
			     strcmp(mangled, "/") == 0 && strcmp(rootfs, "/") != 0 ? "" : mangled) < 0) {
			want = NULL;
			return false;
		}
		if (strcmp(want, m->point) == 0)
			return true;
	}
	return false;
}

/* Where run_dir lives in ours: its file system's device and path in it. */
static int locate(const struct table *ours, const char *run_dir, const char **majmin,
		  char **in_fs)
{
	const struct mnt *best = NULL;

	for (size_t i = 0; i < ours->n; i++) {
		const struct mnt *m = &ours->m[i];

		if (!at_or_below(run_dir, m->point))
			continue;
		if (!best || strlen(m->point) > strlen(best->point) ||
		    (strcmp(m->point, best->point) == 0 && !covered(ours, m)))
			best = m;
	}
	*in_fs = NULL;
	*majmin = NULL;
	if (!best)
		return 0;
	{
		const char *rest = run_dir + (strcmp(best->point, "/") == 0 ? 0 : strlen(best->point));

		if (asprintf(in_fs, "%s%s", strcmp(best->root, "/") == 0 ? "" : best->root, rest) < 0) {
			*in_fs = NULL;
			return nsg_fail(ENOMEM, "out of memory");
		}
	}
	*majmin = best->majmin;
	return 0;
}

/* The refusal for m, or 0. */
static int judge(const struct mnt *m, const char *guarded, const char *run_majmin,
		 const char *run_in_fs, const char *run_dir)
{
	if (strcmp(m->fstype, "bpf") == 0)
		return nsg_fail(EPERM,
				"the container's mount at %.200s is a writable bpf file system, and "
				"it runs as the host's root: it could unpin nsguard's program and "
				"links; mount it read-only (each submount of an rbind too) or not at "
				"all",
				m->point);
	if (strcmp(m->fstype, "cgroup2") == 0 && !at_or_below(m->root, guarded))
		return nsg_fail(EPERM,
				"the container's mount at %.200s shows cgroup %.200s read-write, "
				"above or beside the guarded %.200s, and it runs as the host's root: "
				"its processes could move out of the cgroup nsguard guards; mount it "
				"read-only (each submount of an rbind too) or not at all",
				m->point, m->root, guarded);
	if (run_majmin && strcmp(m->majmin, run_majmin) == 0 &&
	    (at_or_below(m->root, run_in_fs) || at_or_below(run_in_fs, m->root)))
		return nsg_fail(EPERM,
				"the container's mount at %.200s shows %s read-write, and it runs "
				"as the host's root: it could rewrite nsguard's records and lock; "
				"mount it read-only or not at all",
				m->point, run_dir);
	return 0;
}

int mounts_check_files(const char *theirs_path, const char *ours_path, const char *guarded,
		       const struct oci_mount *cfg, size_t n_cfg, const char *run_dir)
{
	struct table theirs, ours;
	cleanup_free char *run_in_fs = NULL;
	const char *run_majmin = NULL, *rootfs = NULL;
	int err = table_read(theirs_path, &theirs);

	if (!err)
		err = table_read(ours_path, &ours);
	else
		ours = (struct table){ 0 };
	if (!err)
		err = mark_added(&theirs, &ours);
	if (!err)
		err = locate(&ours, run_dir, &run_majmin, &run_in_fs);
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
	for (size_t i = 0; i < theirs.n; i++) {
		if (!theirs.m[i].added)
			continue;
		for (size_t k = 0; k < theirs.n; k++)
			if (at_or_below(theirs.m[k].point, theirs.m[i].point))
				theirs.m[k].judged = true;
	}
	for (size_t i = 0; i < theirs.n && !err; i++) {
		const struct mnt *m = &theirs.m[i];

		if (!m->judged || !writable(m) || becomes_ro(&theirs, m, rootfs, cfg, n_cfg))
			continue;
		err = judge(m, guarded, run_majmin, run_in_fs, run_dir);
	}
out:
	table_free(&theirs);
	table_free(&ours);
	return err;
}

int mounts_check(const char *proc_root, pid_t pid, const char *guarded,
		 const struct oci_mount *cfg, size_t n_cfg, const char *run_dir)
{
	cleanup_free char *theirs = NULL, *ours = NULL;

	if (asprintf(&theirs, "%s/%d/mountinfo", proc_root, (int)pid) < 0)
		theirs = NULL;
	if (asprintf(&ours, "%s/self/mountinfo", proc_root) < 0)
		ours = NULL;
	if (!theirs || !ours)
		return nsg_fail(ENOMEM, "out of memory");
	return mounts_check_files(theirs, ours, guarded, cfg, n_cfg, run_dir);
}
