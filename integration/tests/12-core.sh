#!/bin/bash
# 12-core.sh: the BPF program is CO-RE, so one object serves every kernel
# with the types it names: nsguard built against other kernels' BTF loads,
# verifies and guards in this guest as build/nsguard (the guest kernel's
# BTF) does.  The others: build/core/debian-6.1 (Debian's own 6.1 kernel,
# integration/other-btf) and build/core/host (the build host's running
# kernel, when it had BTF).  Runs before 15-guard.sh and leaves nothing
# loaded.  Guest only.
# shellcheck source=integration/tests/lib-ct.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib-ct.sh"
set -u
in_guest

CG=/sys/fs/cgroup
PINS=/sys/fs/bpf/nsguard
ABIS=()

# core_case V BIN: load, attach deny to a fresh cgroup, a user namespace
# refused in it, detach, unpin.
core_case() {
	local v=$1 bin=$2 out cg=core-$1 abi
	[ ! -e "$PINS/prog" ] || { CT_WHY="a program was loaded before the case"; return 1; }
	out=$("$bin" load 2>&1)
	[[ $out == loaded* ]] || { CT_WHY="load: $out"; return 1; }
	abi=$(cd "$PINS" && echo abi-*)
	ABIS+=("$abi")
	mkdir -p "$CG/$cg"
	out=$("$bin" attach --cgroup "$cg" --mode deny --id "$cg" 2>&1) || { CT_WHY="attach: $out"; return 1; }
	# shellcheck disable=SC2016 # the child's $$
	out=$(sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" unshare' _ "$CG/$cg" "$NSG_USERNS" 2>&1)
	want_eq "nsg-userns unshare in $cg" "$out" "unshare: fail errno=EPERM" || return 1
	out=$("$bin" detach --id "$cg" 2>&1) || { CT_WHY="detach: $out"; return 1; }
	rmdir "$CG/$cg"
	rm -rf "$PINS"
}

variants=(guest "$NSGUARD")
for v in debian-6.1 host; do
	b=$NSG_REPO/build/core/$v/nsguard
	if [ -x "$b" ]; then
		variants+=("$v" "$b")
	elif [ $v = host ]; then
		skip "core/host" "the build host had no /sys/kernel/btf/vmlinux"
	else
		fail "core/$v" "$b missing (make core-variants)"
	fi
done
for ((i = 0; i < ${#variants[@]}; i += 2)); do
	nsg_case "core/${variants[i]}" core_case "${variants[i]}" "${variants[i + 1]}"
done
# Different BTF, different objects: each load was its own (its ABI marker).
# shellcheck disable=SC2034 # CT_WHY is nsg_case's
distinct() {
	[ "$(printf '%s\n' "${ABIS[@]}" | sort -u | wc -l)" = "${#ABIS[@]}" ] && return 0
	CT_WHY="ABI markers: ${ABIS[*]}"
	return 1
}
nsg_case core/distinct-objects distinct
rm -rf "$PINS" /run/nsguard
