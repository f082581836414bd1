// SPDX-License-Identifier: GPL-2.0-or-later
/* The hook's request to the agent and its answer (agent.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "agent.h"
#include "cgroup.h"
#include "log.h"
#include "oci.h"
#include "util.h"

#ifndef CAP_BPF
#define CAP_BPF 39
#endif
/* Linux 6.5 (asm-generic/socket.h); older kernels say ENOPROTOOPT. */
#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

/*
 * Both ends are this binary (agent_peer_check): host order, no padding.
 * Version 2: the hook's own pidfd first, then the init's (attach only).
 */
static const char req_magic[8] = "nsgreq2";
static const char reply_magic[8] = "nsgrep2";
/* What every version's magic starts with: another version is answered 'N'. */
#define REQ_MAGIC_STEM "nsgreq"
/* The hook's pidfd, and the init's for an attach. */
#define REQ_FDS_MAX 2

struct wire_request {
	char magic[8];
	uint32_t stage, verbose, config_len, state_len;
};

struct wire_reply {
	char magic[8];
	int32_t status;
	uint32_t text_len;
};

static const char *const stage_names[] = {
	[AGENT_STAGE_CREATE_RUNTIME] = "createRuntime",
	[AGENT_STAGE_POSTSTOP] = "poststop",
	[AGENT_STAGE_PRESTART] = "prestart",
};

enum agent_stage agent_stage_of(const char *name)
{
	for (unsigned int i = 1; i < ARRAY_SIZE(stage_names); i++)
		if (strcmp(name, stage_names[i]) == 0)
			return (enum agent_stage)i;
	return 0;
}

const char *agent_stage_name(unsigned int stage)
{
	return stage > 0 && stage < ARRAY_SIZE(stage_names) ? stage_names[stage] : NULL;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait for events on fd until deadline: 0, -ETIMEDOUT, or -errno. */
static int wait_fd(int fd, short events, long long deadline)
{
	struct pollfd p = { .fd = fd, .events = events };
	long long left;
	int r;

	for (;;) {
		left = deadline - now_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		r = poll(&p, 1, left > INT_MAX ? INT_MAX : (int)left);
		if (r > 0)
			return 0;
		if (r == 0)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
	}
}

/* All of buf from a non-blocking fd by deadline; -EPIPE at end of file. */
static int recv_all(int fd, void *buf, size_t len, long long deadline)
{
	size_t got = 0;
	ssize_t n;
	int err;

	while (got < len) {
		n = recv(fd, (char *)buf + got, len - got, MSG_DONTWAIT);
		if (n > 0) {
			got += (size_t)n;
			continue;
		}
		if (n == 0)
			return -EPIPE;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			return -errno;
		err = wait_fd(fd, POLLIN, deadline);
		if (err)
			return err;
	}
	return 0;
}

static int send_all(int fd, const void *buf, size_t len, long long deadline)
{
	size_t sent = 0;
	ssize_t n;
	int err;

	while (sent < len) {
		n = send(fd, (const char *)buf + sent, len - sent, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n > 0) {
			sent += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN)
			return -errno;
		err = wait_fd(fd, POLLOUT, deadline);
		if (err)
			return err;
	}
	return 0;
}

/* The header with the pidfds on it (the hook's, then the init's), then the rest. */
static int send_request(int fd, const struct agent_request *req, long long deadline)
{
	size_t clen = req->config ? strlen(req->config) : 0;
	struct wire_request w = { .stage = req->stage, .verbose = (uint32_t)req->verbose,
				  .config_len = (uint32_t)clen,
				  .state_len = (uint32_t)req->state_len };
	union {
		char buf[CMSG_SPACE(sizeof(int) * REQ_FDS_MAX)];
		struct cmsghdr align;
	} u = { 0 };
	int fds[REQ_FDS_MAX] = { req->self_pidfd, req->pidfd };
	size_t nfds = req->pidfd >= 0 ? 2 : 1;
	struct iovec iov = { .iov_base = &w, .iov_len = sizeof(w) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			      .msg_controllen = CMSG_SPACE(sizeof(int) * nfds) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	ssize_t n;
	int err;

	memcpy(w.magic, req_magic, sizeof(w.magic));
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
	memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	do {
		n = sendmsg(fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	/* A fresh connection's buffer holds a header; anything else is no agent to wait for. */
	if (n < 0)
		return -errno;
	err = send_all(fd, (char *)&w + n, sizeof(w) - (size_t)n, deadline);
	if (!err && clen)
		err = send_all(fd, req->config, clen, deadline);
	if (!err)
		err = send_all(fd, req->state, req->state_len, deadline);
	return err;
}

/* server_check: who listens is not the agent, or (SERVER_OTHER_BINARY) runs another binary. */
enum { SERVER_NOT_AGENT = 1, SERVER_OTHER_BINARY };
static int server_check(int fd, char *why, size_t why_len);

int agent_ask(const char *socket_path, const struct agent_request *req, int *status,
	      char **text, size_t *text_len)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	cleanup_free char *buf = NULL;
	cleanup_close int fd = -1;
	struct wire_reply r;
	long long deadline;
	char ack, why[160];
	int err;

	*text = NULL;
	*text_len = 0;
	/* The agent serves no request without the hook's pidfd of itself. */
	if (req->self_pidfd < 0)
		return -EBADF;
	if (strlen(socket_path) >= sizeof(addr.sun_path))
		return -ENAMETOOLONG;
	if (req->state_len > OCI_STATE_MAX)
		return -EFBIG;
	strcpy(addr.sun_path, socket_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* Non-blocking: a full backlog (EAGAIN) is an agent too busy to wait for. */
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		return -errno;
	/* Nothing goes to a listener that is not nsguard's agent (nor its socket unit's init). */
	err = server_check(fd, why, sizeof(why));
	if (err == SERVER_OTHER_BINARY)
		return nsg_fail(ESTALE, "the agent at %s %s", socket_path, why);
	if (err > 0)
		return nsg_fail(EPERM, "%s is not nsguard's agent: %s", socket_path, why);
	if (err < 0)
		return err;
	deadline = now_ms() + AGENT_ACK_MS;
	err = send_request(fd, req, deadline);
	if (!err)
		err = recv_all(fd, &ack, 1, deadline);
	if (err)
		return err;
	if (ack == 'N') {
		*status = AGENT_NOT_SERVED;
		return 0;
	}
	if (ack != 'A')
		return -EPROTO;
	/* From here the hook waits for the verdict: the agent serves only after this. */
	err = send_all(fd, "G", 1, deadline);
	if (err)
		return err;
	err = recv_all(fd, &r, sizeof(r), now_ms() + AGENT_VERDICT_MS);
	if (err)
		return err;
	if (memcmp(r.magic, reply_magic, sizeof(r.magic)) != 0 || r.text_len > NSG_CAPTURE_MAX ||
	    r.status < 0 || r.status > 2)
		return -EPROTO;
	buf = malloc((size_t)r.text_len + 1);
	if (!buf)
		return -ENOMEM;
	err = recv_all(fd, buf, r.text_len, now_ms() + AGENT_ACK_MS);
	if (err)
		return err;
	buf[r.text_len] = '\0';
	*status = r.status;
	*text_len = r.text_len;
	*text = steal_pointer(&buf);
	return 0;
}

void agent_relay(const char *text, size_t len)
{
	const char *p = text, *end = text + len, *nl;
	char line[NSG_MSG_MAX];
	size_t n;

	for (; p < end; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		n = (size_t)(nl - p);
		if (n < 1)
			continue;
		n = n - 1 < sizeof(line) - 1 ? n - 1 : sizeof(line) - 1;
		memcpy(line, p + 1, n);
		line[n] = '\0';
		nsg_log_relay(*p >= '0' && *p <= '7' ? *p - '0' : 3, line);
	}
}

/*
 * Room for a writer's credentials and for more fds than a request has: a
 * request with more is refused, and MSG_CTRUNC says so beyond this.
 */
#define RECV_FDS_ROOM 8
union recv_cmsg {
	char buf[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(sizeof(int) * RECV_FDS_ROOM)];
	struct cmsghdr align;
};

/* What one read of a request brought besides its bytes. */
struct recv_extra {
	int fds[RECV_FDS_ROOM];
	size_t nfds;
	pid_t writer; /* 0: the kernel named none */
	bool other; /* a control message of another kind */
};

static void close_extra(struct recv_extra *x)
{
	for (size_t i = 0; i < x->nfds; i++)
		close(x->fds[i]);
	x->nfds = 0;
}

static void take_cmsgs(struct msghdr *msg, struct recv_extra *x)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
		    c->cmsg_len == CMSG_LEN(sizeof(struct ucred))) {
			struct ucred u;

			memcpy(&u, CMSG_DATA(c), sizeof(u));
			x->writer = u.pid > 0 ? u.pid : 0;
		} else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
			   c->cmsg_len >= CMSG_LEN(0)) {
			for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
				int fd;

				memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
				if (x->nfds < RECV_FDS_ROOM)
					x->fds[x->nfds++] = fd;
				else
					close(fd);
			}
		} else {
			x->other = true;
		}
	}
}

/*
 * len bytes of a request by deadline, each read with the kernel's word on
 * its writer (SCM_CREDENTIALS: the listening socket has SO_PASSCRED, the
 * accepted one inherits it, and a stream read never joins two writers'
 * bytes).  *writer is the first read's writer (0: none yet); a read naming
 * another, or none, is EPROTO.  fds: the first read's fds (room for
 * REQ_FDS_MAX, *nfds of them), or NULL when none may come.  A message.
 */
static int recv_part(int fd, void *buf, size_t len, int *fds, size_t *nfds, pid_t *writer,
		     long long deadline)
{
	bool first = true;
	size_t got = 0;
	int err;

	while (got < len) {
		union recv_cmsg u;
		struct recv_extra x = { .nfds = 0 };
		struct iovec iov = { .iov_base = (char *)buf + got, .iov_len = len - got };
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
				      .msg_controllen = sizeof(u.buf) };
		ssize_t n = recvmsg(fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			err = wait_fd(fd, POLLIN, deadline);
			if (err)
				return nsg_fail(-err, "reading a request: %s", strerror(-err));
			continue;
		}
		if (n < 0)
			return nsg_fail(errno, "reading a request: %s", strerror(errno));
		if (n == 0)
			return got || !first || *writer ?
				       nsg_fail(EPIPE, "reading a request: %s", strerror(EPIPE)) :
				       nsg_fail(EPIPE, "the peer closed the connection before its request");
		take_cmsgs(&msg, &x);
		if ((msg.msg_flags & MSG_CTRUNC) || x.other || x.nfds > (fds && first ? REQ_FDS_MAX : 0)) {
			close_extra(&x);
			return nsg_fail(EPROTO, "a request with more fds than it has, or fds where it has none");
		}
		if (!x.writer || (*writer && x.writer != *writer)) {
			close_extra(&x);
			return nsg_fail(EPROTO, "a request %s",
					x.writer ? "written by more than one process"
						 : "whose writer the kernel does not name (SO_PASSCRED)");
		}
		*writer = x.writer;
		if (fds && first) {
			memcpy(fds, x.fds, x.nfds * sizeof(int));
			*nfds = x.nfds;
		}
		first = false;
		got += (size_t)n;
	}
	return 0;
}

int agent_listen_setup(int lfd)
{
	int one = 1;

	if (setsockopt(lfd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0)
		return nsg_fail(errno, "setsockopt SO_PASSCRED: %s", strerror(errno));
	return 0;
}

int agent_read_request(int fd, struct agent_request *req, char **buf_out)
{
	long long deadline = now_ms() + AGENT_READ_MS;
	int fds[REQ_FDS_MAX] = { -1, -1 };
	cleanup_close int self_pidfd = -1, pidfd = -1;
	cleanup_free char *buf = NULL;
	struct wire_request w;
	size_t nfds = 0, want;
	pid_t writer = 0;
	int err;

	*buf_out = NULL;
	memset(req, 0, sizeof(*req));
	req->self_pidfd = req->pidfd = -1;
	err = recv_part(fd, &w, sizeof(w), fds, &nfds, &writer, deadline);
	self_pidfd = fds[0];
	pidfd = fds[1];
	if (err)
		return err;
	if (memcmp(w.magic, req_magic, sizeof(w.magic)) != 0) {
		if (memcmp(w.magic, REQ_MAGIC_STEM, strlen(REQ_MAGIC_STEM)) == 0)
			return nsg_fail(EPROTONOSUPPORT, "a request of another version of nsguard");
		return nsg_fail(EPROTO, "a request without nsguard's header");
	}
	if (!agent_stage_name(w.stage))
		return nsg_fail(EPROTO, "a request for stage %u", w.stage);
	/* The hook's pidfd always; the init's with an attach, and only with one. */
	want = w.stage == AGENT_STAGE_POSTSTOP ? 1 : 2;
	if (nfds != want)
		return nsg_fail(EPROTO, "a %s request %s",
				agent_stage_name(w.stage),
				nfds == 0    ? "without the hook's pidfd" :
				nfds < want ? "without the init's pidfd" :
					       "with a pidfd of an init");
	if (w.config_len >= PATH_MAX || w.state_len > OCI_STATE_MAX || w.verbose > 9)
		return nsg_fail(EPROTO, "a request over the bounds (config %u, state %u bytes)",
				w.config_len, w.state_len);
	buf = malloc((size_t)w.config_len + w.state_len + 2);
	if (!buf)
		return nsg_fail(ENOMEM, "out of memory");
	err = recv_part(fd, buf, w.config_len, NULL, NULL, &writer, deadline);
	if (!err)
		err = recv_part(fd, buf + w.config_len + 1, w.state_len, NULL, NULL, &writer,
				deadline);
	if (err)
		return err;
	buf[w.config_len] = '\0';
	buf[w.config_len + 1 + w.state_len] = '\0';
	if (strlen(buf) != w.config_len)
		return nsg_fail(EPROTO, "a request whose config path holds a NUL byte");
	req->stage = (enum agent_stage)w.stage;
	req->verbose = (int)w.verbose;
	req->config = w.config_len ? buf : NULL;
	req->state = buf + w.config_len + 1;
	req->state_len = w.state_len;
	req->writer = writer;
	req->self_pidfd = steal_fd(&self_pidfd);
	req->pidfd = steal_fd(&pidfd);
	*buf_out = steal_pointer(&buf);
	return 0;
}

int agent_send_ack(int fd, bool serve)
{
	char c = serve ? 'A' : 'N';

	return send_all(fd, &c, 1, now_ms() + AGENT_READ_MS);
}

int agent_recv_go(int fd)
{
	char go = 0;
	int err = recv_all(fd, &go, 1, now_ms() + AGENT_READ_MS);

	return err ? err : go == 'G' ? 0 : -EPROTO;
}

int agent_send_reply(int fd, int status, const char *text, size_t len)
{
	struct wire_reply r = { .status = status, .text_len = (uint32_t)len };
	long long deadline = now_ms() + AGENT_READ_MS;
	int err;

	if (len > NSG_CAPTURE_MAX)
		return -EINVAL;
	memcpy(r.magic, reply_magic, sizeof(r.magic));
	err = send_all(fd, &r, sizeof(r), deadline);
	if (!err && len)
		err = send_all(fd, text, len, deadline);
	return err;
}

/* The namespaces that make paths, /proc and cgroup paths mean the same. */
static const struct {
	const char *name, *why;
} ns_kinds[] = {
	{ "mnt", "another mount namespace" },
	{ "pid", "another pid namespace" },
	{ "cgroup", "another cgroup namespace" },
	{ "user", "another user namespace" },
};
_Static_assert(ARRAY_SIZE(ns_kinds) == ARRAY_SIZE(((struct agent_self *)0)->ns),
	       "one inode per namespace kind");

/* What /proc/PID (or self) shows of a process: its binary, root, namespaces. */
static int identity_of(const char *pid, struct agent_self *id)
{
	char path[64];
	struct stat sb;

	snprintf(path, sizeof(path), "/proc/%s/exe", pid);
	if (stat(path, &sb) < 0)
		return -errno;
	id->exe_dev = sb.st_dev;
	id->exe_ino = sb.st_ino;
	snprintf(path, sizeof(path), "/proc/%s/root", pid);
	if (stat(path, &sb) < 0)
		return -errno;
	id->root_dev = sb.st_dev;
	id->root_ino = sb.st_ino;
	for (size_t i = 0; i < ARRAY_SIZE(ns_kinds); i++) {
		snprintf(path, sizeof(path), "/proc/%s/ns/%s", pid, ns_kinds[i].name);
		if (stat(path, &sb) < 0)
			return -errno;
		id->ns[i] = sb.st_ino;
	}
	return 0;
}

/* Where b stands apart from a (NULL: nowhere); the binary only when exe. */
static const char *identity_apart(const struct agent_self *a, const struct agent_self *b, bool exe)
{
	/*
	 * Another binary (an upgrade not yet restarted, a test build) may
	 * guard otherwise: it does its own work.
	 */
	if (exe && (a->exe_dev != b->exe_dev || a->exe_ino != b->exe_ino))
		return "another nsguard binary";
	if (a->root_dev != b->root_dev || a->root_ino != b->root_ino)
		return "another root directory";
	for (size_t i = 0; i < ARRAY_SIZE(ns_kinds); i++)
		if (a->ns[i] != b->ns[i])
			return ns_kinds[i].why;
	return NULL;
}

int agent_self(struct agent_self *self)
{
	int err = identity_of("self", self);

	return err ? nsg_fail(-err, "reading /proc/self: %s", strerror(-err)) : 0;
}

bool agent_self_same(const struct agent_self *self)
{
	struct agent_self now;

	/* The binary file may have been replaced since: not the question here. */
	return identity_of("self", &now) == 0 && !identity_apart(self, &now, false);
}

__u64 hook_caps_needed(void)
{
	/*
	 * A kernel without CAP_BPF (before 5.8) refuses to read its bounding
	 * bit (EINVAL); any other failure does not say so, and CAP_BPF is wanted.
	 */
	bool kernel_has_bpf = prctl(PR_CAPBSET_READ, CAP_BPF, 0, 0, 0) >= 0 || errno != EINVAL;

	return 1ULL << CAP_SYS_ADMIN | (kernel_has_bpf ? 1ULL << CAP_BPF : 0);
}

/* The CapEff line of /proc/PID/status. */
static int caps_effective_of(pid_t pid, __u64 *eff)
{
	cleanup_fclose FILE *f = NULL;
	unsigned long long v;
	char path[64], line[256];

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &v) == 1) {
			*eff = v;
			return 0;
		}
	return -EINVAL;
}

int agent_peer_pid(int fd, pid_t *peer_pid)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	*peer_pid = 0;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return -errno;
	*peer_pid = cred.pid;
	return cred.uid != 0 || cred.pid <= 0 ? -EPERM : 0;
}

/*
 * The kernel's pidfd of the process that connected (SO_PEERPIDFD, Linux
 * 6.5): *out, or -1 on an older kernel; -ESRCH when that process has
 * exited (its pid may name another now), another -errno when it cannot say.
 */
static int peer_pidfd(int fd, int *out)
{
	socklen_t len = sizeof(*out);

	*out = -1;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, out, &len) == 0)
		return 0;
	*out = -1;
	if (errno == ENOPROTOOPT)
		return 0;
	return errno == EINVAL || errno == ESRCH ? -ESRCH : -errno;
}

/* Does pidfd name pid, alive?  NULL, or how it does not. */
static const char *pidfd_names(int pidfd, pid_t pid)
{
	pid_t got = 0;
	int err = pidfd_pid(pidfd, &got);

	if (err == 0 && got == pid)
		return NULL;
	return err == -ESRCH ? "names a process that has exited" :
	       err	     ? "is not a pidfd of this pid namespace" :
			       "names another process";
}

/* Do the kernel's pidfd of the peer (if any) and the one it sent name pid, alive?  0, or 1 and why. */
static int pidfds_name(int kernel_pidfd, int self_pidfd, pid_t pid, const char *when, char *why,
		       size_t why_len)
{
	const char *how;

	if (kernel_pidfd >= 0 && (how = pidfd_names(kernel_pidfd, pid))) {
		snprintf(why, why_len, "the kernel's pidfd of the process that connected %s%s", how,
			 when);
		return 1;
	}
	if ((how = pidfd_names(self_pidfd, pid))) {
		snprintf(why, why_len, "the pidfd it sent of itself %s%s", how, when);
		return 1;
	}
	return 0;
}

/*
 * The hook: who listens on fd's other end.  SO_PEERCRED and SO_PEERPIDFD of
 * a connected socket name the process that called listen() (the agent, or
 * init for nsguard-agent.socket).  It must have this process's uid, root
 * directory and namespaces (the agent serves no hook outside its own): a
 * process that could bind the path (a view of /run/nsguard the mount check
 * missed: a container's root runs as uid 0 in its own mount and pid
 * namespaces) would otherwise answer for the guard.  0; SERVER_NOT_AGENT
 * and why; SERVER_OTHER_BINARY when it passes but, not pid 1, runs another
 * binary (root in our namespaces, as trusted as the hook: an agent not
 * restarted since an upgrade, mostly); or -errno.  Without SO_PEERPIDFD (before
 * 6.5) the listener's pid is read twice around /proc; a listener that
 * exited, its socket passed on, leaves its number to be reused.
 */
static int server_check(int fd, char *why, size_t why_len)
{
	cleanup_close int kernel_pidfd = -1;
	struct agent_self me, peer;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	const char *apart, *how;
	char p[16];
	int err;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return -errno;
	if (cred.uid != geteuid() || cred.pid <= 0) {
		snprintf(why, why_len, "it listens as uid %u, pid %d", (unsigned)cred.uid,
			 (int)cred.pid);
		return SERVER_NOT_AGENT;
	}
	err = peer_pidfd(fd, &kernel_pidfd);
	if (err == -ESRCH) {
		snprintf(why, why_len, "the process that listens has exited (SO_PEERPIDFD)");
		return SERVER_NOT_AGENT;
	}
	if (err)
		return err;
	if (kernel_pidfd >= 0 && (how = pidfd_names(kernel_pidfd, cred.pid))) {
		snprintf(why, why_len, "the kernel's pidfd of the listener %s", how);
		return SERVER_NOT_AGENT;
	}
	snprintf(p, sizeof(p), "%d", (int)cred.pid);
	err = identity_of("self", &me);
	if (!err)
		err = identity_of(p, &peer);
	if (kernel_pidfd >= 0 && (how = pidfd_names(kernel_pidfd, cred.pid))) {
		snprintf(why, why_len, "the kernel's pidfd of the listener %s after /proc/%s was read",
			 how, p);
		return SERVER_NOT_AGENT;
	}
	if (err) {
		snprintf(why, why_len, "/proc/%s of its listener cannot be read", p);
		return SERVER_NOT_AGENT;
	}
	apart = identity_apart(&me, &peer, false);
	if (apart) {
		snprintf(why, why_len, "its listener (pid %s) differs: %s", p, apart);
		return SERVER_NOT_AGENT;
	}
	/* Its requests would be answered 'N' anyway (agent_peer_check). */
	if (cred.pid != 1 && identity_apart(&me, &peer, true)) {
		snprintf(why, why_len, "(pid %s) runs another nsguard binary than this hook", p);
		return SERVER_OTHER_BINARY;
	}
	return 0;
}

int agent_peer_check(int fd, pid_t pid, const struct agent_self *self,
		     const struct agent_request *req, char *why, size_t why_len)
{
	cleanup_close int kernel_pidfd = -1;
	__u64 need = hook_caps_needed(), eff = 0;
	struct agent_self peer;
	const char *apart;
	char p[16], after[48];
	int err;

	why[0] = '\0';
	/*
	 * SO_PEERCRED's pid is the number the connecting process had: a peer
	 * that hands its socket on and exits leaves it to whatever process
	 * gets that number next.  What stands for the connecting process: the
	 * kernel's pidfd of it (6.5+), every byte of the request written by
	 * that pid (SCM_CREDENTIALS), and the pidfd the request carries of its
	 * writer: each names pid, alive, before and after the reads of
	 * /proc/PID, so those read that very process.  Without the kernel's
	 * pidfd: a writer that has exited still shows its number, but a pidfd
	 * it sent names a process alive when it wrote, so no process born
	 * after it; and while the writer lives, no other process has its pid.
	 */
	err = peer_pidfd(fd, &kernel_pidfd);
	if (err == -ESRCH) {
		snprintf(why, why_len, "the process that connected has exited (SO_PEERPIDFD)");
		return 1;
	}
	if (err)
		return err;
	if (pidfds_name(kernel_pidfd, req->self_pidfd, pid, "", why, why_len))
		return 1;
	if (req->writer != pid) {
		snprintf(why, why_len,
			 "its request was written by pid %d, not by the process that connected",
			 (int)req->writer);
		return 1;
	}
	snprintf(p, sizeof(p), "%d", (int)pid);
	err = identity_of(p, &peer);
	if (!err)
		err = caps_effective_of(pid, &eff);
	snprintf(after, sizeof(after), " after the agent read /proc/%d", (int)pid);
	if (pidfds_name(kernel_pidfd, req->self_pidfd, pid, after, why, why_len))
		return 1;
	/* Gone, or hidden: not a peer to judge paths for. */
	if (err) {
		snprintf(why, why_len, "its /proc entries cannot be read");
		return 1;
	}
	apart = identity_apart(self, &peer, true);
	if (apart) {
		snprintf(why, why_len, "%s", apart);
		return 1;
	}
	/* A root without a hook's capabilities could not do the work itself: nor for it. */
	if ((eff & need) != need) {
		bool admin = eff & 1ULL << CAP_SYS_ADMIN, bpf = (eff & need) & 1ULL << CAP_BPF;

		bpf = bpf || !(need & 1ULL << CAP_BPF);
		snprintf(why, why_len, "it lacks %s%s%s in effect (CapEff %llx)",
			 admin ? "" : "CAP_SYS_ADMIN", !admin && !bpf ? " and " : "",
			 bpf ? "" : "CAP_BPF", (unsigned long long)eff);
		return 1;
	}
	return 0;
}

/* Can anyone but root change or replace what sb is (entry of a directory only root changes)? */
static const char *not_roots(const struct stat *sb, bool dir)
{
	if (sb->st_uid != 0)
		return "is not owned by root";
	/* A sticky directory: others may add names, not replace root's. */
	if ((sb->st_mode & (S_IWGRP | S_IWOTH)) && !(dir && (sb->st_mode & S_ISVTX)))
		return "is writable by group or others";
	return NULL;
}

int agent_config_check(const char *path, char *why, size_t why_len)
{
	cleanup_close int dir = -1;
	const char *p = path, *what = NULL;
	char name[NAME_MAX + 1];
	struct stat sb;
	size_t n;

	why[0] = '\0';
	/*
	 * Every name on the way, from /, an entry only root can change: then
	 * the path names this file until root changes it, and config_load()
	 * reads what was checked here.  No symbolic links: a link is as good
	 * as its every directory, and such a config is the hook's own to read.
	 */
	if (path[0] != '/') {
		snprintf(why, why_len, "its --config %s is relative", path);
		return 1;
	}
	dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0 || fstat(dir, &sb) < 0)
		goto unreadable;
	what = not_roots(&sb, true);
	if (what) {
		snprintf(why, why_len, "its --config %s: / %s", path, what);
		return 1;
	}
	for (;;) {
		int next;

		while (*p == '/')
			p++;
		n = strcspn(p, "/");
		if (n == 0 || n > NAME_MAX) {
			snprintf(why, why_len, "its --config %s is not a file's path", path);
			return 1;
		}
		memcpy(name, p, n);
		name[n] = '\0';
		if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
			snprintf(why, why_len, "its --config %s has . or .. in it", path);
			return 1;
		}
		if (fstatat(dir, name, &sb, AT_SYMLINK_NOFOLLOW) < 0)
			goto unreadable;
		p += n;
		if (S_ISLNK(sb.st_mode))
			what = "is a symbolic link";
		else if (*p == '\0' && !S_ISREG(sb.st_mode))
			what = "is not a regular file";
		else if (*p && !S_ISDIR(sb.st_mode))
			what = "is not a directory";
		else
			what = not_roots(&sb, *p != '\0');
		if (what) {
			snprintf(why, why_len, "its --config %s: %.*s %s", path, (int)(p - path), path,
				 what);
			return 1;
		}
		if (*p == '\0')
			return 0;
		next = openat(dir, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0)
			goto unreadable;
		close(dir);
		dir = next;
	}
unreadable:
	snprintf(why, why_len, "its --config %s cannot be checked: %s", path, strerror(errno));
	return 1;
}
