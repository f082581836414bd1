// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * seedtest: the seed series' userns_create checks, with our own BPF programs
 * (integration/guest/seed_deny.bpf.c, seed_sleepable.bpf.c).  It loads BPF-LSM
 * programs into the running kernel, so it refuses to run anywhere but the
 * QEMU test guest (integration/vm-run sets NSGUARD_IN_VM=1).
 *
 *   seedtest try-unshare            unshare(CLONE_NEWUSER) once; print the
 *                                   result; exit 0 or the errno
 *   seedtest errno ERRNO...         per errno (name or number): a program
 *                                   refusing with it makes unshare() and
 *                                   clone() fail with exactly it
 *   seedtest sleepable [N]          a global lsm.s program attaches through
 *                                   the skeleton and runs once per creation
 *                                   (N unshares and a clone)
 *   seedtest run -- CMD [ARG...]    run CMD with the seed's deny-unless-
 *                                   CAP_SYS_ADMIN program attached; exit
 *                                   with CMD's status
 *
 * The programs are global attachments; they only act on processes in a
 * scratch cgroup (/sys/fs/cgroup/seedtest-PID) the test's children join, so
 * the rest of the guest is unaffected.
 *
 * Assertions print kernel-selftest-like lines "CASE:PASS:WHAT" and
 * "CASE:FAIL:WHAT detail".  Exit status: 0 every assertion held, 1 one
 * failed, 2 bad usage; `run`: CMD's status, 125 if the program never ran,
 * 126 if it could not be set up or CMD not started.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "seed_deny.skel.h"
#include "seed_sleepable.skel.h"

/* Child exit statuses above this are the harness's own (126 join/exec
 * failure, 127 not found, 128+N signal), so errnos must stay below it. */
#define MAX_CHILD_ERRNO 125

static const char *tcase = "seedtest";
static int failures;
static bool verbose;
static bool libbpf_quiet;

static bool report(bool ok, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* report: one selftest-style line per assertion; failures are counted. */
static bool report(bool ok, const char *what, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		printf("%s:PASS:%s\n", tcase, what);
	} else {
		failures++;
		printf("%s:FAIL:%s ", tcase, what);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		putchar('\n');
	}
	fflush(stdout);
	return ok;
}

#define ASSERT_EQ(actual, expected, what)                                                 \
	({                                                                                \
		long long a_ = (long long)(actual), e_ = (long long)(expected);           \
		report(a_ == e_, what, "actual %lld != expected %lld", a_, e_);           \
	})
#define ASSERT_OK(err, what)                                                              \
	({                                                                                \
		int r_ = (err);                                                           \
		report(r_ == 0, what, "failed: %d (%s)", r_, r_ < 0 ? strerror(-r_) : "?");  \
	})
#define ASSERT_TRUE(cond, what, ...) report(!!(cond), what, __VA_ARGS__)

static const char *errname(int e)
{
	const char *n;

	if (e == 0)
		return "success";
	n = strerrorname_np(e);
	return n ? n : "E?";
}

/* assert_status: a child's status (0 or errno) is the expected one. */
static bool assert_status(int got, int want, const char *what)
{
	if (got < 0)
		return report(false, what, "child not run: %s", strerror(-got));
	return report(got == want, what, "got %s (%d), expected %s (%d)", errname(got), got,
		      errname(want), want);
}

static int parse_errno(const char *s)
{
	char *end;
	long v;
	int e;

	errno = 0;
	v = strtol(s, &end, 10);
	if (!errno && end != s && !*end)
		return v >= 1 && v <= MAX_CHILD_ERRNO ? (int)v : -ERANGE;
	for (e = 1; e <= MAX_CHILD_ERRNO; e++) {
		const char *n = strerrorname_np(e);

		if (n && !strcmp(n, s))
			return e;
	}
	return -EINVAL;
}

/* While libbpf_quiet, libbpf's output (the verifier log included) is only
 * searched for this, to tell the expected refusal from any other failure. */
#define MIGHT_SLEEP "helper call might sleep in a non-sleepable prog"
static bool saw_might_sleep;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	static char buf[65536];

	if (libbpf_quiet) {
		vsnprintf(buf, sizeof(buf), fmt, ap);
		if (strstr(buf, MIGHT_SLEEP))
			saw_might_sleep = true;
		return 0;
	}
	if (level == LIBBPF_DEBUG && !verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* ---- the scratch cgroup the programs act on ---- */

struct scope {
	char path[PATH_MAX];
	__u64 cgid;
};

/* The id bpf_get_current_cgroup_id() returns is the cgroup's file handle. */
static int cgroup_id(const char *path, __u64 *id)
{
	struct {
		struct file_handle fh;
		__u64 id;
	} h = { .fh.handle_bytes = sizeof(__u64) };
	int mount_id, err = 0;

	if (name_to_handle_at(AT_FDCWD, path, &h.fh, &mount_id, 0))
		return -errno;
	if (h.fh.handle_bytes != sizeof(__u64))
		return -EOVERFLOW;
	memcpy(id, h.fh.f_handle, sizeof(*id));
	return err;
}

static int scope_create(struct scope *s)
{
	int err = 0;

	snprintf(s->path, sizeof(s->path), "/sys/fs/cgroup/seedtest-%d", (int)getpid());
	if (mkdir(s->path, 0755) && errno != EEXIST)
		return -errno;
	err = cgroup_id(s->path, &s->cgid);
	if (err)
		rmdir(s->path);
	return err;
}

/* Called in the child before it does anything the programs should see. */
static int scope_enter(const struct scope *s)
{
	char procs[PATH_MAX + 16];
	int fd, err = 0;

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", s->path);
	fd = open(procs, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* "0" moves the writing process itself. */
	if (write(fd, "0", 1) != 1)
		err = -errno;
	close(fd);
	return err;
}

static void scope_destroy(struct scope *s)
{
	int i;

	if (!s->cgid)
		return;
	/* Reaped children may leave the cgroup a moment later. */
	for (i = 0; i < 50 && rmdir(s->path) && errno == EBUSY; i++)
		usleep(20000);
	s->cgid = 0;
}

/* ---- children ---- */

typedef int (*child_fn)(void *arg);

/*
 * spawn: fork a child that joins the scope, then exits with fn(arg) or execs
 * argv.  Returns its exit status, 128 + signal, or -errno if it could not be
 * run.
 */
static int spawn(const struct scope *s, child_fn fn, void *arg, char *const argv[])
{
	int status, err = 0;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		err = scope_enter(s);
		if (err) {
			fprintf(stderr, "seedtest: cannot join %s: %s\n", s->path, strerror(-err));
			_exit(126);
		}
		if (fn)
			_exit(fn(arg));
		execvp(argv[0], argv);
		fprintf(stderr, "seedtest: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

/* Each returns 0 or the errno the kernel gave, as the child's exit status. */
static int do_unshare(void *arg)
{
	return unshare(CLONE_NEWUSER) ? errno : 0;
}

static int do_clone(void *arg)
{
	int status;
	long pid;

	/* Raw clone without CLONE_VM behaves like fork(): the child gets a
	 * copy of this stack and can return from syscall() safely. */
	pid = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
	if (pid < 0)
		return errno;
	if (pid == 0)
		_exit(0);
	if (waitpid(pid, &status, 0) < 0)
		return errno;
	return 0;
}

/* ---- cases ---- */

static int attach_err(struct bpf_link *link)
{
	/* libbpf 1.x returns NULL and sets errno. */
	return link ? 0 : -errno;
}

/* Case 1: the chosen errno reaches the caller of unshare() and clone(). */
static int test_errno(int e)
{
	char name[64], what[128];
	struct seed_deny *skel = NULL;
	struct scope sc = {};
	int err = 0, rc;

	snprintf(name, sizeof(name), "errno-%s", errname(e));
	tcase = name;

	err = scope_create(&sc);
	if (!ASSERT_OK(err, "scope_create"))
		return err;
	rc = spawn(&sc, do_unshare, NULL, NULL);
	assert_status(rc, 0, "unshare(CLONE_NEWUSER) before attach");

	skel = seed_deny__open();
	err = skel ? 0 : -errno;
	if (!ASSERT_OK(err, "seed_deny__open"))
		goto out;
	skel->rodata->target_cgid = sc.cgid;
	skel->rodata->deny_ret = -e;
	/* Only the plain (non-sleepable) errno program in this case. */
	bpf_program__set_autoload(skel->progs.seed_deny_unless_admin, false);
	err = seed_deny__load(skel);
	if (!ASSERT_OK(err, "seed_deny__load"))
		goto out;
	skel->links.seed_deny_errno = bpf_program__attach_lsm(skel->progs.seed_deny_errno);
	err = attach_err(skel->links.seed_deny_errno);
	if (!ASSERT_OK(err, "bpf_program__attach_lsm(seed_deny_errno)"))
		goto out;

	rc = spawn(&sc, do_unshare, NULL, NULL);
	snprintf(what, sizeof(what), "unshare(CLONE_NEWUSER) fails with %s", errname(e));
	assert_status(rc, e, what);
	rc = spawn(&sc, do_clone, NULL, NULL);
	snprintf(what, sizeof(what), "clone(CLONE_NEWUSER) fails with %s", errname(e));
	assert_status(rc, e, what);
	ASSERT_EQ(skel->bss->calls, 2, "program ran once per creation");
	ASSERT_EQ(skel->bss->denied, 2, "program refused both");

	/* Detached, the same creator succeeds: the refusal was the program's. */
	bpf_link__destroy(skel->links.seed_deny_errno);
	skel->links.seed_deny_errno = NULL;
	rc = spawn(&sc, do_unshare, NULL, NULL);
	assert_status(rc, 0, "unshare(CLONE_NEWUSER) after detach");
out:
	seed_deny__destroy(skel);
	scope_destroy(&sc);
	return err;
}

static volatile __u64 magic = 0x5eed5eedcafef00dULL;

/* Case 2: a global lsm.s program on userns_create loads, attaches, runs. */
static int test_sleepable(int n)
{
	struct seed_sleepable *skel = NULL;
	struct scope sc = {};
	char what[128];
	__u64 calls;
	int err = 0, rc = 0, i;

	tcase = "sleepable";
	err = scope_create(&sc);
	if (!ASSERT_OK(err, "scope_create"))
		return err;

	/* Negative control first: as a plain lsm program the same body must be
	 * refused by the verifier (bpf_copy_from_user() might sleep), so the
	 * magic value read below proves the lsm.s program ran sleepable. */
	skel = seed_sleepable__open();
	err = skel ? 0 : -errno;
	if (!ASSERT_OK(err, "seed_sleepable__open"))
		goto out;
	/* Non-zero, or the verifier (which knows frozen rodata) would prune the
	 * copy as dead code and accept the program. */
	skel->rodata->target_cgid = sc.cgid;
	bpf_program__set_autoload(skel->progs.seed_count, false);
	bpf_program__set_autoload(skel->progs.seed_count_nonsleepable, true);
	libbpf_quiet = true;
	err = seed_sleepable__load(skel);
	libbpf_quiet = false;
	ASSERT_TRUE(err && saw_might_sleep,
		    "verifier refuses the copy in a non-sleepable lsm program",
		    "load returned %d, verifier log %s '" MIGHT_SLEEP "'", err,
		    saw_might_sleep ? "has" : "lacks");
	seed_sleepable__destroy(skel);

	skel = seed_sleepable__open();
	err = skel ? 0 : -errno;
	if (!ASSERT_OK(err, "seed_sleepable__open"))
		goto out;
	skel->rodata->target_cgid = sc.cgid;
	err = seed_sleepable__load(skel);
	if (!ASSERT_OK(err, "seed_sleepable__load (lsm.s)"))
		goto out;
	ASSERT_EQ(bpf_program__type(skel->progs.seed_count), BPF_PROG_TYPE_LSM, "program type LSM");
	skel->bss->magic_addr = (uintptr_t)&magic;
	err = seed_sleepable__attach(skel);
	if (!ASSERT_OK(err, "seed_sleepable__attach"))
		goto out;

	/* n creators, each from the initial namespace (a nested unshare
	 * would need a uid mapping first). */
	for (i = 0; i < n; i++)
		if ((rc = spawn(&sc, do_unshare, NULL, NULL)))
			break;
	snprintf(what, sizeof(what), "%d x unshare(CLONE_NEWUSER) allowed", n);
	assert_status(rc, 0, what);
	rc = spawn(&sc, do_clone, NULL, NULL);
	assert_status(rc, 0, "clone(CLONE_NEWUSER) allowed");
	snprintf(what, sizeof(what), "program ran %d times", n + 1);
	ASSERT_EQ(skel->bss->calls, n + 1, what);
	ASSERT_EQ(skel->bss->copy_err, 0, "bpf_copy_from_user succeeded");
	ASSERT_EQ(skel->bss->seen_magic, magic, "bpf_copy_from_user read the creator's memory");

	calls = skel->bss->calls;
	seed_sleepable__detach(skel);
	rc = spawn(&sc, do_unshare, NULL, NULL);
	assert_status(rc, 0, "unshare(CLONE_NEWUSER) after detach");
	ASSERT_EQ(skel->bss->calls, calls, "no calls after detach");
out:
	seed_sleepable__destroy(skel);
	scope_destroy(&sc);
	return err;
}

/* Case 3 helper: CMD runs under the deny-unless-CAP_SYS_ADMIN program. */
static int cmd_run(char *const argv[])
{
	struct seed_deny *skel = NULL;
	struct scope sc = {};
	/* Not 1: a test expecting EPERM (1) from CMD must not mistake a
	 * set-up failure for it. */
	int err = 0, rc = 126;

	tcase = "run";
	err = scope_create(&sc);
	if (!ASSERT_OK(err, "scope_create"))
		return rc;
	skel = seed_deny__open();
	err = skel ? 0 : -errno;
	if (!ASSERT_OK(err, "seed_deny__open"))
		goto out;
	skel->rodata->target_cgid = sc.cgid;
	bpf_program__set_autoload(skel->progs.seed_deny_errno, false);
	err = seed_deny__load(skel);
	if (!ASSERT_OK(err, "seed_deny__load (lsm.s deny-unless-CAP_SYS_ADMIN)"))
		goto out;
	skel->links.seed_deny_unless_admin =
		bpf_program__attach_lsm(skel->progs.seed_deny_unless_admin);
	err = attach_err(skel->links.seed_deny_unless_admin);
	if (!ASSERT_OK(err, "bpf_program__attach_lsm(seed_deny_unless_admin)"))
		goto out;

	rc = spawn(&sc, NULL, NULL, argv);
	printf("run: %s exited %d; program calls %llu, denied %llu\n", argv[0], rc,
	       (unsigned long long)skel->bss->calls, (unsigned long long)skel->bss->denied);
	/* A test that never reached the hook proves nothing. */
	if (!ASSERT_TRUE(skel->bss->calls > 0, "program ran",
			 "never: CMD must create a user namespace"))
		rc = 125;
	if (rc < 0)
		rc = 126;
out:
	seed_deny__destroy(skel);
	scope_destroy(&sc);
	return rc;
}

static int cmd_try_unshare(void)
{
	int e = do_unshare(NULL);

	printf("unshare(CLONE_NEWUSER): %s%s%s\n", e ? errname(e) : "ok", e ? " " : "",
	       e ? strerror(e) : "");
	return e;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: seedtest try-unshare\n"
		   "       seedtest errno ERRNO...\n"
		   "       seedtest sleepable [N]\n"
		   "       seedtest run -- CMD [ARG...]\n"
		   "  -v before the command shows libbpf's debug output.\n");
}

int main(int argc, char **argv)
{
	const char *cmd;
	int i, e;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && !strcmp(argv[1], "-v")) {
		verbose = true;
		argv++;
		argc--;
	}
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(cmd, "try-unshare"))
		return argc == 2 ? cmd_try_unshare() : (usage(stderr), 2);

	/* Everything below loads BPF into the running kernel. */
	if (!getenv("NSGUARD_IN_VM") || strcmp(getenv("NSGUARD_IN_VM"), "1")) {
		fprintf(stderr, "seedtest: %s loads BPF programs; it runs inside the test guest only "
				"(integration/vm-run)\n", cmd);
		return 2;
	}
	libbpf_set_print(libbpf_print);

	if (!strcmp(cmd, "errno")) {
		if (argc < 3) {
			usage(stderr);
			return 2;
		}
		for (i = 2; i < argc; i++) {
			e = parse_errno(argv[i]);
			if (e < 0) {
				fprintf(stderr, "seedtest: '%s' is not an errno name or number 1..%d\n",
					argv[i], MAX_CHILD_ERRNO);
				return 2;
			}
			test_errno(e);
		}
		return failures ? 1 : 0;
	}
	if (!strcmp(cmd, "sleepable")) {
		int n = argc > 2 ? atoi(argv[2]) : 3;

		if (argc > 3 || n < 1 || n > 30) {
			fprintf(stderr, "seedtest: sleepable N: 1..30 creations\n");
			return 2;
		}
		test_sleepable(n);
		return failures ? 1 : 0;
	}
	if (!strcmp(cmd, "run")) {
		i = 2;
		if (i < argc && !strcmp(argv[i], "--"))
			i++;
		if (i >= argc) {
			usage(stderr);
			return 2;
		}
		return cmd_run(argv + i);
	}
	fprintf(stderr, "seedtest: unknown command '%s'\n", cmd);
	usage(stderr);
	return 2;
}
