#!/bin/bash
# The seed series' userns_create behaviour, verified in the booted guest
# kernel with our own BPF-LSM programs (integration/guest/seed_*.bpf.c via build/seedtest):
#   1. a program's chosen errno reaches the caller of unshare()/clone();
#   2. a global sleepable lsm.s program attaches and runs;
#   3. the seed's deny_namespace cases (deny unless CAP_SYS_ADMIN in the
#      initial user namespace).
# The SELinux user_namespace { create } case is integration/tests/selinux.sh
# (its own boot: enforcing must not leak into the other tests).
. "$(dirname "$0")/lib.sh"
in_guest

SEEDTEST=${SEEDTEST:-$NSG_REPO/build/seedtest}
if [ ! -x "$SEEDTEST" ]; then
	fail "seed/build" "$SEEDTEST missing; run 'make $SEEDTEST' on the host"
	exit 1
fi

# Each case runs CMD through expect (lib.sh): seedtest prints selftest-style
# CASE:PASS/FAIL lines and exits 0 only if all held.
# 1. Error propagation, one line per errno (set through rodata at load).
for e in EPERM EACCES ENOSPC E2BIG; do
	expect "seed/errno-$e" 0 "$SEEDTEST" errno "$e"
done

# 2. The sleepable attach.
expect "seed/sleepable-attach" 0 "$SEEDTEST" sleepable 3

# 3. deny_namespace.  Each step runs `seedtest try-unshare`, which exits with
# the errno unshare(CLONE_NEWUSER) failed with (0 = created).
unpriv=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
nosysadmin=(setpriv --inh-caps=-sys_admin --bounding-set=-sys_admin --)

# (a) No program attached: an unprivileged process creates a user namespace.
expect "seed/deny-namespace-unprivileged-no-program" 0 \
	"${unpriv[@]}" "$SEEDTEST" try-unshare
# (b) Attached: CAP_SYS_ADMIN in the initial namespace (plain root) succeeds.
expect "seed/deny-namespace-cap-sys-admin-allowed" 0 \
	"$SEEDTEST" run -- "$SEEDTEST" try-unshare
# (c) Attached: without CAP_SYS_ADMIN, EPERM (1): as uid 65534, and as root
# with CAP_SYS_ADMIN dropped from the bounding and inheritable sets (exec then
# leaves it out of the effective set).
expect "seed/deny-namespace-unprivileged-eperm" 1 \
	"$SEEDTEST" run -- "${unpriv[@]}" "$SEEDTEST" try-unshare
expect "seed/deny-namespace-root-without-cap-sys-admin-eperm" 1 \
	"$SEEDTEST" run -- "${nosysadmin[@]}" "$SEEDTEST" try-unshare
# The refusals were the program's: detached, the same process succeeds again.
expect "seed/deny-namespace-after-detach" 0 \
	"${unpriv[@]}" "$SEEDTEST" try-unshare

# Nothing of ours may outlive the cases: global LSM programs would change the
# behaviour of every later test in this boot.
left=$(ls -d /sys/fs/cgroup/seedtest-* 2>/dev/null; bpftool prog show 2>/dev/null | grep -o 'name seed_[a-z_]*')
if [ -z "$left" ]; then
	pass "seed/cleanup"
else
	fail "seed/cleanup" "left behind: $(echo "$left" | tr '\n' ' ')"
fi
exit 0
