/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Annotations + admin config -> struct nsguard_policy.  Pure: no I/O.
 *
 * Resolution rules (docs/design.md, "Annotations"):
 * - mode: nsguard.io/userns, else cfg->default_mode.  An annotated mode must
 *   be in cfg->allowed_modes; the default mode is the administrator's own
 *   choice and is taken as is (config_parse keeps it in allowed-modes).
 * - max_depth: deny always gets 0.  allow/audit get nsguard.io/userns.max-depth
 *   if given (at most cfg->max_depth), else cfg->max_depth - also when the
 *   mode itself came from the default.
 * - err: nsguard.io/userns.errno, else cfg->default_err.
 * - max-depth together with an effective mode of deny (annotated or default)
 *   is a conflict: the user asked for nesting they will not get.
 * - Any other key starting with nsguard.io/ (compared case-insensitively, to
 *   catch typos like "NSGuard.io/userns") is an error; other keys are ignored.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"
#include "policy.h"
#include "util.h"

static const char *const mode_names[NSGUARD_MODE_COUNT] = {
	[NSGUARD_MODE_NONE] = "none",
	[NSGUARD_MODE_DENY] = "deny",
	[NSGUARD_MODE_AUDIT] = "audit",
	[NSGUARD_MODE_ALLOW] = "allow",
	[NSGUARD_MODE_LEARN] = "learn",
};

static const struct {
	const char *name;
	__u32 err;
} errno_names[] = {
	{ "EPERM", EPERM },
	{ "ENOSPC", ENOSPC },
	{ "EACCES", EACCES },
};

const char *policy_mode_name(__u32 mode)
{
	if (mode >= NSGUARD_MODE_COUNT)
		return "unknown";
	return mode_names[mode];
}

/* Only the modes a user or administrator may ask for: "none" is internal. */
int policy_mode_parse(const char *s, __u32 *mode)
{
	__u32 m;

	for (m = NSGUARD_MODE_DENY; m < NSGUARD_MODE_COUNT; m++) {
		if (strcmp(s, mode_names[m]) == 0) {
			*mode = m;
			return 0;
		}
	}
	return -EINVAL;
}

int policy_mode_unshow(const char *s, __u32 *mode)
{
	if (strcmp(s, mode_names[NSGUARD_MODE_NONE]) == 0) {
		*mode = NSGUARD_MODE_NONE;
		return 0;
	}
	return policy_mode_parse(s, mode);
}

/* 0 is what an all-zero policy holds and means EPERM to the BPF program. */
const char *policy_errno_name(__u32 err)
{
	size_t i;

	if (err == 0)
		return "EPERM";
	for (i = 0; i < sizeof(errno_names) / sizeof(errno_names[0]); i++)
		if (errno_names[i].err == err)
			return errno_names[i].name;
	return NULL;
}

int policy_errno_parse(const char *s, __u32 *err)
{
	size_t i;

	for (i = 0; i < sizeof(errno_names) / sizeof(errno_names[0]); i++) {
		if (strcmp(s, errno_names[i].name) == 0) {
			*err = errno_names[i].err;
			return 0;
		}
	}
	return -EINVAL;
}

/* Decimal 0..max, no sign, no junk. */
static int parse_bounded(const char *s, __u32 max, __u32 *out)
{
	__u32 v = 0;
	size_t i;

	if (!s[0])
		return -EINVAL;
	for (i = 0; s[i]; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (s[i] - '0');
		/* Bail out early: no overflow on long digit strings. */
		if (v > max)
			return -EINVAL;
	}
	*out = v;
	return 0;
}

int policy_depth_parse(const char *s, __u32 *depth)
{
	return parse_bounded(s, NSGUARD_MAX_DEPTH, depth);
}

int policy_count_parse(const char *s, __u32 *count)
{
	if (strcmp(s, "unlimited") == 0) {
		*count = NSGUARD_COUNT_UNLIMITED;
		return 0;
	}
	return parse_bounded(s, NSGUARD_MAX_COUNT, count);
}

const char *policy_count_show(__u32 count)
{
	return count == NSGUARD_COUNT_UNLIMITED ? "unlimited" : NULL;
}

/* "deny, audit" for messages. */
void policy_modes_list(__u32 mask, char *buf, size_t size)
{
	size_t off = 0;
	__u32 m;

	buf[0] = '\0';
	for (m = NSGUARD_MODE_DENY; m < NSGUARD_MODE_COUNT; m++) {
		if (!(mask & (1u << m)))
			continue;
		off += snprintf(buf + off, size - off, "%s%s", off ? ", " : "", mode_names[m]);
		if (off >= size)
			return;
	}
	if (!buf[0])
		snprintf(buf, size, "empty");
}

/*
 * Annotation values come from the container's author: keep messages short and
 * printable.  Non-printable bytes become \xNN, long values are cut.
 */
static const char *quote(const char *s, char *buf, size_t size)
{
	size_t off = 0;

	for (; *s && off + 8 < size; s++) {
		unsigned char c = *s;

		if (c < 0x20 || c >= 0x7f || c == '\\')
			off += snprintf(buf + off, size - off, "\\x%02x", c);
		else
			buf[off++] = c;
	}
	if (*s)
		off += snprintf(buf + off, size - off, "...");
	buf[off < size ? off : size - 1] = '\0';
	return buf;
}

#define QUOTE_MAX 80
#define STR_(x) #x
#define STR(x) STR_(x)

struct policy_resolution {
	const struct nsguard_config *cfg;
	const char *origin; /* of cfg, for messages */
	const char *given[POLICY_FIELD_COUNT]; /* annotated values */
	struct nsguard_policy pol; /* resolved so far, in table order */
};

static __u32 mode_fallback(const struct nsguard_config *cfg)
{
	return cfg->default_mode;
}

/* The default mode is the admin's own choice; an annotated one must be allowed. */
static int mode_limit(const struct policy_resolution *r, const struct policy_field *f,
		      const char *value, __u32 v)
{
	char list[64];

	if (r->cfg->allowed_modes & (1u << v))
		return 0;
	policy_modes_list(r->cfg->allowed_modes, list, sizeof(list));
	return nsg_fail(EPERM, "annotation %s=%s is not permitted: allowed-modes is %s (%s)",
			ANNOTATION_MODE, value, list, r->origin);
}

/* allow/audit without an annotation get the admin's max-depth and max-count. */
static __u32 depth_fallback(const struct nsguard_config *cfg)
{
	return cfg->max_depth;
}

static __u32 count_fallback(const struct nsguard_config *cfg)
{
	return cfg->max_count;
}

/*
 * max-depth and max-count: asked for under deny is a conflict (the user
 * wants namespaces they will not get); above the admin's value, refused.
 */
static int ceiling_limit(const struct policy_resolution *r, const struct policy_field *f,
			 const char *value, __u32 v)
{
	__u32 ceiling = f->fallback(r->cfg);
	char num[16];

	if (r->pol.mode == NSGUARD_MODE_DENY) {
		if (r->given[POLICY_MODE])
			return nsg_fail(EINVAL, "annotation %s=%s conflicts with %s=deny",
					f->annotation, value, ANNOTATION_MODE);
		return nsg_fail(EINVAL,
				"annotation %s=%s conflicts with the default-mode deny (%s); "
				"add %s=allow or audit",
				f->annotation, value, r->origin, ANNOTATION_MODE);
	}
	/* "unlimited" is the largest value. */
	if (v > ceiling)
		return nsg_fail(EPERM, "annotation %s=%s exceeds the administrator's %s %s (%s)",
				f->annotation, value, f->name,
				policy_field_show(f, ceiling, num, sizeof(num)), r->origin);
	return 0;
}

static __u32 errno_fallback(const struct nsguard_config *cfg)
{
	return cfg->default_err;
}

const char *policy_errno_show(__u32 err)
{
	return policy_errno_name(err) ?: "?";
}

#define FIELD(m) .offset = offsetof(struct nsguard_policy, m)

const struct policy_field policy_fields[POLICY_FIELD_COUNT] = {
	[POLICY_MODE] = {
		.name = "mode", .metavar = "deny|audit|allow|learn", .annotation = ANNOTATION_MODE,
		.json = "mode", FIELD(mode), .record_name = true, .unshow = policy_mode_unshow,
		.parse = policy_mode_parse, .show = policy_mode_name,
		.invalid = "not a mode (deny, audit, allow, learn)",
		.fallback = mode_fallback, .limit = mode_limit,
		.default_key = "default-mode", .limit_key = "allowed-modes",
	},
	[POLICY_MAX_DEPTH] = {
		.name = "max-depth", .metavar = "N", .annotation = ANNOTATION_MAX_DEPTH,
		.json = "max_depth", FIELD(max_depth), .parse = policy_depth_parse,
		.invalid = "not a decimal number in 0.." STR(NSGUARD_MAX_DEPTH),
		.fallback = depth_fallback, .limit = ceiling_limit,
		.default_key = "max-depth", .limit_key = "max-depth",
	},
	[POLICY_ERRNO] = {
		.name = "errno", .metavar = "EPERM|ENOSPC|EACCES", .annotation = ANNOTATION_ERRNO,
		.json = "errno", FIELD(err), .parse = policy_errno_parse,
		.show = policy_errno_show, .invalid = "not one of EPERM, ENOSPC, EACCES",
		.fallback = errno_fallback, .default_key = "errno",
	},
	/* Measured by the shim; nsguard attach --base-level sets it by hand. */
	[POLICY_BASE_LEVEL] = {
		.name = "base-level", .metavar = "N", .json = "base_level", FIELD(base_level),
		.parse = policy_depth_parse, .invalid = "not a level 0.." STR(NSGUARD_MAX_DEPTH),
	},
	/* After mode: the ceiling looks at it. */
	[POLICY_MAX_COUNT] = {
		.name = "max-count", .metavar = "N|unlimited", .annotation = ANNOTATION_MAX_COUNT,
		.json = "max_count", FIELD(max_count), .parse = policy_count_parse,
		.show = policy_count_show, .optional = true,
		.if_absent = NSGUARD_COUNT_UNLIMITED,
		.invalid = "not a count 0.." STR(NSGUARD_MAX_COUNT) " or unlimited",
		.fallback = count_fallback, .limit = ceiling_limit,
		.default_key = "max-count", .limit_key = "max-count",
	},
};

__u32 policy_deepest(__u64 depths)
{
	return depths ? 63 - (__u32)__builtin_clzll(depths) : 0;
}

const char *policy_field_show(const struct policy_field *f, __u32 v, char *buf, size_t len)
{
	const char *name = f->show ? f->show(v) : NULL;

	if (name)
		return name;
	snprintf(buf, len, "%u", v);
	return buf;
}

void policy_describe(const struct nsguard_policy *p, char *buf, size_t len)
{
	size_t off = 0;
	char num[16];

	buf[0] = '\0';
	for (size_t i = 0; i < POLICY_FIELD_COUNT && off < len; i++) {
		const struct policy_field *f = &policy_fields[i];

		off += snprintf(buf + off, len - off, "%s%s %s", i ? ", " : "", f->name,
				policy_field_show(f, policy_field_get(p, f), num, sizeof(num)));
	}
}

/* "nsguard.io/userns, nsguard.io/userns.max-depth, ..." for messages. */
static void annotations_list(char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < POLICY_FIELD_COUNT && off < len; i++)
		if (policy_fields[i].annotation)
			off += snprintf(buf + off, len - off, "%s%s", off ? ", " : "",
					policy_fields[i].annotation);
}

static const struct policy_field *field_of_annotation(const char *key)
{
	for (size_t i = 0; i < POLICY_FIELD_COUNT; i++)
		if (policy_fields[i].annotation && strcmp(key, policy_fields[i].annotation) == 0)
			return &policy_fields[i];
	return NULL;
}

int policy_resolve(const struct nsguard_config *cfg, const struct oci_annotation *annotations,
		   size_t n, struct nsguard_policy *out)
{
	return policy_resolve_why(cfg, annotations, n, out, NULL);
}

void policy_section_pick(const struct nsguard_config *cfg,
			 const struct pod_identity by_source[IDENT_SRC_NONE],
			 struct policy_section_why *out)
{
	const struct pod_identity *id;
	bool by_glob = false;

	*out = (struct policy_section_why){ .section = -1, .reason = SECTION_NO_SOURCE };
	out->key = identity_key(cfg->identity_source, IDENT_NAMESPACE);
	if (!out->key)
		return;
	out->reason = SECTION_NO_KEY;
	/* Only identity-source's family: the other is the pod's to write. */
	id = by_source ? &by_source[cfg->identity_source] : NULL;
	out->value = id ? id->v[IDENT_NAMESPACE] : NULL;
	if (!out->value)
		return;
	/* Mended ('?' for a byte, cut at IDENTITY_MAX): not the name it was. */
	out->reason = SECTION_UNTRUSTED;
	if (id->mended[IDENT_NAMESPACE] || !config_namespace_valid(out->value))
		return;
	out->section = config_section_match(cfg, out->value, &by_glob);
	out->reason = out->section < 0 ? SECTION_NO_MATCH : by_glob ? SECTION_GLOB : SECTION_EXACT;
}

void policy_section_explain(const struct nsguard_config *cfg, const struct policy_section_why *w,
			    char *buf, size_t len)
{
	const struct config_section *sec = w->section >= 0 ? &cfg->sections[w->section] : NULL;
	char q[QUOTE_MAX + 16];

	switch (w->reason) {
	case SECTION_NO_SOURCE:
		snprintf(buf, len, "node: identity-source is none, no key names a namespace");
		break;
	case SECTION_NO_KEY:
		snprintf(buf, len, "node: no %s annotation (identity-source %s)", w->key,
			 identity_source_name(cfg->identity_source));
		break;
	case SECTION_UNTRUSTED:
		snprintf(buf, len,
			 "node: %s=\"%s\" is not a Kubernetes namespace (a DNS label of 1..%d "
			 "bytes a-z, 0-9, '-'), so it names no section",
			 w->key, quote(w->value, q, sizeof(q)), CONFIG_NAMESPACE_MAX);
		break;
	case SECTION_NO_MATCH:
		snprintf(buf, len, "node: no [namespace] section matches %s (%s)", w->value, w->key);
		break;
	case SECTION_EXACT:
	case SECTION_GLOB:
		snprintf(buf, len, "namespace:%s: namespace %s (%s) matches %s[namespace %s] (line %u)%s",
			 sec->pattern, w->value, w->key, w->reason == SECTION_EXACT ? "" : "the glob ",
			 sec->pattern, sec->line,
			 w->reason == SECTION_GLOB ? ", the first glob that does, and no section "
						     "names it exactly"
						   : "");
		break;
	}
}

int policy_resolve_why(const struct nsguard_config *cfg, const struct oci_annotation *annotations,
		       size_t n, struct nsguard_policy *out, struct policy_why *why)
{
	return policy_resolve_pod(cfg, NULL, annotations, n, out, why);
}

int policy_resolve_pod(const struct nsguard_config *node,
		       const struct pod_identity by_source[IDENT_SRC_NONE],
		       const struct oci_annotation *annotations, size_t n,
		       struct nsguard_policy *out, struct policy_why *why)
{
	struct policy_why unused;
	cleanup_free struct nsguard_config *cfg = malloc(sizeof(*cfg));
	struct policy_resolution r = { .origin = node->origin[0] ? node->origin : "nsguard.conf" };
	char origin[sizeof(node->origin) + 128];
	char q[QUOTE_MAX + 16], known[256];
	const struct policy_field *f;
	size_t i;
	__u32 v;
	int err;

	if (!cfg)
		return nsg_fail(ENOMEM, "out of memory");
	why = why ?: &unused;
	memset(why, 0, sizeof(*why));
	policy_section_pick(node, by_source, &why->section);
	config_section_apply(node, why->section.section, cfg);
	r.cfg = cfg;
	if (cfg->section >= 0) {
		snprintf(origin, sizeof(origin), "%s, [namespace %s] on line %u", r.origin,
			 cfg->sections[cfg->section].pattern, cfg->sections[cfg->section].line);
		r.origin = origin;
	}
	for (i = 0; i < n; i++) {
		const char *key = annotations[i].key;

		if (!oci_annotation_is_ours(key))
			continue;
		f = field_of_annotation(key);
		if (!f) {
			annotations_list(known, sizeof(known));
			return nsg_fail(EINVAL, "unknown annotation %s (known: %s)",
					quote(key, q, sizeof(q)), known);
		}
		if (r.given[f - policy_fields])
			return nsg_fail(EINVAL, "annotation %s is given twice", key);
		r.given[f - policy_fields] = annotations[i].value;
	}

	for (i = 0; i < POLICY_FIELD_COUNT; i++) {
		const char *value = r.given[i];

		f = &policy_fields[i];
		if (!f->fallback)
			continue;
		why->source[i] = value ? POLICY_FROM_ANNOTATION : POLICY_FROM_DEFAULT;
		why->value[i] = value;
		v = f->fallback(cfg);
		if (value) {
			if (f->parse(value, &v) < 0)
				return nsg_fail(EINVAL, "annotation %s=%s is %s", f->annotation,
						quote(value, q, sizeof(q)), f->invalid);
			err = f->limit ? f->limit(&r, f, value, v) : 0;
			if (err)
				return err;
		}
		policy_field_set(&r.pol, f, v);
	}
	/* Deny allows no nesting at all. */
	if (r.pol.mode == NSGUARD_MODE_DENY) {
		r.pol.max_depth = 0;
		r.pol.max_count = 0;
		why->source[POLICY_MAX_DEPTH] = why->source[POLICY_MAX_COUNT] = POLICY_FROM_DENY;
	}
	/* Only the resolved fields are ours: base_level and cgroup_id belong
	 * to the caller and are left untouched. */
	for (i = 0; i < POLICY_FIELD_COUNT; i++)
		if (policy_fields[i].fallback)
			policy_field_set(out, &policy_fields[i],
					 policy_field_get(&r.pol, &policy_fields[i]));
	return 0;
}
