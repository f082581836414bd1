// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * nsg-userns: the probe the container tests run inside a container.  Built
 * static (gcc -static) so it runs in a busybox-only rootfs.  Each subcommand
 * tries one way of creating a user namespace and prints ONE result line:
 *
 *   nsg-userns unshare        unshare(CLONE_NEWUSER)
 *   nsg-userns clone          raw clone(CLONE_NEWUSER|SIGCHLD)
 *   nsg-userns clone3         raw clone3 with CLONE_NEWUSER
 *   nsg-userns nest N         N nested levels; after each unshare the level
 *                             writes setgroups=deny, uid_map, gid_map (a
 *                             second unshare needs mapped ids, or the kernel
 *                             itself says EPERM); root inside if allowed
 *                             (CAP_SETFCAP), else uid/gid 1000
 *   nsg-userns level          how many NS_GET_PARENT steps are visible from
 *                             here (0 at the top of the caller's scope)
 *   nsg-userns setns PATH     setns(open(PATH), CLONE_NEWUSER), then unshare
 *   nsg-userns chain N        fork a chain N deep; the last one unshares
 *   nsg-userns reexec         execve(/proc/self/exe, "unshare")
 *   nsg-userns cgroup-escape  mkdir a child of its own cgroup under
 *                             /sys/fs/cgroup, move itself there, unshare
 *   nsg-userns move DIR CMD...  mkdir DIR (a cgroup directory) if missing,
 *                             move itself into DIR/cgroup.procs, then run
 *                             nsg-userns CMD... (a move anywhere the
 *                             container can write, not just below its own)
 *   nsg-userns flood N        N unshare(CLONE_NEWUSER) calls in a loop; the
 *                             line counts how many failed (a deny flood)
 *   nsg-userns seq N          N children one after another, one unshare each
 *                             (freed before the next): ok if all N got one
 *   nsg-userns race N         N children spin until all are ready, then one
 *                             unshare each at once;
 *                             always "ok created=K failed=F errno=NAME"
 *   nsg-userns pin PATH [detach]  BPF_OBJ_GET of a pin (and BPF_LINK_DETACH
 *                             of it): what a container with a view of a
 *                             bpffs could do to nsguard's links (#40)
 *   nsg-userns lock PATH      open PATH read-only and flock(LOCK_SH) it, then
 *                             hold it for 30 s: what a read-only view of
 *                             /run/nsguard could do to nsguard's locks
 *   nsg-userns standin        a stand-in for a container's init, for hooks
 *                             run by hand: pid 1 of a pid namespace of its
 *                             own, with its own cgroup namespace (rooted at
 *                             the caller's cgroup) and mount namespace; the
 *                             caller leaves the cgroup to it and prints its
 *                             pid once the namespaces exist.  It exits on
 *                             SIGTERM (it has a handler, so a signal from
 *                             outside its pid namespace reaches it) or after
 *                             600 s.
 *   nsg-userns hold PATH      unshare(CLONE_NEWUSER) + maps, write its pid
 *                             to PATH, then sleep forever (a user namespace others can
 *                             setns into via /proc/PID/ns/user)
 *   nsg-userns bpf OP ARG...  raw bpf() as a container with a view of
 *                             bpffs would make it (nsguard's bpf() guard):
 *       get PATH              BPF_OBJ_GET of the pin
 *       detach PATH           BPF_OBJ_GET of a link pin, then BPF_LINK_DETACH
 *       held PATH DIR         BPF_OBJ_GET of a link pin here, then move into
 *                             the cgroup DIR, then BPF_LINK_DETACH the fd
 *       link-id ID | map-id ID | prog-id ID
 *                             BPF_{LINK,MAP,PROG}_GET_FD_BY_ID
 *                             "bpf: ok" or "bpf: fail at=get|detach|id errno=NAME"
 *
 * Result lines: "<cmd>: ok ..." or "<cmd>: fail ... errno=NAME" where NAME
 * is the symbolic errno of the user namespace creation (EPERM, ENOSPC, ...).
 *
 * Exit status:
 *   0  the user namespace(s) were created
 *   1  the user namespace creation failed; the line carries errno=NAME
 *      (for nest: level=K is the level that failed, 1-based)
 *   2  usage error, or a set-up step that is not the creation itself failed
 *      (fork, map write, setns, cgroup move ...): the test is inconclusive
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/nsfs.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_clone3
#define SYS_clone3 435
#endif

static const char *errname(int e)
{
	switch (e) {
	case EPERM: return "EPERM";
	case ENOSPC: return "ENOSPC";
	case EACCES: return "EACCES";
	case EINVAL: return "EINVAL";
	case EUSERS: return "EUSERS";
	case ENOMEM: return "ENOMEM";
	case ENOSYS: return "ENOSYS";
	case EBUSY: return "EBUSY";
	case ENOENT: return "ENOENT";
	case EEXIST: return "EEXIST";
	case EAGAIN: return "EAGAIN";
	case EBADF: return "EBADF";
	default: {
		static char buf[32];
		snprintf(buf, sizeof(buf), "E%d", e);
		return buf;
	}
	}
}

/* Result of a creation attempt: prints the line, returns the exit status. */
static int result(const char *cmd, int rc, int err, const char *extra)
{
	if (rc == 0) {
		printf("%s: ok%s%s\n", cmd, extra ? " " : "", extra ? extra : "");
		return 0;
	}
	printf("%s: fail%s%s errno=%s\n", cmd, extra ? " " : "", extra ? extra : "", errname(err));
	return 1;
}

static int setup_fail(const char *cmd, const char *what, int err)
{
	printf("%s: setup-fail %s errno=%s\n", cmd, what, errname(err));
	return 2;
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n, len = (ssize_t)strlen(text);

	if (fd < 0)
		return -1;
	n = write(fd, text, len);
	if (n != len) {
		int e = n < 0 ? errno : EIO;
		close(fd);
		errno = e;
		return -1;
	}
	return close(fd);
}

/*
 * Map one id of the namespace just entered to the ids we had outside it, so
 * that the next level may be created (the kernel wants the creator's ids
 * mapped).  Root inside (0) first; mapping root to the creator needs
 * CAP_SETFCAP at creation time (Linux 5.12+), so without it use 1000.
 */
static int write_map_pair(unsigned inner, uid_t outer_uid, gid_t outer_gid)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "%u %u 1\n", inner, (unsigned)outer_uid);
	if (write_file("/proc/self/uid_map", buf) < 0)
		return -1;
	snprintf(buf, sizeof(buf), "%u %u 1\n", inner, (unsigned)outer_gid);
	return write_file("/proc/self/gid_map", buf);
}

static int write_maps(uid_t outer_uid, gid_t outer_gid)
{
	if (write_file("/proc/self/setgroups", "deny") < 0)
		return -1;
	if (write_map_pair(0, outer_uid, outer_gid) == 0)
		return 0;
	return write_map_pair(1000, outer_uid, outer_gid);
}

static int do_unshare(const char *cmd)
{
	int rc = unshare(CLONE_NEWUSER);
	return result(cmd, rc, errno, NULL);
}

/* The child of a namespace-creating clone exits at once, by raw syscall: it
 * shares the parent's (copied) stack and must not touch libc state. */
static int wait_child(const char *cmd, pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) < 0)
		return setup_fail(cmd, "waitpid", errno);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return setup_fail(cmd, "child-status", EINVAL);
	return result(cmd, 0, 0, NULL);
}

static int do_clone(const char *cmd)
{
	long pid = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, NULL);

	if (pid == 0)
		syscall(SYS_exit, 0);
	if (pid < 0)
		return result(cmd, -1, errno, NULL);
	return wait_child(cmd, (pid_t)pid);
}

static int do_clone3(const char *cmd)
{
	struct clone_args args;
	long pid;

	memset(&args, 0, sizeof(args));
	args.flags = CLONE_NEWUSER;
	args.exit_signal = SIGCHLD;
	pid = syscall(SYS_clone3, &args, sizeof(args));
	if (pid == 0)
		syscall(SYS_exit, 0);
	if (pid < 0)
		return result(cmd, -1, errno, NULL);
	return wait_child(cmd, (pid_t)pid);
}

static int do_nest(const char *cmd, int n)
{
	char extra[64];
	int i;

	for (i = 1; i <= n; i++) {
		uid_t uid = geteuid();
		gid_t gid = getegid();

		if (unshare(CLONE_NEWUSER) < 0) {
			int e = errno;
			snprintf(extra, sizeof(extra), "level=%d", i);
			return result(cmd, -1, e, extra);
		}
		if (write_maps(uid, gid) < 0) {
			snprintf(extra, sizeof(extra), "maps-level-%d", i);
			return setup_fail(cmd, extra, errno);
		}
	}
	snprintf(extra, sizeof(extra), "levels=%d", n);
	return result(cmd, 0, 0, extra);
}

static int count_levels(void)
{
	int fd = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC), n = 0;

	while (fd >= 0) {
		int p = ioctl(fd, NS_GET_PARENT);
		close(fd);
		fd = p;
		if (p >= 0)
			n++;
	}
	return n;
}

static int do_level(void)
{
	printf("level: ok level=%d\n", count_levels());
	return 0;
}

static int do_setns(const char *cmd, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return setup_fail(cmd, "open", errno);
	if (setns(fd, CLONE_NEWUSER) < 0)
		return setup_fail(cmd, "setns", errno);
	close(fd);
	return do_unshare(cmd);
}

static int do_chain(const char *cmd, int n)
{
	int st;
	pid_t pid;

	if (n <= 0) {
		char extra[32];
		int rc = unshare(CLONE_NEWUSER), e = errno;
		snprintf(extra, sizeof(extra), "pid=%d", (int)getpid());
		return result(cmd, rc, e, extra);
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return setup_fail(cmd, "fork", errno);
	if (pid == 0) {
		fflush(stdout);
		_exit(do_chain(cmd, n - 1) & 0xff);
	}
	if (waitpid(pid, &st, 0) < 0)
		return setup_fail(cmd, "waitpid", errno);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 2;
}

static int do_reexec(const char *cmd)
{
	char *args[] = { "nsg-userns", "unshare", NULL };

	(void)cmd;
	fflush(stdout);
	execv("/proc/self/exe", args);
	return setup_fail("reexec", "execv", errno);
}

/* Own cgroup path as /proc/self/cgroup shows it (cgroup v2 line "0::/x"). */
static int own_cgroup(char *buf, size_t len)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	char line[4096];
	int found = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::", 3) == 0) {
			size_t n = strcspn(line + 3, "\n");
			if (n >= len)
				n = len - 1;
			memcpy(buf, line + 3, n);
			buf[n] = 0;
			found = 0;
		}
	}
	fclose(f);
	return found;
}

/* mkdir cgroup directory dir if missing and move this process into it. */
static int move_self(const char *cmd, const char *dir)
{
	char procs[4200], pidbuf[32];

	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return setup_fail(cmd, "mkdir", errno);
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)getpid());
	if (write_file(procs, pidbuf) < 0)
		return setup_fail(cmd, "move", errno);
	return 0;
}

static int do_cgroup_escape(const char *cmd)
{
	char cg[2048], dir[4096], extra[2200];
	int rc, e;

	if (own_cgroup(cg, sizeof(cg)) < 0)
		return setup_fail(cmd, "read-cgroup", errno);
	snprintf(dir, sizeof(dir), "/sys/fs/cgroup%s%snsg-escape-%d", cg,
		 cg[strlen(cg) - 1] == '/' ? "" : "/", (int)getpid());
	rc = move_self(cmd, dir);
	if (rc)
		return rc;
	if (own_cgroup(cg, sizeof(cg)) < 0 || !strstr(cg, "nsg-escape-"))
		return setup_fail(cmd, "not-moved", EINVAL);
	rc = unshare(CLONE_NEWUSER);
	e = errno;
	snprintf(extra, sizeof(extra), "cgroup=%s", cg);
	return result(cmd, rc, e, extra);
}

static int do_move(const char *cmd, const char *dir, char **rest)
{
	int rc = move_self(cmd, dir);

	if (rc)
		return rc;
	fflush(stdout);
	rest[-1] = "nsg-userns";
	execv("/proc/self/exe", rest - 1);
	return setup_fail(cmd, "execv", errno);
}

static int do_hold(const char *cmd, const char *path)
{
	char tmp[4200], pidbuf[32];
	uid_t uid = geteuid();
	gid_t gid = getegid();
	int fd;

	if (unshare(CLONE_NEWUSER) < 0)
		return result(cmd, -1, errno, NULL);
	if (write_maps(uid, gid) < 0)
		return setup_fail(cmd, "maps", errno);
	/* The pid, written to a temporary name and renamed: readers never see
	 * a partial file. */
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	snprintf(pidbuf, sizeof(pidbuf), "%d\n", (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, pidbuf, strlen(pidbuf)) < 0 || close(fd) < 0 || rename(tmp, path) < 0)
		return setup_fail(cmd, "ready-file", errno);
	printf("%s: ok pid=%d\n", cmd, (int)getpid());
	fflush(stdout);
	for (;;)
		pause();
}

static int do_flood(const char *cmd, long n)
{
	long failed = 0;
	int e = 0;

	for (long i = 0; i < n; i++) {
		if (unshare(CLONE_NEWUSER) < 0) {
			failed++;
			e = errno;
		} else {
			/* The first one allowed ends the flood: a new level was made. */
			printf("%s: ok after=%ld\n", cmd, i);
			return 0;
		}
	}
	printf("%s: fail count=%ld errno=%s\n", cmd, failed, errname(e));
	return 1;
}

/* One unshare(CLONE_NEWUSER) in a child that then exits (its namespace is
 * freed).  Returns 0, the errno, or -1 when the child could not run. */
static int child_unshare(void)
{
	int st = 0;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0)
		_exit(unshare(CLONE_NEWUSER) < 0 ? errno : 0);
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* seq N: N user namespaces one after another, each freed before the next. */
static int do_seq(const char *cmd, int n)
{
	int created = 0, e = 0, r;

	for (int i = 0; i < n; i++) {
		r = child_unshare();
		if (r < 0)
			return setup_fail(cmd, "fork", errno);
		if (r == 0)
			created++;
		else if (!e)
			e = r;
	}
	if (created == n) {
		printf("%s: ok created=%d\n", cmd, created);
		return 0;
	}
	printf("%s: fail created=%d errno=%s\n", cmd, created, errname(e));
	return 1;
}

/*
 * race N: N children spin on a shared flag until all are ready, then each
 * calls unshare(CLONE_NEWUSER) at once (on as many CPUs as there are); how
 * many got one.
 */
static int do_race(const char *cmd, int n)
{
	int *sh = mmap(NULL, 2 * sizeof(int), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		       -1, 0);
	int created = 0, e = 0, st;

	if (sh == MAP_FAILED)
		return setup_fail(cmd, "mmap", errno);
	sh[0] = sh[1] = 0; /* ready, go */
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return setup_fail(cmd, "fork", errno);
		if (pid == 0) {
			__atomic_add_fetch(&sh[0], 1, __ATOMIC_SEQ_CST);
			while (!__atomic_load_n(&sh[1], __ATOMIC_ACQUIRE))
				;
			_exit(unshare(CLONE_NEWUSER) < 0 ? errno : 0);
		}
	}
	while (__atomic_load_n(&sh[0], __ATOMIC_ACQUIRE) < n)
		sched_yield();
	__atomic_store_n(&sh[1], 1, __ATOMIC_RELEASE);
	while (wait(&st) > 0) {
		if (!WIFEXITED(st))
			return setup_fail(cmd, "child", EIO);
		if (WEXITSTATUS(st) == 0)
			created++;
		else
			e = WEXITSTATUS(st);
	}
	printf("%s: ok created=%d failed=%d errno=%s\n", cmd, created, n - created,
	       e ? errname(e) : "none");
	return 0;
}

static void standin_exit(int sig)
{
	(void)sig;
	_exit(0);
}

static int do_standin(const char *cmd)
{
	int ready[2], fd;
	char c = 0;
	pid_t pid;

	if (pipe(ready) < 0 || unshare(CLONE_NEWPID) < 0)
		return setup_fail(cmd, "unshare pid", errno);
	pid = fork();
	if (pid < 0)
		return setup_fail(cmd, "fork", errno);
	if (pid == 0) {
		signal(SIGTERM, standin_exit);
		signal(SIGALRM, standin_exit);
		alarm(600);
		close(ready[0]);
		setsid();
		/*
		 * A mount of its own, as a runtime's bind of the rootfs: nsguard
		 * refuses a table with nothing added (it could judge nothing), and
		 * judges what is at or below it: /mnt, no mount point on the host
		 * (a mount of its own over one would leave that one judged too).
		 */
		if (unshare(CLONE_NEWCGROUP | CLONE_NEWNS) < 0 ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
		    mount("standin", "/mnt", "tmpfs", 0, "size=64k") < 0)
			_exit(2);
		fd = open("/dev/null", O_RDWR);
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		if (write(ready[1], "r", 1) != 1)
			_exit(2);
		close(ready[1]);
		for (;;)
			pause();
	}
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1)
		return setup_fail(cmd, "stand-in init", ECHILD);
	/* The cgroup is the stand-in's alone, as a container's init's. */
	if (write_file("/sys/fs/cgroup/cgroup.procs", "0") < 0)
		return setup_fail(cmd, "leave the cgroup", errno);
	printf("%d\n", (int)pid);
	return 0;
}

static int sys_bpf(int cmd, union bpf_attr *attr)
{
	return (int)syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

static int bpf_fail(const char *cmd, const char *at, int err)
{
	printf("%s: fail at=%s errno=%s\n", cmd, at, errname(err));
	return 1;
}

static int do_bpf(const char *cmd, int argc, char **argv)
{
	const char *op = argv[0];
	union bpf_attr attr;
	int fd, id_cmd = -1;
	char *end;

	memset(&attr, 0, sizeof(attr));
	if (argc >= 2 && (!strcmp(op, "get") || !strcmp(op, "detach") || !strcmp(op, "held"))) {
		attr.pathname = (uint64_t)(uintptr_t)argv[1];
		fd = sys_bpf(BPF_OBJ_GET, &attr);
		if (fd < 0)
			return bpf_fail(cmd, "get", errno);
		if (!strcmp(op, "get") && argc == 2) {
			printf("%s: ok\n", cmd);
			return 0;
		}
		if (!strcmp(op, "held")) {
			if (argc != 3)
				return setup_fail(cmd, "usage", EINVAL);
			int rc = move_self(cmd, argv[2]);

			if (rc)
				return rc;
		} else if (argc != 2) {
			return setup_fail(cmd, "usage", EINVAL);
		}
		memset(&attr, 0, sizeof(attr));
		attr.link_detach.link_fd = fd;
		if (sys_bpf(BPF_LINK_DETACH, &attr) < 0)
			return bpf_fail(cmd, "detach", errno);
		printf("%s: ok\n", cmd);
		return 0;
	}
	if (!strcmp(op, "link-id"))
		id_cmd = BPF_LINK_GET_FD_BY_ID;
	else if (!strcmp(op, "map-id"))
		id_cmd = BPF_MAP_GET_FD_BY_ID;
	else if (!strcmp(op, "prog-id"))
		id_cmd = BPF_PROG_GET_FD_BY_ID;
	if (id_cmd < 0 || argc != 2)
		return setup_fail(cmd, "usage", EINVAL);
	errno = 0;
	unsigned long id = strtoul(argv[1], &end, 10);

	if (errno || !*argv[1] || *end || id == 0 || id > UINT32_MAX)
		return setup_fail(cmd, "usage", EINVAL);
	if (id_cmd == BPF_LINK_GET_FD_BY_ID)
		attr.link_id = (uint32_t)id;
	else if (id_cmd == BPF_MAP_GET_FD_BY_ID)
		attr.map_id = (uint32_t)id;
	else
		attr.prog_id = (uint32_t)id;
	if (sys_bpf(id_cmd, &attr) < 0)
		return bpf_fail(cmd, "id", errno);
	printf("%s: ok\n", cmd);
	return 0;
}

/* "pin: ok", "pin: ok detached", or "pin: fail [detach] errno=E". */
static int do_pin(const char *cmd, const char *path, int detach)
{
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.pathname = (uintptr_t)path;
	fd = sys_bpf(BPF_OBJ_GET, &a);
	if (fd < 0)
		return result(cmd, -1, errno, NULL);
	if (!detach)
		return result(cmd, 0, 0, NULL);
	memset(&a, 0, sizeof(a));
	a.link_detach.link_fd = (__u32)fd;
	if (sys_bpf(BPF_LINK_DETACH, &a) < 0)
		return result(cmd, -1, errno, "detach");
	return result(cmd, 0, 0, "detached");
}

/* "lock: ok" (then it holds the lock 30 s) or "lock: fail errno=E". */
static int do_lock(const char *cmd, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || flock(fd, LOCK_SH | LOCK_NB) < 0)
		return result(cmd, -1, errno, NULL);
	result(cmd, 0, 0, NULL);
	sleep(30);
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: nsg-userns unshare|clone|clone3|level|reexec|cgroup-escape\n"
			"       nsg-userns nest N | chain N | setns PATH | hold PATH | flood N\n"
			"       nsg-userns seq N | race N | standin | pin PATH [detach] | lock PATH\n"
			"       nsg-userns move DIR CMD...\n"
			"       nsg-userns bpf get|detach PATH | bpf held PATH DIR\n"
			"       nsg-userns bpf link-id|map-id|prog-id ID\n");
	return 2;
}

static int number(const char *s, int *out)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (!*s || *end || v < 0 || v > 64)
		return -1;
	*out = (int)v;
	return 0;
}

int main(int argc, char **argv)
{
	const char *cmd;
	int n;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		return usage();
	cmd = argv[1];
	if (!strcmp(cmd, "unshare") && argc == 2)
		return do_unshare(cmd);
	if (!strcmp(cmd, "clone") && argc == 2)
		return do_clone(cmd);
	if (!strcmp(cmd, "clone3") && argc == 2)
		return do_clone3(cmd);
	if (!strcmp(cmd, "level") && argc == 2)
		return do_level();
	if (!strcmp(cmd, "reexec") && argc == 2)
		return do_reexec(cmd);
	if (!strcmp(cmd, "cgroup-escape") && argc == 2)
		return do_cgroup_escape(cmd);
	if (!strcmp(cmd, "nest") && argc == 3 && number(argv[2], &n) == 0 && n > 0)
		return do_nest(cmd, n);
	if (!strcmp(cmd, "chain") && argc == 3 && number(argv[2], &n) == 0)
		return do_chain(cmd, n);
	if (!strcmp(cmd, "setns") && argc == 3)
		return do_setns(cmd, argv[2]);
	if (!strcmp(cmd, "move") && argc >= 4)
		return do_move(cmd, argv[2], argv + 3);
	if (!strcmp(cmd, "flood") && argc == 3 && atol(argv[2]) > 0)
		return do_flood(cmd, atol(argv[2]));
	if (!strcmp(cmd, "seq") && argc == 3 && number(argv[2], &n) == 0)
		return do_seq(cmd, n);
	if (!strcmp(cmd, "race") && argc == 3 && number(argv[2], &n) == 0)
		return do_race(cmd, n);
	if (!strcmp(cmd, "standin") && argc == 2)
		return do_standin(cmd);
	if (!strcmp(cmd, "pin") && (argc == 3 || (argc == 4 && !strcmp(argv[3], "detach"))))
		return do_pin(cmd, argv[2], argc == 4);
	if (!strcmp(cmd, "lock") && argc == 3)
		return do_lock(cmd, argv[2]);
	if (!strcmp(cmd, "hold") && argc == 3)
		return do_hold(cmd, argv[2]);
	if (!strcmp(cmd, "bpf") && argc >= 4)
		return do_bpf(cmd, argc - 2, argv + 2);
	return usage();
}
