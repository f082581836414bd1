/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fileio.h"
#include "json.h"
#include "test.h"
#include "util.h"

/* A temporary file holding size bytes of a repeating pattern, opened for reading. */
static int file_of(size_t size)
{
	char path[] = "/tmp/nsguard-test-fileio.XXXXXX";
	cleanup_free char *data = malloc(size ?: 1);
	int fd = mkstemp(path);

	if (fd < 0 || !data)
		return -1;
	unlink(path);
	for (size_t i = 0; i < size; i++)
		data[i] = 'a' + i % 26;
	if (write(fd, data, size) != (ssize_t)size || lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void capped_file_case(size_t size, size_t max, int want)
{
	cleanup_close int fd = file_of(size);
	cleanup_free char *buf = NULL;
	size_t len = 99;

	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ(want, read_capped(fd, max, &buf, &len));
	if (want < 0) {
		ASSERT_TRUE(buf == NULL);
		ASSERT_EQ(0, len);
		return;
	}
	ASSERT_TRUE(buf != NULL);
	ASSERT_EQ(size, len);
	ASSERT_EQ(0, buf[len]);
	for (size_t i = 0; i < size; i++)
		if (buf[i] != 'a' + (char)(i % 26))
			FAIL_RET("byte %zu differs", i);
}

/* Larger than the first allocation, so the buffer grows to the bound. */
#define CAP (150 * 1024 + 7)

static void t_exactly_at_cap(void)
{
	capped_file_case(CAP, CAP, 0);
}

static void t_cap_plus_1(void)
{
	capped_file_case(CAP + 1, CAP, -EFBIG);
}

static void t_empty(void)
{
	capped_file_case(0, CAP, 0);
}

static void t_zero_cap(void)
{
	capped_file_case(0, 0, 0);
	capped_file_case(1, 0, -EFBIG);
}

static void t_read_error(void)
{
	cleanup_close int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cleanup_free char *buf = NULL;
	size_t len;

	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ(-EISDIR, read_capped(fd, CAP, &buf, &len));
	ASSERT_TRUE(buf == NULL);
}

static void on_alarm(int sig)
{
}

/*
 * A child writes total bytes in pieces of piece bytes, pausing between them
 * (the first pause long enough for a timer to interrupt the parent's read).
 */
static void pipe_case(size_t total, size_t piece, size_t max, int want)
{
	struct sigaction sa = { .sa_handler = on_alarm }, old; /* no SA_RESTART */
	struct itimerval it = { .it_value = { .tv_usec = 20000 } };
	cleanup_free char *buf = NULL;
	size_t len = 0;
	int p[2], r, status;
	pid_t child;

	ASSERT_EQ(0, pipe(p));
	child = fork();
	ASSERT_TRUE(child >= 0);
	if (child == 0) {
		char chunk[4096];
		size_t sent = 0;

		close(p[0]);
		signal(SIGPIPE, SIG_DFL);
		memset(chunk, 'x', sizeof(chunk));
		usleep(100000);
		while (sent < total) {
			size_t n = total - sent < piece ? total - sent : piece;

			if (n > sizeof(chunk))
				n = sizeof(chunk);
			if (write(p[1], chunk, n) != (ssize_t)n)
				_exit(1);
			sent += n;
			usleep(1000);
		}
		_exit(0);
	}
	close(p[1]);
	sigaction(SIGALRM, &sa, &old);
	setitimer(ITIMER_REAL, &it, NULL);
	r = read_capped(p[0], max, &buf, &len);
	sigaction(SIGALRM, &old, NULL);
	close(p[0]);
	kill(child, SIGKILL); /* it may still be writing past the bound */
	waitpid(child, &status, 0);
	ASSERT_EQ(want, r);
	if (want == 0) {
		ASSERT_EQ(total, len);
		ASSERT_EQ(total, strspn(buf, "x"));
	}
}

static void t_pipe_in_pieces(void)
{
	pipe_case(10000, 333, 10000, 0);
}

static void t_pipe_over_cap(void)
{
	pipe_case(20000, 1000, 10000, -EFBIG);
}

static char tmpdir[] = "/tmp/nsguard-test-mkdir.XXXXXX";

static void t_mkdir_p(void)
{
	char path[128], file[128];
	struct stat sb;

	ASSERT_TRUE(mkdtemp(tmpdir) != NULL);
	snprintf(path, sizeof(path), "%s/a/b//c/", tmpdir);
	ASSERT_OK(mkdir_p(path, 0750));
	ASSERT_EQ(0, stat(path, &sb));
	ASSERT_TRUE(S_ISDIR(sb.st_mode));
	ASSERT_EQ(0750 & ~umask(022), sb.st_mode & 07777);
	umask(022);
	/* Already there: fine. */
	ASSERT_OK(mkdir_p(path, 0700));
	/* A file in the way: named in the message. */
	snprintf(file, sizeof(file), "%s/a/f", tmpdir);
	close(open(file, O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
	snprintf(path, sizeof(path), "%s/a/f/g", tmpdir);
	ASSERT_ERR(-ENOTDIR, mkdir_p(path, 0700));
	ASSERT_MSG("/a/f/g");
	ASSERT_ERR(-EINVAL, mkdir_p("", 0700));
}

static void t_mkdir_p_cleanup(void)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", tmpdir);
	ASSERT_EQ(0, system(cmd));
}

static void u64_case(__u64 v, const char *want)
{
	cleanup_jv struct jv *o = jv_new_object();
	const struct jv *it;

	ASSERT_TRUE(o != NULL);
	ASSERT_TRUE(json_add_u64(o, "n", v) != NULL);
	it = jv_get(o, "n");
	ASSERT_TRUE(jv_is_string(it));
	ASSERT_STREQ(want, it->str);
}

static void t_json_u64(void)
{
	u64_case(0, "0");
	u64_case((1ULL << 53) + 1, "9007199254740993"); /* a double would round it */
	u64_case(UINT64_MAX, "18446744073709551615");
}

void suite_fileio(void)
{
	TEST_CASE("fileio", "read-capped-exactly-at-cap", t_exactly_at_cap);
	TEST_CASE("fileio", "read-capped-cap-plus-1", t_cap_plus_1);
	TEST_CASE("fileio", "read-capped-empty", t_empty);
	TEST_CASE("fileio", "read-capped-zero-cap", t_zero_cap);
	TEST_CASE("fileio", "read-capped-read-error", t_read_error);
	TEST_CASE("fileio", "read-capped-pipe-in-pieces-eintr", t_pipe_in_pieces);
	TEST_CASE("fileio", "read-capped-pipe-over-cap", t_pipe_over_cap);
	TEST_CASE("fileio", "mkdir-p", t_mkdir_p);
	TEST_CASE("fileio", "mkdir-p-cleanup", t_mkdir_p_cleanup);
	TEST_CASE("fileio", "json-add-u64", t_json_u64);
}
