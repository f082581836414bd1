// SPDX-License-Identifier: GPL-2.0-or-later
/* nsguard status [--json]: records, their live policy and counters. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <cjson/cJSON.h>

#include "cmd.h"
#include "guard.h"
#include "json.h"
#include "log.h"
#include "policy.h"
#include "record.h"
#include "util.h"

struct status {
	struct guard *g; /* NULL when the program is not loaded */
	cJSON *list; /* --json */
};

static int show_one(const struct nsguard_record *rec, void *data)
{
	struct status *s = data;
	struct nsguard_policy pol = rec->policy;
	struct nsguard_counters cnt = { 0 };
	bool attached = guard_link_pinned(rec->cgroup_id);
	const char *errname;
	cJSON *o;

	/* The map is the truth while attached; the record otherwise. */
	if (s->g && attached) {
		if (guard_read_policy(s->g, rec->cgroup_id, &pol) < 0)
			pol = rec->policy;
		if (guard_read_counters(s->g, rec->cgroup_id, &cnt) < 0)
			memset(&cnt, 0, sizeof(cnt));
	}
	nsg_clear_error();
	errname = policy_errno_name(pol.err) ?: "?";

	if (!s->list) {
		printf("container %s\n", rec->id);
		printf("  cgroup:     %s (id %llu)\n", rec->cgroup_path,
		       (unsigned long long)rec->cgroup_id);
		printf("  mode:       %s\n", policy_mode_name(pol.mode));
		printf("  max-depth:  %u\n", pol.max_depth);
		printf("  errno:      %s\n", errname);
		printf("  base-level: %u\n", pol.base_level);
		printf("  allowed:    %llu\n", (unsigned long long)cnt.allowed);
		printf("  denied:     %llu\n", (unsigned long long)cnt.denied);
		printf("  audited:    %llu\n", (unsigned long long)cnt.audited);
		printf("  dropped:    %llu events\n", (unsigned long long)cnt.events_dropped);
		printf("  link:       %s\n\n", attached ? rec->link_pin : "not pinned (detached)");
		return 0;
	}
	o = cJSON_CreateObject();
	if (!o)
		return -ENOMEM;
	cJSON_AddItemToArray(s->list, o);
	if (!cJSON_AddStringToObject(o, "id", rec->id) ||
	    !cJSON_AddStringToObject(o, "cgroup", rec->cgroup_path) ||
	    !json_add_u64(o, "cgroup_id", rec->cgroup_id) ||
	    !cJSON_AddStringToObject(o, "mode", policy_mode_name(pol.mode)) ||
	    !cJSON_AddNumberToObject(o, "max_depth", pol.max_depth) ||
	    !cJSON_AddStringToObject(o, "errno", errname) ||
	    !cJSON_AddNumberToObject(o, "base_level", pol.base_level) ||
	    !cJSON_AddBoolToObject(o, "attached", attached) ||
	    !json_add_u64(o, "allowed", cnt.allowed) ||
	    !json_add_u64(o, "denied", cnt.denied) ||
	    !json_add_u64(o, "audited", cnt.audited) ||
	    !json_add_u64(o, "events_dropped", cnt.events_dropped))
		return -ENOMEM;
	return 0;
}

int cmd_status(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{},
	};
	struct guard g = GUARD_INIT;
	struct nsguard_stats stats = { 0 };
	struct status s = { 0 };
	cleanup_cjson cJSON *doc = NULL;
	char *text = NULL;
	bool json = false, loaded;
	int opt, err = 0;

	while ((opt = getopt_long(argc, argv, "+:", opts, NULL)) != -1) {
		if (opt != 'j')
			return cmd_usage("status: unknown option '%s'", argv[optind - 1]);
		json = true;
	}
	if (optind < argc)
		return cmd_usage("status: unexpected argument '%s'", argv[optind]);
	err = cmd_require_privileges();
	if (err)
		return err;

	err = guard_open(&g, false);
	loaded = err == 0;
	if (err && err != -ENOENT)
		return err;
	nsg_clear_error();
	if (loaded) {
		s.g = &g;
		err = guard_read_stats(&g, &stats);
		if (err)
			goto out;
	}
	if (json) {
		cleanup_cjson cJSON *list = cJSON_CreateArray();

		doc = cJSON_CreateObject();
		if (!doc || !list || !cJSON_AddBoolToObject(doc, "loaded", loaded) ||
		    !json_add_u64(doc, "events_dropped", stats.events_dropped) ||
		    !json_add_u64(doc, "decisions", stats.decisions) ||
		    !cJSON_AddItemToObject(doc, "containers", list)) {
			err = nsg_fail(ENOMEM, "out of memory");
			goto out;
		}
		s.list = steal_pointer(&list); /* doc owns it now */
	}
	err = record_foreach(NSGUARD_RECORD_DIR, show_one, &s);
	if (err == -ENOMEM)
		err = nsg_fail(ENOMEM, "out of memory");
	if (err)
		goto out;
	if (json) {
		text = cJSON_PrintUnformatted(doc);
		if (!text) {
			err = nsg_fail(ENOMEM, "out of memory");
			goto out;
		}
		printf("%s\n", text);
	} else {
		if (loaded)
			printf("program:        loaded (pinned at %s)\n", NSGUARD_PIN_PROG);
		else
			printf("program:        not loaded\n");
		printf("events dropped: %llu\n", (unsigned long long)stats.events_dropped);
		printf("decisions:      %llu\n", (unsigned long long)stats.decisions);
	}
out:
	free(text);
	guard_close(&g);
	return err;
}
