#!/bin/bash
# Debian's docker.io 20.10 with nsguard as a runtime of daemon.json
# (examples/docker/daemon.json): `docker run --runtime nsguard` and the two
# tier runtimes, nsguard-audit and nsguard-allow (Docker 20.10 has no
# --annotation: a runtime name is how a Docker user picks a policy).
# dockerd runs on tmpfs with the vfs driver and no networking, and starts
# its own containerd; the image is lib-ct.sh's busybox rootfs, imported.
# /usr/bin/docker is called by path: another docker CLI may come first in PATH.
# Runs in the QEMU guest (make check: part clients-node).
set -u
. "$(dirname "$0")/lib-ct.sh"
ct_init

S=$CT_SUFFIX
DK=$CT_WORK/docker                  # data root, daemon.json, log, links
DK_RUN=/run/nsg-docker              # exec root, socket (tmpfs)
DK_SOCK=$DK_RUN/docker.sock
DOCKER=(/usr/bin/docker -H "unix://$DK_SOCK")
DK_IMAGE=nsg-bb:latest
DK_OUT=
DK_RC=0

dk() { # ARGS...: docker; DK_OUT/DK_RC
	DK_OUT=$(timeout "$CT_TIMEOUT" "${DOCKER[@]}" "$@" </dev/null 2>&1)
	DK_RC=$?
	ct_monitor_ensure
}

dk_init() {
	local p i
	for p in /usr/sbin/dockerd /usr/bin/docker containerd runc; do
		command -v "$p" >/dev/null || { fail "ct/docker/setup" "$p not found (make deps-test)"; exit 1; }
	done
	mkdir -p "$DK/data" "$DK/bin" "$DK_RUN"
	# The runtimes as `make install` names them, here linked to this build.
	for p in nsguard-runtime nsguard-runtime-audit nsguard-runtime-allow; do
		ln -sfn "$NSGUARD" "$DK/bin/$p"
	done
	# An admin's daemon.json (where dockerd 20.10 keeps its trust key, not
	# /etc: read-only in the guest; a log level; a runtime of its own), then
	# `nsguard configure docker` adds the tiers, as on a node (#31).
	printf '{\n  "deprecated-key-path": "%s",\n  "log-level": "info",\n  "runtimes": {"plain-runc": {"path": "%s"}}\n}\n' \
		"$DK/key.json" "$(command -v runc)" >"$DK/daemon.json"
	cp "$DK/daemon.json" "$DK/daemon.json.admin"
	DK_CONF=$("$NSGUARD" configure --bindir "$DK/bin" --file "$DK/daemon.json" docker 2>&1) ||
		{ fail "ct/docker/setup" "nsguard configure docker: $DK_CONF"; exit 1; }
	/usr/sbin/dockerd --config-file "$DK/daemon.json" --data-root "$DK/data" --exec-root "$DK_RUN" \
		--pidfile "$DK_RUN/dockerd.pid" -H "unix://$DK_SOCK" --storage-driver vfs \
		--bridge none --iptables=false --ip-masq=false >"$DK/log" 2>&1 &
	DK_PID=$!
	for ((i = 0; i < 600; i++)); do
		"${DOCKER[@]}" version >/dev/null 2>&1 && break
		kill -0 "$DK_PID" 2>/dev/null || break
		sleep 0.1
	done
	"${DOCKER[@]}" version >/dev/null 2>&1 ||
		{ fail "ct/docker/setup" "dockerd did not start: $(tail -n 5 "$DK/log" | tr '\n' '|')"; exit 1; }
	echo "# $("${DOCKER[@]}" version --format 'docker {{.Server.Version}}, containerd {{(index .Server.Components 1).Version}}' 2>/dev/null)"
	trap dk_cleanup EXIT
	DK_OUT=$(tar -C "$CT_ROOTFS" -c . | timeout 120 "${DOCKER[@]}" import - "$DK_IMAGE" 2>&1) ||
		{ fail "ct/docker/setup" "docker import: $DK_OUT"; exit 1; }
}

dk_cleanup() {
	# shellcheck disable=SC2046 # one id per word
	"${DOCKER[@]}" rm -f $("${DOCKER[@]}" ps -aq 2>/dev/null) >/dev/null 2>&1
	kill "$DK_PID" 2>/dev/null
	wait "$DK_PID" 2>/dev/null
	ct_cleanup
}

# Docker's default seccomp profile refuses unshare and clone with
# CLONE_NEWUSER to a container without CAP_SYS_ADMIN, before the LSM hook
# (EPERM; nsguard counts nothing).  nsguard is the guard where seccomp lets
# them through: seccomp=unconfined (a Kubernetes pod's default), a custom
# profile, CAP_SYS_ADMIN.  The tiers are shown there.
UNCONFINED=(--security-opt seccomp=unconfined)

# dk_start NAME RUNTIME [RUN-OPTIONS...]: a detached `sleep 600`; DK_ID.
dk_start() {
	local name=$1 rt=$2
	shift 2
	dk run -d --network none --name "$name" --runtime "$rt" "$@" "$DK_IMAGE" sleep 600
	DK_ID=${DK_OUT##*$'\n'}
	[ "$DK_RC" = 0 ] && [[ $DK_ID =~ ^[0-9a-f]{64}$ ]] && return 0
	CT_WHY="docker run -d --runtime $rt: exit $DK_RC: $(echo "$DK_OUT" | tail -n 3 | tr '\n' '|')"
	return 1
}

# dk_probe RC LINE STATUS: nsg-userns unshare in DK_ID, nsguard's view.
dk_probe() {
	dk exec "$DK_ID" nsg-userns unshare
	CT_OUT=$DK_OUT CT_RC=$DK_RC
	want_run "nsg-userns unshare" "$1" "$2" || return 1
	want_eq "status" "$(ct_info "$DK_ID")" "$3"
}

# dk_rm: docker rm -f; nothing of nsguard's left.
dk_rm() {
	local cgid
	# shellcheck disable=SC2016 # $id is jq's
	cgid=$(ct_status_json | "$JQ" -r --arg id "$DK_ID" '.containers[]? | select(.id == $id) | .cgroup_id')
	dk rm -f "$DK_ID"
	want_eq "docker rm -f" "$DK_RC" 0 || { CT_WHY+=" ($DK_OUT)"; return 1; }
	ct_gone "$DK_ID" "$cgid"
}

# dk_tier NAME RUNTIME RC LINE STATUS [RUN-OPTIONS...]: start, probe, rm
# (rm whatever the probe said).
dk_tier() {
	local name=$1 rt=$2 rc=$3 line=$4 status=$5 ok=0 why
	shift 5
	dk_start "dk-$name-$S" "$rt" "$@" || return 1
	dk_probe "$rc" "$line" "$status" || ok=1
	why=$CT_WHY
	dk_rm || ok=1
	CT_WHY=${why:-$CT_WHY}
	return $ok
}

dk_init

D0="mode=deny max_depth=0 errno=EPERM base_level=0 attached=true allowed=0"
ct_case docker/runtime-nsguard-deny dk_tier deny nsguard 1 "unshare: fail errno=EPERM" \
	"$D0 denied=1 audited=0" "${UNCONFINED[@]}"
ct_case docker/runtime-nsguard-audit dk_tier audit nsguard-audit 0 "unshare: ok" \
	"mode=audit max_depth=32 errno=EPERM base_level=0 attached=true allowed=0 denied=0 audited=1" \
	"${UNCONFINED[@]}"
ct_case docker/runtime-nsguard-allow dk_tier allow nsguard-allow 0 "unshare: ok" \
	"mode=allow max_depth=32 errno=EPERM base_level=0 attached=true allowed=1 denied=0 audited=0" \
	"${UNCONFINED[@]}"
# Docker's default profile: refused by seccomp first, nsguard still attached.
ct_case docker/default-seccomp-refuses-first dk_tier seccomp nsguard-allow 1 "unshare: fail errno=EPERM" \
	"mode=allow max_depth=32 errno=EPERM base_level=0 attached=true allowed=0 denied=0 audited=0"

# --- docker run --rm to completion through the wrapper: nothing left.
case_run_rm() {
	dk run --rm --network none --runtime nsguard "${UNCONFINED[@]}" "$DK_IMAGE" nsg-userns unshare
	CT_OUT=$DK_OUT CT_RC=$DK_RC
	want_run "docker run --rm" 1 "unshare: fail errno=EPERM" || return 1
	want_eq "records left" "$(find "$CT_RECORDS" -mindepth 1 ! -path "$CT_RECORDS/by-cgroup-id" -printf '%P\n')" ""
}
ct_case docker/run-rm-leaves-nothing case_run_rm

# --- the default runtime (runc) is not guarded: nsguard is chosen per runtime.
# shellcheck disable=SC2034 # CT_OUT and CT_RC are want_run's
case_default_unguarded() {
	local ok=0
	dk_start "dk-plain-$S" runc "${UNCONFINED[@]}" || return 1
	dk exec "$DK_ID" nsg-userns unshare
	CT_OUT=$DK_OUT CT_RC=$DK_RC
	want_run "nsg-userns unshare (runc)" 0 "unshare: ok" && want_eq "status" "$(ct_status "$DK_ID")" missing || ok=1
	dk rm -f "$DK_ID" >/dev/null
	return $ok
}
ct_case docker/runtime-runc-not-guarded case_default_unguarded

# --- --privileged and --cap-add SYS_ADMIN: CAP_SYS_ADMIN in the host's user
# namespace could detach the guard through bpf(); refused through the
# wrapper's hook, with nsguard's reason in docker's error (#29 item 3).
case_privileged() {
	local opt
	for opt in --privileged "--cap-add SYS_ADMIN"; do
		# shellcheck disable=SC2086 # the option and its argument
		dk run --rm --network none --runtime nsguard $opt "$DK_IMAGE" echo CONTAINER-RAN
		CT_OUT=$DK_OUT CT_RC=$DK_RC
		[[ $CT_OUT != *CONTAINER-RAN* ]] || { CT_WHY="$opt: the container ran"; return 1; }
		want_run "docker run $opt" 125 \
			"*nsguard: *with CAP_SYS_ADMIN, CAP_BPF, CAP_SYS_MODULE, CAP_SYS_RAWIO or CAP_DAC_READ_SEARCH*could detach its own guard*" || return 1
	done
	want_eq "records left" "$(find "$CT_RECORDS" -mindepth 1 ! -path "$CT_RECORDS/by-cgroup-id" -printf '%P\n')" ""
}
ct_case docker/privileged-refused case_privileged

# --- nsguard configure docker (#31 item 1): the dockerd above ran every case
# from the file it wrote; the admin's keys are there as they were, and
# unconfigure leaves the file byte for byte as the admin had it.
case_configure() {
	# shellcheck disable=SC2016 # jq's
	want_eq "the admin's keys" "$("$JQ" -c '[."log-level", .runtimes."plain-runc".path]' "$DK/daemon.json")" \
		"[\"info\",\"$(command -v runc)\"]" || return 1
	want_eq "nsguard's runtimes" "$("$JQ" -r '.runtimes | keys | join(" ")' "$DK/daemon.json")" \
		"nsguard nsguard-allow nsguard-audit plain-runc" || return 1
	CT_OUT=$("$NSGUARD" unconfigure --bindir "$DK/bin" --file "$DK/daemon.json" docker 2>&1)
	want_eq "unconfigure: $CT_OUT" "$?" 0 || return 1
	cmp -s "$DK/daemon.json" "$DK/daemon.json.admin" ||
		{ CT_WHY="daemon.json differs from the admin's after unconfigure"; return 1; }
}
ct_case docker/configure-unconfigure case_configure

# --- docker run --annotation (Docker 24 and later, #41 item 4): the
# annotation reaches config.json and the wrapper's hook reads it; a tier
# runtime's own nsguard.io/userns replaces the user's (the admin picks what a
# runtime name means).  Docker 20.10 has no --annotation.
dk_annotations() {
	local v
	v=$("${DOCKER[@]}" version --format '{{.Server.Version}}' 2>/dev/null)
	[ "${v%%.*}" -ge 24 ] 2>/dev/null && return 0
	CT_SKIP="Docker ${v:-?} has no --annotation (Docker 24 and later)"
	return 1
}
case_annotation() {
	dk_annotations || return 0
	dk_tier "$@"
}
ct_case docker/annotation-allow case_annotation ann-allow nsguard 0 "unshare: ok" \
	"mode=allow max_depth=32 errno=EPERM base_level=0 attached=true allowed=1 denied=0 audited=0" \
	"${UNCONFINED[@]}" --annotation nsguard.io/userns=allow
ct_case docker/annotation-max-depth case_annotation ann-depth nsguard 0 "unshare: ok" \
	"mode=allow max_depth=1 errno=EPERM base_level=0 attached=true allowed=1 denied=0 audited=0" \
	"${UNCONFINED[@]}" --annotation nsguard.io/userns=allow --annotation nsguard.io/userns.max-depth=1
ct_case docker/annotation-tier-wins case_annotation ann-tier nsguard-audit 0 "unshare: ok" \
	"mode=audit max_depth=32 errno=EPERM base_level=0 attached=true allowed=0 denied=0 audited=1" \
	"${UNCONFINED[@]}" --annotation nsguard.io/userns=allow
