/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pid -> cgroup v2 path -> cgroup id. */
#ifndef NSGUARD_CGROUP_H
#define NSGUARD_CGROUP_H

#include <stdbool.h>
#include <linux/types.h>
#include <sys/types.h>

#define CGROUP_ROOT "/sys/fs/cgroup"

/*
 * Read <proc_root>/<pid>/cgroup and return the cgroup v2 path ("0::/a/b").
 * -ESRCH: the process does not exist or has exited (zombie);
 * -EOPNOTSUPP: only cgroup v1 hierarchies listed;
 * -EPERM: the process sits in the root cgroup, which nsguard never guards.
 * proc_root is "/proc" except in tests.
 */
int cgroup_path_of_pid(const char *proc_root, pid_t pid, char **path_out);
/*
 * Join cgroup_root and a cgroup path; check it is on cgroup2 (-EOPNOTSUPP
 * otherwise), not the root (-EPERM), and return its id (inode number).
 * -ENOENT when the cgroup is gone.
 */
int cgroup_id_of_path(const char *cgroup_root, const char *path, __u64 *id_out);
/*
 * Open the cgroup directory (O_RDONLY|O_DIRECTORY|O_CLOEXEC), with the checks
 * of cgroup_id_of_path; *id_out (may be NULL) is the id of what was opened.
 */
int cgroup_open(const char *cgroup_root, const char *path, __u64 *id_out);

/*
 * A policy attached to a cgroup restricts every process in it and below it.
 * Refuse one that holds any process but pid (the container's init, at
 * createRuntime/prestart the only one it has): -EBUSY naming the cgroup and
 * the other process (or the child).  init_path is path or a cgroup below it;
 * each level from path down to it may list only pid in cgroup.procs, and
 * only the child on the way to init_path may say "populated 1" in its
 * cgroup.events.  cgroup_check_sole_at checks one level of an open directory
 * (tests give it a tree of plain files), skipping the child named through
 * (NULL at init's own level); name is for messages.  With fd_out, a pass
 * leaves path's directory open there and its cgroup id in *id_out: the
 * cgroup checked is the one attached to, and no second open.
 */
int cgroup_check_sole(const char *cgroup_root, const char *path, const char *init_path, pid_t pid,
		      const char *proc_root, int *fd_out, __u64 *id_out);
int cgroup_check_sole_at(int dirfd, const char *name, pid_t pid, const char *proc_root,
			 const char *through);

/*
 * From <proc_root>/<pid>/stat: the state (field 3) and the start time in clock
 * ticks since boot (field 22).  -ESRCH when the process is gone, -EINVAL on a
 * format that does not parse, other -errno from open/read; no message.
 */
int proc_stat_read(const char *proc_root, pid_t pid, char *state, __u64 *start);

/* The start time of /proc/PID/stat, as proc_stat_read, once per hook for the init
 * (the pid cgroup_path_of_pid found alive). */
int proc_start_time(pid_t pid, __u64 *start);

/* Forget the cached stat of the cgroup root and the init's start time: a process
 * that outlives one hook calls it. */
void cgroup_root_forget(void);

/*
 * The container's init as a pidfd: a pid read through it names the same
 * process for as long as pidfd_alive() says so, whatever exits meanwhile.
 * pidfd_open_pid: an fd, or -errno (-ESRCH: no such pid), no message.
 * pidfd_pid: the pid fd names in this pid namespace; -EBADF when fd is no
 * pidfd, -ESRCH when its process has exited.  pidfd_alive: 0 while its
 * process exists (a zombie too: its pid is not reused before it is reaped),
 * -ESRCH once reaped, another -errno when it cannot tell.
 */
int pidfd_open_pid(pid_t pid);
int pidfd_pid(int fd, pid_t *pid_out);
int pidfd_alive(int fd);
/*
 * Whether a cgroup with this id exists (cgroupfs file handles are cgroup
 * ids); true when it cannot tell, so that callers keep what they have.
 */
bool cgroup_id_alive(const char *cgroup_root, __u64 id);
/* Open the cgroup with this id wherever it is now; -ENOENT when it is gone. */
int cgroup_open_id(const char *cgroup_root, __u64 id);
/*
 * fn(id, data) for every cgroup strictly below path, depth first, until fn
 * returns nonzero (returned).  Cgroups removed meanwhile are skipped.  More
 * than CGROUP_WALK_MAX of them is -E2BIG: the walk runs under nsguard's lock,
 * and a container with a delegated subtree chooses how many there are.
 */
#define CGROUP_WALK_MAX 4096
int cgroup_walk_below(const char *cgroup_root, const char *path,
		      int (*fn)(__u64 id, void *data), void *data);
/* "populated 1" in path's cgroup.events: processes in it or below. */
int cgroup_populated(const char *cgroup_root, const char *path, bool *populated);

#endif
