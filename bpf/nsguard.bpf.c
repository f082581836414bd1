// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * nsguard: decide userns_create for the processes of a guarded cgroup.
 *
 * Attached per cgroup as BPF_LSM_CGROUP, so it runs for the cgroup and all
 * its descendants; the cgroup-storage maps give each attachment its own
 * policy, usage and counters.  Returning 0 denies (with the errno chosen through
 * bpf_set_retval), 1 allows.  Capabilities are deliberately not looked at.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "nsguard.h"

/* vmlinux.h carries no macros. */
#define EPERM 1
#define MAX_ERRNO 4095

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* __u64 key: one storage per cgroup, shared by attach types, so user space
 * can address it with the plain cgroup id. */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_STORAGE);
	__type(key, __u64);
	__type(value, struct nsguard_policy);
} policies SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE);
	__type(key, __u64);
	__type(value, struct nsguard_counters);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct nsguard_stats);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, NSGUARD_EVENTS_SIZE);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, NSGUARD_LEARN_MAX);
	__type(key, __u64);
	__type(value, struct nsguard_usage);
} learned SEC(".maps");

static __always_inline void drop(struct nsguard_counters *cnt, struct nsguard_stats *st)
{
	__sync_fetch_and_add(&cnt->events_dropped, 1);
	if (st)
		__sync_fetch_and_add(&st->events_dropped, 1);
}

/*
 * One container's flood must not push the others' events out of the shared
 * ring: each cgroup gets NSGUARD_EVENTS_PER_WINDOW per window.  Two CPUs may
 * race on the window and let a few more through; the bound stays.
 */
static __always_inline bool within_bound(struct nsguard_policy *pol)
{
	__u64 now = bpf_ktime_get_ns();

	if (now - pol->window_start_ns >= NSGUARD_EVENT_WINDOW_NS) {
		pol->window_start_ns = now;
		pol->window_events = 0;
	}
	if (pol->window_events >= NSGUARD_EVENTS_PER_WINDOW)
		return false;
	__sync_fetch_and_add(&pol->window_events, 1);
	return true;
}

static __always_inline void emit(const struct cred *cred, struct nsguard_policy *pol,
				 struct nsguard_counters *cnt, struct nsguard_stats *st, __u32 level,
				 __u32 depth, __u32 decision, __u32 reason, __u32 err)
{
	struct nsguard_event *e;
	__u64 id;

	if (!within_bound(pol)) {
		drop(cnt, st);
		return;
	}
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		drop(cnt, st);
		return;
	}
	id = bpf_get_current_pid_tgid();
	e->ts_boot_ns = bpf_ktime_get_boot_ns();
	e->cgroup_id = pol->cgroup_id;
	e->task_cgroup_id = bpf_get_current_cgroup_id();
	e->pid = id >> 32;
	e->tid = (__u32)id;
	e->uid = BPF_CORE_READ(cred, uid.val);
	e->gid = BPF_CORE_READ(cred, gid.val);
	e->level = level;
	e->depth = depth;
	e->decision = decision;
	e->reason = reason;
	e->mode = pol->mode;
	e->err = err;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	bpf_ringbuf_submit(e, 0);
}

/*
 * One of max_count slots, exactly across CPUs: the add returns the count
 * before it, so two CPUs can never both take the last slot; a refused
 * request gives its increment back, and nothing else ever does (a freed
 * namespace keeps its slot).
 */
static __always_inline bool take_slot(struct nsguard_policy *pol)
{
	__u32 before = __sync_fetch_and_add(&pol->created, 1);

	if (pol->max_count == NSGUARD_COUNT_UNLIMITED || before < pol->max_count)
		return true;
	__sync_fetch_and_sub(&pol->created, 1);
	return false;
}

/* Learn mode: the same usage where it outlives the cgroup (user space made
 * the entry at attach; none, nothing to do). */
static __always_inline void learn(struct nsguard_policy *pol, __u32 depth)
{
	struct nsguard_usage *u = bpf_map_lookup_elem(&learned, &pol->cgroup_id);

	if (!u)
		return;
	__sync_fetch_and_add(&u->created, 1);
	if (depth < 64)
		__sync_fetch_and_or(&u->depths, 1ULL << depth);
}

SEC("lsm_cgroup/userns_create")
int BPF_PROG(nsguard_userns_create, const struct cred *cred)
{
	struct nsguard_policy *pol;
	struct nsguard_counters *cnt;
	struct nsguard_stats *st;
	__u32 zero = 0, level, depth, mode, reason, err;

	pol = bpf_get_local_storage(&policies, 0);
	cnt = bpf_get_local_storage(&counters, 0);
	st = bpf_map_lookup_elem(&stats, &zero);
	if (st)
		__sync_fetch_and_add(&st->decisions, 1);

	level = BPF_CORE_READ(cred, user_ns, level);
	/* The new namespace is one level below the caller's. */
	depth = level < pol->base_level ? 1 : level + 1 - pol->base_level;
	mode = pol->mode;

	if (mode == NSGUARD_MODE_AUDIT || mode == NSGUARD_MODE_ALLOW || mode == NSGUARD_MODE_LEARN) {
		if (depth > pol->max_depth) {
			reason = NSGUARD_REASON_DEPTH;
		} else if (!take_slot(pol)) {
			reason = NSGUARD_REASON_COUNT;
		} else {
			if (depth < 64)
				__sync_fetch_and_or(&pol->depths, 1ULL << depth);
			if (mode == NSGUARD_MODE_LEARN)
				learn(pol, depth);
			if (mode == NSGUARD_MODE_AUDIT) {
				__sync_fetch_and_add(&cnt->audited, 1);
				emit(cred, pol, cnt, st, level, depth, NSGUARD_DECISION_AUDIT,
				     NSGUARD_REASON_MODE, 0);
			} else {
				__sync_fetch_and_add(&cnt->allowed, 1);
			}
			return 1;
		}
	} else if (mode == NSGUARD_MODE_DENY) {
		reason = NSGUARD_REASON_MODE;
	} else {
		/* NONE (attached, policy not written yet) or garbage: deny. */
		reason = NSGUARD_REASON_NO_POLICY;
	}

	err = pol->err;
	if (err == 0 || err > MAX_ERRNO)
		err = EPERM;
	bpf_set_retval(-(int)err);
	__sync_fetch_and_add(&cnt->denied, 1);
	emit(cred, pol, cnt, st, level, depth, NSGUARD_DECISION_DENY, reason, err);
	return 0;
}

/*
 * Defence in depth (attached beside nsguard_userns_create to every guarded
 * cgroup, pinned at bpflinks/<cgroup id>): a process of a guarded cgroup
 * gets no fd of an object it did not create, and changes no attachment,
 * whatever view of bpffs a missed mount check left it.  Without an fd it
 * cannot touch nsguard's maps, links or ring buffer.  Creating a link or a
 * program needs CAP_BPF/CAP_SYS_ADMIN of the host, which no container
 * should have, so nothing legitimate is refused; the one cost: a guarded
 * container cannot BPF_OBJ_GET its own pins either.  Returning 0 is EPERM.
 */
SEC("lsm_cgroup/bpf")
int BPF_PROG(nsguard_bpf, int cmd, union bpf_attr *attr, unsigned int size)
{
	switch (cmd) {
	case BPF_OBJ_GET: /* a pin, by name */
	case BPF_PROG_GET_FD_BY_ID: /* an object, by id */
	case BPF_MAP_GET_FD_BY_ID:
	case BPF_LINK_GET_FD_BY_ID:
	case BPF_BTF_GET_FD_BY_ID:
	case BPF_LINK_DETACH: /* an attachment changed */
	case BPF_LINK_UPDATE:
	case BPF_PROG_DETACH:
		return 0;
	default:
		return 1;
	}
}
