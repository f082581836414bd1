/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pid -> cgroup v2 path -> cgroup id. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <linux/magic.h>

#include "cgroup.h"
#include "fileio.h"
#include "log.h"
#include "util.h"

static int no_such_pid(pid_t pid)
{
	return nsg_fail(ESRCH, "pid %d does not exist or has exited", (int)pid);
}

int proc_stat_read(const char *proc_root, pid_t pid, char *state, __u64 *start)
{
	cleanup_free char *path = NULL;
	cleanup_close int fd = -1;
	unsigned long long t;
	char buf[1024], *paren;
	ssize_t n;

	if (asprintf(&path, "%s/%d/stat", proc_root, (int)pid) < 0) {
		path = NULL;
		return -ENOMEM;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ESRCH ? -ESRCH : -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0)
		return errno == ESRCH ? -ESRCH : -errno;
	if (n == 0)
		return -ESRCH; /* exited between open and read */
	buf[n] = '\0';
	/* comm (field 2) may hold anything, even ") Z (" and newlines: the
	 * fields go on after the LAST ')'. */
	paren = strrchr(buf, ')');
	if (!paren || sscanf(paren + 1, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d "
				    "%*d %*d %*d %*d %*d %llu", state, &t) != 2)
		return -EINVAL;
	*start = t;
	return 0;
}

/*
 * The init's start time, read once per hook: check_alive reads its stat
 * first, and the record wants the same start time later (the hook's pidfd
 * checks in between that the pid still names that process).  Forgotten
 * with the cgroup root's stat (cgroup_root_forget).
 */
static pid_t start_pid;
static __u64 start_time;

int proc_start_time(pid_t pid, __u64 *start)
{
	char state;
	int err;

	if (pid > 0 && pid == start_pid) {
		*start = start_time;
		return 0;
	}
	err = proc_stat_read("/proc", pid, &state, start);
	return err;
}

/* A zombie still has /proc/PID/cgroup but can never be guarded meaningfully. */
static int check_alive(const char *proc_root, pid_t pid)
{
	__u64 start;
	char state;
	int err = proc_stat_read(proc_root, pid, &state, &start);

	if (err == 0 && strcmp(proc_root, "/proc") == 0 && state != 'Z' && state != 'X') {
		start_pid = pid;
		start_time = start;
	}

	if (err == -ESRCH)
		return no_such_pid(pid);
	if (err == -ENOMEM)
		return nsg_fail(ENOMEM, "out of memory");
	if (err == -EINVAL)
		return nsg_fail(EINVAL, "%s/%d/stat: unexpected format", proc_root, (int)pid);
	if (err)
		return nsg_fail(-err, "read %s/%d/stat: %s", proc_root, (int)pid, strerror(-err));
	if (state == 'Z' || state == 'X')
		return nsg_fail(ESRCH, "pid %d has exited (zombie)", (int)pid);
	return 0;
}

int pidfd_open_pid(pid_t pid)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);

	return fd < 0 ? -errno : fd;
}

int pidfd_pid(int fd, pid_t *pid_out)
{
	char path[64], link[64], buf[512], *p;
	cleanup_close int info = -1;
	ssize_t n;
	int pid;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return -EBADF;
	link[n] = '\0';
	if (strcmp(link, "anon_inode:[pidfd]") != 0)
		return -EBADF;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	info = open(path, O_RDONLY | O_CLOEXEC);
	if (info < 0)
		return -EBADF;
	n = read(info, buf, sizeof(buf) - 1);
	if (n <= 0)
		return -EBADF;
	buf[n] = '\0';
	p = strstr(buf, "\nPid:\t");
	if (!p || sscanf(p + 6, "%d", &pid) != 1)
		return -EBADF;
	/* -1: it has exited; 0: not in this pid namespace. */
	if (pid <= 0)
		return pid < 0 ? -ESRCH : -EXDEV;
	*pid_out = pid;
	return 0;
}

int pidfd_alive(int fd)
{
	return syscall(SYS_pidfd_send_signal, fd, 0, NULL, 0) == 0 ? 0 : -errno;
}

/* cgroup paths are kernel-generated, but a ".." shows up for cgroups outside
 * our cgroup namespace and must never be joined onto /sys/fs/cgroup. */
static bool has_dotdot(const char *path)
{
	const char *p = path;

	while (*p) {
		size_t n;

		while (*p == '/')
			p++;
		n = strcspn(p, "/");
		if (n == 2 && p[0] == '.' && p[1] == '.')
			return true;
		p += n;
	}
	return false;
}

int cgroup_path_of_pid(const char *proc_root, pid_t pid, char **path_out)
{
	cleanup_free char *path = NULL, *text = NULL, *v2 = NULL;
	cleanup_close int fd = -1;
	bool v1 = false;
	size_t len = 0;
	char *line, *end;
	int err = 0;

	if (pid <= 0)
		return nsg_fail(EINVAL, "invalid pid %d", (int)pid);
	err = check_alive(proc_root, pid);
	if (err < 0)
		return err;
	if (asprintf(&path, "%s/%d/cgroup", proc_root, (int)pid) < 0) {
		path = NULL;
		return nsg_fail(ENOMEM, "out of memory");
	}
	/* Raw reads (no stdio's fstat); one line on a cgroup v2 host. */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT || errno == ESRCH)
			return no_such_pid(pid);
		return nsg_fail(errno, "open %s: %s", path, strerror(errno));
	}
	err = read_capped(fd, 64 * 1024, &text, &len);
	if (err == -ESRCH)
		return no_such_pid(pid);
	if (err)
		return nsg_fail(-err, "read %s: %s", path, strerror(-err));
	if (memchr(text, '\0', len))
		return nsg_fail(EINVAL, "%s: a NUL byte", path);
	for (line = text; line && *line; line = end ? end + 1 : NULL) {
		char *colon;

		end = strchr(line, '\n');
		if (end)
			*end = '\0';
		if (!line[0])
			continue;
		if (strncmp(line, "0::", 3) != 0) {
			/* "N:controllers:/path" is a v1 hierarchy. */
			colon = strchr(line, ':');
			if (!colon || !strchr(colon + 1, ':'))
				return nsg_fail(EINVAL, "%s: malformed line \"%.64s\"", path, line);
			v1 = true;
			continue;
		}
		if (v2)
			return nsg_fail(EINVAL, "%s: more than one cgroup v2 line", path);
		v2 = strdup(line + 3);
		if (!v2)
			return nsg_fail(ENOMEM, "out of memory");
	}
	if (!v2) {
		if (v1)
			return nsg_fail(EOPNOTSUPP,
					"pid %d is only in cgroup v1 hierarchies: nsguard requires "
					"cgroup v2 (boot with systemd.unified_cgroup_hierarchy=1)",
					(int)pid);
		return no_such_pid(pid); /* empty file: the task is exiting */
	}
	if (v2[0] != '/')
		return nsg_fail(EINVAL, "%s: cgroup path \"%.64s\" is not absolute", path, v2);
	if (has_dotdot(v2))
		return nsg_fail(EINVAL,
				"pid %d is in cgroup %.200s, outside nsguard's cgroup namespace",
				(int)pid, v2);
	if (strcmp(v2, "/") == 0)
		return nsg_fail(EPERM,
				"pid %d is in the root cgroup; nsguard only guards a container's "
				"own cgroup",
				(int)pid);
	*path_out = steal_pointer(&v2);
	return 0;
}

/*
 * stat of cgroup_root, once per hook and root: a hook opens cgroups thrice.
 * A hook's process is short, and the agent forgets it before each request
 * (cgroup_root_forget): cgroupfs is not remounted under one of them.
 */
static char cached[256];
static struct stat csb;
static bool valid;

void cgroup_root_forget(void)
{
	valid = false;
	start_pid = 0;
}

static int root_stat(const char *cgroup_root, struct stat *sb)
{
	if (!valid || strcmp(cached, cgroup_root) != 0) {
		valid = false;
		if (strlen(cgroup_root) >= sizeof(cached) || stat(cgroup_root, &csb) < 0)
			return stat(cgroup_root, sb);
		strcpy(cached, cgroup_root);
		valid = true;
	}
	*sb = csb;
	return 0;
}

/* Open root/path; fd >= 0 on success.  Checks cgroup2 so nothing else is
 * ever mistaken for a container's cgroup. */
static int open_checked(const char *cgroup_root, const char *path, struct stat *sb_out)
{
	cleanup_free char *full = NULL;
	cleanup_close int fd = -1;
	struct statfs sfs;
	struct stat root_sb;
	const char *rel = path;

	if (has_dotdot(path))
		return nsg_fail(EINVAL, "cgroup path %.200s contains \"..\"", path);
	while (*rel == '/')
		rel++;
	if (!rel[0])
		return nsg_fail(EPERM, "refusing the root cgroup %s", cgroup_root);
	if (asprintf(&full, "%s/%s", cgroup_root, rel) < 0) {
		full = NULL;
		return nsg_fail(ENOMEM, "out of memory");
	}
	fd = open(full, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return nsg_fail(ENOENT, "cgroup %s does not exist", full);
		return nsg_fail(errno, "open cgroup %s: %s", full, strerror(errno));
	}
	if (fstatfs(fd, &sfs) < 0)
		return nsg_fail(errno, "statfs %s: %s", full, strerror(errno));
	if (sfs.f_type != CGROUP2_SUPER_MAGIC)
		return nsg_fail(EOPNOTSUPP,
				"%s is not on cgroup v2: nsguard requires the unified hierarchy "
				"mounted at %s",
				full, CGROUP_ROOT);
	if (fstat(fd, sb_out) < 0)
		return nsg_fail(errno, "stat %s: %s", full, strerror(errno));
	/* "a/." and friends name the root too: compare inodes, not strings. */
	if (root_stat(cgroup_root, &root_sb) < 0)
		return nsg_fail(errno, "stat %s: %s", cgroup_root, strerror(errno));
	if (root_sb.st_dev == sb_out->st_dev && root_sb.st_ino == sb_out->st_ino)
		return nsg_fail(EPERM, "refusing the root cgroup %s", cgroup_root);
	return steal_fd(&fd);
}

int cgroup_id_of_path(const char *cgroup_root, const char *path, __u64 *id_out)
{
	cleanup_close int fd = -1;
	struct stat sb;

	fd = open_checked(cgroup_root, path, &sb);
	if (fd < 0)
		return fd;
	/* On 64-bit kernels the cgroup id is the kernfs inode number. */
	*id_out = sb.st_ino;
	return 0;
}

int cgroup_open(const char *cgroup_root, const char *path, __u64 *id_out)
{
	struct stat sb;
	int fd = open_checked(cgroup_root, path, &sb);

	if (fd >= 0 && id_out)
		*id_out = sb.st_ino;
	return fd;
}

/* What every shared-cgroup refusal ends with: why, and what to do. */
#define SHARED_ADVICE                                                                      \
	"which the container's policy would restrict too; give the container a cgroup of " \
	"its own (shared-cgroups = allow in nsguard.conf accepts this)"

/* A directory entry of dirfd that is a child cgroup (not "." or ".."). */
static bool child_cgroup_named(int dirfd, const char *name, unsigned char type)
{
	struct stat sb;

	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return false;
	if (type != DT_UNKNOWN)
		return type == DT_DIR;
	return fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(sb.st_mode);
}

static bool child_cgroup(int dirfd, const struct dirent *de)
{
	return child_cgroup_named(dirfd, de->d_name, de->d_type);
}

/* getdents64's record (glibc declares none). */
struct nsg_dirent64 {
	__u64 d_ino;
	__s64 d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/*
 * Whether dirfd's cgroup.procs lists a process other than pid; *other is its
 * pid, or 0 for one outside our pid namespace (the kernel lists those as 0).
 */
static int other_proc(int dirfd, const char *name, pid_t pid, bool *found, long *other)
{
	cleanup_close int fd = openat(dirfd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
	char buf[512]; /* a sole cgroup lists one pid; a small buffer touches no new stack page */
	long v = 0;
	bool digits = false;
	ssize_t n;

	*found = false;
	if (fd < 0)
		return nsg_fail(errno, "open %s/cgroup.procs: %s", name, strerror(errno));
	/* Raw reads, not stdio (two calls fewer a level); a number may span two reads. */
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return nsg_fail(EIO, "read %s/cgroup.procs", name);
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] >= '0' && buf[i] <= '9') {
				v = v * 10 + (buf[i] - '0');
				digits = true;
				if (v > INT_MAX)
					return nsg_fail(EIO, "read %s/cgroup.procs: a pid out of range",
							name);
				continue;
			}
			if (digits && v != pid) {
				*found = true;
				*other = v;
				return 0;
			}
			v = 0;
			digits = false;
		}
	}
	if (digits && v != pid) {
		*found = true;
		*other = v;
	}
	return 0;
}

/* "populated 1" in <dirfd>/<child>/cgroup.events: processes in it or below. */
static int child_populated(int dirfd, const char *name, const char *child, bool *populated)
{
	cleanup_free char *rel = NULL, *text = NULL;
	cleanup_close int fd = -1;
	size_t len = 0;
	int err;

	*populated = false;
	if (asprintf(&rel, "%s/cgroup.events", child) < 0) {
		rel = NULL;
		return nsg_fail(ENOMEM, "out of memory");
	}
	fd = openat(dirfd, rel, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT) /* removed meanwhile */
			return 0;
		return nsg_fail(errno, "open %s/%s: %s", name, rel, strerror(errno));
	}
	/* A few short lines; raw reads, not stdio's fcntl and fstat. */
	err = read_capped(fd, 4096, &text, &len);
	if (err)
		return nsg_fail(-err, "read %s/%s: %s", name, rel, strerror(-err));
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, "populated 1\n", 12) == 0)
			*populated = true;
	return 0;
}

static void read_comm(const char *proc_root, long pid, char *comm, size_t len)
{
	cleanup_free char *path = NULL;
	cleanup_fclose FILE *f = NULL;

	snprintf(comm, len, "?");
	if (asprintf(&path, "%s/%ld/comm", proc_root, pid) < 0) {
		path = NULL;
		return;
	}
	f = fopen(path, "re");
	if (!f || !fgets(comm, len, f))
		snprintf(comm, len, "?");
	comm[strcspn(comm, "\n")] = '\0';
}

int cgroup_check_sole_at(int dirfd, const char *name, pid_t pid, const char *proc_root,
			 const char *through)
{
	char buf[1024] __attribute__((aligned(8)));
	struct nsg_dirent64 *de = NULL;
	bool found, populated;
	long other = 0;
	int dfd, err = 0;

	err = other_proc(dirfd, name, pid, &found, &other);
	if (err)
		return err;
	if (found && other == 0)
		return nsg_fail(EBUSY,
				"cgroup %s is shared: it holds a process outside nsguard's pid "
				"namespace besides the container's %d, " SHARED_ADVICE,
				name, (int)pid);
	if (found) {
		char comm[32];

		read_comm(proc_root, other, comm, sizeof(comm));
		return nsg_fail(EBUSY,
				"cgroup %s is shared: it holds process %ld (%s) besides the "
				"container's %d, " SHARED_ADVICE,
				name, other, comm, (int)pid);
	}
	/* At createRuntime/prestart nothing of the container is below its cgroup. */
	/* A new open file description: a dup would share (and move) dirfd's offset. */
	dfd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return nsg_fail(errno, "list %s: %s", name, strerror(errno));
	/* getdents64 itself, not a DIR: opendir's fstat and two fcntl for a one-screen listing. */
	for (;;) {
		long n = syscall(SYS_getdents64, dfd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = nsg_fail(errno, "list %s: %s", name, strerror(errno));
			break;
		}
		if (n == 0)
			break;
		for (long off = 0; off < n && !err; off += de->d_reclen) {
			de = (struct nsg_dirent64 *)(buf + off);
			if (!child_cgroup_named(dirfd, de->d_name, de->d_type) ||
			    (through && strcmp(de->d_name, through) == 0))
				continue;
			err = child_populated(dirfd, name, de->d_name, &populated);
			if (!err && populated)
				err = nsg_fail(EBUSY,
					       "cgroup %s is shared: the cgroup %s/%.64s below it holds "
					       "processes, " SHARED_ADVICE,
					       name, name, de->d_name);
		}
		if (err)
			break;
	}
	close(dfd);
	return err;
}

int cgroup_check_sole(const char *cgroup_root, const char *path, const char *init_path, pid_t pid,
		      const char *proc_root, int *fd_out, __u64 *id_out)
{
	cleanup_free char *name = NULL, *next = NULL;
	cleanup_close int fd = -1, top = -1;
	size_t n = strlen(path);
	const char *rest;
	struct stat sb;
	int err = 0;

	if (fd_out)
		*fd_out = -1;

	/* init_path is path or below it: check each level on the way down. */
	if (strncmp(init_path, path, n) != 0 || (init_path[n] && init_path[n] != '/'))
		return nsg_fail(EINVAL, "cgroup %.200s is not below %.200s", init_path, path);
	rest = init_path + n;
	top = open_checked(cgroup_root, path, &sb);
	if (top < 0)
		return top;
	name = strdup(path);
	if (!name)
		return nsg_fail(ENOMEM, "out of memory");
	for (int cur = top;;) {
		cleanup_close int child = -1;
		char *longer;

		while (*rest == '/')
			rest++;
		free(next);
		next = *rest ? strndup(rest, strcspn(rest, "/")) : NULL;
		if (*rest && !next)
			return nsg_fail(ENOMEM, "out of memory");
		err = cgroup_check_sole_at(cur, name, pid, proc_root, next);
		if (err)
			return err;
		if (!next)
			break;
		child = openat(cur, next, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (child < 0)
			return nsg_fail(errno, "open cgroup %s/%s: %s", name, next, strerror(errno));
		if (asprintf(&longer, "%s/%s", name, next) < 0)
			return nsg_fail(ENOMEM, "out of memory");
		free(name);
		name = longer;
		if (fd >= 0)
			close(fd);
		fd = steal_fd(&child);
		cur = fd;
		rest += strlen(next);
	}
	if (fd_out) {
		*fd_out = steal_fd(&top);
		if (id_out)
			*id_out = sb.st_ino;
	}
	return 0;
}

#ifndef FILEID_KERNFS
#define FILEID_KERNFS 0xfe
#endif

int cgroup_open_id(const char *cgroup_root, __u64 id)
{
	struct {
		struct file_handle fh;
		__u64 id;
	} h = { .fh = { .handle_bytes = sizeof(__u64), .handle_type = FILEID_KERNFS } };
	cleanup_close int root = -1;
	int fd;

	root = open(cgroup_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return errno == ENOENT ? -ENODEV : -errno; /* -ENOENT means the cgroup */
	memcpy(h.fh.f_handle, &id, sizeof(id));
	fd = open_by_handle_at(root, &h.fh, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errno == ESTALE ? -ENOENT : -errno;
	return fd;
}

bool cgroup_id_alive(const char *cgroup_root, __u64 id)
{
	int fd = cgroup_open_id(cgroup_root, id);

	if (fd >= 0) {
		close(fd);
		return true;
	}
	return fd != -ENOENT; /* cannot tell: keep it */
}

int cgroup_populated(const char *cgroup_root, const char *path, bool *populated)
{
	cleanup_close int fd = -1;
	struct stat sb;

	*populated = false;
	fd = open_checked(cgroup_root, path, &sb);
	if (fd < 0)
		return fd;
	return child_populated(fd, path, ".", populated);
}

int cgroup_walk_below(const char *cgroup_root, const char *path,
		      int (*fn)(__u64 id, void *data), void *data)
{
	cleanup_free DIR **stack = NULL;
	size_t depth = 0, cap = 0, seen = 0;
	struct stat sb;
	int fd, err = 0;

	/* An fd per level, not a path: a deep tree cannot outgrow PATH_MAX. */
	fd = open_checked(cgroup_root, path, &sb);
	if (fd < 0)
		return fd;
	while (fd >= 0) {
		DIR *d = NULL, **ns;
		struct dirent *de;

		if (depth == cap) {
			cap = cap ? cap * 2 : 8;
			ns = realloc(stack, cap * sizeof(*stack));
			if (!ns) {
				close(fd);
				err = nsg_fail(ENOMEM, "out of memory");
				break;
			}
			stack = ns;
		}
		d = fdopendir(fd);
		if (!d) {
			err = nsg_fail(errno, "list the cgroups below %s: %s", path, strerror(errno));
			close(fd);
			break;
		}
		stack[depth++] = d;
		fd = -1;
		/* The next child directory, at the deepest level that has one left. */
		while (fd < 0 && depth && !err) {
			d = stack[depth - 1];
			errno = 0;
			de = readdir(d);
			if (!de) {
				if (errno)
					err = nsg_fail(errno, "list the cgroups below %s: %s", path,
						       strerror(errno));
				closedir(stack[--depth]);
				continue;
			}
			if (!child_cgroup(dirfd(d), de))
				continue;
			if (++seen > CGROUP_WALK_MAX) {
				err = nsg_fail(E2BIG,
					       "more than %d cgroups below %s: nsguard checks them "
					       "under its lock, where so many would stall other "
					       "containers' starts; remove the empty ones",
					       CGROUP_WALK_MAX, path);
				break;
			}
			fd = openat(dirfd(d), de->d_name,
				    O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
			if (fd < 0 && errno == ENOENT)
				continue; /* removed while we looked */
			if (fd < 0)
				err = nsg_fail(errno, "open a cgroup below %s: %s", path,
					       strerror(errno));
			else if (fstat(fd, &sb) < 0)
				err = nsg_fail(errno, "stat a cgroup below %s: %s", path,
					       strerror(errno));
			else
				err = fn(sb.st_ino, data);
			if (err && fd >= 0) {
				close(fd);
				fd = -1;
			}
		}
		if (err)
			break;
	}
	while (depth)
		closedir(stack[--depth]);
	return err;
}
