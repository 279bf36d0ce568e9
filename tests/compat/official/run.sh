#!/usr/bin/env bash
# The official Go client's own integration tests (github.com/camunda/zeebe/clients/go/v8 v8.3.0:
# test/integration_test.go and cmd/zbctl/main_test.go) against a default `zest start`, or
# against a running server or cluster at $ZEEBE_ADDRESS.
#
# They start Zeebe in Docker through the module's internal/containersuite; `go test -overlay`
# puts containersuite.go (beside this script, written for Zest) in its place, which starts
# $ZEST_BIN (or uses $ZEEBE_ADDRESS). The module comes from the Go module proxy and is copied
# into a scratch directory at each run (zbctl's test builds zbctl into its own tree); none of
# its code is kept in this repository.
#
#   ZEST_BIN=/abs/path/zest tests/compat/official/run.sh [go test flags]
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
MODULE=github.com/camunda/zeebe/clients/go/v8
VERSION=v8.3.0
export PATH=$PATH:/usr/local/go/bin
export GOFLAGS=-mod=mod
src=$(cd "$HERE/../go" && go mod download -json "$MODULE@$VERSION" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')
work=$(mktemp -d /tmp/zest-official-XXXXXX)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
cp -r "$src/." "$work/"
chmod -R u+w "$work"
chmod +x "$work/cmd/zbctl/build.sh" # module zips keep no file modes
cat >"$work/overlay.json" <<JSON
{"Replace": {"$work/internal/containersuite/containerSuite.go": "$HERE/containersuite.go"}}
JSON
cd "$work"
# Left out, with the reason:
# - TestOAuthIntegration puts an OAuth proxy (a second container) in front of Zeebe; Zest has
#   no OAuth.
# - Three zbctl cases name keys that Zeebe 8.3 handed out in that order ('create instance
#   2251799813685249', 'evaluate decision 2251799813685270', 'delete resource
#   2251799813685256'). Zeebe 8.8 numbers records differently (the deployment's key comes
#   first) and fails the same three with NOT_FOUND (checked against the real 8.8 engine in
#   ../shared/anchors/zeebe); Zest numbers them as 8.8 does.
skip='TestZbctlWithInsecureGateway/TestCommonCommands/(create_instance_with_process_key|evaluate_decision_with_decision_key|delete_resource)$'
# OFFICIAL_SKIP adds cases to leave out: against a cluster, the topology test and zbctl's
# `status` golden files, which expect Zeebe's one-broker, one-partition test container.
if [ -n "${OFFICIAL_SKIP:-}" ]; then skip="$skip|$OFFICIAL_SKIP"; fi
go test -overlay overlay.json -count=1 -timeout 10m \
  -run 'TestIntegration|TestLicense|TestZbctlWithInsecureGateway' -skip "$skip" "$@" \
  ./test/ ./cmd/zbctl/
