#!/bin/bash
# Host tests of `nsguard configure` and `unconfigure` (#31 item 1): they only
# edit the runtimes' files (Docker's daemon.json, podman's hooks.d,
# containerd's and CRI-O's drop-ins), here in a temporary directory; nothing
# reaches bpf().  That dockerd and podman
# then run guarded containers is shown in the guest (client-docker.sh).
# The conditions are strings check() evaluates (SC2016).
# shellcheck source=integration/tests/lib.sh disable=SC1091,SC2016
. "$(dirname "$0")/../../integration/tests/lib.sh"

t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/bin" "$t/d" "$t/hooks.d"
cp "$NSGUARD" "$t/bin/nsguard" && NSG=$t/bin/nsguard
for l in nsguard-runtime nsguard-runtime-audit nsguard-runtime-allow; do ln -s nsguard "$t/bin/$l"; done
J=$t/d/daemon.json

# run CMD...: rc, out, err.
run() { capture "$t" "$@"; }
# check NAME 'CONDITION': PASS when the condition (shell, evaluated) holds.
check() {
	local name=$1
	shift
	if eval "$1"; then
		pass "cli/configure/$name"
	else
		fail "cli/configure/$name" "rc $rc; out: ${out:0:300}; err: ${err:0:300}"
	fi
}
dk() { run "$NSG" "$1" --bindir "$t/bin" --file "$J" "${@:2}" docker; }

# An admin's daemon.json: its own formatting, keys, a runtime of its own.
cat >"$J" <<'EOF'
{"log-level": "warn",
   "max-concurrent-downloads": 3, "default-ulimits": {"nofile": {"Name": "nofile", "Hard": 65536, "Soft": 65536}},
 "runtimes": {"kata": {"path": "/usr/bin/kata-runtime", "runtimeArgs": ["--debug"]}}}
EOF
chmod 640 "$J"
cp -p "$J" "$t/before"

dk configure --dry-run
check dry-run-lists-entries '[ "$rc" = 0 ] && [ "$(grep -c "would add runtimes.nsguard" <<<"$out")" = 3 ] &&
	grep -qF "runtimes.nsguard-audit: {\"path\": \"$t/bin/nsguard-runtime-audit\"}" <<<"$out"'
# Only nsguard's keys: none of the admin's (kata, log-level) in what it prints.
check dry-run-only-own-keys '! grep -q "kata\|log-level\|nofile" <<<"$out$err"'
check dry-run-changes-nothing 'cmp -s "$J" "$t/before" && [ -z "$(find "$t/d" -name '\''.*nsguard*'\'')" ]'

dk configure
check configure '[ "$rc" = 0 ] && [[ $out == *"configured (3 runtimes)"* ]]'
check keeps-other-keys '[ "$(jq -c '\''[."log-level", ."max-concurrent-downloads", ."default-ulimits", .runtimes.kata]'\'' "$J")" = \
	'\''["warn",3,{"nofile":{"Name":"nofile","Hard":65536,"Soft":65536}},{"path":"/usr/bin/kata-runtime","runtimeArgs":["--debug"]}]'\'' ]'
check runtimes '[ "$(jq -r '\''.runtimes | [.nsguard.path, ."nsguard-audit".path, ."nsguard-allow".path] | join(" ")'\'' "$J")" = \
	"$t/bin/nsguard-runtime $t/bin/nsguard-runtime-audit $t/bin/nsguard-runtime-allow" ]'
check mode-kept '[ "$(stat -c %a "$J")" = 640 ]'
cp -p "$J" "$t/configured"
dk configure
check idempotent '[ "$rc" = 0 ] && [[ $out == *"already configured"* ]] && cmp -s "$J" "$t/configured"'

dk unconfigure
check unconfigure-byte-identical '[ "$rc" = 0 ] && cmp -s "$J" "$t/before" && [ "$(stat -c %a "$J")" = 640 ]'
check unconfigure-no-side-files '[ -z "$(find "$t/d" -name '\''.*nsguard*'\'')" ]'

# Changed by the admin after configure: only nsguard's entries go.
dk configure --tiers nsguard
check tiers '[ "$rc" = 0 ] && [ "$(jq -r '\''.runtimes | keys | join(" ")'\'' "$J")" = "kata nsguard" ]'
jq '. + {"debug": true}' "$J" >"$t/edited" && cat "$t/edited" >"$J"
dk unconfigure
check unconfigure-after-edit '[ "$rc" = 0 ] && [ "$(jq -c '\''[.debug, (.runtimes | keys)]'\'' "$J")" = '\''[true,["kata"]]'\'' ]'

# A daemon.json laid out by hand: configure adds nsguard's lines and changes
# no other byte (diff: added lines only); the admin edits it afterwards, and
# unconfigure takes out exactly nsguard's lines.
printf '{\n    "log-level":"warn",\n    "runtimes": {\n        "kata": {"path": "/usr/bin/kata-runtime"}\n    },\n    "debug" : false\n}\n' >"$J"
cp "$J" "$t/before"
dk configure
diff "$t/before" "$J" >"$t/diff"
check minimal-diff-into-runtimes '[ "$rc" = 0 ] && [ "$(grep -c "^>" "$t/diff")" = 3 ] && ! grep -q "^<" "$t/diff" &&
	[ "$(grep -c "^>         \"nsguard[a-z-]*\": {\"path\": \"$t/bin/nsguard-runtime[a-z-]*\"},\$" "$t/diff")" = 3 ] &&
	[ "$(jq -c '\''.runtimes | keys'\'' "$J")" = '\''["kata","nsguard","nsguard-allow","nsguard-audit"]'\'' ]'
sed -i 's/"debug" : false/"debug" : true/' "$J"
sed 's/"debug" : false/"debug" : true/' "$t/before" >"$t/want"
dk unconfigure
check minimal-diff-unconfigure-after-edit '[ "$rc" = 0 ] && cmp -s "$J" "$t/want"'
printf '{\n\t"log-level": "warn",\n\t"debug": false\n}\n' >"$J"
cp "$J" "$t/before"
dk configure
diff "$t/before" "$J" >"$t/diff"
check minimal-diff-new-runtimes '[ "$rc" = 0 ] && ! grep -q "^<" "$t/diff" && [ "$(grep -c "^>" "$t/diff")" = 5 ] &&
	grep -qx "> 	\"runtimes\": {" "$t/diff" && grep -qx "> 		\"nsguard\": {\"path\": \"$t/bin/nsguard-runtime\"}," "$t/diff" &&
	[ "$(jq -c '\''[."log-level", .debug, (.runtimes | length)]'\'' "$J")" = '\''["warn",false,3]'\'' ]'
sed -i 's/"warn"/"info"/' "$J"
sed 's/"warn"/"info"/' "$t/before" >"$t/want"
dk unconfigure
check minimal-diff-new-runtimes-unconfigure '[ "$rc" = 0 ] && cmp -s "$J" "$t/want"'
rm -f "$J"

# No daemon.json before: configure creates it, unconfigure removes it.
rm -f "$J"
dk configure
check configure-creates '[ "$rc" = 0 ] && [ "$(jq -r '\''.runtimes | keys | length'\'' "$J")" = 3 ]'
dk unconfigure
check unconfigure-removes-created '[ "$rc" = 0 ] && [ ! -e "$J" ]'

# What dockerd (Go's encoding/json) could read otherwise is refused, unchanged.
printf '{"runtimes": {}, "Runtimes": {"nsguard": {"path": "/tmp/evil"}}}\n' >"$J"
cp "$J" "$t/before"
dk configure
check refuses-folded-key '[ "$rc" = 1 ] && [[ $err == *"unchanged"* ]] && cmp -s "$J" "$t/before"'
printf '{"runtimes": [}' >"$J"
cp "$J" "$t/before"
dk configure
check refuses-unparsable '[ "$rc" = 1 ] && cmp -s "$J" "$t/before"'
rm -f "$J"
mkdir -p "$t/nowhere"
run "$NSG" configure --bindir "$t/nowhere" --file "$J" docker
check refuses-missing-links '[ "$rc" = 1 ] && [[ $err == *"nsguard-runtime"* ]] && [ ! -e "$J" ]'

# Numbers jv would not write back exactly (dockerd's int64 limits): refused.
printf '{"default-ulimits": {"nofile": {"Name": "nofile", "Hard": 9223372036854775807, "Soft": 1024}}}\n' >"$J"
cp "$J" "$t/before"
dk configure
check refuses-inexact-number '[ "$rc" = 1 ] && [[ $err == *"would not be written back exactly"* ]] && cmp -s "$J" "$t/before"'
# An nsguard-named runtime the admin set up otherwise: left alone.
printf '{"runtimes": {"nsguard": {"path": "%s", "runtimeArgs": ["--config", "/etc/nsguard/strict.conf"]}}}\n' \
	"$t/bin/nsguard-runtime" >"$J"
cp "$J" "$t/before"
dk configure
check refuses-admins-entry '[ "$rc" = 1 ] && [[ $err == *"other settings"* ]] && cmp -s "$J" "$t/before"'
dk unconfigure
check unconfigure-keeps-admins-entry '[ "$rc" = 0 ] && cmp -s "$J" "$t/before"'
rm -f "$J"
# Root would run what another user can change: refused.
mkdir -p "$t/loose" && chmod 775 "$t/loose" && chgrp 65534 "$t/loose" 2>/dev/null
cp "$NSG" "$t/loose/nsguard"
for l in nsguard-runtime nsguard-runtime-audit nsguard-runtime-allow; do ln -s nsguard "$t/loose/$l"; done
run "$NSG" configure --bindir "$t/loose" --file "$J" docker
check refuses-untrusted-bindir '[ "$rc" = 1 ] && [[ $err == *"is not root'"'"'s alone"* ]] && [ ! -e "$J" ]'
# A bindir reached through a symbolic link: the runtime is told the real
# directory, never the link, which its owner could point elsewhere later.
ln -s "$t/bin" "$t/binlink"
run "$NSG" configure --bindir "$t/binlink" --file "$t/linkhooks" podman
check bindir-resolved '[ "$rc" = 0 ] && [ "$(jq -r .hook.path "$t/linkhooks/nsguard-createRuntime.json")" = "$t/bin/nsguard" ]'
rm -rf "$t/linkhooks" "$t/binlink"

# podman: the hooks.d files naming this binary.
pm() { run "$NSG" "$1" --bindir "$t/bin" --file "$t/hooks.d" "${@:2}" podman; }
pm configure
check podman-configure '[ "$rc" = 0 ] &&
	[ "$(jq -r '\''[.hook.path, .hook.args[2], .stages[0], .when.always] | join(" ")'\'' "$t/hooks.d/nsguard-createRuntime.json")" = \
		"$t/bin/nsguard createRuntime createRuntime true" ] &&
	[ "$(jq -r .stages[0] "$t/hooks.d/nsguard-poststop.json")" = poststop ]'
pm configure
check podman-idempotent '[ "$rc" = 0 ] && [[ $out == *"already configured"* ]]'
echo ' ' >>"$t/hooks.d/nsguard-poststop.json"
pm unconfigure
check podman-edited-left-alone '[ "$rc" = 1 ] && [ -e "$t/hooks.d/nsguard-poststop.json" ]'
rm "$t/hooks.d/nsguard-poststop.json"
pm unconfigure
check podman-unconfigure '[ "$rc" = 0 ] && [ -z "$(ls -A "$t/hooks.d")" ]'

# cri-o: its own hooks directory and a drop-in adding it to hooks_dir.  No
# CRI-O here: a stand-in `crio config` prints hooks_dir as CRI-O would, from
# crio.conf and then crio.conf.d/*.conf in lexical order, the last one
# setting it winning (crio.conf.d(5)).
R=$t/crio
mkdir -p "$R/crio.conf.d"
cat >"$R/crio" <<EOF
#!/bin/bash
dir=$R/crio.conf.d
[ "\$1" = --config-dir ] && { dir=\$2; shift 2; }
[ "\$1" = config ] || exit 2
last=
for f in "$R/crio.conf" "\$dir"/*.conf; do
	[ -e "\$f" ] && grep -q '^hooks_dir' "\$f" && last=\$f
done
echo '# CRI-O config (stand-in)'
echo '[crio.runtime]'
if [ -z "\$last" ]; then
	# CRI-O 1.21 and later: a setting at its default, commented out.
	printf '# hooks_dir = [\\n# \\t"/usr/share/containers/oci/hooks.d",\\n# ]\\n'
else
	sed -n '/^hooks_dir/,/]/p' "\$last"
fi
EOF
chmod +x "$R/crio"
co() { run "$NSG" "$1" --bindir "$t/bin" --crio "$R/crio" --file "$R/crio.conf.d/99-nsguard.conf" "${@:2}" cri-o; }
co configure
check crio-configure-default '[ "$rc" = 0 ] && [ "$("$R/crio" config | grep -c "^  \"")" = 2 ] &&
	"$R/crio" config | grep -q "^  \"/usr/share/containers/oci/hooks.d\","'
co unconfigure
printf '[crio.runtime]\nhooks_dir = [\n  "/usr/share/containers/oci/hooks.d",\n  "/opt/vendor/hooks.d",\n]\n' >"$R/crio.conf"
co configure --dry-run
check crio-dry-run '[ "$rc" = 0 ] && grep -q "^+  \"$R/nsguard-hooks.d\"," <<<"$out" && [ ! -e "$R/crio.conf.d/99-nsguard.conf" ] && [ -z "$(ls -A "$R/nsguard-hooks.d")" ]'
co configure
check crio-configure '[ "$rc" = 0 ] && [ "$("$R/crio" config | grep -c "^  \"")" = 3 ] &&
	"$R/crio" config | grep -q "^  \"/opt/vendor/hooks.d\"," && "$R/crio" config | grep -q "^  \"$R/nsguard-hooks.d\"," &&
	[ "$(jq -r .hook.path "$R/nsguard-hooks.d/nsguard-createRuntime.json")" = "$t/bin/nsguard" ] &&
	[ "$(jq -r .stages[0] "$R/nsguard-hooks.d/nsguard-poststop.json")" = poststop ]'
md5=$(md5sum <"$R/crio.conf.d/99-nsguard.conf")
co configure
check crio-idempotent '[ "$rc" = 0 ] && [[ $out == *"already configured"* ]] && [ "$(md5sum <"$R/crio.conf.d/99-nsguard.conf")" = "$md5" ]'
# The admin changes hooks_dir afterwards: the next run carries it.
sed -i 's|/opt/vendor/hooks.d|/opt/other/hooks.d|' "$R/crio.conf"
co configure
check crio-carries-later-change '[ "$rc" = 0 ] && "$R/crio" config | grep -q "^  \"/opt/other/hooks.d\"," &&
	! "$R/crio" config | grep -q vendor && "$R/crio" config | grep -q "^  \"$R/nsguard-hooks.d\","'
# A dry run with the drop-in in place leaves the live directory alone: the
# stand-in fails if it is ever missing from there.
cp "$R/crio" "$R/crio.real"
sed -i "2i [ -e $R/crio.conf.d/99-nsguard.conf ] || exit 9" "$R/crio"
co configure --dry-run
check crio-dry-run-live-dir-untouched '[ "$rc" = 0 ] && [[ $out == *"already configured"* ]]'
mv "$R/crio.real" "$R/crio"
co unconfigure
check crio-unconfigure '[ "$rc" = 0 ] && [ -z "$(ls -A "$R/crio.conf.d")" ] && [ -z "$(ls -A "$R/nsguard-hooks.d")" ]'
# An admin's drop-in sorting after nsguard's sets hooks_dir: CRI-O would not
# read nsguard's directory, so nothing is left.
printf 'hooks_dir = ["/etc/admin/hooks.d"]\n' >"$R/crio.conf.d/zz-admin.conf"
co configure
check crio-not-read-left-as-was '[ "$rc" = 1 ] && [[ $err == *"does not list"* ]] && [ ! -e "$R/crio.conf.d/99-nsguard.conf" ] &&
	[ -z "$(ls -A "$R/nsguard-hooks.d")" ]'
# A list nsguard cannot read as CRI-O does (an escape) is refused.
printf 'hooks_dir = ["/etc/a\\u0041"]\n' >"$R/crio.conf.d/zz-admin.conf"
co configure
check crio-refuses-escapes '[ "$rc" = 1 ] && [[ $err == *"escape"* ]] && [ ! -e "$R/crio.conf.d/99-nsguard.conf" ]'
printf "hooks_dir = ['/etc/lit\"eral']\\n" >"$R/crio.conf.d/zz-admin.conf"
co configure
check crio-refuses-single-quoted '[ "$rc" = 1 ] && [[ $err == *"double-quoted"* ]] && [ ! -e "$R/crio.conf.d/99-nsguard.conf" ]'
rm "$R/crio.conf.d/zz-admin.conf"
echo '[crio.runtime]' >"$R/crio.conf.d/99-nsguard.conf"
co configure
check crio-not-ours-left-alone '[ "$rc" = 1 ] && [[ $err == *"not nsguard'"'"'s drop-in"* ]] &&
	[ "$(cat "$R/crio.conf.d/99-nsguard.conf")" = "[crio.runtime]" ]'
rm "$R/crio.conf.d/99-nsguard.conf"

# --dry-run as any user, with a fresh build's binary alone (no links, no
# share files) and a --bindir not there yet: what it would add, nothing written.
mkdir -p "$t/fresh" "$t/pub" && chmod 755 "$t" "$t/fresh" "$t/pub" && cp "$NSGUARD" "$t/fresh/nsguard"
nobody() { run setpriv --reuid 65534 --regid 65534 --clear-groups "$@"; }
printf '{"log-level": "warn"}\n' >"$t/pub/daemon.json" && chmod 644 "$t/pub/daemon.json"
nobody "$t/fresh/nsguard" configure --dry-run --bindir /opt/nsg/bin --file "$t/pub/daemon.json" docker
check docker-dry-run-any-user '[ "$rc" = 0 ] && [ "$(grep -c "would add runtimes.*/opt/nsg/bin/nsguard-runtime" <<<"$out")" = 3 ] &&
	[ "$(cat "$t/pub/daemon.json")" = "{\"log-level\": \"warn\"}" ] && [ "$(ls -A "$t/pub")" = daemon.json ]'

run "$NSG" configure --bindir "$t/bin" nosuch
check unknown-runtime '[ "$rc" = 2 ]'

# containerd: config.toml edited in place, nsguard's handler tables in a
# block of their own at its end (nothing else changes: no copy of the CRI
# section, none of its secrets in a second file).  What containerd reads is
# containerd's own `containerd config dump` (its TOML reader and import
# merge; no daemon runs here; client-cri.sh starts pods through it).
if command -v containerd >/dev/null; then
	C=$t/ctd
	mkdir -p "$C/conf.d"
	chmod 755 "$t" "$C" "$C/conf.d" "$t/bin"
	# A node's config.toml: imports conf.d, a registry credential last, no
	# final newline (the block must not change that line either).
	containerd config default | sed "s|^imports = \[\]|imports = [\"$C/conf.d/*.toml\"]|" >"$C/config.toml"
	printf '\n[plugins."io.containerd.grpc.v1.cri".registry.configs."r.example".auth]\n  password = "S3CRET-TOKEN"' >>"$C/config.toml"
	chmod 644 "$C/config.toml"
	cp -p "$C/config.toml" "$t/ctd-before"
	ct() { run "$NSG" "$1" --bindir "$t/bin" --file "$C/config.toml" "${@:2}" containerd; }
	dump() { containerd --config "$C/config.toml" config dump; }
	# --dry-run as any user, on a fresh build (no share files, no links
	# needed), honouring --bindir; nothing written, no secret printed.
	nobody "$t/fresh/nsguard" configure --dry-run --bindir /opt/nsg/bin --file "$C/config.toml" containerd
	check containerd-dry-run-any-user '[ "$rc" = 0 ] &&
		grep -qxF "+    BinaryName = \"/opt/nsg/bin/nsguard-runtime-audit\"" <<<"$out" &&
		[ "$(grep -c "^+.*BinaryName" <<<"$out")" = 3 ]'
	check containerd-dry-run-no-secret '! grep -q "S3CRET\|sandbox_image\|registry" <<<"$out$err"'
	check containerd-dry-run-writes-nothing 'cmp -s "$C/config.toml" "$t/ctd-before" &&
		[ -z "$(ls -A "$C/conf.d")" ] && [ "$(ls -A "$C")" = "$(printf "conf.d\nconfig.toml")" ]'
	chmod 600 "$C/config.toml"
	nobody "$t/fresh/nsguard" configure --dry-run --file "$C/config.toml" containerd
	check containerd-dry-run-unreadable '[ "$rc" = 1 ] && [[ $err == "nsguard: $C/config.toml: Permission denied"* ]] && [ -z "$out" ]'
	chmod 644 "$C/config.toml"

	ct configure
	diff "$t/ctd-before" "$C/config.toml" >"$t/diff"
	# The line that had no newline gets one (the diff shows it once on each side).
	check containerd-configure '[ "$rc" = 0 ] && dump | grep -qF "BinaryName = \"$t/bin/nsguard-runtime-audit\"" &&
		[ -z "$(ls -A "$C/conf.d")" ] && [ "$(stat -c %a "$C/config.toml")" = 644 ]'
	check containerd-minimal-diff '[ "$(grep "^<" "$t/diff")" = "<   password = \"S3CRET-TOKEN\"" ] &&
		[ "$(grep -c "^>.*S3CRET" "$t/diff")" = 1 ] && [ "$(grep -v "^[<>-]\|^[0-9]" "$t/diff")" = "\\ No newline at end of file" ] &&
		! grep -q "^>.*\(sandbox_image\|registry\)" "$t/diff"'
	# shellcheck disable=SC2034 # read by the condition
	md5=$(md5sum <"$C/config.toml")
	ct configure
	check containerd-idempotent '[ "$rc" = 0 ] && [[ $out == *"already configured"* ]] && [ "$(md5sum <"$C/config.toml")" = "$md5" ]'
	# After configure the admin rotates the credential and changes a CRI key:
	# containerd reads both, and nsguard's handlers still.
	edit() { sed -i 's/S3CRET-TOKEN/ROTATED-TOKEN/; s/max_container_log_line_size = 16384/max_container_log_line_size = 16385/' "$@"; }
	edit "$C/config.toml"
	dump >"$t/dump"
	check containerd-sees-later-edits 'grep -qx " *password = \"ROTATED-TOKEN\"" "$t/dump" && ! grep -q S3CRET "$t/dump" &&
		grep -qx " *max_container_log_line_size = 16385" "$t/dump" &&
		grep -qF "BinaryName = \"$t/bin/nsguard-runtime\"" "$t/dump"'
	ct unconfigure
	cp -p "$t/ctd-before" "$t/want" && edit "$t/want"
	check containerd-unconfigure-exact '[ "$rc" = 0 ] && cmp -s "$C/config.toml" "$t/want" && [ "$(stat -c %a "$C/config.toml")" = 644 ]'
	ct unconfigure
	check containerd-unconfigure-again '[ "$rc" = 0 ] && [[ $out == *"nothing of nsguard"* ]] && cmp -s "$C/config.toml" "$t/want"'

	# containerd's own default (imports = [], a final newline): no import needed.
	containerd config default >"$C/config.toml"
	cp -p "$C/config.toml" "$t/ctd-before"
	ct configure
	check containerd-no-imports-needed '[ "$rc" = 0 ] && dump | grep -qF "BinaryName = \"$t/bin/nsguard-runtime-allow\"" &&
		[ "$(diff "$t/ctd-before" "$C/config.toml" | grep -c "^[<-]")" = 0 ]'
	ct unconfigure
	check containerd-unconfigure-default '[ "$rc" = 0 ] && cmp -s "$C/config.toml" "$t/ctd-before"'

	# An import with a CRI section would replace config.toml's, handlers and
	# all: refused, dry run too, nothing changed.
	containerd config default | sed "s|^imports = \[\]|imports = [\"$C/conf.d/*.toml\"]|" >"$C/config.toml"
	cp -p "$C/config.toml" "$t/ctd-before"
	printf 'version = 2\n[plugins."io.containerd.grpc.v1.cri"]\n  sandbox_image = "other:1"\n' >"$C/conf.d/admin.toml"
	ct configure --dry-run
	check containerd-dry-run-checks-imports '[ "$rc" = 1 ] && [[ $err == *"admin.toml, which"*"has a CRI plugin section"* ]]'
	ct configure
	check containerd-refuses-cri-import '[ "$rc" = 1 ] && [[ $err == *"has a CRI plugin section"* ]] && cmp -s "$C/config.toml" "$t/ctd-before"'
	rm "$C/conf.d/admin.toml"
	# An earlier nsguard's drop-in (a stale copy of the CRI section, an old
	# password in it) goes: containerd reads config.toml's section again.
	printf '# containerd CRI drop-in written by nsguard-cri-dropin from\nversion = 2\n[plugins."io.containerd.grpc.v1.cri"]\n  sandbox_image = "stale:1"\n' >"$C/conf.d/nsguard.toml"
	ct configure --dry-run
	check containerd-dry-run-old-dropin '[ "$rc" = 0 ] && [[ $out == *"conf.d/nsguard.toml: an earlier nsguard"*"would be removed"* ]] && [ -e "$C/conf.d/nsguard.toml" ]'
	ct configure
	check containerd-removes-old-dropin '[ "$rc" = 0 ] && [ ! -e "$C/conf.d/nsguard.toml" ] && ! dump | grep -q stale: &&
		dump | grep -qF "BinaryName = \"$t/bin/nsguard-runtime\""'
	ct unconfigure
	check containerd-unconfigure-after-migration '[ "$rc" = 0 ] && cmp -s "$C/config.toml" "$t/ctd-before"'
	# A handler of nsguard's name the admin wrote: left alone.
	printf '\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nsguard]\n  runtime_type = "io.containerd.runc.v2"\n' >>"$C/config.toml"
	cp -p "$C/config.toml" "$t/ctd-before"
	ct configure
	check containerd-refuses-admins-handler '[ "$rc" = 1 ] && [[ $err == *"the handler nsguard is there already"* ]] && cmp -s "$C/config.toml" "$t/ctd-before"'
	# A block whose end line was deleted by hand: refused, unchanged.
	containerd config default >"$C/config.toml"
	ct configure
	sed -i '/^# <<< nsguard configure containerd$/d' "$C/config.toml"
	cp -p "$C/config.toml" "$t/ctd-before"
	ct unconfigure
	check containerd-refuses-broken-block '[ "$rc" = 1 ] && [[ $err == *"edited by hand"* ]] && cmp -s "$C/config.toml" "$t/ctd-before"'
	# Not what the real run writes: links missing under --bindir.
	containerd config default >"$C/config.toml"
	cp -p "$C/config.toml" "$t/ctd-before"
	run "$NSG" configure --bindir "$t/nowhere" --file "$C/config.toml" containerd
	check containerd-refuses-missing-links '[ "$rc" = 1 ] && [[ $err == *"$t/nowhere/nsguard-runtime"* ]] && cmp -s "$C/config.toml" "$t/ctd-before"'
	if [ -z "$(find "$C" -name '*nsguard-new*')" ]; then
		pass cli/configure/containerd-no-debris
	else
		fail cli/configure/containerd-no-debris "$(find "$C" -name '*nsguard-new*')"
	fi
else
	skip cli/configure/containerd "no containerd binary (make deps-test)"
fi

# containerd 2.x (config version 3; #41 item 3): the same block in place,
# in 2.x's layout (plugins."io.containerd.cri.v1.runtime"), read by 2.x's
# own `config dump` (Debian unstable's containerd of the current guest
# userland, build/rootfs-current, run here for its config commands alone:
# no daemon, no bpf()).
C2=${NSG_CONTAINERD2:-$NSG_REPO/build/rootfs-current/usr/bin/containerd}
if [ -x "$C2" ] && "$C2" --version >/dev/null 2>&1 && "$C2" config default 2>/dev/null | grep -qx 'version = 3'; then
	V=$t/ctd3
	mkdir -p "$V/conf.d"
	chmod 755 "$V" "$V/conf.d"
	T3="plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes"
	# A node's 2.x config.toml: imports conf.d (relative, as 2.x resolves
	# it), runc with SystemdCgroup = true, a registry credential last.
	"$C2" config default | sed "s|^imports = \[\]|imports = ['conf.d/*.toml']|; s|SystemdCgroup = false|SystemdCgroup = true|" \
		>"$V/config.toml"
	printf "\n[plugins.'io.containerd.cri.v1.images'.registry.configs.'r.example'.auth]\n  password = 'S3CRET-TOKEN'\n" \
		>>"$V/config.toml"
	chmod 640 "$V/config.toml"
	cp -p "$V/config.toml" "$t/v3-before"
	c3() { run "$NSG" "$1" --containerd "$C2" --bindir "$t/bin" --file "$V/config.toml" "${@:2}" containerd; }
	dump3() { "$C2" --config "$V/config.toml" config dump 2>/dev/null; }
	# opts HANDLER KEY: KEY's line in the dump's HANDLER.options table.
	opts() { awk -v t="[$T3.$1.options]" '/^ *\[/ { on = ($1 == t) } on' <(dump3) | grep -x " *$2 = .*" | sed 's/^ *//'; }

	c3 configure --dry-run
	check containerd2-dry-run '[ "$rc" = 0 ] && [ "$(grep -c "^+    BinaryName = \"$t/bin/nsguard-runtime[a-z-]*\"$" <<<"$out")" = 3 ] &&
		[ "$(grep -c "^+\[plugins.\"io.containerd.cri.v1.runtime\".containerd.runtimes.nsguard[a-z-]*\]$" <<<"$out")" = 3 ] &&
		[ "$(grep -c "^+    SystemdCgroup = true$" <<<"$out")" = 3 ] && ! grep -q "grpc.v1.cri" <<<"$out"'
	# Only nsguard's keys: every added line is the block's, none of the node's.
	check containerd2-dry-run-only-own-keys '! grep -q "S3CRET\|pinned_images\|registry\|SystemdCgroup = false" <<<"$out$err" &&
		[ "$(grep "^+" <<<"$out" | grep -v "^+++" | grep -vc "^+\($\|#\| *\[plugins.\"io.containerd.cri.v1.runtime\".containerd.runtimes.nsguard\|  runtime_type = \|  pod_annotations = \|    BinaryName = \|    SystemdCgroup = \)")" = 0 ]'
	check containerd2-dry-run-writes-nothing 'cmp -s "$V/config.toml" "$t/v3-before" && [ "$(ls -A "$V")" = "$(printf "conf.d\nconfig.toml")" ]'

	c3 configure
	diff "$t/v3-before" "$V/config.toml" >"$t/diff3"
	check containerd2-configure '[ "$rc" = 0 ] && [ "$(opts nsguard BinaryName)" = "BinaryName = '\''$t/bin/nsguard-runtime'\''" ] &&
		[ "$(opts nsguard-audit BinaryName)" = "BinaryName = '\''$t/bin/nsguard-runtime-audit'\''" ] &&
		[ "$(opts nsguard-allow BinaryName)" = "BinaryName = '\''$t/bin/nsguard-runtime-allow'\''" ] &&
		[ "$(opts nsguard-allow SystemdCgroup)" = "SystemdCgroup = true" ] && [ "$(stat -c %a "$V/config.toml")" = 640 ]'
	# The node's own settings as 2.x reads them, and only lines added.
	check containerd2-keeps-node '[ "$(opts runc SystemdCgroup)" = "SystemdCgroup = true" ] &&
		dump3 | grep -qx " *default_runtime_name = '\''runc'\''" && dump3 | grep -qx " *password = '\''S3CRET-TOKEN'\''" &&
		! grep -q "^<" "$t/diff3" && [ "$(grep -c "^>" "$t/diff3")" = 23 ] && ! grep -q "^>.*S3CRET" "$t/diff3"'
	# shellcheck disable=SC2034 # read by the condition
	md5=$(md5sum <"$V/config.toml")
	c3 configure
	check containerd2-idempotent '[ "$rc" = 0 ] && [[ $out == *"already configured"* ]] && [ "$(md5sum <"$V/config.toml")" = "$md5" ]'
	# The admin's later edits are read with the handlers.
	sed -i 's/S3CRET-TOKEN/ROTATED-TOKEN/' "$V/config.toml"
	check containerd2-sees-later-edits 'dump3 | grep -qx " *password = '\''ROTATED-TOKEN'\''" && ! dump3 | grep -q S3CRET &&
		[ "$(opts nsguard BinaryName)" = "BinaryName = '\''$t/bin/nsguard-runtime'\''" ]'
	# 2.x merges an import key by key: one with CRI settings is no
	# conflict (its key and the handlers are both read)...
	printf "version = 3\n[plugins.'io.containerd.cri.v1.images'.pinned_images]\n  sandbox = 'other:1'\n" >"$V/conf.d/admin.toml"
	check containerd2-merges-cri-import 'dump3 | grep -qx " *sandbox = '\''other:1'\''" &&
		[ "$(opts nsguard-audit BinaryName)" = "BinaryName = '\''$t/bin/nsguard-runtime-audit'\''" ]'
	c3 unconfigure
	sed 's/S3CRET-TOKEN/ROTATED-TOKEN/' "$t/v3-before" >"$t/want3"
	check containerd2-unconfigure-exact '[ "$rc" = 0 ] && cmp -s "$V/config.toml" "$t/want3" && [ "$(stat -c %a "$V/config.toml")" = 640 ]'
	c3 configure
	check containerd2-cri-import-accepted '[ "$rc" = 0 ] && [ "$(opts nsguard BinaryName)" = "BinaryName = '\''$t/bin/nsguard-runtime'\''" ]'
	c3 unconfigure
	rm "$V/conf.d/admin.toml"
	# ... but one defining a handler of nsguard's would be merged over the
	# block's: refused (dry run too), unchanged; unconfigure is not held up.
	sed "s|@BINDIR@|/elsewhere|" "$NSG_REPO/examples/containerd/nsguard-runtimes-v3.toml.in" >"$V/conf.d/nsguard.toml"
	c3 configure --dry-run
	check containerd2-dry-run-checks-imports '[ "$rc" = 1 ] && [[ $err == *"conf.d/nsguard.toml, which"*"defines a handler of nsguard'"'"'s"* ]]'
	c3 configure
	check containerd2-refuses-handler-import '[ "$rc" = 1 ] && [[ $err == *"would merge it over config.toml'"'"'s"* ]] && cmp -s "$V/config.toml" "$t/want3"'
	rm "$V/conf.d/nsguard.toml"
	# --extra: of config.toml's version only (2.x would not read version 2
	# tables in a version 3 file as the handler).
	sed "s|@CONTAINERDDIR@|$V|" "$NSG_REPO/examples/containerd/nsguard-base-spec.toml.in" >"$t/spec-v2.toml"
	sed "s|@CONTAINERDDIR@|$V|" "$NSG_REPO/examples/containerd/nsguard-base-spec-v3.toml.in" >"$t/spec-v3.toml"
	c3 configure --extra "$t/spec-v2.toml"
	check containerd2-refuses-v2-extra '[ "$rc" = 1 ] && [[ $err == *"not config version 3"* ]] && cmp -s "$V/config.toml" "$t/want3"'
	c3 configure --extra "$t/spec-v3.toml"
	check containerd2-extra '[ "$rc" = 0 ] && dump3 | grep -qx " *base_runtime_spec = '\''$V/nsguard-base-spec-v3.json'\''"'
	c3 unconfigure
	check containerd2-unconfigure-extra '[ "$rc" = 0 ] && cmp -s "$V/config.toml" "$t/want3"'
	# A version 2 config.toml under 2.x: the version 2 tables, which 2.x
	# migrates; its dump (version 3) shows them.
	containerd_v2=$(command -v containerd || true)
	if [ -n "$containerd_v2" ]; then
		"$containerd_v2" config default >"$V/config.toml"
	else
		printf 'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd]\n  default_runtime_name = "runc"\n' >"$V/config.toml"
	fi
	cp -p "$V/config.toml" "$t/v2on2-before"
	c3 configure
	check containerd2-v2-file '[ "$rc" = 0 ] && [ "$(opts nsguard BinaryName)" = "BinaryName = '\''$t/bin/nsguard-runtime'\''" ] &&
		grep -qx "\[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.nsguard\]" "$V/config.toml" &&
		! grep -q "cri.v1.runtime" "$V/config.toml"'
	c3 unconfigure
	check containerd2-v2-file-unconfigure '[ "$rc" = 0 ] && cmp -s "$V/config.toml" "$t/v2on2-before"'
	# No version line (containerd reads version 1): refused, unchanged.
	grep -v '^version = ' "$t/v3-before" >"$V/config.toml"
	cp -p "$V/config.toml" "$t/nover-before"
	c3 configure
	check containerd2-refuses-no-version '[ "$rc" = 1 ] && [[ $err == *"not config version 2 or 3"*"says 0"* ]] && cmp -s "$V/config.toml" "$t/nover-before"'
else
	skip cli/configure/containerd2 "no containerd 2.x at $C2 (make rootfs-current, or NSG_CONTAINERD2=PATH)"
fi
