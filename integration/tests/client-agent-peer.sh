#!/bin/bash
# The agent's checks of its peer (shim/lib/agent.c agent_peer_check,
# agent_config_check), on both kernels (make check runs it in the 6.1 boot of
# clients-agent and in the 6.12 boot: OTHER_KERNEL_CLIENTS): a peer whose pid
# a real hook took after it exited is not served (SO_PEERPIDFD on 6.5+, the
# writer and the pidfd it sent on 6.1), nor a root peer without a hook's
# capabilities, nor one whose --config someone but root could change (the
# hook then does the work itself), nor is a listener at its path that is not
# the agent (the hook never asks it).  About a minute under TCG.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib-ct.sh"
ct_init

S=$CT_SUFFIX
NSG_PIDAT=${NSG_PIDAT:-$NSG_REPO/build/nsg-pidat}
[ -x "$NSG_PIDAT" ] || { fail "ct/agent-peer/setup" "$NSG_PIDAT missing (make build/nsg-pidat)"; exit 1; }
# shellcheck source=integration/tests/lib-agent.sh
. "$here/lib-agent.sh"
agent_setup

# Does this kernel name the connecting process with a pidfd (SO_PEERPIDFD, 6.5)?
peer_pidfd_kernel() {
	local v major minor
	v=$(uname -r)
	major=${v%%.*}
	minor=${v#*.}
	minor=${minor%%[!0-9]*}
	[ "$major" -gt 6 ] || { [ "$major" = 6 ] && [ "$minor" -ge 5 ]; }
}

# hook_standin ID CONF [PREFIX...]: the createRuntime hook by hand (run
# through PREFIX, e.g. setpriv) for a stand-in init in a cgroup of its own;
# CT_OUT, CT_RC, GOT (its status line), then the guard and cgroup removed.
hook_standin() {
	local id=$1 conf=$2 cg pid
	shift 2
	cg=$CT_CGFS/$CT_CGPARENT/$id
	pid=$(ct_spawn_init "$cg") || { CT_WHY="cannot start a process in $cg"; return 1; }
	CT_OUT=$(ct_state "$id" "$pid" | timeout "$CT_TIMEOUT" "$@" "$NSGUARD" hook createRuntime --config "$conf" 2>&1)
	CT_RC=$?
	GOT=$(ct_status "$id")
	kill "$pid"
	"$NSGUARD" detach --id "$id" >/dev/null 2>&1
	for _ in $(seq 50); do rmdir "$cg" 2>/dev/null && break; sleep 0.1; done
}

# A peer connects, hands its socket to a child and exits; a real hook
# (nsguard hook poststop, waiting on its stdin) gets its pid.  The child
# then writes the request with a pidfd of that hook as its own
# (reuse-child), or the peer had written its own before it exited
# (reuse-self).  The agent is stopped meanwhile (SIGSTOP), so it judges the
# connections only once the hook has the pid: served, it would take the
# request for the hook's.  agent-peer.py reuse; the pids come round in a
# window of 300-500 (pid_max, restored after).
case_pid_reuse() {
	local mark out state=$CT_WORK/reuse-state.json variant p h ans want n=0
	ct_state "reuse-$S" "" >"$state"
	mark=$(log_mark)
	kill -STOP "$AGENT_PID"
	out=$(AGENT_PID=$AGENT_PID timeout 300 python3 "$here/agent-peer.py" "$SOCK" reuse "$state" \
		"$NSGUARD" "$NSG_PIDAT" 2>&1)
	kill -CONT "$AGENT_PID"
	echo "# $(uname -r): ${out//$'\n'/; }"
	while read -r variant p h ans; do
		[ -n "$variant" ] || continue
		n=$((n + 1))
		h=${h%:}
		# Which evidence refuses it: the kernel's pidfd where there is one.
		if peer_pidfd_kernel; then
			want="the process that connected has exited (SO_PEERPIDFD)"
		elif [ "$variant" = reuse-child ]; then
			want="its request was written by pid [0-9]*, not by the process that connected"
		else
			want="the pidfd it sent of itself names a process that has exited"
		fi
		[ "$h" = "$p" ] || { CT_WHY+="$variant: the hook got pid $h, not the peer's $p; "; continue; }
		[ "$ans" = "ack N" ] || CT_WHY+="$variant (pid $p): the agent answered '$ans'; "
		[ "$(log_count "$mark" "not serving pid $p: $want; ")" = 1 ] ||
			CT_WHY+="$variant (pid $p): no 'not serving pid $p: $want'; "
		[ "$(log_count "$mark" "serving poststop for pid $p$")" = 0 ] ||
			CT_WHY+="$variant (pid $p): served as the hook at its pid; "
	done <<<"$out"
	[ "$n" = 2 ] || CT_WHY+="$n answers, want 2 ($out); "
	[ -z "$CT_WHY" ] || CT_WHY+="(agent: $(log_since "$mark" | tr '\n' '|'))"
	kill -0 "$AGENT_PID" 2>/dev/null || CT_WHY+="the agent died; "
}
ct_case agent-peer/pid-reuse-refused case_pid_reuse

# A root peer without a hook's capabilities (setpriv drops them from its
# bounding and inheritable sets, so nsguard runs without them): 'N', and
# the hook refuses itself as it would without an agent; a poststop too.
case_no_caps() {
	local mark drop want missing
	for drop in sys_admin,bpf sys_admin bpf; do
		case $drop in
		sys_admin,bpf) want="CAP_SYS_ADMIN and CAP_BPF" missing="CAP_SYS_ADMIN, CAP_BPF" ;;
		sys_admin) want="CAP_SYS_ADMIN" missing="CAP_SYS_ADMIN" ;;
		bpf) want="CAP_BPF" missing="CAP_BPF" ;;
		esac
		mark=$(log_mark)
		hook_standin "nocaps-${drop/,/-}-$S" "$CT_CONF" setpriv --inh-caps=-"${drop/,/,-}" \
			--bounding-set=-"${drop/,/,-}" -- || return 1
		want_run "a hook without $drop" 1 "nsguard: *permission denied: nsguard needs CAP_SYS_ADMIN and CAP_BPF (missing: $missing)*" ||
			return 1
		[ "$GOT" = missing ] || CT_WHY+="without $drop: guarded ($GOT); "
		[ "$(log_count "$mark" "not serving pid [0-9]*: it lacks $want in effect")" = 1 ] ||
			CT_WHY+="without $drop: no 'it lacks $want' line ($(log_since "$mark" | tr '\n' '|')); "
		[ "$(served "$mark")" = 0 ] || CT_WHY+="without $drop: served; "
	done
	mark=$(log_mark)
	CT_OUT=$(ct_state "nocaps-stop-$S" "" | setpriv --inh-caps=-sys_admin,-bpf \
		--bounding-set=-sys_admin,-bpf -- "$NSGUARD" hook poststop 2>&1)
	CT_RC=$?
	[ "$CT_RC" = 0 ] || CT_WHY+="a poststop without caps: exit $CT_RC ($(ct_tail)); "
	[ "$(log_count "$mark" "not serving pid [0-9]*: it lacks CAP_SYS_ADMIN and CAP_BPF")" = 1 ] ||
		CT_WHY+="a poststop without caps: no 'it lacks' line; "
	[ "$(log_count "$mark" "serving poststop")" = 0 ] || CT_WHY+="a poststop without caps was served; "
}
ct_case agent-peer/no-caps-not-served case_no_caps

# A --config someone but root could change is not the agent's to read: 'N',
# and the hook reads it itself, as it would without an agent (the config's
# errno shows it was read).  The same config where only root can change it
# is served.
case_config() {
	local d=$CT_WORK/peer-conf-$S open=$CT_WORK/peer-open-$S c mark want conf
	mkdir -p "$d" "$open" || { CT_WHY="mkdir"; return 1; }
	chmod 0755 "$d"
	chmod 0777 "$open"
	for c in good group other owner link dir; do
		conf=$d/$c.conf
		[ $c = dir ] && conf=$open/$c.conf
		if [ $c = link ]; then
			ln -sf "$d/good.conf" "$conf"
		else
			echo 'errno = EACCES' >"$conf"
			chmod 0644 "$conf"
		fi
		want=
		case $c in
		group) chmod 0664 "$conf"; want="$conf is writable by group or others" ;;
		other) chmod 0646 "$conf"; want="$conf is writable by group or others" ;;
		owner) chown 65534 "$conf"; want="$conf is not owned by root" ;;
		link) want="$conf is a symbolic link" ;;
		dir) want="$open is writable by group or others" ;;
		esac
		mark=$(log_mark)
		hook_standin "conf-$c-$S" "$conf" || return 1
		[ "$CT_RC" = 0 ] || CT_WHY+="$c: hook exit $CT_RC ($(ct_tail)); "
		[[ $GOT == "mode=deny "*" errno=EACCES "* ]] || CT_WHY+="$c: got '$GOT', want the config's errno=EACCES; "
		if [ -z "$want" ]; then
			[ "$(served "$mark")" = 1 ] || CT_WHY+="$c: not served ($(log_since "$mark" | tr '\n' '|')); "
		else
			[ "$(served "$mark")" = 0 ] || CT_WHY+="$c: served; "
			[ "$(log_count "$mark" "not serving pid [0-9]*: its --config $conf: $want; ")" = 1 ] ||
				CT_WHY+="$c: no 'its --config $conf: $want' ($(log_since "$mark" | tr '\n' '|')); "
		fi
	done
	rm -rf "${d:?}" "${open:?}"
}
ct_case agent-peer/config-not-roots-not-served case_config

agent_stop

# Another listener at the agent's path (a root process that runs another
# binary; one that listens as another uid, warned of):
# the hook never asks it, says so, and does the work itself.  Asked, this
# one answers "served, status 0": the container would start unguarded.
case_impostor() {
	local how log=$CT_WORK/fake-agent-$S.log fpid want
	for how in binary uid; do
		: >"$log"
		# Root in our namespaces running another binary is as trusted as
		# the hook (an agent not restarted since an upgrade): said at -v only.
		case $how in
		binary) want= ;;
		uid) want="it listens as uid 65534, pid [0-9]*" ;;
		esac
		# shellcheck disable=SC2046 # no uid, no word
		python3 "$here/fake-agent.py" "$SOCK" $([ $how = uid ] && echo 65534) >"$log" 2>&1 &
		fpid=$!
		for _ in $(seq 100); do grep -q listening "$log" && break; sleep 0.1; done
		if ! grep -q listening "$log"; then
			CT_WHY+="$how: the fake agent did not listen ($(cat "$log")); "
			kill "$fpid" 2>/dev/null
			continue
		fi
		hook_standin "impostor-$how-$S" "$CT_CONF"
		kill "$fpid"
		wait "$fpid" 2>/dev/null
		[ "$CT_RC" = 0 ] || CT_WHY+="$how: hook exit $CT_RC ($(ct_tail)); "
		[[ $GOT == "mode=deny "* ]] || CT_WHY+="$how: not guarded (got '$GOT'); "
		[ -z "$want" ] || grep -q "nsguard: $SOCK is not nsguard's agent: $want; doing the work here" <<<"$CT_OUT" ||
			CT_WHY+="$how: no '$want' ($(ct_tail)); "
		! grep -q answered "$log" || CT_WHY+="$how: the hook asked it; "
	done
	rm -f "$SOCK"
	[ -z "$CT_WHY" ]
}
ct_case agent-peer/impostor-never-asked case_impostor
