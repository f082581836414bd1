// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ctstamp: a container's process that reports when it started.
 *
 * Built static and without the C library (-nostdlib): the TSC is read by the
 * process's very first instructions (_start), before any start-up code, and
 * printed on stdout as "ctstamp TSC\n"; then it exits 0.  integration/bench/run
 * makes it the process of the start-latency bundles and subtracts the TSC
 * timecmd took right before exec'ing the runtime (timecmd -s): the runtime's
 * invocation to the container's first instruction.
 */
static long sys3(long nr, long a, long b, long c)
{
	long ret;

	__asm__ __volatile__("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b), "d"(c)
			     : "rcx", "r11", "memory");
	return ret;
}

__attribute__((noreturn, used)) void ctstamp_main(unsigned long long tsc);
__attribute__((noreturn, used)) void ctstamp_main(unsigned long long tsc)
{
	static const char tag[] = "ctstamp ";
	char buf[40], *p = buf + sizeof(buf);

	*--p = '\n';
	do {
		*--p = (char)('0' + tsc % 10);
		tsc /= 10;
	} while (tsc);
	for (int i = (int)sizeof(tag) - 2; i >= 0; i--)
		*--p = tag[i];
	sys3(1 /* write */, 1, (long)p, buf + sizeof(buf) - p);
	for (;;)
		sys3(60 /* exit */, 0, 0, 0);
}

/* The entry point: rdtsc first, then align the stack and call ctstamp_main. */
__asm__(".text\n"
	".global _start\n"
	"_start:\n"
	"\tlfence\n"
	"\trdtsc\n"
	"\tshlq $32, %rdx\n"
	"\torq %rdx, %rax\n"
	"\tmovq %rax, %rdi\n"
	"\tandq $-16, %rsp\n"
	"\tcall ctstamp_main\n"
	"\thlt\n");
