/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The hook and the resident agent (nsguard agent): one request, one answer
 * on a unix stream socket, root only.
 *
 *   hook                                   agent
 *   connect, send request + pidfds ──►     accept, read it, check the peer
 *                                   ◄──    'A' (will serve) or 'N' (will not)
 *   'G' (waits for the verdict)     ──►
 *                                   ◄──    reply: exit status, the lines to print
 *
 * The request is a header, the --config path and the raw OCI state; a
 * pidfd of the hook itself rides on it (SCM_RIGHTS), and for an attach the
 * init's after it.  The agent serves only a peer that is the process that
 * connected and wrote the request (SO_PEERPIDFD where the kernel has it,
 * SCM_CREDENTIALS, the hook's pidfd: alive around every read of its
 * /proc/PID), runs the very binary it runs, with its root directory, in
 * its own mount, pid, cgroup and user namespaces, holds a hook's
 * capabilities, and names a --config only root can change: anything else
 * answers 'N' and the hook does the work itself.
 * So does a hook whose agent does not answer in time, closes the
 * connection, or is not there: the agent is an accelerator, never a way to
 * start a container less guarded.
 */
#ifndef NSGUARD_AGENT_H
#define NSGUARD_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>
#include "../../bpf/nsguard.h"

#define NSGUARD_AGENT_SOCKET NSGUARD_RUN_DIR "/agent.sock"
/* The hook's bounds: for the agent's first byte, then for its verdict. */
#define AGENT_ACK_MS 2000
#define AGENT_VERDICT_MS 30000
/* The agent's bound for reading one request: a slow peer stalls no one longer. */
#define AGENT_READ_MS 2000
/*
 * The agent's bound for serving one: past the lock's 20 s and below the
 * hook's 30 s, so that an agent stuck in a request dies (its hook then does
 * the work) rather than finish after its hook has given up on it.
 */
#define AGENT_SERVE_SECS 25

/* The hook's STAGE on the wire; agent_stage_name() of 0 is NULL. */
enum agent_stage {
	AGENT_STAGE_CREATE_RUNTIME = 1,
	AGENT_STAGE_POSTSTOP = 2,
	AGENT_STAGE_PRESTART = 3,
};
enum agent_stage agent_stage_of(const char *name);
const char *agent_stage_name(unsigned int stage);

/* What the agent answers when it will not serve: the hook does the work. */
#define AGENT_NOT_SERVED (-1)

struct agent_request {
	enum agent_stage stage;
	int verbose;
	const char *config; /* --config, or NULL */
	const char *state; /* the raw OCI state, as the runtime wrote it */
	size_t state_len;
	int self_pidfd; /* the hook's pidfd of itself */
	int pidfd; /* the init's pidfd (attach); -1 for poststop */
	pid_t writer; /* the agent's: who wrote every byte of it (SCM_CREDENTIALS) */
};

/*
 * The hook: ask the agent at socket_path.  0 with *status (an exit status,
 * or AGENT_NOT_SERVED) and *text (malloc'd, the lines to print: a level
 * digit, the message, a newline), or -errno when no agent answered in time
 * (no message): the caller then does the work itself.
 */
int agent_ask(const char *socket_path, const struct agent_request *req, int *status,
	      char **text, size_t *text_len);

/* Print the agent's lines as the hook prints its own (nsg_log_relay). */
void agent_relay(const char *text, size_t len);

/*
 * The agent: read one request from fd within AGENT_READ_MS.  req's strings
 * point into *buf (malloc'd, the caller frees it); req->self_pidfd and
 * req->pidfd are the received fds (the caller closes them) or -1;
 * req->writer is the pid the kernel names as the writer of every byte
 * (fd's listening socket has SO_PASSCRED: agent_listen_setup).  -errno with
 * a message; -EPROTONOSUPPORT for another version of the wire (an older or
 * newer hook binary: answer 'N').
 */
int agent_read_request(int fd, struct agent_request *req, char **buf);
/* The agent's listening socket: every byte a peer writes comes with its writer. */
int agent_listen_setup(int lfd);

/* The agent: send the first byte ('A' or 'N'), or the reply; never blocks. */
int agent_send_ack(int fd, bool serve);
/*
 * The agent: the hook's 'G' within AGENT_READ_MS, which commits the hook to
 * wait for the verdict; -errno (the hook gave up on the ack: it does the
 * work itself, and the agent must not).
 */
int agent_recv_go(int fd);
int agent_send_reply(int fd, int status, const char *text, size_t len);

/*
 * The agent: who connected on fd (SO_PEERCRED): 0 and *pid; -EPERM when
 * not root or not in this pid namespace (no answer at all), or -errno.
 */
int agent_peer_pid(int fd, pid_t *pid);
/*
 * The agent: may it serve pid, the peer on fd, which sent req?  0: yes;
 * 1: no, why says why (another process, binary, root, namespace or
 * capabilities); -errno when the kernel cannot say.  self is the agent's
 * own (agent_self), read once.
 */
struct agent_self {
	dev_t exe_dev, root_dev;
	ino_t exe_ino, root_ino;
	ino_t ns[4]; /* mnt, pid, cgroup, user */
};
int agent_self(struct agent_self *self);
/* Is this process still where agent_self() found it (root, namespaces)? */
bool agent_self_same(const struct agent_self *self);
int agent_peer_check(int fd, pid_t pid, const struct agent_self *self,
		     const struct agent_request *req, char *why, size_t why_len);
/*
 * The agent: may it read the --config a peer names?  0: yes; 1: no, why
 * says why (a symbolic link, a file or directory someone but root could
 * change, not a regular file, not there).
 */
int agent_config_check(const char *path, char *why, size_t why_len);
/*
 * What a hook needs in effect (cmd_require_privileges, the agent's check of
 * its peer): CAP_SYS_ADMIN, and CAP_BPF on a kernel that has it.
 */
__u64 hook_caps_needed(void);

#endif
