// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Edit config.json as text (spec.h).  cJSON checks the whole document first;
 * a small scanner then finds the spans to change.  A cJSON round trip would
 * print 64-bit numbers (memory limits, ids) as doubles, which runc rejects.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>

#include "json.h"
#include "log.h"
#include "spec.h"
#include "util.h"

#define BAD ((size_t)-1)
#define KEY_MAX 256 /* longer keys are never ours; compared by their start */

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

/* The end of the value at i (the document is valid JSON: cJSON said so). */
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

static int hex4(const char *s, unsigned *v)
{
	*v = 0;
	for (int k = 0; k < 4; k++) {
		char c = s[k];

		*v <<= 4;
		if (c >= '0' && c <= '9')
			*v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			*v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			*v |= c - 'A' + 10;
		else
			return -1;
	}
	return 0;
}

/*
 * The string at s[i] ('"') decoded to code points (what Go compares keys
 * by), at most cap of them; *len their number, or cap + 1 if there were more.
 */
static void decode(const char *s, size_t n, size_t i, unsigned *cp, size_t cap, size_t *len)
{
	size_t k = 0;

	for (i++; i < n && s[i] != '"' && k <= cap; k++) {
		unsigned c = (unsigned char)s[i], lo;

		if (c == '\\') {
			c = (unsigned char)s[i + 1];
			i += 2;
			switch (c) {
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'n': c = '\n'; break;
			case 'r': c = '\r'; break;
			case 't': c = '\t'; break;
			case 'u':
				if (i + 4 > n || hex4(s + i, &c) < 0)
					c = 0xfffd;
				i += 4;
				if (c >= 0xd800 && c < 0xdc00 && i + 6 <= n && s[i] == '\\' &&
				    s[i + 1] == 'u' && hex4(s + i + 2, &lo) == 0 && lo >= 0xdc00 &&
				    lo < 0xe000) {
					c = 0x10000 + ((c - 0xd800) << 10) + (lo - 0xdc00);
					i += 6;
				} else if (c >= 0xd800 && c < 0xe000) {
					c = 0xfffd;
				}
				break;
			default: break; /* \" \\ \/ */
			}
		} else if (c < 0x80) {
			i++;
		} else {
			/* UTF-8: cJSON accepted the bytes; take the code point. */
			int more = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : 1;

			c &= 0x3f >> more;
			for (i++; more-- > 0 && i < n; i++)
				c = (c << 6) | ((unsigned char)s[i] & 0x3f);
		}
		if (k < cap)
			cp[k] = c;
	}
	*len = k;
}

enum key_match { KEY_OTHER, KEY_EXACT, KEY_FOLDED };

/*
 * The key at s[i] against name (ASCII): equal, or equal only the way Go's
 * encoding/json matches struct fields (ASCII case, and U+017F and U+212A,
 * the two non-ASCII runes that fold to ASCII letters: s and k).
 */
static enum key_match key_match(const char *s, size_t n, size_t i, const char *name, bool fold)
{
	unsigned cp[KEY_MAX];
	size_t len, k, nlen = strlen(name);
	bool exact = true;

	decode(s, n, i, cp, KEY_MAX, &len);
	if (len != nlen)
		return KEY_OTHER;
	for (k = 0; k < len; k++) {
		unsigned c = cp[k], want = (unsigned char)name[k];

		if (c == want)
			continue;
		exact = false;
		if (!fold)
			return KEY_OTHER;
		if (c == 0x17f)
			c = 's';
		else if (c == 0x212a)
			c = 'k';
		if (c >= 'A' && c <= 'Z')
			c += 'a' - 'A';
		if (want >= 'A' && want <= 'Z')
			want += 'a' - 'A';
		if (c != want)
			return KEY_OTHER;
	}
	return exact ? KEY_EXACT : KEY_FOLDED;
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

static bool string_is(const char *s, size_t n, const struct member *m, const char *v)
{
	return s[m->val] == '"' && key_match(s, n, m->val, v, false) == KEY_EXACT;
}

/* The hook {"path": self, "args": ["nsguard", "hook", stage]} and nothing else. */
static bool hook_is_ours(const char *s, size_t n, size_t open, const struct spec_edit *e,
			 const char *stage)
{
	static const char *const want_args[] = { "nsguard", "hook", NULL };
	struct walk w = walk_start(s, n, open), a;
	struct member it, arg;
	bool path = false, args = false;
	char *p;

	if (s[open] != '{')
		return false;
	while (walk_next(&w, &it)) {
		if (key_match(s, n, it.key, "timeout", false) == KEY_EXACT)
			continue;
		if (key_match(s, n, it.key, "path", false) == KEY_EXACT && !path && s[it.val] == '"') {
			p = strndup(s + it.val + 1, it.end - it.val - 2);
			/* Escapes or NUL: not what nsguard writes. */
			path = p && !strpbrk(p, "\\") && e->is_self(p, e->data);
			free(p);
			if (!path)
				return false;
			continue;
		}
		if (key_match(s, n, it.key, "args", false) == KEY_EXACT && !args && s[it.val] == '[') {
			size_t k = 0;

			a = walk_start(s, n, it.val);
			for (; walk_next(&a, &arg); k++)
				if (k > 2 || !string_is(s, n, &arg, k < 2 ? want_args[k] : stage))
					return false;
			args = k == 3;
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
	struct edit ed[16]; /* root, hooks, 2 stages, one per annotation */
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
	cleanup_cjson cJSON *str = cJSON_CreateString(v);

	return str ? cJSON_PrintUnformatted(str) : NULL;
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
	char *members = NULL, *path = quote(e->hook_path);
	bool oom = false;
	int r;

	if (!path)
		return -ENOMEM;
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
		hook = fmt("{\"path\":%s,\"args\":[\"nsguard\",\"hook\",\"%s\"],\"timeout\":30}",
			   path, stages[k].name);
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
	if (memchr(in, '\0', len))
		return nsg_fail(EINVAL, "config.json contains a NUL byte");
	{
		const char *end = NULL;
		cleanup_cjson cJSON *doc = cJSON_ParseWithLengthOpts(in, len, &end, false);

		/* Nothing after it either: runc's decoder refuses what cJSON ignores. */
		if (!cJSON_IsObject(doc) || ws(in, len, end - in) != len)
			return nsg_fail(EINVAL, "config.json is not a JSON object");
	}
	root.val = ws(in, len, 0);
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
	{
		/* What we wrote must parse, or the runtime gets nothing. */
		cleanup_cjson cJSON *doc = cJSON_ParseWithLength(text, o);

		if (!cJSON_IsObject(doc)) {
			free(text);
			r = nsg_fail(EPROTO, "config.json: the edited document does not parse");
			goto done;
		}
	}
	*out = text;
done:
	for (size_t k = 0; k < p.n; k++)
		free(p.ed[k].text);
	return r;
}
