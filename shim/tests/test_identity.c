/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Pod identity from annotations (identity.c, oci.c) and the metrics text (metrics.c). */
#include <errno.h>
#include <stdlib.h>

#include "identity.h"
#include "metrics.h"
#include "oci.h"
#include "test.h"
#include "util.h"

static void t_keys(void)
{
	enum identity_source src = IDENT_SRC_NONE;

	ASSERT_EQ(IDENT_POD, identity_field_of("io.kubernetes.cri.sandbox-name", &src));
	ASSERT_EQ(IDENT_SRC_CONTAINERD, src);
	ASSERT_EQ(IDENT_NAMESPACE, identity_field_of("io.kubernetes.cri.sandbox-namespace", NULL));
	ASSERT_EQ(IDENT_CONTAINER, identity_field_of("io.kubernetes.cri.container-name", &src));
	ASSERT_EQ(IDENT_SRC_CONTAINERD, src);
	ASSERT_EQ(IDENT_POD, identity_field_of("io.kubernetes.pod.name", &src));
	ASSERT_EQ(IDENT_SRC_CRIO, src);
	ASSERT_EQ(IDENT_NAMESPACE, identity_field_of("io.kubernetes.pod.namespace", &src));
	ASSERT_EQ(IDENT_SRC_CRIO, src);
	ASSERT_EQ(IDENT_CONTAINER, identity_field_of("io.kubernetes.container.name", &src));
	ASSERT_EQ(IDENT_SRC_CRIO, src);
	ASSERT_EQ(-1, identity_field_of("io.kubernetes.cri.sandbox-id", NULL));
	ASSERT_EQ(-1, identity_field_of("IO.KUBERNETES.POD.NAME", NULL));
	ASSERT_STREQ("namespace", identity_name(IDENT_NAMESPACE));
}

static void t_source_names(void)
{
	enum identity_source src = IDENT_SRC_COUNT;

	ASSERT_OK(identity_source_parse("containerd", &src));
	ASSERT_EQ(IDENT_SRC_CONTAINERD, src);
	ASSERT_OK(identity_source_parse("cri-o", &src));
	ASSERT_EQ(IDENT_SRC_CRIO, src);
	ASSERT_OK(identity_source_parse("none", &src));
	ASSERT_EQ(IDENT_SRC_NONE, src);
	ASSERT_EQ(-EINVAL, identity_source_parse("crio", &src));
	ASSERT_EQ(-EINVAL, identity_source_parse("CRI-O", &src));
	ASSERT_EQ(-EINVAL, identity_source_parse("auto", &src));
	ASSERT_EQ(-EINVAL, identity_source_parse("", &src));
	ASSERT_EQ(IDENT_SRC_NONE, src);
	ASSERT_STREQ("cri-o", identity_source_name(IDENT_SRC_CRIO));
	ASSERT_STREQ("containerd", identity_source_name(IDENT_SRC_CONTAINERD));
}

static void t_sanitize(void)
{
	char big[1000];
	bool changed = true;
	char *s;

	s = identity_sanitize(IDENT_POD, "web-0.shop_1", &changed);
	ASSERT_STREQ("web-0.shop_1", s);
	ASSERT_TRUE(!changed);
	free(s);
	s = identity_sanitize(IDENT_POD, "a\nb\x1b[31m\"c\\ d=e\x7f\xc3\xa9", &changed);
	ASSERT_STREQ("a?b??31m?c??d?e???", s);
	ASSERT_TRUE(changed);
	free(s);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	s = identity_sanitize(IDENT_POD, big, &changed);
	ASSERT_EQ(IDENTITY_MAX, strlen(s));
	ASSERT_TRUE(changed);
	free(s);
	ASSERT_TRUE(identity_sanitize(IDENT_POD, "", &changed) == NULL);
	/* An image reference keeps its '/', ':' and '@'; a pod name does not. */
	s = identity_sanitize(IDENT_IMAGE, "reg.io:5000/team/app@sha256:ab12", &changed);
	ASSERT_STREQ("reg.io:5000/team/app@sha256:ab12", s);
	ASSERT_TRUE(!changed);
	free(s);
	s = identity_sanitize(IDENT_POD, "reg.io:5000/team/app", &changed);
	ASSERT_STREQ("reg.io?5000?team?app", s);
	ASSERT_TRUE(changed);
	free(s);
	s = identity_sanitize(IDENT_IMAGE, big, &changed);
	ASSERT_EQ(sizeof(big) - 1, strlen(s)); /* 999: an image may be longer than a name */
	ASSERT_TRUE(!changed);
	free(s);
	s = identity_sanitize(IDENT_IMAGE, "app:1 \"x\"\n", &changed);
	ASSERT_STREQ("app:1??x??", s);
	ASSERT_TRUE(changed);
	free(s);
}

/*
 * Both families: each is kept apart, and identity-source picks one; the other
 * never fills a field (a tenant under CRI-O writes containerd's keys too).
 * Within a family the state comes before config.json.
 */
static void t_from_annotations(void)
{
	static const char state[] =
		"{\"ociVersion\":\"1\",\"id\":\"x\",\"annotations\":{"
		"\"io.kubernetes.cri.sandbox-name\":\"web-0\","
		"\"io.kubernetes.pod.name\":\"db-1\","
		"\"io.kubernetes.cri.container-name\":\"bad\\nname\\u001b\"}}";
	static const char cfg[] = "{\"annotations\":{\"io.kubernetes.pod.name\":\"other\","
				  "\"io.kubernetes.cri.sandbox-name\":\"other\","
				  "\"io.kubernetes.pod.namespace\":\"store\"}}";
	const struct pod_identity *id;
	struct oci_state st;

	ASSERT_OK(oci_state_parse(state, strlen(state), &st));
	ASSERT_OK(oci_state_merge_config(&st, cfg, strlen(cfg)));
	id = identity_pick(st.identity, IDENT_SRC_CONTAINERD);
	ASSERT_TRUE(id != NULL);
	ASSERT_STREQ("web-0", id->v[IDENT_POD]);
	ASSERT_TRUE(id->v[IDENT_NAMESPACE] == NULL);
	ASSERT_STREQ("bad?name?", id->v[IDENT_CONTAINER]);
	/* Warned once, when picked. */
	ASSERT_TRUE(!id->mended[IDENT_CONTAINER]);
	id = identity_pick(st.identity, IDENT_SRC_CRIO);
	ASSERT_TRUE(id != NULL);
	ASSERT_STREQ("db-1", id->v[IDENT_POD]);
	ASSERT_STREQ("store", id->v[IDENT_NAMESPACE]);
	ASSERT_TRUE(id->v[IDENT_CONTAINER] == NULL);
	ASSERT_TRUE(identity_pick(st.identity, IDENT_SRC_NONE) == NULL);
	/* Labels, not policy annotations. */
	ASSERT_EQ(0, st.n_annotations);
	oci_state_free(&st);
}

/* One family only: the other source shows nothing, never a mix. */
static void t_one_family(void)
{
	struct pod_identity by[IDENT_SRC_NONE] = { 0 };
	const struct pod_identity *id;

	ASSERT_OK(identity_collect(by, "io.kubernetes.cri.sandbox-name", "web-0"));
	ASSERT_OK(identity_collect(by, "io.kubernetes.cri.sandbox-id", "abc"));
	ASSERT_OK(identity_collect(by, "nsguard.io/userns", "allow"));
	id = identity_pick(by, IDENT_SRC_CRIO);
	ASSERT_TRUE(id != NULL && identity_empty(id));
	id = identity_pick(by, IDENT_SRC_CONTAINERD);
	ASSERT_STREQ("web-0", id->v[IDENT_POD]);
	ASSERT_TRUE(identity_pick(by, IDENT_SRC_COUNT) == NULL);
	for (int i = 0; i < IDENT_SRC_NONE; i++)
		identity_free(&by[i]);
}

/* A huge value is cut, never an error. */
static void t_huge_value(void)
{
	size_t n = 100000;
	char *doc = malloc(n + 200);
	struct oci_state st;
	int len;

	ASSERT_TRUE(doc != NULL);
	len = sprintf(doc, "{\"ociVersion\":\"1\",\"id\":\"x\",\"annotations\":{"
			   "\"io.kubernetes.pod.namespace\":\"");
	memset(doc + len, 'n', n);
	strcpy(doc + len + n, "\"}}");
	if (oci_state_parse(doc, strlen(doc), &st) < 0) {
		free(doc);
		FAIL_RET("parse: %s", nsg_last_error());
	}
	free(doc);
	ASSERT_EQ(IDENTITY_MAX, strlen(st.identity[IDENT_SRC_CRIO].v[IDENT_NAMESPACE]));
	oci_state_free(&st);
}

static char *capture(void (*fn)(FILE *, const void *), const void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	fn(f, arg);
	fclose(f);
	return buf;
}

static void escape_one(FILE *f, const void *arg)
{
	metrics_label_value(f, arg);
}

static void t_label_escape(void)
{
	char *s = capture(escape_one, "a\\b\"c\nd");

	ASSERT_STREQ("a\\\\b\\\"c\\nd", s);
	free(s);
	s = capture(escape_one, NULL);
	ASSERT_STREQ("", s);
	free(s);
}

static void write_all(FILE *f, const void *arg)
{
	metrics_write(f, arg);
}

static void t_metrics(void)
{
	struct pod_identity id = { .v = { (char *)"web-0", (char *)"sh\"op", NULL } };
	struct metrics_container c[] = {
		{ .id = "a", .identity = &id, .mode = "deny", .attached = true,
		  .cnt = { .allowed = 1, .denied = 18446744073709551615ull, .audited = 0,
			   .events_dropped = 4 } },
		{ .id = "b", .mode = "audit", .attached = false },
		{ .id = "c", .mode = "deny", .attached = false, .detached = true },
	};
	unsigned long long out[HOOK_RESULT_COUNT][HOOK_REASON_COUNT] = { 0 };
	struct metrics m = { .version = "1.2", .commit = "abc-dirty", .abi = "00ff",
			     .other_build = true, .outcomes = out, .loaded = true,
			     .stats = { .events_dropped = 4, .decisions = 9 }, .c = c, .n = 3 };
	char *s;

	out[HOOK_GUARDED][HOOK_REASON_NONE] = 7;
	out[HOOK_REFUSED][HOOK_REASON_HOST_CAPS] = 2;
	s = capture(write_all, &m);

	ASSERT_TRUE(s != NULL);
	ASSERT_SUBSTR("# TYPE nsguard_program_loaded gauge\nnsguard_program_loaded 1\n", s);
	ASSERT_SUBSTR("nsguard_guarded_containers 1\n", s);
	ASSERT_SUBSTR("# TYPE nsguard_detached_containers gauge\nnsguard_detached_containers 1\n", s);
	ASSERT_SUBSTR("# TYPE nsguard_build_info gauge\n"
		      "nsguard_build_info{version=\"1.2\",commit=\"abc-dirty\",abi=\"00ff\"} 1\n", s);
	ASSERT_SUBSTR("nsguard_pins_other_build 1\n", s);
	ASSERT_SUBSTR("# TYPE nsguard_hook_outcomes_total counter\n", s);
	ASSERT_SUBSTR("nsguard_hook_outcomes_total{result=\"guarded\",reason=\"none\"} 7\n", s);
	ASSERT_SUBSTR("nsguard_hook_outcomes_total{result=\"refused\",reason=\"host-capabilities\"} 2\n",
		      s);
	ASSERT_SUBSTR("nsguard_hook_outcomes_total{result=\"opened\",reason=\"scope\"} 0\n", s);
	/* guarded has no reason but none, refused and opened never none. */
	ASSERT_TRUE(strstr(s, "result=\"guarded\",reason=\"scope\"") == NULL);
	ASSERT_TRUE(strstr(s, "result=\"refused\",reason=\"none\"") == NULL);
	ASSERT_SUBSTR("# TYPE nsguard_decisions_total counter\nnsguard_decisions_total 9\n", s);
	ASSERT_SUBSTR("nsguard_events_dropped_total 4\n", s);
	ASSERT_SUBSTR("nsguard_userns_decisions_total{id=\"a\",pod=\"web-0\",namespace=\"sh\\\"op\","
		      "container=\"\",image=\"\",section=\"\",mode=\"deny\",action=\"denied\"} 18446744073709551615\n", s);
	ASSERT_SUBSTR("nsguard_userns_decisions_total{id=\"b\",pod=\"\",namespace=\"\",container=\"\",image=\"\",section=\"\","
		      "mode=\"audit\",action=\"audited\"} 0\n", s);
	ASSERT_SUBSTR("nsguard_container_events_dropped_total{id=\"a\",pod=\"web-0\","
		      "namespace=\"sh\\\"op\",container=\"\",image=\"\",section=\"\"} 4\n", s);
	/* One HELP and TYPE per family. */
	ASSERT_TRUE(strstr(strstr(s, "# TYPE nsguard_userns_decisions_total") + 1,
			   "# TYPE nsguard_userns_decisions_total") == NULL);
	free(s);
}

void suite_identity(void)
{
	TEST_CASE("identity", "annotation-keys", t_keys);
	TEST_CASE("identity", "source-names", t_source_names);
	TEST_CASE("identity", "sanitize", t_sanitize);
	TEST_CASE("identity", "from-annotations", t_from_annotations);
	TEST_CASE("identity", "one-family", t_one_family);
	TEST_CASE("identity", "huge-value", t_huge_value);
	TEST_CASE("identity", "prometheus-label-escape", t_label_escape);
	TEST_CASE("identity", "prometheus-text", t_metrics);
}
