/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The commands of the nsguard program.  Each returns 0 (exit 0), a negative
 * errno with the message recorded by nsg_fail() (exit 1, or 2 after
 * cmd_usage()), or a positive exit status when it has printed its own
 * output (check).
 */
#ifndef NSGUARD_CMD_H
#define NSGUARD_CMD_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>
#include "../bpf/nsguard.h"

/* This build: make's NSGUARD_VERSION, and the commit it was built from. */
extern const char nsguard_version[];
extern const char nsguard_commit[];

/* A command's usage line and its --help text (main.c's table). */
struct cmd_about {
	const char *name;
	const char *args; /* after the name */
	const char *summary;
	const char *more; /* a paragraph for CMD --help, or NULL */
};

struct cmd_ctx {
	const char *config_path; /* --config, or NULL for the default */
	const struct cmd_about *about; /* the command being run, for its --help */
};

int cmd_hook(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_attach(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_detach(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_status(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_monitor(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_gc(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_check(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_upgrade(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_suggest(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_load(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_unload(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_configure(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_unconfigure(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_explain(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_runtime(struct cmd_ctx *ctx, int argc, char **argv);
int cmd_agent(struct cmd_ctx *ctx, int argc, char **argv);
/*
 * The hook's work on a state already read (stage: createRuntime, prestart or
 * poststop), in the hook or in the agent; pidfd: the init's, sent by the
 * hook that asked the agent, or -1.  Returns as a command does.
 */
int hook_serve(struct cmd_ctx *ctx, const char *stage, const char *state, size_t len, int pidfd);
/*
 * nsguard runtime, also reached as nsguard-runtime (tier "") and
 * nsguard-runtime-MODE (tier MODE): then every argument is the runtime's.
 * tier NULL: nsguard runtime [OPTIONS] [--] ARGS.  Execs the runtime, or
 * returns an error.
 */
int cmd_runtime_run(struct cmd_ctx *ctx, int argc, char **argv, const char *tier);

/* Set by cmd_usage(): main() exits 2 instead of 1. */
extern bool cmd_usage_error;
/* Record a usage error (exit 2). */
int cmd_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* One option of a command: what getopt needs, and its line in CMD --help. */
struct cmd_option {
	const char *name; /* --name */
	const char *arg; /* the name of its argument ("PATH"); NULL for a flag */
	int val; /* what fn gets */
	const char *help;
	bool repeat; /* may be given more than once */
};
/* -v/--verbose, --config PATH, -h/--help: every command's too. */
extern const struct cmd_option cmd_global_options[];

/*
 * The option loop every command shares: getopt_long over argv (argv[0] is
 * the command's name), fn(val, optarg, data) for each option in opts (NULL:
 * the command takes none; a {} row ends them).  Every command also takes
 * the global options after its name: --help prints cmd_help() and exits 0,
 * --verbose and --config go to cmd_current.  A missing argument, an unknown
 * option, an option given twice (but a .repeat one) and any argument left
 * over are usage errors naming cmd; fn's error stops the loop.
 */
int cmd_options(const char *cmd, int argc, char **argv, const struct cmd_option *opts,
		int (*fn)(int opt, const char *arg, void *data), void *data);
/*
 * The same for a command with up to n_args arguments besides its options,
 * in any order: args[i] is the i-th, or NULL when fewer were given.
 */
int cmd_options_args(const char *cmd, int argc, char **argv, const struct cmd_option *opts,
		     int (*fn)(int opt, const char *arg, void *data), void *data,
		     const char **args, size_t n_args);
/* The context the global options after a command go to (set by main). */
extern struct cmd_ctx *cmd_current;
/* An option's line in a --help. */
void cmd_option_help(const struct cmd_option *o, FILE *out);
/* nsguard CMD --help: usage, what it does (about), opts and the global options. */
void cmd_help(const struct cmd_about *about, const struct cmd_option *opts, FILE *out);
/* An fn for a command whose one option is a flag: sets *(bool *)data. */
int cmd_set_flag(int opt, const char *arg, void *data);

/*
 * 0 if this process may use bpf(): CAP_SYS_ADMIN, plus CAP_BPF on kernels
 * that know it.  Otherwise -EPERM with a message.
 */
int cmd_require_privileges(void);
/*
 * Tighten the modes of the state in /run/nsguard an older build made
 * (lockfile_tighten): load, gc and upgrade, never a hook (#44).  A failure
 * warns.
 */
void cmd_tighten_state(void);

/* Load the admin config (ctx->config_path or the default). */
struct nsguard_config;
int cmd_load_config(struct cmd_ctx *ctx, struct nsguard_config *cfg);

#endif
