/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "oci.h"
#include "strict_cases.h"
#include "test.h"
#include "util.h"

/* ---- valid documents, in the shapes real runtimes write ---- */

struct good_row {
	const char *name;
	const char *doc;
	const char *id;
	int pid;
	const char *bundle;
	size_t n_annotations;
	const char *key, *value; /* one annotation to look up */
};

static const struct good_row good[] = {
	{ "crun-create",
	  "{\"ociVersion\":\"1.0.0\",\"id\":\"web\",\"status\":\"created\",\"pid\":4242,"
	  "\"bundle\":\"/run/containers/storage/overlay-containers/web/userdata\","
	  "\"annotations\":{\"io.container.manager\":\"libpod\",\"nsguard.io/userns\":\"allow\"}}",
	  "web", 4242, "/run/containers/storage/overlay-containers/web/userdata", 1,
	  "nsguard.io/userns", "allow" },
	{ "runc-creating",
	  "{\n  \"ociVersion\": \"1.0.2-dev\",\n  \"id\": \"0f3c1e2d9a\",\n  \"pid\": 1,\n"
	  "  \"status\": \"creating\",\n  \"bundle\": \"/b\",\n  \"annotations\": {}\n}\n",
	  "0f3c1e2d9a", 1, "/b", 0, NULL, NULL },
	{ "podman-poststop-no-pid",
	  "{\"ociVersion\":\"1.0.0\",\"id\":\"a_b.c+d-e\",\"status\":\"stopped\",\"bundle\":\"/b\"}",
	  "a_b.c+d-e", 0, "/b", 0, NULL, NULL },
	{ "pid-zero", "{\"ociVersion\":\"1\",\"id\":\"x\",\"pid\":0}", "x", 0, NULL, 0, NULL, NULL },
	{ "pid-int-max", "{\"ociVersion\":\"1\",\"id\":\"x\",\"pid\":2147483647}", "x", 2147483647,
	  NULL, 0, NULL, NULL },
	{ "pid-exponent", "{\"ociVersion\":\"1\",\"id\":\"x\",\"pid\":1e3}", "x", 1000, NULL, 0,
	  NULL, NULL },
	{ "nulls-are-absent",
	  "{\"ociVersion\":\"1\",\"id\":\"x\",\"pid\":null,\"bundle\":null,\"annotations\":null}", "x",
	  0, NULL, 0, NULL, NULL },
	{ "unknown-fields-ignored",
	  "{\"ociVersion\":\"1\",\"id\":\"x\",\"extra\":{\"a\":[1,2,{\"b\":null}]}}", "x", 0, NULL, 0,
	  NULL, NULL },
	{ "trailing-whitespace", "  {\"ociVersion\":\"1\",\"id\":\"x\"} \r\n\t ", "x", 0, NULL, 0,
	  NULL, NULL },
	{ "unicode-annotation",
	  "{\"ociVersion\":\"1\",\"id\":\"x\",\"annotations\":{\"nsguard.io/k\":\"caf\\u00e9 \\\"q\\\"\"}}",
	  "x", 0, NULL, 1, "nsguard.io/k", "caf\xc3\xa9 \"q\"" },
	/* Only nsguard.io/ keys are kept, the prefix matched in any case. */
	{ "only-ours-kept",
	  "{\"ociVersion\":\"1\",\"id\":\"x\",\"annotations\":{\"a\":\"1\",\"nsguard.io\":\"2\","
	  "\"NSGuard.IO/userns\":\"3\",\"x.nsguard.io/userns\":\"4\"}}",
	  "x", 0, NULL, 1, "NSGuard.IO/userns", "3" },
};

static void check_good(const struct good_row *r)
{
	struct oci_state st;

	ASSERT_OK(oci_state_parse(r->doc, strlen(r->doc), &st));
	ASSERT_STREQ(r->id, st.id);
	ASSERT_EQ(r->pid, st.pid);
	ASSERT_STREQ(r->bundle, st.bundle);
	ASSERT_EQ(r->n_annotations, st.n_annotations);
	if (r->key)
		ASSERT_STREQ(r->value, oci_annotation_get(&st, r->key));
	ASSERT_TRUE(oci_annotation_get(&st, "missing") == NULL);
	oci_state_free(&st);
	ASSERT_TRUE(st.id == NULL && st.n_annotations == 0);
}

/* ---- hostile documents ---- */

struct bad_row {
	const char *name;
	const char *doc;
	size_t len; /* 0: strlen(doc) */
	const char *msg;
};

#define WITHLEN(lit) lit, sizeof(lit) - 1
#define S(fields) "{\"ociVersion\":\"1.0.0\"," fields "}"

static const struct bad_row bad[] = {
	{ "empty", "", 0, "empty document" },
	{ "blank", "  \n", 0, "malformed OCI state on stdin" },
	{ "array", "[]", 0, "not a JSON object" },
	{ "string", "\"x\"", 0, "not a JSON object" },
	{ "null", "null", 0, "not a JSON object" },
	{ "number", "42", 0, "not a JSON object" },
	{ "truncated-brace", "{", 0, "malformed OCI state on stdin" },
	{ "truncated-string", "{\"ociVersion\":\"1.0", 0, "malformed" },
	{ "truncated-annotations", S("\"id\":\"x\",\"annotations\":{\"a\":\"b\""), 0, "malformed" },
	{ "truncated-mid-doc", S("\"id\":\"x\""), 12, "malformed" },
	{ "trailing-garbage", S("\"id\":\"x\"") "x", 0, "trailing data" },
	{ "two-documents", S("\"id\":\"x\"") S("\"id\":\"y\""), 0, "trailing data" },
	{ "nul-inside-string", WITHLEN("{\"ociVersion\":\"1\",\"id\":\"a\0b\"}"), "NUL byte" },
	{ "nul-after-doc", WITHLEN("{\"ociVersion\":\"1\",\"id\":\"ab\"}\0"), "NUL byte" },
	{ "nul-escape-in-id", "{\"ociVersion\":\"1\",\"id\":\"web\\u0000../x\"}", 0, "\\u0000" },
	{ "missing-ociVersion", "{\"id\":\"x\"}", 0, "\"ociVersion\" is missing" },
	{ "ociVersion-number", "{\"ociVersion\":1,\"id\":\"x\"}", 0, "\"ociVersion\" is not a string" },
	{ "missing-id", S("\"pid\":1"), 0, "\"id\" is missing" },
	{ "id-null", S("\"id\":null"), 0, "\"id\" is missing" },
	{ "id-number", S("\"id\":7"), 0, "\"id\" is not a string" },
	{ "id-object", S("\"id\":{}"), 0, "\"id\" is not a string" },
	{ "id-dotdot-slash", S("\"id\":\"../x\""), 0, "not a valid container id" },
	{ "id-slash", S("\"id\":\"a/b\""), 0, "not a valid container id" },
	{ "id-hidden", S("\"id\":\".hidden\""), 0, "not a valid container id" },
	{ "id-dotdot", S("\"id\":\"..\""), 0, "not a valid container id" },
	{ "id-empty", S("\"id\":\"\""), 0, "not a valid container id" },
	{ "id-space", S("\"id\":\"a b\""), 0, "not a valid container id" },
	{ "id-newline", S("\"id\":\"a\\nb\""), 0, "not a valid container id" },
	{ "id-utf8", S("\"id\":\"caf\\u00e9\""), 0, "not a valid container id" },
	{ "pid-string", S("\"id\":\"x\",\"pid\":\"42\""), 0, "\"pid\" is not a number" },
	{ "pid-bool", S("\"id\":\"x\",\"pid\":true"), 0, "\"pid\" is not a number" },
	{ "pid-negative", S("\"id\":\"x\",\"pid\":-1"), 0, "\"pid\" is negative" },
	{ "pid-too-big", S("\"id\":\"x\",\"pid\":2147483648"), 0, "\"pid\" is out of range" },
	{ "pid-huge", S("\"id\":\"x\",\"pid\":99999999999999999999999"), 0, "out of range" },
	{ "pid-1e400", S("\"id\":\"x\",\"pid\":1e400"), 0, "a number is out of range" },
	{ "pid-negative-fraction", S("\"id\":\"x\",\"pid\":-0.5"), 0, "\"pid\" is negative" },
	{ "pid-tiny-fraction", S("\"id\":\"x\",\"pid\":1.0000001"), 0, "\"pid\" is not an integer" },
	{ "pid-fraction", S("\"id\":\"x\",\"pid\":1.5"), 0, "\"pid\" is not an integer" },
	{ "bundle-number", S("\"id\":\"x\",\"bundle\":1"), 0, "\"bundle\" is not a string" },
	{ "status-array", S("\"id\":\"x\",\"status\":[]"), 0, "\"status\" is not a string" },
	{ "annotations-array", S("\"id\":\"x\",\"annotations\":[]"), 0, "not an object" },
	{ "annotations-string", S("\"id\":\"x\",\"annotations\":\"a\""), 0, "not an object" },
	{ "annotation-number", S("\"id\":\"x\",\"annotations\":{\"a\":1}"), 0, "\"a\" is not a string" },
	{ "annotation-null", S("\"id\":\"x\",\"annotations\":{\"a\":null}"), 0, "is not a string" },
	{ "annotation-object", S("\"id\":\"x\",\"annotations\":{\"a\":{}}"), 0, "is not a string" },
	{ "duplicate-id", S("\"id\":\"good\",\"id\":\"evil\""), 0, "\"id\" is given twice" },
	{ "duplicate-pid", S("\"id\":\"x\",\"pid\":1,\"pid\":2"), 0, "given twice" },
	{ "duplicate-annotations-object",
	  S("\"id\":\"x\",\"annotations\":{},\"annotations\":{\"nsguard.io/userns\":\"allow\"}"), 0,
	  "given twice" },
	{ "duplicate-annotation-key",
	  S("\"id\":\"x\",\"annotations\":{\"nsguard.io/userns\":\"deny\",\"nsguard.io/userns\":\"allow\"}"),
	  0, "\"nsguard.io/userns\" is given twice" },
	{ "duplicate-nested", S("\"id\":\"x\",\"extra\":[{\"a\":1,\"a\":2}]"), 0, "given twice" },
	{ "duplicate-key-via-nul-escape",
	  S("\"id\":\"x\",\"annotations\":{\"k\":\"a\",\"k\\u0000\":\"b\"}"), 0, "\\u0000" },
	/* What the hook and a runtime could read differently (jsonstrict.h). */
	{ "folded-id", S("\"ID\":\"x\""), 0, "key \"ID\" is \"id\" to runc" },
	{ "folded-annotations", S("\"id\":\"x\",\"Annotations\":{}"), 0, "is \"annotations\" to runc" },
	{ "folded-pair", S("\"id\":\"x\",\"annotations\":{\"nsguard.io/userns\":\"deny\","
			   "\"NSGUARD.IO/USERNS\":\"allow\"}"),
	  0, "are one key to runc" },
	{ "overlong-key", S("\"id\":\"x\",\"\xc1\xa1nnotations\":{}"), 0, "invalid UTF-8 (an overlong" },
	{ "formfeed", S("\"id\":\"x\",\f\"pid\":1"), 0, "control byte 0x0c outside a string" },
	{ "lone-surrogate", S("\"id\":\"x\",\"bundle\":\"/b\\udfff\""), 0, "lone UTF-16 surrogate" },
};

static void check_bad(const struct bad_row *r)
{
	struct oci_state st;
	size_t len = r->len ? r->len : strlen(r->doc);

	ASSERT_ERR(-EINVAL, oci_state_parse(r->doc, len, &st));
	ASSERT_MSG(r->msg);
	ASSERT_TRUE(st.id == NULL && st.annotations == NULL);
	oci_state_free(&st);
}

static void t_bad_id_300(void)
{
	char doc[512], id[301];
	struct oci_state st;

	memset(id, 'a', 300);
	id[300] = '\0';
	snprintf(doc, sizeof(doc), "{\"ociVersion\":\"1\",\"id\":\"%s\"}", id);
	ASSERT_ERR(-EINVAL, oci_state_parse(doc, strlen(doc), &st));
	ASSERT_MSG("not a valid container id");
	ASSERT_MSG("at most 250 bytes");
	ASSERT_TRUE(!oci_id_valid(id));
	/* The longest id whose record name "<id>.json" fits NAME_MAX. */
	id[OCI_ID_MAX] = '\0';
	ASSERT_TRUE(oci_id_valid(id));
	snprintf(doc, sizeof(doc), "{\"ociVersion\":\"1\",\"id\":\"%s\"}", id);
	ASSERT_OK(oci_state_parse(doc, strlen(doc), &st));
	ASSERT_EQ(250, strlen(st.id));
	oci_state_free(&st);
	id[OCI_ID_MAX] = 'a';
	id[OCI_ID_MAX + 1] = '\0';
	ASSERT_TRUE(!oci_id_valid(id));
}

static void t_id_valid(void)
{
	ASSERT_TRUE(oci_id_valid("web-1_a.b+c"));
	ASSERT_TRUE(oci_id_valid("a..b"));
	ASSERT_TRUE(!oci_id_valid(NULL));
	ASSERT_TRUE(!oci_id_valid(""));
	ASSERT_TRUE(!oci_id_valid("."));
	ASSERT_TRUE(!oci_id_valid("-\x01"));
	ASSERT_TRUE(!oci_id_valid("a:b"));
}

/* ---- oci_state_read_fd: a writer child feeds a pipe ---- */

static int feed_pipe(const char *buf, size_t len, pid_t *child)
{
	int fds[2];

	if (pipe(fds) < 0)
		return -1;
	*child = fork();
	if (*child == 0) {
		size_t off = 0;

		close(fds[0]);
		signal(SIGPIPE, SIG_DFL);
		while (off < len) {
			ssize_t w = write(fds[1], buf + off, len - off);

			if (w <= 0)
				_exit(1);
			off += w;
		}
		_exit(0);
	}
	close(fds[1]);
	return fds[0];
}

static void read_fd_case(size_t size, bool valid_prefix, int want)
{
	cleanup_free char *buf = malloc(size + 1);
	struct oci_state st;
	static const char doc[] = "{\"ociVersion\":\"1\",\"id\":\"big\"}";
	pid_t child = -1;
	int fd, r;

	ASSERT_TRUE(buf != NULL);
	memset(buf, ' ', size);
	if (valid_prefix && size >= sizeof(doc) - 1)
		memcpy(buf, doc, sizeof(doc) - 1);
	fd = feed_pipe(buf, size, &child);
	ASSERT_TRUE(fd >= 0 && child > 0);
	nsg_clear_error();
	r = oci_state_read_fd(fd, &st);
	close(fd);
	waitpid(child, NULL, 0);
	ASSERT_EQ(want, r);
	if (want == 0) {
		ASSERT_STREQ("big", st.id);
		oci_state_free(&st);
	} else {
		ASSERT_TRUE(nsg_last_error()[0] != '\0');
	}
}

static void t_read_small(void)
{
	read_fd_case(100, true, 0);
}

static void t_read_exactly_1mib(void)
{
	read_fd_case(OCI_STATE_MAX, true, 0);
}

static void t_read_1mib_plus_1(void)
{
	read_fd_case(OCI_STATE_MAX + 1, true, -EFBIG);
	ASSERT_MSG("OCI state on stdin exceeds 1 MiB");
}

static void t_read_huge(void)
{
	read_fd_case(3 * OCI_STATE_MAX, true, -EFBIG);
}

static void t_read_empty(void)
{
	read_fd_case(0, false, -EINVAL);
	ASSERT_MSG("empty document");
}

static void t_read_bad_fd(void)
{
	struct oci_state st;

	ASSERT_ERR(-EBADF, oci_state_read_fd(-1, &st));
}

/* ---- config.json annotations ---- */

static const char base_state[] =
	"{\"ociVersion\":\"1\",\"id\":\"x\",\"annotations\":{\"a\":\"state\",\"nsguard.io/userns\":\"deny\","
	"\"nsguard.io/userns.errno\":\"EPERM\"}}";

static void t_merge_state_wins(void)
{
	static const char cfg[] = "{\"ociVersion\":\"1.0.2\",\"process\":{\"env\":[\"A=1\",\"A=1\"]},"
				  "\"annotations\":{\"a\":\"config\",\"b\":\"config\","
				  "\"nsguard.io/userns\":\"allow\",\"nsguard.io/userns.max-depth\":\"2\"}}";
	struct oci_state st;

	ASSERT_OK(oci_state_parse(base_state, strlen(base_state), &st));
	ASSERT_OK(oci_state_merge_config(&st, cfg, strlen(cfg)));
	ASSERT_EQ(3, st.n_annotations);
	ASSERT_STREQ("deny", oci_annotation_get(&st, "nsguard.io/userns"));
	ASSERT_STREQ("EPERM", oci_annotation_get(&st, "nsguard.io/userns.errno"));
	ASSERT_STREQ("2", oci_annotation_get(&st, "nsguard.io/userns.max-depth"));
	/* Not ours: neither the state's nor config.json's are kept. */
	ASSERT_TRUE(oci_annotation_get(&st, "a") == NULL);
	ASSERT_TRUE(oci_annotation_get(&st, "b") == NULL);
	oci_state_free(&st);
}

static void t_merge_no_annotations(void)
{
	static const char cfg[] = "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"rootfs\"}}";
	struct oci_state st;

	ASSERT_OK(oci_state_parse(base_state, strlen(base_state), &st));
	ASSERT_OK(oci_state_merge_config(&st, cfg, strlen(cfg)));
	ASSERT_EQ(2, st.n_annotations);
	oci_state_free(&st);
}

/* The mounts scope.c judges: bind, rbind, ro/rw (the last one wins). */
static void t_merge_mounts(void)
{
	static const char cfg[] =
		"{\"mounts\":[{\"destination\":\"/proc\",\"type\":\"proc\",\"source\":\"proc\"},"
		"{\"destination\":\"/a\",\"type\":\"bind\",\"source\":\"/x\",\"options\":[\"ro\",\"rw\"]},"
		"{\"destination\":\"/b\",\"source\":\"/y\",\"options\":[\"rbind\",\"rw\",\"ro\"]},"
		"{\"destination\":\"/c\",\"type\":\"none\",\"source\":\"/z\",\"options\":[\"bind\"]},"
		"{\"destination\":\"/d\",\"source\":\"/z\",\"options\":[\"rbind\",\"rro\",\"rw\"]},"
		"{\"destination\":\"/e\",\"source\":\"/z\",\"options\":[\"rbind\",\"rrw\",\"ro\"]}]}";
	static const char *bad_docs[] = {
		"{\"mounts\":{}}",
		"{\"mounts\":[1]}",
		"{\"mounts\":[{\"type\":\"bind\"}]}",
		"{\"mounts\":[{\"destination\":\"/a\",\"options\":\"ro\"}]}",
		"{\"mounts\":[{\"destination\":\"/a\",\"options\":[1]}]}",
		"{\"mounts\":[{\"destination\":\"/a\",\"destination\":\"/b\"}]}",
	};
	struct oci_state st;

	ASSERT_OK(oci_state_parse(base_state, strlen(base_state), &st));
	ASSERT_OK(oci_state_merge_config(&st, cfg, strlen(cfg)));
	ASSERT_TRUE(st.have_config);
	ASSERT_EQ(6, st.n_mounts);
	ASSERT_TRUE(!st.mounts[0].bind && !st.mounts[0].ro);
	ASSERT_STREQ("/x", st.mounts[1].source);
	ASSERT_TRUE(st.mounts[1].bind && !st.mounts[1].rbind && !st.mounts[1].ro);
	ASSERT_TRUE(st.mounts[2].bind && st.mounts[2].rbind && st.mounts[2].ro);
	ASSERT_TRUE(st.mounts[3].bind && !st.mounts[3].rbind);
	/* rro holds whatever ro/rw say; rrw clears ro wherever it stands. */
	ASSERT_TRUE(st.mounts[4].ro);
	ASSERT_TRUE(!st.mounts[5].ro);
	oci_state_free(&st);
	for (size_t i = 0; i < ARRAY_SIZE(bad_docs); i++) {
		ASSERT_OK(oci_state_parse(base_state, strlen(base_state), &st));
		ASSERT_ERR(-EINVAL, oci_state_merge_config(&st, bad_docs[i], strlen(bad_docs[i])));
		oci_state_free(&st);
	}
}

/* linux.readonlyPaths and maskedPaths, as written (mounts.c judges /proc/sys by them). */
static void t_merge_ro_paths(void)
{
	static const char cfg[] = "{\"linux\":{\"readonlyPaths\":[\"/proc/sys\",\"/proc//x/\"],"
				  "\"maskedPaths\":[\"/proc/kcore\"]}}";
	struct oci_state st;

	ASSERT_OK(oci_state_parse(base_state, strlen(base_state), &st));
	ASSERT_OK(oci_state_merge_config(&st, cfg, strlen(cfg)));
	ASSERT_EQ(2, (int)st.n_ro_paths);
	ASSERT_STREQ("/proc/sys", st.ro_paths[0]);
	ASSERT_STREQ("/proc//x/", st.ro_paths[1]);
	ASSERT_EQ(1, (int)st.n_masked_paths);
	ASSERT_STREQ("/proc/kcore", st.masked_paths[0]);
	oci_state_free(&st);
	ASSERT_OK(oci_state_parse(base_state, strlen(base_state), &st));
	ASSERT_OK(oci_state_merge_config(&st, "{\"linux\":{\"readonlyPaths\":null}}", 32));
	ASSERT_EQ(0, (int)st.n_ro_paths);
	oci_state_free(&st);
}

/* linux.cgroupsPath: where the runtime put the container (scope.c checks it). */
static void t_merge_cgroups_path(void)
{
	static const char cfg[] = "{\"linux\":{\"cgroupsPath\":\"/nsg-ct/a\",\"x\":1}}";
	static const char *bad_docs[] = {
		"{\"linux\":[]}",
		"{\"linux\":{\"cgroupsPath\":1}}",
		/* A runtime in Go takes the last one: refuse, as for annotations. */
		"{\"linux\":{\"cgroupsPath\":\"/a\",\"cgroupsPath\":\"/b\"}}",
	};
	struct oci_state st;

	ASSERT_OK(oci_state_parse(base_state, strlen(base_state), &st));
	ASSERT_OK(oci_state_merge_config(&st, cfg, strlen(cfg)));
	ASSERT_STREQ("/nsg-ct/a", st.cgroups_path);
	oci_state_free(&st);
	ASSERT_OK(oci_state_parse(base_state, strlen(base_state), &st));
	ASSERT_OK(oci_state_merge_config(&st, "{\"linux\":{}}", 12));
	ASSERT_TRUE(st.cgroups_path == NULL);
	oci_state_free(&st);
	for (size_t i = 0; i < ARRAY_SIZE(bad_docs); i++) {
		ASSERT_OK(oci_state_parse(base_state, strlen(base_state), &st));
		ASSERT_ERR(-EINVAL, oci_state_merge_config(&st, bad_docs[i], strlen(bad_docs[i])));
		oci_state_free(&st);
	}
}

/*
 * Device rules (review: a devtmpfs and an allow-all rule reached every host
 * device): which config.json leaves a block device or every char device
 * open (devices_open names the entry), which does not.
 */
static const struct {
	const char *name, *linux_json, *open;
} dev_rows[] = {
	{ "docker-default",
	  "{\"resources\":{\"devices\":[{\"allow\":false,\"access\":\"rwm\"},"
	  "{\"allow\":true,\"type\":\"c\",\"major\":1,\"minor\":5,\"access\":\"rwm\"},"
	  "{\"allow\":true,\"type\":\"c\",\"major\":136,\"access\":\"rwm\"},"
	  "{\"allow\":true,\"type\":\"b\",\"access\":\"m\"}]}}",
	  NULL },
	{ "allow-all", "{\"resources\":{\"devices\":[{\"allow\":true,\"access\":\"rwm\"}]}}",
	  "linux.resources.devices[0]" },
	{ "block-rw",
	  "{\"resources\":{\"devices\":[{\"allow\":false,\"access\":\"rwm\"},"
	  "{\"allow\":true,\"type\":\"b\",\"major\":8,\"minor\":0,\"access\":\"rw\"}]}}",
	  "linux.resources.devices[1]" },
	{ "every-char-read",
	  "{\"resources\":{\"devices\":[{\"allow\":true,\"type\":\"c\",\"access\":\"r\"}]}}",
	  "linux.resources.devices[0]" },
	{ "every-char-major-minus-one",
	  "{\"resources\":{\"devices\":[{\"allow\":true,\"type\":\"c\",\"major\":-1,\"access\":\"w\"}]}}",
	  "linux.resources.devices[0]" },
	{ "odd-major", "{\"resources\":{\"devices\":[{\"allow\":true,\"type\":\"c\",\"major\":\"1\"}]}}",
	  "linux.resources.devices[0]" },
	{ "block-node", "{\"devices\":[{\"path\":\"/dev/fuse\",\"type\":\"c\",\"major\":10,\"minor\":229},"
	  "{\"path\":\"/dev/sda\",\"type\":\"b\",\"major\":8,\"minor\":0}]}",
	  "linux.devices[1]" },
	/* Review: as runc and crun read them. */
	{ "negative-major", "{\"resources\":{\"devices\":[{\"allow\":true,\"type\":\"c\",\"major\":-2,\"access\":\"rw\"}]}}",
	  "linux.resources.devices[0]" },
	{ "major-2-to-the-32-minus-1", "{\"resources\":{\"devices\":[{\"allow\":true,\"type\":\"c\",\"major\":4294967295,\"access\":\"rw\"}]}}",
	  "linux.resources.devices[0]" },
	{ "type-word-block", "{\"resources\":{\"devices\":[{\"allow\":true,\"type\":\"block\",\"major\":8,\"access\":\"rw\"}]}}",
	  "linux.resources.devices[0]" },
	{ "type-word-char", "{\"resources\":{\"devices\":[{\"allow\":true,\"type\":\"char\",\"major\":1,\"access\":\"rw\"}]}}",
	  "linux.resources.devices[0]" },
	{ "scsi-generic", "{\"resources\":{\"devices\":[{\"allow\":true,\"type\":\"c\",\"major\":21,\"access\":\"rw\"}]}}",
	  "linux.resources.devices[0]" },
	{ "scsi-generic-node", "{\"devices\":[{\"path\":\"/dev/sg0\",\"type\":\"c\",\"major\":21,\"minor\":0}]}",
	  "linux.devices[0]" },
	{ "char-node", "{\"devices\":[{\"path\":\"/dev/fuse\",\"type\":\"c\",\"major\":10,\"minor\":229}]}",
	  NULL },
};

static void dev_row(size_t i)
{
	cleanup_free char *cfg = NULL;
	struct oci_state st;

	ASSERT_TRUE(asprintf(&cfg, "{\"linux\":%s}", dev_rows[i].linux_json) > 0);
	ASSERT_OK(oci_state_parse(base_state, strlen(base_state), &st));
	ASSERT_OK(oci_state_merge_config(&st, cfg, strlen(cfg)));
	if (dev_rows[i].open)
		ASSERT_STREQ(dev_rows[i].open, st.devices_open ? st.devices_open : "(none)");
	else
		ASSERT_STREQ("(none)", st.devices_open ? st.devices_open : "(none)");
	oci_state_free(&st);
}

/* "{"annotations":{"k0":"v","k1":"v",...}}" with n keys named PREFIX<i>. */
static char *annotations_doc(const char *prefix, size_t n)
{
	size_t cap = 64 + n * (strlen(prefix) + 32), len = 0, i;
	char *doc = malloc(cap);

	if (!doc)
		return NULL;
	len += snprintf(doc + len, cap - len, "{\"annotations\":{");
	for (i = 0; i < n; i++)
		len += snprintf(doc + len, cap - len, "%s\"%s%zu\":\"v\"", i ? "," : "", prefix, i);
	snprintf(doc + len, cap - len, "}}");
	return doc;
}

/* A tenant's 70 000 annotations of its own: parsed, none kept. */
static void t_merge_many_foreign(void)
{
	cleanup_free char *cfg = annotations_doc("io.example/k", 70000);
	struct oci_state st;

	ASSERT_TRUE(cfg != NULL);
	ASSERT_OK(oci_state_parse(base_state, strlen(base_state), &st));
	ASSERT_OK(oci_state_merge_config(&st, cfg, strlen(cfg)));
	ASSERT_EQ(2, st.n_annotations);
	oci_state_free(&st);
}

static void t_merge_too_many_ours(void)
{
	cleanup_free char *ok = annotations_doc("nsguard.io/k", OCI_ANNOTATIONS_MAX - 2);
	cleanup_free char *over = annotations_doc("nsguard.io/k", OCI_ANNOTATIONS_MAX - 1);
	struct oci_state st;

	ASSERT_TRUE(ok != NULL && over != NULL);
	ASSERT_OK(oci_state_parse(base_state, strlen(base_state), &st));
	ASSERT_OK(oci_state_merge_config(&st, ok, strlen(ok)));
	ASSERT_EQ(OCI_ANNOTATIONS_MAX, st.n_annotations);
	oci_state_free(&st);
	ASSERT_OK(oci_state_parse(base_state, strlen(base_state), &st));
	ASSERT_ERR(-EINVAL, oci_state_merge_config(&st, over, strlen(over)));
	ASSERT_MSG("more than 16 nsguard.io/ annotations");
	oci_state_free(&st);
}

/* Keys the state already has are not added again, so they do not count. */
static void t_merge_bound_counts_added(void)
{
	cleanup_free char *more = annotations_doc("nsguard.io/k", OCI_ANNOTATIONS_MAX - 2);
	cleanup_free char *cfg = NULL;
	struct oci_state st;

	ASSERT_TRUE(more != NULL);
	/* The state's two keys again, then 14 new ones: 16 in all. */
	ASSERT_TRUE(asprintf(&cfg, "{\"annotations\":{\"nsguard.io/userns\":\"allow\","
				   "\"nsguard.io/userns.errno\":\"EACCES\",%s",
			     more + strlen("{\"annotations\":{")) > 0);
	ASSERT_OK(oci_state_parse(base_state, strlen(base_state), &st));
	ASSERT_OK(oci_state_merge_config(&st, cfg, strlen(cfg)));
	ASSERT_EQ(OCI_ANNOTATIONS_MAX, st.n_annotations);
	ASSERT_STREQ("deny", oci_annotation_get(&st, "nsguard.io/userns"));
	oci_state_free(&st);
}

struct merge_bad_row {
	const char *name, *doc, *msg;
};

static const struct merge_bad_row merge_bad[] = {
	{ "truncated", "{\"annotations\":{", "malformed config.json" },
	{ "not-object", "[1]", "not a JSON object" },
	{ "annotations-array", "{\"annotations\":[]}", "not an object" },
	{ "annotation-number", "{\"annotations\":{\"k\":1}}", "not a string" },
	{ "duplicate-annotation", "{\"annotations\":{\"k\":\"a\",\"k\":\"b\"}}", "given twice" },
	{ "duplicate-top-level", "{\"annotations\":{},\"annotations\":{\"k\":\"b\"}}", "given twice" },
	/* linux.readonlyPaths / maskedPaths (#40): what the runtime would not decode. */
	{ "readonly-paths-object", "{\"linux\":{\"readonlyPaths\":{}}}", "readonlyPaths is not an array" },
	{ "masked-paths-number", "{\"linux\":{\"maskedPaths\":[\"/a\",1]}}",
	  "maskedPaths holds a non-string" },
	{ "readonly-paths-twice",
	  "{\"linux\":{\"readonlyPaths\":[\"/proc/sys\"],\"readonlyPaths\":[]}}", "given twice" },
	/* Go folds keys: readonlypaths would be readonlyPaths to runc. */
	{ "readonly-paths-folded",
	  "{\"linux\":{\"readonlypaths\":[]}}", "" },
};

static void check_merge_bad(const struct merge_bad_row *r)
{
	struct oci_state st;

	ASSERT_OK(oci_state_parse(base_state, strlen(base_state), &st));
	ASSERT_ERR(-EINVAL, oci_state_merge_config(&st, r->doc, strlen(r->doc)));
	ASSERT_MSG(r->msg);
	oci_state_free(&st);
}

/* Each document runc, crun and nsguard could read differently (strict_cases.h). */
static void check_merge_strict(const struct strict_case *c)
{
	struct oci_state st;

	ASSERT_OK(oci_state_parse(base_state, strlen(base_state), &st));
	ASSERT_ERR(-EINVAL, oci_state_merge_config(&st, c->doc, c->len ?: strlen(c->doc)));
	ASSERT_MSG("malformed config.json: ");
	ASSERT_MSG(c->msg);
	ASSERT_TRUE(!st.have_config);
	oci_state_free(&st);
}

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");

	if (!f)
		return -errno;
	fputs(text, f);
	return fclose(f) == 0 ? 0 : -errno;
}

static void t_merge_bundle(void)
{
	char dir[] = "/tmp/nsguard-test-bundle.XXXXXX", path[128], doc[256];
	struct oci_state st;

	ASSERT_TRUE(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/config.json", dir);
	snprintf(doc, sizeof(doc), "{\"ociVersion\":\"1\",\"id\":\"x\",\"bundle\":\"%s\"}", dir);

	/* Missing config.json: refused, nothing is guessed. */
	ASSERT_OK(oci_state_parse(doc, strlen(doc), &st));
	ASSERT_ERR(-ENOENT, oci_state_merge_bundle_annotations(&st));
	ASSERT_MSG("config.json (No such file or directory): nsguard reads");
	ASSERT_EQ(0, st.n_annotations);

	ASSERT_OK(write_file(path, "{\"annotations\":{\"nsguard.io/userns\":\"audit\"}}"));
	ASSERT_OK(oci_state_merge_bundle_annotations(&st));
	ASSERT_STREQ("audit", oci_annotation_get(&st, "nsguard.io/userns"));
	oci_state_free(&st);

	ASSERT_OK(write_file(path, "{\"annotations\":"));
	ASSERT_OK(oci_state_parse(doc, strlen(doc), &st));
	ASSERT_ERR(-EINVAL, oci_state_merge_bundle_annotations(&st));
	ASSERT_MSG(path);
	oci_state_free(&st);
	unlink(path);

	/* A directory where the file should be is an error, not "missing". */
	ASSERT_TRUE(mkdir(path, 0700) == 0);
	ASSERT_OK(oci_state_parse(doc, strlen(doc), &st));
	ASSERT_TRUE(oci_state_merge_bundle_annotations(&st) < 0);
	ASSERT_MSG(path);
	oci_state_free(&st);
	rmdir(path);
	rmdir(dir);
}

/* config.json of exactly OCI_CONFIG_MAX bytes is read; one byte more is not. */
static void t_merge_bundle_size(void)
{
	static const char head[] = "{\"annotations\":{\"nsguard.io/userns\":\"audit\"}}";
	char dir[] = "/tmp/nsguard-test-bundle.XXXXXX", path[128], doc[256];
	cleanup_free char *text = malloc(OCI_CONFIG_MAX + 2);
	struct oci_state st;

	ASSERT_TRUE(text != NULL);
	ASSERT_TRUE(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/config.json", dir);
	snprintf(doc, sizeof(doc), "{\"ociVersion\":\"1\",\"id\":\"x\",\"bundle\":\"%s\"}", dir);
	memcpy(text, head, strlen(head));
	memset(text + strlen(head), ' ', OCI_CONFIG_MAX - strlen(head));
	text[OCI_CONFIG_MAX] = '\0';

	ASSERT_OK(write_file(path, text));
	ASSERT_OK(oci_state_parse(doc, strlen(doc), &st));
	ASSERT_OK(oci_state_merge_bundle_annotations(&st));
	ASSERT_STREQ("audit", oci_annotation_get(&st, "nsguard.io/userns"));
	oci_state_free(&st);

	strcpy(text + OCI_CONFIG_MAX, " ");
	ASSERT_OK(write_file(path, text));
	ASSERT_OK(oci_state_parse(doc, strlen(doc), &st));
	ASSERT_ERR(-EFBIG, oci_state_merge_bundle_annotations(&st));
	ASSERT_MSG("is larger than 1 MiB");
	oci_state_free(&st);
	unlink(path);
	rmdir(dir);
}

static void t_merge_no_bundle(void)
{
	static const char doc[] = "{\"ociVersion\":\"1\",\"id\":\"x\"}";
	struct oci_state st;

	ASSERT_OK(oci_state_parse(doc, strlen(doc), &st));
	ASSERT_ERR(-EINVAL, oci_state_merge_bundle_annotations(&st));
	ASSERT_MSG("the state has no bundle");
	oci_state_free(&st);
}

/* process.capabilities: does any set keep CAP_SYS_ADMIN or CAP_BPF? */
static const struct {
	const char *doc;
	bool detach, have;
} caps_rows[] = {
	{ "{}", true, false },
	{ "{\"process\":{}}", true, false },
	{ "{\"process\":{\"capabilities\":null}}", true, false },
	{ "{\"process\":{\"capabilities\":{}}}", false, true },
	{ "{\"process\":{\"capabilities\":{\"bounding\":[\"CAP_CHOWN\",\"CAP_KILL\"]}}}", false, true },
	{ "{\"process\":{\"capabilities\":{\"bounding\":[\"CAP_SYS_ADMIN\"]}}}", true, true },
	{ "{\"process\":{\"capabilities\":{\"ambient\":[\"CAP_BPF\"]}}}", true, true },
	{ "{\"process\":{\"capabilities\":{\"effective\":[\"sys_admin\"]}}}", true, true },
	{ "{\"process\":{\"capabilities\":{\"permitted\":[\"cap_bpf\"]}}}", true, true },
	/* crun reads names with libcap's cap_from_name: any other spelling may be 21. */
	{ "{\"process\":{\"capabilities\":{\"inheritable\":[\"CAP_SYS_ADMINX\"]}}}", true, true },
	{ "{\"process\":{\"capabilities\":{\"bounding\":[\"21\"]}}}", true, true },
	{ "{\"process\":{\"capabilities\":{\"bounding\":[\"0x15\"]}}}", true, true },
	{ "{\"process\":{\"capabilities\":{\"bounding\":[\"CAP_SYS_ADMIN \"]}}}", true, true },
	{ "{\"process\":{\"capabilities\":{\"bounding\":[\"cap_chown\"]}}}", true, true },
	{ "{\"process\":{\"capabilities\":{\"bounding\":[\"CAP_SYS_MODULE\"]}}}", true, true },
	{ "{\"process\":{\"capabilities\":{\"bounding\":[\"CAP_SYS_RAWIO\"]}}}", true, true },
	{ "{\"process\":{\"capabilities\":{\"bounding\":[\"CAP_SYS_PTRACE\",\"CAP_MKNOD\"]}}}", false, true },
};

static void caps_row(size_t i)
{
	struct oci_state st = { 0 };

	ASSERT_OK(oci_state_merge_config(&st, caps_rows[i].doc, strlen(caps_rows[i].doc)));
	ASSERT_EQ(caps_rows[i].detach, st.caps_detach);
	ASSERT_EQ(caps_rows[i].have, st.have_caps);
	oci_state_free(&st);
}

static void t_caps_bad(void)
{
	static const char *const docs[] = {
		"{\"process\":[]}",
		"{\"process\":{\"capabilities\":[]}}",
		"{\"process\":{\"capabilities\":{\"bounding\":\"CAP_BPF\"}}}",
		"{\"process\":{\"capabilities\":{\"bounding\":[1]}}}",
		/* Go reads these as capabilities and bounding: nsguard must not miss them. */
		"{\"process\":{\"Capabilities\":{\"bounding\":[\"CAP_SYS_ADMIN\"]}}}",
		"{\"process\":{\"capabilities\":{\"BOUNDING\":[\"CAP_SYS_ADMIN\"]}}}",
	};

	for (size_t i = 0; i < ARRAY_SIZE(docs); i++) {
		struct oci_state st = { 0 };

		ASSERT_ERR(-EINVAL, oci_state_merge_config(&st, docs[i], strlen(docs[i])));
		oci_state_free(&st);
	}
}

void suite_oci(void)
{
	char name[128];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(good); i++) {
		snprintf(name, sizeof(name), "parse-valid-%s", good[i].name);
		TEST_CASE("oci", name, check_good, &good[i]);
	}
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		snprintf(name, sizeof(name), "parse-reject-%s", bad[i].name);
		TEST_CASE("oci", name, check_bad, &bad[i]);
	}
	TEST_CASE("oci", "parse-reject-id-300-chars", t_bad_id_300);
	TEST_CASE("oci", "id-valid", t_id_valid);
	TEST_CASE("oci", "read-fd-small", t_read_small);
	TEST_CASE("oci", "read-fd-exactly-1mib", t_read_exactly_1mib);
	TEST_CASE("oci", "read-fd-1mib-plus-1", t_read_1mib_plus_1);
	TEST_CASE("oci", "read-fd-3mib", t_read_huge);
	TEST_CASE("oci", "read-fd-empty", t_read_empty);
	TEST_CASE("oci", "read-fd-bad-fd", t_read_bad_fd);
	TEST_CASE("oci", "merge-state-wins", t_merge_state_wins);
	TEST_CASE("oci", "merge-no-annotations", t_merge_no_annotations);
	TEST_CASE("oci", "merge-mounts", t_merge_mounts);
	TEST_CASE("oci", "merge-cgroups-path", t_merge_cgroups_path);
	TEST_CASE("oci", "merge-readonly-masked-paths", t_merge_ro_paths);
	TEST_CASE("oci", "merge-many-foreign-annotations", t_merge_many_foreign);
	TEST_CASE("oci", "merge-too-many-nsguard-annotations", t_merge_too_many_ours);
	TEST_CASE("oci", "merge-bound-counts-added-keys", t_merge_bound_counts_added);
	for (i = 0; i < ARRAY_SIZE(merge_bad); i++) {
		snprintf(name, sizeof(name), "merge-reject-%s", merge_bad[i].name);
		TEST_CASE("oci", name, check_merge_bad, &merge_bad[i]);
	}
	for (i = 0; i < ARRAY_SIZE(strict_cases); i++) {
		snprintf(name, sizeof(name), "merge-reject-%s", strict_cases[i].name);
		TEST_CASE("oci", name, check_merge_strict, &strict_cases[i]);
	}
	TEST_CASE("oci", "merge-bundle-file", t_merge_bundle);
	TEST_CASE("oci", "merge-bundle-size-bound", t_merge_bundle_size);
	TEST_CASE("oci", "merge-no-bundle", t_merge_no_bundle);
	for (i = 0; i < ARRAY_SIZE(caps_rows); i++) {
		snprintf(name, sizeof(name), "merge-capabilities-%zu", i);
		TEST_CASE("oci", name, caps_row, i);
	}
	TEST_CASE("oci", "merge-capabilities-malformed", t_caps_bad);
	for (size_t i = 0; i < ARRAY_SIZE(dev_rows); i++) {
		snprintf(name, sizeof(name), "devices-%s", dev_rows[i].name);
		TEST_CASE("oci", name, dev_row, i);
	}
}
