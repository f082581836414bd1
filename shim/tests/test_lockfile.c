/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Lock files (lockfile.c): /proc/locks read, bounded waits, holders named, modes. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lockfile.h"
#include "log.h"
#include "test.h"
#include "util.h"

static char dir[64];

static void fresh(void)
{
	char cmd[160];

	if (dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", dir);
		if (system(cmd) != 0)
			return;
	}
	snprintf(dir, sizeof(dir), "/tmp/nsguard-test-lock.XXXXXX");
	if (!mkdtemp(dir))
		dir[0] = '\0';
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void t_parse(void)
{
	struct lock_line l;

	/* A flock, written, as a file on an ext4 disk shows it. */
	ASSERT_OK(lockfile_parse_line("1: FLOCK  ADVISORY  WRITE 1234 08:01:1311234 0 EOF", &l));
	ASSERT_TRUE(!l.blocked);
	ASSERT_STREQ("FLOCK", l.kind);
	ASSERT_TRUE(l.write);
	ASSERT_EQ(1234, l.pid);
	ASSERT_EQ(8, l.major);
	ASSERT_EQ(1, l.minor);
	ASSERT_EQ_U64(1311234, l.ino);
	/* Major and minor are hex, the inode decimal. */
	ASSERT_OK(lockfile_parse_line("12: POSIX  ADVISORY  READ 99 fd:1a:42 0 EOF", &l));
	ASSERT_STREQ("POSIX", l.kind);
	ASSERT_TRUE(!l.write);
	ASSERT_EQ(0xfd, l.major);
	ASSERT_EQ(0x1a, l.minor);
	ASSERT_EQ_U64(42, l.ino);
	/* OFD locks show pid -1. */
	ASSERT_OK(lockfile_parse_line("3: OFDLCK ADVISORY  WRITE -1 00:2c:7 0 EOF", &l));
	ASSERT_STREQ("OFDLCK", l.kind);
	ASSERT_EQ(-1, l.pid);
	ASSERT_EQ(0x2c, l.minor);
	/* A waiter ("->") holds nothing. */
	ASSERT_OK(lockfile_parse_line("1: -> FLOCK  ADVISORY  WRITE 555 08:01:1311234 0 EOF", &l));
	ASSERT_TRUE(l.blocked);
	ASSERT_EQ(555, l.pid);
	ASSERT_OK(lockfile_parse_line("4: LEASE  BREAKING  UNLCK 77 00:1f:9 0 EOF", &l));
	ASSERT_TRUE(!l.write);
	/* Not lines of /proc/locks. */
	ASSERT_EQ(-EINVAL, lockfile_parse_line("", &l));
	ASSERT_EQ(-EINVAL, lockfile_parse_line("FLOCK ADVISORY WRITE 1 08:01:2 0 EOF", &l));
	ASSERT_EQ(-EINVAL, lockfile_parse_line("1: FLOCK ADVISORY WRITE 1 <none>:0 0 EOF", &l));
	ASSERT_EQ(-EINVAL, lockfile_parse_line("1: FLOCK ADVISORY SOMETHING 1 08:01:2 0 EOF", &l));
}

/* A fixture procfs: locks, comms, and an fd that is a link to a real file. */
static void t_holders_fixture(void)
{
	char proc[128], path[640], target[192], buf[1024];
	struct stat st;

	fresh();
	snprintf(proc, sizeof(proc), "%s/proc", dir);
	snprintf(target, sizeof(target), "%s/lock", dir);
	put(target, "");
	ASSERT_TRUE(stat(target, &st) == 0);
	snprintf(path, sizeof(path), "mkdir -p %s/100 %s/101 %s/300/fd %s/301/fd", proc, proc, proc,
		 proc);
	ASSERT_EQ(0, system(path));
	snprintf(path, sizeof(path), "%s/100/comm", proc);
	put(path, "sleep\n");
	/* A comm is the process's to choose: it never breaks the line. */
	snprintf(path, sizeof(path), "%s/101/comm", proc);
	put(path, "ev\til\x1b[1m\n");
	snprintf(path, sizeof(path), "%s/300/comm", proc);
	put(path, "keeper\n");
	snprintf(path, sizeof(path), "%s/300/fd/7", proc);
	ASSERT_TRUE(symlink(target, path) == 0);
	snprintf(path, sizeof(path), "%s/301/comm", proc);
	put(path, "other\n");
	snprintf(path, sizeof(path), "%s/301/fd/3", proc);
	ASSERT_TRUE(symlink("/", path) == 0);

	/* Holders of another file, and a waiter of ours, are not named. */
	snprintf(path, sizeof(path), "%s/locks", proc);
	{
		char text[1024];

		snprintf(text, sizeof(text),
			 "1: POSIX  ADVISORY  WRITE 101 %02x:%02x:%llu 0 EOF\n"
			 "1: -> FLOCK  ADVISORY  WRITE 101 %02x:%02x:%llu 0 EOF\n"
			 "2: FLOCK  ADVISORY  READ 100 %02x:%02x:%llu 0 EOF\n"
			 "3: FLOCK  ADVISORY  READ 100 %02x:%02x:%llu 0 EOF\n",
			 major(st.st_dev), minor(st.st_dev), (unsigned long long)st.st_ino + 1,
			 major(st.st_dev), minor(st.st_dev), (unsigned long long)st.st_ino,
			 major(st.st_dev), minor(st.st_dev), (unsigned long long)st.st_ino,
			 major(st.st_dev), minor(st.st_dev), (unsigned long long)st.st_ino);
		put(path, text);
	}
	lockfile_holders(proc, st.st_dev, st.st_ino, buf, sizeof(buf));
	ASSERT_STREQ("pid 100 (sleep)", buf);
	/* Its comm, made printable. */
	lockfile_holders(proc, st.st_dev, st.st_ino + 1, buf, sizeof(buf));
	ASSERT_STREQ("pid 101 (ev?il?[1m)", buf);
	/* Same inode, other device: not ours. */
	lockfile_holders(proc, makedev(major(st.st_dev) + 1, minor(st.st_dev)), st.st_ino, buf,
			 sizeof(buf));
	ASSERT_STREQ("an unknown process", buf);

	/* The locker exited (pid 200 has no comm), an OFD lock, and one from another pid namespace:
	 * named by who has the file open. */
	{
		char text[1024];

		snprintf(text, sizeof(text),
			 "1: FLOCK  ADVISORY  WRITE 200 %02x:%02x:%llu 0 EOF\n"
			 "2: OFDLCK ADVISORY  READ -1 %02x:%02x:%llu 0 EOF\n"
			 "3: POSIX  ADVISORY  READ 0 %02x:%02x:%llu 0 EOF\n",
			 major(st.st_dev), minor(st.st_dev), (unsigned long long)st.st_ino,
			 major(st.st_dev), minor(st.st_dev), (unsigned long long)st.st_ino,
			 major(st.st_dev), minor(st.st_dev), (unsigned long long)st.st_ino);
		put(path, text);
	}
	lockfile_holders(proc, st.st_dev, st.st_ino, buf, sizeof(buf));
	ASSERT_STREQ("pid 200 (exited; the file is open in pid 300 (keeper)), "
		     "an open file description (OFDLCK lock; the file is open in pid 300 (keeper)), "
		     "a process in another pid namespace (POSIX lock; the file is open in pid 300 "
		     "(keeper))",
		     buf);
	/* Nobody has it open any more. */
	snprintf(path, sizeof(path), "%s/300/fd/7", proc);
	ASSERT_TRUE(unlink(path) == 0);
	lockfile_holders(proc, st.st_dev, st.st_ino, buf, sizeof(buf));
	ASSERT_SUBSTR("pid 200 (exited), ", buf);
	/* No /proc/locks at all. */
	snprintf(path, sizeof(path), "%s/locks", proc);
	ASSERT_TRUE(unlink(path) == 0);
	lockfile_holders(proc, st.st_dev, st.st_ino, buf, sizeof(buf));
	ASSERT_STREQ("an unknown process", buf);
}

/*
 * A child that locks path (op) through its own descriptor (read-only for
 * LOCK_SH: a read lock needs no write access) under the name comm, and holds
 * it until killed; returns its pid once it holds it.
 */
pid_t test_hold_lock(const char *path, int op, const char *comm)
{
	int ready[2];
	char c;
	pid_t pid;

	if (pipe(ready) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		int fd = open(path, op == LOCK_SH ? O_RDONLY : O_RDWR);

		prctl(PR_SET_NAME, comm);
		if (fd < 0 || flock(fd, op) < 0)
			_exit(1);
		if (write(ready[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(ready[1]);
	if (pid < 0 || read(ready[0], &c, 1) != 1) {
		close(ready[0]);
		return -1;
	}
	close(ready[0]);
	return pid;
}

void test_reap(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

static long since_ms(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000L + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* A real flock held by a child: the wait ends at its bound and names the child. */
static void t_wait_bounded(void)
{
	char path[128], want[256];
	cleanup_close int fd = -1;
	struct timespec t0;
	pid_t holder;
	long ms;

	fresh();
	snprintf(path, sizeof(path), "%s/lock", dir);
	fd = lockfile_open(path, false);
	ASSERT_TRUE(fd >= 0);
	holder = test_hold_lock(path, LOCK_EX, "nsg-holder");
	ASSERT_TRUE(holder > 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	nsg_clear_error();
	int err = lockfile_wait(fd, path, LOCK_EX, 300, "not attaching");
	ms = since_ms(&t0);
	test_reap(holder);
	ASSERT_EQ(-ETIMEDOUT, err);
	ASSERT_TRUE(ms >= 300 && ms < 3000);
	snprintf(want, sizeof(want), "%s has been held for 0.3 s by pid %d (nsg-holder); not attaching",
		 path, (int)holder);
	ASSERT_STREQ(want, nsg_last_error());
	/* Let go: the next wait takes it at once. */
	ASSERT_OK(lockfile_wait(fd, path, LOCK_EX, 300, "x"));
}

/* A read lock through a read-only descriptor holds off a writer, not another reader. */
static void t_wait_shared_readonly(void)
{
	char path[128], want[128];
	cleanup_close int fd = -1;
	pid_t holder;
	int err;

	fresh();
	snprintf(path, sizeof(path), "%s/lock", dir);
	fd = lockfile_open(path, false);
	ASSERT_TRUE(fd >= 0);
	holder = test_hold_lock(path, LOCK_SH, "nsg-reader");
	ASSERT_TRUE(holder > 0);
	nsg_clear_error();
	err = lockfile_wait(fd, path, LOCK_EX, 100, "given up");
	snprintf(want, sizeof(want), "held for 0.1 s by pid %d (nsg-reader); given up", (int)holder);
	if (err == -ETIMEDOUT && strstr(nsg_last_error(), want))
		err = lockfile_wait(fd, path, LOCK_SH, 100, "given up");
	else
		err = -EPROTO;
	test_reap(holder);
	ASSERT_OK(err);
}

/* The locker hands its descriptor on and exits: the process keeping it open is named. */
static void t_wait_handed_on(void)
{
	char path[128], want[192];
	cleanup_close int fd = -1;
	pid_t locker, keeper = -1;
	int ready[2], err;

	fresh();
	snprintf(path, sizeof(path), "%s/lock", dir);
	fd = lockfile_open(path, false);
	ASSERT_TRUE(fd >= 0);
	ASSERT_TRUE(pipe(ready) == 0);
	locker = fork();
	if (locker == 0) {
		int lfd = open(path, O_RDONLY);

		/* Named before the fork: the keeper is named so from its start. */
		prctl(PR_SET_NAME, "nsg-keeper");
		if (lfd < 0 || flock(lfd, LOCK_SH) < 0)
			_exit(1);
		keeper = fork();
		if (keeper == 0) {
			pause();
			_exit(0);
		}
		if (keeper < 0 || write(ready[1], &keeper, sizeof(keeper)) != sizeof(keeper))
			_exit(1);
		_exit(0);
	}
	close(ready[1]);
	waitpid(locker, NULL, 0);
	if (read(ready[0], &keeper, sizeof(keeper)) != sizeof(keeper))
		keeper = -1;
	close(ready[0]);
	ASSERT_TRUE(keeper > 0);
	nsg_clear_error();
	err = lockfile_wait(fd, path, LOCK_EX, 100, "x");
	kill(keeper, SIGKILL);
	ASSERT_EQ(-ETIMEDOUT, err);
	snprintf(want, sizeof(want), "by pid %d (exited; the file is open in pid %d (nsg-keeper)); x",
		 (int)locker, (int)keeper);
	ASSERT_MSG(want);
}

static void t_open_modes(void)
{
	char path[160];
	struct stat st;
	int fd;

	fresh();
	snprintf(path, sizeof(path), "%s/run/nsguard/lock", dir);
	/* No directory: made with mkdir, not without. */
	ASSERT_ERR(-ENOENT, lockfile_open(path, false));
	ASSERT_MSG("cannot open ");
	umask(0);
	fd = lockfile_open(path, true);
	umask(022);
	ASSERT_TRUE(fd >= 0);
	close(fd);
	ASSERT_TRUE(stat(path, &st) == 0);
	ASSERT_EQ(lockfile_mode, st.st_mode & 07777);
	snprintf(path, sizeof(path), "%s/run/nsguard", dir);
	ASSERT_TRUE(stat(path, &st) == 0);
	ASSERT_EQ(0700, st.st_mode & 07777);
	snprintf(path, sizeof(path), "%s/run", dir);
	ASSERT_TRUE(stat(path, &st) == 0);
	ASSERT_EQ(0700, st.st_mode & 07777);
	/* Not through a link. */
	snprintf(path, sizeof(path), "%s/link", dir);
	ASSERT_TRUE(symlink("/etc/passwd", path) == 0);
	ASSERT_ERR(-ELOOP, lockfile_open(path, false));
}

/* State an older build left with looser modes: tightened once, left alone after. */
static void t_tighten(void)
{
	char cmd[1024], path[256];
	struct stat st;
	const struct {
		const char *path;
		mode_t want;
	} want[] = {
		{ "/run/nsguard", 0700 },
		{ "/run/nsguard/containers", 0700 },
		{ "/run/nsguard/containers/by-cgroup-id", 0700 },
		{ "/run/nsguard/gone", 0700 },
		{ "/run/nsguard/events", 0700 },
		{ "/run/nsguard/lock", LOCKFILE_MODE },
		{ "/run/nsguard/hook-outcomes", LOCKFILE_MODE },
		{ "/run/nsguard/events/collector.lock", LOCKFILE_MODE },
	};

	fresh();
	snprintf(cmd, sizeof(cmd),
		 "cd %s && mkdir -p run/nsguard/containers/by-cgroup-id run/nsguard/gone "
		 "run/nsguard/events && chmod 755 run/nsguard run/nsguard/containers "
		 "run/nsguard/containers/by-cgroup-id run/nsguard/gone run/nsguard/events && "
		 "touch run/nsguard/lock run/nsguard/hook-outcomes run/nsguard/containers/a.json && "
		 "chmod 600 run/nsguard/lock run/nsguard/hook-outcomes && "
		 "touch run/elsewhere && chmod 644 run/elsewhere && "
		 "ln -s ../elsewhere run/nsguard/events/collector.lock",
		 dir);
	ASSERT_EQ(0, system(cmd));
	snprintf(path, sizeof(path), "%s", dir);
	ASSERT_EQ(7, lockfile_tighten(path));
	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		snprintf(path, sizeof(path), "%s%s", dir, want[i].path);
		ASSERT_TRUE(lstat(path, &st) == 0);
		if (S_ISLNK(st.st_mode))
			continue; /* the link: checked below */
		if ((st.st_mode & 07777) != want[i].want)
			FAIL_RET("%s: mode %o, want %o", want[i].path, st.st_mode & 07777, want[i].want);
	}
	/* A link in a lock file's place is not followed; records are not lock files. */
	snprintf(path, sizeof(path), "%s/run/elsewhere", dir);
	ASSERT_TRUE(stat(path, &st) == 0);
	ASSERT_EQ(0644, st.st_mode & 07777);
	snprintf(path, sizeof(path), "%s/run/nsguard/containers/a.json", dir);
	ASSERT_TRUE(stat(path, &st) == 0);
	ASSERT_EQ(0644, st.st_mode & 07777);
	/* Done: nothing to change. */
	ASSERT_EQ(0, lockfile_tighten(dir));
	/* Nothing there at all: nothing to do, no failure. */
	ASSERT_EQ(0, lockfile_tighten("/nonexistent"));
}

void suite_lockfile(void)
{
	mode_t mode = lockfile_mode;

	/* Without CAP_DAC_OVERRIDE a mode-0000 file opens once, at its creation. */
	if (geteuid() != 0)
		lockfile_mode = 0600;
	TEST_CASE("lockfile", "parse-proc-locks", t_parse);
	TEST_CASE("lockfile", "holders-named", t_holders_fixture);
	TEST_CASE("lockfile", "wait-bounded-names-holder", t_wait_bounded);
	TEST_CASE("lockfile", "read-lock-on-read-only-fd-blocks-writer", t_wait_shared_readonly);
	TEST_CASE("lockfile", "locker-exited-keeper-named", t_wait_handed_on);
	TEST_CASE("lockfile", "created-closed", t_open_modes);
	TEST_CASE("lockfile", "tighten-older-state", t_tighten);
	lockfile_mode = mode;
	fresh();
	rmdir(dir);
}
