// SPDX-License-Identifier: GPL-2.0-or-later
/* Whole files: read under a size bound, written atomically; directory chains. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/uio.h>
#include <linux/magic.h>

#include "fileio.h"
#include "log.h"
#include "util.h"

/* First allocation: most files read here are a few KiB. */
#define READ_CAPPED_CHUNK (64 * 1024)

int read_capped(int fd, size_t max, char **buf_out, size_t *len_out)
{
	cleanup_free char *buf = NULL;
	size_t len = 0, cap = 0;
	ssize_t r;

	*buf_out = NULL;
	*len_out = 0;
	if (max > SIZE_MAX / 2 - 1)
		return -EINVAL;
	for (;;) {
		if (len == cap) {
			char *nbuf;

			/* One byte over the bound tells a file of exactly the bound apart. */
			if (cap > max)
				return -EFBIG;
			cap = cap ? cap * 2 : READ_CAPPED_CHUNK;
			if (cap > max + 1)
				cap = max + 1;
			nbuf = realloc(buf, cap + 1); /* + the terminator */
			if (!nbuf)
				return -ENOMEM;
			buf = nbuf;
		}
		r = read(fd, buf + len, cap - len);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			break;
		len += r;
	}
	buf[len] = '\0';
	*buf_out = steal_pointer(&buf);
	*len_out = len;
	return 0;
}

int mkdir_p(const char *path, mode_t mode)
{
	cleanup_free char *p = strdup(path);
	char *s;

	if (!p)
		return nsg_fail(ENOMEM, "out of memory");
	if (!p[0])
		return nsg_fail(EINVAL, "mkdir: empty path");
	/* Almost always there already: one call, not one per component (#32). */
	if (mkdir(p, mode) == 0 || errno == EEXIST)
		return 0;
	if (errno != ENOENT)
		return nsg_fail(errno, "mkdir %s: %s", p, strerror(errno));
	for (s = p + 1;; s++) {
		if (*s != '/' && *s)
			continue;
		char c = *s;

		*s = '\0';
		if (mkdir(p, mode) < 0 && errno != EEXIST)
			return nsg_fail(errno, "mkdir %s: %s", p, strerror(errno));
		if (!c)
			break;
		*s = c;
	}
	return 0;
}

int write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t r = write(fd, buf, len);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += r;
		len -= r;
	}
	return 0;
}

int fsync_dir(const char *dir)
{
	struct statfs sfs;
	cleanup_close int fd = -1;

	/* tmpfs (/run) keeps nothing across a crash: one statfs, not open + fsync + close. */
	if (statfs(dir, &sfs) == 0 && sfs.f_type == TMPFS_MAGIC)
		return 0;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fsync(fd) < 0)
		return nsg_fail(errno, "fsync %s: %s", dir, strerror(errno));
	return 0;
}

/*
 * tmpfs (/run) keeps nothing across a crash: fsync there is a syscall for
 * nothing.  Anything else, or a file system that cannot tell, is synced.
 */
static bool on_tmpfs(int fd)
{
	struct statfs sfs;

	return fstatfs(fd, &sfs) == 0 && sfs.f_type == TMPFS_MAGIC;
}

/* text then tail, in one call when the kernel takes both at once (a record does). */
static int write_two(int fd, const char *text, const char *tail)
{
	size_t a = strlen(text), b = strlen(tail);
	struct iovec iov[2] = { { (void *)text, a }, { (void *)tail, b } };
	ssize_t r;

	do
		r = writev(fd, iov, 2);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	if ((size_t)r >= a)
		return write_all(fd, tail + (r - a), b - (r - a));
	return write_all(fd, text + r, a - r) ?: write_all(fd, tail, b);
}

static int write_atomic(const char *dir, const char *name, const char *text, const char *tail,
			mode_t dir_mode, mode_t file_mode)
{
	cleanup_free char *tmp = NULL, *path = NULL;
	cleanup_close int fd = -1;
	bool durable;
	int err = 0;

	if (!dir[0])
		return nsg_fail(EINVAL, "write %s: empty directory name", name);
	/* Not named after the file: "<id>.json" fits NAME_MAX, a longer name may not. */
	if (asprintf(&tmp, "%s/.tmp.XXXXXX", dir) < 0) {
		tmp = NULL;
		return nsg_fail(ENOMEM, "out of memory");
	}
	if (asprintf(&path, "%s/%s", dir, name) < 0) {
		path = NULL;
		return nsg_fail(ENOMEM, "out of memory");
	}
	/* The directory is almost always there: made on ENOENT. */
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		err = mkdir_p(dir, dir_mode);
		if (err < 0)
			return err;
		strcpy(tmp + strlen(tmp) - 6, "XXXXXX");
		fd = mkostemp(tmp, O_CLOEXEC);
	}
	if (fd < 0)
		return nsg_fail(errno, "create %s: %s", tmp, strerror(errno));
	durable = !on_tmpfs(fd);
	err = write_two(fd, text, tail);
	if (!err && fchmod(fd, file_mode) < 0)
		err = -errno;
	if (!err && durable && fsync(fd) < 0)
		err = -errno;
	if (!err && close(steal_fd(&fd)) < 0)
		err = -errno;
	if (!err && rename(tmp, path) < 0)
		err = -errno;
	if (err) {
		unlink(tmp);
		return nsg_fail(-err, "write %s: %s", path, strerror(-err));
	}
	return durable ? fsync_dir(dir) : 0;
}

int write_file_atomic(const char *dir, const char *name, const char *text, mode_t dir_mode,
		      mode_t file_mode)
{
	return write_atomic(dir, name, text, "\n", dir_mode, file_mode);
}

int write_file_exact(const char *dir, const char *name, const char *text, mode_t dir_mode,
		     mode_t file_mode)
{
	return write_atomic(dir, name, text, "", dir_mode, file_mode);
}

/*
 * path cleaned as the runtimes do (Go's filepath.Clean): no empty or "."
 * components, ".." taken back, no trailing '/'.  Absolute stays absolute
 * ("/" for the root); a relative one that climbs out keeps its "..".
 */
char *path_clean(const char *path)
{
	size_t n = strlen(path), len = 0;
	char *out = malloc(n + 2);
	const char *p = path;
	bool abs = path[0] == '/';

	if (!out)
		return NULL;
	while (*p) {
		const char *e = strchrnul(p, '/');
		size_t k = e - p;

		if (k == 0 || (k == 1 && p[0] == '.')) {
			/* nothing */
		} else if (k == 2 && p[0] == '.' && p[1] == '.' && len &&
			   !(len >= 2 && strncmp(out + len - 2, "..", 2) == 0 &&
			     (len == 2 || out[len - 3] == '/'))) {
			while (len && out[len - 1] != '/')
				len--;
			if (len)
				len--;
		} else if (!(k == 2 && p[0] == '.' && p[1] == '.' && abs)) {
			if (len || abs)
				out[len++] = '/';
			memcpy(out + len, p, k);
			len += k;
		}
		p = *e ? e + 1 : e;
	}
	if (abs && len == 0)
		out[len++] = '/';
	if (!abs && len && out[0] == '/')
		memmove(out, out + 1, len--);
	out[len] = '\0';
	return out;
}
