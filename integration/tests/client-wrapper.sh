#!/bin/bash
# nsguard runtime (the wrapper containerd's runc shim and Docker run as their
# OCI runtime) in front of Debian's crun and runc: containers it starts are
# guarded, and everything else is the real runtime's own: exit status,
# stdout, signals, --preserve-fds, LISTEN_FDS, the console socket, and the
# subcommands other than create.  Each pass-through case runs the same
# thing through the wrapper and straight through the runtime and compares.
# Runs in the QEMU guest (make check: part clients-node).
set -u
. "$(dirname "$0")/lib-ct.sh"
ct_init

S=$CT_SUFFIX
WR=$CT_WORK/wrap                 # the wrapper scripts and the tier link
NSG_CONSOLE=${NSG_CONSOLE:-$NSG_REPO/build/nsg-console}
mkdir -p "$WR"
[ -x "$NSG_CONSOLE" ] || { fail "ct/wrapper/setup" "$NSG_CONSOLE missing (make build/nsg-console)"; exit 1; }
# No admin config in the guest: the hooks the wrapper adds use the
# built-in defaults (deny), as on a node with an empty /etc/nsguard.
self=$(readlink -f "$NSGUARD")

# wrap_for RT: the wrapper for runtime RT, as a node would register it with
# runtimeArgs (a script: containerd's shim takes a binary name only).
wrap_for() {
	local rt=$1 f=$WR/wrap-$1
	printf '#!/bin/sh\nexec %q runtime --runtime %q "$@"\n' "$NSGUARD" "$(command -v "$rt")" >"$f"
	chmod 755 "$f"
}

# w ARGS / r ARGS: the wrapper / the runtime itself, with the suite's
# --root; output in CT_OUT, status in CT_RC.
w() { CT_OUT=$(timeout "$CT_TIMEOUT" "$CRUN" --root "$CT_RUNROOT" "$@" </dev/null 2>&1); CT_RC=$?; }
r() { CT_OUT=$(timeout "$CT_TIMEOUT" "$REAL" --root "$CT_RUNROOT" "$@" </dev/null 2>&1); CT_RC=$?; }

# same WHAT: the last w and r (W_OUT/W_RC saved by the caller) agree, but
# for the time runc's log lines carry.
same() {
	local re='time="[^"]*" '
	[ "$W_RC" = "$CT_RC" ] && [ "${W_OUT//$re/}" = "${CT_OUT//$re/}" ] && return 0
	CT_WHY="$1: wrapper exit $W_RC '${W_OUT:0:200}', runtime exit $CT_RC '${CT_OUT:0:200}'"
	return 1
}

spec_of() { "$JQ" -c "$1" "$CT_WORK/b/$2/config.json" 2>/dev/null; }

# The hooks the wrapper wrote: ours first, exactly once.
want_hooks() {
	local got
	got=$(spec_of '[.hooks.createRuntime[0].path, .hooks.createRuntime[0].args,
		(.hooks.createRuntime | length), (.hooks.poststop | length)]' "$1")
	want_eq "config.json hooks" "$got" "[\"$self\",[\"nsguard\",\"hook\",\"createRuntime\"],1,1]"
}

# wait_state ID STATUS: until the runtime reports it (30 s).
wait_state() {
	local i
	for ((i = 0; i < 300; i++)); do
		[ "$("$REAL" --root "$CT_RUNROOT" state "$1" 2>/dev/null | "$JQ" -r .status)" = "$2" ] && return 0
		sleep 0.1
	done
	CT_WHY="$1 never became $2"
	return 1
}

# --- guarded: the default policy, a tier, and no duplicate hooks.
case_deny() {
	local id=wdeny-$RTN-$S cgid
	ct_bundle "$id" --no-hooks -- sleep 600 || return 1
	ct_start "$id"
	want_eq "wrapper run -d" "$CT_RC" 0 || { CT_WHY+=" ($(ct_tail))"; return 1; }
	want_hooks "$id" || return 1
	ct_exec "$id" nsg-userns unshare
	want_run "nsg-userns unshare" 1 "unshare: fail errno=EPERM" || return 1
	[[ $(ct_status "$id") == "mode=deny "* ]] || { CT_WHY="status: $(ct_status "$id")"; return 1; }
	cgid=$(ct_cgid "$(ct_cgdir "$id")")
	ct_delete "$id"
	want_eq "wrapper delete -f" "$CT_RC" 0 || return 1
	ct_gone "$id" "$cgid"
}

# The tier by annotation option (crun, runc) or by link name (runc from PATH).
case_tier() {
	local mode=$1 id=wtier-$1-$RTN-$S want=$2
	ct_bundle "$id" --no-hooks --mode deny -- sleep 600 || return 1
	ct_start "$id"
	want_eq "wrapper run -d" "$CT_RC" 0 || { CT_WHY+=" ($(ct_tail))"; return 1; }
	want_eq "nsguard.io/userns" "$(spec_of '.annotations["nsguard.io/userns"]' "$id")" "\"$mode\"" || return 1
	ct_exec "$id" nsg-userns unshare
	want_run "nsg-userns unshare" 0 "unshare: ok" || return 1
	[[ $(ct_status "$id") == "mode=$mode "* ]] || { CT_WHY="status: $(ct_status "$id")"; return 1; }
	[ -z "$want" ] || want_eq "counts" "$(ct_counts "$id")" "$want"
}

# Hooks already there (a base spec, hooks.d): the file is left alone.
case_no_duplicate() {
	local id=wdup-$RTN-$S ino
	ct_bundle "$id" --no-hooks -- sleep 600 || return 1
	"$NSGUARD" runtime --runtime /bin/true create --bundle "$CT_WORK/b/$id" "$id" || {
		CT_WHY="runtime --runtime /bin/true create failed"; return 1; }
	want_hooks "$id" || return 1
	ino=$(stat -c %i "$CT_WORK/b/$id/config.json")
	ct_start "$id"
	want_eq "wrapper run -d" "$CT_RC" 0 || { CT_WHY+=" ($(ct_tail))"; return 1; }
	want_eq "config.json inode (rewritten?)" "$(stat -c %i "$CT_WORK/b/$id/config.json")" "$ino" || return 1
	want_hooks "$id" || return 1
	ct_exec "$id" nsg-userns unshare
	want_run "nsg-userns unshare" 1 "unshare: fail errno=EPERM"
}

# --- what the runtime would read differently from the wrapper: refused.
# refused ID SAVED WHAT: the last start exited non-zero with one line, the
# wrapper's, naming WHAT; config.json is SAVED byte for byte; no container.
# A start that succeeded says whether the container was guarded.
refused() {
	local id=$1 saved=$2 what=$3 n
	if [ "$CT_RC" = 0 ]; then
		ct_exec "$id" nsg-userns unshare
		CT_WHY="started (want refused): nested unshare exit $CT_RC '${CT_OUT:0:80}', status '$(ct_status "$id")'"
		return 1
	fi
	n=$(printf '%s\n' "$CT_OUT" | wc -l)
	if [ "$n" != 1 ] || [[ $CT_OUT != "nsguard: "*"$what"* ]]; then
		CT_WHY="exit $CT_RC, want one 'nsguard: ...$what...' line: $(ct_tail)"
		return 1
	fi
	cmp -s "$saved" "$CT_WORK/b/$id/config.json" || { CT_WHY="config.json was changed"; return 1; }
	! "$REAL" --root "$CT_RUNROOT" state "$id" >/dev/null 2>&1 || { CT_WHY="$id was created"; return 1; }
}

# "\xC1\xA8ooks": an overlong 'h' that spec.c once decoded as "hooks"; runc
# reads U+FFFD and crun the raw bytes, so neither runs these hooks.  They
# point at /proc/self/exe, which the wrapper stat()ed as itself.
case_overlong() {
	local id=wutf8-$RTN-$S f
	ct_bundle "$id" --no-hooks -- sleep 600 || return 1
	f=$CT_WORK/b/$id/config.json
	{
		head -n 1 "$f"
		printf ' "\xc1\xa8ooks": {"createRuntime": [{"path": "/proc/self/exe", "args": ["nsguard", "hook", "createRuntime"]}],\n'
		printf '  "poststop": [{"path": "/proc/self/exe", "args": ["nsguard", "hook", "poststop"]}]},\n'
		tail -n +2 "$f"
	} >"$f.new" && mv "$f.new" "$f" && cp "$f" "$f.saved"
	ct_start "$id"
	refused "$id" "$f.saved" "invalid UTF-8"
}

# A form feed between two members of a hook: crun's yajl skips it
# as whitespace, JSON does not.  The wrapper once stopped reading the hook
# there, took it for its own and left crun to run nsguard with the bundle's
# environment (LD_PRELOAD).
ff_hook() { printf '{"path": "%s", "args": ["nsguard", "hook", "%s"],\f"env": ["LD_PRELOAD=/nonexistent/x.so"]}' "$self" "$1"; }
case_formfeed() {
	local id=wff-$RTN-$S f
	ct_bundle "$id" --no-hooks -- sleep 600 || return 1
	f=$CT_WORK/b/$id/config.json
	{
		head -n 1 "$f"
		printf ' "hooks": {"createRuntime": [%s], "poststop": [%s]},\n' "$(ff_hook createRuntime)" "$(ff_hook poststop)"
		tail -n +2 "$f"
	} >"$f.new" && mv "$f.new" "$f" && cp "$f" "$f.saved"
	ct_start "$id"
	refused "$id" "$f.saved" "control byte 0x0c"
}

# --config FILE reaches the hooks: a stricter file than the default refuses
# what the default allows.
case_config() {
	local id=wconf-$RTN-$S conf=$WR/strict.conf got
	ct_bundle "$id" --no-hooks --mode allow --ann run.oci.hooks.stderr=/proc/self/fd/2 -- sleep 600 || return 1
	ct_start "$id"
	if [ "$CT_RC" = 0 ]; then
		ct_exec "$id" nsg-userns unshare
		CT_WHY="started under allowed-modes = deny: nested unshare '${CT_OUT:0:80}', status '$(ct_status "$id")'"
		return 1
	fi
	want_run "wrapper run -d" "$CT_RC" "*allowed-modes is deny*" || return 1
	got=$(spec_of '.hooks.createRuntime[0].args' "$id")
	want_eq "createRuntime args" "$got" "[\"nsguard\",\"--config\",\"$conf\",\"hook\",\"createRuntime\"]"
}

# --- pass-through: create, start, state, exec, pause, resume, ps, list,
# kill, delete through the wrapper; each answer checked or compared.
case_lifecycle() {
	local id=wlife-$RTN-$S cgid st W_RC W_OUT
	ct_bundle "$id" --no-hooks -- sleep 600 || return 1
	CT_IDS+=("$id")
	# Into a file: the container keeps create's stdio (a $(...) pipe) open.
	timeout "$CT_TIMEOUT" "$CRUN" --root "$CT_RUNROOT" create --bundle "$CT_WORK/b/$id" "$id" \
		</dev/null >"$CT_WORK/b/$id/out" 2>&1
	CT_RC=$? CT_OUT=$(cat "$CT_WORK/b/$id/out")
	want_eq "create" "$CT_RC" 0 || { CT_WHY+=" ($(ct_tail))"; return 1; }
	w state "$id"
	want_eq "state after create" "$(echo "$CT_OUT" | "$JQ" -r .status)" created || return 1
	w start "$id"
	want_eq "start" "$CT_RC" 0 || return 1
	wait_state "$id" running || return 1
	w exec "$id" echo hi
	want_eq "exec" "$CT_RC:$CT_OUT" "0:hi" || return 1
	w pause "$id"
	st=$("$REAL" --root "$CT_RUNROOT" state "$id" | "$JQ" -r .status)
	want_eq "pause" "$CT_RC:$st" "0:paused" || return 1
	w resume "$id"
	st=$("$REAL" --root "$CT_RUNROOT" state "$id" | "$JQ" -r .status)
	want_eq "resume" "$CT_RC:$st" "0:running" || return 1
	# (json: runc's table has a CPU column that moves between two calls)
	w ps --format json "$id"; W_RC=$CT_RC W_OUT=$CT_OUT
	r ps --format json "$id"; same "ps" || return 1
	w list; W_RC=$CT_RC W_OUT=$CT_OUT
	r list; same "list" || return 1
	[[ $W_OUT == *"$id"* ]] || { CT_WHY="list: no $id in '$W_OUT'"; return 1; }
	w state "$id"; W_RC=$CT_RC W_OUT=$CT_OUT
	r state "$id"; same "state" || return 1
	cgid=$(ct_cgid "$(ct_cgdir "$id")")
	w kill "$id" KILL
	want_eq "kill" "$CT_RC" 0 || return 1
	wait_state "$id" stopped || return 1
	w delete "$id"
	want_eq "delete" "$CT_RC" 0 || { CT_WHY+=" ($(ct_tail))"; return 1; }
	ct_gone "$id" "$cgid"
}

case_exit_codes() {
	local id=wexit-$RTN-$S W_RC W_OUT
	w state "no-such-$S"; W_RC=$CT_RC W_OUT=$CT_OUT
	r state "no-such-$S"; same "state of a missing container" || return 1
	[ "$W_RC" != 0 ] || { CT_WHY="state of a missing container: exit 0"; return 1; }
	w frobnicate; W_RC=$CT_RC W_OUT=$CT_OUT
	r frobnicate; same "an unknown subcommand" || return 1
	w --version; W_RC=$CT_RC W_OUT=$CT_OUT
	r --version; same "--version" || return 1
	# run: the container's own exit status.
	ct_bundle "$id" --no-hooks -- sh -c 'echo out; exit 3' || return 1
	CT_IDS+=("$id")
	w run --bundle "$CT_WORK/b/$id" "$id"
	want_eq "run of 'exit 3'" "$CT_RC:$CT_OUT" "3:out"
}

# SIGTERM to the wrapper's pid: it is the runtime by then, which forwards
# it to the container (init traps it: pid 1 ignores what it does not handle).
case_signal() {
	local id pid rc=() k i
	for k in w r; do
		id=wsig-$k-$RTN-$S
		# shellcheck disable=SC2016
		ct_bundle "$id" --no-hooks -- sh -c 'trap "exit 7" TERM; while :; do sleep 1; done' || return 1
		CT_IDS+=("$id")
		if [ $k = w ]; then
			"$CRUN" --root "$CT_RUNROOT" run --bundle "$CT_WORK/b/$id" "$id" </dev/null >/dev/null 2>&1 &
		else
			"$REAL" --root "$CT_RUNROOT" run --bundle "$CT_WORK/b/$id" "$id" </dev/null >/dev/null 2>&1 &
		fi
		pid=$!
		wait_state "$id" running || { kill -KILL "$pid"; return 1; }
		if [ $k = w ]; then
			want_eq "the wrapper's pid runs" "$(readlink "/proc/$pid/exe")" "$(readlink -f "$REAL")" ||
				{ kill -KILL "$pid"; return 1; }
		fi
		kill -TERM "$pid"
		for ((i = 0; i < 300; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$pid" 2>/dev/null
		wait "$pid"
		rc+=("$?")
	done
	want_eq "exit status after SIGTERM (wrapper runtime)" "${rc[*]}" "7 7"
}

# fd 3 by --preserve-fds, and by LISTEN_FDS (socket activation).
case_fds() {
	local id W_RC W_OUT k
	echo "fd-three-$S" >"$CT_WORK/fd3"
	id=wfd-$RTN-$S
	ct_bundle "$id" --no-hooks -- cat /proc/self/fd/3 || return 1
	CT_IDS+=("$id")
	w run --preserve-fds 1 --bundle "$CT_WORK/b/$id" "$id" 3<"$CT_WORK/fd3"
	want_eq "--preserve-fds 1" "$CT_RC:$CT_OUT" "0:fd-three-$S" || return 1
	for k in w r; do
		id=wlisten-$k-$RTN-$S
		# shellcheck disable=SC2016 # expanded in the container / the child shell
		ct_bundle "$id" --no-hooks -- sh -c 'echo "LISTEN_FDS=$LISTEN_FDS"; cat /proc/self/fd/3' || return 1
		CT_IDS+=("$id")
		# LISTEN_PID must be the runtime's pid: the wrapper keeps it.
		# shellcheck disable=SC2016
		CT_OUT=$(timeout "$CT_TIMEOUT" bash -c 'exec 3<"$1"; export LISTEN_FDS=1 LISTEN_PID=$$;
			exec "$2" --root "$3" run --bundle "$4" "$5"' _ "$CT_WORK/fd3" \
			"$([ $k = w ] && echo "$CRUN" || echo "$REAL")" "$CT_RUNROOT" "$CT_WORK/b/$id" "$id" \
			</dev/null 2>&1)
		CT_RC=$?
		[ $k = w ] && W_RC=$CT_RC W_OUT=$CT_OUT
	done
	same "LISTEN_FDS=1" || return 1
	# runc hands the fds on only when LISTEN_PID is its own pid, and says
	# so in the container's LISTEN_FDS; crun 1.8 passes the fds on, no env.
	local want=1
	[ "$RTN" = crun ] && want=
	want_eq "LISTEN_FDS=1 through the wrapper" "$W_RC:$W_OUT" "0:LISTEN_FDS=$want"$'\n'"fd-three-$S"
}

# --console-socket: the pty master reaches the socket's owner.
case_console() {
	local id=wtty-$RTN-$S sock=$CT_WORK/console-$RTN.sock rpid out
	ct_bundle "$id" --no-hooks --mount '{"destination": "/dev/pts", "type": "devpts", "source": "devpts",
		"options": ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"]}' \
		-- echo hello-tty || return 1
	sed -i 's/"terminal": false/"terminal": true/' "$CT_WORK/b/$id/config.json"
	CT_IDS+=("$id")
	rm -f "$sock"
	out=$CT_WORK/console-$RTN.out
	timeout "$CT_TIMEOUT" "$NSG_CONSOLE" "$sock" >"$out" 2>&1 &
	rpid=$!
	for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
	w create --console-socket "$sock" --bundle "$CT_WORK/b/$id" "$id"
	want_eq "create --console-socket" "$CT_RC" 0 || { CT_WHY+=" ($(ct_tail))"; kill "$rpid" 2>/dev/null; return 1; }
	want_hooks "$id" || { kill "$rpid" 2>/dev/null; return 1; }
	w start "$id"
	wait "$rpid"
	want_eq "what the terminal showed" "$(tr -d '\r' <"$out")" hello-tty
}

# --- #40: a read-only view of nsguard's state refused through the wrapper too
# (the hooks it adds judge the same mounts): SRC bound read-only at /v.
case_view() {
	local id=wview-$2-$RTN-$S ann=()
	# crun drops a hook's stderr unless this names a file (lib-ct.sh).
	[ "$RTN" = crun ] && ann=(--ann run.oci.hooks.stderr=/proc/self/fd/2)
	ct_bundle "$id" --no-hooks "${ann[@]}" \
		--mount '{"destination": "/v", "type": "bind", "source": "'"$1"'", "options": ["'"$3"'", "ro"]}' \
		-- nsg-userns pin /v/nsguard/prog || return 1
	ct_run "$id"
	[ "$CT_RC" != 0 ] || { CT_WHY="wrapper run exited 0: $(ct_tail)"; return 1; }
	[[ $CT_OUT != *"pin: "* ]] || { CT_WHY="the container ran: $(ct_tail)"; return 1; }
	want_run "wrapper run" "$CT_RC" "*nsguard: *container's mount at */v$4*" || return 1
	ct_gone "$id" ""
}

# rootfsPropagation rshared: the container's copies of the host's mounts
# stay their peers, so what the runtime mounts under one (before any hook)
# lands in the host's namespace, and stays when the hook refuses.  The
# wrapper refuses it before the runtime runs: nothing reaches the host.
case_propagation() {
	local d=/run/nsg-wprop-$RTN-$S id=wprop-$RTN-$S saved n
	mkdir -p "$d/share" "$d/evil" || return 1
	if ! { mount -t tmpfs tmpfs "$d/share" && mount --make-shared "$d/share"; }; then
		CT_WHY="cannot share $d/share"
		return 1
	fi
	mkdir -p "$d/share/x"
	ct_bundle "$id" --no-hooks --linux-extra '"rootfsPropagation": "rshared",' \
		--mount '{"destination": "/v", "type": "bind", "source": "'"$d/share"'", "options": ["rbind"]}' \
		--mount '{"destination": "/v/x", "type": "bind", "source": "'"$d/evil"'", "options": ["bind"]}' \
		-- nsg-userns unshare || return 1
	saved=$CT_WORK/$id.json
	cp "$CT_WORK/b/$id/config.json" "$saved"
	ct_run "$id"
	n=$(grep -c " $d/share/x " /proc/self/mountinfo)
	[ "$n" = 0 ] || umount -l "$d/share/x"
	umount -l "$d/share" 2>/dev/null
	rm -rf "$d"
	want_eq "mounts the runtime left at the host's $d/share/x" "$n" 0 || return 1
	refused "$id" "$saved" "config.json: linux.rootfsPropagation \"rshared\" keeps the container's mounts peers of the host's"
}

for RTN in crun runc; do
	REAL=$(command -v "$RTN") || { fail "ct/wrapper/$RTN/setup" "$RTN not found"; continue; }
	wrap_for "$RTN"
	CRUN=$WR/wrap-$RTN CT_RUNROOT=/run/nsg-wrap-$RTN CT_RERUN=wrapper/$RTN/
	mkdir -p "$CT_RUNROOT"
	echo "# $("$REAL" --version | head -n 1) behind nsguard runtime"
	ct_case deny case_deny
	ct_case no-duplicate case_no_duplicate
	ct_case views/bpffs-ro-refused case_view /sys/fs/bpf bpffs bind " is a bpf file system"
	ct_case views/sys-rbind-ro-refused case_view /sys sys rbind "/fs/* read-"
	ct_case views/run-nsguard-rbind-ro-refused case_view /run/nsguard run rbind \
		" shows /run/nsguard (nsguard's lock"
	# shellcheck disable=SC2016
	printf '#!/bin/sh\nexec %q runtime --runtime %q --annotation nsguard.io/userns=audit "$@"\n' \
		"$NSGUARD" "$REAL" >"$WR/audit-$RTN" && chmod 755 "$WR/audit-$RTN"
	CRUN=$WR/audit-$RTN ct_case tier-audit-option case_tier audit "allowed=0 denied=0 audited=1"
	ct_case overlong-key case_overlong
	ct_case rshared-propagation-refused case_propagation
	[ "$RTN" = crun ] && ct_case formfeed case_formfeed
	printf 'allowed-modes = deny\n' >"$WR/strict.conf"
	# shellcheck disable=SC2016
	printf '#!/bin/sh\nexec %q runtime --config %q --runtime %q "$@"\n' \
		"$NSGUARD" "$WR/strict.conf" "$REAL" >"$WR/strict-$RTN" && chmod 755 "$WR/strict-$RTN"
	CRUN=$WR/strict-$RTN ct_case config-reaches-hooks case_config
	ct_case lifecycle case_lifecycle
	ct_case exit-codes case_exit_codes
	ct_case signal case_signal
	ct_case fds case_fds
	ct_case console-socket case_console
done

# The tier by name: nsguard-runtime-allow, runc from PATH (no config here).
ln -sfn "$NSGUARD" "$WR/nsguard-runtime-allow"
REAL=$(command -v runc) RTN=runc CRUN=$WR/nsguard-runtime-allow CT_RUNROOT=/run/nsg-wrap-runc \
	CT_RERUN=wrapper/ ct_case tier-link-allow case_tier allow ""
