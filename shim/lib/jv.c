// SPDX-License-Identifier: GPL-2.0-or-later
/* JSON values: parse into an arena, build node by node, format (jv.h). */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jv.h"

/* As json_strict_check's limit: deeper documents never reach the parser. */
#define JV_DEPTH_MAX 512

/* 0x22 is '"', 0x5c '\\'. */
const unsigned char jv_plain[256] = { [0x20 ... 0x21] = 1, [0x23 ... 0x5b] = 1,
				      [0x5d ... 0x7e] = 1 };

/* A parsed document's memory: chunks, the first holding the root. */
struct jv_arena {
	struct jv_arena *next;
	size_t used, cap;
	struct jv root;
	char mem[];
};

static struct jv_arena *arena_of(struct jv *root)
{
	return (struct jv_arena *)((char *)root - offsetof(struct jv_arena, root));
}

struct parser {
	const char *s;
	size_t n, i;
	struct jv_arena *first, *cur;
	int depth;
};

static struct jv_arena *chunk_new(size_t cap)
{
	struct jv_arena *a = malloc(sizeof(*a) + cap);

	if (a) {
		a->next = NULL;
		a->used = 0;
		a->cap = cap;
	}
	return a;
}

static void *palloc(struct parser *p, size_t size, size_t align)
{
	struct jv_arena *a = p->cur;
	size_t at = (a->used + align - 1) & ~(align - 1);

	if (at + size > a->cap) {
		size_t cap = a->cap * 2;

		if (cap < size)
			cap = size;
		a = chunk_new(cap);
		if (!a)
			return NULL;
		a->next = p->first->next;
		p->first->next = a;
		p->cur = a;
		at = 0;
	}
	a->used = at + size;
	return a->mem + at;
}

static struct jv *pnode(struct parser *p, int type)
{
	struct jv *v = palloc(p, sizeof(*v), _Alignof(struct jv));

	if (v) {
		memset(v, 0, sizeof(*v));
		v->type = type;
	}
	return v;
}

static void skip_ws(struct parser *p)
{
	while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' ||
			       p->s[p->i] == '\r'))
		p->i++;
}

int jv_hex4(const char *s, size_t n, size_t at, uint32_t *out)
{
	uint32_t v = 0;

	if (at + 4 > n)
		return -EINVAL;
	for (size_t k = at; k < at + 4; k++) {
		char c = s[k];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -EINVAL;
	}
	*out = v;
	return 0;
}

const unsigned char jv_unescape[128] = {
	['"'] = '"', ['\\'] = '\\', ['/'] = '/', ['b'] = '\b',
	['f'] = '\f', ['n'] = '\n', ['r'] = '\r', ['t'] = '\t',
};

int jv_unescape_u(const char *s, size_t n, size_t at, uint32_t *r, size_t *took)
{
	uint32_t hi, lo;

	if (jv_hex4(s, n, at + 2, &hi) < 0)
		return -EINVAL;
	if (hi == 0)
		return -ERANGE;
	*took = 6;
	if (hi >= 0xd800 && hi < 0xdc00 && at + 12 <= n && s[at + 6] == '\\' &&
	    s[at + 7] == 'u' && jv_hex4(s, n, at + 8, &lo) == 0 && lo >= 0xdc00 && lo < 0xe000) {
		*r = 0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00);
		*took = 12;
		return 0;
	}
	if (hi >= 0xd800 && hi < 0xe000)
		return -EILSEQ;
	*r = hi;
	return 0;
}

size_t jv_put_utf8(char *o, uint32_t r)
{
	if (r < 0x80) {
		o[0] = r;
		return 1;
	}
	if (r < 0x800) {
		o[0] = 0xc0 | (r >> 6);
		o[1] = 0x80 | (r & 0x3f);
		return 2;
	}
	if (r < 0x10000) {
		o[0] = 0xe0 | (r >> 12);
		o[1] = 0x80 | ((r >> 6) & 0x3f);
		o[2] = 0x80 | (r & 0x3f);
		return 3;
	}
	o[0] = 0xf0 | (r >> 18);
	o[1] = 0x80 | ((r >> 12) & 0x3f);
	o[2] = 0x80 | ((r >> 6) & 0x3f);
	o[3] = 0x80 | (r & 0x3f);
	return 4;
}

/* The string at p->i (its '"'), decoded into the arena (never longer than its text). */
static int parse_string(struct parser *p, const char **out)
{
	size_t start = ++p->i, end = start;
	bool escaped = false;
	char *o, *d;

	for (;; end++) {
		while (end < p->n && jv_plain[(unsigned char)p->s[end]])
			end++;
		if (end >= p->n)
			return -EINVAL;
		if (p->s[end] == '"')
			break;
		if ((unsigned char)p->s[end] < 0x20)
			return -EINVAL;
		if (p->s[end] == '\\') {
			escaped = true;
			end++;
		}
	}
	o = d = palloc(p, end - start + 1, 1);
	if (!o)
		return -ENOMEM;
	if (!escaped) { /* most strings: a copy */
		memcpy(o, p->s + start, end - start);
		o[end - start] = '\0';
		p->i = end + 1;
		*out = o;
		return 0;
	}
	for (size_t i = start; i < end;) {
		unsigned char c = p->s[i];
		size_t took = 2;
		uint32_t r;

		if (c != '\\') {
			*d++ = c;
			i++;
			continue;
		}
		c = p->s[i + 1];
		if (c == 'u') {
			/* Within the string: its end is no hex digit either. */
			if (jv_unescape_u(p->s, end, i, &r, &took) < 0)
				return -EINVAL;
			d += jv_put_utf8(d, r);
		} else if (c < 128 && jv_unescape[c]) {
			*d++ = jv_unescape[c];
		} else {
			return -EINVAL;
		}
		i += took;
	}
	*d = '\0';
	p->i = end + 1;
	*out = o;
	return 0;
}

static int parse_number(struct parser *p, double *out)
{
	size_t start = p->i, i = p->i, len;
	char small[64], *buf = small;

#define DIGITS(at) ((at) < p->n && p->s[at] >= '0' && p->s[at] <= '9')
	if (i < p->n && p->s[i] == '-')
		i++;
	if (i < p->n && p->s[i] == '0')
		i++;
	else if (DIGITS(i))
		while (DIGITS(i))
			i++;
	else
		return -EINVAL;
	if (i < p->n && p->s[i] == '.') {
		i++;
		if (!DIGITS(i))
			return -EINVAL;
		while (DIGITS(i))
			i++;
	}
	if (i < p->n && (p->s[i] == 'e' || p->s[i] == 'E')) {
		i++;
		if (i < p->n && (p->s[i] == '+' || p->s[i] == '-'))
			i++;
		if (!DIGITS(i))
			return -EINVAL;
		while (DIGITS(i))
			i++;
	}
#undef DIGITS
	len = i - start;
	/* strtod wants a terminated string: never let it see past len. */
	if (len >= sizeof(small)) {
		buf = malloc(len + 1);
		if (!buf)
			return -ENOMEM;
	}
	memcpy(buf, p->s + start, len);
	buf[len] = '\0';
	*out = strtod(buf, NULL);
	if (buf != small)
		free(buf);
	/* Beyond a double: nothing could print it back. */
	if (isinf(*out))
		return -ERANGE;
	p->i = i;
	return 0;
}

static int parse_value(struct parser *p, struct jv **out, const struct jv_only *only);

/*
 * Past the value at p->i without building it: its strings, and its
 * brackets matched, within the depth limit.  The rest of its grammar is
 * json_strict_check's (jv.h); never past p->n.
 */
static int skip_value(struct parser *p)
{
	char open[JV_DEPTH_MAX];
	size_t depth = 0;

	for (;;) {
		if (p->i >= p->n)
			return -EINVAL;
		switch (p->s[p->i]) {
		case '"':
			for (p->i++; p->i < p->n && p->s[p->i] != '"';) {
				p->i += p->s[p->i] == '\\' ? 2 : 1;
				while (p->i < p->n && jv_plain[(unsigned char)p->s[p->i]])
					p->i++;
			}
			if (p->i >= p->n)
				return -EINVAL;
			p->i++;
			break;
		case '{':
		case '[':
			if (p->depth + depth >= JV_DEPTH_MAX)
				return -EINVAL;
			open[depth++] = p->s[p->i] == '{' ? '}' : ']';
			p->i++;
			continue;
		case '}':
		case ']':
			if (depth == 0)
				return 0; /* the end of the container around a scalar */
			if (p->s[p->i] != open[--depth])
				return -EINVAL;
			p->i++;
			break;
		case ',':
		case ' ':
		case '\t':
		case '\n':
		case '\r':
			if (depth == 0)
				return 0;
			p->i++;
			continue;
		default:
			p->i++;
			continue;
		}
		if (depth == 0)
			return 0;
	}
}

static const struct jv_only *only_find(const struct jv_only *only, const char *key)
{
	for (; only->key; only++)
		if (strcmp(only->key, key) == 0)
			return only;
	return NULL;
}

static void link_child(struct jv *parent, struct jv *v)
{
	if (parent->last)
		parent->last->next = v;
	else
		parent->child = v;
	parent->last = v;
}

/* An object or array at p->i, into v; in an object, only's members (NULL: all). */
static int parse_members(struct parser *p, struct jv *v, const struct jv_only *only)
{
	bool object = v->type == JV_OBJECT;
	char close = object ? '}' : ']';
	int err;

	if (++p->depth > JV_DEPTH_MAX)
		return -EINVAL;
	p->i++;
	skip_ws(p);
	if (p->i < p->n && p->s[p->i] == close) {
		p->i++;
		p->depth--;
		return 0;
	}
	for (;;) {
		const struct jv_only *keep = NULL;
		const char *key = NULL;
		struct jv *m = NULL;

		if (object) {
			if (p->i >= p->n || p->s[p->i] != '"')
				return -EINVAL;
			err = parse_string(p, &key);
			if (err)
				return err;
			skip_ws(p);
			if (p->i >= p->n || p->s[p->i] != ':')
				return -EINVAL;
			p->i++;
			skip_ws(p);
			keep = only ? only_find(only, key) : NULL;
		}
		if (object && only && !keep)
			err = skip_value(p);
		else
			err = parse_value(p, &m, keep ? keep->below : only);
		if (err)
			return err;
		if (m) {
			m->key = key;
			link_child(v, m);
		}
		skip_ws(p);
		if (p->i >= p->n)
			return -EINVAL;
		if (p->s[p->i] == close)
			break;
		if (p->s[p->i] != ',')
			return -EINVAL;
		p->i++;
		skip_ws(p);
	}
	p->i++;
	p->depth--;
	return 0;
}

static int literal(struct parser *p, const char *word)
{
	size_t n = strlen(word);

	if (p->n - p->i < n || memcmp(p->s + p->i, word, n) != 0)
		return -EINVAL;
	p->i += n;
	return 0;
}

/* The value at p->i (no whitespace before it). */
static int parse_value(struct parser *p, struct jv **out, const struct jv_only *only)
{
	struct jv *v;
	int err;

	if (p->i >= p->n)
		return -EINVAL;
	switch (p->s[p->i]) {
	case '{':
		v = pnode(p, JV_OBJECT);
		err = v ? parse_members(p, v, only) : -ENOMEM;
		break;
	case '[':
		v = pnode(p, JV_ARRAY);
		err = v ? parse_members(p, v, only) : -ENOMEM;
		break;
	case '"':
		v = pnode(p, JV_STRING);
		err = v ? parse_string(p, &v->str) : -ENOMEM;
		break;
	case 't':
		v = pnode(p, JV_TRUE);
		err = v ? literal(p, "true") : -ENOMEM;
		break;
	case 'f':
		v = pnode(p, JV_FALSE);
		err = v ? literal(p, "false") : -ENOMEM;
		break;
	case 'n':
		v = pnode(p, JV_NULL);
		err = v ? literal(p, "null") : -ENOMEM;
		break;
	default:
		v = pnode(p, JV_NUMBER);
		err = v ? parse_number(p, &v->num) : -ENOMEM;
		break;
	}
	*out = v;
	return err;
}

static void free_arena(struct jv_arena *a)
{
	while (a) {
		struct jv_arena *next = a->next;

		free(a);
		a = next;
	}
}

struct jv *jv_parse(const char *buf, size_t len)
{
	return jv_parse_only(buf, len, NULL);
}

struct jv *jv_parse_only(const char *buf, size_t len, const struct jv_only *only)
{
	/* Most documents fit the first chunk: a 48-byte node per ~25 bytes of text. */
	struct parser p = { .s = buf, .n = len, .first = chunk_new(3 * len + 256) };
	struct jv *top, *root;
	int err;

	if (!p.first) {
		errno = ENOMEM;
		return NULL;
	}
	p.cur = p.first;
	skip_ws(&p);
	err = parse_value(&p, &top, only);
	skip_ws(&p);
	if (!err && p.i != p.n)
		err = -EINVAL;
	if (err) {
		free_arena(p.first);
		errno = -err;
		return NULL;
	}
	/* The root lives in the first chunk's header, where jv_free finds the arena. */
	root = &p.first->root;
	*root = *top;
	root->own = JV_OWN_ARENA;
	return root;
}

static void free_tree(struct jv *v)
{
	struct jv *c = v->child;

	while (c) {
		struct jv *next = c->next;

		free_tree(c);
		c = next;
	}
	if (v->own & JV_OWN_KEY)
		free((char *)v->key);
	if (v->type == JV_STRING && (v->own & JV_OWN_STR))
		free((char *)v->str);
	if (v->own & JV_OWN_ARENA)
		free_arena(arena_of(v));
	else if (v->own & JV_OWN_NODE)
		free(v);
}

void jv_free(struct jv *v)
{
	if (v)
		free_tree(v);
}

struct jv *jv_get(const struct jv *obj, const char *key)
{
	struct jv *it;

	if (!jv_is_object(obj))
		return NULL;
	jv_for_each(it, obj)
		if (strcmp(it->key, key) == 0)
			return it;
	return NULL;
}

size_t jv_count(const struct jv *v)
{
	const struct jv *it;
	size_t n = 0;

	jv_for_each(it, v)
		n++;
	return n;
}

static struct jv *new_node(int type)
{
	struct jv *v = calloc(1, sizeof(*v));

	if (v) {
		v->type = type;
		v->own = JV_OWN_NODE;
	}
	return v;
}

struct jv *jv_new_object(void)
{
	return new_node(JV_OBJECT);
}

struct jv *jv_new_array(void)
{
	return new_node(JV_ARRAY);
}

struct jv *jv_new_string(const char *s)
{
	struct jv *v = new_node(JV_STRING);

	if (!v)
		return NULL;
	v->str = strdup(s);
	if (!v->str) {
		free(v);
		return NULL;
	}
	v->own |= JV_OWN_STR;
	return v;
}

struct jv *jv_new_string_array(const char *const *s, size_t n)
{
	struct jv *a = jv_new_array();

	for (size_t i = 0; a && i < n; i++) {
		struct jv *e = jv_new_string(s[i]);

		if (!jv_append(a, e)) {
			jv_free(e);
			jv_free(a);
			a = NULL;
		}
	}
	return a;
}

bool jv_add(struct jv *obj, const char *key, struct jv *item)
{
	char *k;

	if (!jv_is_object(obj) || !item)
		return false;
	k = strdup(key);
	if (!k)
		return false;
	if (item->own & JV_OWN_KEY)
		free((char *)item->key);
	item->key = k;
	item->own |= JV_OWN_KEY;
	item->next = NULL;
	link_child(obj, item);
	return true;
}

bool jv_append(struct jv *arr, struct jv *item)
{
	if (!jv_is_array(arr) || !item)
		return false;
	item->next = NULL;
	link_child(arr, item);
	return true;
}

bool jv_add_take(struct jv *obj, const char *key, struct jv *item)
{
	if (!jv_add(obj, key, item)) {
		jv_free(item);
		return false;
	}
	return true;
}

static struct jv *add_new(struct jv *obj, const char *key, struct jv *item)
{
	return jv_add_take(obj, key, item) ? item : NULL;
}

struct jv *jv_add_string(struct jv *obj, const char *key, const char *s)
{
	return add_new(obj, key, jv_new_string(s));
}

struct jv *jv_add_number(struct jv *obj, const char *key, double n)
{
	struct jv *v = new_node(JV_NUMBER);

	if (v)
		v->num = n;
	return add_new(obj, key, v);
}

struct jv *jv_add_bool(struct jv *obj, const char *key, bool b)
{
	return add_new(obj, key, new_node(b ? JV_TRUE : JV_FALSE));
}

struct jv *jv_add_null(struct jv *obj, const char *key)
{
	return add_new(obj, key, new_node(JV_NULL));
}

struct jv *jv_add_object(struct jv *obj, const char *key)
{
	return add_new(obj, key, new_node(JV_OBJECT));
}

struct jv *jv_add_array(struct jv *obj, const char *key)
{
	return add_new(obj, key, new_node(JV_ARRAY));
}

void jv_remove(struct jv *obj, const char *key)
{
	struct jv *prev = NULL, *it;

	if (!jv_is_object(obj))
		return;
	for (it = obj->child; it; prev = it, it = it->next)
		if (strcmp(it->key, key) == 0)
			break;
	if (!it)
		return;
	if (prev)
		prev->next = it->next;
	else
		obj->child = it->next;
	if (obj->last == it)
		obj->last = prev;
	it->next = NULL;
	free_tree(it);
}

bool jv_equal(const struct jv *a, const struct jv *b)
{
	const struct jv *x, *y;

	if (!a || !b || a->type != b->type)
		return false;
	switch (a->type) {
	case JV_NUMBER:
		return a->num == b->num;
	case JV_STRING:
		return strcmp(a->str, b->str) == 0;
	case JV_ARRAY:
		for (x = a->child, y = b->child; x && y; x = x->next, y = y->next)
			if (!jv_equal(x, y))
				return false;
		return !x && !y;
	case JV_OBJECT:
		if (jv_count(a) != jv_count(b))
			return false;
		/* In the same order (a key given twice compares too), else key by key. */
		for (x = a->child, y = b->child; x && y; x = x->next, y = y->next)
			if (strcmp(x->key, y->key) != 0 || !jv_equal(x, y))
				break;
		if (!x)
			return true;
		jv_for_each(x, a)
			if (!jv_equal(x, jv_get(b, x->key)))
				return false;
		jv_for_each(y, b)
			if (!jv_get(a, y->key))
				return false;
		return true;
	default:
		return true;
	}
}

struct out {
	char *p;
	size_t len, cap;
	bool oom;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->oom)
		return;
	if (o->len + n + 1 > o->cap) {
		size_t cap = o->cap ? o->cap : 256;
		char *p;

		while (cap < o->len + n + 1)
			cap *= 2;
		p = realloc(o->p, cap);
		if (!p) {
			o->oom = true;
			return;
		}
		o->p = p;
		o->cap = cap;
	}
	memcpy(o->p + o->len, s, n);
	o->len += n;
	o->p[o->len] = '\0';
}

static void puts_(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

static void put_tabs(struct out *o, unsigned n)
{
	while (n--)
		put(o, "\t", 1);
}

static void put_string(struct out *o, const char *s)
{
	/* jv_unescape backwards, but '/', which is written as it is. */
	static const char letter[128] = {
		['"'] = '"', ['\\'] = '\\', ['\b'] = 'b', ['\f'] = 'f',
		['\n'] = 'n', ['\r'] = 'r', ['\t'] = 't',
	};
	const char *plain = s;

	put(o, "\"", 1);
	for (; *s; s++) {
		unsigned char c = *s;
		char esc[8];

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		put(o, plain, s - plain);
		plain = s + 1;
		if (letter[c])
			snprintf(esc, sizeof(esc), "\\%c", letter[c]);
		else
			snprintf(esc, sizeof(esc), "\\u%04x", c);
		puts_(o, esc);
	}
	put(o, plain, s - plain);
	put(o, "\"", 1);
}

static void put_number(struct out *o, double d)
{
	char buf[32];

	if (isnan(d) || isinf(d))
		strcpy(buf, "null");
	else if (d == 0)
		strcpy(buf, "0");
	else if (d == trunc(d) && fabs(d) < 9007199254740992.0)
		snprintf(buf, sizeof(buf), "%.0f", d);
	else {
		snprintf(buf, sizeof(buf), "%1.15g", d);
		if (strtod(buf, NULL) != d)
			snprintf(buf, sizeof(buf), "%1.17g", d);
	}
	puts_(o, buf);
}

static void put_value(struct out *o, const struct jv *v, unsigned depth, bool pretty)
{
	const struct jv *it;

	switch (v->type) {
	case JV_NULL:
		puts_(o, "null");
		break;
	case JV_FALSE:
		puts_(o, "false");
		break;
	case JV_TRUE:
		puts_(o, "true");
		break;
	case JV_NUMBER:
		put_number(o, v->num);
		break;
	case JV_STRING:
		put_string(o, v->str);
		break;
	case JV_ARRAY:
		put(o, "[", 1);
		jv_for_each(it, v) {
			put_value(o, it, depth + 1, pretty);
			if (it->next)
				puts_(o, pretty ? ", " : ",");
		}
		put(o, "]", 1);
		break;
	case JV_OBJECT:
		puts_(o, pretty ? "{\n" : "{");
		jv_for_each(it, v) {
			if (pretty)
				put_tabs(o, depth + 1);
			put_string(o, it->key);
			puts_(o, pretty ? ":\t" : ":");
			put_value(o, it, depth + 1, pretty);
			if (it->next)
				put(o, ",", 1);
			if (pretty)
				put(o, "\n", 1);
		}
		if (pretty)
			put_tabs(o, depth);
		put(o, "}", 1);
		break;
	}
}

static char *format(const struct jv *v, bool pretty)
{
	struct out o = { 0 };

	if (!v)
		return NULL;
	put_value(&o, v, 0, pretty);
	if (o.oom) {
		free(o.p);
		return NULL;
	}
	return o.p;
}

char *jv_format(const struct jv *v)
{
	return format(v, false);
}

char *jv_format_pretty(const struct jv *v)
{
	return format(v, true);
}
