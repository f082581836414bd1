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
 * (true) marks a cgroup the admin let other processes share; "learn_dir"
 * (learn mode) is where its suggestion goes; "pod", "namespace" and
 * "container" (identity.h, optional) name it for humans.  Writes are
 * atomic (temp file, fsync, rename, fsync dir) so a crash never leaves a half
 * record for poststop or gc to trip over.
 *
 * The index: <dir>/by-cgroup-id/<cgroup id> is a second name (a hard link)
 * of the record that guards that cgroup, so that a hook finds the guard of a
 * cgroup with one open instead of reading every record (make bench: attach
 * at 10 000 guarded).  A hard link costs a dentry, no inode and no page.  It
 * only speeds lookups up: an entry that is missing or stale (not the file
 * <dir>/<id>.json is now, e.g. after a crash between the two renames) reads
 * as no entry, and container.c then reads every record whenever a link is
 * pinned for the cgroup.  Kept under the lock, like the records.
 */
#include <dirent.h>
#include <errno.h>
#include <time.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "json.h"
#include "log.h"
#include "oci.h"
#include "policy.h"
#include "record.h"
#include "util.h"

#define RECORD_VERSION 1
#define RECORD_FILE_MAX (64 * 1024)
#define RECORD_INDEX "by-cgroup-id"

void record_free(struct nsguard_record *rec)
{
	if (!rec)
		return;
	free(rec->id);
	free(rec->cgroup_path);
	free(rec->link_pin);
	free(rec->learn_dir);
	identity_free(&rec->identity);
	memset(rec, 0, sizeof(*rec));
}

static int check_id(const char *id)
{
	if (!oci_id_valid(id))
		return nsg_fail(EINVAL, "invalid record id \"%.64s\"", id ? id : "(null)");
	return 0;
}

/* dir/<id>.json for a valid id. */
static int record_path(const char *dir, const char *id, char **path)
{
	int err = check_id(id);

	if (err < 0)
		return err;
	if (asprintf(path, "%s/%s.json", dir, id) < 0) {
		*path = NULL;
		return nsg_fail(ENOMEM, "out of memory");
	}
	return 0;
}

static struct jv *record_to_json(const struct nsguard_record *rec)
{
	cleanup_jv struct jv *doc = jv_new_object();
	struct jv *pol;

	if (!doc)
		return NULL;
	if (!jv_add_number(doc, "version", RECORD_VERSION) ||
	    !jv_add_string(doc, "id", rec->id) ||
	    !jv_add_string(doc, "cgroup", rec->cgroup_path) ||
	    !json_add_u64(doc, "cgroup_id", rec->cgroup_id))
		return NULL;
	if (!json_add_string_or_null(doc, "link_pin", rec->link_pin))
		return NULL;
	if (rec->pid && (!jv_add_number(doc, "pid", rec->pid) ||
			 !json_add_u64(doc, "start_time", rec->start_time)))
		return NULL;
	if (rec->shared && !jv_add_bool(doc, "shared", true))
		return NULL;
	if (rec->learn_dir && !jv_add_string(doc, "learn_dir", rec->learn_dir))
		return NULL;
	for (int f = 0; f < IDENT_COUNT; f++)
		if (rec->identity.v[f] &&
		    !jv_add_string(doc, identity_name(f), rec->identity.v[f]))
			return NULL;
	pol = jv_add_object(doc, "policy");
	if (!pol)
		return NULL;
	for (size_t i = 0; i < POLICY_FIELD_COUNT; i++) {
		const struct policy_field *f = &policy_fields[i];
		__u32 v = policy_field_get(&rec->policy, f);

		if (!(f->record_name ? jv_add_string(pol, f->json, f->show(v))
				     : jv_add_number(pol, f->json, v)))
			return NULL;
	}
	if (!json_add_u64(pol, "cgroup_id", rec->policy.cgroup_id))
		return NULL;
	return steal_pointer(&doc);
}

/* <dir>/by-cgroup-id/<cgroup id>, or with tmp a temporary name beside it. */
static char *index_entry(const char *dir, __u64 cgroup_id, bool tmp)
{
	char *p = NULL;

	if (asprintf(&p, tmp ? "%s/" RECORD_INDEX "/.%llu.%d" : "%s/" RECORD_INDEX "/%llu", dir,
		     (unsigned long long)cgroup_id, tmp ? (int)getpid() : 0) < 0)
		return NULL;
	return p;
}

/* An index entry and a record are the same file: one is the other's link. */
static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_ino == b->st_ino && a->st_dev == b->st_dev;
}

static int index_add(const char *dir, const char *id, __u64 cgroup_id);

static int index_cb(const struct nsguard_record *rec, void *dir)
{
	index_add(dir, rec->id, rec->cgroup_id);
	return 0;
}

/* Create the index once; records an older nsguard wrote get their entries. */
static void index_create(const char *dir)
{
	cleanup_free char *path = NULL;

	if (asprintf(&path, "%s/" RECORD_INDEX, dir) < 0)
		return;
	if (mkdir(path, 0700) == 0)
		record_foreach(dir, index_cb, (void *)dir);
}

/* (Re)point the entry of cgroup_id at <dir>/<id>.json; 0 or -errno, no message. */
static int index_add(const char *dir, const char *id, __u64 cgroup_id)
{
	cleanup_free char *rec = NULL, *tmp = index_entry(dir, cgroup_id, true),
			  *entry = index_entry(dir, cgroup_id, false);
	int err = 0;

	if (!tmp || !entry || asprintf(&rec, "%s/%s.json", dir, id) < 0)
		return -ENOMEM;
	/* No index yet: made (once, on ENOENT); a crashed writer's temporary name: gone. */
	for (int tries = 0; link(rec, tmp) < 0; tries++) {
		if (tries == 2 || (errno != ENOENT && errno != EEXIST))
			return -errno;
		if (errno == ENOENT)
			index_create(dir);
		else
			unlink(tmp);
	}
	if (rename(tmp, entry) < 0)
		err = -errno;
	/* rename() leaves both names when they are links of one file already. */
	unlink(tmp);
	return err;
}

/* An entry whose record name is gone (removed, or replaced by a rewrite). */
static void index_drop_orphan(const char *dir, __u64 cgroup_id)
{
	cleanup_free char *entry = index_entry(dir, cgroup_id, false);
	struct stat sb;

	if (entry && lstat(entry, &sb) == 0 && sb.st_nlink == 1)
		unlink(entry);
}

int record_write(const char *dir, const struct nsguard_record *rec)
{
	cleanup_jv struct jv *doc = NULL;
	cleanup_free char *text = NULL, *name = NULL;
	int err = 0;

	err = check_id(rec->id);
	if (err < 0)
		return err;
	if (!rec->cgroup_path || rec->policy.mode >= NSGUARD_MODE_COUNT)
		return nsg_fail(EINVAL, "record %s: no cgroup path or invalid mode", rec->id);
	doc = record_to_json(rec);
	text = doc ? jv_format_pretty(doc) : NULL;
	if (!text || asprintf(&name, "%s.json", rec->id) < 0) {
		name = NULL;
		return nsg_fail(ENOMEM, "record %s: out of memory", rec->id);
	}
	err = write_file_atomic(dir, name, text, 0700, 0600);
	if (err)
		return err;
	err = index_add(dir, rec->id, rec->cgroup_id);
	/* Slower lookups, not a weaker guard: see the index, above. */
	if (err)
		nsg_warn("warning: cannot index the record of %s by cgroup id: %s; lookups of "
			 "cgroup %llu read every record",
			 rec->id, strerror(-err), (unsigned long long)rec->cgroup_id);
	return 0;
}

static int get_str(const struct jv *obj, const char *key, bool nullable, char **out)
{
	const struct jv *it = jv_get(obj, key);

	if (nullable && jv_is_null(it))
		return 0;
	if (!jv_is_string(it) || !it->str)
		return -EINVAL;
	*out = strdup(it->str);
	return *out ? 0 : -ENOMEM;
}

static int get_u32(const struct jv *obj, const char *key, __u32 *out)
{
	const struct jv *it = jv_get(obj, key);

	if (!jv_is_number(it) || it->num < 0 || it->num > UINT32_MAX ||
	    it->num != (double)(__u32)it->num)
		return -EINVAL;
	*out = (__u32)it->num;
	return 0;
}

static int get_u64(const struct jv *obj, const char *key, __u64 *out)
{
	const struct jv *it = jv_get(obj, key);
	const char *s;
	char *end = NULL;
	unsigned long long v;

	if (!jv_is_string(it) || !it->str)
		return -EINVAL;
	s = it->str;
	if (s[0] < '0' || s[0] > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

/* A field the record keeps by name: any value whose show() it is. */
static int get_name(const struct jv *obj, const struct policy_field *f, __u32 *out)
{
	const struct jv *it = jv_get(obj, f->json);

	if (!jv_is_string(it) || !it->str)
		return -EINVAL;
	return f->unshow(it->str, out);
}

static int get_policy(const struct jv *pol, struct nsguard_policy *out)
{
	int err = 0;

	for (size_t i = 0; i < POLICY_FIELD_COUNT; i++) {
		const struct policy_field *f = &policy_fields[i];
		__u32 v = 0;

		if (f->optional && !jv_get(pol, f->json))
			v = f->if_absent;
		else
			err = f->record_name ? get_name(pol, f, &v) : get_u32(pol, f->json, &v);
		if (err < 0)
			return err;
		policy_field_set(out, f, v);
	}
	return get_u64(pol, "cgroup_id", &out->cgroup_id);
}

static int record_from_json(const struct jv *doc, struct nsguard_record *rec)
{
	const struct jv *pol = jv_get(doc, "policy"), *it;
	__u32 version = 0;
	int err = 0;

	if (!jv_is_object(doc) || !jv_is_object(pol))
		return -EINVAL;
	if ((err = get_u32(doc, "version", &version)) < 0 || version != RECORD_VERSION ||
	    (err = get_str(doc, "id", false, &rec->id)) < 0 ||
	    (err = get_str(doc, "cgroup", false, &rec->cgroup_path)) < 0 ||
	    (err = get_u64(doc, "cgroup_id", &rec->cgroup_id)) < 0 ||
	    (err = get_str(doc, "link_pin", true, &rec->link_pin)) < 0 ||
	    (err = get_policy(pol, &rec->policy)) < 0)
		return err < 0 ? err : -EINVAL;
	it = jv_get(doc, "shared");
	if (it && !jv_is_bool(it))
		return -EINVAL;
	rec->shared = jv_is_true(it);
	if (jv_get(doc, "learn_dir") &&
	    (err = get_str(doc, "learn_dir", false, &rec->learn_dir)) < 0)
		return err;
	for (int f = 0; f < IDENT_COUNT; f++)
		if (jv_get(doc, identity_name(f)) &&
		    (err = get_str(doc, identity_name(f), false, &rec->identity.v[f])) < 0)
			return err;
	if (jv_get(doc, "pid") &&
	    ((err = get_u32(doc, "pid", &rec->pid)) < 0 || rec->pid == 0 || rec->pid > INT32_MAX ||
	     (err = get_u64(doc, "start_time", &rec->start_time)) < 0))
		return -EINVAL;
	return 0;
}

/* Read and check the record open at fd (named path in messages). */
static int read_record_fd(int fd, const char *path, struct nsguard_record *rec)
{
	cleanup_jv struct jv *doc = NULL;
	cleanup_free char *buf = NULL;
	struct nsguard_record r = { 0 };
	size_t len = 0;
	int err = 0;

	err = read_capped(fd, RECORD_FILE_MAX, &buf, &len);
	if (err == -EFBIG)
		return nsg_fail(EFBIG, "malformed record %s: too large", path);
	if (err == -ENOMEM)
		return nsg_fail(ENOMEM, "out of memory");
	if (err < 0)
		return nsg_fail(-err, "read %s: %s", path, strerror(-err));
	doc = jv_parse(buf, len);
	if (!doc)
		return nsg_fail(EINVAL, "malformed record %s: invalid JSON", path);
	err = record_from_json(doc, &r);
	if (err < 0) {
		record_free(&r);
		if (err == -ENOMEM)
			return nsg_fail(ENOMEM, "out of memory");
		return nsg_fail(EINVAL, "malformed record %s: missing or invalid fields", path);
	}
	*rec = r;
	return 0;
}

static int open_record(const char *path)
{
	return open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
}

int record_read(const char *dir, const char *id, struct nsguard_record *rec)
{
	cleanup_free char *path = NULL;
	cleanup_close int fd = -1;
	int err = 0;

	memset(rec, 0, sizeof(*rec));
	err = record_path(dir, id, &path);
	if (err < 0)
		return err;
	fd = open_record(path);
	if (fd < 0) {
		if (errno == ENOENT)
			return nsg_fail(ENOENT, "no record for %s", id);
		return nsg_fail(errno, "open %s: %s", path, strerror(errno));
	}
	err = read_record_fd(fd, path, rec);
	if (err == 0 && strcmp(rec->id, id) != 0) {
		record_free(rec);
		return nsg_fail(EINVAL, "malformed record %s: missing or invalid fields", path);
	}
	return err;
}

int record_read_cgroup(const char *dir, __u64 cgroup_id, struct nsguard_record *rec)
{
	cleanup_free char *entry = index_entry(dir, cgroup_id, false), *path = NULL;
	cleanup_close int fd = -1;
	struct stat a, b;

	memset(rec, 0, sizeof(*rec));
	fd = entry ? open_record(entry) : -1;
	/* The index is the record's second name: both must be the same file. */
	if (fd < 0 || fstat(fd, &a) < 0 || read_record_fd(fd, entry, rec) < 0)
		goto miss;
	if (rec->cgroup_id != cgroup_id || record_path(dir, rec->id, &path) < 0 ||
	    lstat(path, &b) < 0 || !same_file(&a, &b))
		goto miss;
	return 0;
miss:
	record_free(rec);
	nsg_clear_error();
	return -ENOENT;
}

int record_remove(const char *dir, const char *id, __u64 cgroup_id)
{
	cleanup_free char *path = NULL;
	int err = 0;

	err = record_path(dir, id, &path);
	if (err < 0)
		return err;
	if (unlink(path) < 0) {
		if (errno != ENOENT)
			return nsg_fail(errno, "remove %s: %s", path, strerror(errno));
		index_drop_orphan(dir, cgroup_id);
		return 0;
	}
	index_drop_orphan(dir, cgroup_id);
	return fsync_dir(dir);
}

/* dir's sibling for retired records: DIR/../gone (made on demand). */
static char *gone_dir(const char *dir)
{
	const char *slash = strrchr(dir, '/');
	char *g = NULL;

	if (asprintf(&g, "%.*sgone", slash ? (int)(slash - dir + 1) : 0, dir) < 0)
		return NULL;
	return g;
}

static char *gone_path(const char *dir, __u64 cgroup_id)
{
	cleanup_free char *g = gone_dir(dir);
	char *p = NULL;

	if (!g || asprintf(&p, "%s/%llu.json", g, (unsigned long long)cgroup_id) < 0)
		return NULL;
	return p;
}

struct gone_entry {
	time_t mtime;
	char name[32];
};

static int by_mtime(const void *a, const void *b)
{
	const struct gone_entry *x = a, *y = b;

	return x->mtime < y->mtime ? -1 : x->mtime > y->mtime;
}

/*
 * Remove retired records older than keep_secs, and the oldest beyond max
 * (names are <cgroup id>.json: short).  Best effort: it runs on every
 * retire, under the caller's lock.
 */
static void gone_trim(const char *g, time_t keep_secs, size_t max)
{
	cleanup_closedir DIR *d = opendir(g);
	cleanup_free struct gone_entry *e = NULL;
	size_t n = 0, cap = 0;
	time_t now = time(NULL);
	struct dirent *de;
	struct stat st;
	int dfd;

	if (!d)
		return;
	dfd = dirfd(d);
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || strlen(de->d_name) >= sizeof(e->name) ||
		    fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (now - st.st_mtime >= keep_secs) {
			unlinkat(dfd, de->d_name, 0);
			continue;
		}
		if (n == cap) {
			struct gone_entry *ne = realloc(e, (cap = cap * 2 + 64) * sizeof(*e));

			if (!ne)
				return;
			e = ne;
		}
		e[n].mtime = st.st_mtime;
		memcpy(e[n].name, de->d_name, strlen(de->d_name) + 1); /* checked above */
		n++;
	}
	if (n <= max)
		return;
	qsort(e, n, sizeof(*e), by_mtime);
	for (size_t i = 0; i < n - max; i++)
		unlinkat(dfd, e[i].name, 0);
}

bool record_gone_trim_due(void)
{
	unsigned char r = 0;

	/*
	 * A coin, not a function of the cgroup id: ids come in strides a tenant
	 * with a delegated subtree can steer.  No randomness: trim.
	 */
	if (getrandom(&r, 1, GRND_NONBLOCK) != 1)
		return true;
	return r < 4;
}

int record_retire(const char *dir, const char *id, __u64 cgroup_id)
{
	cleanup_free char *path = NULL, *g = gone_dir(dir), *to = gone_path(dir, cgroup_id);
	int err = 0;

	if (!g || !to)
		return nsg_fail(ENOMEM, "out of memory");
	err = record_path(dir, id, &path);
	if (err < 0)
		return err;
	/* Naming the container's late events is worth less than removing it. */
	/* The gone directory is almost always there: made on ENOENT. */
	if (rename(path, to) == 0 ||
	    (errno == ENOENT && mkdir_p(g, 0700) == 0 && rename(path, to) == 0)) {
		cleanup_free char *entry = index_entry(dir, cgroup_id, false);
		struct stat a, b;

		utimensat(AT_FDCWD, to, NULL, 0); /* retired now, for the sweep */
		/* Bounded here, not only by gc: a loop of short containers fills /run. */
		if (record_gone_trim_due())
			gone_trim(g, NSGUARD_GONE_KEEP_SECS, NSGUARD_GONE_MAX);
		/* The index entry is the record's second name: it goes with it. */
		if (entry && lstat(entry, &a) == 0 && lstat(to, &b) == 0 && same_file(&a, &b))
			unlink(entry);
		return fsync_dir(dir);
	}
	return record_remove(dir, id, cgroup_id);
}

int record_read_gone(const char *dir, __u64 cgroup_id, struct nsguard_record *rec)
{
	cleanup_free char *path = gone_path(dir, cgroup_id);
	cleanup_close int fd = -1;
	int err;

	memset(rec, 0, sizeof(*rec));
	if (!path)
		return -ENOMEM;
	fd = open_record(path);
	if (fd < 0)
		return -errno;
	err = read_record_fd(fd, path, rec);
	if (err == 0 && rec->cgroup_id != cgroup_id) {
		record_free(rec);
		err = -EINVAL;
	}
	return err;
}

int record_gone_sweep(const char *dir, time_t keep_secs)
{
	cleanup_free char *gd = gone_dir(dir);

	if (!gd)
		return nsg_fail(ENOMEM, "out of memory");
	gone_trim(gd, keep_secs, NSGUARD_GONE_MAX);
	return 0;
}

void record_index_forget(const char *dir, __u64 cgroup_id)
{
	index_drop_orphan(dir, cgroup_id);
}

int record_index_repair(const char *dir, const struct nsguard_record *rec)
{
	cleanup_free char *entry = index_entry(dir, rec->cgroup_id, false), *path = NULL;
	struct stat a, b;

	if (!entry || record_path(dir, rec->id, &path) < 0)
		return -ENOMEM;
	if (lstat(entry, &a) == 0 && lstat(path, &b) == 0 && same_file(&a, &b))
		return 0;
	return index_add(dir, rec->id, rec->cgroup_id);
}

int record_index_sweep(const char *dir)
{
	cleanup_free char *path = NULL;
	cleanup_closedir DIR *d = NULL;
	struct dirent *de;
	struct stat sb;
	int n = 0;

	if (asprintf(&path, "%s/" RECORD_INDEX, dir) < 0)
		return -ENOMEM;
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		/* One name left: its record was removed or rewritten (or a temp). */
		if (fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
		    (sb.st_nlink == 1 || !S_ISREG(sb.st_mode)) &&
		    unlinkat(dirfd(d), de->d_name, 0) == 0)
			n++;
	}
	return n;
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
	__u64 cgroup_id; /* or, when path is set, */
	const char *path;
	struct nsguard_record *out;
	bool found;
};

static int find_cb(const struct nsguard_record *rec, void *data)
{
	struct find_ctx *ctx = data;

	if (ctx->found)
		return 0;
	if (ctx->path ? strcmp(rec->cgroup_path, ctx->path) != 0 : rec->cgroup_id != ctx->cgroup_id)
		return 0;
	*ctx->out = *rec;
	ctx->out->id = strdup(rec->id);
	ctx->out->cgroup_path = strdup(rec->cgroup_path);
	ctx->out->link_pin = rec->link_pin ? strdup(rec->link_pin) : NULL;
	ctx->out->learn_dir = rec->learn_dir ? strdup(rec->learn_dir) : NULL;
	if (identity_copy(&ctx->out->identity, &rec->identity) < 0 || !ctx->out->id ||
	    !ctx->out->cgroup_path || (rec->link_pin && !ctx->out->link_pin) ||
	    (rec->learn_dir && !ctx->out->learn_dir)) {
		record_free(ctx->out);
		return nsg_fail(ENOMEM, "out of memory");
	}
	ctx->found = true;
	return 0;
}

static int find(const char *dir, struct find_ctx *ctx)
{
	int err = 0;

	memset(ctx->out, 0, sizeof(*ctx->out));
	err = record_foreach(dir, find_cb, ctx);
	if (err < 0)
		return err;
	if (ctx->found)
		return 0;
	if (ctx->path)
		return nsg_fail(ENOENT, "no record for cgroup %s", ctx->path);
	return nsg_fail(ENOENT, "no record for cgroup id %llu", (unsigned long long)ctx->cgroup_id);
}

int record_find_cgroup(const char *dir, __u64 cgroup_id, struct nsguard_record *rec)
{
	struct find_ctx ctx = { .cgroup_id = cgroup_id, .out = rec };

	return find(dir, &ctx);
}

int record_find_path(const char *dir, const char *cgroup_path, struct nsguard_record *rec)
{
	struct find_ctx ctx = { .path = cgroup_path, .out = rec };

	return find(dir, &ctx);
}
