/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nsguard runtime: add nsguard's hooks and annotations to a bundle's
 * config.json.  Text in, text out: the document is edited in place, so
 * every byte nsguard does not own (64-bit numbers, key order, the bundle's
 * own hooks) reaches the runtime unchanged.
 */
#ifndef NSGUARD_SPEC_H
#define NSGUARD_SPEC_H

#include <stdbool.h>
#include <stddef.h>

struct spec_edit {
	const char *hook_path; /* the nsguard binary, absolute */
	/* The admin config the hooks read (absolute), NULL for the default. */
	const char *config_path;
	/*
	 * Whether a hook's path is this nsguard's own file, for "already
	 * there"; spec.c has checked that the path is absolute and plain
	 * (no "."/".."/empty component, not under /proc or /dev).
	 */
	bool (*is_self)(const char *path, void *data);
	void *data;
	/* Annotations to set, replacing the bundle's values for the same keys. */
	const char *const *keys;
	const char *const *values;
	size_t n;
	/* Add a new cgroup namespace to linux.namespaces when it lists none. */
	bool cgroupns;
};

/* The timeout of the hooks the wrapper writes; one shorter is not taken for ours. */
#define SPEC_HOOK_TIMEOUT 30

/* What spec_edit_apply did (for messages and tests). */
enum {
	SPEC_ADDED_CREATE_RUNTIME = 1 << 0,
	SPEC_ADDED_POSTSTOP = 1 << 1,
	SPEC_SET_ANNOTATIONS = 1 << 2,
	SPEC_ADDED_CGROUPNS = 1 << 3,
};

/*
 * Add {"path": hook_path, "args": ["nsguard", "hook", STAGE]} (with
 * config_path: ["nsguard", "--config", config_path, "hook", STAGE]) to
 * hooks.createRuntime and hooks.poststop, first in each array, unless a hook
 * of exactly that form (path plain and is_self, no env, no other member) is
 * there already (for the guard, also "prestart" in hooks.prestart), set
 * the annotations, and with cgroupns add {"type": "cgroup"} to
 * linux.namespaces when that array names no cgroup namespace.  *out is malloc'd (NULL when nothing changed), *what the
 * SPEC_* bits.  A document the runtime could read differently from us is
 * refused (-EINVAL with a message): whatever json_strict_check refuses
 * (invalid UTF-8, odd whitespace, a key given twice or folded onto one of
 * oci_config_keys, ...), and an annotation key nsguard sets in another case.
 */
int spec_edit_apply(const char *in, size_t len, const struct spec_edit *e, char **out,
		    unsigned *what);

#endif
