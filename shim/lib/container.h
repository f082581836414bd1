/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Guarding one container: the step the hook, attach, detach and gc share.
 * Every change to pins and records happens under env->lock().
 *
 * The module itself only reads and writes records; everything else it does
 * goes through a struct container_env: bpf() (guard.c), cgroupfs and /proc.
 * The commands pass container_env_live (container_live.c); the host unit
 * tests pass a fake world (shim/tests/test_container.c).
 */
#ifndef NSGUARD_CONTAINER_H
#define NSGUARD_CONTAINER_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include <linux/types.h>
#include "../../bpf/nsguard.h"
#include "identity.h"

struct container_env {
	const char *record_dir; /* NSGUARD_RECORD_DIR */
	/* guard_lock(): *fd_out holds the lock until closed (may stay -1). */
	int (*lock)(int *fd_out);
	/* cgroup_open() under CGROUP_ROOT: an fd, *id_out its cgroup id. */
	int (*cgroup_open)(const char *path, __u64 *id_out);
	/* cgroup_id_of_path(): -ENOENT when no cgroup has that path now. */
	int (*cgroup_id)(const char *path, __u64 *id_out);
	/* cgroup_id_alive(): true when it cannot tell. */
	bool (*cgroup_alive)(__u64 id);
	int (*cgroup_populated)(const char *path, bool *populated);
	/* The start time of pid (proc_stat_read): -ESRCH when it is gone, no message. */
	int (*start_time)(pid_t pid, __u64 *start);
	/* A link is pinned for the cgroup (a claim, attached or not). */
	bool (*link_pinned)(__u64 cgroup_id);
	/* guard_link_state(): GUARD_LINK_* (guard.h's numbers) or -errno with a message. */
	int (*link_state)(__u64 cgroup_id);
	/* cgroup_open_id() under CGROUP_ROOT: an fd, -ENOENT when it is gone. */
	int (*cgroup_open_id)(__u64 id);
	/* Load or reuse the program, attach it to the cgroup and write pol. */
	int (*attach)(int cgroup_fd, __u64 cgroup_id, const struct nsguard_policy *pol,
		      char **link_pin_out);
	/* Learn mode: what the cgroup has used (the program keeps it). */
	int (*read_learned)(__u64 cgroup_id, struct nsguard_usage *u);
	/* Unpin the link (and forget its learned usage): success if none. */
	int (*detach)(__u64 cgroup_id);
	/* The cgroup ids with a pinned link (*ids malloc'd). */
	int (*links)(__u64 **ids, size_t *n);
	/* cgroup_walk_below(): fn(id) for every cgroup below path, until one fails. */
	int (*cgroups_below)(const char *path, int (*fn)(__u64 id, void *data), void *data);
};

/* The real world; _hook moves another build's pins to this build's program. */
extern const struct container_env container_env_live;
extern const struct container_env container_env_hook;

/* What the hook or nsguard attach guards. */
struct container_spec {
	const char *id;
	pid_t pid; /* the container's init; 0: nsguard attach */
	const char *cgroup_path; /* relative to the cgroup2 root, starting with '/' */
	bool shared; /* the admin allows other processes there (shared-cgroups) */
	const char *learn_dir; /* learn mode: where the suggestion goes at the end */
	const struct pod_identity *identity; /* pod, namespace, container; may be NULL */
	/* The hook's open directory of cgroup_path and its id, from its checks
	 * (cgroup_check_sole); borrowed.  false: container_guard opens it. */
	bool have_cgroup_fd;
	int cgroup_fd;
	__u64 cgroup_id;
};

/*
 * Guard spec->cgroup_path for container spec->id, whose init is spec->pid (0:
 * none, nsguard attach): refuse a cgroup
 * guarded for another id, and an id still guarding another live cgroup (-EBUSY);
 * for a container (pid > 0) also a cgroup above another id's live guarded
 * cgroup, whose processes would get this policy too, or below another
 * container's (nsguard attach may nest: that is the admin's choice);
 * load or reuse the program, attach, write the policy and the record.  The
 * same id on a cgroup that is gone (a re-created container) moves the guard.
 * *claim_refused says the refusal came from the id or the cgroup path, which
 * the container's creator chose, or from a lock held past its bound, which
 * another container may have caused, or from an LSM refusing bpf() (-EPERM:
 * nsguard's bpf() guard, to a hook in a guarded cgroup): never opened by
 * fail-mode open.
 */
int container_guard(const struct container_env *env, const struct container_spec *spec,
		    struct nsguard_policy *pol, bool *claim_refused);

/*
 * Detach and forget the container of record id; -ENOENT if unknown.  Unless
 * force, only once the guarded instance is over: -EBUSY, with a message and
 * nothing changed, while its init (recorded pid and start time) still runs
 * or cannot be checked, or while its cgroup still holds processes (unless
 * recorded as shared).  A learn-mode container's suggestion is written
 * first (learn.h); unless force, a failure there keeps the guard.
 */
int container_unguard(const struct container_env *env, const char *id, bool force);

/*
 * nsguard detach --cgroup: detach whatever guards cgroup_path, by force.
 * The record of its cgroup id, else (the cgroup is gone) the record that
 * names the path, else a link without a record (a failed attach).  *id_out
 * is the record's id (malloc'd), NULL for a bare link.  -ENOENT with a
 * message when nothing guards it.
 */
int container_unguard_cgroup(const struct container_env *env, const char *cgroup_path,
			     char **id_out);

/*
 * What gc removed: a container's record and link, or a bare link (id NULL);
 * or, relinked, what it attached anew because its link had been detached.
 */
struct gc_removal {
	const char *id; /* the record's id; NULL for a link without a record */
	const char *cgroup_path; /* NULL for a bare link */
	__u64 cgroup_id;
	const char *why; /* "gone", "re-created", "no record, cgroup gone", "link detached" */
	bool relinked; /* not removed: attached anew */
};

/*
 * nsguard gc: forget the containers whose cgroup is gone or re-created (a
 * new id at the recorded path), and unpin links that have neither a record
 * nor a live cgroup.  A live cgroup whose pinned link was detached (not by
 * nsguard: it is unguarded) is attached anew, with its record's policy (a
 * bare link's: deny), and reported as relinked.  removed(r, data) for each.
 * Entries that cannot be removed or re-linked are warned about and make it
 * fail at the end.
 */
int container_gc(const struct container_env *env,
		 void (*removed)(const struct gc_removal *r, void *data), void *data);
/* A removed() for container_gc: one line to the FILE * data. */
void container_gc_print(const struct gc_removal *r, void *out);

#endif
