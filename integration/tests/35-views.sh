#!/bin/bash
# A read-only view is enough (#40): a host-root container (no user namespace,
# the default capabilities) that can see nsguard's state through any mount,
# read-only included, is refused before it runs, whatever fail-mode says:
# bpffs grants BPF_OBJ_GET by the pin's inode, flock() takes a read-only
# descriptor, connect() needs no writable mount, setns() takes any nsfs
# descriptor, and the host's /proc leads to every process's root.  So is one
# whose runtime would leave /proc/sys or /proc/sysrq-trigger writable, or
# /sys, or nsguard's config or binary, or a new overlay.  A container in a
# user namespace that maps no host owner of that state is refused the views
# refused read-only (it could hand what it opens to a host-root container);
# with the writable-only ones it starts, and its attempts fail.  Each refused
# case's command is the attack itself: if the container starts, its output
# shows what it did.
set -u
. "$(dirname "$0")/lib-ct.sh"
ct_init

S=$CT_SUFFIX
OPEN_CONF=$(ct_conf views-open 'fail-mode = open')
# The attack, whatever the view: detach its own guard through any pin it
# finds, hold nsguard's lock, then create a user namespace.
# shellcheck disable=SC2016 # the container's shell expands it
# (One line: ct_bundle's JSON strings take no control characters.)
ATTACK='id=$(stat -c %i /sys/fs/cgroup 2>/dev/null); for p in /v/nsguard/links/$id /v/links/$id /v/fs/bpf/nsguard/links/$id; do [ -e "$p" ] && nsg-userns pin "$p" detach; done; for l in /v/lock /v/nsguard/lock; do [ -e "$l" ] && nsg-userns lock "$l" & done; nsg-userns unshare'

# view_refused NAME GLOB [BUNDLE OPTIONS]: refused at start with GLOB, the
# attack never ran, nothing left behind.
view_refused() {
	local id=$1-$S glob=$2
	shift 2
	ct_bundle "$id" --errno EACCES --conf "$OPEN_CONF" "$@" -- sh -c "$ATTACK" || return 1
	ct_run "$id"
	[ "$CT_RC" != 0 ] || { CT_WHY="$CRUN run exited 0: $(ct_tail)"; return 1; }
	[[ $CT_OUT != *"unshare: "* && $CT_OUT != *"pin: "* ]] ||
		{ CT_WHY="the container ran: $(ct_tail)"; return 1; }
	want_run "$CRUN output" "$CT_RC" "*nsguard: *$glob" || return 1
	ct_gone "$id" ""
}

bind() { # bind SOURCE DEST OPTION...: one mounts entry
	local o
	o=$(printf '"%s",' "${@:3}")
	printf '{"destination": "%s", "type": "bind", "source": "%s", "options": [%s]}' "$2" "$1" "${o%,}"
}

BPF_GLOB="container's mount at */v* is a bpf file system*read-only or not*"
RUN_GLOB="container's mount at */v shows /run/nsguard (nsguard's lock, records and agent socket)*"

# A neighbour guarded before every attempt below (it also makes nsguard's
# pins, run directory and records exist for the views to show); it must be
# guarded as before after all of them (views/neighbour-intact, last).
NEIGHBOUR=neighbour-$S
ct_bundle "$NEIGHBOUR" --errno EACCES -- sleep 600 && ct_start "$NEIGHBOUR"
[ "$CT_RC" = 0 ] || fail "ct/${CT_RERUN}views/setup" "the neighbour did not start: $(ct_tail)"

# --- bpffs, read-only: bind, a subdirectory, and the rbind of /sys.
ct_case views/bpffs-ro-bind-refused view_refused bpffs-ro "$BPF_GLOB" \
	--mount "$(bind /sys/fs/bpf /v bind ro)"
ct_case views/bpffs-ro-subdir-refused view_refused bpffs-sub "$BPF_GLOB" \
	--mount "$(bind /sys/fs/bpf/nsguard /v bind ro)"
ct_case views/sys-rbind-ro-refused view_refused sys-rbind \
	"container's mount at */v/fs/* read-*" --mount "$(bind /sys /v rbind ro)"

# --- /run/nsguard from above, itself and below, read-only.
ct_case views/run-ro-refused view_refused run-ro "container's mount at */v shows /run/nsguard (*" \
	--mount "$(bind /run /v bind ro)"
ct_case views/run-rbind-ro-refused view_refused run-rbind "container's mount at */v shows /run/nsguard (*" \
	--mount "$(bind /run /v rbind ro)"
ct_case views/run-nsguard-ro-refused view_refused run-nsg "$RUN_GLOB" \
	--mount "$(bind /run/nsguard /v bind ro)"
ct_case views/run-nsguard-rbind-ro-refused view_refused run-nsg-r "$RUN_GLOB" \
	--mount "$(bind /run/nsguard /v rbind ro)"
ct_case views/records-ro-refused view_refused records "$RUN_GLOB" \
	--mount "$(bind /run/nsguard/containers /v bind ro)"
# A file's bind needs a file to land on (the rootfs is read-only).
: >"$CT_ROOTFS/vf"
# Mount points for the user-namespace case, whose root cannot make them.
mkdir -p "$CT_ROOTFS/b" "$CT_ROOTFS/r" "$CT_ROOTFS/p"
FILE_GLOB="container's mount at */vf shows /run/nsguard (nsguard's lock, records and agent socket)*"
ct_case views/lock-file-ro-refused view_refused lockfile "$FILE_GLOB" \
	--mount "$(bind /run/nsguard/lock /vf bind ro)"
# The agent's socket (a stand-in: nobody listens, so every hook meanwhile
# does its own work, as with a dead agent).
case_socket() {
	local sock=/run/nsguard/agent.sock rc=0
	[ -e "$sock" ] && { CT_WHY="$sock exists (an agent runs?)"; return 1; }
	python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$sock" ||
		{ CT_WHY="cannot make $sock"; return 1; }
	view_refused agent-sock "$FILE_GLOB" --mount "$(bind "$sock" /vf bind ro)" || rc=1
	rm -f "$sock"
	return $rc
}
ct_case views/agent-socket-ro-refused case_socket

# --- the host's /proc: /proc/PID/root of its processes leads anywhere.
ct_case views/host-proc-ro-refused view_refused hostproc \
	"container's mount at */v is a proc file system of the host's*" --mount "$(bind /proc /v rbind ro)"
ct_case views/host-proc-ptrace-refused view_refused hostproc-ptrace \
	"container's mount at */v is a proc file system of the host's*" --cap CAP_SYS_PTRACE \
	--mount "$(bind /proc /v rbind ro)"

# --- a namespace file: setns() joins what userns_create never saw.
case_nsfs() {
	local ns=nsg-view-$S rc=0
	ip netns add "$ns" || { CT_WHY="ip netns add $ns"; return 1; }
	view_refused nsfs "container's mount at */vf is a namespace file (nsfs)*" \
		--mount "$(bind "/run/netns/$ns" /vf bind ro)" || rc=1
	ip netns del "$ns"
	return $rc
}
ct_case views/nsfs-file-refused case_nsfs

# --- what the runtime will leave writable: /proc/sys, /proc/sysrq-trigger, /sys.
ct_case views/proc-sys-writable-refused view_refused procsys \
	"the container's /proc at */proc leaves /proc/sys writable*" --ro-paths ''
ct_case views/proc-sysrq-writable-refused view_refused sysrq \
	"*leaves /proc/sysrq-trigger writable*" --ro-paths '["/proc/sys"]'
ct_case views/sys-rw-refused view_refused sysrw \
	"container's mount at */sys is a writable sysfs: a kernel interface*" --sys-rw
# Control: masked instead of read-only is as good.
case_masked() {
	local id=masked-$S
	ct_bundle "$id" --errno EACCES --ro-paths '' \
		--masked-paths '["/proc/sys", "/proc/sysrq-trigger"]' -- nsg-userns unshare || return 1
	ct_run "$id"
	# runc 1.3 (current userland) reads /proc/sys/kernel/cap_last_cap in the
	# container's init after it masked /proc/sys (runc 1.1.5 did not): no
	# container with /proc/sys masked starts under it, guarded or not.  The
	# hook had let it start (it refuses with an "nsguard:" line before init
	# runs), the verdict this case asks for.
	if [ "$CT_RC" != 0 ] && [[ $CT_OUT == *"container init: open /proc/sys/kernel/cap_last_cap: no such file"* ]] &&
		[[ $CT_OUT != *"nsguard: "* ]]; then
		# shellcheck disable=SC2034 # nsg_case (lib.sh) reads it
		CT_SKIP="$("$CRUN" --version | head -n 1) cannot start a container whose /proc/sys is masked (its init reads /proc/sys/kernel/cap_last_cap there); nsguard's hook let it start"
		return 0
	fi
	want_run "$CRUN run" 1 "unshare: fail errno=EACCES"
}
ct_case views/proc-sys-masked-guarded case_masked

# --- nsguard's config and binary, writable.
case_config_rw() { # [--userns]
	local dir=$CT_WORK/conf${1:+-u}-$S rc=0
	mkdir -p "$dir" && printf 'fail-mode = open\n' >"$dir/nsguard.conf" || return 1
	view_refused "config-rw${1:+-u}" "container's mount at */v shows nsguard's configuration $dir/nsguard.conf read-write*" \
		--conf "$dir/nsguard.conf" --mount "$(bind "$dir" /v bind rw)" "$@" || rc=1
	rm -rf "$dir"
	return $rc
}
ct_case views/config-dir-rw-refused case_config_rw
# The same config through a symbolic link: judged where it really lives.
case_config_link() {
	local dir=$CT_WORK/conf-real-$S link=$CT_WORK/conf-link-$S rc=0
	mkdir -p "$dir" && printf 'fail-mode = open\n' >"$dir/nsguard.conf" && ln -sfn "$dir" "$link" ||
		return 1
	view_refused config-link "container's mount at */v shows nsguard's configuration $dir/nsguard.conf read-write*" \
		--conf "$link/nsguard.conf" --mount "$(bind "$dir" /v bind rw)" || rc=1
	rm -rf "$dir" "$link"
	return $rc
}
ct_case views/config-behind-symlink-rw-refused case_config_link
case_binary_rw() {
	local dir=$CT_WORK/bin-$S rc=0
	mkdir -p "$dir" && cp "$NSGUARD" "$dir/nsguard" || return 1
	view_refused binary-rw "container's mount at */v shows nsguard's binary $dir/nsguard read-write*" \
		--hook-bin "$dir/nsguard" --mount "$(bind "$dir" /v bind rw)" || rc=1
	rm -rf "$dir"
	return $rc
}
ct_case views/binary-dir-rw-refused case_binary_rw

# --- review: what mountinfo does not show as a device of nsguard's state.
# A new overlay's layers are only the paths given at mount time: an upper
# directory of nsguard's configuration makes it writable.
case_overlay() {
	local name=$1 glob=$2 d=$CT_WORK/ovl-$1-$S rc=0 opts
	if ! { mkdir -p "$d" && mount -t tmpfs tmpfs "$d" && mkdir -p "$d/conf" "$d/lower" "$d/work" &&
		printf 'fail-mode = open\n' >"$d/conf/nsguard.conf"; }; then
		CT_WHY="cannot set up $d"
		return 1
	fi
	case $name in
	upper) opts="\"lowerdir=$d/lower\", \"upperdir=$d/conf\", \"workdir=$d/work\"" ;;
	lower) opts="\"lowerdir=/run/nsguard:$d/lower\"" ;;
	esac
	view_refused "ovl-$name" "$glob" --conf "$d/conf/nsguard.conf" \
		--mount "{\"destination\": \"/v\", \"type\": \"overlay\", \"source\": \"overlay\", \"options\": [$opts]}" ||
		rc=1
	umount "$d" && rm -rf "$d"
	return $rc
}
OVL_GLOB="container's mount at */v is a new overlay file system, made for the container*"
ct_case views/overlay-upper-config-refused case_overlay upper "$OVL_GLOB"
ct_case views/overlay-lower-run-refused case_overlay lower "$OVL_GLOB"
# readonlyPaths with "..": the runtimes resolve it after /proc/thread-self's
# link (to 1/task/1/../sys, which is not there: skipped), nsguard's lexical
# cleaning said /proc/sys.
ct_case views/proc-sys-dotdot-refused view_refused dotdot \
	"the container's /proc at */proc leaves /proc/sys writable*counts for nothing*" \
	--ro-paths '["/proc/thread-self/../sys", "/proc/sysrq-trigger"]'
ct_case views/proc-sys-dotdot-masked-refused view_refused dotdot-m \
	"the container's /proc at */proc leaves /proc/sys writable*" --ro-paths '' \
	--masked-paths '["/proc/thread-self/../sys", "/proc/sysrq-trigger"]'
# crun makes `ro` read-only after the hooks, and nsguard does it first when
# config.json asks; not when an entry's destination is a symbolic link in
# the rootfs: the runtime follows it onto the ro entry's mount (a later
# remount of that entry could make it writable again).  crun 1.8 and runc
# 1.1 here leave that mount writable at the hook anyway, so this case held
# before the rule too; test_mounts.c's crun-ro-symlinked-* rows pin it.
case_symlinked_destination() {
	local link=xl-$S rc=0
	ln -sfn b "$CT_ROOTFS/$link" || return 1
	view_refused symdest "container's mount at */b shows cgroup / read-write*" \
		--mount "$(bind /sys/fs/cgroup /b bind ro)" --mount "$(bind /sys/fs/cgroup "/$link" bind nosuid)" ||
		rc=1
	rm -f "$CT_ROOTFS/$link"
	return $rc
}
ct_case views/symlinked-destination-refused case_symlinked_destination
# Review: readonlyPaths ["/"] is read-only at the rootfs's top mount only
# (runc, crun): the proc mount beneath stays writable.
ct_case views/ro-paths-root-refused view_refused ropaths-root \
	"the container's /proc at */proc leaves /proc/sys writable*" --ro-paths '["/"]'
# Review: with rootfsPropagation rshared the container's copies of the host's
# mounts stay their peers, so what the runtime mounts under them (before the
# hook) lands in the host's namespace too: refused at the hook, and a hook
# that finds nsguard's own state overmounted refuses every start.
case_propagation() {
	# Outside $CT_WORK, where the case's config lives (a mount below nsguard's
	# config directory is refused for that alone).
	local d=/run/nsg-prop-$S id=prop-$S rc=0 out
	mkdir -p "$d/share" "$d/evil" || return 1
	if ! { mount -t tmpfs tmpfs "$d/share" && mount --make-shared "$d/share"; }; then
		CT_WHY="cannot share $d/share"
		return 1
	fi
	mkdir -p "$d/share/x"
	view_refused "$id" "container's mount at */v is a peer of nsguard's mount at $d/share *" \
		--linux-extra '"rootfsPropagation": "rshared",' \
		--mount "$(bind "$d/share" /v rbind rw)" --mount "$(bind "$d/evil" /v/x bind rw)" || rc=1
	# What the runtime did before the hook: its bind reached the host's $d/share/x.
	out=$(grep -c " $d/share/x " /proc/self/mountinfo)
	[ "$out" = 0 ] || umount -l "$d/share/x"
	umount -l "$d/share" 2>/dev/null
	rm -rf "$d"
	return $rc
}
ct_case views/rshared-propagation-refused case_propagation
# (Review: a tenant's hook may never run, so any start detaches what is
# over nsguard's run directory, stacked ones too, and goes on guarded.)
case_state_overmounted() {
	local id=overmount-$S rc=0 left
	if ! { mount -t tmpfs tmpfs /run/nsguard/containers && mount -t tmpfs tmpfs /run/nsguard/containers; }; then
		CT_WHY="cannot mount over the records"
		return 1
	fi
	ct_bundle "$id" --errno EACCES --conf "$OPEN_CONF" -- nsg-userns unshare || rc=1
	[ $rc != 0 ] || ct_run "$id"
	left=$(grep -c ' /run/nsguard/containers ' /proc/self/mountinfo)
	while grep -q ' /run/nsguard/containers ' /proc/self/mountinfo; do umount -l /run/nsguard/containers || break; done
	[ $rc = 0 ] || return 1
	want_eq "mounts left over the records" "$left" 0 || return 1
	want_run "$CRUN output" 1 "unshare: fail errno=EACCES" || return 1
	# (runc shows a hook's stderr only when the hook fails.)
	[[ $CRUN == runc ]] ||
		want_run "$CRUN output" 1 "*nsguard: detached the mount at /run/nsguard/containers from nsguard's state*"
}
ct_case views/state-overmounted-detached case_state_overmounted
# The bpf() guard refuses a hook run from a guarded cgroup (a runtime inside
# a guarded container): never opened by fail-mode open, or the container
# would start unguarded.
case_hook_in_guarded() {
	local id=inguard-$S cg=$CT_CGFS/nsg-inguard-$S out rc=0
	mkdir -p "$cg" || return 1
	out=$("$NSGUARD" attach --cgroup "$cg" --mode deny --id "inguard-cg-$S" 2>&1) ||
		{ CT_WHY="attach: $out"; return 1; }
	ct_bundle "$id" --errno EACCES --conf "$OPEN_CONF" -- nsg-userns unshare || rc=1
	CT_IDS+=("$id")
	# shellcheck disable=SC2016 # the child's $$
	CT_OUT=$(sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' _ "$cg" \
		timeout "$CT_TIMEOUT" "$CRUN" --root "$CT_RUNROOT" run --bundle "$CT_WORK/b/$id" "$id" </dev/null 2>&1)
	CT_RC=$?
	if [ $rc = 0 ]; then
		[[ $CT_OUT != *"unshare: "* && $CT_OUT != *"runs unguarded"* ]] ||
			{ CT_WHY="it started unguarded: $(ct_tail)"; rc=1; }
	fi
	[ $rc != 0 ] || want_run "$CRUN output" "$CT_RC" "*nsguard: *cannot open pinned*Operation not permitted*" || rc=1
	[ $rc != 0 ] || ct_gone "$id" "" || rc=1
	"$NSGUARD" detach --id "inguard-cg-$S" >/dev/null 2>&1
	rmdir "$cg" 2>/dev/null
	return $rc
}
ct_case views/hook-in-guarded-cgroup-never-opened case_hook_in_guarded

# --- a user namespace that maps no host owner of nsguard's state (0 ->
# 100000).  The views refused read-only are refused here too: it could not
# use them itself, but a descriptor it opens through them (a directory of
# /run, bpffs, the host's /proc) it can hand over a shared socket to a
# host-root container, whose root passes every DAC check beneath.
USERNS_GLOB="*and it runs as a user namespace's root (it could hand what it opens there*"
# A read-only remount in a user namespace must keep the flags the source's
# mount locks (runc 1.1 asks for exactly those it is given: EPERM otherwise).
LOCKED=(nosuid nodev noexec)
ct_case views/userns-bpffs-ro-refused view_refused userns-bpf \
	"container's mount at */b is a bpf file system*$USERNS_GLOB" \
	--userns --mount "$(bind /sys/fs/bpf /b bind ro)"
ct_case views/userns-run-ro-refused view_refused userns-run \
	"container's mount at */r shows /run/nsguard (*$USERNS_GLOB" --userns --mount "$(bind /run /r rbind ro "${LOCKED[@]}")"
ct_case views/userns-host-proc-refused view_refused userns-proc \
	"container's mount at */p is a proc file system of the host's*$USERNS_GLOB" --userns \
	--mount "$(bind /proc /p rbind ro)"
# What only the host's root could use, writable: refused as well (review:
# a descriptor keeps the mount's writability, and a host-root container's
# root passes the modes of root's files).  Read-only, it starts guarded, and
# each attempt fails with EACCES.
ct_case views/userns-config-rw-refused case_config_rw --userns
ct_case views/userns-cgroup-rw-refused view_refused userns-cg \
	"container's mount at */b shows cgroup / read-write*$USERNS_GLOB" --userns \
	--mount "$(bind /sys/fs/cgroup /b bind rw)"
ct_case views/userns-proc-sys-writable-refused view_refused userns-procsys \
	"the container's /proc at */proc leaves /proc/sys writable*a descriptor of it, handed to*" \
	--userns --ro-paths ''
case_userns_views() {
	local id=userns-views-$S dir=$CT_WORK/conf-userns-$S
	mkdir -p "$dir" && printf 'fail-mode = open\n' >"$dir/nsguard.conf" || return 1
	# shellcheck disable=SC2016 # the container's shell expands it
	ct_bundle "$id" --errno EACCES --userns --conf "$dir/nsguard.conf" \
		--mount "$(bind /sys/fs/cgroup /b bind ro "${LOCKED[@]}")" --mount "$(bind "$dir" /r bind ro "${LOCKED[@]}")" \
		-- sh -c 'echo $$ 2>/dev/null >/b/cgroup.procs && echo MOVED-OUT || echo move-refused; echo "default-mode = allow" 2>/dev/null >/r/nsguard.conf && echo CONFIG-WRITTEN || echo config-refused; nsg-userns unshare' || return 1
	ct_run "$id"
	rm -rf "$dir"
	want_eq "$CRUN run" "$CT_RC" 1 || { CT_WHY+=" ($(ct_tail))"; return 1; }
	want_eq "what it could do ($(ct_tail))" "$(echo "$CT_OUT" | grep -E '^(unshare): |-refused$|MOVED|WRITTEN' | tr '\n' '|')" \
		"move-refused|config-refused|unshare: fail errno=EACCES|"
}
ct_case views/userns-readonly-views-guarded case_userns_views

# Review (wt-j): a bind of the container's own proc's sys directory (the
# runtime mounted proc at /proc just before; the source is that mount by the
# runtime's path to the rootfs): a proc mount whose root is /sys is the
# sysctl tree itself, and readonlyPaths naming /p/sys (not there: the
# runtimes skip it) satisfy the /proc/sys check.  kernel.modprobe runs as
# the host's root.
# modprobe_refused ID GLOB BUNDLE-OPTIONS... -- CMD: the container's CMD
# tries to set the host's kernel.modprobe (restored after); refused with
# GLOB, the host's value unchanged, nothing left behind.
modprobe_refused() {
	local id=$1 glob=$2 before after
	shift 2
	before=$(cat /proc/sys/kernel/modprobe)
	ct_bundle "$id" --errno EACCES "$@" || return 1
	ct_run "$id"
	after=$(cat /proc/sys/kernel/modprobe)
	echo "$before" >/proc/sys/kernel/modprobe
	[ "$after" = "$before" ] || { CT_WHY="the container set the host's kernel.modprobe to $after: $(ct_tail)"; return 1; }
	want_run "$CRUN output" "$CT_RC" "$glob" || return 1
	ct_gone "$id" ""
}
case_proc_subtree() {
	modprobe_refused "procsub-$S" "*nsguard: *container's mount at */p is /sys of a proc file system, not a whole one, read-write*" \
		--ro-paths '["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger", "/p/sys", "/p/sysrq-trigger"]' \
		--mount "$(bind "$CT_ROOTFS/proc/sys" /p rbind rw)" \
		-- sh -c 'echo /tmp/nsg-pwned >/p/kernel/modprobe && echo MODPROBE-WRITTEN; nsg-userns unshare'
}
ct_case views/proc-subtree-bind-refused case_proc_subtree
# Review (wt-j): a read-only mount does not hold in a mount namespace its
# user namespace owns: root there remounts it rw (nothing locks a read-only
# flag set after the namespace was made, by the runtime or by make_ro), and
# an O_PATH descriptor of it, handed to a host-root container, writes
# nsguard's configuration.  The host's root through /proc/PID/root stands in
# for the host-root container here (the same mount, the same credentials).
case_userns_remount() {
	local id=userns-remount-$S dir=$CT_WORK/conf-remount-$S pid got
	mkdir -p "$dir" && printf '# fail-mode closed\n' >"$dir/nsguard.conf" || return 1
	ct_bundle "$id" --errno EACCES --userns --cap CAP_SYS_ADMIN --conf "$dir/nsguard.conf" \
		--mount "$(bind "$dir" /r bind ro "${LOCKED[@]}")" \
		-- sh -c 'busybox mount -o remount,bind,rw,nosuid,nodev,noexec /r && echo REMOUNTED-RW; sleep 600' || return 1
	ct_start "$id"
	if [ "$CT_RC" = 0 ]; then
		for _ in $(seq 1 30); do
			grep -q REMOUNTED "$CT_WORK/b/$id/out" 2>/dev/null && break
			sleep 1
		done
		pid=$("$CRUN" --root "$CT_RUNROOT" state "$id" | $JQ -r .pid)
		echo 'default-mode = allow' >"/proc/$pid/root/r/nsguard.conf" 2>/dev/null
	fi
	got=$(cat "$dir/nsguard.conf")
	rm -rf "$dir"
	[ "$got" = '# fail-mode closed' ] || { CT_WHY="nsguard.conf rewritten through the container's ro view: $got"; return 1; }
	# (crun keeps a hook's last 512 bytes of stderr: the line's end.)
	want_run "$CRUN output" "$CT_RC" "*/r shows nsguard's configuration*may hold CAP_SYS_ADMIN*" ||
		return 1
	ct_gone "$id" ""
}
ct_case views/userns-ro-remounted-rw case_userns_remount

# Review (wt-j): proc_sys_check takes any judged read-only mount at
# <proc>/sys as "read-only now", not one on that proc mount: a second proc
# mount stacked at the same point hides that bind, and its own sys is
# writable (runc makes a bind's ro at once; crun defers it, so runc only).
case_proc_stacked() {
	local d=$CT_WORK/empty-$S rc=0
	mkdir -p "$d" || return 1
	modprobe_refused "procstk-$S" "*nsguard: *the container's /proc at */p leaves /p/sys writable*" \
		--ro-paths '["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger", "/p/sysrq-trigger"]' \
		--mount '{"destination": "/p", "type": "proc", "source": "proc"}' \
		--mount "$(bind "$d" /p/sys bind ro)" \
		--mount '{"destination": "/p", "type": "proc", "source": "proc"}' \
		-- sh -c 'echo /tmp/nsg-pwned >/p/sys/kernel/modprobe && echo MODPROBE-WRITTEN; nsg-userns unshare' || rc=1
	rmdir "$d"
	return $rc
}
ct_case views/proc-stacked-over-ro-refused case_proc_stacked
# Review (wt-j): through the hooks (crun, podman, CRI-O hooks.d: no wrapper
# to refuse rootfsPropagation first) an rshared container's mounts land on
# the host before the hook refuses it, and one over /run/nsguard/containers
# made state_not_covered refuse every later start on the node: one tenant's
# refused config stopped all others.  Its hook detaches that peer of the
# container's mount, and the neighbour starts guarded.  (/run made shared
# here as systemd makes every mount on a node.)
case_propagation_dos() {
	local id=propdos-$S nb=propdos-nb-$S rc=0 shared=0 landed
	grep -q ' /run .*shared:' /proc/self/mountinfo && shared=1
	[ $shared = 1 ] || mount --make-shared /run || { CT_WHY="cannot share /run"; return 1; }
	ct_bundle "$id" --errno EACCES --linux-extra '"rootfsPropagation": "rshared",' \
		--mount "$(bind /run /v rbind rw)" \
		--mount '{"destination": "/v/nsguard/containers", "type": "tmpfs", "source": "tmpfs", "options": ["size=64k"]}' \
		-- true || rc=1
	[ $rc = 0 ] && ct_run "$id"
	local attacker=$CT_OUT attacker_rc=$CT_RC
	landed=$(grep -c ' /run/nsguard/containers ' /proc/self/mountinfo)
	ct_bundle "$nb" --errno EACCES -- nsg-userns unshare || rc=1
	[ $rc = 0 ] && ct_run "$nb"
	while grep -q ' /run/nsguard/containers ' /proc/self/mountinfo; do umount -l /run/nsguard/containers || break; done
	while grep -q " $CT_ROOTFS/v " /proc/self/mountinfo; do umount -l "$CT_ROOTFS/v" || break; done
	[ $shared = 1 ] || mount --make-private /run
	[ $rc = 0 ] || return 1
	[ "$landed" = 0 ] || { CT_WHY="the refused container's tmpfs stayed over the host's /run/nsguard/containers"; rc=1; }
	if [ "$attacker_rc" = 0 ] ||
		[[ $attacker != *"nsguard: detached the mount at /run/nsguard/containers from nsguard's state"* ]]; then
		CT_WHY+=" the attacker: exit $attacker_rc, ${attacker//$'\n'/|};"
		rc=1
	fi
	want_run "the neighbour" 1 "unshare: fail errno=EACCES" || rc=1
	return $rc
}
ct_case views/rshared-overmount-stops-node case_propagation_dos
# Review (wt-j): no row judges device nodes: a new devtmpfs mount (the
# host's one instance) is SAFE, and the device cgroup the runtime installs
# comes from config.json (linux.resources.devices, linux.devices): a
# host-root container reaches every host device node (on a node: the disk
# that holds nsguard's config and binary, written raw).
case_devtmpfs() {
	local id=devtmpfs-$S
	ct_bundle "$id" --errno EACCES \
		--linux-extra '"resources": {"devices": [{"allow": true, "access": "rwm"}]},' \
		--mount '{"destination": "/p", "type": "devtmpfs", "source": "devtmpfs"}' \
		-- sh -c 'ls /p | wc -l; echo "nsguard-review: written from a container" >/p/kmsg && echo KMSG-WRITTEN; nsg-userns unshare' || return 1
	ct_run "$id"
	[[ $CT_OUT != *KMSG-WRITTEN* ]] || { CT_WHY="it ran: $(ct_tail)"; return 1; }
	want_run "$CRUN output" "$CT_RC" "*nsguard: *config.json linux.resources.devices\[0\] lets it read or write a block device*" ||
		return 1
	ct_gone "$id" ""
}
ct_case views/devtmpfs-refused case_devtmpfs
# Review (wt-n): other shapes of views/rshared-overmount-stops-node, each
# leaving the tenant's tmpfs over the host's /run/nsguard/containers and every
# later start refused: detach_propagated runs only when the hook reaches
# mounts_check, and in one pass over ours.  propdos_variant NAME OPTION...:
# the attacker's bundle gets OPTION... on top of the rshared bind and tmpfs.
#   stacked: a second tmpfs at the same destination (the lower copy in ours
#     is not the top one when it is tried: ESTALE, it stays);
#   sysadmin: CAP_SYS_ADMIN (scope_host_caps refuses before scope_resolve);
#   failing-mount: a later mounts entry the runtime cannot mount (no hook runs).
propdos_variant() {
	local id=propdos-$1-$S nb=propdos-$1-nb-$S rc=0 shared=0 landed
	shift
	grep -q ' /run .*shared:' /proc/self/mountinfo && shared=1
	[ $shared = 1 ] || mount --make-shared /run || { CT_WHY="cannot share /run"; return 1; }
	ct_bundle "$id" --errno EACCES --linux-extra '"rootfsPropagation": "rshared",' \
		--mount "$(bind /run /v rbind rw)" \
		--mount '{"destination": "/v/nsguard/containers", "type": "tmpfs", "source": "tmpfs", "options": ["size=64k"]}' \
		"$@" -- true || rc=1
	[ $rc = 0 ] && ct_run "$id"
	# Its own hook may never get to it: the next start detaches it.
	ct_bundle "$nb" --errno EACCES -- nsg-userns unshare || rc=1
	[ $rc = 0 ] && ct_run "$nb"
	local nb_out=$CT_OUT nb_rc=$CT_RC
	landed=$(grep -c ' /run/nsguard/containers ' /proc/self/mountinfo)
	while grep -q ' /run/nsguard/containers ' /proc/self/mountinfo; do umount -l /run/nsguard/containers || break; done
	while grep -q " $CT_ROOTFS/v " /proc/self/mountinfo; do umount -l "$CT_ROOTFS/v" || break; done
	[ $shared = 1 ] || mount --make-private /run
	[ $rc = 0 ] || return 1
	[ "$landed" = 0 ] || { CT_WHY="$landed tenant mount(s) stayed over the host's /run/nsguard/containers after the neighbour's start;"; rc=1; }
	[[ $nb_out == *"unshare: fail errno=EACCES"* ]] ||
		{ CT_WHY+=" the neighbour: exit $nb_rc, ${nb_out//$'\n'/|}"; rc=1; }
	return $rc
}
ct_case views/rshared-overmount-stacked propdos_variant stacked \
	--mount '{"destination": "/v/nsguard/containers", "type": "tmpfs", "source": "tmpfs", "options": ["size=64k"]}'
ct_case views/rshared-overmount-sysadmin propdos_variant sysadmin --cap CAP_SYS_ADMIN
ct_case views/rshared-overmount-failing-mount propdos_variant failmnt \
	--mount '{"destination": "/w", "type": "bind", "source": "/nonexistent-nsguard-review", "options": ["bind"]}'

# Review (wt-n): device rules as the runtimes read them, not as written:
# runc's and crun's cgroup v2 filters take any negative major as "every
# major" (hasMajor := Major >= 0; has_major = major >= 0), and crun reads
# only the type's first character (type[0]: "block" is b, anything but a/b
# is c).  device_rule_open counts only -1 and the exact strings.  (The
# guest has no disk: a block node the container makes, opened past the
# device cgroup, fails with something other than EPERM.)
devices_variant() {
	local id=devrule-$1-$S rule=$2
	# shellcheck disable=SC2016 # the container's shell expands it
	ct_bundle "$id" --errno EACCES \
		--linux-extra '"resources": {"devices": ['"$rule"']},' \
		--mount '{"destination": "/p", "type": "devtmpfs", "source": "devtmpfs"}' \
		-- sh -c 'echo "nsguard-review: written from a container" >/p/kmsg && echo KMSG-WRITTEN; busybox mknod /dev/nsg-blk b 7 0 && { busybox head -c 1 /dev/nsg-blk >/dev/null 2>/tmp/e; grep -q "not permitted" /tmp/e || echo "BLOCK-READ (past the device cgroup: $(cat /tmp/e))"; }; nsg-userns unshare' || return 1
	ct_run "$id"
	[[ $CT_OUT != *KMSG-WRITTEN* && $CT_OUT != *BLOCK-READ* ]] || { CT_WHY="it ran: $(ct_tail)"; return 1; }
	# runc refuses a type it does not know itself, before any hook.
	if [[ $CT_RC != 0 && $CT_OUT == *"invalid cgroup device type"* && $CT_OUT != *"nsguard: "* ]]; then
		CT_SKIP="$("$CRUN" --version | head -n 1) refuses this device type itself, before nsguard's hook"
		ct_gone "$id" ""
		return
	fi
	want_run "$CRUN output" "$CT_RC" "*nsguard: *config.json linux.resources.devices\[0\] lets it read or write*" ||
		return 1
	ct_gone "$id" ""
}
ct_case views/devices-negative-major devices_variant negmajor '{"allow": true, "type": "c", "major": -2, "access": "rw"}'
ct_case views/devices-type-word devices_variant typeword '{"allow": true, "type": "block", "access": "rw"}'
ct_case views/devices-type-char-word devices_variant charword '{"allow": true, "type": "char", "access": "rw"}'
# The control: the same probes under crun's own rules (a deny-all in front)
# fail at the device cgroup, so the cases above show the rules' doing.
case_devices_control() {
	local id=devrule-control-$S
	ct_bundle "$id" --errno EACCES \
		--linux-extra '"resources": {"devices": [{"allow": false, "access": "rwm"}]},' \
		--mount '{"destination": "/p", "type": "devtmpfs", "source": "devtmpfs"}' \
		-- sh -c 'echo x >/p/kmsg && echo KMSG-WRITTEN; busybox mknod /dev/nsg-blk b 7 0 && { busybox head -c 1 /dev/nsg-blk >/dev/null 2>/tmp/e; grep -q "not permitted" /tmp/e && echo BLOCK-DENIED; }; nsg-userns unshare' || return 1
	ct_run "$id"
	[[ $CT_OUT != *KMSG-WRITTEN* && $CT_OUT == *BLOCK-DENIED* ]] || { CT_WHY="control: $(ct_tail)"; return 1; }
	want_run "the control" 1 "unshare: fail errno=EACCES"
}
ct_case views/devices-control case_devices_control

# --- the neighbour started first is still guarded after every attempt above.
case_neighbour() {
	local id=$NEIGHBOUR cgid
	CT_IDS+=("$id") # deleted with this case
	cgid=$(ct_cgid "$(ct_cgdir "$id")")
	want_eq "neighbour's link" "$(ls "$CT_PINS/links/$cgid" 2>&1)" "$CT_PINS/links/$cgid" || return 1
	ct_exec "$id" nsg-userns unshare
	want_run "the neighbour's unshare" 1 "unshare: fail errno=EACCES" || return 1
	want_eq "neighbour's counts" "$(ct_counts "$id")" "allowed=0 denied=1 audited=0"
}
ct_case views/neighbour-intact case_neighbour
