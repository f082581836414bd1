/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The hook's request to the agent and its answer (agent.c), the pidfd
 * helpers (cgroup.c) and the log capture (log.c).  Both ends run here: a
 * forked child plays the agent.  The guest tests run the real agent.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <sys/socket.h>
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

static int listen_on(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 4) < 0)
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
 * The child agent: one connection, answered as `answer` says ('A' with a
 * reply, 'N', or 'X': close without a word).  Exits 0 when the request was
 * the one t_roundtrip sends.
 */
static void fake_agent(int lfd, char answer, pid_t hook)
{
	struct agent_request req;
	char *buf = NULL;
	pid_t pid = 0;
	int c = accept(lfd, NULL, NULL), ok;

	if (c < 0 || agent_read_request(c, &req, &buf) < 0)
		_exit(10);
	ok = req.stage == AGENT_STAGE_CREATE_RUNTIME && req.verbose == 2 && req.config &&
	     strcmp(req.config, "/etc/nsguard/x.conf") == 0 && req.state_len == 9 &&
	     memcmp(req.state, "{\"a\":\"b\"}", 9) == 0 && pidfd_pid(req.pidfd, &pid) == 0 &&
	     pid == hook;
	if (answer == 'X')
		_exit(ok ? 0 : 11);
	agent_send_ack(c, answer == 'A');
	if (answer == 'A' && (agent_recv_go(c) < 0 ||
			      agent_send_reply(c, 1, "3refused: x\n4warning: y\n", 24) < 0))
		_exit(13);
	_exit(ok ? 0 : 12);
}

static int ask(char answer, int *status, char **text, size_t *len)
{
	struct agent_request req = { .stage = AGENT_STAGE_CREATE_RUNTIME, .verbose = 2,
				     .config = "/etc/nsguard/x.conf", .state = "{\"a\":\"b\"}",
				     .state_len = 9 };
	int lfd = listen_on(sock), err, ws = -1;
	pid_t child;

	req.pidfd = pidfd_open_pid(getpid());
	if (lfd < 0 || req.pidfd < 0)
		return -999;
	child = fork();
	if (child == 0)
		fake_agent(lfd, answer, getppid());
	err = agent_ask(sock, &req, status, text, len);
	waitpid(child, &ws, 0);
	close(lfd);
	close(req.pidfd);
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
	ASSERT_OK(ask('A', &status, &text, &len));
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
	ASSERT_OK(ask('N', &status, &text, &len));
	ASSERT_EQ(AGENT_NOT_SERVED, status);
	done();
}

/* No socket, and an agent that closes without a word: no answer. */
static void t_no_answer(void)
{
	cleanup_free char *text = NULL;
	struct agent_request req = { .stage = AGENT_STAGE_POSTSTOP, .state = "{}", .state_len = 2,
				     .pidfd = -1 };
	size_t len = 0;
	int status = 7;

	fresh();
	ASSERT_EQ(-ENOENT, agent_ask(sock, &req, &status, &text, &len));
	ASSERT_EQ(-EPIPE, ask('X', &status, &text, &len));
	ASSERT_EQ(7, status);
	done();
}

/* The agent's end of a socketpair, after raw bytes (and fds) from the other. */
static int read_raw(const void *bytes, size_t n, const int *fds, int nfds, bool close_peer)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 4)];
		struct cmsghdr align;
	} u = { 0 };
	struct iovec iov = { .iov_base = (void *)bytes, .iov_len = n };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct agent_request req;
	char *buf = NULL;
	int sv[2], err;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -999;
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
	if (!err && req.pidfd >= 0)
		close(req.pidfd);
	free(buf);
	if (!close_peer)
		close(sv[0]);
	close(sv[1]);
	return err;
}

struct wire {
	char magic[8];
	uint32_t stage, verbose, config_len, state_len;
	char rest[8];
};

/* What a hostile or broken peer sends is refused, and leaves no fd behind. */
static void t_hostile(void)
{
	struct wire w = { "nsgreq1", AGENT_STAGE_POSTSTOP, 0, 0, 2, "{}" };
	int fds[2] = { 0, 1 }, before = count_fds();

	ASSERT_OK(read_raw(&w, sizeof(w) - 6, NULL, 0, true));
	memcpy(w.magic, "nsgreq2", 8);
	ASSERT_ERR(-EPROTO, read_raw(&w, sizeof(w) - 6, NULL, 0, true));
	ASSERT_MSG("without nsguard's header");
	memcpy(w.magic, "nsgreq1", 8);
	w.stage = 9;
	ASSERT_ERR(-EPROTO, read_raw(&w, sizeof(w) - 6, NULL, 0, true));
	w.stage = AGENT_STAGE_POSTSTOP;
	w.state_len = (1u << 20) + 1;
	ASSERT_ERR(-EPROTO, read_raw(&w, sizeof(w), NULL, 0, true));
	ASSERT_MSG("over the bounds");
	w.state_len = 2;
	w.config_len = 3;
	memcpy(w.rest, "/a\0{}", 5);
	ASSERT_ERR(-EPROTO, read_raw(&w, sizeof(w) - 3, NULL, 0, true));
	ASSERT_MSG("NUL");
	w.config_len = 0;
	memcpy(w.rest, "{}", 2);
	/* An attach without the init's pidfd, a poststop with one. */
	w.stage = AGENT_STAGE_CREATE_RUNTIME;
	ASSERT_ERR(-EPROTO, read_raw(&w, sizeof(w) - 6, NULL, 0, true));
	ASSERT_MSG("createRuntime request without a pidfd");
	w.stage = AGENT_STAGE_POSTSTOP;
	ASSERT_ERR(-EPROTO, read_raw(&w, sizeof(w) - 6, fds, 1, true));
	ASSERT_MSG("poststop request with a pidfd");
	/* Two fds: both closed, the request refused. */
	ASSERT_ERR(-EPROTO, read_raw(&w, sizeof(w) - 6, fds, 2, true));
	/* Cut short, then closed: end of file, not a hang. */
	ASSERT_ERR(-EPIPE, read_raw(&w, 10, NULL, 0, true));
	ASSERT_ERR(-EPIPE, read_raw(&w, sizeof(w) - 7, NULL, 0, true));
	ASSERT_ERR(-EPIPE, read_raw(&w, 0, NULL, 0, true));
	/* Cut short and left open: the agent's bound, not forever. */
	ASSERT_ERR(-ETIMEDOUT, read_raw(&w, 10, NULL, 0, false));
	ASSERT_EQ(before, count_fds());
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
	TEST_CASE("agent", "hostile-requests", t_hostile);
	TEST_CASE("agent", "pidfd", t_pidfd);
	TEST_CASE("agent", "capture", t_capture);
	TEST_CASE("agent", "stages", t_stages);
}
