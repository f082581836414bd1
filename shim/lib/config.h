/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The host administrator's config file, /etc/nsguard/nsguard.conf. */
#ifndef NSGUARD_CONFIG_H
#define NSGUARD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "identity.h"

#define NSGUARD_LEARN_DIR "/var/lib/nsguard/learn"

/*
 * [namespace NAME] sections (#42): the policy keys (those policy_fields[]
 * names as a default_key or limit_key) for the pods of one Kubernetes
 * namespace, or of every namespace a glob matches ('*' is the only special
 * character: any run of characters, also none).  Keys a section does not set
 * are the node's; a section's ceiling never exceeds the node's.
 */
#define CONFIG_SECTIONS_MAX 64
#define CONFIG_NAMESPACE_MAX 63 /* a DNS label (RFC 1123), as Kubernetes names one */
#define CONFIG_KEYS_MAX 16

struct config_section {
	char pattern[CONFIG_NAMESPACE_MAX + 1];
	bool glob; /* pattern holds a '*' */
	unsigned line; /* of its [namespace ...] header */
	__u32 default_mode, allowed_modes, max_depth, default_err, max_count;
	unsigned key_line[CONFIG_KEYS_MAX]; /* the line that set each key; 0: the node's */
};

struct nsguard_config {
	__u32 default_mode; /* enum nsguard_mode for containers without annotations */
	__u32 allowed_modes; /* bit (1 << mode) for each mode annotations may ask for */
	__u32 max_depth; /* highest max-depth an annotation may ask for; also the
			  * depth used when allow/audit comes without one */
	__u32 default_err; /* positive errno */
	__u32 max_count; /* highest max-count an annotation may ask for, and the
			  * count for allow/audit without one; NSGUARD_COUNT_UNLIMITED */
	char learn_dir[4096]; /* where learn mode writes its suggestions */
	char runtime[4096]; /* nsguard runtime's real runtime; "" = runc from PATH */
	bool fail_open; /* fail-mode: open warns and lets the container start */
	bool shared_cgroups; /* shared-cgroups = allow: guard a cgroup that holds
			      * other processes too (restricting them) */
	bool host_caps; /* host-capabilities = allow: guard a container that holds
			 * CAP_SYS_ADMIN or CAP_BPF in the host's user namespace */
	/* identity-source: the only annotation family that names a pod */
	enum identity_source identity_source;
	/* Where the values came from, for messages: the config path, or
	 * "built-in defaults".  Filled by config_defaults/config_parse/config_load. */
	char origin[4096];
	/* The line each key was set on (0: its default), by config_key_line. */
	unsigned key_line[CONFIG_KEYS_MAX];
	/* [namespace] sections, in file order; -1 in section_of_key: node */
	unsigned n_sections;
	struct config_section sections[CONFIG_SECTIONS_MAX];
	/* Set by config_section_apply: the section this config is (-1: node). */
	int section;
};

/* A Kubernetes namespace name nsguard trusts to pick a section: a DNS label
 * of 1..63 bytes [a-z0-9-], starting and ending alphanumeric. */
bool config_namespace_valid(const char *ns);
/*
 * The section for namespace ns (config_namespace_valid), or -1: an exact
 * name beats every glob; among globs the first in the file that matches.
 */
int config_section_match(const struct nsguard_config *cfg, const char *ns, bool *by_glob);
/* *out = node with section idx's keys laid over it (idx -1: node as is). */
void config_section_apply(const struct nsguard_config *node, int idx, struct nsguard_config *out);
/* "node", or "namespace:PATTERN" (records, status, metrics). */
const char *config_section_name(const struct nsguard_config *cfg, int idx, char *buf, size_t len);

/* The line of origin that set key ("max-depth"), 0 for a default. */
unsigned config_key_line(const struct nsguard_config *cfg, const char *key);

/*
 * What nsguard check --config reports: each error's line (0 for the file
 * as a whole) and message ("origin:line: ...").
 */
typedef void (*config_error_fn)(unsigned line, const char *msg, void *data);

/* Built-in defaults: deny; annotations may ask for deny, audit or allow (not
 * learn); depth up to NSGUARD_MAX_DEPTH; no count limit; EPERM; fail-mode
 * closed; shared-cgroups refuse; host-capabilities refuse; learn-dir
 * NSGUARD_LEARN_DIR; identity-source containerd. */
void config_defaults(struct nsguard_config *cfg);
/*
 * "key = value" lines, '#' comments, blank lines.  Keys: default-mode,
 * allowed-modes (comma/space list), max-depth, errno, fail-mode,
 * shared-cgroups, host-capabilities, max-count, learn-dir (an absolute path),
 * runtime, identity-source (containerd, cri-o or none); then
 * [namespace NAME|GLOB] sections of the policy keys.  Unknown keys, bad
 * values, duplicates, a default-mode outside allowed-modes, a node key in a
 * section and a section above the node's ceiling are errors naming
 * origin:line.  Returns 0 or -EINVAL.
 */
int config_parse(const char *text, size_t len, const char *origin, struct nsguard_config *cfg);
/* Load path; if !explicit and the file does not exist, keep the defaults. */
int config_load(const char *path, bool explicit, struct nsguard_config *cfg);
/*
 * nsguard check --config: parse on past each error, calling err(line, msg)
 * for every one.  Returns the number of errors (0: *cfg is the result) or
 * -errno when the file itself cannot be read (also reported through err).
 */
int config_check(const char *path, config_error_fn err, void *data, struct nsguard_config *cfg);
/* The same for text in memory (host tests). */
int config_parse_all(const char *text, size_t len, const char *origin, config_error_fn err,
		     void *data, struct nsguard_config *cfg);

#endif
