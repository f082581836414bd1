// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nsg-pidat PID[,PID...] CMD [ARG...]: run CMD as each pid PID, once that
 * pid is free: fork (vfork: cheap under TCG) until a child gets it, and
 * exec CMD there; every other child exits at once.  Prints "pid PID" as
 * CMD runs at each, then waits for them all; exits 0 when each ran.  The
 * guest tests of the agent's peer check (client-agent-peer.sh) give real
 * hooks the pids of peers that have exited: the guest's kernel has no
 * ns_last_pid (CONFIG_CHECKPOINT_RESTORE), so the pids must come round.
 * One process for all of them: a second one could get a pid it waits for.
 *
 * Exit status: 0; 3 when a pid did not come round within three passes over
 * pid_max (someone holds it); 2 usage or set-up error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define TARGETS_MAX 8

/* Outside main's frame: the vfork child reads them. */
static long want[TARGETS_MAX];
static size_t n;

int main(int argc, char **argv)
{
	long max = 0, tries;
	size_t left;
	char *p, *end;
	FILE *f;
	pid_t pid;
	int ws;

	if (argc < 3) {
		fprintf(stderr, "usage: nsg-pidat PID[,PID...] CMD [ARG...]\n");
		return 2;
	}
	f = fopen("/proc/sys/kernel/pid_max", "r");
	if (!f || fscanf(f, "%ld", &max) != 1) {
		fprintf(stderr, "nsg-pidat: cannot read pid_max\n");
		return 2;
	}
	fclose(f);
	for (p = argv[1]; *p && n < TARGETS_MAX; p = *end ? end + 1 : end) {
		want[n] = strtol(p, &end, 10);
		if (end == p || (*end && *end != ',') || want[n] <= 1 || want[n] >= max ||
		    want[n] == getpid()) {
			fprintf(stderr, "nsg-pidat: bad pid list %s (pid_max %ld, mine %d)\n", argv[1],
				max, (int)getpid());
			return 2;
		}
		n++;
	}
	for (tries = 0, left = n; left && tries < 3 * max; tries++) {
		size_t i;

		pid = vfork();
		if (pid == 0) {
			/* The vfork child: nothing but exec or _exit. */
			for (i = 0; i < n; i++)
				if (syscall(SYS_getpid) == want[i])
					execv(argv[2], argv + 2);
			_exit(127);
		}
		if (pid < 0) {
			if (errno == EAGAIN)
				continue;
			fprintf(stderr, "nsg-pidat: vfork: %s\n", strerror(errno));
			return 2;
		}
		for (i = 0; i < n && want[i] != pid; i++)
			;
		if (i == n) {
			waitpid(pid, &ws, 0);
			continue;
		}
		printf("pid %d\n", (int)pid);
		fflush(stdout);
		left--;
	}
	if (left)
		fprintf(stderr, "nsg-pidat: %zu of the pids did not come round in %ld forks\n", left,
			tries);
	while (wait(&ws) > 0)
		;
	return left ? 3 : 0;
}
