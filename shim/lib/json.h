/* SPDX-License-Identifier: GPL-2.0-or-later */
/* JSON helpers shared by the records and the --json outputs (jv.h). */
#ifndef NSGUARD_JSON_H
#define NSGUARD_JSON_H

#include <stdbool.h>
#include <linux/types.h>
#include "jv.h"

/*
 * Add v to obj as a decimal string: a JSON number is a double, which rounds
 * 64-bit ids and counters above 2^53.  Returns the new item, NULL when out
 * of memory.
 */
struct jv *json_add_u64(struct jv *obj, const char *key, __u64 v);

/* Add v to obj as a string, or null when v is NULL; NULL when out of memory. */
struct jv *json_add_string_or_null(struct jv *obj, const char *key, const char *v);

/*
 * Add each policy field under its json key (policy_fields[]): names for the
 * fields that have them (mode, errno, max-count), numbers otherwise.
 * Returns false when out of memory.
 */
struct nsguard_policy;
bool json_add_policy(struct jv *obj, const struct nsguard_policy *pol);

/* Print doc on one line to stdout; 0 or -ENOMEM with a message. */
int json_print(const struct jv *doc);

#endif
