// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nsguard agent: resident, it does the hooks' work for them (agent.h).  One
 * request at a time, in this process: a start waits for the lock anyway,
 * and a hook whose agent is busy past its bound does the work itself.
 * SIGTERM and SIGINT stop it between requests.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "agent.h"
#include "cgroup.h"
#include "cmd.h"
#include "guard.h"
#include "jsonstrict.h"
#include "log.h"
#include "scope.h"
#include "util.h"

static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

/* systemd's socket activation (sd_listen_fds(3)): fd 3, or -ENOENT when none was passed. */
static int activated_fd(void)
{
	const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
	unsigned long long p = 0, n = 0;
	int val = 0;
	socklen_t len = sizeof(val);

	if (!pid || !fds || parse_u64(pid, &p) < 0 || p != (unsigned long long)getpid())
		return -ENOENT;
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	if (parse_u64(fds, &n) < 0 || n != 1)
		return nsg_fail(EINVAL, "socket activation passed %s sockets; nsguard agent takes one",
				fds);
	if (getsockopt(3, SOL_SOCKET, SO_ACCEPTCONN, &val, &len) < 0 || !val ||
	    getsockopt(3, SOL_SOCKET, SO_DOMAIN, &val, &len) < 0 || val != AF_UNIX ||
	    getsockopt(3, SOL_SOCKET, SO_TYPE, &val, &len) < 0 || val != SOCK_STREAM)
		return nsg_fail(EINVAL, "the socket systemd passed is not a listening unix stream "
					"socket (ListenStream=%s)",
				NSGUARD_AGENT_SOCKET);
	if (fcntl(3, F_SETFD, FD_CLOEXEC) < 0)
		return nsg_fail(errno, "fcntl: %s", strerror(errno));
	return 3;
}

/* Its own socket: root only (0600), never over anything but a dead agent's socket. */
static int own_socket(const char *path, struct stat *sb_out)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	cleanup_close int fd = -1, probe = -1, lock = -1;
	struct stat sb;
	mode_t old;
	int err;

	/*
	 * Two agents starting at once: one probes, unlinks and binds at a time,
	 * under the guard lock (root's, bounded; it creates /run/nsguard).
	 */
	err = guard_lock(&lock);
	if (err)
		return err;
	strcpy(addr.sun_path, path);
	if (lstat(path, &sb) == 0) {
		if (!S_ISSOCK(sb.st_mode))
			return nsg_fail(EEXIST, "%s exists and is not a socket; remove it", path);
		/* Non-blocking: a live agent with a full queue says EAGAIN. */
		probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (probe < 0)
			return nsg_fail(errno, "socket: %s", strerror(errno));
		/* Only a socket nobody listens on is a dead agent's. */
		if (connect(probe, (struct sockaddr *)&addr, sizeof(addr)) == 0 || errno == EAGAIN)
			return nsg_fail(EADDRINUSE, "an agent already listens on %s", path);
		if (errno != ECONNREFUSED)
			return nsg_fail(errno, "probing %s: %s", path, strerror(errno));
		if (unlink(path) < 0 && errno != ENOENT)
			return nsg_fail(errno, "removing the stale %s: %s", path, strerror(errno));
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return nsg_fail(errno, "socket: %s", strerror(errno));
	old = umask(0177);
	err = bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ? -errno : 0;
	umask(old);
	if (err)
		return nsg_fail(-err, "bind %s: %s", path, strerror(-err));
	if (listen(fd, 128) < 0 || stat(path, sb_out) < 0) {
		err = -errno;
		unlink(path);
		return nsg_fail(-err, "listen on %s: %s", path, strerror(-err));
	}
	return steal_fd(&fd);
}

/*
 * May the agent serve this request of peer?  0: yes; 1: no (why says why,
 * the hook does the work); -errno: close without a word.
 */
static int may_serve(int fd, pid_t peer, const struct agent_self *self,
		     const struct agent_request *req, char *why, size_t why_len)
{
	int err = agent_peer_check(fd, peer, self, req, why, why_len);

	/* The config, as the hook names it, read by the agent: only one root alone can change. */
	if (err == 0 && req->config)
		err = agent_config_check(req->config, why, why_len);
	return err;
}

/* One request: the hook's work, its lines and exit status back to it. */
static void serve(int fd, const struct agent_self *self)
{
	struct nsg_capture cap = { 0 };
	struct agent_request req;
	cleanup_free char *buf = NULL;
	cleanup_close int pidfd = -1, self_pidfd = -1;
	const char *stage;
	char why[PATH_MAX + 128];
	int err, status, verbose = nsg_verbose();
	pid_t peer = 0;

	err = agent_peer_pid(fd, &peer);
	if (err < 0) {
		nsg_warn("warning: a connection from pid %d refused: %s", (int)peer,
			 err == -EPERM ? "not root in this pid namespace" : strerror(-err));
		return;
	}
	err = agent_read_request(fd, &req, &buf);
	/* An older or newer hook binary: it does its own work, as another binary does. */
	if (err == -EPROTONOSUPPORT) {
		nsg_info("not serving pid %d: %s; it does the work itself", (int)peer,
			 nsg_last_error());
		nsg_clear_error();
		agent_send_ack(fd, false);
		return;
	}
	if (err) {
		nsg_warn("warning: the request of pid %d: %s", (int)peer, nsg_last_error());
		nsg_clear_error();
		return;
	}
	pidfd = req.pidfd;
	self_pidfd = req.self_pidfd;
	stage = agent_stage_name(req.stage);
	err = may_serve(fd, peer, self, &req, why, sizeof(why));
	if (err < 0) {
		nsg_warn("warning: a connection from pid %d refused: %s", (int)peer, strerror(-err));
		return;
	}
	if (err > 0) {
		nsg_info("not serving pid %d: %s; it does the work itself (%s)", (int)peer, why,
			 stage);
		agent_send_ack(fd, false);
		return;
	}
	/*
	 * Answered at once; served only once the hook says it waits for the
	 * verdict: one that gave up on the ack does the work itself, and the
	 * agent must not do it after it.
	 */
	if (agent_send_ack(fd, true) < 0 || agent_recv_go(fd) < 0) {
		nsg_info("pid %d left before its %s was served", (int)peer, stage);
		return;
	}
	nsg_info("serving %s for pid %d", stage, (int)peer);

	/* What one hook process would start with. */
	nsg_clear_error();
	cmd_usage_error = false;
	cgroup_root_forget();
	scope_forget();
	json_reseed();
	nsg_set_verbose(req.verbose);
	nsg_log_capture(&cap);
	/* Stuck past its bound (SIGALRM's default): dead, and the hook works itself. */
	alarm(AGENT_SERVE_SECS);
	err = hook_serve(&(struct cmd_ctx){ .config_path = req.config }, stage, req.state,
			 req.state_len, pidfd);
	alarm(0);
	/* main()'s exit path, for the hook to print. */
	if (err < 0)
		nsg_error("%s", nsg_last_error()[0] ? nsg_last_error() : strerror(-err));
	status = err > 0 ? err : err == 0 ? 0 : cmd_usage_error ? 2 : 1;
	nsg_log_capture(NULL);
	nsg_set_verbose(verbose);
	nsg_clear_error();

	if (agent_send_reply(fd, status, cap.buf, cap.len) < 0)
		nsg_info("pid %d left before its answer (exit %d)", (int)peer, status);
	else
		nsg_info("served %s for pid %d: exit %d", stage, (int)peer, status);
	free(cap.buf);
	/*
	 * A request joins a container's mount and cgroup namespaces and comes
	 * back; one that could not come back leaves this process in the
	 * tenant's view of the files: it serves no more.
	 */
	if (!agent_self_same(self)) {
		nsg_error("agent: no longer in its own root and namespaces after a request; exiting");
		exit(1);
	}
}

int cmd_agent(struct cmd_ctx *ctx, int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_stop };
	sigset_t stops, waiting;
	struct agent_self self;
	struct stat own = { 0 };
	cleanup_close int lfd = -1;
	int err, c;

	(void)ctx;
	err = cmd_options("agent", argc, argv, NULL, NULL, NULL) ?: cmd_require_privileges();
	if (err)
		return err;
	nsg_log_syslog("/dev/log");
	err = agent_self(&self);
	if (err)
		return err;
	lfd = activated_fd();
	if (lfd == -ENOENT) {
		nsg_clear_error();
		lfd = own_socket(NSGUARD_AGENT_SOCKET, &own);
	}
	if (lfd < 0)
		return lfd;
	err = agent_listen_setup(lfd);
	if (err)
		return err;
	if (chdir("/") < 0)
		return nsg_fail(errno, "chdir /: %s", strerror(errno));
	if (fcntl(lfd, F_SETFL, O_NONBLOCK) < 0)
		return nsg_fail(errno, "fcntl: %s", strerror(errno));
	/*
	 * A stop is taken only between requests (ppoll): one that interrupted
	 * a request's lock wait or read would refuse that container.
	 */
	sigemptyset(&stops);
	sigaddset(&stops, SIGTERM);
	sigaddset(&stops, SIGINT);
	sigprocmask(SIG_BLOCK, &stops, &waiting);
	sigdelset(&waiting, SIGTERM);
	sigdelset(&waiting, SIGINT);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* The watchdog needs SIGALRM's default action, whatever the parent left. */
	signal(SIGALRM, SIG_DFL);
	sigemptyset(&stops);
	sigaddset(&stops, SIGALRM);
	sigprocmask(SIG_UNBLOCK, &stops, NULL);
	nsg_info("agent: serving hooks on %s", NSGUARD_AGENT_SOCKET);
	while (!stop) {
		struct pollfd p = { .fd = lfd, .events = POLLIN };

		if (ppoll(&p, 1, NULL, &waiting) < 0 && errno != EINTR) {
			err = nsg_fail(errno, "poll on %s: %s", NSGUARD_AGENT_SOCKET, strerror(errno));
			break;
		}
		if (stop)
			break;
		c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0) {
			if (errno == EINTR || errno == ECONNABORTED || errno == EAGAIN)
				continue;
			/* Out of memory for a moment: the hooks meanwhile do their own work. */
			if (errno == ENOBUFS || errno == ENOMEM) {
				usleep(100 * 1000);
				continue;
			}
			/* Out of fds (a leak?): better a restart than a queue that never moves. */
			err = nsg_fail(errno, "accept on %s: %s", NSGUARD_AGENT_SOCKET,
				       strerror(errno));
			break;
		}
		serve(c, &self);
		close(c);
	}
	/* Ours, and still ours: a later agent may have taken the path. */
	if (own.st_ino) {
		struct stat sb;

		if (stat(NSGUARD_AGENT_SOCKET, &sb) == 0 && sb.st_ino == own.st_ino &&
		    sb.st_dev == own.st_dev)
			unlink(NSGUARD_AGENT_SOCKET);
	}
	return err;
}
