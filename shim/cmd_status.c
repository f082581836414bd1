// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nsguard status [--format text|json|prometheus] [--json]: records, their
 * live policy and counters.
 */
#include <errno.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "cmd.h"
#include "guard.h"
#include "json.h"
#include "log.h"
#include "metrics.h"
#include "outcomes.h"
#include "policy.h"
#include "record.h"
#include "util.h"

enum status_format { FORMAT_TEXT, FORMAT_JSON, FORMAT_PROMETHEUS };

struct status {
	struct guard *g; /* NULL when the program is not loaded */
	enum status_format format;
	bool json_flag; /* --json given */
	const char *format_arg; /* --format given */
	const char *output; /* --output FILE: written whole, then renamed */
	struct jv *list; /* json */
	/* prometheus: one entry per record, its identity owned here */
	struct metrics_container *mc;
	struct pod_identity *ids;
	size_t n, cap;
};

static int metrics_add(struct status *s, const struct nsguard_record *rec,
		       const struct nsguard_policy *pol, const struct nsguard_counters *cnt,
		       int state)
{
	if (s->n == s->cap) {
		size_t cap = s->cap * 2 + 16;
		struct metrics_container *mc = realloc(s->mc, cap * sizeof(*mc));
		struct pod_identity *ids;

		if (!mc)
			return -ENOMEM;
		s->mc = mc;
		ids = realloc(s->ids, cap * sizeof(*ids));
		if (!ids)
			return -ENOMEM;
		s->ids = ids;
		s->cap = cap;
	}
	if (identity_copy(&s->ids[s->n], &rec->identity) < 0)
		return -ENOMEM;
	s->mc[s->n] = (struct metrics_container){ .id = strdup(rec->id),
						  .attached = state == GUARD_LINK_ATTACHED,
						  .detached = state == GUARD_LINK_DETACHED,
						  .mode = policy_mode_name(pol->mode),
						  .cnt = *cnt };
	s->n++;
	return s->mc[s->n - 1].id ? 0 : -ENOMEM;
}

static void metrics_free(struct status *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free((char *)s->mc[i].id);
		identity_free(&s->ids[i]);
	}
	free(s->mc);
	free(s->ids);
}

static int show_one(const struct nsguard_record *rec, void *data)
{
	struct status *s = data;
	struct nsguard_policy pol = rec->policy;
	struct nsguard_counters cnt = { 0 };
	/*
	 * Guarded means attached, by the kernel's word on its links, not a
	 * pin that exists: a link detached under nsguard keeps its pin.  A
	 * state that cannot be read counts as detached (not guarded).
	 */
	int state = guard_link_state(NSGUARD_PIN_DIR, rec->cgroup_id);
	bool attached = state == GUARD_LINK_ATTACHED;
	char num[16];
	struct jv *o;

	if (state < 0) {
		nsg_warn("status: container %s: %s", rec->id, nsg_last_error());
		state = GUARD_LINK_DETACHED;
	}
	/* The map is the truth while pinned (storage outlives a detach); the record otherwise. */
	if (s->g && state != GUARD_LINK_NONE) {
		if (guard_read_policy(s->g, rec->cgroup_id, &pol) < 0)
			pol = rec->policy;
		if (guard_read_counters(s->g, rec->cgroup_id, &cnt) < 0)
			memset(&cnt, 0, sizeof(cnt));
	}
	nsg_clear_error();

	if (s->format == FORMAT_PROMETHEUS)
		return metrics_add(s, rec, &pol, &cnt, state);
	if (s->format == FORMAT_TEXT) {
		printf("container %s\n", rec->id);
		for (int f = 0; f < IDENT_COUNT; f++) {
			char label[32];

			snprintf(label, sizeof(label), "%s:", identity_name(f));
			if (rec->identity.v[f])
				printf("  %-12s%s\n", label, rec->identity.v[f]);
		}
		printf("  cgroup:     %s (id %llu)\n", rec->cgroup_path,
		       (unsigned long long)rec->cgroup_id);
		for (size_t i = 0; i < POLICY_FIELD_COUNT; i++) {
			const struct policy_field *f = &policy_fields[i];
			char label[32];

			snprintf(label, sizeof(label), "%s:", f->name);
			printf("  %-12s%s\n", label,
			       policy_field_show(f, policy_field_get(&pol, f), num, sizeof(num)));
		}
		printf("  created:    %u/%s user namespaces, deepest %u\n", pol.created,
		       policy_field_show(&policy_fields[POLICY_MAX_COUNT], pol.max_count, num,
					 sizeof(num)),
		       policy_deepest(pol.depths));
		printf("  allowed:    %llu\n", (unsigned long long)cnt.allowed);
		printf("  denied:     %llu\n", (unsigned long long)cnt.denied);
		printf("  audited:    %llu\n", (unsigned long long)cnt.audited);
		printf("  dropped:    %llu events\n", (unsigned long long)cnt.events_dropped);
		if (state == GUARD_LINK_DETACHED)
			printf("  link:       DETACHED, not guarded: %s is pinned but no longer "
			       "attached to the cgroup (the next hook, nsguard attach or gc attaches "
			       "it anew)\n\n",
			       rec->link_pin);
		else
			printf("  link:       %s\n\n", attached ? rec->link_pin : "not pinned (detached)");
		return 0;
	}
	o = jv_new_object();
	if (!o)
		return -ENOMEM;
	jv_append(s->list, o);
	if (!jv_add_string(o, "id", rec->id) ||
	    !jv_add_string(o, "cgroup", rec->cgroup_path) ||
	    !json_add_u64(o, "cgroup_id", rec->cgroup_id))
		return -ENOMEM;
	for (int f = 0; f < IDENT_COUNT; f++)
		if (rec->identity.v[f] &&
		    !jv_add_string(o, identity_name(f), rec->identity.v[f]))
			return -ENOMEM;
	if (!json_add_policy(o, &pol) || !jv_add_number(o, "created", pol.created) ||
	    !jv_add_number(o, "deepest", policy_deepest(pol.depths)) ||
	    !jv_add_bool(o, "attached", attached) ||
	    !jv_add_string(o, "link", guard_link_state_name(state)) ||
	    !json_add_u64(o, "allowed", cnt.allowed) ||
	    !json_add_u64(o, "denied", cnt.denied) ||
	    !json_add_u64(o, "audited", cnt.audited) ||
	    !json_add_u64(o, "events_dropped", cnt.events_dropped))
		return -ENOMEM;
	return 0;
}

static int status_opt(int opt, const char *arg, void *data)
{
	struct status *s = data;
	enum status_format want;

	if (opt == 'o') {
		s->output = arg;
		return 0;
	}
	if (opt == 'j') {
		want = FORMAT_JSON;
		s->json_flag = true;
	} else if (strcmp(arg, "text") == 0) {
		want = FORMAT_TEXT;
	} else if (strcmp(arg, "json") == 0) {
		want = FORMAT_JSON;
	} else if (strcmp(arg, "prometheus") == 0) {
		want = FORMAT_PROMETHEUS;
	} else {
		return cmd_usage("status: --format wants text, json or prometheus, got '%s'", arg);
	}
	if (opt != 'j')
		s->format_arg = arg;
	/* --json is --format json: with another format it is a conflict. */
	if (s->json_flag && s->format_arg && strcmp(s->format_arg, "json") != 0)
		return cmd_usage("status: --json conflicts with --format %s", s->format_arg);
	s->format = want;
	return 0;
}

/*
 * stdout to a new file beside path, for renameat(dfd, tmp, dfd, base) once
 * complete.  Run as root into a directory others may write (the textfile
 * collector's is the prometheus user's parent's), so: the directory opened
 * without following a link and refused when another user may write it, the
 * file created O_EXCL|O_NOFOLLOW under a name the collector ignores.
 */
static int output_open(const char *path, int *dfd_out, char *tmp, size_t tmp_len)
{
	cleanup_free char *dir = strdup(path);
	cleanup_close int dfd = -1, fd = -1;
	char *slash = dir ? strrchr(dir, '/') : NULL;
	struct stat st;

	if (!slash || !slash[1])
		return nsg_fail(EINVAL, "status: --output %s: not a file name", path);
	*slash = '\0';
	dfd = open(dir[0] ? dir : "/", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0 || fstat(dfd, &st) < 0)
		return nsg_fail(errno, "status: --output: %s: %s", dir[0] ? dir : "/", strerror(errno));
	if ((st.st_uid != 0 && st.st_uid != geteuid()) ||
	    ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX)) || (st.st_mode & S_IWGRP))
		return nsg_fail(EPERM,
				"status: --output: %s may be written by another user (owner %u, "
				"mode %04o): not a place for root to write",
				dir, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
	snprintf(tmp, tmp_len, ".nsguard.%d.tmp", (int)getpid());
	unlinkat(dfd, tmp, 0); /* ours from an earlier run with our pid */
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return nsg_fail(errno, "status: --output: %s/%s: %s", dir, tmp, strerror(errno));
	fflush(stdout);
	if (dup2(fd, STDOUT_FILENO) < 0)
		return nsg_fail(errno, "status: --output: %s", strerror(errno));
	*dfd_out = steal_fd(&dfd);
	return 0;
}

int cmd_status(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct cmd_option opts[] = {
		{ .name = "format", .arg = "text|json|prometheus", .val = 'f',
		  .help = "the output format (default text)" },
		{ .name = "json", .val = 'j', .help = "--format json: 64-bit numbers as strings" },
		{ .name = "output", .arg = "FILE", .val = 'o',
		  .help = "write FILE in one rename, not stdout (the textfile collector's)" },
		{},
	};
	struct guard g = GUARD_INIT;
	struct nsguard_stats stats = { 0 };
	struct status s = { 0 };
	cleanup_jv struct jv *doc = NULL;
	unsigned long long outcomes[HOOK_RESULT_COUNT][HOOK_REASON_COUNT];
	char *text = NULL, abi[GUARD_ABI_LEN], other_why[512] = "", tmp[64];
	int dfd = -1;
	bool json, loaded, other;
	int err = 0;

	err = cmd_options("status", argc, argv, opts, status_opt, &s) ?:
	      cmd_require_privileges();
	if (err)
		return err;

	if (s.output && s.output[0] != '/')
		return cmd_usage("status: --output wants an absolute path, got '%s'", s.output);
	if (s.output) {
		err = output_open(s.output, &dfd, tmp, sizeof(tmp));
		if (err)
			return err;
	}
	err = guard_open(&g, false);
	loaded = err == 0;
	/* Another build's pins: say so (and the records), do not fail. */
	other = err == -ESTALE;
	if (other)
		snprintf(other_why, sizeof(other_why), "%s", nsg_last_error());
	if (err && err != -ENOENT && !other)
		goto out;
	nsg_clear_error();
	err = 0;
	if (loaded) {
		s.g = &g;
		err = guard_read_stats(&g, &stats);
		if (err)
			goto out;
	}
	json = s.format == FORMAT_JSON;
	if (json) {
		cleanup_jv struct jv *list = jv_new_array();

		doc = jv_new_object();
		if (!doc || !list || !jv_add_bool(doc, "loaded", loaded || other) ||
		    !jv_add_bool(doc, "other_build", other) ||
		    !json_add_u64(doc, "events_dropped", stats.events_dropped) ||
		    !json_add_u64(doc, "decisions", stats.decisions) ||
		    !jv_add(doc, "containers", list)) {
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
	if (s.format == FORMAT_PROMETHEUS) {
		struct metrics m = { .version = nsguard_version, .commit = nsguard_commit,
				     .abi = abi, .other_build = other, .outcomes = outcomes,
				     .loaded = loaded || other, .stats = stats, .c = s.mc,
				     .n = s.n };

		guard_abi(abi);
		err = outcomes_read(NSGUARD_OUTCOMES_FILE, outcomes);
		if (err)
			goto out;

		/* Only now: ids moved while it grew. */
		for (size_t i = 0; i < s.n; i++)
			s.mc[i].identity = &s.ids[i];
		if (metrics_write(stdout, &m) < 0)
			err = nsg_fail(EIO, "status: writing the metrics: %s", strerror(errno));
	} else if (json) {
		text = jv_format(doc);
		if (!text) {
			err = nsg_fail(ENOMEM, "out of memory");
			goto out;
		}
		printf("%s\n", text);
	} else {
		if (loaded)
			printf("program:        loaded (pinned at %s)\n", NSGUARD_PIN_PROG);
		else if (other)
			printf("program:        another build's: %s\n"
			       "                (the next container start, or nsguard upgrade, "
			       "moves it to this build's; counters are not read)\n",
			       other_why);
		else
			printf("program:        not loaded\n");
		printf("events dropped: %llu\n", (unsigned long long)stats.events_dropped);
		printf("decisions:      %llu\n", (unsigned long long)stats.decisions);
	}
out:
	free(text);
	metrics_free(&s);
	guard_close(&g);
	if (s.output) {
		const char *base = strrchr(s.output, '/') + 1;

		if (!err && (fflush(stdout) != 0 || ferror(stdout)))
			err = nsg_fail(errno ?: EIO, "status: writing %s: %s", tmp, strerror(errno ?: EIO));
		if (!err && renameat(dfd, tmp, dfd, base) < 0)
			err = nsg_fail(errno, "status: %s: %s", s.output, strerror(errno));
		if (err)
			unlinkat(dfd, tmp, 0);
		close(dfd);
	}
	return err;
}
