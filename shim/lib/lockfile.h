/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nsguard's lock files (lockfile.c): opened and created in one way, waited
 * for with a bound, and a timeout that names who holds the lock.
 *
 * flock() needs no write access: anything that can open a lock file, even
 * read-only, holds off every other taker (a read lock blocks a write lock).
 * So lock files are created mode 0000 (root opens them through
 * CAP_DAC_OVERRIDE; a host-uid-0 process without it, or a user namespace's
 * root that does not map host uid 0, cannot open them at all) in
 * directories of mode 0700; and no nsguard process waits for a lock
 * without a bound.  The main fix is elsewhere: a container that can see
 * /run/nsguard is refused (mounts.c).  This is the defence if that misses.
 */
#ifndef NSGUARD_LOCKFILE_H
#define NSGUARD_LOCKFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define LOCKFILE_MODE 0000 /* a lock file's mode: root through CAP_DAC_OVERRIDE only */
#define NSGUARD_DIR_MODE 0700 /* /run/nsguard and every directory under it */

/* The mode lockfile_open creates with: LOCKFILE_MODE; unit tests run as a
 * user without CAP_DAC_OVERRIDE set 0600 to open their files twice. */
extern mode_t lockfile_mode;

/*
 * Open path for flock (read-write, O_NOFOLLOW), creating it with
 * lockfile_mode; with mkdir, its directory (NSGUARD_DIR_MODE) on ENOENT
 * too.  The fd or -errno with a message.  A file this call creates has
 * lockfile_mode whatever the umask; an existing one keeps its mode (the
 * hook's syscalls count, #44: lockfile_tighten fixes older files).
 */
int lockfile_open(const char *path, bool mkdir);

/*
 * flock(fd, op) (LOCK_EX or LOCK_SH), trying for at most wait_ms (0: once):
 * 0, -ETIMEDOUT with one message "PATH has been held for N s by pid P
 * (COMM)...; WHAT", or another -errno with a message.  what says what to
 * do (or what was given up), e.g. "not attaching".
 */
int lockfile_wait(int fd, const char *path, int op, long wait_ms, const char *what);

/*
 * Who holds a lock on the file (dev, ino), in words: "pid 1234 (sleep)",
 * several joined by ", "; a locker that has exited (a flock stays with the
 * open file, which it may have handed on) is followed by the processes that
 * have the file open ("pid 7 (exited; the file is open in pid 9 (sleep))").
 * proc is the procfs to read ("/proc"; tests pass a fixture tree).  Never
 * fails: "an unknown process" when nothing can be named.
 */
void lockfile_holders(const char *proc, dev_t dev, ino_t ino, char *buf, size_t len);

/* One line of /proc/locks, parsed. */
struct lock_line {
	bool blocked; /* "->": waiting for the lock, not holding it */
	char kind[8]; /* FLOCK, POSIX, OFDLCK, LEASE, ... */
	bool write; /* WRITE (else READ, or UNLCK for a lease being broken) */
	pid_t pid; /* -1 for OFD locks; 0 when not in the reader's pid namespace */
	unsigned int major, minor; /* the device, printed as hex major:minor */
	unsigned long long ino;
};
/* Parse one line of /proc/locks: 0, or -EINVAL when it is not one. */
int lockfile_parse_line(const char *line, struct lock_line *out);

/*
 * Set the modes of nsguard's state under root (NSGUARD_RUN_DIR: "" for
 * the real one, a test's directory else): its directories NSGUARD_DIR_MODE,
 * its lock files LOCKFILE_MODE, those that exist and are root's (or the
 * caller's) and of the right type.  For state an older build made:
 * `nsguard load`, gc and upgrade call it, the hook does not (#44).  The
 * number of files changed, or -errno with a message (the first failure; the
 * rest are still done).
 */
int lockfile_tighten(const char *root);

#endif
