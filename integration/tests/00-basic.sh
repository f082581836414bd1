#!/bin/bash
# The booted guest kernel can run nsguard at all.
. "$(dirname "$0")/lib.sh"
in_guest

lsms=$(cat /sys/kernel/security/lsm 2>/dev/null)
case ",$lsms," in
*,bpf,*) pass "basic/lsm-has-bpf" ;;
*) fail "basic/lsm-has-bpf" "/sys/kernel/security/lsm is '$lsms'" ;;
esac

if [ -s /sys/kernel/btf/vmlinux ]; then
	pass "basic/btf-vmlinux"
else
	fail "basic/btf-vmlinux" "/sys/kernel/btf/vmlinux missing or empty"
fi

# With no policy attached an unprivileged process may create a user namespace.
if out=$(setpriv --reuid=65534 --regid=65534 --clear-groups -- unshare --user -- sh -c 'readlink /proc/self/ns/user' 2>&1) &&
	[ "$out" != "$(readlink /proc/self/ns/user)" ]; then
	pass "basic/unprivileged-userns"
else
	fail "basic/unprivileged-userns" "unshare -U as uid 65534: $out"
fi

if out=$(crun --version 2>&1) && echo "$out" | grep -q '^crun version'; then
	pass "basic/crun-version"
else
	fail "basic/crun-version" "$out"
fi

if grep -q ' /sys/fs/cgroup cgroup2 ' /proc/mounts && grep -q ' /sys/fs/bpf bpf ' /proc/mounts; then
	pass "basic/mounts"
else
	fail "basic/mounts" "cgroup2 or bpffs not mounted"
fi
