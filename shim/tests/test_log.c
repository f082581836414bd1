/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <unistd.h>

#include "test.h"

static void t_fail_records(void)
{
	ASSERT_EQ(-EINVAL, nsg_fail(EINVAL, "bad %s %d", "thing", 7));
	ASSERT_STREQ("bad thing 7", nsg_last_error());
	/* A negative errnum is accepted too, zero never reads as success. */
	ASSERT_EQ(-ENOENT, nsg_fail(-ENOENT, "x"));
	ASSERT_EQ(-EIO, nsg_fail(0, "x"));
}

static void t_fail_preserves_errno(void)
{
	errno = ESRCH;
	nsg_fail(EINVAL, "x");
	ASSERT_EQ(ESRCH, errno);
}

static void t_context(void)
{
	nsg_fail(EPERM, "inner");
	ASSERT_EQ(-EPERM, nsg_fail_context(-EPERM, "attach %s", "/x"));
	ASSERT_EQ(-EPERM, nsg_fail_context(-EPERM, "hook"));
	ASSERT_STREQ("hook: attach /x: inner", nsg_last_error());
}

static void t_context_without_message(void)
{
	nsg_clear_error();
	ASSERT_EQ(-ENOENT, nsg_fail_context(-ENOENT, "open"));
	ASSERT_STREQ("open: No such file or directory", nsg_last_error());
}

static void t_one_line(void)
{
	nsg_fail(EINVAL, "a\nb\rc\td");
	ASSERT_TRUE(!strpbrk(nsg_last_error(), "\n\r\t"));
}

static void t_long_message(void)
{
	char big[10000];

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	nsg_fail(EINVAL, "%s", big);
	ASSERT_EQ(-EINVAL, nsg_fail_context(-EINVAL, "%s", big));
	ASSERT_TRUE(strlen(nsg_last_error()) < 4096);
}

static void t_clear(void)
{
	nsg_fail(EINVAL, "x");
	nsg_clear_error();
	ASSERT_STREQ("", nsg_last_error());
}

static void t_verbose(void)
{
	nsg_set_verbose(2);
	ASSERT_EQ(2, nsg_verbose());
	nsg_set_verbose(0);
	ASSERT_EQ(0, nsg_verbose());
}

void suite_log(void)
{
	TEST_CASE("log", "fail-records-message", t_fail_records);
	TEST_CASE("log", "fail-preserves-errno", t_fail_preserves_errno);
	TEST_CASE("log", "context-prefixes", t_context);
	TEST_CASE("log", "context-without-message", t_context_without_message);
	TEST_CASE("log", "message-is-one-line", t_one_line);
	TEST_CASE("log", "long-message-truncated", t_long_message);
	TEST_CASE("log", "clear", t_clear);
	TEST_CASE("log", "verbose-level", t_verbose);
}
