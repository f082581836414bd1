/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Pod identity: pod name, namespace, container name and image, from the
 * annotations a Kubernetes CRI runtime passes (identity_keys[] in identity.c).  The
 * tenant controls annotations, so these are labels for humans, sanitized,
 * and a bad value is dropped or mended with a warning, never a refusal.  The
 * one decision made from them: the namespace of identity-source's family,
 * which that runtime writes after the pod's annotations, picks a
 * [namespace] section (policy_section_pick), and only when it is a DNS label
 * that was not mended.
 */
#ifndef NSGUARD_IDENTITY_H
#define NSGUARD_IDENTITY_H

#include <stdbool.h>

/*
 * IDENT_SECTION is no annotation: the nsguard.conf section whose policy the
 * container got ("node", "namespace:team-*"; #42), set by the hook from
 * policy_resolve_pod, so records, status, monitor and metrics carry it
 * beside the pod's labels.  No identity_keys[] row names it.
 */
enum identity_field {
	IDENT_POD,
	IDENT_NAMESPACE,
	IDENT_CONTAINER,
	IDENT_IMAGE,
	IDENT_SECTION,
	IDENT_COUNT
};

/*
 * The runtime whose keys name a pod (identity-source in nsguard.conf).  A
 * tenant writes every annotation, the other family's keys too, so only the
 * keys the node's runtime sets itself may name a pod: the admin says which.
 */
enum identity_source { IDENT_SRC_CONTAINERD, IDENT_SRC_CRIO, IDENT_SRC_NONE, IDENT_SRC_COUNT };

/*
 * Longest value kept: a DNS subdomain (a pod name); an image reference (a
 * registry, a path and a digest) may be longer.  Longer ones are cut.
 */
#define IDENTITY_MAX 253
#define IDENTITY_IMAGE_MAX 1024

struct pod_identity {
	char *v[IDENT_COUNT]; /* NULL when unknown */
	bool mended[IDENT_COUNT]; /* identity_set cut or mended it (not copied) */
};

/* The record, status and monitor key of field f: "pod", "namespace", "container", "image". */
const char *identity_name(enum identity_field f);
/* The field an annotation key carries, or -1; *src (may be NULL) its family. */
int identity_field_of(const char *annotation_key, enum identity_source *src);
/* The key family src writes for field f; NULL for IDENT_SRC_NONE. */
const char *identity_key(enum identity_source src, enum identity_field f);
/* "containerd", "cri-o", "none"; identity_source_parse: 0 or -EINVAL. */
const char *identity_source_name(enum identity_source src);
int identity_source_parse(const char *s, enum identity_source *src);
/*
 * Keep value in by_source[family of key] (identity_set), or nothing when
 * key names no field.  -ENOMEM only.
 */
int identity_collect(struct pod_identity by_source[IDENT_SRC_NONE], const char *key,
		     const char *value);
/*
 * The identity of src among by_source (NULL for IDENT_SRC_NONE); warns once
 * for each value of it that was mended.  The other family is ignored.
 */
const struct pod_identity *identity_pick(struct pod_identity by_source[IDENT_SRC_NONE],
					 enum identity_source src);
/*
 * A malloc'd copy of value fit to show as field f: at most IDENTITY_MAX
 * bytes (IDENTITY_IMAGE_MAX for an image), every byte outside [A-Za-z0-9._-]
 * (Kubernetes names use no others;
 * an image reference also '/', ':' and '@') replaced by '?'.  *changed says
 * it was cut or mended.  NULL for an empty value or when out of memory.
 */
char *identity_sanitize(enum identity_field f, const char *value, bool *changed);
/*
 * Keep a sanitized copy of value as field f unless it is set already
 * (the first source wins); a mended value is marked (identity_pick warns).
 * -ENOMEM only.
 */
int identity_set(struct pod_identity *id, enum identity_field f, const char *value);
int identity_copy(struct pod_identity *dst, const struct pod_identity *src);
bool identity_empty(const struct pod_identity *id);
void identity_free(struct pod_identity *id);

#endif
