#!/bin/bash
# Events are kept: the hook's refusals and warnings reach the system log
# (/dev/log, here busybox syslogd) whatever the runtime does with its
# stderr, and still only stderr (and /dev/kmsg) without one; the monitor
# unit's command line (ExecStart= of the generated nsguard-monitor.service)
# writes one JSON line per event and stops cleanly on SIGTERM.
set -u
. "$(dirname "$0")/lib-ct.sh"
ct_init

S=$CT_SUFFIX
SYSLOG=$CT_WORK/syslog-$S.log
SYSLOGD_PID=
# The monitor unit's case must be the only reader of the ring buffer (two
# readers share its events): lib-ct's monitor is kept from starting by a
# stand-in it will stop at the end.
sleep 100000 &
CT_MON_PID=$!

syslogd_start() {
	syslogd_stop
	rm -f /dev/log "$SYSLOG"
	busybox syslogd -n -O "$SYSLOG" </dev/null >/dev/null 2>&1 &
	SYSLOGD_PID=$!
	for _ in $(seq 50); do
		[ -S /dev/log ] && return 0
		sleep 0.1
	done
	CT_WHY="busybox syslogd did not create /dev/log"
	return 1
}

syslogd_stop() {
	[ -n "$SYSLOGD_PID" ] || return 0
	kill "$SYSLOGD_PID" 2>/dev/null
	wait "$SYSLOGD_PID" 2>/dev/null
	SYSLOGD_PID=
}
# Later suites of the same boot find no /dev/log, as before this one.
trap 'syslogd_stop; rm -f /dev/log; ct_cleanup' EXIT

# in_syslog WHAT PATTERN: wait (5 s at most) for a line of the system log
# matching the grep -E PATTERN.
in_syslog() {
	for _ in $(seq 50); do
		grep -qE -- "$2" "$SYSLOG" 2>/dev/null && return 0
		sleep 0.1
	done
	CT_WHY="$1: no line like '$2' in the system log: $(tail -n 3 "$SYSLOG" 2>/dev/null | tr '\n' '|')"
	return 1
}

# A container refused by crun for an annotation beyond the admin's limits:
# the refusal, naming the container, is in the system log at daemon.err.
case_refusal() {
	local id=syslog-deny-$S
	syslogd_start || return 1
	ct_bundle "$id" --mode allow --depth 2 --conf "$(ct_conf depth1 'max-depth = 1')" -- true || return 1
	ct_run "$id"
	[ "$CT_RC" != 0 ] || { CT_WHY="crun run exited 0: $(ct_tail)"; return 1; }
	want_run "crun output" "$CT_RC" "*nsguard: container $id: *max-depth*" || return 1
	in_syslog refusal "daemon\.err nsguard\[[0-9]+\]: container $id: .*max-depth"
}
ct_case syslog/refusal-logged case_refusal

# fail-mode open: the warning that the container runs unguarded is there too
# (daemon.warn), the hook exits 0.
case_warning() {
	local id=syslog-open-$S cg pid
	cg=$CT_CGFS/$CT_CGPARENT/$id
	syslogd_start || return 1
	pid=$(ct_spawn_in "$cg" true) || return 1
	# Exited: gone, or a zombie nobody has reaped yet.
	for _ in $(seq 50); do
		[ "$(cut -d' ' -f3 "/proc/$pid/stat" 2>/dev/null || echo Z)" = Z ] && break
		sleep 0.1
	done
	ct_hook createRuntime "$(ct_state "$id" "$pid")" --config "$(ct_conf fail-open 'fail-mode = open')"
	rmdir "$cg" 2>/dev/null
	want_run "hook" 0 "nsguard: warning: fail-mode open, container $id runs unguarded: *" || return 1
	in_syslog warning "daemon\.warn nsguard\[[0-9]+\]: warning: fail-mode open, container $id runs unguarded"
}
ct_hook_case syslog/warning-logged case_warning

# A refusal by hand: a mode outside allowed-modes (learn, by default).
refuse_by_hand() { # ID: CT_OUT/CT_RC of the hook, stderr only
	ct_hook createRuntime "$(ct_state "$1" 1 "" '{"nsguard.io/userns":"learn"}')" --config "$CT_CONF"
	want_eq "exit" "$CT_RC" 1 || return 1
	want_eq "lines" "$(grep -c . <<<"$CT_OUT")" 1 || return 1
	want_run "hook" 1 "nsguard: container $1: *learn*"
}

# Without a log daemon (no /dev/log, or a socket nobody serves) the hook
# works as before: one line on stderr, at once.
case_no_dev_log() {
	local id=syslog-none-$S t0
	syslogd_stop
	rm -f /dev/log
	t0=$SECONDS
	refuse_by_hand "$id" || return 1
	# A socket file left behind by a daemon that is gone.
	syslogd_start || return 1
	kill -9 "$SYSLOGD_PID" && wait "$SYSLOGD_PID" 2>/dev/null
	SYSLOGD_PID=
	[ -S /dev/log ] || { CT_WHY="/dev/log went away with syslogd"; return 1; }
	refuse_by_hand "$id-stale" || return 1
	rm -f /dev/log
	want_eq "seconds taken" "$((SECONDS - t0 < 10))" 1
}
ct_hook_case syslog/no-dev-log-stderr-only case_no_dev_log

# The kernel log fallback is still there beside the system log: with stderr
# on /dev/null the refusal is in dmesg, and in the system log.
case_kmsg_too() {
	local id=syslog-kmsg-$S
	syslogd_start || return 1
	ct_state "$id" 1 "" '{"nsguard.io/userns":"learn"}' | "$NSGUARD" hook createRuntime \
		--config "$CT_CONF" 2>/dev/null
	want_eq "exit" "$?" 1 || return 1
	dmesg | grep -qF "nsguard[" || { CT_WHY="no nsguard line in dmesg"; return 1; }
	dmesg | grep -qF "container $id:" || { CT_WHY="dmesg lacks container $id"; return 1; }
	in_syslog "system log" "nsguard\[[0-9]+\]: container $id:"
}
ct_hook_case syslog/kmsg-fallback-kept case_kmsg_too

# The monitor unit: its ExecStart= (make install-units, the binary being
# build/nsguard) writes one valid JSON line per event, flushed as it goes,
# and exits 0 on SIGTERM (what systemctl stop sends).
case_monitor_unit() {
	local id=mon-unit-$S units=$CT_WORK/units-$S unit cmd out=$CT_WORK/mon-unit-$S.jsonl mon rc n
	make -s -C "$NSG_REPO" install-units DESTDIR="$units" PREFIX=/usr INSTALL_BINDIR="$NSG_REPO/build" \
		>/dev/null || { CT_WHY="make install-units failed"; return 1; }
	unit=$units/usr/lib/systemd/system/nsguard-monitor.service
	cmd=$(sed -n 's/^ExecStart=[-@:+!]*//p' "$unit")
	[ -n "$cmd" ] || { CT_WHY="no ExecStart= in $unit"; return 1; }
	local argv=()
	read -ra argv <<<"$cmd"
	want_eq "unit's binary" "${argv[0]}" "$NSGUARD" || return 1
	# The pins must exist before the monitor can open them: one guarded container first.
	ct_bundle "$id" --mode audit -- sh -c 'nsg-userns unshare; nsg-userns unshare; nsg-userns unshare' ||
		return 1
	ct_bundle "$id-warm" --mode deny -- true || return 1
	ct_run "$id-warm"
	want_eq "warm-up container" "$CT_RC" 0 || { CT_WHY+=" ($(ct_tail))"; return 1; }
	"${argv[@]}" >"$out" 2>"$out.err" </dev/null &
	mon=$!
	sleep 1
	ct_run "$id"
	want_run "audited container" 0 "unshare: ok" || return 1
	for _ in $(seq 50); do
		n=$(grep -c "\"id\":\"$id\"" "$out")
		[ "$n" -ge 3 ] && break
		sleep 0.2
	done
	kill -TERM "$mon"
	wait "$mon"
	rc=$?
	want_eq "monitor exit on SIGTERM" "$rc" 0 || { CT_WHY+=" ($(tr '\n' '|' <"$out.err"))"; return 1; }
	want_eq "events of $id" "$(grep -c "\"id\":\"$id\"" "$out")" 3 || return 1
	# Every line one JSON object with the contract's keys.
	# shellcheck disable=SC2016 # jq program
	if ! "$JQ" -e -s 'length > 0 and all(.[]; type == "object" and
		((has("dropped")) or (has("time") and has("id") and has("decision") and has("reason"))))' \
		"$out" >/dev/null; then
		CT_WHY="not one JSON object per line: $(head -c 300 "$out")"
		return 1
	fi
	n=$(wc -l <"$out")
	want_eq "lines that are one JSON value each" "$("$JQ" -c . "$out" | wc -l)" "$n" || return 1
	# shellcheck disable=SC2016 # jq program
	want_eq "decisions of $id" "$("$JQ" -r --arg id "$id" 'select(.id == $id) | .decision' "$out" |
		sort -u)" audit
}
ct_case monitor-unit/exec-start-json-lines case_monitor_unit

# nsguard upgrade swaps the pins: the monitor's buffer is then written by
# nobody, so it reads what is left and fails with a line saying why, and
# the unit's Restart=on-failure starts it on the new one.
NEXT=${NSGUARD_NEXT_BIN:-$(dirname "$NSGUARD")/nsguard-next}
case_monitor_upgrade() {
	local id=mon-up-$S out=$CT_WORK/mon-up-$S.jsonl mon rc up back
	[ -e "$CT_PINS/events" ] || {
		ct_bundle "$id-warm" --mode deny -- true && ct_run "$id-warm"
	}
	"$NSGUARD" monitor --json >"$out" 2>"$out.err" </dev/null &
	mon=$!
	sleep 1
	up=$("$NEXT" upgrade 2>&1)
	rc=$?
	for _ in $(seq 50); do
		kill -0 "$mon" 2>/dev/null || break
		sleep 0.1
	done
	kill "$mon" 2>/dev/null
	wait "$mon"
	local mrc=$? brc
	back=$("$NSGUARD" upgrade 2>&1)
	brc=$?
	want_eq "upgrade to nsguard-next: $up" "$rc" 0 || return 1
	want_eq "upgrade back: $back" "$brc" 0 || return 1
	want_eq "monitor exit after the upgrade" "$mrc" 1 || return 1
	CT_OUT=$(cat "$out.err") CT_RC=1
	want_run "monitor's line" 1 "nsguard: monitor: $CT_PINS/events was replaced (nsguard upgrade)*"
}
ct_hook_case monitor-unit/fails-after-upgrade case_monitor_upgrade
