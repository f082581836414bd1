// SPDX-License-Identifier: GPL-2.0-or-later
/* The hooks' outcomes, counted across processes (outcomes.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "fileio.h"
#include "lockfile.h"
#include "log.h"
#include "outcomes.h"
#include "util.h"

static const char *const result_names[HOOK_RESULT_COUNT] = {
	[HOOK_GUARDED] = "guarded",
	[HOOK_REFUSED] = "refused",
	[HOOK_OPENED] = "opened",
};

static const char *const reason_names[HOOK_REASON_COUNT] = {
	[HOOK_REASON_NONE] = "none",
	[HOOK_REASON_PRIVILEGES] = "privileges",
	[HOOK_REASON_STATE] = "state",
	[HOOK_REASON_CONFIG] = "config",
	[HOOK_REASON_ANNOTATION] = "annotation",
	[HOOK_REASON_SCOPE] = "scope",
	[HOOK_REASON_HOST_CAPS] = "host-capabilities",
	[HOOK_REASON_SHARED_CGROUP] = "shared-cgroup",
	[HOOK_REASON_ATTACH] = "attach",
};

const char *hook_result_name(enum hook_result r)
{
	return (unsigned)r < HOOK_RESULT_COUNT ? result_names[r] : "?";
}

const char *hook_reason_name(enum hook_reason r)
{
	return (unsigned)r < HOOK_REASON_COUNT ? reason_names[r] : "?";
}

static int index_of(const char *const *names, int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], s) == 0)
			return i;
	return -1;
}

/* The counts in the text; lines nsguard did not write are skipped. */
static void parse(const char *text, unsigned long long c[HOOK_RESULT_COUNT][HOOK_REASON_COUNT])
{
	char res[32], why[32];
	unsigned long long v;
	int used = 0;

	memset(c, 0, sizeof(unsigned long long) * HOOK_RESULT_COUNT * HOOK_REASON_COUNT);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		int r, w;

		if (sscanf(p, "%31s %31s %llu%n", res, why, &v, &used) != 3)
			continue;
		r = index_of(result_names, HOOK_RESULT_COUNT, res);
		w = index_of(reason_names, HOOK_REASON_COUNT, why);
		if (r >= 0 && w >= 0)
			c[r][w] = v;
	}
}

/* Read all of fd (at offset 0) into *text, malloc'd and NUL-terminated. */
static int slurp(int fd, char **text, size_t *len)
{
	return read_capped(fd, 1 << 16, text, len);
}

int outcomes_read(const char *path,
		  unsigned long long counts[HOOK_RESULT_COUNT][HOOK_REASON_COUNT])
{
	cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	cleanup_free char *text = NULL;
	size_t len = 0;
	int err;

	parse("", counts);
	if (fd < 0)
		return errno == ENOENT ? 0 : nsg_fail(errno, "%s: %s", path, strerror(errno));
	/* A writer holds the lock only while it rewrites the file: a longer hold is no writer's. */
	err = lockfile_wait(fd, path, LOCK_SH, OUTCOMES_READ_WAIT_MS, "the hooks' outcome counts are not read");
	if (err)
		return err;
	err = slurp(fd, &text, &len);
	if (err)
		return nsg_fail(-err, "%s: %s", path, strerror(-err));
	parse(text, counts);
	return 0;
}

int outcomes_add(const char *path, enum hook_result result, enum hook_reason reason)
{
	unsigned long long c[HOOK_RESULT_COUNT][HOOK_REASON_COUNT];
	cleanup_free char *text = NULL;
	cleanup_close int fd = -1;
	char out[4096];
	size_t len = 0, old_len = 0;
	int err;

	if ((unsigned)result >= HOOK_RESULT_COUNT || (unsigned)reason >= HOOK_REASON_COUNT)
		return nsg_fail(EINVAL, "no such hook outcome");
	/* Not made here: a directory nsguard has not set up is not counted in. */
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, lockfile_mode);
	if (fd < 0 && (errno == ENOENT || errno == EACCES))
		return -errno;
	if (fd < 0)
		return nsg_fail(errno, "%s: %s", path, strerror(errno));
	/* Bounded: a count is not worth holding a container's start for. */
	err = lockfile_wait(fd, path, LOCK_EX, OUTCOMES_ADD_WAIT_MS, "not counted");
	if (err)
		return err;
	err = slurp(fd, &text, &old_len);
	if (err)
		return nsg_fail(-err, "%s: %s", path, strerror(-err));
	parse(text, c);
	c[result][reason]++;
	for (int r = 0; r < HOOK_RESULT_COUNT; r++)
		for (int w = 0; w < HOOK_REASON_COUNT; w++)
			if (c[r][w])
				len += snprintf(out + len, sizeof(out) - len, "%s %s %llu\n",
						result_names[r], reason_names[w], c[r][w]);
	/*
	 * Rewritten in place under the lock (readers take it shared): the new
	 * text first, then the length, so a hook killed in between (a runtime's
	 * timeout) leaves counts, never an empty file.  Counts only grow, so
	 * the new text is never shorter than a line of the old; the length is
	 * cut only when the old text held more (lines nsguard did not write).
	 */
	if (pwrite(fd, out, len, 0) != (ssize_t)len || (len < old_len && ftruncate(fd, len) < 0))
		return nsg_fail(errno ?: EIO, "%s: %s", path, strerror(errno ?: EIO));
	return 0;
}
