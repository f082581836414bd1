// SPDX-License-Identifier: GPL-2.0-or-later
/* Learn mode: a container's usage -> the annotations it needs (learn.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cjson/cJSON.h>

#include "learn.h"
#include "log.h"
#include "oci.h"
#include "policy.h"
#include "util.h"

#define SUGGESTION_MAX 4096

/* FOLD: into the shared file helpers (issue 16 item 3) once they land. */
static int write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t r = write(fd, buf, len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		buf += r;
		len -= r;
	}
	return 0;
}

static int mkdir_p(const char *dir, mode_t mode)
{
	cleanup_free char *p = strdup(dir);

	if (!p)
		return -ENOMEM;
	for (char *s = p + 1;; s++) {
		char c = *s;

		if (c && c != '/')
			continue;
		*s = '\0';
		if (mkdir(p, mode) < 0 && errno != EEXIST)
			return -errno;
		if (!c)
			return 0;
		*s = c;
	}
}

static int read_capped(int fd, size_t max, char **buf_out, size_t *len_out)
{
	cleanup_free char *buf = malloc(max + 1);
	size_t len = 0;
	ssize_t n;

	if (!buf)
		return -ENOMEM;
	while (len <= max) {
		n = read(fd, buf + len, max + 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		len += n;
	}
	if (len > max)
		return -EFBIG;
	buf[len] = '\0';
	*len_out = len;
	*buf_out = steal_pointer(&buf);
	return 0;
}

static __u32 usage_deepest(const struct nsguard_usage *used)
{
	struct nsguard_policy p = { .depths = used->depths };

	return policy_deepest(&p);
}

int learn_suggest(const char *id, const struct nsguard_usage *used, char **text)
{
	cJSON *doc = cJSON_CreateObject(), *ann = NULL;
	char depth[16], count[16];
	bool none = used->created == 0;

	*text = NULL;
	snprintf(depth, sizeof(depth), "%u", usage_deepest(used));
	snprintf(count, sizeof(count), "%u", used->created);
	if (doc && cJSON_AddStringToObject(doc, "id", id) &&
	    cJSON_AddNumberToObject(doc, "created", used->created) &&
	    cJSON_AddNumberToObject(doc, "deepest", usage_deepest(used)) &&
	    (ann = cJSON_AddObjectToObject(doc, "annotations")) &&
	    cJSON_AddStringToObject(ann, ANNOTATION_MODE, none ? "deny" : "allow") &&
	    (none || (cJSON_AddStringToObject(ann, ANNOTATION_MAX_DEPTH, depth) &&
		      cJSON_AddStringToObject(ann, ANNOTATION_MAX_COUNT, count))))
		*text = cJSON_PrintUnformatted(doc);
	cJSON_Delete(doc);
	return *text ? 0 : nsg_fail(ENOMEM, "out of memory");
}

static int file_of(const char *dir, const char *id, char **path)
{
	/* The id names a file in the admin's directory: no '/', no leading '.'. */
	if (!oci_id_valid(id))
		return nsg_fail(EINVAL, "invalid container id \"%.64s\"", id);
	if (asprintf(path, "%s/%s.json", dir, id) < 0) {
		*path = NULL;
		return nsg_fail(ENOMEM, "out of memory");
	}
	return 0;
}

int learn_write(const char *dir, const char *id, const struct nsguard_usage *used)
{
	cleanup_free char *text = NULL, *path = NULL, *tmp = NULL;
	cleanup_close int fd = -1;
	size_t len;
	int err = 0;

	err = file_of(dir, id, &path) ?: learn_suggest(id, used, &text);
	if (err)
		return err;
	if (asprintf(&tmp, "%s/.learn.XXXXXX", dir) < 0) {
		tmp = NULL;
		return nsg_fail(ENOMEM, "out of memory");
	}
	err = mkdir_p(dir, 0755);
	if (err)
		return nsg_fail(-err, "cannot create %s: %s", dir, strerror(-err));
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return nsg_fail(errno, "create %s: %s", tmp, strerror(errno));
	len = strlen(text);
	text[len] = '\n'; /* cJSON's buffer has room: its terminator */
	err = write_all(fd, text, len + 1);
	if (!err && fchmod(fd, 0644) < 0)
		err = -errno;
	if (!err && fsync(fd) < 0)
		err = -errno;
	if (!err && close(steal_fd(&fd)) < 0)
		err = -errno;
	if (!err && rename(tmp, path) < 0)
		err = -errno;
	if (err) {
		unlink(tmp);
		return nsg_fail(-err, "write %s: %s", path, strerror(-err));
	}
	return 0;
}

int learn_read(const char *dir, const char *id, char **text)
{
	cleanup_free char *path = NULL;
	cleanup_close int fd = -1;
	size_t len = 0;
	int err = 0;

	*text = NULL;
	err = file_of(dir, id, &path);
	if (err)
		return err;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0 && errno == ENOENT)
		return nsg_fail(ENOENT, "no suggestion for %s in %s (was it run with %s=learn, "
					"and has it stopped?)",
				id, dir, ANNOTATION_MODE);
	if (fd < 0)
		return nsg_fail(errno, "open %s: %s", path, strerror(errno));
	err = read_capped(fd, SUGGESTION_MAX, text, &len);
	if (err)
		return nsg_fail(-err, "read %s: %s", path, strerror(-err));
	return 0;
}
