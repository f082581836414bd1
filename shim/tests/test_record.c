/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oci.h"
#include "record.h"
#include "test.h"
#include "util.h"

static char tmpdir[64];
static char recdir[128];

static void setup(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/nsguard-test-rec.XXXXXX");
	if (!mkdtemp(tmpdir))
		abort();
	/* Nested and not yet there: record_write must create it. */
	snprintf(recdir, sizeof(recdir), "%s/run/containers", tmpdir);
}

static void teardown(void)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "# could not remove %s\n", tmpdir);
}

static struct nsguard_record sample(const char *id, __u64 cgid)
{
	struct nsguard_record r = {
		.id = (char *)id,
		.cgroup_path = (char *)"/machine.slice/libpod-x.scope/container",
		.cgroup_id = cgid,
		.link_pin = (char *)"/sys/fs/bpf/nsguard/links/1234",
		.pid = 4321,
		.start_time = 0x8000000000000007ull,
		.policy = { .mode = NSGUARD_MODE_AUDIT, .max_depth = 3, .base_level = 2,
			    .err = 28, .cgroup_id = cgid, .max_count = 6 },
	};
	return r;
}

static int count_entries(const char *dir, bool hidden_only)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    (!hidden_only || de->d_name[0] == '.'))
			n++;
	closedir(d);
	return n;
}

static void t_roundtrip(void)
{
	struct nsguard_record in = sample("web", 0x8000000000000005ull), out;
	struct stat sb;

	ASSERT_OK(record_write(recdir, &in));
	ASSERT_TRUE(stat(recdir, &sb) == 0);
	ASSERT_EQ(0700, sb.st_mode & 0777);
	ASSERT_OK(record_read(recdir, "web", &out));
	ASSERT_STREQ(in.id, out.id);
	ASSERT_STREQ(in.cgroup_path, out.cgroup_path);
	ASSERT_EQ_U64(in.cgroup_id, out.cgroup_id);
	ASSERT_STREQ(in.link_pin, out.link_pin);
	ASSERT_EQ(in.policy.mode, out.policy.mode);
	ASSERT_EQ(in.policy.max_depth, out.policy.max_depth);
	ASSERT_EQ(in.policy.base_level, out.policy.base_level);
	ASSERT_EQ(in.policy.err, out.policy.err);
	ASSERT_EQ_U64(in.policy.cgroup_id, out.policy.cgroup_id);
	ASSERT_EQ(in.policy.max_count, out.policy.max_count);
	ASSERT_EQ(in.pid, out.pid);
	ASSERT_EQ_U64(in.start_time, out.start_time);
	record_free(&out);
	ASSERT_TRUE(out.id == NULL);
	ASSERT_EQ(0, count_entries(recdir, true));
}

static void t_roundtrip_extremes(void)
{
	struct nsguard_record in = sample("x", ~0ull), out;

	in.link_pin = NULL;
	in.pid = 0; /* no init (nsguard attach): no "pid", no "start_time" */
	in.policy = (struct nsguard_policy){ .mode = NSGUARD_MODE_NONE, .max_depth = 0xffffffffu,
					     .base_level = 0, .err = 0, .cgroup_id = 0 };
	ASSERT_OK(record_write(recdir, &in));
	ASSERT_OK(record_read(recdir, "x", &out));
	ASSERT_TRUE(out.link_pin == NULL);
	ASSERT_EQ(0, out.pid);
	ASSERT_EQ_U64(0, out.start_time);
	ASSERT_EQ_U64(~0ull, out.cgroup_id);
	ASSERT_EQ(NSGUARD_MODE_NONE, out.policy.mode);
	ASSERT_EQ(0xffffffffu, out.policy.max_depth);
	ASSERT_EQ_U64(0, out.policy.cgroup_id);
	record_free(&out);
}

static void t_overwrite(void)
{
	struct nsguard_record in = sample("web", 1), out;

	ASSERT_OK(record_write(recdir, &in));
	in.policy.mode = NSGUARD_MODE_DENY;
	in.cgroup_path = (char *)"/other";
	ASSERT_OK(record_write(recdir, &in));
	ASSERT_OK(record_read(recdir, "web", &out));
	ASSERT_EQ(NSGUARD_MODE_DENY, out.policy.mode);
	ASSERT_STREQ("/other", out.cgroup_path);
	record_free(&out);
	ASSERT_EQ(0, count_entries(recdir, true));
}

static void t_remove(void)
{
	struct nsguard_record in = sample("gone", 1), out;

	ASSERT_OK(record_write(recdir, &in));
	ASSERT_OK(record_remove(recdir, "gone", 1));
	ASSERT_ERR(-ENOENT, record_read(recdir, "gone", &out));
	ASSERT_MSG("no record for gone");
	ASSERT_EQ(-ENOENT, record_read_cgroup(recdir, 1, &out));
	/* Removing what is not there is success (poststop may run twice). */
	ASSERT_OK(record_remove(recdir, "gone", 1));
	ASSERT_OK(record_remove("/tmp/nsguard-no-such-dir", "gone", 1));
}

static void t_bad_ids(void)
{
	struct nsguard_record in = sample("../evil", 1), out;

	ASSERT_ERR(-EINVAL, record_write(recdir, &in));
	ASSERT_ERR(-EINVAL, record_read(recdir, "../x", &out));
	ASSERT_ERR(-EINVAL, record_read(recdir, ".hidden", &out));
	ASSERT_ERR(-EINVAL, record_remove(recdir, "a/b", 1));
}

static int write_raw(const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", recdir, name);
	f = fopen(path, "we");
	if (!f)
		return -errno;
	fputs(text, f);
	return fclose(f) == 0 ? 0 : -errno;
}

struct seen {
	char ids[8][64];
	int n;
	int stop_after;
};

static int collect(const struct nsguard_record *rec, void *data)
{
	struct seen *s = data;

	if (s->n < 8)
		snprintf(s->ids[s->n], sizeof(s->ids[0]), "%s", rec->id);
	s->n++;
	if (s->stop_after && s->n >= s->stop_after)
		return -ECANCELED;
	return 0;
}

static void t_foreach(void)
{
	struct nsguard_record a = sample("b-second", 2), b = sample("a-first", 1),
			      c = sample("c-third", 3), out;
	struct seen s = { 0 };

	ASSERT_OK(record_write(recdir, &a));
	ASSERT_OK(record_write(recdir, &b));
	ASSERT_OK(record_write(recdir, &c));
	/* Debris that must be skipped: a malformed record, a leftover temp file,
	 * a record whose id does not match its name, files that are not records. */
	ASSERT_OK(write_raw("broken.json", "{\"version\":1,\"id\":"));
	ASSERT_OK(write_raw("wrong-mode.json", "{\"version\":1,\"id\":\"wrong-mode\",\"cgroup\":\"/x\","
					      "\"cgroup_id\":\"1\",\"link_pin\":null,\"policy\":{\"mode\":"
					      "\"bogus\",\"max_depth\":0,\"base_level\":0,\"errno\":1,"
					      "\"cgroup_id\":\"1\"}}"));
	ASSERT_OK(write_raw(".a-first.json.Ab12Cd", "{"));
	ASSERT_OK(write_raw("notes.txt", "hello"));
	ASSERT_OK(write_raw("bad id.json", "{}"));
	ASSERT_OK(write_raw("mismatch.json", "{\"version\":1,\"id\":\"other\",\"cgroup\":\"/x\","
					     "\"cgroup_id\":\"1\",\"link_pin\":null,\"policy\":{\"mode\":"
					     "\"deny\",\"max_depth\":0,\"base_level\":0,\"errno\":1,"
					     "\"cgroup_id\":\"1\"}}"));

	ASSERT_OK(record_foreach(recdir, collect, &s));
	ASSERT_EQ(3, s.n);
	ASSERT_STREQ("a-first", s.ids[0]);
	ASSERT_STREQ("b-second", s.ids[1]);
	ASSERT_STREQ("c-third", s.ids[2]);

	ASSERT_ERR(-EINVAL, record_read(recdir, "broken", &out));
	ASSERT_MSG("malformed record");
	ASSERT_ERR(-EINVAL, record_read(recdir, "mismatch", &out));
	ASSERT_ERR(-EINVAL, record_read(recdir, "wrong-mode", &out));
	/* A record from before max-count: no limit. */
	ASSERT_OK(write_raw("older.json", "{\"version\":1,\"id\":\"older\",\"cgroup\":\"/x\","
					  "\"cgroup_id\":\"1\",\"link_pin\":null,\"policy\":{\"mode\":"
					  "\"learn\",\"max_depth\":0,\"base_level\":0,\"errno\":1,"
					  "\"cgroup_id\":\"1\"}}"));
	ASSERT_OK(record_read(recdir, "older", &out));
	ASSERT_EQ(NSGUARD_COUNT_UNLIMITED, out.policy.max_count);
	ASSERT_EQ(NSGUARD_MODE_LEARN, out.policy.mode);
	record_free(&out);

	/* A negative return stops the walk and is passed up. */
	memset(&s, 0, sizeof(s));
	s.stop_after = 2;
	ASSERT_EQ(-ECANCELED, record_foreach(recdir, collect, &s));
	ASSERT_EQ(2, s.n);

	ASSERT_OK(record_find_cgroup(recdir, 3, &out));
	ASSERT_STREQ("c-third", out.id);
	ASSERT_STREQ(c.link_pin, out.link_pin);
	record_free(&out);
	ASSERT_ERR(-ENOENT, record_find_cgroup(recdir, 42, &out));
	ASSERT_TRUE(out.id == NULL);
}

static void t_foreach_missing_dir(void)
{
	struct seen s = { 0 };

	ASSERT_OK(record_foreach("/tmp/nsguard-no-such-dir/containers", collect, &s));
	ASSERT_EQ(0, s.n);
}

static void t_write_failure_leaves_nothing(void)
{
	struct nsguard_record in = sample("web", 1), other = sample("other", 2);
	char path[256];

	/* A directory where the record should land: rename fails, the temp
	 * file must not be left behind. */
	ASSERT_OK(record_write(recdir, &other));
	snprintf(path, sizeof(path), "%s/web.json", recdir);
	ASSERT_TRUE(mkdir(path, 0700) == 0);
	ASSERT_TRUE(record_write(recdir, &in) < 0);
	ASSERT_MSG(path);
	ASSERT_EQ(0, count_entries(recdir, true));
	ASSERT_EQ(3, count_entries(recdir, false)); /* other.json, the directory, the index */
	rmdir(path);
}

static void t_invalid_fields(void)
{
	struct nsguard_record in = sample("web", 1);

	in.policy.mode = NSGUARD_MODE_COUNT;
	ASSERT_ERR(-EINVAL, record_write(recdir, &in));
	in = sample("web", 1);
	in.cgroup_path = NULL;
	ASSERT_ERR(-EINVAL, record_write(recdir, &in));
}

/* "pod", "namespace", "container" round-trip when set and stay absent when not. */
static void t_identity(void)
{
	struct nsguard_record in = sample("pod1", 9), out;
	struct pod_identity id = { .v = { [IDENT_POD] = (char *)"web-0",
					  [IDENT_NAMESPACE] = (char *)"shop",
					  [IDENT_CONTAINER] = (char *)"nginx",
					  [IDENT_SECTION] = (char *)"namespace:team-*" } };
	char path[256], buf[4096];
	FILE *f;
	size_t n;

	in.identity = id;
	ASSERT_OK(record_write(recdir, &in));
	ASSERT_OK(record_read(recdir, "pod1", &out));
	ASSERT_STREQ("web-0", out.identity.v[IDENT_POD]);
	ASSERT_STREQ("shop", out.identity.v[IDENT_NAMESPACE]);
	ASSERT_STREQ("nginx", out.identity.v[IDENT_CONTAINER]);
	ASSERT_STREQ("namespace:team-*", out.identity.v[IDENT_SECTION]);
	record_free(&out);
	ASSERT_TRUE(out.identity.v[IDENT_POD] == NULL);

	/* A record without them (as every older nsguard wrote) loads. */
	in = sample("old", 10);
	ASSERT_OK(record_write(recdir, &in));
	snprintf(path, sizeof(path), "%s/old.json", recdir);
	f = fopen(path, "r");
	ASSERT_TRUE(f != NULL);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	ASSERT_TRUE(strstr(buf, "\"pod\"") == NULL && strstr(buf, "\"namespace\"") == NULL &&
		    strstr(buf, "\"section\"") == NULL);
	ASSERT_OK(record_read(recdir, "old", &out));
	ASSERT_TRUE(identity_empty(&out.identity));
	record_free(&out);
}

/* A record whose "pod" is not a string is malformed. */
static void t_identity_bad_type(void)
{
	static const char doc[] =
		"{\"version\":1,\"id\":\"bad\",\"cgroup\":\"/a\",\"cgroup_id\":\"5\","
		"\"link_pin\":null,\"pod\":7,\"policy\":{\"mode\":\"deny\",\"max_depth\":0,"
		"\"base_level\":0,\"errno\":\"EPERM\",\"cgroup_id\":\"5\"}}";
	struct nsguard_record out;
	char path[256];
	FILE *f;

	ASSERT_OK(record_write(recdir, &(struct nsguard_record){ .id = (char *)"x",
					.cgroup_path = (char *)"/x" })); /* makes the dir */
	snprintf(path, sizeof(path), "%s/bad.json", recdir);
	f = fopen(path, "w");
	ASSERT_TRUE(f != NULL);
	fputs(doc, f);
	fclose(f);
	ASSERT_ERR(-EINVAL, record_read(recdir, "bad", &out));
}

/* The longest valid id still gets its record, and no temporary is left. */
static void t_longest_id(void)
{
	char id[OCI_ID_MAX + 1];
	struct nsguard_record in, out;

	memset(id, 'i', OCI_ID_MAX);
	id[OCI_ID_MAX] = '\0';
	in = sample(id, 7);
	ASSERT_OK(record_write(recdir, &in));
	ASSERT_OK(record_read(recdir, id, &out));
	ASSERT_STREQ(id, out.id);
	record_free(&out);
	ASSERT_EQ(0, count_entries(recdir, true));
	ASSERT_OK(record_remove(recdir, id, 1));
}

static int index_entries(void)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/by-cgroup-id", recdir);
	return count_entries(path, false);
}

/* Lookups by cgroup id: one open of the index, never a stale answer. */
static void t_index(void)
{
	struct nsguard_record web = sample("web", 5), db = sample("db", 9), out;
	char a[256], b[256];

	ASSERT_OK(record_write(recdir, &web));
	ASSERT_OK(record_read_cgroup(recdir, 5, &out));
	ASSERT_STREQ("web", out.id);
	ASSERT_STREQ(web.cgroup_path, out.cgroup_path);
	record_free(&out);
	ASSERT_EQ(-ENOENT, record_read_cgroup(recdir, 6, &out));
	ASSERT_TRUE(out.id == NULL);
	/* Rewritten for another cgroup: the old entry holds the old file, which
	 * is no longer web's record, so it is not an answer. */
	web.cgroup_id = 6;
	ASSERT_OK(record_write(recdir, &web));
	ASSERT_EQ(-ENOENT, record_read_cgroup(recdir, 5, &out));
	ASSERT_OK(record_read_cgroup(recdir, 6, &out));
	record_free(&out);
	ASSERT_EQ(2, index_entries());
	record_index_forget(recdir, 5);
	ASSERT_EQ(1, index_entries());
	/* An entry that is a copy, not the record itself: no answer. */
	snprintf(a, sizeof(a), "%s/web.json", recdir);
	snprintf(b, sizeof(b), "%s/by-cgroup-id/7", recdir);
	ASSERT_TRUE(link(a, b) == 0);
	ASSERT_EQ(-ENOENT, record_read_cgroup(recdir, 7, &out)); /* names cgroup 6 */
	ASSERT_TRUE(unlink(b) == 0);
	/* Records from before the index get entries when it is created. */
	snprintf(b, sizeof(b), "rm -rf -- '%s/by-cgroup-id'", recdir);
	ASSERT_TRUE(system(b) == 0);
	ASSERT_OK(record_write(recdir, &db));
	ASSERT_OK(record_read_cgroup(recdir, 6, &out));
	ASSERT_STREQ("web", out.id);
	record_free(&out);
	ASSERT_EQ(2, index_entries());
	/* Remove drops the entry; the sweep (gc) drops orphans and temp files. */
	ASSERT_OK(record_remove(recdir, "db", 9));
	ASSERT_EQ(1, index_entries());
	snprintf(b, sizeof(b), "%s/by-cgroup-id/.6.123", recdir);
	ASSERT_TRUE(close(open(b, O_CREAT | O_WRONLY, 0600)) == 0); /* a crashed writer's */
	ASSERT_TRUE(unlink(a) == 0); /* web's record gone behind our back */
	ASSERT_EQ(2, record_index_sweep(recdir)); /* 6 and .6.123 */
	ASSERT_EQ(0, index_entries());
	ASSERT_EQ(0, record_index_sweep(recdir));
}

/* Retired: gone from the records and the index, readable by cgroup id. */
static void t_retire(void)
{
	struct nsguard_record r = sample("web", 77), got = { 0 };
	char gone[192], path[256];
	struct stat st;

	ASSERT_OK(record_write(recdir, &r));
	ASSERT_OK(record_retire(recdir, "web", 77));
	ASSERT_EQ(-ENOENT, record_read(recdir, "web", &got));
	ASSERT_EQ(-ENOENT, record_read_cgroup(recdir, 77, &got));
	ASSERT_EQ(0, index_entries());
	ASSERT_OK(record_read_gone(recdir, 77, &got));
	ASSERT_STREQ("web", got.id);
	record_free(&got);
	ASSERT_EQ(-ENOENT, record_read_gone(recdir, 78, &got));
	/* Kept for the keep time, then swept. */
	snprintf(gone, sizeof(gone), "%s/run/gone", tmpdir);
	snprintf(path, sizeof(path), "%s/77.json", gone);
	ASSERT_OK(record_gone_sweep(recdir, NSGUARD_GONE_KEEP_SECS));
	ASSERT_TRUE(stat(path, &st) == 0);
	ASSERT_OK(record_gone_sweep(recdir, 0));
	ASSERT_TRUE(stat(path, &st) < 0);
	/* Retires past NSGUARD_GONE_MAX: a sweep keeps NSGUARD_GONE_MAX. */
	for (__u64 id = 1000; id < 1000 + NSGUARD_GONE_MAX + 3; id++) {
		struct nsguard_record x = sample("loop", id);

		ASSERT_OK(record_write(recdir, &x));
		ASSERT_OK(record_retire(recdir, "loop", id));
	}
	ASSERT_OK(record_gone_sweep(recdir, NSGUARD_GONE_KEEP_SECS));
	ASSERT_EQ(NSGUARD_GONE_MAX, count_entries(gone, false));
	/* A retire trims one time in 64, at random: 64 000 draws, mean 1000, sd 31. */
	{
		unsigned due = 0;

		for (int i = 0; i < 64000; i++)
			due += record_gone_trim_due();
		ASSERT_TRUE(due > 800 && due < 1200);
	}
	/* Nothing retired yet: nothing to sweep. */
	ASSERT_OK(record_gone_sweep("/nonexistent/containers", 0));
}

/*
 * record_retire trims by itself, not only gc's sweep: with the retired
 * records past NSGUARD_GONE_MAX (filled in directly, the oldest past the
 * keep time), retires without any sweep bring the count back down, the
 * expired and the oldest first.  A retire trims one time in 64: after 1000
 * retires, none has trimmed with a chance of 1.5e-7.
 */
static void t_retire_trims(void)
{
	const unsigned extra = 500, retires = 1000;
	char gone[192], cmd[512], path[256];
	struct timespec old[2] = { { .tv_sec = time(NULL) - NSGUARD_GONE_KEEP_SECS - 60 },
				   { .tv_sec = time(NULL) - NSGUARD_GONE_KEEP_SECS - 60 } };
	struct timespec oldest[2] = { { .tv_sec = time(NULL) - 500 }, { .tv_sec = time(NULL) - 500 } };
	struct timespec aged[2] = { { .tv_sec = time(NULL) - 60 }, { .tv_sec = time(NULL) - 60 } };
	struct stat st;
	int n;

	snprintf(gone, sizeof(gone), "%s/run/gone", tmpdir);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s && cd %s && seq 1 %u | sed 's/$/.json/' | xargs touch",
		 gone, gone, NSGUARD_GONE_MAX + extra);
	ASSERT_EQ(0, system(cmd));
	/* 1..10 expired, 11..extra+10 merely the oldest, the rest younger. */
	for (unsigned i = 1; i <= NSGUARD_GONE_MAX + extra; i++) {
		snprintf(path, sizeof(path), "%s/%u.json", gone, i);
		ASSERT_TRUE(utimensat(AT_FDCWD, path, i <= 10 ? old : i <= extra + 10 ? oldest : aged,
				      0) == 0);
	}
	ASSERT_EQ(NSGUARD_GONE_MAX + extra, count_entries(gone, false));
	for (__u64 id = 100000; id < 100000 + retires; id++) {
		struct nsguard_record x = sample("loop", id);

		ASSERT_OK(record_write(recdir, &x));
		ASSERT_OK(record_retire(recdir, "loop", id));
	}
	/* Untrimmed: NSGUARD_GONE_MAX + 1500.  Trimmed last after retire k: NSGUARD_GONE_MAX + 1000 - k. */
	n = count_entries(gone, false);
	if (n < NSGUARD_GONE_MAX || n >= (int)(NSGUARD_GONE_MAX + retires))
		FAIL_RET("%d retired records after %u retires from %u, want [%u, %u)", n, retires,
			 NSGUARD_GONE_MAX + extra, NSGUARD_GONE_MAX, NSGUARD_GONE_MAX + retires);
	/* The expired and the oldest went; the last retired stayed. */
	snprintf(path, sizeof(path), "%s/1.json", gone);
	ASSERT_TRUE(stat(path, &st) < 0 && errno == ENOENT);
	snprintf(path, sizeof(path), "%s/%u.json", gone, extra + 10);
	ASSERT_TRUE(stat(path, &st) < 0 && errno == ENOENT);
	snprintf(path, sizeof(path), "%s/%u.json", gone, 100000 + retires - 1);
	ASSERT_TRUE(stat(path, &st) == 0);
}

#define RECORD_CASE(name, fn)                                                           \
	do {                                                                            \
		setup();                                                                \
		TEST_CASE("record", name, fn);                                          \
		teardown();                                                             \
	} while (0)

void suite_record(void)
{
	RECORD_CASE("roundtrip", t_roundtrip);
	RECORD_CASE("roundtrip-extremes", t_roundtrip_extremes);
	RECORD_CASE("overwrite", t_overwrite);
	RECORD_CASE("remove", t_remove);
	RECORD_CASE("retire", t_retire);
	RECORD_CASE("retire-trims-without-gc", t_retire_trims);
	RECORD_CASE("index", t_index);
	RECORD_CASE("bad-ids", t_bad_ids);
	RECORD_CASE("longest-id", t_longest_id);
	RECORD_CASE("foreach-skips-debris", t_foreach);
	RECORD_CASE("foreach-missing-dir", t_foreach_missing_dir);
	RECORD_CASE("write-failure-leaves-nothing", t_write_failure_leaves_nothing);
	RECORD_CASE("invalid-fields", t_invalid_fields);
	RECORD_CASE("identity", t_identity);
	RECORD_CASE("identity-bad-type", t_identity_bad_type);
}
