/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Per-container records, /run/nsguard/containers/<id>.json:
 *   {"version":1,"id":"web","cgroup":"/a/b","cgroup_id":"1234",
 *    "link_pin":"/sys/fs/bpf/nsguard/links/1234",
 *    "pid":4321,"start_time":"5678",
 *    "policy":{"mode":"allow","max_depth":2,"base_level":0,"errno":1,
 *              "cgroup_id":"1234"}}
 * 64-bit ids are decimal strings: a JSON number is a double and would round
 * ids above 2^53.  "pid" and "start_time" (the container's init, which
 * poststop looks for) are left out when unknown (nsguard attach); "shared"
 * (true) marks a cgroup the admin let other processes share.  Writes are
 * atomic (temp file, fsync, rename, fsync dir) so a crash never leaves a half
 * record for poststop or gc to trip over.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "fileio.h"
#include "json.h"
#include "log.h"
#include "oci.h"
#include "policy.h"
#include "record.h"
#include "util.h"

#define RECORD_VERSION 1
#define RECORD_FILE_MAX (64 * 1024)

void record_free(struct nsguard_record *rec)
{
	if (!rec)
		return;
	free(rec->id);
	free(rec->cgroup_path);
	free(rec->link_pin);
	memset(rec, 0, sizeof(*rec));
}

static int fsync_dir(const char *dir)
{
	cleanup_close int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0 || fsync(fd) < 0)
		return nsg_fail(errno, "fsync %s: %s", dir, strerror(errno));
	return 0;
}

static int check_id(const char *id)
{
	if (!oci_id_valid(id))
		return nsg_fail(EINVAL, "invalid record id \"%.64s\"", id ? id : "(null)");
	return 0;
}

static char *u64_str(__u64 v)
{
	char *s = NULL;

	if (asprintf(&s, "%" PRIu64, (uint64_t)v) < 0)
		return NULL;
	return s;
}

static cJSON *record_to_json(const struct nsguard_record *rec)
{
	cleanup_free char *cg_id = u64_str(rec->cgroup_id);
	cleanup_free char *pol_id = u64_str(rec->policy.cgroup_id);
	cleanup_free char *start = NULL;
	cleanup_cjson cJSON *doc = cJSON_CreateObject();
	cJSON *pol;

	if (!doc || !cg_id || !pol_id)
		return NULL;
	if (!cJSON_AddNumberToObject(doc, "version", RECORD_VERSION) ||
	    !cJSON_AddStringToObject(doc, "id", rec->id) ||
	    !cJSON_AddStringToObject(doc, "cgroup", rec->cgroup_path) ||
	    !cJSON_AddStringToObject(doc, "cgroup_id", cg_id))
		return NULL;
	if (!(rec->link_pin ? cJSON_AddStringToObject(doc, "link_pin", rec->link_pin)
			    : cJSON_AddNullToObject(doc, "link_pin")))
		return NULL;
	if (rec->pid && (!cJSON_AddNumberToObject(doc, "pid", rec->pid) ||
			 !(start = u64_str(rec->start_time)) ||
			 !cJSON_AddStringToObject(doc, "start_time", start)))
		return NULL;
	if (rec->shared && !cJSON_AddTrueToObject(doc, "shared"))
		return NULL;
	pol = cJSON_AddObjectToObject(doc, "policy");
	if (!pol || !cJSON_AddStringToObject(pol, "mode", policy_mode_name(rec->policy.mode)) ||
	    !cJSON_AddNumberToObject(pol, "max_depth", rec->policy.max_depth) ||
	    !cJSON_AddNumberToObject(pol, "base_level", rec->policy.base_level) ||
	    !cJSON_AddNumberToObject(pol, "errno", rec->policy.err) ||
	    !cJSON_AddStringToObject(pol, "cgroup_id", pol_id))
		return NULL;
	return steal_pointer(&doc);
}

static int write_all(int fd, const char *buf, size_t len)
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

int record_write(const char *dir, const struct nsguard_record *rec)
{
	cleanup_cjson cJSON *doc = NULL;
	cleanup_free char *text = NULL;
	cleanup_free char *tmp = NULL;
	cleanup_free char *path = NULL;
	cleanup_close int fd = -1;
	int err = 0;

	err = check_id(rec->id);
	if (err < 0)
		return err;
	if (!rec->cgroup_path || rec->policy.mode >= NSGUARD_MODE_COUNT)
		return nsg_fail(EINVAL, "record %s: no cgroup path or invalid mode", rec->id);
	doc = record_to_json(rec);
	text = doc ? cJSON_Print(doc) : NULL;
	if (!text)
		return nsg_fail(ENOMEM, "record %s: out of memory", rec->id);
	/* Not named after the id: "<id>.json" fits NAME_MAX, a longer name may not. */
	if (asprintf(&tmp, "%s/.record.XXXXXX", dir) < 0) {
		tmp = NULL;
		return nsg_fail(ENOMEM, "record %s: out of memory", rec->id);
	}
	if (asprintf(&path, "%s/%s.json", dir, rec->id) < 0) {
		path = NULL;
		return nsg_fail(ENOMEM, "record %s: out of memory", rec->id);
	}
	if (!dir[0])
		return nsg_fail(EINVAL, "empty record directory");
	err = mkdir_p(dir, 0700);
	if (err < 0)
		return err;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return nsg_fail(errno, "create %s: %s", tmp, strerror(errno));
	err = write_all(fd, text, strlen(text));
	if (err == 0)
		err = write_all(fd, "\n", 1);
	if (err == 0 && fsync(fd) < 0)
		err = -errno;
	if (err == 0 && close(steal_fd(&fd)) < 0)
		err = -errno;
	if (err == 0 && rename(tmp, path) < 0)
		err = -errno;
	if (err < 0) {
		unlink(tmp);
		return nsg_fail(-err, "write %s: %s", path, strerror(-err));
	}
	return fsync_dir(dir);
}

static int get_str(const cJSON *obj, const char *key, bool nullable, char **out)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (nullable && cJSON_IsNull(it))
		return 0;
	if (!cJSON_IsString(it) || !it->valuestring)
		return -EINVAL;
	*out = strdup(it->valuestring);
	return *out ? 0 : -ENOMEM;
}

static int get_u32(const cJSON *obj, const char *key, __u32 *out)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (!cJSON_IsNumber(it) || it->valuedouble < 0 || it->valuedouble > UINT32_MAX ||
	    it->valuedouble != (double)(__u32)it->valuedouble)
		return -EINVAL;
	*out = (__u32)it->valuedouble;
	return 0;
}

static int get_u64(const cJSON *obj, const char *key, __u64 *out)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
	const char *s;
	char *end = NULL;
	unsigned long long v;

	if (!cJSON_IsString(it) || !it->valuestring)
		return -EINVAL;
	s = it->valuestring;
	if (s[0] < '0' || s[0] > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

static int mode_from_name(const cJSON *obj, __u32 *mode)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, "mode");
	__u32 m;

	if (!cJSON_IsString(it) || !it->valuestring)
		return -EINVAL;
	for (m = 0; m < NSGUARD_MODE_COUNT; m++) {
		if (strcmp(it->valuestring, policy_mode_name(m)) == 0) {
			*mode = m;
			return 0;
		}
	}
	return -EINVAL;
}

static int record_from_json(const cJSON *doc, struct nsguard_record *rec)
{
	const cJSON *pol = cJSON_GetObjectItemCaseSensitive(doc, "policy"), *it;
	__u32 version = 0;
	int err = 0;

	if (!cJSON_IsObject(doc) || !cJSON_IsObject(pol))
		return -EINVAL;
	if ((err = get_u32(doc, "version", &version)) < 0 || version != RECORD_VERSION ||
	    (err = get_str(doc, "id", false, &rec->id)) < 0 ||
	    (err = get_str(doc, "cgroup", false, &rec->cgroup_path)) < 0 ||
	    (err = get_u64(doc, "cgroup_id", &rec->cgroup_id)) < 0 ||
	    (err = get_str(doc, "link_pin", true, &rec->link_pin)) < 0 ||
	    (err = mode_from_name(pol, &rec->policy.mode)) < 0 ||
	    (err = get_u32(pol, "max_depth", &rec->policy.max_depth)) < 0 ||
	    (err = get_u32(pol, "base_level", &rec->policy.base_level)) < 0 ||
	    (err = get_u32(pol, "errno", &rec->policy.err)) < 0 ||
	    (err = get_u64(pol, "cgroup_id", &rec->policy.cgroup_id)) < 0)
		return err < 0 ? err : -EINVAL;
	it = cJSON_GetObjectItemCaseSensitive(doc, "shared");
	if (it && !cJSON_IsBool(it))
		return -EINVAL;
	rec->shared = cJSON_IsTrue(it);
	if (cJSON_GetObjectItemCaseSensitive(doc, "pid") &&
	    ((err = get_u32(doc, "pid", &rec->pid)) < 0 || rec->pid == 0 || rec->pid > INT32_MAX ||
	     (err = get_u64(doc, "start_time", &rec->start_time)) < 0))
		return -EINVAL;
	return 0;
}

int record_read(const char *dir, const char *id, struct nsguard_record *rec)
{
	cleanup_cjson cJSON *doc = NULL;
	cleanup_free char *path = NULL;
	cleanup_free char *buf = NULL;
	cleanup_close int fd = -1;
	struct nsguard_record r = { 0 };
	size_t len = 0;
	int err = 0;

	memset(rec, 0, sizeof(*rec));
	err = check_id(id);
	if (err < 0)
		return err;
	if (asprintf(&path, "%s/%s.json", dir, id) < 0) {
		path = NULL;
		return nsg_fail(ENOMEM, "out of memory");
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ENOENT)
			return nsg_fail(ENOENT, "no record for %s", id);
		return nsg_fail(errno, "open %s: %s", path, strerror(errno));
	}
	err = read_capped(fd, RECORD_FILE_MAX, &buf, &len);
	if (err == -EFBIG)
		return nsg_fail(EFBIG, "malformed record %s: too large", path);
	if (err == -ENOMEM)
		return nsg_fail(ENOMEM, "out of memory");
	if (err < 0)
		return nsg_fail(-err, "read %s: %s", path, strerror(-err));
	doc = cJSON_ParseWithLength(buf, len);
	if (!doc)
		return nsg_fail(EINVAL, "malformed record %s: invalid JSON", path);
	err = record_from_json(doc, &r);
	if (err == 0 && strcmp(r.id, id) != 0)
		err = -EINVAL;
	if (err < 0) {
		record_free(&r);
		if (err == -ENOMEM)
			return nsg_fail(ENOMEM, "out of memory");
		return nsg_fail(EINVAL, "malformed record %s: missing or invalid fields", path);
	}
	*rec = r;
	return 0;
}

int record_remove(const char *dir, const char *id)
{
	cleanup_free char *path = NULL;
	int err = 0;

	err = check_id(id);
	if (err < 0)
		return err;
	if (asprintf(&path, "%s/%s.json", dir, id) < 0) {
		path = NULL;
		return nsg_fail(ENOMEM, "out of memory");
	}
	if (unlink(path) < 0) {
		if (errno == ENOENT)
			return 0;
		return nsg_fail(errno, "remove %s: %s", path, strerror(errno));
	}
	return fsync_dir(dir);
}

static int filter_record(const struct dirent *de)
{
	size_t n = strlen(de->d_name);

	/* Temp files start with '.', so the id check drops them too. */
	return n > 5 && strcmp(de->d_name + n - 5, ".json") == 0 && de->d_name[0] != '.';
}

int record_foreach(const char *dir, int (*fn)(const struct nsguard_record *rec, void *data),
		   void *data)
{
	struct dirent **names = NULL;
	int n, i, err = 0;

	n = scandir(dir, &names, filter_record, alphasort);
	if (n < 0) {
		if (errno == ENOENT)
			return 0;
		return nsg_fail(errno, "list %s: %s", dir, strerror(errno));
	}
	for (i = 0; i < n; i++) {
		struct nsguard_record rec = { 0 };
		char *id = names[i]->d_name;
		int r;

		if (err < 0)
			continue; /* still free every entry */
		id[strlen(id) - 5] = '\0';
		if (!oci_id_valid(id)) {
			nsg_warn("warning: skipping %s/%s.json: not a valid id", dir, id);
			continue;
		}
		r = record_read(dir, id, &rec);
		if (r == -ENOENT) /* removed while we were listing */
			continue;
		if (r < 0) {
			nsg_warn("warning: skipping %s", nsg_last_error());
			nsg_clear_error();
			continue;
		}
		err = fn(&rec, data);
		record_free(&rec);
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return err < 0 ? err : 0;
}

struct find_ctx {
	__u64 cgroup_id;
	struct nsguard_record *out;
	bool found;
};

static int find_cb(const struct nsguard_record *rec, void *data)
{
	struct find_ctx *ctx = data;

	if (ctx->found || rec->cgroup_id != ctx->cgroup_id)
		return 0;
	ctx->out->id = strdup(rec->id);
	ctx->out->cgroup_path = strdup(rec->cgroup_path);
	ctx->out->link_pin = rec->link_pin ? strdup(rec->link_pin) : NULL;
	ctx->out->cgroup_id = rec->cgroup_id;
	ctx->out->pid = rec->pid;
	ctx->out->start_time = rec->start_time;
	ctx->out->shared = rec->shared;
	ctx->out->policy = rec->policy;
	if (!ctx->out->id || !ctx->out->cgroup_path || (rec->link_pin && !ctx->out->link_pin)) {
		record_free(ctx->out);
		return nsg_fail(ENOMEM, "out of memory");
	}
	ctx->found = true;
	return 0;
}

int record_find_cgroup(const char *dir, __u64 cgroup_id, struct nsguard_record *rec)
{
	struct find_ctx ctx = { .cgroup_id = cgroup_id, .out = rec };
	int err = 0;

	memset(rec, 0, sizeof(*rec));
	err = record_foreach(dir, find_cb, &ctx);
	if (err < 0)
		return err;
	if (!ctx.found)
		return nsg_fail(ENOENT, "no record for cgroup id %llu", (unsigned long long)cgroup_id);
	return 0;
}
