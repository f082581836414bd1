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
# shellcheck source=integration/tests/lib-agent.sh
. "$here/lib-agent.sh"
agent_setup
fds0=$(nfds)
mark0=$(log_mark)
out0=$(outcomes)
rc=0

# --- The scripts again, every hook through the agent.
# AGENT_SCRIPTS narrows the re-runs (empty: none).
# A re-run that exits non-zero without a FAIL line of its own still fails.
for s in ${AGENT_SCRIPTS-20-containers 30-escape}; do
	echo "# agent: $s"
	CT_RERUN=agent/ CT_RERUN_HOOKS=1 bash "$here/$s.sh"
	src=$?
	[ "$src" = 0 ] || { fail "ct/agent/$s" "the re-run exited $src"; rc=1; }
done

# Every attach of the re-runs was the agent's (none fell back), and the
# agent holds no more fds than before them.
case_all_served() {
	local s o
	s=$(served "$mark0")
	o=$(($(outcomes) - out0))
	kill -0 "$AGENT_PID" 2>/dev/null || { CT_WHY="the agent died: $(tail -n 3 "$ALOG" | tr '\n' ' ')"; return 1; }
	[ "$s" -gt 20 ] || { CT_WHY="the agent served only $s attaches"; return 1; }
	want_eq "attaches served by the agent vs counted outcomes" "$s" "$o" || return 1
	want_eq "the agent's open fds" "$(nfds)" "$fds0"
}
[ -z "${AGENT_SCRIPTS-x}" ] || ct_case agent/all-served case_all_served

# --- The prestart stage through the agent: the stage-specific cases
# client-runc.sh runs under runc's prestart, here under crun's, each attach
# served (none fell back) and each case run.
AGENT_PRESTART_CASES=${AGENT_PRESTART_CASES-default/unshare allow audit escape/child-cgroup}
if [ -n "$AGENT_PRESTART_CASES" ]; then
	pmark=$(log_mark)
	pout0=$(outcomes)
	pout=$CT_WORK/agent-prestart.out
	: >"$pout"
	for s in 20-containers 30-escape; do
		echo "# agent, prestart: $s"
		CT_STAGE=prestart CT_RERUN=agent-prestart/ CT_ONLY="$AGENT_PRESTART_CASES" \
			bash "$here/$s.sh" 2>&1 | tee -a "$pout"
		src=${PIPESTATUS[0]}
		[ "$src" = 0 ] || { fail "ct/agent-prestart/$s" "the re-run exited $src"; rc=1; }
	done
	case_prestart_served() {
		local c s o
		for c in $AGENT_PRESTART_CASES; do
			grep -qE "^(PASS|FAIL): ${NSG_PREFIX:-}ct/agent-prestart/$c(:|\$)" "$pout" ||
				CT_WHY+="case $c did not run (renamed? update AGENT_PRESTART_CASES); "
		done
		s=$(log_count "$pmark" "served prestart for pid")
		o=$(($(outcomes) - pout0))
		[ "$s" -ge 4 ] || CT_WHY+="the agent served $s prestart attaches; "
		want_eq "prestart attaches served by the agent vs counted outcomes" "$s" "$o" || return 1
		want_eq "createRuntime served meanwhile" "$(log_count "$pmark" "served createRuntime")" 0
	}
	ct_case agent-prestart/all-served case_prestart_served
fi

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

# Broken and hostile peers running nsguard's binary (agent-peer.py: the
# connecting process writes its request and execs it, a child reads the
# answer): each closed without a word (a warning in the agent's log) or
# answered 'N' with the reason, nothing left open, one that leaves after
# the ack without its 'G' not served, and the agent serves the next
# container all the same.  They connect while the agent waits for the lock
# on a container's behalf, so it checks them only once they are nsguard.
PEER_CLOSED=(bad-magic huge bad-stage two-fds three-fds no-pidfd no-init-pidfd truncated slow)
PEER_CASES=("${PEER_CLOSED[@]}" old-wire writer-child self-pidfd-other pidfd-mismatch garbage-state no-go)
case_hostile_peers() {
	local c out state=$CT_WORK/agent-state.json id=busy-"$S" held=$CT_WORK/held0-"$S" n pids=() fds
	local mark closed=" ${PEER_CLOSED[*]} "
	ct_state hostile-"$S" 1 >"$state"
	# A peer running another binary is not served, whatever it sends.
	mark=$(log_mark)
	out=$(timeout 30 python3 "$here/agent-peer.py" "$SOCK" poststop "$state" 2>&1)
	want_eq "a python peer" "$out" "ack N" || return 1
	wait_log "$mark" "not serving pid [0-9]*: another nsguard binary" ||
		{ CT_WHY="no 'not serving' line"; return 1; }
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
	mark=$(log_mark)
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
		truncated:*) CT_WHY+="$c: $out; " ;;
		# Closed by the agent: end of file, or a reset with its bytes unread;
		# never this peer's own timeout.
		*:closed | *:"closed (ConnectionResetError)") [[ $closed == *" $c "* ]] || CT_WHY+="$c: $out; " ;;
		old-wire:"ack N" | writer-child:"ack N" | self-pidfd-other:"ack N") ;;
		pidfd-mismatch:"ack A status=1 text="*"does not name its pid 1"*) ;;
		garbage-state:"ack A status=1 text="*"reading the OCI state"*) ;;
		no-go:"ack A, left") ;;
		*) CT_WHY+="$c: $out; " ;;
		esac
	done
	[ -z "$CT_WHY" ] || return 1
	kill -0 "$AGENT_PID" 2>/dev/null || { CT_WHY="the agent died: $(tail -n 3 "$ALOG" | tr '\n' ' ')"; return 1; }
	want_eq "warnings for the requests refused" "$(log_count "$mark" "warning: the request of pid")" \
		${#PEER_CLOSED[@]} ||
		{ CT_WHY+=" ($(log_since "$mark" | grep -E "warning|not serving" | tail -n 12 | tr '\n' '|'))"; return 1; }
	# Each 'N' for its reason.
	for c in "a request of another version of nsguard" "its request was written by pid [0-9]*, not by the process that connected" \
		"the pidfd it sent of itself names another process"; do
		want_eq "'not serving' lines saying '$c'" "$(log_count "$mark" "not serving pid [0-9]*: $c")" 1 || return 1
	done
	want_eq "the agent's open fds" "$(nfds)" "$fds" || return 1
	# The peer that left without its 'G' was not served (the hook it stands for works itself).
	want_eq "requests left before being served" "$(log_count "$mark" "left before its createRuntime was served")" 1 ||
		return 1
	# Two attaches served (pidfd-mismatch, garbage-state); the peers' own
	# `nsguard hook poststop`, ended by an empty stdin, may be served as well.
	want_eq "attaches served" "$(log_count "$mark" "serving createRuntime for pid")" 2 || return 1
	probe_denied "$id" || return 1
	mark=$(log_mark)
	start_guarded after-hostile-"$S" || return 1
	probe_denied after-hostile-"$S" || return 1
	want_eq "attaches served" "$(served "$mark")" 1
}
ct_case agent/hostile-peers case_hostile_peers

# A hook killed while the agent works for it: the start fails, the agent
# lives on and serves the next one.
case_killed_client() {
	local id=killed-"$S" held=$CT_WORK/held-"$S" hook mark
	start_held "$id" "$held" || return 1
	hook=$(pgrep -f "nsguard hook createRuntime" | head -n 1)
	[ -n "$hook" ] || { release_lock "$held"; CT_WHY="no hook waiting on the agent"; return 1; }
	mark=$(log_mark)
	kill -9 "$hook"
	release_lock "$held"
	wait "$CRUN_PID"
	want_eq "crun run with its hook killed" "$?" 1 || return 1
	wait_log "$mark" "left before its answer" || { CT_WHY="the agent did not see its hook go"; return 1; }
	kill -0 "$AGENT_PID" 2>/dev/null || { CT_WHY="the agent died"; return 1; }
	start_guarded after-killed-"$S" || return 1
	probe_denied after-killed-"$S"
}
ct_case agent/killed-client case_killed_client

# The agent killed mid-request: the hook sees the connection close, does the
# work itself, and the container starts guarded; a new agent serves the next.
case_agent_killed() {
	local id=agent-killed-"$S" held=$CT_WORK/held2-"$S" mark
	start_held "$id" "$held" || return 1
	kill -9 "$AGENT_PID"
	wait "$AGENT_PID" 2>/dev/null
	AGENT_PID=
	release_lock "$held"
	wait "$CRUN_PID"
	want_eq "crun run with its agent killed" "$?" 0 || { CT_WHY+=" ($(cat "$CT_WORK/b/$id/out"))"; return 1; }
	probe_denied "$id" || return 1
	# Its socket is left behind; the next agent replaces it (agent_start
	# waits for its own "serving hooks" line and a new socket inode).
	[ -S "$SOCK" ] || { CT_WHY="the killed agent's socket is gone"; return 1; }
	agent_start || { CT_WHY="no new agent: $(tail -n 2 "$ALOG" | tr '\n' ' ')"; return 1; }
	mark=$(log_mark)
	start_guarded after-restart-"$S" || return 1
	probe_denied after-restart-"$S" || return 1
	want_eq "attaches served by the new agent" "$(served "$mark")" 1
}
ct_case agent/killed-mid-request case_agent_killed

# Another binary (here a copy: another inode) does not ask the agent of
# this one (it would not be served); it guards itself.
case_other_binary() {
	local copy=$CT_WORK/nsguard-copy mark
	cp "$NSGUARD" "$copy" || return 1
	mark=$(log_mark)
	NSGUARD=$copy start_guarded other-bin-"$S" || return 1
	probe_denied other-bin-"$S" || return 1
	want_eq "attaches served" "$(served "$mark")" 0 || return 1
	want_eq "requests the agent got from the copy" "$(log_count "$mark" "createRuntime for pid\\|not serving pid")" 0
}
ct_case agent/other-binary case_other_binary

# A bundle that names the hook's own directory (relative, or through
# /proc/self/cwd) is another directory to the agent, whose directory is /:
# such a hook works itself.  Here tmp/nsg-rel-S is a deny bundle below the
# hook's directory and an allow one below /: served by the agent, the
# container would get allow.
case_relative_bundle() {
	local id cg pid rel=tmp/nsg-rel-"$S" n=0 mark b got cfg
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
		mark=$(log_mark)
		CT_OUT=$(cd "$CT_WORK" && ct_state "$id" "$pid" "$b" - |
			timeout "$CT_TIMEOUT" "$NSGUARD" hook createRuntime --config "$CT_CONF" 2>&1)
		CT_RC=$?
		got=$(ct_status "$id")
		kill "$pid"
		"$NSGUARD" detach --id "$id" >/dev/null 2>&1
		for _ in $(seq 50); do rmdir "$cg" 2>/dev/null && break; sleep 0.1; done
		[ "$CT_RC" = 0 ] || CT_WHY+="bundle $b: hook exit $CT_RC ($(ct_tail)); "
		[[ $got == "mode=deny "* ]] || CT_WHY+="bundle $b: got '$got', want mode=deny; "
		[ "$(served "$mark")" = 0 ] || CT_WHY+="bundle $b: served by the agent; "
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
# A re-run that exited non-zero fails the script too.
[ "$rc" = 0 ]
