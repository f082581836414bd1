// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Edit config.json as text (spec.h).  json_strict_check refuses whatever
 * runc, crun and nsguard could read differently; a small scanner then finds
 * the spans to change in what is left: strict JSON, whitespace as JSON has
 * it, valid UTF-8, no key twice.  A parse and print round trip would
 * print 64-bit numbers (memory limits, ids) as doubles, which runc rejects.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "json.h"
#include "jsonstrict.h"
#include "log.h"
#include "oci.h"
#include "spec.h"
#include "util.h"

#define BAD ((size_t)-1)
#define KEY_MAX 1024 /* a longer key is none of the names spec.c looks for */

static size_t ws(const char *s, size_t n, size_t i)
{
	while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n'))
		i++;
	return i;
}

static size_t skip_string(const char *s, size_t n, size_t i)
{
	for (i++; i < n; i++) {
		if (s[i] == '\\')
			i++;
		else if (s[i] == '"')
			return i + 1;
	}
	return BAD;
}

/* The end of the value at i (the document is strict JSON: json_strict_check said so). */
static size_t skip_value(const char *s, size_t n, size_t i)
{
	int depth = 0;

	if (i >= n)
		return BAD;
	if (s[i] == '"')
		return skip_string(s, n, i);
	if (s[i] != '{' && s[i] != '[') {
		while (i < n && !strchr(",]} \t\r\n", s[i]))
			i++;
		return i;
	}
	for (; i < n; i++) {
		if (s[i] == '"') {
			i = skip_string(s, n, i);
			if (i == BAD)
				return BAD;
			i--;
		} else if (s[i] == '{' || s[i] == '[') {
			depth++;
		} else if ((s[i] == '}' || s[i] == ']') && --depth == 0) {
			return i + 1;
		}
	}
	return BAD;
}

enum key_match { KEY_OTHER, KEY_EXACT, KEY_FOLDED };

/*
 * The key at s[i] against name: equal, or equal only the way Go's
 * encoding/json matches struct fields (json_fold_rune).
 */
static enum key_match key_match(const char *s, size_t n, size_t i, const char *name, bool fold)
{
	char k[KEY_MAX];
	size_t len = json_string_decode(s, n, i, k, sizeof(k)), nlen = strlen(name);

	if (len > sizeof(k)) /* three bytes a rune at most: longer than any name */
		return KEY_OTHER;
	if (len == nlen && memcmp(k, name, len) == 0)
		return KEY_EXACT;
	return fold && json_fold_equal(k, len, name, nlen) ? KEY_FOLDED : KEY_OTHER;
}

/* One member of an object: the key's '"' and the value's span. */
struct member {
	size_t key, val, end;
};

/* The object or array opening at s[open]: its members in order. */
struct walk {
	const char *s;
	size_t n, i;
	bool object;
};

static struct walk walk_start(const char *s, size_t n, size_t open)
{
	return (struct walk){ .s = s, .n = n, .i = open + 1, .object = s[open] == '{' };
}

/* The next member (an array's: key = BAD); false at the end or on an error. */
static bool walk_next(struct walk *w, struct member *m)
{
	const char *s = w->s;
	size_t i = ws(s, w->n, w->i);

	if (i < w->n && s[i] == ',')
		i = ws(s, w->n, i + 1);
	if (i >= w->n || s[i] == '}' || s[i] == ']')
		return false;
	m->key = BAD;
	if (w->object) {
		m->key = i;
		i = skip_string(s, w->n, i);
		if (i == BAD)
			return false;
		i = ws(s, w->n, i);
		if (i >= w->n || s[i] != ':')
			return false;
		i = ws(s, w->n, i + 1);
	}
	m->val = i;
	m->end = skip_value(s, w->n, i);
	if (m->end == BAD)
		return false;
	w->i = m->end;
	return true;
}

static bool is_empty(const char *s, size_t n, size_t open)
{
	size_t i = ws(s, n, open + 1);

	return i < n && (s[i] == '}' || s[i] == ']');
}

/*
 * Find name in the object at s[open]: 1 and *m when it is there once, 0
 * when not, -EINVAL (with a message naming where) when twice or folded.
 */
static int find(const char *s, size_t n, size_t open, const char *name, bool fold,
		const char *where, struct member *m)
{
	struct walk w = walk_start(s, n, open);
	struct member it;
	int found = 0;

	while (walk_next(&w, &it)) {
		switch (key_match(s, n, it.key, name, fold)) {
		case KEY_OTHER:
			continue;
		case KEY_FOLDED:
			return nsg_fail(EINVAL, "%s has a key that the runtime may read as \"%s\"",
					where, name);
		case KEY_EXACT:
			if (found++)
				return nsg_fail(EINVAL, "%s has \"%s\" twice", where, name);
			*m = it;
		}
	}
	return found;
}

/* The string at s[i], decoded, malloc'd (NULL when out of memory). */
static char *string_dup(const char *s, size_t n, size_t i)
{
	size_t len = json_string_decode(s, n, i, NULL, 0);
	char *v = malloc(len + 1);

	if (v) {
		json_string_decode(s, n, i, v, len);
		v[len] = '\0';
	}
	return v;
}

static bool string_is(const char *s, size_t n, const struct member *m, const char *v)
{
	cleanup_free char *got = NULL;

	if (s[m->val] != '"')
		return false;
	got = string_dup(s, n, m->val);
	return got && strcmp(got, v) == 0;
}

/*
 * A path that names one file for the wrapper and for the runtime that runs
 * the hook: absolute, no empty, "." or ".." component, nothing under /proc
 * (/proc/self/exe is the wrapper to one and the runtime to the other) or
 * /dev (/dev/fd/N).  is_self then checks the file itself.
 */
static bool path_plain(const char *p)
{
	const char *c, *next;

	if (p[0] != '/' || strncmp(p, "/proc/", 6) == 0 || strncmp(p, "/dev/", 5) == 0)
		return false;
	for (c = p; c; c = next) {
		size_t len;

		next = strchr(c + 1, '/');
		len = next ? (size_t)(next - c - 1) : strlen(c + 1);
		if (len == 0 || (len == 1 && c[1] == '.') || (len == 2 && c[1] == '.' && c[2] == '.'))
			return false;
	}
	return true;
}

/*
 * The hook {"path": self, "args": ARGS} and at most a timeout: ARGS are
 * ["nsguard", "hook", stage], or with a config ["nsguard", "--config",
 * config, "hook", stage].
 */
static bool hook_is_ours(const char *s, size_t n, size_t open, const struct spec_edit *e,
			 const char *stage)
{
	const char *with_config[] = { "nsguard", "--config", e->config_path, "hook", stage };
	const char *plain[] = { "nsguard", "hook", stage };
	const char **want_args = e->config_path ? with_config : plain;
	size_t want_n = e->config_path ? ARRAY_SIZE(with_config) : ARRAY_SIZE(plain);
	struct walk w = walk_start(s, n, open), a;
	struct member it, arg;
	bool path = false, args = false;

	if (s[open] != '{')
		return false;
	while (walk_next(&w, &it)) {
		/*
		 * Ours only with at least our own timeout: with a shorter one the
		 * runtime could kill it mid-attach or mid-upgrade (each fails
		 * closed, but on the tenant's cue).
		 */
		if (key_match(s, n, it.key, "timeout", false) == KEY_EXACT) {
			unsigned long t = 0;
			size_t k = it.val;

			for (; k < it.end && s[k] >= '0' && s[k] <= '9' && t < 100000; k++)
				t = t * 10 + (unsigned long)(s[k] - '0');
			if (k != it.end || k == it.val || t < SPEC_HOOK_TIMEOUT)
				return false;
			continue;
		}
		if (key_match(s, n, it.key, "path", false) == KEY_EXACT && !path && s[it.val] == '"') {
			cleanup_free char *p = string_dup(s, n, it.val);

			path = p && path_plain(p) && e->is_self(p, e->data);
			if (!path)
				return false;
			continue;
		}
		if (key_match(s, n, it.key, "args", false) == KEY_EXACT && !args && s[it.val] == '[') {
			size_t k = 0;

			a = walk_start(s, n, it.val);
			for (; walk_next(&a, &arg); k++)
				if (k >= want_n || !string_is(s, n, &arg, want_args[k]))
					return false;
			args = k == want_n;
			if (!args)
				return false;
			continue;
		}
		return false; /* env, a second path, anything else */
	}
	return path && args;
}

static bool has_ours(const char *s, size_t n, const struct member *arr, const struct spec_edit *e,
		     const char *stage)
{
	struct walk w;
	struct member it;

	if (!arr || s[arr->val] != '[')
		return false;
	w = walk_start(s, n, arr->val);
	while (walk_next(&w, &it))
		if (hook_is_ours(s, n, it.val, e, stage))
			return true;
	return false;
}

/* The edits: text inserted at pos, replacing del bytes. */
struct edit {
	size_t pos, del;
	char *text;
};

struct plan {
	struct edit ed[16]; /* root, hooks, 2 stages, namespaces, one per annotation */
	size_t n;
	int err;
};

static void plan_add(struct plan *p, size_t pos, size_t del, char *text)
{
	if (!text) {
		p->err = -ENOMEM;
		return;
	}
	if (p->n == ARRAY_SIZE(p->ed)) {
		free(text);
		p->err = -E2BIG;
		return;
	}
	p->ed[p->n++] = (struct edit){ pos, del, text };
}

/* Append member (consumed) to the ","-joined *buf; *buf NULL when out of memory. */
static void join(char **buf, char *member, bool *oom)
{
	char *t = NULL;

	if (!member || asprintf(&t, "%s%s%s", *buf ?: "", *buf ? "," : "", member) < 0) {
		t = NULL;
		*oom = true;
	}
	free(member);
	free(*buf);
	*buf = t;
}

/* asprintf that returns the string, NULL when out of memory. */
static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
	va_list ap;
	char *t;

	va_start(ap, f);
	if (vasprintf(&t, f, ap) < 0)
		t = NULL;
	va_end(ap);
	return t;
}

static char *quote(const char *v)
{
	cleanup_jv struct jv *str = jv_new_string(v);

	return str ? jv_format(str) : NULL;
}

/* Members to put first in the object at open: a plan insert or a replacement of null. */
static void add_members(struct plan *p, const char *s, size_t n, const struct member *m,
			char *members)
{
	if (!members) {
		p->err = -ENOMEM;
		return;
	}
	if (s[m->val] == 'n')
		plan_add(p, m->val, m->end - m->val, fmt("{%s}", members));
	else
		plan_add(p, m->val + 1, 0, fmt("%s%s", members, is_empty(s, n, m->val) ? "" : ","));
	free(members);
}

static int edit_hooks(struct plan *p, const char *s, size_t n, struct member *root_m,
		      bool has_hooks, const struct spec_edit *e, char **root_members,
		      unsigned *what)
{
	/* The stage, and the STAGE argument of its hook: the same name. */
	static const struct {
		const char *name;
		unsigned bit;
	} stages[] = {
		{ "createRuntime", SPEC_ADDED_CREATE_RUNTIME },
		{ "poststop", SPEC_ADDED_POSTSTOP },
	};
	struct member hooks = *root_m, st[ARRAY_SIZE(stages)], pre;
	bool has[ARRAY_SIZE(stages)] = { false }, has_pre = false;
	char *members = NULL, *path = quote(e->hook_path), *config = NULL;
	bool oom = false;
	int r;

	if (!path)
		return -ENOMEM;
	/* The wrapper's --config FILE: the hooks read the same file. */
	if (e->config_path) {
		cleanup_free char *q = quote(e->config_path);

		config = q ? fmt("\"--config\",%s,", q) : NULL;
		if (!config) {
			free(path);
			return -ENOMEM;
		}
	}
	if (has_hooks && s[hooks.val] == '{') {
		for (size_t k = 0; k < ARRAY_SIZE(stages); k++) {
			r = find(s, n, hooks.val, stages[k].name, true, "config.json \"hooks\"",
				 &st[k]);
			if (r < 0)
				goto out;
			has[k] = r;
			if (has[k] && s[st[k].val] != '[' && s[st[k].val] != 'n') {
				r = nsg_fail(EINVAL, "config.json: hooks.%s is not an array",
					     stages[k].name);
				goto out;
			}
		}
		r = find(s, n, hooks.val, "prestart", true, "config.json \"hooks\"", &pre);
		if (r < 0)
			goto out;
		has_pre = r;
	} else if (has_hooks && s[hooks.val] != 'n') {
		r = nsg_fail(EINVAL, "config.json: \"hooks\" is not an object");
		goto out;
	}
	for (size_t k = 0; k < ARRAY_SIZE(stages); k++) {
		char *hook = NULL;

		if (has[k] && has_ours(s, n, &st[k], e, stages[k].name))
			continue;
		if (k == 0 && has_pre && has_ours(s, n, &pre, e, "prestart"))
			continue;
		*what |= stages[k].bit;
		hook = fmt("{\"path\":%s,\"args\":[\"nsguard\",%s\"hook\",\"%s\"],\"timeout\":%d}",
			   path, config ?: "", stages[k].name, SPEC_HOOK_TIMEOUT);
		if (!hook) {
			r = -ENOMEM;
			goto out;
		}
		if (has[k] && s[st[k].val] == '[')
			plan_add(p, st[k].val + 1, 0,
				 fmt("%s%s", hook, is_empty(s, n, st[k].val) ? "" : ","));
		else if (has[k]) /* null */
			plan_add(p, st[k].val, st[k].end - st[k].val, fmt("[%s]", hook));
		else
			join(&members, fmt("\"%s\":[%s]", stages[k].name, hook), &oom);
		free(hook);
	}
	r = 0;
	if (oom)
		p->err = -ENOMEM;
	if (members && has_hooks) {
		add_members(p, s, n, &hooks, members);
	} else if (members) {
		join(root_members, fmt("\"hooks\":{%s}", members), &oom);
		free(members);
	}
	if (oom)
		p->err = -ENOMEM;
out:
	if (r < 0)
		free(members);
	free(path);
	free(config);
	return r;
}

static int edit_annotations(struct plan *p, const char *s, size_t n, struct member *ann,
			    bool has_ann, const struct spec_edit *e, char **root_members)
{
	char *members = NULL;
	bool oom = false;

	if (e->n == 0)
		return 0;
	if (has_ann && s[ann->val] != '{' && s[ann->val] != 'n')
		return nsg_fail(EINVAL, "config.json: \"annotations\" is not an object");
	for (size_t k = 0; k < e->n; k++) {
		cleanup_free char *key = quote(e->keys[k]), *val = quote(e->values[k]);
		struct member m;
		int r = 0;

		if (!key || !val)
			return -ENOMEM;
		if (has_ann && s[ann->val] == '{')
			r = find(s, n, ann->val, e->keys[k], true, "config.json \"annotations\"",
				 &m);
		if (r < 0) {
			free(members);
			return r;
		}
		if (r == 1)
			plan_add(p, m.val, m.end - m.val, strdup(val));
		else
			join(&members, fmt("%s:%s", key, val), &oom);
	}
	if (members && has_ann) {
		add_members(p, s, n, ann, members);
	} else if (members) {
		join(root_members, fmt("\"annotations\":{%s}", members), &oom);
		free(members);
	}
	if (oom)
		p->err = -ENOMEM;
	return 0;
}

/*
 * A cgroup namespace of the container's own when linux.namespaces lists
 * none: containerd's CRI plugin builds a pod sandbox's spec without one (and
 * `ctr run`'s default spec has none), and in the host's cgroup namespace a
 * container running as the host's root could move out of the cgroup nsguard
 * guards, so the hook refuses it.  The runtime creates the namespace after
 * placing init in the container's cgroup, which becomes its root.  An entry
 * that is there (with a path too) is left to the hook to judge; no
 * "linux" or no "namespaces" array means no namespaces at all, also left.
 */
static int edit_cgroupns(struct plan *p, const char *s, size_t n, size_t root, unsigned *what)
{
	struct member lin, ns, it, type;
	struct walk w;
	int r;

	r = find(s, n, root, "linux", true, "config.json", &lin);
	if (r <= 0 || s[lin.val] != '{')
		return r < 0 ? r : 0;
	r = find(s, n, lin.val, "namespaces", true, "config.json \"linux\"", &ns);
	if (r <= 0 || s[ns.val] != '[')
		return r < 0 ? r : 0;
	w = walk_start(s, n, ns.val);
	while (walk_next(&w, &it)) {
		if (s[it.val] != '{')
			continue;
		r = find(s, n, it.val, "type", true, "config.json linux.namespaces", &type);
		if (r < 0)
			return r;
		if (r && string_is(s, n, &type, "cgroup"))
			return 0;
	}
	plan_add(p, ns.val + 1, 0,
		 fmt("{\"type\":\"cgroup\"}%s", is_empty(s, n, ns.val) ? "" : ","));
	*what |= SPEC_ADDED_CGROUPNS;
	return 0;
}

static int by_pos(const void *a, const void *b)
{
	const struct edit *x = a, *y = b;

	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

int spec_edit_apply(const char *in, size_t len, const struct spec_edit *e, char **out,
		    unsigned *what)
{
	struct plan p = { .n = 0 };
	struct member hooks, ann, root = { BAD, 0, 0 };
	char *root_members = NULL, *text;
	size_t size, o = 0, i = 0;
	int has_hooks, has_ann, r;

	*out = NULL;
	*what = 0;
	r = json_strict_check(in, len, "config.json", oci_config_keys);
	if (r < 0)
		return r;
	root.val = ws(in, len, 0);
	if (in[root.val] != '{')
		return nsg_fail(EINVAL, "config.json is not a JSON object");
	root.end = skip_value(in, len, root.val);
	has_hooks = find(in, len, root.val, "hooks", true, "config.json", &hooks);
	if (has_hooks < 0)
		return has_hooks;
	has_ann = find(in, len, root.val, "annotations", true, "config.json", &ann);
	if (has_ann < 0)
		return has_ann;
	r = edit_hooks(&p, in, len, &hooks, has_hooks, e, &root_members, what);
	if (r == 0)
		r = edit_annotations(&p, in, len, &ann, has_ann, e, &root_members);
	if (r == 0 && e->n)
		*what |= SPEC_SET_ANNOTATIONS;
	if (r == 0 && e->cgroupns)
		r = edit_cgroupns(&p, in, len, root.val, what);
	if (r == 0 && root_members)
		add_members(&p, in, len, &root, root_members);
	else
		free(root_members);
	if (r == 0 && p.err)
		r = p.err == -ENOMEM ? nsg_fail(ENOMEM, "out of memory") : p.err;
	if (r < 0 || p.n == 0)
		goto done;

	qsort(p.ed, p.n, sizeof(p.ed[0]), by_pos);
	size = len + 1;
	for (size_t k = 0; k < p.n; k++)
		size += strlen(p.ed[k].text);
	text = malloc(size);
	if (!text) {
		r = nsg_fail(ENOMEM, "out of memory");
		goto done;
	}
	for (size_t k = 0; k < p.n; k++) {
		size_t t = strlen(p.ed[k].text);

		memcpy(text + o, in + i, p.ed[k].pos - i);
		o += p.ed[k].pos - i;
		memcpy(text + o, p.ed[k].text, t);
		o += t;
		i = p.ed[k].pos + p.ed[k].del;
	}
	memcpy(text + o, in + i, len - i);
	o += len - i;
	text[o] = '\0';
	/* What we wrote must read alike to everyone too (a --config path in
	 * invalid UTF-8 would not). */
	r = json_strict_check(text, o, "config.json as edited", oci_config_keys);
	if (r < 0) {
		free(text);
		goto done;
	}
	*out = text;
done:
	for (size_t k = 0; k < p.n; k++)
		free(p.ed[k].text);
	return r;
}
