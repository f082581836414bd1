// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nsguard load: load, verify and pin the program at boot, so that no
 * container's hook pays for it (#12).  Without it the first hook loads on
 * demand, as before; with it every hook finds the pins.
 */
#include <stdio.h>

#include "cmd.h"
#include "guard.h"
#include "log.h"
#include "util.h"

int cmd_load(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct guard g = GUARD_INIT;
	cleanup_close int lock = -1;
	char abi[GUARD_ABI_LEN];
	bool was;
	int err = 0;

	err = cmd_options("load", argc, argv, NULL, NULL, NULL) ?: cmd_require_privileges();
	if (err)
		return err;
	/* As a hook does: one loader at a time, and pins of another build refused. */
	err = guard_lock(&lock);
	if (err)
		return err;
	cmd_tighten_state();
	was = access(NSGUARD_PIN_PROG, F_OK) == 0;
	err = guard_open(&g, true);
	guard_close(&g);
	if (err)
		return nsg_fail_context(err, "load");
	guard_abi(abi);
	printf("%s (pinned at %s, ABI %s)\n", was ? "already loaded" : "loaded", NSGUARD_PIN_PROG,
	       abi);
	return 0;
}
