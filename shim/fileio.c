// SPDX-License-Identifier: GPL-2.0-or-later
/* Reading whole files under a size bound, creating directory chains. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

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
