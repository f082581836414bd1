/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One error idiom: a failing function records its message with nsg_fail()
 * and returns -errno; callers pass the negative value up unchanged, and the
 * single exit path in main() prints "nsguard: <message>" once.
 */
#ifndef NSGUARD_LOG_H
#define NSGUARD_LOG_H

#include <stdbool.h>

/* The longest message, terminator included. */
#define NSG_MSG_MAX 4096

/* Record the error message (printf format) and return -errnum (errnum > 0). */
int nsg_fail(int errnum, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prefix the recorded message with more context ("attach /x: <old>"). */
int nsg_fail_context(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *nsg_last_error(void);
void nsg_clear_error(void);

/* Immediate messages on stderr, prefixed "nsguard: ". */
void nsg_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void nsg_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void nsg_info(const char *fmt, ...) __attribute__((format(printf, 1, 2))); /* -v only */
void nsg_set_verbose(int level);
int nsg_verbose(void);

/*
 * Also write errors and warnings to the kernel log at PATH (/dev/kmsg) when
 * stderr is closed or /dev/null, as crun makes it for hooks unless the
 * run.oci.hooks.stderr annotation is set: a refused container must be
 * explained somewhere (dmesg, journalctl -k).  NULL turns it off.
 */
void nsg_log_kmsg_fallback(const char *path);

/*
 * Also send errors and warnings to the system log: a datagram in syslog(3)'s
 * format ("<PRI>Mmm dd hh:mm:ss nsguard[PID]: MSG", facility daemon) to the
 * socket at PATH (/dev/log), whatever stderr is, so that a hook's refusal is
 * on record whatever the runtime does with its stderr.  Never blocks: a
 * missing socket or a full queue drops the record.  NULL turns it off.
 */
void nsg_log_syslog(const char *path);

/*
 * The agent runs a hook's work for it: while c is set, errors, warnings
 * and info lines are appended to c->buf ("<level digit><message>\n", at
 * most NSG_CAPTURE_MAX bytes, then c->truncated, and a note of the cut
 * when the capture ends) instead of stderr and the
 * kernel log, which are the hook's to write (nsg_log_relay); the system log
 * still gets them here.  NULL stops.
 */
#define NSG_CAPTURE_MAX 16384
#define NSG_CAPTURE_NOTE 128 /* kept for the note that lines were left out */
struct nsg_capture {
	char *buf; /* malloc'd; the caller frees it */
	size_t len, cap;
	bool truncated;
};
void nsg_log_capture(struct nsg_capture *c);
/* A captured line, written as the hook writes its own: stderr, kernel log fallback. */
void nsg_log_relay(int level, const char *msg);

#endif
