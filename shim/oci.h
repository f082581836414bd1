/* SPDX-License-Identifier: GPL-2.0-or-later */
/* OCI runtime state (hook stdin) and config.json annotations -> plain structs. */
#ifndef NSGUARD_OCI_H
#define NSGUARD_OCI_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define OCI_STATE_MAX (1024 * 1024) /* stdin larger than this is refused */

struct oci_annotation {
	char *key;
	char *value;
};

struct oci_state {
	char *oci_version;
	char *id;
	pid_t pid; /* 0 when absent (poststop) */
	char *bundle;
	char *status;
	struct oci_annotation *annotations;
	size_t n_annotations;
};

/*
 * Parse a state document.  Requires ociVersion and id (a safe file name:
 * [A-Za-z0-9_.+-], not starting with '.', at most 255 bytes); pid must be a
 * non-negative integer if present; annotations must map strings to strings.
 * A key given twice is an error.  Returns 0 or -EINVAL with nsg_fail().
 */
int oci_state_parse(const char *buf, size_t len, struct oci_state *out);
/* Read at most OCI_STATE_MAX bytes from fd (-EFBIG beyond) and parse. */
int oci_state_read_fd(int fd, struct oci_state *out);
/*
 * Add the annotations of <bundle>/config.json that the state does not carry
 * (the state wins key by key).  A missing config.json is not an error.
 */
int oci_state_merge_bundle_annotations(struct oci_state *st);
/* Same, from a config.json document already in memory (for tests and fuzzing). */
int oci_state_merge_config(struct oci_state *st, const char *buf, size_t len);
const char *oci_annotation_get(const struct oci_state *st, const char *key);
bool oci_id_valid(const char *id);
void oci_state_free(struct oci_state *st);

#endif
