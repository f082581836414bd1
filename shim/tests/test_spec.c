/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsguard runtime's edit of config.json (spec.c): text in, text out. */
#include <stdlib.h>
#include <cjson/cJSON.h>

#include "json.h"
#include "spec.h"
#include "test.h"
#include "util.h"

#define SELF "/usr/bin/nsguard"
#define HOOK(stage) "{\"path\":\"" SELF "\",\"args\":[\"nsguard\",\"hook\",\"" stage "\"],\"timeout\":30}"

static bool same(const char *path, void *data)
{
	return strcmp(path, SELF) == 0 || strcmp(path, "/usr/local/../bin/nsguard") == 0;
}

static const char *const tier_keys[] = { "nsguard.io/userns" };
static const char *const tier_audit[] = { "audit" };

/* Apply with no annotations (n = 0) or the audit tier; out NULL: unchanged. */
static int apply(const char *in, bool tier, char **out, unsigned *what)
{
	const struct spec_edit e = { .hook_path = SELF,
				     .is_self = same,
				     .keys = tier_keys,
				     .values = tier_audit,
				     .n = tier ? 1 : 0 };

	nsg_clear_error();
	return spec_edit_apply(in, strlen(in), &e, out, what);
}

/* Expected edits, as whole documents. */
static void t_edit(const char *in, bool tier, const char *want, unsigned want_what)
{
	cleanup_free char *out = NULL;
	unsigned what = 99;

	ASSERT_OK(apply(in, tier, &out, &what));
	ASSERT_EQ(want_what, what);
	if (!want) {
		ASSERT_TRUE(out == NULL);
		return;
	}
	ASSERT_TRUE(out != NULL);
	ASSERT_STREQ(want, out);
}

/* Refusals: what the runtime could read differently from us. */
static void t_refused(const char *in, const char *msg)
{
	cleanup_free char *out = NULL;
	unsigned what;

	ASSERT_EQ(-EINVAL, apply(in, true, &out, &what));
	ASSERT_TRUE(out == NULL);
	ASSERT_STREQ(msg, nsg_last_error());
}

/* 64-bit numbers, spacing and unknown members pass through byte for byte. */
static void t_bytes_kept(void)
{
	static const char in[] =
		"{\n  \"ociVersion\": \"1.0.2\",\n  \"linux\": {\"resources\": {\"memory\": "
		"{\"limit\": 9223372036854775807, \"swap\": -1}}},\n  \"x-unknown\": [1e400, "
		"\"\\u00e9\"]\n}\n";
	cleanup_free char *out = NULL;
	unsigned what;

	ASSERT_OK(apply(in, false, &out, &what));
	ASSERT_TRUE(out != NULL);
	/* Everything after the inserted member is the input, unchanged. */
	ASSERT_TRUE(strstr(out, in + 2) != NULL);
	ASSERT_TRUE(strstr(out, "9223372036854775807") != NULL);
}

/* The bundle's own hooks stay, ours come first. */
static void t_keeps_hooks(void)
{
	t_edit("{\"hooks\":{\"createRuntime\":[{\"path\":\"/bin/a\"}],\"prestart\":[{\"path\":\"/b\"}],"
	       "\"poststop\":[ ]}}",
	       false,
	       "{\"hooks\":{\"createRuntime\":[" HOOK("createRuntime") ",{\"path\":\"/bin/a\"}],"
	       "\"prestart\":[{\"path\":\"/b\"}],\"poststop\":[" HOOK("poststop") " ]}}",
	       SPEC_ADDED_CREATE_RUNTIME | SPEC_ADDED_POSTSTOP);
}

static void t_dedup(const char *in, unsigned want_what)
{
	cleanup_free char *out = NULL;
	unsigned what;

	ASSERT_OK(apply(in, false, &out, &what));
	ASSERT_EQ(want_what, what);
}

static void t_tenant_hook_rewrite(void)
{
	/* A hook that looks like ours but runs something else is not ours. */
	static const char in[] =
		"{\"hooks\":{\"createRuntime\":[{\"path\":\"/bin/true\",\"args\":[\"nsguard\","
		"\"hook\",\"createRuntime\"]}],\"poststop\":[" HOOK("poststop") "]}}";
	cleanup_free char *out = NULL;
	cleanup_cjson cJSON *doc = NULL;
	const cJSON *cr;
	unsigned what;

	ASSERT_OK(apply(in, false, &out, &what));
	ASSERT_EQ(SPEC_ADDED_CREATE_RUNTIME, what);
	doc = cJSON_Parse(out);
	cr = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "hooks"),
					      "createRuntime");
	ASSERT_EQ(2, cJSON_GetArraySize(cr));
	ASSERT_STREQ(SELF, cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(cr, 0), "path")
				   ->valuestring);
}

void suite_spec(void)
{
	TEST_CASE("spec", "no-hooks", t_edit, "{\"ociVersion\":\"1.0.2\"}", false,
		  "{\"hooks\":{\"createRuntime\":[" HOOK("createRuntime") "],\"poststop\":[" HOOK(
			  "poststop") "]},\"ociVersion\":\"1.0.2\"}",
		  SPEC_ADDED_CREATE_RUNTIME | SPEC_ADDED_POSTSTOP);
	TEST_CASE("spec", "empty-object", t_edit, " { } ", true,
		  " {\"hooks\":{\"createRuntime\":[" HOOK("createRuntime") "],\"poststop\":[" HOOK(
			  "poststop") "]},\"annotations\":{\"nsguard.io/userns\":\"audit\"} } ",
		  SPEC_ADDED_CREATE_RUNTIME | SPEC_ADDED_POSTSTOP | SPEC_SET_ANNOTATIONS);
	TEST_CASE("spec", "null-members", t_edit,
		  "{\"hooks\":{\"createRuntime\":null,\"poststop\":null},\"annotations\":null}", true,
		  "{\"hooks\":{\"createRuntime\":[" HOOK("createRuntime") "],\"poststop\":[" HOOK(
			  "poststop") "]},\"annotations\":{\"nsguard.io/userns\":\"audit\"}}",
		  SPEC_ADDED_CREATE_RUNTIME | SPEC_ADDED_POSTSTOP | SPEC_SET_ANNOTATIONS);
	TEST_CASE("spec", "hooks-null", t_edit, "{\"hooks\":null}", false,
		  "{\"hooks\":{\"createRuntime\":[" HOOK("createRuntime") "],\"poststop\":[" HOOK(
			  "poststop") "]}}",
		  SPEC_ADDED_CREATE_RUNTIME | SPEC_ADDED_POSTSTOP);
	TEST_CASE("spec", "hooks-empty", t_edit, "{\"hooks\":{}}", false,
		  "{\"hooks\":{\"createRuntime\":[" HOOK("createRuntime") "],\"poststop\":[" HOOK(
			  "poststop") "]}}",
		  SPEC_ADDED_CREATE_RUNTIME | SPEC_ADDED_POSTSTOP);
	TEST_CASE("spec", "keeps-hooks", t_keeps_hooks);
	TEST_CASE("spec", "bytes-kept", t_bytes_kept);
	TEST_CASE("spec", "annotation-replaced", t_edit,
		  "{\"annotations\":{\"a\":\"b\",\"nsguard.io/userns\":\"allow\"},\"hooks\":{"
		  "\"createRuntime\":[" HOOK("createRuntime") "],\"poststop\":[" HOOK("poststop") "]}}",
		  true,
		  "{\"annotations\":{\"a\":\"b\",\"nsguard.io/userns\":\"audit\"},\"hooks\":{"
		  "\"createRuntime\":[" HOOK("createRuntime") "],\"poststop\":[" HOOK("poststop") "]}}",
		  SPEC_SET_ANNOTATIONS);
	TEST_CASE("spec", "annotation-added", t_edit,
		  "{\"annotations\":{\"a\":\"b\"},\"hooks\":{\"createRuntime\":[" HOOK(
			  "createRuntime") "],\"poststop\":[" HOOK("poststop") "]}}",
		  true,
		  "{\"annotations\":{\"nsguard.io/userns\":\"audit\",\"a\":\"b\"},\"hooks\":{"
		  "\"createRuntime\":[" HOOK("createRuntime") "],\"poststop\":[" HOOK("poststop") "]}}",
		  SPEC_SET_ANNOTATIONS);
	/* Ours already there (hooks.d, a base spec): nothing written. */
	TEST_CASE("spec", "dedup-same", t_edit,
		  "{\"hooks\":{\"createRuntime\":[" HOOK("createRuntime") "],\"poststop\":[" HOOK(
			  "poststop") "]}}",
		  false, NULL, 0);
	TEST_CASE("spec", "dedup-other-path", t_dedup,
		  "{\"hooks\":{\"createRuntime\":[{\"path\":\"/usr/local/../bin/nsguard\",\"args\":["
		  "\"nsguard\",\"hook\",\"createRuntime\"]}],\"poststop\":[" HOOK("poststop") "]}}",
		  0);
	TEST_CASE("spec", "dedup-prestart", t_dedup,
		  "{\"hooks\":{\"prestart\":[" HOOK("prestart") "],\"poststop\":[" HOOK(
			  "poststop") "]}}",
		  0);
	/* Look-alikes: other args, an env, a stage in the wrong array. */
	TEST_CASE("spec", "not-ours-config", t_dedup,
		  "{\"hooks\":{\"createRuntime\":[{\"path\":\"" SELF "\",\"args\":[\"nsguard\","
		  "\"--config\",\"/tmp/x\",\"hook\",\"createRuntime\"]}],\"poststop\":[" HOOK(
			  "poststop") "]}}",
		  SPEC_ADDED_CREATE_RUNTIME);
	TEST_CASE("spec", "not-ours-env", t_dedup,
		  "{\"hooks\":{\"createRuntime\":[{\"path\":\"" SELF "\",\"args\":[\"nsguard\","
		  "\"hook\",\"createRuntime\"],\"env\":[\"NSGUARD_X=1\"]}],\"poststop\":[" HOOK(
			  "poststop") "]}}",
		  SPEC_ADDED_CREATE_RUNTIME);
	TEST_CASE("spec", "not-ours-stage", t_dedup,
		  "{\"hooks\":{\"createRuntime\":[" HOOK("poststop") "],\"poststop\":[" HOOK(
			  "createRuntime") "]}}",
		  SPEC_ADDED_CREATE_RUNTIME | SPEC_ADDED_POSTSTOP);
	TEST_CASE("spec", "not-ours-path-twice", t_dedup,
		  "{\"hooks\":{\"createRuntime\":[{\"path\":\"" SELF "\",\"args\":[\"nsguard\","
		  "\"hook\",\"createRuntime\"],\"Path\":\"/bin/evil\"}],\"poststop\":[" HOOK(
			  "poststop") "]}}",
		  SPEC_ADDED_CREATE_RUNTIME);
	TEST_CASE("spec", "tenant-look-alike", t_tenant_hook_rewrite);
	/* Keys Go's encoding/json reads as ours: refused, never guessed. */
	TEST_CASE("spec", "refuse-folded-hooks", t_refused, "{\"Hooks\":{}}",
		  "config.json has a key that the runtime may read as \"hooks\"");
	TEST_CASE("spec", "refuse-kelvin", t_refused, "{\"hoo\\u212as\":{}}",
		  "config.json has a key that the runtime may read as \"hooks\"");
	TEST_CASE("spec", "refuse-escaped-twice", t_refused, "{\"hooks\":{},\"hoo\\u006bs\":{}}",
		  "config.json has \"hooks\" twice");
	TEST_CASE("spec", "refuse-stage-folded", t_refused,
		  "{\"hooks\":{\"createruntime\":[]}}",
		  "config.json \"hooks\" has a key that the runtime may read as \"createRuntime\"");
	TEST_CASE("spec", "refuse-long-s", t_refused, "{\"hooks\":{\"po\\u017ftstop\":[]}}",
		  "config.json \"hooks\" has a key that the runtime may read as \"poststop\"");
	TEST_CASE("spec", "refuse-annotation-twice", t_refused,
		  "{\"annotations\":{\"nsguard.io/userns\":\"allow\",\"nsguard.io/userns\":\"x\"}}",
		  "config.json \"annotations\" has \"nsguard.io/userns\" twice");
	TEST_CASE("spec", "refuse-annotation-case", t_refused,
		  "{\"annotations\":{\"NSGUARD.IO/USERNS\":\"allow\"}}",
		  "config.json \"annotations\" has a key that the runtime may read as "
		  "\"nsguard.io/userns\"");
	TEST_CASE("spec", "refuse-hooks-array", t_refused, "{\"hooks\":[]}",
		  "config.json: \"hooks\" is not an object");
	TEST_CASE("spec", "refuse-stage-object", t_refused, "{\"hooks\":{\"poststop\":{}}}",
		  "config.json: hooks.poststop is not an array");
	TEST_CASE("spec", "refuse-not-object", t_refused, "[]", "config.json is not a JSON object");
	TEST_CASE("spec", "refuse-trailing", t_refused, "{\"hooks\":{}} {\"hooks\":null}",
		  "config.json is not a JSON object");
	TEST_CASE("spec", "refuse-invalid", t_refused, "{\"hooks\":", "config.json is not a JSON object");
}
