// SPDX-License-Identifier: GPL-2.0-or-later
/* nsguard gc: forget containers whose cgroup is gone, and orphaned links. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "cgroup.h"
#include "cmd.h"
#include "guard.h"
#include "log.h"
#include "record.h"
#include "util.h"

struct gc {
	__u64 *kept; /* cgroup ids of the records that stay */
	size_t n_kept;
	int failed;
};

static int gc_record(const struct nsguard_record *rec, void *data)
{
	struct gc *gc = data;
	__u64 id = 0, *k;
	int err = cgroup_id_of_path(CGROUP_ROOT, rec->cgroup_path, &id);

	if (err == 0 && id == rec->cgroup_id) {
		k = realloc(gc->kept, (gc->n_kept + 1) * sizeof(*k));
		if (!k)
			return nsg_fail(ENOMEM, "out of memory");
		gc->kept = k;
		gc->kept[gc->n_kept++] = id;
		return 0;
	}
	/* Only "gone" or "re-created" count; anything else leaves it alone. */
	if (err && err != -ENOENT)
		return 0;
	err = guard_detach(rec->cgroup_id);
	if (!err)
		err = record_remove(NSGUARD_RECORD_DIR, rec->id);
	if (err) {
		nsg_warn("gc: container %s: %s", rec->id, nsg_last_error());
		gc->failed = err;
		return 0;
	}
	printf("removed container %s (cgroup %s, id %llu: %s)\n", rec->id, rec->cgroup_path,
	       (unsigned long long)rec->cgroup_id, id ? "re-created" : "gone");
	return 0;
}

static int gc_links(struct gc *gc)
{
	DIR *d = opendir(NSGUARD_PIN_LINKS);
	struct dirent *de;
	unsigned long long id;
	bool kept;
	int err = 0;

	if (!d)
		return errno == ENOENT ? 0 : nsg_fail(errno, "gc: cannot read %s: %s",
						      NSGUARD_PIN_LINKS, strerror(errno));
	while ((de = readdir(d))) {
		if (parse_u64(de->d_name, &id) < 0)
			continue;
		kept = false;
		for (size_t i = 0; i < gc->n_kept && !kept; i++)
			kept = gc->kept[i] == id;
		if (kept || cgroup_id_alive(CGROUP_ROOT, id))
			continue;
		err = guard_detach(id);
		if (err) {
			nsg_warn("gc: link %llu: %s", id, nsg_last_error());
			gc->failed = err;
			continue;
		}
		printf("removed link %s/%llu (no record, cgroup gone)\n", NSGUARD_PIN_LINKS, id);
	}
	closedir(d);
	return 0;
}

int cmd_gc(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct gc gc = { 0 };
	cleanup_close int lock = -1;
	int err = 0;

	if (argc > 1)
		return cmd_usage("gc: unexpected argument '%s'", argv[1]);
	err = cmd_require_privileges();
	if (err)
		return err;
	/* Not while a hook checks, attaches and records. */
	err = guard_lock(&lock);
	if (err)
		return err;
	err = record_foreach(NSGUARD_RECORD_DIR, gc_record, &gc);
	/* Links are judged against the records: skip them if those failed. */
	if (!err)
		err = gc_links(&gc);
	free(gc.kept);
	if (!err && gc.failed)
		err = nsg_fail(-gc.failed, "gc: some entries could not be removed (see above)");
	return err;
}
