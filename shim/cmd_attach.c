// SPDX-License-Identifier: GPL-2.0-or-later
/* attach / detach: guard a cgroup by hand, or stop guarding one. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cgroup.h"
#include "cmd.h"
#include "config.h"
#include "container.h"
#include "json.h"
#include "log.h"
#include "policy.h"
#include "util.h"

/*
 * --cgroup PATH: relative to /sys/fs/cgroup, or absolute under it.  Returns
 * the path relative to the cgroup2 root with a leading '/'.
 */
static int cgroup_arg(const char *arg, char **rel_out)
{
	const char *rel = arg;
	size_t n = strlen(CGROUP_ROOT);

	if (strncmp(arg, CGROUP_ROOT, n) == 0 && (arg[n] == '/' || arg[n] == '\0'))
		rel = arg + n;
	while (*rel == '/')
		rel++;
	if (!*rel)
		return nsg_fail(EPERM, "refusing the root cgroup %s", CGROUP_ROOT);
	if (asprintf(rel_out, "/%s", rel) < 0) {
		*rel_out = NULL;
		return nsg_fail(ENOMEM, "out of memory");
	}
	/* Trailing slashes would make records of one cgroup differ. */
	for (n = strlen(*rel_out); n > 1 && (*rel_out)[n - 1] == '/'; n--)
		(*rel_out)[n - 1] = '\0';
	return 0;
}

/* Option values: 'g' and 'i', and OPT_FIELD + i for policy_fields[i]. */
#define OPT_FIELD 0x100

struct args {
	const char *cgroup, *id;
	bool json;
	const char *field[POLICY_FIELD_COUNT];
};

static int attach_opt(int opt, const char *arg, void *data)
{
	struct args *a = data;
	size_t i = (size_t)opt - OPT_FIELD;

	if (opt == 'g')
		a->cgroup = arg;
	else if (opt == 'i')
		a->id = arg;
	else if (opt == 'j')
		a->json = true;
	else
		a->field[i] = arg; /* cmd_options refuses an option given twice */
	return 0;
}

/*
 * The fields a container annotates go through policy_resolve as annotations,
 * under the same admin limits; the others (base-level) are set as given.
 */
static int attach_policy(const struct nsguard_config *cfg, const struct args *a,
			 struct nsguard_policy *pol)
{
	struct oci_annotation ann[POLICY_FIELD_COUNT];
	size_t n = 0;

	for (size_t i = 0; i < POLICY_FIELD_COUNT; i++) {
		const struct policy_field *f = &policy_fields[i];
		__u32 v = 0;

		if (!a->field[i])
			continue;
		/* A value that does not parse is a usage error (exit 2). */
		if (f->parse(a->field[i], &v) < 0)
			return cmd_usage("attach: --%s '%s' is %s", f->name, a->field[i], f->invalid);
		if (f->annotation)
			ann[n++] = (struct oci_annotation){ (char *)f->annotation,
							    (char *)a->field[i] };
		else
			policy_field_set(pol, f, v);
	}
	return policy_resolve(cfg, ann, n, pol);
}

/*
 * attach and detach --json: {"id", "cgroup", "attached"} and for attach the
 * cgroup id and the policy, keyed as in status --json.
 */
static int print_json(const char *id, const char *path, __u64 cgid,
		      const struct nsguard_policy *pol, bool attached)
{
	cleanup_jv struct jv *o = jv_new_object();

	if (!o || !json_add_string_or_null(o, "id", id) ||
	    !json_add_string_or_null(o, "cgroup", path) ||
	    !jv_add_bool(o, "attached", attached) ||
	    (pol && (!json_add_u64(o, "cgroup_id", cgid) || !json_add_policy(o, pol))))
		return nsg_fail(ENOMEM, "out of memory");
	return json_print(o);
}

int cmd_attach(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct cmd_option opts[POLICY_FIELD_COUNT + 4] = {
		{ .name = "cgroup", .arg = "PATH", .val = 'g', .help = "the cgroup, under " CGROUP_ROOT " or relative to it" },
		{ .name = "id", .arg = "NAME", .val = 'i', .help = "the name of its record (default cgroup-ID)" },
		{ .name = "json", .val = 'j', .help = "print the result as JSON" },
	};
	char help[POLICY_FIELD_COUNT][96];
	struct nsguard_policy pol = { 0 };
	cleanup_free char *path = NULL, *defid = NULL;
	struct container_spec spec;
	struct nsguard_config cfg;
	struct args a = { 0 };
	char desc[256];
	bool refused = false;
	__u64 cgid = 0;
	int err = 0;

	/* An option for each policy field. */
	for (size_t i = 0; i < POLICY_FIELD_COUNT; i++) {
		const struct policy_field *f = &policy_fields[i];

		snprintf(help[i], sizeof(help[i]), f->annotation ? "as the annotation %s" : "set as given",
			 f->annotation);
		opts[3 + i] = (struct cmd_option){ .name = f->name, .arg = f->metavar,
						   .val = OPT_FIELD + (int)i, .help = help[i] };
	}
	err = cmd_options("attach", argc, argv, opts, attach_opt, &a);
	if (err)
		return err;
	if (!a.cgroup)
		return cmd_usage("attach: --cgroup PATH is required");
	if (a.id && !oci_id_valid(a.id))
		return cmd_usage("attach: --id '%s' is not a valid name ([A-Za-z0-9_.+-], not "
				 "starting with '.')", a.id);
	/* Every mistake in the command line is reported before privileges. */
	err = cmd_load_config(ctx, &cfg) ?: attach_policy(&cfg, &a, &pol) ?:
	      cgroup_arg(a.cgroup, &path) ?: cmd_require_privileges();
	if (err)
		return err;
	err = cgroup_id_of_path(CGROUP_ROOT, path, &cgid);
	if (err)
		return err;
	if (!a.id) {
		if (asprintf(&defid, "cgroup-%llu", (unsigned long long)cgid) < 0) {
			defid = NULL;
			return nsg_fail(ENOMEM, "out of memory");
		}
		a.id = defid;
	}
	spec = (struct container_spec){ .id = a.id, .cgroup_path = path,
					.learn_dir = cfg.learn_dir };
	err = container_guard(&container_env_live, &spec, &pol, &refused);
	if (err)
		return nsg_fail_context(err, "attach %s", path);
	if (a.json)
		return print_json(a.id, path, cgid, &pol, true);
	policy_describe(&pol, desc, sizeof(desc));
	printf("attached %s to cgroup %s (id %llu): %s\n", a.id, path, (unsigned long long)cgid,
	       desc);
	return 0;
}

static int detach_opt(int opt, const char *arg, void *data)
{
	struct args *a = data;

	if (opt == 'g')
		a->cgroup = arg;
	else if (opt == 'i')
		a->id = arg;
	else
		a->json = true;
	return 0;
}

int cmd_detach(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct cmd_option opts[] = {
		{ .name = "cgroup", .arg = "PATH", .val = 'g', .help = "the guarded cgroup" },
		{ .name = "id", .arg = "NAME", .val = 'i', .help = "the container (or attach --id) name" },
		{ .name = "json", .val = 'j', .help = "print the result as JSON" },
		{},
	};
	cleanup_free char *path = NULL, *id = NULL;
	struct args a = { 0 };
	int err = 0;

	err = cmd_options("detach", argc, argv, opts, detach_opt, &a);
	if (err)
		return err;
	if (!a.cgroup == !a.id)
		return cmd_usage("detach: give exactly one of --cgroup PATH and --id NAME");
	if (a.id && !oci_id_valid(a.id))
		return cmd_usage("detach: --id '%s' is not a valid name", a.id);
	err = (a.cgroup ? cgroup_arg(a.cgroup, &path) : 0) ?: cmd_require_privileges();
	if (err)
		return err;

	if (a.id) {
		err = container_unguard(&container_env_live, a.id, true);
		if (err == -ENOENT)
			return nsg_fail(ENOENT, "detach: no container %s is guarded (no %s/%s.json)",
					a.id, NSGUARD_RECORD_DIR, a.id);
		if (err)
			return nsg_fail_context(err, "detach %s", a.id);
		if (a.json)
			return print_json(a.id, NULL, 0, NULL, false);
		printf("detached %s\n", a.id);
		return 0;
	}
	err = container_unguard_cgroup(&container_env_live, path, &id);
	if (err)
		return nsg_fail_context(err, "detach");
	if (a.json)
		return print_json(id, path, 0, NULL, false);
	if (id)
		printf("detached %s (cgroup %s)\n", id, path);
	else
		printf("detached cgroup %s\n", path);
	return 0;
}
