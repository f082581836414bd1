// SPDX-License-Identifier: GPL-2.0-or-later
/* The events for many readers: a collector's log, followed (evlog.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "evlog.h"
#include "fileio.h"
#include "json.h"
#include "lockfile.h"
#include "log.h"
#include "util.h"

/* The "seq" of a line, 0 if it has none. */
static unsigned long long seq_of(const struct jv *o)
{
	const struct jv *s = jv_get(o, "seq");
	unsigned long long v = 0;

	if (jv_is_string(s) && parse_u64(s->str, &v) == 0)
		return v;
	return 0;
}

/* The last seq written to path: a new collector goes on from there. */
static unsigned long long last_seq(const char *path)
{
	cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC);
	char tail[8192 + 1], *line, *end;
	unsigned long long v = 0;
	struct stat st;
	off_t from;
	ssize_t n;

	if (fd < 0 || fstat(fd, &st) < 0)
		return 0;
	from = st.st_size > 8192 ? st.st_size - 8192 : 0;
	n = pread(fd, tail, sizeof(tail) - 1, from);
	if (n <= 0)
		return 0;
	tail[n] = '\0';
	/* The last complete line: between the last two newlines. */
	end = strrchr(tail, '\n');
	if (!end)
		return 0;
	*end = '\0';
	line = strrchr(tail, '\n');
	line = line ? line + 1 : tail;
	{
		cleanup_jv struct jv *o = jv_parse(line, strlen(line));

		v = o ? seq_of(o) : 0;
	}
	return v;
}

/* fd becomes the log l reads or writes (the one before closed); -errno if fstat fails. */
static int adopt(struct evlog *l, int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	if (l->fd >= 0)
		close(l->fd);
	l->fd = fd;
	l->ino = st.st_ino;
	return 0;
}

static int open_log(struct evlog *l, bool truncate)
{
	int fd = open(l->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW |
					(truncate ? O_TRUNC : 0),
		      0600);
	int err = fd < 0 ? -errno : adopt(l, fd);

	return err ? nsg_fail(-err, "%s: %s", l->path, strerror(-err)) : 0;
}

int evlog_try_collect(struct evlog *l)
{
	int err = mkdir_p(l->dir, 0700);

	if (err)
		return nsg_fail(-err, "%s: %s", l->dir, strerror(-err));
	if (l->lock_fd < 0) {
		l->lock_fd = lockfile_open(l->lock, false);
		if (l->lock_fd < 0)
			return l->lock_fd;
	}
	if (flock(l->lock_fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno == EWOULDBLOCK)
			return 0;
		return nsg_fail(errno, "%s: flock: %s", l->lock, strerror(errno));
	}
	/* Ours: write where the last collector stopped, numbering on (from
	 * the old file when it stopped right after a rotation). */
	l->seq = last_seq(l->path) ?: last_seq(l->old);
	err = open_log(l, false);
	if (err)
		return err;
	evlog_heartbeat(l);
	return 1;
}

void evlog_heartbeat(struct evlog *l)
{
	if (l->fd >= 0)
		futimens(l->fd, NULL);
}

bool evlog_collector_idle(const struct evlog *l, time_t secs, char *who, size_t len)
{
	struct stat st;

	if (stat(l->path, &st) == 0 && time(NULL) - st.st_mtime < secs)
		return false;
	if (l->lock_fd < 0 || fstat(l->lock_fd, &st) < 0)
		snprintf(who, len, "an unknown process");
	else
		lockfile_holders("/proc", st.st_dev, st.st_ino, who, len);
	return true;
}

int evlog_append(struct evlog *l, struct jv *o)
{
	cleanup_free char *text = NULL;
	struct stat st;
	size_t len;

	jv_remove(o, "seq");
	if (!json_add_u64(o, "seq", ++l->seq))
		return nsg_fail(ENOMEM, "out of memory");
	text = jv_format(o);
	jv_remove(o, "seq");
	if (!text)
		return nsg_fail(ENOMEM, "out of memory");
	len = strlen(text);
	text[len] = '\n'; /* the NUL becomes the newline: one write, one line */
	if (write(l->fd, text, len + 1) != (ssize_t)(len + 1))
		return nsg_fail(errno ?: EIO, "%s: %s", l->path, strerror(errno ?: EIO));
	text[len] = '\0';
	if (fstat(l->fd, &st) == 0 && (size_t)st.st_size >= l->max) {
		/* Followers keep reading the old file through their fd. */
		if (rename(l->path, l->old) < 0)
			return nsg_fail(errno, "%s: %s", l->path, strerror(errno));
		return open_log(l, true);
	}
	return 0;
}

int evlog_follow_open(struct evlog *l, bool start)
{
	int fd = open(l->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW), err;

	if (fd < 0)
		return -errno; /* no collector yet: the caller tries again */
	if (!start && lseek(fd, 0, SEEK_END) < 0) {
		err = -errno;
		close(fd);
	} else {
		err = adopt(l, fd);
	}
	if (err)
		return nsg_fail(-err, "%s: %s", l->path, strerror(-err));
	l->len = 0;
	return 0;
}

/* Hand every complete line in l->buf to fn; keep the partial rest. */
static int drain(struct evlog *l, int (*fn)(struct jv *o, unsigned long long lost, void *data),
		 void *data)
{
	size_t start = 0;
	int r = 0;

	for (size_t i = 0; i < l->len && !r; i++) {
		cleanup_jv struct jv *o = NULL;
		unsigned long long seq, lost = 0;

		if (l->buf[i] != '\n')
			continue;
		l->buf[i] = '\0';
		o = jv_parse(l->buf + start, strlen(l->buf + start));
		start = i + 1;
		seq = o ? seq_of(o) : 0;
		if (seq) {
			if (l->seq && seq > l->seq + 1)
				lost = seq - l->seq - 1;
			l->seq = seq;
		}
		r = fn(o, lost, data);
	}
	memmove(l->buf, l->buf + start, l->len - start);
	l->len -= start;
	return r;
}

int evlog_follow_read(struct evlog *l, int (*fn)(struct jv *o, unsigned long long lost, void *data),
		      void *data)
{
	struct stat st;
	ssize_t n;
	int r;

	/* Bounded, so that a flood never keeps the caller from its signals. */
	for (int rounds = 0; rounds < 64; rounds++) {
		if (l->cap - l->len < 4096) {
			size_t cap = l->cap ? l->cap * 2 : 65536;
			char *b;

			/* A line longer than a log file is no line of ours. */
			if (cap > 2 * (size_t)EVLOG_MAX) {
				l->len = 0;
				cap = l->cap;
			}
			b = realloc(l->buf, cap);
			if (!b)
				return nsg_fail(ENOMEM, "out of memory");
			l->buf = b;
			l->cap = cap;
		}
		n = read(l->fd, l->buf + l->len, l->cap - l->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return nsg_fail(errno, "%s: %s", l->path, strerror(errno));
		if (n > 0) {
			l->len += n;
			r = drain(l, fn, data);
			if (r)
				return r;
			continue;
		}
		/* At the end: rotated meanwhile?  Then on to the new file. */
		if (stat(l->path, &st) < 0 || st.st_ino == l->ino)
			return 0;
		{
			int fd = open(l->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

			if (fd < 0)
				return 0;
			/* A line written to the old file just before the rename. */
			n = read(l->fd, l->buf + l->len, l->cap - l->len);
			if (n > 0) {
				l->len += n;
				r = drain(l, fn, data);
				if (r) {
					close(fd);
					return r;
				}
			}
			if (adopt(l, fd) < 0)
				return 0;
		}
	}
	return 0;
}

void evlog_close(struct evlog *l)
{
	if (l->fd >= 0)
		close(l->fd);
	if (l->lock_fd >= 0)
		close(l->lock_fd); /* and with it the collector's lock */
	free(l->buf);
	l->fd = l->lock_fd = -1;
	l->buf = NULL;
	l->len = l->cap = 0;
}
