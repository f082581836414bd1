// SPDX-License-Identifier: GPL-2.0-or-later
/* Learn mode: a container's usage -> the annotations it needs (learn.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fileio.h"
#include "json.h"
#include "learn.h"
#include "log.h"
#include "oci.h"
#include "policy.h"
#include "util.h"

#define SUGGESTION_MAX 4096

int learn_suggest(const struct nsguard_record *rec, const struct nsguard_usage *used, char **text)
{
	cleanup_jv struct jv *doc = jv_new_object();
	struct jv *ann = NULL;
	char depth[16], count[16];
	bool none = used->created == 0;

	*text = NULL;
	snprintf(depth, sizeof(depth), "%u", policy_deepest(used->depths));
	snprintf(count, sizeof(count), "%u", used->created);
	/* Which instance it was: the record's cgroup id, init pid and start time. */
	if (doc && jv_add_string(doc, "id", rec->id) &&
	    jv_add_number(doc, "cgroup_id", (double)rec->cgroup_id) &&
	    (!rec->pid || (jv_add_number(doc, "pid", rec->pid) &&
			   jv_add_number(doc, "start_time", (double)rec->start_time))) &&
	    jv_add_number(doc, "created", used->created) &&
	    jv_add_number(doc, "deepest", policy_deepest(used->depths)) &&
	    (ann = jv_add_object(doc, "annotations")) &&
	    jv_add_string(ann, ANNOTATION_MODE, none ? "deny" : "allow") &&
	    (none || (jv_add_string(ann, ANNOTATION_MAX_DEPTH, depth) &&
		      jv_add_string(ann, ANNOTATION_MAX_COUNT, count))))
		*text = jv_format(doc);
	return *text ? 0 : nsg_fail(ENOMEM, "out of memory");
}

int learn_write(const char *dir, const struct nsguard_record *rec,
		const struct nsguard_usage *used)
{
	cleanup_free char *text = NULL, *name = NULL;
	int err = 0;

	/* The id names a file in the admin's directory: no '/', no leading '.'. */
	if (!oci_id_valid(rec->id))
		return nsg_fail(EINVAL, "invalid container id \"%.64s\"", rec->id);
	err = learn_suggest(rec, used, &text);
	if (err)
		return err;
	if (asprintf(&name, "%s@%llu.json", rec->id, (unsigned long long)rec->cgroup_id) < 0) {
		name = NULL;
		return nsg_fail(ENOMEM, "out of memory");
	}
	/* Readable by the admin's tools; the directory is the admin's. */
	return write_file_atomic(dir, name, text, 0755, 0644);
}

/*
 * Whether name is a suggestion file of id: <id>@<decimal cgroup id>.json,
 * or <id>.json as nsguard wrote it before there was one file per instance.
 */
static bool name_of_id(const char *name, const char *id, __u64 *cgroup_id)
{
	size_t n = strlen(id);
	const char *p = name + n, *end;
	unsigned long long v = 0;

	*cgroup_id = 0;
	if (strncmp(name, id, n) != 0)
		return false;
	if (strcmp(p, ".json") == 0)
		return true;
	if (*p++ != '@' || *p < '0' || *p > '9')
		return false;
	for (end = p; *end >= '0' && *end <= '9'; end++) {
		if (v > (~0ull - 9) / 10)
			return false;
		v = v * 10 + (unsigned)(*end - '0');
	}
	if (strcmp(end, ".json") != 0)
		return false;
	*cgroup_id = v;
	return true;
}

static int newest_first(const void *pa, const void *pb)
{
	const struct learn_found *a = pa, *b = pb;

	if (a->mtime.tv_sec != b->mtime.tv_sec)
		return a->mtime.tv_sec > b->mtime.tv_sec ? -1 : 1;
	if (a->mtime.tv_nsec != b->mtime.tv_nsec)
		return a->mtime.tv_nsec > b->mtime.tv_nsec ? -1 : 1;
	if (a->cgroup_id != b->cgroup_id)
		return a->cgroup_id > b->cgroup_id ? -1 : 1;
	return strcmp(a->name, b->name);
}

void learn_found_free(struct learn_found *found, size_t n)
{
	for (size_t i = 0; found && i < n; i++) {
		free(found[i].text);
		free(found[i].name);
	}
	free(found);
}

int learn_list(const char *dir, const char *id, struct learn_found **out, size_t *n_out)
{
	struct learn_found *found = NULL, *more;
	size_t n = 0, cap = 0;
	struct dirent *de;
	struct stat st;
	__u64 cgid = 0;
	DIR *d = NULL;
	int err = 0;

	*out = NULL;
	*n_out = 0;
	if (!oci_id_valid(id))
		return nsg_fail(EINVAL, "invalid container id \"%.64s\"", id);
	d = opendir(dir);
	if (!d && errno != ENOENT)
		return nsg_fail(errno, "open %s: %s", dir, strerror(errno));
	while (d && (errno = 0, de = readdir(d))) {
		if (!name_of_id(de->d_name, id, &cgid))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno == ENOENT) /* replaced or removed since readdir */
				continue;
			err = nsg_fail(errno, "stat %s/%s: %s", dir, de->d_name, strerror(errno));
			break;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 4;
			more = realloc(found, cap * sizeof(*found));
			if (!more) {
				err = nsg_fail(ENOMEM, "out of memory");
				break;
			}
			found = more;
		}
		memset(&found[n], 0, sizeof(found[n]));
		found[n].name = strdup(de->d_name);
		if (!found[n].name) {
			err = nsg_fail(ENOMEM, "out of memory");
			break;
		}
		found[n].cgroup_id = cgid;
		found[n].mtime = st.st_mtim;
		n++;
	}
	if (!err && d && errno)
		err = nsg_fail(errno, "read %s: %s", dir, strerror(errno));
	if (d)
		closedir(d);
	if (!err && n == 0)
		err = nsg_fail(ENOENT, "no suggestion for %s in %s (was it run with %s=learn, "
				       "and has it stopped?)",
			       id, dir, ANNOTATION_MODE);
	if (err) {
		learn_found_free(found, n);
		return err;
	}
	qsort(found, n, sizeof(*found), newest_first);
	*out = found;
	*n_out = n;
	return 0;
}

int learn_load(const char *dir, struct learn_found *f)
{
	cleanup_free char *path = NULL;
	cleanup_close int fd = -1;
	struct stat st;
	size_t len = 0;
	int err = 0;

	if (f->text)
		return 0;
	if (asprintf(&path, "%s/%s", dir, f->name) < 0) {
		path = NULL;
		return nsg_fail(ENOMEM, "out of memory");
	}
	/* The admin's directory; still, never a link, never a FIFO. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st) < 0)
		return nsg_fail(errno, "open %s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return nsg_fail(EINVAL, "%s is not a regular file: remove it", path);
	err = read_capped(fd, SUGGESTION_MAX, &f->text, &len);
	if (err)
		return nsg_fail(-err, "read %s: %s", path, strerror(-err));
	return 0;
}

int learn_read(const char *dir, const char *id, char **text)
{
	struct learn_found *found = NULL;
	size_t n = 0;
	int err = learn_list(dir, id, &found, &n);

	*text = NULL;
	err = err ?: learn_load(dir, &found[0]);
	if (err) {
		learn_found_free(found, n);
		return err;
	}
	*text = found[0].text;
	found[0].text = NULL;
	learn_found_free(found, n);
	return 0;
}
