/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Host unit tests: unit [SUITE...].  No bpf(), no kernel state changed. */
#include <stdarg.h>
#include <stdlib.h>

#include "test.h"

#ifndef NSG_TEST_FIXTURES
#define NSG_TEST_FIXTURES "shim/tests/fixtures"
#endif

const char *test_fixtures = NSG_TEST_FIXTURES;

static struct {
	const char *suite;
	char name[160];
	bool failed, skipped;
	char why[1024];
	int n_pass, n_fail, n_skip;
} T;

void test_begin(const char *suite, const char *name)
{
	T.suite = suite;
	snprintf(T.name, sizeof(T.name), "%s", name);
	T.failed = T.skipped = false;
	T.why[0] = '\0';
	nsg_clear_error();
}

void test_failf(const char *file, int line, const char *fmt, ...)
{
	char msg[900];
	va_list ap;
	char *p;

	if (T.failed)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(T.why, sizeof(T.why), "%s:%d: %s", file, line, msg);
	/* One line per case, whatever the values contained. */
	for (p = T.why; *p; p++)
		if ((unsigned char)*p < 0x20)
			*p = ' ';
	T.failed = true;
}

void test_skip(const char *why)
{
	snprintf(T.why, sizeof(T.why), "%s", why);
	T.skipped = true;
}

bool test_failed(void)
{
	return T.failed;
}

void test_end(void)
{
	if (T.failed) {
		printf("FAIL: unit/%s/%s: %s\n", T.suite, T.name, T.why);
		T.n_fail++;
	} else if (T.skipped) {
		printf("SKIP: unit/%s/%s: %s\n", T.suite, T.name, T.why);
		T.n_skip++;
	} else {
		printf("PASS: unit/%s/%s\n", T.suite, T.name);
		T.n_pass++;
	}
	fflush(stdout);
}

const char *test_errname(int err)
{
	static char buf[4][32];
	static int slot;
	static const struct {
		int e;
		const char *n;
	} names[] = {
		{ EPERM, "EPERM" },   { ENOENT, "ENOENT" },	{ ESRCH, "ESRCH" },
		{ EIO, "EIO" },	      { EACCES, "EACCES" },	{ EEXIST, "EEXIST" },
		{ ENOTDIR, "ENOTDIR" }, { EINVAL, "EINVAL" },	{ EFBIG, "EFBIG" },
		{ ENOSPC, "ENOSPC" }, { ENOMEM, "ENOMEM" },	{ EOPNOTSUPP, "EOPNOTSUPP" },
		{ ELOOP, "ELOOP" },   { ECANCELED, "ECANCELED" }, { EISDIR, "EISDIR" },
	};
	char *b = buf[slot++ % 4];
	size_t i;

	if (err == 0)
		return "0";
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (-err == names[i].e) {
			snprintf(b, sizeof(buf[0]), "-%s", names[i].n);
			return b;
		}
	}
	snprintf(b, sizeof(buf[0]), "%d", err);
	return b;
}

int test_summary(void)
{
	printf("# unit: %d passed, %d failed, %d skipped\n", T.n_pass, T.n_fail, T.n_skip);
	return T.n_fail ? 1 : 0;
}

static const struct {
	const char *name;
	void (*fn)(void);
} suites[] = {
	{ "log", suite_log },	    { "oci", suite_oci },	{ "config", suite_config },
	{ "policy", suite_policy }, { "cgroup", suite_cgroup }, { "scope", suite_scope }, { "mounts", suite_mounts },
	{ "record", suite_record },
	{ "container", suite_container },
	{ "fileio", suite_fileio },
	{ "identity", suite_identity },
	{ "spec", suite_spec },
	{ "outcomes", suite_outcomes },
	{ "agent", suite_agent },
	{ "jv", suite_jv },
	{ "lockfile", suite_lockfile },
};

int main(int argc, char **argv)
{
	const char *env = getenv("NSG_TEST_FIXTURES");
	size_t i;
	int a;

	if (env && env[0])
		test_fixtures = env;
	for (i = 0; i < sizeof(suites) / sizeof(suites[0]); i++) {
		bool run = argc < 2;

		for (a = 1; a < argc; a++)
			if (strcmp(argv[a], suites[i].name) == 0)
				run = true;
		if (run)
			suites[i].fn();
	}
	return test_summary();
}
