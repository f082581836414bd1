/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "cgroup.h"
#include "test.h"
#include "userns.h"
#include "util.h"

/* Fixture /proc trees: shim/tests/fixtures/proc/<pid>/{stat,cgroup}. */
struct row {
	const char *name;
	pid_t pid;
	int rc;
	const char *path; /* expected path, or message substring on error */
};

static const struct row rows[] = {
	{ "v2", 100, 0, "/machine.slice/libpod-abc.scope/container" },
	{ "v1-only", 101, -EOPNOTSUPP, "cgroup v2" },
	{ "hybrid-uses-v2-line", 102, 0, "/docker/abc" },
	{ "root-cgroup", 103, -EPERM, "pid 103 is in the root cgroup" },
	{ "zombie", 104, -ESRCH, "pid 104 has exited" },
	{ "comm-with-fake-zombie-state", 105, 0, "/user.slice/evil" },
	{ "zombie-comm-with-fake-running-state", 106, -ESRCH, "pid 106 has exited" },
	{ "dead-state-x", 113, -ESRCH, "pid 113 has exited" },
	{ "cgroup-file-missing", 107, -ESRCH, "pid 107 does not exist or has exited" },
	{ "cgroup-file-empty", 109, -ESRCH, "pid 109 does not exist" },
	{ "missing-pid", 999, -ESRCH, "pid 999 does not exist or has exited" },
	{ "outside-cgroupns", 108, -EINVAL, "outside nsguard's cgroup namespace" },
	{ "garbage-line", 110, -EINVAL, "malformed line" },
	{ "relative-path", 111, -EINVAL, "not absolute" },
	{ "two-v2-lines", 112, -EINVAL, "more than one cgroup v2 line" },
	{ "stat-without-paren", 114, -EINVAL, "unexpected format" },
	{ "path-with-space", 115, 0, "/kubepods/pod1/ctr with space" },
	{ "pid-zero", 0, -EINVAL, "invalid pid 0" },
	{ "pid-negative", -5, -EINVAL, "invalid pid -5" },
};

static void check_row(const struct row *r)
{
	cleanup_free char *path = NULL;
	char proc[4096];
	int rc;

	snprintf(proc, sizeof(proc), "%s/proc", test_fixtures);
	nsg_clear_error();
	rc = cgroup_path_of_pid(proc, r->pid, &path);
	if (rc != r->rc)
		FAIL_RET("cgroup_path_of_pid(%d): expected %s, got %s (%s)", (int)r->pid,
			 test_errname(r->rc), test_errname(rc), nsg_last_error());
	if (rc == 0) {
		ASSERT_STREQ(r->path, path);
	} else {
		ASSERT_TRUE(path == NULL);
		ASSERT_MSG(r->path);
	}
}

static void t_real_self(void)
{
	cleanup_free char *path = NULL;
	int rc = cgroup_path_of_pid("/proc", getpid(), &path);

	/* Whatever this host runs, the answer is one of the documented ones. */
	ASSERT_TRUE(rc == 0 || rc == -EOPNOTSUPP || rc == -EPERM);
	if (rc == 0)
		ASSERT_TRUE(path[0] == '/');
}

static void t_id_not_cgroup2(void)
{
	char dir[] = "/tmp/nsguard-test-cg.XXXXXX";
	__u64 id = 0;
	int fd;

	ASSERT_TRUE(mkdtemp(dir) != NULL);
	ASSERT_ERR(-EOPNOTSUPP, cgroup_id_of_path("/tmp", dir + 5, &id));
	ASSERT_MSG("is not on cgroup v2");
	ASSERT_ERR(-EOPNOTSUPP, cgroup_id_of_path("/", dir, &id));
	fd = cgroup_open("/tmp", dir + 5, NULL);
	ASSERT_EQ(-EOPNOTSUPP, fd);
	rmdir(dir);
}

static void t_id_bad_paths(void)
{
	__u64 id = 0;

	ASSERT_ERR(-EINVAL, cgroup_id_of_path("/tmp", "/a/../../etc", &id));
	ASSERT_MSG("\"..\"");
	ASSERT_ERR(-EINVAL, cgroup_id_of_path("/tmp", "..", &id));
	ASSERT_ERR(-EINVAL, cgroup_id_of_path("/tmp", "a/..", &id));
	ASSERT_ERR(-EPERM, cgroup_id_of_path("/tmp", "/", &id));
	ASSERT_MSG("root cgroup");
	ASSERT_ERR(-EPERM, cgroup_id_of_path("/tmp", "", &id));
	ASSERT_ERR(-EPERM, cgroup_id_of_path("/tmp", "///", &id));
	ASSERT_ERR(-ENOENT, cgroup_id_of_path("/tmp", "/nsguard-no-such-cgroup/x", &id));
	ASSERT_MSG("does not exist");
	ASSERT_EQ(0, id);
	/* "..." and "a..b" are ordinary names, not parent references. */
	ASSERT_ERR(-ENOENT, cgroup_id_of_path("/tmp", "/nsguard-no-such/.../a..b", &id));
}

/* The first cgroup2 mount in /proc/mounts (CGROUP_ROOT, or .../unified on
 * a hybrid host), or "" if there is none. */
static void find_cgroup2(char *out, size_t size)
{
	char *line = NULL, dev[64], mnt[512], type[64];
	size_t cap = 0;
	FILE *f = fopen("/proc/mounts", "re");

	out[0] = '\0';
	if (!f)
		return;
	while (getline(&line, &cap, f) > 0) {
		if (sscanf(line, "%63s %511s %63s", dev, mnt, type) == 3 &&
		    strcmp(type, "cgroup2") == 0) {
			snprintf(out, size, "%s", mnt);
			break;
		}
	}
	free(line);
	fclose(f);
}

/* Read-only use of the host's cgroup2 mount, if it has one. */
static void t_id_real_cgroup2(void)
{
	struct dirent *de;
	struct stat sb;
	char root[512], name[300] = "", full[900];
	DIR *d;
	__u64 id = 0;
	int fd;

	find_cgroup2(root, sizeof(root));
	if (!root[0]) {
		test_skip("no cgroup2 mount on this host");
		return;
	}
	ASSERT_ERR(-EPERM, cgroup_id_of_path(root, "/", &id));
	ASSERT_ERR(-EPERM, cgroup_id_of_path(root, "/.", &id));
	ASSERT_ERR(-EPERM, cgroup_id_of_path(root, "./", &id));
	ASSERT_ERR(-ENOTDIR, cgroup_id_of_path(root, "/cgroup.procs", &id));
	ASSERT_ERR(-ENOENT, cgroup_id_of_path(root, "/nsguard-no-such-cgroup", &id));
	d = opendir(root);
	ASSERT_TRUE(d != NULL);
	while ((de = readdir(d))) {
		if (de->d_type == DT_DIR && de->d_name[0] != '.') {
			snprintf(name, sizeof(name), "/%s", de->d_name);
			break;
		}
	}
	closedir(d);
	if (!name[0]) {
		test_skip("root checks passed; no child cgroup to read an id from");
		return;
	}
	ASSERT_OK(cgroup_id_of_path(root, name, &id));
	snprintf(full, sizeof(full), "%s%s", root, name);
	ASSERT_TRUE(stat(full, &sb) == 0);
	ASSERT_EQ_U64(sb.st_ino, id);
	id = 0;
	fd = cgroup_open(root, name, &id);
	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ_U64(sb.st_ino, id);
	close(fd);
}

/* On a hybrid host, /sys/fs/cgroup is a tmpfs of v1 hierarchies. */
static void t_id_v1_hierarchy(void)
{
	struct statfs sfs;
	__u64 id = 0;

	if (statfs(CGROUP_ROOT "/pids", &sfs) < 0 || sfs.f_type != 0x27e0eb /* cgroup v1 */) {
		test_skip("no cgroup v1 pids hierarchy on this host");
		return;
	}
	ASSERT_ERR(-EOPNOTSUPP, cgroup_id_of_path(CGROUP_ROOT, "/pids", &id));
}

/* A fake cgroup: a directory with cgroup.procs and cgroup.events. */
static int fake_cg(const char *dir, const char *rel, const char *procs, bool populated)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -errno;
	snprintf(path, sizeof(path), "%s/%s/cgroup.procs", dir, rel);
	f = fopen(path, "we");
	if (!f)
		return -errno;
	fputs(procs, f);
	if (fclose(f) != 0)
		return -errno;
	snprintf(path, sizeof(path), "%s/%s/cgroup.events", dir, rel);
	f = fopen(path, "we");
	if (!f)
		return -errno;
	fprintf(f, "populated %d\nfrozen 0\n", populated);
	return fclose(f) == 0 ? 0 : -errno;
}

static void sole_case(const char *dir, pid_t pid, int want, const char *msg)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	ASSERT_TRUE(fd >= 0);
	if (want)
		ASSERT_ERR(want, cgroup_check_sole_at(fd, "/ct", pid, "/nonexistent", NULL));
	else
		ASSERT_OK(cgroup_check_sole_at(fd, "/ct", pid, "/nonexistent", NULL));
	if (msg)
		ASSERT_MSG(msg);
	close(fd);
}

static void t_sole(void)
{
	char dir[] = "/tmp/nsguard-test-cg.XXXXXX", cmd[64];

	ASSERT_TRUE(mkdtemp(dir) != NULL);
	/* Only the container's init: fine, also with empty children. */
	ASSERT_OK(fake_cg(dir, ".", "42\n", true));
	ASSERT_OK(fake_cg(dir, "a", "", false));
	ASSERT_OK(fake_cg(dir, "a/b", "", false));
	sole_case(dir, 42, 0, NULL);
	/* Another process in the cgroup itself. */
	ASSERT_OK(fake_cg(dir, ".", "42\n7\n", true));
	sole_case(dir, 42, -EBUSY, "cgroup /ct is shared: it holds process 7 (?) besides the container's 42");
	/* Only the given pid counts as the container: 42 is "another" for 43. */
	ASSERT_OK(fake_cg(dir, ".", "42\n", true));
	sole_case(dir, 43, -EBUSY, "process 42");
	/* One outside our pid namespace is listed as 0: still another process. */
	ASSERT_OK(fake_cg(dir, ".", "0\n42\n", true));
	sole_case(dir, 42, -EBUSY, "a process outside nsguard's pid namespace");
	/* Processes anywhere below: the child says populated. */
	ASSERT_OK(fake_cg(dir, ".", "42\n", true));
	ASSERT_OK(fake_cg(dir, "a", "", true));
	sole_case(dir, 42, -EBUSY, "the cgroup /ct/a below it holds processes");
	ASSERT_OK(fake_cg(dir, "a", "", false));
	/* A pid split across two reads (at 512 and 4096 bytes) is one pid, not 1 and 2345. */
	{
		static char procs[4095 + 7];

		for (int i = 0; i < 4095; i += 3)
			memcpy(procs + i, "42\n", 3);
		strcpy(procs + 4095, "12345\n");
		ASSERT_OK(fake_cg(dir, ".", procs, true));
		sole_case(dir, 42, -EBUSY, "holds process 12345 (?)");
		/* 510 bytes of "42\n" then 12345: split at 512. */
		strcpy(procs + 510, "12345\n");
		ASSERT_OK(fake_cg(dir, ".", procs, true));
		sole_case(dir, 42, -EBUSY, "holds process 12345 (?)");
		/* The last line without its newline still counts. */
		ASSERT_OK(fake_cg(dir, ".", "42\n7", true));
		sole_case(dir, 42, -EBUSY, "holds process 7 (?)");
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ASSERT_EQ(0, system(cmd));
}

static void t_userns_self(void)
{
	__u32 level = 99;

	/* Our own namespace is the walk's end, wherever this test runs. */
	ASSERT_OK(userns_level_of_pid("/proc", getpid(), &level));
	ASSERT_EQ(0, level);
}

static void t_userns_errors(void)
{
	char proc[4096];
	__u32 level = 99;

	snprintf(proc, sizeof(proc), "%s/proc", test_fixtures);
	ASSERT_ERR(-ESRCH, userns_level_of_pid(proc, 999, &level));
	ASSERT_MSG("pid 999 does not exist");
	ASSERT_ERR(-EINVAL, userns_level_of_pid("/proc", 0, &level));
	ASSERT_EQ(99, level);
}

void suite_cgroup(void)
{
	char name[128];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		snprintf(name, sizeof(name), "path-of-pid-%s", rows[i].name);
		TEST_CASE("cgroup", name, check_row, &rows[i]);
	}
	TEST_CASE("cgroup", "path-of-self", t_real_self);
	TEST_CASE("cgroup", "id-not-cgroup2", t_id_not_cgroup2);
	TEST_CASE("cgroup", "id-bad-paths", t_id_bad_paths);
	TEST_CASE("cgroup", "id-real-cgroup2", t_id_real_cgroup2);
	TEST_CASE("cgroup", "id-v1-hierarchy", t_id_v1_hierarchy);
	TEST_CASE("cgroup", "sole-process-check", t_sole);
	TEST_CASE("cgroup", "userns-level-self", t_userns_self);
	TEST_CASE("cgroup", "userns-level-errors", t_userns_errors);
}
