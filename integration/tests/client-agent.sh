#!/bin/bash
# nsguard agent (shim/cmd_agent.c) in front of crun's hooks: the container
# scripts that start containers with hostile bundles and states
# (20-containers, 30-escape) again with every hook asking the agent, hook
# cases included (prefix agent/), then what the agent must survive: hostile
# peers, a hook killed while it waits, the agent killed mid-request and
# restarted, another binary.  Runs in the QEMU guest (make check-clients-agent);
# concurrent starts are in concurrency.sh, socket activation in node.sh.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib-ct.sh"
ct_init

S=$CT_SUFFIX
SOCK=/run/nsguard/agent.sock
ALOG=$CT_WORK/agent.log
AGENT_PID=

# agent_start: a fresh agent (-v: one line per request) logging to $ALOG.
agent_start() {

	"$NSGUARD" -v agent >>"$ALOG" 2>&1 &
	AGENT_PID=$!
	for i in $(seq 100); do
		[ -S "$SOCK" ] && grep -q "serving hooks on" "$ALOG" && return 0
		sleep 0.1
	done
	return 1
}
agent_stop() {
	[ -n "$AGENT_PID" ] && kill "$AGENT_PID" 2>/dev/null && wait "$AGENT_PID" 2>/dev/null
	AGENT_PID=
}
trap 'agent_stop; ct_cleanup' EXIT

served() { grep -c "served \(createRuntime\|prestart\) for pid" "$ALOG"; }
# The hooks' attach outcomes so far, however they were served (status --json).
outcomes() {
	"$NSGUARD" status --format prometheus 2>/dev/null |
		awk '/^nsguard_hook_outcomes_total\{/ { n += $2 } END { print n + 0 }'
}
nfds() { find "/proc/$AGENT_PID/fd" -mindepth 1 2>/dev/null | wc -l; }
# wait_log PATTERN: until the agent's log has PATTERN (10 s).
wait_log() {

	for i in $(seq 100); do
		grep -q "$1" "$ALOG" && return 0
		sleep 0.1
	done
	return 1
}

mkdir -p "$CT_WORK"
: >"$ALOG"
if ! agent_start; then
	fail "ct/agent/setup" "the agent did not start: $(tail -n 3 "$ALOG" | tr '\n' ' ')"
	exit 1
fi
fds0=$(nfds)
served0=$(served)
out0=$(outcomes)

# --- The scripts again, every hook through the agent.
# AGENT_SCRIPTS narrows the re-runs (empty: none).
for s in ${AGENT_SCRIPTS-20-containers 30-escape}; do
	echo "# agent: $s"
	CT_RERUN=agent/ CT_RERUN_HOOKS=1 bash "$here/$s.sh"
done

# Every attach of the re-runs was the agent's (none fell back), and the
# agent holds no more fds than before them.
case_all_served() {
	local s o
	s=$(($(served) - served0))
	o=$(($(outcomes) - out0))
	kill -0 "$AGENT_PID" 2>/dev/null || { CT_WHY="the agent died: $(tail -n 3 "$ALOG" | tr '\n' ' ')"; return 1; }
	[ "$s" -gt 20 ] || { CT_WHY="the agent served only $s attaches"; return 1; }
	want_eq "attaches served by the agent vs counted outcomes" "$s" "$o" || return 1
	want_eq "the agent's open fds" "$(nfds)" "$fds0"
}
[ -z "${AGENT_SCRIPTS-x}" ] || ct_case agent/all-served case_all_served

# probe_denied ID: a guarded container denies a nested user namespace.
probe_denied() {
	ct_exec "$1" nsg-userns unshare
	want_run "unshare in $1" 1 "unshare: fail errno=EPERM"
}

# The socket is root's alone.
case_socket_root_only() {
	local out
	want_eq "socket mode and owner" "$(stat -c '%a %U' "$SOCK")" "600 root" || return 1
	# The script on stdin: nobody may not read the checkout (CI clones below /root).
	out=$(setpriv --reuid 65534 --regid 65534 --clear-groups python3 - "$SOCK" bad-magic \
		<"$here/agent-peer.py" 2>&1)
	want_eq "nobody's connect" "$out" "refused: Permission denied"
}
ct_case agent/socket-root-only case_socket_root_only

# hold_lock FILE: take the lock in the background; FILE exists while it is
# held, and removing it releases the lock (release_lock FILE waits for that).
hold_lock() {
	rm -f "$1"
	# shellcheck disable=SC2016 # $1 is the inner shell's
	flock "$CT_LOCK" sh -c 'touch "$1"; while [ -e "$1" ]; do sleep 0.1; done' sh "$1" &
	HOLDER=$!
	for _ in $(seq 50); do [ -e "$1" ] && return 0; sleep 0.1; done
	return 1
}
release_lock() {
	rm -f "$1"
	wait "$HOLDER" 2>/dev/null
}

# start_held ID HELD: hold the lock (hold_lock HELD), start container ID
# in the background (CRUN_PID) and wait until the agent serves its hook,
# which then waits for the lock.
start_held() {
	local id=$1 n
	ct_bundle "$id" -- sleep 600 || return 1
	hold_lock "$2" || { CT_WHY="could not take the lock"; return 1; }
	n=$(grep -c "serving createRuntime" "$ALOG")
	CT_IDS+=("$id")
	"$CRUN" --root "$CT_RUNROOT" run --detach --bundle "$CT_WORK/b/$id" "$id" </dev/null \
		>"$CT_WORK/b/$id/out" 2>&1 &
	CRUN_PID=$!
	for _ in $(seq 100); do
		[ "$(grep -c "serving createRuntime" "$ALOG")" -gt "$n" ] && return 0
		sleep 0.1
	done
	release_lock "$2"
	CT_WHY="the agent did not take the start of $id"
	return 1
}

# Broken and hostile peers running nsguard's binary (agent-peer.py: the
# connecting process execs it, a child speaks): each closed without a word
# or refused with a message, nothing left open, one that leaves after the
# ack without its 'G' not served, and the agent serves the next container
# all the same.  They connect while the agent waits for the
# lock on a container's behalf, so it checks them only once they are nsguard.
PEER_CASES=(bad-magic huge bad-stage two-fds no-pidfd pidfd-on-poststop truncated slow
	pidfd-mismatch garbage-state no-go)
case_hostile_peers() {
	local c out state=$CT_WORK/agent-state.json id=busy-"$S" held=$CT_WORK/held0-"$S" n pids=() fds
	ct_state hostile-"$S" 1 >"$state"
	# A peer running another binary is not served.
	out=$(timeout 30 python3 "$here/agent-peer.py" "$SOCK" bad-magic "$state" 2>&1)
	want_eq "a python peer" "$out" "ack N" || return 1
	wait_log "not serving pid [0-9]*: another nsguard binary" || { CT_WHY="no 'not serving' line"; return 1; }
	fds=$(nfds)
	rm -f "$CT_WORK"/peer-*
	for c in "${PEER_CASES[@]}"; do
		AGENT_PEER_READY=$CT_WORK/peer-ready-$c AGENT_PEER_GO=$CT_WORK/peer-go timeout 120 \
			python3 "$here/agent-peer.py" "$SOCK" "$c" "$state" "$NSGUARD" >"$CT_WORK/peer-$c" 2>&1 &
		pids+=($!)
	done
	for _ in $(seq 600); do
		[ "$(find "$CT_WORK" -maxdepth 1 -name 'peer-ready-*' | wc -l)" -ge ${#PEER_CASES[@]} ] && break
		sleep 0.1
	done
	start_held "$id" "$held" || { kill "${pids[@]}" 2>/dev/null; return 1; }
	: >"$CT_WORK/peer-go"
	for _ in $(seq 100); do
		[ "$(pgrep -fc "$NSGUARD hook poststop")" -ge ${#PEER_CASES[@]} ] && break
		sleep 0.1
	done
	release_lock "$held"
	wait "$CRUN_PID"
	want_eq "crun run -d $id" "$?" 0 || { kill "${pids[@]}" 2>/dev/null; return 1; }
	wait "${pids[@]}"
	rm -f "$CT_WORK/peer-go" "$CT_WORK"/peer-ready-*
	for c in "${PEER_CASES[@]}"; do
		out=$(cat "$CT_WORK/peer-$c")
		case $c:$out in
		truncated:"sent 10 bytes, closed") ;;
		pidfd-mismatch:"ack A status=1 text="*"does not name its pid 1"*) ;;
		garbage-state:"ack A status=1 text="*"reading the OCI state"*) ;;
		no-go:"ack A, left") ;;
		pidfd-mismatch:* | garbage-state:* | truncated:* | no-go:*) CT_WHY+="$c: $out; " ;;
		*:closed*) ;;
		*) CT_WHY+="$c: $out; " ;;
		esac
	done
	[ -z "$CT_WHY" ] || return 1
	kill -0 "$AGENT_PID" 2>/dev/null || { CT_WHY="the agent died: $(tail -n 3 "$ALOG" | tr '\n' ' ')"; return 1; }
	want_eq "warnings for the requests refused" "$(grep -c "warning: the request of pid" "$ALOG")" 8 ||
		{ CT_WHY+=" ($(grep -E "warning|not serving" "$ALOG" | tail -n 12 | tr '\n' '|'))"; return 1; }
	want_eq "the agent's open fds" "$(nfds)" "$fds" || return 1
	# The peer that left without its 'G' was not served (the hook it stands for works itself).
	want_eq "requests left before being served" "$(grep -c "left before its createRuntime was served" "$ALOG")" 1 ||
		return 1
	probe_denied "$id" || return 1
	n=$(served)
	start_guarded after-hostile-"$S" || return 1
	probe_denied after-hostile-"$S" || return 1
	want_eq "attaches served" "$(($(served) - n))" 1
}
ct_case agent/hostile-peers case_hostile_peers

# A hook killed while the agent works for it: the start fails, the agent
# lives on and serves the next one.
case_killed_client() {
	local id=killed-"$S" held=$CT_WORK/held-"$S" hook
	start_held "$id" "$held" || return 1
	hook=$(pgrep -f "nsguard hook createRuntime" | head -n 1)
	[ -n "$hook" ] || { release_lock "$held"; CT_WHY="no hook waiting on the agent"; return 1; }
	kill -9 "$hook"
	release_lock "$held"
	wait "$CRUN_PID"
	want_eq "crun run with its hook killed" "$?" 1 || return 1
	wait_log "left before its answer" || { CT_WHY="the agent did not see its hook go"; return 1; }
	kill -0 "$AGENT_PID" 2>/dev/null || { CT_WHY="the agent died"; return 1; }
	start_guarded after-killed-"$S" || return 1
	probe_denied after-killed-"$S"
}
ct_case agent/killed-client case_killed_client

# The agent killed mid-request: the hook sees the connection close, does the
# work itself, and the container starts guarded; a new agent serves the next.
case_agent_killed() {
	local id=agent-killed-"$S" held=$CT_WORK/held2-"$S" n
	start_held "$id" "$held" || return 1
	kill -9 "$AGENT_PID"
	wait "$AGENT_PID" 2>/dev/null
	AGENT_PID=
	release_lock "$held"
	wait "$CRUN_PID"
	want_eq "crun run with its agent killed" "$?" 0 || { CT_WHY+=" ($(cat "$CT_WORK/b/$id/out"))"; return 1; }
	probe_denied "$id" || return 1
	# Its socket is left behind; the next agent replaces it.
	agent_start || { CT_WHY="no new agent: $(tail -n 2 "$ALOG" | tr '\n' ' ')"; return 1; }
	n=$(served)
	start_guarded after-restart-"$S" || return 1
	probe_denied after-restart-"$S" || return 1
	want_eq "attaches served by the new agent" "$(($(served) - n))" 1
}
ct_case agent/killed-mid-request case_agent_killed

# Another binary (here a copy: another inode) is not served; it guards itself.
case_other_binary() {
	local copy=$CT_WORK/nsguard-copy n
	cp "$NSGUARD" "$copy" || return 1
	n=$(served)
	NSGUARD=$copy start_guarded other-bin-"$S" || return 1
	probe_denied other-bin-"$S" || return 1
	want_eq "attaches served" "$(($(served) - n))" 0 || return 1
	grep -q "not serving pid .*: another nsguard binary" "$ALOG" ||
		{ CT_WHY="the agent did not say why it did not serve"; return 1; }
}
ct_case agent/other-binary case_other_binary

# A bundle that names the hook's own directory (relative, or through
# /proc/self/cwd) is another directory to the agent, whose directory is /:
# such a hook works itself.  Here tmp/nsg-rel-S is a deny bundle below the
# hook's directory and an allow one below /: served by the agent, the
# container would get allow.
case_relative_bundle() {
	local id cg pid rel=tmp/nsg-rel-"$S" n=0 n0 b got cfg
	cfg='{"ociVersion":"1.0.2","process":{"capabilities":{}},"annotations":{"nsguard.io/userns":"%s"}}'
	mkdir -p "$CT_WORK/$rel" "/$rel" || { CT_WHY="mkdir"; return 1; }
	# shellcheck disable=SC2059 # the format is ours
	printf "$cfg" deny >"$CT_WORK/$rel/config.json"
	# shellcheck disable=SC2059
	printf "$cfg" allow >"/$rel/config.json"
	for b in "$rel" "/proc/self/cwd/$rel"; do
		id=rel-$((++n))-$S
		cg=$CT_CGFS/$CT_CGPARENT/$id
		pid=$(ct_spawn_init "$cg") || { CT_WHY="cannot start a process in $cg"; return 1; }
		n0=$(served)
		CT_OUT=$(cd "$CT_WORK" && ct_state "$id" "$pid" "$b" - |
			timeout "$CT_TIMEOUT" "$NSGUARD" hook createRuntime --config "$CT_CONF" 2>&1)
		CT_RC=$?
		got=$(ct_status "$id")
		kill "$pid"
		"$NSGUARD" detach --id "$id" >/dev/null 2>&1
		for _ in $(seq 50); do rmdir "$cg" 2>/dev/null && break; sleep 0.1; done
		[ "$CT_RC" = 0 ] || CT_WHY+="bundle $b: hook exit $CT_RC ($(ct_tail)); "
		[[ $got == "mode=deny "* ]] || CT_WHY+="bundle $b: got '$got', want mode=deny; "
		[ "$(served)" = "$n0" ] || CT_WHY+="bundle $b: served by the agent; "
	done
	rm -rf "${CT_WORK:?}/$rel" "/${rel:?}"
	[ -z "$CT_WHY" ]
}
ct_case agent/relative-bundle-not-served case_relative_bundle

# A second agent does not take the socket of a live one.
case_second_agent_run() {
	CT_OUT=$(timeout 10 "$NSGUARD" agent 2>&1)
	CT_RC=$?
	want_run "a second agent" 1 "nsguard: an agent already listens on $SOCK"
}
ct_case agent/second-agent case_second_agent_run

agent_stop
# Stopped cleanly, the agent removes its socket: hooks go straight to work.
case_stopped() {
	[ ! -e "$SOCK" ] || { CT_WHY="$SOCK left after a clean stop"; return 1; }
	start_guarded after-stop-"$S" || return 1
	probe_denied after-stop-"$S"
}
ct_case agent/stopped case_stopped
