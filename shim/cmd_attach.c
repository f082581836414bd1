// SPDX-License-Identifier: GPL-2.0-or-later
/* attach / detach: guard a cgroup by hand, or stop guarding one. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cgroup.h"
#include "cmd.h"
#include "config.h"
#include "container.h"
#include "guard.h"
#include "log.h"
#include "policy.h"
#include "record.h"
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

/* The mode/depth/errno options go through policy_resolve as annotations. */
static int add_option(struct oci_annotation *ann, size_t *n, const char *key, char *value)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp(ann[i].key, key) == 0)
			return -EINVAL;
	ann[(*n)++] = (struct oci_annotation){ (char *)key, value };
	return 0;
}

int cmd_attach(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cgroup", required_argument, NULL, 'g' },
		{ "mode", required_argument, NULL, 'm' },
		{ "max-depth", required_argument, NULL, 'd' },
		{ "errno", required_argument, NULL, 'e' },
		{ "id", required_argument, NULL, 'i' },
		{ "base-level", required_argument, NULL, 'b' },
		{},
	};
	struct oci_annotation ann[3];
	struct nsguard_config cfg;
	struct nsguard_policy pol = { 0 };
	cleanup_free char *path = NULL, *defid = NULL;
	const char *cgroup = NULL, *id = NULL;
	unsigned int base = 0;
	bool refused = false;
	size_t n = 0;
	__u64 cgid = 0;
	int opt, err = 0;

	while ((opt = getopt_long(argc, argv, "+:", opts, NULL)) != -1) {
		switch (opt) {
		case 'g':
			cgroup = optarg;
			break;
		case 'm':
			if (add_option(ann, &n, ANNOTATION_MODE, optarg) < 0)
				return cmd_usage("attach: option '%s' given twice", argv[optind - 1]);
			break;
		case 'd':
			if (add_option(ann, &n, ANNOTATION_MAX_DEPTH, optarg) < 0)
				return cmd_usage("attach: option '%s' given twice", argv[optind - 1]);
			break;
		case 'e':
			if (add_option(ann, &n, ANNOTATION_ERRNO, optarg) < 0)
				return cmd_usage("attach: option '%s' given twice", argv[optind - 1]);
			break;
		case 'i':
			id = optarg;
			break;
		case 'b':
			if (parse_uint(optarg, NSGUARD_MAX_DEPTH, &base) < 0)
				return cmd_usage("--base-level wants a level 0..%d, got '%s'",
						 NSGUARD_MAX_DEPTH, optarg);
			break;
		case ':':
			return cmd_usage("attach: option '%s' needs an argument", argv[optind - 1]);
		default:
			return cmd_usage("attach: unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cmd_usage("attach: unexpected argument '%s'", argv[optind]);
	if (!cgroup)
		return cmd_usage("attach: --cgroup PATH is required");
	if (id && !oci_id_valid(id))
		return cmd_usage("attach: --id '%s' is not a valid name ([A-Za-z0-9_.+-], not "
				 "starting with '.')", id);
	err = cmd_require_privileges();
	if (err)
		return err;
	err = cmd_load_config(ctx, &cfg);
	if (err)
		return err;
	err = policy_resolve(&cfg, ann, n, &pol);
	if (err)
		return err;
	pol.base_level = base;
	err = cgroup_arg(cgroup, &path);
	if (err)
		return err;
	err = cgroup_id_of_path(CGROUP_ROOT, path, &cgid);
	if (err)
		return err;
	if (!id) {
		if (asprintf(&defid, "cgroup-%llu", (unsigned long long)cgid) < 0) {
			defid = NULL;
			return nsg_fail(ENOMEM, "out of memory");
		}
		id = defid;
	}
	err = container_guard(id, 0, path, false, &pol, &refused);
	if (err)
		return nsg_fail_context(err, "attach %s", path);
	printf("attached %s to cgroup %s (id %llu): mode %s, max-depth %u, errno %s, base-level %u\n",
	       id, path, (unsigned long long)cgid, policy_mode_name(pol.mode), pol.max_depth,
	       policy_errno_name(pol.err) ?: "?", pol.base_level);
	return 0;
}

struct find_path {
	const char *path;
	char *id;
};

static int match_path(const struct nsguard_record *rec, void *data)
{
	struct find_path *f = data;

	if (f->id || strcmp(rec->cgroup_path, f->path) != 0)
		return 0;
	f->id = strdup(rec->id);
	return f->id ? 1 : -ENOMEM;
}

int cmd_detach(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cgroup", required_argument, NULL, 'g' },
		{ "id", required_argument, NULL, 'i' },
		{},
	};
	struct nsguard_record rec = { 0 };
	struct find_path f = { 0 };
	cleanup_free char *path = NULL;
	const char *cgroup = NULL, *id = NULL;
	__u64 cgid = 0;
	int opt, err = 0;

	while ((opt = getopt_long(argc, argv, "+:", opts, NULL)) != -1) {
		switch (opt) {
		case 'g':
			cgroup = optarg;
			break;
		case 'i':
			id = optarg;
			break;
		case ':':
			return cmd_usage("detach: option '%s' needs an argument", argv[optind - 1]);
		default:
			return cmd_usage("detach: unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cmd_usage("detach: unexpected argument '%s'", argv[optind]);
	if (!cgroup == !id)
		return cmd_usage("detach: give exactly one of --cgroup PATH and --id NAME");
	if (id && !oci_id_valid(id))
		return cmd_usage("detach: --id '%s' is not a valid name", id);
	err = cmd_require_privileges();
	if (err)
		return err;

	if (id) {
		err = container_unguard(id, true);
		if (err == -ENOENT)
			return nsg_fail(ENOENT, "detach: no container %s is guarded (no %s/%s.json)",
					id, NSGUARD_RECORD_DIR, id);
		if (err)
			return nsg_fail_context(err, "detach %s", id);
		printf("detached %s\n", id);
		return 0;
	}

	err = cgroup_arg(cgroup, &path);
	if (err)
		return err;
	err = cgroup_id_of_path(CGROUP_ROOT, path, &cgid);
	if (err == 0) {
		err = record_find_cgroup(NSGUARD_RECORD_DIR, cgid, &rec);
		if (err == 0) {
			f.id = strdup(rec.id);
			record_free(&rec);
			if (!f.id)
				return nsg_fail(ENOMEM, "out of memory");
		} else if (err != -ENOENT) {
			return err;
		} else if (!guard_link_pinned(cgid)) {
			return nsg_fail(ENOENT, "detach: cgroup %s is not guarded", path);
		} else {
			/* A link without a record (a failed attach): unpin, under the
			 * lock so that it is not a hook's link about to be recorded. */
			cleanup_close int lock = -1;

			err = guard_lock(&lock);
			if (!err && record_find_cgroup(NSGUARD_RECORD_DIR, cgid, &rec) == 0) {
				record_free(&rec);
				return nsg_fail(EBUSY, "detach: cgroup %s was guarded meanwhile; "
						       "detach it by id", path);
			}
			if (!err)
				err = guard_detach(cgid);
			if (!err)
				printf("detached cgroup %s\n", path);
			return err;
		}
	} else if (err == -ENOENT) {
		/* The cgroup is gone: find its record by path. */
		f.path = path;
		err = record_foreach(NSGUARD_RECORD_DIR, match_path, &f);
		if (err < 0)
			return err;
		if (!f.id)
			return nsg_fail(ENOENT, "detach: cgroup %s does not exist and no record names it",
					path);
	} else {
		return err;
	}
	err = container_unguard(f.id, true);
	if (!err)
		printf("detached %s (cgroup %s)\n", f.id, path);
	else
		nsg_fail_context(err, "detach %s", f.id);
	free(f.id);
	return err;
}
