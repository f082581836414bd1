// SPDX-License-Identifier: GPL-2.0-or-later
/* Pod identity from the CRI runtimes' annotations (identity.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "identity.h"
#include "log.h"
#include "util.h"

/*
 * The one table of annotation keys, by family.  containerd's CRI plugin:
 * pkg/cri/annotations/annotations.go (v1.6: SandboxName, SandboxNamespace,
 * ContainerName, ImageName; the last on containers, not on the sandbox).
 * CRI-O copies the kubelet's labels into the annotations: kubernetes
 * pkg/kubelet/types/labels.go (KubernetesPodNameLabel,
 * KubernetesPodNamespaceLabel, KubernetesContainerNameLabel), and adds its
 * own io.kubernetes.cri-o.ImageName (the image as the pod asked for it).
 * Only the family of identity-source is read (identity_pick).
 */
static const struct {
	const char *key;
	enum identity_field field;
	enum identity_source src;
} identity_keys[] = {
	{ "io.kubernetes.cri.sandbox-name", IDENT_POD, IDENT_SRC_CONTAINERD },
	{ "io.kubernetes.cri.sandbox-namespace", IDENT_NAMESPACE, IDENT_SRC_CONTAINERD },
	{ "io.kubernetes.cri.container-name", IDENT_CONTAINER, IDENT_SRC_CONTAINERD },
	{ "io.kubernetes.cri.image-name", IDENT_IMAGE, IDENT_SRC_CONTAINERD },
	{ "io.kubernetes.pod.name", IDENT_POD, IDENT_SRC_CRIO },
	{ "io.kubernetes.pod.namespace", IDENT_NAMESPACE, IDENT_SRC_CRIO },
	{ "io.kubernetes.container.name", IDENT_CONTAINER, IDENT_SRC_CRIO },
	{ "io.kubernetes.cri-o.ImageName", IDENT_IMAGE, IDENT_SRC_CRIO },
};

static const char *const source_names[IDENT_SRC_COUNT] = {
	[IDENT_SRC_CONTAINERD] = "containerd",
	[IDENT_SRC_CRIO] = "cri-o",
	[IDENT_SRC_NONE] = "none",
};

const char *identity_name(enum identity_field f)
{
	static const char *const names[] = {
		[IDENT_POD] = "pod",
		[IDENT_NAMESPACE] = "namespace",
		[IDENT_CONTAINER] = "container",
		[IDENT_IMAGE] = "image",
		[IDENT_SECTION] = "section",
	};

	return (unsigned)f < IDENT_COUNT ? names[f] : "?";
}

int identity_field_of(const char *annotation_key, enum identity_source *src)
{
	for (size_t i = 0; i < ARRAY_SIZE(identity_keys); i++) {
		if (strcmp(identity_keys[i].key, annotation_key) != 0)
			continue;
		if (src)
			*src = identity_keys[i].src;
		return identity_keys[i].field;
	}
	return -1;
}

const char *identity_source_name(enum identity_source src)
{
	return (unsigned)src < IDENT_SRC_COUNT ? source_names[src] : "?";
}

int identity_source_parse(const char *s, enum identity_source *src)
{
	for (int i = 0; i < IDENT_SRC_COUNT; i++) {
		if (strcmp(s, source_names[i]) == 0) {
			*src = i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *identity_key(enum identity_source src, enum identity_field f)
{
	for (size_t i = 0; i < ARRAY_SIZE(identity_keys); i++)
		if (identity_keys[i].src == src && identity_keys[i].field == f)
			return identity_keys[i].key;
	return NULL;
}

/* The key of field f in family src (for warnings). */
static const char *key_of(enum identity_source src, enum identity_field f)
{
	return identity_key(src, f) ?: "?";
}

int identity_collect(struct pod_identity by_source[IDENT_SRC_NONE], const char *key,
		     const char *value)
{
	enum identity_source src = IDENT_SRC_NONE;
	int f = identity_field_of(key, &src);

	if (f < 0 || src >= IDENT_SRC_NONE)
		return 0;
	return identity_set(&by_source[src], f, value);
}

const struct pod_identity *identity_pick(struct pod_identity by_source[IDENT_SRC_NONE],
					 enum identity_source src)
{
	struct pod_identity *id;

	if ((unsigned)src >= IDENT_SRC_NONE)
		return NULL;
	id = &by_source[src];
	for (int f = 0; f < IDENT_COUNT; f++) {
		if (!id->v[f] || !id->mended[f])
			continue;
		id->mended[f] = false;
		nsg_warn("warning: annotation %s: not a Kubernetes name, shown as \"%.40s%s\"",
			 key_of(src, f), id->v[f], strlen(id->v[f]) > 40 ? "..." : "");
	}
	return id;
}

static bool name_char(enum identity_field f, char c)
{
	if (f == IDENT_IMAGE && (c == '/' || c == ':' || c == '@'))
		return true;
	if (f == IDENT_SECTION && (c == ':' || c == '*'))
		return true;
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == '-';
}

char *identity_sanitize(enum identity_field f, const char *value, bool *changed)
{
	size_t max = f == IDENT_IMAGE ? IDENTITY_IMAGE_MAX : IDENTITY_MAX;
	size_t n = strnlen(value, max + 1), i;
	char *out;

	*changed = n > max;
	if (n > max)
		n = max;
	if (n == 0)
		return NULL;
	out = malloc(n + 1);
	if (!out)
		return NULL;
	for (i = 0; i < n; i++) {
		out[i] = name_char(f, value[i]) ? value[i] : '?';
		*changed |= out[i] != value[i];
	}
	out[n] = '\0';
	return out;
}

int identity_set(struct pod_identity *id, enum identity_field f, const char *value)
{
	bool changed = false;

	if ((unsigned)f >= IDENT_COUNT || id->v[f] || !value[0])
		return 0;
	id->v[f] = identity_sanitize(f, value, &changed);
	if (!id->v[f])
		return nsg_fail(ENOMEM, "out of memory");
	id->mended[f] = changed;
	return 0;
}

int identity_copy(struct pod_identity *dst, const struct pod_identity *src)
{
	memset(dst, 0, sizeof(*dst));
	for (int f = 0; f < IDENT_COUNT; f++) {
		if (!src->v[f])
			continue;
		dst->v[f] = strdup(src->v[f]);
		if (!dst->v[f]) {
			identity_free(dst);
			return -ENOMEM;
		}
	}
	return 0;
}

bool identity_empty(const struct pod_identity *id)
{
	for (int f = 0; f < IDENT_COUNT; f++)
		if (id->v[f])
			return false;
	return true;
}

void identity_free(struct pod_identity *id)
{
	for (int f = 0; f < IDENT_COUNT; f++) {
		free(id->v[f]);
		id->v[f] = NULL;
		id->mended[f] = false;
	}
}
