// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nsguard configure|unconfigure cri-o (configure.h).
 *
 * CRI-O runs OCI hooks from the directories of hooks_dir ([crio.runtime]).
 * nsguard's two hooks.d files go in a directory of their own, beside the
 * drop-in directory (/etc/crio/nsguard-hooks.d): podman reads
 * /etc/containers/oci/hooks.d, and sharing it would run nsguard twice there
 * or let one runtime's unconfigure take the other's files.  A drop-in,
 * 99-nsguard.conf in crio.conf.d (--file), adds that directory to
 * hooks_dir.  A later file replaces a list whole (crio.conf.d(5): files in
 * lexical order, the last one wins), so the drop-in lists every directory
 * `crio config` shows now, and nsguard's after them: none the node had is
 * lost.  The list is read from a copy of the drop-in directory without
 * nsguard's drop-in (crio --config-dir), so a run after the admin changed
 * hooks_dir carries the change, and the live directory is never touched.
 * After writing, `crio config` must show nsguard's directory, or the old
 * drop-in is put back (a file sorting after it, another --config-dir).  What crio.service's own
 * flags (--hooks-dir, CONTAINER_HOOKS_DIR) override, only the running
 * daemon shows: `crio status config` after the restart (nsguard(8)).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "configure.h"
#include "fileio.h"
#include "log.h"
#include "util.h"

#define CRIO_MARK "# written by nsguard configure cri-o"
#define CRIO_MAX_DIRS 64

struct dirs {
	char *v[CRIO_MAX_DIRS];
	size_t n;
};

static void dirs_free(struct dirs *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->v[i]);
	d->n = 0;
}

/*
 * A directory nsguard writes back into TOML: absolute, and nothing that
 * would need an escape there ('"', '\\', control bytes).
 */
static bool plain_dir(const char *s)
{
	if (s[0] != '/')
		return false;
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f || *s == '"' || *s == '\\')
			return false;
	return true;
}

/* The line after line, or NULL after the last. */
static const char *next_line(const char *line)
{
	const char *nl = strchr(line, '\n');

	return nl ? nl + 1 : NULL;
}

/*
 * hooks_dir = [ "a", ... ] from `crio config`'s output, on one line or more.
 * Since CRI-O 1.21 a setting left at its default is printed commented out,
 * every line of it behind "# " (pkg/config/template.go): that block is read
 * when there is no uncommented one.  Only double-quoted plain directories
 * are taken (crio config writes %q): anything else is refused, so nsguard
 * never writes back a list it read otherwise than CRI-O.
 */
static int parse_hooks_dir(const char *text, struct dirs *d)
{
	cleanup_free char *block = NULL;
	const char *line, *found = NULL, *p;
	size_t n = 0;
	bool commented = false;

	for (int pass = 0; pass < 2 && !found; pass++) {
		for (line = text; line && !found; line = next_line(line)) {
			p = line + strspn(line, " \t");
			if (pass == 1) {
				if (strncmp(line, "# ", 2) != 0)
					continue;
				p = line + 2;
			}
			if (strncmp(p, "hooks_dir", 9) == 0 && p[9 + strspn(p + 9, " \t")] == '=')
				found = line;
		}
		commented = pass == 1;
	}
	if (!found)
		return nsg_fail(ENOENT, "crio config: no hooks_dir in its output");
	/* The block, each line without its "# " when commented, up to its ']'. */
	block = malloc(strlen(found) + 2); /* a newline may be added to the last line */
	if (!block)
		return nsg_fail(ENOMEM, "out of memory");
	for (line = found; line; line = next_line(line)) {
		const char *eol = strchrnul(line, '\n'), *from = line;

		if (commented) {
			if (strncmp(line, "# ", 2) != 0)
				return nsg_fail(EINVAL, "crio config: the commented hooks_dir ends early");
			from = line + 2;
		}
		memcpy(block + n, from, eol - from);
		n += eol - from;
		block[n++] = '\n';
		if (memchr(from, ']', eol - from) || !*eol)
			break;
	}
	block[n] = '\0';
	p = strchr(block, '=') + 1;
	p += strspn(p, " \t");
	if (*p++ != '[')
		return nsg_fail(EINVAL, "crio config: hooks_dir is not a list");
	for (;;) {
		const char *end;

		p += strspn(p, " \t\r\n,");
		if (*p == ']')
			return 0;
		end = *p == '"' ? strchr(p + 1, '"') : NULL;
		if (!end)
			return nsg_fail(EINVAL, "crio config: hooks_dir holds something other than a "
						"double-quoted string: refused");
		if (d->n == CRIO_MAX_DIRS)
			return nsg_fail(E2BIG, "crio config: over %d hooks_dir entries",
					CRIO_MAX_DIRS);
		d->v[d->n] = strndup(p + 1, end - p - 1);
		if (!d->v[d->n++])
			return nsg_fail(ENOMEM, "out of memory");
		if (!plain_dir(d->v[d->n - 1]))
			return nsg_fail(EINVAL, "crio config: a hooks_dir entry with an escape, a "
						"control character or a relative path: refused");
		p = end + 1;
	}
}

/* Remove dir and the files in it (no subdirectories: copy_dir makes none). */
static void remove_copy(const char *dir)
{
	cleanup_closedir DIR *d = opendir(dir);
	struct dirent *e;

	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, ".."))
			unlinkat(dirfd(d), e->d_name, 0);
	rmdir(dir);
}

/* A copy of every file of from but skip (its name) in to, a fresh directory. */
static int copy_dir(const char *from, const char *skip, const char *to)
{
	cleanup_closedir DIR *d = opendir(from);
	struct dirent *e;

	if (!d)
		return errno == ENOENT ? 0 : nsg_fail(errno, "%s: %s", from, strerror(errno));
	while ((e = readdir(d))) {
		cleanup_close int fd = -1;
		cleanup_free char *text = NULL, *path = NULL;
		struct stat st;
		size_t len;
		int err;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || !strcmp(e->d_name, skip))
			continue;
		/* The admin's files, links to files included, as crio reads them. */
		fd = openat(dirfd(d), e->d_name, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0 || fstat(fd, &st) < 0)
			return nsg_fail(errno, "%s/%s: %s", from, e->d_name, strerror(errno));
		if (!S_ISREG(st.st_mode))
			continue;
		err = read_capped(fd, CONF_MAX, &text, &len);
		if (err)
			return nsg_fail(-err, "%s/%s: %s", from, e->d_name, strerror(-err));
		if (asprintf(&path, "%s/%s", to, e->d_name) < 0)
			return nsg_fail(ENOMEM, "out of memory");
		err = conf_write_text(path, text, 0600);
		if (err)
			return err;
	}
	return 0;
}

/*
 * hooks_dir as CRI-O reads it without nsguard's drop-in: read with it, the
 * list would be nsguard's own of last time, and an admin's later change
 * would never be carried.  crio config reads a copy of the drop-in
 * directory without it (--config-dir): the live directory is never
 * touched, so no moment, and no run cut short, leaves CRI-O without it.
 */
static int effective(const struct conf *c, bool without, struct dirs *d)
{
	char tmp[] = "/tmp/nsguard-crio.XXXXXX";
	char *argv[] = { (char *)c->crio, (char *)"config", NULL, NULL, NULL };
	cleanup_free char *out = NULL, *confdir = strdup(c->file), *name = strdup(c->file);
	int err = 0;

	if (!confdir || !name)
		return nsg_fail(ENOMEM, "out of memory");
	if (without) {
		if (!mkdtemp(tmp))
			return nsg_fail(errno, "%s: %s", tmp, strerror(errno));
		err = copy_dir(dirname(confdir), basename(name), tmp);
		argv[1] = (char *)"--config-dir";
		argv[2] = tmp;
		argv[3] = (char *)"config";
	}
	if (!err)
		err = conf_spawn(argv, &out);
	if (without)
		remove_copy(tmp);
	return err ?: parse_hooks_dir(out, d);
}

static bool listed(const struct dirs *d, const char *dir)
{
	for (size_t i = 0; i < d->n; i++)
		if (strcmp(d->v[i], dir) == 0)
			return true;
	return false;
}

/* The drop-in: every directory of d, then dir if it is not among them. */
static char *dropin_text(const struct dirs *d, const char *dir)
{
	char *t = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&t, &len);

	if (!f)
		return NULL;
	fprintf(f, "%s: CRI-O's hooks_dir as `crio config` showed it, plus nsguard's hooks.\n"
		   "# It replaces the list of every file before it: run nsguard configure cri-o\n"
		   "# again after changing hooks_dir; nsguard unconfigure cri-o removes it.\n"
		   "[crio.runtime]\nhooks_dir = [\n",
		CRIO_MARK);
	for (size_t i = 0; i < d->n; i++)
		fprintf(f, "  \"%s\",\n", d->v[i]);
	if (!listed(d, dir))
		fprintf(f, "  \"%s\",\n", dir);
	fprintf(f, "]\n");
	if (fclose(f) != 0) {
		free(t);
		return NULL;
	}
	return t;
}

int conf_crio(const struct conf *c, bool add)
{
	cleanup_free char *text = NULL, *want = NULL, *hooks = NULL, *confdir = NULL;
	struct dirs d = { 0 }, after = { 0 };
	const char *etc;
	size_t len, changed = 0;
	bool existed;
	int err;

	confdir = strdup(c->file);
	if (!confdir)
		return nsg_fail(ENOMEM, "out of memory");
	/* /etc/crio: where the hooks' directory goes. */
	etc = dirname(dirname(confdir));
	if (asprintf(&hooks, "%s/nsguard-hooks.d", etc) < 0)
		return nsg_fail(ENOMEM, "out of memory");
	if (!plain_dir(hooks))
		return nsg_fail(EINVAL, "%s: a path that would need an escape in TOML", hooks);
	err = conf_read_file(c->file, &text, &len, &existed);
	if (err)
		return err;
	if (existed && strncmp(text, CRIO_MARK, strlen(CRIO_MARK)) != 0)
		return nsg_fail(EEXIST, "%s is not nsguard's drop-in: left alone", c->file);
	if (!add) {
		err = conf_hooks_files(c, hooks, false, &changed);
		if (err)
			return err;
		if (existed) {
			changed++;
			if (c->dry_run)
				err = conf_show_diff(c->file, text, "");
			else if (unlink(c->file) < 0)
				err = nsg_fail(errno, "%s: %s", c->file, strerror(errno));
		}
		if (!err && !c->dry_run)
			printf("%s: %s\n", c->file,
			       changed ? "cri-o unconfigured; restart crio" : "nothing to unconfigure");
		return err;
	}
	err = effective(c, true, &d);
	if (err)
		goto out;
	want = dropin_text(&d, hooks);
	if (!want) {
		err = nsg_fail(ENOMEM, "out of memory");
		goto out;
	}
	err = conf_hooks_files(c, hooks, true, &changed);
	if (err || strcmp(text, want) == 0) {
		if (!err && (!c->dry_run || !changed))
			printf("%s: %s\n", c->file,
			       changed ? "cri-o configured (the hooks); restart crio" :
					 "already configured");
		goto out;
	}
	if (c->dry_run) {
		err = conf_show_diff(c->file, text, want);
		goto out;
	}
	err = conf_write_text(c->file, want, 0644);
	if (err)
		goto out;
	/* Written: does CRI-O now read nsguard's directory?  Else as it was. */
	err = effective(c, false, &after);
	if (!err && !listed(&after, hooks))
		err = nsg_fail(ENOENT,
			       "crio config does not list %s in hooks_dir with %s in place (a file "
			       "sorting after it, or crio reads another directory): left as it was",
			       hooks, c->file);
	if (err) {
		if (existed) {
			conf_write_text(c->file, text, 0644);
		} else {
			unlink(c->file);
			if (changed) /* the hooks this run wrote, for a drop-in never read */
				conf_hooks_files(c, hooks, false, &changed);
		}
		goto out;
	}
	printf("%s: cri-o configured (hooks_dir adds %s); restart crio.  It holds hooks_dir "
	       "as it is now: run this again after every change to it\n",
	       c->file, hooks);
out:
	dirs_free(&d);
	dirs_free(&after);
	return err;
}
