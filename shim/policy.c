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
#include <string.h>
#include <strings.h>

#include "log.h"
#include "policy.h"

static const char *const mode_names[NSGUARD_MODE_COUNT] = {
	[NSGUARD_MODE_NONE] = "none",
	[NSGUARD_MODE_DENY] = "deny",
	[NSGUARD_MODE_AUDIT] = "audit",
	[NSGUARD_MODE_ALLOW] = "allow",
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

int policy_depth_parse(const char *s, __u32 *depth)
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
		if (v > NSGUARD_MAX_DEPTH)
			return -EINVAL;
	}
	*depth = v;
	return 0;
}

/* "deny, audit" for messages. */
static void modes_list(__u32 mask, char *buf, size_t size)
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

int policy_resolve(const struct nsguard_config *cfg, const struct oci_annotation *annotations,
		   size_t n, struct nsguard_policy *out)
{
	const char *mode_s = NULL, *depth_s = NULL, *errno_s = NULL;
	const char *origin = cfg->origin[0] ? cfg->origin : "nsguard.conf";
	char q[QUOTE_MAX + 16], list[64];
	__u32 mode = cfg->default_mode, depth = cfg->max_depth, err = cfg->default_err;
	size_t i;

	for (i = 0; i < n; i++) {
		const char *key = annotations[i].key, *value = annotations[i].value;
		const char **slot;

		if (!oci_annotation_is_ours(key))
			continue;
		if (strcmp(key, ANNOTATION_MODE) == 0)
			slot = &mode_s;
		else if (strcmp(key, ANNOTATION_MAX_DEPTH) == 0)
			slot = &depth_s;
		else if (strcmp(key, ANNOTATION_ERRNO) == 0)
			slot = &errno_s;
		else
			return nsg_fail(EINVAL, "unknown annotation %s (known: %s, %s, %s)",
					quote(key, q, sizeof(q)), ANNOTATION_MODE,
					ANNOTATION_MAX_DEPTH, ANNOTATION_ERRNO);
		if (*slot)
			return nsg_fail(EINVAL, "annotation %s is given twice", key);
		*slot = value;
	}

	if (mode_s) {
		if (policy_mode_parse(mode_s, &mode) < 0)
			return nsg_fail(EINVAL, "annotation %s=%s is not a mode (deny, audit, allow)",
					ANNOTATION_MODE, quote(mode_s, q, sizeof(q)));
		if (!(cfg->allowed_modes & (1u << mode))) {
			modes_list(cfg->allowed_modes, list, sizeof(list));
			return nsg_fail(EPERM, "annotation %s=%s is not permitted: allowed-modes is %s (%s)",
					ANNOTATION_MODE, mode_s, list, origin);
		}
	}

	if (depth_s) {
		if (policy_depth_parse(depth_s, &depth) < 0)
			return nsg_fail(EINVAL,
					"annotation %s=%s is not a decimal number in 0..%d",
					ANNOTATION_MAX_DEPTH, quote(depth_s, q, sizeof(q)),
					NSGUARD_MAX_DEPTH);
		if (mode == NSGUARD_MODE_DENY) {
			if (mode_s)
				return nsg_fail(EINVAL, "annotation %s=%s conflicts with %s=deny",
						ANNOTATION_MAX_DEPTH, depth_s, ANNOTATION_MODE);
			return nsg_fail(EINVAL,
					"annotation %s=%s conflicts with the default-mode deny (%s); "
					"add %s=allow or audit",
					ANNOTATION_MAX_DEPTH, depth_s, origin, ANNOTATION_MODE);
		}
		if (depth > cfg->max_depth)
			return nsg_fail(EPERM,
					"annotation %s=%s exceeds the administrator's max-depth %u (%s)",
					ANNOTATION_MAX_DEPTH, depth_s, cfg->max_depth, origin);
	}

	if (errno_s && policy_errno_parse(errno_s, &err) < 0)
		return nsg_fail(EINVAL, "annotation %s=%s is not one of EPERM, ENOSPC, EACCES",
				ANNOTATION_ERRNO, quote(errno_s, q, sizeof(q)));

	if (mode == NSGUARD_MODE_DENY)
		depth = 0;
	/* Only mode, max_depth and err are ours: base_level and cgroup_id
	 * belong to the caller and are left untouched. */
	out->mode = mode;
	out->max_depth = depth;
	out->err = err;
	return 0;
}
