/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <fcntl.h>
#include <stdlib.h>
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

/*
 * Run fn with stderr on TARGET (a path) and the kernel log fallback on a
 * temporary file; return what the fallback got (static buffer).
 */
static const char *kmsg_capture(const char *target, void (*fn)(void))
{
	static char got[8192];
	char path[] = "/tmp/nsg-kmsg-XXXXXX";
	int fd, saved, sink;
	ssize_t n;

	got[0] = '\0';
	fd = mkstemp(path);
	sink = open(target, O_WRONLY | O_APPEND);
	if (fd < 0 || sink < 0)
		return "(setup failed)";
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	dup2(sink, STDERR_FILENO);
	nsg_log_kmsg_fallback(path);
	fn();
	nsg_log_kmsg_fallback(NULL);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	close(sink);
	n = pread(fd, got, sizeof(got) - 1, 0);
	got[n > 0 ? n : 0] = '\0';
	close(fd);
	unlink(path);
	return got;
}

static void warn_and_error(void)
{
	nsg_set_verbose(1);
	nsg_info("info lines stay on stderr");
	nsg_set_verbose(0);
	nsg_warn("warning: container %s runs unguarded", "c1");
	nsg_error("container %s: annotation\nforged", "c2");
}

static void long_error(void)
{
	char big[3000];

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	nsg_error("%s", big);
}

static void t_kmsg_when_stderr_is_null(void)
{
	char want[256];
	int pid = getpid();

	/* LOG_DAEMON (3 << 3) | LOG_WARNING (4) = 28, | LOG_ERR (3) = 27. */
	snprintf(want, sizeof(want),
		 "<28>nsguard[%d]: warning: container c1 runs unguarded\n"
		 "<27>nsguard[%d]: container c2: annotation?forged\n",
		 pid, pid);
	ASSERT_STREQ(want, kmsg_capture("/dev/null", warn_and_error));
}

static void t_kmsg_record_cut(void)
{
	const char *got = kmsg_capture("/dev/null", long_error);
	size_t n = strlen(got);

	/* One record under the kernel's limit, still ending in a newline. */
	ASSERT_TRUE(n > 900 && n < 1000);
	ASSERT_TRUE(got[n - 1] == '\n');
	ASSERT_TRUE(strchr(got, '\n') == got + n - 1);
}

static void t_no_kmsg_when_stderr_is_read(void)
{
	char path[] = "/tmp/nsg-stderr-XXXXXX";
	int fd = mkstemp(path);

	ASSERT_TRUE(fd >= 0);
	ASSERT_STREQ("", kmsg_capture(path, warn_and_error));
	close(fd);
	unlink(path);
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
	TEST_CASE("log", "kmsg-when-stderr-is-dev-null", t_kmsg_when_stderr_is_null);
	TEST_CASE("log", "kmsg-record-cut", t_kmsg_record_cut);
	TEST_CASE("log", "no-kmsg-when-stderr-is-read", t_no_kmsg_when_stderr_is_read);
}
