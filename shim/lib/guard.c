// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Load-or-reuse the pinned nsguard program, attach/detach cgroups, read the
 * maps.  The only shim module (with cmd_monitor.c) that calls libbpf.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <dirent.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "fileio.h"
#include "commit.h"
#include "guard.h"
#include "lockfile.h"
#include "log.h"
#include "util.h"
#include "abi-hash.h"
#include "nsguard-abi.h"
#include "nsguard.skel.h"

#define LSM_LIST "/sys/kernel/security/lsm"
/* The kernel-internal ENOTSUPP sometimes reaches user space. */
#define ENOTSUPP_KERNEL 524
#define ROUND8(x) (((x) + 7) & ~(size_t)7)

/* libbpf's last warning, so a failure message can say more than strerror. */
static char libbpf_last[256];

__attribute__((format(printf, 2, 0))) static int libbpf_print(enum libbpf_print_level level,
								const char *fmt, va_list ap)
{
	va_list copy;
	size_t n;

	if (level == LIBBPF_WARN) {
		va_copy(copy, ap);
		vsnprintf(libbpf_last, sizeof(libbpf_last), fmt, copy);
		va_end(copy);
		n = strlen(libbpf_last);
		while (n && (libbpf_last[n - 1] == '\n' || libbpf_last[n - 1] == ' '))
			libbpf_last[--n] = '\0';
	}
	/* Quiet unless -v; the verifier log (debug) only with -vv. */
	if (nsg_verbose() >= 2 || (nsg_verbose() >= 1 && level != LIBBPF_DEBUG))
		return vfprintf(stderr, fmt, ap);
	return 0;
}

static void libbpf_setup(void)
{
	libbpf_last[0] = '\0';
	libbpf_set_print(libbpf_print);
}

static const char *libbpf_detail(void)
{
	return libbpf_last[0] ? libbpf_last : "no details; run with -vv for libbpf's log";
}

/*
 * The LSM list is set at boot: one read per process answers every ask (#32),
 * and none when the program is pinned (open_at: pinned in this boot by an
 * nsguard that found the BPF LSM active).
 */
static bool active;

int guard_lsm_check(char *list, size_t len)
{
	cleanup_fclose FILE *f = NULL;
	char buf[512] = "", *tok, *save = NULL, copy[512];
	int err = 0;

	if (active && !list)
		return 0;

	f = fopen(LSM_LIST, "re");
	if (!f) {
		err = -errno;
		if (list && len)
			list[0] = '\0';
		return nsg_fail(-err,
				"cannot read %s (%s), so cannot tell whether the BPF LSM is active: "
				"mount securityfs with `mount -t securityfs securityfs /sys/kernel/security`",
				LSM_LIST, strerror(-err));
	}
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	if (list && len)
		snprintf(list, len, "%s", buf);
	snprintf(copy, sizeof(copy), "%s", buf);
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		if (strcmp(tok, "bpf") == 0) {
			active = true;
			return 0;
		}
	return nsg_fail(EOPNOTSUPP,
			"the BPF LSM is not active (%s is \"%s\"), so userns_create cannot be "
			"guarded: boot with lsm=%s%sbpf (kernel needs CONFIG_BPF_LSM=y)",
			LSM_LIST, buf, buf, buf[0] ? "," : "");
}

static int bpffs_check(void)
{
	struct statfs sfs;

	if (statfs("/sys/fs/bpf", &sfs) < 0 || sfs.f_type != BPF_FS_MAGIC)
		return nsg_fail(ENODEV,
				"bpffs is not mounted at /sys/fs/bpf: run `mount -t bpf bpf /sys/fs/bpf`");
	return 0;
}


/*
 * The pinned objects, indexed as guard.h's GUARD_PIN_I_*, relative to the
 * pin directory, with what a matching map must look like: a program built
 * from another nsguard.bpf.o must never get this build's policies written
 * at this build's offsets.
 */
static const struct {
	const char *name;
	size_t off;
	__u32 type; /* BPF_MAP_TYPE_*; 0 for the program */
	__u32 value_size; /* 0: not checked (ring buffer) */
	__u32 max_entries; /* 0: not checked (cgroup storage) */
} pins[] = {
	[GUARD_PIN_I_POLICIES] = { "policies", offsetof(struct guard, policies_fd),
				   BPF_MAP_TYPE_CGROUP_STORAGE, sizeof(struct nsguard_policy), 0 },
	[GUARD_PIN_I_COUNTERS] = { "counters", offsetof(struct guard, counters_fd),
				   BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE,
				   sizeof(struct nsguard_counters), 0 },
	[GUARD_PIN_I_STATS] = { "stats", offsetof(struct guard, stats_fd),
				BPF_MAP_TYPE_PERCPU_ARRAY, sizeof(struct nsguard_stats), 1 },
	[GUARD_PIN_I_EVENTS] = { "events", offsetof(struct guard, events_fd),
				 BPF_MAP_TYPE_RINGBUF, 0, NSGUARD_EVENTS_SIZE },
	[GUARD_PIN_I_LEARNED] = { "learned", offsetof(struct guard, learned_fd),
				  BPF_MAP_TYPE_HASH, sizeof(struct nsguard_usage),
				  NSGUARD_LEARN_MAX },
	/* The bpf() guard (nsguard_bpf): opened only when named. */
	[GUARD_PIN_I_BPFGUARD] = { "bpfguard", offsetof(struct guard, bpfguard_fd), 0, 0, 0 },
	/* The program last: its pin marks a complete set. */
	[GUARD_PIN_I_PROG] = { "prog", offsetof(struct guard, prog_fd), 0, 0, 0 },
};
_Static_assert(ARRAY_SIZE(pins) == GUARD_PIN_I_PROG + 1, "the program is the last pin");

#define PIN_FD(g, i) ((int *)((char *)(g) + pins[i].off))

static void guard_init(struct guard *g, const char *dir)
{
	for (size_t i = 0; i < ARRAY_SIZE(pins); i++)
		*PIN_FD(g, i) = -1;
	g->loaded_now = false;
	g->dir = dir;
}

void guard_close(struct guard *g)
{
	for (size_t i = 0; i < ARRAY_SIZE(pins); i++) {
		if (*PIN_FD(g, i) >= 0)
			close(*PIN_FD(g, i));
		*PIN_FD(g, i) = -1;
	}
}

/* dir/name; an empty path (which every call then fails on) if too long. */
static void pin_path(char *buf, size_t len, const char *dir, const char *name)
{
	if (snprintf(buf, len, "%s/%s", dir, name) >= (int)len)
		buf[0] = '\0';
}

/*
 * This build's ABI: a hash (FNV-1a) of the BPF object it carries.  Any change
 * to the program or its maps changes it; its marker abi-<hash> sits beside
 * the pins.  Computed at build time (bpf/abi-hash.c, build/nsguard-abi.h):
 * hashing the object in every hook cost 105 K instructions.
 */
_Static_assert(sizeof(NSGUARD_ABI) == GUARD_ABI_LEN, "NSGUARD_ABI: 16 hex digits");

void guard_abi(char out[GUARD_ABI_LEN])
{
	memcpy(out, NSGUARD_ABI, GUARD_ABI_LEN);
}

bool guard_abi_embedded(void)
{
	size_t sz = 0;
	const unsigned char *p = nsguard__elf_bytes(&sz);
	char hex[GUARD_ABI_LEN];

	snprintf(hex, sizeof(hex), "%016llx",
		 (unsigned long long)nsguard_abi_hash(NSGUARD_ABI_HASH_INIT, p, sz));
	return strcmp(hex, NSGUARD_ABI) == 0;
}

/*
 * This build's place in time: the commit's date (shim/version-stamp: git,
 * a make dist tarball's stamp, or a package build's SOURCE_DATE_EPOCH; never
 * 0), +1 for the tests' nsguard-next.  A hook
 * moves pins only to a later build (guard_pinned_seq); its marker seq-<n>
 * sits beside abi-<hash>.
 */
unsigned long long guard_build_seq(void)
{
#ifdef NSGUARD_ABI_NEXT
	return NSGUARD_BUILD_SEQ + 1;
#else
	return NSGUARD_BUILD_SEQ;
#endif
}

unsigned long long guard_pinned_seq(const char *dir)
{
	cleanup_closedir DIR *d = opendir(dir);
	unsigned long long v = 0, best = 0;
	struct dirent *e;
	char *end;

	while (d && (e = readdir(d))) {
		if (strncmp(e->d_name, "seq-", 4) != 0)
			continue;
		errno = 0;
		v = strtoull(e->d_name + 4, &end, 10);
		if (!errno && *end == '\0' && v > best)
			best = v;
	}
	return best;
}

static unsigned pinned_abi(const char *dir, char *out, size_t len);

/*
 * The possible CPUs (the size of a per-CPU value), fixed per boot: the load
 * that made the pins wrote them beside abi-<hash> as cpus-<n> (bpffs, like
 * the LSM list, lasts one boot), so a hook that lists the pins reads no
 * /sys/devices/system/cpu/possible.  Pins without it: libbpf's count.
 */
#define NSGUARD_MAX_CPUS 65536
static int pinned_ncpu;

static int possible_cpus(void)
{
	return pinned_ncpu > 0 ? pinned_ncpu : libbpf_num_possible_cpus();
}

bool guard_pinned_abi_is_ours(const char *dir)
{
	char abi[GUARD_ABI_LEN], found[64];

	guard_abi(abi);
	pinned_abi(dir, found, sizeof(found));
	return strcmp(found, abi) == 0;
}

/*
 * The abi-* marker in dir ("" if none, "?" if several), and which of
 * pins[] are there (bit i: pins[i]) from the same listing.
 */
static unsigned pinned_abi(const char *dir, char *out, size_t len)
{
	cleanup_closedir DIR *d = opendir(dir);
	unsigned present = 0, v = 0;
	struct dirent *e;

	snprintf(out, len, "%s", "");
	while (d && (e = readdir(d))) {
		if (strncmp(e->d_name, "abi-", 4) == 0)
			snprintf(out, len, "%s", out[0] ? "?" : e->d_name + 4);
		if (strncmp(e->d_name, "cpus-", 5) == 0 &&
		    parse_uint(e->d_name + 5, NSGUARD_MAX_CPUS, &v) == 0 && v > 0)
			pinned_ncpu = (int)v;
		for (size_t i = 0; i < ARRAY_SIZE(pins); i++)
			if (strcmp(e->d_name, pins[i].name) == 0)
				present |= 1u << i;
	}
	return present;
}

/* Another build's set, and why, as every command that opens the pins says it. */
static int stale(const struct guard *g, const char *why)
{
	return nsg_fail(ESTALE,
			"the program pinned in %s comes from another nsguard build (%s): this one "
			"will not write its policies into those maps; run 'nsguard upgrade' to "
			"move the guarded cgroups to this build's program",
			g->dir, why);
}

/*
 * The abi-* marker in g->dir is this build's; *present, the pins there
 * (a hook opens a few, and must still see a set missing any).
 */
static int check_marker(const struct guard *g, const char *found)
{
	char abi[GUARD_ABI_LEN], why[160];

	guard_abi(abi);
	if (strcmp(found, abi) == 0)
		return 0;
	snprintf(why, sizeof(why), "its ABI is %s, this nsguard's is %s",
		 found[0] ? found : "unmarked: an nsguard from before pin markers", abi);
	return stale(g, why);
}

/* Each pinned map which names is open and has this build's type, value size and size. */
static int check_maps(struct guard *g, unsigned which)
{
	char why[160];

	for (size_t i = 0; i < ARRAY_SIZE(pins); i++) {
		struct bpf_map_info info = { 0 };
		__u32 len = sizeof(info);
		int err;

		if (!pins[i].type || !(which & (1u << i)))
			continue;
		if (*PIN_FD(g, i) < 0)
			return nsg_fail(EBADF, "the pinned map %s/%s is not open", g->dir,
					pins[i].name);
		err = bpf_obj_get_info_by_fd(*PIN_FD(g, i), &info, &len);
		if (err)
			return nsg_fail(-err, "cannot read the pinned map %s/%s: %s", g->dir,
					pins[i].name, strerror(-err));
		if (info.type != pins[i].type ||
		    (pins[i].value_size && info.value_size != pins[i].value_size) ||
		    (pins[i].max_entries && info.max_entries != pins[i].max_entries)) {
			snprintf(why, sizeof(why),
				 "its map %s has type %u, value size %u, %u entries; this nsguard's "
				 "has type %u, value size %u",
				 pins[i].name, info.type, info.value_size, info.max_entries,
				 pins[i].type, pins[i].value_size);
			return stale(g, why);
		}
	}
	return 0;
}

/* The pins which names (bit i: pins[i]; the program always). */
static int open_pins(struct guard *g, unsigned which)
{
	char path[256];
	int fd;

	for (size_t i = 0; i < ARRAY_SIZE(pins); i++) {
		if (i != GUARD_PIN_I_PROG && !(which & (1u << i)))
			continue;
		pin_path(path, sizeof(path), g->dir, pins[i].name);
		fd = bpf_obj_get(path);
		if (fd < 0) {
			guard_close(g);
			return nsg_fail(-fd, "cannot open pinned %s: %s", path, strerror(-fd));
		}
		*PIN_FD(g, i) = fd;
	}
	return 0;
}

/* Remove the pins and markers of dir (not its links). */
static void unpin_all(const char *dir)
{
	cleanup_closedir DIR *d = opendir(dir);
	char path[256];
	struct dirent *e;

	for (size_t i = 0; i < ARRAY_SIZE(pins); i++) {
		pin_path(path, sizeof(path), dir, pins[i].name);
		unlink(path);
	}
	while (d && (e = readdir(d))) {
		if (strncmp(e->d_name, "abi-", 4) != 0 && strncmp(e->d_name, "seq-", 4) != 0 &&
		    strncmp(e->d_name, "cpus-", 5) != 0)
			continue;
		pin_path(path, sizeof(path), dir, e->d_name);
		rmdir(path);
	}
}

static int load_and_pin(struct guard *g)
{
	struct nsguard *skel = NULL;
	char path[256], abi[GUARD_ABI_LEN];
	int err = 0, fd;

	skel = nsguard__open_and_load();
	if (!skel) {
		err = -errno ?: -EINVAL;
		return nsg_fail(-err,
				"loading the BPF program failed: %s (libbpf: %s); the kernel needs "
				"CONFIG_BPF_SYSCALL, CONFIG_BPF_LSM and BTF (/sys/kernel/btf/vmlinux)",
				strerror(-err), libbpf_detail());
	}
	err = mkdir_p(g->dir, 0700);
	if (err) {
		nsg_fail(-err, "cannot create %s: %s", g->dir, strerror(-err));
		goto out;
	}
	/* Leftovers of a half-finished earlier load would make pinning fail. */
	unpin_all(g->dir);
	/* The marker before the program: a complete set is always marked. */
	guard_abi(abi);
	snprintf(path, sizeof(path), "%s/seq-%llu", g->dir, guard_build_seq());
	if (mkdir(path, 0700) < 0) {
		err = nsg_fail(errno, "cannot create %s: %s", path, strerror(errno));
		goto out;
	}
	snprintf(path, sizeof(path), "%s/abi-%s", g->dir, abi);
	if (mkdir(path, 0700) < 0) {
		err = nsg_fail(errno, "cannot create %s: %s", path, strerror(errno));
		goto out;
	}
	/* What every later hook would otherwise read from sysfs (possible_cpus). */
	fd = libbpf_num_possible_cpus();
	snprintf(path, sizeof(path), "%s/cpus-%d", g->dir, fd);
	if (fd > 0 && mkdir(path, 0700) < 0) {
		err = nsg_fail(errno, "cannot create %s: %s", path, strerror(errno));
		goto out;
	}

	for (size_t i = 0; i < ARRAY_SIZE(pins); i++) {
		/* Maps by their pin name, which is their name in nsguard.bpf.c. */
		if (pins[i].type)
			fd = bpf_map__fd(bpf_object__find_map_by_name(skel->obj, pins[i].name));
		else if (i == GUARD_PIN_I_BPFGUARD)
			fd = bpf_program__fd(skel->progs.nsguard_bpf);
		else
			fd = bpf_program__fd(skel->progs.nsguard_userns_create);
		pin_path(path, sizeof(path), g->dir, pins[i].name);
		err = bpf_obj_pin(fd, path);
		if (err) {
			nsg_fail(-err, "cannot pin %s: %s", path, strerror(-err));
			goto out;
		}
		fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		if (fd < 0) {
			err = nsg_fail(errno, "dup: %s", strerror(errno));
			goto out;
		}
		*PIN_FD(g, i) = fd;
	}
	g->loaded_now = true;
out:
	if (err) {
		unpin_all(g->dir);
		guard_close(g);
	}
	nsguard__destroy(skel);
	return err;
}

/*
 * The bound: a hook never hangs the runtime because another nsguard (or
 * anything else) holds the lock.  Holders keep it for one container's
 * check, attach and record write (a load for the first), a poststop, or a
 * gc pass: well under a second each even under TCG.
 */
static long lock_wait_ms(void)
{
#ifdef NSGUARD_FAULT_INJECTION
	/* Test builds only: a shorter bound (never longer); nsguard itself reads no such variable. */
	const char *ms = getenv("NSGUARD_LOCK_WAIT_MS");
	unsigned int v = 0;

	if (ms && parse_uint(ms, NSGUARD_LOCK_WAIT_SECS * 1000, &v) == 0)
		return v;
#endif
	return NSGUARD_LOCK_WAIT_SECS * 1000L;
}

int guard_lock(int *fd_out)
{
	cleanup_close int lock = -1;
	int err = 0;

	*fd_out = -1;
	/* The directory is there but on a host's first start: created on ENOENT. */
	lock = lockfile_open(NSGUARD_LOCK_FILE, true);
	if (lock < 0)
		return lock;
	err = lockfile_wait(lock, NSGUARD_LOCK_FILE, LOCK_EX, lock_wait_ms(),
			    "nsguard's own commands hold it for well under a second; if that is "
			    "not one of them, end it");
	if (err)
		return err;
	*fd_out = steal_fd(&lock);
	return 0;
}

/*
 * The pinned set, this build's: the marker first, so another build's set
 * is -ESTALE even when it lacks one of this build's pins, and a set of ours
 * that lacks one (the marker's listing shows every pin, opened or not) is
 * -ESTALE too (an upgrade rebuilds either).
 */
static int open_pinned(struct guard *g, unsigned which, unsigned present, const char *found)
{
	int err = check_marker(g, found);

	if (err)
		return err;
	/* A pin missing from the listing: as if its open had failed. */
	for (size_t i = 0; i < ARRAY_SIZE(pins) && !err; i++)
		if (!(present & (1u << i)))
			err = nsg_fail(ENOENT, "no %s/%s", g->dir, pins[i].name);
	if (!err)
		err = open_pins(g, which);
	if (err == -ENOENT) {
		char why[512];

		snprintf(why, sizeof(why), "%s", nsg_last_error());
		return nsg_fail(ESTALE,
				"the program pinned in %s is incomplete (%s); 'nsguard upgrade' "
				"rebuilds the set",
				g->dir, why);
	}
	return err ?: check_maps(g, which);
}

static int open_at(struct guard *g, const char *dir, bool load, unsigned which)
{
	char prog[256], found[64];
	unsigned present;
	int err = 0;

	guard_init(g, dir);
	libbpf_setup();
	/*
	 * One listing: is the set there, whose is it, which pins does it hold.
	 * A pinned program was loaded in this boot (bpffs does not outlast
	 * one) by an nsguard that found bpffs mounted and the BPF LSM active
	 * (the LSM list is set at boot), so a warm hook asks neither again.
	 */
	present = pinned_abi(dir, found, sizeof(found));
	if (present & (1u << GUARD_PIN_I_PROG)) {
		err = open_pinned(g, which, present, found);
		active = active || err == 0;
		return err;
	}
	err = bpffs_check();
	if (err)
		return err;
	pin_path(prog, sizeof(prog), dir, "prog");
	if (!load)
		return nsg_fail(ENOENT, "the nsguard program is not loaded (no %s)", prog);
	/* Without the LSM a loaded program would never run: do not even load. */
	err = guard_lsm_check(NULL, 0);
	if (err)
		return err;
	/* The caller holds guard_lock(): two hooks never load twice. */
	return load_and_pin(g);
}

int guard_open_at(struct guard *g, const char *dir, bool load)
{
	return open_at(g, dir, load, GUARD_PINS_ALL);
}

int guard_open(struct guard *g, bool load)
{
	return open_at(g, NSGUARD_PIN_DIR, load, GUARD_PINS_ALL);
}

int guard_open_some(struct guard *g, bool load, unsigned which)
{
	return open_at(g, NSGUARD_PIN_DIR, load, which);
}

/*
 * A guarded cgroup's two links, each pinned in a directory of its own
 * (bpffs refuses a '.' in a name): the policy's and the bpf() guard's.
 */
enum { LINK_USERNS, LINK_BPF, LINK_KINDS };
static const char *const link_dirs[LINK_KINDS] = { "links", "bpflinks" };

static void link_pin_path(char *buf, size_t len, const char *dir, int kind, __u64 cgroup_id)
{
	if (snprintf(buf, len, "%s/%s/%llu", dir, link_dirs[kind], (unsigned long long)cgroup_id) >=
	    (int)len)
		buf[0] = '\0';
}

bool guard_link_pinned(__u64 cgroup_id)
{
	char path[256];

	link_pin_path(path, sizeof(path), NSGUARD_PIN_DIR, LINK_USERNS, cgroup_id);
	return access(path, F_OK) == 0;
}

/*
 * The link pinned at path: 1 when it is attached to cgroup_id (a cgroup
 * link of BPF_LSM_CGROUP whose cgroup is that one), 0 when it is pinned
 * but not (a LINK_DETACH leaves the pin; the kernel then says cgroup id 0),
 * -ENOENT when nothing is pinned there, another -errno when it cannot tell.
 */
static int link_check(const char *path, __u64 cgroup_id)
{
	struct bpf_link_info info = { 0 };
	__u32 len = sizeof(info);
	cleanup_close int fd = bpf_obj_get(path);
	int err;

	if (fd < 0)
		return fd;
	err = bpf_obj_get_info_by_fd(fd, &info, &len);
	if (err)
		return err;
	return info.type == BPF_LINK_TYPE_CGROUP && info.cgroup.attach_type == BPF_LSM_CGROUP &&
	       info.cgroup.cgroup_id == cgroup_id;
}

int guard_link_state(const char *dir, __u64 cgroup_id)
{
	char path[256], guard[256];
	int st[LINK_KINDS], kinds = LINK_KINDS;
	bool pinned = false, attached = true;

	/* An older build's set has no bpf() guard: its one link decides. */
	pin_path(guard, sizeof(guard), dir, "bpfguard");
	if (access(guard, F_OK) < 0)
		kinds = LINK_BPF;
	for (int k = 0; k < kinds; k++) {
		link_pin_path(path, sizeof(path), dir, k, cgroup_id);
		st[k] = link_check(path, cgroup_id);
		if (st[k] < 0 && st[k] != -ENOENT)
			return nsg_fail(-st[k], "cannot read the link pinned at %s: %s", path,
					strerror(-st[k]));
		pinned |= st[k] >= 0;
		attached &= st[k] == 1;
	}
	if (!pinned)
		return GUARD_LINK_NONE;
	return attached ? GUARD_LINK_ATTACHED : GUARD_LINK_DETACHED;
}

const char *guard_link_state_name(int state)
{
	switch (state) {
	case GUARD_LINK_NONE: return "none";
	case GUARD_LINK_ATTACHED: return "attached";
	case GUARD_LINK_DETACHED: return "detached";
	default: return "unknown";
	}
}

/* Why an attach failed, as something the admin can act on. */
static int attach_fail(int err)
{
	char list[256] = "";

	if (err == -EOPNOTSUPP || err == -EINVAL || err == -ENOTSUPP_KERNEL) {
		if (guard_lsm_check(list, sizeof(list)) < 0)
			return nsg_fail_context(err, "attaching the program to the cgroup failed (%s)",
						strerror(-err));
		return nsg_fail(-err,
				"attaching the program to the cgroup failed: %s; %s lists bpf (\"%s\"), "
				"so the kernel probably lacks CONFIG_CGROUP_BPF or BPF_LSM_CGROUP (Linux >= 6.0 "
				"with the userns_create hook, >= 6.1)",
				strerror(-err), LSM_LIST, list);
	}
	if (err == -EPERM)
		return nsg_fail(EPERM, "attaching the program to the cgroup failed: %s; run as root "
				       "with CAP_SYS_ADMIN and CAP_BPF", strerror(EPERM));
	return nsg_fail(-err, "attaching the program to the cgroup failed: %s", strerror(-err));
}

#ifdef NSGUARD_FAULT_INJECTION
/*
 * Test builds only (build/nsguard-fault): NSGUARD_FAULT=NAME makes step NAME
 * fail with -EIO instead of running: `fault("x") ?: step()`.
 */
static int fault(const char *name)
{
	const char *f = getenv("NSGUARD_FAULT");

	return f && strcmp(f, name) == 0 ? -EIO : 0;
}
#else
#define fault(name) 0
#endif

/*
 * Cgroup storage outlives a detach: the kernel frees it with the cgroup, and
 * a new attachment to the same cgroup picks it up again.  Before a new link,
 * set what is left to the all-zero deny (and zero counts), so the new
 * attachment denies until its policy is written, also if that write fails.
 * -ENOENT (never attached, nothing left) is the usual case.
 */
static int reset_storage(struct guard *g, __u64 cgroup_id, bool counters)
{
	const struct nsguard_policy deny = { 0 };
	cleanup_free void *zeros = NULL;
	int ncpu = possible_cpus(), err;

	err = fault("reset") ?: bpf_map_update_elem(g->policies_fd, &cgroup_id, &deny, BPF_EXIST);
	if (err == -ENOENT)
		return 0;
	if (err)
		return nsg_fail(-err, "resetting the policy left from an earlier attach of cgroup "
				      "%llu failed: %s; not attaching",
				(unsigned long long)cgroup_id, strerror(-err));
	if (!counters)
		return 0;
	if (ncpu <= 0)
		return nsg_fail(ncpu < 0 ? -ncpu : EINVAL, "cannot count the possible CPUs");
	zeros = calloc(ncpu, ROUND8(sizeof(struct nsguard_counters)));
	if (!zeros)
		return nsg_fail(ENOMEM, "out of memory");
	err = bpf_map_update_elem(g->counters_fd, &cgroup_id, zeros, BPF_EXIST);
	if (err && err != -ENOENT)
		return nsg_fail(-err, "resetting the counters of cgroup %llu failed: %s",
				(unsigned long long)cgroup_id, strerror(-err));
	return 0;
}

/*
 * Make prog's link to the cgroup and pin it at path (its directory made on
 * the first attach after a load).  0, or -EEXIST when a concurrent attach
 * of the same cgroup pinned one first (the caller uses that one).
 */
static int link_make(const struct guard *g, int prog_fd, int cgroup_fd, int kind, const char *path)
{
	char dir[256];
	int err, link;

	link = fault(kind == LINK_BPF ? "bpf-link" : "link") ?:
	       bpf_link_create(prog_fd, cgroup_fd, BPF_LSM_CGROUP, NULL);
	if (link < 0)
		return attach_fail(link);
	err = bpf_obj_pin(link, path);
	if (err == -ENOENT) {
		pin_path(dir, sizeof(dir), g->dir, link_dirs[kind]);
		err = mkdir_p(dir, 0700);
		if (!err)
			err = bpf_obj_pin(link, path);
	}
	close(link); /* the pin keeps it attached */
	if (err && err != -EEXIST)
		return nsg_fail(-err, "cannot pin the link at %s: %s", path, strerror(-err));
	return err;
}

/* The pinned link at path no longer guards the cgroup: unpin it, say so. */
static int link_unpin_dead(const char *path, __u64 cgroup_id)
{
	if (unlink(path) < 0 && errno != ENOENT)
		return nsg_fail(errno, "the link pinned at %s no longer guards cgroup %llu, and "
				       "it cannot be unpinned: %s",
				path, (unsigned long long)cgroup_id, strerror(errno));
	nsg_warn("warning: the link pinned at %s was detached from cgroup %llu (not by nsguard): "
		 "attaching it anew",
		 path, (unsigned long long)cgroup_id);
	return 0;
}

int guard_attach(struct guard *g, int cgroup_fd, __u64 cgroup_id, const struct nsguard_policy *pol,
		 char **link_pin_out, bool *relinked)
{
	struct nsguard_policy p = *pol, cur;
	/* fresh: this call made the policy's link, and the storage reads deny;
	 * keep: the usage to write is the storage's (a rewrite, a re-link);
	 * dead: a pinned link no longer guarded the cgroup. */
	bool fresh = false, keep = false, have_cur = false, dead = false;
	char path[LINK_KINDS][256];
	int err = 0, st[LINK_KINDS];

	if (relinked)
		*relinked = false;
	/* Attaching without the LSM active would report a guard that never runs. */
	err = guard_lsm_check(NULL, 0);
	if (err)
		return err;
	/* One OBJ_GET and OBJ_GET_INFO a link: what guards, not what is pinned. */
	for (int k = 0; k < LINK_KINDS; k++) {
		link_pin_path(path[k], sizeof(path[k]), g->dir, k, cgroup_id);
		st[k] = link_check(path[k], cgroup_id);
		if (st[k] < 0 && st[k] != -ENOENT)
			return nsg_fail(-st[k], "cannot read the link pinned at %s: %s", path[k],
					strerror(-st[k]));
	}
	if (st[LINK_USERNS] == 0) {
		/*
		 * Detached under us: the storage outlives a detach, so the
		 * usage (and the counters) are still there to keep.  What the
		 * detacher may also have written there cannot be told apart.
		 */
		err = bpf_map_lookup_elem(g->policies_fd, &cgroup_id, &cur);
		if (err && err != -ENOENT)
			return nsg_fail(-err, "reading the usage of cgroup %llu failed: %s",
					(unsigned long long)cgroup_id, strerror(-err));
		keep = have_cur = !err;
		dead = true;
		err = link_unpin_dead(path[LINK_USERNS], cgroup_id);
		if (err)
			return err;
	}
	if (st[LINK_USERNS] != 1) {
		/* A new link denies until the policy lands; a re-link keeps the counts. */
		err = reset_storage(g, cgroup_id, !dead) ?:
		      link_make(g, g->prog_fd, cgroup_fd, LINK_USERNS, path[LINK_USERNS]);
		/* EEXIST: a concurrent attach of the same cgroup won; use its link. */
		if (err == -EEXIST)
			keep = true;
		else if (err)
			return err;
		else
			fresh = true;
		err = 0;
	} else {
		keep = true;
	}
	if (keep && !have_cur) {
		/*
		 * A rewrite keeps the usage: the count limit is over the
		 * container's life.  Namespaces allowed between this read and
		 * the write below are not counted (a rewrite is the admin's or
		 * the runtime's, not the container's doing).
		 */
		err = bpf_map_lookup_elem(g->policies_fd, &cgroup_id, &cur);
		if (err)
			return nsg_fail(-err, "reading the usage of cgroup %llu failed: %s; its "
					      "earlier policy stays in force",
					(unsigned long long)cgroup_id, strerror(-err));
	}
	if (st[LINK_BPF] != 1) {
		/* The bpf() guard beside it: an attach without it fails (and denies). */
		if (st[LINK_BPF] == 0) {
			dead = true;
			err = link_unpin_dead(path[LINK_BPF], cgroup_id);
		}
		if (!err && g->bpfguard_fd < 0) {
			char prog[256];

			pin_path(prog, sizeof(prog), g->dir, "bpfguard");
			g->bpfguard_fd = bpf_obj_get(prog);
			if (g->bpfguard_fd < 0)
				err = nsg_fail(-g->bpfguard_fd, "cannot open pinned %s: %s", prog,
					       strerror(-g->bpfguard_fd));
		}
		if (!err)
			err = link_make(g, g->bpfguard_fd, cgroup_fd, LINK_BPF, path[LINK_BPF]);
		if (err == -EEXIST)
			err = 0;
		if (err) {
			nsg_fail_context(err, "the bpf() guard of cgroup %llu is not attached%s",
					 (unsigned long long)cgroup_id,
					 fresh ? "; the cgroup stays guarded with deny until detached" :
						 "");
			return err;
		}
	}
	if (relinked)
		*relinked = dead;
	/* Until this lands the storage reads all-zero, which denies. */
	p.cgroup_id = cgroup_id;
	p.window_start_ns = 0; /* a new policy starts a fresh event window */
	p.window_events = 0;
	if (keep) {
		p.created = cur.created;
		p.depths = cur.depths;
	}
	err = fault("policy-write") ?: bpf_map_update_elem(g->policies_fd, &cgroup_id, &p, BPF_EXIST);
	if (err) {
		/* A new link reads deny (reset_storage); a rewrite keeps the old policy. */
		if (fresh)
			nsg_fail(-err, "writing the policy of cgroup %llu failed: %s; the cgroup "
				       "stays guarded with deny until detached",
				 (unsigned long long)cgroup_id, strerror(-err));
		else
			nsg_fail(-err, "writing the policy of cgroup %llu failed: %s; its earlier "
				       "policy stays in force",
				 (unsigned long long)cgroup_id, strerror(-err));
		return err;
	}
	if (link_pin_out) {
		*link_pin_out = strdup(path[LINK_USERNS]);
		if (!*link_pin_out)
			return nsg_fail(ENOMEM, "out of memory");
	}
	return 0;
}

/* Unpin both links of the cgroup in dir, the bpf() guard's first: the
 * policy's pin, the claim, goes last. */
static int unpin_links(const char *dir, __u64 cgroup_id)
{
	char path[256];

	for (int k = LINK_KINDS - 1; k >= 0; k--) {
		link_pin_path(path, sizeof(path), dir, k, cgroup_id);
		if (unlink(path) < 0 && errno != ENOENT)
			return nsg_fail(errno, "cannot unpin %s: %s", path, strerror(errno));
	}
	return 0;
}

int guard_detach(__u64 cgroup_id)
{
	return unpin_links(NSGUARD_PIN_DIR, cgroup_id);
}

int guard_remove_dir(const char *dir)
{
	cleanup_free __u64 *ids = NULL;
	char links[256];
	size_t n = 0;
	int err = guard_links_list(dir, &ids, &n);

	if (err)
		return err;
	for (size_t i = 0; i < n; i++) {
		err = unpin_links(dir, ids[i]);
		if (err)
			return err;
	}
	for (int k = 0; k < LINK_KINDS; k++) {
		pin_path(links, sizeof(links), dir, link_dirs[k]);
		if (rmdir(links) < 0 && errno != ENOENT)
			return nsg_fail(errno, "cannot remove %s: %s", links, strerror(errno));
	}
	unpin_all(dir);
	if (rmdir(dir) < 0 && errno != ENOENT)
		return nsg_fail(errno, "cannot remove %s: %s", dir, strerror(errno));
	return 0;
}

int guard_links_list(const char *dir, __u64 **ids_out, size_t *n_out)
{
	cleanup_free __u64 *ids = NULL;
	char links[256], *end;
	size_t n = 0, cap = 0, first;
	struct dirent *e;

	*ids_out = NULL;
	*n_out = 0;
	/* Both directories: a bpf() guard's link left without its policy's counts. */
	for (int k = 0; k < LINK_KINDS; k++) {
		cleanup_closedir DIR *d = NULL;

		first = n;
		pin_path(links, sizeof(links), dir, link_dirs[k]);
		d = opendir(links);
		if (!d) {
			if (errno == ENOENT)
				continue;
			return nsg_fail(errno, "cannot read %s: %s", links, strerror(errno));
		}
		while ((errno = 0, e = readdir(d))) {
			unsigned long long id = strtoull(e->d_name, &end, 10);
			bool seen = false;

			if (e->d_name[0] < '0' || e->d_name[0] > '9' || *end)
				continue;
			for (size_t i = 0; i < first && !seen; i++)
				seen = ids[i] == id;
			if (seen)
				continue;
			if (n == cap) {
				__u64 *more = reallocarray(ids, cap ? cap * 2 : 64, sizeof(*ids));

				if (!more)
					return nsg_fail(ENOMEM, "out of memory");
				ids = more;
				cap = cap ? cap * 2 : 64;
			}
			ids[n++] = id;
		}
		if (errno)
			return nsg_fail(errno, "cannot read %s: %s", links, strerror(errno));
	}
	*ids_out = steal_pointer(&ids);
	*n_out = n;
	return 0;
}

int guard_read_usage_any(const char *dir, const char *map, __u64 cgroup_id, __u32 *created,
			 __u64 *depths)
{
	struct bpf_map_info info = { 0 };
	__u32 len = sizeof(info), vlen;
	cleanup_free char *value = NULL;
	cleanup_close int fd = -1;
	bool found_created = false, has_limit = false;
	const struct btf_member *m;
	const struct btf_type *t;
	struct btf *btf = NULL;
	char path[256];
	int err = 0;

	*created = 0;
	*depths = 0;
	pin_path(path, sizeof(path), dir, map);
	fd = bpf_obj_get(path);
	if (fd == -ENOENT)
		return 0; /* a build without that map */
	if (fd < 0)
		return nsg_fail(-fd, "cannot open %s: %s", path, strerror(-fd));
	err = bpf_obj_get_info_by_fd(fd, &info, &len);
	if (err)
		return nsg_fail(-err, "cannot read the map info of %s: %s", path, strerror(-err));
	/* Any build's layout: the members are found by name in its BTF. */
	if (!info.btf_id || !info.btf_value_type_id)
		return 0;
	value = calloc(1, info.value_size);
	if (!value)
		return nsg_fail(ENOMEM, "out of memory");
	err = bpf_map_lookup_elem(fd, &cgroup_id, value);
	if (err)
		return err == -ENOENT ? 0 : nsg_fail(-err, "reading %s: %s", path, strerror(-err));
	btf = btf__load_from_kernel_by_id(info.btf_id);
	if (!btf)
		return nsg_fail(errno, "cannot load the BTF of %s: %s", path, strerror(errno));
	t = btf__type_by_id(btf, info.btf_value_type_id);
	m = t && btf_is_struct(t) ? btf_members(t) : NULL;
	vlen = m ? btf_vlen(t) : 0;
	for (__u32 i = 0; i < vlen; i++, m++) {
		const char *name = btf__name_by_offset(btf, m->name_off);
		__u32 off = btf_member_bit_offset(t, i) / 8;

		if (!name)
			continue;
		if (strcmp(name, "created") == 0 && off + sizeof(*created) <= info.value_size) {
			memcpy(created, value + off, sizeof(*created));
			found_created = true;
		}
		if (strcmp(name, "depths") == 0 && off + sizeof(*depths) <= info.value_size)
			memcpy(depths, value + off, sizeof(*depths));
		has_limit |= strcmp(name, "max_count") == 0;
	}
	btf__free(btf);
	/* A build with a count limit but no usage we can find: never reset it silently. */
	if (has_limit && !found_created)
		return nsg_fail(EPROTO, "%s has max_count but no created member this nsguard can "
					"read: not carrying the count over would reset it",
				path);
	return 0;
}

int guard_learn_start(struct guard *g, __u64 cgroup_id, const struct nsguard_usage *from)
{
	/* learn-full: as if NSGUARD_LEARN_MAX learn-mode containers ran. */
	int err = fault("learn-full") ? -E2BIG :
		  bpf_map_update_elem(g->learned_fd, &cgroup_id, from, BPF_NOEXIST);

	if (err == -EEXIST)
		return 0;
	if (err == -E2BIG)
		return nsg_fail(E2BIG, "%d learn-mode containers are guarded already, the most "
				       "there can be at once",
				NSGUARD_LEARN_MAX);
	if (err)
		return nsg_fail(-err, "learn mode: cannot add cgroup %llu to %s: %s",
				(unsigned long long)cgroup_id, NSGUARD_PIN_LEARNED, strerror(-err));
	return 0;
}

int guard_learn_read(__u64 cgroup_id, struct nsguard_usage *u)
{
	cleanup_close int fd = bpf_obj_get(NSGUARD_PIN_LEARNED);
	struct bpf_map_info info = { 0 };
	__u32 len = sizeof(info);
	int err;

	if (fd < 0)
		return nsg_fail(-fd, "cannot open %s: %s", NSGUARD_PIN_LEARNED, strerror(-fd));
	/* Opened without guard_open's checks (poststop works on any build's
	 * pins): the lookup writes value_size bytes, so they must be ours. */
	err = bpf_obj_get_info_by_fd(fd, &info, &len);
	if (!err && info.value_size != sizeof(*u))
		err = -ESTALE;
	if (err)
		return nsg_fail(-err, "%s is not this build's learned map: %s; run 'nsguard upgrade'",
				NSGUARD_PIN_LEARNED, strerror(-err));
	err = bpf_map_lookup_elem(fd, &cgroup_id, u);
	if (err)
		return nsg_fail(-err, "learn mode: no usage of cgroup %llu in %s: %s",
				(unsigned long long)cgroup_id, NSGUARD_PIN_LEARNED, strerror(-err));
	return 0;
}

int guard_learn_forget(__u64 cgroup_id)
{
	cleanup_close int fd = bpf_obj_get(NSGUARD_PIN_LEARNED);
	int err;

	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return nsg_fail(-fd, "cannot open %s: %s", NSGUARD_PIN_LEARNED, strerror(-fd));
	err = bpf_map_delete_elem(fd, &cgroup_id);
	if (err && err != -ENOENT)
		return nsg_fail(-err, "cannot remove cgroup %llu from %s: %s",
				(unsigned long long)cgroup_id, NSGUARD_PIN_LEARNED, strerror(-err));
	return 0;
}

int guard_read_policy(struct guard *g, __u64 cgroup_id, struct nsguard_policy *pol)
{
	int err = bpf_map_lookup_elem(g->policies_fd, &cgroup_id, pol);

	if (err)
		return nsg_fail(-err, "reading the policy of cgroup %llu: %s",
				(unsigned long long)cgroup_id, strerror(-err));
	return 0;
}

/*
 * Per-CPU values come back one per possible CPU, each rounded up to 8 bytes.
 * The values are structs of __u64 counts only: sum them field by field.
 */
static int read_percpu(int fd, const void *key, __u64 *sum, size_t size)
{
	cleanup_free char *buf = NULL;
	int ncpu = possible_cpus();
	int err = 0;

	if (ncpu <= 0)
		return nsg_fail(ncpu < 0 ? -ncpu : EINVAL, "cannot count the possible CPUs");
	buf = calloc(ncpu, ROUND8(size));
	if (!buf)
		return nsg_fail(ENOMEM, "out of memory");
	err = bpf_map_lookup_elem(fd, key, buf);
	if (err)
		return err;
	memset(sum, 0, size);
	for (int c = 0; c < ncpu; c++) {
		const __u64 *v = (const __u64 *)(buf + c * ROUND8(size));

		for (size_t i = 0; i < size / sizeof(__u64); i++)
			sum[i] += v[i];
	}
	return 0;
}

_Static_assert(sizeof(struct nsguard_counters) % sizeof(__u64) == 0, "counters are __u64s");
_Static_assert(sizeof(struct nsguard_stats) % sizeof(__u64) == 0, "stats are __u64s");

int guard_read_counters(struct guard *g, __u64 cgroup_id, struct nsguard_counters *cnt)
{
	int err = read_percpu(g->counters_fd, &cgroup_id, (__u64 *)cnt, sizeof(*cnt));

	if (err)
		return nsg_fail(-err, "reading the counters of cgroup %llu: %s",
				(unsigned long long)cgroup_id, strerror(-err));
	return 0;
}

int guard_read_stats(struct guard *g, struct nsguard_stats *stats)
{
	__u32 zero = 0;
	int err = read_percpu(g->stats_fd, &zero, (__u64 *)stats, sizeof(*stats));

	if (err)
		return nsg_fail(-err, "reading the stats map: %s", strerror(-err));
	return 0;
}

bool guard_bpf_refused(void)
{
	/* fd -1: without the guard, EBADF; the LSM hook runs before the lookup. */
	return bpf_link_detach(-1) == -EPERM;
}

int guard_trial(int cgroup_fd, __u64 cgroup_id, int (*probe)(void *data), void *data,
		struct nsguard_counters *cnt)
{
	struct nsguard_policy pol = { .mode = NSGUARD_MODE_DENY, .cgroup_id = cgroup_id };
	struct guard g;
	struct nsguard *skel = NULL;
	int err = 0, link = -1, bpf_link = -1;

	guard_init(&g, NULL);
	libbpf_setup();
	skel = nsguard__open_and_load();
	if (!skel) {
		err = -errno ?: -EINVAL;
		return nsg_fail(-err, "loading the BPF program failed: %s (libbpf: %s)",
				strerror(-err), libbpf_detail());
	}
	link = bpf_link_create(bpf_program__fd(skel->progs.nsguard_userns_create), cgroup_fd,
			       BPF_LSM_CGROUP, NULL);
	if (link < 0) {
		err = attach_fail(link);
		goto out;
	}
	/* The bpf() guard as every attach makes it: the probe sees it refuse. */
	bpf_link = bpf_link_create(bpf_program__fd(skel->progs.nsguard_bpf), cgroup_fd,
				   BPF_LSM_CGROUP, NULL);
	if (bpf_link < 0) {
		err = nsg_fail_context(attach_fail(bpf_link), "the bpf() guard");
		goto out;
	}
	err = bpf_map_update_elem(bpf_map__fd(skel->maps.policies), &cgroup_id, &pol, BPF_EXIST);
	if (err) {
		nsg_fail(-err, "writing a policy after the trial attach failed: %s", strerror(-err));
		goto out;
	}
	if (probe) {
		err = probe(data);
		if (err)
			goto out;
	}
	g.counters_fd = bpf_map__fd(skel->maps.counters);
	err = guard_read_counters(&g, cgroup_id, cnt);
out:
	if (bpf_link >= 0)
		close(bpf_link);
	if (link >= 0)
		close(link);
	nsguard__destroy(skel);
	return err;
}
