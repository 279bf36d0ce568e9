#!/usr/bin/env bash
# Measures the real Zeebe 8.8 engine (../shared/anchors/zeebe) on the DMN TCK cases of
# cases.jsonl and writes zeebe-passing.txt, which tests/dmn_tck.rs compares Zest with.
# Deploys each model and evaluates each case through EvaluateDecision (with the zest CLI as
# the gRPC client); the input of a case is its FEEL context as JSON (what a process's variables
# are), the decision found by name. A model Zeebe refuses passes none of its cases.
#
#   crates/zest-model/tests/dmn_tck/zeebe.sh      (needs a JDK >= 21, Maven, target/release/zest)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
work=$(mktemp -d /tmp/zest-dmn-tck-XXXXXX)
port=${PORT:-26650}
anchor=${ANCHOR_BUILD:-/tmp/zest-zeebe-anchor}
[ -d "$anchor/target/lib" ] || { rm -rf "$anchor"; cp -r "$root/../shared/anchors/zeebe" "$anchor"; }
"$anchor/run-engine.sh" "$port" >"$work/engine.log" 2>&1 &
engine=$!
trap 'kill $engine 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 1 120); do grep -q READY "$work/engine.log" && break; sleep 1; done
# the inputs as JSON, from Zest's own FEEL
(cd "$root" && DMN_TCK_INPUTS="$work/inputs.jsonl" cargo test -q -p zest-model --test dmn_tck >/dev/null)
examples=$(cd "$root" && cargo metadata --format-version 1 | python3 -c '
import json, sys, os
for p in json.load(sys.stdin)["packages"]:
    if p["name"] == "dsntk-examples":
        print(os.path.dirname(p["manifest_path"]))')
python3 "$here/zeebe.py" "$root/target/release/zest" "127.0.0.1:$port" "$examples" "$work/inputs.jsonl" "$work/outputs.jsonl"
(cd "$root" && DMN_TCK_ZEEBE="$work/outputs.jsonl" cargo test -q -p zest-model --test dmn_tck -- --nocapture | grep "DMN TCK" || true)
