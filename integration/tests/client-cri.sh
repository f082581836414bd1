#!/bin/bash
# Kubernetes pods through containerd's CRI plugin (1.6's, or 2.x's on the
# current userland: config version 3, io.containerd.cri.v1.runtime), driven as kubelet
# drives it (integration/cri/cri-client, one scenario per process), on a
# node-like containerd: `containerd config default` with a node's own
# settings (sandbox image, snapshotter, paths, a registry credential) and
# nsguard's handlers appended by nsguard configure containerd, the cgroupfs driver, pods under
# kubepods/burstable/pod<uid>, host network (no CNI), one image built here
# from the test rootfs and imported offline into the k8s.io namespace (it is
# the sandbox image too).  Every tier is a RuntimeClass handler: nsguard,
# nsguard-audit, nsguard-allow (the wrapper), nsguard-spec (hooks in
# base_runtime_spec) and runc (unguarded).
# Runs in the QEMU guest (make check: part clients-cri).
set -u
. "$(dirname "$0")/lib-ct.sh"
ct_init

CD=$CT_WORK/cri                     # config, root, image, logs
CD_RUN=/run/nsg-cri                 # state and socket (tmpfs)
CD_SOCK=$CD_RUN/containerd.sock
CTR=(ctr --address "$CD_SOCK" -n k8s.io)
IMAGE=nsg.test/rootfs:1
EXAMPLES=$NSG_REPO/examples/containerd
CLIENT=$NSG_REPO/integration/cri/cri-client
self=$(readlink -f "$NSGUARD")
CD_PID=
VARLIB=                             # the overlay on /var/lib, if mounted

setup_fail() { fail "cri/setup" "$1"; exit 1; }

# sub FILE FROM TO: replace a line's text that containerd's default config
# has exactly once; setup fails if it has not (a changed default).
sub() {
	local n
	n=$(grep -cF -- "$2" "$1")
	[ "$n" = 1 ] || setup_fail "containerd config default: '$2' found $n times, want 1"
	# The text as a regular expression: its ], [, ., *, ^, $ and | escaped.
	# shellcheck disable=SC2001 # one sed escapes them all
	sed -i "s|$(sed 's/[][\.*^$|]/\\&/g' <<<"$2")|$3|" "$1"
}

# The config version containerd writes by default: 2 (1.6/1.7) or 3 (2.x),
# and how its dump spells the CRI runtime plugin's tables and strings.
CD_V=$(containerd config default 2>/dev/null | sed -n 's/^version = \([0-9]*\)$/\1/p')
if [ "$CD_V" = 3 ]; then
	RT="plugins.'io.containerd.cri.v1.runtime'" Q="'" V3=-v3
else
	RT='plugins."io.containerd.grpc.v1.cri"' Q='"' V3=
fi

# ctr images import for the native snapshotter: 2.x's goes through the
# transfer service, which unpacks for the snapshotters of its unpack_config
# only (overlayfs by default); --local is 1.x's way, honouring --snapshotter.
IMPORT=("${CTR[@]}" images import --snapshotter native)
[ "$CD_V" = 3 ] && IMPORT+=(--local)

# The node: containerd's default config, then what a node sets itself.
cd_config() {
	mkdir -p "$CD/conf.d" "$CD/bin" "$CD/logs" "$CD_RUN"
	containerd config default >"$CD/config.toml" || setup_fail "containerd config default failed"
	[ "$CD_V" = 3 ] && { cd_config_v3; return; }
	sub "$CD/config.toml" 'root = "/var/lib/containerd"' "root = \"$CD/root\""
	sub "$CD/config.toml" 'state = "/run/containerd"' "state = \"$CD_RUN/state\""
	sub "$CD/config.toml" 'address = "/run/containerd/containerd.sock"' "address = \"$CD_SOCK\""
	sub "$CD/config.toml" 'imports = []' "imports = [\"$CD/conf.d/*.toml\"]"
	sub "$CD/config.toml" 'sandbox_image = "registry.k8s.io/pause:3.6"' "sandbox_image = \"$IMAGE\""
	# The guest kernel has no overlayfs.
	sub "$CD/config.toml" 'snapshotter = "overlayfs"' 'snapshotter = "native"'
	sub "$CD/config.toml" 'path = "/opt/containerd"' "path = \"$CD/opt\""
	# A registry credential, as nodes have, which the admin rotates later.
	printf '\n[plugins."io.containerd.grpc.v1.cri".registry.configs."r.example".auth]\n  username = "node"\n  password = "S3CRET-TOKEN"\n' \
		>>"$CD/config.toml"
	chmod 600 "$CD/config.toml"
}

# containerd 2.x's layout: the image settings in io.containerd.cri.v1.images
# (the sandbox image a pinned image), strings in single quotes; a CNI of
# the test's own for the pods with a network namespace of their own (the
# user-namespace pods, which 2.x runs with one only).
cd_config_v3() {
	sub "$CD/config.toml" "root = '/var/lib/containerd'" "root = '$CD/root'"
	sub "$CD/config.toml" "state = '/run/containerd'" "state = '$CD_RUN/state'"
	sub "$CD/config.toml" "address = '/run/containerd/containerd.sock'" "address = '$CD_SOCK'"
	sub "$CD/config.toml" 'imports = []' "imports = ['$CD/conf.d/*.toml']"
	sub "$CD/config.toml" "sandbox = 'registry.k8s.io/pause:3.10'" "sandbox = '$IMAGE'"
	# The images the tests import are unpacked for the native snapshotter.
	sub "$CD/config.toml" "snapshotter = 'overlayfs'" "snapshotter = 'native'"
	sub "$CD/config.toml" "path = '/opt/containerd'" "path = '$CD/opt'"
	sub "$CD/config.toml" "bin_dirs = ['/usr/lib/cni', '/opt/cni/bin']" "bin_dirs = ['$CD/cni-bin']"
	sub "$CD/config.toml" "conf_dir = '/etc/cni/net.d'" "conf_dir = '$CD/cni'"
	sub "$CD/config.toml" "socket_path = '/var/run/nri/nri.sock'" "socket_path = '$CD_RUN/nri.sock'"
	printf "\n[plugins.'io.containerd.cri.v1.images'.registry.configs.'r.example'.auth]\n  username = 'node'\n  password = 'S3CRET-TOKEN'\n" \
		>>"$CD/config.toml"
	chmod 600 "$CD/config.toml"
	cd_cni
}

# The guest kernel has no veth: the test's CNI plugin (as loopback and as
# the pod network) brings lo up in the pod's network namespace and reports
# the address TEST-NET-1's 192.0.2.2 for eth0 (containerd wants one), which
# nothing routes; the pods talk to no one.
cd_cni() {
	mkdir -p "$CD/cni-bin" "$CD/cni"
	# libcni caches results in /var/lib/cni (go-cni sets no other): on the
	# guest's read-only root, an overlay of /var/lib on this test's tmpfs.
	if ! mkdir -p /var/lib/cni 2>/dev/null; then
		mkdir -p "$CD/varlib/upper" "$CD/varlib/work"
		mount -t overlay nsg-varlib -o "lowerdir=/var/lib,upperdir=$CD/varlib/upper,workdir=$CD/varlib/work" \
			/var/lib || setup_fail "no writable /var/lib/cni for CNI's cache (overlay: $?)"
		VARLIB=/var/lib
		mkdir -p /var/lib/cni || setup_fail "mkdir /var/lib/cni failed on the overlay"
	fi
	cat >"$CD/cni-bin/loopback" <<'EOF'
#!/bin/sh
# CNI plugin (test): lo up in $CNI_NETNS; as the pod network, an eth0 address.
cat >/dev/null
case $CNI_COMMAND in
VERSION) echo '{"cniVersion":"1.0.0","supportedVersions":["0.4.0","1.0.0"]}' ;;
ADD)
	nsenter --net="$CNI_NETNS" ip link set lo up || exit 1
	if [ "$CNI_IFNAME" = lo ]; then
		printf '{"cniVersion":"1.0.0","interfaces":[{"name":"lo","sandbox":"%s"}],"ips":[{"address":"127.0.0.1/8","interface":0}]}\n' "$CNI_NETNS"
	else
		printf '{"cniVersion":"1.0.0","interfaces":[{"name":"%s","sandbox":"%s"}],"ips":[{"address":"192.0.2.2/24","interface":0}]}\n' "$CNI_IFNAME" "$CNI_NETNS"
	fi ;;
esac
exit 0
EOF
	chmod 755 "$CD/cni-bin/loopback"
	printf '{"cniVersion":"1.0.0","name":"nsg-test","plugins":[{"type":"loopback"}]}\n' >"$CD/cni/10-nsg.conflist"
}

# The wrapper where a node installs it (make install's links), reading the
# node's nsguard.conf: the tiers use the defaults; the nsguard handler an
# admin's limits (allowed-modes deny and audit), as a multi-tenant node has.
cd_wrappers() {
	# [namespace] sections (#42): one namespace audited by default.
	ct_conf cri-limits "allowed-modes = deny, audit" "[namespace nsg-ns-section]" \
		"default-mode = audit" "[namespace nsg-globbed-*]" "default-mode = audit" >/dev/null
	printf '#!/bin/sh\nexec %q runtime --config %q --runtime %q "$@"\n' \
		"$self" "$CT_WORK/cri-limits.conf" "$(command -v runc)" >"$CD/bin/nsguard-runtime"
	chmod 755 "$CD/bin/nsguard-runtime"
	ln -sfn "$self" "$CD/bin/nsguard-runtime-audit"
	ln -sfn "$self" "$CD/bin/nsguard-runtime-allow"
	# As make install substitutes them; the base spec's hooks name the
	# binary under test.
	sed "s|@BINDIR@|$(dirname "$self")|" "$EXAMPLES/nsguard-base-spec$V3.json.in" \
		>"$CD/nsguard-base-spec$V3.json"
	sed "s|@BINDIR@|$CD/bin|" "$EXAMPLES/nsguard-runtimes$V3.toml.in" >"$CD/runtimes.toml"
	sed "s|@CONTAINERDDIR@|$CD|" "$EXAMPLES/nsguard-base-spec$V3.toml.in" >"$CD/base-spec.toml"
	# Test only: a handler that passes every annotation through, for the
	# tenant's forged io.kubernetes.cri.* keys.
	local t=plugins.\"io.containerd.grpc.v1.cri\"
	[ "$CD_V" = 3 ] && t=plugins.\"io.containerd.cri.v1.runtime\"
	cat >"$CD/wide.toml" <<EOF
version = ${CD_V:-2}
[$t.containerd.runtimes.nsguard-wide]
  runtime_type = "io.containerd.runc.v2"
  pod_annotations = ["*"]
  container_annotations = ["*"]
  [$t.containerd.runtimes.nsguard-wide.options]
    BinaryName = "$CD/bin/nsguard-runtime"
EOF
}

# nsguard's handlers, as a node gets them (nsguard configure containerd):
# appended to config.toml, no other line of it changed, no drop-in and no
# copy of the file (its credential) anywhere; containerd reads the node's
# own settings and the handlers; a second run changes nothing; a credential
# rotated and a CRI key changed in config.toml afterwards both reach what
# containerd reads (no run of configure needed); handlers containerd cannot
# read leave config.toml as it was.
configure() {
	"$NSGUARD" configure --bindir "$CD/bin" --file "$CD/config.toml" \
		--extra "$CD/base-spec.toml" --extra "$CD/wide.toml" "$@" containerd >"$CD/configure.out" 2>&1
}
case_configure() {
	local dump before want
	cp -p "$CD/config.toml" "$CD/config.toml.before-test"
	configure || { CT_WHY="nsguard configure containerd: $(cat "$CD/configure.out")"; return 1; }
	dump=$(containerd --config "$CD/config.toml" config dump 2>&1) ||
		{ CT_WHY="config dump after configure: $(tail -n 2 <<<"$dump")"; return 1; }
	local sandbox="sandbox_image = \"$IMAGE\""
	[ "$CD_V" = 3 ] && sandbox="sandbox = '$IMAGE'"
	for want in "$sandbox" "snapshotter = ${Q}native$Q" "default_runtime_name = ${Q}runc$Q" \
		"password = ${Q}S3CRET-TOKEN$Q" "[$RT.containerd.runtimes.runc]" \
		"BinaryName = $Q$CD/bin/nsguard-runtime-audit$Q" \
		"[$RT.containerd.runtimes.nsguard-spec]" "base_runtime_spec = $Q$CD/nsguard-base-spec$V3.json$Q"; do
		grep -qF -- "$want" <<<"$dump" || { CT_WHY="the merged config lacks $want"; return 1; }
	done
	want_eq "config.toml's lines changed or removed" \
		"$(diff "$CD/config.toml.before-test" "$CD/config.toml" | grep -c '^<')" 0 || return 1
	want_eq "config.toml's mode" "$(stat -c %a "$CD/config.toml")" 600 || return 1
	want_eq "files with the credential" "$(grep -rl S3CRET-TOKEN "$CD" | grep -v '\.before-test$')" "$CD/config.toml" ||
		return 1
	before=$(md5sum <"$CD/config.toml")
	configure || { CT_WHY="second run: $(cat "$CD/configure.out")"; return 1; }
	want_eq "a second run" "$(md5sum <"$CD/config.toml")" "$before" || return 1
	# The admin rotates the credential and changes a CRI key afterwards.
	sub "$CD/config.toml" "password = ${Q}S3CRET-TOKEN$Q" "password = ${Q}ROTATED-TOKEN$Q"
	sub "$CD/config.toml" 'max_container_log_line_size = 16384' 'max_container_log_line_size = 16385'
	dump=$(containerd --config "$CD/config.toml" config dump 2>&1)
	for want in "password = ${Q}ROTATED-TOKEN$Q" 'max_container_log_line_size = 16385' \
		"BinaryName = $Q$CD/bin/nsguard-runtime$Q"; do
		grep -qF -- "$want" <<<"$dump" || { CT_WHY="after the admin's edits, the merged config lacks $want"; return 1; }
	done
	! grep -q S3CRET <<<"$dump" || { CT_WHY="the old credential is still read"; return 1; }
	# Handlers containerd cannot read (a table twice): refused, config.toml kept.
	before=$(md5sum <"$CD/config.toml")
	# (One version line: nsguard refuses two before containerd reads them.)
	{ cat "$CD/runtimes.toml"; grep -v '^version' "$CD/runtimes.toml"; } |
		sed 's/runtimes\.nsguard/runtimes.nsguard-twice/' >"$CD/twice.toml"
	if configure --extra "$CD/twice.toml"; then
		CT_WHY="handlers with a table twice were written"
		return 1
	fi
	want_eq "config.toml after a refused run" "$(md5sum <"$CD/config.toml")" "$before" || return 1
	[ -z "$(find "$CD" -name '*nsguard-new*')" ] || { CT_WHY="debris: $(find "$CD" -name '*nsguard-new*')"; return 1; }
	[ -z "$(ls -A "$CD/conf.d")" ] || { CT_WHY="conf.d: $(ls "$CD/conf.d")"; return 1; }
}

# The shipped base spec is this containerd's default spec plus the hooks.
case_base_spec() {
	local got want
	want=$(ctr oci spec | "$JQ" -S .) || { CT_WHY="ctr oci spec failed"; return 1; }
	got=$("$JQ" -S 'del(.hooks)' "$EXAMPLES/nsguard-base-spec$V3.json.in")
	want_eq "examples/containerd/nsguard-base-spec$V3.json.in without hooks" \
		"$(md5sum <<<"$got")" "$(md5sum <<<"$want")"
}

# The test rootfs as an image, imported offline.
cd_image() {
	ct_image_archive "$CD" "$IMAGE" &&
		"${IMPORT[@]}" "$CD/image.tar" >"$CD/import.log" 2>&1
}

cd_start() {
	local i
	containerd --config "$CD/config.toml" >"$CD/log" 2>&1 &
	CD_PID=$!
	for ((i = 0; i < 600; i++)); do
		grep -q 'containerd successfully booted' "$CD/log" && return 0
		kill -0 "$CD_PID" 2>/dev/null || break
		sleep 0.1
	done
	return 1
}

cd_cleanup() {
	local id
	if [ -n "$CD_PID" ]; then
		for id in $("${CTR[@]}" task ls -q 2>/dev/null); do
			"${CTR[@]}" task kill -s KILL "$id" >/dev/null 2>&1
		done
		kill "$CD_PID" 2>/dev/null
		wait "$CD_PID" 2>/dev/null
	fi
	find "$CT_CGFS/kubepods" -depth -type d -exec rmdir {} + 2>/dev/null
	[ -z "$VARLIB" ] || umount "$VARLIB"
	ct_cleanup
}

# cri NAME KIND [OPTIONS...]: one scenario, its PASS/FAIL lines as they come.
cri() {
	local name=$1 out rc
	shift
	out=$(mktemp)
	/usr/bin/python3 "$CLIENT" --socket "$CD_SOCK" --state "$CD_RUN/state" --image "$IMAGE" \
		--logs "$CD/logs" --nsguard "$self" --monlog "$CT_MONLOG" "$@" "$name" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	if [ "$rc" != 0 ] && ! grep -q '^FAIL: ' "$out"; then
		fail "cri/$name" "cri-client exited $rc: $(tail -n 3 "$out" | tr '\n' '|')"
	fi
	rm -f "$out"
}

for p in containerd ctr containerd-shim-runc-v2 runc; do
	command -v "$p" >/dev/null || setup_fail "$p not found (make deps-test)"
done
/usr/bin/python3 -c 'import grpc' 2>/dev/null || setup_fail "python3-grpcio missing (make deps-test)"
[ -r "$NSG_REPO/build/cri/api_pb2.py" ] || setup_fail "build/cri/api_pb2.py missing (make)"
echo "# $(containerd --version), $(runc --version | head -n 1)"
cd_config
cd_wrappers
trap cd_cleanup EXIT
ct_case cri/configure-in-place case_configure
ct_case cri/base-spec-is-default-spec case_base_spec
cd_start || setup_fail "containerd did not start: $(tail -n 3 "$CD/log")"
cd_image || setup_fail "image import failed: $(tail -n 3 "$CD/import.log")"
# make image's archive (#42 item 3) as a node imports it: the name and the
# digest in its index.json, and the image's own nsguard runs (static: the
# image has no libc).
case_nsguard_image() {
	local idx=$NSG_REPO/build/image/oci/index.json tars name want got out
	tars=("$NSG_REPO"/build/nsguard-image-*.tar)
	if [ ! -r "${tars[0]}" ] || [ ! -r "$idx" ]; then
		CT_WHY="no build/nsguard-image-*.tar (make image)"
		return 1
	fi
	name=$(jq -r '.manifests[0].annotations["io.containerd.image.name"]' "$idx")
	want=$(jq -r '.manifests[0].digest' "$idx")
	out=$("${IMPORT[@]}" "${tars[0]}" 2>&1) ||
		{ CT_WHY="ctr images import: $(tail -n 2 <<<"$out" | tr '\n' '|')"; return 1; }
	got=$("${CTR[@]}" images ls "name==$name" 2>/dev/null | awk -v n="$name" '$1 == n { print $3 }')
	want_eq "the digest of $name" "$got" "$want" || return 1
	# (Standard output alone: 2.x's ctr warns of deprecated config keys.)
	out=$("${CTR[@]}" run --rm --snapshotter native "$name" nsg-image-version \
		/payload/usr/local/bin/nsguard --version 2>"$CD/ctr-run.err") ||
		{ CT_WHY="ctr run $name nsguard --version: $(tail -n 2 "$CD/ctr-run.err" | tr '\n' '|')"; return 1; }
	[[ $out == "nsguard "* ]] || { CT_WHY="the image's nsguard --version said: $out"; return 1; }
	out=$("${CTR[@]}" run --rm --snapshotter native "$name" nsg-image-sh /bin/sh -c 'echo sh-ok' 2>"$CD/ctr-run.err")
	want_eq "the image's /bin/sh" "$out" sh-ok
}
ct_case cri/nsguard-image-imported case_nsguard_image
# As a node's nsguard-load.service does at boot; then the events' reader.
"$NSGUARD" load >"$CD/load.log" 2>&1 || setup_fail "nsguard load: $(tail -n 2 "$CD/load.log")"
ct_monitor_ensure
[ -n "$CT_MON_PID" ] || setup_fail "nsguard monitor did not start (no pins after nsguard load)"

# Every tier a RuntimeClass handler: the pod starts, sandbox included, and
# its container runs with the tier's policy.
cri tier-nsguard tier --handler nsguard --mode deny
cri tier-nsguard-audit tier --handler nsguard-audit --mode audit
cri tier-nsguard-allow tier --handler nsguard-allow --mode allow
cri tier-runc tier --handler runc --mode none
# base_runtime_spec: containerd builds the sandbox without it.
cri tier-nsguard-spec tier --handler nsguard-spec --mode deny --sandbox-mode none
# Pod annotations choose within nsguard.conf's limits...
cri annotation-audit tier --handler nsguard --mode audit --pod-annotation nsguard.io/userns=audit
# ... and beyond them the pod does not start (its sandbox carries them too).
cri annotation-over-limit refused --handler nsguard --pod-annotation nsguard.io/userns=allow \
	--want-error nsguard --want-error allowed-modes --at sandbox
# The pod's namespace picks its nsguard.conf section (#42)...
cri ns-section tier --handler nsguard --mode audit --section namespace:nsg-ns-section
# ... read only from containerd's own key: a pod elsewhere that claims the
# section's namespace (passed through by the wide handler, and under the key
# containerd does not write too) gets the node's policy.
cri ns-forged tier --handler nsguard-wide --mode deny --section node \
	--pod-annotation io.kubernetes.cri.sandbox-namespace=nsg-ns-section \
	--pod-annotation io.kubernetes.pod.namespace=nsg-ns-section \
	--spec-annotation io.kubernetes.pod.namespace=nsg-ns-section
# A glob section takes the namespaces it matches...
cri ns-glob tier --handler nsguard --mode audit --namespace nsg-globbed-ok \
	--section 'namespace:nsg-globbed-*'
# ... but no name that is not a Kubernetes namespace, whatever it matches: one
# named like the glob itself, one of 64 bytes, and an empty one (containerd
# writes it over the pod's claim, which nsguard then does not fall back to).
cri ns-named-like-glob tier --handler nsguard --mode deny --section node \
	--namespace 'nsg-globbed-*' --shown-namespace 'nsg-globbed-?'
cri ns-64-bytes tier --handler nsguard --mode deny --section node \
	--namespace "nsg-globbed-$(printf 'a%.0s' {1..52})"
cri ns-empty tier --handler nsguard-wide --mode deny --section node --namespace '' \
	--shown-namespace '' --pod-annotation io.kubernetes.cri.sandbox-namespace=nsg-globbed-x
# No annotation a tenant sets exempts a container or renames it.
cri tenant-annotations tenant --handler nsguard-wide
cri two-containers-restart pod --handler nsguard
# A privileged container: the host-capabilities refusal, named in the CRI
# error.  containerd 2.x mounts a privileged pod's sandbox's /sys
# read-write (podsandbox/sandbox_run.go), so that pod stops at its sandbox.
if [ "$CD_V" = 3 ]; then
	cri privileged refused --handler nsguard --privileged --want-error nsguard \
		--want-error 'is a writable sysfs' --at sandbox
else
	cri privileged refused --handler nsguard --privileged --want-error nsguard \
		--want-error CAP_SYS_ADMIN
fi
# shareProcessNamespace: the container's init is not pid 1 of the pid
# namespace it shares with the sandbox, and runs as the host's root.
cri shared-pid-namespace refused --handler nsguard --share-pid --want-error nsguard \
	--want-error 'not pid 1 of its pid namespace'
# monitor --namespace, alone on the events (one reader takes each event):
# the first pod's event, not the second's.
ct_monitor_stop
"$NSGUARD" monitor --json --namespace nsg-monitor-namespace-shown >"$CD/filtered.jsonl" 2>&1 &
filtered=$!
cri monitor-namespace filter --handler nsguard-audit --monlog "$CD/filtered.jsonl"
kill "$filtered"
wait "$filtered" 2>/dev/null
ct_monitor_ensure
# The CRI default seccomp profile refuses unshare before nsguard sees it.
cri seccomp-runtime-default seccomp --handler nsguard-audit
# Pods with their own user namespace (hostUsers: false; containerd 2.x's
# CRI, on a kernel with idmapped mounts of tmpfs, where containerd's root
# and state are here): guarded under deny, the pod's own user namespace
# never refused, a nested one refused; on plain runc the same nested one
# is created (the refusal above is nsguard's, not the kernel's).
if [ "$CD_V" = 3 ]; then
	cri userns-deny userns --handler nsguard --mode deny --userns 131072
	cri userns-runc userns --handler runc --mode none --userns 196608
else
	skip "cri/userns" "containerd $(containerd --version | cut -d' ' -f3): pod user namespaces are containerd 2.x's (current userland)"
fi

ct_case cri/nothing-left assert_clean
