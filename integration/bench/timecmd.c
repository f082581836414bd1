// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * timecmd: run a command and append its wall-clock time to a file.
 *
 *   timecmd -o FILE [-l LABEL] [-P PRELOAD] [-s | -f] [--] CMD [ARGS...]
 *   timecmd --calibrate [SECONDS]
 *
 * stdin, stdout and stderr pass through (so it can wrap an OCI hook, which
 * gets the state on stdin).  Appends "LABEL elapsed_ns exit_status" to FILE
 * (one write, O_APPEND) and exits with the command's status (128+signal if
 * it was killed).  Times come from clock.h.  -P sets LD_PRELOAD for the
 * command only; the command also gets BENCH_EXEC_TSC, the TSC right before
 * its execve (for phasetrace.so).  -s appends that TSC (raw counts) to the
 * line as a fourth field: "LABEL elapsed_ns exit_status exec_tsc", the start
 * of a container's start latency (see ctstamp.c).  -f appends instead the
 * page faults of the command from its execve on (minor + major: the child's
 * total from wait4 less what the forked child took before its execve).
 *
 * --calibrate: print the TSC frequency in Hz, measured against
 * CLOCK_MONOTONIC between two clock-tick edges SECONDS (default 1) apart:
 * both TSC reads happen right after the monotonic clock is seen to move, so
 * a coarse (jiffies) clock still gives a precise ratio.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"

static int calibrate(double seconds)
{
	uint64_t m, m0, m1, c0, c1, target;

	m = bench_mono_ns();
	while ((m0 = bench_mono_ns()) == m)
		;
	c0 = bench_tsc();
	target = m0 + (uint64_t)(seconds * 1e9);
	while ((m1 = bench_mono_ns()) < target)
		;
	c1 = bench_tsc();
	printf("%llu\n", (unsigned long long)((unsigned __int128)(c1 - c0) * 1000000000u / (m1 - m0)));
	return fflush(stdout) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	const char *out = NULL, *label = "cmd", *preload = NULL;
	char line[512];
	int opt, status, rc, fd, n, stamp = 0, faults = 0;
	struct rusage ru;
	uint64_t t0, t1;
	/* Written by the child before its execve. */
	volatile struct {
		uint64_t tsc, faults;
	} *shared;
	pid_t pid;

	if (argc >= 2 && strcmp(argv[1], "--calibrate") == 0)
		return calibrate(argc >= 3 ? atof(argv[2]) : 1.0);
	bench_clock_init();
	while ((opt = getopt(argc, argv, "+o:l:P:sf")) != -1) {
		switch (opt) {
		case 'o': out = optarg; break;
		case 'l': label = optarg; break;
		case 'P': preload = optarg; break;
		case 's': stamp = 1; break;
		case 'f': faults = 1; break;
		default: goto usage;
		}
	}
	if (!out || optind >= argc || (stamp && faults))
		goto usage;
	/* The child's TSC before execve, back to the parent (-s). */
	shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		      -1, 0);
	if (shared == MAP_FAILED) {
		perror("timecmd: mmap");
		return 125;
	}
	shared->tsc = shared->faults = 0;
	t0 = bench_now();
	pid = fork();
	if (pid < 0) {
		perror("timecmd: fork");
		return 125;
	}
	if (pid == 0) {
		char tsc[32];

		if (preload)
			setenv("LD_PRELOAD", preload, 1);
		shared->tsc = bench_tsc();
		snprintf(tsc, sizeof(tsc), "%llu", (unsigned long long)shared->tsc);
		setenv("BENCH_EXEC_TSC", tsc, 1);
		if (faults && getrusage(RUSAGE_SELF, &ru) == 0)
			shared->faults = ru.ru_minflt + ru.ru_majflt;
		execvp(argv[optind], argv + optind);
		fprintf(stderr, "timecmd: %s: %s\n", argv[optind], strerror(errno));
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) < 0) {
		perror("timecmd: wait4");
		return 125;
	}
	t1 = bench_now();
	rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (stamp)
		n = snprintf(line, sizeof(line), "%s %llu %d %llu\n", label,
			     (unsigned long long)bench_ns(t1 - t0), rc, (unsigned long long)shared->tsc);
	else if (faults)
		n = snprintf(line, sizeof(line), "%s %llu %d %llu\n", label,
			     (unsigned long long)bench_ns(t1 - t0), rc,
			     (unsigned long long)(ru.ru_minflt + ru.ru_majflt - shared->faults));
	else
		n = snprintf(line, sizeof(line), "%s %llu %d\n", label,
			     (unsigned long long)bench_ns(t1 - t0), rc);
	fd = open(out, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, line, n) != n) {
		fprintf(stderr, "timecmd: %s: %s\n", out, strerror(errno));
		return 125;
	}
	close(fd);
	return rc;
usage:
	fprintf(stderr, "usage: timecmd -o FILE [-l LABEL] [-P PRELOAD] [-s | -f] [--] CMD [ARGS...]\n"
			"       timecmd --calibrate [SECONDS]\n");
	return 125;
}
