#!/bin/bash
# Host tests of `nsguard runtime` (the wrapper a node registers as its OCI
# runtime) against a fake runtime that reports what it got: its arguments,
# pid, fds and environment, and the bundle's config.json as it finds it.
# Nothing here reaches bpf(): the wrapper only edits config.json and execs.
# The real runtimes (runc, crun, containerd, Docker) are in the guest suites.
# The conditions are strings that ok() evaluates after each run (SC2016,
# SC2034: what they read looks unused).
# shellcheck source=integration/tests/lib.sh disable=SC1091,SC2016,SC2034
. "$(dirname "$0")/../../integration/tests/lib.sh"

t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
# The hooks name the binary itself: a copy of our own, so paths are fixed.
mkdir -p "$t/bin" "$t/b"
cp "$NSGUARD" "$t/bin/nsguard" && NSG=$t/bin/nsguard
ln -s nsguard "$t/bin/nsguard-runtime"
ln -s nsguard "$t/bin/nsguard-runtime-audit"
ln -s nsguard "$t/bin/nsguard-runtime-sideways"
cat >"$t/fake" <<EOF
#!/bin/bash
# What the wrapper exec'd: argv, pid, fds, env, config.json.
{
	printf 'arg:%s\n' "\$0" "\$@"
	echo "pid:\$\$"
	echo "fds:\$(cd /proc/\$\$/fd && echo *)"
	echo "listen:\${LISTEN_FDS:-}:\${LISTEN_PID:-}"
} >"$t/got"
[ -n "\${FAKE_KILL:-}" ] && kill -s "\$FAKE_KILL" \$\$
echo "runtime stdout"
exit "\${FAKE_RC:-0}"
EOF
chmod 755 "$t/fake"
printf 'runtime = %s\n' "$t/fake" >"$t/nsguard.conf"
conf=(--config "$t/nsguard.conf")
spec='{
  "ociVersion": "1.0.2",
  "process": {"args": ["sh"], "user": {"uid": 0, "gid": 0}},
  "linux": {"resources": {"memory": {"limit": 9223372036854775807}}},
  "hooks": {"prestart": [{"path": "/usr/bin/true", "args": ["true", "mine"]}]},
  "annotations": {"org.example/keep": "yes", "nsguard.io/userns": "allow"}
}'
reset_bundle() {
	printf '%s\n' "${1:-$spec}" >"$t/b/config.json"
	chmod 640 "$t/b/config.json"
	rm -f "$t/got"
}
run() {
	rm -f "$t/got"
	capture "$t" "$@"
	got=$(cat "$t/got" 2>/dev/null)
}
ok() {
	local name=$1 why=$2
	shift 2
	if "$@"; then pass "cli/runtime/$name"; else
		fail "cli/runtime/$name" "$why (rc $rc; out: ${out:0:200}; err: ${err:0:300}; got: ${got:0:300})"
	fi
}
spec_q() { jq -e "$1" "$t/b/config.json" >/dev/null 2>&1; }
# --config FILE reaches the hooks: they name the same file.
ours="{\"path\":\"$NSG\",\"args\":[\"nsguard\",\"--config\",\"$t/nsguard.conf\",\"hook\",\"createRuntime\"],\"timeout\":30}"

# Pass-through: another subcommand, exit status and stdout are the runtime's.
reset_bundle
before=$(cat "$t/b/config.json")
run env FAKE_RC=7 "$NSG" "${conf[@]}" runtime --root /run/x --log /tmp/l state ctr-1
ok pass-through-args "want the runtime's own arguments, exit 7 and its stdout" eval \
	'[ "$rc" = 7 ] && [ "$out" = "runtime stdout" ] &&
	 [ "$(grep ^arg: <<<"$got" | tr "\n" " ")" = "arg:$t/fake arg:--root arg:/run/x arg:--log arg:/tmp/l arg:state arg:ctr-1 " ]'
ok pass-through-no-edit "state must not touch config.json" eval '[ "$(cat "$t/b/config.json")" = "$before" ]'

# create: the hooks first in their stages, the bundle's own kept, bytes kept.
reset_bundle
run "$NSG" "${conf[@]}" runtime --root /run/x create --bundle "$t/b" --pid-file "$t/pid" ctr-1
ok create-adds-hooks "want our createRuntime and poststop hooks, the prestart hook kept" eval \
	'[ "$rc" = 0 ] && spec_q "(.hooks.createRuntime[0] == $ours) and
	 .hooks.poststop[0].args == [\"nsguard\",\"--config\",\"$t/nsguard.conf\",\"hook\",\"poststop\"] and
	 .hooks.prestart == [{\"path\": \"/usr/bin/true\", \"args\": [\"true\", \"mine\"]}]"'
ok create-keeps-bytes "want the 64-bit limit as written and the mode kept" eval \
	'grep -q "\"limit\": 9223372036854775807}" "$t/b/config.json" &&
	 [ "$(stat -c %a "$t/b/config.json")" = 640 ] && ! ls "$t/b"/.config.json* 2>/dev/null'
ok create-keeps-annotations "no tier: the bundle's annotations as they were" eval \
	'spec_q ".annotations == {\"org.example/keep\": \"yes\", \"nsguard.io/userns\": \"allow\"}"'
ino=$(stat -c %i "$t/b/config.json")
run "$NSG" "${conf[@]}" runtime create --bundle="$t/b" ctr-1
ok create-twice-no-duplicate "a second create must find the hooks and leave the file alone" eval \
	'[ "$rc" = 0 ] && [ "$(stat -c %i "$t/b/config.json")" = "$ino" ] &&
	 spec_q "(.hooks.createRuntime | length) == 1 and (.hooks.poststop | length) == 1"'

reset_bundle
run "$NSG" "${conf[@]}" runtime restore --image-path /tmp/img -b "$t/b" ctr-3
ok restore-adds-hooks "restore makes a container from the bundle: the hooks too" eval \
	'[ "$rc" = 0 ] && spec_q "(.hooks.createRuntime[0] == $ours) and (.hooks.poststop | length) == 1"'

# The tier names: nsguard-runtime-MODE sets the mode over the bundle's.  They
# take no --config: the default config (none here) leaves runc from PATH,
# and PATH holds only the test's directory (never this host's runc).
reset_bundle
mkdir -p "$t/pathbin"
run env PATH="$t/pathbin" "$t/bin/nsguard-runtime-audit" create -b "$t/b" x
ok tier-runtime-from-path "want runc looked up in PATH (none there) and nothing run" eval \
	'[ "$rc" = 1 ] && [[ $err == *"runtime \"runc\" not found in PATH"* ]] && [ -z "$got" ]'
mkdir -p "$t/pathbin" && ln -sf "$t/fake" "$t/pathbin/runc"
run env -C "$t/b" PATH="$t/pathbin" "$t/bin/nsguard-runtime-audit" create x
ok tier-audit "want runc from PATH run, the tier's mode over the bundle's (no --bundle: the cwd)" eval \
	'[ "$rc" = 0 ] && [[ $got == *"arg:create"* ]] && spec_q ".annotations[\"org.example/keep\"] == \"yes\"" &&
	 spec_q ".annotations[\"nsguard.io/userns\"] == \"audit\" and (.hooks.poststop | length) == 1"'
ln -sf "$NSG" "$t/pathbin/runc"
run env PATH="$t/pathbin:$t/bin" "$t/bin/nsguard-runtime" state x
ok runtime-not-itself "runc in PATH that is nsguard must be skipped, not exec'd in a loop" eval \
	'[ "$rc" = 1 ] && [[ $err == *"not found in PATH"* ]]'
run "$t/bin/nsguard-runtime-sideways" state x
ok tier-unknown "want exit 1 naming the bad tier" eval \
	'[ "$rc" = 1 ] && [[ $err == *"\"sideways\" is not a mode"* ]] && [ -z "$got" ]'
run "$NSG" runtime --runtime "$NSG" state x
ok runtime-self-refused "want ELOOP: --runtime nsguard itself" eval \
	'[ "$rc" = 1 ] && [[ $err == *"is nsguard itself"* ]]'

# Same process: pid, fds, environment and a signal are the runtime's.
reset_bundle
run bash -c 'echo "$$" >"$0/shell"; exec 5<"$0/fake" 6<"$0/fake"; export LISTEN_FDS=2 LISTEN_PID=$$;
	exec "$1" --config "$0/nsguard.conf" runtime create -b "$0/b" x' "$t" "$NSG"
pid=$(cat "$t/shell")
ok same-pid-fds-env "want the shell's pid, fds 5 and 6 and LISTEN_* as they were" eval \
	'[ "$rc" = 0 ] && grep -qx "pid:$pid" <<<"$got" && grep -qx "listen:2:$pid" <<<"$got" &&
	 [[ " $(sed -n "s/^fds://p" <<<"$got") " == *" 5 6 "* ]]'
# (bash reports the signal on its own stderr: not part of the output.)
{ run env FAKE_KILL=TERM "$NSG" "${conf[@]}" runtime kill x; } 2>/dev/null
ok signal-status "a runtime killed by SIGTERM: the caller sees 143 (128+15)" eval '[ "$rc" = 143 ]'

# Refusals: nothing run, config.json as it was, one line on stderr.  The
# documents are printf formats: what runc, crun and nsguard read differently.
for c in 'hooks-folded|{"Hooks": {}}|byte 1: key "Hooks" is "hooks" to runc' \
	'hooks-not-object|{"hooks": []}|"hooks" is not an object' \
	'not-json|{"hooks": |byte 11: the document ends where a value belongs' \
	'overlong-hooks|{"\xc1\xa8ooks": {"createRuntime": [{"path": "/proc/self/exe", "args": ["nsguard", "hook", "createRuntime"]}]}}|byte 2: invalid UTF-8 (an overlong encoding)' \
	'surrogate|{"a": "\xed\xa0\x80"}|byte 7: invalid UTF-8 (a UTF-16 surrogate encoded in UTF-8)' \
	'formfeed|{"hooks": {},\f"x": 1}|byte 13: control byte 0x0c outside a string' \
	'vtab|{\v"hooks": {}}|byte 1: control byte 0x0b outside a string' \
	'bom|\xef\xbb\xbf{}|byte 0: a byte order mark' \
	'raw-control|{"a": "\x01"}|byte 7: control byte 0x01 in a string' \
	'nul-escape|{"a": "x\\u0000"}|byte 8: a \\u0000 escape' \
	'lone-surrogate|{"a": "\\udc00"}|byte 7: a \\u escape of a lone UTF-16 surrogate' \
	'twice-deep|{"linux": {"sysctl": {"a": "1", "a": "2"}}}|byte 32: key "a" is given twice' \
	'folded-pair|{"x": {"k": 1, "\xe2\x84\xaa": 2}}|keys "k" and "\xe2\x84\xaa" are one key to runc' \
	'folded-mounts|{"Mounts": []}|key "Mounts" is "mounts" to runc'; do
	IFS='|' read -r name fmt msg <<<"$c"
	# shellcheck disable=SC2059 # the document is the format
	doc=$(printf "$fmt")
	# shellcheck disable=SC2059
	msg=$(printf "$msg")
	reset_bundle "$doc"
	run "$NSG" "${conf[@]}" runtime create --bundle "$t/b" x
	ok "refuse-$name" "want exit 1, one line '$msg', the runtime not run, the file unchanged" eval \
		'[ "$rc" = 1 ] && [[ $err == "nsguard: $t/b/config.json: "*"$msg"* ]] &&
		 [ "$(wc -l <"$t/err")" = 1 ] && [ -z "$got" ] && [ "$(cat "$t/b/config.json")" = "$doc" ]'
done

# rootfsPropagation shared or rshared: what runc mounts under the rootfs
# would land in the host's mount namespace before any hook could refuse.
for c in 'rshared|linux.rootfsPropagation "rshared" keeps the container'"'"'s mounts peers of the host'"'"'s' \
	'shared|linux.rootfsPropagation "shared" keeps the container'"'"'s mounts peers of the host'"'"'s' \
	'Rshared|linux.rootfsPropagation "Rshared" is none runc or crun knows' \
	'rslave|' 'private|' 'runbindable|'; do
	IFS='|' read -r prop msg <<<"$c"
	doc='{"linux": {"rootfsPropagation": "'$prop'"}}'
	reset_bundle "$doc"
	run "$NSG" "${conf[@]}" runtime create --bundle "$t/b" x
	if [ -n "$msg" ]; then
		ok "refuse-propagation-$prop" "want exit 1, one line '$msg', the runtime not run, the file unchanged" eval \
			'[ "$rc" = 1 ] && [[ $err == "nsguard: $t/b/config.json: $msg"* ]] &&
			 [ "$(wc -l <"$t/err")" = 1 ] && [ -z "$got" ] && [ "$(cat "$t/b/config.json")" = "$doc" ]'
	else
		ok "propagation-$prop" "want the runtime run with our hooks" eval \
			'[ "$rc" = 0 ] && [[ $got == *"arg:create"* ]] && spec_q "(.hooks.createRuntime | length) == 1"'
	fi
done

# A hook is ours only by the file itself: never a path the runtime would
# resolve to another program (/proc/self/exe is the runtime there), a
# symlink, or a copy.  Each gets our hook added in front.
cp "$NSG" "$t/bin/nsguard-copy"
ln -sf nsguard "$t/bin/nsguard-link"
for c in "proc-self-exe|/proc/self/exe" "proc-fd|/proc/self/fd/255" "symlink|$t/bin/nsguard-link" \
	"copy|$t/bin/nsguard-copy" "dotdot|$t/bin/../bin/nsguard"; do
	IFS='|' read -r name path <<<"$c"
	hook_cr='{"path": "'$path'", "args": ["nsguard", "--config", "'$t/nsguard.conf'", "hook", "createRuntime"]}'
	hook_ps='{"path": "'$NSG'", "args": ["nsguard", "--config", "'$t/nsguard.conf'", "hook", "poststop"]}'
	reset_bundle '{"hooks": {"createRuntime": ['"$hook_cr"'], "poststop": ['"$hook_ps"']}}'
	run "$NSG" "${conf[@]}" runtime create --bundle "$t/b" x
	ok "not-ours-$name" "a hook naming $path is not nsguard's: want ours added in front of it" eval \
		'[ "$rc" = 0 ] && spec_q "(.hooks.createRuntime | length) == 2 and .hooks.createRuntime[0] == $ours and
		 (.hooks.poststop | length) == 1"'
done

# --config FILE: the exact hook arguments, FILE made absolute; only that
# form is taken as ours.
reset_bundle '{}'
run env -C "$t" "$NSG" --config nsguard.conf runtime create --bundle "$t/b" x
ok config-hook-args "want [nsguard, --config, $t/nsguard.conf, hook, STAGE] in both hooks" eval \
	'[ "$rc" = 0 ] && spec_q ".hooks.createRuntime == [$ours] and .hooks.poststop[0].args ==
	 [\"nsguard\",\"--config\",\"$t/nsguard.conf\",\"hook\",\"poststop\"] and .hooks.poststop[0].path == \"$NSG\""'
cp "$t/nsguard.conf" "$t/other.conf"
run "$NSG" runtime --config "$t/other.conf" create --bundle "$t/b" x
ok config-other-file "hooks that read another file are not ours: want other.conf's added first" eval \
	'[ "$rc" = 0 ] && spec_q "(.hooks.createRuntime | length) == 2 and
	 .hooks.createRuntime[0].args[2] == \"$t/other.conf\" and .hooks.createRuntime[1] == $ours"'
reset_bundle '{}'
run "$NSG" --config "$t/missing.conf" runtime --runtime "$t/fake" create --bundle "$t/b" x
ok config-missing "a --config file that cannot be read is refused before anything is run" eval \
	'[ "$rc" = 1 ] && [[ $err == *"$t/missing.conf"* ]] && [ -z "$got" ] && [ "$(cat "$t/b/config.json")" = "{}" ]'
reset_bundle
for a in '-bX' '-db' '--config=x' '-f' '--bund' '--b=x' '--conf'; do
	run "$NSG" "${conf[@]}" runtime create "$a" "$t/b" x
	ok "refuse-option$a" "an option runc and crun read differently must be refused" eval \
		'[ "$rc" = 1 ] && [ -z "$got" ] && [[ $err == *"nsguard: "* ]]'
done
run "$NSG" "${conf[@]}" runtime create --bundle "$t/missing" x
ok refuse-no-bundle "want exit 1 naming the bundle" eval \
	'[ "$rc" = 1 ] && [[ $err == *"bundle $t/missing: No such file or directory"* ]] && [ -z "$got" ]'
mkdir -p "$t/b3" && ln -sf "$t/b/config.json" "$t/b3/config.json"
run "$NSG" "${conf[@]}" runtime create --bundle "$t/b3" x
ok refuse-symlinked-config "config.json as a symlink is refused, not followed" eval \
	'[ "$rc" = 1 ] && [ -z "$got" ] && [[ $err == *"$t/b3/config.json"* ]]'

# Not ours to edit: --help, and a runtime option that only looks like ours.
reset_bundle
before=$(cat "$t/b/config.json")
run "$NSG" "${conf[@]}" runtime create --help
ok create-help-pass-through "create --help: the runtime's help, no edit" eval \
	'[ "$rc" = 0 ] && [[ $got == *"arg:--help"* ]] && [ "$(cat "$t/b/config.json")" = "$before" ]'
run "$NSG" runtime --help
ok own-help "nsguard runtime --help: ours, exit 0, nothing run" eval \
	'[ "$rc" = 0 ] && [[ $out == *"Usage: nsguard runtime"* ]] && [ -z "$got" ]'
run "$NSG" "${conf[@]}" runtime --annotation nsguard.io/userns=deny --annotation nsguard.io/userns.max-depth=1 \
	-- create --bundle "$t/b" x
ok annotation-options "--annotation sets each, -- ends ours" eval \
	'[ "$rc" = 0 ] && spec_q ".annotations[\"nsguard.io/userns\"] == \"deny\" and
	 .annotations[\"nsguard.io/userns.max-depth\"] == \"1\"" && [[ $got == *"arg:create"* ]]'
run "$NSG" runtime --annotation other.io/x=1 state x
ok annotation-not-ours "want exit 2: only nsguard.io/ annotations" eval \
	'[ "$rc" = 2 ] && [[ $err == *"is not an nsguard.io/ one"* ]]'
printf 'runtime = fake\n' >"$t/rel.conf"
run "$NSG" --config "$t/rel.conf" runtime state x
ok config-runtime-relative "runtime = NAME in the config is refused: an absolute path" eval \
	'[ "$rc" = 1 ] && [[ $err == *"runtime \"fake\" is not an absolute path"* ]]'
