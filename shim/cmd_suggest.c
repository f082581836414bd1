// SPDX-License-Identifier: GPL-2.0-or-later
/* nsguard suggest [--all] ID: the annotations a learn-mode container needs. */
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

	return guard_learn_read(rec->cgroup_id, &used) ?: learn_suggest(rec, &used, text);
}

static void print_line(const char *text)
{
	fputs(text, stdout);
	if (text[0] && text[strlen(text) - 1] != '\n')
		putchar('\n');
}

/*
 * The files of the instances that have ended: the newest (with a note
 * naming the others when there are several), or with --all each, newest
 * first.
 */
static int suggest_ended(const char *dir, const char *id, bool all, bool live_shown)
{
	struct learn_found *found = NULL;
	size_t n = 0;
	int err = learn_list(dir, id, &found, &n);

	if (err == -ENOENT && live_shown) {
		nsg_clear_error();
		return 0;
	}
	if (err)
		return err;
	for (size_t i = 0; i < (all ? n : 1); i++) {
		err = learn_load(dir, &found[i]);
		if (err)
			break;
		print_line(found[i].text);
		/* --all may print many: keep one in memory at a time. */
		free(found[i].text);
		found[i].text = NULL;
	}
	if (err) {
		learn_found_free(found, n);
		return err;
	}
	if (!all && n > 1)
		nsg_warn("note: %zu containers named %s have ended in learn mode, each with its "
			 "own suggestion in %s; this is the newest (%s); `nsguard suggest --all "
			 "%s` prints every one, newest first",
			 n, id, dir, found[0].name, id);
	learn_found_free(found, n);
	return 0;
}

int cmd_suggest(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct cmd_option opts[] = {
		{ .name = "all", .val = 'a',
		  .help = "every instance with that id, newest first (one line each)" },
		{},
	};
	struct nsguard_record rec = { 0 };
	cleanup_free char *text = NULL;
	struct nsguard_config cfg;
	const char *id = NULL;
	bool all = false, live = false;
	int err = 0;

	err = cmd_options_args("suggest", argc, argv, opts, cmd_set_flag, &all, &id, 1);
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
		if (err)
			goto out;
		print_line(text);
		live = true;
		nsg_warn("%s is still running: this is what it has needed so far", id);
		if (!all)
			goto out;
	}
	/* The ones that ended; with --all after the running one. */
	err = suggest_ended(rec.learn_dir ?: cfg.learn_dir, id, all, live);
out:
	record_free(&rec);
	return err;
}
