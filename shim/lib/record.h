/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Per-container records under /run/nsguard/containers/<id>.json. */
#ifndef NSGUARD_RECORD_H
#define NSGUARD_RECORD_H

#include <stdbool.h>
#include <time.h>
#include <linux/types.h>
#include "../../bpf/nsguard.h"
#include "identity.h"

struct nsguard_record {
	char *id;
	char *cgroup_path; /* relative to the cgroup2 root, starting with '/' */
	__u64 cgroup_id;
	char *link_pin; /* bpffs path of the pinned link */
	__u32 pid; /* the container's init when guarded by the hook; 0 if unknown */
	__u64 start_time; /* its start time (clock ticks since boot): pid reuse */
	bool shared; /* shared-cgroups = allow: other processes may stay after it */
	char *learn_dir; /* learn mode: where its suggestion goes (admin config) */
	struct nsguard_policy policy;
	struct pod_identity identity; /* "pod", "namespace", "container": labels only */
};

/* Write dir/<id>.json atomically (temp file, fsync, rename); creates dir. */
int record_write(const char *dir, const struct nsguard_record *rec);
/* -ENOENT if there is no record for id. */
int record_read(const char *dir, const char *id, struct nsguard_record *rec);
/* The record of the cgroup through the index (record.c): one open.  -ENOENT,
 * no message, when the index has no entry that is id's record now. */
int record_read_cgroup(const char *dir, __u64 cgroup_id, struct nsguard_record *rec);
/* Remove the record of id (success when there is none) and its index entry
 * for cgroup_id unless that names another record. */
int record_remove(const char *dir, const char *id, __u64 cgroup_id);
/* A record rewritten for another cgroup: drop the old cgroup's entry. */
/*
 * record_remove, but the record moves to DIR/../gone/<cgroup id>.json, so
 * that an event read after the container is gone still names it (monitor);
 * the sweep removes it NSGUARD_GONE_KEEP_SECS later (gc).  Falls back to
 * removing it outright.
 */
int record_retire(const char *dir, const char *id, __u64 cgroup_id);
/*
 * Whether a retire also trims the retired records (reads the whole
 * directory): one in 64 at random (getrandom), so that a poststop costs the
 * same however many containers stopped lately.  Between two trims the
 * count passes NSGUARD_GONE_MAX by 64 on average; by 1000 with a chance
 * below 1e-6.
 */
bool record_gone_trim_due(void);
/* The retired record of cgroup_id: 0, or -errno (no message). */
int record_read_gone(const char *dir, __u64 cgroup_id, struct nsguard_record *rec);
/* Remove the retired records older than keep_secs. */
int record_gone_sweep(const char *dir, time_t keep_secs);
/*
 * How long a retired record names late events: ten minutes; and how many
 * are kept at most (the oldest go first), so a loop of short-lived
 * containers cannot fill /run: at ~5 KiB each, 20 MiB.
 */
#define NSGUARD_GONE_KEEP_SECS 600
#define NSGUARD_GONE_MAX 4096

void record_index_forget(const char *dir, __u64 cgroup_id);
/* gc: give rec an index entry if it lacks one (0 or -errno, no message);
 * remove the entries whose record is gone (the number removed, or -errno). */
int record_index_repair(const char *dir, const struct nsguard_record *rec);
int record_index_sweep(const char *dir);
/* Call fn for each record, sorted by id; stops at the first negative return.
 * A missing dir means no records. */
int record_foreach(const char *dir, int (*fn)(const struct nsguard_record *rec, void *data),
		   void *data);
/* Find the record of a cgroup id, or the first (by id) naming a cgroup path,
 * by reading every record; -ENOENT with a message if none. */
int record_find_cgroup(const char *dir, __u64 cgroup_id, struct nsguard_record *rec);
int record_find_path(const char *dir, const char *cgroup_path, struct nsguard_record *rec);
void record_free(struct nsguard_record *rec);

#endif
