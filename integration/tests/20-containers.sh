#!/bin/bash
# Real crun containers with nsguard as their hook: what a process inside
# sees for each policy, and what `status --json` and `monitor --json` say.
# Each case runs a detached container (`sleep`) and probes it with
# `crun exec`, because the counters live only as long as the container.
set -u
. "$(dirname "$0")/lib-ct.sh"
ct_init

S=$CT_SUFFIX

# probe_case NAME PROBE EXPECT-LINE-GLOB RC COUNTS EVENTS STATUS-GLOB [BUNDLE OPTIONS...]
# Start a container with the options, exec `PROBE` in it, and check the
# caller's result, the counters, the events and the status fields.
probe_case() {
	local name=$1 probe=$2 line=$3 rc=$4 counts=$5 events=$6 status=$7 id
	shift 7
	id=$name-$S
	id=${id//\//-}
	ct_bundle "$id" "$@" -- sleep 600 || return 1
	ct_start "$id"
	want_eq "crun run -d" "$CT_RC" 0 || { CT_WHY+=" ($(ct_tail))"; return 1; }
	# shellcheck disable=SC2086 # PROBE is words
	ct_exec "$id" $probe
	want_run "$probe" "$rc" "$line" || return 1
	probe_state "$id" "$counts" "$events" "$status"
}

# probe_state ID COUNTS EVENTS STATUS-GLOB: the nsguard side of a case.
probe_state() {
	local id=$1 info got
	info=$(ct_info "$id")
	want_eq "status counts" "$(ct_info_counts "$info")" "$2" || return 1
	got=$(ct_info_status "$info")
	# shellcheck disable=SC2053
	[[ $got == $4 ]] || { CT_WHY="status: got '$got', want '$4'"; return 1; }
	local ev
	read -ra ev <<<"$3"
	want_eq "monitor events" "$(ct_events "$id" "${#ev[@]}")" "$3"
}

DENY1="allowed=0 denied=1 audited=0"
ST_DENY="mode=deny max_depth=* errno=EPERM base_level=0 attached=true"

# --- default policy: no annotations, built-in defaults -> deny, EPERM.
ct_case default/busybox-unshare probe_case default-bb "unshare -U true" \
	"*Operation not permitted*" 1 "$DENY1" "deny:mode:EPERM:d1" "$ST_DENY"
ct_case default/unshare probe_case default-unshare "nsg-userns unshare" \
	"unshare: fail errno=EPERM" 1 "$DENY1" "deny:mode:EPERM:d1" "$ST_DENY"
ct_case default/clone probe_case default-clone "nsg-userns clone" \
	"clone: fail errno=EPERM" 1 "$DENY1" "deny:mode:EPERM:d1" "$ST_DENY"
ct_case default/clone3 probe_case default-clone3 "nsg-userns clone3" \
	"clone3: fail errno=EPERM" 1 "$DENY1" "deny:mode:EPERM:d1" "$ST_DENY"

# --- allow: all three ways succeed, counted as allowed, no events.
case_allow() {
	local id=allow-$S p
	ct_bundle "$id" --mode allow -- sleep 600 || return 1
	ct_start "$id"
	want_eq "crun run -d" "$CT_RC" 0 || return 1
	for p in unshare clone clone3; do
		ct_exec "$id" nsg-userns $p
		want_run "nsg-userns $p" 0 "$p: ok" || return 1
	done
	ct_exec "$id" unshare -U true
	want_eq "busybox unshare -U true" "$CT_RC" 0 || { CT_WHY+=" ($(ct_tail))"; return 1; }
	probe_state "$id" "allowed=4 denied=0 audited=0" "" \
		"mode=allow max_depth=32 errno=EPERM base_level=0 attached=true"
}
ct_case allow case_allow

# --- audit: allowed and reported.
ct_case audit probe_case audit "nsg-userns unshare" "unshare: ok" 0 \
	"allowed=0 denied=0 audited=1" "audit:mode:-:d1" \
	"mode=audit max_depth=32 errno=EPERM base_level=0 attached=true" --mode audit

# --- depth limits; nest N writes maps between levels, so only nsguard can
# refuse level N.
case_depth() { # MODE DEPTH: nest DEPTH works, nest DEPTH+1 fails at DEPTH+1
	local mode=$1 d=$2 id=depth-$1-$2-$S ok1 ok2 evs
	ct_bundle "$id" --mode "$mode" --depth "$d" -- sleep 600 || return 1
	ct_start "$id"
	want_eq "crun run -d" "$CT_RC" 0 || return 1
	ct_exec "$id" nsg-userns nest "$d"
	want_run "nest $d" 0 "nest: ok levels=$d" || return 1
	ct_exec "$id" nsg-userns nest $((d + 1))
	want_run "nest $((d + 1))" 1 "nest: fail level=$((d + 1)) errno=EPERM" || return 1
	# Levels 1..d are allowed in both runs; level d+1 is refused once.
	ok1=$((2 * d)) ok2=0
	[ "$mode" = audit ] && ok2=$ok1 ok1=0
	evs=$(audit_order "$mode" "$d")
	probe_state "$id" "allowed=$ok1 denied=1 audited=$ok2" "$evs" \
		"mode=$mode max_depth=$d errno=EPERM base_level=0 attached=true"
}
audit_order() { # MODE D: expected events of nest D then nest D+1
	local out='' i
	if [ "$1" = audit ]; then
		for i in $(seq "$2"); do out+="audit:mode:-:d$i "; done
		for i in $(seq "$2"); do out+="audit:mode:-:d$i "; done
	fi
	echo "${out}deny:depth:EPERM:d$(($2 + 1))"
}
ct_case depth/allow-1 case_depth allow 1
ct_case depth/allow-2 case_depth allow 2
ct_case depth/audit-1 case_depth audit 1
ct_case depth/audit-2 case_depth audit 2
ct_case depth/allow-0 probe_case depth-allow-0 "nsg-userns unshare" \
	"unshare: fail errno=EPERM" 1 "$DENY1" "deny:depth:EPERM:d1" \
	"mode=allow max_depth=0 errno=EPERM base_level=0 attached=true" --mode allow --depth 0

# --- errno choices, by annotation and by admin config.
for e in EPERM ENOSPC EACCES; do
	ct_case "errno/$e" probe_case "errno-$e" "nsg-userns unshare" \
		"unshare: fail errno=$e" 1 "$DENY1" "deny:mode:$e:d1" \
		"mode=deny max_depth=* errno=$e base_level=0 attached=true" --errno "$e"
done
ct_case errno/ENOSPC-busybox probe_case errno-bb "unshare -U true" \
	"*No space left on device*" 1 "$DENY1" "deny:mode:ENOSPC:d1" \
	"mode=deny max_depth=* errno=ENOSPC base_level=0 attached=true" --errno ENOSPC
ct_case errno/EACCES-depth probe_case errno-depth "nsg-userns nest 2" \
	"nest: fail level=2 errno=EACCES" 1 "allowed=1 denied=1 audited=0" "deny:depth:EACCES:d2" \
	"mode=allow max_depth=1 errno=EACCES base_level=0 attached=true" --mode allow --depth 1 --errno EACCES
ct_case errno/config-EACCES probe_case errno-conf "nsg-userns unshare" \
	"unshare: fail errno=EACCES" 1 "$DENY1" "deny:mode:EACCES:d1" \
	"mode=deny max_depth=* errno=EACCES base_level=0 attached=true" \
	--conf "$(ct_conf errno-eacces 'errno = EACCES')"
ct_case config/default-mode-audit probe_case conf-audit "nsg-userns unshare" "unshare: ok" 0 \
	"allowed=0 denied=0 audited=1" "audit:mode:-:d1" \
	"mode=audit max_depth=32 errno=EPERM base_level=0 attached=true" \
	--conf "$(ct_conf audit 'default-mode = audit   # comment')"

# --- root with every capability: in the host user namespace and in its own.
ct_case root/allcaps-host probe_case allcaps-host "nsg-userns clone3" \
	"clone3: fail errno=EPERM" 1 "$DENY1" "deny:mode:EPERM:d1" "$ST_DENY" --allcaps
ct_case root/allcaps-userns probe_case allcaps-userns "nsg-userns unshare" \
	"unshare: fail errno=EPERM" 1 "$DENY1" "deny:mode:EPERM:d1" \
	"mode=deny max_depth=* errno=EPERM base_level=1 attached=true" --userns --allcaps
ct_case root/allcaps-userns-busybox probe_case allcaps-userns-bb "unshare -U -r true" \
	"*Operation not permitted*" 1 "$DENY1" "deny:mode:EPERM:d1" \
	"mode=deny max_depth=* errno=EPERM base_level=1 attached=true" --userns --allcaps
# Control: the same container may nest when allowed, so the refusal above
# is nsguard's, not the kernel's.
ct_case root/userns-allow-control probe_case userns-allow "nsg-userns nest 3" "nest: ok levels=3" 0 \
	"allowed=3 denied=0 audited=0" "" \
	"mode=allow max_depth=32 errno=EPERM base_level=1 attached=true" --userns --allcaps --mode allow

# --- depth counts from the container's own level: max-depth 1 allows one
# nested level and refuses the second, in the host userns and in its own.
ct_case depth/own-level-host probe_case own-host "nsg-userns nest 2" \
	"nest: fail level=2 errno=EPERM" 1 "allowed=1 denied=1 audited=0" "deny:depth:EPERM:d2" \
	"mode=allow max_depth=1 errno=EPERM base_level=0 attached=true" --mode allow --depth 1
ct_case depth/own-level-userns probe_case own-userns "nsg-userns nest 2" \
	"nest: fail level=2 errno=EPERM" 1 "allowed=1 denied=1 audited=0" "deny:depth:EPERM:d2" \
	"mode=allow max_depth=1 errno=EPERM base_level=1 attached=true" --mode allow --depth 1 --userns
ct_case depth/own-level-userns-audit probe_case own-userns-audit "nsg-userns nest 2" \
	"nest: fail level=2 errno=EPERM" 1 "allowed=0 denied=1 audited=1" "audit:mode:-:d1 deny:depth:EPERM:d2" \
	"mode=audit max_depth=1 errno=EPERM base_level=1 attached=true" --mode audit --depth 1 --userns

# --- a non-root container user: refused by default, depth counted the same.
ct_case default/non-root-user probe_case nonroot "nsg-userns unshare" \
	"unshare: fail errno=EPERM" 1 "$DENY1" "deny:mode:EPERM:d1" "$ST_DENY" --uid 1000
ct_case depth/non-root-user probe_case nonroot-depth "nsg-userns nest 2" \
	"nest: fail level=2 errno=EPERM" 1 "allowed=1 denied=1 audited=0" "deny:depth:EPERM:d2" \
	"mode=allow max_depth=1 errno=EPERM base_level=0 attached=true" --mode allow --depth 1 --uid 1000
