#!/bin/bash
# 15-guard.sh: prove the guard mechanism with build/nsguard and plain
# cgroups (no container runtime).  Guest only:
#   integration/vm-run -- bash integration/tests/15-guard.sh
# One PASS:/FAIL: line per case, named guard/<case>: each case is a function
# run by gcase, i.e. nsg_case (lib.sh), the runtime-free core of the
# container suites' ct_case; the want_* helpers and ct_state come from
# lib-ct.sh (sourced for them only: no runtime is started).
# Case functions run through gcase, which shellcheck cannot follow (SC2317),
# and read `COND && COND || fails WHY`: fails runs exactly when the
# conditions do not all hold, as meant (SC2015).
# shellcheck disable=SC2317,SC2015
# shellcheck source=integration/tests/lib-ct.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib-ct.sh"
set -u
in_guest

NSG=$NSGUARD
NSGUARD_FAULT_BIN=${NSGUARD_FAULT_BIN:-$(dirname "$NSG")/nsguard-fault}
CG=/sys/fs/cgroup
T=$CG/smoke
failed=0
# ko STEP WHY: a set-up step failed (a FAIL line only; its cases fail too).
ko() { fail "guard/$1" "$2"; failed=1; }
# gcase NAME FUNC [ARGS...]: case guard/NAME; FUNC sets CT_WHY when it fails.
gcase() { nsg_case "guard/$1" "${@:2}" || failed=1; }
# fails WHY: the case failed because WHY (for FUNCs: `cond || fails WHY`).
fails() { CT_WHY=$1; return 1; }

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

# want_userns WANT CGROUP [LEVELS]: userns CGROUP [LEVELS] prints WANT.
want_userns() {
	local want=$1 got
	shift
	got=$(userns "$@")
	[ "$got" = "$want" ] || fails "wanted $want, got $got"
}
# expect_userns CASE WANT CGROUP [LEVELS]: that as case guard/CASE.
expect_userns() { gcase "$1" want_userns "${@:2}"; }

attach() { "$NSG" attach "$@" >/tmp/attach.out 2>&1 || { cat /tmp/attach.out; return 1; }; }

PINS=/sys/fs/bpf/nsguard
# bpfx ARGS...: `nsg-userns bpf ARGS` here, outside every guarded cgroup (as a
# container with a view of bpffs that no bpf() guard covers); prints its line.
bpfx() { "$NSG_USERNS" bpf "$@" 2>&1; }
# bpfin CGROUP ARGS...: the same as a member of cgroup $T/CGROUP.
bpfin() { incg "$1" "$NSG_USERNS" bpf "${@:2}" 2>&1; }
# link_state ID: [attached, link] of container ID in status --json.
link_state() { "$NSG" status --json | jq -c --arg id "$1" '[.containers[] | select(.id == $id) | .attached, .link]'; }
# status_block ID: container ID's lines of the text status.
status_block() { "$NSG" status 2>/dev/null | awk -v c="container $1" '$0 == c {p = 1} p && $0 == "" {exit} p'; }

# counter ID FIELD: from status --json.
counter() {
	"$NSG" status --json | jq -r --arg id "$1" ".containers[] | select(.id == \$id) | .$2"
}

mkdir -p "$T"
for d in deny audit allow depth base count par par/child par/child/grand gcme hookcg other; do
	mkdir -p "$T/$d"
done

# load: the boot-time step.  This suite is the first of the boot to use
# nsguard, so the program is not loaded yet; the attaches below reuse it.
c_load() {
	local out
	[ ! -e /sys/fs/bpf/nsguard/prog ] || fails "the program was loaded before the case"
	out=$("$NSG" load 2>&1) && [[ $out == "loaded (pinned at /sys/fs/bpf/nsguard/prog"* ]] &&
		[ -e /sys/fs/bpf/nsguard/policies ] || fails "first load: $out"
	out=$("$NSG" load 2>&1) && [[ $out == "already loaded"* ]] || fails "second load: $out"
}
gcase load c_load
prog_ino=$(stat -c %i /sys/fs/bpf/nsguard/prog 2>/dev/null)

# State modes (#40 item 4): anything that can open a lock file can hold its
# flock, through a read-only descriptor too.  After a fresh load the run
# directory is 0700 and the lock 0000: root opens it through
# CAP_DAC_OVERRIDE, host uid 0 without it (a host-root container with
# capabilities dropped) cannot, nor can anyone else look in.  State an older
# build left looser is tightened by the next load.
nodac_caps=-dac_override,-dac_read_search
nodac=(setpriv --inh-caps="$nodac_caps" --bounding-set="$nodac_caps" --)
c_state_modes() {
	local m out
	m=$(stat -c '%n %a' /run/nsguard /run/nsguard/lock 2>&1 | tr '\n' ' ')
	[ "$m" = "/run/nsguard 700 /run/nsguard/lock 0 " ] || { fails "after load: $m"; return; }
	out=$("${nodac[@]}" flock -n /run/nsguard/lock true 2>&1) &&
		{ fails "uid 0 without CAP_DAC_OVERRIDE took the lock"; return; }
	[[ $out == *"Permission denied"* ]] || { fails "uid 0 without CAP_DAC_OVERRIDE: $out"; return; }
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups -- ls /run/nsguard 2>&1) &&
		{ fails "nobody lists /run/nsguard: $out"; return; }
	chmod 755 /run/nsguard && chmod 600 /run/nsguard/lock || { fails "chmod"; return; }
	out=$("$NSG" load 2>&1) || { fails "load again: $out"; return; }
	m=$(stat -c '%n %a' /run/nsguard /run/nsguard/lock 2>&1 | tr '\n' ' ')
	[ "$m" = "/run/nsguard 700 /run/nsguard/lock 0 " ] || fails "a load left an older build's modes: $m"
}
gcase state-modes c_state_modes

# check: everything the kernel must offer, plus a trial attach.
c_check() {
	local out feat
	out=$("$NSG" check 2>&1) || { fails "$(echo "$out" | tr '\n' ' ')"; return; }
	# It names this kernel and finds each feature in its BTF.
	[[ $out == "ok       kernel $(uname -r) $(uname -m) "* ]] ||
		{ fails "no kernel line: $out"; return; }
	for feat in "userns_create LSM hook" "BPF_LSM_CGROUP attach type" "bpf_set_retval() helper"; do
		[[ $out == *"ok       kernel feature: $feat ("* ]] ||
			{ fails "no feature '$feat': $out"; return; }
	done
	out=$("$NSG" check --json 2>&1) &&
		[ "$(jq -r '.kernel.release' <<<"$out")" = "$(uname -r)" ] || fails "--json kernel: $out"
}
gcase check c_check

# Before anything is attached, user namespaces work.
expect_userns baseline ok deny

# deny: every errno, and root with every capability is refused too.
attach --cgroup smoke/deny --mode deny --id deny || ko attach-deny "attach failed"
expect_userns deny-eperm EPERM deny
c_attach_reuses_load() {
	local now
	now=$(stat -c %i /sys/fs/bpf/nsguard/prog)
	[ -n "$prog_ino" ] && [ "$now" = "$prog_ino" ] || fails "prog pin inode $prog_ino, now $now"
}
gcase attach-reuses-load c_attach_reuses_load
c_root_all_caps() {
	local caps
	caps=$(awk '/^CapEff/ {print $2}' /proc/self/status)
	[ "$(id -u)" = 0 ] && [ "$caps" = "000001ffffffffff" ] && [ "$(userns deny)" = EPERM ] ||
		fails "uid $(id -u) CapEff $caps: $(userns deny)"
}
gcase root-all-caps-refused c_root_all_caps
attach --cgroup /sys/fs/cgroup/smoke/deny --mode deny --errno ENOSPC --id deny || ko attach-enospc "re-attach failed"
expect_userns deny-enospc ENOSPC deny
attach --cgroup smoke/deny --mode deny --errno EACCES --id deny || ko attach-eacces "re-attach failed"
expect_userns deny-eacces EACCES deny
expect_userns outside-unaffected ok other
c_other_id() {
	! "$NSG" attach --cgroup smoke/deny --mode deny --id someone-else >/dev/null 2>&1 ||
		fails "a second id attached to a guarded cgroup"
}
gcase other-id-refused c_other_id

# audit and allow with depth limits (maps are written between levels).
attach --cgroup smoke/audit --mode audit --max-depth 1 --id audit || ko attach-audit "attach failed"
expect_userns audit-depth1 ok audit 1
expect_userns audit-depth2-denied EPERM audit 2
attach --cgroup smoke/allow --mode allow --max-depth 2 --errno ENOSPC --id allow || ko attach-allow "attach failed"
expect_userns allow-depth1 ok allow 1
expect_userns allow-depth2 ok allow 2
expect_userns allow-depth3-denied ENOSPC allow 3
attach --cgroup smoke/depth --mode allow --max-depth 0 --id depth0 || ko attach-depth0 "attach failed"
expect_userns allow-depth0-denied EPERM depth 1
# base level 1: the container's own namespace is level 1, so a level-0
# caller and a level-1 caller both create depth 1; level 2 is depth 2.
attach --cgroup smoke/base --mode allow --max-depth 1 --base-level 1 --id base || ko attach-base "attach failed"
expect_userns base-level-depth1 ok base 2
expect_userns base-level-depth2-denied EPERM base 3

# Exact counters: 3 allowed, then 2 x (1 allowed + 1 denied).
attach --cgroup smoke/count --mode allow --max-depth 1 --id count || ko attach-count "attach failed"
for _ in 1 2 3; do userns count >/dev/null; done
for _ in 1 2; do userns count 2 >/dev/null; done
c_counters_exact() {
	local got
	got="$(counter count allowed)/$(counter count denied)/$(counter count audited)"
	[ "$got" = 5/2/0 ] || fails "allowed/denied/audited $got, wanted 5/2/0"
}
gcase counters-exact c_counters_exact
c_counters_audit() {
	local got
	got="$(counter audit audited)/$(counter audit denied)"
	[ "$got" = 2/1 ] || fails "audited/denied $got, wanted 2/1"
}
gcase counters-audit c_counters_audit
c_status_human() {
	"$NSG" status | grep -q '^container count' || fails "$("$NSG" status 2>&1 | head -5)"
}
gcase status-human c_status_human
c_status_loaded() {
	[ "$("$NSG" status --json | jq -r .loaded)" = true ] || fails "loaded is not true"
}
gcase status-loaded c_status_loaded
# 64-bit values are decimal strings (a JSON number is a double); 32-bit ones numbers.
c_status_u64_strings() {
	"$NSG" status --json | jq -e '[.events_dropped, .decisions, (.containers[] | .cgroup_id, .allowed,
		.denied, .audited, .events_dropped) | type == "string" and test("^[0-9]+$")] + [.containers[] |
		(.max_depth, .base_level) | type == "number"] | all' >/dev/null ||
		fails "$("$NSG" status --json)"
}
gcase status-json-u64-strings c_status_u64_strings

# monitor: drain the backlog (SIGINT must exit 0), then see one audit and one deny.
c_monitor_sigint() {
	local rc
	timeout --preserve-status -s INT 3 "$NSG" monitor --json >/tmp/backlog.json
	rc=$?
	[ "$rc" = 0 ] || fails "exit $rc after SIGINT"
}
gcase monitor-sigint c_monitor_sigint
c_monitor_count() {
	local mon rc
	"$NSG" monitor --json --count 2 >/tmp/mon.json 2>/tmp/mon.err &
	mon=$!
	sleep 1
	userns audit >/dev/null
	userns deny >/dev/null
	for _ in $(seq 50); do kill -0 "$mon" 2>/dev/null || break; sleep 0.2; done
	if kill -0 "$mon" 2>/dev/null; then
		kill "$mon"
		fails "monitor --count 2 still running: $(cat /tmp/mon.json /tmp/mon.err)"
		return
	fi
	wait "$mon"
	rc=$?
	[ "$rc" = 0 ] || fails "exit status $rc"
}
gcase monitor-count c_monitor_count
# mon_has FILTER FILE: exactly one event in FILE matches the jq FILTER.
mon_has() {
	jq -n -e "[inputs | select($1)] | length == 1" "$2" >/dev/null || fails "$(cat "$2")"
}
gcase monitor-audit-event mon_has '.id == "audit" and .decision == "audit" and .reason == "mode" and .errno == null and .comm == "unshare" and .depth == 1 and (.cgroup_id | test("^[1-9][0-9]*$")) and (.task_cgroup_id | type == "string")' /tmp/mon.json
gcase monitor-deny-event mon_has '.id == "deny" and .decision == "deny" and .reason == "mode" and .errno == "EACCES" and .uid == 0 and .pid > 0' /tmp/mon.json
"$NSG" monitor --count 1 >/tmp/mon.txt &
mon=$!
sleep 1
userns depth >/dev/null
userns depth >/dev/null
wait "$mon"
# --count must not consume past its last event.
"$NSG" monitor --count 1 >/tmp/mon2.txt
# mon_grep [-E] PATTERN FILE: FILE has a line matching PATTERN.
mon_grep() { grep -q "$@" || fails "$(cat "${*: -1}")"; }
gcase monitor-count-leaves-rest mon_grep ' deny id=depth0 ' /tmp/mon2.txt
gcase monitor-human mon_grep -E '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z deny id=depth0 cgroup=[0-9]+ pid=[0-9]+ tid=[0-9]+ comm=unshare uid=0 gid=0 level=0 depth=1 reason=depth errno=EPERM$' /tmp/mon.txt

# Ring buffer overflow: with nobody reading, events are dropped and counted;
# a monitor that sleeps through a flood reports the drops when it wakes.
flood() { # flood CGROUP N: N denied unshare(CLONE_NEWUSER) calls from one process
	incg "$1" /usr/bin/python3 -c 'import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
for _ in range(int(sys.argv[1])):
    libc.unshare(0x10000000)' "$2"
}
c_events_dropped() {
	local before after denied0 denied1
	before=$("$NSG" status --json | jq -r .events_dropped)
	denied0=$(counter deny denied)
	flood deny 4000
	after=$("$NSG" status --json | jq -r .events_dropped)
	denied1=$(counter deny denied)
	[ "$after" -gt "$before" ] && [ $((denied1 - denied0)) = 4000 ] ||
		fails "events_dropped $before -> $after, denied $denied0 -> $denied1"
}
gcase events-dropped-counted c_events_dropped
c_monitor_drops() {
	local mon before after rc reported
	"$NSG" monitor --json >/tmp/drop.json &
	mon=$!
	sleep 2 # drains the backlog of the flood above
	kill -STOP "$mon"
	before=$("$NSG" status --json | jq -r .events_dropped)
	flood deny 4000
	after=$("$NSG" status --json | jq -r .events_dropped)
	kill -CONT "$mon"
	sleep 2
	kill -INT "$mon"
	wait "$mon"
	rc=$?
	reported=$(jq -n '[inputs | .dropped // "0" | tonumber] | add' /tmp/drop.json)
	[ "$rc" = 0 ] && [ "$after" -gt "$before" ] && [ "$reported" = $((after - before)) ] ||
		fails "exit $rc, dropped $before -> $after, reported $reported"
}
gcase monitor-reports-drops c_monitor_drops

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
expect_userns no-policy-denies EPERM nopol
wait "$mon"
gcase no-policy-event mon_has '.id == null and .cgroup_id == "0" and .reason == "no-policy" and .mode == "none" and .errno == "EPERM"' /tmp/nopol.json
"$NSG" detach --id nopol >/dev/null || ko detach-nopol "detach failed"

# A child cgroup inherits; nested guards: the most restrictive wins.
attach --cgroup smoke/par --mode allow --max-depth 3 --id par || ko attach-par "attach failed"
expect_userns inherit-parent-allows ok par/child/grand 2
attach --cgroup smoke/par/child --mode deny --errno ENOSPC --id child || ko attach-child "attach failed"
expect_userns inherit-child-deny ENOSPC par/child/grand
expect_userns nested-parent-still-allows ok par
attach --cgroup smoke/par --mode deny --id par || ko attach-par2 "re-attach failed"
attach --cgroup smoke/par/child --mode allow --id child || ko attach-child2 "re-attach failed"
expect_userns nested-parent-deny-wins EPERM par/child/grand

# detach restores.
"$NSG" detach --cgroup smoke/deny >/dev/null || ko detach "detach --cgroup failed"
expect_userns detach-restores ok deny
c_detach_cleans() {
	[ ! -e /sys/fs/bpf/nsguard/links/"$(stat -c %i "$T/deny")" ] && [ ! -e /run/nsguard/containers/deny.json ] ||
		fails "link pin or record left behind"
}
gcase detach-cleans c_detach_cleans
if ! "$NSG" detach --id child >/dev/null || ! "$NSG" detach --id par >/dev/null; then
	ko detach-id "detach --id failed"
fi
expect_userns detach-id-restores ok par/child/grand 2

# gc: a record whose cgroup was removed.
attach --cgroup smoke/gcme --mode deny --id gcme || ko attach-gcme "attach failed"
rmdir "$T/gcme"
c_gc() {
	local out
	out=$("$NSG" gc 2>&1)
	echo "$out" | grep -q 'removed container gcme' && [ ! -e /run/nsguard/containers/gcme.json ] &&
		[ "$("$NSG" status --json | jq '[.containers[] | select(.id == "gcme")] | length')" = 0 ] ||
		fails "$out"
}
gcase gc c_gc

# gc: a pinned link with neither a record nor a live cgroup.
mkdir -p "$T/orphan"
attach --cgroup smoke/orphan --id orphan || ko attach-orphan "attach failed"
cgid=$(stat -c %i "$T/orphan")
rm /run/nsguard/containers/orphan.json
rmdir "$T/orphan"
c_gc_orphan_link() {
	local out
	out=$("$NSG" gc 2>&1)
	echo "$out" | grep -q "removed link /sys/fs/bpf/nsguard/links/$cgid" && [ ! -e /sys/fs/bpf/nsguard/links/"$cgid" ] ||
		fails "$out"
}
gcase gc-orphan-link c_gc_orphan_link
c_gc_keeps_live() {
	local out
	out=$("$NSG" gc 2>&1)
	[ -z "$out" ] && [ -e /run/nsguard/containers/audit.json ] || fails "$out"
}
gcase gc-keeps-live c_gc_keeps_live

# --json on attach, detach and gc: the same facts as their text lines.
mkdir -p "$T/jsonme"
c_attach_json() {
	local out
	out=$("$NSG" attach --cgroup smoke/jsonme --id jsonme --mode allow --max-depth 2 --json 2>&1) &&
		jq -e --arg cgid "$(stat -c %i "$T/jsonme")" '.id == "jsonme" and
			.cgroup == "/smoke/jsonme" and .cgroup_id == $cgid and .attached == true and
			.mode == "allow" and .max_depth == 2' <<<"$out" >/dev/null || fails "$out"
}
gcase attach-json c_attach_json
c_detach_json() {
	local out
	out=$("$NSG" detach --id jsonme --json 2>&1) &&
		jq -e '.id == "jsonme" and .attached == false' <<<"$out" >/dev/null &&
		[ ! -e /run/nsguard/containers/jsonme.json ] || fails "$out"
	"$NSG" attach --cgroup smoke/jsonme --id jsonme2 >/dev/null || fails "re-attach failed"
	out=$("$NSG" detach --cgroup /sys/fs/cgroup/smoke/jsonme --json 2>&1) &&
		jq -e '.id == "jsonme2" and .cgroup == "/smoke/jsonme" and .attached == false' \
			<<<"$out" >/dev/null || fails "$out"
}
gcase detach-json c_detach_json
c_gc_json() {
	local out cgid
	"$NSG" attach --cgroup smoke/jsonme --id jsonme3 >/dev/null || fails "attach failed"
	cgid=$(stat -c %i "$T/jsonme")
	rmdir "$T/jsonme"
	out=$("$NSG" gc --json 2>&1) &&
		jq -e --arg cgid "$cgid" '.removed | length == 1 and .[0].id == "jsonme3" and
			.[0].cgroup == "/smoke/jsonme" and .[0].cgroup_id == $cgid and .[0].why == "gone"' \
			<<<"$out" >/dev/null || fails "$out"
	out=$("$NSG" gc --json 2>&1) && jq -e '.removed == []' <<<"$out" >/dev/null || fails "second gc: $out"
}
gcase gc-json c_gc_json

# Flat in the number of guarded cgroups: an attach finds a cgroup's guard
# through the index (by-cgroup-id/<cgroup id>, a hard link of the record),
# never by reading every record.  A malformed record is the trap: whatever
# reads every record warns about it (status shows that it does).
flat_attach() {
	local out cgid idx=/run/nsguard/containers/by-cgroup-id
	out=$("$NSG" status 2>&1 >/dev/null)
	[[ $out == *skipping*zz-trap.json* ]] || { fails "status did not read the trap: $out"; return 1; }
	out=$("$NSG" attach --cgroup smoke/flat --id flat --mode allow 2>&1) || { fails "attach: $out"; return 1; }
	[[ $out != *skipping* ]] || { fails "attach read every record: $out"; return 1; }
	cgid=$(stat -c %i "$T/flat")
	[ "$idx/$cgid" -ef /run/nsguard/containers/flat.json ] || { fails "no index entry $idx/$cgid"; return 1; }
	out=$("$NSG" attach --cgroup smoke/flat --id flat2 2>&1) && { fails "a second id took the cgroup"; return 1; }
	[[ $out == *"already guarded for container flat"* && $out != *skipping* ]] || { fails "second id: $out"; return 1; }
	out=$("$NSG" detach --id flat 2>&1) || { fails "detach: $out"; return 1; }
	[ ! -e "$idx/$cgid" ] || fails "index entry left after detach"
}
c_attach_reads_no_record() {
	local rc
	mkdir -p "$T/flat"
	printf 'not a record\n' >/run/nsguard/containers/zz-trap.json
	flat_attach
	rc=$?
	rm -f /run/nsguard/containers/zz-trap.json
	rmdir "$T/flat"
	return "$rc"
}
gcase attach-reads-no-record c_attach_reads_no_record

# The OCI hook path: createRuntime attaches from the state, poststop detaches.
# Like a container's init, the stand-in has a pid, cgroup and mount namespace
# of its own (as the host's root in the host's, nsguard would refuse it).
victim=$(ct_spawn_init "$T/hookcg") || ko hook-init "no stand-in init in $T/hookcg"
state=$(ct_state hooked "$victim" "$CT_WORK/b/none" '{"nsguard.io/userns":"deny","nsguard.io/userns.errno":"ENOSPC"}' created)
# hook STAGE STATE [nsguard args...]: the hook by hand; false with CT_WHY on failure.
hook() {
	local stage=$1 st=$2 rc
	shift 2
	echo "$st" | "$NSG" hook "$stage" "$@"
	rc=$?
	[ "$rc" = 0 ] || fails "exit $rc"
}
gcase hook-create hook createRuntime "$state"
expect_userns hook-denies ENOSPC hookcg
# The next hook of a container whose link was detached under nsguard (the
# pin stays) attaches it anew (#40 item 2).
c_hook_relinks() {
	local hid out
	hid=$(stat -c %i "$T/hookcg")
	out=$(bpfx detach "$PINS/links/$hid") && [ "$(userns hookcg)" = ok ] ||
		{ fails "the detach did not unguard: $out, $(userns hookcg)"; return; }
	out=$(echo "$state" | "$NSG" hook createRuntime 2>&1) &&
		[[ $out == *"links/$hid was detached from cgroup $hid (not by nsguard): attaching it anew"* ]] &&
		[ "$(link_state hooked)" = '[true,"attached"]' ] || fails "$out; $(link_state hooked)"
}
gcase hook-relinks-detached c_hook_relinks
expect_userns hook-relinked-denies ENOSPC hookcg
# Runtimes run poststop once the container's processes are gone; while its
# init runs, a poststop for the id is another instance's and changes nothing.
c_poststop_running() {
	echo "$state" | "$NSG" hook poststop 2>/dev/null && [ -e /run/nsguard/containers/hooked.json ] ||
		fails "poststop removed the record of a running init"
}
gcase hook-poststop-while-init-runs c_poststop_running
ct_kill "$victim"
c_poststop() {
	echo "$state" | "$NSG" hook poststop && [ ! -e /run/nsguard/containers/hooked.json ] ||
		fails "poststop failed or left the record"
}
gcase hook-poststop c_poststop
expect_userns hook-poststop-restores ok hookcg
gcase hook-poststop-unknown hook poststop "$(ct_state never-seen '' /nonexistent - stopped)"
# The refusals below are each given a live init that nsguard would guard
# (its own cgroup, cgroup and mount namespace), so that only the check under
# test can refuse it, and they match that check's message: an exited pid or
# one in the root cgroup would be refused whatever that check does.
echo 'fail-mode = open' >/tmp/open.conf
live=$(ct_spawn_init "$T/live") || ko live-init "no stand-in init in $T/live"
# Its bundle's config.json says where it is, as a runtime's would.
ct_bundle refused --no-hooks --cgpath /smoke/live -- true || ko live-init "no bundle"
ct_bundle refused-root --no-hooks --cgpath / -- true || ko root-init "no bundle"
# refused STATE GLOB [nsguard args...]: createRuntime of STATE exits 1 with
# one line matching GLOB and leaves no record of container "refused".
refused() {
	local st=$1 glob=$2 err rc
	shift 2
	err=$(echo "$st" | "$NSG" hook createRuntime "$@" 2>&1)
	rc=$?
	# shellcheck disable=SC2053 # GLOB is a glob
	[ "$rc" = 1 ] && [ "$(echo "$err" | wc -l)" = 1 ] && [[ $err == $glob ]] ||
		{ fails "exit $rc: $err"; return 1; }
	[ ! -e /run/nsguard/containers/refused.json ] || fails "exit 1, but a record was written"
}
# A bad annotation key is the creator's doing: refused, fail-mode open or not.
badann=$(ct_state refused "$live" "$CT_WORK/b/refused" '{"nsguard.io/usrns":"allow"}' created)
badglob='nsguard: container refused: unknown annotation nsguard.io/usrns (known: *)'
gcase hook-bad-annotation refused "$badann" "$badglob"
gcase hook-bad-annotation-fail-mode-open refused "$badann" "$badglob" --config /tmp/open.conf
# fail-mode: a process in the root cgroup cannot be guarded.  Where the
# container sits is the bundle's choice (cgroupsPath "/"), so fail-mode open
# does not open it (50-failure.sh's open-pid-exited shows what it does open).
# Its stand-in init has a cgroup and mount namespace of its own, as a
# container's would, so that only the root-cgroup check refuses it.
rootpid=$(ct_spawn_init "$CG") || ko root-init "no stand-in init in the root cgroup"
rootstate=$(ct_state refused "$rootpid" "$CT_WORK/b/refused-root" - created)
rootglob="nsguard: container refused: pid $rootpid is in the root cgroup; *"
gcase fail-mode-open-keeps-root-cgroup-closed refused "$rootstate" "$rootglob" --config /tmp/open.conf
gcase fail-mode-closed refused "$rootstate" "$rootglob"
ct_kill "$rootpid"
gcase missing-explicit-config refused "$(ct_state refused "$live" "$CT_WORK/b/refused" - created)" \
	"nsguard: open config /nonexistent.conf: No such file or directory" --config /nonexistent.conf
ct_kill "$live"

# Re-attach: the kernel frees a cgroup's storage with the cgroup, not at
# detach, so a new attachment finds what the last one wrote.  It must start
# at deny with zero counts, and stay at deny when writing its policy fails
# (build/nsguard-fault fails that write on request).
mkdir -p "$T/reattach"
attach --cgroup "$T/reattach" --mode allow --id reattach || ko reattach-setup "attach allow"
expect_userns reattach-first-allow ok reattach
"$NSG" detach --id reattach >/dev/null || ko reattach-setup "detach"
# fault_attach NAME PATTERN ARGS...: nsguard-fault with NSGUARD_FAULT=NAME
# attaches ARGS, exits 1 and says PATTERN; sets out.
fault_attach() {
	local fault=$1 pattern=$2 rc
	shift 2
	out=$(NSGUARD_FAULT=$fault "$NSGUARD_FAULT_BIN" attach "$@" 2>&1)
	rc=$?
	[ "$rc" = 1 ] && echo "$out" | grep -q "$pattern" || fails "exit $rc: $out"
}
gcase reattach-failed-write-message fault_attach policy-write 'stays guarded with deny until detached' \
	--cgroup "$T/reattach" --mode allow --id reattach
expect_userns reattach-failed-write-denies EPERM reattach
"$NSG" detach --cgroup "$T/reattach" >/dev/null || ko reattach-setup "detach the bare link"
# If what is left cannot be reset to deny, nothing is attached.
c_reset_failed() {
	fault_attach reset 'not attaching' --cgroup "$T/reattach" --mode deny --id reattach || return 1
	[ ! -e "/sys/fs/bpf/nsguard/links/$(stat -c %i "$T/reattach")" ] || fails "exit 1, but attached: $out"
}
gcase reattach-reset-failed-not-attached c_reset_failed
attach --cgroup "$T/reattach" --mode deny --id reattach || ko reattach-setup "attach deny"
c_reattach_zero() {
	local got
	got=$(counter reattach allowed)/$(counter reattach denied)
	[ "$got" = 0/0 ] || fails "allowed/denied $got"
}
gcase reattach-counts-start-at-zero c_reattach_zero
"$NSG" detach --id reattach >/dev/null

# The guard checks itself (#40 item 2): "guarded" is what the kernel says
# of the links (their cgroup id), not a pin that exists.  A process outside
# every guarded cgroup OBJ_GETs links/<id> and LINK_DETACHes it: the pin
# stays, the cgroup is unguarded until nsguard attaches it anew.
mkdir -p "$T/dead"
attach --cgroup smoke/dead --mode deny --errno ENOSPC --id dead || ko dead-setup "attach"
deadid=$(stat -c %i "$T/dead")
userns dead >/dev/null # denied once: the count the re-link must keep
c_detach_outside() {
	local out
	out=$(bpfx detach "$PINS/links/$deadid")
	[ "$out" = "bpf: ok" ] && [ -e "$PINS/links/$deadid" ] && [ "$(userns dead)" = ok ] ||
		fails "detach: $out, pin $(ls "$PINS/links/$deadid" 2>&1), userns $(userns dead)"
}
gcase detached-outside-unguards c_detach_outside
c_status_detached() {
	local got block
	got=$(link_state dead)
	block=$(status_block dead)
	[ "$got" = '[false,"detached"]' ] && [ "$(link_state audit)" = '[true,"attached"]' ] &&
		grep -q "^  link:       DETACHED, not guarded: $PINS/links/$deadid is pinned" <<<"$block" ||
		{ fails "json $got, audit $(link_state audit); text: $block"; return; }
	got=$("$NSG" status --format prometheus | grep -E '^nsguard_(guarded|detached)_containers ')
	[[ $got == *"nsguard_detached_containers 1"* ]] || fails "prometheus: $got"
}
gcase status-reports-detached c_status_detached
c_attach_relinks() {
	local out
	out=$("$NSG" attach --cgroup smoke/dead --mode deny --errno ENOSPC --id dead 2>&1) &&
		[[ $out == *"links/$deadid was detached from cgroup $deadid"* ]] &&
		[ "$(link_state dead)" = '[true,"attached"]' ] || { fails "$out; $(link_state dead)"; return; }
	# Counts kept: the denial before the detach, none since (it was unguarded).
	[ "$(counter dead denied)" = 1 ] || fails "denied $(counter dead denied), wanted 1 (kept)"
}
gcase attach-relinks-detached c_attach_relinks
expect_userns attach-relinked-denies ENOSPC dead
# gc, root's periodic pass, attaches anew what no hook will see again: a
# detached policy link, and a detached bpf() guard link.
c_gc_relinks() {
	local out kind
	for kind in links bpflinks; do
		out=$(bpfx detach "$PINS/$kind/$deadid") && [ "$(link_state dead)" = '[false,"detached"]' ] ||
			{ fails "$kind: detach $out, $(link_state dead)"; return; }
		out=$("$NSG" gc 2>&1) &&
			[[ $out == *"re-linked container dead (cgroup /smoke/dead, id $deadid: its link was detached)"* ]] &&
			[ "$(link_state dead)" = '[true,"attached"]' ] || { fails "$kind: gc: $out; $(link_state dead)"; return; }
	done
	out=$("$NSG" gc --json 2>&1) && jq -e '.removed == [] and .relinked == []' <<<"$out" >/dev/null ||
		fails "second gc: $out"
}
gcase gc-relinks-detached c_gc_relinks
expect_userns gc-relinked-denies ENOSPC dead
c_gc_relinks_json() {
	local out
	out=$(bpfx detach "$PINS/links/$deadid") || { fails "detach: $out"; return; }
	out=$("$NSG" gc --json 2>/tmp/gc.err) && jq -e --arg cgid "$deadid" '.removed == [] and (.relinked |
		length == 1 and .[0].id == "dead" and .[0].cgroup_id == $cgid and .[0].why == "link detached")' \
		<<<"$out" >/dev/null && grep -q "links/$deadid was detached" /tmp/gc.err || fails "$out $(cat /tmp/gc.err)"
}
gcase gc-relinks-json c_gc_relinks_json
expect_userns gc-json-relinked-denies ENOSPC dead

# The bpf() guard (#40 item 5): a process of a guarded cgroup, the host's
# root with every capability, gets no fd of nsguard's objects (by pin or by
# id) and detaches no link, not even one whose fd it held before it moved
# in; the same calls from outside succeed (the control).
mkdir -p "$T/bg"
attach --cgroup smoke/bg --mode deny --id bg || ko bpf-guard-setup "attach"
bgid=$(stat -c %i "$T/bg")
auditid=$(stat -c %i "$T/audit")
c_bpf_guard_get() {
	local pin out
	for pin in prog bpfguard policies counters stats events learned links/$bgid bpflinks/$bgid \
		links/$auditid; do
		out=$(bpfx get "$PINS/$pin")
		[ "$out" = "bpf: ok" ] || { fails "control: outside, $pin: $out"; return; }
		out=$(bpfin bg get "$PINS/$pin")
		[ "$out" = "bpf: fail at=get errno=EPERM" ] || { fails "inside, $pin: $out"; return; }
	done
}
gcase bpf-guard-obj-get-refused c_bpf_guard_get
c_bpf_guard_by_id() {
	local what id out
	for what in link-id:$(bpftool -j link show pinned "$PINS/links/$auditid" | jq .id) \
		map-id:$(bpftool -j map show pinned "$PINS/policies" | jq .id) \
		prog-id:$(bpftool -j prog show pinned "$PINS/prog" | jq .id); do
		id=${what#*:}
		out=$(bpfx "${what%%:*}" "$id")
		[ "$out" = "bpf: ok" ] || { fails "control: outside, $what: $out"; return; }
		out=$(bpfin bg "${what%%:*}" "$id")
		[ "$out" = "bpf: fail at=id errno=EPERM" ] || { fails "inside, $what: $out"; return; }
	done
}
gcase bpf-guard-by-id-refused c_bpf_guard_by_id
c_bpf_guard_held_fd() {
	local out l
	for l in links/$bgid bpflinks/$bgid links/$auditid; do
		out=$("$NSG_USERNS" bpf held "$PINS/$l" "$T/bg" 2>&1)
		[ "$out" = "bpf: fail at=detach errno=EPERM" ] || { fails "$l: $out"; return; }
	done
	[ "$(link_state bg)" = '[true,"attached"]' ] && [ "$(link_state audit)" = '[true,"attached"]' ] ||
		fails "bg $(link_state bg), audit $(link_state audit)"
}
gcase bpf-guard-held-fd-detach-refused c_bpf_guard_held_fd
expect_userns bpf-guard-still-denies EPERM bg
# Its child cgroups too (a container's own sub-cgroups).
c_bpf_guard_child() {
	local out
	mkdir -p "$T/bg/sub"
	out=$(bpfin bg/sub get "$PINS/policies")
	[ "$out" = "bpf: fail at=get errno=EPERM" ] || fails "$out"
}
gcase bpf-guard-child-cgroup c_bpf_guard_child
c_bpf_guard_detached_with_it() {
	local out
	"$NSG" detach --id bg >/dev/null || { fails "detach failed"; return; }
	[ ! -e "$PINS/bpflinks/$bgid" ] || { fails "bpflinks/$bgid left"; return; }
	out=$(bpfin bg/sub get "$PINS/policies")
	[ "$out" = "bpf: ok" ] || fails "after detach: $out"
}
gcase bpf-guard-goes-with-detach c_bpf_guard_detached_with_it
rmdir "$T/bg/sub" 2>/dev/null

# Pins of another build (#11 item 4).  build/nsguard-next stands in for a
# newer nsguard whose policy layout differs.  It never writes into this
# build's maps: attach refuses, naming `nsguard upgrade` (status says so);
# its upgrade moves every
# guarded cgroup, policy and all, to its own program; then this build refuses
# in turn, until it upgrades back.
NEXT=${NSGUARD_NEXT_BIN:-$(dirname "$NSG")/nsguard-next}
nsg_progs() { bpftool -j prog show | jq -r '[.[] | select(.name // "" | startswith("nsguard_userns")) | .id] | join(" ")'; }
mkdir -p "$T/up1" "$T/up2" "$T/up3"
attach --cgroup smoke/up1 --mode allow --max-depth 2 --id up1 || ko upgrade-setup "attach up1"
attach --cgroup smoke/up2 --mode deny --errno ENOSPC --id up2 || ko upgrade-setup "attach up2"
nlinks=$(find /sys/fs/bpf/nsguard/links -mindepth 1 | wc -l)
prog0=$(nsg_progs)
# run_out WANT-RC PATTERN CMD...: CMD exits WANT-RC and its output matches
# the glob PATTERN; sets out.
run_out() {
	local want=$1 pattern=$2 rc
	shift 2
	out=$("$@" 2>&1)
	rc=$?
	# shellcheck disable=SC2053 # PATTERN is a glob
	[ "$rc" = "$want" ] && [[ $out == $pattern ]] || fails "exit $rc: $out"
}
c_other_build_attach() {
	run_out 1 "*comes from another nsguard build*run 'nsguard upgrade'*" \
		"$NEXT" attach --cgroup smoke/up3 --mode allow --id up3 || return 1
	[ ! -e "/sys/fs/bpf/nsguard/links/$(stat -c %i "$T/up3")" ] || fails "exit 1, but attached: $out"
}
gcase upgrade-other-build-attach-refused c_other_build_attach
# status answers (#31): it says the pins are another build's, and lists the records.
gcase upgrade-other-build-status-says-so run_out 0 "*program:        another build's: *comes from another nsguard build*" "$NEXT" status
# A link detached under the old set guarded nothing: the upgrade guards it
# again and says so, never carries it over as if it had guarded (#40 item 2).
up2id=$(stat -c %i "$T/up2")
[ "$(bpfx detach "$PINS/links/$up2id")" = "bpf: ok" ] || ko upgrade-setup "detach up2's link"
c_upgrade_moves() {
	local rc prog1
	out=$("$NEXT" upgrade 2>&1)
	rc=$?
	prog1=$(nsg_progs)
	[ "$rc" = 0 ] && [[ $out == *"
moved $nlinks guarded cgroups to this build's program"* ]] &&
		[[ $out == "nsguard: warning: upgrade: the link of cgroup $up2id was detached"* && $out == *"; 1 whose link had been detached guarded again"* ]] &&
		[ "$(find "$PINS/bpflinks" -mindepth 1 | wc -l)" = "$nlinks" ] &&
		[ -n "$prog1" ] && [ "$prog1" != "$prog0" ] && [ "${prog1// /}" = "$prog1" ] &&
		[ "$(find /sys/fs/bpf/nsguard/links -mindepth 1 | wc -l)" = "$nlinks" ] ||
		fails "exit $rc: $out; programs '$prog0' -> '$prog1'"
}
gcase upgrade-moves-every-cgroup c_upgrade_moves
expect_userns upgrade-keeps-allow ok up1 2
expect_userns upgrade-keeps-depth EPERM up1 3
expect_userns upgrade-keeps-deny ENOSPC up2
c_new_build_status() {
	local got
	got=$("$NEXT" status --json | jq -r '[.containers[] | select(.id == "up1" or .id == "up2") |
		"\(.id):\(.mode):\(.attached):\(.allowed)/\(.denied)"] | join(" ")')
	[ "$got" = "up1:allow:true:4/1 up2:deny:true:0/1" ] || fails "$got"
}
gcase upgrade-new-build-status c_new_build_status
gcase upgrade-old-build-refused-after run_out 1 "*comes from another nsguard build*" \
	"$NSG" attach --cgroup smoke/up3 --mode allow --id up3
# An older build's set has one program and one link per cgroup: strip the
# bpf() guard from the next build's set to stand for one.  Upgrading from it
# gives every cgroup both links again, and finds none of them detached.
rm -f "$PINS/bpfguard" && rm -rf "$PINS/bpflinks" || ko upgrade-setup "strip the bpf() guard"
c_upgrade_from_one_program() {
	# Back to the older build: done, and said (#43).
	run_out 0 "moved $nlinks guarded cgroups*"$'\n'"note: this build (sequence *) is not newer than the program it replaced*" \
		"$NSG" upgrade || return 1
	[[ $out != *detached* ]] && [ -e "$PINS/bpfguard" ] &&
		[ "$(find "$PINS/bpflinks" -mindepth 1 | wc -l)" = "$nlinks" ] &&
		[ "$(bpfin up2 get "$PINS/policies")" = "bpf: fail at=get errno=EPERM" ] ||
		fails "$out; bpflinks: $(find "$PINS/bpflinks" -mindepth 1 -printf '%f ' 2>&1)"
}
gcase upgrade-back-from-one-program c_upgrade_from_one_program
expect_userns upgrade-back-keeps-deny ENOSPC up2
gcase upgrade-current run_out 0 "*nothing to upgrade*" "$NSG" upgrade
"$NSG" detach --id up1 >/dev/null
"$NSG" detach --id up2 >/dev/null

"$NSG" detach --id dead >/dev/null
"$NSG" detach --id audit >/dev/null
"$NSG" detach --id allow >/dev/null
"$NSG" detach --id depth0 >/dev/null
"$NSG" detach --id base >/dev/null
"$NSG" detach --id count >/dev/null
c_all_detached() {
	local left links
	left=$("$NSG" status --json | jq '.containers | length')
	links=$(find /sys/fs/bpf/nsguard/links /sys/fs/bpf/nsguard/bpflinks -mindepth 1 -printf '%f ')
	[ "$left" = 0 ] && [ -z "$links" ] || fails "$left records, links: $links"
}
gcase all-detached c_all_detached

# After use (attaches, hooks, a monitor): every directory under /run/nsguard
# 0700, every lock file 0000, each made by this build.
c_state_modes_after_use() {
	local loose f
	loose=$(find /run/nsguard -type d ! -perm 700 -printf '%p %m, ')
	for f in lock hook-outcomes events/collector.lock; do
		[ -e "/run/nsguard/$f" ] || { loose+="no $f, "; continue; }
		[ "$(stat -c %a "/run/nsguard/$f")" = 0 ] || loose+="$f $(stat -c %a "/run/nsguard/$f"), "
	done
	[ -z "$loose" ] || fails "$loose"
}
gcase state-modes-after-use c_state_modes_after_use
exit $failed
