// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nsguard unload [--force]: the opposite of load, for an uninstall.  Under
 * the lock: refuse while a live cgroup is guarded (unless --force), unpin
 * every link (the kernel detaches it), the program and the maps (the
 * kernel frees them with their last reference), then remove the records
 * and all else in /run/nsguard but its lock file.
 * Nothing there is success, as for every clean-up.
 */
#include <errno.h>
#include <dirent.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "cgroup.h"
#include "cmd.h"
#include "guard.h"
#include "log.h"
#include "util.h"

static int remove_err;

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	if (remove(path) < 0 && errno != ENOENT)
		remove_err = nsg_fail(errno, "cannot remove %s: %s", path, strerror(errno));
	return remove_err ? 1 : 0;
}

/*
 * The next entry of NSGUARD_RUN_DIR (d) other than its lock file and the
 * agent's socket (a socket unit listens on it: removed, hooks would stop
 * reaching the agent until the unit restarts).
 */
static struct dirent *next_but_lock(DIR *d)
{
	const char *lock = strrchr(NSGUARD_LOCK_FILE, '/') + 1;
	const char *sock = strrchr(NSGUARD_AGENT_SOCKET, '/') + 1;
	struct dirent *e;

	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, lock) &&
		    strcmp(e->d_name, sock))
			return e;
	return NULL;
}

/* NSGUARD_RUN_DIR missing, or holding the lock file alone. */
static bool run_dir_empty_but_lock(void)
{
	cleanup_closedir DIR *d = opendir(NSGUARD_RUN_DIR);

	return !d || !next_but_lock(d);
}

static int remove_run_dir_but_lock(void)
{
	cleanup_closedir DIR *d = opendir(NSGUARD_RUN_DIR);
	struct dirent *e;
	char path[512];

	if (!d)
		return errno == ENOENT ? 0 : nsg_fail(errno, "%s: %s", NSGUARD_RUN_DIR, strerror(errno));
	while (!remove_err && (e = next_but_lock(d))) {
		snprintf(path, sizeof(path), "%s/%s", NSGUARD_RUN_DIR, e->d_name);
		/* Not into a mount below it, and no link followed. */
		if (nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) == -1 &&
		    errno != ENOENT)
			remove_err = nsg_fail(errno, "cannot walk %s: %s", path, strerror(errno));
	}
	return remove_err;
}

int cmd_unload(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct cmd_option opts[] = {
		{ .name = "force", .val = 'f',
		  .help = "unload while containers are guarded: they run on unguarded" },
		{},
	};
	cleanup_free __u64 *ids = NULL;
	cleanup_close int lock = -1;
	size_t n = 0, live = 0;
	bool force = false, loaded;
	int err = 0;

	err = cmd_options("unload", argc, argv, opts, cmd_set_flag, &force) ?:
	      cmd_require_privileges();
	if (err)
		return err;
	loaded = access(NSGUARD_PIN_DIR, F_OK) == 0;
	if (!loaded && run_dir_empty_but_lock()) {
		printf("nothing to unload (no %s, nothing in %s)\n", NSGUARD_PIN_DIR, NSGUARD_RUN_DIR);
		return 0;
	}
	/* No hook attaches meanwhile; one waiting now finds nothing and loads anew. */
	err = guard_lock(&lock);
	if (err)
		return err;
	if (loaded) {
		err = guard_links_list(NSGUARD_PIN_DIR, &ids, &n);
		if (err)
			return err;
	}
	for (size_t i = 0; i < n; i++)
		live += cgroup_id_alive(CGROUP_ROOT, ids[i]);
	if (live && !force)
		return nsg_fail(EBUSY,
				"%zu cgroup%s still guarded (nsguard status lists them): stop those "
				"containers first, or unload --force to leave them running unguarded",
				live, live == 1 ? " is" : "s are");
	/* An upgrade cut short leaves its half in NSGUARD_PIN_DIR-new. */
	err = guard_remove_dir(NSGUARD_PIN_DIR "-new") ?: guard_remove_dir(NSGUARD_PIN_DIR);
	if (err)
		return nsg_fail_context(err, "unload");
	/*
	 * Everything in NSGUARD_RUN_DIR but the lock file: a hook waiting for
	 * the lock holds that file open, and one that came after a new file
	 * would lock it at once, both in the locked section together.
	 */
	err = remove_run_dir_but_lock();
	if (err)
		return nsg_fail_context(err, "unload");
	printf("unloaded: %zu link%s removed (%zu guarding a live cgroup); %s gone, %s empty "
	       "but for its lock and the agent's socket\n",
	       n, n == 1 ? "" : "s", live, NSGUARD_PIN_DIR, NSGUARD_RUN_DIR);
	return 0;
}
