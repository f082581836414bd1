/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Annotations + admin config -> struct nsguard_policy.  Pure: no I/O. */
#ifndef NSGUARD_POLICY_H
#define NSGUARD_POLICY_H

#include <linux/types.h>
#include "../bpf/nsguard.h"
#include "config.h"
#include "oci.h"

#define ANNOTATION_MODE "nsguard.io/userns"
#define ANNOTATION_MAX_DEPTH "nsguard.io/userns.max-depth"
#define ANNOTATION_ERRNO "nsguard.io/userns.errno"

/*
 * Resolve the policy for one container.  Fills mode, max_depth and err;
 * the caller fills base_level and cgroup_id.  Refuses (-EINVAL, or -EPERM
 * when the admin config forbids it, with a message naming the annotation
 * and the limit): an unknown nsguard.io/ key, an unknown mode or errno, a
 * depth that is not a decimal number in 0..NSGUARD_MAX_DEPTH or above the
 * admin's max-depth, a mode not in allowed-modes, max-depth with mode deny.
 */
int policy_resolve(const struct nsguard_config *cfg, const struct oci_annotation *annotations,
		   size_t n, struct nsguard_policy *out);

const char *policy_mode_name(__u32 mode); /* "deny", "audit", "allow", "none" */
int policy_mode_parse(const char *s, __u32 *mode); /* 0 or -EINVAL */
const char *policy_errno_name(__u32 err); /* "EPERM", "ENOSPC", "EACCES", or NULL */
int policy_errno_parse(const char *s, __u32 *err); /* accepts those three names */
/* Parse a decimal depth 0..NSGUARD_MAX_DEPTH, no sign, no junk. */
int policy_depth_parse(const char *s, __u32 *depth);

#endif
