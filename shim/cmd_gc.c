// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nsguard gc [--json]: forget containers whose cgroup is gone, and orphaned
 * links; attach anew the live ones whose link was detached.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "cmd.h"
#include "container.h"
#include "json.h"
#include "log.h"
#include "util.h"

struct gc_json {
	struct jv *list, *relinked;
	bool oom;
};

static void removed_json(const struct gc_removal *r, void *data)
{
	struct gc_json *j = data;
	struct jv *o = jv_new_object();

	if (!o || !jv_append(r->relinked ? j->relinked : j->list, o)) {
		jv_free(o);
		j->oom = true;
		return;
	}
	if (!json_add_string_or_null(o, "id", r->id) ||
	    !json_add_string_or_null(o, "cgroup", r->cgroup_path) ||
	    !json_add_u64(o, "cgroup_id", r->cgroup_id) ||
	    !jv_add_string(o, "why", r->why))
		j->oom = true;
}

int cmd_gc(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct cmd_option opts[] = {
		{ .name = "json", .val = 'j', .help = "what was removed, as JSON" },
		{},
	};
	cleanup_jv struct jv *doc = NULL;
	struct gc_json j = { 0 };
	bool json = false;
	int err = 0;

	err = cmd_options("gc", argc, argv, opts, cmd_set_flag, &json) ?: cmd_require_privileges();
	if (err)
		return err;
	cmd_tighten_state();
	if (!json)
		return container_gc(&container_env_live, container_gc_print, stdout);

	doc = jv_new_object();
	j.list = doc ? jv_add_array(doc, "removed") : NULL;
	/* Not removed: attached anew, their links having been detached. */
	j.relinked = j.list ? jv_add_array(doc, "relinked") : NULL;
	if (!j.relinked)
		return nsg_fail(ENOMEM, "out of memory");
	err = container_gc(&container_env_live, removed_json, &j);
	/* What was removed is printed even when something else failed. */
	if (j.oom)
		return err ?: nsg_fail(ENOMEM, "out of memory");
	return json_print(doc) ?: err;
}
