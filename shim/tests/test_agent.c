/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The hook's request to the agent and its answer (agent.c), the pidfd
 * helpers (cgroup.c) and the log capture (log.c).  Both ends run here: a
 * forked child plays the agent.  The guest tests run the real agent.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <linux/capability.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent.h"
#include "cgroup.h"
#include "log.h"
#include "test.h"
#include "util.h"

static char dir[64], sock[96];

static void fresh(void)
{
	snprintf(dir, sizeof(dir), "/tmp/nsguard-test-agent.XXXXXX");
	if (!mkdtemp(dir))
		dir[0] = '\0';
	snprintf(sock, sizeof(sock), "%s/agent.sock", dir);
}

static void done(void)
{
	unlink(sock);
	rmdir(dir);
}

/* A listening socket as the agent's (agent_listen_setup: writers named). */
static int listen_on(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 4) < 0 ||
	    agent_listen_setup(fd) < 0)
		return -1;
	return fd;
}

static int connect_to(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		return -1;
	return fd;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

/*
 * How the child agent answers: 'A' with a good reply, 'N', 'X' (close
 * without a word), or one of the broken answers a hook must refuse.
 */
enum answer {
	ANS_SERVE = 'A',
	ANS_NO = 'N',
	ANS_CLOSE = 'X',
	ANS_BAD_ACK, /* neither 'A' nor 'N' */
	ANS_BAD_MAGIC, /* a reply of another version */
	ANS_STATUS_3, /* an exit status no hook has */
	ANS_STATUS_NEG, /* -1, which is AGENT_NOT_SERVED */
	ANS_TEXT_HUGE, /* more text than a capture holds, all of it sent */
	ANS_TEXT_SHORT, /* less text than it said, then closed */
};

struct fake_reply {
	char magic[8];
	int32_t status;
	uint32_t text_len;
};

/* A reply header and sent bytes of text, in one write (best effort: the hook may leave). */
static void send_reply_raw(int c, const char *magic, int32_t status, uint32_t len, size_t sent)
{
	struct fake_reply r = { .status = status, .text_len = len };
	char *msg = malloc(sizeof(r) + sent);

	if (!msg)
		_exit(14);
	memcpy(r.magic, magic, 8);
	memcpy(msg, &r, sizeof(r));
	memset(msg + sizeof(r), '4', sent);
	(void)!send(c, msg, sizeof(r) + sent, MSG_NOSIGNAL);
	free(msg);
}

/*
 * The child agent: one connection, answered as `answer` says.  Exits 0
 * when the request was the one ask() sends, by the hook itself.
 */
static void fake_agent(int lfd, enum answer answer, pid_t hook)
{
	struct agent_request req;
	char *buf = NULL, ack;
	pid_t pid = 0, self = 0;
	int c = accept(lfd, NULL, NULL), ok;

	if (c < 0 || agent_read_request(c, &req, &buf) < 0)
		_exit(10);
	ok = req.stage == AGENT_STAGE_CREATE_RUNTIME && req.verbose == 2 && req.config &&
	     strcmp(req.config, "/etc/nsguard/x.conf") == 0 && req.state_len == 9 &&
	     memcmp(req.state, "{\"a\":\"b\"}", 9) == 0 && pidfd_pid(req.pidfd, &pid) == 0 &&
	     pid == hook && pidfd_pid(req.self_pidfd, &self) == 0 && self == hook &&
	     req.writer == hook;
	if (answer == ANS_CLOSE)
		_exit(ok ? 0 : 11);
	if (answer == ANS_BAD_ACK) {
		ack = 'Y';
		_exit(send(c, &ack, 1, MSG_NOSIGNAL) == 1 && ok ? 0 : 12);
	}
	agent_send_ack(c, answer != ANS_NO);
	if (answer == ANS_NO)
		_exit(ok ? 0 : 12);
	if (agent_recv_go(c) < 0)
		_exit(13);
	switch (answer) {
	case ANS_SERVE:
		if (agent_send_reply(c, 1, "3refused: x\n4warning: y\n", 24) < 0)
			_exit(13);
		break;
	case ANS_BAD_MAGIC:
		send_reply_raw(c, "nsgrep1", 0, 4, 4);
		break;
	case ANS_STATUS_3:
		send_reply_raw(c, "nsgrep2", 3, 4, 4);
		break;
	case ANS_STATUS_NEG:
		send_reply_raw(c, "nsgrep2", -1, 4, 4);
		break;
	case ANS_TEXT_HUGE:
		send_reply_raw(c, "nsgrep2", 0, NSG_CAPTURE_MAX + 1, NSG_CAPTURE_MAX + 1);
		break;
	case ANS_TEXT_SHORT:
		send_reply_raw(c, "nsgrep2", 0, 10, 5);
		break;
	default:
		_exit(16);
	}
	_exit(ok ? 0 : 12);
}

static int ask(enum answer answer, int *status, char **text, size_t *len)
{
	struct agent_request req = { .stage = AGENT_STAGE_CREATE_RUNTIME, .verbose = 2,
				     .config = "/etc/nsguard/x.conf", .state = "{\"a\":\"b\"}",
				     .state_len = 9 };
	int lfd = listen_on(sock), err, ws = -1;
	pid_t child;

	/* The init's pidfd is any pidfd to the wire: here the hook's own. */
	req.pidfd = pidfd_open_pid(getpid());
	req.self_pidfd = pidfd_open_pid(getpid());
	if (lfd < 0 || req.pidfd < 0 || req.self_pidfd < 0)
		return -999;
	child = fork();
	if (child == 0)
		fake_agent(lfd, answer, getppid());
	err = agent_ask(sock, &req, status, text, len);
	waitpid(child, &ws, 0);
	close(lfd);
	close(req.pidfd);
	close(req.self_pidfd);
	unlink(sock);
	/* The child's verdict on what it got: 0 when the request was whole. */
	return WIFEXITED(ws) && WEXITSTATUS(ws) == 0 ? err : -1000 - WEXITSTATUS(ws);
}

static void t_roundtrip(void)
{
	cleanup_free char *text = NULL;
	size_t len = 0;
	int status = -5;

	fresh();
	ASSERT_OK(ask(ANS_SERVE, &status, &text, &len));
	ASSERT_EQ(1, status);
	ASSERT_EQ(24, (int)len);
	ASSERT_STREQ("3refused: x\n4warning: y\n", text);
	done();
}

static void t_not_served(void)
{
	cleanup_free char *text = NULL;
	size_t len = 0;
	int status = 0;

	fresh();
	ASSERT_OK(ask(ANS_NO, &status, &text, &len));
	ASSERT_EQ(AGENT_NOT_SERVED, status);
	done();
}

/* No socket, and an agent that closes without a word: no answer. */
static void t_no_answer(void)
{
	cleanup_free char *text = NULL;
	struct agent_request req = { .stage = AGENT_STAGE_POSTSTOP, .state = "{}", .state_len = 2,
				     .pidfd = -1, .self_pidfd = 0 };
	size_t len = 0;
	int status = 7;

	fresh();
	ASSERT_EQ(-ENOENT, agent_ask(sock, &req, &status, &text, &len));
	/* Nothing goes out without the hook's pidfd of itself. */
	req.self_pidfd = -1;
	ASSERT_EQ(-EBADF, agent_ask(sock, &req, &status, &text, &len));
	ASSERT_EQ(-EPIPE, ask(ANS_CLOSE, &status, &text, &len));
	ASSERT_EQ(7, status);
	done();
}

/*
 * A broken answer is no answer: the hook does the work itself (agent_ask's
 * checks of the ack, the reply's magic, status and length).
 */
static void t_bad_reply(void)
{
	static const struct {
		enum answer answer;
		int err;
	} rows[] = {
		{ ANS_BAD_ACK, -EPROTO },    { ANS_BAD_MAGIC, -EPROTO }, { ANS_STATUS_3, -EPROTO },
		{ ANS_STATUS_NEG, -EPROTO }, { ANS_TEXT_HUGE, -EPROTO }, { ANS_TEXT_SHORT, -EPIPE },
	};

	fresh();
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		cleanup_free char *text = NULL;
		size_t len = 7;
		int status = 7;

		int err = ask(rows[i].answer, &status, &text, &len);

		if (err != rows[i].err)
			FAIL_RET("answer %zu: agent_ask gave %s, want %s", i, test_errname(err),
				 test_errname(rows[i].err));
		/* Nothing of it reaches the caller. */
		if (status != 7 || text || len)
			FAIL_RET("answer %zu: status %d, text %s, %zu bytes reached the hook", i,
				 status, text ? text : "(null)", len);
	}
	done();
}

/*
 * A listener that is not nsguard's agent is never asked: one with another
 * uid, one in another mount namespace (each forked here, root only).  It
 * would serve the request; agent_ask must refuse before it sends a byte.
 */
static void t_server_check(void)
{
	static const struct {
		const char *name, *why;
	} rows[] = {
		{ "uid", "is not nsguard's agent: it listens as uid 65534, pid " },
		{ "mntns", "is not nsguard's agent: its listener (pid " },
	};

	if (geteuid() != 0) {
		test_skip("needs root (a listener of another uid, another mount namespace)");
		return;
	}
	fresh();
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct agent_request req = { .stage = AGENT_STAGE_POSTSTOP, .state = "{}",
					     .state_len = 2, .pidfd = -1 };
		cleanup_free char *text = NULL;
		size_t len = 0;
		int ready[2], status = 7, err, ws = 0;
		char c = 0;
		pid_t child;

		if (pipe(ready) < 0)
			FAIL_RET("pipe");
		child = fork();
		if (child == 0) {
			struct sockaddr_un a = { .sun_family = AF_UNIX };
			int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), cfd;
			struct agent_request got;
			char *buf = NULL;

			snprintf(a.sun_path, sizeof(a.sun_path), "%s", sock);
			if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
				_exit(20);
			/* listen() takes the credentials a connected peer sees. */
			if (i == 0 && (setresgid(65534, 65534, 65534) < 0 ||
				       setresuid(65534, 65534, 65534) < 0))
				_exit(21);
			if (i == 1 && unshare(CLONE_NEWNS) < 0)
				_exit(22);
			if (listen(fd, 4) < 0 || agent_listen_setup(fd) < 0 ||
			    write(ready[1], "r", 1) != 1)
				_exit(23);
			cfd = accept(fd, NULL, NULL);
			/* Served if asked: the reply a hook would take for done. */
			if (cfd >= 0 && agent_read_request(cfd, &got, &buf) == 0 &&
			    agent_send_ack(cfd, true) == 0 && agent_recv_go(cfd) == 0)
				agent_send_reply(cfd, 0, "", 0);
			_exit(0);
		}
		close(ready[1]);
		if (read(ready[0], &c, 1) != 1) {
			close(ready[0]);
			waitpid(child, &ws, 0);
			unlink(sock);
			if (i == 1 && WIFEXITED(ws) && WEXITSTATUS(ws) == 22) {
				printf("# agent/server-check: no mount namespace here (unshare), that row not run\n");
				continue;
			}
			FAIL_RET("%s: the listener did not start (exit %d)", rows[i].name,
				 WIFEXITED(ws) ? WEXITSTATUS(ws) : -1);
		}
		close(ready[0]);
		req.self_pidfd = pidfd_open_pid(getpid());
		err = agent_ask(sock, &req, &status, &text, &len);
		kill(child, SIGKILL);
		waitpid(child, &ws, 0);
		close(req.self_pidfd);
		unlink(sock);
		if (err != -EPERM)
			FAIL_RET("%s: agent_ask gave %s (status %d), want -EPERM", rows[i].name,
				 test_errname(err), status);
		ASSERT_MSG(rows[i].why);
		if (i == 1)
			ASSERT_MSG("differs: another mount namespace");
		ASSERT_EQ(7, status);
	}
	done();
}

/*
 * The agent's end of a socketpair (writers named, as the agent's socket
 * names them unless !passcred), after raw bytes (and fds) from the other.
 */
static int read_raw_as(const void *bytes, size_t n, const int *fds, int nfds, bool close_peer,
		       bool passcred, struct agent_request *out)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 4)];
		struct cmsghdr align;
	} u = { 0 };
	struct iovec iov = { .iov_base = (void *)bytes, .iov_len = n };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct agent_request req;
	char *buf = NULL;
	int sv[2], err, one = 1;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -999;
	if (passcred && setsockopt(sv[1], SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0)
		return -997;
	if (nfds) {
		struct cmsghdr *c;

		msg.msg_control = u.buf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	if (n && sendmsg(sv[0], &msg, 0) < 0)
		return -998;
	if (close_peer)
		close(sv[0]);
	err = agent_read_request(sv[1], &req, &buf);
	if (!err && out)
		*out = req;
	if (!err && req.pidfd >= 0)
		close(req.pidfd);
	if (!err && req.self_pidfd >= 0)
		close(req.self_pidfd);
	free(buf);
	if (!close_peer)
		close(sv[0]);
	close(sv[1]);
	return err;
}

static int read_raw(const void *bytes, size_t n, const int *fds, int nfds, bool close_peer)
{
	return read_raw_as(bytes, n, fds, nfds, close_peer, true, NULL);
}

struct wire {
	char magic[8];
	uint32_t stage, verbose, config_len, state_len;
	char rest[8];
};

/* What a hostile or broken peer sends is refused, and leaves no fd behind. */
static void t_hostile(void)
{
	struct wire w = { "nsgreq2", AGENT_STAGE_POSTSTOP, 0, 0, 2, "{}" };
	int fds[3] = { 0, 1, 2 }, before = count_fds();
	struct agent_request req = { .writer = 0 };

	ASSERT_OK(read_raw_as(&w, sizeof(w) - 6, fds, 1, true, true, &req));
	/* Its writer, as the kernel names it: this process. */
	ASSERT_EQ((int)getpid(), (int)req.writer);
	ASSERT_TRUE(req.self_pidfd >= 0 && req.pidfd == -1);
	/* Without SO_PASSCRED the kernel names no writer: refused. */
	ASSERT_ERR(-EPROTO, read_raw_as(&w, sizeof(w) - 6, fds, 1, true, false, NULL));
	ASSERT_MSG("whose writer the kernel does not name");
	memcpy(w.magic, "xsgreq2", 8);
	ASSERT_ERR(-EPROTO, read_raw(&w, sizeof(w) - 6, fds, 1, true));
	ASSERT_MSG("without nsguard's header");
	/* Another version (an older hook binary): said so, for an 'N'. */
	memcpy(w.magic, "nsgreq1", 8);
	ASSERT_ERR(-EPROTONOSUPPORT, read_raw(&w, sizeof(w) - 6, fds, 1, true));
	ASSERT_MSG("another version");
	memcpy(w.magic, "nsgreq2", 8);
	w.stage = 9;
	ASSERT_ERR(-EPROTO, read_raw(&w, sizeof(w) - 6, fds, 1, true));
	w.stage = AGENT_STAGE_POSTSTOP;
	w.state_len = (1u << 20) + 1;
	ASSERT_ERR(-EPROTO, read_raw(&w, sizeof(w), fds, 1, true));
	ASSERT_MSG("over the bounds");
	w.state_len = 2;
	w.config_len = 3;
	memcpy(w.rest, "/a\0{}", 5);
	ASSERT_ERR(-EPROTO, read_raw(&w, sizeof(w) - 3, fds, 1, true));
	ASSERT_MSG("NUL");
	w.config_len = 0;
	memcpy(w.rest, "{}", 2);
	/* The hook's pidfd always, the init's with an attach only. */
	ASSERT_ERR(-EPROTO, read_raw(&w, sizeof(w) - 6, NULL, 0, true));
	ASSERT_MSG("poststop request without the hook's pidfd");
	ASSERT_ERR(-EPROTO, read_raw(&w, sizeof(w) - 6, fds, 2, true));
	ASSERT_MSG("poststop request with a pidfd of an init");
	w.stage = AGENT_STAGE_CREATE_RUNTIME;
	ASSERT_ERR(-EPROTO, read_raw(&w, sizeof(w) - 6, NULL, 0, true));
	ASSERT_MSG("createRuntime request without the hook's pidfd");
	ASSERT_ERR(-EPROTO, read_raw(&w, sizeof(w) - 6, fds, 1, true));
	ASSERT_MSG("createRuntime request without the init's pidfd");
	ASSERT_OK(read_raw_as(&w, sizeof(w) - 6, fds, 2, true, true, &req));
	ASSERT_TRUE(req.self_pidfd >= 0 && req.pidfd >= 0);
	/* Three fds: all closed, the request refused. */
	ASSERT_ERR(-EPROTO, read_raw(&w, sizeof(w) - 6, fds, 3, true));
	ASSERT_MSG("more fds");
	w.stage = AGENT_STAGE_POSTSTOP;
	/* Cut short, then closed: end of file, not a hang. */
	ASSERT_ERR(-EPIPE, read_raw(&w, 10, fds, 1, true));
	ASSERT_ERR(-EPIPE, read_raw(&w, sizeof(w) - 7, fds, 1, true));
	ASSERT_ERR(-EPIPE, read_raw(&w, 0, NULL, 0, true));
	/* Cut short and left open: the agent's bound, not forever. */
	ASSERT_ERR(-ETIMEDOUT, read_raw(&w, 10, fds, 1, false));
	ASSERT_EQ(before, count_fds());
}

/*
 * A request whose bytes two processes wrote (the peer's header, a child's
 * state): refused, whoever wrote the header; fds sent after the header too.
 */
static void t_two_writers(void)
{
	struct wire w = { "nsgreq2", AGENT_STAGE_POSTSTOP, 0, 0, 2, "{}" };
	int sv[2], one = 1, fd = 0, ws = -1, before = count_fds();
	struct agent_request req;
	char *buf = NULL;
	pid_t child;

	for (int round = 0; round < 2; round++) {
		ASSERT_TRUE(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
		ASSERT_TRUE(setsockopt(sv[1], SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) == 0);
		{
			union {
				char buf[CMSG_SPACE(sizeof(int))];
				struct cmsghdr align;
			} u = { 0 };
			struct iovec iov = { .iov_base = &w, .iov_len = sizeof(w) - 8 };
			struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
					      .msg_controllen = sizeof(u.buf) };
			struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

			c->cmsg_level = SOL_SOCKET;
			c->cmsg_type = SCM_RIGHTS;
			c->cmsg_len = CMSG_LEN(sizeof(int));
			memcpy(CMSG_DATA(c), &fd, sizeof(int));
			ASSERT_TRUE(sendmsg(sv[0], &msg, 0) == (ssize_t)(sizeof(w) - 8));
			if (round == 1) {
				/* The same writer, with fds on the state: refused. */
				iov.iov_base = w.rest;
				iov.iov_len = 2;
				ASSERT_TRUE(sendmsg(sv[0], &msg, 0) == 2);
			}
		}
		if (round == 0) {
			child = fork();
			if (child == 0)
				_exit(write(sv[0], w.rest, 2) == 2 ? 0 : 1);
			waitpid(child, &ws, 0);
			ASSERT_TRUE(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
		}
		ASSERT_ERR(-EPROTO, agent_read_request(sv[1], &req, &buf));
		ASSERT_MSG(round == 0 ? "written by more than one process" : "fds where it has none");
		ASSERT_TRUE(buf == NULL);
		close(sv[0]);
		close(sv[1]);
	}
	ASSERT_EQ(before, count_fds());
}

/* A poststop request on fd, as a hook writes it, with self_pidfd on it. */
static void send_poststop(int fd, int self_pidfd)
{
	struct wire w = { "nsgreq2", AGENT_STAGE_POSTSTOP, 0, 0, 2, "{}" };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u = { 0 };
	struct iovec iov = { .iov_base = &w, .iov_len = sizeof(w) - 6 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &self_pidfd, sizeof(int));
	if (self_pidfd < 0 || sendmsg(fd, &msg, 0) != (ssize_t)iov.iov_len)
		_exit(21);
}

/* Who the peer of peer_case() is. */
enum peer_kind {
	PEER_HOOK, /* this binary, its namespaces and capabilities: served */
	PEER_NO_ADMIN, /* the same without CAP_SYS_ADMIN in effect */
	PEER_CHILD_WRITES, /* connects; a child of it writes the request */
	PEER_GONE, /* writes the request and exits before the check */
	PEER_OTHER_PIDFD, /* sends a pidfd of another process as its own */
};

static void drop_admin(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = { 0 };

	if (syscall(SYS_capget, &h, d) < 0)
		_exit(22);
	d[CAP_SYS_ADMIN / 32].effective &= ~(1u << (CAP_SYS_ADMIN % 32));
	if (syscall(SYS_capset, &h, d) < 0)
		_exit(23);
}

static void peer_child(enum peer_kind kind, int hold)
{
	int fd = connect_to(sock), ws = -1;
	pid_t g;
	char c;

	if (fd < 0)
		_exit(20);
	if (kind == PEER_NO_ADMIN)
		drop_admin();
	if (kind == PEER_CHILD_WRITES) {
		g = fork();
		if (g == 0) {
			send_poststop(fd, pidfd_open_pid(getppid()));
			_exit(0);
		}
		waitpid(g, &ws, 0);
	} else {
		send_poststop(fd, pidfd_open_pid(kind == PEER_OTHER_PIDFD ? getppid() : getpid()));
	}
	if (kind == PEER_GONE)
		_exit(0);
	/* Alive until the check is done. */
	(void)!read(hold, &c, 1);
	_exit(0);
}

/* The agent's checks of one peer of the given kind: agent_peer_check's result. */
static int peer_case(enum peer_kind kind, const struct agent_self *self, char *why, size_t len)
{
	struct agent_request req;
	char *buf = NULL;
	int lfd = listen_on(sock), hold[2], c, err, ws = -1;
	pid_t child, peer = 0;

	if (lfd < 0 || pipe(hold) < 0)
		return -999;
	child = fork();
	if (child == 0) {
		close(hold[1]);
		peer_child(kind, hold[0]);
	}
	close(hold[0]);
	c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	/* Reaped: its pid is free for the next process. */
	if (kind == PEER_GONE)
		waitpid(child, &ws, 0);
	err = c < 0 ? -998 : agent_peer_pid(c, &peer);
	if (!err)
		err = agent_read_request(c, &req, &buf);
	if (!err) {
		err = peer == child ? agent_peer_check(c, peer, self, &req, why, len) : -997;
		close(req.self_pidfd);
		free(buf);
	}
	close(hold[1]);
	if (kind != PEER_GONE)
		waitpid(child, &ws, 0);
	if (c >= 0)
		close(c);
	close(lfd);
	unlink(sock);
	return err;
}

static void t_peer_check(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = { 0 };
	struct agent_self self;
	char why[256];
	__u64 eff;

	if (syscall(SYS_capget, &h, d) < 0 || agent_self(&self) < 0)
		FAIL_RET("capget or agent_self failed");
	eff = (__u64)d[1].effective << 32 | d[0].effective;
	if ((eff & hook_caps_needed()) != hook_caps_needed()) {
		test_skip("not run with a hook's capabilities (CAP_SYS_ADMIN, CAP_BPF)");
		return;
	}
	fresh();
	ASSERT_EQ(0, peer_case(PEER_HOOK, &self, why, sizeof(why)));
	ASSERT_STREQ("", why);
	ASSERT_EQ(1, peer_case(PEER_NO_ADMIN, &self, why, sizeof(why)));
	ASSERT_SUBSTR("it lacks CAP_SYS_ADMIN in effect", why);
	ASSERT_EQ(1, peer_case(PEER_CHILD_WRITES, &self, why, sizeof(why)));
	ASSERT_SUBSTR("its request was written by pid", why);
	ASSERT_EQ(1, peer_case(PEER_OTHER_PIDFD, &self, why, sizeof(why)));
	ASSERT_SUBSTR("the pidfd it sent of itself names another process", why);
	/*
	 * SO_PEERPIDFD where the kernel has it (6.5; from 6.16 a pidfd of the
	 * exited process), else the pidfd it sent.
	 */
	ASSERT_EQ(1, peer_case(PEER_GONE, &self, why, sizeof(why)));
	if (!strstr(why, "the process that connected has exited (SO_PEERPIDFD)") &&
	    !strstr(why, "the kernel's pidfd of the process that connected names a process that has exited"))
		ASSERT_SUBSTR("the pidfd it sent of itself names a process that has exited", why);
	done();
}

/* write_file PATH MODE UID: a config file. */
static int write_conf(const char *path, mode_t mode, uid_t uid)
{
	FILE *f = fopen(path, "we");

	if (!f)
		return -1;
	fputs("# a config\n", f);
	fclose(f);
	return chmod(path, mode) < 0 || chown(path, uid, 0) < 0 ? -1 : 0;
}

/* The --config a peer names: every name on the way root's alone, no links. */
static void t_config_check(void)
{
	char d[64], a[96], b[96], why[256];
	struct stat sb;

	if (geteuid() != 0 || stat("/tmp", &sb) < 0 || sb.st_uid != 0 ||
	    ((sb.st_mode & 022) && !(sb.st_mode & S_ISVTX))) {
		test_skip("not root, or /tmp is not root's (sticky)");
		return;
	}
	snprintf(d, sizeof(d), "/tmp/nsguard-test-conf.XXXXXX");
	ASSERT_TRUE(mkdtemp(d) != NULL);
	snprintf(a, sizeof(a), "%s/a.conf", d);
	ASSERT_OK(write_conf(a, 0644, 0));
	ASSERT_EQ(0, agent_config_check(a, why, sizeof(why)));
	ASSERT_STREQ("", why);
	ASSERT_OK(chmod(a, 0664));
	ASSERT_EQ(1, agent_config_check(a, why, sizeof(why)));
	ASSERT_SUBSTR("a.conf is writable by group or others", why);
	ASSERT_OK(chmod(a, 0646));
	ASSERT_EQ(1, agent_config_check(a, why, sizeof(why)));
	ASSERT_OK(chmod(a, 0600));
	ASSERT_OK(chown(a, 1000, 0));
	ASSERT_EQ(1, agent_config_check(a, why, sizeof(why)));
	ASSERT_SUBSTR("a.conf is not owned by root", why);
	ASSERT_OK(chown(a, 0, 0));
	/* A link, even to a good one. */
	snprintf(b, sizeof(b), "%s/link.conf", d);
	ASSERT_OK(symlink(a, b));
	ASSERT_EQ(1, agent_config_check(b, why, sizeof(why)));
	ASSERT_SUBSTR("link.conf is a symbolic link", why);
	unlink(b);
	/* A directory others can write (but a sticky one is root's to change). */
	snprintf(b, sizeof(b), "%s/open", d);
	ASSERT_OK(mkdir(b, 0755));
	ASSERT_OK(chmod(b, 0777));
	snprintf(b, sizeof(b), "%s/open/b.conf", d);
	ASSERT_OK(write_conf(b, 0644, 0));
	ASSERT_EQ(1, agent_config_check(b, why, sizeof(why)));
	ASSERT_SUBSTR("/open is writable by group or others", why);
	snprintf(b, sizeof(b), "%s/open", d);
	ASSERT_OK(chmod(b, 01777));
	snprintf(b, sizeof(b), "%s/open/b.conf", d);
	ASSERT_EQ(0, agent_config_check(b, why, sizeof(why)));
	snprintf(b, sizeof(b), "%s/open", d);
	ASSERT_OK(chmod(b, 0755));
	ASSERT_OK(chown(b, 1000, 0));
	snprintf(b, sizeof(b), "%s/open/b.conf", d);
	ASSERT_EQ(1, agent_config_check(b, why, sizeof(why)));
	ASSERT_SUBSTR("/open is not owned by root", why);
	unlink(b);
	snprintf(b, sizeof(b), "%s/open", d);
	rmdir(b);
	/* Paths that are no file's own. */
	ASSERT_EQ(1, agent_config_check("a.conf", why, sizeof(why)));
	ASSERT_SUBSTR("is relative", why);
	snprintf(b, sizeof(b), "%s/./a.conf", d);
	ASSERT_EQ(1, agent_config_check(b, why, sizeof(why)));
	ASSERT_SUBSTR(". or ..", why);
	snprintf(b, sizeof(b), "%s/missing.conf", d);
	ASSERT_EQ(1, agent_config_check(b, why, sizeof(why)));
	ASSERT_SUBSTR("cannot be checked: No such file", why);
	ASSERT_EQ(1, agent_config_check(d, why, sizeof(why)));
	ASSERT_SUBSTR("is not a regular file", why);
	snprintf(b, sizeof(b), "%s/a.conf/x", d);
	ASSERT_EQ(1, agent_config_check(b, why, sizeof(why)));
	ASSERT_SUBSTR("a.conf is not a directory", why);
	snprintf(b, sizeof(b), "%s/", d);
	ASSERT_EQ(1, agent_config_check(b, why, sizeof(why)));
	unlink(a);
	rmdir(d);
}

static void t_pidfd(void)
{
	int fd = pidfd_open_pid(getpid()), ws;
	pid_t pid = 0, child;

	ASSERT_TRUE(fd >= 0);
	ASSERT_OK(pidfd_pid(fd, &pid));
	ASSERT_EQ((int)getpid(), (int)pid);
	ASSERT_OK(pidfd_alive(fd));
	close(fd);
	/* Not a pidfd. */
	ASSERT_EQ(-EBADF, pidfd_pid(0, &pid));
	child = fork();
	if (child == 0)
		_exit(0);
	fd = pidfd_open_pid(child);
	ASSERT_TRUE(fd >= 0);
	waitpid(child, &ws, 0);
	/* Reaped: the pid may name another process now, the pidfd never does. */
	ASSERT_EQ(-ESRCH, pidfd_pid(fd, &pid));
	ASSERT_EQ(-ESRCH, pidfd_alive(fd));
	close(fd);
	ASSERT_EQ(-ESRCH, pidfd_open_pid(child));
}

static void t_capture(void)
{
	struct nsg_capture cap = { 0 };
	int verbose = nsg_verbose();

	nsg_set_verbose(0);
	nsg_log_capture(&cap);
	nsg_warn("warning: one\nline");
	nsg_info("not at -v 0");
	nsg_error("the end");
	nsg_log_capture(NULL);
	ASSERT_STREQ("4warning: one?line\n3the end\n", cap.buf);
	ASSERT_TRUE(!cap.truncated);
	free(cap.buf);
	/* Warnings fill it up; the error that ends the hook still fits. */
	memset(&cap, 0, sizeof(cap));
	nsg_log_capture(&cap);
	for (int i = 0; i < 200; i++)
		nsg_warn("warning: %0100d", i);
	nsg_error("refused");
	nsg_log_capture(NULL);
	nsg_set_verbose(verbose);
	ASSERT_TRUE(cap.truncated);
	ASSERT_TRUE(cap.len <= NSG_CAPTURE_MAX);
	ASSERT_SUBSTR("\n3refused\n", cap.buf);
	/* Ended, a cut capture says so, within the bound. */
	ASSERT_SUBSTR("\n4warning: lines of this hook were left out here;", cap.buf);
	ASSERT_TRUE(cap.len <= NSG_CAPTURE_MAX);
	ASSERT_EQ((int)strlen(cap.buf), (int)cap.len);
	free(cap.buf);
}

static void t_stages(void)
{
	ASSERT_EQ(AGENT_STAGE_PRESTART, agent_stage_of("prestart"));
	ASSERT_EQ(0, agent_stage_of("poststart"));
	ASSERT_STREQ("poststop", agent_stage_name(AGENT_STAGE_POSTSTOP));
	ASSERT_TRUE(agent_stage_name(0) == NULL);
	ASSERT_TRUE(agent_stage_name(4) == NULL);
}

void suite_agent(void)
{
	signal(SIGPIPE, SIG_IGN);
	TEST_CASE("agent", "roundtrip", t_roundtrip);
	TEST_CASE("agent", "not-served", t_not_served);
	TEST_CASE("agent", "no-answer", t_no_answer);
	TEST_CASE("agent", "bad-reply", t_bad_reply);
	TEST_CASE("agent", "server-check", t_server_check);
	TEST_CASE("agent", "hostile-requests", t_hostile);
	TEST_CASE("agent", "two-writers", t_two_writers);
	TEST_CASE("agent", "peer-check", t_peer_check);
	TEST_CASE("agent", "config-check", t_config_check);
	TEST_CASE("agent", "pidfd", t_pidfd);
	TEST_CASE("agent", "capture", t_capture);
	TEST_CASE("agent", "stages", t_stages);
}
