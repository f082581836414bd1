#!/bin/bash
# The seed series' SELinux check, user_namespace { create }, in the booted
# guest kernel with a minimal policy of our own
# (integration/guest/selinux/nsguard-test.cil): with SELinux enforcing, a
# domain allowed the permission creates a user namespace and a domain without
# it gets EACCES.
#
# Not named NN-*.sh on purpose: loading a policy and enforcing cannot be
# undone, so this runs in its own guest boot (make check-selinux):
#   integration/vm-run -- integration/tests/selinux.sh
. "$(dirname "$0")/lib.sh"
in_guest

SEEDTEST=${SEEDTEST:-$NSG_REPO/build/seedtest}
CIL=$NSG_REPO/integration/guest/selinux/nsguard-test.cil
SELINUXFS=/sys/fs/selinux
ok_ctx=u:r:ns_ok_t
denied_ctx=u:r:ns_denied_t

# Anything we cannot even try is a skip of every case, with the reason.
cases="seed/selinux-policy-load seed/selinux-enforcing seed/selinux-domain
seed/selinux-userns-create-allowed seed/selinux-userns-create-eacces
seed/selinux-avc-denial-logged seed/selinux-permissive-allows"
skip_all() {
	for c in $cases; do skip "$c" "$1"; done
	exit 0
}
lsms=$(cat /sys/kernel/security/lsm 2>/dev/null)
case ",$lsms," in *,selinux,*) ;; *) skip_all "SELinux is not active (LSMs: '$lsms')" ;; esac
grep -q " $SELINUXFS selinuxfs " /proc/mounts || skip_all "selinuxfs is not mounted at $SELINUXFS"
[ -x "$SEEDTEST" ] || skip_all "$SEEDTEST missing; run 'make $SEEDTEST' on the host"
command -v secilc >/dev/null || skip_all "secilc not installed (make deps)"
if [ "$(cat $SELINUXFS/enforce)" != 0 ]; then
	skip_all "SELinux is already enforcing before the test policy was loaded"
fi

# --- policy: compile, then load it in one write(2) ---
work=$(mktemp -d)
policy=$work/policy.33
if ! out=$(secilc -M false -c 33 -o "$policy" -f /dev/null "$CIL" 2>&1); then
	# A policy that does not compile is our bug, not a missing feature.
	fail "seed/selinux-policy-load" "secilc: $(echo "$out" | tail -n 3 | tr '\n' ' ')"
	exit 1
fi
size=$(stat -c %s "$policy")
# dd with one block larger than the file: one read, one write.
if out=$(dd if="$policy" of=$SELINUXFS/load bs=1M count=1 2>&1); then
	pass "seed/selinux-policy-load"
else
	# Every case skips with the kernel's own words on why.
	skip_all "the test policy did not load: writing the ${size}-byte policy to $SELINUXFS/load: $(echo "$out" | head -n 1); kernel: $(dmesg | grep 'SELinux:' | tail -n 3 | tr '\n' ' ')"
fi

echo 1 >$SELINUXFS/enforce
if [ "$(cat $SELINUXFS/enforce)" = 1 ]; then
	pass "seed/selinux-enforcing"
else
	fail "seed/selinux-enforcing" "$SELINUXFS/enforce reads '$(cat $SELINUXFS/enforce)' after writing 1"
fi

# incon CONTEXT CMD...: run CMD in the SELinux domain CONTEXT by setting the
# exec context, as runcon does (coreutils' runcon refuses to run without
# /etc/selinux/config, which the host root the guest boots from lacks).  The
# policy lets kernel_t transition to both test domains.
incon() {
	local ctx=$1
	shift
	(printf %s "$ctx" >/proc/self/attr/exec && exec "$@")
}

ctx=$(incon "$ok_ctx" cat /proc/self/attr/current 2>&1 | tr -d '\0')
ctx2=$(incon "$denied_ctx" cat /proc/self/attr/current 2>&1 | tr -d '\0')
if [ "$ctx" = "$ok_ctx" ] && [ "$ctx2" = "$denied_ctx" ]; then
	pass "seed/selinux-domain"
else
	fail "seed/selinux-domain" "exec in $ok_ctx / $denied_ctx ran as '$ctx' / '$ctx2'"
fi

# expect NAME WANT CMD... (lib.sh): CMD's exit status must be WANT.
# try-unshare exits with unshare(CLONE_NEWUSER)'s errno: 0 ok, 13 EACCES.
expect "seed/selinux-userns-create-allowed" 0 incon "$ok_ctx" "$SEEDTEST" try-unshare
dmesg -C 2>/dev/null
expect "seed/selinux-userns-create-eacces" 13 incon "$denied_ctx" "$SEEDTEST" try-unshare

# The refusal was SELinux's: the AVC names the domain and the class.
sleep 0.2
avc=$(dmesg 2>/dev/null | grep 'avc:  denied  { create }' | grep 'tclass=user_namespace')
if echo "$avc" | grep -q "scontext=$denied_ctx"; then
	pass "seed/selinux-avc-denial-logged"
	echo "  | $(echo "$avc" | head -n 1)"
else
	fail "seed/selinux-avc-denial-logged" "no 'avc: denied { create }' for $denied_ctx tclass=user_namespace in dmesg: $(dmesg | tail -n 3 | tr '\n' ' ')"
fi

# Permissive: the same domain is only audited, so enforcement caused EACCES.
echo 0 >$SELINUXFS/enforce
expect "seed/selinux-permissive-allows" 0 incon "$denied_ctx" "$SEEDTEST" try-unshare
rm -rf "$work"
exit 0
