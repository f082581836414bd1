// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * noop: the exec floor.  Built -static by integration/bench.mk and exec'd
 * (by timecmd) from the same file system as nsguard, next to nsguard's hooks:
 * what starting and reaping any static process costs there.
 */
int main(void)
{
	return 0;
}
