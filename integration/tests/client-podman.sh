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

# pm_etc FILE LINE...: FILE under /etc with LINEs added, bind-mounted over
# it for one case (the guest's /etc is read-only); pm_etc_undo drops them.
PM_ETC=()
pm_etc() {
	local f=$1 copy
	shift
	[ -f "$f" ] || { CT_SKIP="$f is not in this userland"; return 1; }
	copy=$PM/etc.${f##*/}
	if ! { cat "$f" && printf '%s\n' "$@"; } >"$copy" || ! mount --bind "$copy" "$f"; then
		CT_WHY="cannot bind $copy over $f"
		return 1
	fi
	PM_ETC+=("$f")
}
pm_etc_undo() {
	local f
	for f in "${PM_ETC[@]}"; do umount "$f"; done
	PM_ETC=()
}

# --- podman --userns=auto (#41 item 4): podman picks a range of
# /etc/subuid's "containers" and crun creates the container's user namespace
# before the hook runs, so nsguard guards the container at base level 1 and
# never refuses that namespace; a nested one below it is refused.
case_userns_auto() {
	local rc=0 why
	# containers/storage looks the user up by name first.
	if ! pm_etc /etc/passwd "containers:x:1788:1788::/nonexistent:/usr/sbin/nologin" ||
		! pm_etc /etc/subuid containers:300000:200000 || ! pm_etc /etc/subgid containers:300000:200000; then
		pm_etc_undo
		return 0 # CT_SKIP or CT_WHY says why
	fi
	pm_start "pm-auto-$S" --userns=auto || rc=1
	if [ "$rc" = 0 ]; then
		pm exec "$PM_ID" cat /proc/self/uid_map
		CT_OUT=$PM_OUT CT_RC=$PM_RC
		want_run "the container's uid_map" 0 "*0 *3[0-9][0-9][0-9][0-9][0-9] *" || rc=1
		pm_probe "nsg-userns unshare" 1 "unshare: fail errno=EPERM" nsg-userns unshare || rc=1
		want_eq "status" "$(ct_info "$PM_ID")" \
			"mode=deny max_depth=0 errno=EPERM base_level=1 attached=true allowed=0 denied=1 audited=0" || rc=1
		why=$CT_WHY
		pm_rm || rc=1
		CT_WHY=${why:-$CT_WHY}
	fi
	pm_etc_undo
	return $rc
}
ct_case podman/userns-auto case_userns_auto

# --- rootless podman (#41 item 4): podman runs a user's hooks in the user's
# own user namespace, as that user, where bpf() cannot attach anything, so
# nsguard's hook refuses the container (fail-mode closed) and says why; and
# a user chooses their own hooks dirs, so the hook is no guard there at all.
# What guards rootless containers is the admin's guard on the user's cgroup
# (nsguard attach, max-depth 1: podman's own user namespace is level 1):
# nested user namespaces in the user's containers are refused, whatever
# hooks the user runs.
PM_USER=nsg-rootless
PM_UID=1789
# pm_user ARGS...: rootless podman as PM_USER in cgroup PM_UCG, no hooks
# dir but the test's PM_UHOOKS; PM_OUT/PM_RC.
pm_user() {
	# shellcheck disable=SC2016 # the inner shell's
	PM_OUT=$(cd / && timeout "$CT_TIMEOUT" bash -c '[ -z "$1" ] || echo $$ >"$1/cgroup.procs" || exit 125
		shift; exec "$@"' - "${PM_UCG:-}" setpriv --reuid "$PM_UID" --regid "$PM_UID" --clear-groups \
		env -i PATH="$PATH" HOME="$PM/home" XDG_RUNTIME_DIR="$PM/xdg" USER=$PM_USER TMPDIR=/tmp \
		podman --root "$PM/home/storage" --runroot "$PM/xdg/run" --storage-driver vfs \
		--cgroup-manager cgroupfs --events-backend file --network-config-dir "$PM/home/net" \
		--hooks-dir "$PM_UHOOKS" "$@" <"${PM_STDIN:-/dev/null}" 2>&1)
	PM_RC=$?
}
# pm_cg_remove DIR: kill what rootless podman left in cgroup DIR (its pause
# process), then remove DIR once the kernel has let them go.
pm_cg_remove() {
	echo 1 >"$1/cgroup.kill"
	for _ in 1 2 3 4 5 6 7 8 9 10; do rmdir "$1" 2>/dev/null && break; sleep 0.2; done
}
pm_user_setup() {
	command -v newuidmap >/dev/null ||
		{ CT_SKIP="no newuidmap in this userland (Debian's uidmap): rootless podman cannot start"; return 1; }
	pm_etc /etc/passwd "$PM_USER:x:$PM_UID:$PM_UID::$PM/home:/bin/sh" &&
		pm_etc /etc/group "$PM_USER:x:$PM_UID:" &&
		pm_etc /etc/subuid "$PM_USER:500000:65536" && pm_etc /etc/subgid "$PM_USER:500000:65536" || return 1
	if ! mkdir -p "$PM/home/net" "$PM/xdg" "$PM/uhooks-none" ||
		! chown -R "$PM_UID:$PM_UID" "$PM/home" "$PM/xdg" || ! chmod 700 "$PM/xdg"; then
		CT_WHY="cannot make $PM_USER's home"
		return 1
	fi
	PM_UHOOKS=$PM/uhooks-none
	tar -C "$CT_ROOTFS" -cf "$PM/bb.tar" . || { CT_WHY="cannot tar the image"; return 1; }
	PM_STDIN=$PM/bb.tar pm_user import - "$PM_IMAGE"
	[ "$PM_RC" = 0 ] || { CT_WHY="rootless podman import: $(echo "$PM_OUT" | tail -n 3 | tr '\n' '|')"; return 1; }
}
case_rootless_hook() {
	local rc=0
	pm_user_setup || { pm_etc_undo; [ -n "$CT_SKIP" ]; return; }
	PM_UHOOKS=$PM/hooks.d
	# From a cgroup of the user's own, as systemd delegates one (the root
	# cgroup would be refused first, for that).
	if ! mkdir "/sys/fs/cgroup/nsg-ru-$S" || ! chown -R "$PM_UID:$PM_UID" "/sys/fs/cgroup/nsg-ru-$S"; then
		pm_etc_undo
		CT_WHY="cannot make the user's cgroup"
		return 1
	fi
	# runc passes the hook's stderr on (crun 1.28 does not, and the user
	# cannot write the kernel log).
	PM_UCG=/sys/fs/cgroup/nsg-ru-$S pm_user --runtime runc run --rm --network none "$PM_IMAGE" echo CONTAINER-RAN
	CT_OUT=$PM_OUT CT_RC=$PM_RC
	[[ $CT_OUT != *CONTAINER-RAN* ]] || { CT_WHY="rootless: the container ran: $CT_OUT"; rc=1; }
	[ "$rc" = 1 ] || want_run "rootless podman with nsguard's hooks.d" 126 \
		"*createRuntime hook*nsguard: container *: permission denied: nsguard runs in a user namespace that is not the host's*'nsguard attach'*" ||
		rc=1
	pm_user rm -a -f -t 0 >/dev/null
	pm_cg_remove "/sys/fs/cgroup/nsg-ru-$S"
	pm_etc_undo
	return $rc
}
ct_case podman/rootless-hook-refuses case_rootless_hook

case_rootless_cgroup() {
	local rc=0 cg=nsg-rootless-$S id=rootless-$S why
	pm_user_setup || { pm_etc_undo; [ -n "$CT_SKIP" ]; return; }
	mkdir "/sys/fs/cgroup/$cg" || { pm_etc_undo; CT_WHY="cannot make cgroup $cg"; return 1; }
	CT_OUT=$("$NSGUARD" attach --cgroup "$cg" --id "$id" --mode allow --max-depth 1 2>&1) ||
		{ CT_WHY="nsguard attach: $CT_OUT"; rc=1; }
	if [ "$rc" = 0 ]; then
		PM_UCG=/sys/fs/cgroup/$cg pm_user run --rm --network none "$PM_IMAGE" nsg-userns unshare
		CT_OUT=$PM_OUT CT_RC=$PM_RC
		want_run "rootless podman, nsg-userns unshare in the guarded user's cgroup" 1 \
			"unshare: fail errno=EPERM" || rc=1
		want_eq "status counts" "$(ct_info "$id" | sed 's/.* allowed=[0-9]* //')" "denied=1 audited=0" || rc=1
	fi
	why=$CT_WHY
	"$NSGUARD" detach --id "$id" >/dev/null 2>&1
	pm_cg_remove "/sys/fs/cgroup/$cg"
	pm_etc_undo
	CT_WHY=$why
	return $rc
}
ct_case podman/rootless-guarded-by-cgroup case_rootless_cgroup
