#!/bin/bash
# Debian's podman (conmon + crun) with nsguard registered the way users do
# it: hooks.d files (examples/hooks.d) and annotations on `podman run`.
# Storage on tmpfs, vfs driver, no network, cgroupfs manager, file events;
# the image is the busybox rootfs of lib-ct.sh, made with `podman import`.
# Runs in the QEMU guest (make check-clients).
set -u
. "$(dirname "$0")/lib-ct.sh"
ct_init

S=$CT_SUFFIX
PM=$CT_WORK/podman             # storage, hooks dirs, outputs
PM_RUNROOT=/run/nsg-podman
PM_IMAGE=localhost/nsg-bb      # short names would go to the registries
PM_OUT=                        # output of the last pm
PM_RC=0
# podman with the test's storage, on tmpfs, and nothing of the host's.
PM_PODMAN=(podman --root "$PM/root" --runroot "$PM_RUNROOT" --network-config-dir "$PM/net"
	--storage-driver vfs --cgroup-manager cgroupfs --events-backend file)

# pm ARGS...: podman with the test's hooks; PM_OUT/PM_RC.
# PM_HOOKS (words) replaces the hooks dirs, PM_RUNTIME the OCI runtime.
pm() {
	local hooks=() d
	for d in ${PM_HOOKS:-$PM/hooks.d}; do hooks+=(--hooks-dir "$d"); done
	PM_OUT=$(TMPDIR=/tmp timeout "$CT_TIMEOUT" "${PM_PODMAN[@]}" --runtime "${PM_RUNTIME:-crun}" \
		"${hooks[@]}" "$@" </dev/null 2>&1)
	PM_RC=$?
	ct_monitor_ensure
	return 0
}

# pm_hooks DIR [nsguard args...]: the hooks.d files of examples/, @BINDIR@
# made this build's, extra arguments appended to the createRuntime hook's.
pm_hooks() {
	local dir=$1 f extra='' a q
	shift
	for a in "$@"; do
		ct_json_str "$a" q
		extra+=", $q"
	done
	mkdir -p "$dir"
	for f in "$NSG_REPO"/examples/hooks.d/*.json.in; do
		sed -e "s|@BINDIR@|${NSGUARD%/*}|" \
			-e "s|\"hook\", \"createRuntime\"\\]|\"hook\", \"createRuntime\"$extra]|" \
			"$f" >"$dir/$(basename "$f" .in)" || return 1
	done
}

pm_init() {
	local p
	for p in podman conmon; do
		command -v "$p" >/dev/null || { fail "ct/podman/setup" "$p not found (make deps)"; exit 1; }
	done
	echo "# $(podman --version), $(conmon --version | head -n 1), $(crun --version | head -n 1)"
	mkdir -p "$PM/root" "$PM/net" "$PM_RUNROOT"
	pm_hooks "$PM/hooks.d" || { fail "ct/podman/setup" "cannot write $PM/hooks.d"; exit 1; }
	PM_OUT=$(tar -C "$CT_ROOTFS" -c . | TMPDIR=/tmp "${PM_PODMAN[@]}" import - "$PM_IMAGE" 2>&1) ||
		{ fail "ct/podman/setup" "podman import: $PM_OUT"; exit 1; }
	trap pm_cleanup EXIT
}

pm_cleanup() {
	pm rm -a -f -t 0 >/dev/null
	ct_cleanup
}

# pm_start NAME [podman run options]: a detached `sleep 600`; PM_ID is the
# id podman assigned.
pm_start() {
	local name=$1
	shift
	pm run -d --network none --name "$name" "$@" "$PM_IMAGE" sleep 600
	PM_ID=${PM_OUT##*$'\n'}
	[ "$PM_RC" = 0 ] && [[ $PM_ID =~ ^[0-9a-f]{64}$ ]] && return 0
	CT_WHY="podman run -d $name: exit $PM_RC: $(echo "$PM_OUT" | tail -n 3 | tr '\n' '|')"
	return 1
}

# pm_probe WHAT RC LINE-GLOB PROBE...: podman exec PROBE in PM_ID.
pm_probe() {
	local what=$1 rc=$2 glob=$3
	shift 3
	pm exec "$PM_ID" "$@"
	CT_OUT=$PM_OUT CT_RC=$PM_RC
	want_run "$what" "$rc" "$glob"
}

# pm_rm: podman rm -f; poststop must leave no record and no pin.
pm_rm() {
	local cgid
	# shellcheck disable=SC2016 # $id is jq's
	cgid=$(ct_status_json | "$JQ" -r --arg id "$PM_ID" '.containers[]? | select(.id == $id) | .cgroup_id')
	[ -n "$cgid" ] || { CT_WHY="nsguard status has no container $PM_ID"; return 1; }
	pm rm -f -t 0 "$PM_ID"
	want_eq "podman rm -f" "$PM_RC" 0 || { CT_WHY+=" ($PM_OUT)"; return 1; }
	ct_gone "$PM_ID" "$cgid"
}

pm_init

# --- no annotation: the built-in default refuses, with podman's id in the
# record, the counters and the event.
case_default() {
	pm_start "pm-deny-$S" || return 1
	pm_probe "nsg-userns unshare" 1 "unshare: fail errno=EPERM" nsg-userns unshare || return 1
	pm_probe "busybox unshare -U" 1 "*Operation not permitted*" unshare -U true || return 1
	want_eq "status" "$(ct_info "$PM_ID")" \
		"mode=deny max_depth=0 errno=EPERM base_level=0 attached=true allowed=0 denied=2 audited=0" || return 1
	want_eq "monitor events" "$(ct_events "$PM_ID" 2)" "deny:mode:EPERM:d1 deny:mode:EPERM:d1" || return 1
	pm_rm
}
ct_case podman/default-deny case_default

case_allow() {
	pm_start "pm-allow-$S" --annotation nsguard.io/userns=allow || return 1
	pm_probe "nsg-userns nest 2" 0 "nest: ok levels=2" nsg-userns nest 2 || return 1
	want_eq "status" "$(ct_info "$PM_ID")" \
		"mode=allow max_depth=32 errno=EPERM base_level=0 attached=true allowed=2 denied=0 audited=0" || return 1
	pm_rm
}
ct_case podman/annotation-allow case_allow

case_audit() {
	pm_start "pm-audit-$S" --annotation nsguard.io/userns=audit || return 1
	pm_probe "nsg-userns unshare" 0 "unshare: ok" nsg-userns unshare || return 1
	want_eq "monitor events" "$(ct_events "$PM_ID" 1)" "audit:mode:-:d1" || return 1
	want_eq "status counts" "$(ct_counts "$PM_ID")" "allowed=0 denied=0 audited=1" || return 1
	pm_rm
}
ct_case podman/annotation-audit case_audit

# --- the hooks.d files set a timeout, and podman hands it to the runtime in
# the container's config.json (createRuntime; podman runs poststop hooks
# itself): a stuck hook cannot hang the start forever.
case_hook_timeout() {
	local cfg got rc=0 why
	pm_start "pm-timeout-$S" || return 1
	cfg=$(find "$PM/root" "$PM_RUNROOT" -path "*/$PM_ID/userdata/config.json" 2>/dev/null | head -n 1)
	if [ -z "$cfg" ]; then
		CT_WHY="no config.json for $PM_ID under $PM/root or $PM_RUNROOT"
		rc=1
	else
		got=$("$JQ" -r '[(.hooks.createRuntime // [])[] | select(.path | endswith("/nsguard"))
			| .timeout | tostring] | join(" ")' "$cfg")
		want_eq "createRuntime hook's timeout in $cfg" "$got" 30 || rc=1
	fi
	why=$CT_WHY
	pm_rm || rc=1
	CT_WHY=${why:-$CT_WHY}
	return $rc
}
ct_case podman/hooks-d-timeout case_hook_timeout

# --- nsguard runtime as podman's runtime while hooks.d is in force too
# (a node moving from one registration to the other): the wrapper finds
# hooks.d's createRuntime hook in config.json and does not add a second.
# podman runs hooks.d's poststop itself, so the wrapper adds one for crun.
case_wrapper_and_hooks_d() {
	local wrap=$PM/wrap-crun cfg got
	printf '#!/bin/sh\nexec %q runtime --runtime %q "$@"\n' "$NSGUARD" "$(command -v crun)" >"$wrap"
	chmod 755 "$wrap"
	PM_RUNTIME=$wrap pm_start "pm-wrap-$S" || return 1
	cfg=$(find "$PM/root" "$PM_RUNROOT" -path "*/$PM_ID/userdata/config.json" 2>/dev/null | head -n 1)
	got=$("$JQ" -c '[(.hooks.createRuntime // [])[] | select(.path | endswith("/nsguard")) | .args[2]]
		+ [(.hooks.poststop // [])[] | select(.path | endswith("/nsguard")) | .args[2]]' "$cfg" 2>&1)
	want_eq "nsguard's hooks in $cfg" "$got" '["createRuntime","poststop"]' || return 1
	pm_probe "nsg-userns unshare" 1 "unshare: fail errno=EPERM" nsg-userns unshare || return 1
	pm_rm
}
ct_case podman/wrapper-and-hooks-d case_wrapper_and_hooks_d

# Records and record index entries (the index directory itself stays).
pm_records_left() { find "$CT_RECORDS" -mindepth 1 ! -path "$CT_RECORDS/by-cgroup-id" -printf '%P\n' 2>/dev/null; }

# --- `podman run --rm` to completion: poststop runs, nothing is left.
case_run_rm() {
	pm run --rm --network none --annotation nsguard.io/userns=allow \
		--annotation nsguard.io/userns.max-depth=1 "$PM_IMAGE" nsg-userns nest 2
	CT_OUT=$PM_OUT CT_RC=$PM_RC
	want_run "podman run --rm nest 2" 1 "nest: fail level=2 errno=EPERM" || return 1
	want_eq "records left" "$(pm_records_left)" ""
}
ct_case podman/run-rm-leaves-nothing case_run_rm

# --- an annotation the admin config forbids: the container does not start.
# The admin's file comes from a second hooks dir whose createRuntime file
# overrides the first one's (the later --hooks-dir wins), as
# /etc/containers/oci/hooks.d overrides /usr/share/containers/oci/hooks.d.
pm_hooks "$PM/hooks-admin" --config "$(ct_conf pm-admin 'allowed-modes = deny, audit')"
# pm_refused RUNTIME MESSAGE-GLOB [KMSG-GLOB]: podman fails with a line
# like MESSAGE-GLOB; with KMSG-GLOB, the kernel log got nsguard's line too.
pm_refused() {
	local name=pm-refused-$1-$S cidf=$PM/pm-refused-$1.cid id out rc
	rm -f "$cidf"
	# No --rm: podman 5 removes the --cidfile with the container.
	PM_RUNTIME=$1 PM_HOOKS="$PM/hooks.d $PM/hooks-admin" \
		pm run --network none --name "$name" --cidfile "$cidf" \
		--annotation nsguard.io/userns=allow "$PM_IMAGE" echo CONTAINER-RAN
	out=$PM_OUT rc=$PM_RC
	id=$(cat "$cidf" 2>/dev/null)
	pm rm -f -t 0 "$name"
	[ "$rc" != 0 ] || { CT_WHY="podman run exited 0: $out"; return 1; }
	[[ $out != *CONTAINER-RAN* ]] || { CT_WHY="the container ran: $out"; return 1; }
	CT_OUT=$out CT_RC=$rc
	want_run "podman's error" "$rc" "$2" || return 1
	want_eq "records left" "$(pm_records_left)" "" || return 1
	[ $# -gt 2 ] || return 0
	[ -n "$id" ] || { CT_WHY="podman wrote no --cidfile"; return 1; }
	CT_OUT=$(dmesg | grep -F "container $id:")
	CT_RC=0
	want_run "kernel log" 0 "$3"
}
# runc passes the hook's stderr on, and podman shows it.
ct_case podman/admin-forbids-runc pm_refused runc \
	"Error: *nsguard: container *: annotation nsguard.io/userns=allow *"
# crun 1.8.1 sends hook output to /dev/null and reports the exit code only
# (containers/crun#353; podman cannot set run.oci.hooks.stderr from hooks.d),
# so nsguard's line goes to the kernel log instead.
ct_case podman/admin-forbids-crun pm_refused crun \
	"Error: *crun: error executing hook \`$NSGUARD\` (exit code: 1)*" \
	"*nsguard\[*\]: container *: annotation nsguard.io/userns=allow *"
