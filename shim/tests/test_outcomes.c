/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The hooks' outcome counts (outcomes.c): kept across processes in one file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

static void t_names(void)
{
	ASSERT_STREQ("opened", hook_result_name(HOOK_OPENED));
	ASSERT_STREQ("host-capabilities", hook_reason_name(HOOK_REASON_HOST_CAPS));
	ASSERT_STREQ("?", hook_reason_name(HOOK_REASON_COUNT));
}

void suite_outcomes(void)
{
	TEST_CASE("outcomes", "missing-is-zero", t_missing_is_zero);
	TEST_CASE("outcomes", "adds", t_adds);
	TEST_CASE("outcomes", "foreign-lines", t_foreign_lines);
	TEST_CASE("outcomes", "no-dir-not-counted", t_no_dir);
	TEST_CASE("outcomes", "names", t_names);
	fresh(); /* removes the last one */
	rmdir(dir);
}
