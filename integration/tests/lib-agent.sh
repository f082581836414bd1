# Helpers of the agent's guest tests (client-agent.sh, client-agent-peer.sh):
# a fresh agent logging to $ALOG, marks in that log so that a case counts its
# own lines only, the lock held while the agent waits on it.  Sourced after
# lib-ct.sh (ct_init done).
# shellcheck shell=bash

SOCK=/run/nsguard/agent.sock
ALOG=$CT_WORK/agent.log
AGENT_PID=

# log_mark: the agent log's length in lines: a mark for the helpers below.
log_mark() { wc -l <"$ALOG"; }
# log_since MARK: the agent's lines after MARK.
log_since() { tail -n +"$(($1 + 1))" "$ALOG"; }
# log_count MARK PATTERN: how many of them match PATTERN (grep BRE).
log_count() { log_since "$1" | grep -c -- "$2"; }
# wait_log MARK PATTERN: until a line after MARK matches PATTERN (10 s).
wait_log() {
	for _ in $(seq 100); do
		log_since "$1" | grep -q -- "$2" && return 0
		sleep 0.1
	done
	return 1
}
# served MARK: attaches the agent served since MARK.
served() { log_count "$1" "served \(createRuntime\|prestart\) for pid"; }
# The hooks' attach outcomes so far, however they were served.
outcomes() {
	"$NSGUARD" status --format prometheus 2>/dev/null |
		awk '/^nsguard_hook_outcomes_total\{/ { n += $2 } END { print n + 0 }'
}
nfds() { find "/proc/$AGENT_PID/fd" -mindepth 1 2>/dev/null | wc -l; }
sock_ino() { stat -c %i "$SOCK" 2>/dev/null; }

# agent_start: a fresh agent (-v: one line per request) logging to $ALOG,
# ready once it says so after the mark taken here and its socket is a new
# one (a killed agent leaves its own behind).
agent_start() {
	local mark old
	mark=$(log_mark)
	old=$(sock_ino)
	"$NSGUARD" -v agent >>"$ALOG" 2>&1 &
	AGENT_PID=$!
	for _ in $(seq 100); do
		if log_since "$mark" | grep -q "serving hooks on" && [ -S "$SOCK" ] &&
			[ "$(sock_ino)" != "$old" ]; then
			return 0
		fi
		kill -0 "$AGENT_PID" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
agent_stop() {
	[ -n "$AGENT_PID" ] && kill "$AGENT_PID" 2>/dev/null && wait "$AGENT_PID" 2>/dev/null
	AGENT_PID=
}

# agent_setup: an empty log and a fresh agent, or one FAIL line and exit.
agent_setup() {
	mkdir -p "$CT_WORK"
	: >"$ALOG"
	trap 'agent_stop; ct_cleanup' EXIT
	if ! agent_start; then
		fail "ct/${CT_RERUN}agent/setup" "the agent did not start: $(tail -n 3 "$ALOG" | tr '\n' ' ')"
		exit 1
	fi
}

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
# shellcheck disable=SC2034 # CRUN_PID and CT_WHY are the caller's
start_held() {
	local id=$1 mark
	ct_bundle "$id" -- sleep 600 || return 1
	hold_lock "$2" || { CT_WHY="could not take the lock"; return 1; }
	mark=$(log_mark)
	CT_IDS+=("$id")
	"$CRUN" --root "$CT_RUNROOT" run --detach --bundle "$CT_WORK/b/$id" "$id" </dev/null \
		>"$CT_WORK/b/$id/out" 2>&1 &
	CRUN_PID=$!
	wait_log "$mark" "serving createRuntime" && return 0
	release_lock "$2"
	CT_WHY="the agent did not take the start of $id"
	return 1
}

# probe_denied ID: a guarded container denies a nested user namespace.
probe_denied() {
	ct_exec "$1" nsg-userns unshare
	want_run "unshare in $1" 1 "unshare: fail errno=EPERM"
}
