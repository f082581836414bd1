/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <string.h>

#include "policy.h"
#include "test.h"
#include "util.h"

#define M(x) (1u << NSGUARD_MODE_##x)
#define ALL (M(DENY) | M(AUDIT) | M(ALLOW))
#define DENY NSGUARD_MODE_DENY
#define AUDIT NSGUARD_MODE_AUDIT
#define ALLOW NSGUARD_MODE_ALLOW
#define MODE ANNOTATION_MODE
#define DEPTH ANNOTATION_MAX_DEPTH
#define ERRNO ANNOTATION_ERRNO
#define CONF "/etc/nsguard/nsguard.conf"

struct cfg_spec {
	__u32 mode, allowed, depth, err; /* zero allowed/err: defaults */
	bool custom;
};

struct row {
	const char *name;
	struct cfg_spec cfg;
	struct oci_annotation ann[5];
	int rc;
	__u32 mode, depth, err;
	const char *msg1, *msg2;
};

#define DEFAULTS { 0, 0, 0, 0, false }
#define CFG(m, a, d, e) { m, a, d, e, true }
#define OK(m, d, e) 0, m, d, e, NULL, NULL
#define ERR(rc, msg) rc, 0, 0, 0, msg, NULL
#define ERR2(rc, msg1, msg2) rc, 0, 0, 0, msg1, msg2

static const struct row rows[] = {
	/* No annotation: the administrator's defaults. */
	{ "none-default-deny", DEFAULTS, { { NULL, NULL } }, OK(DENY, 0, EPERM) },
	{ "none-default-allow-gets-cfg-depth", CFG(ALLOW, ALL, 4, ENOSPC), { { NULL, NULL } }, OK(ALLOW, 4, ENOSPC) },
	{ "none-default-audit", CFG(AUDIT, M(AUDIT), 0, EACCES), { { NULL, NULL } }, OK(AUDIT, 0, EACCES) },
	{ "non-nsguard-ignored", DEFAULTS,
	  { { "io.kubernetes.cri-o.userns-mode", "auto" }, { "nsguard.iox/userns", "allow" },
	    { "example.com/nsguard.io/userns", "allow" }, { "nsguard.io", "x" } }, OK(DENY, 0, EPERM) },
	/* Every mode. */
	{ "mode-deny", DEFAULTS, { { MODE, "deny" } }, OK(DENY, 0, EPERM) },
	{ "mode-audit", DEFAULTS, { { MODE, "audit" } }, OK(AUDIT, 32, EPERM) },
	{ "mode-allow", DEFAULTS, { { MODE, "allow" } }, OK(ALLOW, 32, EPERM) },
	{ "mode-allow-cfg-depth", CFG(DENY, ALL, 2, EPERM), { { MODE, "allow" } }, OK(ALLOW, 2, EPERM) },
	{ "mode-none-rejected", DEFAULTS, { { MODE, "none" } }, ERR(-EINVAL, "annotation nsguard.io/userns=none is not a mode") },
	{ "mode-case-rejected", DEFAULTS, { { MODE, "Allow" } }, ERR(-EINVAL, "userns=Allow") },
	{ "mode-empty-rejected", DEFAULTS, { { MODE, "" } }, ERR(-EINVAL, "is not a mode") },
	{ "mode-space-rejected", DEFAULTS, { { MODE, "allow " } }, ERR(-EINVAL, "is not a mode") },
	{ "mode-control-chars-quoted", DEFAULTS, { { MODE, "al\nlow" } }, ERR(-EINVAL, "userns=al\\x0alow is not a mode") },
	/* Every errno. */
	{ "errno-eperm", DEFAULTS, { { ERRNO, "EPERM" } }, OK(DENY, 0, EPERM) },
	{ "errno-enospc", DEFAULTS, { { ERRNO, "ENOSPC" } }, OK(DENY, 0, ENOSPC) },
	{ "errno-eacces", DEFAULTS, { { MODE, "allow" }, { ERRNO, "EACCES" } }, OK(ALLOW, 32, EACCES) },
	{ "errno-cfg-default", CFG(DENY, ALL, 32, ENOSPC), { { MODE, "deny" } }, OK(DENY, 0, ENOSPC) },
	{ "errno-annotation-beats-cfg", CFG(DENY, ALL, 32, ENOSPC), { { ERRNO, "EPERM" } }, OK(DENY, 0, EPERM) },
	{ "errno-unknown", DEFAULTS, { { ERRNO, "EINTR" } }, ERR(-EINVAL, "annotation nsguard.io/userns.errno=EINTR is not one of EPERM, ENOSPC, EACCES") },
	{ "errno-lowercase", DEFAULTS, { { ERRNO, "eperm" } }, ERR(-EINVAL, "errno=eperm") },
	{ "errno-number", DEFAULTS, { { ERRNO, "1" } }, ERR(-EINVAL, "errno=1") },
	/* Depth edges. */
	{ "depth-0", DEFAULTS, { { MODE, "allow" }, { DEPTH, "0" } }, OK(ALLOW, 0, EPERM) },
	{ "depth-32", DEFAULTS, { { MODE, "audit" }, { DEPTH, "32" } }, OK(AUDIT, 32, EPERM) },
	{ "depth-33", DEFAULTS, { { MODE, "allow" }, { DEPTH, "33" } }, ERR(-EINVAL, "annotation nsguard.io/userns.max-depth=33 is not a decimal number in 0..32") },
	{ "depth-leading-zero", DEFAULTS, { { MODE, "allow" }, { DEPTH, "007" } }, OK(ALLOW, 7, EPERM) },
	{ "depth-empty", DEFAULTS, { { MODE, "allow" }, { DEPTH, "" } }, ERR(-EINVAL, "max-depth=") },
	{ "depth-1x", DEFAULTS, { { MODE, "allow" }, { DEPTH, "1x" } }, ERR(-EINVAL, "max-depth=1x") },
	{ "depth-huge", DEFAULTS, { { MODE, "allow" }, { DEPTH, "99999999999999999999" } }, ERR(-EINVAL, "max-depth=99999999999999999999 is not") },
	{ "depth-negative", DEFAULTS, { { MODE, "allow" }, { DEPTH, "-1" } }, ERR(-EINVAL, "max-depth=-1") },
	{ "depth-plus", DEFAULTS, { { MODE, "allow" }, { DEPTH, "+1" } }, ERR(-EINVAL, "max-depth=+1") },
	{ "depth-hex", DEFAULTS, { { MODE, "allow" }, { DEPTH, "0x1" } }, ERR(-EINVAL, "max-depth=0x1") },
	{ "depth-space", DEFAULTS, { { MODE, "allow" }, { DEPTH, " 1" } }, ERR(-EINVAL, "max-depth= 1") },
	{ "depth-with-default-allow", CFG(ALLOW, ALL, 8, EPERM), { { DEPTH, "3" } }, OK(ALLOW, 3, EPERM) },
	/* Conflicts and typos. */
	{ "conflict-deny-with-depth", DEFAULTS, { { MODE, "deny" }, { DEPTH, "1" } }, ERR(-EINVAL, "annotation nsguard.io/userns.max-depth=1 conflicts with nsguard.io/userns=deny") },
	{ "conflict-default-deny-with-depth", DEFAULTS, { { DEPTH, "1" } }, ERR(-EINVAL, "max-depth=1 conflicts with the default-mode deny") },
	{ "unknown-nsguard-key", DEFAULTS, { { MODE, "allow" }, { "nsguard.io/userns.maxdepth", "2" } }, ERR(-EINVAL, "unknown annotation nsguard.io/userns.maxdepth") },
	{ "unknown-nsguard-key-case", DEFAULTS, { { "NSGuard.io/userns", "allow" } }, ERR(-EINVAL, "unknown annotation NSGuard.io/userns") },
	{ "unknown-nsguard-prefix-only", DEFAULTS, { { "nsguard.io/", "" } }, ERR(-EINVAL, "unknown annotation nsguard.io/") },
	{ "duplicate-key-in-array", DEFAULTS, { { MODE, "allow" }, { MODE, "deny" } }, ERR(-EINVAL, "given twice") },
	/* Administrator limits: refused naming annotation and limit. */
	{ "limit-mode-not-allowed", CFG(DENY, M(DENY) | M(AUDIT), 32, EPERM), { { MODE, "allow" } }, ERR2(-EPERM, "annotation nsguard.io/userns=allow is not permitted: allowed-modes is deny, audit", CONF) },
	{ "limit-audit-not-allowed", CFG(DENY, M(DENY), 32, EPERM), { { MODE, "audit" } }, ERR(-EPERM, "userns=audit is not permitted: allowed-modes is deny") },
	{ "limit-deny-not-allowed", CFG(ALLOW, M(ALLOW), 32, EPERM), { { MODE, "deny" } }, ERR(-EPERM, "userns=deny is not permitted: allowed-modes is allow") },
	{ "limit-depth-exceeds", CFG(DENY, ALL, 2, EPERM), { { MODE, "allow" }, { DEPTH, "5" } }, ERR2(-EPERM, "annotation nsguard.io/userns.max-depth=5 exceeds the administrator's max-depth 2", "(" CONF ")") },
	{ "limit-depth-equal-ok", CFG(DENY, ALL, 2, EPERM), { { MODE, "allow" }, { DEPTH, "2" } }, OK(ALLOW, 2, EPERM) },
	{ "limit-depth-0-cfg", CFG(DENY, ALL, 0, EPERM), { { MODE, "audit" }, { DEPTH, "1" } }, ERR(-EPERM, "exceeds the administrator's max-depth 0") },
	{ "limit-default-mode-not-checked", CFG(ALLOW, M(DENY), 3, EPERM), { { NULL, NULL } }, OK(ALLOW, 3, EPERM) },
};

static void check_row(const struct row *r)
{
	struct nsguard_config cfg;
	struct nsguard_policy pol = { .base_level = 7, .cgroup_id = 99 };
	size_t n = 0;
	int rc;

	config_defaults(&cfg);
	if (r->cfg.custom) {
		cfg.default_mode = r->cfg.mode;
		cfg.allowed_modes = r->cfg.allowed;
		cfg.max_depth = r->cfg.depth;
		cfg.default_err = r->cfg.err;
		snprintf(cfg.origin, sizeof(cfg.origin), "%s", CONF);
	}
	while (n < ARRAY_SIZE(r->ann) && r->ann[n].key)
		n++;
	nsg_clear_error();
	rc = policy_resolve(&cfg, r->ann, n, &pol);
	if (rc != r->rc)
		FAIL_RET("policy_resolve: expected %s, got %s (%s)", test_errname(r->rc),
			 test_errname(rc), nsg_last_error());
	if (rc < 0) {
		if (r->msg1)
			ASSERT_MSG(r->msg1);
		if (r->msg2)
			ASSERT_MSG(r->msg2);
		return;
	}
	ASSERT_EQ(r->mode, pol.mode);
	ASSERT_EQ(r->depth, pol.max_depth);
	ASSERT_EQ(r->err, pol.err);
	/* The caller's fields are left alone. */
	ASSERT_EQ(7, pol.base_level);
	ASSERT_EQ(99, pol.cgroup_id);
}

static void t_names(void)
{
	__u32 v = 0;

	ASSERT_STREQ("none", policy_mode_name(NSGUARD_MODE_NONE));
	ASSERT_STREQ("deny", policy_mode_name(DENY));
	ASSERT_STREQ("audit", policy_mode_name(AUDIT));
	ASSERT_STREQ("allow", policy_mode_name(ALLOW));
	ASSERT_STREQ("unknown", policy_mode_name(NSGUARD_MODE_COUNT));
	ASSERT_OK(policy_mode_parse("audit", &v));
	ASSERT_EQ(AUDIT, v);
	ASSERT_EQ(-EINVAL, policy_mode_parse("none", &v));
	ASSERT_STREQ("EPERM", policy_errno_name(1));
	ASSERT_STREQ("EACCES", policy_errno_name(13));
	ASSERT_STREQ("ENOSPC", policy_errno_name(28));
	ASSERT_STREQ("EPERM", policy_errno_name(0)); /* all-zero policy */
	ASSERT_TRUE(policy_errno_name(4) == NULL);
	ASSERT_OK(policy_errno_parse("ENOSPC", &v));
	ASSERT_EQ(28, v);
	ASSERT_EQ(-EINVAL, policy_errno_parse("", &v));
}

static void t_depth_parse(void)
{
	static const char *const bad[] = { "", "1x", "99999999999999999999", "-1", "0x1", "33",
					   "+1", " 1", "1 ", "4294967297", "1.0", "\xef\xbc\x91" };
	__u32 v = 99;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++)
		if (policy_depth_parse(bad[i], &v) != -EINVAL)
			FAIL_RET("policy_depth_parse(\"%s\") accepted", bad[i]);
	ASSERT_EQ(99, v);
	ASSERT_OK(policy_depth_parse("0", &v));
	ASSERT_EQ(0, v);
	ASSERT_OK(policy_depth_parse("32", &v));
	ASSERT_EQ(32, v);
	ASSERT_OK(policy_depth_parse("0000000000000000000000001", &v));
	ASSERT_EQ(1, v);
}

static void t_long_value_cut(void)
{
	char value[5000];
	struct oci_annotation a[1] = { { MODE, value } };
	struct nsguard_config cfg;
	struct nsguard_policy pol;

	memset(value, 'x', sizeof(value) - 1);
	value[sizeof(value) - 1] = '\0';
	config_defaults(&cfg);
	ASSERT_ERR(-EINVAL, policy_resolve(&cfg, a, 1, &pol));
	ASSERT_MSG("...");
	ASSERT_TRUE(strlen(nsg_last_error()) < 300);
}

#define COUNT ANNOTATION_MAX_COUNT
#define UNLIMITED NSGUARD_COUNT_UNLIMITED

/* max-count resolves like max-depth: annotation under the admin's ceiling. */
struct count_row {
	const char *name;
	__u32 ceiling, allowed; /* cfg max-count and allowed-modes (0: defaults) */
	struct oci_annotation ann[3];
	int rc;
	__u32 mode, count;
	const char *msg;
};

static const struct count_row count_rows[] = {
	{ "count-default-unlimited", UNLIMITED, 0, { { MODE, "allow" } }, 0, ALLOW, UNLIMITED, NULL },
	{ "count-ceiling-is-default", 5, 0, { { MODE, "audit" } }, 0, AUDIT, 5, NULL },
	{ "count-0", UNLIMITED, 0, { { MODE, "allow" }, { COUNT, "0" } }, 0, ALLOW, 0, NULL },
	{ "count-3", 3, 0, { { MODE, "allow" }, { COUNT, "3" } }, 0, ALLOW, 3, NULL },
	{ "count-unlimited-word", UNLIMITED, 0, { { MODE, "allow" }, { COUNT, "unlimited" } }, 0,
	  ALLOW, UNLIMITED, NULL },
	{ "count-above-ceiling", 3, 0, { { MODE, "allow" }, { COUNT, "4" } }, -EPERM, 0, 0,
	  "annotation nsguard.io/userns.max-count=4 exceeds the administrator's max-count 3" },
	{ "count-unlimited-above-ceiling", 3, 0, { { MODE, "allow" }, { COUNT, "unlimited" } },
	  -EPERM, 0, 0, "max-count=unlimited exceeds the administrator's max-count 3" },
	{ "count-over-bound", UNLIMITED, 0, { { MODE, "allow" }, { COUNT, "1000001" } }, -EINVAL,
	  0, 0, "max-count=1000001 is not a count 0..1000000 or unlimited" },
	{ "count-junk", UNLIMITED, 0, { { MODE, "allow" }, { COUNT, "3x" } }, -EINVAL, 0, 0,
	  "max-count=3x is not" },
	{ "count-with-deny", UNLIMITED, 0, { { MODE, "deny" }, { COUNT, "1" } }, -EINVAL, 0, 0,
	  "max-count=1 conflicts with nsguard.io/userns=deny" },
	{ "count-deny-gets-0", 5, 0, { { MODE, "deny" } }, 0, DENY, 0, NULL },
	{ "learn-not-allowed-by-default", UNLIMITED, 0, { { MODE, "learn" } }, -EPERM, 0, 0,
	  "userns=learn is not permitted: allowed-modes is deny, audit, allow" },
	{ "learn-allowed", 7, M(LEARN), { { MODE, "learn" } }, 0, NSGUARD_MODE_LEARN, 7, NULL },
	{ "learn-count-above-ceiling", 7, M(LEARN), { { MODE, "learn" }, { COUNT, "8" } }, -EPERM,
	  0, 0, "max-count=8 exceeds the administrator's max-count 7" },
	{ "count-default-deny-gets-0", 5, 0, { { NULL, NULL } }, 0, DENY, 0, NULL },
	{ "count-with-default-deny", UNLIMITED, 0, { { COUNT, "2" } }, -EINVAL, 0, 0,
	  "max-count=2 conflicts with the default-mode deny" },
};

static void check_count(const struct count_row *r)
{
	struct nsguard_config cfg;
	struct nsguard_policy pol = { 0 };
	size_t n = 0;

	config_defaults(&cfg);
	cfg.max_count = r->ceiling;
	if (r->allowed)
		cfg.allowed_modes |= r->allowed;
	while (n < ARRAY_SIZE(r->ann) && r->ann[n].key)
		n++;
	nsg_clear_error();
	ASSERT_EQ(r->rc, policy_resolve(&cfg, r->ann, n, &pol));
	if (r->rc) {
		ASSERT_MSG(r->msg);
		return;
	}
	ASSERT_EQ(r->mode, pol.mode);
	ASSERT_EQ(r->count, pol.max_count);
}

/* Every field shows as status and the hook's log line show it. */
static void t_describe(void)
{
	struct nsguard_policy pol = { .mode = AUDIT, .max_depth = 2, .err = EACCES,
				      .base_level = 1, .max_count = UNLIMITED };
	char buf[256];

	policy_describe(&pol, buf, sizeof(buf));
	ASSERT_STREQ("mode audit, max-depth 2, errno EACCES, base-level 1, max-count unlimited", buf);
	pol.max_count = 6;
	pol.depths = (1u << 1) | (1u << 2);
	policy_describe(&pol, buf, sizeof(buf));
	ASSERT_SUBSTR("max-count 6", buf);
	ASSERT_EQ(2, policy_deepest(pol.depths));
	pol.depths = 0;
	ASSERT_EQ(0, policy_deepest(pol.depths));
}

/* nsguard explain: where each value came from. */
static void t_why(void)
{
	struct oci_annotation allow[] = { { "nsguard.io/userns", "allow" },
					  { "nsguard.io/userns.max-depth", "2" } };
	struct oci_annotation deny[] = { { "nsguard.io/userns", "deny" } };
	struct nsguard_policy pol = { 0 };
	struct nsguard_config cfg;
	struct policy_why why;

	config_defaults(&cfg);
	ASSERT_OK(policy_resolve_why(&cfg, allow, 2, &pol, &why));
	ASSERT_EQ(POLICY_FROM_ANNOTATION, why.source[POLICY_MODE]);
	ASSERT_STREQ("allow", why.value[POLICY_MODE]);
	ASSERT_EQ(POLICY_FROM_ANNOTATION, why.source[POLICY_MAX_DEPTH]);
	ASSERT_EQ(2, pol.max_depth);
	ASSERT_EQ(POLICY_FROM_DEFAULT, why.source[POLICY_ERRNO]);
	ASSERT_TRUE(why.value[POLICY_ERRNO] == NULL);
	ASSERT_EQ(POLICY_FROM_DEFAULT, why.source[POLICY_MAX_COUNT]);
	ASSERT_EQ(POLICY_FROM_CALLER, why.source[POLICY_BASE_LEVEL]);

	ASSERT_OK(policy_resolve_why(&cfg, deny, 1, &pol, &why));
	ASSERT_EQ(POLICY_FROM_DENY, why.source[POLICY_MAX_DEPTH]);
	ASSERT_EQ(POLICY_FROM_DENY, why.source[POLICY_MAX_COUNT]);
	ASSERT_EQ(0, pol.max_depth);

	/* The same answer as policy_resolve, refusal included. */
	cfg.max_depth = 1;
	ASSERT_ERR(-EPERM, policy_resolve_why(&cfg, allow, 2, &pol, &why));
	ASSERT_MSG("exceeds the administrator's max-depth 1");
}

/* The pod's identity, as the state parser collects it (oci.c). */
static void pod(struct pod_identity by[IDENT_SRC_NONE], size_t n, const char *const kv[][2])
{
	for (int i = 0; i < IDENT_SRC_NONE; i++)
		identity_free(&by[i]);
	for (size_t i = 0; i < n; i++)
		ASSERT_OK(identity_collect(by, kv[i][0], kv[i][1]));
}

#define CRI_NS "io.kubernetes.cri.sandbox-namespace"
#define CRIO_NS "io.kubernetes.pod.namespace"

/* The section follows identity-source's namespace key only (#42). */
static void t_sections(void)
{
	static const char text[] = "max-depth = 4\n"
				   "[namespace ci-builders]\n"
				   "default-mode = allow\n"
				   "max-depth = 2\n"
				   "[namespace team-*]\n"
				   "default-mode = audit\n"
				   "max-depth = 1\n";
	struct pod_identity by[IDENT_SRC_NONE] = { 0 };
	struct oci_annotation a[1] = { { DEPTH, "3" } };
	struct nsguard_policy pol = { 0 };
	struct nsguard_config cfg;
	struct policy_why why;
	char long_ns[300], text_why[512];

	ASSERT_OK(config_parse(text, strlen(text), "t.conf", &cfg));
	pod(by, 1, (const char *const[][2]){ { CRI_NS, "ci-builders" } });
	ASSERT_OK(policy_resolve_pod(&cfg, by, NULL, 0, &pol, &why));
	ASSERT_EQ(0, why.section.section);
	ASSERT_EQ(SECTION_EXACT, why.section.reason);
	ASSERT_EQ(ALLOW, pol.mode);
	ASSERT_EQ(2, pol.max_depth);
	policy_section_explain(&cfg, &why.section, text_why, sizeof(text_why));
	ASSERT_SUBSTR("matches [namespace ci-builders] (line 2)", text_why);
	/* Without the pod, the node's keys. */
	ASSERT_OK(policy_resolve_why(&cfg, NULL, 0, &pol, &why));
	ASSERT_EQ(DENY, pol.mode);

	/* The section's ceiling holds for annotations. */
	ASSERT_ERR(-EPERM, policy_resolve_pod(&cfg, by, a, 1, &pol, NULL));
	ASSERT_MSG("exceeds the administrator's max-depth 2");

	pod(by, 1, (const char *const[][2]){ { CRI_NS, "team-red" } });
	ASSERT_OK(policy_resolve_pod(&cfg, by, NULL, 0, &pol, &why));
	ASSERT_EQ(SECTION_GLOB, why.section.reason);
	ASSERT_EQ(AUDIT, pol.mode);
	ASSERT_EQ(1, pol.max_depth);

	/* CRI-O's spec: the pod's own io.kubernetes.cri.* key is ignored. */
	cfg.identity_source = IDENT_SRC_CRIO;
	pod(by, 3, (const char *const[][2]){ { CRI_NS, "ci-builders" },
					     { "io.kubernetes.cri-o.Namespace", "ci-builders" },
					     { CRIO_NS, "default" } });
	ASSERT_OK(policy_resolve_pod(&cfg, by, NULL, 0, &pol, &why));
	ASSERT_EQ(-1, why.section.section);
	ASSERT_EQ(SECTION_NO_MATCH, why.section.reason);
	ASSERT_STREQ(CRIO_NS, why.section.key);
	ASSERT_EQ(DENY, pol.mode);
	/* ... and without the kubelet's key, nothing else stands in. */
	pod(by, 2, (const char *const[][2]){ { CRI_NS, "ci-builders" },
					     { "io.kubernetes.cri-o.Namespace", "ci-builders" } });
	ASSERT_OK(policy_resolve_pod(&cfg, by, NULL, 0, &pol, &why));
	ASSERT_EQ(SECTION_NO_KEY, why.section.reason);
	ASSERT_EQ(DENY, pol.mode);
	pod(by, 1, (const char *const[][2]){ { CRIO_NS, "ci-builders" } });
	ASSERT_OK(policy_resolve_pod(&cfg, by, NULL, 0, &pol, &why));
	ASSERT_EQ(0, why.section.section);

	/* containerd: io.kubernetes.pod.namespace is the pod's to write. */
	cfg.identity_source = IDENT_SRC_CONTAINERD;
	ASSERT_OK(policy_resolve_pod(&cfg, by, NULL, 0, &pol, &why));
	ASSERT_EQ(SECTION_NO_KEY, why.section.reason);
	ASSERT_EQ(DENY, pol.mode);

	/* identity-source none: no section ever. */
	cfg.identity_source = IDENT_SRC_NONE;
	pod(by, 1, (const char *const[][2]){ { CRI_NS, "ci-builders" } });
	ASSERT_OK(policy_resolve_pod(&cfg, by, NULL, 0, &pol, &why));
	ASSERT_EQ(SECTION_NO_SOURCE, why.section.reason);
	ASSERT_EQ(DENY, pol.mode);

	/* Untrusted values: glob-like, mended, long: the node's. */
	cfg.identity_source = IDENT_SRC_CONTAINERD;
	memset(long_ns, 'a', sizeof(long_ns) - 1);
	memcpy(long_ns, "team-", 5);
	long_ns[64] = '\0';
	{
		const char *bad[] = { "team-*", "team-?", "*", long_ns, "team-red\n", "team-r d",
				      "Team-red", "team-red.", "team_red", "team-r\xc3\xa9" };

		for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
			pod(by, 1, (const char *const[][2]){ { CRI_NS, bad[i] } });
			ASSERT_OK(policy_resolve_pod(&cfg, by, NULL, 0, &pol, &why));
			ASSERT_EQ(-1, why.section.section);
			ASSERT_EQ(SECTION_UNTRUSTED, why.section.reason);
			ASSERT_EQ(DENY, pol.mode);
		}
	}
	/* Longer than identity.c keeps: cut, so mended. */
	long_ns[64] = 'a';
	long_ns[299] = '\0';
	pod(by, 1, (const char *const[][2]){ { CRI_NS, long_ns } });
	ASSERT_TRUE(by[IDENT_SRC_CONTAINERD].mended[IDENT_NAMESPACE]);
	ASSERT_OK(policy_resolve_pod(&cfg, by, NULL, 0, &pol, &why));
	ASSERT_EQ(SECTION_UNTRUSTED, why.section.reason);
	/* Empty: no namespace at all. */
	pod(by, 1, (const char *const[][2]){ { CRI_NS, "" } });
	ASSERT_OK(policy_resolve_pod(&cfg, by, NULL, 0, &pol, &why));
	ASSERT_EQ(SECTION_NO_KEY, why.section.reason);
	ASSERT_EQ(DENY, pol.mode);
	/* 63 bytes are a namespace. */
	long_ns[63] = '\0';
	pod(by, 1, (const char *const[][2]){ { CRI_NS, long_ns } });
	ASSERT_OK(policy_resolve_pod(&cfg, by, NULL, 0, &pol, &why));
	ASSERT_EQ(1, why.section.section);
	pod(by, 0, NULL);
}

void suite_policy(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(rows); i++)
		TEST_CASE("policy", rows[i].name, check_row, &rows[i]);
	TEST_CASE("policy", "names", t_names);
	TEST_CASE("policy", "why", t_why);
	TEST_CASE("policy", "sections", t_sections);
	TEST_CASE("policy", "depth-parse", t_depth_parse);
	TEST_CASE("policy", "long-value-cut", t_long_value_cut);
	for (i = 0; i < ARRAY_SIZE(count_rows); i++)
		TEST_CASE("policy", count_rows[i].name, check_count, &count_rows[i]);
	TEST_CASE("policy", "describe", t_describe);
}
