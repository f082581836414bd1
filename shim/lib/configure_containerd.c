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
 * containerd 2.x (config version 3; cmd/containerd/server/config/config.go
 * of 2.1) merges an import into config.toml with mergo.Merge and override:
 * plugin tables key by key, so an import's CRI tables no longer replace
 * config.toml's, and a version 2 file is read and migrated to 2.x's plugin
 * ids (io.containerd.cri.v1.runtime).  The same block in place serves it
 * too, in the file's own layout (nsguard-runtimes-v3.toml.in's tables in a
 * version 3 file, the version 2 tables in a version 2 one): 2.x's `config
 * default` has `imports = []`, so a drop-in would need config.toml edited
 * as well, and in place nothing else of the file changes either way.
 *
 * The checks: config.toml's own top-level version line says which layout
 * it is (2, or 3 under 2.x only); `containerd config dump` (containerd's
 * own reading, in its own version's layout: 1.x's with double quotes, 2.x's
 * version 3 with single quotes) says which containerd reads it; --extra
 * files must be of config.toml's version.  Under 1.x no file config.toml
 * imports may hold a CRI section (it would replace the one the handlers
 * are in); under 2.x none may define a handler of nsguard's name (it would
 * be merged over the block's).  The drop-in of an earlier nsguard
 * (conf.d/nsguard.toml, nsguard-cri-dropin's) is removed.  After writing,
 * the dump must show each handler's BinaryName, or config.toml is put
 * back.  --dry-run reads config.toml, its imports and the dump, prints the
 * lines that would change (diff -U0: nsguard's own, never the file's other
 * lines), and writes nothing.
 */
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "configure.h"
#include "log.h"
#include "util.h"

/* nsguard-runtimes.toml.in and -v3's, their tables (the build makes these headers). */
static const char handlers_v2[] =
#include "containerd-handlers.h"
	;
static const char handlers_v3[] =
#include "containerd-handlers-v3.h"
	;

/*
 * The layouts, by config version (2, 3): the built-in tables, the CRI
 * runtime plugin's key as a file spells it (either quote) and as that
 * version's `config dump` prints it, with its strings' quote.
 */
static const struct layout {
	int version;
	const char *handlers;
	const char *file_cri[2];
	const char *dump_cri;
	char quote;
} layouts[] = {
	{ 2, handlers_v2,
	  { "plugins.\"io.containerd.grpc.v1.cri\"", "plugins.'io.containerd.grpc.v1.cri'" },
	  "plugins.\"io.containerd.grpc.v1.cri\"", '"' },
	{ 3, handlers_v3,
	  { "plugins.\"io.containerd.cri.v1.runtime\"", "plugins.'io.containerd.cri.v1.runtime'" },
	  "plugins.'io.containerd.cri.v1.runtime'", '\'' },
};

static const struct layout *layout_of(int version)
{
	for (size_t i = 0; i < ARRAY_SIZE(layouts); i++)
		if (layouts[i].version == version)
			return &layouts[i];
	return NULL;
}
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
 * The config version a file says it is: its top-level `version = N` (the
 * lines before its first table), 0 when it has none (containerd reads
 * that as version 1), -1 when there are two.
 */
static int file_version(const char *text)
{
	int version = 0;

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		const char *q = p + strspn(p, " \t");
		char *end;
		long n;

		if (*q == '[')
			break;
		if (strncmp(q, "version", 7) != 0 || !strchr(" \t=", q[7]))
			continue;
		q += 7 + strspn(q + 7, " \t");
		if (*q++ != '=')
			continue;
		q += strspn(q, " \t");
		n = strtol(q, &end, 10);
		if (end == q || n < 1 || n > 99 || (*end && !strchr(" \t#\r\n", *end)))
			return -1;
		if (version)
			return -1;
		version = (int)n;
	}
	return version;
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
 * The block: the built-in handlers of the file's layout (lf) with
 * --bindir's links and the node's runc SystemdCgroup (read in the dump's
 * layout, ld), then --extra's tables (of the file's version); *out malloc'd.
 */
static int make_block(const struct conf *c, const struct layout *lf, const struct layout *ld,
		      const char *dump, bool newline, char **out)
{
	cleanup_free char *body = NULL;
	char systemd[16], header[256];
	size_t blen = 0;
	FILE *f = open_memstream(&body, &blen);
	int err = 0;

	if (!f)
		return nsg_fail(ENOMEM, "out of memory");
	snprintf(header, sizeof(header), "[%s.containerd.runtimes.runc.options]", ld->dump_cri);
	dump_value(dump, header, "SystemdCgroup", systemd, sizeof(systemd));
	if (!systemd[0])
		strcpy(systemd, "false");
	if (strcmp(systemd, "true") != 0 && strcmp(systemd, "false") != 0)
		err = nsg_fail(EINVAL, "%s: runc's SystemdCgroup is '%s'; unchanged", c->file, systemd);
	for (const char *p = lf->handlers; !err && *p;) {
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
		/* Another version's tables would not be read as that version's. */
		if (!err && file_version(text) != lf->version)
			err = nsg_fail(EINVAL, "--extra %s: not config version %d, as %s is; unchanged",
				       c->extra[i], lf->version, c->file);
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

/* Whether text defines a table of one of nsguard's handlers (either quote, or none). */
static bool defines_tier(const char *text)
{
	static const char *const forms[][2] = { { "", "]" }, { "", "." }, { "\"", "\"" }, { "'", "'" } };

	for (size_t i = 0; i < ARRAY_SIZE(tiers); i++)
		for (size_t j = 0; j < ARRAY_SIZE(forms); j++) {
			char want[64];

			snprintf(want, sizeof(want), "runtimes.%s%s%s", forms[j][0], tiers[i], forms[j][1]);
			if (strstr(text, want))
				return true;
		}
	return false;
}

/*
 * One file config.toml imports (other than itself), as containerd reads it:
 * under 1.x (version 2) it must hold no CRI section, which would replace
 * the one nsguard's handlers are in; under 2.x (version 3), which merges
 * key by key, no table of nsguard's handlers, which would be merged over
 * the block's (configure only: unconfigure takes the block out whatever
 * the imports hold).  An earlier nsguard's drop-in: *old names it
 * (malloc'd), to be removed.
 */
static int check_import(const struct conf *c, bool add, int version, const char *path, char **old)
{
	cleanup_free char *text = NULL;
	bool existed;
	size_t len;
	int err = conf_read_file(path, &text, &len, &existed);

	if (err)
		return nsg_fail_context(err, "%s imports it: nsguard cannot check that it leaves "
					     "nsguard's handlers alone", c->file);
	if (strncmp(text, OLD_DROPIN_MARK, strlen(OLD_DROPIN_MARK)) == 0 && !*old &&
	    strstr(text, "io.containerd.grpc.v1.cri")) {
		*old = strdup(path);
		return *old ? 0 : nsg_fail(ENOMEM, "out of memory");
	}
	if (add && version == 2 && strstr(text, "io.containerd.grpc.v1.cri"))
		return nsg_fail(EEXIST,
				"%s, which %s imports, has a CRI plugin section: containerd 1.6/1.7 "
				"would read it instead of config.toml's, without nsguard's handlers; "
				"unchanged (move its settings into %s)",
				path, c->file, c->file);
	if (add && version == 3 && defines_tier(text))
		return nsg_fail(EEXIST,
				"%s, which %s imports, defines a handler of nsguard's (nsguard, "
				"nsguard-audit, nsguard-allow): containerd 2.x would merge it over "
				"config.toml's; unchanged (remove it: configure writes them into %s)",
				path, c->file, c->file);
	return 0;
}

/* Whether two paths name one file (config.toml importing itself). */
static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/*
 * The files the dump says config.toml imports: 1.x's dump lists the files
 * it read; 2.x's the patterns as written (a relative one is config.toml's
 * directory's, one with a '*' a glob: resolveImports), either quote.
 */
static int check_imports(const struct conf *c, bool add, int version, const char *dump, char **old)
{
	const char *p = find_line(dump, "imports = [");
	cleanup_free char *base = NULL, *dir = NULL;
	int err = conf_split(c->file, &dir, &base);

	(void)base;
	*old = NULL;
	if (err || !p)
		return err;
	for (p += strlen("imports = ["); *p && *p != ']';) {
		cleanup_free char *path = NULL;
		const char *q;
		glob_t g = { 0 };

		p += strspn(p, " ,\n");
		if (*p != '"' && *p != '\'')
			break;
		q = strchr(p + 1, *p);
		if (!q)
			break;
		if (p[1] == '/')
			path = strndup(p + 1, q - p - 1);
		else if (asprintf(&path, "%s/%.*s", dir, (int)(q - p - 1), p + 1) < 0)
			path = NULL;
		p = q + 1;
		if (!path)
			return nsg_fail(ENOMEM, "out of memory");
		if (!strchr(path, '*')) {
			if (!same_file(path, c->file))
				err = check_import(c, add, version, path, old);
			if (err)
				return err;
			continue;
		}
		if (glob(path, 0, NULL, &g) == GLOB_NOSPACE)
			return nsg_fail(ENOMEM, "out of memory");
		for (size_t i = 0; !err && i < g.gl_pathc; i++)
			if (!same_file(g.gl_pathv[i], c->file))
				err = check_import(c, add, version, g.gl_pathv[i], old);
		globfree(&g);
		if (err)
			return err;
	}
	return 0;
}

/* The dump shows each built-in handler with its binary: containerd reads them. */
static bool handlers_read(const struct conf *c, const struct layout *ld, const char *dump)
{
	for (size_t i = 0; i < ARRAY_SIZE(tiers); i++) {
		char header[256], want[4096], got[4096];

		snprintf(header, sizeof(header), "[%s.containerd.runtimes.%s.options]", ld->dump_cri,
			 tiers[i]);
		snprintf(want, sizeof(want), "%c%s/nsguard-runtime%s%c", ld->quote, c->bindir,
			 tiers[i] + strlen("nsguard"), ld->quote);
		dump_value(dump, header, "BinaryName", got, sizeof(got));
		if (strcmp(got, want) != 0)
			return false;
	}
	return true;
}

/* A directory TOML takes between double quotes as it is, and 2.x's dump between single ones. */
static bool plain(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f || *s == '"' || *s == '\'' || *s == '\\')
			return false;
	return true;
}

int conf_containerd(const struct conf *c, bool add)
{
	cleanup_free char *text = NULL, *dump = NULL, *block = NULL, *out = NULL, *old = NULL,
			  *tmp = NULL, *check = NULL;
	struct stat st = { .st_mode = 0600 };
	const struct layout *lf, *ld;
	size_t len, start, end;
	bool existed;
	int err, fv;

	if (!plain(c->bindir))
		return nsg_fail(EINVAL, "--bindir %s: a quote, backslash or control byte in it", c->bindir);
	err = conf_read_file(c->file, &text, &len, &existed);
	if (!err && !existed)
		err = nsg_fail(ENOENT, "%s: %s (containerd config default > %s)", c->file,
			       strerror(ENOENT), c->file);
	err = err ?: find_block(c, text, &start, &end) ?: dump_of(c, c->file, &dump);
	if (err)
		return err;
	/* Which containerd reads it (its dump's version), and the file's own layout. */
	ld = layout_of(find_line(dump, "version = 3") ? 3 : find_line(dump, "version = 2") ? 2 : 0);
	fv = file_version(text);
	lf = layout_of(fv);
	if (!ld)
		return nsg_fail(EINVAL, "%s: containerd config dump says neither config version 2 nor "
					"3 (containerd 1.6 and later read those); unchanged", c->file);
	if (!lf || lf->version > ld->version)
		return nsg_fail(EINVAL,
				"%s: not config version 2%s (its top-level version line says %d); "
				"unchanged (containerd config migrate)",
				c->file, ld->version == 3 ? " or 3" : ", which containerd 1.6/1.7 reads",
				fv);
	err = check_imports(c, add, ld->version, dump, &old);
	if (err)
		return err;
	for (size_t i = 0; add && i < ARRAY_SIZE(tiers) * ARRAY_SIZE(lf->file_cri); i++) {
		const char *tier = tiers[i / ARRAY_SIZE(lf->file_cri)];
		char header[256];

		snprintf(header, sizeof(header), "[%s.containerd.runtimes.%s]",
			 lf->file_cri[i % ARRAY_SIZE(lf->file_cri)], tier);
		if (has_header(text, 0, start, header) || has_header(text, end, len, header))
			return nsg_fail(EEXIST, "%s: the handler %s is there already, outside nsguard's "
						"block: left alone (remove it to let configure write it); "
						"unchanged", c->file, tier);
	}
	if (add) {
		for (size_t i = 0; i < c->n_extra && !c->dry_run; i++) {
			err = conf_trusted(c->extra[i]);
			if (err)
				return err;
		}
		err = make_block(c, lf, ld, dump,
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
		if (err || !handlers_read(c, ld, dump)) {
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
