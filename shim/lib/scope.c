// SPDX-License-Identifier: GPL-2.0-or-later
/* Which cgroup to guard for a container: what its processes can reach. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/nsfs.h>

#include "fileio.h"
#include "log.h"
#include "mounts.h"
#include "nsguard.h"
#include "scope.h"
#include "util.h"

/* What a refusal ends with: the layout nsguard can guard. */
#define SCOPE_ADVICE                                                                       \
	"its processes could move out of the cgroup nsguard would guard; give the container " \
	"a cgroup namespace of its own (linux.namespaces \"cgroup\")"

int scope_strip(const char *init_path, const char *rel, char **root_out)
{
	size_t n = strlen(init_path), r;

	*root_out = NULL;
	if (strcmp(rel, "/..") == 0 || strncmp(rel, "/../", 4) == 0)
		return nsg_fail(EPERM,
				"the container's init sits in cgroup %.200s, outside its own cgroup "
				"namespace (%.200s from there)",
				init_path, rel);
	if (rel[0] != '/')
		return nsg_fail(EINVAL, "cgroup namespace path \"%.200s\" is not absolute", rel);
	r = strcmp(rel, "/") == 0 ? 0 : strlen(rel);
	/* rel must be init_path's tail, starting at a component boundary. */
	if (r > n || (r && strcmp(init_path + n - r, rel) != 0))
		return nsg_fail(EINVAL,
				"cgroup %.200s does not end in %.200s, the path its cgroup namespace "
				"shows",
				init_path, rel);
	if (n - r == 0 || (n - r == 1 && init_path[0] == '/'))
		return nsg_fail(EPERM,
				"the container's cgroup namespace is rooted at the root cgroup; "
				"nsguard only guards a container's own cgroup");
	*root_out = strndup(init_path, n - r);
	return *root_out ? 0 : nsg_fail(ENOMEM, "out of memory");
}

int scope_maps_host_root(const char *uid_map, bool *mapped)
{
	cleanup_fclose FILE *f = fopen(uid_map, "re");
	unsigned long long inside, outside, count;

	*mapped = false;
	if (!f)
		return nsg_fail(errno, "open %s: %s", uid_map, strerror(errno));
	while (fscanf(f, "%llu %llu %llu", &inside, &outside, &count) == 3)
		if (outside == 0 && count > 0)
			*mapped = true;
	return 0;
}

int scope_ancestors_closed(const char *cgroup_root, const char *path)
{
	cleanup_free char *dir = strdup(path);
	char *slash;

	if (!dir)
		return nsg_fail(ENOMEM, "out of memory");
	while ((slash = strrchr(dir, '/'))) {
		cleanup_free char *procs = NULL;
		struct stat sb;

		*slash = '\0'; /* the parent; "" is the root cgroup */
		if (asprintf(&procs, "%s%s/cgroup.procs", cgroup_root, dir) < 0) {
			procs = NULL;
			return nsg_fail(ENOMEM, "out of memory");
		}
		if (stat(procs, &sb) < 0)
			return nsg_fail(errno, "stat %s: %s", procs, strerror(errno));
		if (sb.st_uid != 0 || (sb.st_mode & 022))
			return nsg_fail(EPERM,
					"cgroup %.200s above the container's is delegated (its "
					"cgroup.procs is owned by uid %u, mode %03o), and the "
					"container's cgroup namespace does not fence it in: " SCOPE_ADVICE,
					dir[0] ? dir : "/", (unsigned int)sb.st_uid,
					(unsigned int)(sb.st_mode & 0777));
	}
	return 0;
}

static int ns_path(const char *proc_root, const char *pid, const char *ns, char **out)
{
	if (asprintf(out, "%s/%s/ns/%s", proc_root, pid, ns) < 0) {
		*out = NULL;
		return nsg_fail(ENOMEM, "out of memory");
	}
	return 0;
}

/*
 * One pass over /proc: the host-capabilities check and scope_resolve ask
 * about the same namespaces and the same status file.  Each is read once
 * per hook (scope_forget: the agent's next request starts afresh); what
 * they show of the init is fixed while it waits in createRuntime, and the
 * hook's pidfd checks afterwards that it was the init's all along.
 */
static struct {
	char path[64];
	struct stat sb;
} ns_memo[12];
static size_t n_ns_memo;
static char status_path[64];
static char *status_text;

void scope_forget(void)
{
	n_ns_memo = 0;
	status_path[0] = '\0';
	free(status_text);
	status_text = NULL;
}

static int stat_memo(const char *path, struct stat *sb)
{
	for (size_t i = 0; i < n_ns_memo; i++)
		if (strcmp(ns_memo[i].path, path) == 0) {
			*sb = ns_memo[i].sb;
			return 0;
		}
	if (stat(path, sb) < 0)
		return -1;
	if (n_ns_memo < ARRAY_SIZE(ns_memo) && strlen(path) < sizeof(ns_memo[0].path)) {
		strcpy(ns_memo[n_ns_memo].path, path);
		ns_memo[n_ns_memo++].sb = *sb;
	}
	return 0;
}

/* Whether pid shares namespace ns (cgroup, user) with this process. */
static int same_ns(const char *proc_root, pid_t pid, const char *ns, bool *same)
{
	cleanup_free char *mine = NULL, *theirs = NULL;
	char pidbuf[16];
	struct stat a, b;
	int err = 0;

	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)pid);
	err = ns_path(proc_root, "self", ns, &mine);
	if (!err)
		err = ns_path(proc_root, pidbuf, ns, &theirs);
	if (err)
		return err;
	if (stat_memo(mine, &a) < 0)
		return nsg_fail(errno, "stat %s: %s", mine, strerror(errno));
	if (stat_memo(theirs, &b) < 0)
		return nsg_fail(errno == ENOENT ? ESRCH : errno, "stat %s: %s", theirs,
				strerror(errno));
	*same = a.st_dev == b.st_dev && a.st_ino == b.st_ino;
	return 0;
}

/*
 * The path of pid's cgroup as its own cgroup namespace shows it: join that
 * namespace and read /proc/PID/cgroup, which the kernel renders relative to
 * the reader's namespace root, then return to ours.  In this thread, not in
 * a child: a fork and wait cost a hook more than the rest of its checks
 * (make bench, "where the time goes").
 */
static int ns_relative_path(const char *proc_root, pid_t pid, char **rel_out)
{
	cleanup_free char *nsfile = NULL, *cgfile = NULL, *selffile = NULL, *buf = NULL;
	cleanup_close int nsfd = -1, self = -1, fd = -1;
	char *line, *end;
	size_t len = 0;
	int err = 0, rerr = 0;

	*rel_out = NULL;
	if (asprintf(&nsfile, "%s/%d/ns/cgroup", proc_root, (int)pid) < 0 ||
	    asprintf(&cgfile, "%s/%d/cgroup", proc_root, (int)pid) < 0 ||
	    asprintf(&selffile, "%s/thread-self/ns/cgroup", proc_root) < 0)
		return nsg_fail(ENOMEM, "out of memory");
	self = open(selffile, O_RDONLY | O_CLOEXEC);
	if (self < 0)
		return nsg_fail(errno, "open %s: %s", selffile, strerror(errno));
	nsfd = open(nsfile, O_RDONLY | O_CLOEXEC);
	if (nsfd < 0)
		return nsg_fail(errno == ENOENT ? ESRCH : errno, "open %s: %s", nsfile,
				strerror(errno));
	if (setns(nsfd, CLONE_NEWCGROUP) < 0)
		return nsg_fail(errno, "cannot join the cgroup namespace of pid %d: %s", (int)pid,
				strerror(errno));
	fd = open(cgfile, O_RDONLY | O_CLOEXEC);
	err = fd < 0 ? -errno : read_capped(fd, 64 * 1024, &buf, &len);
	/* Back before anything else: every later path is the host's view. */
	if (setns(self, CLONE_NEWCGROUP) < 0)
		rerr = errno;
	if (rerr)
		return nsg_fail(rerr, "cannot return to nsguard's own cgroup namespace: %s",
				strerror(rerr));
	if (err)
		return nsg_fail(err == -ENOENT ? ESRCH : -err,
				"cannot read the cgroup of pid %d inside its cgroup namespace: %s",
				(int)pid, strerror(-err));
	for (line = buf; line && *line; line = end ? end + 1 : NULL) {
		end = strchr(line, '\n');
		if (end)
			*end = '\0';
		if (strncmp(line, "0::", 3) == 0) {
			*rel_out = strdup(line + 3);
			return *rel_out ? 0 : nsg_fail(ENOMEM, "out of memory");
		}
	}
	return nsg_fail(ESRCH, "pid %d has exited (no cgroup v2 line in its namespace)", (int)pid);
}

/*
 * Whether the container can pass DAC checks on root-owned files; *same_user:
 * it is in the host's user namespace itself (not one that maps uid 0).
 */
static int runs_as_host_root(const char *proc_root, pid_t pid, bool *host_root, bool *same_user)
{
	cleanup_free char *map = NULL;
	int err = same_ns(proc_root, pid, "user", same_user);

	if (err)
		return err;
	if (*same_user) {
		*host_root = true;
		return 0;
	}
	if (asprintf(&map, "%s/%d/uid_map", proc_root, (int)pid) < 0) {
		map = NULL;
		return nsg_fail(ENOMEM, "out of memory");
	}
	return scope_maps_host_root(map, host_root);
}

/*
 * The line of proc_root/PID/status that starts with key ("NSpid:"), without
 * its newline, into *line_out (freed by the caller); -ESRCH when the process
 * has gone.
 */
static int status_line(const char *proc_root, pid_t pid, const char *key, char **line_out)
{
	cleanup_free char *path = NULL;
	cleanup_close int fd = -1;
	size_t len = 0, klen = strlen(key);
	const char *p;
	int err;

	*line_out = NULL;
	if (asprintf(&path, "%s/%d/status", proc_root, (int)pid) < 0) {
		path = NULL;
		return nsg_fail(ENOMEM, "out of memory");
	}
	if (!status_text || strcmp(status_path, path) != 0) {
		free(status_text);
		status_text = NULL;
		status_path[0] = '\0';
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return nsg_fail(errno == ENOENT ? ESRCH : errno, "open %s: %s", path,
					strerror(errno));
		err = read_capped(fd, 1 << 16, &status_text, &len);
		if (err)
			return nsg_fail(err == -ESRCH ? ESRCH : -err, "read %s: %s", path,
					strerror(-err));
		if (strlen(path) < sizeof(status_path))
			strcpy(status_path, path);
	}
	for (p = status_text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, key, klen) != 0)
			continue;
		*line_out = strndup(p, strcspn(p, "\n"));
		return *line_out ? 0 : nsg_fail(ENOMEM, "out of memory");
	}
	return nsg_fail(ESRCH, "%s has no %s line (the process has exited)", path, key);
}

/* Whether pid is pid 1 of its own pid namespace (the last NSpid field). */
static int pid_ns_init(const char *proc_root, pid_t pid, bool *is_init)
{
	cleanup_free char *line = NULL;
	const char *last;
	int err = status_line(proc_root, pid, "NSpid:", &line);

	*is_init = false;
	if (err)
		return err;
	last = strrchr(line, '\t');
	*is_init = last && strcmp(last + 1, "1") == 0;
	return 0;
}

/* Whether pid's mount namespace is owned by nsguard's own user namespace. */
static int mnt_ns_ours(const char *proc_root, pid_t pid, bool *ours)
{
	cleanup_free char *path = NULL, *self = NULL;
	cleanup_close int ns = -1, owner = -1;
	struct stat a, b;

	if (asprintf(&path, "%s/%d/ns/mnt", proc_root, (int)pid) < 0)
		path = NULL;
	if (asprintf(&self, "%s/self/ns/user", proc_root) < 0)
		self = NULL;
	if (!path || !self)
		return nsg_fail(ENOMEM, "out of memory");
	ns = open(path, O_RDONLY | O_CLOEXEC);
	if (ns < 0)
		return nsg_fail(errno == ENOENT ? ESRCH : errno, "open %s: %s", path, strerror(errno));
	owner = ioctl(ns, NS_GET_USERNS);
	if (owner < 0)
		return nsg_fail(errno, "the owner of %s: %s", path, strerror(errno));
	if (fstat(owner, &a) < 0 || stat_memo(self, &b) < 0)
		return nsg_fail(errno, "stat %s: %s", self, strerror(errno));
	*ours = a.st_dev == b.st_dev && a.st_ino == b.st_ino;
	return 0;
}

/* Does path hold the components of want ("a/b", no leading '/') in a row? */
static bool has_components(const char *path, const char *want)
{
	size_t n = strlen(want);

	for (const char *p = path; (p = strchr(p, '/')); p++)
		if (strncmp(p + 1, want, n) == 0 && (p[1 + n] == '/' || p[1 + n] == '\0'))
			return true;
	return false;
}

int scope_in_runtime_cgroup(const char *target, const char *cgroups_path)
{
	cleanup_free char *want = NULL;
	const char *c1, *c2;
	bool in;

	if (!cgroups_path || !*cgroups_path)
		return 0;
	c1 = strchr(cgroups_path, ':');
	c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	if (c2 && cgroups_path[0] != '/' && !strchr(c2 + 1, ':')) {
		/*
		 * systemd "slice:prefix:name": runc's unit is prefix-name.scope
		 * (with an empty prefix too), or name itself for a .slice.
		 */
		const char *name = c2 + 1;
		size_t n = strlen(name);

		if (n > 6 && strcmp(name + n - 6, ".slice") == 0)
			want = strdup(name);
		else if (asprintf(&want, "%.*s-%s.scope", (int)(c2 - c1 - 1), c1 + 1, name) < 0)
			want = NULL;
		if (!want)
			return nsg_fail(ENOMEM, "out of memory");
		in = *name && !strchr(want, '/') && has_components(target, want);
	} else {
		want = path_clean(cgroups_path);
		if (!want)
			return nsg_fail(ENOMEM, "out of memory");
		if (want[0] == '/') {
			size_t n = strlen(want);

			in = n == 1 || (strncmp(target, want, n) == 0 &&
					(target[n] == '\0' || target[n] == '/'));
		} else {
			in = *want && strncmp(want, "..", 2) != 0 && has_components(target, want);
		}
	}
	if (!in)
		return nsg_fail(EPERM,
				"the cgroup to guard, %.200s, is not the container's cgroup that "
				"config.json's linux.cgroupsPath \"%.200s\" names, nor below it: "
				"the container would not be all that is guarded",
				target, cgroups_path);
	return 0;
}

/* This process's binary, as its mount namespace names it (NULL if it cannot tell). */
static char *self_exe(const char *proc_root)
{
	cleanup_free char *link = NULL;
	char buf[PATH_MAX];
	ssize_t n;

	if (asprintf(&link, "%s/self/exe", proc_root) < 0)
		return NULL;
	n = readlink(link, buf, sizeof(buf) - 1);
	if (n <= 0 || buf[0] != '/')
		return NULL;
	buf[n] = '\0';
	return strdup(buf);
}

/*
 * path with its symbolic links resolved, as the mount table names where it
 * lives: the file, else (a config not written yet) its directory's real path
 * and its name; NULL when neither resolves (nothing there to protect).
 */
static char *real_path(const char *path)
{
	cleanup_free char *dir = NULL, *real_dir = NULL;
	char *real = path ? realpath(path, NULL) : NULL, *slash, *out = NULL;

	if (real || !path || !(dir = strdup(path)) || !(slash = strrchr(dir, '/')))
		return real;
	*slash = '\0';
	real_dir = realpath(dir[0] ? dir : "/", NULL);
	if (real_dir && asprintf(&out, "%s/%s", strcmp(real_dir, "/") ? real_dir : "", slash + 1) < 0)
		out = NULL;
	return out;
}

int scope_resolve(const char *proc_root, const char *cgroup_root, const struct oci_state *st,
		  const char *init_path, const char *config_path, char **target_out,
		  const char **how)
{
	cleanup_free char *rel = NULL, *root = NULL, *exe = NULL, *config = NULL;
	struct mounts_ctx mc;
	bool same_cg = false, same_mnt = false, same_pid = false, host_root = false, same_user = false;
	bool is_init = false;
	int err = 0;

	*target_out = NULL;
	err = same_ns(proc_root, st->pid, "cgroup", &same_cg);
	if (err)
		return err;
	if (same_cg) {
		root = strdup(init_path);
		if (!root)
			return nsg_fail(ENOMEM, "out of memory");
		*how = "init's cgroup, host cgroup namespace";
	} else {
		err = ns_relative_path(proc_root, st->pid, &rel);
		if (!err)
			err = scope_strip(init_path, rel, &root);
		if (err)
			return err;
		*how = "its cgroup namespace root";
	}
	/* Where the runtime put it, not where the process happens to be. */
	err = scope_in_runtime_cgroup(root, st->cgroups_path);
	if (err)
		return err;
	err = runs_as_host_root(proc_root, st->pid, &host_root, &same_user);
	if (!err)
		err = same_ns(proc_root, st->pid, "mnt", &same_mnt);
	if (err)
		return err;
	exe = self_exe(proc_root);
	config = real_path(config_path);
	mc = (struct mounts_ctx){ .guarded = root, .cfg = st->mounts, .n_cfg = st->n_mounts,
				  .ro_paths = st->ro_paths, .n_ro_paths = st->n_ro_paths,
				  .masked_paths = st->masked_paths,
				  .n_masked_paths = st->n_masked_paths, .run_dir = NSGUARD_RUN_DIR,
				  .pin_dir = NSGUARD_PIN_DIR, .config = config, .binary = exe, .host_root = host_root };
	if (!host_root) {
		/* Its root passes no DAC check on root's files: only a cgroup
		 * delegated above it would let it out. */
		err = scope_ancestors_closed(cgroup_root, root);
		if (err)
			return err;
		/*
		 * Nor could it use what the host-root rows guard; but what it
		 * opens through a view it may hand to a host-root container.
		 */
		if (same_mnt)
			return nsg_fail(EPERM,
					"the container shares the host's mount namespace: it could "
					"open nsguard's pins and run directory and hand them to a "
					"container that runs as the host's root; give it a mount "
					"namespace");
		/* Its root may remount what its user namespace owns: with CAP_SYS_ADMIN. */
		mc.ro_holds = !st->caps_detach;
		err = mounts_check(proc_root, st->pid, &mc);
		if (err)
			return err;
		*target_out = steal_pointer(&root);
		return 0;
	}
	/*
	 * The host's root passes DAC checks on every cgroup.procs it can
	 * reach.  nsdelegate would fence a cgroup namespace, but any cgroup2
	 * mount from the host's cgroup namespace clears it node-wide, so the
	 * container must not see the host's hierarchy at all.
	 */
	if (same_cg)
		return nsg_fail(EPERM,
				"the container shares the host's cgroup namespace and runs as the "
				"host's root (no user namespace, or one that maps uid 0): " SCOPE_ADVICE);
	if (same_mnt)
		return nsg_fail(EPERM,
				"the container shares the host's mount namespace, so it sees the host's "
				"cgroup hierarchy, and runs as the host's root: its processes could "
				"move out of the cgroup nsguard would guard; give it a mount namespace");
	/* /proc/PID/root of a host process leads into the host's mounts. */
	err = same_ns(proc_root, st->pid, "pid", &same_pid);
	if (err)
		return err;
	if (same_pid)
		return nsg_fail(EPERM,
				"the container shares the host's pid namespace and runs as the host's "
				"root: through /proc/PID/root of a host process it reaches the host's "
				"file systems, nsguard's pins included; give it a pid namespace");
	/* Nor another one's: its processes' mounts were never judged for host root. */
	err = pid_ns_init(proc_root, st->pid, &is_init);
	if (err)
		return err;
	if (!is_init)
		return nsg_fail(EPERM,
				"the container's init is not pid 1 of its pid namespace, which it "
				"shares with other processes, and it runs as the host's root: through "
				"/proc/PID/root of theirs it reaches mounts nsguard did not judge; give "
				"it a pid namespace of its own");
	/* A mount namespace another user namespace owns may be remounted from there. */
	if (same_user) {
		err = mnt_ns_ours(proc_root, st->pid, &same_user);
		if (err)
			return err;
	}
	/* What its mounts show, from the kernel's table: not what config.json asked. */
	mc.ro_holds = same_user;
	err = mounts_check(proc_root, st->pid, &mc);
	if (err)
		return err;
	*target_out = steal_pointer(&root);
	return 0;
}

/* The CapBnd line of proc_root/PID/status: the capabilities init can ever hold. */
static int cap_bounding(const char *proc_root, pid_t pid, unsigned long long *bnd)
{
	cleanup_free char *line = NULL;
	int err = status_line(proc_root, pid, "CapBnd:", &line);

	if (err)
		return err;
	if (sscanf(line, "CapBnd: %llx", bnd) != 1)
		return nsg_fail(EINVAL, "pid %d: a CapBnd line nsguard cannot read", (int)pid);
	return 0;
}

/*
 * What reaches past the guard from the host's user namespace: bpf(), a
 * module, raw I/O, open_by_handle_at (any file of a file system it has a
 * mount of, whatever that mount's root).
 */
#define CAPS_DETACH (1ULL << 21 | 1ULL << 39 | 1ULL << 16 | 1ULL << 17 | 1ULL << 2)

int scope_host_caps(const char *proc_root, const struct oci_state *st)
{
	unsigned long long bnd = 0;
	bool same = false;
	int err = same_ns(proc_root, st->pid, "user", &same);

	/* Capabilities in any other user namespace do not reach bpf(). */
	if (err || !same)
		return err;
	err = cap_bounding(proc_root, st->pid, &bnd);
	if (err)
		return err;
	/*
	 * The kernel shows what the runtime's init may still hold; the runtime
	 * drops down to process.capabilities only after the createRuntime
	 * hooks, and reads the same config.json, read the same way.
	 */
	if (!(bnd & CAPS_DETACH) || !st->caps_detach) {
		/* Review: the disk under nsguard's config and binary, written raw. */
		if (st->devices_open)
			return nsg_fail(EPERM,
					"the container runs in the host's user namespace, and config.json %s "
					"lets it read or write a block device, every char device or a disk's "
					"char face (sg, bsg, NVMe generic, mtd: the device cgroup its runtime "
					"installs): as the host's root it could write the disk under "
					"nsguard's configuration and binary; allow only the char devices it "
					"needs, by type \"c\" and major, or set host-capabilities = allow "
					"in nsguard.conf",
					st->devices_open);
		return 0;
	}
	return nsg_fail(EPERM,
			"the container runs in the host's user namespace with CAP_SYS_ADMIN, "
			"CAP_BPF, CAP_SYS_MODULE, CAP_SYS_RAWIO or CAP_DAC_READ_SEARCH (config.json "
			"process.capabilities %s): it could detach its own guard (bpf(), a kernel "
			"module, raw I/O, file handles); drop them, give it a user namespace, or "
			"set host-capabilities = allow in nsguard.conf",
			st->have_caps ? "names one, or a name nsguard does not know"
				      : "is missing, so it keeps them all");
}
