/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Level of a process's user namespace, as the BPF program sees it. */
#ifndef NSGUARD_USERNS_H
#define NSGUARD_USERNS_H

#include <linux/types.h>
#include <sys/types.h>

/*
 * Open <proc_root>/<pid>/ns/user and count NS_GET_PARENT steps until the
 * kernel answers EPERM (the caller's own user namespace, which for the hook
 * is the initial one).  The result is the level relative to the caller.
 * -EINVAL: pid <= 0; -ESRCH: no such process; -ELOOP: deeper than the kernel
 * allows (cannot happen).  proc_root is "/proc" except in tests.
 */
int userns_level_of_pid(const char *proc_root, pid_t pid, __u32 *level);

#endif
