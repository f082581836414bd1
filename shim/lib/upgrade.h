/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Moving the guarded cgroups to this build's program (upgrade.c): the core
 * of `nsguard upgrade`, also run by a hook that finds another build's pins.
 */
#ifndef NSGUARD_UPGRADE_H
#define NSGUARD_UPGRADE_H

#include <stdbool.h>
#include <stddef.h>

struct upgrade_result {
	bool nothing_loaded; /* no program pinned: nothing done */
	bool current; /* the pins are this build's: nothing done */
	size_t moved; /* guarded cgroups now on this build's program */
	size_t denied; /* of them, links without a record, kept with deny */
	size_t relinked; /* of them, the ones whose old link had been detached */
	char why[256]; /* why the pins were not this build's */
};

/*
 * With guard_lock held: build this build's set beside the pinned one (a
 * link per guarded cgroup, its policy and usage from the record), exchange
 * the two in one rename and remove the old.  No cgroup is unguarded at any
 * point; on an error nothing changed and the old program still guards.
 */
int guard_upgrade_locked(struct upgrade_result *res);

#endif
