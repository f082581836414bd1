/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Reading whole files under a size bound, creating directory chains. */
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

#endif
