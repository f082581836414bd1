/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The bench tools' clock.  The test guest has no HPET, no ACPI PM timer and an
 * "unstable" TSC, so its clocksource is refined-jiffies: CLOCK_MONOTONIC moves
 * in 4 ms steps (HZ=250), useless for a 100 us system call.  The TSC itself
 * still counts (under TCG it follows the host's TSC), so the tools read it
 * directly and convert with the frequency `timecmd --calibrate` measured
 * against CLOCK_MONOTONIC over whole seconds; integration/bench/run passes it
 * in BENCH_TSC_HZ.  Without BENCH_TSC_HZ (or on another architecture) the
 * tools fall back to CLOCK_MONOTONIC.
 */
#ifndef BENCH_CLOCK_H
#define BENCH_CLOCK_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static uint64_t bench_hz; /* 0: use CLOCK_MONOTONIC */

static inline uint64_t bench_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t bench_tsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
	uint32_t lo, hi;

	/* lfence: do not let rdtsc run ahead of the code being timed. */
	__asm__ __volatile__("lfence\n\trdtsc" : "=a"(lo), "=d"(hi)::"memory");
	return ((uint64_t)hi << 32) | lo;
#else
	return bench_mono_ns();
#endif
}

static inline void bench_clock_init(void)
{
	const char *s = getenv("BENCH_TSC_HZ");

#if defined(__x86_64__) || defined(__i386__)
	if (s && *s)
		bench_hz = strtoull(s, NULL, 10);
#else
	(void)s;
#endif
}

/* A timestamp in the clock's own units; differences go through bench_ns(). */
static inline uint64_t bench_now(void)
{
	return bench_hz ? bench_tsc() : bench_mono_ns();
}

static inline uint64_t bench_ns(uint64_t delta)
{
	if (!bench_hz)
		return delta;
	return (uint64_t)((unsigned __int128)delta * 1000000000u / bench_hz);
}

#endif
