// SPDX-License-Identifier: GPL-2.0-or-later
/* nsguard: global options, the command table and the single exit path. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cgroup.h"
#include "cmd.h"
#include "commit.h"
#include "guard.h"
#include "log.h"
#include "policy.h"
#include "util.h"

#ifndef NSGUARD_VERSION
#define NSGUARD_VERSION "0.1.0"
#endif

const char nsguard_version[] = NSGUARD_VERSION;
const char nsguard_commit[] = NSGUARD_COMMIT;

/* One row per command: dispatch, the usage line and nsguard CMD --help. */
static const struct command {
	const char *name;
	int (*fn)(struct cmd_ctx *ctx, int argc, char **argv);
	const char *args; /* after the name */
	const char *summary;
	const char *more; /* a paragraph for CMD --help, or NULL */
} commands[] = {
	{ "hook", cmd_hook, "STAGE", "the OCI hook; the runtime gives the state on stdin",
	  "STAGE: createRuntime or prestart guards the container, poststop stops\n"
	  "guarding it.\n" },
	{ "agent", cmd_agent, "",
	  "serve the hooks from a resident process (systemd socket nsguard-agent.socket)",
	  "Listens on " "/run/nsguard/agent.sock" " (root only), or on the socket systemd\n"
	  "passes.  A hook asks it and prints its answer; a hook whose agent does not\n"
	  "answer in time, or runs another binary or namespaces, does the work itself.\n" },
	{ "attach", cmd_attach, "--cgroup PATH [--id NAME] [--json] [POLICY]",
	  "guard a cgroup by hand, within the admin config's limits", NULL },
	{ "detach", cmd_detach, "--cgroup PATH | --id NAME [--json]",
	  "stop guarding a cgroup, or the cgroup of a container", NULL },
	{ "status", cmd_status, "[--format text|json|prometheus] [--json] [--output FILE]",
	  "guarded containers, counters, global state", NULL },
	{ "monitor", cmd_monitor, "[--json] [--count N] [--id ID] [--pod NAME] [--namespace NS]",
	  "stream deny and audit events", NULL },
	{ "gc", cmd_gc, "[--json]", "forget containers whose cgroup is gone", NULL },
	{ "check", cmd_check, "[--json]",
	  "test the kernel and system requirements and the admin config",
	  "With --config FILE (before or after the command): only FILE, each error as\n"
	  "FILE:LINE: MESSAGE, then their number; exit 0 if there is none, 1 if there is.\n" },
	{ "explain", cmd_explain, "[--annotation K=V]... [--bundle DIR] [--json]",
	  "the policy a container would get under the admin config, and why", NULL },
	{ "load", cmd_load, "", "load and pin the program now (at boot), not at the first hook",
	  NULL },
	{ "runtime", cmd_runtime, "[--runtime PATH] [--annotation K=V]... [--] ARGS...",
	  "run the OCI runtime with nsguard's hooks added (containerd, Docker)", NULL },
	{ "upgrade", cmd_upgrade, "", "move guarded cgroups to this build's program", NULL },
	{ "configure", cmd_configure,
	  "[--dry-run] [--file PATH] [--bindir DIR] [--tiers LIST] [--containerd PATH] "
	  "[--extra FILE]... [--crio PATH] RUNTIME",
	  "register nsguard in a runtime's configuration (containerd, cri-o, docker, podman)", NULL },
	{ "unconfigure", cmd_unconfigure,
	  "[--dry-run] [--file PATH] [--bindir DIR] [--tiers LIST] [--containerd PATH] "
	  "[--crio PATH] RUNTIME",
	  "take back exactly what configure added", NULL },
	{ "unload", cmd_unload, "[--force]",
	  "detach everything, unpin the program, remove the records (to uninstall)", NULL },
	{ "suggest", cmd_suggest, "[--all] ID", "the annotations a learn-mode container needs",
	  "ID: the container's id, as the runtime gave it.  Each container that ran\n"
	  "with that id has its own suggestion: the newest is printed (with a note when\n"
	  "there are more), --all prints every one.\n" },
};

static void usage(FILE *out)
{
	fputs("Usage: nsguard [OPTIONS] COMMAND [ARGS]\n"
	      "\n"
	      "Guard the user namespaces created inside a container's cgroup with BPF-LSM.\n"
	      "\n"
	      "Commands:\n",
	      out);
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++) {
		const struct command *c = &commands[i];
		char line[128];

		snprintf(line, sizeof(line), "%s %s", c->name, c->args);
		fprintf(out, strlen(line) > 28 ? "  %s\n  %-28s  %s\n" : "  %-28s%s  %s\n", line, "",
			c->summary);
	}
	fputs("\nOptions (before or after the command):\n", out);
	for (const struct cmd_option *o = cmd_global_options; o->name; o++)
		cmd_option_help(o, out);
	fputs("  --version         print the version\n"
	      "\n"
	      "nsguard COMMAND --help describes a command; see nsguard(8).\n",
	      out);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "verbose", no_argument, NULL, 'v' },
		{ "config", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{},
	};
	struct cmd_ctx ctx = { 0 };
	struct cmd_about about;
	int verbose = 0, opt, err = 0;
	const char *name;
	size_t i;

	/* Registered as a runtime binary: every argument is the runtime's. */
	name = argc < 1 ? "" : strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	if (strcmp(name, "nsguard-runtime") == 0 || strncmp(name, "nsguard-runtime-", 16) == 0) {
		err = cmd_runtime_run(&ctx, argc, argv, name + 15 + (name[15] == '-'));
		goto out;
	}
	opterr = 0;
	/* '+': stop at the command; its options are its own. */
	while ((opt = getopt_long(argc, argv, "+:vh", opts, NULL)) != -1) {
		switch (opt) {
		case 'v':
			nsg_set_verbose(++verbose);
			break;
		case 'c':
			if (ctx.config_path) {
				err = cmd_usage("option '--config' given twice");
				goto out;
			}
			ctx.config_path = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V': {
			char abi[GUARD_ABI_LEN];

			guard_abi(abi);
			printf("nsguard %s (commit %s, ABI %s)\nbuild sequence %llu\n",
			       nsguard_version, nsguard_commit, abi, guard_build_seq());
			return 0;
		}
		case ':':
			err = cmd_usage("option '%s' needs an argument", argv[optind - 1]);
			goto out;
		default:
			err = cmd_usage("unknown option '%s'", argv[optind - 1]);
			goto out;
		}
	}
	if (optind >= argc) {
		err = cmd_usage("no command given");
		goto out;
	}
	name = argv[optind];
	for (i = 0; i < ARRAY_SIZE(commands); i++)
		if (strcmp(name, commands[i].name) == 0)
			break;
	if (i == ARRAY_SIZE(commands)) {
		err = cmd_usage("unknown command '%s'", name);
		goto out;
	}
	/* The command sees argv[0] = its name; getopt starts afresh. */
	about = (struct cmd_about){ commands[i].name, commands[i].args, commands[i].summary,
				    commands[i].more };
	ctx.about = &about;
	cmd_current = &ctx;
	argc -= optind;
	argv += optind;
	optind = 0;
	err = commands[i].fn(&ctx, argc, argv);
out:
	if (fflush(stdout) != 0 && err == 0)
		err = nsg_fail(errno, "writing the output failed: %s", strerror(errno));
	if (err > 0)
		return err;
	if (err == 0)
		return 0;
	nsg_error("%s", nsg_last_error()[0] ? nsg_last_error() : strerror(-err));
	return cmd_usage_error ? 2 : 1;
}
