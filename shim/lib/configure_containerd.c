// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nsguard configure|unconfigure containerd (configure.h): config.toml
 * edited in place, as nvidia-ctk does, with the smallest change there is.
 *
 * containerd 1.6/1.7 merge an imported file plugin by plugin: an import's
 * [plugins."io.containerd.grpc.v1.cri"] replaces config.toml's whole CRI
 * section (services/server/config/config.go, mergeConfig).  A drop-in of
 * the handlers alone would drop the node's runc handler and registries; a
 * drop-in holding a copy of the section goes stale (a credential rotated or
 * a CRI key changed later in config.toml is overridden by the copy) and
 * copies the registry secrets into a second file.  So nsguard's handler
 * tables (examples/containerd/nsguard-runtimes.toml.in, built in; --extra
 * adds more) are appended to config.toml itself between two marker lines:
 * TOML lets a table be defined anywhere, so nothing else in the file
 * changes, containerd reads every later edit of the admin's, and
 * unconfigure takes out exactly the bytes configure put in (no backup: it
 * would be a second copy of the secrets).
 *
 * The checks: `containerd config dump` (containerd's own reading) must say
 * config version 2; no file config.toml imports may hold a CRI section (it
 * would replace the one the handlers are in), except the drop-in of an
 * earlier nsguard (conf.d/nsguard.toml, nsguard-cri-dropin's), which is
 * removed; after writing, the dump must show each handler's BinaryName, or
 * config.toml is put back.  --dry-run reads config.toml, its imports and
 * the dump, prints the lines that would change (diff -U0: nsguard's own,
 * never the file's other lines), and writes nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "configure.h"
#include "log.h"
#include "util.h"

/* nsguard-runtimes.toml.in, its tables (the build makes this header). */
static const char handlers_in[] =
#include "containerd-handlers.h"
	;

#define CRI "plugins.\"io.containerd.grpc.v1.cri\""
#define MARK "# >>> nsguard configure containerd: nsguard's CRI handlers ("
#define BEGIN MARK "nsguard unconfigure containerd takes this block out)\n"
/* The file did not end in a newline: one was added before the block. */
#define BEGIN_NL MARK "nsguard unconfigure containerd takes this block out, and a newline before it)\n"
#define END "# <<< nsguard configure containerd\n"
#define OLD_DROPIN_MARK "# containerd CRI drop-in written by nsguard-cri-dropin"

/* The built-in handlers, one per tier (nsguard-runtimes.toml.in's). */
static const char *const tiers[] = { "nsguard", "nsguard-audit", "nsguard-allow" };

/* Whether text[from, to) has a table header line (indented or not) header. */
static bool has_header(const char *text, size_t from, size_t to, const char *header)
{
	for (size_t i = from; i < to; i = i + strcspn(text + i, "\n") + 1) {
		size_t j = i + strspn(text + i, " \t");

		if (j + strlen(header) <= to && strncmp(text + j, header, strlen(header)) == 0)
			return true;
		if (!text[i + strcspn(text + i, "\n")])
			break;
	}
	return false;
}

/* A line of text starting with prefix, at a line's start; NULL if none. */
static const char *find_line(const char *text, const char *prefix)
{
	for (const char *p = text; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, prefix, strlen(prefix)) == 0)
			return p;
	return NULL;
}

/*
 * The block in text: [*start, *end), the blank line and the newline
 * configure added before it included.  0 with *start == *end == len when
 * there is none; -EINVAL (said) when its markers are not one pair.
 */
static int find_block(const struct conf *c, const char *text, size_t *start, size_t *end)
{
	const char *b = find_line(text, MARK), *e;
	size_t s, before;

	*start = *end = strlen(text);
	if (!b)
		return find_line(text, END) ?
			       nsg_fail(EINVAL, "%s: nsguard's end line without its begin line (edited "
						"by hand?): unchanged", c->file) :
			       0;
	e = find_line(b, END);
	if (!e || find_line(b + 1, MARK) || find_line(e + 1, END))
		return nsg_fail(EINVAL, "%s: nsguard's block is not one begin line and one end line "
					"(edited by hand?): unchanged", c->file);
	s = b - text;
	before = strncmp(b, BEGIN_NL, strlen(BEGIN_NL)) == 0 ? 2 : 1;
	/* The blank line (and the newline) configure put before it, if still there. */
	if (s >= before && strspn(text + s - before, "\n") >= before)
		s -= before;
	*start = s;
	*end = e - text + strlen(END);
	return 0;
}

/* The value of key in the table header's section of a dump ("" if none). */
static void dump_value(const char *dump, const char *header, const char *key, char *buf, size_t len)
{
	bool on = false;

	buf[0] = '\0';
	for (const char *p = dump; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		const char *q = p + strspn(p, " \t");
		size_t n = strcspn(q, "\n");

		if (*q == '[') {
			on = n == strlen(header) && strncmp(q, header, n) == 0;
			continue;
		}
		if (on && strncmp(q, key, strlen(key)) == 0 && strncmp(q + strlen(key), " = ", 3) == 0) {
			q += strlen(key) + 3;
			n = strcspn(q, "\n");
			snprintf(buf, len, "%.*s", (int)n, q);
			return;
		}
	}
}

/* `containerd --config file config dump`: containerd's own reading. */
static int dump_of(const struct conf *c, const char *file, char **dump)
{
	char *const argv[] = { (char *)c->containerd, (char *)"--config", (char *)file,
			       (char *)"config", (char *)"dump", NULL };

	return conf_spawn(argv, dump);
}

/*
 * The block: the built-in handlers with --bindir's links and the node's
 * runc SystemdCgroup, then --extra's tables; *out malloc'd.
 */
static int make_block(const struct conf *c, const char *dump, bool newline, char **out)
{
	cleanup_free char *body = NULL;
	char systemd[16];
	size_t blen = 0;
	FILE *f = open_memstream(&body, &blen);
	int err = 0;

	if (!f)
		return nsg_fail(ENOMEM, "out of memory");
	dump_value(dump, "[" CRI ".containerd.runtimes.runc.options]", "SystemdCgroup", systemd,
		   sizeof(systemd));
	if (!systemd[0])
		strcpy(systemd, "false");
	if (strcmp(systemd, "true") != 0 && strcmp(systemd, "false") != 0)
		err = nsg_fail(EINVAL, "%s: runc's SystemdCgroup is '%s'; unchanged", c->file, systemd);
	for (const char *p = handlers_in; !err && *p;) {
		size_t n = strcspn(p, "\n");
		const char *at = memmem(p, n, "@BINDIR@", 8), *q = p + strspn(p, " ");

		if (at)
			fprintf(f, "%.*s%s%.*s\n", (int)(at - p), p, c->bindir, (int)(n - (at - p) - 8),
				at + 8);
		else if (strncmp(q, "SystemdCgroup = ", 16) == 0)
			fprintf(f, "%.*sSystemdCgroup = %s\n", (int)(q - p), p, systemd);
		else
			fprintf(f, "%.*s\n", (int)n, p);
		p += n + (p[n] == '\n');
	}
	for (size_t i = 0; !err && i < c->n_extra; i++) {
		cleanup_free char *text = NULL;
		bool existed;
		size_t len;

		err = conf_read_file(c->extra[i], &text, &len, &existed);
		if (!err && !existed)
			err = nsg_fail(ENOENT, "--extra %s: %s", c->extra[i], strerror(ENOENT));
		for (const char *p = text; !err && *p;) {
			size_t n = strcspn(p, "\n");

			/* Its own version line: config.toml has one. */
			if (strncmp(p, "version", 7) != 0 || !strchr(" =", p[7]))
				fprintf(f, "%.*s\n", (int)n, p);
			p += n + (p[n] == '\n');
		}
	}
	if (fclose(f) != 0 && !err)
		err = nsg_fail(ENOMEM, "out of memory");
	if (err)
		return err;
	return asprintf(out, "%s\n%s%s%s", newline ? "\n" : "", newline ? BEGIN_NL : BEGIN, body, END) < 0 ?
		       nsg_fail(ENOMEM, "out of memory") :
		       0;
}

/*
 * The files the dump says config.toml imports (other than itself): each
 * must hold no CRI section, or it would replace the one nsguard's handlers
 * are in.  An earlier nsguard's drop-in is the exception: *old names it
 * (malloc'd), to be removed.
 */
static int check_imports(const struct conf *c, const char *dump, char **old)
{
	const char *p = find_line(dump, "imports = [");
	cleanup_free char *base = NULL, *dir = NULL;
	int err = conf_split(c->file, &dir, &base);

	*old = NULL;
	if (err || !p)
		return err;
	for (p += strlen("imports = ["); *p && *p != ']';) {
		cleanup_free char *path = NULL, *text = NULL;
		const char *q;
		bool existed;
		size_t len;

		p += strspn(p, " ,\n");
		if (*p != '"')
			break;
		q = strchr(p + 1, '"');
		if (!q)
			break;
		path = strndup(p + 1, q - p - 1);
		p = q + 1;
		if (!path)
			return nsg_fail(ENOMEM, "out of memory");
		if (strcmp(path, base) == 0 || strcmp(path, c->file) == 0)
			continue;
		err = conf_read_file(path, &text, &len, &existed);
		if (err)
			return nsg_fail_context(err, "%s imports it: nsguard cannot check that it leaves "
						     "the CRI section alone", c->file);
		if (!strstr(text, "io.containerd.grpc.v1.cri"))
			continue;
		if (strncmp(text, OLD_DROPIN_MARK, strlen(OLD_DROPIN_MARK)) == 0 && !*old) {
			*old = strdup(path);
			if (!*old)
				return nsg_fail(ENOMEM, "out of memory");
			continue;
		}
		return nsg_fail(EEXIST,
				"%s, which %s imports, has a CRI plugin section: containerd 1.6/1.7 "
				"would read it instead of config.toml's, without nsguard's handlers; "
				"unchanged (move its settings into %s)",
				path, c->file, c->file);
	}
	return 0;
}

/* The dump shows each built-in handler with its binary: containerd reads them. */
static bool handlers_read(const struct conf *c, const char *dump)
{
	for (size_t i = 0; i < ARRAY_SIZE(tiers); i++) {
		char header[256], want[4096], got[4096];

		snprintf(header, sizeof(header), "[" CRI ".containerd.runtimes.%s.options]", tiers[i]);
		snprintf(want, sizeof(want), "\"%s/nsguard-runtime%s\"", c->bindir,
			 tiers[i] + strlen("nsguard"));
		dump_value(dump, header, "BinaryName", got, sizeof(got));
		if (strcmp(got, want) != 0)
			return false;
	}
	return true;
}

/* A directory TOML takes between double quotes as it is. */
static bool plain(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f || *s == '"' || *s == '\\')
			return false;
	return true;
}

int conf_containerd(const struct conf *c, bool add)
{
	cleanup_free char *text = NULL, *dump = NULL, *block = NULL, *out = NULL, *old = NULL,
			  *tmp = NULL, *check = NULL;
	struct stat st = { .st_mode = 0600 };
	size_t len, start, end;
	bool existed;
	int err;

	if (!plain(c->bindir))
		return nsg_fail(EINVAL, "--bindir %s: a quote, backslash or control byte in it", c->bindir);
	err = conf_read_file(c->file, &text, &len, &existed);
	if (!err && !existed)
		err = nsg_fail(ENOENT, "%s: %s (containerd config default > %s)", c->file,
			       strerror(ENOENT), c->file);
	err = err ?: find_block(c, text, &start, &end) ?: dump_of(c, c->file, &dump);
	if (err)
		return err;
	if (!find_line(dump, "version = 2"))
		return nsg_fail(EINVAL,
				"%s is not config version 2 (containerd 1.6/1.7); containerd 2.x merges "
				"imports table by table: use nsguard-runtimes-v3.toml as a drop-in there",
				c->file);
	err = check_imports(c, dump, &old);
	if (err)
		return err;
	for (size_t i = 0; add && i < ARRAY_SIZE(tiers); i++) {
		char header[256];

		snprintf(header, sizeof(header), "[" CRI ".containerd.runtimes.%s]", tiers[i]);
		if (has_header(text, 0, start, header) || has_header(text, end, len, header))
			return nsg_fail(EEXIST, "%s: the handler %s is there already, outside nsguard's "
						"block: left alone (remove it to let configure write it); "
						"unchanged", c->file, tiers[i]);
	}
	if (add) {
		for (size_t i = 0; i < c->n_extra && !c->dry_run; i++) {
			err = conf_trusted(c->extra[i]);
			if (err)
				return err;
		}
		err = make_block(c, dump,
				 start == len ? len > 0 && text[len - 1] != '\n' :
						strstr(text + start, BEGIN_NL) != NULL,
				 &block);
		if (err)
			return err;
	}
	if (asprintf(&out, "%.*s%s%s", (int)start, text, block ?: "", text + end) < 0)
		return nsg_fail(ENOMEM, "out of memory");
	if (strcmp(out, text) == 0 && !old) {
		printf("%s: %s\n", c->file, add ? "already configured for containerd" :
						   "nothing of nsguard's in it");
		return 0;
	}
	if (c->dry_run) {
		if (old)
			printf("%s: an earlier nsguard's drop-in (a copy of the CRI section), would be "
			       "removed\n", old);
		if (strcmp(out, text) == 0)
			return 0;
		/* The blocks alone: the file's own last line may be a secret. */
		{
			cleanup_free char *was = strndup(text + start, end - start);

			printf("%s: nsguard's block, %s:\n", c->file,
			       start == end ? "to be appended" : "as it would change");
			return was ? conf_show_diff(c->file, was, block ?: "") :
				     nsg_fail(ENOMEM, "out of memory");
		}
	}
	if (add) {
		/* What the runtime is told to run, checked as for docker. */
		for (size_t i = 0; i < ARRAY_SIZE(tiers); i++) {
			char link[4096];

			snprintf(link, sizeof(link), "%s/nsguard-runtime%s", c->bindir,
				 tiers[i] + strlen("nsguard"));
			err = conf_link_ready(link);
			if (err)
				return err;
		}
		/* containerd must read the new file: checked before it replaces the old. */
		if (asprintf(&tmp, "%s.nsguard-new", c->file) < 0)
			return nsg_fail(ENOMEM, "out of memory");
		err = conf_write_text(tmp, out, 0600) ?: dump_of(c, tmp, &check);
		unlink(tmp);
		if (err)
			return nsg_fail_context(err, "containerd cannot read %s with nsguard's handlers; "
						     "unchanged", c->file);
	}
	stat(c->file, &st);
	err = conf_write_text(c->file, out, st.st_mode & 07777);
	if (err)
		return err;
	if (old && unlink(old) < 0 && errno != ENOENT)
		return nsg_fail(errno, "%s: %s (an earlier nsguard's drop-in: remove it)", old,
				strerror(errno));
	if (old)
		printf("%s: removed (an earlier nsguard's drop-in, a copy of the CRI section)\n", old);
	if (add) {
		free(dump);
		dump = NULL;
		err = dump_of(c, c->file, &dump);
		if (err || !handlers_read(c, dump)) {
			nsg_clear_error();
			conf_write_text(c->file, text, st.st_mode & 07777);
			return nsg_fail(EIO, "%s: containerd config dump does not show nsguard's "
					     "handlers with it; put back as it was", c->file);
		}
	}
	printf("%s: %s; restart containerd\n", c->file,
	       add ? "nsguard's CRI handlers added (nsguard, nsguard-audit, nsguard-allow)" :
		     "nsguard's CRI handlers taken out, the rest as it was");
	return 0;
}
