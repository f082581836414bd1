// SPDX-License-Identifier: GPL-2.0-or-later
/* nsguard's lock files: created closed, waited for with a bound, holders named (lockfile.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "../../bpf/nsguard.h"
#include "evlog.h"
#include "fileio.h"
#include "lockfile.h"
#include "log.h"
#include "outcomes.h"
#include "util.h"

mode_t lockfile_mode = LOCKFILE_MODE;

int lockfile_open(const char *path, bool mkdir)
{
	const int flags = O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW;
	cleanup_free char *dir = NULL;
	int fd, err;

	/* Almost always there: one open.  A new file gets lockfile_mode (no umask bit adds). */
	fd = open(path, flags, lockfile_mode);
	if (fd < 0 && errno == ENOENT && mkdir) {
		dir = strdup(path);
		if (!dir)
			return nsg_fail(ENOMEM, "out of memory");
		if (strrchr(dir, '/'))
			*strrchr(dir, '/') = '\0';
		err = mkdir_p(dir[0] ? dir : "/", NSGUARD_DIR_MODE);
		if (err)
			return err;
		fd = open(path, flags, lockfile_mode);
	}
	if (fd < 0)
		return nsg_fail(errno, "cannot open %s: %s", path, strerror(errno));
	return fd;
}

int lockfile_parse_line(const char *line, struct lock_line *out)
{
	char kind[16], how[16], rw[16];
	const char *p;
	int id, n = 0, pid;

	memset(out, 0, sizeof(*out));
	if (sscanf(line, "%d:%n", &id, &n) != 1 || n == 0)
		return -EINVAL;
	p = line + n;
	while (*p == ' ')
		p++;
	if (strncmp(p, "->", 2) == 0) {
		out->blocked = true;
		p += 2;
	}
	if (sscanf(p, "%15s %15s %15s %d %x:%x:%llu", kind, how, rw, &pid, &out->major,
		   &out->minor, &out->ino) != 7)
		return -EINVAL;
	if (strcmp(rw, "WRITE") && strcmp(rw, "READ") && strcmp(rw, "UNLCK"))
		return -EINVAL;
	if (strlen(kind) >= sizeof(out->kind))
		return -EINVAL;
	strcpy(out->kind, kind);
	out->write = strcmp(rw, "WRITE") == 0;
	out->pid = pid;
	return 0;
}

/* "pid P (COMM)" into buf; false when P has no comm to read (exited). comm is
 * the process's to choose: printable ASCII only, so the message stays one line. */
static bool name_pid(const char *proc, pid_t pid, char *buf, size_t len)
{
	char path[64], comm[64] = "";
	cleanup_close int fd = -1;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%d/comm", proc, (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, comm, sizeof(comm) - 1);
	if (n <= 0)
		return false;
	comm[n] = '\0';
	comm[strcspn(comm, "\n")] = '\0';
	for (char *c = comm; *c; c++)
		if (*c < 0x20 || *c > 0x7e)
			*c = '?';
	snprintf(buf, len, "pid %d (%s)", (int)pid, comm);
	return true;
}

static void append(char *buf, size_t len, const char *s)
{
	size_t used = strnlen(buf, len);

	if (used < len)
		snprintf(buf + used, len - used, "%s", s);
}

/* The processes (not us) that have (dev, ino) open: "pid 9 (sleep), ...", at most 4. */
static void openers(const char *proc, dev_t dev, ino_t ino, char *buf, size_t len)
{
	cleanup_closedir DIR *d = opendir(proc);
	struct dirent *de;
	int found = 0;

	buf[0] = '\0';
	while (d && found < 4 && (de = readdir(d))) {
		cleanup_closedir DIR *fds = NULL;
		char path[300], who[128];
		struct dirent *fe;
		pid_t pid = atoi(de->d_name);

		if (pid <= 0 || pid == getpid())
			continue;
		snprintf(path, sizeof(path), "%s/%s/fd", proc, de->d_name);
		fds = opendir(path);
		while (fds && (fe = readdir(fds))) {
			struct stat st;

			if (fe->d_name[0] == '.' ||
			    fstatat(dirfd(fds), fe->d_name, &st, 0) < 0 || st.st_dev != dev ||
			    st.st_ino != ino)
				continue;
			if (!name_pid(proc, pid, who, sizeof(who)))
				break;
			append(buf, len, found++ ? ", " : "");
			append(buf, len, who);
			break;
		}
	}
}

void lockfile_holders(const char *proc, dev_t dev, ino_t ino, char *buf, size_t len)
{
	cleanup_free char *text = NULL;
	cleanup_close int fd = -1;
	char path[256], who[160], open_in[512];
	pid_t seen[8];
	size_t n = 0, tlen = 0;
	bool looked = false;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "%s/locks", proc);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	/* A node with many locks: the first 1 MiB names the holders of ours, or nobody. */
	if (fd >= 0 && read_capped(fd, 1 << 20, &text, &tlen) == -EFBIG)
		text = NULL;
	for (char *line = text, *next; line && *line && n < ARRAY_SIZE(seen); line = next) {
		struct lock_line l;
		bool dup = false;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (lockfile_parse_line(line, &l) < 0 || l.blocked || l.major != major(dev) ||
		    l.minor != minor(dev) || l.ino != (unsigned long long)ino ||
		    (l.pid > 0 && l.pid == getpid()))
			continue;
		for (size_t i = 0; i < n; i++)
			dup |= seen[i] == l.pid;
		if (dup)
			continue;
		seen[n] = l.pid;
		append(buf, len, n++ ? ", " : "");
		if (l.pid > 0 && name_pid(proc, l.pid, who, sizeof(who))) {
			append(buf, len, who);
			continue;
		}
		/* The lock stays with the open file: whoever still has it open holds it. */
		if (!looked)
			openers(proc, dev, ino, open_in, sizeof(open_in));
		looked = true;
		if (l.pid > 0)
			snprintf(who, sizeof(who), "pid %d (exited", (int)l.pid);
		else if (l.pid < 0)
			snprintf(who, sizeof(who), "an open file description (%s lock", l.kind);
		else
			snprintf(who, sizeof(who), "a process in another pid namespace (%s lock",
				 l.kind);
		append(buf, len, who);
		append(buf, len, open_in[0] ? "; the file is open in " : ")");
		if (open_in[0]) {
			append(buf, len, open_in);
			append(buf, len, ")");
		}
	}
	if (!buf[0])
		snprintf(buf, len, "an unknown process");
}

/* ms as "20 s" or "0.5 s". */
static void seconds(long ms, char *buf, size_t len)
{
	if (ms % 1000)
		snprintf(buf, len, "%.1f s", ms / 1000.0);
	else
		snprintf(buf, len, "%ld s", ms / 1000);
}

int lockfile_wait(int fd, const char *path, int op, long wait_ms, const char *what)
{
	const struct timespec pause = { .tv_nsec = 10 * 1000 * 1000 };
	struct timespec start, now;
	char who[1024], waited[32];
	struct stat st;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		if (flock(fd, op | LOCK_NB) == 0)
			return 0;
		if (errno != EWOULDBLOCK && errno != EINTR)
			return nsg_fail(errno, "cannot lock %s: %s", path, strerror(errno));
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - start.tv_sec) * 1000L + (now.tv_nsec - start.tv_nsec) / 1000000 >=
		    wait_ms)
			break;
		nanosleep(&pause, NULL);
	}
	if (fstat(fd, &st) == 0)
		lockfile_holders("/proc", st.st_dev, st.st_ino, who, sizeof(who));
	else
		snprintf(who, sizeof(who), "an unknown process");
	seconds(wait_ms, waited, sizeof(waited));
	return nsg_fail(ETIMEDOUT, "%s has been held for %s by %s; %s", path, waited, who, what);
}

/* nsguard's state under the run directory: what lockfile_tighten sets. */
static const struct {
	const char *path;
	mode_t mode; /* with its type */
} state_modes[] = {
	{ NSGUARD_RUN_DIR, S_IFDIR | NSGUARD_DIR_MODE },
	{ NSGUARD_RECORD_DIR, S_IFDIR | NSGUARD_DIR_MODE },
	{ NSGUARD_RECORD_DIR "/by-cgroup-id", S_IFDIR | NSGUARD_DIR_MODE },
	{ NSGUARD_RUN_DIR "/gone", S_IFDIR | NSGUARD_DIR_MODE },
	{ EVLOG_DIR, S_IFDIR | NSGUARD_DIR_MODE },
	{ NSGUARD_LOCK_FILE, S_IFREG | LOCKFILE_MODE },
	{ NSGUARD_OUTCOMES_FILE, S_IFREG | LOCKFILE_MODE },
	{ EVLOG_LOCK, S_IFREG | LOCKFILE_MODE },
};

int lockfile_tighten(const char *root)
{
	int changed = 0, err = 0;

	for (size_t i = 0; i < ARRAY_SIZE(state_modes); i++) {
		mode_t want = state_modes[i].mode;
		bool dir = S_ISDIR(want);
		cleanup_close int fd = -1;
		char path[512];
		struct stat st;

		snprintf(path, sizeof(path), "%s%s", root, state_modes[i].path);
		/* Not followed: a link or a FIFO in its place is not ours to change. */
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK |
					(dir ? O_DIRECTORY : 0));
		if (fd < 0 && (errno == ENOENT || errno == ENOTDIR || errno == ELOOP))
			continue;
		if (fd < 0) {
			err = err ?: nsg_fail(errno, "%s: %s", path, strerror(errno));
			continue;
		}
		if (fstat(fd, &st) < 0 || (st.st_mode & S_IFMT) != (want & S_IFMT) ||
		    st.st_uid != geteuid() || (st.st_mode & 07777) == (want & 07777))
			continue;
		if (fchmod(fd, want & 07777) < 0) {
			err = err ?: nsg_fail(errno, "chmod %s: %s", path, strerror(errno));
			continue;
		}
		changed++;
	}
	return err ?: changed;
}
