// SPDX-License-Identifier: GPL-2.0-or-later
/* Learn mode: a container's usage -> the annotations it needs (learn.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "fileio.h"
#include "json.h"
#include "learn.h"
#include "log.h"
#include "oci.h"
#include "policy.h"
#include "util.h"

#define SUGGESTION_MAX 4096

int learn_suggest(const char *id, const struct nsguard_usage *used, char **text)
{
	cleanup_cjson cJSON *doc = cJSON_CreateObject();
	cJSON *ann = NULL;
	char depth[16], count[16];
	bool none = used->created == 0;

	*text = NULL;
	snprintf(depth, sizeof(depth), "%u", policy_deepest(used->depths));
	snprintf(count, sizeof(count), "%u", used->created);
	if (doc && cJSON_AddStringToObject(doc, "id", id) &&
	    cJSON_AddNumberToObject(doc, "created", used->created) &&
	    cJSON_AddNumberToObject(doc, "deepest", policy_deepest(used->depths)) &&
	    (ann = cJSON_AddObjectToObject(doc, "annotations")) &&
	    cJSON_AddStringToObject(ann, ANNOTATION_MODE, none ? "deny" : "allow") &&
	    (none || (cJSON_AddStringToObject(ann, ANNOTATION_MAX_DEPTH, depth) &&
		      cJSON_AddStringToObject(ann, ANNOTATION_MAX_COUNT, count))))
		*text = cJSON_PrintUnformatted(doc);
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
	cleanup_free char *text = NULL, *path = NULL, *name = NULL;
	int err = 0;

	err = file_of(dir, id, &path) ?: learn_suggest(id, used, &text);
	if (err)
		return err;
	if (asprintf(&name, "%s.json", id) < 0) {
		name = NULL;
		return nsg_fail(ENOMEM, "out of memory");
	}
	/* Readable by the admin's tools; the directory is the admin's. */
	return write_file_atomic(dir, name, text, 0755, 0644);
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
