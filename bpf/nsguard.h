/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Types and constants shared by nsguard.bpf.c and the nsguard program.
 * Plain __u32/__u64 only: this header is compiled by clang -target bpf
 * (after vmlinux.h) and by gcc for user space (after <linux/types.h>).
 */
#ifndef NSGUARD_H
#define NSGUARD_H

/* bpffs layout: everything outlives the hook process that created it. */
#define NSGUARD_PIN_DIR "/sys/fs/bpf/nsguard"
#define NSGUARD_PIN_PROG NSGUARD_PIN_DIR "/prog"
#define NSGUARD_PIN_POLICIES NSGUARD_PIN_DIR "/policies"
#define NSGUARD_PIN_COUNTERS NSGUARD_PIN_DIR "/counters"
#define NSGUARD_PIN_STATS NSGUARD_PIN_DIR "/stats"
#define NSGUARD_PIN_EVENTS NSGUARD_PIN_DIR "/events"
#define NSGUARD_PIN_LEARNED NSGUARD_PIN_DIR "/learned"
#define NSGUARD_PIN_LINKS NSGUARD_PIN_DIR "/links" /* links/<cgroup id> */
/* The bpf() guard (nsguard_bpf) and its link per guarded cgroup. */
#define NSGUARD_PIN_BPFGUARD NSGUARD_PIN_DIR "/bpfguard"
#define NSGUARD_PIN_BPFLINKS NSGUARD_PIN_DIR "/bpflinks" /* bpflinks/<cgroup id> */

/* Host-side state. */
#define NSGUARD_RUN_DIR "/run/nsguard"
#define NSGUARD_RECORD_DIR NSGUARD_RUN_DIR "/containers" /* <id>.json */
#define NSGUARD_LOCK_FILE NSGUARD_RUN_DIR "/lock"
#define NSGUARD_DEFAULT_CONFIG "/etc/nsguard/nsguard.conf"

/* The kernel refuses to nest user namespaces deeper than 32 levels. */
#define NSGUARD_MAX_DEPTH 32
#define NSGUARD_DEFAULT_ERRNO 1 /* EPERM */
/* max_count: at most this many (the kernel's max_user_namespaces defaults to
 * a few tens of thousands per user), or no limit at all. */
#define NSGUARD_MAX_COUNT 1000000
#define NSGUARD_COUNT_UNLIMITED 0xffffffffu
/* Learn-mode containers guarded at once (entries of the learned map). */
#define NSGUARD_LEARN_MAX 4096
#define NSGUARD_EVENTS_SIZE (256 * 1024)
/*
 * Per-container event bound: at most NSGUARD_EVENTS_PER_WINDOW events per
 * container in each NSGUARD_EVENT_WINDOW_NS; the rest are dropped and counted
 * (counters.events_dropped, stats.events_dropped).  The ring holds about 2,700
 * events, so one flooding container fills it only if nobody reads it for 40 s.
 */
#define NSGUARD_EVENTS_PER_WINDOW 64
#define NSGUARD_EVENT_WINDOW_NS 1000000000ULL
#define NSGUARD_COMM_LEN 16

enum nsguard_mode {
	NSGUARD_MODE_NONE = 0, /* no policy written yet: deny */
	NSGUARD_MODE_DENY = 1,
	NSGUARD_MODE_AUDIT = 2, /* allow up to max_depth, emit an event each time */
	NSGUARD_MODE_ALLOW = 3, /* allow up to max_depth silently */
	NSGUARD_MODE_LEARN = 4, /* allow, and suggest a policy at the end */
	NSGUARD_MODE_COUNT,
};

enum nsguard_decision {
	NSGUARD_DECISION_ALLOW = 0,
	NSGUARD_DECISION_DENY = 1,
	NSGUARD_DECISION_AUDIT = 2, /* allowed, and reported */
};

enum nsguard_reason {
	NSGUARD_REASON_MODE = 0, /* the mode decided (deny, allow, audit) */
	NSGUARD_REASON_NO_POLICY = 1, /* attached, policy not yet written */
	NSGUARD_REASON_DEPTH = 2, /* deeper than max_depth */
	NSGUARD_REASON_COUNT = 3, /* max_count user namespaces already created */
};

/*
 * Value of the policies map (BPF_MAP_TYPE_CGROUP_STORAGE, key: cgroup id).
 * It exists from the moment the program is attached to a cgroup and reads
 * all-zero (mode NONE, deny) until user space writes it.
 */
struct nsguard_policy {
#ifdef NSGUARD_ABI_NEXT
	/* Only in build/nsguard-next, the test stand-in for a newer layout. */
	__u64 next_field;
#endif
	__u32 mode; /* enum nsguard_mode */
	__u32 max_depth; /* nested levels allowed below base_level */
	__u32 base_level; /* level of the container's own user namespace */
	__u32 err; /* positive errno returned on deny; 0 means EPERM */
	__u64 cgroup_id; /* cgroup the policy is attached to */
	/*
	 * Event bound, kept by the program: user space writes zeros with every
	 * policy, which starts a fresh window.
	 */
	__u64 window_start_ns; /* bpf_ktime_get_ns() when the window began */
	__u32 window_events; /* events emitted in this window */
	__u32 max_count; /* user namespaces the cgroup may create in all, or
			  * NSGUARD_COUNT_UNLIMITED */
	/*
	 * Usage, kept by the program (one cgroup storage of each kind per
	 * program, so it lives here): user space writes zeros on a fresh
	 * attach and carries it over when it rewrites a policy.
	 */
	__u32 created; /* user namespaces allowed so far (the count limit) */
	__u32 pad;
	__u64 depths; /* bit d: a namespace at depth d was allowed (learn) */
};

/*
 * Value of the counters map (BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE, key: cgroup
 * id): exact per-container decision counts, summed over CPUs by user space.
 * Kept apart from the policy so that writing a policy never resets a count.
 */
struct nsguard_counters {
	__u64 allowed; /* allowed silently */
	__u64 denied;
	__u64 audited; /* allowed and reported (audit mode) */
	__u64 events_dropped; /* over the event bound, or the ring buffer full */
};

/*
 * Value of the learned map (BPF_MAP_TYPE_HASH, key: cgroup id, an entry per
 * learn-mode container, made and removed by user space): what the policy's
 * usage says, kept apart because cgroup storage goes with the cgroup, which
 * runtimes remove before poststop.
 */
struct nsguard_usage {
	__u32 created;
	__u32 pad;
	__u64 depths;
};

/* Value of the stats map (BPF_MAP_TYPE_PERCPU_ARRAY, one entry, key 0). */
struct nsguard_stats {
	__u64 events_dropped; /* all containers: over their bound, or ring full */
	__u64 decisions;
};

/* Ring buffer record, one per deny or audit decision. */
struct nsguard_event {
	__u64 ts_boot_ns; /* bpf_ktime_get_boot_ns() */
	__u64 cgroup_id; /* cgroup the deciding policy is attached to */
	__u64 task_cgroup_id; /* cgroup of the caller (may be a child) */
	__u32 pid; /* tgid, in the initial pid namespace */
	__u32 tid;
	__u32 uid; /* caller's uid and gid, as the initial user namespace sees them */
	__u32 gid;
	__u32 level; /* caller's user namespace level */
	__u32 depth; /* depth of the namespace being created, below base_level */
	__u32 decision; /* enum nsguard_decision */
	__u32 reason; /* enum nsguard_reason */
	__u32 mode; /* enum nsguard_mode of the deciding policy */
	__u32 err; /* positive errno returned, 0 if allowed */
	char comm[NSGUARD_COMM_LEN];
};

#endif /* NSGUARD_H */
