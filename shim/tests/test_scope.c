// SPDX-License-Identifier: GPL-2.0-or-later
/* Which cgroup a container gets: the parts that need no namespaces. */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "cgroup.h"
#include "scope.h"
#include "test.h"
#include "util.h"

static const struct {
	const char *init, *rel, *root; /* root NULL: refused with err */
	int err;
	const char *msg;
} strip_rows[] = {
	{ "/nsg-ct/a/sub", "/sub", "/nsg-ct/a", 0, NULL },
	{ "/nsg-ct/a/x/y", "/x/y", "/nsg-ct/a", 0, NULL },
	{ "/nsg-ct/a", "/", "/nsg-ct/a", 0, NULL },
	{ "/nsg-ct/a", "/a", "/nsg-ct", 0, NULL },
	/* Not a tail on a component boundary. */
	{ "/nsg-ct/ab", "/b", NULL, -EINVAL, "does not end in /b" },
	{ "/nsg-ct/a", "/zz", NULL, -EINVAL, "does not end in" },
	{ "/nsg-ct/a", "sub", NULL, -EINVAL, "not absolute" },
	/* Init outside its own namespace root, or a namespace at the root. */
	{ "/nsg-ct/a", "/../b", NULL, -EPERM, "outside its own cgroup namespace" },
	{ "/nsg-ct/a", "/..", NULL, -EPERM, "outside its own cgroup namespace" },
	{ "/nsg-ct", "/nsg-ct", NULL, -EPERM, "rooted at the root cgroup" },
};

static void strip_row(size_t i)
{
	cleanup_free char *root = NULL;
	int err = scope_strip(strip_rows[i].init, strip_rows[i].rel, &root);

	ASSERT_EQ(strip_rows[i].err, err);
	ASSERT_STREQ(strip_rows[i].root, root);
	if (strip_rows[i].msg)
		ASSERT_MSG(strip_rows[i].msg);
}

static int write_tmp(char *path, const char *text)
{
	int fd = mkstemp(path);

	if (fd < 0)
		return -errno;
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		close(fd);
		return -EIO;
	}
	return close(fd) ? -errno : 0;
}

static void map_case(const char *text, bool want)
{
	char p[] = "/tmp/nsguard-test-map.XXXXXX";
	bool mapped = !want;

	ASSERT_OK(write_tmp(p, text));
	ASSERT_OK(scope_maps_host_root(p, &mapped));
	unlink(p);
	ASSERT_EQ(want, mapped);
}

static void t_maps_host_root(void)
{
	map_case("         0     100000      65536\n", false);
	map_case("         0          0 4294967295\n", true);
	/* Host root mapped to a non-root id inside still passes DAC on its files. */
	map_case("0 100000 1000\n1000 0 1\n", true);
	map_case("", false);
}

static void t_ancestors(void)
{
	char dir[] = "/tmp/nsguard-test-anc.XXXXXX", cmd[1024];
	bool root = geteuid() == 0;

	ASSERT_TRUE(mkdtemp(dir) != NULL);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/p/ct && touch %s/cgroup.procs %s/p/cgroup.procs "
		 "%s/p/ct/cgroup.procs && chmod 644 %s/cgroup.procs %s/p/cgroup.procs",
		 dir, dir, dir, dir, dir, dir);
	ASSERT_EQ(0, system(cmd));
	if (root) {
		/* Owned by root, 0644: closed.  Only the ancestors count. */
		snprintf(cmd, sizeof(cmd), "chmod 666 %s/p/ct/cgroup.procs", dir);
		ASSERT_EQ(0, system(cmd));
		ASSERT_OK(scope_ancestors_closed(dir, "/p/ct"));
	} else {
		ASSERT_ERR(-EPERM, scope_ancestors_closed(dir, "/p/ct"));
		ASSERT_MSG("cgroup /p above the container's is delegated");
	}
	/* Group or other writable is delegated whoever owns it. */
	snprintf(cmd, sizeof(cmd), "chmod 664 %s/p/cgroup.procs", dir);
	ASSERT_EQ(0, system(cmd));
	ASSERT_ERR(-EPERM, scope_ancestors_closed(dir, "/p/ct"));
	ASSERT_MSG("cgroup /p above");
	ASSERT_MSG("mode 664");
	/* The root cgroup is checked too. */
	snprintf(cmd, sizeof(cmd), "chmod 644 %s/p/cgroup.procs && chmod 646 %s/cgroup.procs", dir,
		 dir);
	ASSERT_EQ(0, system(cmd));
	if (root) {
		ASSERT_ERR(-EPERM, scope_ancestors_closed(dir, "/p/ct"));
		ASSERT_MSG("cgroup / above");
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ASSERT_EQ(0, system(cmd));
}

/* Init below the guarded cgroup: each level on the way may hold only init. */
static void t_sole_through(void)
{
	char dir[] = "/tmp/nsguard-test-sole.XXXXXX", cmd[1024], ct[256];
	FILE *f;

	ASSERT_TRUE(mkdtemp(dir) != NULL);
	snprintf(cmd, sizeof(cmd),
		 "cd %s && mkdir -p ct/sub/leaf ct/other && for d in ct ct/sub ct/sub/leaf ct/other; "
		 "do : >$d/cgroup.procs; echo 'populated 0' >$d/cgroup.events; done && "
		 "echo 42 >ct/sub/cgroup.procs && echo 'populated 1' >ct/sub/cgroup.events",
		 dir);
	ASSERT_EQ(0, system(cmd));
	snprintf(ct, sizeof(ct), "%s/ct", dir);
	/* cgroup_check_sole wants cgroup2: drive the levels as it does. */
	{
		int fd = open(ct, O_RDONLY | O_DIRECTORY | O_CLOEXEC), sub;

		ASSERT_TRUE(fd >= 0);
		ASSERT_OK(cgroup_check_sole_at(fd, "/ct", 42, "/nonexistent", "sub"));
		/* Without the way down named, sub's processes make ct shared. */
		ASSERT_ERR(-EBUSY, cgroup_check_sole_at(fd, "/ct", 42, "/nonexistent", NULL));
		ASSERT_MSG("the cgroup /ct/sub below it holds processes");
		/* A sibling of the way down holding processes is refused. */
		snprintf(cmd, sizeof(cmd), "echo 'populated 1' >%s/ct/other/cgroup.events", dir);
		ASSERT_EQ(0, system(cmd));
		ASSERT_ERR(-EBUSY, cgroup_check_sole_at(fd, "/ct", 42, "/nonexistent", "sub"));
		ASSERT_MSG("/ct/other below it holds processes");
		/* A process in a level above init is another process. */
		f = fopen(strcat(strcpy(cmd, ct), "/cgroup.procs"), "we");
		ASSERT_TRUE(f != NULL);
		fputs("7\n", f);
		fclose(f);
		ASSERT_ERR(-EBUSY, cgroup_check_sole_at(fd, "/ct", 42, "/nonexistent", "sub"));
		ASSERT_MSG("holds process 7");
		sub = openat(fd, "sub", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		ASSERT_TRUE(sub >= 0);
		ASSERT_OK(cgroup_check_sole_at(sub, "/ct/sub", 42, "/nonexistent", NULL));
		close(sub);
		close(fd);
	}
	/* The path walk refuses an init that is not below the cgroup. */
	ASSERT_ERR(-EINVAL, cgroup_check_sole(dir, "/ct/sub", "/ct/subx", 42, "/nonexistent", NULL, NULL));
	ASSERT_MSG("is not below");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ASSERT_EQ(0, system(cmd));
}

static const struct {
	const char *target, *cgroups_path;
	int err;
} runtime_rows[] = {
	{ "/nsg-ct/a", NULL, 0 },
	{ "/nsg-ct/a", "", 0 },
	/* cgroupfs: the path or below it, on component boundaries. */
	{ "/nsg-ct/a", "/nsg-ct/a", 0 },
	{ "/nsg-ct/a/container", "/nsg-ct/a", 0 },
	{ "/nsg-ct/a", "/nsg-ct/a/", 0 },
	{ "/nsg-ct/ab", "/nsg-ct/a", -EPERM },
	{ "/nsg-ct", "/nsg-ct/a", -EPERM },
	{ "/other", "/nsg-ct/a", -EPERM },
	/* systemd: the unit is a component of the path. */
	{ "/machine.slice/libpod-abc.scope", "machine.slice:libpod:abc", 0 },
	{ "/machine.slice/libpod-abc.scope/container", "machine.slice:libpod:abc", 0 },
	{ "/system.slice/-abc.scope", "system.slice::abc", 0 },
	{ "/system.slice/abc.scope", "system.slice::abc", -EPERM },
	{ "/system.slice/runc-foo.scope.scope", "system.slice:runc:foo.scope", 0 },
	{ "/system.slice/x.slice", "system.slice::x.slice", 0 },
	{ "/machine.slice/libpod-abcd.scope", "machine.slice:libpod:abc", -EPERM },
	{ "/machine.slice", "machine.slice:libpod:abc", -EPERM },
	{ "/machine.slice/libpod-abc.scope", "machine.slice:libpod:", -EPERM },
	/* relative: the components in a row, wherever the runtime put them. */
	{ "/user.slice/run/nsg/a", "nsg/a", 0 },
	{ "/user.slice/run/nsg/a/sub", "nsg/a", 0 },
	{ "/user.slice/run/nsg/ab", "nsg/a", -EPERM },
	{ "/user.slice/xnsg/a", "nsg/a", -EPERM },
	/* Cleaned as the runtimes clean them. */
	{ "/x/nsg/a", "nsg/a/", 0 },
	{ "/x/nsg/a", "./nsg//a", 0 },
	{ "/x/nsg/a", "nsg/b/../a", 0 },
	{ "/nsg-ct/a", "/nsg-ct//a/./", 0 },
	{ "/nsg-ct/a", "/nsg-ct/b/../a", 0 },
	{ "/nsg-ct/b", "/nsg-ct/b/../a", -EPERM },
	{ "/x/a", "../a", -EPERM },
};

static void runtime_row(size_t i)
{
	int err = scope_in_runtime_cgroup(runtime_rows[i].target, runtime_rows[i].cgroups_path);

	ASSERT_EQ(runtime_rows[i].err, err);
	if (err)
		ASSERT_MSG("linux.cgroupsPath");
}

void suite_scope(void)
{
	char name[128];

	for (size_t i = 0; i < ARRAY_SIZE(strip_rows); i++) {
		snprintf(name, sizeof(name), "strip-%zu-%s", i, strip_rows[i].err ? "refused" : "ok");
		TEST_CASE("scope", name, strip_row, i);
	}
	for (size_t i = 0; i < ARRAY_SIZE(runtime_rows); i++) {
		snprintf(name, sizeof(name), "runtime-cgroup-%zu-%s", i,
			 runtime_rows[i].err ? "refused" : "ok");
		TEST_CASE("scope", name, runtime_row, i);
	}
	TEST_CASE("scope", "uid-map-host-root", t_maps_host_root);
	TEST_CASE("scope", "ancestors-delegated", t_ancestors);
	TEST_CASE("scope", "sole-check-through-init-path", t_sole_through);
}
