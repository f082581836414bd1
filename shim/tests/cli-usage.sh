#!/bin/bash
# Host tests of the command line of build/nsguard (#14 item 5): --help for
# every command, global options after the command, an option given twice,
# usage errors before the privilege check.  Every command line here stops at
# a usage, config or privilege error (most run without capabilities), so
# nothing reaches bpf().
# shellcheck source=integration/tests/lib.sh disable=SC1091
. "$(dirname "$0")/../../integration/tests/lib.sh"

t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
chmod 755 "$t"
# The unprivileged runs use a copy: the checkout may sit in a directory
# only root can enter (a CI clone under mktemp -d).
cp "$NSGUARD" "$t/nsguard" && chmod 755 "$t/nsguard" && NSGUARD=$t/nsguard
# A process without capabilities, to show what comes before the check.
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$@"; }

# run CMD...: sets rc, out (stdout) and err (stderr).
run() { capture "$t" "$@"; }
# want NAME RC [TEXT [NOT]]: PASS when the last run exited RC and its stderr
# holds TEXT (does not hold NOT).
want() {
	local name=$1 want_rc=$2 text=${3:-} not=${4:-}
	if [ "$rc" = "$want_rc" ] && [[ $err == *"$text"* ]] &&
		{ [ -z "$not" ] || [[ $err != *"$not"* ]]; }; then
		pass "cli/$name"
	else
		fail "cli/$name" "want exit $want_rc${text:+ and \"$text\"}${not:+, not \"$not\"}; got $rc: ${err:0:300}"
	fi
}

mapfile -t cmds < <("$NSGUARD" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z]*\) .*/\1/p')
rc=0 err="commands: ${cmds[*]}"
for c in hook attach detach status monitor gc check explain load upgrade unload configure unconfigure suggest; do
	[[ " ${cmds[*]} " == *" $c "* ]] || rc=1
done
want commands-listed 0

# --version: version, the commit built and the pins' ABI (what build_info
# and a pin marker show), and the build sequence (never 0: shim/version-stamp),
# without privileges.
run nobody "$NSGUARD" --version
nl=$'\n'
if [ "$rc" = 0 ] && [[ $out =~ ^nsguard\ [0-9][^\ ]*\ \(commit\ [0-9a-z.+-]+,\ ABI\ [0-9a-f]{16}\)${nl}build\ sequence\ [1-9][0-9]*$ ]] &&
	[[ $out != *"commit unknown"* ]]; then
	pass cli/version
else
	fail cli/version "want 'nsguard V (commit C, ABI A)' and 'build sequence N'; got $rc: $out $err"
fi

for c in "${cmds[@]}"; do
	run "$NSGUARD" "$c" --help
	if [ "$rc" = 0 ] && [[ $out == "Usage: nsguard $c"* ]] && [ -z "$err" ]; then
		pass "cli/help/$c"
	else
		fail "cli/help/$c" "want exit 0 and 'Usage: nsguard $c'; got $rc: ${out:0:80} ${err:0:200}"
	fi
	help=$out
	# Every option the help names is one the command knows: given twice, it
	# is refused as given twice, never as unknown.
	while read -r o; do
		[ "$o" = --help ] && continue
		# Its line, with the next one when the help went there.
		line=$(awk -v o="$o" 'found { print; exit }
			$0 ~ "^  (-., )?" o "( |$)" { print; if (NF > 3) exit; found = 1 }' <<<"$help")
		meta=$(awk -v o="$o" '{ for (i = 1; i < NF; i++) if ($i == o) { print $(i + 1); exit } }' <<<"$line")
		case $meta in
		N) arg=(1) ;;
		*=*) arg=(k=v) ;;
		*"|"*) arg=("${meta%%|*}") ;; # the first of the values it lists
		[A-Z]*) arg=(x) ;;
		*) arg=() ;;
		esac
		run nobody "$NSGUARD" "$c" "$o" "${arg[@]}" "$o" "${arg[@]}"
		# A repeatable one (said so in the help) is never refused as twice:
		# given twice, it ends as given once does (same status, same
		# stderr), never as a repeated option.
		if [[ $line == *"(repeatable)"* ]]; then
			rc2=$rc err2=$err
			run nobody "$NSGUARD" "$c" "$o" "${arg[@]}"
			if [ "$rc2" = "$rc" ] && [ "$err2" = "$err" ] &&
				[[ $err2 != *"given twice"* ]]; then
				pass "cli/help/$c$o-repeatable"
			else
				fail "cli/help/$c$o-repeatable" "given twice: exit $rc2: ${err2:0:200}; once: exit $rc: ${err:0:200}"
			fi
		else
			want "help/$c$o-known" 2 "option '$o' given twice"
		fi
	done < <(grep -o -- '--[a-z][a-z-]*' <<<"$help" | sort -u)
done

run "$NSGUARD" status --bogus
want unknown-option 2 "status: unknown option '--bogus' (see nsguard status --help)"
run "$NSGUARD" detach --cgroup a --cgroup b
want twice-names-option 2 "detach: option '--cgroup' given twice"
run "$NSGUARD" attach --cgroup a --mode deny --mode allow
want twice-policy-option 2 "attach: option '--mode' given twice"

# Global options after the command: --config is read (the file is missing).
run "$NSGUARD" suggest some-id --config "$t/missing.conf"
want config-after-command 1 "open config $t/missing.conf"
run "$NSGUARD" suggest --config "$t/missing.conf" -v -v some-id
want options-before-argument 1 "open config $t/missing.conf"
run "$NSGUARD" --config "$t/missing.conf" suggest some-id
want config-before-command 1 "open config $t/missing.conf"
run "$NSGUARD" suggest a b
want extra-argument 2 "unexpected argument 'b'"

# The hook: its stage may come after --config; a usage error exits 2 even
# for poststop, whose other failures exit 0 (nsguard(8), EXIT STATUS).
run "$NSGUARD" hook --config "$t/missing.conf" poststop --bogus </dev/null
want poststop-usage-exit-2 2 "unknown option '--bogus'"
run "$NSGUARD" hook poststop <<<'not json'
want poststop-bad-state-exit-0 0 "warning"
run "$NSGUARD" hook createRuntime --config "$t/missing.conf" <<<'{"ociVersion":"1.0.2","id":"x","pid":0}'
want hook-config-after-stage 1 "open config $t/missing.conf"
run "$NSGUARD" --config "$t/a.conf" hook createRuntime --config "$t/b.conf" </dev/null
want config-twice-across-command 2 "option '--config' given twice"
run "$NSGUARD" --config "$t/a.conf" --config "$t/b.conf" status
want config-twice-before-command 2 "option '--config' given twice"
run "$NSGUARD" hook </dev/null
want hook-no-stage 2 "STAGE missing"

# Usage errors come before the privilege check: a process without
# capabilities gets the usage error, not "permission denied".
for args in "attach" "attach --cgroup x --max-depth many" "attach --cgroup x --mode sometimes" \
	"detach" "detach --id a --cgroup b" "status --bogus" "monitor --count 0" "gc extra" \
	"upgrade --json" "load --json" "hook" "suggest"; do
	# shellcheck disable=SC2086 # the words are the arguments
	run nobody "$NSGUARD" $args </dev/null
	want "unprivileged-usage/${args// /_}" 2 "" "permission denied"
done
# ... and root in a user namespace of its own, where a rootless runtime runs
# its hooks: every capability there, none that reaches bpf().  Stops at the
# check, before any bpf().
if unshare -r true 2>/dev/null; then
	for args in "attach --cgroup x" "detach --id x"; do
		# shellcheck disable=SC2086
		run unshare -r "$NSGUARD" $args </dev/null
		want "own-userns/${args// /_}" 1 \
			"nsguard runs in a user namespace that is not the host's (a rootless runtime"
	done
else
	skip cli/own-userns "unshare -r is refused here"
fi
run nobody "$NSGUARD" detach --cgroup /
want unprivileged-root-cgroup 1 "refusing the root cgroup"
# ... and a well-formed command line without privileges is refused as such.
for args in status gc "monitor --json" "attach --cgroup x" "detach --id x" upgrade load; do
	# shellcheck disable=SC2086
	run nobody "$NSGUARD" $args
	want "unprivileged/${args// /_}" 1 "permission denied: nsguard needs CAP_SYS_ADMIN"
done
