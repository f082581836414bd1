// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nsguard runtime: an OCI runtime command line for nodes that register a
 * runtime binary rather than hooks (containerd's runc shim, Docker).  On
 * create, run and restore it adds nsguard's hooks and its own annotations
 * to the bundle's config.json; then, for every subcommand, it execs the
 * real runtime with the same arguments.  The exec keeps the pid, stdio, signals,
 * every inherited fd (console socket, --preserve-fds, LISTEN_FDS) and the
 * exit status the runtime's own.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "config.h"
#include "fileio.h"
#include "log.h"
#include "oci.h"
#include "policy.h"
#include "spec.h"
#include "util.h"

#define RUNTIME_DEFAULT "runc"
#define ANNOTATIONS_MAX 8

struct runtime_opts {
	const char *runtime; /* --runtime */
	const char *keys[ANNOTATIONS_MAX];
	const char *values[ANNOTATIONS_MAX];
	char *owned[ANNOTATIONS_MAX];
	size_t n;
};

static const char usage_text[] =
	"Usage: nsguard runtime [--runtime PATH] [--annotation KEY=VALUE]... [--] RUNTIME-ARGS...\n"
	"\n"
	"Run the OCI runtime with nsguard's hooks added: on create and run, add\n"
	"nsguard's createRuntime and poststop hooks and the annotations to the\n"
	"bundle's config.json, then exec the runtime with RUNTIME-ARGS unchanged.\n"
	"Invoked as nsguard-runtime it takes RUNTIME-ARGS only; as nsguard-runtime-MODE\n"
	"it also sets nsguard.io/userns=MODE.\n"
	"\n"
	"Options:\n"
	"  --runtime PATH    the real runtime (default: runtime in the config, else runc)\n"
	"  --annotation KEY=VALUE\n"
	"                    set an nsguard.io/ annotation, replacing the bundle's (repeatable)\n"
	"  --config PATH     the admin config, for the wrapper and the hooks it adds\n"
	"                    (default /etc/nsguard/nsguard.conf)\n"
	"  -h, --help        this text\n"
	"\n"
	"See nsguard(8), RUNTIME WRAPPER.\n";

static int add_annotation(struct runtime_opts *o, const char *key, const char *value)
{
	char *k;

	if (!oci_annotation_is_ours(key))
		return cmd_usage("annotation \"%.64s\" is not an %s one", key, ANNOTATION_PREFIX);
	for (size_t i = 0; i < o->n; i++)
		if (strcmp(o->keys[i], key) == 0)
			return cmd_usage("annotation \"%.64s\" given twice", key);
	if (o->n == ANNOTATIONS_MAX)
		return cmd_usage("more than %d annotations", ANNOTATIONS_MAX);
	k = strdup(key);
	if (!k)
		return nsg_fail(ENOMEM, "out of memory");
	o->owned[o->n] = k;
	o->keys[o->n] = k;
	o->values[o->n++] = value;
	return 0;
}

static int parse_annotation(struct runtime_opts *o, const char *kv)
{
	const char *eq = strchr(kv, '=');
	cleanup_free char *key = NULL;

	if (!eq || eq == kv)
		return cmd_usage("--annotation \"%.64s\" is not KEY=VALUE", kv);
	key = strndup(kv, eq - kv);
	if (!key)
		return nsg_fail(ENOMEM, "out of memory");
	return add_annotation(o, key, eq + 1);
}

/* nsguard's own options, up to the first argument that is not one (or --). */
static int parse_own(struct cmd_ctx *ctx, int argc, char **argv, struct runtime_opts *o, int *i)
{
	enum { OPT_RUNTIME, OPT_ANNOTATION, OPT_CONFIG, OPT_COUNT };
	static const char *const names[OPT_COUNT] = { "--runtime", "--annotation", "--config" };

	for (*i = 1; *i < argc; (*i)++) {
		const char *a = argv[*i], *v;
		size_t k, len = 0;
		int err;

		if (strcmp(a, "--") == 0) {
			(*i)++;
			return 0;
		}
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			fputs(usage_text, stdout);
			return 1;
		}
		for (k = 0; k < OPT_COUNT; k++) {
			len = strlen(names[k]);
			if (strncmp(a, names[k], len) == 0 && (a[len] == '\0' || a[len] == '='))
				break;
		}
		if (k == OPT_COUNT)
			return 0; /* the runtime's first argument */
		if (a[len] == '=')
			v = a + len + 1;
		else if (*i + 1 < argc)
			v = argv[++*i];
		else
			return cmd_usage("option '%s' needs an argument", a);
		switch (k) {
		case OPT_ANNOTATION:
			err = parse_annotation(o, v);
			if (err < 0)
				return err;
			break;
		case OPT_RUNTIME:
			if (o->runtime)
				return cmd_usage("option '--runtime' given twice");
			o->runtime = v;
			break;
		case OPT_CONFIG:
			if (ctx->config_path)
				return cmd_usage("option '--config' given twice");
			ctx->config_path = v;
			break;
		}
	}
	return 0;
}

/* The runtime's global options that take a value (runc 1.1, crun 1.8). */
static bool global_takes_value(const char *a)
{
	static const char *const names[] = { "log", "log-format", "log-level", "root", "criu",
					     "rootless", "cgroup-manager" };

	a += a[1] == '-' ? 2 : 1;
	if (strchr(a, '='))
		return false;
	for (size_t k = 0; k < ARRAY_SIZE(names); k++)
		if (strcmp(a, names[k]) == 0)
			return true;
	return false;
}

/*
 * The bundle of `create`/`run` ARGS: "--bundle DIR", "--bundle=DIR" or
 * "-b DIR", the last one given; "." without one.  *edit false for --help.
 * What runc (Go flags) and crun (argp) would read differently is refused:
 * not knowing the bundle must not mean an unguarded start.
 */
static int find_bundle(int argc, char **argv, const char **bundle, bool *edit)
{
	static const char *const with_value[] = { "--console-socket", "--pid-file",
						  "--preserve-fds" };

	*bundle = ".";
	*edit = true;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--") == 0)
			break;
		if (a[0] != '-' || a[1] == '\0')
			continue;
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			*edit = false;
			return 0;
		}
		if (strcmp(a, "--bundle") == 0 || strcmp(a, "-b") == 0) {
			if (i + 1 >= argc)
				return nsg_fail(EINVAL, "option '%s' needs an argument", a);
			*bundle = argv[++i];
			continue;
		}
		if (strncmp(a, "--bundle=", 9) == 0) {
			*bundle = a + 9;
			continue;
		}
		if (strcmp(a, "--config") == 0 || strncmp(a, "--config=", 9) == 0 ||
		    strcmp(a, "-f") == 0)
			return nsg_fail(EINVAL, "the runtime's --config is not supported: nsguard "
						"edits the bundle's config.json");
		if (a[1] != '-' && (strlen(a) > 2 || a[1] == 'b' || a[1] == 'f') &&
		    strpbrk(a + 1, "bf"))
			return nsg_fail(EINVAL, "option '%.64s' names the bundle differently for "
						"runc and crun: use --bundle DIR",
					a);
		/* crun's argp takes "--bund" for --bundle; runc does not. */
		if (a[1] == '-' && strcspn(a, "=") > 2 && strcspn(a, "=") < 8 &&
		    (strncmp(a, "--bundle", strcspn(a, "=")) == 0 ||
		     strncmp(a, "--config", strcspn(a, "=")) == 0))
			return nsg_fail(EINVAL, "option '%.64s' is short for --bundle or --config to "
						"crun, not to runc: spell it out",
					a);
		for (size_t k = 0; k < ARRAY_SIZE(with_value); k++)
			if (strcmp(a, with_value[k]) == 0)
				i++;
	}
	if (!**bundle)
		return nsg_fail(EINVAL, "the bundle is an empty path");
	return 0;
}

struct self {
	dev_t dev;
	ino_t ino;
	const char *path; /* readlink of /proc/self/exe: what the wrapper writes */
};

/*
 * Exactly the path the wrapper writes for itself, the file itself (not a
 * symlink to it, nor another hard link or a symlinked directory on the way),
 * not reached through /proc or /dev: what the runtime will run is what this
 * process is.
 */
static bool is_self(const char *path, void *data)
{
	const struct self *me = data;
	cleanup_free char *real = realpath(path, NULL);
	struct stat st;

	/* Exactly the path the wrapper writes: no other link to the same file. */
	return real && strcmp(path, me->path) == 0 && strncmp(real, "/proc/", 6) != 0 &&
	       strncmp(real, "/dev/", 5) != 0 &&
	       lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_dev == me->dev &&
	       st.st_ino == me->ino;
}

/* Replace config.json in the bundle: same owner and mode, atomically. */
static int write_spec(int dfd, const char *bundle, const struct stat *st, const char *text)
{
	char tmp[64];
	cleanup_close int fd = -1;
	int err;

	snprintf(tmp, sizeof(tmp), ".config.json.nsguard-%d", (int)getpid());
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return nsg_fail(errno, "%s/%s: %s", bundle, tmp, strerror(errno));
	err = write_all(fd, text, strlen(text));
	if (err == 0 && fchown(fd, st->st_uid, st->st_gid) < 0)
		err = -errno;
	if (err == 0 && fchmod(fd, st->st_mode & 07777) < 0)
		err = -errno;
	if (err == 0 && fsync(fd) < 0)
		err = -errno;
	if (err == 0 && renameat(dfd, tmp, dfd, "config.json") < 0)
		err = -errno;
	if (err < 0) {
		unlinkat(dfd, tmp, 0);
		return nsg_fail(-err, "cannot write %s/config.json: %s", bundle, strerror(-err));
	}
	return 0;
}

/*
 * What the runtime would mount into the host's namespace before any hook
 * runs (the hook refuses the container then, too late to take it back).
 */
static int propagation_check(const char *text, size_t len)
{
	struct oci_state spec = { 0 };
	int err = oci_state_merge_config(&spec, text, len);

	if (!err)
		err = oci_rootfs_propagation_check(&spec);
	oci_state_free(&spec);
	return err;
}

static int guard_bundle(const char *bundle, const struct runtime_opts *o, const char *config)
{
	char self_path[PATH_MAX];
	struct stat st, exe;
	struct self me;
	cleanup_close int dfd = -1, fd = -1;
	cleanup_free char *text = NULL, *out = NULL;
	size_t len;
	ssize_t n;
	unsigned what;
	int err;

	n = readlink("/proc/self/exe", self_path, sizeof(self_path) - 1);
	if (n < 0 || stat("/proc/self/exe", &exe) < 0)
		return nsg_fail(errno, "cannot find the nsguard binary: %s", strerror(errno));
	self_path[n] = '\0';
	if (self_path[0] != '/' || strstr(self_path, " (deleted)"))
		return nsg_fail(ENOENT, "the nsguard binary %s is gone (upgraded?)", self_path);
	me = (struct self){ exe.st_dev, exe.st_ino, self_path };

	dfd = open(bundle, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return nsg_fail(errno, "bundle %s: %s", bundle, strerror(errno));
	fd = openat(dfd, "config.json", O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st) < 0)
		return nsg_fail(errno, "%s/config.json: %s", bundle, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return nsg_fail(EINVAL, "%s/config.json is not a regular file", bundle);
	/* The hook's limit too: a larger one would be refused there. */
	err = read_capped(fd, OCI_CONFIG_MAX, &text, &len);
	if (err < 0)
		return nsg_fail(-err, "%s/config.json: %s", bundle,
				err == -EFBIG ? "over 1 MiB" : strerror(-err));

	err = spec_edit_apply(text, len,
			      &(struct spec_edit){ .hook_path = self_path,
						   .config_path = config,
						   .is_self = is_self,
						   .data = &me,
						   .keys = o->keys,
						   .values = o->values,
						   .n = o->n,
						   .cgroupns = true },
			      &out, &what);
	if (err < 0)
		return nsg_fail_context(err, "%s/config.json", bundle);
	err = propagation_check(text, len);
	if (err < 0)
		return nsg_fail_context(err, "%s/config.json", bundle);
	nsg_info("runtime: %s/config.json:%s%s%s%s%s", bundle,
		  what & SPEC_ADDED_CREATE_RUNTIME ? " +createRuntime" : "",
		  what & SPEC_ADDED_POSTSTOP ? " +poststop" : "",
		  what & SPEC_SET_ANNOTATIONS ? " +annotations" : "",
		  what & SPEC_ADDED_CGROUPNS ? " +cgroup namespace" : "", out ? "" : " (unchanged)");
	return out ? write_spec(dfd, bundle, &st, out) : 0;
}

/* PATH, or a name looked up in $PATH, skipping nsguard itself. */
static int find_runtime(const char *name, char *path, size_t size)
{
	const char *dirs = getenv("PATH");
	struct stat exe, st;

	if (stat("/proc/self/exe", &exe) < 0)
		return nsg_fail(errno, "/proc/self/exe: %s", strerror(errno));
	if (strchr(name, '/')) {
		if (name[0] != '/')
			return nsg_fail(EINVAL, "runtime \"%s\" is not an absolute path", name);
		snprintf(path, size, "%s", name);
		if (stat(path, &st) < 0)
			return nsg_fail(errno, "runtime %s: %s", path, strerror(errno));
		if (st.st_dev == exe.st_dev && st.st_ino == exe.st_ino)
			return nsg_fail(ELOOP, "runtime %s is nsguard itself", path);
		return 0;
	}
	if (!dirs || !*dirs)
		dirs = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
	while (*dirs) {
		size_t dlen = strcspn(dirs, ":");

		if (dlen > 0 && dirs[0] == '/' &&
		    snprintf(path, size, "%.*s/%s", (int)dlen, dirs, name) < (int)size &&
		    stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0 &&
		    !(st.st_dev == exe.st_dev && st.st_ino == exe.st_ino))
			return 0;
		dirs += dlen + (dirs[dlen] == ':');
	}
	return nsg_fail(ENOENT, "runtime \"%s\" not found in PATH (set runtime in the config or "
				"--runtime)",
			name);
}

/* The subcommand's index in args (after the runtime's global options), or argc. */
static int subcommand(int argc, char **argv)
{
	int i;

	for (i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			return i + 1;
		if (argv[i][0] != '-')
			return i;
		if (global_takes_value(argv[i]))
			i++;
	}
	return argc;
}

int cmd_runtime_run(struct cmd_ctx *ctx, int argc, char **argv, const char *tier)
{
	struct runtime_opts o = { 0 };
	cleanup_free char *config = NULL;
	struct nsguard_config cfg;
	char path[PATH_MAX];
	const char *name;
	char **args;
	int first = 1, sub, err = 0;

	if (!tier) { /* nsguard runtime [OPTIONS] [--] ARGS */
		err = parse_own(ctx, argc, argv, &o, &first);
		if (err) {
			err = err > 0 ? 0 : err; /* 1: --help printed */
			goto out;
		}
	} else if (*tier) { /* nsguard-runtime-MODE */
		__u32 mode;

		if (policy_mode_parse(tier, &mode) < 0) {
			err = nsg_fail(EINVAL, "invoked as %s: \"%s\" is not a mode", argv[0], tier);
			goto out;
		}
		err = add_annotation(&o, ANNOTATION_PREFIX "userns", tier);
		if (err < 0)
			goto out;
	}
	args = argv + first;
	argc -= first;
	/* The hooks read the same file: by an absolute path, as they run
	 * elsewhere (runc runs them in the bundle). */
	if (ctx->config_path && ctx->config_path[0] != '/') {
		config = realpath(ctx->config_path, NULL);
		if (!config) {
			err = nsg_fail(errno, "config %s: %s", ctx->config_path, strerror(errno));
			goto out;
		}
		ctx->config_path = config;
	}
	name = o.runtime;
	/* A --config file is read here too: a broken one refuses now, not in the hook. */
	if (!name || ctx->config_path) {
		err = cmd_load_config(ctx, &cfg);
		if (err < 0)
			goto out;
		if (!name)
			name = cfg.runtime[0] ? cfg.runtime : RUNTIME_DEFAULT;
	}
	err = find_runtime(name, path, sizeof(path));
	if (err < 0)
		goto out;

	/* Every subcommand that makes a container from the bundle (restore too:
	 * runc and crun run its hooks) gets the hooks. */
	sub = subcommand(argc, args);
	if (sub < argc && (strcmp(args[sub], "create") == 0 || strcmp(args[sub], "run") == 0 ||
			   strcmp(args[sub], "restore") == 0)) {
		const char *bundle;
		bool edit;

		err = find_bundle(argc - sub - 1, args + sub + 1, &bundle, &edit);
		if (err == 0 && edit)
			err = guard_bundle(bundle, &o, ctx->config_path);
		if (err < 0)
			goto out;
	}

	/* argv[-1] is argv[0] or an option of ours: the runtime's argv[0]. */
	args[-1] = (char *)name;
	fflush(stdout);
	execv(path, args - 1);
	err = nsg_fail(errno, "cannot run %s: %s", path, strerror(errno));
out:
	for (size_t i = 0; i < o.n; i++)
		free(o.owned[i]);
	return err;
}

int cmd_runtime(struct cmd_ctx *ctx, int argc, char **argv)
{
	return cmd_runtime_run(ctx, argc, argv, NULL);
}
