#!/bin/bash
# Host test of examples/kubernetes/admission.yaml (#42 item 5): no API server
# runs here, so the ValidatingAdmissionPolicy is parsed, not applied.  It must
# name every nsguard.io/ annotation nsguard knows (from build/nsguard's own
# refusal, which lists policy_fields[]: it cannot drift) and every RuntimeClass
# the manifests define but the plain `nsguard` one, and the binding must
# exempt exactly the namespaces labelled nsguard.io/relaxed=true.
# shellcheck source=integration/tests/lib.sh disable=SC1091
. "$(dirname "$0")/../../integration/tests/lib.sh"

known=$("$NSGUARD" explain --annotation nsguard.io/x=1 2>&1 | sed -n 's/.*(known: \(.*\))$/\1/p')
if [ -z "$known" ]; then
	fail cli/admission-known-keys "nsguard explain did not list the known annotations"
	exit 0
fi
NSG_KNOWN=$known python3 - "$NSG_REPO" <<'PY'
import glob, os, re, sys
repo = sys.argv[1]
def res(name, ok, why=""):
    print(("PASS: cli/%s" % name) if ok else ("FAIL: cli/%s: %s" % (name, why)))
try:
    import yaml
except ImportError:
    res("admission-yaml", False, "python3-yaml is missing (integration/deps)")
    sys.exit(0)
docs = []
for path in sorted(glob.glob(os.path.join(repo, "examples/kubernetes/*.yaml"))):
    with open(path) as f:
        docs += [(path, d) for d in yaml.safe_load_all(f) if d]
vap = [d for _, d in docs if d.get("kind") == "ValidatingAdmissionPolicy"]
bind = [d for _, d in docs if d.get("kind") == "ValidatingAdmissionPolicyBinding"]
rcs = [d for _, d in docs if d.get("kind") == "RuntimeClass"]
res("admission-one-policy", len(vap) == 1 and len(bind) == 1 and
    all(d["apiVersion"] == "admissionregistration.k8s.io/v1" for d in vap + bind),
    "want one v1 policy and one binding, got %d, %d" % (len(vap), len(bind)))
if len(vap) != 1 or len(bind) != 1:
    sys.exit(0)
vap, bind = vap[0], bind[0]
var = {v["name"]: v["expression"] for v in vap["spec"]["variables"]}
def strings(expr):
    return re.findall(r"'([^']*)'", expr)
known = [k.strip() for k in os.environ["NSG_KNOWN"].split(",")]
named = strings(var.get("nsguardAnnotations", ""))
res("admission-annotations", sorted(named) == sorted(known),
    "policy names %s, nsguard knows %s" % (named, known))
exprs = " ".join(v["expression"] for v in vap["spec"]["validations"])
res("admission-prefix", "startsWith('nsguard.io/')" in exprs and "variables.nsguardAnnotations" in exprs,
    "a validation must refuse the known keys and any other nsguard.io/ key")
relaxing = sorted(rc["metadata"]["name"] for rc in rcs if rc["handler"] != "nsguard")
listed = strings(var.get("relaxedRuntimeClasses", ""))
res("admission-runtimeclasses", len(rcs) >= 2 and sorted(listed) == relaxing,
    "policy lists %s, the manifests' relaxing RuntimeClasses are %s" % (listed, relaxing))
res("admission-runtimeclass-checked", "variables.relaxedRuntimeClasses" in exprs and "runtimeClassName" in exprs,
    "a validation must refuse the relaxing RuntimeClasses")
# Every CRI handler nsguard's containerd drop-in defines has a RuntimeClass.
handlers = set()
for path in glob.glob(os.path.join(repo, "examples/containerd/nsguard-runtimes*.toml.in")):
    handlers |= set(re.findall(r'runtimes\.(nsguard[a-z-]*)\]', open(path).read()))
res("admission-handlers", handlers and handlers <= {rc["handler"] for rc in rcs},
    "containerd handlers %s, RuntimeClass handlers %s" % (sorted(handlers), sorted(rc["handler"] for rc in rcs)))
rules = vap["spec"]["matchConstraints"]["resourceRules"]
res("admission-pods", any("pods" in r["resources"] and "CREATE" in r["operations"] and "UPDATE" in r["operations"] for r in rules),
    "the policy must match pod CREATE and UPDATE")
sel = bind["spec"].get("matchResources", {}).get("namespaceSelector", {}).get("matchExpressions", [])
res("admission-binding", bind["spec"]["policyName"] == vap["metadata"]["name"] and
    bind["spec"]["validationActions"] == ["Deny"] and
    sel == [{"key": "nsguard.io/relaxed", "operator": "NotIn", "values": ["true"]}],
    "the binding must Deny outside namespaces labelled nsguard.io/relaxed=true: %s" % sel)
PY
