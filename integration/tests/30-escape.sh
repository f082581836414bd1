#!/bin/bash
# Ways out of a guarded container that must not work: a child cgroup, re-exec,
# deep fork chains, setns into a user namespace made before the policy was
# attached; and policies of neighbouring and nested containers.
# Escape cases use errno EACCES, which the kernel itself never returns for
# userns creation, so a refusal is visibly nsguard's.
set -u
. "$(dirname "$0")/lib-ct.sh"
ct_init

S=$CT_SUFFIX
OPEN_CONF=$(ct_conf fail-open 'fail-mode = open')
# An empty directory for read-only decoys: /tmp itself holds the suite's
# nsguard configs, and a writable view of those is refused since #40.
DECOY=$CT_WORK/decoy
mkdir -p "$DECOY"

# escape_case ID PROBE LINE-GLOB [BUNDLE OPTIONS...]: PROBE in a deny/EACCES
# container is refused exactly once and reported.
escape_case() {
	local id=$1-$S probe=$2 line=$3
	shift 3
	start_guarded "$id" --errno EACCES "$@" || return 1
	# shellcheck disable=SC2086
	ct_exec "$id" $probe
	escape_refused "$id" "$probe" "$line"
}

# escape_refused ID WHAT LINE-GLOB: the last ct_exec was refused once, reported.
escape_refused() {
	want_run "$2" 1 "$3" || return 1
	want_eq "status counts" "$(ct_counts "$1")" "allowed=0 denied=1 audited=0" || return 1
	want_eq "monitor events" "$(ct_events "$1" 1)" "deny:mode:EACCES:d1"
}

# --- a child cgroup inherits the policy: mkdir + move self, then unshare.
ct_case escape/child-cgroup escape_case escape-cg "nsg-userns cgroup-escape" \
	"cgroup-escape: fail cgroup=/nsg-escape-* errno=EACCES" --allcaps --cgroup-rw
# Control: the same move works and the unshare succeeds when allowed.
case_cg_control() {
	local id=escape-cg-ctl-$S
	start_guarded "$id" --mode allow --allcaps --cgroup-rw || return 1
	ct_exec "$id" nsg-userns cgroup-escape
	want_run "cgroup-escape (allow)" 0 "cgroup-escape: ok cgroup=/nsg-escape-*"
}
ct_case escape/child-cgroup-control case_cg_control

# --- the container's whole cgroup subtree is guarded, not init's leaf.  crun's
# run.oci.delegate-cgroup puts init in a child of the container's cgroup (the
# layout of crun's systemd driver, whose default subgroup is "container"), the
# cgroup namespace root stays the container's cgroup, and with a writable
# cgroupfs the container can move itself to a sibling of init's cgroup.  runc
# ignores the annotation: init sits at the root, the same moves stay below it.
case_delegate() {
	local id=escape-deleg-$S p cg
	start_guarded "$id" --errno EACCES --allcaps --cgroup-rw \
		--ann run.oci.delegate-cgroup=container || return 1
	# Init sits in the sub-cgroup under crun (so the moves below leave init's
	# cgroup), at the container's cgroup under runc.
	local sub=/container
	[ "${CRUN##*/}" = crun ] || sub=
	want_eq "init's cgroup" "$(cat "/proc/$(ct_pid "$id")/cgroup" 2>&1)" "0::/$CT_CGPARENT/$id$sub" || return 1
	for p in unshare clone clone3; do
		ct_exec "$id" nsg-userns move "/sys/fs/cgroup/out-$p" "$p"
		want_run "moved next to init's cgroup, $p" 1 "$p: fail errno=EACCES" || return 1
	done
	want_eq "status counts" "$(ct_counts "$id")" "allowed=0 denied=3 audited=0" || return 1
	# shellcheck disable=SC2016 # $id is jq's
	cg=$(ct_status_json | "$JQ" -r --arg id "$id" '.containers[] | select(.id == $id) | .cgroup')
	want_eq "guarded cgroup" "$cg" "/$CT_CGPARENT/$id"
}
ct_case escape/delegate-cgroup case_delegate

# layout_refused NAME GLOB DIR [BUNDLE OPTIONS]: a cgroup layout the container
# could leave is refused at start, whatever fail-mode says.  Its command is the
# escape itself (move to cgroup DIR, then unshare): if it does start, the
# failure shows whether it got out.
layout_refused() {
	local id=$1-$S glob=$2 dir=$3
	shift 3
	ct_bundle "$id" --errno EACCES --conf "$(ct_conf open 'fail-mode = open')" "$@" \
		-- nsg-userns move "$dir" unshare || return 1
	ct_run "$id"
	[ "$CT_RC" != 0 ] || { CT_WHY="$CRUN run exited 0: $(ct_tail)"; return 1; }
	[[ $CT_OUT != *"unshare: "* ]] || { CT_WHY="the container ran: $(ct_tail)"; return 1; }
	want_run "$CRUN output" "$CT_RC" "*nsguard: $glob" || return 1
	ct_gone "$id" ""
}
# The host's cgroup namespace and the host's root (no user namespace): a
# writable cgroupfs shows every cgroup, and nothing bounds a move.
ct_case escape/host-cgroupns-host-root-refused layout_refused hostns-root \
	"*runs as the host's root*" "/sys/fs/cgroup/$CT_CGPARENT/escaped-$S" \
	--host-cgroupns --cgroup-rw --allcaps
# The host's cgroupfs bound read-write into a host-root container, under a
# key runc's decoder folds onto "mounts": runc makes the mounts, while the
# hook once read no "mounts", refused nothing and the container ran.  Refused now, as any key
# that runc reads as one nsguard reads, whatever fail-mode says.
case_folded_mounts() {
	local id=folded-mounts-$S f
	ct_bundle "$id" --errno EACCES --conf "$OPEN_CONF" --allcaps \
		--mount '{"destination": "/h", "type": "bind", "source": "/sys/fs/cgroup", "options": ["rbind", "rw"]}' \
		-- nsg-userns move "/h/$CT_CGPARENT/folded-escaped-$S" unshare || return 1
	f=$CT_WORK/b/$id/config.json
	sed -i 's/^ "mounts": \[/ "Mounts": [/' "$f"
	grep -q '^ "Mounts": \[' "$f" || { CT_WHY="no \"Mounts\" key in $f"; return 1; }
	ct_run "$id"
	rmdir "$CT_CGFS/$CT_CGPARENT/folded-escaped-$S" 2>/dev/null
	[[ $CT_OUT != *"move: "* && $CT_OUT != *"unshare: "* ]] ||
		{ CT_WHY="the container ran its command: $(ct_tail)"; return 1; }
	# (runc quotes the hook's stderr: \" for ")
	want_run "$CRUN output" "$CT_RC" '*nsguard: *key *Mounts* is *mounts* to runc, which folds case*' || return 1
	ct_gone "$id" ""
}
# (crun reads keys as written: it refuses a config.json without "mounts" itself.)
[ "${CRUN##*/}" = runc ] && ct_case escape/folded-mounts-key-refused case_folded_mounts
# The host's root with a cgroup namespace of its own, but a read-write bind of
# the host's cgroup2 mount: through it, every cgroup is in reach.
ct_case escape/rw-cgroup2-bind-host-root-refused layout_refused rwbind-root \
	"*the container's mount at */root shows cgroup / read-write, above or beside the guarded /$CT_CGPARENT/rwbind-root-$S: *, and it runs as the host's root*" \
	"/root/$CT_CGPARENT/escaped-$S" --allcaps \
	--mount '{"destination": "/root", "type": "bind", "source": "/sys/fs/cgroup", "options": ["rbind", "rw"]}'
# The host's root with a cgroup namespace of its own, in the host's mount
# namespace: /sys/fs/cgroup is the host's.  No runtime starts that layout
# here, so the hook runs by hand on a live stand-in init that has it (its own
# cgroup and cgroup namespace, the host's mount namespace), fail-mode open.
case_host_mntns() {
	local id=hostmnt-$S cg pid
	cg=$CT_CGFS/$CT_CGPARENT/$id
	pid=$(ct_spawn_in "$cg" unshare -C sleep 600) || { CT_WHY="cannot start a process in $cg"; return 1; }
	for _ in $(seq 50); do
		[ "$(cat "/proc/$pid/comm" 2>/dev/null)" = sleep ] && break
		sleep 0.1
	done
	ct_bundle "$id" -- true || return 1
	if [ "$(readlink "/proc/$pid/ns/mnt")" != "$(readlink /proc/self/ns/mnt)" ] ||
		[ "$(readlink "/proc/$pid/ns/cgroup")" = "$(readlink /proc/self/ns/cgroup)" ]; then
		CT_WHY="the stand-in init $pid does not have the layout: $(readlink "/proc/$pid/ns/mnt" "/proc/$pid/ns/cgroup" 2>&1 | tr '\n' ' ')"
	else
		ct_hook createRuntime "$(ct_state "$id" "$pid" "$CT_WORK/b/$id")" --config "$OPEN_CONF"
		want_run "hook (fail-mode open)" 1 \
			"nsguard: container $id: the container shares the host's mount namespace, *" &&
			want_eq "its lines" "$(grep -c . <<<"$CT_OUT")" 1 &&
			want_eq "its record" "$(ct_status "$id")" missing
	fi
	ct_kill "$pid"
	rmdir "$cg"
	[ -z "$CT_WHY" ]
}
ct_hook_case escape/host-mntns-host-root-refused case_host_mntns
# The host's cgroup namespace, a user namespace, and a parent cgroup delegated
# to the container's root: it could move itself into a sibling.
case_delegated_parent() {
	local p=$CT_CGFS/$CT_CGPARENT/deleg-$S rc=0 m
	if ! { mkdir -p "$p" && chown 100000:100000 "$p" "$p/cgroup.procs"; }; then
		CT_WHY="cannot delegate $p"
		return 1
	fi
	m='{"destination": "/tmp/cg", "type": "bind", "source": "'$p'", "options": ["rbind", "rw"]}'
	layout_refused deleg-parent "*cgroup /$CT_CGPARENT/deleg-$S above the container's is delegated*" \
		/tmp/cg/out --userns --host-cgroupns --cgpath "/$CT_CGPARENT/deleg-$S/ct" --mount "$m" || rc=1
	rmdir "$p/out" "$p/ct" "$p" 2>/dev/null
	return $rc
}
ct_case escape/host-cgroupns-delegated-parent-refused case_delegated_parent
# Control: the host's cgroup namespace with a user namespace and nothing
# delegated above the container's cgroup is guarded as before.
case_hostns_userns() {
	local id=escape-hostns-userns-$S
	start_guarded "$id" --errno EACCES --userns --host-cgroupns || return 1
	ct_exec "$id" nsg-userns unshare
	escape_refused "$id" "nsg-userns unshare" "unshare: fail errno=EACCES"
}
ct_case escape/host-cgroupns-userns-guarded case_hostns_userns

# --- never above another container's guard (#11 item 2): container B's guard
# stays on its cgroup while B is stopped and not yet deleted (empty cgroup,
# record and pin kept); a container whose cgroup is B's parent is refused,
# or its policy would land on B's cgroup too.
case_above_guarded() {
	local a=above-$S b=above-$S-inner cga cgb pa pb
	cga=$CT_CGFS/$CT_CGPARENT/$a
	cgb=$cga/inner
	mkdir -p "$cgb" || { CT_WHY="mkdir $cgb"; return 1; }
	pb=$(ct_spawn_init "$cgb") || { CT_WHY="cannot start a process in $cgb"; return 1; }
	sleep 0.3
	ct_bundle "$b" --cgpath "/$CT_CGPARENT/$a/inner" -- true || return 1
	ct_hook createRuntime "$(ct_state "$b" "$pb" "$CT_WORK/b/$b")" --config "$CT_CONF"
	want_eq "hook for $b" "$CT_RC" 0 || { CT_WHY+=" ($(ct_tail))"; return 1; }
	ct_kill "$pb"
	pa=$(ct_spawn_init "$cga") || { CT_WHY="cannot start a process in $cga"; return 1; }
	sleep 0.3
	ct_bundle "$a" --cgpath "/$CT_CGPARENT/$a" -- true || return 1
	ct_hook createRuntime "$(ct_state "$a" "$pa" "$CT_WORK/b/$a")" --config "$OPEN_CONF"
	ct_kill "$pa"
	want_run "hook for $a (fail-mode open)" 1 \
		"*cgroup /$CT_CGPARENT/$a is above cgroup /$CT_CGPARENT/$a/inner, which is guarded for container $b*" ||
		return 1
	[ ! -e "$CT_PINS/links/$(ct_cgid "$cga")" ] || { CT_WHY="$a's cgroup got a link"; return 1; }
	CT_OUT=$("$NSGUARD" detach --id "$b" 2>&1) || { CT_WHY="detach $b: $CT_OUT"; return 1; }
	rmdir "$cgb" "$cga"
}
ct_hook_case escape/above-another-guard-refused case_above_guarded

# --- nor below another container's guard: container A's init holds A's
# cgroup; a container whose cgroup is a child of A's (its creator chose that
# cgroupsPath) is refused, or A's policy and events would cover it.
case_below_guarded() {
	local a=below-$S b=below-$S-inner cga cgb pa pb
	cga=$CT_CGFS/$CT_CGPARENT/$a
	cgb=$cga/inner
	pa=$(ct_spawn_init "$cga") || { CT_WHY="cannot start a process in $cga"; return 1; }
	ct_bundle "$a" --cgpath "/$CT_CGPARENT/$a" -- true || return 1
	ct_hook createRuntime "$(ct_state "$a" "$pa" "$CT_WORK/b/$a")" --config "$CT_CONF"
	want_eq "hook for $a" "$CT_RC" 0 || { CT_WHY+=" ($(ct_tail))"; kill "$pa"; return 1; }
	pb=$(ct_spawn_init "$cgb") || { CT_WHY="cannot start a process in $cgb"; kill "$pa"; return 1; }
	ct_bundle "$b" --cgpath "/$CT_CGPARENT/$a/inner" -- true || return 1
	ct_hook createRuntime "$(ct_state "$b" "$pb" "$CT_WORK/b/$b")" --config "$OPEN_CONF"
	ct_kill "$pa" "$pb"
	want_run "hook for $b (fail-mode open)" 1 \
		"*cgroup /$CT_CGPARENT/$a/inner is below cgroup /$CT_CGPARENT/$a, which is guarded for container $a*" ||
		return 1
	[ ! -e "$CT_RECORDS/$b.json" ] || { CT_WHY="a record was written for $b"; return 1; }
	CT_OUT=$("$NSGUARD" detach --id "$a" 2>&1) || { CT_WHY="detach $a: $CT_OUT"; return 1; }
	rmdir "$cgb" "$cga"
}
ct_hook_case escape/below-another-guard-refused case_below_guarded

# --- the cgroup guarded is where the runtime put the container: a process
# found elsewhere than config.json's linux.cgroupsPath (the runtime did not
# make its cgroup, or the pid is not the container's) is refused.
case_not_runtime_cgroup() {
	local id=rtcg-$S cg pid
	cg=$CT_CGFS/$CT_CGPARENT/$id
	pid=$(ct_spawn_init "$cg") || { CT_WHY="cannot start a process in $cg"; return 1; }
	sleep 0.3
	ct_bundle "$id" --cgpath "/$CT_CGPARENT/$id-elsewhere" -- true || return 1
	ct_hook createRuntime "$(ct_state "$id" "$pid" "$CT_WORK/b/$id")" --config "$OPEN_CONF"
	ct_kill "$pid"
	want_run "hook (fail-mode open)" 1 \
		"*the cgroup to guard, /$CT_CGPARENT/$id, is not the container's cgroup that config.json's linux.cgroupsPath \"/$CT_CGPARENT/$id-elsewhere\" names*" ||
		return 1
	[ ! -e "$CT_RECORDS/$id.json" ] || { CT_WHY="a record was written"; return 1; }
	rmdir "$cg"
}
ct_hook_case escape/not-the-runtime-cgroup-refused case_not_runtime_cgroup

ct_case escape/reexec escape_case escape-reexec "nsg-userns reexec" "unshare: fail errno=EACCES"
ct_case escape/fork-chain-16 escape_case escape-chain "nsg-userns chain 16" "chain: fail pid=* errno=EACCES"
ct_case escape/clone3-allcaps escape_case escape-clone3 "nsg-userns clone3" "clone3: fail errno=EACCES" --allcaps
# A new session.  Started in the background of a non-interactive sh, setsid
# is no process-group leader, so busybox setsid does not fork and exit 0
# before unshare ran (runc exec starts its command as a group leader, crun
# exec does not).
case_setsid() {
	local id=escape-setsid-$S
	start_guarded "$id" --errno EACCES || return 1
	ct_exec "$id" sh -c 'setsid unshare -U -r true & wait $!'
	escape_refused "$id" "setsid unshare -U -r true" "*Permission denied*"
}
ct_case escape/setsid-busybox case_setsid

# --- setns into a user namespace that existed before the policy: entering is
# not creation, but creating a new one from there must be refused.  The
# container has no hooks; the policy is attached late with `nsguard attach`.
# The held namespace is one level below the container's (level 0), so a
# namespace created from inside it is at depth 2.
case_setns() {
	local rc=0
	case_setns_body || rc=1
	# No poststop hook runs for this container: detach whatever happened.
	"$NSGUARD" detach --id "escape-setns-$S" >/dev/null 2>&1
	return $rc
}
case_setns_body() {
	local id=escape-setns-$S cg p rpid i
	start_guarded "$id" --no-hooks --allcaps || return 1
	cg=$CT_CGPARENT/$id
	# To a file: the holder keeps its stdout open for good.
	"$CRUN" --root "$CT_RUNROOT" exec --detach "$id" nsg-userns hold /tmp/holder \
		</dev/null >"$CT_WORK/b/$id/hold.out" 2>&1 ||
		{ CT_WHY="crun exec --detach hold: $(cat "$CT_WORK/b/$id/hold.out")"; return 1; }
	rpid=$(ct_pid "$id")
	for i in $(seq 50); do
		[ -s "/proc/$rpid/root/tmp/holder" ] && break
		sleep 0.2
	done
	p=$(cat "/proc/$rpid/root/tmp/holder" 2>/dev/null)
	[ -n "$p" ] || { CT_WHY="holder did not start"; return 1; }
	# Before the policy: setns + unshare works (the probe itself is sound).
	ct_exec "$id" nsg-userns setns "/proc/$p/ns/user"
	want_run "setns+unshare before attach" 0 "setns: ok" || return 1
	CT_OUT=$("$NSGUARD" attach --cgroup "$cg" --mode deny --errno EACCES --id "$id" 2>&1) ||
		{ CT_WHY="nsguard attach --cgroup $cg: $CT_OUT"; return 1; }
	ct_exec "$id" nsg-userns setns "/proc/$p/ns/user"
	want_run "setns+unshare after attach" 1 "setns: fail errno=EACCES" || return 1
	ct_exec "$id" nsenter -t "$p" -U unshare -U true
	want_run "nsenter -U + unshare -U" 1 "*Permission denied*" || return 1
	want_eq "status counts" "$(ct_counts "$id")" "allowed=0 denied=2 audited=0" || return 1
	want_eq "monitor events" "$(ct_events "$id" 2)" "deny:mode:EACCES:d2 deny:mode:EACCES:d2" || return 1
	CT_OUT=$("$NSGUARD" detach --id "$id" 2>&1) || { CT_WHY="nsguard detach --id: $CT_OUT"; return 1; }
	want_eq "status after detach" "$(ct_status "$id")" missing
}
ct_case escape/setns-preexisting-userns case_setns

# --- two containers side by side, different policies, neither affects the
# other (also not when one of them goes away).
case_side_by_side() {
	local a=side-deny-$S b=side-allow-$S
	start_guarded "$a" --errno ENOSPC || return 1
	start_guarded "$b" --mode allow --depth 1 || return 1
	ct_exec "$a" nsg-userns unshare
	want_run "deny container" 1 "unshare: fail errno=ENOSPC" || return 1
	ct_exec "$b" nsg-userns nest 1
	want_run "allow container" 0 "nest: ok levels=1" || return 1
	ct_exec "$b" nsg-userns nest 2
	want_run "allow container, depth 2" 1 "nest: fail level=2 errno=EPERM" || return 1
	want_eq "deny container counts" "$(ct_counts "$a")" "allowed=0 denied=1 audited=0" || return 1
	want_eq "allow container counts" "$(ct_counts "$b")" "allowed=2 denied=1 audited=0" || return 1
	ct_delete "$a"
	want_eq "crun delete $a" "$CT_RC" 0 || return 1
	ct_exec "$b" nsg-userns nest 1
	want_run "allow container after the other left" 0 "nest: ok levels=1" || return 1
	want_eq "allow container counts after" "$(ct_counts "$b")" "allowed=3 denied=1 audited=0"
}
ct_case side-by-side case_side_by_side

# --- one container's flood of refused requests does not drown another's
# events (#11): with the monitor stopped, a deny container makes 6000 refused
# unshares (more than the ring holds), then an audit container makes one.  The
# audit event arrives, and every flood event is either delivered or counted as
# dropped in the flooder's own status.
case_event_flood() {
	local a=flood-$S b=flood-audit-$S n=6000 dropped delivered
	start_guarded "$a" || return 1
	start_guarded "$b" --mode audit --depth 1 || return 1
	ct_monitor_ensure
	[ -n "$CT_MON_PID" ] || { CT_WHY="no monitor running"; return 1; }
	kill -STOP "$CT_MON_PID"
	ct_exec "$a" nsg-userns flood $n
	want_run "flood" 1 "flood: fail count=$n errno=EPERM" || { kill -CONT "$CT_MON_PID"; return 1; }
	ct_exec "$b" nsg-userns unshare
	kill -CONT "$CT_MON_PID"
	want_run "audit container" 0 "unshare: ok" || return 1
	want_eq "audit container's event" "$(ct_events "$b" 1)" "audit:mode:-:d1" || return 1
	want_eq "audit container's dropped events" "$(ct_dropped "$b")" 0 || return 1
	want_eq "flood counts" "$(ct_counts "$a")" "allowed=0 denied=$n audited=0" || return 1
	dropped=$(ct_dropped "$a")
	[ "${dropped:-0}" -gt 0 ] || { CT_WHY="flood: events_dropped '$dropped', want > 0"; return 1; }
	delivered=$(ct_events "$a" $((n - dropped)) | wc -w)
	want_eq "flood events delivered + dropped" $((delivered + dropped)) $n
}
ct_case event-flood-bounded case_event_flood

# --- a guarded cgroup below another guarded container's cgroup: the most
# restrictive policy wins.  The inner policy is attached with `nsguard attach`
# to a child of the outer container's cgroup, and a process is run there.
# nested_case NAME OUTER-OPTS INNER-ATTACH-OPTS PROBE LINE-GLOB
nested_case() {
	local out=nest-$1-$S in=nest-$1-in-$S incg oo io
	read -ra oo <<<"$2"
	read -ra io <<<"$3"
	start_guarded "$out" "${oo[@]}" || return 1
	incg=$CT_CGPARENT/$out/inner
	mkdir -p "$CT_CGFS/$incg" || { CT_WHY="mkdir $incg"; return 1; }
	CT_OUT=$("$NSGUARD" attach --cgroup "$incg" "${io[@]}" --id "$in" 2>&1) ||
		{ CT_WHY="nsguard attach --cgroup $incg: $CT_OUT"; return 1; }
	# shellcheck disable=SC2086
	ct_run_in "$CT_CGFS/$incg" "$NSG_USERNS" $4
	want_run "$4 in the inner cgroup" "${6:-1}" "$5" || return 1
	NESTED_OUT=$out NESTED_IN=$in
	nested_check "$1" || return 1
	CT_OUT=$("$NSGUARD" detach --id "$in" 2>&1) || { CT_WHY="nsguard detach --id $in: $CT_OUT"; return 1; }
	rmdir "$CT_CGFS/$incg" 2>/dev/null
	return 0
}
nested_check() {
	case $1 in
	outer-deny)
		# Both programs run; the outer one refuses.
		want_eq "outer counts" "$(ct_counts "$NESTED_OUT")" "allowed=0 denied=1 audited=0" &&
			want_eq "outer events" "$(ct_events "$NESTED_OUT" 1)" "deny:mode:EACCES:d1"
		;;
	inner-deny)
		want_eq "inner counts" "$(ct_counts "$NESTED_IN")" "allowed=0 denied=1 audited=0" &&
			want_eq "inner events" "$(ct_events "$NESTED_IN" 1)" "deny:mode:ENOSPC:d1"
		;;
	inner-depth)
		want_eq "inner events" "$(ct_events "$NESTED_IN" 1)" "deny:depth:ENOSPC:d2" &&
			want_eq "outer denied nothing" "$(ct_counts "$NESTED_OUT")" "allowed=2 denied=0 audited=0"
		;;
	outer-depth)
		want_eq "outer events" "$(ct_events "$NESTED_OUT" 1)" "deny:depth:EACCES:d2" &&
			want_eq "inner denied nothing" "$(ct_counts "$NESTED_IN")" "allowed=2 denied=0 audited=0"
		;;
	both-allow)
		want_eq "outer counts" "$(ct_counts "$NESTED_OUT")" "allowed=2 denied=0 audited=0" &&
			want_eq "inner counts" "$(ct_counts "$NESTED_IN")" "allowed=0 denied=0 audited=2"
		;;
	esac
}
ct_case nested/outer-deny-inner-allow nested_case outer-deny "--errno EACCES" \
	"--mode allow --max-depth 2" "unshare" "unshare: fail errno=EACCES"
ct_case nested/outer-allow-inner-deny nested_case inner-deny "--mode allow --errno EACCES" \
	"--mode deny --errno ENOSPC" "unshare" "unshare: fail errno=ENOSPC"
ct_case nested/inner-shallower nested_case inner-depth "--mode allow --depth 2 --errno EACCES" \
	"--mode allow --max-depth 1 --errno ENOSPC" "nest 2" "nest: fail level=2 errno=ENOSPC"
ct_case nested/outer-shallower nested_case outer-depth "--mode allow --depth 1 --errno EACCES" \
	"--mode allow --max-depth 2 --errno ENOSPC" "nest 2" "nest: fail level=2 errno=EACCES"
ct_case nested/both-allow nested_case both-allow "--mode allow --depth 2" \
	"--mode audit --max-depth 2" "nest 2" "nest: ok levels=2" 0

# --- a second container that takes a running container's id in the same
# (shared) cgroup does not get to rewrite its policy: each rewrite would lose
# the count of requests in flight (max-count).  The same container's hook
# run again (the same init) still rewrites it (40-lifecycle rehook-same-id).
case_same_id_same_cgroup() {
	local id=shared-id-$S cg p1 p2 conf
	cg=$CT_CGFS/$CT_CGPARENT/$id
	conf=$(ct_conf "shared-open-$S" "shared-cgroups = allow" "fail-mode = open")
	mkdir -p "$cg" || { CT_WHY="mkdir $cg"; return 1; }
	p1=$(ct_spawn_init "$cg") || { CT_WHY="cannot start a process in $cg"; return 1; }
	ct_bundle "$id" --cgpath "/$CT_CGPARENT/$id" -- true || return 1
	ct_hook createRuntime "$(ct_state "$id" "$p1" "$CT_WORK/b/$id" \
		'{"nsguard.io/userns":"allow","nsguard.io/userns.max-count":"1"}')" --config "$conf"
	want_eq "hook for the first container" "$CT_RC" 0 || { CT_WHY+=" ($(ct_tail))"; return 1; }
	p2=$(ct_spawn_init "$cg") || { CT_WHY="cannot start a second process in $cg"; return 1; }
	ct_hook createRuntime "$(ct_state "$id" "$p2" "$CT_WORK/b/$id" \
		'{"nsguard.io/userns":"allow","nsguard.io/userns.max-count":"1"}')" --config "$conf"
	kill "$p1" "$p2"
	wait "$p1" "$p2" 2>/dev/null
	want_run "hook for a second container, same id and cgroup (fail-mode open)" 1 \
		"*the id is already guarding cgroup /$CT_CGPARENT/$id for a running container (pid $p1)*" ||
		return 1
	CT_OUT=$("$NSGUARD" detach --id "$id" 2>&1) || { CT_WHY="detach $id: $CT_OUT"; return 1; }
	rmdir "$cg"
}
ct_hook_case escape/same-id-same-cgroup-refused case_same_id_same_cgroup

# --- what a host-root container's mounts expose is judged from the kernel's
# mount table (#29 item 2), whatever config.json claims.  Each case's command
# is the escape itself: if the container starts, the output shows it.
# docker run -v /sys:/h:ro: `ro` on an rbind reaches the top mount only, so
# /h/fs/cgroup (the host's whole hierarchy) and /h/fs/bpf stay writable.
ct_case escape/rbind-ro-sys-refused layout_refused rbind-ro-sys \
	"*container's mount at */h/fs/cgroup shows cgroup / read-write*" "/h/fs/cgroup/escaped-$S" \
	--mount '{"destination": "/h", "type": "bind", "source": "/sys", "options": ["rbind", "ro"]}'
# A writable bpffs: rm /b/nsguard/links/* would unguard every container.
ct_case escape/bind-bpffs-rw-refused layout_refused bind-bpffs \
	"*container's mount at */b is a bpf file system*" /tmp/x \
	--mount '{"destination": "/b", "type": "bind", "source": "/sys/fs/bpf", "options": ["bind", "rw"]}'
# nsguard's records and lock.
ct_case escape/bind-run-nsguard-rw-refused layout_refused bind-run \
	"*container's mount at */r shows /run/nsguard (nsguard's lock*" /tmp/x \
	--mount '{"destination": "/r", "type": "bind", "source": "/run/nsguard", "options": ["bind", "rw"]}'

# --- host capabilities (#29 item 3): CAP_SYS_ADMIN or CAP_BPF in the host's
# user namespace could detach the guard through bpf().  Refused, whatever
# fail-mode says; the admin may accept it (host-capabilities = allow).
ct_case escape/host-caps-refused layout_refused host-caps \
	"*runs in the host's user namespace with CAP_SYS_ADMIN, CAP_BPF, CAP_SYS_MODULE, CAP_SYS_RAWIO or CAP_DAC_READ_SEARCH*could detach its own guard*" \
	/tmp/x --hostcaps
ct_case escape/host-caps-allowed-by-admin escape_case escape-hostcaps "nsg-userns unshare" \
	"unshare: fail errno=EACCES" --hostcaps --conf "$(ct_conf hostcaps 'host-capabilities = allow')"
# Every capability in a user namespace of its own reaches no bpf(): guarded.
ct_case escape/allcaps-userns-guarded escape_case escape-allcaps-userns "nsg-userns unshare" \
	"unshare: fail errno=EACCES" --hostcaps --userns

# --- a bundle whose config.json has gone by hook time: nsguard cannot tell
# what the runtime was asked for, so it refuses (never "no mounts").
case_config_missing() {
	local id=nocfg-$S cg pid b=$CT_WORK/nocfg-$S
	cg=$CT_CGFS/$CT_CGPARENT/$id
	mkdir -p "$b" "$cg" || { CT_WHY="mkdir $b $cg"; return 1; }
	pid=$(ct_spawn_init "$cg") || { CT_WHY="cannot start a process in $cg"; return 1; }
	ct_hook createRuntime "$(ct_state "$id" "$pid" "$b")" --config "$OPEN_CONF"
	kill "$pid"
	want_run "hook, bundle without config.json (fail-mode open)" 1 \
		"nsguard: container $id: cannot read $b/config.json (No such file or directory)*" || return 1
	want_eq "no record" "$(ct_status "$id")" missing || return 1
	for _ in $(seq 50); do rmdir "$cg" 2>/dev/null && break; sleep 0.1; done
	rmdir "$b"
}
ct_hook_case escape/config-json-missing-refused case_config_missing

# --- found in review of the above (#29).  The host's pid namespace: /proc/1/root
# leads into the host's mounts, whatever the container's own mount table says.
ct_case escape/host-pidns-host-root-refused layout_refused host-pidns \
	"*shares the host's pid namespace and runs as the host's root*" /tmp/x --host-pidns
# crun reads capability names with libcap (numbers, any case): "21" is
# CAP_SYS_ADMIN to it.  (runc wants CAP_ names exactly.)
[ "${CRUN##*/}" = crun ] && ct_case escape/host-caps-numeric-name-refused layout_refused \
	host-caps-21 "*runs in the host's user namespace with CAP_SYS_ADMIN*names one, or a name nsguard does not know*" \
	/tmp/x --cap 21
# An ro entry, then a rw one at the same destination: the bpffs on top stays
# writable; no concession for what the last entry does not ask.
ct_case escape/stacked-ro-then-rw-refused layout_refused stacked \
	"*container's mount at */x is a bpf file system*" /tmp/x \
	--mount '{"destination": "/x", "type": "bind", "source": "'"$DECOY"'", "options": ["bind", "ro"]}' \
	--mount '{"destination": "/x", "type": "bind", "source": "/sys/fs/bpf", "options": ["bind", "rw"]}'
# Read-only decoys where a later rbind's submounts will land.
ct_case escape/decoys-under-rbind-refused layout_refused decoys \
	"*container's mount at */h/fs/cgroup shows cgroup / read-write*" "/h/fs/cgroup/escaped-$S" \
	--mount '{"destination": "/h/fs/bpf", "type": "bind", "source": "'"$DECOY"'", "options": ["bind", "ro"]}' \
	--mount '{"destination": "/h/fs/cgroup", "type": "bind", "source": "'"$DECOY"'", "options": ["bind", "ro"]}' \
	--mount '{"destination": "/h", "type": "bind", "source": "/sys", "options": ["rbind", "ro"]}'
# A user namespace that maps the host's root owns its mount namespace and may
# remount a read-only bind writable, and as the host's uid 0 it writes
# /proc/sys: refused whatever it mounts (#40).
ct_case escape/userns-root-ro-bpffs-refused layout_refused userns-root \
	"*user namespace maps the host's root (uid 0) and owns its mounts*" /tmp/x \
	--userns-root --mount '{"destination": "/b", "type": "bind", "source": "/sys/fs/bpf", "options": ["bind", "ro"]}'
# Control: a read-only bind of the host's cgroup root in the host's user
# namespace starts (crun makes it read-only after the hook; nsguard does so
# first), and it is read-only in the container.  (A bpffs is refused even
# read-only since #40: 35-views.sh.)
case_ro_cgroupfs() {
	local id=ro-cgroupfs-$S
	ct_bundle "$id" --errno EACCES \
		--mount '{"destination": "/b", "type": "bind", "source": "/sys/fs/cgroup", "options": ["bind", "ro"]}' \
		-- sh -c 'mkdir /b/nsg-probe-'"$S"' 2>/dev/null && echo WROTE-CGROUPFS || echo CGROUPFS-READ-ONLY' || return 1
	ct_run "$id"
	rmdir "$CT_CGFS/nsg-probe-$S" 2>/dev/null
	want_run "$CRUN run" 0 "CGROUPFS-READ-ONLY" || return 1
	want_eq "the host's cgroupfs" "$(ls -d "$CT_CGFS/nsg-probe-$S" 2>/dev/null)" ""
}
ct_case escape/ro-cgroupfs-stays-read-only case_ro_cgroupfs

# --- found in a second review (#29).  CAP_DAC_READ_SEARCH: open_by_handle_at
# reaches any file of a file system the container has any mount of.
ct_case escape/host-dac-read-search-refused layout_refused dac-read-search \
	"*runs in the host's user namespace with CAP_SYS_ADMIN, CAP_BPF*could detach its own guard*" \
	/tmp/x --cap CAP_DAC_READ_SEARCH
# An init that is not pid 1 of its pid namespace shares it with processes
# whose mounts nsguard never judged (/proc/PID/root of theirs).
case_shared_pidns() {
	local id=sharedpid-$S cg u sh pid=
	cg=$CT_CGFS/$CT_CGPARENT/$id
	# shellcheck disable=SC2016 # the inner shell expands it
	u=$(ct_spawn_in "$cg" unshare -C -m -p -f --kill-child sh -c 'sleep 600 & wait') ||
		{ CT_WHY="cannot start a process in $cg"; return 1; }
	for _ in $(seq 50); do
		sh=$(pgrep -P "$u" -x sh) && pid=$(pgrep -P "$sh" -x sleep) && break
		sleep 0.1
	done
	[ -n "$pid" ] || { CT_WHY="no sleep below unshare $u"; ct_kill "$u"; return 1; }
	# The cgroup is the init's alone, as a container's would be.
	if ! { echo "$u" >"$CT_CGFS/cgroup.procs" && echo "$sh" >"$CT_CGFS/cgroup.procs"; }; then
		CT_WHY="cannot move $u and $sh out of $cg"
		ct_kill "$u"
		return 1
	fi
	ct_hook createRuntime "$(ct_state "$id" "$pid")" --config "$OPEN_CONF"
	ct_kill "$u"
	for _ in $(seq 50); do rmdir "$cg" 2>/dev/null && break; sleep 0.1; done
	want_run "hook, init pid 2 of its pid namespace (fail-mode open)" 1 \
		"nsguard: container $id: the container's init is not pid 1 of its pid namespace*"
}
ct_hook_case escape/shared-pidns-host-root-refused case_shared_pidns
# A destination through a symlink of the image (/a -> /b): the host's
# cgroupfs lands on /b, above the ro bind the last entry at /b asks for.
# crun's later ro remount reaches the covered bind only, and a remount of
# the /a entry (with nosuid, say) would clear a read-only flag nsguard set
# on the top one: two mounts stacked where one entry names the point, so
# nsguard does not make it read-only for the runtime but refuses it.
case_symlinked_destination() {
	local id=symlinked-$S
	ln -sfn b "$CT_ROOTFS/a" || { CT_WHY="cannot make $CT_ROOTFS/a"; return 1; }
	ct_bundle "$id" --errno EACCES \
		--mount '{"destination": "/b", "type": "bind", "source": "'"$DECOY"'", "options": ["bind", "ro"]}' \
		--mount '{"destination": "/a", "type": "bind", "source": "/sys/fs/cgroup", "options": ["bind", "rw"]}' \
		-- sh -c 'mkdir /b/nsg-probe-'"$S"' 2>/dev/null && echo WROTE-CGROUPFS || echo CGROUPFS-READ-ONLY' || return 1
	ct_run "$id"
	rm -f "$CT_ROOTFS/a"
	if rmdir "$CT_CGFS/nsg-probe-$S" 2>/dev/null; then
		CT_WHY="the container wrote the host's cgroupfs"
		return 1
	fi
	[ "$CT_RC" != 0 ] || { CT_WHY="$CRUN run exited 0: $(ct_tail)"; return 1; }
	want_run "$CRUN run" "$CT_RC" "*nsguard: *container's mount at */b shows cgroup / read-write*"
}
ct_case escape/symlinked-destination-refused case_symlinked_destination
