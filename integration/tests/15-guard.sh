#!/bin/bash
# smoke-guard.sh: prove the guard mechanism with build/nsguard and plain
# cgroups (no container runtime).  Guest only:
#   integration/vm-run -- integration/tests/smoke-guard.sh
# One PASS:/FAIL: line per case, named guard/<case>.
# shellcheck source=integration/tests/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
set -u
in_guest

NSG=$NSGUARD
NSGUARD_FAULT_BIN=${NSGUARD_FAULT_BIN:-$(dirname "$NSG")/nsguard-fault}
CG=/sys/fs/cgroup
T=$CG/smoke
failed=0
ok() { pass "guard/$1"; }
ko() { fail "guard/$1" "$2"; failed=1; }

# incg CGROUP CMD...: run CMD as a member of cgroup $T/CGROUP.
incg() {
	local cg=$1
	shift
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$T/$cg" "$@"
}

# userns CGROUP [LEVELS]: create LEVELS nested user namespaces (default 1)
# from cgroup CGROUP; prints ok, EPERM, ENOSPC, EACCES or other:<message>.
userns() {
	local cg=$1 levels=${2:-1} cmd=() i out
	for ((i = 1; i < levels; i++)); do cmd+=(unshare -U --map-root-user); done
	cmd+=(unshare -U true)
	if out=$(incg "$cg" "${cmd[@]}" 2>&1); then
		echo ok
		return
	fi
	case $out in
	*"Operation not permitted"*) echo EPERM ;;
	*"No space left on device"*) echo ENOSPC ;;
	*"Permission denied"*) echo EACCES ;;
	*) echo "other:$(echo "$out" | tr '\n' ' ')" ;;
	esac
}

# expect CASE WANT CGROUP [LEVELS]
expect() {
	local name=$1 want=$2 got
	shift 2
	got=$(userns "$@")
	if [ "$got" = "$want" ]; then ok "$name"; else ko "$name" "wanted $want, got $got"; fi
}

attach() { "$NSG" attach "$@" >/tmp/attach.out 2>&1 || { cat /tmp/attach.out; return 1; }; }

# counter ID FIELD: from status --json.
counter() {
	"$NSG" status --json | jq -r --arg id "$1" ".containers[] | select(.id == \$id) | .$2"
}

mkdir -p "$T"
for d in deny audit allow depth base count par par/child par/child/grand gcme hookcg other; do
	mkdir -p "$T/$d"
done

# check: everything the kernel must offer, plus a trial attach.
if out=$("$NSG" check 2>&1); then ok check; else ko check "$(echo "$out" | tr '\n' ' ')"; fi

# Before anything is attached, user namespaces work.
expect baseline ok deny

# deny: every errno, and root with every capability is refused too.
attach --cgroup smoke/deny --mode deny --id deny || ko attach-deny "attach failed"
expect deny-eperm EPERM deny
caps=$(awk '/^CapEff/ {print $2}' /proc/self/status)
if [ "$(id -u)" = 0 ] && [ "$caps" = "000001ffffffffff" ] && [ "$(userns deny)" = EPERM ]; then
	ok root-all-caps-refused
else
	ko root-all-caps-refused "uid $(id -u) CapEff $caps: $(userns deny)"
fi
attach --cgroup /sys/fs/cgroup/smoke/deny --mode deny --errno ENOSPC --id deny || ko attach-enospc "re-attach failed"
expect deny-enospc ENOSPC deny
attach --cgroup smoke/deny --mode deny --errno EACCES --id deny || ko attach-eacces "re-attach failed"
expect deny-eacces EACCES deny
expect outside-unaffected ok other
if "$NSG" attach --cgroup smoke/deny --mode deny --id someone-else >/dev/null 2>&1; then
	ko other-id-refused "a second id attached to a guarded cgroup"
else
	ok other-id-refused
fi

# audit and allow with depth limits (maps are written between levels).
attach --cgroup smoke/audit --mode audit --max-depth 1 --id audit || ko attach-audit "attach failed"
expect audit-depth1 ok audit 1
expect audit-depth2-denied EPERM audit 2
attach --cgroup smoke/allow --mode allow --max-depth 2 --errno ENOSPC --id allow || ko attach-allow "attach failed"
expect allow-depth1 ok allow 1
expect allow-depth2 ok allow 2
expect allow-depth3-denied ENOSPC allow 3
attach --cgroup smoke/depth --mode allow --max-depth 0 --id depth0 || ko attach-depth0 "attach failed"
expect allow-depth0-denied EPERM depth 1
# base level 1: the container's own namespace is level 1, so a level-0
# caller and a level-1 caller both create depth 1; level 2 is depth 2.
attach --cgroup smoke/base --mode allow --max-depth 1 --base-level 1 --id base || ko attach-base "attach failed"
expect base-level-depth1 ok base 2
expect base-level-depth2-denied EPERM base 3

# Exact counters: 3 allowed, then 2 x (1 allowed + 1 denied).
attach --cgroup smoke/count --mode allow --max-depth 1 --id count || ko attach-count "attach failed"
for _ in 1 2 3; do userns count >/dev/null; done
for _ in 1 2; do userns count 2 >/dev/null; done
got="$(counter count allowed)/$(counter count denied)/$(counter count audited)"
if [ "$got" = 5/2/0 ]; then ok counters-exact; else ko counters-exact "allowed/denied/audited $got, wanted 5/2/0"; fi
got="$(counter audit audited)/$(counter audit denied)"
if [ "$got" = 2/1 ]; then ok counters-audit; else ko counters-audit "audited/denied $got, wanted 2/1"; fi
if "$NSG" status | grep -q '^container count'; then ok status-human; else ko status-human "$("$NSG" status 2>&1 | head -5)"; fi
if [ "$("$NSG" status --json | jq -r .loaded)" = true ]; then ok status-loaded; else ko status-loaded "loaded is not true"; fi
# 64-bit values are decimal strings (a JSON number is a double); 32-bit ones numbers.
if "$NSG" status --json | jq -e '[.events_dropped, .decisions, (.containers[] | .cgroup_id, .allowed,
	.denied, .audited, .events_dropped) | type == "string" and test("^[0-9]+$")] + [.containers[] |
	(.max_depth, .base_level) | type == "number"] | all' >/dev/null; then
	ok status-json-u64-strings
else
	ko status-json-u64-strings "$("$NSG" status --json)"
fi

# monitor: drain the backlog (SIGINT must exit 0), then see one audit and one deny.
timeout --preserve-status -s INT 3 "$NSG" monitor --json >/tmp/backlog.json
rc=$?
if [ $rc = 0 ]; then ok monitor-sigint; else ko monitor-sigint "exit $rc after SIGINT"; fi
"$NSG" monitor --json --count 2 >/tmp/mon.json 2>/tmp/mon.err &
mon=$!
sleep 1
userns audit >/dev/null
userns deny >/dev/null
for _ in $(seq 50); do kill -0 $mon 2>/dev/null || break; sleep 0.2; done
if kill -0 $mon 2>/dev/null; then
	kill $mon
	ko monitor-count "monitor --count 2 still running: $(cat /tmp/mon.json /tmp/mon.err)"
else
	if wait $mon; then ok monitor-count; else ko monitor-count "exit status $?"; fi
fi
if jq -n -e '[inputs | select(.id == "audit" and .decision == "audit" and .reason == "mode" and .errno == null and .comm == "unshare" and .depth == 1 and (.cgroup_id | test("^[1-9][0-9]*$")) and (.task_cgroup_id | type == "string"))] | length == 1' /tmp/mon.json >/dev/null; then
	ok monitor-audit-event
else
	ko monitor-audit-event "$(cat /tmp/mon.json)"
fi
if jq -n -e '[inputs | select(.id == "deny" and .decision == "deny" and .reason == "mode" and .errno == "EACCES" and .uid == 0 and .pid > 0)] | length == 1' /tmp/mon.json >/dev/null; then
	ok monitor-deny-event
else
	ko monitor-deny-event "$(cat /tmp/mon.json)"
fi
"$NSG" monitor --count 1 >/tmp/mon.txt &
mon=$!
sleep 1
userns depth >/dev/null
userns depth >/dev/null
wait $mon
# --count must not consume past its last event.
"$NSG" monitor --count 1 >/tmp/mon2.txt
if grep -q ' deny id=depth0 ' /tmp/mon2.txt; then ok monitor-count-leaves-rest; else ko monitor-count-leaves-rest "$(cat /tmp/mon2.txt)"; fi
if grep -Eq '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z deny id=depth0 cgroup=[0-9]+ pid=[0-9]+ tid=[0-9]+ comm=unshare uid=0 gid=0 level=0 depth=1 reason=depth errno=EPERM$' /tmp/mon.txt; then
	ok monitor-human
else
	ko monitor-human "$(cat /tmp/mon.txt)"
fi

# Ring buffer overflow: with nobody reading, events are dropped and counted;
# a monitor that sleeps through a flood reports the drops when it wakes.
flood() { # flood CGROUP N: N denied unshare(CLONE_NEWUSER) calls from one process
	incg "$1" /usr/bin/python3 -c 'import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
for _ in range(int(sys.argv[1])):
    libc.unshare(0x10000000)' "$2"
}
before=$("$NSG" status --json | jq -r .events_dropped)
denied0=$(counter deny denied)
flood deny 4000
after=$("$NSG" status --json | jq -r .events_dropped)
denied1=$(counter deny denied)
if [ "$after" -gt "$before" ] && [ $((denied1 - denied0)) = 4000 ]; then
	ok events-dropped-counted
else
	ko events-dropped-counted "events_dropped $before -> $after, denied $denied0 -> $denied1"
fi
"$NSG" monitor --json >/tmp/drop.json &
mon=$!
sleep 2 # drains the backlog of the flood above
kill -STOP $mon
before=$("$NSG" status --json | jq -r .events_dropped)
flood deny 4000
after=$("$NSG" status --json | jq -r .events_dropped)
kill -CONT $mon
sleep 2
kill -INT $mon
wait $mon
rc=$?
reported=$(jq -n '[inputs | .dropped // "0" | tonumber] | add' /tmp/drop.json)
if [ $rc = 0 ] && [ "$after" -gt "$before" ] && [ "$reported" = $((after - before)) ]; then
	ok monitor-reports-drops
else
	ko monitor-reports-drops "exit $rc, dropped $before -> $after, reported $reported"
fi

# An attached cgroup whose policy reads all-zero (mode NONE) denies.
mkdir -p "$T/nopol"
attach --cgroup smoke/nopol --mode allow --id nopol || ko attach-nopol "attach failed"
cgid=$(stat -c %i "$T/nopol")
key=$(printf '%016x' "$cgid" | sed -E 's/(..)/\1 /g' | awk '{for (i = NF; i > 0; i--) printf "%s ", $i}')
vsize=$(bpftool -j map show pinned /sys/fs/bpf/nsguard/policies | jq .bytes_value)
# shellcheck disable=SC2086,SC2046 # the bytes are separate words
bpftool map update pinned /sys/fs/bpf/nsguard/policies key hex $key value hex $(printf '00 %.0s' $(seq "$vsize"))
timeout --preserve-status -s INT 3 "$NSG" monitor >/dev/null # drain
"$NSG" monitor --json --count 1 >/tmp/nopol.json &
mon=$!
sleep 1
expect no-policy-denies EPERM nopol
wait $mon
if jq -n -e '[inputs | select(.id == null and .cgroup_id == "0" and .reason == "no-policy" and .mode == "none" and .errno == "EPERM")] | length == 1' /tmp/nopol.json >/dev/null; then
	ok no-policy-event
else
	ko no-policy-event "$(cat /tmp/nopol.json)"
fi
"$NSG" detach --id nopol >/dev/null || ko detach-nopol "detach failed"

# A child cgroup inherits; nested guards: the most restrictive wins.
attach --cgroup smoke/par --mode allow --max-depth 3 --id par || ko attach-par "attach failed"
expect inherit-parent-allows ok par/child/grand 2
attach --cgroup smoke/par/child --mode deny --errno ENOSPC --id child || ko attach-child "attach failed"
expect inherit-child-deny ENOSPC par/child/grand
expect nested-parent-still-allows ok par
attach --cgroup smoke/par --mode deny --id par || ko attach-par2 "re-attach failed"
attach --cgroup smoke/par/child --mode allow --id child || ko attach-child2 "re-attach failed"
expect nested-parent-deny-wins EPERM par/child/grand

# detach restores.
"$NSG" detach --cgroup smoke/deny >/dev/null || ko detach "detach --cgroup failed"
expect detach-restores ok deny
if [ -e /sys/fs/bpf/nsguard/links/"$(stat -c %i "$T/deny")" ] || [ -e /run/nsguard/containers/deny.json ]; then
	ko detach-cleans "link pin or record left behind"
else
	ok detach-cleans
fi
if ! "$NSG" detach --id child >/dev/null || ! "$NSG" detach --id par >/dev/null; then
	ko detach-id "detach --id failed"
fi
expect detach-id-restores ok par/child/grand 2

# gc: a record whose cgroup was removed.
attach --cgroup smoke/gcme --mode deny --id gcme || ko attach-gcme "attach failed"
rmdir "$T/gcme"
out=$("$NSG" gc 2>&1)
if echo "$out" | grep -q 'removed container gcme' && [ ! -e /run/nsguard/containers/gcme.json ] &&
	[ "$("$NSG" status --json | jq '[.containers[] | select(.id == "gcme")] | length')" = 0 ]; then
	ok gc
else
	ko gc "$out"
fi

# gc: a pinned link with neither a record nor a live cgroup.
mkdir -p "$T/orphan"
attach --cgroup smoke/orphan --id orphan || ko attach-orphan "attach failed"
cgid=$(stat -c %i "$T/orphan")
rm /run/nsguard/containers/orphan.json
rmdir "$T/orphan"
out=$("$NSG" gc 2>&1)
if echo "$out" | grep -q "removed link /sys/fs/bpf/nsguard/links/$cgid" && [ ! -e /sys/fs/bpf/nsguard/links/"$cgid" ]; then
	ok gc-orphan-link
else
	ko gc-orphan-link "$out"
fi
out=$("$NSG" gc 2>&1)
if [ -z "$out" ] && [ -e /run/nsguard/containers/audit.json ]; then ok gc-keeps-live; else ko gc-keeps-live "$out"; fi

# The OCI hook path: createRuntime attaches from the state, poststop detaches.
# Not through incg: $! must be the process that joins the cgroup.  Like a
# container's init, it has a cgroup and mount namespace of its own (as the
# host's root in the host's, nsguard would refuse it: it could leave).
sh -c 'echo $$ >"$0/cgroup.procs" && exec unshare -C -m sleep 60' "$T/hookcg" &
victim=$!
sleep 0.3
state='{"ociVersion":"1.0.2","id":"hooked","pid":'$victim',"status":"created","bundle":"/nonexistent","annotations":{"nsguard.io/userns":"deny","nsguard.io/userns.errno":"ENOSPC"}}'
if echo "$state" | "$NSG" hook createRuntime; then ok hook-create; else ko hook-create "exit $?"; fi
expect hook-denies ENOSPC hookcg
# Runtimes run poststop once the container's processes are gone; while its
# init runs, a poststop for the id is another instance's and changes nothing.
if echo "$state" | "$NSG" hook poststop 2>/dev/null && [ -e /run/nsguard/containers/hooked.json ]; then
	ok hook-poststop-while-init-runs
else
	ko hook-poststop-while-init-runs "poststop removed the record of a running init"
fi
kill $victim 2>/dev/null
wait $victim 2>/dev/null
if echo "$state" | "$NSG" hook poststop && [ ! -e /run/nsguard/containers/hooked.json ]; then
	ok hook-poststop
else
	ko hook-poststop "poststop failed or left the record"
fi
expect hook-poststop-restores ok hookcg
if echo '{"ociVersion":"1.0.2","id":"never-seen","status":"stopped","bundle":"/nonexistent"}' |
	"$NSG" hook poststop; then
	ok hook-poststop-unknown
else
	ko hook-poststop-unknown "exit $?"
fi
bad='{"ociVersion":"1.0.2","id":"typo","pid":'$victim',"status":"created","bundle":"/nonexistent","annotations":{"nsguard.io/usrns":"allow"}}'
echo "$bad" | "$NSG" hook createRuntime 2>/dev/null
rc=$?
if [ $rc = 1 ]; then ok hook-bad-annotation; else ko hook-bad-annotation "exit $rc, wanted 1"; fi
# fail-mode: a process in the root cgroup cannot be guarded.  Where the
# container sits is the bundle's choice (cgroupsPath "/"), so fail-mode open
# does not open it (50-failure.sh's open-pid-exited shows what it does open).
echo 'fail-mode = open' >/tmp/open.conf
rootstate='{"ociVersion":"1.0.2","id":"rooted","pid":'$$',"status":"created","bundle":"/nonexistent"}'
err=$(echo "$rootstate" | "$NSG" hook createRuntime --config /tmp/open.conf 2>&1)
rc=$?
if [ $rc = 1 ] && [ "$(echo "$err" | wc -l)" = 1 ] && echo "$err" | grep -q '^nsguard: .*root cgroup'; then
	ok fail-mode-open-keeps-root-cgroup-closed
else
	ko fail-mode-open-keeps-root-cgroup-closed "exit $rc: $err"
fi
err=$(echo "$rootstate" | "$NSG" hook createRuntime 2>&1)
rc=$?
if [ $rc = 1 ] && [ "$(echo "$err" | wc -l)" = 1 ] && echo "$err" | grep -q '^nsguard: '; then
	ok fail-mode-closed
else
	ko fail-mode-closed "exit $rc: $err"
fi
if echo "$rootstate" | "$NSG" hook createRuntime --config /nonexistent.conf 2>/dev/null; then
	ko missing-explicit-config "exit 0"
else
	ok missing-explicit-config
fi

# Re-attach: the kernel frees a cgroup's storage with the cgroup, not at
# detach, so a new attachment finds what the last one wrote.  It must start
# at deny with zero counts, and stay at deny when writing its policy fails
# (build/nsguard-fault fails that write on request).
mkdir -p "$T/reattach"
attach --cgroup "$T/reattach" --mode allow --id reattach || ko reattach-setup "attach allow"
expect reattach-first-allow ok reattach
"$NSG" detach --id reattach >/dev/null || ko reattach-setup "detach"
out=$(NSGUARD_FAULT=policy-write "$NSGUARD_FAULT_BIN" attach --cgroup "$T/reattach" --mode allow \
	--id reattach 2>&1)
rc=$?
if [ $rc = 1 ] && echo "$out" | grep -q 'stays guarded with deny until detached'; then
	ok reattach-failed-write-message
else
	ko reattach-failed-write-message "exit $rc: $out"
fi
expect reattach-failed-write-denies EPERM reattach
"$NSG" detach --cgroup "$T/reattach" >/dev/null || ko reattach-setup "detach the bare link"
# If what is left cannot be reset to deny, nothing is attached.
out=$(NSGUARD_FAULT=reset "$NSGUARD_FAULT_BIN" attach --cgroup "$T/reattach" --mode deny \
	--id reattach 2>&1)
rc=$?
if [ $rc = 1 ] && echo "$out" | grep -q 'not attaching' &&
	[ ! -e "/sys/fs/bpf/nsguard/links/$(stat -c %i "$T/reattach")" ]; then
	ok reattach-reset-failed-not-attached
else
	ko reattach-reset-failed-not-attached "exit $rc: $out"
fi
attach --cgroup "$T/reattach" --mode deny --id reattach || ko reattach-setup "attach deny"
got=$(counter reattach allowed)/$(counter reattach denied)
if [ "$got" = 0/0 ]; then ok reattach-counts-start-at-zero; else ko reattach-counts-start-at-zero "allowed/denied $got"; fi
"$NSG" detach --id reattach >/dev/null

# Pins of another build (#11 item 4).  build/nsguard-next stands in for a
# newer nsguard whose policy layout differs.  It never writes into this
# build's maps: it refuses, naming `nsguard upgrade`; its upgrade moves every
# guarded cgroup, policy and all, to its own program; then this build refuses
# in turn, until it upgrades back.
NEXT=${NSGUARD_NEXT_BIN:-$(dirname "$NSG")/nsguard-next}
nsg_progs() { bpftool -j prog show | jq -r '[.[] | select(.name // "" | startswith("nsguard_userns")) | .id] | join(" ")'; }
mkdir -p "$T/up1" "$T/up2" "$T/up3"
attach --cgroup smoke/up1 --mode allow --max-depth 2 --id up1 || ko upgrade-setup "attach up1"
attach --cgroup smoke/up2 --mode deny --errno ENOSPC --id up2 || ko upgrade-setup "attach up2"
nlinks=$(find /sys/fs/bpf/nsguard/links -mindepth 1 | wc -l)
prog0=$(nsg_progs)
out=$("$NEXT" attach --cgroup smoke/up3 --mode allow --id up3 2>&1)
rc=$?
if [ $rc = 1 ] && [[ $out == *"comes from another nsguard build"*"run 'nsguard upgrade'"* ]] &&
	[ ! -e "/sys/fs/bpf/nsguard/links/$(stat -c %i "$T/up3")" ]; then
	ok upgrade-other-build-attach-refused
else
	ko upgrade-other-build-attach-refused "exit $rc: $out"
fi
out=$("$NEXT" status 2>&1)
rc=$?
if [ $rc = 1 ] && [[ $out == *"comes from another nsguard build"* ]]; then
	ok upgrade-other-build-status-refused
else
	ko upgrade-other-build-status-refused "exit $rc: $out"
fi
out=$("$NEXT" upgrade 2>&1)
rc=$?
prog1=$(nsg_progs)
if [ $rc = 0 ] && [[ $out == "moved $nlinks guarded cgroups to this build's program"* ]] &&
	[ -n "$prog1" ] && [ "$prog1" != "$prog0" ] && [ "${prog1// /}" = "$prog1" ] &&
	[ "$(find /sys/fs/bpf/nsguard/links -mindepth 1 | wc -l)" = "$nlinks" ]; then
	ok upgrade-moves-every-cgroup
else
	ko upgrade-moves-every-cgroup "exit $rc: $out; programs '$prog0' -> '$prog1'"
fi
expect upgrade-keeps-allow ok up1 2
expect upgrade-keeps-depth EPERM up1 3
expect upgrade-keeps-deny ENOSPC up2
got=$("$NEXT" status --json | jq -r '[.containers[] | select(.id == "up1" or .id == "up2") |
	"\(.id):\(.mode):\(.attached):\(.allowed)/\(.denied)"] | join(" ")')
if [ "$got" = "up1:allow:true:4/1 up2:deny:true:0/1" ]; then ok upgrade-new-build-status; else ko upgrade-new-build-status "$got"; fi
out=$("$NSG" attach --cgroup smoke/up3 --mode allow --id up3 2>&1)
rc=$?
if [ $rc = 1 ] && [[ $out == *"comes from another nsguard build"* ]]; then
	ok upgrade-old-build-refused-after
else
	ko upgrade-old-build-refused-after "exit $rc: $out"
fi
out=$("$NSG" upgrade 2>&1)
rc=$?
if [ $rc = 0 ] && [[ $out == "moved $nlinks guarded cgroups"* ]]; then ok upgrade-back; else ko upgrade-back "exit $rc: $out"; fi
expect upgrade-back-keeps-deny ENOSPC up2
out=$("$NSG" upgrade 2>&1)
rc=$?
if [ $rc = 0 ] && [[ $out == *"nothing to upgrade"* ]]; then ok upgrade-current; else ko upgrade-current "exit $rc: $out"; fi
"$NSG" detach --id up1 >/dev/null
"$NSG" detach --id up2 >/dev/null

"$NSG" detach --id audit >/dev/null
"$NSG" detach --id allow >/dev/null
"$NSG" detach --id depth0 >/dev/null
"$NSG" detach --id base >/dev/null
"$NSG" detach --id count >/dev/null
left=$("$NSG" status --json | jq '.containers | length')
if [ "$left" = 0 ] && [ -z "$(ls /sys/fs/bpf/nsguard/links)" ]; then ok all-detached; else ko all-detached "$left records, links: $(ls /sys/fs/bpf/nsguard/links)"; fi
exit $failed
