/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Whole files: read under a size bound, written atomically; directory chains. */
#ifndef NSGUARD_FILEIO_H
#define NSGUARD_FILEIO_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Read fd to its end into a NUL-terminated malloc'd buffer (*buf_out, length
 * *len_out without the NUL).  More than max bytes: -EFBIG, and no more than
 * max + 1 bytes are read, so an endless pipe cannot keep us.  Retries on
 * EINTR.  Records no message (0, -EFBIG, -ENOMEM or -errno): each caller
 * names what it was reading in its own words.
 */
int read_capped(int fd, size_t max, char **buf_out, size_t *len_out);

/* mkdir -p with mode for each directory created; records the message. */
int mkdir_p(const char *path, mode_t mode);

/* write(2) all of buf, retrying on EINTR and short writes; 0 or -errno. */
int write_all(int fd, const char *buf, size_t len);

/* fsync(2) a directory, so that a rename in it lasts (not on tmpfs); records the message. */
int fsync_dir(const char *dir);

/*
 * Replace dir/name with text and a newline, atomically: a temporary file in
 * dir (made with mkdir_p(dir, dir_mode) first), fsync, rename, fsync of the
 * directory, so a reader or a crash sees the old file or the new one, never
 * a part of one.  The file gets file_mode.  Records the message.
 */
int write_file_atomic(const char *dir, const char *name, const char *text, mode_t dir_mode,
		      mode_t file_mode);
/* The same with text exactly as it is (no newline added): a file put back byte for byte. */
int write_file_exact(const char *dir, const char *name, const char *text, mode_t dir_mode,
		     mode_t file_mode);

/*
 * path cleaned as the runtimes do (Go's filepath.Clean): no empty or "."
 * components, ".." taken back, no trailing '/'; NULL when out of memory.
 */
char *path_clean(const char *path);

#endif
