/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The JSON that every reader of a document reads alike.  A config.json is
 * read by nsguard (jv.h, and spec.c's scanner) and by the runtime: runc
 * (Go's encoding/json: invalid UTF-8 becomes U+FFFD, keys match struct
 * fields case-insensitively, also U+017F as 's' and U+212A as 'k', the last
 * duplicate wins) or crun (yajl: raw bytes, \v and \f are whitespace, the
 * first duplicate wins; C code reading the values: "\u0000" ends a
 * string).  json_strict_check refuses every document on which they
 * could differ, so that a document it accepts means the same to each.
 */
#ifndef NSGUARD_JSONSTRICT_H
#define NSGUARD_JSONSTRICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Deeper nesting is refused (jv_parse's limit too). */
#define JSON_STRICT_DEPTH_MAX 512

/*
 * Check buf in one linear pass: RFC 8259 JSON with nothing else around it
 * (no BOM, no comments, only space, tab, CR and LF as whitespace), valid
 * UTF-8 exactly as Go's utf8.Valid takes it (no overlong forms, no encoded
 * surrogates, nothing above U+10FFFF), no raw control byte in a string,
 * only JSON's escapes, no \u escape of a lone surrogate, no \u0000, and in
 * each object no two keys equal after decoding or after Go's folding
 * (json_fold_rune), and no key that folds to one of names (NULL-ended: the
 * keys the reader looks up) without being it.  0, or -EINVAL with one
 * nsg_fail() line "WHAT: byte N: ...".
 */
int json_strict_check(const char *buf, size_t len, const char *what, const char *const *names);

/*
 * How Go's encoding/json folds a key's rune to match a struct field (Go
 * 1.21 foldName, earlier equalFoldRight): ASCII letters by case, U+017F
 * (long s) as 's' and U+212A (Kelvin sign) as 'k'.  No other rune folds to
 * an ASCII letter, and the fields are ASCII.  The one folding rule of
 * nsguard: the checker and spec.c use it.
 */
uint32_t json_fold_rune(uint32_t r);
/* Whether the UTF-8 strings a and b (valid) are equal under json_fold_rune. */
bool json_fold_equal(const char *a, size_t alen, const char *b, size_t blen);

/*
 * The string whose '"' is at s[i] in a document json_strict_check accepted,
 * decoded to UTF-8: at most cap bytes go to out; returns its full length.
 */
size_t json_string_decode(const char *s, size_t n, size_t i, char *out, size_t cap);

/*
 * A new random start for the key hash at the next check: a process that
 * checks what tenants wrote for longer than one hook (the agent) takes one
 * per request, so that no timing it shows helps to build colliding keys.
 */
void json_reseed(void);

#endif
