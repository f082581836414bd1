# Sourced by the guest test scripts: one PASS:/FAIL:/SKIP: line per case, the
# format integration/summarize counts.
# shellcheck shell=bash

NSG_REPO=${NSG_REPO:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
NSGUARD=${NSGUARD:-$NSG_REPO/build/nsguard}

pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: ${2:-failed}"; }
skip() { echo "SKIP: $1: ${2:?a skip needs a reason}"; }

# check NAME CMD...: PASS if CMD succeeds, FAIL with its output otherwise.
check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		pass "$name"
	else
		fail "$name" "'$*' exited $?: $(echo "$out" | tail -n 3 | tr '\n' ' ')"
	fi
}

# two_cpus: empty if the guest runs on two or more CPUs, else why not.  The
# concurrency cases fail (never skip) without them: on one vCPU they cannot
# race (#11; kernel-patches/nsguard.config finds the second one through ACPI).
two_cpus() {
	local n
	n=$(nproc)
	[ "$n" -ge 2 ] || echo "the guest has $n CPU; the concurrency cases need 2 (CONFIG_ACPI, vm-run --smp 2)"
}

# in_guest: refuse to run anything BPF-related outside the test guest.
in_guest() {
	if [ "${NSGUARD_IN_VM:-}" != 1 ]; then
		echo "this script runs inside the QEMU guest only (integration/vm-run)" >&2
		exit 1
	fi
}
