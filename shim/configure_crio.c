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
 * lost.  Like containerd's drop-in, it holds the list as it was: run
 * configure again after changing hooks_dir.  After writing, `crio config`
 * must show nsguard's directory, or the old drop-in is put back (a file
 * sorting after it, another --config-dir).
 */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
 * hooks_dir = [ "a", 'b', ... ] from `crio config`'s output: the first
 * uncommented assignment, on one line or more.  Only strings without
 * escapes are taken (crio config writes paths so): anything else is
 * refused, so nsguard never writes back a list it read otherwise than CRI-O.
 */
static int parse_hooks_dir(const char *text, struct dirs *d)
{
	const char *p = text, *line;

	for (line = text; line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		p = line + strspn(line, " \t");
		if (strncmp(p, "hooks_dir", 9) == 0 && p[9 + strspn(p + 9, " \t")] == '=')
			break;
	}
	if (!line)
		return nsg_fail(ENOENT, "crio config: no hooks_dir in its output");
	p = strchr(p, '=') + 1;
	p += strspn(p, " \t");
	if (*p++ != '[')
		return nsg_fail(EINVAL, "crio config: hooks_dir is not a list");
	for (;;) {
		const char *end;
		char q;

		p += strspn(p, " \t\r\n,");
		if (*p == ']')
			return 0;
		q = *p;
		if (q != '"' && q != '\'')
			return nsg_fail(EINVAL, "crio config: hooks_dir holds something other than a "
						"plain string: refused");
		end = strchr(p + 1, q);
		if (!end || memchr(p + 1, '\\', end - p - 1) || memchr(p + 1, '\n', end - p - 1))
			return nsg_fail(EINVAL, "crio config: a hooks_dir entry with an escape or "
						"unterminated: refused");
		if (d->n == CRIO_MAX_DIRS)
			return nsg_fail(E2BIG, "crio config: over %d hooks_dir entries",
					CRIO_MAX_DIRS);
		d->v[d->n] = strndup(p + 1, end - p - 1);
		if (!d->v[d->n++])
			return nsg_fail(ENOMEM, "out of memory");
		p = end + 1;
	}
}

/* hooks_dir as CRI-O reads it now. */
static int effective(const struct conf *c, struct dirs *d)
{
	char *const argv[] = { (char *)c->crio, (char *)"config", NULL };
	cleanup_free char *out = NULL;
	int err = conf_spawn(argv, &out);

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
	size_t len, changed = 0;
	bool existed;
	int err;

	confdir = strdup(c->file);
	if (!confdir || asprintf(&hooks, "%s/nsguard-hooks.d", dirname(dirname(confdir))) < 0)
		return nsg_fail(ENOMEM, "out of memory");
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
	err = effective(c, &d);
	if (err)
		goto out;
	want = dropin_text(&d, hooks);
	if (!want) {
		err = nsg_fail(ENOMEM, "out of memory");
		goto out;
	}
	err = conf_hooks_files(c, hooks, true, &changed);
	if (err || strcmp(text, want) == 0) {
		if (!err && !c->dry_run)
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
	err = effective(c, &after);
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
