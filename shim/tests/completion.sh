#!/bin/bash
# shim/tests/completion.sh [NSGUARD]: the bash completion
# (shim/nsguard.bash-completion) against NSGUARD's real --help (default
# build/nsguard; --help makes no bpf() call), and against a stand-in whose
# commands have a --help of their own.  One PASS:/FAIL: line per case
# (completion/NAME); exits 1 if any failed.  Run by integration/lint --all
# with the -Werror build.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
bin=${1:-build/nsguard}
case $bin in /*) ;; *) bin=$PWD/$bin ;; esac
rc=0
if [ ! -x "$bin" ]; then
	echo "FAIL: completion/setup: $bin not built"
	exit 1
fi
# shellcheck source=shim/nsguard.bash-completion
. shim/nsguard.bash-completion

# comp LINE: COMPREPLY (sorted, on one line) for the command line LINE, the
# cursor at its end (a trailing space starts an empty word).
comp() {
	local line=$1
	read -ra COMP_WORDS <<<"$line"
	[ "${COMP_WORDS[0]}" != nsguard ] || COMP_WORDS[0]=$bin
	[[ $line == *' ' ]] && COMP_WORDS+=('')
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMP_LINE=$line COMP_POINT=${#line}
	_nsguard
	printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
}

# want NAME LINE GOT-FROM-comp WANT
want() {
	if [ "$3" = "$4" ]; then
		echo "PASS: completion/$1"
	else
		echo "FAIL: completion/$1: '$2' completes to '$3', want '$4'"
		rc=1
	fi
}
# has NAME LINE WORD...: the completions of LINE include every WORD.
has() {
	local name=$1 line=$2 got w missing=
	shift 2
	got=" $(comp "$line") "
	for w in "$@"; do [[ $got == *" $w "* ]] || missing+=" $w"; done
	if [ -z "$missing" ]; then
		echo "PASS: completion/$name"
	else
		echo "FAIL: completion/$name: '$line' completes to '${got# }', missing$missing"
		rc=1
	fi
}

all_cmds=$("$bin" --help | awk '/^Commands:/ { s = 1; next } /^[^ ]/ { s = 0 } s && /^  [a-z]/ { print $1 }' |
	sort | tr '\n' ' ' | sed 's/ $//')
want commands "nsguard " "$(comp "nsguard ")" "$all_cmds"
has commands-listed "nsguard " hook attach status monitor gc check
want command-prefix "nsguard st" "$(comp "nsguard st")" "status"
want command-after-global "nsguard -v --config F m" "$(comp "nsguard -v --config /etc/f m")" "monitor"
has global-options "nsguard --" --verbose --config --help --version
has status-options "nsguard status --" --json
has monitor-options "nsguard monitor --" --json --count
has attach-options "nsguard attach --" --cgroup --id --mode --max-depth --errno --max-count
want hook-stages "nsguard hook " "$(comp "nsguard hook ")" "createRuntime poststop prestart"
want configure-runtimes "nsguard configure " "$(comp "nsguard configure ")" "containerd cri-o docker podman"
want unconfigure-runtime-prefix "nsguard unconfigure --dry-run c" "$(comp "nsguard unconfigure --dry-run c")" "containerd cri-o"
want hook-stage-prefix "nsguard hook p" "$(comp "nsguard hook p")" "poststop prestart"
want hook-after-stage "nsguard hook poststop --" "$(comp "nsguard hook poststop --")" \
	"--config --help --verbose"
want attach-mode-values "nsguard attach --mode " "$(comp "nsguard attach --mode ")" "allow audit deny learn"
want attach-errno-values "nsguard attach --errno E" "$(comp "nsguard attach --errno E")" "EACCES ENOSPC EPERM"
want attach-max-count-values "nsguard attach --max-count " "$(comp "nsguard attach --max-count ")" "unlimited"
want config-files "nsguard --config shim/nsguard.bash-comp" \
	"$(comp "nsguard --config shim/nsguard.bash-comp")" "shim/nsguard.bash-completion"
want hook-config-files "nsguard hook poststop --config man/man." \
	"$(comp "nsguard hook poststop --config man/man.")" "man/man.mk"

# A stand-in with per-command --help (lines naming --options, values as
# a|b|c): the completion takes a command's options from there.
# shellcheck disable=SC2317 # called through COMP_WORDS[0]
stub_nsguard() {
	case "$*" in
	--help) printf 'Commands:\n  status [--json]   state\n  hook STAGE\n\nOptions:\n  --config PATH   config\n' ;;
	"status --help")
		printf 'Usage: nsguard status [--other]\n\nOptions:\n  --json                one JSON document\n'
		printf '  --format text|json|prometheus\n  --id NAME             one container\n' ;;
	*) return 2 ;;
	esac
}
want per-command-help "nsguard status --" "$(comp "stub_nsguard status --")" "--format --id --json"
want per-command-values "nsguard status --format " "$(comp "stub_nsguard status --format ")" \
	"json prometheus text"
exit $rc
