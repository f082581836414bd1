#!/bin/bash
# The concurrency cases, in a boot of their own with two vCPUs (make
# check-concurrency): on one vCPU nothing runs at the same time, so none of
# them could fail for a race.  The other suites boot with one vCPU, which is
# two to five times faster under TCG (docs/design.md, "Tests and CI").
#
# First the first-load race, which needs a guest where nothing is loaded yet;
# then the container cases under crun, and again under runc (createRuntime),
# as client-runc.sh runs the other container scripts.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib-ct.sh"
ct_init

S=$CT_SUFFIX

if [ -z "$CT_RERUN" ]; then
	if [ -n "$(two_cpus)" ]; then
		fail guard/concurrent-first-load "$(two_cpus)"
	else
		# The first hooks after boot race to load: exactly one program
		# gets loaded, every attach succeeds, is recorded and guards.
		cg=$CT_CGFS/nsg-race
		racers=() statuses='' refused=''
		for i in 1 2 3 4; do mkdir -p "$cg/race$i"; done
		for i in 1 2 3 4; do
			"$NSGUARD" attach --cgroup nsg-race/race$i --id race$i >"$CT_WORK/race$i.out" 2>&1 &
			racers+=($!)
		done
		for p in "${racers[@]}"; do
			wait "$p"
			statuses+="${statuses:+ }$?"
		done
		progs=$(bpftool -j prog show | "$JQ" '[.[] | select(.name // "" | startswith("nsguard_userns"))] | length')
		for i in 1 2 3 4; do
			ct_run_in "$cg/race$i" unshare -U true
			refused+="${refused:+ }$CT_RC"
		done
		if [ "$statuses" = "0 0 0 0" ] && [ "$progs" = 1 ] &&
			[ "$(find "$CT_RECORDS" -name 'race*.json' | wc -l)" = 4 ] && [ "$refused" = "1 1 1 1" ]; then
			pass guard/concurrent-first-load
		else
			fail guard/concurrent-first-load "attach exits '$statuses', $progs programs, unshare exits '$refused': $(cat "$CT_WORK"/race*.out | tr '\n' ' ')"
		fi
		for i in 1 2 3 4; do "$NSGUARD" detach --id race$i >/dev/null; rmdir "$cg/race$i"; done
		rmdir "$cg"
	fi
fi

# --- 20 containers started at once: 20 policies, none lost, no hook failed,
# each one guarded; all gone after deleting them at once.
case_concurrent() {
	local n=20 i id ids=() bad='' rc pids=() p=${1:-many}
	CT_WHY=$(two_cpus)
	[ -z "$CT_WHY" ] || return 1
	for i in $(seq $n); do
		id=$p-$i-$S
		ids+=("$id")
		ct_bundle "$id" --errno ENOSPC -- sleep 600 || return 1
	done
	CT_IDS+=("${ids[@]}")
	for id in "${ids[@]}"; do
		timeout "$CT_TIMEOUT" "$CRUN" --root "$CT_RUNROOT" run --detach --bundle "$CT_WORK/b/$id" "$id" \
			</dev/null >"$CT_WORK/b/$id/out" 2>&1 &
	done
	for id in "${ids[@]}"; do
		wait -n
		rc=$?
		[ $rc = 0 ] || bad+="exit $rc "
	done
	ct_monitor_ensure
	for id in "${ids[@]}"; do
		grep -q nsguard "$CT_WORK/b/$id/out" && bad+="$id: $(head -c 200 "$CT_WORK/b/$id/out") "
	done
	[ -z "$bad" ] || { CT_WHY="crun run: $bad"; return 1; }
	local got want
	got=$(ct_status_ids "$p-")
	want=$(printf '%s\n' "${ids[@]}" | sort | tr '\n' ' ')
	want_eq "status ids" "$got " "$want" || return 1
	for id in "${ids[@]}"; do
		"$CRUN" --root "$CT_RUNROOT" exec "$id" nsg-userns unshare >"$CT_WORK/b/$id/probe" 2>&1 &
		pids+=($!)
	done
	# Only these: a bare `wait` would also wait for the background monitor.
	wait "${pids[@]}"
	pids=()
	for id in "${ids[@]}"; do
		grep -qx "unshare: fail errno=ENOSPC" "$CT_WORK/b/$id/probe" || bad+="$id: $(tr '\n' ' ' <"$CT_WORK/b/$id/probe") "
		[ "$(ct_counts "$id")" = "allowed=0 denied=1 audited=0" ] || bad+="$id counts: $(ct_counts "$id") "
	done
	[ -z "$bad" ] || { CT_WHY="probes: $bad"; return 1; }
	for id in "${ids[@]}"; do
		"$CRUN" --root "$CT_RUNROOT" delete -f "$id" >"$CT_WORK/b/$id/del" 2>&1 &
		pids+=($!)
	done
	wait "${pids[@]}"
	got=$(ct_status_ids "$p-")
	want_eq "status ids after delete" "$got" "" || return 1
	for id in "${ids[@]}"; do
		[ -e "$CT_RECORDS/$id.json" ] && bad+="$id "
	done
	[ -z "$bad" ] || { CT_WHY="records left: $bad"; return 1; }
}
ct_case lifecycle/concurrent-20 case_concurrent

# --- the same with the agent (nsguard agent) serving the hooks: it serves
# one at a time; a hook it does not take in time does the work itself.
# Every container is guarded either way, each start counted once (served +
# fallbacks = 20: one outcome each), and the agent accounts for each of the
# 20 connections once: served, or left to its hook (it gave up on the ack
# and did the work: 'left before', or was gone: 'not serving').
case_concurrent_agent() {
	local alog=$CT_WORK/agent-cc.log apid rc served left gone pids out0 outs
	"$NSGUARD" -v agent >"$alog" 2>&1 &
	apid=$!
	for _ in $(seq 100); do grep -q "serving hooks on" "$alog" && break; sleep 0.1; done
	out0=$(agent_outcomes)
	case_concurrent many-agent
	rc=$?
	outs=$(($(agent_outcomes) - out0))
	# The connections still queued are answered (to hooks that have left) before the counts.
	for _ in $(seq 300); do
		served=$(grep -c "served createRuntime for pid" "$alog")
		left=$(grep -c "left before its createRuntime was served" "$alog")
		gone=$(grep -c "not serving pid [0-9]*: .*(createRuntime)$" "$alog")
		[ $((served + left + gone)) -ge 20 ] && break
		sleep 0.1
	done
	pids=$(grep -E "served createRuntime for pid|left before its createRuntime|not serving pid .*\(createRuntime\)$" \
		"$alog" | grep -oE "pid [0-9]+" | sort -u | wc -l)
	kill "$apid"
	wait "$apid"
	[ "$rc" = 0 ] || return 1
	echo "# the agent served $served of 20 starts; $((left + gone)) hooks did their own work"
	want_eq "starts counted (served + fallbacks)" "$outs" 20 || return 1
	want_eq "connections the agent accounted for (served $served, left $left, gone $gone)" \
		$((served + left + gone)) 20 || return 1
	want_eq "distinct hook pids among them" "$pids" 20 || return 1
	[ "$served" -ge 1 ] || { CT_WHY="the agent served none of the 20 starts: $(tail -n 3 "$alog" | tr '\n' ' ')"; return 1; }
	grep -q "warning" "$alog" && { CT_WHY="the agent warned: $(grep warning "$alog" | head -n 3 | tr '\n' ' ')"; return 1; }
	return 0
}
# Attach outcomes so far (status --format prometheus), however served.
agent_outcomes() {
	"$NSGUARD" status --format prometheus 2>/dev/null |
		awk '/^nsguard_hook_outcomes_total\{/ { n += $2 } END { print n + 0 }'
}
[ -n "$CT_RERUN" ] || ct_case lifecycle/concurrent-20-agent case_concurrent_agent

# --- attach, detach, gc and a container start at the same time, on two CPUs:
# the lock keeps records and pins in step.  Eight cgroups are attached and
# detached five times each while gc runs in a loop and a container starts;
# afterwards each cgroup is attached once more, and exactly those eight
# records and pins exist, each denying, and gc removes none of them.
case_concurrent_attach_gc() {
	local n=8 i cg ids=() pids=() bad='' out=$CT_WORK/cc-$S id
	CT_WHY=$(two_cpus)
	[ -z "$CT_WHY" ] || return 1
	mkdir -p "$out"
	for i in $(seq $n); do
		mkdir -p "$CT_CGFS/$CT_CGPARENT/cc-$i-$S" || { CT_WHY="mkdir cc-$i-$S"; return 1; }
		ids+=("cc-$i-$S")
	done
	for i in $(seq $n); do
		(
			cg=$CT_CGPARENT/cc-$i-$S
			for _ in 1 2 3 4 5; do
				"$NSGUARD" attach --cgroup "$cg" --id "cc-$i-$S" --mode allow || exit 1
				"$NSGUARD" detach --id "cc-$i-$S" || exit 1
			done
			"$NSGUARD" attach --cgroup "$cg" --id "cc-$i-$S" --errno ENOSPC
		) >"$out/$i" 2>&1 &
		pids+=($!)
	done
	(for _ in $(seq 10); do "$NSGUARD" gc || exit 1; done) >"$out/gc" 2>&1 &
	pids+=($!)
	ct_bundle "cc-ct-$S" -- sleep 600 || return 1
	ct_start "cc-ct-$S"
	for i in "${pids[@]}"; do wait "$i" || bad+="pid $i failed "; done
	want_eq "crun run -d cc-ct-$S" "$CT_RC" 0 || return 1
	[ -z "$bad" ] || { CT_WHY="$bad: $(cat "$out"/* | tr '\n' ' ' | head -c 600)"; return 1; }
	"$NSGUARD" gc >"$out/gc2" 2>&1 || { CT_WHY="final gc: $(cat "$out/gc2")"; return 1; }
	want_eq "records and pins" "$(ct_status_ids "cc-")" \
		"$(printf '%s\n' "${ids[@]}" "cc-ct-$S" | sort | tr '\n' ' ' | sed 's/ $//')" || return 1
	for id in "${ids[@]}"; do
		[ -e "$CT_PINS/links/$(ct_cgid "$CT_CGFS/$CT_CGPARENT/$id")" ] || bad+="$id not pinned "
		ct_run_in "$CT_CGFS/$CT_CGPARENT/$id" "$NSG_USERNS" unshare
		[ "$CT_OUT" = "unshare: fail errno=ENOSPC" ] || bad+="$id: $CT_OUT "
	done
	[ -z "$bad" ] || { CT_WHY=$bad; return 1; }
	for id in "${ids[@]}"; do
		"$NSGUARD" detach --id "$id" >/dev/null 2>&1 || bad+="detach $id "
		rmdir "$CT_CGFS/$CT_CGPARENT/$id" 2>/dev/null
	done
	[ -z "$bad" ] || { CT_WHY=$bad; return 1; }
}
ct_case lifecycle/concurrent-attach-detach-gc case_concurrent_attach_gc

# --- an event flood with the monitor reading, two containers flooding at once on
# two CPUs: every event of each is delivered once or counted as dropped.
case_event_flood_reading() {
	local a=floodr-a-$S b=floodr-b-$S n=3000 id dropped delivered pa pb
	CT_WHY=$(two_cpus)
	[ -z "$CT_WHY" ] || return 1
	start_guarded "$a" || return 1
	start_guarded "$b" --errno ENOSPC || return 1
	ct_monitor_ensure
	"$CRUN" --root "$CT_RUNROOT" exec "$a" nsg-userns flood $n >"$CT_WORK/floodr-a" 2>&1 &
	pa=$!
	"$CRUN" --root "$CT_RUNROOT" exec "$b" nsg-userns flood $n >"$CT_WORK/floodr-b" 2>&1 &
	pb=$!
	wait "$pa" "$pb"
	want_eq "flood a" "$(cat "$CT_WORK/floodr-a")" "flood: fail count=$n errno=EPERM" || return 1
	want_eq "flood b" "$(cat "$CT_WORK/floodr-b")" "flood: fail count=$n errno=ENOSPC" || return 1
	for id in "$a" "$b"; do
		dropped=$(ct_dropped "$id")
		delivered=$(ct_events "$id" $((n - ${dropped:-0})) | wc -w)
		want_eq "$id: events delivered + dropped" $((delivered + dropped)) $n || return 1
	done
}
ct_case event-flood-monitor-reading case_event_flood_reading

# --- the count limit across CPUs: 32 processes released at once, max-count 3:
# exactly 3 get a user namespace, every other one the container's errno.
case_count_race() {
	local id=count-race-$S
	CT_WHY=$(two_cpus)
	[ -z "$CT_WHY" ] || return 1
	start_guarded "$id" --mode allow --ann nsguard.io/userns.max-count=3 --errno ENOSPC || return 1
	ct_exec "$id" nsg-userns race 32
	want_run "race 32" 0 "race: ok created=3 failed=29 errno=ENOSPC" || return 1
	want_eq "status usage" "$(ct_usage "$id")" "created=3 max_count=3"
}
ct_case count/race-on-two-cpus case_count_race


if [ -z "$CT_RERUN" ] && command -v runc >/dev/null; then
	echo "# runc, createRuntime: concurrency"
	ct_monitor_stop # one consumer of the ring at a time
	CRUN=runc CT_STAGE=createRuntime CT_RERUN=runc-createRuntime/ CT_RUNROOT=/run/nsg-runc \
		bash "$0"
fi
