// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * phasetrace.so: where a short-lived nsguard process spends its time, without
 * perf (the guest has none) and with the TSC (the guest's clock is jiffies).
 *
 *   BENCH_TSC_HZ=... BENCH_PHASE_OUT=FILE BENCH_PHASE_LABEL=L LD_PRELOAD=phasetrace.so \
 *       timecmd -o T -- nsguard ...
 *
 * Interposes the library calls nsguard and libbpf make for their real work -
 * syscall(__NR_bpf) (libbpf's only way into the kernel), open/openat/fopen,
 * scandir (the record directory), read (stdin), fsync, rename - and records
 * start and duration of each.  timecmd puts the TSC of the moment before
 * execve in BENCH_EXEC_TSC, so the first event ("ctor": this library's
 * constructor, i.e. the kernel's execve plus ld.so loading and relocating
 * every library) is measured from the exec.  At exit ("dtor") the events are
 * appended to FILE, one per line:
 *
 *   LABEL PID NAME START_NS DURATION_NS
 *
 * NAME is bpf:<command>, open:<path>, scandir:<dir>, read:<fd>, fsync, rename,
 * ctor, dtor.  START_NS is since the exec (or since ctor without
 * BENCH_EXEC_TSC).  Only the process's own time is here; timecmd's figure also
 * holds the exit and the parent's wakeup.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/bpf.h>

#include "clock.h"

#define MAX_EVENTS 8192

struct event {
	const char *kind;
	char arg[80];
	uint64_t start, dur;
};

static struct event events[MAX_EVENTS];
static int nevents;
static uint64_t t_base; /* TSC at exec (or at ctor) */
static int active;

static const char *bpf_cmd_name(long cmd)
{
	switch (cmd) {
	case BPF_MAP_CREATE: return "MAP_CREATE";
	case BPF_MAP_LOOKUP_ELEM: return "MAP_LOOKUP_ELEM";
	case BPF_MAP_UPDATE_ELEM: return "MAP_UPDATE_ELEM";
	case BPF_MAP_DELETE_ELEM: return "MAP_DELETE_ELEM";
	case BPF_PROG_LOAD: return "PROG_LOAD";
	case BPF_OBJ_PIN: return "OBJ_PIN";
	case BPF_OBJ_GET: return "OBJ_GET";
	case BPF_BTF_LOAD: return "BTF_LOAD";
	case BPF_LINK_CREATE: return "LINK_CREATE";
	case BPF_OBJ_GET_INFO_BY_FD: return "OBJ_GET_INFO_BY_FD";
	case BPF_MAP_FREEZE: return "MAP_FREEZE";
	case BPF_PROG_QUERY: return "PROG_QUERY";
	case BPF_BTF_GET_FD_BY_ID: return "BTF_GET_FD_BY_ID";
	case BPF_PROG_ATTACH: return "PROG_ATTACH";
	case BPF_PROG_DETACH: return "PROG_DETACH";
	default: return NULL;
	}
}

static void record(const char *kind, const char *arg, uint64_t t0, uint64_t t1)
{
	struct event *e;

	if (!active || nevents >= MAX_EVENTS)
		return;
	e = &events[nevents++];
	e->kind = kind;
	snprintf(e->arg, sizeof(e->arg), "%s", arg ? arg : "");
	e->start = t0 - t_base;
	e->dur = t1 - t0;
}

__attribute__((constructor)) static void phasetrace_init(void)
{
	const char *s = getenv("BENCH_EXEC_TSC");
	uint64_t now = bench_tsc();

	bench_clock_init();
	if (!bench_hz || !getenv("BENCH_PHASE_OUT"))
		return;
	t_base = s && *s ? strtoull(s, NULL, 10) : now;
	active = 1;
	record("ctor", NULL, now, now);
	/* Children (nsguard forks none, but be safe) must not inherit it. */
	unsetenv("BENCH_EXEC_TSC");
}

__attribute__((destructor)) static void phasetrace_fini(void)
{
	const char *out = getenv("BENCH_PHASE_OUT"), *label = getenv("BENCH_PHASE_LABEL");
	uint64_t now = bench_tsc();
	int saved = errno;
	FILE *f;

	if (!active)
		return;
	record("dtor", NULL, now, now);
	active = 0;
	f = fopen(out, "ae");
	if (!f)
		return;
	for (int i = 0; i < nevents; i++) {
		struct event *e = &events[i];

		fprintf(f, "%s %d %s%s%s %llu %llu\n", label ? label : "-", (int)getpid(), e->kind,
			e->arg[0] ? ":" : "", e->arg, (unsigned long long)bench_ns(e->start),
			(unsigned long long)bench_ns(e->dur));
	}
	fclose(f);
	errno = saved;
}

#define REAL(name) \
	static __typeof__(name) *real_##name; \
	if (!real_##name) \
		real_##name = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

long syscall(long nr, ...)
{
	REAL(syscall);
	long a[6], r;
	uint64_t t0, t1;
	va_list ap;
	int saved;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	t0 = bench_tsc();
	r = real_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	t1 = bench_tsc();
	if (nr == SYS_bpf) {
		const char *n = bpf_cmd_name(a[0]);
		char buf[24];

		saved = errno;
		if (!n) {
			snprintf(buf, sizeof(buf), "cmd%ld", a[0]);
			n = buf;
		}
		record("bpf", n, t0, t1);
		errno = saved;
	}
	return r;
}

int open(const char *path, int flags, ...)
{
	REAL(open);
	mode_t mode = 0;
	uint64_t t0;
	int r, saved;

	if (flags & (O_CREAT | __O_TMPFILE)) {
		va_list ap;

		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	t0 = bench_tsc();
	r = real_open(path, flags, mode);
	saved = errno;
	record("open", path, t0, bench_tsc());
	errno = saved;
	return r;
}

int openat(int dirfd, const char *path, int flags, ...)
{
	REAL(openat);
	mode_t mode = 0;
	uint64_t t0;
	int r, saved;

	if (flags & (O_CREAT | __O_TMPFILE)) {
		va_list ap;

		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	t0 = bench_tsc();
	r = real_openat(dirfd, path, flags, mode);
	saved = errno;
	record("open", path, t0, bench_tsc());
	errno = saved;
	return r;
}

FILE *fopen(const char *path, const char *mode)
{
	REAL(fopen);
	uint64_t t0 = bench_tsc();
	FILE *r = real_fopen(path, mode);
	int saved = errno;

	record("open", path, t0, bench_tsc());
	errno = saved;
	return r;
}

int scandir(const char *dir, struct dirent ***list, int (*filter)(const struct dirent *),
	    int (*compar)(const struct dirent **, const struct dirent **))
{
	REAL(scandir);
	uint64_t t0 = bench_tsc();
	int r = real_scandir(dir, list, filter, compar), saved = errno;

	record("scandir", dir, t0, bench_tsc());
	errno = saved;
	return r;
}

ssize_t read(int fd, void *buf, size_t n)
{
	REAL(read);
	uint64_t t0 = bench_tsc();
	ssize_t r = real_read(fd, buf, n);
	int saved = errno;
	char a[16];

	if (fd == 0) {
		snprintf(a, sizeof(a), "%d", fd);
		record("read", a, t0, bench_tsc());
	}
	errno = saved;
	return r;
}

int fsync(int fd)
{
	REAL(fsync);
	uint64_t t0 = bench_tsc();
	int r = real_fsync(fd), saved = errno;

	record("fsync", NULL, t0, bench_tsc());
	errno = saved;
	return r;
}

int rename(const char *a, const char *b)
{
	REAL(rename);
	uint64_t t0 = bench_tsc();
	int r = real_rename(a, b), saved = errno;

	record("rename", NULL, t0, bench_tsc());
	errno = saved;
	return r;
}
