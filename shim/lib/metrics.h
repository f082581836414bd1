/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nsguard status --format prometheus: the Prometheus text exposition format
 * (version 0.0.4).  No bpf() here: status reads the counters and passes
 * them in, so the host tests check the text.
 */
#ifndef NSGUARD_METRICS_H
#define NSGUARD_METRICS_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>
#include "../../bpf/nsguard.h"
#include "identity.h"
#include "outcomes.h"

struct metrics_container {
	const char *id;
	const struct pod_identity *identity;
	const char *mode; /* the live policy's */
	bool attached; /* its links are attached: it is guarded */
	bool detached; /* pinned, but a link was detached: not guarded */
	struct nsguard_counters cnt;
};

struct metrics {
	/* nsguard_build_info's labels: this binary's. */
	const char *version, *commit, *abi;
	/* The pinned program is another build's (the next hook upgrades it). */
	bool other_build;
	/* The hooks' outcomes so far (outcomes.h), NULL for none. */
	const unsigned long long (*outcomes)[HOOK_REASON_COUNT];
	bool loaded;
	struct nsguard_stats stats; /* all zero when not loaded */
	const struct metrics_container *c;
	size_t n;
};

/* v as a label value: backslash, double quote and newline escaped. */
void metrics_label_value(FILE *out, const char *v);
/* Every metric family, HELP and TYPE first; -EIO when out fails. */
int metrics_write(FILE *out, const struct metrics *m);

#endif
