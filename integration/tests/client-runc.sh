#!/bin/bash
# The container scripts (20-containers, 30-escape, 35-views, 40-lifecycle, 50-failure,
# 60-count-learn)
# again under Debian's runc instead of crun.  Runs in the QEMU guest (make
# check-clients-runc).
#
# What is worth a second pass, and what is not:
# - The runtime changes everything around the hook: how it creates the cgroup
#   and the namespaces, the state it passes, when and how it runs hooks, what it
#   does when one fails, how it deletes.  So every container case runs once
#   under runc, as a createRuntime hook like the crun suite (prefix
#   runc-createRuntime/).  Cases that only run the hook by hand are the same
#   under any runtime and are left out (ct_hook_case).
# - The stage (prestart instead of createRuntime) changes only the hook array
#   the runtime reads, the STAGE argument nsguard gets, and the point where the
#   runtime calls it and handles its failure (runc calls both stages at the same
#   point, before the container's process runs).  So prestart runs only the
#   cases that show those (prefix runc-prestart/): a denial in force from the
#   first instruction, a written allow and audit policy, attached to the
#   container's cgroup and not a child, removed by poststop, and a refusal at
#   that stage stopping the start and leaving nothing.
# Until 2026-12 all four scripts ran under both stages: 2 x 56 cases and about
# 15 minutes of guest time for the same 8 differences.
#
# RUNC_SCRIPTS and RUNC_PRESTART_CASES narrow or widen the two passes.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
in_guest

if ! command -v runc >/dev/null; then
	fail "ct/runc/setup" "runc not found (make deps installs Debian's runc)"
	exit 1
fi
echo "# $(runc --version | head -n 1)"
scripts=${RUNC_SCRIPTS:-20-containers 30-escape 35-views 40-lifecycle 50-failure 60-count-learn}
prestart_cases=${RUNC_PRESTART_CASES:-default/unshare allow audit escape/child-cgroup
lifecycle/in-force-until-poststop lifecycle/run-leaves-nothing
fail/annotation-bad-mode fail/bad-config}
read -r -d '' -a cases <<<"$prestart_cases"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
rc=0

for s in $scripts; do
	echo "# runc, createRuntime: $s"
	CRUN=runc CT_STAGE=createRuntime CT_RERUN=runc-createRuntime/ CT_RUNROOT=/run/nsg-runc \
		bash "$here/$s.sh" || rc=1
done

for s in $scripts; do
	echo "# runc, prestart, stage-specific cases: $s"
	CRUN=runc CT_STAGE=prestart CT_RERUN=runc-prestart/ CT_RUNROOT=/run/nsg-runc \
		CT_ONLY="${cases[*]}" bash "$here/$s.sh" 2>&1 | tee -a "$out"
	[ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
done
# A case renamed in its script must not drop out of the prestart pass unseen.
for c in "${cases[@]}"; do
	grep -qE "^(PASS|FAIL): ${NSG_PREFIX:-}ct/runc-prestart/$c(:|\$)" "$out" ||
		{ fail "ct/runc-prestart/$c" "no such case ran (renamed? update RUNC_PRESTART_CASES)"; rc=1; }
done
exit $rc
