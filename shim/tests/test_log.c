/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

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

/*
 * Run fn with the system log on a datagram socket bound at a temporary path
 * and stderr on TARGET; return the records it got, each followed by '\n'
 * and with the time stamp replaced by "TIME" (static buffer).
 */
static const char *syslog_capture(const char *target, void (*fn)(void))
{
	static char got[8192];
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	char rec[4096];
	int fd, saved, sink;
	size_t len = 0;
	ssize_t n;

	got[0] = '\0';
	snprintf(addr.sun_path, sizeof(addr.sun_path), "/tmp/nsg-log-%d", (int)getpid());
	unlink(addr.sun_path);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	sink = open(target, O_WRONLY | O_APPEND);
	if (fd < 0 || sink < 0 || bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		return "(setup failed)";
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	dup2(sink, STDERR_FILENO);
	nsg_log_syslog(addr.sun_path);
	fn();
	nsg_log_syslog(NULL);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	close(sink);
	while ((n = recv(fd, rec, sizeof(rec) - 1, MSG_DONTWAIT)) > 0) {
		char *p = strchr(rec, '>'), *name;

		rec[n] = '\0';
		/* "<PRI>Mmm dd hh:mm:ss nsguard[...": the stamp is 15 bytes. */
		name = p ? strstr(p, " nsguard[") : NULL;
		if (!p || !name || name - p - 1 != 15)
			len += snprintf(got + len, sizeof(got) - len, "(bad record: %s)\n", rec);
		else
			len += snprintf(got + len, sizeof(got) - len, "%.*sTIME%s\n",
					(int)(p + 1 - rec), rec, name);
		if (len >= sizeof(got))
			break;
	}
	close(fd);
	unlink(addr.sun_path);
	return got;
}

static void t_syslog_whatever_stderr(void)
{
	char want[256];
	int pid = getpid();
	char path[] = "/tmp/nsg-stderr-XXXXXX";
	int fd = mkstemp(path);

	/* Errors and warnings, not info; with stderr read or thrown away. */
	snprintf(want, sizeof(want),
		 "<28>TIME nsguard[%d]: warning: container c1 runs unguarded\n"
		 "<27>TIME nsguard[%d]: container c2: annotation?forged\n",
		 pid, pid);
	ASSERT_TRUE(fd >= 0);
	ASSERT_STREQ(want, syslog_capture(path, warn_and_error));
	ASSERT_STREQ(want, syslog_capture("/dev/null", warn_and_error));
	close(fd);
	unlink(path);
}

static void t_syslog_record_cut(void)
{
	const char *got = syslog_capture("/dev/null", long_error);
	size_t n = strlen(got);

	ASSERT_TRUE(n > 2000 && n < 2100);
	ASSERT_TRUE(strchr(got, '\n') == got + n - 1);
}

static void flood(void)
{
	for (int i = 0; i < 5000; i++)
		nsg_error("record %d of a flood nobody reads", i);
}

static void t_syslog_never_blocks(void)
{
	/* Nobody reads the socket: its queue fills, and sending must not wait. */
	const char *got = syslog_capture("/dev/null", flood);

	ASSERT_TRUE(strstr(got, "record 0 of a flood") != NULL);
	ASSERT_TRUE(strstr(got, "record 4999 of a flood") == NULL);
}

static void noisy(void)
{
	nsg_error("no log socket");
}

static void t_syslog_missing_socket(void)
{
	char want[128];

	/* Nothing listens there: the other outputs still get the line. */
	snprintf(want, sizeof(want), "<27>nsguard[%d]: no log socket\n", (int)getpid());
	nsg_log_syslog("/tmp/nsg-no-such-socket");
	ASSERT_STREQ(want, kmsg_capture("/dev/null", noisy));
	nsg_log_syslog(NULL);
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
	TEST_CASE("log", "syslog-whatever-stderr", t_syslog_whatever_stderr);
	TEST_CASE("log", "syslog-record-cut", t_syslog_record_cut);
	TEST_CASE("log", "syslog-missing-socket", t_syslog_missing_socket);
	TEST_CASE("log", "syslog-never-blocks", t_syslog_never_blocks);
}
