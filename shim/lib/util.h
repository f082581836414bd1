/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Cleanup attributes and small helpers shared by every shim file. */
#ifndef NSGUARD_UTIL_H
#define NSGUARD_UTIL_H

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static inline void cleanup_freep(void *p)
{
	free(*(void **)p);
}

static inline void cleanup_closep(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}

static inline void cleanup_fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

static inline void cleanup_closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}

#define cleanup_free __attribute__((cleanup(cleanup_freep)))
#define cleanup_closedir __attribute__((cleanup(cleanup_closedirp)))
#define cleanup_close __attribute__((cleanup(cleanup_closep)))
#define cleanup_fclose __attribute__((cleanup(cleanup_fclosep)))

/* Hand ownership over: the cleanup variable no longer frees it. */
#define steal_pointer(pp) ({ __typeof__(*(pp)) _p = *(pp); *(pp) = NULL; _p; })
#define steal_fd(fdp) ({ int _fd = *(fdp); *(fdp) = -1; _fd; })

/* A decimal __u64, or one in [0, max]; 0 or -EINVAL. */
static inline int parse_u64(const char *s, unsigned long long *out)
{
	char *end = NULL;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*out = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	return 0;
}

static inline int parse_uint(const char *s, unsigned int max, unsigned int *out)
{
	unsigned long long v = 0;

	if (parse_u64(s, &v) < 0 || v > max)
		return -EINVAL;
	*out = (unsigned int)v;
	return 0;
}

#endif
