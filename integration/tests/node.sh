#!/bin/bash
# A node's life under Debian's systemd as PID 1 (make check: part node;
# integration/vm-run --systemd runs this script twice).
#
# NSGUARD_VM_BOOT=pre, before systemd starts: the node.  The root is this
# machine's, shared read-only; what a node writes is tmpfs: /etc (a copy,
# with none of this machine's units enabled), /var and /usr/local.  On it:
# containerd's `containerd config default` with the node's own settings (no
# overlayfs in the guest kernel, an image imported offline), and an older
# nsguard (this build, make install into /usr/local) with its units enabled.
#
# NSGUARD_VM_BOOT=systemd, as a unit after multi-user.target:
#  - nsguard-load.service ran before containerd.service started;
#  - the first hook started nsguard-agent.service through its socket, and
#    the agent served it (the install below restarts it onto the new build);
#  - a container started through the older build's wrapper is guarded, its
#    deny event reaches the journal through nsguard-monitor.service, and a
#    refused container is in the journal with its id;
#  - nsguard-gc.timer fires nsguard-gc.service (an admin's drop-in brings
#    the first run forward), which forgets a cgroup removed without poststop;
#  - the DaemonSet's script (examples/containerd/nsguard-node-install)
#    installs the newer build (nsguard-next): by rename, the admin's config
#    kept, nsguard's handlers appended to containerd's config.toml by
#    nsguard configure (no drop-in, no copy of the file), containerd restarted, the pins upgraded; the running
#    container stays guarded, a pod through the nsguard RuntimeClass handler
#    is guarded by the new build; the monitor follows to the new pins and
#    no event is lost; a second run changes nothing and does not restart
#    containerd;
#  - the Debian package (make deb) on the node once that install is gone:
#    install, a guarded container, the upgrade to a later build while
#    containers start (none refused), remove, purge, dpkg -L and leftovers.
#
# Case functions run through nsg_case, which shellcheck cannot follow.
# They read `COND && COND || fail WHY`: the failure runs exactly when the
# conditions do not all hold, as meant (SC2015).
# shellcheck disable=SC2317,SC2015
set -u
. "$(dirname "$0")/lib-ct.sh"
in_guest

NODE=/run/nsg-node                  # this script's own files (tmpfs)
OLD=$NSG_REPO/build/node/old        # make install DESTDIR= of this build
NEW=$NSG_REPO/build/node/new        # and of nsguard-next
IMAGE=nsg.test/rootfs:1
CTR=(ctr -n k8s.io)
NSG=/usr/local/bin/nsguard          # the node's nsguard, whichever build

setup_fail() { fail "node/setup" "$1"; exit 1; }

# ----------------------------------------------------------- before systemd
node_pre() {
	if [ ! -x "$OLD/usr/local/bin/nsguard" ] || [ ! -x "$NEW/usr/local/bin/nsguard" ]; then
		setup_fail "build/node missing (make build/node/done)"
	fi
	mkdir -p "$NODE/etc" || setup_fail "mkdir $NODE"
	cp -a /etc/. "$NODE/etc/" || setup_fail "copying /etc"
	mount --bind "$NODE/etc" /etc || setup_fail "mounting the copy of /etc"
	# A node of its own: none of this machine's units, containerd enabled.
	find /etc/systemd/system -mindepth 1 -maxdepth 1 \( -name '*.wants' -o -name '*.requires' \
		-o -name default.target \) -exec rm -rf {} + || setup_fail "cleaning /etc/systemd/system"
	for d in /var /usr/local; do
		mount -t tmpfs -o mode=0755 tmpfs "$d" || setup_fail "tmpfs on $d"
	done
	mkdir -p /var/lib /var/log /var/cache /usr/local/bin /usr/local/lib /usr/local/share ||
		setup_fail "the /var and /usr/local skeleton"
	mkdir -m 1777 /var/tmp || setup_fail "/var/tmp"
	# containerd's default config, with what this node sets itself.
	mkdir -p /etc/containerd
	containerd config default >/etc/containerd/config.toml || setup_fail "containerd config default"
	sed -i -e 's|snapshotter = "overlayfs"|snapshotter = "native"|' \
		-e "s|sandbox_image = \"registry.k8s.io/pause:3.6\"|sandbox_image = \"$IMAGE\"|" \
		/etc/containerd/config.toml
	# As it was before any nsguard configure: the install must change no line of it.
	cp -p /etc/containerd/config.toml /var/lib/nsg-config.toml.orig || setup_fail "keeping config.toml"
	# The older nsguard, as make install left it, its units enabled, and
	# the admin's config.
	cp -R --preserve=mode,links "$OLD/usr/local/." /usr/local/ || setup_fail "installing the older build"
	cp -R --preserve=mode "$OLD/etc/nsguard" /etc/ || setup_fail "installing the older build's config"
	echo "# the admin's own line" >>/etc/nsguard/nsguard.conf
	systemctl enable containerd.service nsguard-load.service nsguard-monitor.service \
		nsguard-gc.timer nsguard-agent.socket >"$NODE/enable.log" 2>&1 ||
		setup_fail "systemctl enable: $(cat "$NODE/enable.log")"
	# The admin's drop-in: one journal line per hook the agent serves.
	mkdir -p /etc/systemd/system/nsguard-agent.service.d
	printf '[Service]\nExecStart=\nExecStart=/usr/local/bin/nsguard -v agent\n' \
		>/etc/systemd/system/nsguard-agent.service.d/verbose.conf
	echo "# node: /etc, /var, /usr/local on tmpfs; nsguard $("$NSG" --version | head -n 1) installed"
}
case ${NSGUARD_VM_BOOT:-} in
pre) node_pre; exit 0 ;;
systemd) ;;
*) echo "node.sh: run by integration/vm-run --systemd" >&2; exit 2 ;;
esac

# ----------------------------------------------------------- under systemd
CT_WORK=$NODE/ct CT_ROOTFS=$NODE/ct/rootfs
mkdir -p "$CT_WORK"
S=$$
n_case() { nsg_case "node/$1" "${@:2}"; }
# mono UNIT PROPERTY: a monotonic timestamp property in microseconds.
mono() { systemctl show -P "$2" "$1"; }
# journal_has WHAT ARGS... -- PATTERN: wait (30 s at most) for a journal line.
journal_has() {
	local what=$1 pat=${*: -1} args=("${@:2:$#-3}")
	for _ in $(seq 150); do
		journalctl --no-pager "${args[@]}" 2>/dev/null | grep -qE -- "$pat" && return 0
		sleep 0.2
	done
	CT_WHY="$what: no journal line like '$pat' in journalctl ${args[*]}: $(journalctl --no-pager \
		"${args[@]}" 2>&1 | tail -n 3 | tr '\n' '|')"
	return 1
}
# run ID CTR-RUN-OPTIONS... -- CMD...: ctr run -d through the node's wrapper.
run() {
	local id=$1
	shift
	CT_OUT=$(timeout 120 "${CTR[@]}" run -d --snapshotter native \
		--runc-binary /usr/local/bin/nsguard-runtime "$@" </dev/null 2>&1)
	CT_RC=$?
}
probe() { # ID: nsg-userns unshare in a running container; CT_OUT/CT_RC
	CT_OUT=$(timeout 60 "${CTR[@]}" task exec --exec-id "p$RANDOM" "$1" nsg-userns unshare 2>&1)
	CT_RC=$?
}
# shellcheck disable=SC2016 # jq's variables and strings
status_of() { "$NSG" status --json 2>/dev/null | "$JQ" -r --arg id "$1" \
	'.containers[]? | select(.id == $id) | "\(.mode) denied=\(.denied)"'; }

echo "# $(systemctl --version | head -n 1); $(containerd --version)"

failed=$(systemctl list-units --failed --no-legend --plain | awk '{print $1}' | tr '\n' ' ')
[ -z "$failed" ] || echo "# units that failed at boot (not nsguard's): $failed"

case_boot_order() {
	local load_done cd_start u
	for u in nsguard-load.service containerd.service nsguard-monitor.path; do
		want_eq "systemctl is-active $u" "$(systemctl is-active "$u")" active || return 1
	done
	load_done=$(mono nsguard-load.service ExecMainExitTimestampMonotonic)
	cd_start=$(mono containerd.service ExecMainStartTimestampMonotonic)
	echo "# nsguard-load done at ${load_done} us, containerd started at ${cd_start} us"
	[ "${load_done:-0}" -gt 0 ] && [ "$load_done" -le "${cd_start:-0}" ] ||
		{ CT_WHY="nsguard-load.service ended at $load_done us, containerd started at $cd_start us"; return 1; }
	systemctl show -P After containerd.service | grep -qw nsguard-load.service ||
		{ CT_WHY="containerd.service is not ordered after nsguard-load.service"; return 1; }
	journal_has "load's line" -u nsguard-load.service -o cat -- '^(loaded|already loaded) \(pinned at /sys/fs/bpf/nsguard/prog'
}
n_case boot-order-load-before-containerd case_boot_order

setup_image() {
	ct_make_rootfs && ct_image_archive "$NODE" "$IMAGE" &&
		"${CTR[@]}" images import --snapshotter native "$NODE/image.tar" >"$NODE/import.log" 2>&1
}
setup_image || setup_fail "importing the test image: $(tail -n 2 "$NODE/import.log" 2>/dev/null)"

# The older build's wrapper guards a container the node runs all along.
HELD=held-$S
case_held() {
	run "$HELD" "$IMAGE" "$HELD"
	want_eq "ctr run $HELD: $(ct_tail)" "$CT_RC" 0 || return 1
	probe "$HELD"
	want_run "unshare in $HELD" 1 "*unshare: fail errno=EPERM*" || return 1
	want_eq "status of $HELD" "$(status_of "$HELD")" "deny denied=1" || return 1
	journal_has "the monitor's event" -u nsguard-monitor.service -o cat -- \
		"\"id\":\"$HELD\".*\"decision\":\"deny\""
}
n_case monitor-event-in-journal case_held

# The first hook started the agent through its socket, and the agent served it.
case_agent_activated() {
	want_eq "nsguard-agent.socket" "$(systemctl is-active nsguard-agent.socket)" active || return 1
	want_eq "nsguard-agent.service" "$(systemctl is-active nsguard-agent.service)" active || return 1
	want_eq "its socket" "$(stat -c '%a %U %F' /run/nsguard/agent.sock)" "600 root socket" || return 1
	journal_has "the agent's line" -u nsguard-agent.service -o cat -- '^nsguard: served createRuntime for pid [0-9]+: exit 0'
}
n_case agent-socket-activated case_agent_activated
agent_pid=$(systemctl show -P MainPID nsguard-agent.service)

# A refusal: ctr --privileged runs in the host's user namespace with
# CAP_SYS_ADMIN; the hook's refusal names the container in the journal.
case_refusal() {
	local id=refused-$S
	run "$id" --privileged "$IMAGE" "$id"
	[ "$CT_RC" != 0 ] || { CT_WHY="ctr run --privileged exited 0"; return 1; }
	journal_has "the hook's refusal" -t nsguard -o cat -- "container $id: .*CAP_SYS_ADMIN"
	"${CTR[@]}" task rm -f "$id" >/dev/null 2>&1
	"${CTR[@]}" c rm "$id" >/dev/null 2>&1
	return 0
}
n_case hook-refusal-in-journal case_refusal

# A cgroup guarded by hand and removed with no poststop: the gc timer's run
# forgets it.  The shipped timer first fires 15 min after boot: an admin's
# drop-in brings it forward, as one would to test it.
case_gc_timer() {
	local cg=/sys/fs/cgroup/nsg-gc-$S id=gc-$S
	mkdir "$cg" || { CT_WHY="mkdir $cg"; return 1; }
	CT_OUT=$("$NSG" attach --cgroup "$cg" --id "$id" --mode deny 2>&1) || { CT_WHY="attach: $CT_OUT"; rmdir "$cg"; return 1; }
	rmdir "$cg"
	want_eq "status of $id before gc" "$(status_of "$id" | cut -d' ' -f1)" deny || return 1
	mkdir -p /etc/systemd/system/nsguard-gc.timer.d
	printf '[Timer]\nOnActiveSec=2s\n' >/etc/systemd/system/nsguard-gc.timer.d/soon.conf
	systemctl daemon-reload && systemctl restart nsguard-gc.timer ||
		{ CT_WHY="restarting nsguard-gc.timer failed"; return 1; }
	for _ in $(seq 150); do
		[ "$(mono nsguard-gc.service ExecMainExitTimestampMonotonic)" != 0 ] && break
		sleep 0.2
	done
	want_eq "nsguard-gc.service's result" "$(systemctl show -P Result nsguard-gc.service)" success || return 1
	want_eq "nsguard-gc.service ran, triggered by" \
		"$(systemctl show -P Triggers nsguard-gc.timer)" nsguard-gc.service || return 1
	[ "$(mono nsguard-gc.service ExecMainExitTimestampMonotonic)" != 0 ] ||
		{ CT_WHY="nsguard-gc.service did not run within 30 s"; return 1; }
	want_eq "status of $id after gc" "$(status_of "$id")" "" || return 1
	journal_has "gc's line" -u nsguard-gc.service -o cat -- "$id"
	rm -rf /etc/systemd/system/nsguard-gc.timer.d
	systemctl daemon-reload
}
n_case gc-timer-fires case_gc_timer

# ------------------------------------------------------- the DaemonSet's run
# As the DaemonSet mounts them: the node's /usr/local and /etc under /host.
HOST=$NODE/host
mkdir -p "$HOST/usr/local" "$HOST/etc"
mount --bind /usr/local "$HOST/usr/local" && mount --bind /etc "$HOST/etc" || setup_fail "the /host mounts"
INSTALL=$NEW/usr/local/share/nsguard/containerd/nsguard-node-install
# node_install [ARGS...]: the DaemonSet's script with the new build; CT_OUT/CT_RC.
node_install() {
	CT_OUT=$("$INSTALL" --payload "$NEW" --host "$HOST" "$@" 2>&1)
	CT_RC=$?
}
conf_sum=$(md5sum </etc/nsguard/nsguard.conf)
old_ino=$(stat -c %i "$NSG")
cd_pid=$(systemctl show -P MainPID containerd.service)

# A node without nsguard.conf: the shipped example allows every mode, so
# the script installs nothing there unless the admin's comes with --config.
case_install_needs_config() {
	mv /etc/nsguard/nsguard.conf "$NODE/nsguard.conf.saved" || { CT_WHY="moving the config away"; return 1; }
	node_install
	mv "$NODE/nsguard.conf.saved" /etc/nsguard/nsguard.conf
	want_run "nsguard-node-install on a node without a config" 1 "*no /etc/nsguard/nsguard.conf*" || return 1
	want_eq "the binary's inode" "$(stat -c %i "$NSG")" "$old_ino" || return 1
	[ -z "$(find /usr/local /etc -name '*.nsguard-new')" ] || { CT_WHY="staged: $(find /usr/local /etc -name '*.nsguard-new')"; return 1; }
	want_eq "the admin's nsguard.conf" "$(md5sum </etc/nsguard/nsguard.conf)" "$conf_sum" || return 1
	# Nor on one whose config is the shipped example, no admin's choice.
	cp /etc/nsguard/nsguard.conf "$NODE/nsguard.conf.saved"
	cp "$NEW/etc/nsguard/nsguard.conf" /etc/nsguard/nsguard.conf
	node_install
	cp "$NODE/nsguard.conf.saved" /etc/nsguard/nsguard.conf
	want_run "nsguard-node-install on a node with the shipped example" 1 "*is the shipped example*" || return 1
	want_eq "the binary's inode after it" "$(stat -c %i "$NSG")" "$old_ino"
}
n_case daemonset-install-needs-config case_install_needs_config

case_install() {
	node_install
	echo "${CT_OUT//$'\n'/$'\n'  | }" | sed '1s/^/  | /'
	want_run "nsguard-node-install" 0 "*containerd restarted*" || return 1
	want_eq "the binary's version" "$("$NSG" --version | head -n 1 | grep -c -- '-next')" 1 || return 1
	[ "$(stat -c %i "$NSG")" != "$old_ino" ] || { CT_WHY="$NSG was written over, not renamed"; return 1; }
	[ -z "$(find /usr/local /etc -name '*.nsguard-new')" ] || { CT_WHY="left: $(find /usr/local /etc -name '*.nsguard-new')"; return 1; }
	want_eq "the admin's nsguard.conf" "$(md5sum </etc/nsguard/nsguard.conf)" "$conf_sum" || return 1
	# config.toml: containerd's default with nsguard's block appended, no
	# other line changed, and no drop-in or copy of it anywhere.
	want_eq "config.toml's lines changed by the install" \
		"$(diff /var/lib/nsg-config.toml.orig /etc/containerd/config.toml | grep -c '^<')" 0 || return 1
	want_eq "nsguard's block in config.toml" "$(grep -c '^# >>> nsguard configure containerd' /etc/containerd/config.toml)" 1 || return 1
	[ -z "$(find /etc/containerd -name '*nsguard*')" ] ||
		{ CT_WHY="beside config.toml: $(find /etc/containerd -name '*nsguard*' | tr '\n' ' ')"; return 1; }
	[ "$(systemctl show -P MainPID containerd.service)" != "$cd_pid" ] || { CT_WHY="containerd was not restarted"; return 1; }
	want_eq "containerd after the restart" "$(systemctl is-active containerd.service)" active || return 1
	containerd config dump | grep -qF '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nsguard]' ||
		{ CT_WHY="containerd's merged config has no nsguard handler"; return 1; }
	"$NSG" status --format prometheus | grep -qx 'nsguard_pins_other_build 0' ||
		{ CT_WHY="the pins are not the new build's after the install: $("$NSG" status 2>&1 | head -n 3 | tr '\n' '|')"; return 1; }
	# Moved to the new program, guarded as before; its decision counters
	# start again at 0 (nsguard(8), UPGRADE).
	want_eq "status of $HELD under the new build" "$(status_of "$HELD")" "deny denied=0"
}
n_case daemonset-install case_install

# The container of the older build runs on, guarded, with its count.
case_held_after() {
	want_eq "$HELD's task" "$("${CTR[@]}" task ls | awk -v id="$HELD" '$1 == id {print $3}')" RUNNING || return 1
	probe "$HELD"
	want_run "unshare in $HELD after the install" 1 "*unshare: fail errno=EPERM*"
}
n_case running-container-still-guarded case_held_after

# A pod through the nsguard RuntimeClass handler, guarded by the new
# build, to whose program the install moved every guarded cgroup.
case_pod() {
	local out rc
	out=$(/usr/bin/python3 "$NSG_REPO/integration/cri/cri-client" --socket /run/containerd/containerd.sock \
		--state /run/containerd --image "$IMAGE" --logs "$NODE/logs" --nsguard "$NSG" \
		--monlog /dev/null --handler nsguard --mode deny tier node-pod 2>&1)
	rc=$?
	echo "${out//$'\n'/$'\n'  | }" | sed '1s/^/  | /'
	want_eq "cri-client tier (its FAIL lines above)" "$rc/$(grep -c '^FAIL' <<<"$out")" 0/0 || return 1
	want_eq "status of $HELD" "$(status_of "$HELD")" "deny denied=1"
}
n_case pod-after-install-guarded case_pod

# The install restarted the agent on the new binary, which served the pod.
case_agent_after_install() {
	local pid
	pid=$(systemctl show -P MainPID nsguard-agent.service)
	[ "$pid" != "$agent_pid" ] && [ "$pid" != 0 ] || { CT_WHY="the agent was not restarted (pid $pid)"; return 1; }
	want_eq "the agent's binary" "$(readlink "/proc/$pid/exe")" "$NSG" || return 1
	journal_has "the new agent's line" -u nsguard-agent.service _PID="$pid" -o cat -- \
		'^nsguard: served createRuntime for pid [0-9]+: exit 0'
}
n_case agent-restarted-by-install case_agent_after_install

# The monitor's ring buffer went with the old pins: the monitor read what
# was left in it, and the unit restarted (Restart=on-failure) onto the new
# one: no event lost.
case_monitor_follows() {
	local n
	probe "$HELD"
	want_run "unshare in $HELD" 1 "*unshare: fail errno=EPERM*" || return 1
	# Three denies of it so far: before the install, after it (the old
	# pins), and now (the new ones).
	for _ in $(seq 150); do
		n=$(journalctl --no-pager -u nsguard-monitor.service -o cat | grep -c "\"id\":\"$HELD\".*\"decision\":\"deny\"")
		[ "$n" -ge 3 ] && break
		sleep 0.2
	done
	want_eq "deny events of $HELD in the journal" "$n" 3 ||
		{ CT_WHY+="; the monitor's journal: $(journalctl --no-pager -u nsguard-monitor.service -o cat |
			grep -v '^{' | tail -n 12 | tr '\n' '|'); events of $HELD: $(journalctl --no-pager \
			-u nsguard-monitor.service -o short-monotonic | grep "\"id\":\"$HELD\"" | cut -c1-110 | tr '\n' '|')"; return 1; }
	journal_has "the monitor's restart" -u nsguard-monitor.service -o cat -- 'was replaced \(nsguard upgrade\)'
}
n_case monitor-follows-upgrade case_monitor_follows

case_install_again() {
	# An admin's config nsguard refuses is never installed.
	printf 'allowed-modes = deny, bogus\n' >"$NODE/bad.conf"
	node_install --config "$NODE/bad.conf"
	want_run "nsguard-node-install --config with a bad config" 1 "*nsguard check refuses it*" || return 1
	want_eq "the admin's nsguard.conf after it" "$(md5sum </etc/nsguard/nsguard.conf)" "$conf_sum" || return 1
	# A run that stopped after changing containerd's files but before its
	# restart left its marker: this one restarts containerd.
	mkdir -p /run/nsguard-node-install && : >/run/nsguard-node-install/restart-pending
	cd_pid=$(systemctl show -P MainPID containerd.service)
	node_install
	want_run "nsguard-node-install after one cut short" 0 "*containerd restarted*" || return 1
	[ "$(systemctl show -P MainPID containerd.service)" != "$cd_pid" ] || { CT_WHY="containerd was not restarted"; return 1; }
	[ ! -e /run/nsguard-node-install/restart-pending ] || { CT_WHY="the marker is left"; return 1; }
	cd_pid=$(systemctl show -P MainPID containerd.service)
	node_install
	want_run "nsguard-node-install, again" 0 "*containerd: configured already*" || return 1
	want_run "nsguard-node-install, again" 0 "*/usr/local: up to date*" || return 1
	want_eq "containerd's pid" "$(systemctl show -P MainPID containerd.service)" "$cd_pid"
}
n_case daemonset-install-again case_install_again

# ------------------------------------------------- the Debian package's life
# make deb's package (build/node/deb/old) and a later build of the same
# source (build/node/deb/new: make deb DEB_SEQ_ADD=1), on this node once the
# make install of /usr/local is gone: install, a guarded container, the
# upgrade while containers start one after another (none refused, each
# guarded), remove (its prerm unloads and names the runtime file that still
# names nsguard-runtime), purge, and dpkg -L before and after.
"${CTR[@]}" task kill -s KILL "$HELD" >/dev/null 2>&1
PKG_START=$SECONDS
DEB_OLD=$(ls "$NSG_REPO"/build/node/deb/old/nsguard_*_amd64.deb 2>/dev/null)
DEB_NEW=$(ls "$NSG_REPO"/build/node/deb/new/nsguard_*_amd64.deb 2>/dev/null)
RO=/run/nsg-ro  # the root file system as it is, under every mount below

# writable DIR: DIR takes new entries: a tmpfs over it (or, inside a parent
# already made so, a directory of its own) holding a symbolic link to each
# entry of the original.  The root is this machine's, shared read-only.
writable() {
	local d=$1 p=${1%/*} src farm
	# A parent that is a link into the original: a directory of its own first.
	if [ -n "$p" ] && [ -L "$p" ] && [[ $(readlink "$p") == "$RO"/* ]]; then
		writable "$p" || return 1
	fi
	if [ -L "$d" ] && [[ $(readlink "$d") == "$RO"/* ]]; then
		src=$(readlink "$d")
		rm -f "$d" && mkdir "$d" || return 1
	elif touch "$d/.nsg-w" 2>/dev/null; then
		rm -f "$d/.nsg-w"
		return 0
	else
		# Filled beside it, then moved over it: ln and mount may live in $d.
		src=$RO$(realpath "$d")
		farm=$NODE/farm-$((++FARMS))
		mkdir -p "$farm" && mount -t tmpfs -o mode=0755 tmpfs "$farm" || return 1
		farm_fill "$src" "$farm" && mount --move "$farm" "$d" || return 1
		return 0
	fi
	farm_fill "$src" "$d"
}
farm_fill() { # SRC DIR: a link in DIR to each entry of SRC
	local e
	for e in "$1"/* "$1"/.[!.]*; do
		[ -e "$e" ] || [ -L "$e" ] || continue
		ln -s "$e" "$2/${e##*/}" || return 1
	done
}
FARMS=0
pkg_setup() {
	local e dirs=()
	[ -f "$DEB_OLD" ] && [ -f "$DEB_NEW" ] || { CT_WHY="build/node/deb/{old,new}: no package (make build/node/done)"; return 1; }
	# The make install of /usr/local goes, as an admin would take it away.
	"$NSG" unconfigure containerd >/dev/null 2>&1
	"$NSG" unload --force >"$NODE/unload.log" 2>&1 || { CT_WHY="nsguard unload --force: $(cat "$NODE/unload.log")"; return 1; }
	systemctl disable --now nsguard-load.service nsguard-monitor.path nsguard-monitor.service nsguard-gc.timer \
		nsguard-agent.socket nsguard-agent.service >/dev/null 2>&1
	find /usr/local -mindepth 1 -delete
	rm -rf /etc/nsguard /etc/systemd/system/nsguard-* /run/nsguard-node-install
	systemctl daemon-reload
	# A build image's policy-rc.d (Docker's refuses every start with 101)
	# would keep the postinst from starting the timer: a node has none.
	# /dev/null is not executable, so deb-systemd-invoke asks no policy.
	if [ -x /usr/sbin/policy-rc.d ]; then
		mount --bind /dev/null /usr/sbin/policy-rc.d || { CT_WHY="hiding /usr/sbin/policy-rc.d"; return 1; }
		echo "# /usr/sbin/policy-rc.d hidden (the build image's; a node runs none)"
	fi
	mkdir -p "$RO" && mount --bind / "$RO" || { CT_WHY="binding / to $RO"; return 1; }
	# dpkg's database as this machine has it (/var is the node's tmpfs).
	cp -a "$RO/var/lib/dpkg" /var/lib/ && mkdir -p /var/log /var/cache ||
		{ CT_WHY="copying /var/lib/dpkg"; return 1; }
	# Every directory a new entry of the package goes into, parents first.
	# (dpkg makes the ones not there yet, in a parent that is.)
	while read -r e; do
		e=/${e#./} e=${e%/}
		[ -n "${e#/}" ] || continue
		[ ! -e "$RO$(realpath -m "$e")" ] && [ -e "$RO$(realpath -m "${e%/*}")" ] && dirs+=("${e%/*}")
	done < <(dpkg-deb --fsys-tarfile "$DEB_OLD" | tar -t)
	for e in $(printf '%s\n' "${dirs[@]}" | sort -u | awk '{ print length, $0 }' | sort -n | cut -d' ' -f2-); do
		writable "$e" || { CT_WHY="making $e writable"; return 1; }
	done
}
n_case package-setup pkg_setup
NSG=/usr/bin/nsguard                # the package's, from here on
# dpkg_do ARGS...: dpkg, its output in CT_OUT (man-db's trigger left pending: slow here).
dpkg_do() {
	CT_OUT=$(DEBIAN_FRONTEND=noninteractive dpkg --no-triggers --force-confdef --force-confold "$@" 2>&1)
	CT_RC=$?
}
pkg_seq() { /usr/bin/nsguard --version 2>/dev/null | sed -n 's/^build sequence //p'; }
deb_seq() { dpkg-deb -f "$1" Version | sed 's/.*+git\([0-9]*\)\..*/\1/'; }

case_pkg_install() {
	local f missing=
	dpkg_do -i "$DEB_OLD"
	echo "${CT_OUT//$'\n'/$'\n'  | }" | sed '1s/^/  | /'
	want_run "dpkg -i $(basename "$DEB_OLD")" 0 "*nsguard: load: loaded*" || return 1
	want_eq "dpkg -s nsguard" "$(dpkg-query -W -f '${Status}' nsguard)" "install ok installed" || return 1
	want_eq "the installed build's sequence" "$(pkg_seq)" "$(deb_seq "$DEB_OLD")" || return 1
	dpkg -L nsguard >"$NODE/pkg-files"
	while read -r f; do [ -e "$f" ] || missing+=" $f"; done <"$NODE/pkg-files"
	[ -z "$missing" ] || { CT_WHY="dpkg -L lists what is not there:$missing"; return 1; }
	for u in nsguard-gc.timer nsguard-monitor.path nsguard-load.service; do
		want_eq "systemctl is-enabled $u" "$(systemctl is-enabled "$u" 2>&1)" enabled || return 1
	done
	want_eq "systemctl is-enabled nsguard-agent.socket" "$(systemctl is-enabled nsguard-agent.socket 2>&1)" disabled || return 1
	want_eq "nsguard-gc.timer" "$(systemctl is-active nsguard-gc.timer)" active || return 1
	[ -e /sys/fs/bpf/nsguard/prog ] || { CT_WHY="the postinst loaded nothing"; return 1; }
}
n_case package-install case_pkg_install

PKG_HELD=pkg-held-$S
case_pkg_container() {
	CT_OUT=$(timeout 120 "${CTR[@]}" run -d --snapshotter native --runc-binary /usr/bin/nsguard-runtime \
		"$IMAGE" "$PKG_HELD" </dev/null 2>&1)
	CT_RC=$?
	want_eq "ctr run $PKG_HELD: $(ct_tail)" "$CT_RC" 0 || return 1
	probe "$PKG_HELD"
	want_run "unshare in $PKG_HELD" 1 "*unshare: fail errno=EPERM*" || return 1
	want_eq "status of $PKG_HELD" "$(status_of "$PKG_HELD")" "deny denied=1"
}
n_case package-guarded-container case_pkg_container

# The upgrade while containers start, one after another: every start
# succeeds and is guarded (its unshare refused), before, during and after.
case_pkg_upgrade() {
	local loop n=0 bad=0 i
	: >"$NODE/starts"
	(
		i=0
		while [ ! -e "$NODE/starts.stop" ] && [ "$i" -lt 200 ]; do
			i=$((i + 1))
			out=$(timeout 120 "${CTR[@]}" run --rm --snapshotter native --runc-binary /usr/bin/nsguard-runtime \
				"$IMAGE" "loop-$S-$i" nsg-userns unshare </dev/null 2>&1)
			echo "$i $? $(tr '\n' ' ' <<<"$out")" >>"$NODE/starts"
		done
	) &
	loop=$!
	# A few starts first, then the upgrade under them, then a few more.
	for _ in $(seq 300); do [ "$(wc -l <"$NODE/starts")" -ge 2 ] && break; sleep 0.2; done
	dpkg_do -i "$DEB_NEW"
	echo "${CT_OUT//$'\n'/$'\n'  | }" | sed '1s/^/  | /'
	local after
	after=$(($(wc -l <"$NODE/starts") + 2))
	for _ in $(seq 300); do [ "$(wc -l <"$NODE/starts")" -ge "$after" ] && break; sleep 0.2; done
	: >"$NODE/starts.stop"
	wait "$loop"
	want_run "dpkg -i $(basename "$DEB_NEW")" 0 "*nsguard: upgrade: *" || return 1
	want_eq "the upgraded build's sequence" "$(pkg_seq)" "$(deb_seq "$DEB_NEW")" || return 1
	n=$(wc -l <"$NODE/starts")
	bad=$(grep -vc ' 1 .*unshare: fail errno=EPERM' "$NODE/starts")
	echo "# $n container starts during the upgrade, $bad not started or not guarded"
	[ "$n" -ge 4 ] && [ "$bad" = 0 ] || { CT_WHY="starts: $(grep -v ' 1 .*unshare: fail errno=EPERM' "$NODE/starts" | head -n 3 | tr '\n' '|') ($n in all)"; return 1; }
	/usr/bin/nsguard status --format prometheus | grep -qx 'nsguard_pins_other_build 0' ||
		{ CT_WHY="the pins are not the new build's after the upgrade"; return 1; }
	probe "$PKG_HELD"
	want_run "unshare in $PKG_HELD after the upgrade" 1 "*unshare: fail errno=EPERM*"
}
n_case package-upgrade-under-starts case_pkg_upgrade

# Remove: the prerm unloads (no container guarded any more) and names the
# runtime file configure left pointing at nsguard-runtime (nsguard(8),
# UNINSTALL: it does not unconfigure); the conffile stays until purge.
case_pkg_remove() {
	"${CTR[@]}" task kill -s KILL "$PKG_HELD" >/dev/null 2>&1
	for _ in $(seq 100); do "${CTR[@]}" task ls -q | grep -qx "$PKG_HELD" || break; sleep 0.2; done
	"${CTR[@]}" c rm "$PKG_HELD" >/dev/null 2>&1
	cp -p /etc/containerd/config.toml "$NODE/config.toml.pkg"
	/usr/bin/nsguard configure containerd >/dev/null 2>&1 || { CT_WHY="nsguard configure containerd"; return 1; }
	dpkg_do -r nsguard
	echo "${CT_OUT//$'\n'/$'\n'  | }" | sed '1s/^/  | /'
	want_run "dpkg -r nsguard" 0 "*/etc/containerd/config.toml still names nsguard-runtime*" || return 1
	want_run "dpkg -r nsguard" 0 "*nsguard: unload:*" || return 1
	cp -p "$NODE/config.toml.pkg" /etc/containerd/config.toml
	[ ! -e /sys/fs/bpf/nsguard ] || { CT_WHY="/sys/fs/bpf/nsguard is left after remove"; return 1; }
	[ ! -e /usr/bin/nsguard ] || { CT_WHY="/usr/bin/nsguard is left after remove"; return 1; }
	want_eq "dpkg -s nsguard" "$(dpkg-query -W -f '${Status}' nsguard)" "deinstall ok config-files" || return 1
	[ -e /etc/nsguard/nsguard.conf ] || { CT_WHY="remove took the conffile"; return 1; }
}
n_case package-remove case_pkg_remove

case_pkg_purge() {
	local f left=
	dpkg_do -P nsguard
	want_eq "dpkg -P nsguard: $(ct_tail)" "$CT_RC" 0 || return 1
	! dpkg-query -W -f '${Status}' nsguard 2>/dev/null | grep -qv 'not-installed' ||
		{ CT_WHY="dpkg still knows nsguard: $(dpkg-query -W -f '${Status}' nsguard)"; return 1; }
	while read -r f; do [ -d "$f" ] || [ ! -e "$f" ] || left+=" $f"; done <"$NODE/pkg-files"
	for f in /etc/nsguard /var/lib/nsguard /run/nsguard /usr/share/doc/nsguard /usr/share/nsguard; do
		[ ! -e "$f" ] || left+=" $f"
	done
	left+=$(find /etc/systemd /lib/systemd/system /usr/bin -name '*nsguard*' -printf ' %p' 2>/dev/null)
	[ -z "$left" ] || { CT_WHY="left after purge:$left"; return 1; }
	echo "# the package's life: $((SECONDS - PKG_START)) s"
}
n_case package-purge-leaves-nothing case_pkg_purge
exit 0
