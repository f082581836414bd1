/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Learn mode: what a container did (the usage the program kept in the
 * learned map) -> the tightest annotations that would have allowed exactly that,
 * as JSON, one file per instance in the admin's learn-dir/<id>@<cgroup id>.json:
 *   {"id":"ci","cgroup_id":4211,"pid":812,"start_time":52311,"created":6,
 *    "deepest":2,"annotations":{"nsguard.io/userns":"allow",
 *    "nsguard.io/userns.max-depth":"2","nsguard.io/userns.max-count":"6"}}
 * (deny when it created none; pid and start_time only when the hook knew
 * the init).  A later container with the same id (another runtime root, a
 * rerun) gets a file of its own: the cgroup id, which the kernel gives
 * and no two live cgroups share, tells the instances apart, and '@' is not
 * a character of ids.  Pure file I/O: no bpf().
 */
#ifndef NSGUARD_LEARN_H
#define NSGUARD_LEARN_H

#include <time.h>
#include <linux/types.h>
#include "../../bpf/nsguard.h"
#include "record.h"

/* The suggestion for rec's container from its usage; *text malloc'd, one line. */
int learn_suggest(const struct nsguard_record *rec, const struct nsguard_usage *used,
		  char **text);
/* Write it to dir/<id>@<cgroup id>.json atomically (dir is created, 0755). */
int learn_write(const char *dir, const struct nsguard_record *rec,
		const struct nsguard_usage *used);

struct learn_found {
	char *name; /* its name in dir */
	__u64 cgroup_id; /* from the name; 0 for a <id>.json of an older nsguard */
	struct timespec mtime; /* when it was written */
	char *text; /* the file's bytes, once learn_load read them */
};
/*
 * The suggestion files of id in dir, newest first (by the time each was
 * written, then the higher cgroup id), their text not read yet; -ENOENT with
 * a message when there is none.
 */
int learn_list(const char *dir, const char *id, struct learn_found **out, size_t *n);
/* Read f's file (a regular file, never followed, at most 4 KiB) into f->text. */
int learn_load(const char *dir, struct learn_found *f);
void learn_found_free(struct learn_found *found, size_t n);
/* The newest one's text only. */
int learn_read(const char *dir, const char *id, char **text);

#endif
