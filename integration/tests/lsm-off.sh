#!/bin/bash
# Run in a guest booted WITHOUT bpf in lsm= (make check-lsm-off:
# vm-run --append lsm=selinux).  The program may even load and attach there,
# but the kernel never calls it, so nsguard must not claim to guard anything:
# fail-closed refuses the container, fail-mode open runs it with a warning.
set -u
. "$(dirname "$0")/lib-ct.sh"
ct_init

S=$CT_SUFFIX

lsms=$(cat /sys/kernel/security/lsm 2>/dev/null)
case ",$lsms," in
*,bpf,*)
	fail "lsm-off/setup" "bpf is in /sys/kernel/security/lsm ('$lsms'): boot with --append lsm=selinux"
	exit 1
	;;
esac
pass "lsm-off/setup"

case_check() {
	CT_OUT=$("$NSGUARD" check 2>&1)
	CT_RC=$?
	want_run "nsguard check" 1 "*missing*lsm*" || return 1
}
ct_case lsm-off/check-says-missing case_check

case_closed() {
	local id=lsmoff-closed-$S
	ct_bundle "$id" -- sh -c 'echo CONTAINER-RAN; unshare -U true && echo NESTED-OK' || return 1
	ct_run "$id"
	[ "$CT_RC" != 0 ] || { CT_WHY="crun run exited 0: $(ct_tail)"; return 1; }
	[[ $CT_OUT != *CONTAINER-RAN* ]] || { CT_WHY="the container ran: $(ct_tail)"; return 1; }
	want_run "crun output" "$CT_RC" "*nsguard: *" || return 1
	ct_gone "$id" ""
}
ct_case lsm-off/fail-closed case_closed

case_open() {
	local id=lsmoff-open-$S
	ct_bundle "$id" --conf "$(ct_conf open 'fail-mode = open')" -- \
		sh -c 'echo CONTAINER-RAN; unshare -U true && echo NESTED-OK' || return 1
	ct_run "$id"
	want_run "crun run, fail-mode open" 0 "CONTAINER-RAN" || return 1
	want_run "warning in crun output" 0 "*nsguard: warning: fail-mode open, container $id runs unguarded: *" || return 1
	# Honest: unguarded means the nested user namespace is not refused.
	want_run "nested unshare" 0 "NESTED-OK" || return 1
	ct_gone "$id" ""
}
ct_case lsm-off/fail-open case_open

case_attach() {
	local cg=$CT_CGPARENT/lsmoff-attach-$S
	mkdir -p "$CT_CGFS/$cg"
	CT_OUT=$("$NSGUARD" attach --cgroup "$cg" --id "lsmoff-attach-$S" 2>&1)
	CT_RC=$?
	want_run "nsguard attach" 1 "nsguard: *" || return 1
	want_eq "no record" "$(ct_status "lsmoff-attach-$S")" missing || return 1
	rmdir "$CT_CGFS/$cg"
}
ct_case lsm-off/attach-refused case_attach
