/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Learn mode: what a container did (the usage the program kept in the
 * learned map) -> the tightest annotations that would have allowed exactly that,
 * as JSON in the admin's learn-dir/<id>.json:
 *   {"id":"ci","created":6,"deepest":2,"annotations":{
 *     "nsguard.io/userns":"allow","nsguard.io/userns.max-depth":"2",
 *     "nsguard.io/userns.max-count":"6"}}
 * (deny when it created none).  Pure file I/O: no bpf().
 */
#ifndef NSGUARD_LEARN_H
#define NSGUARD_LEARN_H

#include <linux/types.h>
#include "../bpf/nsguard.h"

/* The suggestion for id from its usage; *text malloc'd, one line. */
int learn_suggest(const char *id, const struct nsguard_usage *used, char **text);
/* Write it to dir/<id>.json atomically (dir is created, 0755). */
int learn_write(const char *dir, const char *id, const struct nsguard_usage *used);
/* Read dir/<id>.json; -ENOENT with a message when there is none. */
int learn_read(const char *dir, const char *id, char **text);

#endif
