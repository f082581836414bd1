#!/bin/bash
# Debian's containerd 1.6 with nsguard registered both ways a containerd
# node can: the wrapper as the runc shim's runtime binary (BinaryName, which
# `ctr run --runc-binary` sets, as a CRI runtime's options.BinaryName does),
# and nsguard's hooks in the spec containerd hands the shim (`ctr run
# --config`, a spec file; on a Kubernetes node the CRI plugin's
# base_runtime_spec, which needs a CRI client this machine lacks).
# containerd runs on tmpfs with the CRI plugin off; the specs are `ctr oci
# spec` with the busybox rootfs of lib-ct.sh and a cgroup namespace.
# Runs in the QEMU guest (make check: part clients-node).
# The jq programs' $names are jq's (SC2016).
# shellcheck disable=SC2016
set -u
. "$(dirname "$0")/lib-ct.sh"
ct_init

S=$CT_SUFFIX
CD=$CT_WORK/containerd              # config, root, specs, logs
CD_RUN=/run/nsg-containerd          # state and socket (tmpfs)
CD_SOCK=$CD_RUN/containerd.sock
CD_NS=nsg
CTR=(ctr --address "$CD_SOCK" -n "$CD_NS")
self=$(readlink -f "$NSGUARD")

cd_init() {
	local p i
	for p in containerd ctr containerd-shim-runc-v2 runc; do
		command -v "$p" >/dev/null || { fail "ct/containerd/setup" "$p not found (make deps-test)"; exit 1; }
	done
	echo "# $(containerd --version), $(runc --version | head -n 1)"
	mkdir -p "$CD/root" "$CD_RUN" "$CD/bin"
	cat >"$CD/config.toml" <<EOF
version = 2
root = "$CD/root"
state = "$CD_RUN/state"
# No CRI client here, and the CRI plugin would want CNI.
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$CD_SOCK"
EOF
	containerd --config "$CD/config.toml" >"$CD/log" 2>&1 &
	CD_PID=$!
	for ((i = 0; i < 300; i++)); do
		"${CTR[@]}" version >/dev/null 2>&1 && break
		sleep 0.1
	done
	"${CTR[@]}" version >/dev/null 2>&1 || { fail "ct/containerd/setup" "containerd did not start: $(tail -n 3 "$CD/log")"; exit 1; }
	# The wrapper as a node registers it: a name for the shim's BinaryName.
	printf '#!/bin/sh\nexec %q runtime --runtime %q "$@"\n' "$NSGUARD" "$(command -v runc)" >"$CD/bin/nsguard-runtime"
	ln -sfn "$NSGUARD" "$CD/bin/nsguard-runtime-audit"
	chmod 755 "$CD/bin/nsguard-runtime"
	# The base spec: ctr's default, the test rootfs, its own cgroup
	# namespace, no CPU weight (the guest kernel has no cpu controller).
	"${CTR[@]}" oci spec >"$CD/default-spec.json" || { fail "ct/containerd/setup" "ctr oci spec failed"; exit 1; }
	trap cd_cleanup EXIT
}

cd_cleanup() {
	local id
	for id in $("${CTR[@]}" task ls -q 2>/dev/null); do "${CTR[@]}" task kill -s KILL "$id" >/dev/null 2>&1; done
	sleep 0.5
	for id in $("${CTR[@]}" c ls -q 2>/dev/null); do
		"${CTR[@]}" task rm -f "$id" >/dev/null 2>&1
		"${CTR[@]}" c rm "$id" >/dev/null 2>&1
	done
	kill "$CD_PID" 2>/dev/null
	wait "$CD_PID" 2>/dev/null
	ct_cleanup
}

# cd_spec ID [--hooks] [--ann K=V]... [--no-cgroupns]: $CD/ID.json from the
# default spec; --hooks adds nsguard's two hooks (the base-spec route).
cd_spec() {
	local id=$1 hooks=false cgns=true ann='{}'
	shift
	while [ $# -gt 0 ]; do
		case $1 in
		--hooks) hooks=true ;;
		--no-cgroupns) cgns=false ;;
		--ann) ann=$("$JQ" -c --arg k "${2%%=*}" --arg v "${2#*=}" '. + {($k): $v}' <<<"$ann"); shift ;;
		esac
		shift
	done
	"$JQ" --arg root "$CT_ROOTFS" --arg self "$self" --arg cg "/$CT_CGPARENT/$id" \
		--argjson hooks $hooks --argjson cgns $cgns --argjson ann "$ann" '
		.root = {path: $root, readonly: true}
		| .process.args = ["sleep", "600"] | .process.env = ["PATH=/bin"]
		| del(.linux.resources.cpu) | .linux.cgroupsPath = $cg
		| if $cgns then .linux.namespaces += [{type: "cgroup"}] else . end
		| .annotations = ((.annotations // {}) + $ann)
		| if $hooks then .hooks = {
			createRuntime: [{path: $self, args: ["nsguard", "hook", "createRuntime"], timeout: 30}],
			poststop: [{path: $self, args: ["nsguard", "hook", "poststop"], timeout: 30}]}
		  else . end' "$CD/default-spec.json" >"$CD/$id.json"
}

# cd_run ID SPEC-OPTIONS... [-- CTR-RUN-OPTIONS...]: ctr run -d; CT_OUT/CT_RC.
cd_run() {
	local id=$1 spec=() a
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do spec+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	cd_spec "$id" "${spec[@]}"
	CT_OUT=$(timeout "$CT_TIMEOUT" "${CTR[@]}" run -d --config "$CD/$id.json" "$@" "$id" </dev/null 2>&1)
	CT_RC=$?
	ct_monitor_ensure
}

cd_exec() { # ID CMD...: ctr task exec; CT_OUT/CT_RC
	local id=$1
	shift
	CT_OUT=$(timeout "$CT_TIMEOUT" "${CTR[@]}" task exec --exec-id "e$RANDOM" "$id" "$@" </dev/null 2>&1)
	CT_RC=$?
}

# cd_rm ID: kill, task rm, container rm, then nothing of nsguard's left.
cd_rm() {
	local id=$1 cgid=$2 i
	"${CTR[@]}" task kill -s KILL "$id" >/dev/null 2>&1
	for ((i = 0; i < 100; i++)); do
		[[ $("${CTR[@]}" task ls 2>/dev/null) == *"$id "*RUNNING* ]] || break
		sleep 0.1
	done
	CT_OUT=$("${CTR[@]}" task rm "$id" 2>&1) || { CT_WHY="ctr task rm: $CT_OUT"; return 1; }
	CT_OUT=$("${CTR[@]}" c rm "$id" 2>&1) || { CT_WHY="ctr c rm: $CT_OUT"; return 1; }
	ct_gone "$id" "$cgid"
}

bundle_of() { echo "$CD_RUN/state/io.containerd.runtime.v2.task/$CD_NS/$1/config.json"; }
ours_in() { # ID: nsguard's hooks in the bundle's config.json, as STAGE:ARG words
	"$JQ" -r --arg self "$self" '.hooks | to_entries[] | .key as $k | .value[]
		| select(.path == $self) | "\($k):\(.args[2])"' "$(bundle_of "$1")" 2>/dev/null | tr '\n' ' '
}

# guarded ID PROBE-RC PROBE-LINE STATUS-GLOB: the probe and status, then rm.
guarded() {
	local id=$1 cgid
	cd_exec "$id" nsg-userns unshare
	want_run "nsg-userns unshare" "$2" "$3" || return 1
	# shellcheck disable=SC2053
	[[ $(ct_status "$id") == $4 ]] || { CT_WHY="status: $(ct_status "$id"), want $4"; return 1; }
	cgid=$(ct_cgid "$(ct_cgdir "$id")")
	cd_rm "$id" "$cgid"
}

cd_init

# --- the wrapper as the shim's runtime binary; the tier name's mode
# replaces the spec's.
case_wrapper_deny() {
	local id=cd-wdeny-$S
	cd_run "$id" -- --runc-binary "$CD/bin/nsguard-runtime"
	want_eq "ctr run -d" "$CT_RC" 0 || { CT_WHY+=" ($(ct_tail))"; return 1; }
	want_eq "nsguard's hooks" "$(ours_in "$id")" "createRuntime:createRuntime poststop:poststop " || return 1
	guarded "$id" 1 "unshare: fail errno=EPERM" "mode=deny *"
}
ct_case containerd/wrapper-deny case_wrapper_deny

# (ctr 1.6 drops --annotation when the spec comes from a file: the
# annotations go into the file, as a CRI runtime's pod_annotations put them.)
case_wrapper_annotation() {
	local mode=$1 id=cd-w$1-$S
	cd_run "$id" --ann "nsguard.io/userns=$mode" -- --runc-binary "$CD/bin/nsguard-runtime"
	want_eq "ctr run -d" "$CT_RC" 0 || { CT_WHY+=" ($(ct_tail))"; return 1; }
	guarded "$id" 0 "unshare: ok" "mode=$mode *"
}
ct_case containerd/wrapper-annotation-allow case_wrapper_annotation allow
ct_case containerd/wrapper-annotation-audit case_wrapper_annotation audit

case_wrapper_tier() {
	local id=cd-wtier-$S
	cd_run "$id" --ann nsguard.io/userns=deny -- --runc-binary "$CD/bin/nsguard-runtime-audit"
	want_eq "ctr run -d" "$CT_RC" 0 || { CT_WHY+=" ($(ct_tail))"; return 1; }
	guarded "$id" 0 "unshare: ok" "mode=audit *"
}
ct_case containerd/wrapper-tier-audit case_wrapper_tier

# --- hooks in the spec containerd hands the shim, plain runc.
case_spec_hooks() {
	local mode=$1 id=cd-s$1-$S want=(1 "unshare: fail errno=EPERM")
	if [ "$mode" = deny ]; then cd_run "$id" --hooks; else cd_run "$id" --hooks --ann "nsguard.io/userns=$mode"; fi
	want_eq "ctr run -d --config" "$CT_RC" 0 || { CT_WHY+=" ($(ct_tail))"; return 1; }
	[ "$mode" = deny ] || want=(0 "unshare: ok")
	guarded "$id" "${want[@]}" "mode=$mode *"
}
ct_case containerd/spec-hooks-deny case_spec_hooks deny
ct_case containerd/spec-hooks-annotation-allow case_spec_hooks allow
ct_case containerd/spec-hooks-annotation-audit case_spec_hooks audit

# --- both at once: one createRuntime hook, one poststop hook.
case_both() {
	local id=cd-both-$S
	cd_run "$id" --hooks -- --runc-binary "$CD/bin/nsguard-runtime"
	want_eq "ctr run -d" "$CT_RC" 0 || { CT_WHY+=" ($(ct_tail))"; return 1; }
	want_eq "nsguard's hooks" "$(ours_in "$id")" "createRuntime:createRuntime poststop:poststop " || return 1
	guarded "$id" 1 "unshare: fail errno=EPERM" "mode=deny *"
}
ct_case containerd/both-no-duplicate case_both

# --- ctr's own spec has no cgroup namespace.  With the hooks in the spec
# and plain runc, nsguard refuses the start (its processes could leave the
# cgroup), and nothing is left.
case_no_cgroupns() {
	local id=cd-nocgns-$S
	cd_run "$id" --hooks --no-cgroupns
	[ "$CT_RC" != 0 ] || { CT_WHY="ctr run -d exited 0"; return 1; }
	want_run "ctr's error" "$CT_RC" "*nsguard: container $id: *cgroup namespace*" || return 1
	"${CTR[@]}" c rm "$id" >/dev/null 2>&1
	ct_gone "$id" ""
}
ct_case containerd/refused-without-cgroupns case_no_cgroupns

# The wrapper gives such a container a cgroup namespace of its own (as it
# does a CRI pod sandbox), so it starts guarded at its own cgroup.
case_wrapper_cgroupns() {
	local id=cd-wcgns-$S pid
	cd_run "$id" --no-cgroupns -- --runc-binary "$CD/bin/nsguard-runtime"
	want_eq "ctr run -d" "$CT_RC" 0 || { CT_WHY+=" ($(ct_tail))"; return 1; }
	want_eq "cgroup namespaces in the bundle" \
		"$("$JQ" -c '[.linux.namespaces[] | select(.type == "cgroup")]' "$(bundle_of "$id")")" \
		'[{"type":"cgroup"}]' || return 1
	pid=$("${CTR[@]}" task ls | awk -v i="$id" '$1 == i {print $2}')
	[ "$(readlink "/proc/$pid/ns/cgroup")" != "$(readlink /proc/self/ns/cgroup)" ] ||
		{ CT_WHY="init (pid $pid) shares the host's cgroup namespace"; return 1; }
	guarded "$id" 1 "unshare: fail errno=EPERM" "mode=deny *"
}
ct_case containerd/wrapper-adds-cgroupns case_wrapper_cgroupns

# containerd 2.x (#41): `config dump` says version 3 and an import merges
# key by key (mergeConfig, mergo with override).  nsguard configure writes
# its block into a version 3 config.toml in 2.x's layout (and no drop-in):
# this containerd's own reading keeps the node's runc handler with its
# SystemdCgroup = true, adds the three with it, and after unconfigure the
# file is byte for byte what it was.  nsguard-runtimes-v3.toml works as a
# drop-in by itself too; configure then refuses to write a second copy
# (containerd's own reading; no daemon).
case_v3() {
	local cf=$CT_WORK/configure-v3 dump want t="plugins.'io.containerd.cri.v1.runtime'.containerd" out
	rm -rf "$cf" && mkdir -p "$cf/conf.d" "$cf/bin" || return 1
	# The wrapper's three links, as make install makes them.
	for l in nsguard-runtime nsguard-runtime-audit nsguard-runtime-allow; do
		ln -s "$(readlink -f "$NSGUARD")" "$cf/bin/$l" || return 1
	done
	containerd config default >"$cf/config.toml" || return 1
	grep -q '^imports = \[\]$' "$cf/config.toml" || { CT_WHY="config default has no 'imports = []'"; return 1; }
	sed -i "s|^imports = \[\]$|imports = ['$cf/conf.d/*.toml']|; s|SystemdCgroup = false|SystemdCgroup = true|" \
		"$cf/config.toml"
	cp "$cf/config.toml" "$cf/config.before"
	out=$("$NSGUARD" configure --bindir "$cf/bin" --file "$cf/config.toml" containerd 2>&1) ||
		{ CT_WHY="configure on a version 3 config: $out"; return 1; }
	[ -z "$(ls -A "$cf/conf.d")" ] || { CT_WHY="configure wrote into conf.d: $(ls "$cf/conf.d")"; return 1; }
	dump=$(containerd --config "$cf/config.toml" config dump 2>&1) ||
		{ CT_WHY="config dump after configure: $(tail -n 2 <<<"$dump")"; return 1; }
	for want in "[$t.runtimes.runc]" "[$t.runtimes.nsguard]" "[$t.runtimes.nsguard-audit]" \
		"BinaryName = '$cf/bin/nsguard-runtime-audit'" "default_runtime_name = 'runc'"; do
		grep -qF -- "$want" <<<"$dump" || { CT_WHY="the configured config lacks $want"; return 1; }
	done
	for want in runc nsguard-allow; do
		awk -v t="[$t.runtimes.$want.options]" '$0 ~ /^ *\[/ { on = (index($0, t) > 0) } on' <<<"$dump" |
			grep -q 'SystemdCgroup = true' || { CT_WHY="$want's options lack SystemdCgroup = true"; return 1; }
	done
	out=$("$NSGUARD" unconfigure --bindir "$cf/bin" --file "$cf/config.toml" containerd 2>&1) ||
		{ CT_WHY="unconfigure: $out"; return 1; }
	cmp -s "$cf/config.toml" "$cf/config.before" || { CT_WHY="unconfigure left config.toml changed"; return 1; }
	sed "s|@BINDIR@|$cf/bin|" "$NSG_REPO/examples/containerd/nsguard-runtimes-v3.toml.in" \
		>"$cf/conf.d/nsguard.toml"
	dump=$(containerd --config "$cf/config.toml" config dump 2>&1) ||
		{ CT_WHY="config dump with the drop-in: $(tail -n 2 <<<"$dump")"; return 1; }
	for want in "[$t.runtimes.runc]" "[$t.runtimes.nsguard]" "BinaryName = '$cf/bin/nsguard-runtime-allow'"; do
		grep -qF -- "$want" <<<"$dump" || { CT_WHY="the merged config lacks $want"; return 1; }
	done
	out=$("$NSGUARD" configure --bindir "$cf/bin" --file "$cf/config.toml" containerd 2>&1) &&
		{ CT_WHY="configure wrote a second copy beside the drop-in: $out"; return 1; }
	[[ $out == *"defines a handler of nsguard's"* ]] || { CT_WHY="configure's refusal: $out"; return 1; }
	cmp -s "$cf/config.toml" "$cf/config.before" || { CT_WHY="the refusal changed config.toml"; return 1; }
}
if containerd config dump 2>/dev/null | grep -qx 'version = 3'; then
	ct_case containerd/configure-v3 case_v3
else
	skip "ct/containerd/configure-v3" "$(containerd --version | cut -d' ' -f3): config version 2 (configure-in-place covers it)"
fi
