/* SPDX-License-Identifier: GPL-2.0-or-later */
/* OCI runtime state (hook stdin) and config.json annotations -> plain structs. */
#ifndef NSGUARD_OCI_H
#define NSGUARD_OCI_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "identity.h"
#include "jv.h"

#define OCI_STATE_MAX (1024 * 1024) /* stdin larger than this is refused */
/*
 * Longest container id: the record is "<id>.json" and must fit NAME_MAX.
 * Runtimes accept up to 255 bytes; a longer id than this is refused at parse,
 * before anything is attached, so that fail-mode open never lets it run.
 */
#define OCI_ID_MAX (255 - 5)
/* A bundle's config.json is a few KiB; a larger one than this is refused. */
#define OCI_CONFIG_MAX (1024 * 1024)

/*
 * The annotations nsguard reads.  Only keys with this prefix are kept, compared
 * case-insensitively so that "NSGuard.io/userns" is refused as unknown instead
 * of ignored; at most OCI_ANNOTATIONS_MAX of them (three are known).
 */
#define ANNOTATION_PREFIX "nsguard.io/"
#define OCI_ANNOTATIONS_MAX 16
bool oci_annotation_is_ours(const char *key);

/*
 * Every key nsguard looks up in a config.json (oci.c, spec.c) and in an OCI
 * state, NULL-ended: a key that Go's decoder folds onto one of them without
 * being it is refused (json_strict_check), as is any document runc, crun and
 * nsguard could read differently.
 */
extern const char *const oci_config_keys[];
extern const char *const oci_state_keys[];

struct oci_annotation {
	char *key;
	char *value;
};

/* One entry of config.json "mounts": what scope.c needs to judge it. */
#define OCI_MOUNTS_MAX 1024
#define OCI_PATHS_MAX 1024
struct oci_mount {
	char *destination;
	char *source; /* may be NULL */
	char *type; /* may be NULL */
	bool bind; /* type "bind" or a "bind"/"rbind" option */
	bool rbind; /* submounts come along */
	bool ro; /* read-only: the last of "ro"/"rw" was "ro", or "rro"; never with "rrw" */
};

struct oci_state {
	char *oci_version;
	char *id;
	pid_t pid; /* 0 when absent (poststop) */
	char *bundle;
	char *status;
	struct oci_annotation *annotations;
	size_t n_annotations;
	/* From <bundle>/config.json (oci_state_merge_bundle_annotations). */
	bool have_config;
	struct oci_mount *mounts;
	size_t n_mounts;
	char *cgroups_path; /* linux.cgroupsPath; NULL if absent */
	char *rootfs_propagation; /* linux.rootfsPropagation; NULL if absent */
	/*
	 * linux.readonlyPaths and linux.maskedPaths, as written: the runtime
	 * applies them after the createRuntime hooks (mounts.c judges /proc/sys
	 * by them).  At most OCI_PATHS_MAX each.
	 */
	char **ro_paths;
	size_t n_ro_paths;
	char **masked_paths;
	size_t n_masked_paths;
	/* process.capabilities names CAP_SYS_ADMIN or CAP_BPF in any set, or
	 * says nothing (the runtime then keeps every capability). */
	bool caps_detach;
	bool have_caps; /* process.capabilities was there */
	/*
	 * What the device cgroup the runtime installs from config.json lets it
	 * read or write that no container needs and any host-root one could
	 * use against the host (a block device, every char device): NULL, or
	 * which entry ("linux.resources.devices[2]").
	 */
	char *devices_open;
	/* Pod name, namespace, container name (identity.h) by key family
	 * (identity_pick chooses one): the state's annotations first, then
	 * config.json's; labels only, sanitized. */
	struct pod_identity identity[IDENT_SRC_NONE];
};

/*
 * Parse a state document.  Requires ociVersion and id (a safe file name:
 * [A-Za-z0-9_.+-], not starting with '.', at most OCI_ID_MAX bytes); pid must be a
 * non-negative integer if present; annotations must map strings to strings.
 * The document must pass json_strict_check (jsonstrict.h): a key given twice
 * or folded, invalid UTF-8, odd whitespace or escapes are errors.  Of the annotations only the nsguard.io/ ones
 * are kept.  Returns 0 or -EINVAL with nsg_fail().
 */
int oci_state_parse(const char *buf, size_t len, struct oci_state *out);
/*
 * Read at most OCI_STATE_MAX bytes from fd (-EFBIG beyond, with a message)
 * as they are, for a parse here or in the agent: *buf_out malloc'd.
 */
int oci_state_read_raw(int fd, char **buf_out, size_t *len_out);
/* oci_state_read_raw, then oci_state_parse. */
int oci_state_read_fd(int fd, struct oci_state *out);
/*
 * Add the nsguard.io/ annotations of <bundle>/config.json that the state does
 * not carry (the state wins key by key), and read its "mounts" (at most
 * OCI_MOUNTS_MAX), linux.cgroupsPath, linux.readonlyPaths and
 * linux.maskedPaths (strings, at most OCI_PATHS_MAX each), the capabilities of
 * process.capabilities (caps_detach) and the device rules of
 * linux.resources.devices and linux.devices (devices_open).  A state without a bundle, a
 * config.json that is missing or cannot be read, and one over
 * OCI_CONFIG_MAX (-EFBIG) are errors: nsguard never guesses what the runtime
 * was asked for.
 */
int oci_state_merge_bundle_annotations(struct oci_state *st);
/* Same, from a config.json document already in memory (for tests and fuzzing). */
int oci_state_merge_config(struct oci_state *st, const char *buf, size_t len);
/*
 * What oci_state_merge_config builds of a config.json (jv_parse_only); the
 * rest (a seccomp profile, the environment: most of a Kubernetes one) is
 * checked by json_strict_check, never built.
 */
extern const struct jv_only oci_config_read[];
/*
 * linux.rootfsPropagation as runc and crun read it: 0 for none or one that
 * keeps the container's mounts out of the host's namespace (slave,
 * private, unbindable, r-), -EPERM for shared and rshared (the runtime's
 * mounts under the rootfs would be its peers' too: they land on the host),
 * -EINVAL for a value neither runtime knows; with a message.
 */
int oci_rootfs_propagation_check(const struct oci_state *st);
const char *oci_annotation_get(const struct oci_state *st, const char *key);
bool oci_id_valid(const char *id);
void oci_state_free(struct oci_state *st);

#endif
