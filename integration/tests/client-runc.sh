#!/bin/bash
# The container scripts (20-containers, 30-escape, 40-lifecycle, 50-failure)
# again under Debian's runc instead of crun, once with nsguard registered as a
# prestart hook and once as createRuntime.  Case names get the prefix
# runc-STAGE/; cases that only run the hook by hand are not repeated.
# Runs in the QEMU guest (make check-clients).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
in_guest

if ! command -v runc >/dev/null; then
	fail "ct/runc/setup" "runc not found (make deps installs Debian's runc)"
	exit 1
fi
echo "# $(runc --version | head -n 1)"
stages=${RUNC_STAGES:-prestart createRuntime}
scripts=${RUNC_SCRIPTS:-20-containers 30-escape 40-lifecycle 50-failure}
rc=0
for stage in $stages; do
	for s in $scripts; do
		echo "# runc, $stage: $s"
		CRUN=runc CT_STAGE=$stage CT_RERUN="runc-$stage/" CT_RUNROOT=/run/nsg-runc \
			bash "$here/$s.sh" || rc=1
	done
done
exit $rc
