// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sysloop: cost of unrelated system calls under each restriction.
 *
 *   sysloop [-i ITERS] [-I OPENAT_ITERS] [-r REPS] [-w WARMUP] [-o getppid,openat,bpf]
 *           NAME=CGROUPDIR[:seccomp]...
 *
 * For each repetition, each op and each configuration (order rotated every
 * repetition), the parent moves itself into CGROUPDIR and
 * forks a child; with ":seccomp" the child first installs a libseccomp filter
 * doing what Docker's default profile does about user namespaces:
 *   unshare(flags) and clone(flags) with CLONE_NEWUSER in flags -> EPERM
 *   (SCMP_CMP_MASKED_EQ), clone3 -> ENOSYS (so libc falls back to clone),
 *   everything else allowed.
 * The child then runs the op in a tight loop, ITERS times for getppid (one
 * syscall), OPENAT_ITERS times for openat (openat(/dev/null) + close), ITERS
 * times for bpf (bpf(BPF_MAP_LOOKUP_ELEM) of fd -1: EBADF, after the bpf LSM
 * hook, which nsguard's bpf() guard is attached to), and reports ns per
 * iteration through a pipe.  Output, one line per rep:
 *
 *   sysloop NAME OP ns_per_iter
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <sched.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"

struct cfg {
	const char *name;
	int procs_fd;
	int seccomp;
};

static int install_seccomp(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int rc;

	if (!ctx)
		return -ENOMEM;
	rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 1,
			      SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER));
	if (!rc)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
				      SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER));
	if (!rc)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	/* Like runc/crun: no_new_privs is set for the container process. */
	if (!rc)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 1);
	if (!rc)
		rc = seccomp_load(ctx);
	seccomp_release(ctx);
	return rc;
}

static volatile long sink;

static double run_op(const char *op, long iters)
{
	uint64_t t0, t1;

	if (strcmp(op, "getppid") == 0) {
		t0 = bench_now();
		for (long i = 0; i < iters; i++)
			sink += syscall(SYS_getppid);
		t1 = bench_now();
	} else if (strcmp(op, "bpf") == 0) {
		union bpf_attr attr;

		memset(&attr, 0, sizeof(attr));
		attr.map_fd = (__u32)-1;
		/* The hook runs before the fd lookup: EBADF without a guard, EPERM never
		 * (nsguard's bpf() guard allows lookups). */
		if (syscall(SYS_bpf, BPF_MAP_LOOKUP_ELEM, &attr, sizeof(attr)) >= 0 || errno != EBADF)
			return -1;
		t0 = bench_now();
		for (long i = 0; i < iters; i++)
			sink += syscall(SYS_bpf, BPF_MAP_LOOKUP_ELEM, &attr, sizeof(attr));
		t1 = bench_now();
	} else {
		t0 = bench_now();
		for (long i = 0; i < iters; i++) {
			int fd = openat(AT_FDCWD, "/dev/null", O_RDONLY | O_CLOEXEC);

			if (fd < 0)
				return -1;
			close(fd);
		}
		t1 = bench_now();
	}
	return (double)bench_ns(t1 - t0) / (double)iters;
}

static double sample(const struct cfg *c, const char *op, long iters)
{
	double r = -1;
	int p[2], status;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (c->seccomp) {
			int rc = install_seccomp();

			if (rc) {
				fprintf(stderr, "sysloop: seccomp: %s\n", strerror(-rc));
				_exit(1);
			}
			/* The filter must refuse what Docker's refuses, or the
			 * comparison is not the one we claim. */
			if (unshare(CLONE_NEWUSER) == 0 || errno != EPERM) {
				fprintf(stderr, "sysloop: seccomp filter did not refuse unshare\n");
				_exit(1);
			}
		}
		r = run_op(op, iters);
		if (write(p[1], &r, sizeof(r)) != sizeof(r))
			_exit(3);
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], &r, sizeof(r)) != sizeof(r))
		r = -1;
	close(p[0]);
	waitpid(pid, &status, 0);
	return r;
}

int main(int argc, char **argv)
{
	const char *ops_arg = "getppid,openat";
	char *ops[8], *save = NULL, *tok, *copy;
	long iters = 200000, iters_openat = 10000, reps = 30, warm = 2;
	int nops = 0, ncfg = 0, opt;
	struct cfg *cfgs;

	bench_clock_init();
	while ((opt = getopt(argc, argv, "i:I:r:w:o:")) != -1) {
		switch (opt) {
		case 'i': iters = atol(optarg); break;
		case 'I': iters_openat = atol(optarg); break;
		case 'r': reps = atol(optarg); break;
		case 'w': warm = atol(optarg); break;
		case 'o': ops_arg = optarg; break;
		default:
			fprintf(stderr, "usage: sysloop [-i ITERS] [-I OPENAT_ITERS] [-r REPS] [-w WARMUP] [-o OPS] "
					"NAME=CGROUPDIR[:seccomp]...\n");
			return 2;
		}
	}
	copy = strdup(ops_arg);
	for (tok = strtok_r(copy, ",", &save); tok && nops < 8; tok = strtok_r(NULL, ",", &save)) {
		if (strcmp(tok, "getppid") && strcmp(tok, "openat") && strcmp(tok, "bpf")) {
			fprintf(stderr, "sysloop: unknown op '%s'\n", tok);
			return 2;
		}
		ops[nops++] = tok;
	}
	cfgs = calloc(argc, sizeof(*cfgs));
	for (int i = optind; i < argc; i++) {
		char *eq = strchr(argv[i], '='), *colon, path[4096];
		struct cfg *c = &cfgs[ncfg++];

		c->name = argv[i];
		c->procs_fd = -1;
		if (!eq) {
			fprintf(stderr, "sysloop: '%s': want NAME=CGROUPDIR[:seccomp]\n", argv[i]);
			return 2;
		}
		*eq++ = '\0';
		colon = strrchr(eq, ':');
		if (colon && strcmp(colon, ":seccomp") == 0) {
			c->seccomp = 1;
			*colon = '\0';
		}
		if (!*eq) {
			fprintf(stderr, "sysloop: %s: no cgroup directory\n", c->name);
			return 2;
		}
		snprintf(path, sizeof(path), "%s/cgroup.procs", eq);
		c->procs_fd = open(path, O_WRONLY | O_CLOEXEC);
		if (c->procs_fd < 0) {
			fprintf(stderr, "sysloop: %s: %s\n", path, strerror(errno));
			return 1;
		}
	}
	if (!ncfg) {
		fprintf(stderr, "sysloop: no configuration given\n");
		return 2;
	}
	for (long r = -warm; r < reps; r++) {
		for (int o = 0; o < nops; o++) {
			for (int k = 0; k < ncfg; k++) {
				const struct cfg *c = &cfgs[(k + (r < 0 ? -r : r)) % ncfg];
				char buf[32];
				int len = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
				double v;

				if (c->procs_fd >= 0 && pwrite(c->procs_fd, buf, len, 0) != len) {
					fprintf(stderr, "sysloop: moving into %s: %s\n", c->name,
						strerror(errno));
					return 1;
				}
				v = sample(c, ops[o], strcmp(ops[o], "openat") ? iters : iters_openat);
				if (v < 0) {
					fprintf(stderr, "sysloop: %s/%s failed\n", c->name, ops[o]);
					return 1;
				}
				if (r >= 0)
					printf("sysloop %s %s %.2f\n", c->name, ops[o], v);
			}
		}
	}
	return fflush(stdout) == 0 ? 0 : 1;
}
