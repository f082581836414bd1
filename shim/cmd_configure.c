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
 * containerd's config.toml is edited by configure_containerd.c, cri-o's
 * hooks and drop-in by configure_crio.c.
 */
#include <errno.h>
#include <fcntl.h>
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

/*
 * daemon.json edited as text, so that every byte outside nsguard's entries
 * stays (a minimal diff): a scanner over a document json_strict_check and
 * jv_parse accepted, so it needs no error paths of its own.
 */
struct member {
	size_t key, val, end; /* the key's opening quote, its value, the value's end */
};

static size_t js_ws(const char *t, size_t i)
{
	return i + strspn(t + i, " \t\r\n");
}

/* The end of the value at t[i]. */
static size_t js_value_end(const char *t, size_t i)
{
	int depth = 0;

	for (; t[i]; i++) {
		if (t[i] == '"') {
			for (i++; t[i] && t[i] != '"'; i++)
				i += t[i] == '\\';
			if (depth == 0)
				return i + 1;
		} else if (t[i] == '{' || t[i] == '[') {
			depth++;
		} else if (t[i] == '}' || t[i] == ']') {
			if (depth-- <= 0)
				return i;
			if (depth == 0)
				return i + 1;
		} else if (depth == 0 && strchr(", \t\r\n", t[i])) {
			return i;
		}
	}
	return i;
}

/* The members of the object at t[open] ('{'): at most max in m, their count; its '}' at *close. */
static size_t js_members(const char *t, size_t open, struct member *m, size_t max, size_t *close)
{
	size_t i = js_ws(t, open + 1), n = 0;

	while (t[i] == '"') {
		struct member x = { .key = i };

		i = js_ws(t, js_value_end(t, i)); /* at ':' */
		x.val = js_ws(t, i + 1);
		x.end = js_value_end(t, x.val);
		if (n < max)
			m[n] = x;
		n++;
		i = js_ws(t, x.end);
		if (t[i] == ',')
			i = js_ws(t, i + 1);
	}
	*close = i;
	return n;
}

/* The member named key (raw, as written) among m[0..n), or -1. */
static ssize_t js_find(const char *t, const struct member *m, size_t n, const char *key)
{
	for (size_t k = 0; k < n; k++)
		if (m[k].val > m[k].key && strncmp(t + m[k].key + 1, key, strlen(key)) == 0 &&
		    t[m[k].key + 1 + strlen(key)] == '"')
			return k;
	return -1;
}

/* *t with its bytes [from, to) replaced by ins. */
static int js_splice(char **t, size_t from, size_t to, const char *ins)
{
	char *n = NULL;

	if (asprintf(&n, "%.*s%s%s", (int)from, *t, ins, *t + to) < 0)
		return nsg_fail(ENOMEM, "out of memory");
	free(*t);
	*t = n;
	return 0;
}

/* The indentation of the line t[i] is on. */
static size_t js_indent(const char *t, size_t i, const char **start)
{
	while (i > 0 && t[i - 1] != '\n')
		i--;
	*start = t + i;
	return strspn(t + i, " \t");
}

/*
 * Insert the members list (each `"name": value`) into the object at
 * t[open], before its first member with the space that already stands
 * before that one, or into an empty object on lines of their own when the
 * file has more than one line.
 */
static int js_insert(char **t, size_t open, char *const *list, size_t nlist)
{
	struct member m[1];
	size_t close, n = js_members(*t, open, m, 1, &close);
	cleanup_free char *ins = NULL;
	size_t ilen = 0;
	FILE *f = open_memstream(&ins, &ilen);
	const char *line;
	int ind = js_indent(*t, open, &line);
	bool lines = strchr(*t, '\n') && strchr(*t, '\n')[1];
	int err = 0;

	if (!f)
		return nsg_fail(ENOMEM, "out of memory");
	for (size_t i = 0; i < nlist; i++) {
		if (n > 0)
			fprintf(f, "%s,%.*s", list[i], (int)(m[0].key - open - 1), *t + open + 1);
		else if (lines)
			fprintf(f, "%s\n%.*s  %s", i ? "," : "", ind, line, list[i]);
		else
			fprintf(f, "%s%s", i ? ", " : "", list[i]);
	}
	if (n == 0 && lines)
		fprintf(f, "\n%.*s", ind, line);
	if (fclose(f) != 0)
		return nsg_fail(ENOMEM, "out of memory");
	err = n > 0 ? js_splice(t, m[0].key, m[0].key, ins) : js_splice(t, open + 1, close, ins);
	return err;
}

/* Remove the member named key (raw) from the object at t[open], with one comma. */
static int js_remove(char **t, size_t open, const char *key)
{
	struct member m[64];
	size_t close, n = js_members(*t, open, m, ARRAY_SIZE(m), &close);
	ssize_t k = js_find(*t, m, n < ARRAY_SIZE(m) ? n : ARRAY_SIZE(m), key);

	if (k < 0)
		return 0;
	if (n == 1)
		return js_splice(t, open + 1, close, "");
	if ((size_t)k + 1 < n && (size_t)k + 1 < ARRAY_SIZE(m))
		return js_splice(t, m[k].key, m[k + 1].key, "");
	return js_splice(t, m[k - 1].end, m[k].end, "");
}

/*
 * daemon.json with our runtimes set (add) or removed: *out malloc'd.  With
 * say, a line there per entry added or removed (--dry-run: nsguard's keys
 * alone, never the file's other lines).
 */
static int docker_edit(const struct conf *c, const char *text, size_t len, bool add, char **out,
		       size_t *changed, FILE *say)
{
	cleanup_jv struct jv *doc = NULL;
	cleanup_free char *t = NULL;
	char *list[ARRAY_SIZE(all_tiers)] = { NULL };
	bool del[ARRAY_SIZE(all_tiers)] = { false }, empty = len == 0, had_rt;
	size_t nlist = 0, top, close, n;
	struct member m[256];
	struct jv *rt;
	ssize_t r;
	int err = 0;

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
	had_rt = rt != NULL;
	if (rt && !jv_is_object(rt))
		return nsg_fail(EINVAL, "%s: \"runtimes\" is not an object; unchanged", c->file);
	for (size_t i = 0; i < ARRAY_SIZE(all_tiers); i++) {
		bool want = false;
		struct jv *e = NULL, *have = rt ? jv_get(rt, all_tiers[i]) : NULL;
		char link[4096];

		for (size_t k = 0; k < c->n_tiers; k++)
			want |= strcmp(c->tiers[k], all_tiers[i]) == 0;
		tier_link(c, all_tiers[i], link, sizeof(link));
		e = jv_new_object();
		if (!e || !jv_add_string(e, "path", link)) {
			jv_free(e);
			err = nsg_fail(ENOMEM, "out of memory");
			goto out;
		}
		/*
		 * An entry of that name with other settings (runtimeArgs naming
		 * a stricter --config, say) is the admin's: never replaced.
		 */
		if (have && !jv_equal(have, e)) {
			jv_free(e);
			if (!add)
				continue; /* unconfigure: not ours, stays */
			err = nsg_fail(EEXIST,
				       "%s: runtimes.%s is there with other settings than nsguard's: "
				       "left alone (remove it to let configure write it); unchanged",
				       c->file, all_tiers[i]);
			goto out;
		}
		jv_free(e);
		/* Counted: an entry that goes, or one that is not there yet. */
		*changed += (have != NULL) != (add && want);
		del[i] = have && !(add && want);
		if (say && del[i])
			fprintf(say, "%s: would remove runtimes.%s\n", c->file, all_tiers[i]);
		if (say && !have && add && want)
			fprintf(say, "%s: would add runtimes.%s: {\"path\": \"%s\"}\n", c->file,
				all_tiers[i], link);
		if (!have && add && want &&
		    asprintf(&list[nlist++], "\"%s\": {\"path\": \"%s\"}", all_tiers[i], link) < 0) {
			list[--nlist] = NULL;
			err = nsg_fail(ENOMEM, "out of memory");
			goto out;
		}
	}
	/* No file, or an empty one: nsguard's alone, as jv writes it. */
	if (empty && nlist) {
		cleanup_jv struct jv *o = jv_new_object();
		struct jv *ro = o ? jv_add_object(o, "runtimes") : NULL;
		cleanup_free char *p = NULL;

		for (size_t i = 0; ro && i < c->n_tiers; i++) {
			char link[4096];
			struct jv *e = jv_add_object(ro, c->tiers[i]);

			tier_link(c, c->tiers[i], link, sizeof(link));
			if (!e || !jv_add_string(e, "path", link))
				ro = NULL;
		}
		p = ro ? jv_format_pretty(o) : NULL;
		if (!p || asprintf(out, "%s\n", p) < 0)
			err = nsg_fail(ENOMEM, "out of memory");
		goto out;
	}
	t = strdup(empty ? "" : text);
	if (!t || empty) {
		*out = t;
		t = NULL;
		err = *out ? 0 : nsg_fail(ENOMEM, "out of memory");
		goto out;
	}
	if (!t) {
		err = nsg_fail(ENOMEM, "out of memory");
		goto out;
	}
	top = js_ws(t, 0);
	n = js_members(t, top, m, ARRAY_SIZE(m), &close);
	r = n <= ARRAY_SIZE(m) ? js_find(t, m, n, "runtimes") : -1;
	if (!empty && (n > ARRAY_SIZE(m) || (had_rt && r < 0))) {
		err = nsg_fail(EINVAL, "%s: \"runtimes\" is written with escapes, or the file has over "
				       "%zu keys: nsguard edits it only as plain text; unchanged",
			       c->file, ARRAY_SIZE(m));
		goto out;
	}
	if (nlist && r >= 0) {
		err = js_insert(&t, m[r].val, list, nlist);
	} else if (nlist) {
		/* A "runtimes" of its own, laid out as the file's first key is. */
		cleanup_free char *member = NULL, *ind = NULL;
		size_t nl = 0, ilen = 0;
		FILE *f = open_memstream(&member, &nl);
		const char *ws = t + top + 1, *last = NULL;

		for (const char *p = ws; n && p < t + m[0].key; p++)
			if (*p == '\n')
				last = p + 1;
		if (last && asprintf(&ind, "%.*s", (int)(t + m[0].key - last), last) >= 0)
			ilen = strlen(ind);
		if (!f) {
			err = nsg_fail(ENOMEM, "out of memory");
			goto out;
		}
		fputs("\"runtimes\": {", f);
		for (size_t i = 0; i < nlist; i++) {
			if (last)
				fprintf(f, "%s\n%s%s%s", i ? "," : "", ind ?: "", ilen ? ind : "  ", list[i]);
			else
				fprintf(f, "%s%s", i ? ", " : "", list[i]);
		}
		fprintf(f, last ? "\n%s}" : "}", ind ?: "");
		if (fclose(f) != 0) {
			err = nsg_fail(ENOMEM, "out of memory");
			goto out;
		}
		err = js_insert(&t, top, &member, 1);
	}
	for (size_t i = 0; !err && i < ARRAY_SIZE(all_tiers); i++) {
		if (!del[i])
			continue;
		n = js_members(t, top, m, ARRAY_SIZE(m), &close);
		r = js_find(t, m, n, "runtimes");
		err = r < 0 ? 0 : js_remove(&t, m[r].val, all_tiers[i]);
	}
	/* unconfigure: a "runtimes" nsguard's entries leave empty goes too. */
	if (!err && !add) {
		struct member sub[1];

		n = js_members(t, top, m, ARRAY_SIZE(m), &close);
		r = js_find(t, m, n, "runtimes");
		if (r >= 0 && js_members(t, m[r].val, sub, 1, &close) == 0)
			err = js_remove(&t, top, "runtimes");
	}
	if (!err) {
		*out = t;
		t = NULL;
	}
out:
	for (size_t i = 0; i < nlist; i++)
		free(list[i]);
	return err;
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
	err = conf_read_file(c->file, &text, &len, &existed) ?:
	      docker_edit(c, text, len, true, &out, &changed, c->dry_run ? stdout : NULL);
	if (err)
		return err;
	if (!changed) {
		printf("%s: already configured for %s\n", c->file, c->runtime);
		return 0;
	}
	if (c->dry_run)
		return 0;
	/* What dockerd is told to run: there, and root's alone (not for a dry run). */
	for (size_t i = 0; i < c->n_tiers; i++) {
		char link[4096];

		tier_link(c, c->tiers[i], link, sizeof(link));
		err = conf_link_ready(link);
		if (err)
			return err;
	}
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
		err = docker_edit(c, orig_text, olen, true, &ours, &changed, NULL);
		if (err)
			return err;
		if (strcmp(ours, text) == 0) {
			if (c->dry_run) {
				printf("%s: would be put back as it was before nsguard configure\n",
				       c->file);
				return 0;
			}
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
	err = docker_edit(c, text, len, false, &out, &changed, c->dry_run ? stdout : NULL);
	if (err)
		return err;
	if (!changed) {
		printf("%s: nothing of nsguard's in it\n", c->file);
		if (c->dry_run)
			return 0;
	} else if (c->dry_run) {
		return 0;
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
		{ .name = "dry-run", .val = 'n', .help = "print nsguard's own lines or keys that would change, write nothing" },
		{ .name = "file", .arg = "PATH", .val = 'f',
		  .help = "the runtime's file (docker: /etc/docker/daemon.json; containerd: "
			  "/etc/containerd/config.toml; cri-o: the drop-in, "
			  "/etc/crio/crio.conf.d/99-nsguard.conf) or directory (podman: "
			  "/etc/containers/oci/hooks.d)" },
		{ .name = "bindir", .arg = "DIR", .val = 'b',
		  .help = "where nsguard and its runtime links are (default: this binary's)" },
		{ .name = "tiers", .arg = "LIST", .val = 't',
		  .help = "docker: the runtimes, of nsguard,nsguard-audit,nsguard-allow (all)" },
		{ .name = "containerd", .arg = "PATH", .val = 'c',
		  .help = "containerd: the binary that reads the config (containerd)" },
		{ .name = "extra", .arg = "FILE", .val = 'x', .repeat = true,
		  .help = "containerd: more handlers, of config.toml's version (nsguard-base-spec.toml, -v3.toml)" },
		{ .name = "crio", .arg = "PATH", .val = 'C',
		  .help = "cri-o: the binary whose `crio config` shows hooks_dir (crio)" },
		{},
	};
	struct conf c = { .tiers = { "nsguard", "nsguard-audit", "nsguard-allow" }, .n_tiers = 3 };
	cleanup_free char *self = NULL, *bindir = NULL;
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
	/*
	 * unconfigure after an uninstall, or a dry run for the place of a
	 * later install: the entries name the path as given.
	 */
	if (!bindir && ((add && !c.dry_run) || errno != ENOENT))
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
		c.file = c.file ?: "/etc/containerd/config.toml";
		c.containerd = c.containerd ?: "containerd";
		return conf_containerd(&c, add);
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
