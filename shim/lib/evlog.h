/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The events for many readers (evlog.c).  The BPF ring buffer has one
 * consumer position, so two readers would take events from each other.  One
 * `nsguard monitor` at a time is the collector (it holds EVLOG_LOCK): it
 * reads the ring buffer, names each event, and appends it as one JSON line
 * with a sequence number to EVLOG_PATH; every other monitor follows that
 * file from its end, so each sees every event, whatever its filters.  A
 * follower that stalls blocks nobody: the file rotates at EVLOG_MAX (one old
 * file kept), and a follower that falls more than that behind is told how
 * many it lost (a gap in the sequence).  When the collector exits, a
 * follower takes the lock over; events meanwhile wait in the ring buffer.
 * The collector is a reader too: one that is stopped (Ctrl-Z) or writes to
 * a full pipe holds the events back in the ring buffer until it goes on or
 * exits.  So let nsguard-monitor.service, started first, be the collector.
 */
#ifndef NSGUARD_EVLOG_H
#define NSGUARD_EVLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#include "../../bpf/nsguard.h"
#include "jv.h"

#define EVLOG_DIR NSGUARD_RUN_DIR "/events"
#define EVLOG_PATH EVLOG_DIR "/log"
#define EVLOG_OLD EVLOG_DIR "/log.1"
#define EVLOG_LOCK EVLOG_DIR "/collector.lock"
#define EVLOG_MAX (4u << 20)

struct evlog {
	const char *dir, *path, *old, *lock; /* the EVLOG_* paths; tests use others */
	size_t max; /* EVLOG_MAX */
	int lock_fd; /* held while collecting */
	int fd; /* the log being written or followed */
	ino_t ino; /* its inode */
	unsigned long long seq; /* last written, or last read */
	char *buf; /* a follower's partial line */
	size_t len, cap;
};

#define EVLOG_INIT                                                                      \
	{                                                                               \
		.dir = EVLOG_DIR, .path = EVLOG_PATH, .old = EVLOG_OLD, .lock = EVLOG_LOCK, \
		.max = EVLOG_MAX, .lock_fd = -1, .fd = -1                               \
	}

/* Take the collector's lock without waiting: 1 taken, 0 another holds it. */
int evlog_try_collect(struct evlog *l);
/*
 * A collector touches its log at least once a second (its mtime), events
 * or not: so a follower can tell a collector from a process that merely
 * holds EVLOG_LOCK (anything that can open it can), which keeps every
 * monitor from collecting while the ring buffer fills.
 */
void evlog_heartbeat(struct evlog *l);
/*
 * For a follower whose evlog_try_collect found the lock held: whether the
 * log has gone untouched for secs (no live collector), and then who holds
 * the lock (lockfile_holders' words) in who.
 */
bool evlog_collector_idle(const struct evlog *l, time_t secs, char *who, size_t len);
/* How long a follower waits for a collector's sign of life before it says so. */
#define EVLOG_IDLE_SECS 10
/* Append o (a "seq" member added) as one line; rotate past max. */
int evlog_append(struct evlog *l, struct jv *o);
/* Follow the log from its end (from its start when start is true). */
int evlog_follow_open(struct evlog *l, bool start);
/*
 * The complete lines written since the last call, to fn (parsed; NULL for
 * a line that is no JSON), with *lost the events skipped before each (a
 * gap in "seq": the follower fell behind a rotation).  Stops at fn's
 * non-zero return.
 */
int evlog_follow_read(struct evlog *l, int (*fn)(struct jv *o, unsigned long long lost, void *data),
		      void *data);
void evlog_close(struct evlog *l);

#endif
