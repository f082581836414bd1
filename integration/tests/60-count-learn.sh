#!/bin/bash
# The count limit (nsguard.io/userns.max-count, nsguard.conf max-count) and
# learn mode (nsguard.io/userns=learn, learn-dir, `nsguard suggest`) with real
# containers.  The concurrent count case runs in concurrency.sh (two vCPUs).
set -u
. "$(dirname "$0")/lib-ct.sh"
ct_init

S=$CT_SUFFIX
COUNT=nsguard.io/userns.max-count
LEARN_DIR=$CT_WORK/learn-$S
LEARN_CONF=$(ct_conf "learn-$S" "allowed-modes = deny, audit, allow, learn" "learn-dir = $LEARN_DIR")

# count_case NAME PROBE LINE-GLOB RC USAGE EVENTS [BUNDLE OPTIONS...]: a
# detached container, PROBE exec'd in it, then its usage and events.
count_case() {
	local name=$1 probe=$2 line=$3 rc=$4 usage=$5 events=$6 id
	shift 6
	id=count-$name-$S
	start_guarded "$id" "$@" || return 1
	# shellcheck disable=SC2086 # PROBE is words
	ct_exec "$id" $probe
	want_run "$probe" "$rc" "$line" || return 1
	want_eq "status usage" "$(ct_usage "$id")" "$usage" || return 1
	local ev
	read -ra ev <<<"$events"
	want_eq "monitor events" "$(ct_events "$id" "${#ev[@]}")" "$events"
}

# --- N = 0: not one.
ct_case count/0 count_case 0 "nsg-userns unshare" "unshare: fail errno=EPERM" 1 \
	"created=0 max_count=0" "deny:count:EPERM:d1" --mode allow --ann "$COUNT=0"
# --- N = 1: the second fails, though the first one is gone by then.
ct_case count/1-freed-not-given-back count_case 1 "nsg-userns seq 2" \
	"seq: fail created=1 errno=EPERM" 1 "created=1 max_count=1" "deny:count:EPERM:d1" \
	--mode allow --ann "$COUNT=1"
# --- N = 3: three one after another, the fourth fails with the container's errno.
case_three() {
	local id=count-3-$S
	start_guarded "$id" --mode allow --ann "$COUNT=3" --errno ENOSPC || return 1
	ct_exec "$id" nsg-userns seq 3
	want_run "seq 3" 0 "seq: ok created=3" || return 1
	ct_exec "$id" nsg-userns clone
	want_run "a fourth (clone)" 1 "clone: fail errno=ENOSPC" || return 1
	want_eq "status usage" "$(ct_usage "$id")" "created=3 max_count=3" || return 1
	want_eq "monitor events" "$(ct_events "$id" 1)" "deny:count:ENOSPC:d1"
}
ct_case count/3 case_three
# --- With max-depth both hold: a level too deep takes no slot.
case_with_depth() {
	local id=count-depth-$S
	start_guarded "$id" --mode allow --depth 1 --ann "$COUNT=3" || return 1
	ct_exec "$id" nsg-userns nest 2
	want_run "nest 2" 1 "nest: fail level=2 errno=EPERM" || return 1
	want_eq "usage after nest 2" "$(ct_usage "$id")" "created=1 max_count=3" || return 1
	ct_exec "$id" nsg-userns seq 3
	want_run "seq 3" 1 "seq: fail created=2 errno=EPERM" || return 1
	want_eq "monitor events" "$(ct_events "$id" 2)" "deny:depth:EPERM:d2 deny:count:EPERM:d1"
}
ct_case count/with-max-depth case_with_depth
# --- The admin's ceiling: the default for allow, and above it refused at start.
ct_case count/ceiling-is-default count_case ceiling "nsg-userns seq 3" \
	"seq: fail created=2 errno=EPERM" 1 "created=2 max_count=2" "deny:count:EPERM:d1" \
	--mode allow --conf "$(ct_conf "count2-$S" "max-count = 2")"
case_above_ceiling() {
	local id=count-above-$S
	ct_bundle "$id" --mode allow --ann "$COUNT=3" --conf "$(ct_conf "count2-$S" "max-count = 2")" \
		-- true || return 1
	ct_run "$id"
	[ "$CT_RC" != 0 ] || { CT_WHY="started with max-count 3 over the admin's 2"; return 1; }
	want_run "crun run" "$CT_RC" "*annotation $COUNT=3 exceeds the administrator's max-count 2*"
}
ct_case count/above-ceiling-refused case_above_ceiling

# --- Learn mode.  The workload: three times a user namespace with one more
# inside it (six in all, two levels deep).
WORKLOAD='for i in 1 2 3; do nsg-userns nest 2 || exit 1; done'

# learn_run ID [BUNDLE OPTIONS...]: run the workload to the end.
learn_run() {
	local id=$1
	shift
	ct_bundle "$id" "$@" -- sh -c "$WORKLOAD" || return 1
	ct_run "$id"
}

# suggestion [--all] ID: the annotations `nsguard suggest` prints, "k=v k=v"
# (one line per suggestion).
# shellcheck disable=SC2016 # a jq program
ANNS='.annotations | to_entries | map("\(.key)=\(.value)") | join(" ")'
suggestion() {
	"$NSGUARD" --config "$LEARN_CONF" suggest "$@" 2>/dev/null | "$JQ" -r "$ANNS"
}

# learn_files ID: the suggestion files of ID (one per instance: ID@CGROUP-ID.json).
learn_files() { (cd "$LEARN_DIR" 2>/dev/null && ls -d -- "$1"@*.json 2>/dev/null); }

case_learn() {
	local id=learn-$S want a
	learn_run "$id" --mode learn --conf "$LEARN_CONF" || return 1
	want_eq "workload in learn mode" "$CT_RC" 0 || { CT_WHY+=" ($(ct_tail))"; return 1; }
	want="nsguard.io/userns=allow nsguard.io/userns.max-depth=2 $COUNT=6"
	want_eq "nsguard suggest" "$(suggestion "$id")" "$want" || return 1
	[ -n "$(learn_files "$id")" ] || { CT_WHY="no $LEARN_DIR/$id@*.json"; return 1; }
	# Rerun with the suggestion: it passes; one less of either: refused.
	local opts=()
	for a in $want; do opts+=(--ann "$a"); done
	learn_run "$id-again" "${opts[@]}" || return 1
	want_eq "workload with the suggestion" "$CT_RC" 0 || { CT_WHY+=" ($(ct_tail))"; return 1; }
	learn_run "$id-depth1" --mode allow --depth 1 --ann "$COUNT=6" || return 1
	[ "$CT_RC" != 0 ] || { CT_WHY="workload passed with max-depth 1"; return 1; }
	want_run "workload with max-depth 1" "$CT_RC" "*nest: fail level=2 errno=EPERM*" || return 1
	want_eq "events, max-depth 1" "$(ct_events "$id-depth1" 1)" "deny:depth:EPERM:d2" || return 1
	learn_run "$id-count5" --mode allow --depth 2 --ann "$COUNT=5" || return 1
	[ "$CT_RC" != 0 ] || { CT_WHY="workload passed with max-count 5"; return 1; }
	want_run "workload with max-count 5" "$CT_RC" "*nest: fail level=2 errno=EPERM*" || return 1
	want_eq "events, max-count 5" "$(ct_events "$id-count5" 1)" "deny:count:EPERM:d2"
}
ct_case learn/suggests-tightest case_learn

case_learn_none() {
	local id=learn-none-$S
	ct_bundle "$id" --mode learn --conf "$LEARN_CONF" -- true || return 1
	ct_run "$id"
	want_eq "crun run" "$CT_RC" 0 || { CT_WHY+=" ($(ct_tail))"; return 1; }
	want_eq "nsguard suggest" "$(suggestion "$id")" "nsguard.io/userns=deny"
}
ct_case learn/none-gets-deny case_learn_none

# Learn mode allows only what the admin's limits allow, and the suggestion
# says what was allowed.
case_learn_limits() {
	local id=learn-limits-$S conf
	conf=$(ct_conf "learn4-$S" "allowed-modes = deny, learn" "learn-dir = $LEARN_DIR" "max-count = 4")
	learn_run "$id" --mode learn --conf "$conf" || return 1
	[ "$CT_RC" != 0 ] || { CT_WHY="six namespaces in learn mode under max-count 4"; return 1; }
	want_run "workload in learn mode, max-count 4" "$CT_RC" "*nest: fail level=1 errno=EPERM*" || return 1
	want_eq "nsguard suggest" "$(suggestion "$id")" \
		"nsguard.io/userns=allow nsguard.io/userns.max-depth=2 $COUNT=4"
}
ct_case learn/within-admin-limits case_learn_limits

# While it runs, suggest says what it has needed so far; the file comes at the end.
case_learn_running() {
	local id=learn-running-$S
	start_guarded "$id" --mode learn --conf "$LEARN_CONF" || return 1
	ct_exec "$id" nsg-userns nest 1
	want_run "nest 1" 0 "nest: ok levels=1" || return 1
	want_eq "suggest while running" "$(suggestion "$id")" \
		"nsguard.io/userns=allow nsguard.io/userns.max-depth=1 $COUNT=1" || return 1
	[ -z "$(learn_files "$id")" ] || { CT_WHY="suggestion file before the end"; return 1; }
	ct_delete "$id"
	[ -n "$(learn_files "$id")" ] || { CT_WHY="no $LEARN_DIR/$id@*.json after delete"; return 1; }
}
ct_case learn/suggest-while-running case_learn_running

# Suggestions belong to an instance: the same id under a second runtime root
# (another crun --root), run after the first with other needs, leaves the
# first one's suggestion alone.  Each file names its instance (cgroup id,
# init pid and start time); `suggest ID` prints the newest with a note,
# `suggest --all ID` every one, newest first.
case_learn_two_roots() {
	local id=learn-roots-$S root2=$CT_WORK/root2-$S want1 want2 n cg1 cg2 err
	want1="nsguard.io/userns=allow nsguard.io/userns.max-depth=2 $COUNT=6"
	want2="nsguard.io/userns=allow nsguard.io/userns.max-depth=1 $COUNT=1"
	mkdir -p "$root2" || { CT_WHY="mkdir $root2"; return 1; }
	learn_run "$id" --mode learn --conf "$LEARN_CONF" || return 1
	want_eq "first root: workload in learn mode" "$CT_RC" 0 || { CT_WHY+=" ($(ct_tail))"; return 1; }
	cg1=$(cd "$LEARN_DIR" && ls -d -- "$id"@*.json 2>/dev/null)
	# The same id, the other root, one namespace one level deep.
	ct_bundle "$id" --mode learn --conf "$LEARN_CONF" -- nsg-userns nest 1 || return 1
	CT_OUT=$(timeout "$CT_TIMEOUT" "$CRUN" --root "$root2" run --bundle "$CT_WORK/b/$id" "$id" \
		</dev/null 2>&1)
	CT_RC=$?
	"$CRUN" --root "$root2" delete -f "$id" >/dev/null 2>&1
	want_run "second root: nest 1 in learn mode" 0 "*nest: ok levels=1*" || return 1
	# Both are kept, whatever the files' names.
	n=$(for f in "$LEARN_DIR/$id.json" "$LEARN_DIR/$id"@*.json; do
		[ ! -f "$f" ] || "$JQ" -r "$ANNS" "$f"
	done | sort | tr '\n' '|')
	want_eq "suggestions of $id in learn-dir" "$n" \
		"$(printf '%s\n' "$want1" "$want2" | sort | tr '\n' '|')" || return 1
	want_eq "suggestion files of $id" "$(learn_files "$id" | wc -l)" 2 || return 1
	want_eq "suggest --all (newest first)" "$(suggestion --all "$id" | tr '\n' '|')" \
		"$want2|$want1|" || return 1
	want_eq "suggest (the newest)" "$(suggestion "$id")" "$want2" || return 1
	err=$("$NSGUARD" --config "$LEARN_CONF" suggest "$id" 2>&1 >/dev/null)
	CT_OUT=$err CT_RC=0
	want_run "suggest: the note" 0 "*2 containers named $id*suggest --all $id*" || return 1
	# Each line names its instance: the first one's is the cgroup of its file.
	cg1=${cg1#"$id@"} cg1=${cg1%.json}
	cg2=$("$NSGUARD" --config "$LEARN_CONF" suggest --all "$id" 2>/dev/null |
		"$JQ" -r '"\(.cgroup_id) \(.pid > 0) \(.start_time > 0)"' | tr '\n' '|')
	want_eq "instances (cgroup id, pid, start time)" "${cg2#*|}" "$cg1 true true|" || return 1
	[ "${cg2%% *}" != "$cg1" ] || { CT_WHY="both instances name cgroup $cg1"; return 1; }
}
ct_case learn/same-id-two-roots case_learn_two_roots

# Never on by default: the built-in allowed-modes has no learn.
case_learn_refused() {
	local id=learn-refused-$S
	ct_bundle "$id" --mode learn -- true || return 1
	ct_run "$id"
	[ "$CT_RC" != 0 ] || { CT_WHY="learn mode started without the admin allowing it"; return 1; }
	want_run "crun run" "$CT_RC" "*nsguard.io/userns=learn is not permitted*"
}
ct_case learn/not-allowed-by-default case_learn_refused

# --- nsguard upgrade carries the count over (found by name in the old
# program's BTF: build/nsguard-next has another policy layout), and back.
NEXT=${NSGUARD_NEXT_BIN:-$(dirname "$NSGUARD")/nsguard-next}
case_upgrade_count() {
	local cg=$CT_CGFS/$CT_CGPARENT/upcount-$S id=upcount-$S pid
	pid=$(ct_spawn_ready "$cg" sleep 600) || { CT_WHY="no process in $cg"; return 1; }
	CT_OUT=$("$NSGUARD" attach --cgroup "$CT_CGPARENT/upcount-$S" --id "$id" --mode allow \
		--max-count 2 2>&1)
	want_eq "attach: $CT_OUT" $? 0 || return 1
	ct_run_in "$cg" "$NSG_USERNS" seq 1
	want_run "seq 1" 0 "seq: ok created=1" || return 1
	CT_OUT=$("$NEXT" upgrade 2>&1)
	want_eq "upgrade to nsguard-next: $CT_OUT" $? 0 || return 1
	ct_run_in "$cg" "$NSG_USERNS" seq 2
	want_run "seq 2 after the upgrade" 1 "seq: fail created=1 errno=EPERM" || return 1
	# shellcheck disable=SC2016 # $id is jq's
	want_eq "created, nsguard-next status" \
		"$("$NEXT" status --json | "$JQ" -r --arg id "$id" '.containers[] | select(.id == $id) | .created')" 2 || return 1
	CT_OUT=$("$NSGUARD" upgrade 2>&1)
	want_eq "upgrade back: $CT_OUT" $? 0 || return 1
	want_eq "usage after upgrading back" "$(ct_usage "$id")" "created=2 max_count=2" || return 1
	"$NSGUARD" detach --id "$id" >/dev/null
	kill "$pid"
	wait "$pid" 2>/dev/null
	rmdir "$cg"
}
ct_hook_case count/upgrade-carries-count case_upgrade_count

# --- Installing a new build while containers start (#31 item 2): the hooks
# run whatever the hook path holds, and the install swaps it by rename.  The
# first hook of the new build (nsguard-next: another ABI) finds the old
# build's pins and moves every guarded cgroup to its own program under the
# lock, then guards its container: no start fails, none runs unguarded, and
# a container the old build started keeps its policy and its count.
# refused_older WHAT: the last start failed with the older-build refusal.
# crun opens run.oci.hooks.stderr (our output file) afresh for the hook, so
# its own line then overwrites the start of the hook's: a part from the
# middle is matched.
refused_older() {
	[ "$CT_RC" != 0 ] && [[ $(tr -d '\n' <<<"$CT_OUT") == *"so its hook does not move the guarded cgroups"* ]] &&
		return 0
	CT_WHY="$1: exit $CT_RC: $(ct_tail)"
	return 1
}
case_install_upgrade() {
	# Whatever happens in it, this build's pins afterwards: the cases after
	# this one use this build.
	install_upgrade_body
	local rc=$?
	"$NSGUARD" upgrade >/dev/null 2>&1 || { CT_WHY+="; upgrade back failed"; rc=1; }
	return $rc
}
install_upgrade_body() {
	local bin=$CT_WORK/upbin-$S old=upold-$S i id fails=0 unguarded='' n=8
	mkdir -p "$bin"
	install_bin() { cp "$1" "$bin/nsguard.new" && mv -f "$bin/nsguard.new" "$bin/nsguard"; }
	install_bin "$NSGUARD" || { CT_WHY="cannot install into $bin"; return 1; }
	start_guarded "$old" --hook-bin "$bin/nsguard" --mode allow --ann "$COUNT=2" || return 1
	ct_exec "$old" nsg-userns seq 1
	want_run "seq 1 under the old build" 0 "seq: ok created=1" || return 1
	for ((i = 1; i <= n; i++)); do
		[ $i = 4 ] && { install_bin "$NEXT" || { CT_WHY="install of nsguard-next"; return 1; }; }
		id=upnew-$i-$S
		ct_bundle "$id" --hook-bin "$bin/nsguard" -- sleep 600 || return 1
		ct_start "$id"
		[ "$CT_RC" = 0 ] || { fails=$((fails + 1)); CT_WHY+="start $i: $(ct_tail); "; }
	done
	want_eq "failed starts" "$fails" 0 || return 1
	for ((i = 1; i <= n; i++)); do
		ct_exec "upnew-$i-$S" nsg-userns unshare
		[ "$CT_RC" = 1 ] && [[ $CT_OUT == *"unshare: fail errno=EPERM"* ]] ||
			unguarded+="upnew-$i ($CT_RC: $(ct_tail)) "
	done
	want_eq "unguarded starts" "$unguarded" "" || return 1
	# shellcheck disable=SC2016 # $id is jq's
	want_eq "the old build's container, status of the new" \
		"$("$NEXT" status --json | "$JQ" -r --arg id "$old" \
			'.containers[] | select(.id == $id) | "\(.mode) \(.created)"')" "allow 1" || return 1
	ct_exec "$old" nsg-userns seq 2
	want_run "seq 2 over its count after the upgrade" 1 "seq: fail created=1 errno=EPERM" || return 1
	# An older build's hook does not move the node back: its container is
	# refused, and the pins stay the newer build's.
	ct_bundle "updown-$S" --hook-bin "$NSGUARD" -- sleep 600 || return 1
	ct_start "updown-$S"
	refused_older "a start through the older build's hook" || return 1
	# Not even under fail-mode open: that route would always run unguarded.
	ct_bundle "updown-open-$S" --hook-bin "$NSGUARD" --conf "$(ct_conf "upopen-$S" "fail-mode = open")" \
		-- sleep 600 || return 1
	ct_start "updown-open-$S"
	refused_older "the same under fail-mode open" || return 1
	"$NEXT" status --format prometheus | grep -qx 'nsguard_pins_other_build 0' ||
		{ CT_WHY="the older hook moved the pins"; return 1; }
	# Back to this build for the cases after this one, on purpose.
	CT_OUT=$("$NSGUARD" upgrade 2>&1)
	want_eq "upgrade back: $CT_OUT" $? 0 || return 1
	# A set of this build's missing a pin (a map unpinned by hand): the next
	# hook rebuilds it and guards its container.
	rm -f "$CT_PINS/stats"
	start_guarded "uprepair-$S" --mode deny || return 1
	ct_exec "uprepair-$S" nsg-userns unshare
	want_run "unshare after the repair" 1 "unshare: fail errno=EPERM" || return 1
	[ -e "$CT_PINS/stats" ] || { CT_WHY="the set was not rebuilt"; return 1; }
}
ct_case count/install-upgrade-no-failed-start case_install_upgrade

# --- a full learned map (NSGUARD_LEARN_MAX learn-mode containers; the fault
# build pretends) costs the suggestion, never the guard: with fail-mode open
# the container is still guarded within the admin's limits.
FAULT_BIN=${NSGUARD_FAULT_BIN:-$(dirname "$NSGUARD")/nsguard-fault}
case_learn_full() {
	local id=learn-full-$S cg pid conf
	cg=$CT_CGFS/$CT_CGPARENT/$id
	conf=$(ct_conf "learn-open-$S" "allowed-modes = deny, learn" "learn-dir = $LEARN_DIR" \
		"max-count = 1" "fail-mode = open")
	mkdir -p "$cg" || { CT_WHY="mkdir $cg"; return 1; }
	pid=$(ct_spawn_init "$cg") || { CT_WHY="cannot start a process in $cg"; return 1; }
	ct_bundle "$id" --cgpath "/$CT_CGPARENT/$id" -- true || return 1
	CT_OUT=$(ct_state "$id" "$pid" "$CT_WORK/b/$id" '{"nsguard.io/userns":"learn"}' |
		NSGUARD_FAULT=learn-full "$FAULT_BIN" hook createRuntime --config "$conf" 2>&1)
	CT_RC=$?
	want_run "hook, learned map full (fail-mode open)" 0 "*no suggestion will be written*" || return 1
	[ -e "$CT_PINS/links/$(ct_cgid "$cg")" ] || { CT_WHY="not guarded: $(ct_tail)"; return 1; }
	ct_run_in "$cg" "$NSG_USERNS" seq 2
	want_run "seq 2 under max-count 1" 1 "seq: fail created=1 errno=EPERM" || return 1
	kill "$pid"
	wait "$pid" 2>/dev/null
	CT_OUT=$(printf '%s' "$(ct_state "$id" 0 "$CT_WORK/b/$id")" |
		"$NSGUARD" hook poststop --config "$conf" 2>&1)
	want_eq "suggestion file" "$(learn_files "$id"; ls "$LEARN_DIR/$id.json" 2>/dev/null)" "" ||
		return 1
	rmdir "$cg"
}
ct_hook_case learn/map-full-still-guarded case_learn_full
