/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pid -> user namespace level, by walking NS_GET_PARENT. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/nsfs.h>
#include <linux/types.h>

#include "../../bpf/nsguard.h"
#include "log.h"
#include "userns.h"
#include "util.h"

int userns_level_of_pid(const char *proc_root, pid_t pid, __u32 *level)
{
	cleanup_free char *path = NULL;
	cleanup_close int fd = -1;
	__u32 n;

	if (pid <= 0)
		return nsg_fail(EINVAL, "invalid pid %d", (int)pid);
	if (asprintf(&path, "%s/%d/ns/user", proc_root, (int)pid) < 0) {
		path = NULL;
		return nsg_fail(ENOMEM, "out of memory");
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT || errno == ESRCH)
			return nsg_fail(ESRCH, "pid %d does not exist or has exited", (int)pid);
		return nsg_fail(errno, "open %s: %s", path, strerror(errno));
	}
	/* The kernel caps nesting at 32 levels; the bound only guards the loop. */
	for (n = 0; n <= NSGUARD_MAX_DEPTH; n++) {
		int parent = ioctl(fd, NS_GET_PARENT);

		if (parent < 0) {
			if (errno == EPERM) {
				*level = n;
				return 0;
			}
			return nsg_fail(errno, "NS_GET_PARENT on %s: %s", path, strerror(errno));
		}
		close(fd);
		fd = parent;
	}
	return nsg_fail(ELOOP, "%s: user namespace nesting deeper than %d", path,
			NSGUARD_MAX_DEPTH);
}
