// SPDX-License-Identifier: GPL-2.0-or-later
/* nsguard: global options, the command table and the single exit path. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "log.h"
#include "policy.h"
#include "util.h"

#ifndef NSGUARD_VERSION
#define NSGUARD_VERSION "0.1.0"
#endif

bool cmd_usage_error;

static const struct {
	const char *name;
	int (*fn)(struct cmd_ctx *ctx, int argc, char **argv);
} commands[] = {
	{ "hook", cmd_hook },	  { "attach", cmd_attach }, { "detach", cmd_detach },
	{ "status", cmd_status }, { "monitor", cmd_monitor }, { "gc", cmd_gc },
	{ "check", cmd_check },	  { "upgrade", cmd_upgrade }, { "suggest", cmd_suggest },
};

static void usage(FILE *out)
{
	fputs("Usage: nsguard [-v|--verbose] [--config PATH] COMMAND [ARGS]\n"
	      "\n"
	      "Guard the user namespaces created inside a container's cgroup with BPF-LSM.\n"
	      "\n"
	      "Commands:\n"
	      "  hook STAGE [--config PATH]    OCI hook (prestart|createRuntime attach, poststop\n"
	      "                                detaches); the state JSON comes on stdin\n"
	      "  attach --cgroup PATH [--id NAME]",
	      out);
	/* nsguard attach takes an option for each policy field. */
	for (size_t i = 0, col = 34; i < POLICY_FIELD_COUNT; i++) {
		const struct policy_field *f = &policy_fields[i];
		size_t w = strlen(f->name) + strlen(f->metavar) + 6;

		if (col + w > 80) {
			fputs("\n        ", out);
			col = 8;
		}
		col += fprintf(out, " [--%s %s]", f->name, f->metavar);
	}
	fputs("\n"
	      "  detach --cgroup PATH | --id NAME\n"
	      "  status [--format text|json|prometheus] [--json]\n"
	      "                                guarded containers, counters, global state\n"
	      "  monitor [--json] [--count N] [--id ID] [--pod NAME] [--namespace NS]\n"
	      "                                stream deny and audit events\n"
	      "  gc                            forget containers whose cgroup is gone\n"
	      "  check                         test the kernel and system requirements\n"
	      "  upgrade                       move guarded cgroups to this build's program\n"
	      "  suggest ID                    the annotations a learn-mode container needs\n"
	      "\n"
	      "Options:\n"
	      "  -v, --verbose     more messages (twice: libbpf's debug log)\n"
	      "  --config PATH     admin config (default " NSGUARD_DEFAULT_CONFIG ")\n"
	      "  -h, --help        this help\n"
	      "  --version         print the version\n",
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
	int verbose = 0, opt, err = 0;
	const char *name;
	size_t i;

	opterr = 0;
	/* '+': stop at the command; its options are its own. */
	while ((opt = getopt_long(argc, argv, "+:vh", opts, NULL)) != -1) {
		switch (opt) {
		case 'v':
			nsg_set_verbose(++verbose);
			break;
		case 'c':
			ctx.config_path = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("nsguard %s\n", NSGUARD_VERSION);
			return 0;
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
