#!/bin/bash
# Pod identity from the CRI runtimes' annotations (records, status, monitor
# and its --id/--pod/--namespace filters; hostile values) and
# `status --format prometheus` served by node_exporter's textfile collector.
set -u
. "$(dirname "$0")/lib-ct.sh"
ct_init

S=$CT_SUFFIX
# containerd's CRI plugin and CRI-O (shim/lib/identity.c names the sources).
CD_ANN=(--ann io.kubernetes.cri.sandbox-name=web-0 --ann io.kubernetes.cri.sandbox-namespace=shop
	--ann io.kubernetes.cri.container-name=nginx --ann io.kubernetes.cri.container-type=container)
CRIO_ANN=(--ann io.kubernetes.pod.name=db-1 --ann io.kubernetes.pod.namespace=store
	--ann io.kubernetes.container.name=pg)
# identity-source (nsguard.conf): the one family read; containerd by default.
CRIO_CONF=$(ct_conf "crio-$S" "identity-source = cri-o")
NONE_CONF=$(ct_conf "noident-$S" "identity-source = none")
# shellcheck disable=SC2016 # jq programs
IDENT='"\(.pod // "-")/\(.namespace // "-")/\(.container // "-")"'

rec_ident() { "$JQ" -r "$IDENT" "$CT_RECORDS/$1.json" 2>&1; }
# shellcheck disable=SC2016 # $id is jq's
status_ident() { ct_status_json | "$JQ" -r --arg id "$1" ".containers[]? | select(.id == \$id) | $IDENT"; }
# shellcheck disable=SC2016 # $id is jq's
mon_ident() {
	grep -F "\"$1\"" "$CT_MONLOG" | "$JQ" -r --arg id "$1" "select(.id == \$id) | $IDENT" | head -n 1
}

# ident_case ID WANT [BUNDLE OPTIONS...]: WANT (pod/namespace/container) in
# the record, status (JSON and text) and the monitor's event of a denial.
ident_case() {
	local id=$1 want=$2
	shift 2
	start_guarded "$id" --mode deny "$@" || return 1
	want_eq record "$(rec_ident "$id")" "$want" || return 1
	want_eq "status --json" "$(status_ident "$id")" "$want" || return 1
	# Its block of the text status: a pod line only when known.
	CT_OUT=$("$NSGUARD" status 2>&1 | awk -v c="container $id" '$0 == c { p = 1 } p && /^$/ { exit } p')
	CT_RC=0
	if [ "${want%%/*}" = - ]; then
		want_eq "status: pod line" "$(grep -c '^  pod:' <<<"$CT_OUT")" 0 || return 1
	else
		want_run "status" 0 "  pod:        ${want%%/*}" || return 1
	fi
	ct_exec "$id" nsg-userns unshare
	want_run unshare 1 "unshare: fail errno=EPERM" || return 1
	want_eq events "$(ct_events "$id" 1)" "deny:mode:EPERM:d1" || return 1
	want_eq "monitor --json" "$(mon_ident "$id")" "$want"
}
ct_case pod/containerd-annotations ident_case "pod-cd-$S" web-0/shop/nginx "${CD_ANN[@]}"
ct_case pod/crio-annotations ident_case "pod-crio-$S" db-1/store/pg --conf "$CRIO_CONF" \
	"${CRIO_ANN[@]}"
ct_case pod/none ident_case "pod-none-$S" -/-/-
# CRI-O's keys under the default (containerd): a pod's own words, ignored.
ct_case pod/crio-keys-ignored-by-default ident_case "pod-crio-ign-$S" -/-/- "${CRIO_ANN[@]}"
ct_case pod/source-none ident_case "pod-src-none-$S" -/-/- --conf "$NONE_CONF" "${CD_ANN[@]}" \
	"${CRIO_ANN[@]}"

# filter_run OUT ARGS...: a monitor of our own (the suite's is stopped: a
# ring-buffer event goes to one reader), one event wanted; a denial in A
# first, then in B; the monitor must print B's only.
filter_run() {
	local out=$1 pid i
	shift
	"$NSGUARD" monitor --count 1 "$@" >"$out" 2>&1 &
	pid=$!
	ct_exec "$A" nsg-userns unshare
	ct_exec "$B" nsg-userns unshare
	for ((i = 0; i < 100; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.2
	done
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}

case_filters() {
	A=filt-a-$S B=filt-b-$S
	local f=$CT_WORK/filter-$S.out
	start_guarded "$A" --mode deny "${CD_ANN[@]}" || return 1
	start_guarded "$B" --mode deny --conf "$CRIO_CONF" "${CRIO_ANN[@]}" || return 1
	ct_monitor_stop
	filter_run "$f" --json --pod db-1
	want_eq "--pod db-1" "$("$JQ" -r '.id' "$f" 2>&1 | tr '\n' ' ')" "$B " || return 1
	filter_run "$f" --json --id "$B"
	want_eq "--id B" "$("$JQ" -r '.id' "$f" 2>&1 | tr '\n' ' ')" "$B " || return 1
	filter_run "$f" --namespace store
	CT_OUT=$(cat "$f")
	CT_RC=0
	want_run "--namespace store (text)" 0 \
		"* deny id=$B pod=db-1 namespace=store container=pg section=node cgroup=* reason=mode errno=EPERM" ||
		return 1
	want_eq "--namespace store: lines" "$(wc -l <"$f")" 1 || return 1
	ct_monitor_ensure
}
ct_case pod/monitor-filters case_filters

# One source of pod identity: X carries both families, the other family's
# keys first; status and monitor --pod show the chosen family's names only.
# Y is named (in the chosen family) after X's other-family pod: --pod OTHER
# prints Y's denial, not X's; --pod WANT prints X's, not Y's.
# source_case CONF-OPTS WANT OTHER-POD Y-KEY
source_case() {
	local want=$2 other=$3 ykey=$4 f=$CT_WORK/source-$S.out x=src-x-$S y=src-y-$S
	local conf=()
	[ -z "$1" ] || conf=(--conf "$1")
	if [ "$ykey" = io.kubernetes.pod.name ]; then
		start_guarded "$x" --mode deny "${conf[@]}" "${CD_ANN[@]}" "${CRIO_ANN[@]}" || return 1
	else
		start_guarded "$x" --mode deny "${conf[@]}" "${CRIO_ANN[@]}" "${CD_ANN[@]}" || return 1
	fi
	start_guarded "$y" --mode deny "${conf[@]}" --ann "$ykey=$other" || return 1
	want_eq "status --json" "$(status_ident "$x")" "$want" || return 1
	want_eq "status --json (y)" "$(status_ident "$y")" "$other/-/-" || return 1
	ct_monitor_stop
	A=$x B=$y
	filter_run "$f" --json --pod "$other"
	want_eq "--pod $other" "$("$JQ" -r '"\(.id) \(.pod)"' "$f" 2>&1 | tr '\n' ' ')" "$y $other " ||
		return 1
	A=$y B=$x
	filter_run "$f" --json --pod "${want%%/*}"
	want_eq "--pod ${want%%/*}" "$("$JQ" -r '"\(.id) \(.pod)"' "$f" 2>&1 | tr '\n' ' ')" \
		"$x ${want%%/*} " || return 1
	ct_monitor_ensure
}
ct_case pod/source-crio source_case "$CRIO_CONF" db-1/store/pg web-0 io.kubernetes.pod.name
ct_case pod/source-containerd-default source_case "" web-0/shop/nginx db-1 \
	io.kubernetes.cri.sandbox-name

# Control characters, quotes and a 100000-byte value: the container starts
# with a warning and the values are mended.
case_hostile() {
	local id=pod-evil-$S cfg
	ct_bundle "$id" --mode deny "${CD_ANN[@]}" -- sleep 600 || return 1
	cfg=$CT_WORK/b/$id/config.json
	# shellcheck disable=SC2016 # a jq program
	"$JQ" --arg big "$(head -c 100000 /dev/zero | tr '\0' n)" \
		'.annotations["io.kubernetes.cri.sandbox-name"] = "evil\u001b[31m\n\"x\\\\y" |
		 .annotations["io.kubernetes.cri.sandbox-namespace"] = $big' "$cfg" >"$cfg.new" &&
		mv "$cfg.new" "$cfg" || return 1
	ct_start "$id"
	want_run "crun run -d" 0 "*annotation io.kubernetes.cri.sandbox-name: not a Kubernetes name*" ||
		return 1
	want_eq "pod" "$("$JQ" -r .pod "$CT_RECORDS/$id.json")" 'evil??31m??x??y' || return 1
	want_eq "namespace length" "$("$JQ" -r '.namespace | length' "$CT_RECORDS/$id.json")" 253 ||
		return 1
	ct_exec "$id" nsg-userns unshare
	want_run "still guarded" 1 "unshare: fail errno=EPERM"
}
ct_case pod/hostile-values case_hostile

# [namespace] sections through the hook (#42 item 2) with identity-source
# cri-o and the spec as CRI-O writes it: the pod's annotations first (here
# claiming namespace store under containerd's and CRI-O's own keys), CRI-O's,
# then the kubelet's io.kubernetes.pod.namespace last: only that one counts.
SEC_CONF=$(ct_conf "crio-sec-$S" "identity-source = cri-o" "allowed-modes = deny, audit" \
	"[namespace store]" "default-mode = audit")
# section_case ID NAMESPACE WANT-SECTION WANT-MODE: no nsguard.io/ annotation,
# so the mode is the section's default; the record, status and the metrics
# name the section.
section_case() {
	local id=$1 ns=$2 want_sec=$3 want_mode=$4
	start_guarded "$id" --conf "$SEC_CONF" --ann io.kubernetes.cri.sandbox-namespace=store \
		--ann io.kubernetes.cri-o.Namespace=store --ann io.kubernetes.cri-o.ContainerType=container \
		--ann io.kubernetes.pod.name=db-1 --ann io.kubernetes.container.name=pg \
		--ann "io.kubernetes.pod.namespace=$ns" || return 1
	want_eq "record section" "$("$JQ" -r .section "$CT_RECORDS/$id.json")" "$want_sec" || return 1
	# shellcheck disable=SC2016 # $id is jq's
	want_eq "status section, mode" "$(ct_status_json | "$JQ" -r --arg id "$id" \
		'.containers[]? | select(.id == $id) | "\(.section) \(.mode)"')" "$want_sec $want_mode" ||
		return 1
	"$NSGUARD" status --format prometheus 2>/dev/null | grep -F "id=\"$id\"" |
		grep -q -F "section=\"$want_sec\"" ||
		{ CT_WHY="no metric of $id with section=\"$want_sec\""; return 1; }
	ct_exec "$id" nsg-userns unshare
	if [ "$want_mode" = deny ]; then
		want_run unshare 1 "unshare: fail errno=EPERM"
	else
		want_run unshare 0 "unshare: ok"
	fi
}
ct_case pod/crio-section-kubelet-key section_case "pod-crio-sec-$S" store namespace:store audit
ct_case pod/crio-section-forged-keys section_case "pod-crio-forged-$S" default node deny

# ---------------------------------------------------------------- prometheus

# prom_write DIR: what nsguard-metrics.service runs (--output: a temporary
# name the collector ignores, then rename); nothing else left in DIR.
prom_write() {
	"$NSGUARD" status --format prometheus --output "$1/nsguard.prom" &&
		[ "$(ls "$1")" = nsguard.prom ]
}

# scrape PORT: node_exporter's /metrics, waiting up to 30 s for it.
scrape() {
	local i
	for ((i = 0; i < 150; i++)); do
		curl -sf "http://127.0.0.1:$1/metrics" && return 0
		sleep 0.2
	done
	return 1
}

# denied METRICS ID: the denied counter of ID.
denied() {
	awk -v id="id=\"$2\"" '/^nsguard_userns_decisions_total[{]/ && index($0, id) &&
		index($0, "action=\"denied\"") { print $NF }' <<<"$1"
}

prom_body() {
	local id=prom-$S dir=$1 port=$2 m before after
	start_guarded "$id" --mode deny "${CD_ANN[@]}" || return 1
	prom_write "$dir" || { CT_WHY="status --format prometheus failed"; return 1; }
	prometheus-node-exporter --collector.disable-defaults --collector.textfile \
		--collector.textfile.directory="$dir" --web.listen-address="127.0.0.1:$port" \
		>"$dir.log" 2>&1 &
	NE_PID=$!
	m=$(scrape "$port") || { CT_WHY="no scrape: $(tail -n 3 "$dir.log" | tr '\n' '|')"; return 1; }
	want_eq "program loaded" "$(grep '^nsguard_program_loaded ' <<<"$m")" "nsguard_program_loaded 1" ||
		return 1
	grep -q "^nsguard_guarded_containers [1-9]" <<<"$m" ||
		{ CT_WHY="guarded_containers: $(grep '^nsguard_guarded' <<<"$m")"; return 1; }
	before=$(denied "$m" "$id")
	want_eq "denied before" "$before" 0 || return 1
	grep -q "^nsguard_userns_decisions_total{.*id=\"$id\".*pod=\"web-0\"" <<<"$m" ||
		{ CT_WHY="no pod label for $id: $(grep -F "\"$id\"" <<<"$m" | head -n 2 | tr '\n' '|')"; return 1; }
	ct_exec "$id" nsg-userns seq 3
	want_run "three unshares (seq 3)" 1 "seq: fail created=0 errno=EPERM" || return 1
	prom_write "$dir" || return 1
	m=$(scrape "$port") || { CT_WHY="no second scrape"; return 1; }
	after=$(denied "$m" "$id")
	want_eq "denied after 3 denials" "$after" $((before + 3))
}

case_prometheus() {
	local dir=$CT_WORK/textfile-$S rc
	NE_PID=
	if ! command -v prometheus-node-exporter >/dev/null || ! command -v curl >/dev/null; then
		CT_WHY="prometheus-node-exporter or curl missing (integration/deps)"
		return 1
	fi
	ip link set lo up 2>/dev/null
	mkdir -p "$dir"
	prom_body "$dir" 19100
	rc=$?
	[ -z "$NE_PID" ] || { kill "$NE_PID"; wait "$NE_PID"; } 2>/dev/null
	return $rc
}
ct_case prometheus/node-exporter-textfile case_prometheus

# outcome RESULT REASON: that counter of nsguard_hook_outcomes_total now.
outcome() {
	"$NSGUARD" status --format prometheus |
		awk -v l="{result=\"$1\",reason=\"$2\"}" '$1 == "nsguard_hook_outcomes_total" l { print $2 }'
}

# --- What an operator alerts on (#31 item 5): the hooks' outcomes, counted
# across hook processes by result and the step that refused; build_info
# naming this binary as --version does; and, with another build's pins,
# status still answering, with a gauge that says so.  promtool (Debian's
# prometheus package) checks the exposition.
case_outcomes() {
	local g0 h0 a0 ver commit abi m
	g0=$(outcome guarded none) h0=$(outcome refused host-capabilities) a0=$(outcome refused annotation)
	if [ -z "$g0" ] || [ -z "$h0" ] || [ -z "$a0" ]; then
		CT_WHY="no outcome counters: '$g0' '$h0' '$a0'"
		return 1
	fi
	start_guarded "out-ok-$S" --mode deny || return 1
	ct_bundle "out-caps-$S" --hostcaps -- true || return 1
	ct_run "out-caps-$S"
	[ "$CT_RC" != 0 ] || { CT_WHY="a container with host capabilities started"; return 1; }
	ct_bundle "out-ann-$S" --mode learn -- true || return 1
	ct_run "out-ann-$S"
	[ "$CT_RC" != 0 ] || { CT_WHY="learn mode started without the admin allowing it"; return 1; }
	want_eq "guarded, refused host-capabilities, refused annotation" \
		"$(outcome guarded none) $(outcome refused host-capabilities) $(outcome refused annotation)" \
		"$((g0 + 1)) $((h0 + 1)) $((a0 + 1))" || return 1
	read -r ver commit abi < <("$NSGUARD" --version | sed -E 's/^nsguard ([^ ]+) \(commit ([^,]+), ABI ([0-9a-f]+)\)$/\1 \2 \3/')
	m=$("$NSGUARD" status --format prometheus) || { CT_WHY="status --format prometheus failed"; return 1; }
	grep -qxF "nsguard_build_info{version=\"$ver\",commit=\"$commit\",abi=\"$abi\"} 1" <<<"$m" ||
		{ CT_WHY="build_info: $(grep '^nsguard_build_info' <<<"$m"), want $ver $commit $abi"; return 1; }
	grep -qx 'nsguard_pins_other_build 0' <<<"$m" || { CT_WHY="other_build not 0 for this build"; return 1; }
	if command -v promtool >/dev/null; then
		CT_OUT=$(promtool check metrics <<<"$m" 2>&1)
		want_eq "promtool check metrics: $CT_OUT" "$?" 0 || return 1
	else
		CT_WHY="promtool missing (Debian's prometheus, integration/deps)"
		return 1
	fi
	# Another build's view: status answers, and says so.
	m=$("$NEXT" status --format prometheus 2>&1)
	want_eq "nsguard-next status --format prometheus: exit" "$?" 0 || return 1
	grep -qx 'nsguard_pins_other_build 1' <<<"$m" ||
		{ CT_WHY="nsguard-next: $(grep '^nsguard_pins_other_build' <<<"$m")"; return 1; }
	grep -q "^nsguard_userns_decisions_total{id=\"out-ok-$S\"" <<<"$m" ||
		{ CT_WHY="nsguard-next does not list out-ok-$S"; return 1; }
	CT_OUT=$("$NEXT" status 2>&1)
	CT_RC=$?
	want_run "nsguard-next status" 0 "program:        another build's:*"
}
NEXT=${NSGUARD_NEXT_BIN:-$(dirname "$NSGUARD")/nsguard-next}
ct_case prometheus/hook-outcomes-build-info case_outcomes
