// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * One pass over a document that nsguard and a runtime both read
 * (jsonstrict.h): the grammar with an explicit stack, strings byte by byte,
 * and each object's keys in one hash table keyed by (object, folded key).
 * Linear in the size of the document, a few allocations in all.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>

#include "jsonstrict.h"
#include "jv.h"
#include "log.h"

uint32_t json_fold_rune(uint32_t r)
{
	if (r >= 'A' && r <= 'Z')
		return r + ('a' - 'A');
	if (r == 0x17f) /* LATIN SMALL LETTER LONG S */
		return 's';
	if (r == 0x212a) /* KELVIN SIGN */
		return 'k';
	return r;
}

/* The rune at s[*i] of valid UTF-8, *i moved past it. */
static uint32_t next_rune(const unsigned char *s, size_t *i)
{
	unsigned c = s[*i];
	uint32_t r;
	int more;

	(*i)++;
	if (c < 0x80)
		return c;
	more = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : 1;
	r = c & (0x3f >> more);
	while (more-- > 0)
		r = (r << 6) | (s[(*i)++] & 0x3f);
	return r;
}

bool json_fold_equal(const char *a, size_t alen, const char *b, size_t blen)
{
	const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;
	size_t i = 0, j = 0;

	while (i < alen && j < blen)
		if (json_fold_rune(next_rune(x, &i)) != json_fold_rune(next_rune(y, &j)))
			return false;
	return i == alen && j == blen;
}

/*
 * FNV-1a from a random start: a tenant who cannot predict it cannot fill
 * one chain of the table with keys made to collide.
 */
static uint32_t seed;

void json_reseed(void)
{
	seed = 0;
}

static uint32_t hash_seed(void)
{
	if (!seed && getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != sizeof(seed))
		seed = (uint32_t)(uintptr_t)&seed ^ (uint32_t)getpid();
	seed |= 1;
	return seed;
}

static uint32_t fold_hash(const char *k, size_t len, uint32_t obj)
{
	const unsigned char *s = (const unsigned char *)k;
	uint32_t h = (2166136261u ^ hash_seed()) + obj * 16777619u;
	size_t i = 0;

	while (i < len)
		h = (h ^ json_fold_rune(next_rune(s, &i))) * 16777619u;
	/*
	 * FNV's low bits depend only on the runes' low bits, so keys made to
	 * agree there would share one chain whatever the seed: mix every bit
	 * into every bit before the table takes the low ones (murmur3's fmix32).
	 */
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

size_t json_string_decode(const char *str, size_t n, size_t i, char *out, size_t cap)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t len = 0, k, w, took;
	uint32_t r;
	char u[4];

	for (i++; i < n && s[i] != '"';) {
		if (s[i] != '\\') {
			if (len < cap)
				out[len] = (char)s[i];
			len++;
			i++;
			continue;
		}
		/* A checked document: every escape is whole and valid. */
		r = 0;
		took = 2;
		if (s[i + 1] == 'u')
			jv_unescape_u(str, n, i, &r, &took);
		else if (s[i + 1] < 128)
			r = jv_unescape[s[i + 1]];
		i += took;
		w = jv_put_utf8(u, r);
		for (k = 0; k < w; k++, len++)
			if (len < cap)
				out[len] = u[k];
	}
	return len;
}

/* A key of an object, decoded, in the arena. */
struct key_ent {
	uint32_t obj, hash;
	size_t off, len; /* decoded bytes in the arena */
	size_t at; /* its '"' in the document */
};

struct frame {
	bool object;
	uint32_t id;
};

struct checker {
	const unsigned char *s;
	size_t n;
	const char *what;
	const char *const *names;
	char *arena;
	size_t used;
	struct key_ent *tab; /* open addressing; len 0 = free */
	size_t cap, count;
	uint32_t objects;
};

static int bad(struct checker *c, size_t at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int bad(struct checker *c, size_t at, const char *fmt, ...)
{
	char why[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return nsg_fail(EINVAL, "%s: byte %zu: %s", c->what, at, why);
}

/* The key at s[at] as written (escapes kept: no control byte reaches a message). */
static int key_len(const struct checker *c, size_t at)
{
	size_t i = at + 1, len;

	while (c->s[i] != '"')
		i += c->s[i] == '\\' ? 2 : 1;
	len = i - at - 1;
	if (len > 64) /* cut at 64 bytes, on a character's start */
		for (len = 64; (c->s[at + 1 + len] & 0xc0) == 0x80; len--)
			;
	return (int)len;
}
#define KEY_FMT "\"%.*s\""
#define KEY_ARG(c, at) key_len(c, at), (const char *)(c)->s + (at) + 1

/* The length of the UTF-8 sequence at s[i], exactly as Go's utf8.Valid; 0 and *why if none. */
static size_t utf8_seq(const unsigned char *s, size_t n, size_t i, const char **why)
{
	unsigned c = s[i], lo = 0x80, hi = 0xbf;
	size_t len;

	if (c < 0x80)
		return 1;
	if (c < 0xc0) {
		*why = "a continuation byte without a lead byte";
		return 0;
	}
	if (c < 0xc2) {
		*why = "an overlong encoding";
		return 0;
	}
	if (c >= 0xf5) {
		*why = "a byte that UTF-8 never uses";
		return 0;
	}
	len = c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	for (size_t k = 1; k < len; k++) {
		unsigned b = i + k < n ? s[i + k] : 0;

		if (b < 0x80 || b > 0xbf) {
			*why = "a truncated sequence";
			return 0;
		}
		if (k == 1 && (b < lo || b > hi)) {
			*why = c == 0xed ? "a UTF-16 surrogate encoded in UTF-8" :
			       c == 0xf4 ? "a code point above U+10FFFF" :
					   "an overlong encoding";
			return 0;
		}
	}
	return len;
}

static int grow(struct checker *c)
{
	size_t cap = c->cap ? c->cap * 2 : 64;
	struct key_ent *t = calloc(cap, sizeof(*t));

	if (!t)
		return nsg_fail(ENOMEM, "%s: out of memory", c->what);
	for (size_t k = 0; k < c->cap; k++) {
		size_t h;

		if (!c->tab[k].at)
			continue;
		for (h = c->tab[k].hash & (cap - 1); t[h].at; h = (h + 1) & (cap - 1))
			;
		t[h] = c->tab[k];
	}
	free(c->tab);
	c->tab = t;
	c->cap = cap;
	return 0;
}

/*
 * The key just decoded at arena[off..off+len], its '"' at s[at], in object
 * obj: not a folded reader's name, not twice.  (at > 0 always: marks a used slot.)
 */
static int add_key(struct checker *c, uint32_t obj, size_t at, size_t off, size_t len)
{
	const char *k = c->arena + off;
	struct key_ent e = { .obj = obj, .off = off, .len = len, .at = at };
	size_t h;
	int err;

	size_t i0 = 0;
	uint32_t first = len ? json_fold_rune(next_rune((const unsigned char *)k, &i0)) : 0;

	for (const char *const *name = c->names; name && *name; name++) {
		size_t nlen;

		if (json_fold_rune((unsigned char)**name) != first) /* most keys end here */
			continue;
		nlen = strlen(*name);
		if (json_fold_equal(k, len, *name, nlen) && !(len == nlen && !memcmp(k, *name, len)))
			return bad(c, at, "key " KEY_FMT " is \"%s\" to runc, which folds case: write it so",
				   KEY_ARG(c, at), *name);
	}
	if ((c->count + 1) * 2 > c->cap) {
		err = grow(c);
		if (err < 0)
			return err;
	}
	e.hash = fold_hash(k, len, obj);
	for (h = e.hash & (c->cap - 1); c->tab[h].at; h = (h + 1) & (c->cap - 1)) {
		const struct key_ent *o = &c->tab[h];
		const char *ok = c->arena + o->off;

		if (o->obj != obj || o->hash != e.hash || !json_fold_equal(ok, o->len, k, len))
			continue;
		if (o->len == len && !memcmp(ok, k, len))
			return bad(c, at,
				   "key " KEY_FMT " is given twice (runc takes the last, crun the first)",
				   KEY_ARG(c, at));
		return bad(c, at, "keys " KEY_FMT " and " KEY_FMT " are one key to runc, which folds case",
			   KEY_ARG(c, o->at), KEY_ARG(c, at));
	}
	c->tab[h] = e;
	c->count++;
	return 0;
}

/*
 * The string whose '"' is at s[i]; *end past its closing '"'.  A key
 * (obj != 0) is decoded into the arena and checked against its object's.
 */
static int string(struct checker *c, size_t i, size_t *end, uint32_t obj)
{
	const unsigned char *s = c->s;
	size_t at = i, off = c->used, len;
	const char *why = NULL;
	uint32_t r;
	char u[4];

	for (i++;;) {
		/* The common run first: printable ASCII that is neither '"' nor '\\'. */
		size_t run = i;

		while (run < c->n && jv_plain[s[run]])
			run++;
		if (obj)
			memcpy(c->arena + c->used, s + i, run - i);
		c->used += obj ? run - i : 0;
		i = run;
		if (i >= c->n)
			return bad(c, at, "a string that never ends");
		r = s[i];
		if (r == '"')
			break;
		if (r == 0)
			return bad(c, i, "a NUL byte");
		if (r < 0x20)
			return bad(c, i, "control byte 0x%02x in a string (JSON wants an escape)", r);
		if (r >= 0x80) {
			len = utf8_seq(s, c->n, i, &why);
			if (!len)
				return bad(c, i, "invalid UTF-8 (%s): runc reads U+FFFD, crun the raw bytes",
					   why);
			if (obj)
				memcpy(c->arena + c->used, s + i, len);
			c->used += obj ? len : 0;
			i += len;
			continue;
		}
		if (r == '\\') {
			unsigned e = i + 1 < c->n ? s[i + 1] : 0;
			size_t took = 2;
			int err = 0;

			if (e == 'u')
				err = jv_unescape_u((const char *)s, c->n, i, &r, &took);
			else if (e < 128 && jv_unescape[e])
				r = jv_unescape[e];
			else if (e > 0x20 && e < 0x7f)
				return bad(c, i, "an invalid escape \\%c", e);
			else
				return bad(c, i, "an invalid escape (byte 0x%02x after \\)", e);
			if (err == -EINVAL)
				return bad(c, i, "a \\u escape without four hex digits");
			if (err == -ERANGE)
				return bad(c, i, "a \\u0000 escape (a C string ends there)");
			if (err == -EILSEQ)
				return bad(c, i, "a \\u escape of a lone UTF-16 surrogate "
						 "(runc reads U+FFFD)");
			i += took;
		} else {
			i++;
		}
		if (obj) {
			len = jv_put_utf8(u, r);
			memcpy(c->arena + c->used, u, len);
			c->used += len;
		}
	}
	*end = i + 1;
	return obj ? add_key(c, obj, at, off, c->used - off) : 0;
}

static size_t digits(const unsigned char *s, size_t n, size_t i)
{
	while (i < n && s[i] >= '0' && s[i] <= '9')
		i++;
	return i;
}

/* A number as RFC 8259 (and Go) has it; *end past it. */
static int number(struct checker *c, size_t i, size_t *end)
{
	const unsigned char *s = c->s;
	size_t at = i, j;

	if (s[i] == '-')
		i++;
	if (i < c->n && s[i] == '0')
		i++;
	else if (i < c->n && s[i] >= '1' && s[i] <= '9')
		i = digits(s, c->n, i);
	else
		return bad(c, at, "a number without digits");
	if (i < c->n && s[i] == '.') {
		j = digits(s, c->n, i + 1);
		if (j == i + 1)
			return bad(c, at, "a number with no digit after '.'");
		i = j;
	}
	if (i < c->n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < c->n && (s[i] == '+' || s[i] == '-'))
			i++;
		j = digits(s, c->n, i);
		if (j == i)
			return bad(c, at, "a number with no digit in its exponent");
		i = j;
	}
	*end = i;
	return 0;
}

static size_t ws(const struct checker *c, size_t i)
{
	while (i < c->n && (c->s[i] == ' ' || c->s[i] == '\t' || c->s[i] == '\r' || c->s[i] == '\n'))
		i++;
	return i;
}

/* What is at s[i] instead of what belongs there. */
static int unexpected(struct checker *c, size_t i, const char *want)
{
	unsigned ch = i < c->n ? c->s[i] : 0;

	if (i >= c->n)
		return bad(c, i, "the document ends where %s belongs", want);
	if (ch == 0)
		return bad(c, i, "a NUL byte");
	if (ch < 0x20 || ch == 0x7f)
		return bad(c, i,
			   "control byte 0x%02x outside a string (JSON's whitespace is space, tab, "
			   "CR and LF; crun skips more)",
			   ch);
	if (ch == 0xef && i + 2 < c->n && c->s[i + 1] == 0xbb && c->s[i + 2] == 0xbf)
		return bad(c, i, "a byte order mark (runc refuses it)");
	if (ch >= 0x80)
		return bad(c, i, "byte 0x%02x outside a string where %s belongs", ch, want);
	return bad(c, i, "'%c' where %s belongs", ch, want);
}

static int check(struct checker *c)
{
	struct frame stack[JSON_STRICT_DEPTH_MAX];
	size_t depth = 0, i = 0, end;
	int err;

	for (;;) {
		/* A value at i. */
		i = ws(c, i);
		if (i >= c->n)
			return unexpected(c, i, "a value");
		switch (c->s[i]) {
		case '{':
		case '[':
			if (depth == JSON_STRICT_DEPTH_MAX)
				return bad(c, i, "more than %d nested objects and arrays",
					   JSON_STRICT_DEPTH_MAX);
			stack[depth].object = c->s[i] == '{';
			stack[depth].id = stack[depth].object ? ++c->objects : 0;
			depth++;
			i = ws(c, i + 1);
			if (i < c->n && c->s[i] == (stack[depth - 1].object ? '}' : ']')) {
				depth--;
				i++;
				break;
			}
			if (!stack[depth - 1].object)
				continue; /* the first element */
			goto key;
		case '"':
			err = string(c, i, &end, 0);
			if (err < 0)
				return err;
			i = end;
			break;
		case 't':
		case 'f':
		case 'n': {
			const char *lit = c->s[i] == 't' ? "true" : c->s[i] == 'f' ? "false" : "null";
			size_t l = strlen(lit);

			if (c->n - i < l || memcmp(c->s + i, lit, l))
				return unexpected(c, i, "a value");
			i += l;
			break;
		}
		default:
			if (c->s[i] != '-' && (c->s[i] < '0' || c->s[i] > '9'))
				return unexpected(c, i, "a value");
			err = number(c, i, &end);
			if (err < 0)
				return err;
			i = end;
			break;
		}
		/* After a value: the next member or element, or the end of a container. */
		for (;;) {
			i = ws(c, i);
			if (depth == 0) {
				if (i < c->n && c->s[i] > 0x20 && c->s[i] < 0x7f)
					return bad(c, i, "trailing data after the document");
				if (i < c->n)
					return unexpected(c, i, "the end of the document");
				return 0;
			}
			if (i < c->n && c->s[i] == (stack[depth - 1].object ? '}' : ']')) {
				depth--;
				i++;
				continue;
			}
			if (i >= c->n || c->s[i] != ',')
				return unexpected(c, i, stack[depth - 1].object ? "',' or '}'" : "',' or ']'");
			i = ws(c, i + 1);
			break;
		}
		if (!stack[depth - 1].object)
			continue;
key:
		if (i >= c->n || c->s[i] != '"')
			return unexpected(c, i, "a key");
		err = string(c, i, &end, stack[depth - 1].id);
		if (err < 0)
			return err;
		i = ws(c, end);
		if (i >= c->n || c->s[i] != ':')
			return unexpected(c, i, "':'");
		i++;
	}
}

int json_strict_check(const char *buf, size_t len, const char *what, const char *const *names)
{
	struct checker c = { .s = (const unsigned char *)buf, .n = len, .what = what, .names = names };
	int err;

	/* Decoded keys never take more bytes than they are written in. */
	c.arena = malloc(len + 1);
	if (!c.arena)
		return nsg_fail(ENOMEM, "%s: out of memory", what);
	err = check(&c);
	free(c.arena);
	free(c.tab);
	return err;
}
