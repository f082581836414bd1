// SPDX-License-Identifier: GPL-2.0-or-later
/* nsguard suggest ID: the annotations a learn-mode container needs. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "config.h"
#include "guard.h"
#include "learn.h"
#include "log.h"
#include "oci.h"
#include "record.h"
#include "util.h"

/* While it runs: from the usage the program keeps, so far. */
static int suggest_live(const struct nsguard_record *rec, char **text)
{
	struct nsguard_usage used;

	return guard_learn_read(rec->cgroup_id, &used) ?: learn_suggest(rec->id, &used, text);
}

int cmd_suggest(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct nsguard_record rec = { 0 };
	cleanup_free char *text = NULL;
	struct nsguard_config cfg;
	const char *id = NULL;
	int err = 0;

	err = cmd_options_args("suggest", argc, argv, NULL, NULL, NULL, &id, 1);
	if (err)
		return err;
	if (!id)
		return cmd_usage("suggest: ID missing");
	if (!oci_id_valid(id))
		return cmd_usage("suggest: '%s' is not a valid container id", id);
	err = cmd_load_config(ctx, &cfg);
	if (err)
		return err;
	/* A record says where it went (the config may have changed since). */
	if (record_read(NSGUARD_RECORD_DIR, id, &rec) == 0 && rec.policy.mode == NSGUARD_MODE_LEARN &&
	    guard_link_pinned(rec.cgroup_id)) {
		err = cmd_require_privileges() ?: suggest_live(&rec, &text);
		if (!err)
			nsg_warn("%s is still running: this is what it has needed so far", id);
	} else {
		err = learn_read(rec.learn_dir ?: cfg.learn_dir, id, &text);
	}
	record_free(&rec);
	if (err)
		return err;
	fputs(text, stdout);
	if (text[0] && text[strlen(text) - 1] != '\n')
		putchar('\n');
	return 0;
}
