# Helpers for the container tests (integration/tests/[2-5]0-*.sh, lsm-off.sh):
# busybox bundles run by crun (or runc, CRUN=runc) with nsguard as their
# createRuntime (or prestart, CT_STAGE=prestart) and poststop hook, plus
# queries of `nsguard status --json` and a `monitor --json` log.  The one
# writer of bundles (ct_bundle) and OCI states (ct_state) for the suites,
# integration/demo and integration/bench/run.  Sources lib.sh; runs in the
# QEMU guest only.
# shellcheck shell=bash

# shellcheck source=integration/tests/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

NSG_USERNS=${NSG_USERNS:-$NSG_REPO/build/nsg-userns}
CRUN=${CRUN:-crun}                       # the OCI runtime: crun or runc
CT_STAGE=${CT_STAGE:-createRuntime}      # the stage nsguard attaches in
# Set by integration/tests/client-runc.sh when it re-runs the container scripts
# under another runtime or stage: case names get this prefix, and cases
# that never start a container (ct_hook_case) are not repeated.
CT_RERUN=${CT_RERUN:-}
# Space-separated case names (without ct/ and the prefix): when set, only those
# cases run (client-runc.sh's stage-specific pass).
CT_ONLY=${CT_ONLY:-}
JQ=${JQ:-jq}   # python3 starts far too slowly in the TCG guest
CT_WORK=${CT_WORK:-/tmp/nsg-ct}          # bundles, rootfs, logs (guest tmpfs)
CT_RUNROOT=${CT_RUNROOT:-/run/nsg-crun}  # crun --root: our containers only
CT_CGPARENT=${CT_CGPARENT:-nsg-ct}       # cgroups go under /sys/fs/cgroup/nsg-ct
CT_CGFS=/sys/fs/cgroup
CT_ROOTFS=$CT_WORK/rootfs
CT_CONF=$CT_WORK/default.conf            # comments only: built-in defaults
CT_MONLOG=$CT_WORK/monitor.jsonl
CT_PINS=/sys/fs/bpf/nsguard
CT_RECORDS=/run/nsguard/containers
# shellcheck disable=SC2034 # for the suites (40-lifecycle.sh)
CT_LOCK=/run/nsguard/lock
CT_TIMEOUT=${CT_TIMEOUT:-60}
CT_SUFFIX=${CT_SUFFIX:-$$}               # keeps ids unique across scripts
CT_MON_PID=
CT_IDS=()   # containers this script created, deleted on exit
CT_OUT=     # output (stdout+stderr) of the last ct_run/ct_exec/ct_hook
CT_RC=0     # its exit status
CT_WHY=     # why the current case failed (set by the want_* helpers)

# ---------------------------------------------------------------- set-up

# ct_init: check the pieces exist, build the shared rootfs once per boot,
# and arrange the clean-up.  Exits the script (one FAIL line) when nsguard
# or the probe is missing: every case would fail for the same reason.
ct_init() {
	in_guest
	local p
	for p in "$NSGUARD" "$NSG_USERNS" /bin/busybox; do
		if [ ! -x "$p" ]; then
			fail "ct/${CT_RERUN}setup" "$p missing (make build/nsguard build/nsg-userns)"
			exit 1
		fi
	done
	command -v "$CRUN" >/dev/null || { fail "ct/${CT_RERUN}setup" "$CRUN not found"; exit 1; }
	command -v "$JQ" >/dev/null || { fail "ct/${CT_RERUN}setup" "jq not found (apt-get install jq)"; exit 1; }
	mkdir -p "$CT_WORK/b" "$CT_RUNROOT" "$CT_CGFS/$CT_CGPARENT"
	[ -e "$CT_CONF" ] || echo "# empty: nsguard built-in defaults" >"$CT_CONF"
	ct_make_rootfs || { fail "ct/${CT_RERUN}setup" "cannot build $CT_ROOTFS"; exit 1; }
	trap ct_cleanup EXIT
}

# One read-only rootfs shared by every bundle: static busybox and its
# applets, the static probe, and mount points.
ct_make_rootfs() {
	[ -x "$CT_ROOTFS/bin/nsg-userns" ] && return 0
	local r=$CT_ROOTFS.tmp a
	rm -rf "$r"
	mkdir -p "$r"/{bin,proc,sys,dev,tmp,etc,root} || return 1
	cp /bin/busybox "$r/bin/busybox" && cp "$NSG_USERNS" "$r/bin/nsg-userns" || return 1
	for a in sh ash cat echo true false sleep unshare nsenter readlink ls mkdir \
		id grep kill test touch rm ps env setpriv stat setsid; do
		ln -s busybox "$r/bin/$a"
	done
	echo 'root:x:0:0:root:/root:/bin/sh' >"$r/etc/passwd"
	echo 'root:x:0:' >"$r/etc/group"
	chmod 0755 "$r" "$r"/*
	chmod 1777 "$r/tmp"
	mv "$r" "$CT_ROOTFS"
}

# ct_image_archive DIR NAME: DIR/image.tar, a docker-archive image named
# NAME of the test rootfs with sleep as its command (so that it serves as a
# CRI sandbox image too), for `ctr images import` (client-cri.sh, node.sh).
ct_image_archive() {
	local d=$1/img diff cfg
	mkdir -p "$d"
	tar -C "$CT_ROOTFS" -cf "$d/layer.tar" . || return 1
	diff=$(sha256sum "$d/layer.tar" | cut -d' ' -f1)
	printf '{"architecture":"amd64","os":"linux","config":{"Env":["PATH=/bin"],"Cmd":["sleep","1000000"]},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
		"$diff" >"$d/config.json"
	cfg=$(sha256sum "$d/config.json" | cut -d' ' -f1)
	mv "$d/config.json" "$d/$cfg.json"
	printf '[{"Config":"%s.json","RepoTags":["%s"],"Layers":["layer.tar"]}]' "$cfg" "$2" \
		>"$d/manifest.json"
	tar -C "$d" -cf "$1/image.tar" manifest.json "$cfg.json" layer.tar
}

ct_cleanup() {
	local id
	for id in "${CT_IDS[@]}"; do
		"$CRUN" --root "$CT_RUNROOT" delete -f "$id" >/dev/null 2>&1
	done
	ct_monitor_stop
	# Best effort: leave no test cgroups behind (children first).
	find "$CT_CGFS/$CT_CGPARENT" -mindepth 1 -depth -type d -exec rmdir {} + 2>/dev/null
}

# ct_conf NAME LINE...: write a config file $CT_WORK/NAME.conf, print its path.
ct_conf() {
	local f=$CT_WORK/$1.conf
	shift
	printf '%s\n' "$@" >"$f"
	echo "$f"
}

# ---------------------------------------------------------------- bundles

# No $(...) in these: every fork costs in the TCG guest.
ct_json_str() { # JSON string literal of $1 (printed, or into var $2)
	local s=${1//\\/\\\\}
	s=${s//\"/\\\"}
	if [ $# -gt 1 ]; then
		local -n _ct_json_out=$2
		_ct_json_out="\"$s\""
	else
		printf '"%s"' "$s"
	fi
}

ct_json_arr() { # JSON array of strings into var $1
	local -n _arr=$1
	local a q
	_arr=
	shift
	for a in "$@"; do
		ct_json_str "$a" q
		_arr+="${_arr:+,}$q"
	done
	_arr="[$_arr]"
}

CT_ALL_CAPS=(CAP_CHOWN CAP_DAC_OVERRIDE CAP_DAC_READ_SEARCH CAP_FOWNER CAP_FSETID
	CAP_KILL CAP_SETGID CAP_SETUID CAP_SETPCAP CAP_LINUX_IMMUTABLE
	CAP_NET_BIND_SERVICE CAP_NET_BROADCAST CAP_NET_ADMIN CAP_NET_RAW CAP_IPC_LOCK
	CAP_IPC_OWNER CAP_SYS_MODULE CAP_SYS_RAWIO CAP_SYS_CHROOT CAP_SYS_PTRACE
	CAP_SYS_PACCT CAP_SYS_ADMIN CAP_SYS_BOOT CAP_SYS_NICE CAP_SYS_RESOURCE
	CAP_SYS_TIME CAP_SYS_TTY_CONFIG CAP_MKNOD CAP_LEASE CAP_AUDIT_WRITE
	CAP_AUDIT_CONTROL CAP_SETFCAP CAP_MAC_OVERRIDE CAP_MAC_ADMIN CAP_SYSLOG
	CAP_WAKE_ALARM CAP_BLOCK_SUSPEND CAP_AUDIT_READ CAP_PERFMON CAP_BPF
	CAP_CHECKPOINT_RESTORE)
# Docker's default set.  It has CAP_SETFCAP, without which root (uid 0
# outside) may not map itself into a nested namespace (Linux 5.12+), so
# `nsg-userns nest` could not write the maps a second level needs.
CT_DEFAULT_CAPS=(CAP_CHOWN CAP_DAC_OVERRIDE CAP_FSETID CAP_FOWNER CAP_MKNOD CAP_NET_RAW
	CAP_SETGID CAP_SETUID CAP_SETFCAP CAP_SETPCAP CAP_NET_BIND_SERVICE CAP_SYS_CHROOT
	CAP_KILL CAP_AUDIT_WRITE)

# ct_bundle ID [OPTIONS] -- CMD [ARGS...]: write $CT_WORK/b/ID/config.json.
#   --mode M / --depth N / --errno E   nsguard.io/userns{,.max-depth,.errno}
#   --ann KEY=VALUE                    any annotation (repeatable)
#   --conf FILE                        nsguard --config (default $CT_CONF)
#   --userns                           own user namespace, 0 -> 100000 (65536)
#   --allcaps                          every capability in every set (but
#                                      CAP_SYS_ADMIN, CAP_BPF, CAP_SYS_MODULE,
#                                      CAP_SYS_RAWIO and CAP_DAC_READ_SEARCH
#                                      without --userns:
#                                      nsguard refuses a host-root container
#                                      that keeps them)
#   --hostcaps                         every capability, those five included
#   --cap NAME                         one more name in every capability set,
#                                      as written (a spelling test)
#   --userns-root                      own user namespace mapping 0 -> 0
#   --host-pidns                       no pid namespace of its own
#   --no-caps                          no capability in any set
#   --uid N                            run the process as uid/gid N
#   --cgroup-rw                        /sys/fs/cgroup rw
#   --host-cgroupns                    no cgroup namespace of its own
#   --mount JSON                       one more entry for "mounts" (repeatable)
#   --cgpath PATH                      cgroupsPath (default /$CT_CGPARENT/ID)
#   --no-hooks                         no nsguard hooks at all
#   --no-poststop                      the createRuntime (CT_STAGE) hook only
#   --hook-bin PATH                    hook program (default $NSGUARD)
#   --hook-via 'PATH ARGV0 ARG...'     run the hook through a wrapper: its path,
#                                      then its argv (words; {stage} becomes
#                                      the stage), then the hook program's
#   --hostname NAME                    hostname (default ct)
#   --no-sysfs                         no /sys and /sys/fs/cgroup mounts
#   --sys-rw                           /sys mounted rw (not ro)
#   --ro-paths JSON                    linux.readonlyPaths (default Docker's:
#                                      /proc/bus, fs, irq, sys, sysrq-trigger;
#                                      '' leaves the key out)
#   --masked-paths JSON                linux.maskedPaths (default Docker's)
#   --linux-extra MEMBERS              more members of "linux", each ending in ","
#                                      (e.g. '"rootfsPropagation": "rshared",')
#   --pad BYTES                        BYTES of white space after the document
ct_bundle() {
	local id=$1
	shift
	local linuxextra='' conf=$CT_CONF userns=0 caps=("${CT_DEFAULT_CAPS[@]}") cgrw=0 hooks=1 via=''
	local cgpath=/$CT_CGPARENT/$id hookbin=$NSGUARD anns=() k v uid=0 pad=0 cgns=1 mounts=''
	local hostname=ct sysfs=1 poststop=1 allcaps=0 hostid=100000 pidns=1 sysopt=ro
	# What Docker, containerd and podman put there (#40: nsguard refuses a
	# host-root container whose /proc/sys the runtime would leave writable).
	local ropaths='["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"]'
	local maskpaths='["/proc/kcore", "/proc/timer_list"]'
	while [ $# -gt 0 ]; do
		case $1 in
		--mode) anns+=("nsguard.io/userns=$2"); shift 2 ;;
		--depth) anns+=("nsguard.io/userns.max-depth=$2"); shift 2 ;;
		--errno) anns+=("nsguard.io/userns.errno=$2"); shift 2 ;;
		--ann) anns+=("$2"); shift 2 ;;
		--conf) conf=$2; shift 2 ;;
		--userns) userns=1; shift ;;
		--allcaps) caps=("${CT_ALL_CAPS[@]}") allcaps=1; shift ;;
		--hostcaps) caps=("${CT_ALL_CAPS[@]}"); shift ;;
		--cap) caps+=("$2"); shift 2 ;;
		--userns-root) userns=1 hostid=0; shift ;;
		--host-pidns) pidns=0; shift ;;
		--no-caps) caps=(); shift ;;
		--hostname) hostname=$2; shift 2 ;;
		--no-sysfs) sysfs=0; shift ;;
		--sys-rw) sysopt=rw; shift ;;
		--ro-paths) ropaths=$2; shift 2 ;;
		--masked-paths) maskpaths=$2; shift 2 ;;
		--hook-via) via=$2; shift 2 ;;
		--uid) uid=$2; shift 2 ;;
		--cgroup-rw) cgrw=1; shift ;;
		--host-cgroupns) cgns=0; shift ;;
		--mount) mounts+=",$2"; shift 2 ;;
		--cgpath) cgpath=$2; shift 2 ;;
		--no-hooks) hooks=0; shift ;;
		--no-poststop) poststop=0; shift ;;
		--hook-bin) hookbin=$2; shift 2 ;;
		--pad) pad=$2; shift 2 ;;
		--linux-extra) linuxextra+=$'\n  '"$2"; shift 2 ;;
		--) shift; break ;;
		*) echo "ct_bundle: unknown option $1" >&2; return 2 ;;
		esac
	done
	[ $# -gt 0 ] || { echo "ct_bundle: no command" >&2; return 2; }
	if [ $allcaps = 1 ] && [ $userns = 0 ]; then
		caps=("${caps[@]/CAP_SYS_ADMIN/}")
		caps=("${caps[@]/CAP_BPF/}")
		caps=("${caps[@]/CAP_SYS_MODULE/}")
		caps=("${caps[@]/CAP_SYS_RAWIO/}")
		caps=("${caps[@]/CAP_DAC_READ_SEARCH/}")
		read -ra caps <<<"${caps[*]}"
	fi
	local dir=$CT_WORK/b/$id a annjson='' nsjson capsjson hookjson='' mapjson='' cgopt=ro sysjson=''
	[ -d "$dir" ] || mkdir -p "$dir"
	# crun 1.8.1 throws hook output away unless run.oci.hooks.stderr names a
	# file; /proc/self/fd/2 (the guest has no /dev/stderr) puts the hook's
	# `nsguard:` line into crun's output.  runc passes it on by itself.
	[ $hooks = 1 ] && [ "${CRUN##*/}" = crun ] && anns+=("run.oci.hooks.stderr=/proc/self/fd/2")
	for a in "${anns[@]}"; do
		ct_json_str "${a%%=*}" k
		ct_json_str "${a#*=}" v
		annjson+="${annjson:+,}$k:$v"
	done
	nsjson='{"type":"mount"},{"type":"ipc"},{"type":"uts"},{"type":"network"}'
	[ $pidns = 1 ] && nsjson='{"type":"pid"},'$nsjson
	# A cgroup namespace, as runc, crun and podman give one on cgroup v2.
	[ $cgns = 1 ] && nsjson+=',{"type":"cgroup"}'
	[ $cgrw = 1 ] && cgopt=rw
	if [ $userns = 1 ]; then
		nsjson+=',{"type":"user"}'
		mapjson='"uidMappings":[{"containerID":0,"hostID":'$hostid',"size":65536}],'
		mapjson+='"gidMappings":[{"containerID":0,"hostID":'$hostid',"size":65536}],'
	fi
	local hb ca pa argsjson rootjson cgjson hostjson
	ct_json_arr capsjson "${caps[@]}"
	ct_json_arr argsjson "$@"
	ct_json_str "$CT_ROOTFS" rootjson
	ct_json_str "$cgpath" cgjson
	ct_json_str "$hostname" hostjson
	[ $sysfs = 0 ] || sysjson=',
  {"destination": "/sys", "type": "sysfs", "source": "sysfs", "options": ["nosuid", "noexec", "nodev", "'$sysopt'"]},
  {"destination": "/sys/fs/cgroup", "type": "cgroup", "source": "cgroup", "options": ["nosuid", "noexec", "nodev", "relatime", "'$cgopt'"]}'
	if [ $hooks = 1 ] && [ -n "$via" ]; then
		# The wrapper's path and argv, then the hook program and its args.
		local w=()
		read -ra w <<<"$via"
		ct_json_str "${w[0]}" hb
		ct_json_arr ca "${w[@]:1}" "$hookbin" hook "$CT_STAGE" --config "$conf"
		ct_json_arr pa "${w[@]:1}" "$hookbin" hook poststop --config "$conf"
		ca=${ca//\{stage\}/$CT_STAGE} pa=${pa//\{stage\}/poststop}
	elif [ $hooks = 1 ]; then
		ct_json_str "$hookbin" hb
		ct_json_arr ca nsguard hook "$CT_STAGE" --config "$conf"
		ct_json_arr pa nsguard hook poststop --config "$conf"
	fi
	if [ $hooks = 1 ] && [ $poststop = 0 ]; then
		printf -v hookjson '"hooks":{"%s":[{"path":%s,"args":%s,"timeout":120}]},' "$CT_STAGE" "$hb" "$ca"
	elif [ $hooks = 1 ]; then
		printf -v hookjson '"hooks":{"%s":[{"path":%s,"args":%s,"timeout":120}],"poststop":[{"path":%s,"args":%s,"timeout":120}]},' \
			"$CT_STAGE" "$hb" "$ca" "$hb" "$pa"
	fi
	local pathsjson=$linuxextra
	[ -z "$ropaths" ] || pathsjson+=$'\n  "readonlyPaths": '"$ropaths,"
	[ -z "$maskpaths" ] || pathsjson+=$'\n  "maskedPaths": '"$maskpaths,"
	cat >"$dir/config.json" <<EOF
{
 "ociVersion": "1.0.2",
 "process": {
  "terminal": false,
  "user": {"uid": $uid, "gid": $uid},
  "args": $argsjson,
  "env": ["PATH=/bin", "HOME=/root"],
  "cwd": "/",
  "capabilities": {"bounding": $capsjson, "effective": $capsjson,
   "permitted": $capsjson, "inheritable": $capsjson, "ambient": $capsjson},
  "noNewPrivileges": false
 },
 "root": {"path": $rootjson, "readonly": true},
 "hostname": $hostjson,
 "annotations": {$annjson},
 $hookjson
 "mounts": [
  {"destination": "/proc", "type": "proc", "source": "proc"},
  {"destination": "/dev", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "strictatime", "mode=755", "size=65536k"]},
  {"destination": "/tmp", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "nodev", "mode=1777"]}$sysjson$mounts
 ],
 "linux": {
  $mapjson$pathsjson
  "cgroupsPath": $cgjson,
  "namespaces": [$nsjson]
 }
}
EOF
	[ "$pad" = 0 ] || head -c "$pad" /dev/zero | tr '\0' ' ' >>"$dir/config.json"
}

# ---------------------------------------------------------------- running

# ct_run ID: run the bundle to completion; CT_OUT/CT_RC.  Not in $(...): the
# monitor it may start must belong to this shell.
ct_run() {
	local id=$1
	CT_IDS+=("$id")
	CT_OUT=$(timeout "$CT_TIMEOUT" "$CRUN" --root "$CT_RUNROOT" run --bundle "$CT_WORK/b/$id" "$id" </dev/null 2>&1)
	CT_RC=$?
	ct_monitor_ensure
	return 0
}

# ct_start ID: run the bundle detached (its process should wait, e.g.
# `sleep 600`); its output goes to $CT_WORK/b/ID/out.  CT_OUT/CT_RC.
ct_start() {
	local id=$1
	CT_IDS+=("$id")
	timeout "$CT_TIMEOUT" "$CRUN" --root "$CT_RUNROOT" run --detach --bundle "$CT_WORK/b/$id" "$id" \
		</dev/null >"$CT_WORK/b/$id/out" 2>&1
	CT_RC=$?
	CT_OUT=$(cat "$CT_WORK/b/$id/out")
	ct_monitor_ensure
	return 0
}

# ct_exec ID CMD...: run a command in a started container; CT_OUT/CT_RC.
ct_exec() {
	local id=$1
	shift
	CT_OUT=$(timeout "$CT_TIMEOUT" "$CRUN" --root "$CT_RUNROOT" exec "$id" "$@" </dev/null 2>&1)
	CT_RC=$?
	return 0
}

# ct_delete ID: kill and delete (runs the poststop hook); CT_OUT/CT_RC.
ct_delete() {
	CT_OUT=$(timeout "$CT_TIMEOUT" "$CRUN" --root "$CT_RUNROOT" delete -f "$1" </dev/null 2>&1)
	CT_RC=$?
	return 0
}

ct_cgdir() { echo "$CT_CGFS/$CT_CGPARENT/$1"; }          # default cgroup of ID
ct_cgid() { stat -c %i "$1" 2>/dev/null; }                # cgroup id of a cgroup dir

# ct_hook STAGE STATE-JSON [nsguard args...]: run the hook by hand with the
# state on stdin; CT_OUT/CT_RC.
ct_hook() {
	local stage=$1 state=$2
	shift 2
	CT_OUT=$(printf '%s' "$state" | timeout "$CT_TIMEOUT" "$NSGUARD" hook "$stage" "$@" 2>&1)
	CT_RC=$?
	ct_monitor_ensure
	return 0
}

# ct_state ID PID [BUNDLE] [ANNOTATIONS-JSON] [STATUS]: an OCI state
# document (status default "creating"; no "pid" when PID is empty, no
# "annotations" when ANNOTATIONS-JSON is "-").  A bundle under $CT_WORK/b
# (the default: $CT_WORK/b/none) without a config.json gets the one a runtime
# would leave there for a stand-in init: no mounts, no capabilities (nsguard
# refuses a bundle without one).
ct_state() {
	local ann=${4:-} pid='' idj bj sj b=${3:-$CT_WORK/b/none}
	if [[ $b == "$CT_WORK/b/"* ]] && [ ! -e "$b/config.json" ]; then
		mkdir -p "$b" &&
			echo '{"ociVersion":"1.0.2","process":{"capabilities":{}}}' >"$b/config.json"
	fi
	[ -n "$ann" ] || ann='{}'
	if [ "$ann" = - ]; then ann=''; else ann=,\"annotations\":$ann; fi
	[ -z "$2" ] || pid=,\"pid\":$2
	ct_json_str "$1" idj
	ct_json_str "$b" bj
	ct_json_str "${5:-creating}" sj
	printf '{"ociVersion":"1.0.2","id":%s,"status":%s%s,"bundle":%s%s}' "$idj" "$sj" "$pid" "$bj" "$ann"
}

# ct_spawn_in CGDIR CMD...: start CMD in the background inside cgroup CGDIR
# (created if needed); prints its pid.  The shell moves itself, then execs.
ct_spawn_in() {
	local cg=$1
	shift
	mkdir -p "$cg" || return 1
	# shellcheck disable=SC2016 # the inner shell expands them
	setsid sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$cg" "$@" \
		</dev/null >/dev/null 2>&1 &
	echo $!
}

# ct_spawn_init CGDIR: a stand-in for a container's init in cgroup CGDIR
# (created if needed), alone there, with a pid, cgroup and mount namespace of
# its own as runtimes give one (nsguard refuses the host's root in the host's
# namespaces: it could leave its cgroup, or reach the host's mounts through
# /proc): `nsg-userns standin`; prints its pid once the namespaces exist.
# SIGTERM (kill, ct_kill) ends it.
ct_spawn_init() {
	local cg=$1 pid
	mkdir -p "$cg" || return 1
	# shellcheck disable=SC2016 # the inner shell expands them
	if ! pid=$(sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" standin' sh "$cg" "$NSG_USERNS"); then
		echo "ct_spawn_init: no stand-in init in $cg" >&2
		return 1
	fi
	echo "$pid"
}

# ct_kill PID...: kill processes started by ct_spawn_* and wait (5 s at most)
# until each has exited (gone, or a zombie nobody reaped yet: it is not this
# shell's child, so `wait` cannot), so that its cgroup can be removed.
ct_kill() {
	local p
	kill "$@" 2>/dev/null
	for p in "$@"; do
		for _ in $(seq 50); do
			[ "$(cut -d' ' -f3 "/proc/$p/stat" 2>/dev/null || echo Z)" = Z ] && break
			sleep 0.1
		done
	done
}

# ct_spawn_ready CGDIR CMD...: ct_spawn_in, then wait (10 s at most) until the
# process is listed in CGDIR/cgroup.procs and runs CMD (its comm), so that a
# test never races its start; prints its pid.
ct_spawn_ready() {
	local cg=$1 pid comm
	comm=${2##*/}
	pid=$(ct_spawn_in "$@") || return 1
	for _ in $(seq 100); do
		if grep -qx "$pid" "$cg/cgroup.procs" 2>/dev/null &&
			[ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "${comm:0:15}" ]; then
			echo "$pid"
			return 0
		fi
		sleep 0.1
	done
	echo "ct_spawn_ready: $* did not start in $cg" >&2
	return 1
}

# ct_run_in CGDIR CMD...: run CMD to completion inside cgroup CGDIR; CT_OUT/CT_RC.
ct_run_in() {
	local cg=$1
	shift
	mkdir -p "$cg" || return 1
	# shellcheck disable=SC2016 # the inner shell expands them
	CT_OUT=$(timeout "$CT_TIMEOUT" sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$cg" "$@" </dev/null 2>&1)
	CT_RC=$?
	return 0
}

# ---------------------------------------------------------------- nsguard state

# ct_status_json: `nsguard status --json`, or {} if it fails.
ct_status_json() { "$NSGUARD" status --json 2>/dev/null || echo '{}'; }

# ct_info ID: one line "mode=M max_depth=N errno=E base_level=N attached=B
# allowed=A denied=D audited=U" for container ID from `status --json`, or
# "missing".
ct_info() {
	local out
	# shellcheck disable=SC2016 # $id is jq's
	out=$(ct_status_json | "$JQ" -r --arg id "$1" '[.containers[]? | select(.id == $id)][0] // empty |
		"mode=\(.mode) max_depth=\(.max_depth) errno=\(.errno) base_level=\(.base_level) attached=\(.attached) allowed=\(.allowed) denied=\(.denied) audited=\(.audited)"' 2>&1)
	echo "${out:-missing}"
}
ct_info_status() { [ "$1" = missing ] && echo missing || echo "${1% allowed=*}"; }
ct_info_counts() { [ "$1" = missing ] && echo missing || echo "allowed=${1#* allowed=}"; }

# ct_status ID: "mode=M max_depth=N errno=E base_level=N attached=B" or "missing".
ct_status() { ct_info_status "$(ct_info "$1")"; }
# ct_counts ID: "allowed=A denied=D audited=U" or "missing".
ct_counts() { ct_info_counts "$(ct_info "$1")"; }

# ct_dropped ID: events of container ID dropped by the event bound or a full
# ring (its events_dropped in `status --json`).
# shellcheck disable=SC2016 # $id is jq's
ct_dropped() { ct_status_json | "$JQ" -r --arg id "$1" '.containers[]? | select(.id == $id) | .events_dropped'; }

# ct_usage ID: "created=C max_count=M" (the count limit) from `status --json`.
ct_usage() {
	# shellcheck disable=SC2016 # $id is jq's
	ct_status_json | "$JQ" -r --arg id "$1" \
		'.containers[]? | select(.id == $id) | "created=\(.created) max_count=\(.max_count)"'
}

# ct_status_ids PREFIX: ids in `status --json` starting with PREFIX, sorted,
# on one line; one whose link is not pinned shows as "ID(detached)".
ct_status_ids() {
	# shellcheck disable=SC2016 # $p is jq's
	ct_status_json | "$JQ" -r --arg p "$1" '[.containers[]? | select(.id | startswith($p)) |
		.id + (if .attached then "" else "(detached)" end)] | sort | join(" ")'
}

# ct_pid ID: host pid of a started container's init.
ct_pid() { "$CRUN" --root "$CT_RUNROOT" state "$1" 2>/dev/null | "$JQ" -r .pid; }

# ---------------------------------------------------------------- monitor

# The ring buffer keeps events until someone consumes them, so one
# `monitor --json` per script, started once the pins exist (after the first
# hook), sees every event; cases pick theirs by container id.
ct_monitor_ensure() {
	if [ -n "$CT_MON_PID" ] && kill -0 "$CT_MON_PID" 2>/dev/null; then
		return 0
	fi
	[ -e "$CT_PINS/events" ] || return 0
	"$NSGUARD" monitor --json >>"$CT_MONLOG" 2>>"$CT_MONLOG.err" &
	CT_MON_PID=$!
}

ct_monitor_stop() {
	if [ -n "$CT_MON_PID" ]; then
		kill "$CT_MON_PID" 2>/dev/null
		wait "$CT_MON_PID" 2>/dev/null
		CT_MON_PID=
	fi
}

# ct_events ID N: wait (up to 10 s) for N events of container ID in the
# monitor log, then print them as "decision:reason:errno:dDEPTH" words in
# order (errno "-" when null).  Malformed lines or events missing a
# contract key print "bad:<reason>".
ct_events() {
	local id=$1 n=$2 i got
	ct_monitor_ensure
	if [ "$n" -gt 0 ]; then
		for ((i = 0; i < 50; i++)); do
			got=$(grep -c "\"id\": *\"$id\"" "$CT_MONLOG" 2>/dev/null)
			[ "${got:-0}" -ge "$n" ] && break
			sleep 0.2
		done
	fi
	sleep 0.3 # more than N must show up too
	# shellcheck disable=SC2016 # $id and $e are jq's
	grep -F "\"$id\"" "$CT_MONLOG" 2>/dev/null | "$JQ" -R -r --arg id "$id" '
		(fromjson? // {bad: "json"}) as $e |
		if $e.bad then "bad:json"
		elif $e.id != $id then empty
		elif ([$e | has("time", "id", "cgroup_id", "task_cgroup_id", "pid", "tid", "comm", "uid",
			"gid", "level", "depth", "decision", "reason", "mode", "errno")] | all | not)
			then "bad:missing-key"
		elif ($e.time | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[.][0-9]{3}Z$") | not)
			then "bad:time-\($e.time)"
		else "\($e.decision):\($e.reason):\($e.errno // "-"):d\($e.depth)" end' | tr '\n' ' ' | sed 's/ $//'
	echo
}

# ---------------------------------------------------------------- cases

# want_eq WHAT GOT WANT: true if equal, else set CT_WHY.
want_eq() {
	[ "$2" = "$3" ] && return 0
	CT_WHY="$1: got '$2', want '$3'"
	return 1
}

# want_run WHAT RC-WANT LINE-GLOB: check CT_RC and that CT_OUT has a line
# matching the glob.
want_run() {
	local what=$1 rc=$2 glob=$3 l
	if [ "$CT_RC" != "$rc" ]; then
		CT_WHY="$what: exit $CT_RC, want $rc; output: $(ct_tail)"
		return 1
	fi
	while IFS= read -r l; do
		# shellcheck disable=SC2053
		[[ $l == $glob ]] && return 0
	done <<<"$CT_OUT"
	CT_WHY="$what: no line like '$glob' in: $(ct_tail)"
	return 1
}

ct_tail() { echo "$CT_OUT" | tail -n 4 | tr '\n' '|'; }

# ct_dead_ids LIVE-IDS LABEL DIR: the entries of DIR, named by cgroup id,
# whose cgroup is not among LIVE-IDS (one per line).
ct_dead_ids() {
	local l
	for l in "$3"/*; do
		[ -e "$l" ] || continue
		grep -qx "${l##*/}" <<<"$1" || echo "$2/${l##*/} (no live cgroup)"
	done
}

# ct_leftovers: print every nsguard pin and record index entry whose cgroup
# no longer exists and every record whose cgroup is gone or no longer has
# that id.
ct_leftovers() {
	local live
	live=$(find "$CT_CGFS" -type d -printf '%i\n' 2>/dev/null | sort -u)
	ct_dead_ids "$live" "pin links" "$CT_PINS"/links
	ct_dead_ids "$live" "index by-cgroup-id" "$CT_RECORDS"/by-cgroup-id
	local id cgid cg
	ct_status_json | "$JQ" -r '.containers[]? | "\(.id) \(.cgroup_id) \(.cgroup)"' |
		while read -r id cgid cg; do
			[ "${cg#/sys/fs/cgroup}" = "$cg" ] && cg=$CT_CGFS/${cg#/}
			if ! grep -qx "$cgid" <<<"$live"; then
				echo "record $id (cgroup id $cgid gone)"
			elif [ ! -d "$cg" ]; then
				echo "record $id (cgroup $cg gone)"
			fi
		done
}

# assert_clean: true if ct_leftovers finds nothing new; sets CT_WHY.  A
# leftover is blamed on the first case after which it shows up only, so one
# leak does not fail every later case.
CT_KNOWN_LEFT=
assert_clean() {
	local left new
	left=$(ct_leftovers)
	new=$(grep -vxF -f <(printf '%s\n' "$CT_KNOWN_LEFT") <<<"$left" | grep .)
	CT_KNOWN_LEFT=$left
	[ -z "$new" ] && return 0
	CT_WHY="left behind: $(echo "$new" | tr '\n' ';')"
	return 1
}

# ct_gone ID CGID: no record, no pin and no index entry for container ID /
# cgroup id CGID.
ct_gone() {
	local what=
	[ -e "$CT_RECORDS/$1.json" ] && what+="record $1.json "
	[ -n "$2" ] && [ -e "$CT_PINS/links/$2" ] && what+="pin links/$2 "
	[ -n "$2" ] && [ -e "$CT_RECORDS/by-cgroup-id/$2" ] && what+="index entry by-cgroup-id/$2 "
	[ "$(ct_status "$1")" = missing ] || what+="status still lists $1 "
	[ -z "$what" ] && return 0
	CT_WHY="after poststop: $what"
	return 1
}

# ct_case NAME FUNC [ARGS...]: one PASS/FAIL line for case ct/NAME (with
# the $CT_RERUN prefix), unless $CT_ONLY is set and does not name it.  FUNC
# returns non-zero with CT_WHY set on failure; afterwards the case's
# containers are deleted and nothing of nsguard may be left on a cgroup
# that no longer exists.
ct_case() {
	local name=$1
	shift
	if [ -n "$CT_ONLY" ] && [[ " $CT_ONLY " != *" $name "* ]]; then
		return 0
	fi
	nsg_case "ct/$CT_RERUN$name" ct_case_run "$@" || true
}

# ct_case_run FUNC [ARGS...]: FUNC, then the runtime's clean-up of the
# containers it created and assert_clean; false, with CT_WHY naming every
# failure, if any failed.
ct_case_run() {
	local ok=1 why='' id before=${#CT_IDS[@]}
	CT_WHY=
	# A failure recorded in CT_WHY counts even if FUNC returned 0 (lib.sh).
	if ! "$@" || [ -n "$CT_WHY" ]; then
		ok=0 why=${CT_WHY:-"$1 failed"}
	fi
	for id in "${CT_IDS[@]:$before}"; do
		"$CRUN" --root "$CT_RUNROOT" delete -f "$id" >/dev/null 2>&1
	done
	CT_IDS=("${CT_IDS[@]:0:$before}")
	if ! assert_clean; then
		ok=0 why="${why:+$why; }$CT_WHY"
	fi
	CT_WHY=$why
	[ $ok = 1 ]
}

# ct_hook_case NAME FUNC [ARGS...]: ct_case for a case that runs the hook by
# hand and starts no container; the runtime cannot change its outcome, so a
# re-run under another runtime or stage leaves it out.  The agent's re-run
# (client-agent.sh) keeps them: CT_RERUN_HOOKS=1.
ct_hook_case() {
	[ -z "$CT_RERUN" ] || [ -n "${CT_RERUN_HOOKS:-}" ] || return 0
	ct_case "$@"
}

# start_guarded ID [BUNDLE-OPTIONS]: a long-running guarded container, started
# detached; fails the case if crun refuses it.
start_guarded() {
	local id=$1
	shift
	ct_bundle "$id" "$@" -- sleep 600 || return 1
	ct_start "$id"
	want_eq "crun run -d $id" "$CT_RC" 0 || { CT_WHY+=" ($(ct_tail))"; return 1; }
}
