/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * config.json documents that runc, crun and nsguard could read differently
 * (jsonstrict.h), each with the message that refuses it.  test_spec.c runs
 * them through the wrapper's edit, test_oci.c through the hook's read.
 */
#ifndef NSGUARD_TEST_STRICT_CASES_H
#define NSGUARD_TEST_STRICT_CASES_H

#include <stddef.h>

struct strict_case {
	const char *name;
	const char *doc;
	size_t len; /* 0: strlen(doc) */
	const char *msg; /* a part of the message, after "WHAT: " */
};

#define STRICT_NUL_DOC "{\"a\":\"x\0y\"}"

static const struct strict_case strict_cases[] = {
	/* UTF-8 as Go's utf8.Valid (runc reads U+FFFD, crun the raw bytes) */
	{ "overlong-hooks", "{\"\xc1\xa8ooks\":{}}", 0, "byte 2: invalid UTF-8 (an overlong encoding)" },
	{ "overlong-3", "{\"a\":\"\xe0\x81\xa8\"}", 0, "byte 6: invalid UTF-8 (an overlong encoding)" },
	{ "overlong-4", "{\"a\":\"\xf0\x80\x81\xa8\"}", 0, "invalid UTF-8 (an overlong encoding)" },
	{ "surrogate", "{\"a\":\"\xed\xa0\x80\"}", 0, "a UTF-16 surrogate encoded in UTF-8" },
	{ "above-10ffff", "{\"a\":\"\xf4\x90\x80\x80\"}", 0, "a code point above U+10FFFF" },
	{ "byte-f5", "{\"a\":\"\xf5\x80\x80\x80\"}", 0, "a byte that UTF-8 never uses" },
	{ "truncated", "{\"a\":\"\xe2\x82\"}", 0, "invalid UTF-8 (a truncated sequence)" },
	{ "truncated-at-end", "{\"a\":\"\xe2", 0, "invalid UTF-8 (a truncated sequence)" },
	{ "continuation", "{\"a\":\"\x80\"}", 0, "a continuation byte without a lead byte" },
	{ "utf8-outside-string", "{\"a\":1\xc2\xa0}", 0, "byte 0xc2 outside a string" },
	/* whitespace: JSON's four only (yajl skips \v \f too) */
	{ "formfeed", "{\f\"hooks\":{}}", 0, "byte 1: control byte 0x0c outside a string" },
	{ "vtab", "{\"hooks\":\v{}}", 0, "control byte 0x0b outside a string" },
	{ "nbsp", "{\"hooks\":\xc2\xa0{}}", 0, "byte 0xc2 outside a string" },
	{ "bom", "\xef\xbb\xbf{}", 0, "byte 0: a byte order mark" },
	{ "comment", "{/**/\"hooks\":{}}", 0, "'/' where a key belongs" },
	{ "nul-byte", STRICT_NUL_DOC, sizeof(STRICT_NUL_DOC) - 1, "a NUL byte" },
	/* strings and escapes */
	{ "raw-control", "{\"a\":\"x\x01\"}", 0, "control byte 0x01 in a string" },
	{ "raw-tab", "{\"a\":\"x\ty\"}", 0, "control byte 0x09 in a string" },
	{ "bad-escape", "{\"a\":\"\\x41\"}", 0, "an invalid escape \\x" },
	{ "short-u", "{\"a\":\"\\u12\"}", 0, "a \\u escape without four hex digits" },
	{ "nul-escape", "{\"a\":\"x\\u0000y\"}", 0, "a \\u0000 escape" },
	{ "nul-escape-key", "{\"hooks\\u0000\":{}}", 0, "a \\u0000 escape" },
	{ "lone-high", "{\"a\":\"\\ud800\"}", 0, "a \\u escape of a lone UTF-16 surrogate" },
	{ "lone-low", "{\"a\":\"\\udc00\"}", 0, "a \\u escape of a lone UTF-16 surrogate" },
	{ "high-then-other", "{\"a\":\"\\ud800\\u0041\"}", 0, "lone UTF-16 surrogate" },
	{ "unterminated", "{\"a\":\"x", 0, "byte 5: a string that never ends" },
	/* grammar: what yajl would take and Go would not */
	{ "trailing-comma", "{\"a\":[1,],\"b\":2}", 0, "']' where a value belongs" },
	{ "trailing-comma-object", "{\"a\":1,}", 0, "'}' where a key belongs" },
	{ "leading-zero", "{\"a\":01}", 0, "'1' where ',' or '}' belongs" },
	{ "plus", "{\"a\":+1}", 0, "'+' where a value belongs" },
	{ "dot", "{\"a\":1.}", 0, "a number with no digit after '.'" },
	{ "exponent", "{\"a\":1e}", 0, "a number with no digit in its exponent" },
	{ "bare-minus", "{\"a\":-}", 0, "a number without digits" },
	{ "literal", "{\"a\":tru}", 0, "'t' where a value belongs" },
	{ "single-quote", "{'a':1}", 0, "''' where a key belongs" },
	{ "trailing", "{\"hooks\":{}} {\"hooks\":null}", 0, "byte 13: trailing data after the document" },
	{ "trailing-nul", "{}\0", 3, "a NUL byte" },
	{ "truncated-doc", "{\"hooks\":", 0, "the document ends where a value belongs" },
	/* keys: twice (runc takes the last, crun the first), or folded by runc */
	{ "twice", "{\"hooks\":{},\"hooks\":{}}", 0, "key \"hooks\" is given twice" },
	{ "twice-escaped", "{\"hooks\":{},\"hoo\\u006bs\":{}}", 0,
	  "key \"hoo\\u006bs\" is given twice" },
	{ "twice-deep", "{\"linux\":{\"sysctl\":{\"a\":\"1\",\"a\":\"2\"}}}", 0,
	  "key \"a\" is given twice" },
	{ "twice-in-array", "{\"x\":[{},{\"b\":1,\"b\":2}]}", 0, "key \"b\" is given twice" },
	{ "folded-pair", "{\"x\":{\"ab\":1,\"AB\":2}}", 0,
	  "keys \"ab\" and \"AB\" are one key to runc" },
	{ "folded-long-s", "{\"x\":{\"s\":1,\"\\u017f\":2}}", 0, "are one key to runc" },
	{ "folded-kelvin", "{\"x\":{\"\xe2\x84\xaa\":1,\"k\":2}}", 0, "are one key to runc" },
	{ "folded-hooks", "{\"Hooks\":{}}", 0, "key \"Hooks\" is \"hooks\" to runc" },
	{ "kelvin-hooks", "{\"hoo\\u212as\":{}}", 0, "is \"hooks\" to runc" },
	{ "long-s-stage", "{\"hooks\":{\"po\\u017ftstop\":[]}}", 0, "is \"poststop\" to runc" },
	{ "folded-stage", "{\"hooks\":{\"createruntime\":[]}}", 0,
	  "key \"createruntime\" is \"createRuntime\" to runc" },
	{ "folded-annotations", "{\"ANNOTATIONS\":{}}", 0, "is \"annotations\" to runc" },
	{ "folded-mounts", "{\"Mounts\":[]}", 0, "is \"mounts\" to runc" },
	{ "folded-destination", "{\"mounts\":[{\"Destination\":\"/x\"}]}", 0,
	  "is \"destination\" to runc" },
	{ "folded-cgroupspath", "{\"linux\":{\"cgroupspath\":\"/x\"}}", 0,
	  "is \"cgroupsPath\" to runc" },
	{ "folded-path", "{\"hooks\":{\"poststop\":[{\"Path\":\"/x\"}]}}", 0, "is \"path\" to runc" },
	{ "folded-env", "{\"process\":{\"Env\":[]}}", 0, "is \"env\" to runc" },
	{ "folded-namespace-type", "{\"linux\":{\"namespaces\":[{\"TYPE\":\"user\"}]}}", 0,
	  "is \"type\" to runc" },
};

#endif
