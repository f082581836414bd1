// SPDX-License-Identifier: GPL-2.0-or-later
/* Helpers shared by the commands: usage errors, --help, privileges, config. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "agent.h"
#include "cmd.h"
#include "config.h"
#include "lockfile.h"
#include "log.h"
#include "util.h"

#ifndef CAP_BPF
#define CAP_BPF 39
#endif

/* Set by cmd_usage(): main() exits 2 instead of 1. */
bool cmd_usage_error;

/* The command whose options are being read, for "see nsguard CMD --help". */
static const char *usage_cmd;

int cmd_usage(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	cmd_usage_error = true;
	return nsg_fail(EINVAL, "%s (see nsguard %s%s--help)", buf, usage_cmd ?: "",
			usage_cmd ? " " : "");
}

struct cmd_ctx *cmd_current;

/* "  --name ARG   help", a long one with its help on the next line. */
void cmd_option_help(const struct cmd_option *o, FILE *out)
{
	char opt[64];

	snprintf(opt, sizeof(opt), "%s--%s%s%s",
		 strcmp(o->name, "verbose") == 0 ? "-v, " : strcmp(o->name, "help") == 0 ? "-h, " : "",
		 o->name, o->arg ? " " : "", o->arg ?: "");
	fprintf(out, strlen(opt) > 16 ? "  %s\n  %-17s %s%s\n" : "  %-17s%s %s%s\n", opt, "", o->help,
		o->repeat ? " (repeatable)" : "");
}

void cmd_help(const struct cmd_about *c, const struct cmd_option *opts, FILE *out)
{
	fprintf(out, "Usage: nsguard %s%s%s\n\n%c%s.\n", c->name, c->args[0] ? " " : "",
		c->args, toupper((unsigned char)c->summary[0]), c->summary + 1);
	if (c->more)
		fprintf(out, "\n%s", c->more);
	fputs("\nOptions:\n", out);
	for (const struct cmd_option *o = opts; o && o->name; o++)
		cmd_option_help(o, out);
	for (const struct cmd_option *o = cmd_global_options; o->name; o++)
		cmd_option_help(o, out);
	fputs("\nSee nsguard(8).\n", out);
}

/* Options any command takes; given before the command they are main()'s. */
enum { OPT_HELP = 0x1000, OPT_VERBOSE, OPT_CONFIG };
const struct cmd_option cmd_global_options[] = {
	{ .name = "verbose", .val = OPT_VERBOSE, .help = "more messages (twice: libbpf's debug log)", .repeat = true },
	{ .name = "config", .arg = "PATH", .val = OPT_CONFIG, .help = "admin config (default " NSGUARD_DEFAULT_CONFIG ")" },
	{ .name = "help", .val = OPT_HELP, .help = "this help" },
	{},
};

static int global_opt(int opt, const char *cmd, const struct cmd_option *opts, const char *arg)
{
	switch (opt) {
	case 'h':
	case OPT_HELP:
		if (cmd_current && cmd_current->about)
			cmd_help(cmd_current->about, opts, stdout);
		fflush(stdout);
		exit(0);
	case 'v':
	case OPT_VERBOSE:
		nsg_set_verbose(nsg_verbose() + 1);
		return 0;
	default: /* OPT_CONFIG */
		/* Also given before the command: which one was meant? */
		if (cmd_current && cmd_current->config_path)
			return cmd_usage("%s: option '--config' given twice", cmd);
		if (cmd_current)
			cmd_current->config_path = arg;
		return 0;
	}
}

int cmd_options_args(const char *cmd, int argc, char **argv, const struct cmd_option *opts,
		     int (*fn)(int opt, const char *arg, void *data), void *data,
		     const char **args, size_t n_args)
{
	const struct cmd_option *by_index[48];
	struct option all[48];
	unsigned char seen[48] = { 0 };
	const struct cmd_option *sets[] = { opts, cmd_global_options };
	size_t n = 0, i;
	int opt, idx, err = 0;

	usage_cmd = cmd;
	for (size_t s = 0; s < ARRAY_SIZE(sets); s++) {
		for (const struct cmd_option *o = sets[s]; o && o->name; o++) {
			if (n == ARRAY_SIZE(all) - 1)
				return nsg_fail(E2BIG, "%s: too many options", cmd);
			by_index[n] = o;
			all[n++] = (struct option){ o->name, o->arg ? required_argument : no_argument,
						    NULL, o->val };
		}
	}
	all[n] = (struct option){ 0 };

	/* No '+': options and arguments may come in any order. */
	while ((idx = -1, opt = getopt_long(argc, argv, ":hv", all, &idx)) != -1) {
		if (opt == ':')
			return cmd_usage("%s: option '%s' needs an argument", cmd, argv[optind - 1]);
		if (opt == '?')
			return cmd_usage("%s: unknown option '%s'", cmd, argv[optind - 1]);
		if (idx >= 0 && seen[idx]++ && !by_index[idx]->repeat)
			return cmd_usage("%s: option '--%s' given twice", cmd, all[idx].name);
		if (opt == 'h' || opt == 'v' || opt >= OPT_HELP)
			err = global_opt(opt, cmd, opts, optarg);
		else
			err = fn(opt, optarg, data);
		if (err)
			return err;
	}
	for (i = 0; i < n_args; i++)
		args[i] = optind < argc ? argv[optind++] : NULL;
	if (optind < argc)
		return cmd_usage("%s: unexpected argument '%s'", cmd, argv[optind]);
	return 0;
}

int cmd_options(const char *cmd, int argc, char **argv, const struct cmd_option *opts,
		int (*fn)(int opt, const char *arg, void *data), void *data)
{
	return cmd_options_args(cmd, argc, argv, opts, fn, data, NULL, 0);
}

int cmd_set_flag(int opt, const char *arg, void *data)
{
	*(bool *)data = true;
	return 0;
}

/*
 * The host's user namespace has a fixed inode (PROC_USER_INIT_INO,
 * include/linux/proc_ns.h, since Linux 3.8).  Capabilities in any other
 * user namespace reach no bpf() and no cgroup namespace of the host's:
 * where a rootless runtime runs the hooks (in the user's own, podman), say
 * so rather than fail later on an EPERM that names nothing.  Without /proc,
 * later steps say what is missing.
 */
#define PROC_USER_INIT_INO 0xEFFFFFFDU

static int initial_userns(void)
{
	struct stat sb;

	if (stat("/proc/self/ns/user", &sb) < 0 || sb.st_ino == PROC_USER_INIT_INO)
		return 0;
	return nsg_fail(EPERM, "permission denied: nsguard runs in a user namespace that is not the "
			       "host's (a rootless runtime runs its hooks in the user's own), where it "
			       "can attach no guard; as root, guard the user's cgroup with "
			       "'nsguard attach' instead (nsguard(8), ROOTLESS CONTAINERS)");
}

/*
 * capget and one prctl (hook_caps_needed), not libcap: its constructor
 * alone made six prctl calls in every hook.
 */
int cmd_require_privileges(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = { 0 };
	__u64 need = hook_caps_needed(), eff;
	bool admin, bpf;

	if (syscall(SYS_capget, &h, d) < 0)
		return nsg_fail(errno, "cannot read the process capabilities: %s", strerror(errno));
	eff = (__u64)d[1].effective << 32 | d[0].effective;
	admin = eff & 1ULL << CAP_SYS_ADMIN;
	bpf = !(need & ~eff & 1ULL << CAP_BPF);
	if ((eff & need) == need)
		return initial_userns();
	return nsg_fail(EPERM, "permission denied: nsguard needs CAP_SYS_ADMIN%s (missing: %s%s%s); "
			       "run it as root",
			need & 1ULL << CAP_BPF ? " and CAP_BPF" : "", admin ? "" : "CAP_SYS_ADMIN",
			!admin && !bpf ? ", " : "", bpf ? "" : "CAP_BPF");
}

int cmd_load_config(struct cmd_ctx *ctx, struct nsguard_config *cfg)
{
	config_defaults(cfg);
	if (ctx->config_path)
		return config_load(ctx->config_path, true, cfg);
	return config_load(NSGUARD_DEFAULT_CONFIG, false, cfg);
}

void cmd_tighten_state(void)
{
	int n = lockfile_tighten("");

	if (n < 0) {
		nsg_warn("warning: %s", nsg_last_error());
		nsg_clear_error();
	} else if (n > 0) {
		nsg_info("tightened the modes of %d of nsguard's files under %s", n, NSGUARD_RUN_DIR);
	}
}
