/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The hooks' outcome counts (outcomes.c): kept across processes in one file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "lockfile.h"
#include "log.h"

#include "outcomes.h"
#include "test.h"
#include "util.h"

static char dir[64], path[128];

static void fresh(void)
{
	char cmd[160];

	if (dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", dir);
		if (system(cmd) != 0)
			return;
	}
	snprintf(dir, sizeof(dir), "/tmp/nsguard-test-out.XXXXXX");
	if (!mkdtemp(dir))
		dir[0] = '\0';
	snprintf(path, sizeof(path), "%s/hook-outcomes", dir);
}

static void t_missing_is_zero(void)
{
	unsigned long long c[HOOK_RESULT_COUNT][HOOK_REASON_COUNT];

	fresh();
	ASSERT_OK(outcomes_read(path, c));
	for (int r = 0; r < HOOK_RESULT_COUNT; r++)
		for (int w = 0; w < HOOK_REASON_COUNT; w++)
			ASSERT_EQ_U64(0, c[r][w]);
}

static void t_adds(void)
{
	unsigned long long c[HOOK_RESULT_COUNT][HOOK_REASON_COUNT];

	fresh();
	for (int i = 0; i < 3; i++)
		ASSERT_OK(outcomes_add(path, HOOK_GUARDED, HOOK_REASON_NONE));
	ASSERT_OK(outcomes_add(path, HOOK_REFUSED, HOOK_REASON_HOST_CAPS));
	ASSERT_OK(outcomes_add(path, HOOK_OPENED, HOOK_REASON_ATTACH));
	ASSERT_OK(outcomes_read(path, c));
	ASSERT_EQ_U64(3, c[HOOK_GUARDED][HOOK_REASON_NONE]);
	ASSERT_EQ_U64(1, c[HOOK_REFUSED][HOOK_REASON_HOST_CAPS]);
	ASSERT_EQ_U64(1, c[HOOK_OPENED][HOOK_REASON_ATTACH]);
	ASSERT_EQ_U64(0, c[HOOK_REFUSED][HOOK_REASON_SCOPE]);
}

/* Lines nsguard did not write count for nothing, and do not stop the rest. */
static void t_foreign_lines(void)
{
	unsigned long long c[HOOK_RESULT_COUNT][HOOK_REASON_COUNT];
	FILE *f;

	fresh();
	ASSERT_OK(outcomes_add(path, HOOK_GUARDED, HOOK_REASON_NONE));
	f = fopen(path, "a");
	ASSERT_TRUE(f != NULL);
	if (!f)
		return;
	fputs("bogus line\nrefused nosuchreason 7\nrefused scope 5\n", f);
	fclose(f);
	ASSERT_OK(outcomes_add(path, HOOK_REFUSED, HOOK_REASON_SCOPE));
	ASSERT_OK(outcomes_read(path, c));
	ASSERT_EQ_U64(1, c[HOOK_GUARDED][HOOK_REASON_NONE]);
	ASSERT_EQ_U64(6, c[HOOK_REFUSED][HOOK_REASON_SCOPE]);
	/* The rewrite is shorter than the foreign text: cut to nsguard's lines. */
	{
		struct stat sb;

		ASSERT_EQ(0, stat(path, &sb));
		ASSERT_EQ((long long)strlen("guarded none 1\nrefused scope 6\n"), (long long)sb.st_size);
	}
	/* Bytes past a NUL are the old length too: nothing of them survives a rewrite. */
	f = fopen(path, "w");
	ASSERT_TRUE(f != NULL);
	if (!f)
		return;
	fwrite("guarded none 5\0refused state 999\n", 1, 33, f);
	fclose(f);
	ASSERT_OK(outcomes_add(path, HOOK_GUARDED, HOOK_REASON_NONE));
	ASSERT_OK(outcomes_read(path, c));
	ASSERT_EQ_U64(6, c[HOOK_GUARDED][HOOK_REASON_NONE]);
	ASSERT_EQ_U64(0, c[HOOK_REFUSED][HOOK_REASON_STATE]);
}

/* No directory: not counted, no message (a host where nsguard never ran). */
static void t_no_dir(void)
{
	char missing[160];

	fresh();
	snprintf(missing, sizeof(missing), "%s/run/hook-outcomes", dir);
	nsg_clear_error();
	ASSERT_EQ(-ENOENT, outcomes_add(missing, HOOK_REFUSED, HOOK_REASON_CONFIG));
	ASSERT_STREQ("", nsg_last_error());
}

static long since_ms(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000L + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/*
 * Anything that can open the file holds its lock as long as it likes: a read
 * waits OUTCOMES_READ_WAIT_MS, a count OUTCOMES_ADD_WAIT_MS, and each names
 * the holder; the counts are intact once it lets go.
 */
static void t_lock_held(void)
{
	unsigned long long c[HOOK_RESULT_COUNT][HOOK_REASON_COUNT];
	char want[160];
	struct timespec t0;
	long read_ms, add_ms;
	int read_err, add_err;
	pid_t holder;

	fresh();
	ASSERT_OK(outcomes_add(path, HOOK_GUARDED, HOOK_REASON_NONE));
	holder = test_hold_lock(path, LOCK_EX, "nsg-out-holder");
	ASSERT_TRUE(holder > 0);
	snprintf(want, sizeof(want), "by pid %d (nsg-out-holder)", (int)holder);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	read_err = outcomes_read(path, c);
	read_ms = since_ms(&t0);
	if (read_err == -ETIMEDOUT && !strstr(nsg_last_error(), want))
		read_err = -EPROTO;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	add_err = outcomes_add(path, HOOK_REFUSED, HOOK_REASON_SCOPE);
	add_ms = since_ms(&t0);
	if (add_err == -ETIMEDOUT && !strstr(nsg_last_error(), want))
		add_err = -EPROTO;
	test_reap(holder);
	ASSERT_EQ(-ETIMEDOUT, read_err);
	ASSERT_TRUE(read_ms >= OUTCOMES_READ_WAIT_MS && read_ms < OUTCOMES_READ_WAIT_MS + 2000);
	ASSERT_EQ(-ETIMEDOUT, add_err);
	ASSERT_TRUE(add_ms >= OUTCOMES_ADD_WAIT_MS && add_ms < OUTCOMES_ADD_WAIT_MS + 2000);
	ASSERT_OK(outcomes_read(path, c));
	ASSERT_EQ_U64(1, c[HOOK_GUARDED][HOOK_REASON_NONE]);
	ASSERT_EQ_U64(0, c[HOOK_REFUSED][HOOK_REASON_SCOPE]);
}

/* A reader's lock holds off no other reader. */
static void t_readers_share(void)
{
	unsigned long long c[HOOK_RESULT_COUNT][HOOK_REASON_COUNT];
	pid_t holder;
	int err;

	fresh();
	ASSERT_OK(outcomes_add(path, HOOK_GUARDED, HOOK_REASON_NONE));
	holder = test_hold_lock(path, LOCK_SH, "nsg-out-reader");
	ASSERT_TRUE(holder > 0);
	err = outcomes_read(path, c);
	test_reap(holder);
	ASSERT_OK(err);
	ASSERT_EQ_U64(1, c[HOOK_GUARDED][HOOK_REASON_NONE]);
}

static void t_names(void)
{
	ASSERT_STREQ("opened", hook_result_name(HOOK_OPENED));
	ASSERT_STREQ("host-capabilities", hook_reason_name(HOOK_REASON_HOST_CAPS));
	ASSERT_STREQ("?", hook_reason_name(HOOK_REASON_COUNT));
}

void suite_outcomes(void)
{
	mode_t mode = lockfile_mode;

	/* Without CAP_DAC_OVERRIDE a mode-0000 file opens once, at its creation. */
	if (geteuid() != 0)
		lockfile_mode = 0600;
	TEST_CASE("outcomes", "missing-is-zero", t_missing_is_zero);
	TEST_CASE("outcomes", "adds", t_adds);
	TEST_CASE("outcomes", "foreign-lines", t_foreign_lines);
	TEST_CASE("outcomes", "no-dir-not-counted", t_no_dir);
	TEST_CASE("outcomes", "names", t_names);
	TEST_CASE("outcomes", "lock-held-bounded", t_lock_held);
	TEST_CASE("outcomes", "readers-share", t_readers_share);
	lockfile_mode = mode;
	fresh(); /* removes the last one */
	rmdir(dir);
}
