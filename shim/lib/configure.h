/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nsguard configure|unconfigure RUNTIME: what the runtimes' parts share
 * (configure.c; the runtimes' own parts: cmd_configure.c docker, podman,
 * containerd and the command, configure_crio.c cri-o).
 */
#ifndef NSGUARD_CONFIGURE_H
#define NSGUARD_CONFIGURE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define CONF_MAX (1u << 20) /* the largest runtime file read */

struct conf {
	const char *runtime, *file, *bindir, *tiers_arg, *containerd, *crio;
	const char *extra[8]; /* containerd: more runtimes files (--extra) */
	size_t n_extra;
	bool dry_run;
	const char *tiers[3];
	size_t n_tiers;
};

/* path's bytes (NUL-terminated), or "" and *existed false when there is none. */
int conf_read_file(const char *path, char **text, size_t *len, bool *existed);
/* 0 if path and every directory above it are root's alone, else -EPERM (said). */
int conf_trusted(const char *path);
/* A wrapper link the runtime is told to run: executable there and conf_trusted. */
int conf_link_ready(const char *link);
/* path's directory and base name, malloc'd. */
int conf_split(const char *path, char **dir, char **base);
/* The side file that keeps a runtime file's original: DIR/.BASE.nsguard-SUFFIX. */
char *conf_side_path(const char *path, const char *suffix);
/* Replace path with exactly text, atomically. */
int conf_write_text(const char *path, const char *text, mode_t mode);
/* --dry-run: the change as diff -U0 shows it (the changed lines alone). */
int conf_show_diff(const char *path, const char *old, const char *new);
/* Run argv to its end; with out, its standard output (malloc'd). */
int conf_spawn(char *const argv[], char **out);
/* The hooks.d file (oci-hooks(5)) running BINDIR/nsguard at stage. */
char *conf_hook_json(const struct conf *c, const char *stage);
/* Both hooks.d files in dir: written (add) or removed; *changed counts them. */
int conf_hooks_files(const struct conf *c, const char *dir, bool add, size_t *changed);

int conf_crio(const struct conf *c, bool add);
int conf_containerd(const struct conf *c, bool add);

#endif
