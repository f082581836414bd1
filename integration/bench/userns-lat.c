// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * userns-lat: latency of creating a user namespace, one fresh child per
 * sample, interleaved over several cgroups (one cgroup per configuration).
 *
 *   userns-lat [-n SAMPLES] [-w WARMUP] [-l LABEL] NAME=CGROUPDIR...
 *
 * For each sample i and each NAME=DIR in turn, in an order rotated every
 * sample (so configurations alternate sample by sample and share the same
 * noise), the parent moves itself into
 * DIR (writes its pid to DIR/cgroup.procs), then forks; the child reads CLOCK_MONOTONIC, calls
 * unshare(CLONE_NEWUSER), reads the clock again and sends the delta and the
 * errno back through a pipe, then _exits.  The parent times the whole
 * fork + unshare + exit + wait.  Output, one line per sample:
 *
 *   LABEL NAME unshare_ns total_ns errno
 *
 * Times come from clock.h (the calibrated TSC when BENCH_TSC_HZ is set).
 * Exit status 0; 1 on a set-up error (bad cgroup, fork failure).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"

struct cfg {
	const char *name;
	int procs_fd; /* DIR/cgroup.procs, or -1: stay where we are */
};

static int enter(const struct cfg *c)
{
	char buf[32];
	int n;

	if (c->procs_fd < 0)
		return 0;
	n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	if (pwrite(c->procs_fd, buf, n, 0) != n) {
		fprintf(stderr, "userns-lat: moving into the cgroup of %s: %s\n", c->name,
			strerror(errno));
		return -1;
	}
	return 0;
}

/* One sample: returns 0 and fills the figures, -1 on a set-up error. */
static int sample(uint64_t *unshare_ns, uint64_t *total_ns, int *err)
{
	struct {
		uint64_t ns;
		int err;
	} r = { 0, 0 };
	int p[2], status;
	uint64_t t0;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	t0 = bench_now();
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		uint64_t a = bench_now();
		int rc = unshare(CLONE_NEWUSER);
		uint64_t b = bench_now();

		r.ns = bench_ns(b - a);
		r.err = rc < 0 ? errno : 0;
		if (write(p[1], &r, sizeof(r)) != sizeof(r))
			_exit(3);
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], &r, sizeof(r)) != sizeof(r))
		r.err = -1;
	close(p[0]);
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	*total_ns = bench_ns(bench_now() - t0);
	*unshare_ns = r.ns;
	*err = r.err;
	return 0;
}

int main(int argc, char **argv)
{
	const char *label = "userns";
	long n = 200, warm = 10;
	struct cfg *cfgs;
	int ncfg = 0, opt;

	bench_clock_init();
	while ((opt = getopt(argc, argv, "n:w:l:")) != -1) {
		switch (opt) {
		case 'n': n = atol(optarg); break;
		case 'w': warm = atol(optarg); break;
		case 'l': label = optarg; break;
		default:
			fprintf(stderr, "usage: userns-lat [-n N] [-w WARMUP] [-l LABEL] NAME=CGROUPDIR...\n");
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "userns-lat: no NAME=CGROUPDIR given\n");
		return 2;
	}
	cfgs = calloc(argc - optind, sizeof(*cfgs));
	if (!cfgs)
		return 1;
	for (int i = optind; i < argc; i++) {
		char *eq = strchr(argv[i], '='), path[4096];

		/* Every configuration names its cgroup: "stay put" would mean
		 * "wherever the previous configuration left us". */
		if (!eq || !eq[1]) {
			fprintf(stderr, "userns-lat: '%s': want NAME=CGROUPDIR\n", argv[i]);
			return 2;
		}
		*eq = '\0';
		cfgs[ncfg].name = argv[i];
		snprintf(path, sizeof(path), "%s/cgroup.procs", eq + 1);
		cfgs[ncfg].procs_fd = open(path, O_WRONLY | O_CLOEXEC);
		if (cfgs[ncfg].procs_fd < 0) {
			fprintf(stderr, "userns-lat: %s: %s\n", path, strerror(errno));
			return 1;
		}
		ncfg++;
	}
	for (long i = -warm; i < n; i++) {
		/* Rotate the order so no configuration always runs first. */
		for (int k = 0; k < ncfg; k++) {
			int c = (int)((k + (i < 0 ? -i : i)) % ncfg);
			uint64_t u, t;
			int e;

			if (enter(&cfgs[c]) < 0 || sample(&u, &t, &e) < 0) {
				fprintf(stderr, "userns-lat: sample failed: %s\n", strerror(errno));
				return 1;
			}
			if (i >= 0)
				printf("%s %s %llu %llu %d\n", label, cfgs[c].name,
				       (unsigned long long)u, (unsigned long long)t, e);
		}
	}
	return fflush(stdout) == 0 ? 0 : 1;
}
