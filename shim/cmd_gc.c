// SPDX-License-Identifier: GPL-2.0-or-later
/* nsguard gc: forget containers whose cgroup is gone, and orphaned links. */
#include <stdio.h>

#include "cmd.h"
#include "container.h"

int cmd_gc(struct cmd_ctx *ctx, int argc, char **argv)
{
	int err = 0;

	err = cmd_options("gc", argc, argv, NULL, NULL, NULL) ?: cmd_require_privileges();
	if (err)
		return err;
	return container_gc(&container_env_live, stdout);
}
