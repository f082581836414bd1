// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nsguard check: one ok/missing line per requirement, a trial attach and the
 * admin config; nsguard check --config FILE: every error of FILE, nothing else.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <linux/magic.h>
#include <bpf/btf.h>

#include "cgroup.h"
#include "cmd.h"
#include "config.h"
#include "json.h"
#include "guard.h"
#include "log.h"
#include "policy.h"
#include "util.h"

static int missing;
static struct jv *checks; /* --json: the list of checks, else NULL */

static void report(bool good, const char *what, const char *detail)
{
	struct jv *o;

	missing += !good;
	if (!checks) {
		if (good)
			printf("ok       %s\n", what);
		else
			printf("missing  %s: %s\n", what, detail);
		return;
	}
	o = jv_new_object();
	if (!o || !jv_append(checks, o) || !jv_add_string(o, "check", what) ||
	    !jv_add_bool(o, "ok", good) ||
	    !json_add_string_or_null(o, "detail", detail))
		missing++; /* out of memory: never report success */
}

static void ok(const char *what)
{
	report(true, what, NULL);
}

static void miss(const char *what, const char *todo)
{
	report(false, what, todo);
}

static bool fs_is(const char *path, long magic)
{
	struct statfs sfs;

	return statfs(path, &sfs) == 0 && sfs.f_type == magic;
}

/*
 * What nsguard needs of the kernel, looked up by name in its BTF (a file
 * read, no bpf()), so that a missing piece is named instead of surfacing as
 * a load error.  An enumerator when enumerator is set, else a function.
 */
static const struct kernel_feature {
	const char *what, *type, *enumerator, *since;
} kernel_features[] = {
	{ "userns_create LSM hook", "bpf_lsm_userns_create", NULL, "6.1" },
	{ "BPF_LSM_CGROUP attach type", "bpf_attach_type", "BPF_LSM_CGROUP", "6.0" },
	{ "bpf_set_retval() helper", "bpf_func_id", "BPF_FUNC_set_retval", "5.18" },
	{ "cgroup local storage", "bpf_map_type", "BPF_MAP_TYPE_CGROUP_STORAGE", "4.19" },
	{ "BPF ring buffer", "bpf_map_type", "BPF_MAP_TYPE_RINGBUF", "5.8" },
};

static bool btf_has(const struct btf *btf, const struct kernel_feature *f)
{
	const struct btf_type *t;
	const struct btf_enum *e;
	__s32 id;

	if (!f->enumerator)
		return btf__find_by_name_kind(btf, f->type, BTF_KIND_FUNC) > 0;
	id = btf__find_by_name_kind(btf, f->type, BTF_KIND_ENUM);
	t = id > 0 ? btf__type_by_id(btf, id) : NULL;
	if (!t)
		return false;
	e = btf_enum(t);
	for (int i = 0; i < btf_vlen(t); i++, e++)
		if (strcmp(btf__name_by_offset(btf, e->name_off), f->enumerator) == 0)
			return true;
	return false;
}

/* The running kernel: its release (also kernel.release with --json), its BTF, its features. */
static void check_kernel(struct jv *doc)
{
	unsigned major = 0, minor = 0;
	struct btf *btf;
	struct utsname u;
	char msg[512];
	struct jv *o;

	if (uname(&u) < 0) {
		miss("kernel release", strerror(errno));
		return;
	}
	o = doc ? jv_add_object(doc, "kernel") : NULL;
	if (doc && (!o || !jv_add_string(o, "release", u.release) ||
		    !jv_add_string(o, "machine", u.machine)))
		missing++; /* out of memory: never report success */
	snprintf(msg, sizeof(msg), "kernel %s %s (nsguard needs 6.1 or later; tested on %s)", u.release,
		 u.machine, NSGUARD_TESTED_KERNELS);
	if (sscanf(u.release, "%u.%u", &major, &minor) == 2 && (major > 6 || (major == 6 && minor >= 1)))
		ok(msg);
	else
		miss(msg, "Linux 6.1 added the userns_create LSM hook that nsguard attaches to");

	btf = btf__load_vmlinux_btf();
	if (!btf) {
		miss("kernel BTF at /sys/kernel/btf/vmlinux",
		     "use a kernel built with CONFIG_DEBUG_INFO_BTF=y");
		return;
	}
	ok("kernel BTF at /sys/kernel/btf/vmlinux");
	for (size_t i = 0; i < sizeof(kernel_features) / sizeof(kernel_features[0]); i++) {
		const struct kernel_feature *f = &kernel_features[i];

		snprintf(msg, sizeof(msg), "kernel feature: %s (%s, Linux %s)", f->what,
			 f->enumerator ?: f->type, f->since);
		if (btf_has(btf, f))
			ok(msg);
		else
			miss(msg, "not in the kernel's BTF: this kernel is too old or built without it");
	}
	btf__free(btf);
}

/*
 * The probe: a child joins the trial cgroup, asks for a user namespace
 * (counted: the counters say it was decided) and tries a LINK_DETACH, which
 * the bpf() guard must refuse (exit status bit 4 when it did not).
 */
static int probe_unshare(void *data)
{
	const char *procs = data;
	int status = 0, fd;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return nsg_fail(errno, "fork: %s", strerror(errno));
	if (pid == 0) {
		fd = open(procs, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, "0\n", 2) != 2)
			_exit(2);
		close(fd);
		_exit((unshare(CLONE_NEWUSER) == 0 ? 1 : 0) | (guard_bpf_refused() ? 0 : 4));
	}
	if (waitpid(pid, &status, 0) < 0)
		return nsg_fail(errno, "waitpid: %s", strerror(errno));
	if (!WIFEXITED(status) || WEXITSTATUS(status) == 2)
		return nsg_fail(EIO, "the probe process could not join %s", procs);
	if (WEXITSTATUS(status) & 4)
		return nsg_fail(EOPNOTSUPP, "attached, but the bpf() guard did not refuse a "
					    "LINK_DETACH from the trial cgroup");
	return 0;
}

static void check_trial(void)
{
	const char *what = "trial load + attach of the lsm_cgroup program";
	char dir[64], procs[96], msg[4200];
	struct nsguard_counters cnt = { 0 };
	struct stat sb;
	int fd, err = 0;

	snprintf(dir, sizeof(dir), CGROUP_ROOT "/nsguard-check.%d", (int)getpid());
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
	if (mkdir(dir, 0755) < 0) {
		snprintf(msg, sizeof(msg), "cannot create the test cgroup %s: %s", dir, strerror(errno));
		miss(what, msg);
		return;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &sb) < 0) {
		err = nsg_fail(errno, "cannot open %s: %s", dir, strerror(errno));
	} else {
		err = guard_trial(fd, sb.st_ino, probe_unshare, procs, &cnt);
		if (!err && cnt.denied == 0)
			err = nsg_fail(EOPNOTSUPP,
				       "attached, but userns_create was never decided by it: is bpf "
				       "in /sys/kernel/security/lsm?");
	}
	if (fd >= 0)
		close(fd);
	/* The probe has been reaped, but the cgroup may take a moment to empty. */
	for (int i = 0; i < 50 && rmdir(dir) < 0 && errno == EBUSY; i++)
		usleep(20000);
	if (err) {
		snprintf(msg, sizeof(msg), "%s", nsg_last_error());
		miss(what, msg);
	} else {
		ok("trial load + attach of the lsm_cgroup programs (they denied a test user namespace "
		   "and a LINK_DETACH)");
	}
}

/* The errors of one config file: printed, or kept for --json. */
struct config_report {
	struct jv *errors; /* --json */
	int n;
};

static void config_error(unsigned line, const char *msg, void *data)
{
	struct config_report *r = data;
	struct jv *o;

	r->n++;
	/* Not a line's error (the file cannot be read): one nsguard: line. */
	if (!r->errors && line == 0) {
		fflush(stdout);
		fprintf(stderr, "nsguard: %s\n", msg);
		return;
	}
	if (!r->errors) {
		printf("%s\n", msg);
		return;
	}
	o = jv_new_object();
	if (o && jv_append(r->errors, o)) {
		jv_add_number(o, "line", line);
		jv_add_string(o, "message", msg);
	}
}

/*
 * Every error of the admin config at path, each "path:line: message".  An
 * absent default file is fine (the built-in defaults apply); an absent named
 * one is an error.  Adds {"config", "valid", "errors"} to doc with --json.
 * Returns the number of errors.
 */
/* "default-mode allow, allowed-modes deny, allow, max-depth 2, errno EPERM, max-count unlimited" */
static void describe_keys(const struct nsguard_config *c, char *buf, size_t len)
{
	char modes[64], cnt[16];

	policy_modes_list(c->allowed_modes, modes, sizeof(modes));
	snprintf(buf, len, "default-mode %s, allowed-modes %s, max-depth %u, errno %s, max-count %s",
		 policy_mode_name(c->default_mode), modes, c->max_depth,
		 policy_errno_show(c->default_err),
		 policy_field_show(&policy_fields[POLICY_MAX_COUNT], c->max_count, cnt, sizeof(cnt)));
}

/*
 * The sections of a sound config, in the order that decides among globs
 * (an exact name wins over them all): text lines, or "sections" in o.
 */
static void report_sections(const struct nsguard_config *cfg, struct jv *o)
{
	cleanup_free struct nsguard_config *eff = malloc(sizeof(*eff));
	struct jv *arr = o ? jv_new_array() : NULL;
	char desc[256], name[80];

	if (!eff || (o && (!arr || !jv_add_take(o, "sections", arr))))
		return;
	if (!o)
		printf("ok       %u [namespace] section%s; identity-source %s (key %s)\n",
		       cfg->n_sections, cfg->n_sections == 1 ? "" : "s",
		       identity_source_name(cfg->identity_source),
		       identity_key(cfg->identity_source, IDENT_NAMESPACE) ?: "none: no section applies");
	for (int i = -1; i < (int)cfg->n_sections; i++) {
		cleanup_jv struct jv *e = NULL;

		config_section_apply(cfg, i, eff);
		describe_keys(eff, desc, sizeof(desc));
		config_section_name(cfg, i, name, sizeof(name));
		if (!o) {
			if (i < 0)
				printf("         node (no trusted namespace, or none matches): %s\n", desc);
			else
				printf("         [namespace %s] line %u%s: %s\n", cfg->sections[i].pattern,
				       cfg->sections[i].line, cfg->sections[i].glob ? " (glob)" : "",
				       desc);
			continue;
		}
		e = jv_new_object();
		if (!e || !jv_add_string(e, "name", name) ||
		    !(i >= 0 ? jv_add_number(e, "line", cfg->sections[i].line) : jv_add_null(e, "line")) ||
		    !jv_add_bool(e, "glob", i >= 0 && cfg->sections[i].glob) ||
		    !jv_add_string(e, "keys", desc) || !jv_append(arr, e))
			return;
		e = NULL; /* arr's now */
	}
}

static int check_config(const char *path, bool named, struct jv *doc)
{
	struct config_report r = { 0 };
	struct nsguard_config cfg;
	bool exists = access(path, F_OK) == 0 || errno != ENOENT;
	bool absent = !named && !exists;
	struct jv *o = NULL;

	if (doc) {
		o = jv_add_object(doc, "config");
		r.errors = o ? jv_new_array() : NULL;
		if (!r.errors || !jv_add_string(o, "path", path) ||
		    !jv_add_bool(o, "exists", exists) || !jv_add_take(o, "errors", r.errors)) {
			nsg_fail(ENOMEM, "out of memory");
			return 1;
		}
	}
	if (!absent && config_check(path, config_error, &r, &cfg) < 0 && r.n == 0)
		r.n = 1;
	nsg_clear_error();
	if (o)
		jv_add_bool(o, "valid", r.n == 0);
	if (o && !absent && !r.n)
		report_sections(&cfg, o);
	if (o)
		;
	else if (absent)
		printf("ok       admin config %s absent: the built-in defaults apply\n", path);
	else if (r.n)
		printf("%s: %d error%s\n", path, r.n, r.n == 1 ? "" : "s");
	else
		printf("ok       admin config %s\n", path);
	if (!o && !absent && !r.n && cfg.n_sections)
		report_sections(&cfg, NULL);
	return r.n;
}

static int check_opt(int opt, const char *arg, void *data)
{
	*(bool *)data = true; /* --json */
	return 0;
}

int cmd_check(struct cmd_ctx *ctx, int argc, char **argv)
{
	static const struct cmd_option opts[] = {
		{ .name = "json", .val = 'j', .help = "one JSON object" },
		{},
	};
	char list[256] = "", msg[4200], abi[GUARD_ABI_LEN];
	cleanup_jv struct jv *doc = NULL;
	bool json = false, priv;
	int err = cmd_options("check", argc, argv, opts, check_opt, &json);

	if (err)
		return err;
	if (json) {
		doc = jv_new_object();
		if (!doc)
			return nsg_fail(ENOMEM, "out of memory");
	}
	/* --config FILE: that file only, and nothing of the kernel (no bpf()). */
	if (ctx->config_path) {
		missing = check_config(ctx->config_path, true, doc);
		if (doc && (!jv_add_bool(doc, "ok", missing == 0) || json_print(doc)))
			return nsg_fail(ENOMEM, "out of memory");
		nsg_clear_error();
		return missing ? 1 : 0;
	}
	if (doc) {
		checks = jv_add_array(doc, "checks");
		if (!checks)
			return nsg_fail(ENOMEM, "out of memory");
	}

	check_kernel(doc);
	/* The ABI is a build-time constant: it must be the carried object's. */
	guard_abi(abi);
	if (guard_abi_embedded()) {
		snprintf(msg, sizeof(msg), "this build's ABI %s is its BPF object's", abi);
		ok(msg);
	} else {
		snprintf(msg, sizeof(msg), "this build's ABI %s is not its BPF object's hash", abi);
		miss(msg, "a broken build: make clean && make");
	}
	priv = cmd_require_privileges() == 0;
	if (priv)
		ok("running as root with CAP_SYS_ADMIN and CAP_BPF");
	else
		miss("privileges", nsg_last_error());

	if (fs_is(CGROUP_ROOT, CGROUP2_SUPER_MAGIC))
		ok("cgroup v2 at " CGROUP_ROOT);
	else
		miss("cgroup v2 at " CGROUP_ROOT, "mount it with `mount -t cgroup2 none /sys/fs/cgroup` "
						  "(systemd: systemd.unified_cgroup_hierarchy=1)");

	if (fs_is("/sys/fs/bpf", BPF_FS_MAGIC))
		ok("bpffs at /sys/fs/bpf");
	else
		miss("bpffs at /sys/fs/bpf", "run `mount -t bpf bpf /sys/fs/bpf`");

	if (guard_lsm_check(list, sizeof(list)) == 0) {
		snprintf(msg, sizeof(msg), "BPF LSM active (/sys/kernel/security/lsm: %s)", list);
		ok(msg);
	} else {
		miss("BPF LSM", nsg_last_error());
	}


	if (!priv)
		miss("trial load + attach of the lsm_cgroup program", "needs the privileges above");
	else if (!fs_is(CGROUP_ROOT, CGROUP2_SUPER_MAGIC))
		miss("trial load + attach of the lsm_cgroup program", "needs cgroup v2 (above)");
	else
		check_trial();
	nsg_clear_error();
	missing += check_config(NSGUARD_DEFAULT_CONFIG, false, doc);
	if (doc && (!jv_add_bool(doc, "ok", missing == 0) || json_print(doc)))
		return nsg_fail(ENOMEM, "out of memory");
	nsg_clear_error();
	return missing ? 1 : 0;
}
