#!/bin/bash
# runc's own integration suite (a peer's tests, not ours: the bats files of
# Debian's runc source package, integration/peer-prep) in the current guest
# userland, three times in one boot with RUNC= set to
#   plain  runc itself,
#   allow  nsguard runtime in front of it in the allow tier
#          (invoked as nsguard-runtime-allow: nsguard.io/userns=allow),
#   deny   the same in the deny tier (nsguard-runtime-deny).
# Every test that passes with plain runc must pass in allow; in deny, each
# difference must be a test of USERNS_REFUSED below (it creates a user
# namespace inside the container, which nsguard refuses there), and each of
# those must differ.  Skips are runc's own (criu, systemd, rootless...) and
# must be the same in all three runs.  One PASS/FAIL/SKIP line per test and
# run, named peer-runc/RUN/FILE/TEST (blanks as _).
# Environment: NSG_PEER (peer-prep's directory, shared into the guest),
# PEER_FILES (bats files without .bats; empty: all of them), PEER_FILTER
# (bats --filter regex; empty: every test of those files).
# Runs in the QEMU guest: make peer-suite (all), make check: the subset.
set -u
. "$(dirname "$0")/lib.sh"
in_guest

P=peer-runc
work=$(mktemp -d /tmp/peer-runc.XXXXXX)
# The whole of it in the guest's tmpfs: bats and the images are read for
# every test, which over 9p costs seconds each.
cp -a "${NSG_PEER:?NSG_PEER: the directory integration/peer-prep made}" "$work/peer" ||
	{ fail "$P/setup" "cannot copy $NSG_PEER"; exit 1; }
PEER=$work/peer
IT=$PEER/runc/tests/integration
export PATH=$PEER/bin:$PATH

# The tests where deny differs by design: the container itself creates a
# user namespace (unshare -U / clone(CLONE_NEWUSER) from inside it), which
# nsguard's deny tier refuses.  FILE/TEST as in the lines' names.
USERNS_REFUSED=(
)
# The tests where the wrapper differs from runc in both tiers by design,
# FILE/TEST<TAB>what the failing test's output must show<TAB>why.  The
# others are nsguard refusing a container it cannot judge (its views
# checks, docs/design.md); each must show nsguard's own refusal.
BY_DESIGN=(
	$'hooks/runc_create_[second_createRuntime_hook_fails]\tcreateRuntime hook #2: exit status 1\tnsguard\'s createRuntime hook is #0: the bundle\'s second is #2, the test wants #1'
	$'hooks/runc_create_[hook_fails]\tcreateRuntime hook #2: exit status 1\tnsguard\'s createRuntime hook is #0: the test wants the bundle\'s failing one as #1'
	$'hooks/runc_run_[hook_fails]\tcreateRuntime hook #2: exit status 1\tnsguard\'s createRuntime hook is #0: the test wants the bundle\'s failing one as #1'
	$'create/runc_create_[shared_pidns_+_rootless]\tnsguard: container test: the container shares the host\'s pid namespace\tnsguard refuses a host-root container in the host\'s pid namespace'
	$'kill/kill_KILL_[shared_pidns]\tnsguard: container attached_ctr: the container\'s init is not pid 1 of its pid namespace\tnsguard refuses a host-root container in a shared pid namespace'
	$'userns/userns_join_external_namespaces_[wrong_userns_owner]\tis a writable sysfs\tnsguard refuses a writable sysfs in a container running as a user namespace\'s root'
)

for p in "$NSGUARD" "$IT/helpers.bash" "$IT/testdata/busybox-amd64.tar.xz" "$IT/testdata/debian-amd64.tar.xz"; do
	[ -e "$p" ] || { fail "$P/setup" "$p missing (integration/peer-prep)"; exit 1; }
done
command -v bats >/dev/null || { fail "$P/setup" "no bats on PATH ($PEER/bin)"; exit 1; }
REAL=$(command -v runc) || { fail "$P/setup" "runc not found"; exit 1; }
ln -s "$(readlink -f "$NSGUARD")" "$work/nsguard-runtime-allow"
ln -s "$(readlink -f "$NSGUARD")" "$work/nsguard-runtime-deny"
echo "# $("$REAL" --version | head -n 1), $(bats --version), runc's tests from $(cat "$PEER/.done")"
echo "# $("$NSGUARD" --version 2>&1 | head -n 1)"

files=()
if [ -n "${PEER_FILES:-}" ]; then
	for f in $PEER_FILES; do
		[ -f "$IT/$f.bats" ] || { fail "$P/setup" "no $f.bats in runc's tests"; exit 1; }
		files+=("$f")
	done
else
	for f in "$IT"/*.bats; do files+=("$(basename "$f" .bats)"); done
fi
filter=()
[ -z "${PEER_FILTER:-}" ] || filter=(--filter "$PEER_FILTER")

# runc's tests run containers in the foreground with a terminal (runc spec's
# default), which wants a controlling terminal (/dev/tty): WITH_TTY LOG CMD...
# runs CMD (its stdout and stderr as given) as the session leader of a pty of
# its own, what is written to the pty going to LOG, and exits with CMD's
# status once CMD has exited (a container or recvtty left holding the pty
# keeps it open, not the suite).
WITH_TTY='import os, pty, select, sys
log = open(sys.argv[1], "wb")
out = os.dup(1); err = os.dup(2)
pid, fd = pty.fork()
if pid == 0:
    os.dup2(out, 1); os.dup2(err, 2)
    os.execvp(sys.argv[2], sys.argv[2:])
status = None
while status is None:
    if select.select([fd], [], [], 1.0)[0]:
        try:
            log.write(os.read(fd, 65536))
        except OSError:
            select.select([], [], [], 0.5)
    done, st = os.waitpid(pid, os.WNOHANG)
    if done:
        status = st
sys.exit(os.waitstatus_to_exitcode(status))'

# tap2res FILE < TAP: one line per test, FILE/NAME<TAB>ok|fail|skip<TAB>why.
tap2res() {
	local f=$1 line st name why
	while IFS= read -r line; do
		case $line in
		'ok '*' # skip'*)
			name=${line#ok * } why=${name#* # skip}
			name=${name%% # skip*}
			why=${why# }
			why=${why#(} why=${why%)}
			st=skip ;;
		'ok '*) name=${line#ok * } st=ok why= ;;
		'not ok '*) name=${line#not ok * } name=${name%% # in *} st=fail why= ;;
		*) continue ;;
		esac
		name=${name// /_} name=${name//:/.}
		printf '%s/%s\t%s\t%s\n' "$f" "$name" "$st" "${why:-no reason given}"
	done
}

# run_file RUN RUNC FILE: the bats file under RUNC, results in work/RUN-FILE.res.
run_file() {
	local run=$1 runc=$2 f=$3 start rc
	start=$(date +%s)
	(cd "$IT" && RUNC=$runc python3 -c "$WITH_TTY" "$work/$run-$f.tty" \
		timeout 1200 bats --tap "${filter[@]}" "$f.bats") >"$work/$run-$f.tap" 2>&1 </dev/null
	rc=$?
	tap2res "$f" <"$work/$run-$f.tap" >"$work/$run-$f.res"
	echo "# $run $f: $(($(date +%s) - start))s, bats exit $rc," \
		"$(grep -c '^ok ' "$work/$run-$f.tap") ok, $(grep -c '^not ok ' "$work/$run-$f.tap") not ok"
	# What bats said about each failure (its output, the test's lines).
	[ "$rc" = 0 ] || grep -v -E '^(ok |1\.\.)' "$work/$run-$f.tap" | head -n 60 | sed 's/^/  | /'
	# A container left behind would be the next test's (and the next run's).
	"$REAL" list -q 2>/dev/null | sed 's/^/  | left behind: /'
}

refused() {
	local t
	for t in "${USERNS_REFUSED[@]}"; do [ "$t" = "$1" ] && return 0; done
	return 1
}

declare -A n
for run in plain allow deny; do n[$run/ok]=0 n[$run/fail]=0 n[$run/skip]=0; done
# by_design RUN FILE TEST: TEST failed in RUN and is a BY_DESIGN one whose
# output shows what that says: one PASS line, the reason in the log.
by_design() {
	local e t want why block
	for e in "${BY_DESIGN[@]}"; do
		IFS=$'\t' read -r t want why <<<"$e"
		[ "$t" = "$3" ] || continue
		# The test's lines in the TAP: from its "not ok" to the next test.
		block=$(awk -v n="${t#*/}" '/^(not )?ok /{ cur = $0; sub(/^(not )?ok [0-9]+ /, "", cur);
			gsub(/ /, "_", cur); gsub(/:/, ".", cur); inb = (cur == n) } inb' "$work/$1-$2.tap")
		if [[ $block == *"$want"* ]]; then
			pass "$P/$1/$t"
			echo "# $1 differs from plain runc by design: $t ($why)"
		else
			fail "$P/$1/$t" "failed, but without '$want' (listed by design: $why)"
		fi
		return 0
	done
	return 1
}

# judge FILE: the verdicts on one file's three runs (so that a boot cut
# short still shows the files it finished).
judge() {
	local f=$1 run t st pst pwhy why
	local -A res=()
	for run in allow deny; do
		while IFS=$'\t' read -r t st why; do res[$run/$t]=$st; done <"$work/$run-$f.res"
	done
	[ -s "$work/plain-$f.res" ] || { fail "$P/plain/$f" "runc's suite ran no test of $f.bats (see above)"; return; }
	while IFS=$'\t' read -r t pst pwhy; do
		res[plain/$t]=$pst
		n[plain/$pst]=$((n[plain/$pst] + 1))
		case $pst in
		ok) pass "$P/plain/$t" ;;
		skip) skip "$P/plain/$t" "$pwhy" ;;
		# runc's own test failing with runc itself: this guest, not nsguard.
		fail) skip "$P/plain/$t" "fails with plain runc in this guest" ;;
		esac
		for run in allow deny; do
			st=${res[$run/$t]:-missing}
			[ "$st" = missing ] || n[$run/$st]=$((n[$run/$st] + 1))
			if [ "$run" = deny ] && refused "$t"; then
				if [ "$pst" = ok ] && [ "$st" = fail ]; then
					pass "$P/$run/$t"
					echo "# deny differs from plain runc: $t (it creates a user namespace inside the container)"
				else
					fail "$P/$run/$t" "listed as refused under deny, but plain runc: $pst, deny: $st"
				fi
				continue
			fi
			if [ "$pst" = ok ] && [ "$st" = fail ] && by_design "$run" "$f" "$t"; then
				continue
			fi
			case $pst/$st in
			ok/ok) pass "$P/$run/$t" ;;
			skip/skip) skip "$P/$run/$t" "$pwhy" ;;
			fail/*) skip "$P/$run/$t" "fails with plain runc in this guest ($run: $st)" ;;
			*) fail "$P/$run/$t" "plain runc: $pst, nsguard runtime ($run): $st" ;;
			esac
		done
	done <"$work/plain-$f.res"
	# A test in allow or deny that plain runc did not run (bats out of step).
	for run in allow deny; do
		while IFS=$'\t' read -r t st _; do
			[ -n "${res[plain/$t]:-}" ] || fail "$P/$run/$t" "not in plain runc's run ($st)"
		done <"$work/$run-$f.res"
	done
}

suite_start=$(date +%s)
for f in "${files[@]}"; do
	run_file plain "$REAL" "$f"
	run_file allow "$work/nsguard-runtime-allow" "$f"
	run_file deny "$work/nsguard-runtime-deny" "$f"
	judge "$f"
done
echo "# runc's suite, three runs: $(($(date +%s) - suite_start))s"
for run in plain allow deny; do
	echo "# $run: ${n[$run/ok]} ok, ${n[$run/fail]} failed, ${n[$run/skip]} skipped"
done
rm -rf "$work"
exit 0
