// SPDX-License-Identifier: GPL-2.0-or-later
/* The hook's request to the agent and its answer (agent.h). */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "agent.h"
#include "log.h"
#include "oci.h"
#include "util.h"

/* Both ends are this binary (agent_peer_check): host order, no padding. */
static const char req_magic[8] = "nsgreq1";
static const char reply_magic[8] = "nsgrep1";

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

/* The header with the pidfd on it, then the rest. */
static int send_request(int fd, const struct agent_request *req, long long deadline)
{
	size_t clen = req->config ? strlen(req->config) : 0;
	struct wire_request w = { .stage = req->stage, .verbose = (uint32_t)req->verbose,
				  .config_len = (uint32_t)clen,
				  .state_len = (uint32_t)req->state_len };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u = { 0 };
	struct iovec iov = { .iov_base = &w, .iov_len = sizeof(w) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;
	ssize_t n;
	int err;

	memcpy(w.magic, req_magic, sizeof(w.magic));
	if (req->pidfd >= 0) {
		msg.msg_control = u.buf;
		msg.msg_controllen = sizeof(u.buf);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &req->pidfd, sizeof(int));
	}
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

int agent_ask(const char *socket_path, const struct agent_request *req, int *status,
	      char **text, size_t *text_len)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	cleanup_free char *buf = NULL;
	cleanup_close int fd = -1;
	struct wire_reply r;
	long long deadline;
	char ack;
	int err;

	*text = NULL;
	*text_len = 0;
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

/* Close every fd a control message carried. */
static void close_fds(struct msghdr *msg)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			close(fd);
		}
	}
}

/* The header, and the one fd it may carry (-1 without). */
static int recv_header(int fd, struct wire_request *w, int *pidfd, long long deadline)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 8)];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = w, .iov_len = sizeof(*w) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;
	ssize_t n;
	int err;

	*pidfd = -1;
	for (;;) {
		msg.msg_control = u.buf;
		msg.msg_controllen = sizeof(u.buf);
		n = recvmsg(fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (n > 0)
			break;
		if (n == 0)
			return nsg_fail(EPIPE, "the peer closed the connection before its request");
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			return nsg_fail(errno, "reading a request: %s", strerror(errno));
		err = wait_fd(fd, POLLIN, deadline);
		if (err)
			return nsg_fail(-err, "reading a request: %s", strerror(-err));
	}
	c = CMSG_FIRSTHDR(&msg);
	if (c) {
		/* Exactly one fd, or none: anything else is closed and refused. */
		if ((msg.msg_flags & MSG_CTRUNC) || CMSG_NXTHDR(&msg, c) ||
		    c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
		    c->cmsg_len != CMSG_LEN(sizeof(int))) {
			close_fds(&msg);
			return nsg_fail(EPROTO, "a request with more than one fd, or not an fd");
		}
		memcpy(pidfd, CMSG_DATA(c), sizeof(int));
	}
	err = recv_all(fd, (char *)w + n, sizeof(*w) - (size_t)n, deadline);
	if (err) {
		if (*pidfd >= 0)
			close(*pidfd);
		*pidfd = -1;
		return nsg_fail(-err, "reading a request: %s", strerror(-err));
	}
	return 0;
}

int agent_read_request(int fd, struct agent_request *req, char **buf_out)
{
	long long deadline = now_ms() + AGENT_READ_MS;
	cleanup_close int pidfd = -1;
	cleanup_free char *buf = NULL;
	struct wire_request w;
	int err;

	*buf_out = NULL;
	memset(req, 0, sizeof(*req));
	req->pidfd = -1;
	err = recv_header(fd, &w, &pidfd, deadline);
	if (err)
		return err;
	if (memcmp(w.magic, req_magic, sizeof(w.magic)) != 0)
		return nsg_fail(EPROTO, "a request without nsguard's header");
	if (!agent_stage_name(w.stage))
		return nsg_fail(EPROTO, "a request for stage %u", w.stage);
	/* The init's pidfd comes with an attach, and only with one. */
	if ((w.stage == AGENT_STAGE_POSTSTOP) != (pidfd < 0))
		return nsg_fail(EPROTO, "a %s request %s a pidfd", agent_stage_name(w.stage),
				pidfd < 0 ? "without" : "with");
	if (w.config_len >= PATH_MAX || w.state_len > OCI_STATE_MAX || w.verbose > 9)
		return nsg_fail(EPROTO, "a request over the bounds (config %u, state %u bytes)",
				w.config_len, w.state_len);
	buf = malloc((size_t)w.config_len + w.state_len + 2);
	if (!buf)
		return nsg_fail(ENOMEM, "out of memory");
	err = recv_all(fd, buf, w.config_len, deadline);
	if (!err)
		err = recv_all(fd, buf + w.config_len + 1, w.state_len, deadline);
	if (err)
		return nsg_fail(-err, "reading a request: %s", strerror(-err));
	buf[w.config_len] = '\0';
	buf[w.config_len + 1 + w.state_len] = '\0';
	if (strlen(buf) != w.config_len)
		return nsg_fail(EPROTO, "a request whose config path holds a NUL byte");
	req->stage = (enum agent_stage)w.stage;
	req->verbose = (int)w.verbose;
	req->config = w.config_len ? buf : NULL;
	req->state = buf + w.config_len + 1;
	req->state_len = w.state_len;
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

int agent_peer_check(int fd, const struct agent_self *self, pid_t *peer_pid, const char **why)
{
	struct agent_self peer;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	char pid[16];

	*why = NULL;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return -errno;
	*peer_pid = cred.pid;
	if (cred.uid != 0 || cred.pid <= 0)
		return -EPERM;
	snprintf(pid, sizeof(pid), "%d", (int)cred.pid);
	/* Gone, or hidden: not a peer to judge paths for. */
	if (identity_of(pid, &peer) < 0) {
		*why = "its /proc entries cannot be read";
		return 1;
	}
	*why = identity_apart(self, &peer, true);
	return *why ? 1 : 0;
}
