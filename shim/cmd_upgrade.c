// SPDX-License-Identifier: GPL-2.0-or-later
/* nsguard upgrade: the guarded cgroups to this build's program (upgrade.c). */
#include <stdio.h>

#include "cmd.h"
#include "guard.h"
#include "upgrade.h"
#include "util.h"

int cmd_upgrade(struct cmd_ctx *ctx, int argc, char **argv)
{
	cleanup_close int lock = -1;
	struct upgrade_result r;
	char abi[GUARD_ABI_LEN];
	unsigned long long ours, theirs;
	int err = 0;

	err = cmd_options("upgrade", argc, argv, NULL, NULL, NULL);
	if (err)
		return err;
	err = cmd_require_privileges();
	if (err)
		return err;
	guard_abi(abi);
	/* No hook, gc or poststop in between. */
	err = guard_lock(&lock);
	if (err)
		return err;
	/* Before the upgrade rewrites the markers: is this a move back? */
	ours = guard_build_seq();
	theirs = guard_pinned_seq(NSGUARD_PIN_DIR);
	err = guard_upgrade_locked(&r);
	if (err)
		return err;
	cmd_tighten_state();
	if (r.nothing_loaded) {
		printf("no program is loaded: nothing to upgrade (ABI %s)\n", abi);
		return 0;
	}
	if (r.current) {
		printf("the loaded program is this build's: nothing to upgrade (ABI %s)\n", abi);
		return 0;
	}
	printf("moved %zu guarded cgroup%s to this build's program (ABI %s); their counters "
	       "start at 0",
	       r.moved, r.moved == 1 ? "" : "s", abi);
	if (r.denied)
		printf("; %zu without a record kept with deny", r.denied);
	if (r.relinked)
		printf("; %zu whose link had been detached guarded again", r.relinked);
	printf("\n");
	/* An older or equal build over a newer one: on purpose, but say so. */
	if (ours <= theirs)
		printf("note: this build (sequence %llu) is not newer than the program it "
		       "replaced (sequence %llu): the node now runs the older build\n",
		       ours, theirs);
	return 0;
}
