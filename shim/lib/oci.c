/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * OCI state (hook stdin) and config.json annotations.  The JSON tree never
 * leaves this file: callers see plain structs.  Everything here is hostile input
 * from the point of view of the host, so the parse is strict.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "fileio.h"
#include "json.h"
#include "jsonstrict.h"
#include "log.h"
#include "oci.h"
#include "util.h"

bool oci_id_valid(const char *id)
{
	size_t n;

	if (!id || !id[0] || id[0] == '.')
		return false;
	for (n = 0; id[n]; n++) {
		char c = id[n];

		if (n >= OCI_ID_MAX)
			return false;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '+' || c == '-'))
			return false;
	}
	return true;
}

/* What jsonstrict.h's check holds a folded key against (oci.h). */
const char *const oci_config_keys[] = {
	/* spec.c: the hooks it adds and recognises */
	"hooks", "prestart", "createRuntime", "createContainer", "startContainer", "poststart",
	"poststop", "path", "args", "env", "timeout",
	/* merge_config, and the container's shape */
	"annotations", "mounts", "destination", "source", "type", "options", "linux", "cgroupsPath",
	"readonlyPaths", "maskedPaths", "namespaces", "root", "process",
	/* add_capabilities */
	"capabilities", "bounding", "effective", "inheritable", "permitted", "ambient", NULL
};
const char *const oci_state_keys[] = { "ociVersion", "id", "pid", "status", "bundle",
				       "annotations", NULL };

/*
 * Parse a document the runtime read too: only what every reader reads
 * alike (jsonstrict.h: UTF-8, whitespace, escapes, \u0000, keys given twice
 * or folded onto one of names) reaches jv_parse.
 */
static int parse_doc(const char *in, size_t len, const char *what, const char *const *names,
		     const struct jv_only *only, struct jv **out)
{
	cleanup_jv struct jv *doc = NULL;
	int err;

	if (len == 0)
		return nsg_fail(EINVAL, "%s: empty document", what);
	err = json_strict_check(in, len, what, names);
	if (err < 0)
		return err;
	doc = jv_parse_only(in, len, only);
	if (!doc)
		return nsg_fail(errno == ENOMEM ? ENOMEM : EINVAL, "%s: %s", what,
				errno == ENOMEM	  ? "out of memory" :
				errno == ERANGE ? "a number is out of range (beyond a double)" :
						  "invalid JSON");
	if (!jv_is_object(doc))
		return nsg_fail(EINVAL, "%s: top level is not a JSON object", what);
	*out = steal_pointer(&doc);
	return 0;
}

static int get_string(const struct jv *doc, const char *key, bool required, const char *what,
		      char **out)
{
	const struct jv *it = jv_get(doc, key);

	if (!it || jv_is_null(it)) {
		if (required)
			return nsg_fail(EINVAL, "%s: \"%s\" is missing", what, key);
		return 0;
	}
	if (!jv_is_string(it) || !it->str)
		return nsg_fail(EINVAL, "%s: \"%s\" is not a string", what, key);
	*out = strdup(it->str);
	if (!*out)
		return nsg_fail(ENOMEM, "%s: out of memory", what);
	return 0;
}

static int get_pid(const struct jv *doc, const char *what, pid_t *out)
{
	const struct jv *it = jv_get(doc, "pid");
	double v;

	if (!it || jv_is_null(it))
		return 0;
	if (!jv_is_number(it))
		return nsg_fail(EINVAL, "%s: \"pid\" is not a number", what);
	v = it->num;
	if (isnan(v))
		return nsg_fail(EINVAL, "%s: \"pid\" is not an integer", what);
	if (v < 0)
		return nsg_fail(EINVAL, "%s: \"pid\" is negative", what);
	if (v > INT_MAX) /* 1e400 never gets here: jv_parse refuses it (ERANGE) */
		return nsg_fail(EINVAL, "%s: \"pid\" is out of range", what);
	/* In range now, so the conversion is defined. */
	if ((double)(int)v != v)
		return nsg_fail(EINVAL, "%s: \"pid\" is not an integer", what);
	*out = (pid_t)v;
	return 0;
}

const char *oci_annotation_get(const struct oci_state *st, const char *key)
{
	size_t i;

	for (i = 0; i < st->n_annotations; i++)
		if (strcmp(st->annotations[i].key, key) == 0)
			return st->annotations[i].value;
	return NULL;
}

bool oci_annotation_is_ours(const char *key)
{
	return strncasecmp(key, ANNOTATION_PREFIX, sizeof(ANNOTATION_PREFIX) - 1) == 0;
}

/* Whether add_annotations copies key: ours, and (only_new) not in st yet. */
static bool annotation_to_add(const struct oci_state *st, const char *key, bool only_new)
{
	return oci_annotation_is_ours(key) && !(only_new && oci_annotation_get(st, key));
}

/*
 * Append the nsguard.io/ members of obj (every member must be a string); with
 * only_new, keys already present are kept (the state wins over config.json).
 * Other keys are not copied: the tenant chooses how many there are, and
 * nothing reads them.
 */
static int add_annotations(struct oci_state *st, const struct jv *obj, bool only_new, const char *what)
{
	struct oci_annotation *arr;
	const struct jv *it;
	size_t n = 0;
	int err = 0;

	if (!obj || jv_is_null(obj))
		return 0;
	if (!jv_is_object(obj))
		return nsg_fail(EINVAL, "%s: \"annotations\" is not an object", what);
	jv_for_each(it, obj) {
		if (!jv_is_string(it) || !it->str)
			return nsg_fail(EINVAL, "%s: annotation \"%.64s\" is not a string", what,
					it->key);
		if (annotation_to_add(st, it->key, only_new))
			n++;
		/* A label for humans: never an error but memory. */
		err = identity_collect(st->identity, it->key, it->str);
		if (err < 0)
			return err;
	}
	if (n == 0)
		return 0;
	if (st->n_annotations + n > OCI_ANNOTATIONS_MAX)
		return nsg_fail(EINVAL, "%s: more than %d %s annotations", what, OCI_ANNOTATIONS_MAX,
				ANNOTATION_PREFIX);
	arr = realloc(st->annotations, (st->n_annotations + n) * sizeof(*arr));
	if (!arr)
		return nsg_fail(ENOMEM, "%s: out of memory", what);
	st->annotations = arr;
	jv_for_each(it, obj) {
		struct oci_annotation *a = &st->annotations[st->n_annotations];

		if (!annotation_to_add(st, it->key, only_new))
			continue;
		a->key = strdup(it->key);
		a->value = strdup(it->str);
		if (!a->key || !a->value) {
			free(a->key);
			free(a->value);
			return nsg_fail(ENOMEM, "%s: out of memory", what);
		}
		st->n_annotations++;
	}
	return 0;
}

void oci_state_free(struct oci_state *st)
{
	size_t i;

	if (!st)
		return;
	for (i = 0; i < st->n_annotations; i++) {
		free(st->annotations[i].key);
		free(st->annotations[i].value);
	}
	free(st->annotations);
	for (i = 0; i < IDENT_SRC_NONE; i++)
		identity_free(&st->identity[i]);
	for (i = 0; i < st->n_mounts; i++) {
		free(st->mounts[i].destination);
		free(st->mounts[i].source);
		free(st->mounts[i].type);
	}
	free(st->mounts);
	for (i = 0; i < st->n_ro_paths; i++)
		free(st->ro_paths[i]);
	free(st->ro_paths);
	for (i = 0; i < st->n_masked_paths; i++)
		free(st->masked_paths[i]);
	free(st->masked_paths);
	free(st->cgroups_path);
	free(st->rootfs_propagation);
	free(st->devices_open);
	free(st->oci_version);
	free(st->id);
	free(st->bundle);
	free(st->status);
	memset(st, 0, sizeof(*st));
}

static int state_from_doc(const struct jv *doc, const char *what, struct oci_state *st)
{
	int err = 0;

	err = get_string(doc, "ociVersion", true, what, &st->oci_version);
	if (err < 0)
		return err;
	err = get_string(doc, "id", true, what, &st->id);
	if (err < 0)
		return err;
	if (!oci_id_valid(st->id))
		return nsg_fail(EINVAL,
				"%s: id \"%.64s\" is not a valid container id "
				"([A-Za-z0-9_.+-], not starting with '.', at most %d bytes)",
				what, st->id, OCI_ID_MAX);
	err = get_pid(doc, what, &st->pid);
	if (err < 0)
		return err;
	err = get_string(doc, "bundle", false, what, &st->bundle);
	if (err < 0)
		return err;
	err = get_string(doc, "status", false, what, &st->status);
	if (err < 0)
		return err;
	return add_annotations(st, jv_get(doc, "annotations"), false,
			       what);
}

int oci_state_parse(const char *buf, size_t len, struct oci_state *out)
{
	static const char what[] = "malformed OCI state on stdin";
	cleanup_jv struct jv *doc = NULL;
	struct oci_state st = { 0 };
	int err = 0;

	memset(out, 0, sizeof(*out));
	err = parse_doc(buf, len, what, oci_state_keys, NULL, &doc);
	if (err < 0)
		return err;
	err = state_from_doc(doc, what, &st);
	if (err < 0) {
		oci_state_free(&st);
		return err;
	}
	*out = st;
	return 0;
}

int oci_state_read_raw(int fd, char **buf_out, size_t *len_out)
{
	int err = read_capped(fd, OCI_STATE_MAX, buf_out, len_out);

	if (err == -EFBIG)
		return nsg_fail(EFBIG, "OCI state on stdin exceeds 1 MiB");
	if (err == -ENOMEM)
		return nsg_fail(ENOMEM, "reading OCI state: out of memory");
	if (err < 0)
		return nsg_fail(-err, "read OCI state from stdin: %s", strerror(-err));
	return 0;
}

int oci_state_read_fd(int fd, struct oci_state *out)
{
	cleanup_free char *buf = NULL;
	size_t len = 0;
	int err;

	memset(out, 0, sizeof(*out));
	err = oci_state_read_raw(fd, &buf, &len);
	return err ? err : oci_state_parse(buf, len, out);
}

/*
 * options: the flags of one mount that change what the container sees.  ro
 * is the last of "ro"/"rw", or "rro"; "rrw" clears it, wherever it stands
 * (the runtimes apply it after the ro remount).
 */
static int mount_options(const struct jv *opts, struct oci_mount *m, const char *what, size_t i)
{
	const struct jv *o;
	bool rro = false, rrw = false;

	if (!opts || jv_is_null(opts))
		return 0;
	if (!jv_is_array(opts))
		return nsg_fail(EINVAL, "%s: mounts[%zu].options is not an array", what, i);
	jv_for_each(o, opts) {
		if (!jv_is_string(o) || !o->str)
			return nsg_fail(EINVAL, "%s: mounts[%zu].options holds a non-string", what, i);
		if (strcmp(o->str, "ro") == 0)
			m->ro = true;
		else if (strcmp(o->str, "rw") == 0)
			m->ro = false;
		else if (strcmp(o->str, "rro") == 0)
			rro = true;
		else if (strcmp(o->str, "rrw") == 0)
			rrw = true;
		else if (strcmp(o->str, "rbind") == 0)
			m->bind = m->rbind = true;
		else if (strcmp(o->str, "bind") == 0)
			m->bind = true;
	}
	m->ro = (m->ro || rro) && !rrw;
	return 0;
}

static int add_mounts(struct oci_state *st, const struct jv *arr, const char *what)
{
	const struct jv *it;
	size_t n, i = 0;
	int err = 0;

	if (!arr || jv_is_null(arr))
		return 0;
	if (!jv_is_array(arr))
		return nsg_fail(EINVAL, "%s: \"mounts\" is not an array", what);
	n = jv_count(arr);
	if (n > OCI_MOUNTS_MAX)
		return nsg_fail(EINVAL, "%s: more than %d mounts", what, OCI_MOUNTS_MAX);
	st->mounts = calloc(n ?: 1, sizeof(*st->mounts));
	if (!st->mounts)
		return nsg_fail(ENOMEM, "%s: out of memory", what);
	jv_for_each(it, arr) {
		struct oci_mount *m = &st->mounts[i];

		if (!jv_is_object(it))
			return nsg_fail(EINVAL, "%s: mounts[%zu] is not an object", what, i);
		st->n_mounts = ++i; /* freed with the state from here on */
		err = get_string(it, "destination", true, what, &m->destination);
		if (!err)
			err = get_string(it, "source", false, what, &m->source);
		if (!err)
			err = get_string(it, "type", false, what, &m->type);
		if (!err)
			err = mount_options(jv_get(it, "options"), m, what,
					    i - 1);
		if (err)
			return err;
		if (m->type && strcmp(m->type, "bind") == 0)
			m->bind = true;
	}
	return 0;
}

/*
 * Whether a name in process.capabilities may grant what reaches past the
 * guard from the host's user namespace.  Runtimes read names differently
 * (runc wants "CAP_X" exactly; crun takes libcap's cap_from_name: numbers,
 * any case, trailing junk), so only an exact "CAP_X" that nsguard knows to
 * be harmless is harmless; any other spelling counts as one that detaches.
 */
static bool cap_detaches(const char *name)
{
	static const char *const harmless[] = {
		"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER",
		"CAP_FSETID", "CAP_KILL", "CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP",
		"CAP_LINUX_IMMUTABLE", "CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST",
		"CAP_NET_ADMIN", "CAP_NET_RAW", "CAP_IPC_LOCK", "CAP_IPC_OWNER", "CAP_SYS_CHROOT",
		"CAP_SYS_PTRACE", "CAP_SYS_PACCT", "CAP_SYS_BOOT", "CAP_SYS_NICE",
		"CAP_SYS_RESOURCE", "CAP_SYS_TIME", "CAP_SYS_TTY_CONFIG", "CAP_MKNOD", "CAP_LEASE",
		"CAP_AUDIT_WRITE", "CAP_AUDIT_CONTROL", "CAP_SETFCAP", "CAP_MAC_OVERRIDE",
		"CAP_MAC_ADMIN", "CAP_SYSLOG", "CAP_WAKE_ALARM", "CAP_BLOCK_SUSPEND",
		"CAP_AUDIT_READ", "CAP_PERFMON", "CAP_CHECKPOINT_RESTORE",
	};

	for (size_t i = 0; i < ARRAY_SIZE(harmless); i++)
		if (strcmp(name, harmless[i]) == 0)
			return false;
	/* CAP_SYS_ADMIN, CAP_BPF, CAP_SYS_MODULE, CAP_SYS_RAWIO, CAP_DAC_READ_SEARCH
	 * (open_by_handle_at reaches any file of a mounted file system), unknown */
	return true;
}

/*
 * process.capabilities: whether any of its sets names a capability that
 * could detach the guard (st->caps_detach).  No process or no capabilities
 * object: the runtime keeps what its init has, so every capability.
 */
static int add_capabilities(struct oci_state *st, const struct jv *proc, const char *what)
{
	static const char *const sets[] = { "bounding", "effective", "inheritable", "permitted",
					    "ambient" };
	const struct jv *caps, *set, *c;

	st->caps_detach = true;
	if (!proc || jv_is_null(proc))
		return 0;
	if (!jv_is_object(proc))
		return nsg_fail(EINVAL, "%s: \"process\" is not an object", what);
	caps = jv_get(proc, "capabilities");
	if (!caps || jv_is_null(caps))
		return 0;
	if (!jv_is_object(caps))
		return nsg_fail(EINVAL, "%s: process.capabilities is not an object", what);
	st->caps_detach = false;
	st->have_caps = true;
	for (size_t i = 0; i < ARRAY_SIZE(sets); i++) {
		set = jv_get(caps, sets[i]);
		if (!set || jv_is_null(set))
			continue;
		if (!jv_is_array(set))
			return nsg_fail(EINVAL, "%s: process.capabilities.%s is not an array", what,
					sets[i]);
		jv_for_each(c, set) {
			if (!jv_is_string(c) || !c->str)
				return nsg_fail(EINVAL, "%s: process.capabilities.%s holds a non-string",
						what, sets[i]);
			if (cap_detaches(c->str))
				st->caps_detach = true;
		}
	}
	return 0;
}

/*
 * linux.readonlyPaths / maskedPaths: arrays of strings, or absent/null.
 * Anything else the runtime would refuse to decode: refused here too.
 */
static int add_paths(const struct jv *lx, const char *key, char ***out, size_t *n_out,
		     const char *what)
{
	const struct jv *arr = jv_get(lx, key), *it;
	size_t n;

	if (!arr || jv_is_null(arr))
		return 0;
	if (!jv_is_array(arr))
		return nsg_fail(EINVAL, "%s: linux.%s is not an array", what, key);
	n = jv_count(arr);
	if (n > OCI_PATHS_MAX)
		return nsg_fail(EINVAL, "%s: linux.%s has more than %d entries", what, key,
				OCI_PATHS_MAX);
	*out = calloc(n ?: 1, sizeof(**out));
	if (!*out)
		return nsg_fail(ENOMEM, "%s: out of memory", what);
	jv_for_each(it, arr) {
		if (!jv_is_string(it) || !it->str)
			return nsg_fail(EINVAL, "%s: linux.%s holds a non-string", what, key);
		(*out)[*n_out] = strdup(it->str);
		if (!(*out)[*n_out])
			return nsg_fail(ENOMEM, "%s: out of memory", what);
		++*n_out; /* freed with the state from here on */
	}
	return 0;
}

/*
 * The device rules the runtime turns into the container's device cgroup
 * (runc and crun alike: linux.resources.devices as written, an allow rule
 * for each linux.devices entry, then their own char-device defaults).  Any
 * allow rule that reads or writes a block device (any type but "c": crun
 * reads "block" and "all" by their first letter), every char device (no
 * major, or a negative one) or a char face of a disk (sg, bsg, NVMe's
 * generic nodes, mtd, ubi: char_major_is_disk) opens what a host-root
 * container could write under nsguard's state (the disk) or the kernel's.
 * Later deny rules are not weighed: such a list is refused.  A rule of an
 * odd shape counts as open: the runtime would refuse it or read it widely.
 */
/*
 * Char devices that are a disk's other face (review): SCSI generic and bsg
 * send SCSI WRITE, NVMe's generic nodes I/O writes, through a descriptor
 * opened for writing; mtd and ubi are flash.  Their majors, from the
 * kernel's /proc/devices (most are dynamic), read once.
 */
static bool char_major_is_disk(double major)
{
	static const char *const names[] = { "sg", "bsg", "nvme-generic", "nvme", "mtd", "ubi" };
	static long majors[32];
	static int n = -1;

	if (n < 0) {
		cleanup_fclose FILE *f = fopen("/proc/devices", "re");
		char line[128], name[64];
		bool chars = false;
		long m;

		n = 0;
		majors[n++] = 21; /* sg */
		majors[n++] = 90; /* mtd */
		while (f && fgets(line, sizeof(line), f)) {
			if (strncmp(line, "Character", 9) == 0 || strncmp(line, "Block", 5) == 0) {
				chars = line[0] == 'C';
				continue;
			}
			if (!chars || sscanf(line, "%ld %63s", &m, name) != 2)
				continue;
			for (size_t i = 0; i < ARRAY_SIZE(names); i++)
				if (strncmp(name, names[i], strlen(names[i])) == 0 &&
				    n < (int)ARRAY_SIZE(majors))
					majors[n++] = m;
		}
	}
	for (int i = 0; i < n; i++)
		if ((double)majors[i] == major)
			return true;
	return false;
}

static bool device_rule_open(const struct jv *r, const char *kind)
{
	const struct jv *allow = jv_get(r, "allow"), *type = jv_get(r, "type"),
			*major = jv_get(r, "major"), *access = jv_get(r, "access");
	const char *t = jv_is_string(type) && type->str ? type->str : NULL;
	/* runc and crun: any negative major is every major (crun: an int, so 2^32-1 too). */
	bool any_major = !major || jv_is_null(major) ||
			 (jv_is_number(major) && (major->num < 0 || major->num >= 2147483648.0));
	bool disk = jv_is_number(major) && char_major_is_disk(major->num);

	if (!jv_is_object(r) || (type && !jv_is_null(type) && !t) ||
	    (major && !jv_is_null(major) && !jv_is_number(major)) ||
	    (access && !jv_is_null(access) && !jv_is_string(access)))
		goto open;
	if (strcmp(kind, "resources.devices") == 0) {
		if (!jv_is_true(allow))
			return false; /* false, or absent: a deny rule */
		if (jv_is_string(access) && access->str && access->str[0] &&
		    !strpbrk(access->str, "rw"))
			return false; /* mknod only */
		/* crun reads the first letter of any word ("block", "char"), runc
		 * refuses all but these: only "c" by name is taken as char. */
		if (!t || strcmp(t, "c") != 0)
			return true;
		return any_major || disk;
	}
	/* linux.devices: a node made and allowed rwm ("u" is unbuffered char). */
	return !t || (strcmp(t, "c") != 0 && strcmp(t, "u") != 0 && strcmp(t, "p") != 0) || disk;
open:
	return true;
}

static int add_devices(struct oci_state *st, const struct jv *lx, const char *what)
{
	const struct jv *res = jv_get(lx, "resources"), *arr, *it;
	size_t i;

	arr = jv_is_object(res) ? jv_get(res, "devices") : NULL;
	if (res && !jv_is_null(res) && !jv_is_object(res))
		return nsg_fail(EINVAL, "%s: linux.resources is not an object", what);
	if (arr && !jv_is_null(arr) && !jv_is_array(arr))
		return nsg_fail(EINVAL, "%s: linux.resources.devices is not an array", what);
	for (int k = 0; k < 2; k++) {
		const char *kind = k == 0 ? "resources.devices" : "devices";

		if (k == 1) {
			arr = jv_get(lx, "devices");
			if (arr && !jv_is_null(arr) && !jv_is_array(arr))
				return nsg_fail(EINVAL, "%s: linux.devices is not an array", what);
		}
		i = 0;
		jv_for_each(it, arr) {
			if (!st->devices_open && device_rule_open(it, kind) &&
			    asprintf(&st->devices_open, "linux.%s[%zu]", kind, i) < 0) {
				st->devices_open = NULL;
				return nsg_fail(ENOMEM, "%s: out of memory", what);
			}
			i++;
		}
	}
	return 0;
}

/* merge_config's part of a config.json (oci.h). */
static const struct jv_only config_resources[] = { { "devices", NULL }, { NULL, NULL } };
static const struct jv_only config_linux[] = { { "cgroupsPath", NULL },
					       { "resources", config_resources },
					       { "devices", NULL },
					       { "rootfsPropagation", NULL },
					       { "readonlyPaths", NULL },
					       { "maskedPaths", NULL },
					       { NULL, NULL } };
static const struct jv_only config_process[] = { { "capabilities", NULL }, { NULL, NULL } };
const struct jv_only oci_config_read[] = {
	{ "annotations", NULL },
	{ "linux", config_linux },
	{ "process", config_process },
	{ "mounts", NULL },
	{ NULL, NULL },
};

static int merge_config(struct oci_state *st, const char *buf, size_t len, const char *what)
{
	cleanup_jv struct jv *doc = NULL;
	const struct jv *lx;
	int err = 0;

	err = parse_doc(buf, len, what, oci_config_keys, oci_config_read, &doc);
	if (err < 0)
		return err;
	err = add_annotations(st, jv_get(doc, "annotations"), true, what);
	if (err < 0)
		return err;
	st->have_config = true;
	lx = jv_get(doc, "linux");
	if (lx && !jv_is_null(lx)) {
		if (!jv_is_object(lx))
			return nsg_fail(EINVAL, "%s: \"linux\" is not an object", what);
		err = get_string(lx, "cgroupsPath", false, what, &st->cgroups_path) ?:
		      get_string(lx, "rootfsPropagation", false, what, &st->rootfs_propagation) ?:
		      add_paths(lx, "readonlyPaths", &st->ro_paths, &st->n_ro_paths, what) ?:
		      add_paths(lx, "maskedPaths", &st->masked_paths, &st->n_masked_paths, what) ?:
		      add_devices(st, lx, what);
		if (err)
			return err;
	}
	err = add_capabilities(st, jv_get(doc, "process"), what);
	if (err)
		return err;
	return add_mounts(st, jv_get(doc, "mounts"), what);
}

int oci_rootfs_propagation_check(const struct oci_state *st)
{
	/* runc's and crun's tables: the same names, compared byte for byte. */
	static const char *const apart[] = { "",	   "private",	 "rprivate",   "slave",
					     "rslave", "unbindable", "runbindable" };
	const char *v = st->rootfs_propagation;

	if (!v)
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(apart); i++)
		if (strcmp(v, apart[i]) == 0)
			return 0;
	if (strcmp(v, "shared") == 0 || strcmp(v, "rshared") == 0)
		return nsg_fail(EPERM,
				"linux.rootfsPropagation \"%s\" keeps the container's mounts peers "
				"of the host's: what the runtime mounts for it would land in the "
				"host's mount namespace too; nsguard refuses it (slave or private "
				"keep them apart)",
				v);
	return nsg_fail(EINVAL, "linux.rootfsPropagation \"%.64s\" is none runc or crun knows", v);
}

int oci_state_merge_config(struct oci_state *st, const char *buf, size_t len)
{
	return merge_config(st, buf, len, "malformed config.json");
}

int oci_state_merge_bundle_annotations(struct oci_state *st)
{
	cleanup_free char *path = NULL;
	cleanup_free char *what = NULL;
	cleanup_free char *buf = NULL;
	cleanup_close int fd = -1;
	struct stat sb;
	size_t len = 0;
	int err = 0;

	/* Without it nsguard cannot tell what the runtime was asked for. */
	if (!st->bundle || !st->bundle[0])
		return nsg_fail(EINVAL, "the state has no bundle, so nsguard cannot read the "
				"container's config.json; a runtime always passes one");
	if (asprintf(&path, "%s/config.json", st->bundle) < 0) {
		path = NULL;
		return nsg_fail(ENOMEM, "out of memory");
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return nsg_fail(errno, "cannot read %s (%s): nsguard reads the container's "
				"annotations and capabilities from it",
				path, strerror(errno));
	if (fstat(fd, &sb) < 0)
		return nsg_fail(errno, "stat %s: %s", path, strerror(errno));
	if (!S_ISREG(sb.st_mode))
		return nsg_fail(EINVAL, "%s is not a regular file", path);
	err = read_capped(fd, OCI_CONFIG_MAX, &buf, &len);
	if (err == -EFBIG)
		return nsg_fail(EFBIG,
				"%s is larger than %d MiB (a bundle's config.json is a few KiB)",
				path, OCI_CONFIG_MAX >> 20);
	if (err == -ENOMEM)
		return nsg_fail(ENOMEM, "read %s: out of memory", path);
	if (err < 0)
		return nsg_fail(-err, "read %s: %s", path, strerror(-err));
	if (asprintf(&what, "malformed %s", path) < 0) {
		what = NULL;
		return nsg_fail(ENOMEM, "out of memory");
	}
	return merge_config(st, buf, len, what);
}
