/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Error recording and stderr messages.  One message buffer per process: the
 * shim is single-threaded and prints the recorded error once, in main().
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "log.h"


static char last_error[NSG_MSG_MAX];
static int verbose_level;
static const char *kmsg_path; /* NULL: no kernel log fallback */
static const char *syslog_path; /* NULL: no system log */
static struct nsg_capture *capture; /* the agent: lines go back to the hook */

/* Messages are one line on stderr: control characters (a newline in an
 * annotation value, say) must not split or forge lines. */
static void sanitize(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

int nsg_fail(int errnum, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	if (errnum < 0)
		errnum = -errnum;
	if (errnum == 0)
		errnum = EIO; /* a failure must never read as success */

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	sanitize(last_error);
	errno = saved;
	return -errnum;
}

int nsg_fail_context(int err, const char *fmt, ...)
{
	char prefix[NSG_MSG_MAX];
	char joined[2 * NSG_MSG_MAX + 2];
	int saved = errno;
	size_t n;
	va_list ap;

	if (err > 0)
		err = -err;
	if (err == 0)
		err = -EIO;

	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);

	/* No recorded message: fall back to the errno text. */
	snprintf(joined, sizeof(joined), "%s: %s", prefix,
		 last_error[0] ? last_error : strerror(-err));
	n = strnlen(joined, sizeof(last_error) - 1);
	memcpy(last_error, joined, n);
	last_error[n] = '\0';
	sanitize(last_error);
	errno = saved;
	return err;
}

/* Empty string when nothing was recorded since the last nsg_clear_error(). */
const char *nsg_last_error(void)
{
	return last_error;
}

void nsg_clear_error(void)
{
	last_error[0] = '\0';
}

void nsg_log_kmsg_fallback(const char *path)
{
	kmsg_path = path;
}

void nsg_log_syslog(const char *path)
{
	syslog_path = path;
}

/* Nobody reads a closed stderr or /dev/null (character device 1:3). */
static bool stderr_unheard(void)
{
	struct stat st;

	if (fstat(STDERR_FILENO, &st) < 0)
		return true;
	return S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3);
}

/*
 * Best effort: the message is already on stderr, or there is nowhere else.
 * /dev/kmsg refuses records over about 1000 bytes, so longer ones are cut.
 */
static void to_kmsg(int level, const char *msg)
{
	char line[960];
	ssize_t written;
	int fd, n;

	if (!kmsg_path || level > LOG_WARNING || !stderr_unheard())
		return;
	fd = open(kmsg_path, O_WRONLY | O_APPEND | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = snprintf(line, sizeof(line), "<%d>nsguard[%d]: %s\n", LOG_DAEMON | level,
		     (int)getpid(), msg);
	if (n > (int)sizeof(line) - 1) {
		n = sizeof(line) - 1;
		line[n - 1] = '\n';
	}
	written = write(fd, line, n);
	(void)written;
	close(fd);
}

/*
 * syslog(3)'s record, but sent with MSG_DONTWAIT: glibc's syslog() blocks
 * while the log daemon's queue is full, and the hook must never stall the
 * runtime for a log line.  A stream socket (some syslog-ng set-ups) gets
 * the record NUL-terminated, as glibc sends it.
 */
static void to_syslog(int level, const char *msg)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	char line[2048], stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	ssize_t written;
	int fd, n, type = SOCK_DGRAM;

	if (!syslog_path || level > LOG_WARNING || strlen(syslog_path) >= sizeof(addr.sun_path))
		return;
	memcpy(addr.sun_path, syslog_path, strlen(syslog_path) + 1);
	if (!localtime_r(&now, &tm) || !strftime(stamp, sizeof(stamp), "%b %e %T", &tm))
		stamp[0] = '\0';
	n = snprintf(line, sizeof(line), "<%d>%s nsguard[%d]: %s", LOG_DAEMON | level, stamp,
		     (int)getpid(), msg);
	if (n > (int)sizeof(line) - 1)
		n = sizeof(line) - 1;
again:
	/* Non-blocking: a stream listener with a full backlog must not stall us. */
	fd = socket(AF_UNIX, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return;
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		close(fd);
		if (errno == EPROTOTYPE && type == SOCK_DGRAM) {
			type = SOCK_STREAM;
			goto again;
		}
		return;
	}
	written = send(fd, line, n + (type == SOCK_STREAM), MSG_DONTWAIT | MSG_NOSIGNAL);
	(void)written;
	close(fd);
}

/* A line for the hook that asked the agent: its level digit, the message. */
static void capture_line(int level, const char *msg)
{
	size_t n = strlen(msg) + 3;
	char *nbuf;

	/* Room is kept for the error that ends a hook, and for the note of a cut. */
	if (capture->len + n > NSG_CAPTURE_MAX - NSG_CAPTURE_NOTE -
				       (level > LOG_ERR ? NSG_MSG_MAX + 3 : 0)) {
		capture->truncated = true;
		return;
	}
	if (capture->len + n > capture->cap) {
		size_t cap = capture->cap ? capture->cap * 2 : 1024;

		while (cap < capture->len + n)
			cap *= 2;
		nbuf = realloc(capture->buf, cap);
		if (!nbuf) {
			capture->truncated = true;
			return;
		}
		capture->buf = nbuf;
		capture->cap = cap;
	}
	capture->len += (size_t)snprintf(capture->buf + capture->len, n, "%c%s\n",
					 '0' + (level & 7), msg);
}

static void print_line(int level, const char *msg)
{
	if (capture) {
		capture_line(level, msg);
	} else {
		/* One fprintf call so concurrent hooks do not interleave mid-line. */
		fprintf(stderr, "nsguard: %s\n", msg);
		to_kmsg(level, msg);
	}
	to_syslog(level, msg);
}

void nsg_log_capture(struct nsg_capture *c)
{
	static const char note[] = "4warning: lines of this hook were left out here; the "
				   "agent's log and the system log have them\n";
	_Static_assert(sizeof(note) <= NSG_CAPTURE_NOTE, "the note of a cut must fit");

	/* Ending a cut capture: the hook says so (the room was kept). */
	if (!c && capture && capture->truncated && capture->len + sizeof(note) - 1 <= NSG_CAPTURE_MAX) {
		char *nbuf = realloc(capture->buf, capture->len + sizeof(note));

		if (nbuf) {
			capture->buf = nbuf;
			memcpy(nbuf + capture->len, note, sizeof(note));
			capture->len += sizeof(note) - 1;
			capture->cap = capture->len + 1;
		}
	}
	capture = c;
}

void nsg_log_relay(int level, const char *msg)
{
	char buf[NSG_MSG_MAX];

	snprintf(buf, sizeof(buf), "%s", msg);
	sanitize(buf);
	fprintf(stderr, "nsguard: %s\n", buf);
	to_kmsg(level, buf);
}

static __attribute__((format(printf, 2, 0))) void vprint(int level, const char *fmt, va_list ap)
{
	char buf[NSG_MSG_MAX];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	sanitize(buf);
	print_line(level, buf);
}

void nsg_error(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	vprint(LOG_ERR, fmt, ap);
	va_end(ap);
	errno = saved;
}

void nsg_warn(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	vprint(LOG_WARNING, fmt, ap);
	va_end(ap);
	errno = saved;
}

void nsg_info(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	if (verbose_level < 1)
		return;
	va_start(ap, fmt);
	vprint(LOG_INFO, fmt, ap);
	va_end(ap);
	errno = saved;
}

void nsg_set_verbose(int level)
{
	verbose_level = level;
}

int nsg_verbose(void)
{
	return verbose_level;
}
