# Sourced by the guest test scripts (and the host's integration/test-harness):
# one PASS:/FAIL:/SKIP: line per case, the format integration/summarize counts.
# shellcheck shell=bash

NSG_REPO=${NSG_REPO:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
NSGUARD=${NSGUARD:-$NSG_REPO/build/nsguard}

# NSG_PREFIX (guest-suite --prefix) goes before every name: the same scripts
# on another kernel (linux-6.12/...) count as cases of their own.
pass() { echo "PASS: ${NSG_PREFIX:-}$1"; }
fail() { echo "FAIL: ${NSG_PREFIX:-}$1: ${2:-failed}"; }
skip() { echo "SKIP: ${NSG_PREFIX:-}$1: ${2:?a skip needs a reason}"; }

# capture DIR CMD...: run CMD; rc its status, out and err its stdout and
# stderr (through files in DIR).  The host cli-*.sh tests' run().
# shellcheck disable=SC2034 # rc, out and err are the caller's
capture() {
	local d=$1
	shift
	"$@" >"$d/out" 2>"$d/err"
	rc=$?
	out=$(cat "$d/out")
	err=$(cat "$d/err")
}

# expect [--quiet] NAME WANT CMD...: run CMD; PASS if it exits with status
# WANT and prints no selftest-style CASE:FAIL: line, else FAIL naming the
# status and the failing lines (:FAIL:, seedtest: or libbpf: ones, else its
# last lines).  CMD's output (stdout and stderr) is shown indented, unless
# --quiet.  The one "run, compare, report" helper of the suites.
expect() {
	local quiet=0 name want out rc why
	[ "$1" = --quiet ] && { quiet=1; shift; }
	name=$1 want=$2
	shift 2
	out=$("$@" 2>&1)
	rc=$?
	[ $quiet = 1 ] || echo "  | ${out//$'\n'/$'\n'  | }"
	if [ "$rc" = "$want" ] && ! grep -q ':FAIL:' <<<"$out"; then
		pass "$name"
		return 0
	fi
	why=$(grep -E ':FAIL:|^(seedtest|libbpf): ' <<<"$out" | head -n 3)
	[ -n "$why" ] || why=$(tail -n 3 <<<"$out")
	fail "$name" "'$*' exited $rc, expected $want: $(tr '\n' ' ' <<<"$why")"
	return 1
}

# nsg_case NAME FUNC [ARGS...]: one case: FUNC returns non-zero with CT_WHY
# set when it fails (lib-ct.sh's want_* helpers set it); one PASS or FAIL
# line for NAME; returns the verdict.  A failure recorded in CT_WHY fails
# the case even when FUNC goes on and returns 0 (a `cond || fails WHY` that
# is not FUNC's last line), so no assertion is dead; a helper that sets
# CT_WHY must mean it.  ct_case (lib-ct.sh) is this plus a container
# runtime's clean-up; 15-guard.sh, which runs no runtime, uses it directly.
# A case that cannot apply where it runs (the runtime itself cannot do what
# it needs) sets CT_SKIP to the reason and returns 0: one SKIP line; a
# failure recorded beside it still fails the case.
CT_WHY='' CT_SKIP=''
nsg_case() {
	local name=$1 rc
	shift
	CT_WHY='' CT_SKIP=''
	"$@"
	rc=$?
	if [ "$rc" = 0 ] && [ -z "$CT_WHY" ] && [ -n "$CT_SKIP" ]; then
		skip "$name" "$CT_SKIP"
		CT_SKIP=
		return 0
	fi
	if [ "$rc" = 0 ] && [ -z "$CT_WHY" ]; then
		pass "$name"
		return 0
	fi
	fail "$name" "${CT_WHY:-$1 failed (exit $rc)}"
	return 1
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
