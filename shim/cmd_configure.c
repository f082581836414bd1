// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nsguard configure|unconfigure [--dry-run] [--file PATH] [--bindir DIR]
 * [--tiers LIST] RUNTIME: register nsguard with a runtime's own
 * configuration, and take exactly that back.
 *
 *   docker  daemon.json's "runtimes": one entry per tier (nsguard,
 *           nsguard-audit, nsguard-allow) naming the wrapper's links, every
 *           other key kept.  The file as it was is kept beside it
 *           (.NAME.nsguard-orig, or .NAME.nsguard-absent), so unconfigure
 *           puts back the same bytes when nothing else changed it since,
 *           and removes only nsguard's entries when something did (or
 *           when --tiers differs from configure's).
 *   podman  the hooks.d files (oci-hooks(5)) naming this binary, in
 *           /etc/containers/oci/hooks.d: podman reads /usr/share's and
 *           /etc's, not /usr/local/share's.
 * A file nsguard cannot read exactly as the runtime would (json_strict_check:
 * Go's key folding, invalid UTF-8) is refused and nothing changes.
 * containerd's drop-in is written by share/nsguard/containerd/
 * nsguard-cri-dropin (it needs containerd's own reading of its TOML);
 * cri-o's hooks and drop-in by configure_crio.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd.h"
#include "configure.h"
#include "fileio.h"
#include "json.h"
#include "jsonstrict.h"
#include "log.h"
#include "spec.h"
#include "util.h"

static const char *const docker_keys[] = { "runtimes", "path", "runtimeArgs", NULL };
static const char *const all_tiers[] = { "nsguard", "nsguard-audit", "nsguard-allow" };

/*
 * Numbers jv carries over exactly: integers of at most 15 digits.  It
 * keeps doubles; 9223372036854775807 would come back as 9.2233720368547758e+18,
 * which dockerd's int64 fields refuse.  Outside strings only.
 */
static int plain_numbers(const char *t, size_t len, const char *what)
{
	for (size_t i = 0; i < len; i++) {
		size_t start = i, digits = 0;
		bool other = false;

		if (t[i] == '"') {
			for (i++; i < len && t[i] != '"'; i++)
				if (t[i] == '\\')
					i++;
			continue;
		}
		if (t[i] != '-' && (t[i] < '0' || t[i] > '9'))
			continue;
		for (; i < len && strchr("+-0123456789.eE", t[i]); i++) {
			digits += t[i] >= '0' && t[i] <= '9';
			other |= t[i] == '.' || t[i] == 'e' || t[i] == 'E';
		}
		if (digits > 15 || other)
			return nsg_fail(EINVAL,
					"%s: byte %zu: the number %.*s would not be written back "
					"exactly; unchanged (add nsguard's runtimes by hand, "
					"examples/docker/daemon.json.in)",
					what, start, (int)(i - start > 40 ? 40 : i - start), t + start);
		i--;
	}
	return 0;
}

/* BINDIR/nsguard-runtime[-MODE]: the wrapper's link of tier (make install's). */
static void tier_link(const struct conf *c, const char *tier, char *buf, size_t len)
{
	snprintf(buf, len, "%s/nsguard-runtime%s", c->bindir, tier + strlen("nsguard"));
}

/* daemon.json with our runtimes set (add) or removed: *out malloc'd. */
static int docker_edit(const struct conf *c, const char *text, size_t len, bool add, char **out,
		       size_t *changed)
{
	cleanup_jv struct jv *doc = NULL;
	struct jv *rt;
	int err;

	*out = NULL;
	*changed = 0;
	if (len == 0)
		text = "{}", len = 2;
	/* dockerd reads it with Go's encoding/json: what it could read otherwise, refused. */
	err = json_strict_check(text, len, c->file, docker_keys);
	if (err)
		return nsg_fail_context(err, "%s unchanged", c->file);
	err = plain_numbers(text, len, c->file);
	if (err)
		return err;
	doc = jv_parse(text, len);
	if (!jv_is_object(doc))
		return nsg_fail(EINVAL, "%s is not a JSON object; unchanged", c->file);
	rt = jv_get(doc, "runtimes");
	if (rt && !jv_is_object(rt))
		return nsg_fail(EINVAL, "%s: \"runtimes\" is not an object; unchanged", c->file);
	if (add && !rt)
		rt = jv_add_object(doc, "runtimes");
	for (size_t i = 0; rt && i < ARRAY_SIZE(all_tiers); i++) {
		bool want = false;
		struct jv *e = NULL, *have = jv_get(rt, all_tiers[i]);
		char link[4096];

		for (size_t k = 0; k < c->n_tiers; k++)
			want |= strcmp(c->tiers[k], all_tiers[i]) == 0;
		tier_link(c, all_tiers[i], link, sizeof(link));
		e = jv_new_object();
		if (!e || !jv_add_string(e, "path", link)) {
			jv_free(e);
			return nsg_fail(ENOMEM, "out of memory");
		}
		/*
		 * An entry of that name with other settings (runtimeArgs naming
		 * a stricter --config, say) is the admin's: never replaced.
		 */
		if (have && !jv_equal(have, e)) {
			jv_free(e);
			if (!add)
				continue; /* unconfigure: not ours, stays */
			return nsg_fail(EEXIST,
					"%s: runtimes.%s is there with other settings than nsguard's: "
					"left alone (remove it to let configure write it); unchanged",
					c->file, all_tiers[i]);
		}
		/* Counted: an entry that goes, or one that is not there yet. */
		*changed += (have != NULL) != (add && want);
		jv_remove(rt, all_tiers[i]);
		if (!add || !want) {
			jv_free(e);
			continue;
		}
		if (!jv_add(rt, all_tiers[i], e)) {
			jv_free(e);
			return nsg_fail(ENOMEM, "out of memory");
		}
	}
	if (!add && rt && !rt->child)
		jv_remove(doc, "runtimes");
	{
		cleanup_free char *p = jv_format_pretty(doc);

		if (!p || asprintf(out, "%s\n", p) < 0)
			return nsg_fail(ENOMEM, "out of memory");
	}
	return 0;
}

static int docker_configure(const struct conf *c)
{
	cleanup_free char *text = NULL, *out = NULL, *orig = conf_side_path(c->file, "orig"),
			  *absent = conf_side_path(c->file, "absent");
	struct stat st = { .st_mode = 0644 };
	size_t len, changed = 0;
	bool existed;
	int err;

	if (!orig || !absent)
		return nsg_fail(ENOMEM, "out of memory");
	for (size_t i = 0; i < c->n_tiers; i++) {
		char link[4096];

		tier_link(c, c->tiers[i], link, sizeof(link));
		if (access(link, X_OK) < 0)
			return nsg_fail(ENOENT, "%s: %s (make install makes the wrapper's links; "
						"--bindir names another place)",
					link, strerror(errno));
		err = conf_trusted(link);
		if (err)
			return err;
	}
	err = conf_read_file(c->file, &text, &len, &existed) ?:
	      docker_edit(c, text, len, true, &out, &changed);
	if (err)
		return err;
	if (!changed) {
		printf("%s: already configured for %s\n", c->file, c->runtime);
		return 0;
	}
	if (c->dry_run)
		return conf_show_diff(c->file, text, out);
	/* The file as it was before the first configure: unconfigure's bytes. */
	if (access(orig, F_OK) < 0 && access(absent, F_OK) < 0) {
		err = existed ? conf_write_text(orig, text, 0600) : conf_write_text(absent, "", 0600);
		if (err)
			return nsg_fail_context(err, "keeping the original of %s", c->file);
	}
	if (existed)
		stat(c->file, &st);
	err = conf_write_text(c->file, out, st.st_mode & 07777);
	if (err)
		return err;
	printf("%s: %s configured (%zu runtime%s); restart dockerd\n", c->file, c->runtime,
	       c->n_tiers, c->n_tiers == 1 ? "" : "s");
	return 0;
}

static int docker_unconfigure(const struct conf *c)
{
	cleanup_free char *text = NULL, *out = NULL, *orig_text = NULL, *ours = NULL,
			  *orig = conf_side_path(c->file, "orig"), *absent = conf_side_path(c->file, "absent");
	struct stat st = { .st_mode = 0644 };
	bool existed, had_orig, was_absent;
	size_t len, olen = 0, changed = 0;
	int err;

	if (!orig || !absent)
		return nsg_fail(ENOMEM, "out of memory");
	err = conf_read_file(c->file, &text, &len, &existed);
	if (err)
		return err;
	was_absent = access(absent, F_OK) == 0;
	err = conf_read_file(orig, &orig_text, &olen, &had_orig);
	if (err)
		return err;
	/* Unchanged since configure: the original, byte for byte. */
	if (had_orig || was_absent) {
		err = docker_edit(c, orig_text, olen, true, &ours, &changed);
		if (err)
			return err;
		if (strcmp(ours, text) == 0) {
			if (c->dry_run)
				return conf_show_diff(c->file, text, orig_text);
			/* configure kept the file's mode: the one it had. */
			stat(c->file, &st);
			if (was_absent)
				err = unlink(c->file) < 0 && errno != ENOENT ?
					      nsg_fail(errno, "%s: %s", c->file, strerror(errno)) :
					      0;
			else
				err = conf_write_text(c->file, orig_text, st.st_mode & 07777);
			if (err)
				return err;
			unlink(orig);
			unlink(absent);
			printf("%s: restored as it was before nsguard configure\n", c->file);
			return 0;
		}
	}
	/* Changed since: take out nsguard's entries only. */
	if (!existed) {
		printf("%s: nothing to unconfigure\n", c->file);
		return 0;
	}
	err = docker_edit(c, text, len, false, &out, &changed);
	if (err)
		return err;
	if (!changed) {
		printf("%s: nothing of nsguard's in it\n", c->file);
		if (c->dry_run)
			return 0;
	} else if (c->dry_run) {
		return conf_show_diff(c->file, text, out);
	} else {
		stat(c->file, &st);
		err = conf_write_text(c->file, out, st.st_mode & 07777);
		if (err)
			return err;
		printf("%s: nsguard's runtimes removed (the file changed since configure, so "
		       "the rest stays as it is now)\n",
		       c->file);
	}
	unlink(orig);
	unlink(absent);
	return 0;
}

static int podman(const struct conf *c, bool add)
{
	size_t changed = 0;
	int err = conf_hooks_files(c, c->file, add, &changed);

	if (!err && !c->dry_run)
		printf("%s: %s (%zu file%s changed)\n", c->file,
		       changed ? (add ? "podman configured" : "podman unconfigured") :
				 (add ? "already configured" : "nothing to unconfigure"),
		       changed, changed == 1 ? "" : "s");
	return err;
}

/* DIR/conf.d/nsguard.toml beside config.toml: the drop-in's name. */
static char *dropin_path(const char *config)
{
	cleanup_free char *dir = NULL, *base = NULL;
	char *p = NULL;

	if (conf_split(config, &dir, &base) < 0 || asprintf(&p, "%s/conf.d/nsguard.toml", dir) < 0)
		return NULL;
	return p;
}

/* `containerd --config FILE config dump`: the config as containerd reads it. */
static int containerd_dump(const struct conf *c, char **dump)
{
	char *const argv[] = { (char *)c->containerd, (char *)"--config", (char *)c->file,
			       (char *)"config", (char *)"dump", NULL };

	return conf_spawn(argv, dump);
}

/* N of the first line "version = N" of text (before any table), else 0. */
static int toml_version(const char *text)
{
	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		l += strspn(l, " \t");
		if (*l == '[')
			return 0;
		if (strncmp(l, "version", 7) == 0) {
			l += 7 + strspn(l + 7, " \t");
			if (*l == '=')
				return atoi(l + 1);
		}
	}
	return 0;
}

/*
 * Whether the dump's imports name path: 1.6/1.7 list the files read
 * ("..."), 2.x the patterns as written ('...', globs as Go's filepath.Glob,
 * relative to config.toml's directory).
 */
static bool imported(const struct conf *c, const char *dump, const char *path)
{
	cleanup_free char *dir = NULL, *base = NULL;
	const char *start = strstr(dump, "\nimports = ["), *end;

	end = start ? strchr(start, ']') : NULL;
	if (!end || conf_split(c->file, &dir, &base) < 0)
		return false;
	for (const char *q = strpbrk(start, "'\""); q && q < end; q = strpbrk(q, "'\"")) {
		const char *close = strchr(q + 1, *q);
		cleanup_free char *pat = NULL;

		if (!close || close > end)
			return false;
		if (asprintf(&pat, "%s%s%.*s", q[1] == '/' ? "" : dir, q[1] == '/' ? "" : "/",
			     (int)(close - q - 1), q + 1) < 0)
			return false;
		if (strcmp(pat, path) == 0 || fnmatch(pat, path, FNM_PATHNAME) == 0)
			return true;
		q = close + 1;
	}
	return false;
}

/*
 * containerd's two ways with an import, one row each (config.toml's own
 * version, and the version `config dump` shows: 2 from 1.6/1.7, 3 from 2.x,
 * which migrates a version 2 config.toml).  1.6/1.7 replace a whole plugin
 * section with an import's, so the drop-in carries the node's CRI section
 * (nsguard-cri-dropin).  2.x merges an import table by table (mergeConfig
 * in cmd/containerd/server/config/config.go: mergo.Merge with override,
 * maps by key; checked in the guest, client-containerd.sh), and refuses a
 * drop-in of a higher version than config.toml's: its drop-in is the
 * handlers alone, in config.toml's version's layout.
 */
static const struct containerd_layout {
	int dump_version, file_version;
	const char *runtimes; /* the handlers, in --share */
	bool whole_section;   /* 1.6/1.7: nsguard-cri-dropin writes it */
} containerd_layouts[] = {
	{ 2, 2, "nsguard-runtimes.toml", true },
	{ 3, 2, "nsguard-runtimes.toml", false },
	{ 3, 3, "nsguard-runtimes-v3.toml", false },
};

#define CONTAINERD_MARK "# containerd CRI drop-in written by nsguard"

/* The drop-in of the handlers alone (2.x): config.toml's version, then each file but its own version line. */
static int containerd_handlers(const struct conf *c, const struct containerd_layout *l,
			       const char *runtimes, char **out)
{
	const char *files[1 + sizeof(c->extra) / sizeof(c->extra[0])];
	size_t n = 0, len = 0;
	char *buf = NULL;
	FILE *f = open_memstream(&buf, &len);
	int err = 0;

	if (!f)
		return nsg_fail(ENOMEM, "out of memory");
	fprintf(f, "%s configure (containerd 2.x merges an import table by table: the handlers alone)\n"
		   "version = %d\n",
		CONTAINERD_MARK, l->file_version);
	files[n++] = runtimes;
	for (size_t i = 0; i < c->n_extra; i++)
		files[n++] = c->extra[i];
	for (size_t i = 0; i < n && !err; i++) {
		cleanup_free char *text = NULL;
		size_t tlen;
		bool existed;

		err = conf_read_file(files[i], &text, &tlen, &existed);
		if (!err && !existed)
			err = nsg_fail(ENOENT, "%s: no such file", files[i]);
		if (!err && toml_version(text) != l->file_version)
			err = nsg_fail(EINVAL, "%s: not version %d's layout, which %s has (containerd 2.x "
					       "refuses a drop-in of another version)",
				       files[i], l->file_version, c->file);
		for (char *line = text, *next; !err && line && *line; line = next) {
			next = strchr(line, '\n');
			next = next ? next + 1 : NULL;
			if (strncmp(line + strspn(line, " \t"), "version", 7) != 0)
				fprintf(f, "%.*s", next ? (int)(next - line) : (int)strlen(line), line);
		}
		fputc('\n', f);
	}
	fclose(f);
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	return 0;
}

/*
 * containerd 1.6/1.7: the drop-in nsguard-cri-dropin writes (the node's CRI
 * section, which an import replaces whole, plus the handlers), in
 * conf.d/nsguard.toml beside config.toml, which config.toml must import:
 * nsguard never edits config.toml, so it needs no TOML writer.
 */
static int containerd(const struct conf *c, bool add)
{
	cleanup_free char *dropin = dropin_path(c->file), *script = NULL, *runtimes = NULL,
			  *text = NULL, *dump = NULL, *cfg = NULL, *handlers = NULL;
	const struct containerd_layout *l = NULL;
	char *argv[24];
	size_t n = 0, len, cfg_len;
	bool existed, cfg_existed;
	int err, dump_version, file_version;

	if (!dropin)
		return nsg_fail(ENOMEM, "out of memory");
	err = conf_read_file(dropin, &text, &len, &existed);
	if (err)
		return err;
	if (existed && !strstr(text, CONTAINERD_MARK))
		return nsg_fail(EEXIST, "%s is not nsguard's drop-in: left alone", dropin);
	if (!add) {
		if (!existed) {
			printf("%s: nothing to unconfigure\n", dropin);
			return 0;
		}
		if (c->dry_run)
			return conf_show_diff(dropin, text, "");
		if (unlink(dropin) < 0)
			return nsg_fail(errno, "%s: %s", dropin, strerror(errno));
		printf("%s: removed; restart containerd\n", dropin);
		return 0;
	}
	/* Which containerd and which config.toml: the layout table's row. */
	err = containerd_dump(c, &dump) ?: conf_read_file(c->file, &cfg, &cfg_len, &cfg_existed);
	if (err)
		return err;
	dump_version = toml_version(dump);
	file_version = toml_version(cfg) ?: dump_version;
	for (size_t i = 0; i < sizeof(containerd_layouts) / sizeof(containerd_layouts[0]); i++)
		if (containerd_layouts[i].dump_version == dump_version &&
		    containerd_layouts[i].file_version == file_version)
			l = &containerd_layouts[i];
	if (!l)
		return nsg_fail(ENOTSUP, "%s: config version %d read by a containerd of config version %d: "
					 "nsguard knows 2 (containerd 1.6, 1.7) and 2 or 3 (containerd 2.x)",
				c->file, file_version, dump_version);
	if (asprintf(&script, "%s/nsguard-cri-dropin", c->share) < 0 ||
	    asprintf(&runtimes, "%s/%s", c->share, l->runtimes) < 0)
		return nsg_fail(ENOMEM, "out of memory");
	if ((l->whole_section && access(script, X_OK) < 0) || access(runtimes, R_OK) < 0)
		return nsg_fail(ENOENT, "%s or %s: %s (make install puts them there; --share names "
					"another place)",
				script, runtimes, strerror(errno));
	err = (l->whole_section ? conf_trusted(script) : 0) ?: conf_trusted(runtimes);
	for (size_t i = 0; !err && i < c->n_extra; i++)
		err = conf_trusted(c->extra[i]);
	if (err)
		return err;
	if (!l->whole_section) {
		err = containerd_handlers(c, l, runtimes, &handlers);
		if (err)
			return err;
		if (c->dry_run) {
			if (strcmp(text, handlers) == 0) {
				printf("%s: already configured\n", dropin);
				return 0;
			}
			return conf_show_diff(dropin, text, handlers);
		}
	}
	argv[n++] = script;
	argv[n++] = (char *)"--config";
	argv[n++] = (char *)c->file;
	argv[n++] = (char *)"--containerd";
	argv[n++] = (char *)c->containerd;
	if (c->dry_run)
		argv[n++] = (char *)"--print"; /* what it would write; the old one kept */
	argv[n++] = (char *)"--output";
	argv[n++] = dropin;
	argv[n++] = runtimes;
	for (size_t i = 0; i < c->n_extra; i++)
		argv[n++] = (char *)c->extra[i];
	argv[n] = NULL;
	if (c->dry_run) {
		cleanup_free char *out = NULL;

		err = conf_spawn(argv, &out);
		if (err)
			return err;
		if (strcmp(text, out) == 0) {
			printf("%s: already configured\n", dropin);
			return 0;
		}
		return conf_show_diff(dropin, text, out);
	}
	err = mkdir_p(strrchr(dropin, '/') ? dirname(strdupa(dropin)) : ".", 0755);
	if (err)
		return nsg_fail(-err, "%s: %s", dropin, strerror(-err));
	err = l->whole_section ? conf_spawn(argv, NULL) : conf_write_text(dropin, handlers, 0600);
	if (err)
		return err;
	/* Written: but does containerd read it, and import it?  Else it would sit there unread. */
	free(dump);
	dump = NULL;
	if (containerd_dump(c, &dump) < 0 || !imported(c, dump, dropin)) {
		nsg_clear_error();
		/* As it was: the old drop-in back, or none. */
		if (existed)
			conf_write_text(dropin, text, 0600);
		else
			unlink(dropin);
		return nsg_fail(ENOENT,
				"%s does not import %s, or containerd cannot read it (left as "
				"it was): add \"%s/*.toml\" to imports = [...] in %s, then run "
				"this again",
				c->file, dropin, dirname(strdupa(dropin)), c->file);
	}
	if (l->whole_section)
		printf("%s: containerd configured; restart containerd.  It holds config.toml's CRI "
		       "section as it is now and wins over it: run this again after every change "
		       "to that section\n",
		       dropin);
	else
		printf("%s: containerd configured (config version %d, the handlers alone); restart "
		       "containerd\n",
		       dropin, l->file_version);
	return 0;
}

static int parse_tiers(struct conf *c)
{
	cleanup_free char *list = strdup(c->tiers_arg);
	char *save = NULL;

	if (!list)
		return nsg_fail(ENOMEM, "out of memory");
	c->n_tiers = 0;
	for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		size_t i = 0;

		while (i < ARRAY_SIZE(all_tiers) && strcmp(t, all_tiers[i]) != 0)
			i++;
		if (i == ARRAY_SIZE(all_tiers))
			return cmd_usage("--tiers: '%s' is not one of nsguard, nsguard-audit, "
					 "nsguard-allow",
					 t);
		for (size_t k = 0; k < c->n_tiers; k++)
			if (c->tiers[k] == all_tiers[i])
				return cmd_usage("--tiers: %s given twice", t);
		c->tiers[c->n_tiers++] = all_tiers[i];
	}
	return c->n_tiers ? 0 : cmd_usage("--tiers: no tier");
}

static int configure_opt(int opt, const char *arg, void *data)
{
	struct conf *c = data;

	switch (opt) {
	case 'n':
		c->dry_run = true;
		break;
	case 'f':
		c->file = arg;
		break;
	case 'b':
		c->bindir = arg;
		break;
	case 't':
		c->tiers_arg = arg; /* checked after the options: a usage error per option */
		break;
	case 's':
		c->share = arg;
		break;
	case 'c':
		c->containerd = arg;
		break;
	case 'C':
		c->crio = arg;
		break;
	case 'x':
		if (c->n_extra == ARRAY_SIZE(c->extra))
			return cmd_usage("--extra: at most %zu files", ARRAY_SIZE(c->extra));
		c->extra[c->n_extra++] = arg;
		break;
	}
	return 0;
}

static int run(const char *cmd, int argc, char **argv, bool add)
{
	static const struct cmd_option opts[] = {
		{ .name = "dry-run", .val = 'n', .help = "print what would change (diff -u), change nothing" },
		{ .name = "file", .arg = "PATH", .val = 'f',
		  .help = "the runtime's file (docker: /etc/docker/daemon.json; containerd: "
			  "/etc/containerd/config.toml; cri-o: the drop-in, "
			  "/etc/crio/crio.conf.d/99-nsguard.conf) or directory (podman: "
			  "/etc/containers/oci/hooks.d)" },
		{ .name = "bindir", .arg = "DIR", .val = 'b',
		  .help = "where nsguard and its runtime links are (default: this binary's)" },
		{ .name = "tiers", .arg = "LIST", .val = 't',
		  .help = "docker: the runtimes, of nsguard,nsguard-audit,nsguard-allow (all)" },
		{ .name = "share", .arg = "DIR", .val = 's',
		  .help = "containerd: nsguard-cri-dropin and the handlers (BINDIR/../share/nsguard/containerd)" },
		{ .name = "containerd", .arg = "PATH", .val = 'c',
		  .help = "containerd: the binary that reads the config (containerd)" },
		{ .name = "extra", .arg = "FILE", .val = 'x', .repeat = true,
		  .help = "containerd: more handlers (nsguard-base-spec.toml)" },
		{ .name = "crio", .arg = "PATH", .val = 'C',
		  .help = "cri-o: the binary whose `crio config` shows hooks_dir (crio)" },
		{},
	};
	struct conf c = { .tiers = { "nsguard", "nsguard-audit", "nsguard-allow" }, .n_tiers = 3 };
	cleanup_free char *self = NULL, *share = NULL, *bindir = NULL;
	const char *args[1] = { NULL };
	int err;

	err = cmd_options_args(cmd, argc, argv, opts, configure_opt, &c, args, 1);
	if (err)
		return err;
	if (c.tiers_arg) {
		err = parse_tiers(&c);
		if (err)
			return err;
	}
	c.runtime = args[0];
	if (!c.runtime)
		return cmd_usage("%s: RUNTIME missing (containerd, cri-o, docker or podman)", cmd);
	if (!c.bindir) {
		self = realpath("/proc/self/exe", NULL);
		if (!self)
			return nsg_fail(errno, "cannot find this binary: %s", strerror(errno));
		*strrchr(self, '/') = '\0';
		c.bindir = self;
	}
	if (c.bindir[0] != '/')
		return cmd_usage("%s: --bindir wants an absolute path", cmd);
	/*
	 * What the runtimes are told to run is the resolved directory: a
	 * symbolic link on the way (checked by conf_trusted as it points now)
	 * could be pointed elsewhere afterwards by whoever owns it.
	 */
	bindir = realpath(c.bindir, NULL);
	/* unconfigure after an uninstall: the entries name the path as given. */
	if (!bindir && (add || errno != ENOENT))
		return nsg_fail(errno, "--bindir %s: %s", c.bindir, strerror(errno));
	c.bindir = bindir ?: c.bindir;
	if (strcmp(c.runtime, "docker") == 0) {
		c.file = c.file ?: "/etc/docker/daemon.json";
		return add ? docker_configure(&c) : docker_unconfigure(&c);
	}
	if (strcmp(c.runtime, "podman") == 0) {
		c.file = c.file ?: "/etc/containers/oci/hooks.d";
		return podman(&c, add);
	}
	if (strcmp(c.runtime, "containerd") == 0) {
		if (!c.share && asprintf(&share, "%s/../share/nsguard/containerd", c.bindir) < 0)
			return nsg_fail(ENOMEM, "out of memory");
		c.share = c.share ?: share;
		c.file = c.file ?: "/etc/containerd/config.toml";
		c.containerd = c.containerd ?: "containerd";
		return containerd(&c, add);
	}
	if (strcmp(c.runtime, "cri-o") == 0) {
		c.file = c.file ?: "/etc/crio/crio.conf.d/99-nsguard.conf";
		c.crio = c.crio ?: "crio";
		return conf_crio(&c, add);
	}
	return cmd_usage("%s: unknown runtime '%s' (containerd, cri-o, docker, podman)", cmd,
			 c.runtime);
}

int cmd_configure(struct cmd_ctx *ctx, int argc, char **argv)
{
	return run("configure", argc, argv, true);
}

int cmd_unconfigure(struct cmd_ctx *ctx, int argc, char **argv)
{
	return run("unconfigure", argc, argv, false);
}
