/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A tiny test framework.  Each case prints exactly one line,
 * "PASS: unit/<suite>/<case>" or "FAIL: unit/<suite>/<case>: <why>", which is
 * what integration/summarize counts.  An ASSERT_* that fails records file:line
 * with expected and actual values and returns from the current function, so a
 * case body is a void function (tables: one function call per row).
 */
#ifndef NSGUARD_TEST_H
#define NSGUARD_TEST_H

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "log.h"

void test_begin(const char *suite, const char *name);
void test_end(void);
void test_skip(const char *why);
void test_failf(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
bool test_failed(void);
const char *test_errname(int err); /* "-EINVAL" etc. */
int test_summary(void); /* exit status */

/* Fixture root (shim/tests/fixtures), set from NSG_TEST_FIXTURES or argv. */
extern const char *test_fixtures;

#define TEST_CASE(suite, name, fn, ...)                                                 \
	do {                                                                            \
		test_begin(suite, name);                                                \
		fn(__VA_ARGS__);                                                        \
		test_end();                                                             \
	} while (0)

#define FAIL_RET(...)                                                                   \
	do {                                                                            \
		test_failf(__FILE__, __LINE__, __VA_ARGS__);                            \
		return;                                                                 \
	} while (0)

#define ASSERT_TRUE(c)                                                                  \
	do {                                                                            \
		if (!(c))                                                               \
			FAIL_RET("expected %s", #c);                                    \
	} while (0)

#define ASSERT_EQ(exp, act)                                                             \
	do {                                                                            \
		long long _e = (long long)(exp), _a = (long long)(act);                 \
		if (_e != _a)                                                           \
			FAIL_RET("%s: expected %lld, got %lld", #act, _e, _a);          \
	} while (0)

#define ASSERT_EQ_U64(exp, act)                                                         \
	do {                                                                            \
		unsigned long long _e = (exp), _a = (act);                              \
		if (_e != _a)                                                           \
			FAIL_RET("%s: expected %llu, got %llu", #act, _e, _a);          \
	} while (0)

#define ASSERT_STREQ(exp, act)                                                          \
	do {                                                                            \
		const char *_e = (exp), *_a = (act);                                    \
		if (!_e != !_a || (_e && strcmp(_e, _a) != 0))                          \
			FAIL_RET("%s: expected \"%s\", got \"%s\"", #act,               \
				 _e ? _e : "(null)", _a ? _a : "(null)");               \
	} while (0)

#define ASSERT_SUBSTR(needle, hay)                                                      \
	do {                                                                            \
		const char *_n = (needle), *_h = (hay);                                 \
		if (!_h || !strstr(_h, _n))                                             \
			FAIL_RET("%s: expected to contain \"%s\", got \"%s\"", #hay, _n, \
				 _h ? _h : "(null)");                                   \
	} while (0)

/* The recorded nsg_fail() message contains needle. */
#define ASSERT_MSG(needle) ASSERT_SUBSTR(needle, nsg_last_error())

#define ASSERT_OK(expr)                                                                 \
	do {                                                                            \
		int _r = (expr);                                                        \
		if (_r != 0)                                                            \
			FAIL_RET("%s: expected 0, got %s (%s)", #expr, test_errname(_r), \
				 nsg_last_error());                                     \
	} while (0)

/* expr returns exactly err (a negative errno) and records a message. */
#define ASSERT_ERR(err, expr)                                                           \
	do {                                                                            \
		int _w = (err);                                                         \
		nsg_clear_error();                                                      \
		int _r = (expr);                                                        \
		if (_r != _w)                                                           \
			FAIL_RET("%s: expected %s, got %s (%s)", #expr, test_errname(_w), \
				 test_errname(_r), nsg_last_error());                   \
		if (!nsg_last_error()[0])                                               \
			FAIL_RET("%s: failed without a message", #expr);                \
	} while (0)

void suite_log(void);
void suite_oci(void);
void suite_config(void);
void suite_policy(void);
void suite_cgroup(void);
void suite_scope(void);
void suite_mounts(void);
void suite_record(void);
void suite_container(void);
void suite_fileio(void);
void suite_identity(void);
void suite_spec(void);
void suite_outcomes(void);
void suite_agent(void);
void suite_jv(void);
void suite_lockfile(void);

/*
 * test_lockfile.c: a child that holds flock(op) on path (through a read-only
 * descriptor for LOCK_SH) as process name comm, until test_reap kills it;
 * its pid once it holds the lock, or -1.
 */
#include <sys/types.h>
pid_t test_hold_lock(const char *path, int op, const char *comm);
void test_reap(pid_t pid);

#endif
