/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nsguard runtime's edit of config.json (spec.c): text in, text out. */
#include <stdlib.h>
#include "json.h"
#include "spec.h"
#include "strict_cases.h"
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

/* Every path is this binary to stat(): only spec.c's own checks are left. */
static bool always(const char *path, void *data)
{
	return true;
}

/* Apply with no annotations (n = 0) or the audit tier; out NULL: unchanged. */
static int apply_len(const char *in, size_t len, bool tier, const char *config,
		     bool (*is_self)(const char *, void *), char **out, unsigned *what)
{
	const struct spec_edit e = { .hook_path = SELF,
				     .config_path = config,
				     .is_self = is_self,
				     .keys = tier_keys,
				     .values = tier_audit,
				     .n = tier ? 1 : 0 };

	nsg_clear_error();
	return spec_edit_apply(in, len, &e, out, what);
}

static int apply(const char *in, bool tier, char **out, unsigned *what)
{
	return apply_len(in, strlen(in), tier, NULL, same, out, what);
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

/* A --config path that the edit could not write so that runc reads it alike. */
static void t_refused_config(const char *config, const char *msg)
{
	cleanup_free char *out = NULL;
	unsigned what;

	ASSERT_EQ(-EINVAL, apply_len("{}", 2, false, config, same, &out, &what));
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
	cleanup_jv struct jv *doc = NULL;
	const struct jv *cr;
	unsigned what;

	ASSERT_OK(apply(in, false, &out, &what));
	ASSERT_EQ(SPEC_ADDED_CREATE_RUNTIME, what);
	doc = jv_parse(out, strlen(out));
	cr = jv_get(jv_get(doc, "hooks"), "createRuntime");
	ASSERT_EQ(2, jv_count(cr));
	ASSERT_STREQ(SELF, jv_get(cr->child, "path")->str);
}

/* Each document runc, crun and nsguard could read differently (strict_cases.h). */
static void t_strict(const struct strict_case *c)
{
	cleanup_free char *out = NULL;
	unsigned what;

	ASSERT_EQ(-EINVAL, apply_len(c->doc, c->len ?: strlen(c->doc), true, NULL, same, &out, &what));
	ASSERT_TRUE(out == NULL);
	ASSERT_MSG("config.json: ");
	ASSERT_MSG(c->msg);
}

/* A hook path stat() takes for this binary, but the runtime might not run. */
static void t_path_not_ours(const char *path)
{
	cleanup_free char *in = NULL, *out = NULL;
	unsigned what;

	ASSERT_TRUE(asprintf(&in, "{\"hooks\":{\"createRuntime\":[{\"path\":\"%s\",\"args\":[\"nsguard\","
				  "\"hook\",\"createRuntime\"]}],\"poststop\":[" HOOK("poststop") "]}}",
			     path) > 0);
	ASSERT_OK(apply_len(in, strlen(in), false, NULL, always, &out, &what));
	ASSERT_EQ(SPEC_ADDED_CREATE_RUNTIME, what);
}

#define CONF "/etc/nsguard/t\u00e9.conf"
#define CONF_RAW "/etc/nsguard/t\xc3\xa9.conf"
#define CHOOK(stage) "{\"path\":\"" SELF "\",\"args\":[\"nsguard\",\"--config\",\"" CONF "\",\"hook\",\"" stage "\"],\"timeout\":30}"
#define CHOOK_RAW(stage) "{\"path\":\"" SELF "\",\"args\":[\"nsguard\",\"--config\",\"" CONF_RAW "\",\"hook\",\"" stage "\"],\"timeout\":30}"

/* nsguard runtime --config FILE: the hooks read FILE, and only that form is ours. */
static void t_config(const char *in, const char *config, const char *want, unsigned want_what)
{
	cleanup_free char *out = NULL;
	unsigned what = 99;

	ASSERT_OK(apply_len(in, strlen(in), false, config, same, &out, &what));
	ASSERT_EQ(want_what, what);
	if (want)
		ASSERT_STREQ(want, out);
}

/* The wrapper's cgroup namespace: hooks already there, so only that edit shows. */
#define OURS "\"hooks\":{\"createRuntime\":[" HOOK("createRuntime") "],\"poststop\":[" HOOK("poststop") "]}"
static void t_cgroupns(const char *in, const char *want, int want_err)
{
	const struct spec_edit e = { .hook_path = SELF, .is_self = same, .cgroupns = true };
	cleanup_free char *out = NULL;
	unsigned what = 99;

	nsg_clear_error();
	ASSERT_EQ(want_err, spec_edit_apply(in, strlen(in), &e, &out, &what));
	if (want_err)
		return;
	ASSERT_EQ(want ? SPEC_ADDED_CGROUPNS : 0u, what);
	if (want)
		ASSERT_STREQ(want, out);
	else
		ASSERT_TRUE(out == NULL);
}

void suite_spec(void)
{
	char name[128];

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
	/* ".." in a path: not what the wrapper writes, and not taken as ours. */
	TEST_CASE("spec", "not-ours-dotdot", t_dedup,
		  "{\"hooks\":{\"createRuntime\":[{\"path\":\"/usr/local/../bin/nsguard\",\"args\":["
		  "\"nsguard\",\"hook\",\"createRuntime\"]}],\"poststop\":[" HOOK("poststop") "]}}",
		  SPEC_ADDED_CREATE_RUNTIME);
	TEST_CASE("spec", "ours-escaped-path", t_dedup,
		  "{\"hooks\":{\"createRuntime\":[{\"path\":\"\\/usr\\/bin\\/nsguard\",\"args\":["
		  "\"nsguard\",\"hook\",\"createRuntime\"]}],\"poststop\":[" HOOK("poststop") "]}}",
		  0);
	TEST_CASE("spec", "path-plain-self", t_path_not_ours, "/usr/bin/nsguard/");
	TEST_CASE("spec", "path-proc-self-exe", t_path_not_ours, "/proc/self/exe");
	TEST_CASE("spec", "path-proc-root", t_path_not_ours, "/proc/1/root/usr/bin/nsguard");
	TEST_CASE("spec", "path-proc-fd", t_path_not_ours, "/proc/self/fd/3");
	TEST_CASE("spec", "path-dev-fd", t_path_not_ours, "/dev/fd/3");
	TEST_CASE("spec", "path-dot", t_path_not_ours, "/usr/bin/./nsguard");
	TEST_CASE("spec", "path-double-slash", t_path_not_ours, "//usr/bin/nsguard");
	TEST_CASE("spec", "path-dotdot-proc", t_path_not_ours, "/usr/../proc/self/exe");
	TEST_CASE("spec", "path-relative", t_path_not_ours, "usr/bin/nsguard");
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
	/* A shorter timeout would let the runtime kill ours mid-attach. */
	TEST_CASE("spec", "not-ours-short-timeout", t_dedup,
		  "{\"hooks\":{\"createRuntime\":[{\"path\":\"" SELF "\",\"args\":[\"nsguard\","
		  "\"hook\",\"createRuntime\"],\"timeout\":1}],\"poststop\":[" HOOK("poststop") "]}}",
		  SPEC_ADDED_CREATE_RUNTIME);
	TEST_CASE("spec", "ours-longer-timeout", t_dedup,
		  "{\"hooks\":{\"createRuntime\":[{\"path\":\"" SELF "\",\"args\":[\"nsguard\","
		  "\"hook\",\"createRuntime\"],\"timeout\":120}],\"poststop\":[" HOOK("poststop") "]}}",
		  0);
	TEST_CASE("spec", "not-ours-stage", t_dedup,
		  "{\"hooks\":{\"createRuntime\":[" HOOK("poststop") "],\"poststop\":[" HOOK(
			  "createRuntime") "]}}",
		  SPEC_ADDED_CREATE_RUNTIME | SPEC_ADDED_POSTSTOP);
	TEST_CASE("spec", "refuse-path-twice-folded", t_refused,
		  "{\"hooks\":{\"createRuntime\":[{\"path\":\"" SELF "\",\"args\":[\"nsguard\","
		  "\"hook\",\"createRuntime\"],\"Path\":\"/bin/evil\"}],\"poststop\":[" HOOK(
			  "poststop") "]}}",
		  "config.json: byte 96: key \"Path\" is \"path\" to runc, which folds case: write it so");
	TEST_CASE("spec", "tenant-look-alike", t_tenant_hook_rewrite);
	/* Keys Go's encoding/json reads as ours, bytes runtimes read otherwise. */
	for (size_t i = 0; i < ARRAY_SIZE(strict_cases); i++) {
		snprintf(name, sizeof(name), "refuse-%s", strict_cases[i].name);
		TEST_CASE("spec", name, t_strict, &strict_cases[i]);
	}
	/* The annotations nsguard sets, in another case: a map key to Go, but
	 * the hook matches nsguard.io/ in any case. */
	TEST_CASE("spec", "refuse-annotation-case", t_refused,
		  "{\"annotations\":{\"NSGUARD.IO/USERNS\":\"allow\"}}",
		  "config.json \"annotations\" has a key that the runtime may read as "
		  "\"nsguard.io/userns\"");
	TEST_CASE("spec", "refuse-hooks-array", t_refused, "{\"hooks\":[]}",
		  "config.json: \"hooks\" is not an object");
	TEST_CASE("spec", "refuse-stage-object", t_refused, "{\"hooks\":{\"poststop\":{}}}",
		  "config.json: hooks.poststop is not an array");
	TEST_CASE("spec", "refuse-not-object", t_refused, "[]", "config.json is not a JSON object");
	TEST_CASE("spec", "accept-json-whitespace", t_edit, " \t\r\n{ \t\r\n}\n", false,
		  " \t\r\n{\"hooks\":{\"createRuntime\":[" HOOK("createRuntime") "],\"poststop\":[" HOOK(
			  "poststop") "]} \t\r\n}\n",
		  SPEC_ADDED_CREATE_RUNTIME | SPEC_ADDED_POSTSTOP);
	TEST_CASE("spec", "accept-utf8-and-pairs", t_dedup,
		  "{\"a\":\"\xf4\x8f\xbf\xbf \xed\x9f\xbf \\ud83d\\ude00 \\uffff\",\"\xc3\xa9\":1,\"\xc3\x89\":2,"
		  "\"x\":[-0.5e+3,true,false,null,{}]}",
		  SPEC_ADDED_CREATE_RUNTIME | SPEC_ADDED_POSTSTOP);
	/* --config FILE: the hooks name it, and only that form is taken as ours. */
	TEST_CASE("spec", "config-hooks", t_config, "{}", CONF_RAW,
		  "{\"hooks\":{\"createRuntime\":[" CHOOK_RAW("createRuntime") "],\"poststop\":["
		  CHOOK_RAW("poststop") "]}}",
		  SPEC_ADDED_CREATE_RUNTIME | SPEC_ADDED_POSTSTOP);
	TEST_CASE("spec", "config-dedup", t_config,
		  "{\"hooks\":{\"createRuntime\":[" CHOOK("createRuntime") "],\"poststop\":["
		  CHOOK("poststop") "]}}",
		  CONF_RAW, NULL, 0);
	TEST_CASE("spec", "config-plain-not-ours", t_config,
		  "{\"hooks\":{\"createRuntime\":[" HOOK("createRuntime") "],\"poststop\":["
		  CHOOK("poststop") "]}}",
		  CONF_RAW, NULL, SPEC_ADDED_CREATE_RUNTIME);
	TEST_CASE("spec", "config-other-file-not-ours", t_config,
		  "{\"hooks\":{\"createRuntime\":[" CHOOK("createRuntime") "],\"poststop\":["
		  CHOOK("poststop") "]}}",
		  "/etc/nsguard/other.conf", NULL, SPEC_ADDED_CREATE_RUNTIME | SPEC_ADDED_POSTSTOP);
	/* A pod sandbox's spec (containerd's CRI) names no cgroup namespace. */
	TEST_CASE("spec", "cgroupns-added", t_cgroupns,
		  "{" OURS ",\"linux\":{\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"mount\"}]}}",
		  "{" OURS ",\"linux\":{\"namespaces\":[{\"type\":\"cgroup\"},{\"type\":\"pid\"},"
		  "{\"type\":\"mount\"}]}}",
		  0);
	TEST_CASE("spec", "cgroupns-added-empty", t_cgroupns,
		  "{" OURS ",\"linux\":{\"namespaces\":[ ]}}",
		  "{" OURS ",\"linux\":{\"namespaces\":[{\"type\":\"cgroup\"} ]}}", 0);
	TEST_CASE("spec", "cgroupns-there", t_cgroupns,
		  "{" OURS ",\"linux\":{\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"cgroup\"}]}}",
		  NULL, 0);
	/* One with a path (the host's, say) is the hook's to judge, not replaced. */
	TEST_CASE("spec", "cgroupns-path-kept", t_cgroupns,
		  "{" OURS ",\"linux\":{\"namespaces\":[{\"type\":\"cgroup\",\"path\":"
		  "\"/proc/1/ns/cgroup\"}]}}",
		  NULL, 0);
	TEST_CASE("spec", "cgroupns-no-namespaces", t_cgroupns, "{" OURS ",\"linux\":{}}", NULL, 0);
	TEST_CASE("spec", "cgroupns-no-linux", t_cgroupns, "{" OURS "}", NULL, 0);
	/* "Type" is "type" to runc: refused, as every folded key is. */
	TEST_CASE("spec", "cgroupns-refuse-folded-type", t_cgroupns,
		  "{" OURS ",\"linux\":{\"namespaces\":[{\"Type\":\"cgroup\"}]}}", NULL, -EINVAL);
	TEST_CASE("spec", "config-refuse-invalid-utf8", t_refused_config, "/etc/\xc1\xa8.conf",
		  "config.json as edited: byte 89: invalid UTF-8 (an overlong encoding): runc reads "
		  "U+FFFD, crun the raw bytes");
}
