// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nsg-console SOCKET: the receiving end of an OCI runtime's --console-socket
 * (the guest suites; runc's recvtty is not packaged).  Listens on SOCKET,
 * takes the pty master the runtime sends (SCM_RIGHTS) and copies what the
 * container writes to its terminal to stdout until the terminal closes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char data[256], cbuf[CMSG_SPACE(sizeof(int))], buf[4096];
	struct iovec iov = { data, sizeof(data) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			      .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	int s, conn, master = -1;
	ssize_t n;

	if (argc != 2 || strlen(argv[1]) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "usage: nsg-console SOCKET\n");
		return 2;
	}
	strcpy(sa.sun_path, argv[1]);
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0 || bind(s, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(s, 1) < 0) {
		perror("nsg-console: listen");
		return 1;
	}
	conn = accept4(s, NULL, NULL, SOCK_CLOEXEC);
	if (conn < 0 || recvmsg(conn, &msg, MSG_CMSG_CLOEXEC) < 0) {
		perror("nsg-console: receive");
		return 1;
	}
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
			memcpy(&master, CMSG_DATA(c), sizeof(int));
	if (master < 0) {
		fprintf(stderr, "nsg-console: no fd received\n");
		return 1;
	}
	/* EIO: the last slave fd closed, the container's terminal is gone. */
	while ((n = read(master, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
		if (n > 0 && write(1, buf, n) != n)
			return 1;
	return 0;
}
