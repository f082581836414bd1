/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jv: nsguard's own JSON values, so that the hook links nothing at run time
 * (Debian ships no static cJSON).  A parsed document lives in one arena (a
 * few allocations, whatever its size: on a Kubernetes config.json the
 * per-node allocations of a general parser were most of the hook's
 * instructions); a built one is a node per allocation.  The two mix:
 * jv_free of the root frees both.  Documents from a tenant are checked by
 * json_strict_check first; jv_parse itself takes JSON's grammar, its four
 * whitespace bytes and its escapes only, refuses "\u0000", lone surrogates
 * and numbers beyond a double, and never reads past len.  It does not check
 * UTF-8: bytes >= 0x80 in a string are kept as they are (records carry a
 * cgroup's name so, and print it back the same).
 */
#ifndef NSGUARD_JV_H
#define NSGUARD_JV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum jv_type { JV_NULL, JV_FALSE, JV_TRUE, JV_NUMBER, JV_STRING, JV_ARRAY, JV_OBJECT };

/* What jv_free frees of a node: its own allocations, or its document's arena. */
enum { JV_OWN_NODE = 1, JV_OWN_KEY = 2, JV_OWN_STR = 4, JV_OWN_ARENA = 8 };

/* 48 bytes: a parsed config.json is mostly nodes. */
struct jv {
	struct jv *next;  /* the next member or element */
	struct jv *child; /* the first member or element */
	struct jv *last;  /* the last one, for appending */
	const char *key;  /* the member's name in its object */
	union {
		const char *str; /* JV_STRING: NUL-terminated (no NUL inside) */
		double num;	 /* JV_NUMBER */
	};
	unsigned char type; /* enum jv_type */
	unsigned char own;  /* JV_OWN_* */
};

/*
 * 1 for the bytes a JSON string holds as they are, with no meaning to a
 * reader: printable ASCII but '"' and '\\'.  The scanners' common run.
 */
extern const unsigned char jv_plain[256];

/*
 * JSON's two-character escapes: the byte after the '\\' (below 128) -> the
 * byte it stands for; 0 for none ('u' is jv_unescape_u's).
 */
extern const unsigned char jv_unescape[128];
/*
 * The \u escape whose '\\' is s[at] (within n), a surrogate pair taken
 * whole: the rune in *r, the bytes it takes (6 or 12) in *took.  -EINVAL:
 * not four hex digits; -ERANGE: U+0000; -EILSEQ: a lone surrogate.  The one
 * reading of \u for jv and json_strict_check alike.
 */
int jv_unescape_u(const char *s, size_t n, size_t at, uint32_t *r, size_t *took);
/* The four hex digits at s[at] (within n) as a number: 0, or -EINVAL. */
int jv_hex4(const char *s, size_t n, size_t at, uint32_t *out);
/* r (at most U+10FFFF) as UTF-8 at o (room for 4): its length. */
size_t jv_put_utf8(char *o, uint32_t r);

/* The document in buf[0, len), or NULL with errno EINVAL, ERANGE (a number beyond a double) or ENOMEM. */
struct jv *jv_parse(const char *buf, size_t len);

/*
 * Which members of an object jv_parse_only builds: {key, what to keep of
 * its value (NULL: all of it)}, ..., {NULL}.  Within arrays the same
 * list applies to each element.
 */
struct jv_only {
	const char *key;
	const struct jv_only *below;
};

/*
 * As jv_parse, building only the members only names (NULL: all): the
 * others are passed over by their strings and brackets (matched, within the
 * depth limit), so nothing is allocated for the parts of a config.json
 * nsguard never reads.  For a document json_strict_check accepted: the
 * rest of what is passed over (its scalars, commas, colons) is that check's.
 */
struct jv *jv_parse_only(const char *buf, size_t len, const struct jv_only *only);
/* v and everything in it; v must be a root (added nowhere); NULL is fine. */
void jv_free(struct jv *v);

static inline void cleanup_jvp(struct jv **p)
{
	jv_free(*p);
}
#define cleanup_jv __attribute__((cleanup(cleanup_jvp)))

/* Type tests; each is false for NULL. */
#define JV_IS(name, t) \
	static inline bool jv_is_##name(const struct jv *v) { return v && v->type == (t); }
JV_IS(null, JV_NULL)
JV_IS(number, JV_NUMBER)
JV_IS(string, JV_STRING)
JV_IS(array, JV_ARRAY)
JV_IS(object, JV_OBJECT)
JV_IS(true, JV_TRUE)
#undef JV_IS
static inline bool jv_is_bool(const struct jv *v)
{
	return v && (v->type == JV_TRUE || v->type == JV_FALSE);
}

/* The first member named key (bytes compared), NULL if none or obj is no object. */
struct jv *jv_get(const struct jv *obj, const char *key);
/* How many members or elements. */
size_t jv_count(const struct jv *v);
#define jv_for_each(it, v) for ((it) = (v) ? (v)->child : NULL; (it); (it) = (it)->next)

/* New roots, NULL when out of memory. */
struct jv *jv_new_object(void);
struct jv *jv_new_array(void);
struct jv *jv_new_string(const char *s);
struct jv *jv_new_string_array(const char *const *s, size_t n);

/*
 * Add item (a root; NULL fails) to obj under key, or to the end of arr:
 * true, and the item is theirs; false when out of memory, and the item is
 * still the caller's.
 */
bool jv_add(struct jv *obj, const char *key, struct jv *item);
/* The same, but the item is freed when it cannot be added (a new one, built in the call). */
bool jv_add_take(struct jv *obj, const char *key, struct jv *item);
bool jv_append(struct jv *arr, struct jv *item);
/* Add a new member to obj: the member, NULL when out of memory. */
struct jv *jv_add_string(struct jv *obj, const char *key, const char *s);
struct jv *jv_add_number(struct jv *obj, const char *key, double n);
struct jv *jv_add_bool(struct jv *obj, const char *key, bool b);
struct jv *jv_add_null(struct jv *obj, const char *key);
struct jv *jv_add_object(struct jv *obj, const char *key);
struct jv *jv_add_array(struct jv *obj, const char *key);
/* Unlink and free the first member named key, if any. */
void jv_remove(struct jv *obj, const char *key);

/* Same type and value, members in any order (numbers exactly; a key given twice: in the same order). */
bool jv_equal(const struct jv *a, const struct jv *b);

/*
 * The text of v, malloc'd (NULL when out of memory): on one line, or
 * pretty (a member per line, tab-indented, "key":<TAB>value, elements of an
 * array on one line after ", ": the layout nsguard has always written).
 * Numbers: integers below 2^53 in full, others in the shortest of %.15g
 * and %.17g that reads back the same; bytes >= 0x80 as they are.
 */
char *jv_format(const struct jv *v);
char *jv_format_pretty(const struct jv *v);

#endif
