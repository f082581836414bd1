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

# in_guest: refuse to run anything BPF-related outside the test guest.
in_guest() {
	if [ "${NSGUARD_IN_VM:-}" != 1 ]; then
		echo "this script runs inside the QEMU guest only (integration/vm-run)" >&2
		exit 1
	fi
}
