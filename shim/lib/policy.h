/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Annotations + admin config -> struct nsguard_policy.  Pure: no I/O. */
#ifndef NSGUARD_POLICY_H
#define NSGUARD_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "../../bpf/nsguard.h"
#include "config.h"
#include "oci.h"

#define ANNOTATION_MODE "nsguard.io/userns"
#define ANNOTATION_MAX_DEPTH "nsguard.io/userns.max-depth"
#define ANNOTATION_ERRNO "nsguard.io/userns.errno"
#define ANNOTATION_MAX_COUNT "nsguard.io/userns.max-count"

/*
 * Resolve the policy for one container.  Fills the fields with an annotation
 * (mode, max_depth, err, max_count); the caller fills base_level and
 * cgroup_id.  Refuses (-EINVAL, or -EPERM
 * when the admin config forbids it, with a message naming the annotation
 * and the limit): an unknown nsguard.io/ key, an unknown mode or errno, a
 * depth that is not a decimal number in 0..NSGUARD_MAX_DEPTH or above the
 * admin's max-depth (likewise a count and max-count), a mode not in
 * allowed-modes, max-depth or max-count with mode deny.
 */
int policy_resolve(const struct nsguard_config *cfg, const struct oci_annotation *annotations,
		   size_t n, struct nsguard_policy *out);

/*
 * One row per policy field: a new field is a row here (plus its struct
 * nsguard_policy member and its BPF logic); the annotations, nsguard attach's
 * options, records, status and the hook's log line follow from the table.
 * Rows resolve in order (max-depth looks at the resolved mode).
 */
enum policy_field_id {
	POLICY_MODE,
	POLICY_MAX_DEPTH,
	POLICY_ERRNO,
	POLICY_BASE_LEVEL,
	POLICY_MAX_COUNT,
	POLICY_FIELD_COUNT,
};

struct policy_resolution;

struct policy_field {
	const char *name; /* man pages, nsguard attach --NAME, status labels */
	const char *metavar; /* --help: "deny|audit|allow", "N" */
	const char *annotation; /* NULL: not the container's to choose */
	const char *json; /* key in records and status --json */
	size_t offset; /* of its __u32 in struct nsguard_policy */
	bool record_name; /* records keep show()'s name rather than the number */
	int (*unshow)(const char *s, __u32 *v); /* record_name: show()'s inverse */
	int (*parse)(const char *s, __u32 *v); /* 0 or -EINVAL */
	const char *(*show)(__u32 v); /* a name, or NULL: the decimal number */
	bool optional; /* records from before the field read if_absent */
	__u32 if_absent;
	const char *invalid; /* "not a mode (...)": what parse refused */
	/* The value without an annotation (NULL: left to the caller). */
	__u32 (*fallback)(const struct nsguard_config *cfg);
	/* The admin's ceiling on an annotated value: 0 or nsg_fail (NULL: none). */
	int (*limit)(const struct policy_resolution *r, const struct policy_field *f,
		     const char *value, __u32 v);
	/* The config keys behind fallback and limit (nsguard explain). */
	const char *default_key, *limit_key;
};

extern const struct policy_field policy_fields[POLICY_FIELD_COUNT];

static inline __u32 policy_field_get(const struct nsguard_policy *p, const struct policy_field *f)
{
	return *(const __u32 *)((const char *)p + f->offset);
}

static inline void policy_field_set(struct nsguard_policy *p, const struct policy_field *f,
				    __u32 v)
{
	*(__u32 *)((char *)p + f->offset) = v;
}

/* Where each resolved value came from (nsguard explain). */
enum policy_source {
	POLICY_FROM_CALLER, /* not resolved: base-level, measured by the hook */
	POLICY_FROM_DEFAULT, /* no annotation: the config's default_key */
	POLICY_FROM_ANNOTATION, /* the annotation, within the config's limit_key */
	POLICY_FROM_DENY, /* 0: mode deny allows no nesting */
};
/* Why a section applies (policy_section_pick). */
enum policy_section_reason {
	SECTION_NO_SOURCE, /* identity-source none: no key names a namespace */
	SECTION_NO_KEY, /* the runtime's namespace key is absent */
	SECTION_UNTRUSTED, /* its value is not a DNS label (empty, long, mended, glob-like) */
	SECTION_NO_MATCH, /* a namespace no section names */
	SECTION_EXACT, /* [namespace NAME] */
	SECTION_GLOB, /* the first [namespace GLOB] that matches */
};
struct policy_section_why {
	int section; /* index into cfg->sections, -1: the node's own keys */
	enum policy_section_reason reason;
	const char *key; /* the namespace key read (identity-source's), or NULL */
	const char *value; /* its value (identity_sanitize'd), or NULL */
};
/*
 * The one place that decides which [namespace] section applies: the
 * namespace is read only from the key identity-source's runtime writes
 * itself (after the pod's annotations, so its value wins), never from a
 * fallback; a value that is not a DNS label names no section.
 */
void policy_section_pick(const struct nsguard_config *cfg,
			 const struct pod_identity by_source[IDENT_SRC_NONE],
			 struct policy_section_why *out);
/* A sentence for explain: "namespace ci-builders: [namespace ci-*] (line 9), ..." */
void policy_section_explain(const struct nsguard_config *cfg, const struct policy_section_why *w,
			    char *buf, size_t len);

struct policy_why {
	struct policy_section_why section;
	enum policy_source source[POLICY_FIELD_COUNT];
	const char *value[POLICY_FIELD_COUNT]; /* the annotation's, for FROM_ANNOTATION */
};
/* policy_resolve, saying in *why where each field came from (no pod: the
 * node's keys, no section). */
int policy_resolve_why(const struct nsguard_config *cfg, const struct oci_annotation *annotations,
		       size_t n, struct nsguard_policy *out, struct policy_why *why);
/*
 * The same for a pod: by_source (struct oci_state's identity; NULL: none)
 * names its namespace, which picks the [namespace] section whose keys
 * apply (policy_section_pick; config_section_apply gives its config).  The
 * hook and explain resolve through this.  why may be NULL.
 */
int policy_resolve_pod(const struct nsguard_config *cfg,
		       const struct pod_identity by_source[IDENT_SRC_NONE],
		       const struct oci_annotation *annotations, size_t n,
		       struct nsguard_policy *out, struct policy_why *why);

/* The value as status shows it: show()'s name, or the number in buf. */
const char *policy_field_show(const struct policy_field *f, __u32 v, char *buf, size_t len);
/* "mode deny, max-depth 0, errno EPERM, base-level 1" (every field). */
void policy_describe(const struct nsguard_policy *p, char *buf, size_t len);

/* The deepest level a namespace was allowed at, from a depths bit set
 * (struct nsguard_policy or nsguard_usage); 0 if none. */
__u32 policy_deepest(__u64 depths);

/* "deny, audit, allow" for an allowed-modes mask ("empty" for none). */
void policy_modes_list(__u32 mask, char *buf, size_t size);
const char *policy_mode_name(__u32 mode); /* "deny", "audit", "allow", "learn", "none" */
int policy_mode_parse(const char *s, __u32 *mode); /* 0 or -EINVAL */
int policy_mode_unshow(const char *s, __u32 *mode); /* also "none" (records) */
const char *policy_errno_name(__u32 err); /* "EPERM", "ENOSPC", "EACCES", or NULL */
int policy_errno_parse(const char *s, __u32 *err); /* accepts those three names */
/* Parse a decimal depth 0..NSGUARD_MAX_DEPTH, no sign, no junk. */
int policy_depth_parse(const char *s, __u32 *depth);
/* A count 0..NSGUARD_MAX_COUNT, or "unlimited" (NSGUARD_COUNT_UNLIMITED). */
int policy_count_parse(const char *s, __u32 *count);
const char *policy_count_show(__u32 count); /* "unlimited", or NULL */
/* An errno name for messages: "EPERM", or "?" for a number not in the list. */
const char *policy_errno_show(__u32 err);

#endif
