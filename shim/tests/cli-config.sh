#!/bin/bash
# Host tests of `nsguard check --config FILE` and `nsguard explain` (#14
# item 2) against build/nsguard: neither calls bpf() or needs privileges, so
# they run without capabilities here.  Never `nsguard check` without
# --config: that one tries a trial attach.
# The conditions are strings that ok() evaluates after each run (SC2016).
# shellcheck source=integration/tests/lib.sh disable=SC1091,SC2016
. "$(dirname "$0")/../../integration/tests/lib.sh"

t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
chmod 755 "$t"
# What the unprivileged runs read lives in $t: the checkout may sit in a
# directory only root can enter (a CI clone under mktemp -d).
cp "$NSGUARD" "$t/nsguard" && NSGUARD=$t/nsguard
cp "$NSG_REPO/examples/nsguard.conf" "$t/example.conf"
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$@"; }
run() { capture "$t" nobody "$@"; }
# ok NAME COND WHY: PASS if the shell test COND (a command) succeeds.
ok() {
	local name=$1 why=$2
	shift 2
	if "$@"; then pass "cli/$name"; else fail "cli/$name" "$why (rc $rc; out: ${out:0:300}; err: ${err:0:300})"; fi
}
has() { [[ $out == *"$1"* ]]; }
jqt() { jq -e "$1" <<<"$out" >/dev/null 2>&1; }

cat >"$t/bad.conf" <<'CONF'
# three bad lines and a conflict
default-mode = allow
allowed-modes = deny audit
max-depth = 40
bogus = 1
errno = EPERM
errno = ENOSPC
CONF
printf 'default-mode = deny\nallowed-modes = deny audit allow\nmax-depth = 2\nmax-count = 5\n' >"$t/good.conf"
chmod 644 "$t"/*.conf && chmod 755 "$t/nsguard"

# check --config: every error with FILE:LINE, exit 1; a good file exit 0.
run "$NSGUARD" check --config "$t/bad.conf"
ok check-config-every-error "want exit 1 and the four errors with their lines" eval \
	'[ "$rc" = 1 ] && has "$t/bad.conf:4: max-depth" && has "$t/bad.conf:5: unknown key \"bogus\"" &&
	 has "$t/bad.conf:7: errno is already set on line 6" &&
	 has "$t/bad.conf:2: default-mode allow is not in allowed-modes" && has "$t/bad.conf: 4 errors"'
run "$NSGUARD" --config "$t/bad.conf" check --json
ok check-config-json "want exit 1 and valid:false with 4 errors" eval \
	'[ "$rc" = 1 ] && jqt ".ok == false and .config.valid == false and (.config.errors | length) == 4 and
		([.config.errors[].line] == [4, 5, 7, 2])"'
run "$NSGUARD" check --config "$t/good.conf"
ok check-config-good "want exit 0 and ok" eval '[ "$rc" = 0 ] && has "ok       admin config $t/good.conf"'
run "$NSGUARD" check --json --config "$t/good.conf"
ok check-config-good-json "want exit 0, valid and no errors" eval \
	'[ "$rc" = 0 ] && jqt ".ok and .config.valid and .config.errors == []"'
run "$NSGUARD" check --config "$t/missing.conf"
ok check-config-missing "want exit 1, one nsguard: line on stderr naming the file" eval \
	'[ "$rc" = 1 ] && [ "$(head -n 1 <<<"$err")" = "nsguard: open config $t/missing.conf: No such file or directory" ]'
run "$NSGUARD" check --config "$t/missing.conf" --json
ok check-config-missing-json "want exists:false" eval '[ "$rc" = 1 ] && jqt ".config.exists == false and .config.valid == false"'
# identity-source: one of three words, checked like every key.
printf 'identity-source = crio\n' >"$t/ident-bad.conf"
printf 'identity-source = cri-o\n' >"$t/ident-good.conf"
chmod 644 "$t"/ident-*.conf
run "$NSGUARD" check --config "$t/ident-bad.conf"
ok check-config-identity-source-bad "want exit 1 naming the line" eval \
	'[ "$rc" = 1 ] && has "$t/ident-bad.conf:1: identity-source \"crio\" is not containerd, cri-o or none"'
run "$NSGUARD" check --config "$t/ident-good.conf"
ok check-config-identity-source-good "want exit 0" eval '[ "$rc" = 0 ]'

# suggest: one file per container with the id; the newest, with a note on
# stderr, or --all every one, newest first.  (No record: no bpf().)
mkdir -p "$t/learn"
printf 'learn-dir = %s\n' "$t/learn" >"$t/learn.conf"
printf '{"id":"ci","cgroup_id":7,"n":"old"}\n' >"$t/learn/ci@7.json"
printf '{"id":"ci","cgroup_id":9,"n":"new"}\n' >"$t/learn/ci@9.json"
printf '{"id":"cix","cgroup_id":11}\n' >"$t/learn/cix@11.json"
touch -d '2026-01-01 00:00' "$t/learn/ci@7.json"
touch -d '2026-01-02 00:00' "$t/learn/ci@9.json"
chmod 644 "$t/learn.conf" "$t"/learn/*.json
run "$NSGUARD" suggest --config "$t/learn.conf" ci
ok suggest-newest-with-note "want the newest and a note naming ci@9.json and --all" eval \
	'[ "$rc" = 0 ] && [ "$out" = "{\"id\":\"ci\",\"cgroup_id\":9,\"n\":\"new\"}" ] &&
	 [[ $err == *"2 containers named ci"*"ci@9.json"*"suggest --all ci"* ]]'
run "$NSGUARD" suggest --all --config "$t/learn.conf" ci
ok suggest-all-newest-first "want both lines, newest first, no note" eval \
	'[ "$rc" = 0 ] && [ "$(jq -r .n <<<"$out" | tr "\n" " ")" = "new old " ] && [ -z "$err" ]'
run "$NSGUARD" suggest --config "$t/learn.conf" cix
ok suggest-one-no-note "want cix@11.json alone, no note" eval \
	'[ "$rc" = 0 ] && jqt ".cgroup_id == 11" && [ -z "$err" ]'
run "$NSGUARD" suggest --config "$t/learn.conf" other
ok suggest-none "want exit 1 and no suggestion" eval \
	'[ "$rc" = 1 ] && [[ $err == *"no suggestion for other in $t/learn"* ]]'

run "$NSGUARD" check --config "$t/example.conf"
ok check-config-example "the shipped example must be valid" eval '[ "$rc" = 0 ]'

# explain: the defaults, an annotation within the limits, one beyond them.
run "$NSGUARD" explain --config "$t/good.conf"
ok explain-default "want mode deny from default-mode at line 1" eval \
	'[ "$rc" = 0 ] && [[ $out == *"mode        deny       no annotation: default-mode ($t/good.conf:1)"* ]] &&
	 has "max-depth   0          mode deny allows no nesting"'
run "$NSGUARD" explain --config "$t/good.conf" --annotation nsguard.io/userns=allow \
	--annotation nsguard.io/userns.max-depth=1
ok explain-annotation "want allow and depth 1 from the annotations, within the lines of the limits" eval \
	'[ "$rc" = 0 ] && has "annotation nsguard.io/userns=allow, within allowed-modes deny, audit, allow ($t/good.conf:2)" &&
	 has "annotation nsguard.io/userns.max-depth=1, within max-depth 2 ($t/good.conf:3)" &&
	 has "max-count   5          no annotation: max-count ($t/good.conf:4)"'
run "$NSGUARD" explain --config "$t/good.conf" --annotation nsguard.io/userns=audit --json
ok explain-json "want the policy and the sources as JSON" eval \
	'[ "$rc" = 0 ] && jqt ".refused == false and .policy.mode == \"audit\" and .policy.max_depth == 2 and
		.why.mode.from == \"annotation\" and .why.mode.config_line == 2 and
		.why.max_depth.from == \"default\" and .why.max_depth.config_key == \"max-depth\" and
		.why.base_level.from == \"hook\" and (.policy | has(\"base_level\") | not)"'
run "$NSGUARD" explain --config "$t/good.conf" --annotation nsguard.io/userns.max-depth=3 \
	--annotation nsguard.io/userns=allow
ok explain-beyond-limit "want the hook's refusal, exit 1" eval \
	'[ "$rc" = 1 ] && [[ $err == *"refused: annotation nsguard.io/userns.max-depth=3 exceeds the administrator'"'"'s max-depth 2"* ]]'
run "$NSGUARD" explain --config "$t/good.conf" --annotation nsguard.io/userns=learn --json
ok explain-mode-not-allowed-json "want refused:true and the message, exit 1" eval \
	'[ "$rc" = 1 ] && jqt ".refused and (.error | test(\"not permitted: allowed-modes is deny, audit, allow\"))"'
run "$NSGUARD" explain --annotation nsguard.io/userns=sometimes
ok explain-bad-value "want exit 1 naming the value" eval '[ "$rc" = 1 ] && [[ $err == *"sometimes"* ]]'
run "$NSGUARD" explain --annotation nsguard.io/userns=allow --annotation nsguard.io/userns=deny
ok explain-given-twice "want the hook's 'given twice'" eval '[ "$rc" = 1 ] && [[ $err == *"given twice"* ]]'

# --bundle: config.json's annotations, under those given (the state's).
mkdir -p "$t/bundle"
echo '{"ociVersion":"1.0.2","annotations":{"nsguard.io/userns":"audit","nsguard.io/userns.errno":"ENOSPC","other":"x"}}' \
	>"$t/bundle/config.json"
chmod -R a+rX "$t/bundle"
run "$NSGUARD" explain --config "$t/good.conf" --bundle "$t/bundle" --json
ok explain-bundle "want audit and ENOSPC from config.json" eval \
	'[ "$rc" = 0 ] && jqt ".policy.mode == \"audit\" and .policy.errno == \"ENOSPC\" and .why.errno.from == \"annotation\""'
run "$NSGUARD" explain --config "$t/good.conf" --bundle "$t/bundle" --annotation nsguard.io/userns=allow --json
ok explain-state-wins "an --annotation wins over config.json's, as the state does for the hook" eval \
	'[ "$rc" = 0 ] && jqt ".policy.mode == \"allow\" and .policy.errno == \"ENOSPC\""'
run "$NSGUARD" explain --bundle "$t/nobundle"
ok explain-bundle-missing "want exit 1 naming config.json" eval '[ "$rc" = 1 ] && [[ $err == *"$t/nobundle/config.json"* ]]'

# A hook's --config must be absolute: runtimes run hooks in the bundle, which
# the container's creator writes (review of #29).  Refused before any bpf().
mkdir -p "$t/bundle" && echo '{"ociVersion":"1.0.2"}' >"$t/bundle/config.json"
cp "$t/example.conf" "$t/bundle/rel.conf"
(cd "$t/bundle" && printf '{"ociVersion":"1.0.2","id":"x","pid":1,"bundle":"%s"}' "$t/bundle" |
	nobody "$NSGUARD" hook createRuntime --config rel.conf >"$t/out" 2>"$t/err")
rc=$? out=$(cat "$t/out") err=$(cat "$t/err")
ok hook-relative-config "a hook takes a relative --config" \
	eval '[ "$rc" = 1 ] && [[ $err == "nsguard: --config rel.conf is relative: a hook runs in the container'"'"'s bundle; give the config'"'"'s absolute path" ]]'

# [namespace] sections (#42): check reports them, refuses one above the node's
# ceiling at FILE:LINE, and explain says which applied and why.
cat >"$t/ns.conf" <<'CONF'
max-depth = 4
[namespace ci-builders]
default-mode = allow
max-depth = 2
[namespace ci-*]
default-mode = audit
CONF
sed 's/^max-depth = 4$/max-depth = 4\nidentity-source = cri-o/' "$t/ns.conf" >"$t/ns-crio.conf"
printf 'max-depth = 2\n[namespace ci-builders]\nmax-depth = 3\nfail-mode = open\n' >"$t/ns-bad.conf"
chmod 644 "$t"/ns*.conf
run "$NSGUARD" check --config "$t/ns.conf"
ok check-sections "want both sections with their lines and keys" eval \
	'[ "$rc" = 0 ] && has "[namespace ci-builders] line 2: default-mode allow" && has "[namespace ci-*] line 5 (glob): default-mode audit"'
run "$NSGUARD" check --config "$t/ns.conf" --json
ok check-sections-json "want sections in --json, node first" eval \
	'[ "$rc" = 0 ] && jqt ".config.sections | map(.name) == [\"node\", \"namespace:ci-builders\", \"namespace:ci-*\"]"'
run "$NSGUARD" check --config "$t/ns-bad.conf"
ok check-section-above-node "want FILE:LINE for the ceiling and the node-wide key, exit 1" eval \
	'[ "$rc" = 1 ] && has "$t/ns-bad.conf:3: [namespace ci-builders] max-depth 3 exceeds the node'"'"'s max-depth 2 (line 1)" && has "$t/ns-bad.conf:4: fail-mode is node-wide" && has "2 errors"'

CRI=io.kubernetes.cri.sandbox-namespace
run "$NSGUARD" explain --config "$t/ns.conf" --annotation "$CRI=ci-builders" --json
ok explain-section-exact "want ci-builders' section, its default and its max-depth line" eval \
	'[ "$rc" = 0 ] && jqt ".section.name == \"namespace:ci-builders\" and .section.line == 2 and .policy.mode == \"allow\" and .policy.max_depth == 2 and .why.max_depth.config_line == 4"'
run "$NSGUARD" explain --config "$t/ns.conf" --annotation "$CRI=ci-x"
ok explain-section-glob "want the glob, named as the reason" eval \
	'[ "$rc" = 0 ] && has "section: namespace:ci-*: namespace ci-x ($CRI) matches the glob [namespace ci-*] (line 5)"'
run "$NSGUARD" explain --config "$t/ns.conf" --annotation "$CRI=ci-builders" --annotation nsguard.io/userns.max-depth=3
ok explain-section-ceiling "an annotation beyond the section's max-depth is refused, naming the section" eval \
	'[ "$rc" = 1 ] && [[ $err == *"max-depth 2 ($t/ns.conf, [namespace ci-builders] on line 2)"* ]]'
# Names nsguard does not trust get the node's section, whatever a glob says.
long=ci-$(printf 'a%.0s' {1..61})
for ns in 'ci-*' 'ci-?' "$long" 'CI-builders' 'ci-b\u00e9'; do
	run "$NSGUARD" explain --config "$t/ns.conf" --annotation "$CRI=$ns" --json
	ok "explain-section-untrusted-${ns:0:6}" "want the node's section for \"$ns\"" eval \
		'[ "$rc" = 0 ] && jqt ".section.name == \"node\" and .policy.mode == \"deny\" and (.section.text | test(\"not a Kubernetes namespace\"))"'
done
run "$NSGUARD" explain --config "$t/ns.conf" --annotation "$CRI=" --json
ok explain-section-empty "an empty namespace is none: the node's section" eval \
	'[ "$rc" = 0 ] && jqt ".section.name == \"node\" and .policy.mode == \"deny\""'
run "$NSGUARD" explain --config "$t/ns.conf" --annotation "$CRI=${long:0:63}" --json
ok explain-section-63 "63 bytes are a namespace the glob takes" eval \
	'[ "$rc" = 0 ] && jqt ".section.name == \"namespace:ci-*\""'
# containerd: io.kubernetes.pod.namespace is the pod's to write.
run "$NSGUARD" explain --config "$t/ns.conf" --annotation io.kubernetes.pod.namespace=ci-builders --json
ok explain-section-containerd-forged "want the node's section" eval \
	'[ "$rc" = 0 ] && jqt ".section.name == \"node\" and .policy.mode == \"deny\""'

# CRI-O's spec as it writes it: the pod's annotations first (forged keys),
# then CRI-O's own, then the kubelet's io.kubernetes.pod.namespace last.
mkdir -p "$t/crio"
cat >"$t/crio/config.json" <<'JSON'
{"ociVersion":"1.0.2","annotations":{
 "io.kubernetes.cri.sandbox-namespace":"ci-builders",
 "io.kubernetes.cri-o.Namespace":"ci-builders",
 "io.kubernetes.cri-o.ContainerType":"container",
 "io.kubernetes.cri-o.Name":"k8s_app_web_default_0",
 "io.kubernetes.pod.name":"web",
 "io.kubernetes.container.name":"app",
 "io.kubernetes.pod.namespace":"default"}}
JSON
chmod -R a+rX "$t/crio"
run "$NSGUARD" explain --config "$t/ns-crio.conf" --bundle "$t/crio" --json
ok explain-crio-forged "identity-source cri-o: forged cri-o.Namespace and cri.* keys get nothing" eval \
	'[ "$rc" = 0 ] && jqt ".section.name == \"node\" and .section.namespace == \"default\" and .section.key == \"io.kubernetes.pod.namespace\" and .policy.mode == \"deny\""'
sed -i 's/"io.kubernetes.pod.namespace":"default"/"io.kubernetes.pod.namespace":"ci-builders"/' "$t/crio/config.json"
run "$NSGUARD" explain --config "$t/ns-crio.conf" --bundle "$t/crio" --json
ok explain-crio-kubelet-key "the kubelet's key picks the section" eval \
	'[ "$rc" = 0 ] && jqt ".section.name == \"namespace:ci-builders\" and .policy.mode == \"allow\""'
