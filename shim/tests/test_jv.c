/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdlib.h>

#include "jv.h"
#include "test.h"
#include "util.h"

static struct jv *parse(const char *s)
{
	return jv_parse(s, strlen(s));
}

/* s parses, and prints back on one line as want. */
static void round_trip(const char *s, const char *want)
{
	cleanup_jv struct jv *v = parse(s);
	cleanup_free char *out = NULL;

	ASSERT_TRUE(v != NULL);
	out = jv_format(v);
	ASSERT_STREQ(want, out);
}

static void t_round_trips(void)
{
	static const char *const cases[][2] = {
		{ "{}", "{}" },
		{ " [ ] ", "[]" },
		{ "\t{ \"a\" :\r\n1 , \"b\":[true,false,null]}\n", "{\"a\":1,\"b\":[true,false,null]}" },
		{ "\"x\\u00e9\\ud83d\\ude00\\/\"", "\"x\xc3\xa9\xf0\x9f\x98\x80/\"" },
		{ "\"\\b\\f\\n\\r\\t\\\"\\\\\\u0001\"", "\"\\b\\f\\n\\r\\t\\\"\\\\\\u0001\"" },
		{ "[0,-0,4294967295,9007199254740991,1.5,-2e3,0.1,1e300]",
		  "[0,0,4294967295,9007199254740991,1.5,-2000,0.1,1e+300]" },
		{ "[9007199254740993]", "[9007199254740992]" },
		{ "[[[{\"\":{}}]]]", "[[[{\"\":{}}]]]" },
		{ "\"\xff raw bytes stay\"", "\"\xff raw bytes stay\"" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		round_trip(cases[i][0], cases[i][1]);
		if (test_failed())
			FAIL_RET("case %zu: %s", i, cases[i][0]);
	}
}

static void t_refused(void)
{
	static const char *const bad[] = {
		"", " ", "{", "}", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "[1 2]", "01", "1.",
		".5", "-", "1e", "+1", "tru", "nul", "\"open", "\"\\u0000\"", "\"\\ud800\"",
		"\"\\udc00\"", "\"\\ud800\\u0041\"", "\"\\x\"", "\"\\u12\"", "\"tab\there\"",
		"{} {}", "[1]x", "\f[]", "[\v1]",
	};

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct jv *v;

		errno = 0;
		v = parse(bad[i]);
		if (v) {
			jv_free(v);
			FAIL_RET("case %zu parsed: %s", i, bad[i]);
		}
		ASSERT_EQ(EINVAL, errno);
	}
	/* Numbers beyond a double: nothing could print them back. */
	ASSERT_TRUE(parse("1e400") == NULL);
	ASSERT_EQ(ERANGE, errno);
	ASSERT_TRUE(parse("[-1e309]") == NULL);
	ASSERT_EQ(ERANGE, errno);
}

/* Nothing past len is read: a number or literal at the very end, cut short. */
static void t_bounded(void)
{
	static const char text[] = "[123456]";
	cleanup_free char *exact = malloc(4);
	struct jv *v;

	memcpy(exact, "true", 4); /* no terminator: ASan sees a read past it */
	v = jv_parse(exact, 4);
	ASSERT_TRUE(jv_is_true(v));
	jv_free(v);
	ASSERT_TRUE(jv_parse(exact, 3) == NULL);
	memcpy(exact, "1234", 4);
	v = jv_parse(exact, 4);
	ASSERT_TRUE(jv_is_number(v) && v->num == 1234);
	jv_free(v);
	ASSERT_TRUE(jv_parse(text, 4) == NULL);
}

static void t_depth(void)
{
	char buf[2 * 600 + 1];
	struct jv *v;

	memset(buf, '[', 512);
	memset(buf + 512, ']', 512);
	v = jv_parse(buf, 1024);
	ASSERT_TRUE(jv_is_array(v));
	jv_free(v);
	memset(buf, '[', 513);
	memset(buf + 513, ']', 513);
	ASSERT_TRUE(jv_parse(buf, 1026) == NULL);
}

/* A long number (over the parser's stack buffer) reads in full. */
static void t_long_number(void)
{
	char buf[200] = "1.";
	struct jv *v;

	memset(buf + 2, '0', 150);
	strcpy(buf + 152, "1e2");
	v = parse(buf);
	ASSERT_TRUE(jv_is_number(v) && v->num == 100);
	jv_free(v);
}

/* The layout `configure docker` writes (daemon.json) and the records keep. */
static void t_pretty(void)
{
	cleanup_jv struct jv *v = parse("{\"a\":{\"b\":[1,{\"c\":\"d\"}],\"e\":{}},\"f\":[]}");
	cleanup_free char *out = NULL;

	ASSERT_TRUE(v != NULL);
	out = jv_format_pretty(v);
	ASSERT_STREQ("{\n\t\"a\":\t{\n\t\t\"b\":\t[1, {\n\t\t\t\t\"c\":\t\"d\"\n\t\t\t}],\n"
		     "\t\t\"e\":\t{\n\t\t}\n\t},\n\t\"f\":\t[]\n}",
		     out);
}

static void t_lookup(void)
{
	cleanup_jv struct jv *v = parse("{\"a\":1,\"A\":2,\"a\":3,\"s\":\"x\"}");

	ASSERT_EQ(1, jv_get(v, "a")->num); /* the first of two */
	ASSERT_EQ(2, jv_get(v, "A")->num); /* bytes compared */
	ASSERT_TRUE(jv_get(v, "b") == NULL);
	ASSERT_TRUE(jv_get(jv_get(v, "s"), "a") == NULL);
	ASSERT_TRUE(jv_get(NULL, "a") == NULL);
	ASSERT_EQ(4, jv_count(v));
	ASSERT_TRUE(!jv_is_string(NULL) && !jv_is_null(NULL) && jv_is_string(jv_get(v, "s")));
}

/* Built members added to a parsed document, removed, compared; ASan checks the frees. */
static void t_mixed(void)
{
	static const char *const args[] = { "nsguard", "hook" };
	cleanup_jv struct jv *v = parse("{\"keep\":[1],\"drop\":{\"x\":\"y\"}}");
	cleanup_jv struct jv *other = parse("{\"drop\":{\"x\":\"y\"},\"keep\":[1]}");
	cleanup_free char *out = NULL;
	struct jv *o;

	ASSERT_TRUE(v && other);
	ASSERT_TRUE(jv_equal(v, other)); /* members in any order */
	{
		cleanup_jv struct jv *twice = parse("{\"k\":1,\"k\":1}");
		cleanup_jv struct jv *two = parse("{\"k\":1,\"j\":5}");

		ASSERT_TRUE(!jv_equal(twice, two) && !jv_equal(two, twice));
	}
	ASSERT_TRUE(jv_add_string(jv_get(v, "drop"), "new", "z"));
	ASSERT_TRUE(!jv_equal(v, other));
	jv_remove(v, "drop");
	jv_remove(v, "absent");
	o = jv_add_object(v, "built");
	ASSERT_TRUE(o && jv_add_number(o, "n", 7) && jv_add_bool(o, "t", true) &&
		    jv_add_null(o, "z") && jv_add(o, "args", jv_new_string_array(args, 2)));
	ASSERT_TRUE(jv_append(jv_get(v, "keep"), jv_new_string("two")));
	ASSERT_TRUE(!jv_add(jv_get(v, "keep"), "k", NULL));
	out = jv_format(v);
	ASSERT_STREQ("{\"keep\":[1,\"two\"],\"built\":{\"n\":7,\"t\":true,\"z\":null,"
		     "\"args\":[\"nsguard\",\"hook\"]}}",
		     out);
	/* A parsed document inside a built one: freed with it. */
	o = jv_new_object();
	ASSERT_TRUE(jv_add(o, "doc", other));
	other = NULL;
	jv_remove(o, "doc");
	ASSERT_EQ(0, jv_count(o));
	ASSERT_TRUE(jv_add_string(o, "after", "remove"));
	free(out);
	out = jv_format(o);
	jv_free(o);
	ASSERT_STREQ("{\"after\":\"remove\"}", out);
}

static struct jv *parse_only_str(const char *s, const struct jv_only *only)
{
	return jv_parse_only(s, strlen(s), only);
}

/* Only the named members are built; strings with brackets and quotes are passed over whole. */
static void t_only(void)
{
	static const struct jv_only inner[] = { { "keep", NULL }, { NULL, NULL } };
	static const struct jv_only only[] = { { "a", NULL }, { "o", inner }, { NULL, NULL } };
	static const char doc[] = "{\"skip\":{\"x\":[\"]}\\\"{\",[1,{}]],\"a\":0},\"a\":[1,{\"b\":2}],"
				  "\"n\":-1.5e3,\"o\":[{\"keep\":{\"deep\":true},\"drop\":\"}\"},"
				  "{\"drop\":null}],\"t\":true}";
	cleanup_jv struct jv *v = jv_parse_only(doc, strlen(doc), only);
	cleanup_free char *out = NULL;

	ASSERT_TRUE(v != NULL);
	out = jv_format(v);
	ASSERT_STREQ("{\"a\":[1,{\"b\":2}],\"o\":[{\"keep\":{\"deep\":true}},{}]}", out);
	/* A document that ends inside a passed-over value is still refused. */
	ASSERT_TRUE(jv_parse_only(doc, 30, only) == NULL);
	ASSERT_TRUE(jv_parse_only("{\"skip\":\"open", 14, only) == NULL);
	/* Brackets that do not match: the member after them is not read. */
	ASSERT_TRUE(parse_only_str("{\"x\":{],\"a\":1}}", only) == NULL);
	ASSERT_TRUE(parse_only_str("{\"x\":[}],\"a\":1}", only) == NULL);
}

void suite_jv(void)
{
	TEST_CASE("jv", "round-trips", t_round_trips);
	TEST_CASE("jv", "refused", t_refused);
	TEST_CASE("jv", "bounded-by-len", t_bounded);
	TEST_CASE("jv", "depth-limit", t_depth);
	TEST_CASE("jv", "long-number", t_long_number);
	TEST_CASE("jv", "pretty-layout", t_pretty);
	TEST_CASE("jv", "lookup", t_lookup);
	TEST_CASE("jv", "built-and-parsed-mix", t_mixed);
	TEST_CASE("jv", "parse-only", t_only);
}
