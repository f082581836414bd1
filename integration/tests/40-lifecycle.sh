#!/bin/bash
# Lifecycle: the policy holds after the hook exits and until poststop; poststop
# and gc leave nothing behind; re-running the hook; many containers at once;
# the monitor's own --count and human formats.
set -u
. "$(dirname "$0")/lib-ct.sh"
ct_init

S=$CT_SUFFIX



# --- in force while the container lives, although no nsguard process is left;
# gone (record, pin, status) after poststop.
case_in_force() {
	local id=life-$S cg cgid
	start_guarded "$id" || return 1
	cg=$(ct_cgdir "$id")
	cgid=$(ct_cgid "$cg")
	if pgrep -x nsguard >/dev/null && pgrep -f '^[^ ]*nsguard hook' >/dev/null; then
		CT_WHY="an nsguard hook process is still running: $(pgrep -a -f 'nsguard hook')"
		return 1
	fi
	[ -e "$CT_PINS/links/$cgid" ] || { CT_WHY="no pin links/$cgid for $cg"; return 1; }
	[ -e "$CT_RECORDS/$id.json" ] || { CT_WHY="no record $CT_RECORDS/$id.json"; return 1; }
	sleep 2 # some time after the hook exited
	ct_exec "$id" nsg-userns unshare
	want_run "unshare after the hook exited" 1 "unshare: fail errno=EPERM" || return 1
	ct_delete "$id"
	want_eq "crun delete -f (poststop)" "$CT_RC" 0 || { CT_WHY+=" ($(ct_tail))"; return 1; }
	ct_gone "$id" "$cgid" || return 1
	[ ! -e "$cg" ] || { CT_WHY="cgroup $cg still there"; return 1; }
}
ct_case lifecycle/in-force-until-poststop case_in_force

# --- a container run to completion (`crun run`) leaves no pin and no record.
case_run_clean() {
	local id=life-run-$S before after
	before=$(find "$CT_PINS/links" -mindepth 1 -printf '%f\n' 2>/dev/null | sort)
	ct_bundle "$id" -- nsg-userns unshare || return 1
	ct_run "$id"
	want_run "crun run" 1 "unshare: fail errno=EPERM" || return 1
	after=$(find "$CT_PINS/links" -mindepth 1 -printf '%f\n' 2>/dev/null | sort)
	want_eq "pins before/after" "$after" "$before" || return 1
	ct_gone "$id" ""
}
ct_case lifecycle/run-leaves-nothing case_run_clean

# --- the hook run again for the same id and cgroup rewrites the policy and
# keeps the counters; a second id for the same cgroup is refused.
case_rehook() {
	local id=life-rehook-$S pid
	start_guarded "$id" || return 1
	pid=$(ct_pid "$id")
	ct_exec "$id" nsg-userns unshare
	want_run "unshare (deny)" 1 "unshare: fail errno=EPERM" || return 1
	ct_hook createRuntime "$(ct_state "$id" "$pid" "$CT_WORK/b/$id" '{"nsguard.io/userns":"allow"}')" --config "$CT_CONF"
	want_eq "hook again, same id, allow" "$CT_RC" 0 || { CT_WHY+=" ($(ct_tail))"; return 1; }
	ct_exec "$id" nsg-userns unshare
	want_run "unshare (rewritten to allow)" 0 "unshare: ok" || return 1
	want_eq "counters kept" "$(ct_counts "$id")" "allowed=1 denied=1 audited=0" || return 1
	ct_hook createRuntime "$(ct_state "other-$id" "$pid" "$CT_WORK/b/$id" '{"nsguard.io/userns":"allow"}')" --config "$CT_CONF"
	want_run "hook for another id on a guarded cgroup" 1 "nsguard: *" || return 1
	want_eq "other id not recorded" "$(ct_status "other-$id")" missing || return 1
	want_eq "policy kept" "$(ct_status "$id")" "mode=allow max_depth=32 errno=EPERM base_level=0 attached=true"
}
ct_case lifecycle/rehook-same-id case_rehook

# --- ids are the container creator's to choose.  A second container that
# takes a guarded id, under another runtime root and in its own cgroup, is
# refused, and neither its start nor a poststop for that id while the
# guarded instance runs unguards the first.
case_same_id() {
	local id=life-dup-$S root2=/run/nsg-dup-$S pid rc=0
	start_guarded "$id" --errno EACCES || return 1
	pid=$(ct_pid "$id")
	# fail-mode open does not open it: the id is the container creator's.
	ct_bundle "$id" --errno EACCES --cgpath "/$CT_CGPARENT/$id-b" \
		--conf "$(ct_conf open-dup 'fail-mode = open')" -- sleep 600 || return 1
	CT_OUT=$(timeout "$CT_TIMEOUT" "$CRUN" --root "$root2" run --detach --bundle "$CT_WORK/b/$id" \
		"$id" </dev/null 2>&1)
	CT_RC=$?
	if [ "$CT_RC" = 0 ]; then
		CT_WHY="the second container with id $id started"
		rc=1
	else
		want_run "second start" "$CT_RC" "*nsguard: container $id: the id is already guarding cgroup /$CT_CGPARENT/$id,*" || rc=1
	fi
	"$CRUN" --root "$root2" delete -f "$id" >/dev/null 2>&1
	rm -rf "$root2"
	[ $rc = 0 ] || return 1
	ct_exec "$id" nsg-userns unshare
	want_run "first container after the second one's start and removal" 1 \
		"unshare: fail errno=EACCES" || return 1
	# A poststop for the id while the guarded instance runs, as runtimes
	# send it (no pid): another instance's, or a late one.
	ct_hook poststop "$(ct_state "$id" '' /nonexistent - stopped)" --config "$CT_CONF"
	want_run "poststop while the guarded init ($pid) runs" 0 \
		"*nsguard: warning: *init (pid $pid) is still running*" || return 1
	ct_exec "$id" nsg-userns unshare
	want_run "first container after that poststop" 1 "unshare: fail errno=EACCES" || return 1
	want_eq "status" "$(ct_status "$id")" "mode=deny max_depth=0 errno=EACCES base_level=0 attached=true"
}
ct_case lifecycle/same-id-other-instance case_same_id

# --- gc takes the lock the hooks take, so it never judges a record that a
# hook is writing.
case_gc_lock() {
	local holder t0 t1 held=$CT_WORK/gc-lock-held i
	rm -f "$held"
	mkdir -p "${CT_LOCK%/*}"
	# Timed from when the holder has the lock: its start is slow on a busy host.
	# shellcheck disable=SC2016 # $1 is the inner shell's
	flock "$CT_LOCK" sh -c 'touch "$1"; sleep 2' sh "$held" &
	holder=$!
	for i in $(seq 100); do
		[ -e "$held" ] && break
		sleep 0.05
	done
	[ -e "$held" ] || { CT_WHY="the lock holder did not start"; wait "$holder"; return 1; }
	t0=$(date +%s%N)
	CT_OUT=$("$NSGUARD" gc 2>&1)
	CT_RC=$?
	t1=$(date +%s%N)
	wait "$holder"
	want_eq "gc exit" "$CT_RC" 0 || { CT_WHY+=" ($CT_OUT)"; return 1; }
	[ $(((t1 - t0) / 1000000)) -ge 1000 ] ||
		{ CT_WHY="gc returned after $(((t1 - t0) / 1000000)) ms while the lock was held"; return 1; }
}
ct_case lifecycle/gc-waits-for-the-lock case_gc_lock

# --- gc: an unclean stop (no poststop) leaves a record and a pin on a removed
# cgroup; gc removes exactly those, and keeps a live container's.
case_gc() {
	local id=gc-$S live=gc-live-$S cg pid cgid left
	start_guarded "$live" || return 1
	cg=$CT_CGFS/$CT_CGPARENT/$id
	pid=$(ct_spawn_init "$cg") || { CT_WHY="cannot start a process in $cg"; return 1; }
	sleep 0.3
	ct_hook createRuntime "$(ct_state "$id" "$pid")" --config "$CT_CONF"
	want_eq "hook by hand" "$CT_RC" 0 || { CT_WHY+=" ($(ct_tail))"; return 1; }
	cgid=$(ct_cgid "$cg")
	if [ ! -e "$CT_PINS/links/$cgid" ] || [ ! -e "$CT_RECORDS/$id.json" ]; then
		CT_WHY="hook by hand left no pin/record"
		return 1
	fi
	kill "$pid"
	wait "$pid" 2>/dev/null
	rmdir "$cg" || { CT_WHY="rmdir $cg failed"; return 1; }
	# assert_clean must see the leak (checks the checker).
	left=$(ct_leftovers)
	[[ $left == *"links/$cgid"* && $left == *"record $id"* ]] ||
		{ CT_WHY="ct_leftovers missed the unclean stop: '$left'"; return 1; }
	CT_OUT=$("$NSGUARD" gc 2>&1)
	CT_RC=$?
	want_run "nsguard gc" 0 "*$id*" || return 1
	ct_gone "$id" "$cgid" || return 1
	want_eq "live container kept" "$(ct_status "$live")" \
		"mode=deny max_depth=0 errno=EPERM base_level=0 attached=true" || return 1
	ct_exec "$live" nsg-userns unshare
	want_run "live container still guarded" 1 "unshare: fail errno=EPERM"
}
ct_case lifecycle/gc-unclean-stop case_gc

# --- gc also unpins a link with neither record nor live cgroup.
case_gc_orphan_pin() {
	local id=gc-orphan-$S cg pid cgid
	cg=$CT_CGFS/$CT_CGPARENT/$id
	pid=$(ct_spawn_init "$cg") || return 1
	sleep 0.3
	ct_hook createRuntime "$(ct_state "$id" "$pid")" --config "$CT_CONF"
	want_eq "hook by hand" "$CT_RC" 0 || { CT_WHY+=" ($(ct_tail))"; return 1; }
	cgid=$(ct_cgid "$cg")
	rm -f "$CT_RECORDS/$id.json"
	kill "$pid"
	wait "$pid" 2>/dev/null
	rmdir "$cg"
	CT_OUT=$("$NSGUARD" gc 2>&1)
	CT_RC=$?
	want_run "nsguard gc" 0 "*$cgid*" || return 1
	[ ! -e "$CT_PINS/links/$cgid" ] || { CT_WHY="links/$cgid still pinned"; return 1; }
}
ct_hook_case lifecycle/gc-orphan-pin case_gc_orphan_pin

# --- monitor --count N exits after N events; the human format.
case_monitor_count() {
	local id=mon-$S mp f=$CT_WORK/mon-count.out
	start_guarded "$id" || return 1
	sleep 0.5
	ct_monitor_stop # one consumer at a time
	"$NSGUARD" monitor --json --count 2 >"$f" 2>&1 &
	mp=$!
	ct_exec "$id" nsg-userns unshare
	ct_exec "$id" nsg-userns clone
	ct_exec "$id" nsg-userns clone3
	local i
	for i in $(seq 50); do kill -0 "$mp" 2>/dev/null || break; sleep 0.2; done
	if kill -0 "$mp" 2>/dev/null; then
		kill "$mp"
		CT_WHY="monitor --count 2 still running after 3 events: $(cat "$f")"
		return 1
	fi
	wait "$mp"
	want_eq "monitor --count 2 exit" "$?" 0 || return 1
	want_eq "lines" "$(grep -c "\"id\": *\"$id\"" "$f")/$(wc -l <"$f")" "2/2" || return 1
	"$NSGUARD" monitor --count 1 >"$f" 2>&1 &
	mp=$!
	for i in $(seq 50); do kill -0 "$mp" 2>/dev/null || break; sleep 0.2; done
	kill "$mp" 2>/dev/null
	wait "$mp" 2>/dev/null
	# The third event is still in the ring buffer, for the human format.
	local re='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z deny id='"$id"' section=node cgroup=[0-9]+ pid=[0-9]+ tid=[0-9]+ comm=nsg-userns uid=0 gid=0 level=0 depth=1 reason=mode errno=EPERM$'
	grep -Eq "$re" "$f" || { CT_WHY="human line: '$(cat "$f")' !~ $re"; return 1; }
}
ct_case monitor/count-and-human case_monitor_count

# --- nsguard unload (#31 item 3): refused while a container is guarded,
# and changes nothing; with --force every link, pin and record goes (the
# container runs on unguarded); a second run finds nothing; the container's
# poststop after it is a no-op; the next container loads the program again.
case_unload() {
	local id=unload-$S id2=unload2-$S cgid
	start_guarded "$id" --mode deny || return 1
	cgid=$(ct_cgid "$(ct_cgdir "$id")")
	CT_OUT=$("$NSGUARD" unload 2>&1)
	CT_RC=$?
	want_run "unload while guarded" 1 "*1 cgroup is still guarded*--force*" || return 1
	if [ ! -e "$CT_PINS/links/$cgid" ] || [ ! -e "$CT_RECORDS/$id.json" ]; then
		CT_WHY="a refused unload removed the pin or the record"
		return 1
	fi
	ct_exec "$id" nsg-userns unshare
	want_run "unshare after the refused unload" 1 "unshare: fail errno=EPERM" || return 1
	ct_monitor_stop
	CT_OUT=$("$NSGUARD" unload --force 2>&1)
	CT_RC=$?
	want_run "unload --force" 0 "unloaded: * (1 guarding a live cgroup)*" || return 1
	[ ! -e "$CT_PINS" ] || { CT_WHY="unload --force left $CT_PINS"; return 1; }
	want_eq "/run/nsguard after unload --force" "$(ls -A /run/nsguard)" lock || return 1
	ct_exec "$id" nsg-userns unshare
	want_run "unshare after unload --force (unguarded)" 0 "unshare: ok" || return 1
	CT_OUT=$("$NSGUARD" unload 2>&1)
	CT_RC=$?
	want_run "unload again" 0 "nothing to unload*" || return 1
	ct_delete "$id"
	want_eq "delete (poststop with nothing loaded): $(ct_tail)" "$CT_RC" 0 || return 1
	start_guarded "$id2" --mode deny || return 1
	ct_exec "$id2" nsg-userns unshare
	want_run "unshare in a container started after unload" 1 "unshare: fail errno=EPERM"
}
ct_case lifecycle/unload case_unload

# --- Events read late still name their container (#31 item 4): with no
# reader running, an audit container creates a user namespace and exits
# (its poststop retires the record); a minute later, after a gc, the event
# read from the ring buffer names it, with the schema version and the node.
case_late_named() {
	local id=late-$S ev
	ct_monitor_stop
	ct_bundle "$id" --mode audit -- nsg-userns unshare || return 1
	# Not ct_run: it starts the suite's monitor again, which would read the event.
	CT_IDS+=("$id")
	CT_OUT=$(timeout "$CT_TIMEOUT" "$CRUN" --root "$CT_RUNROOT" run --bundle "$CT_WORK/b/$id" "$id" \
		</dev/null 2>&1)
	CT_RC=$?
	want_run "crun run (audit)" 0 "unshare: ok" || return 1
	[ ! -e "$CT_RECORDS/$id.json" ] || { CT_WHY="the record outlived poststop"; return 1; }
	sleep 60
	"$NSGUARD" gc >/dev/null 2>&1
	ev=$(timeout 20 "$NSGUARD" monitor --json --count 1 --id "$id" 2>&1)
	# shellcheck disable=SC2016 # jq's
	want_eq "the late event" "$("$JQ" -r '"\(.schema) \(.node) \(.id) \(.decision)"' <<<"$ev" 2>&1)" \
		"1 $(uname -n) $id audit" || return 1
	ct_monitor_ensure
}
ct_case monitor/late-event-named case_late_named

# --- Many readers (#31 item 4): three monitors (one filtered by id) and a
# fourth stopped (SIGSTOP) while an audit container makes five user
# namespaces: each running reader sees the same five events, the stopped
# one blocks nobody, and sees them too once it runs again.
case_many_readers() {
	local id=readers-$S d=$CT_WORK/readers-$S i p pids=() got want
	mkdir -p "$d"
	ct_monitor_stop
	"$NSGUARD" monitor --json >"$d/a" 2>&1 &
	pids+=($!)
	sleep 0.5 # a is the collector; the others follow its log
	"$NSGUARD" monitor --json >"$d/b" 2>&1 &
	pids+=($!)
	"$NSGUARD" monitor --json --id "$id" >"$d/c" 2>&1 &
	pids+=($!)
	"$NSGUARD" monitor --json >"$d/d" 2>&1 &
	pids+=($!)
	sleep 1.5
	kill -STOP "${pids[3]}"
	start_guarded "$id" --mode audit || return 1
	ct_exec "$id" nsg-userns seq 5
	want_run "seq 5 (audit)" 0 "seq: ok created=5" || return 1
	want="5 5 5"
	for ((i = 0; i < 50; i++)); do
		got="$(grep -c "\"id\":\"$id\"" "$d/a") $(grep -c "\"id\":\"$id\"" "$d/b") $(grep -c "\"id\":\"$id\"" "$d/c")"
		[ "$got" = "$want" ] && break
		sleep 0.2
	done
	kill -CONT "${pids[3]}"
	for ((i = 0; i < 50; i++)); do
		[ "$(grep -c "\"id\":\"$id\"" "$d/d")" = 5 ] && break
		sleep 0.2
	done
	got+=" $(grep -c "\"id\":\"$id\"" "$d/d")"
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait "${pids[@]}" 2>/dev/null
	ct_monitor_ensure
	want_eq "events of $id seen by a (collector), b, c (--id), d (stopped meanwhile)" "$got" "5 5 5 5" ||
		{ CT_WHY+="; a: $(tail -n 2 "$d/a" | tr '\n' '|')"; return 1; }
	# The same events: the same times and tids, in the same order.
	want_eq "b's events are a's" "$(grep -F "\"$id\"" "$d/b" | md5sum)" \
		"$(grep -F "\"$id\"" "$d/a" | md5sum)"
}
ct_case monitor/many-readers case_many_readers
