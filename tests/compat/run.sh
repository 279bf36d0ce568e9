#!/usr/bin/env bash
# Black-box compatibility suites for Zest (see tests/compat/README.md).
#
#   tests/compat/run.sh                              # all suites against $ZEST_BIN (default target/release/zest)
#   ZEEBE_ADDRESS=127.0.0.1:26500 tests/compat/run.sh  # all but the crash test against a running server
#
# Suites, in order, stopping at the first that fails: Go client compat tests, the official Go
# client's own integration tests, zbctl, the zest CLI as zbctl, pytest (pyzeebe), Camunda's
# Node.js SDK, c8ctl (Camunda's REST CLI, zest only), the web UI in Chromium (tests/ui, zest only),
# schemathesis against Camunda's OpenAPI
# document (zest only), the Java client (gRPC, and REST with the
# 8.8 client's defaults), Camunda's Spring Boot starter, Camunda Process Test (remote runtime),
# crash test (zest only).
# Installs what it needs on a fresh Debian machine: Go (must be >= 1.21), python3 + venv (a
# venv in tests/compat/.venv), zbctl (built into tests/compat/bin), Node.js >= 22 (the npm
# registry's `node` package in tests/compat/.node, when the system's node is older), the SDK
# (tests/compat/node/node_modules) and c8ctl (copied from ../shared into tests/compat/.c8ctl).
#
# Env: ZEST_BIN, ZEEBE_ADDRESS, COMPAT_VERBOSE=1 (go test -v / pytest -v), COMPAT_SUITES (space
# separated subset of: go official zbctl zest-cli python node c8ctl ui schemathesis java spring cpt auth oidc crash partitions cluster postgres; crash runs three
# variants: default, log fsync off, and snapshots/segment deletion/backups during the kills;
# partitions runs go, python, java and crash against 3 partitions; cluster runs go, python and
# java against `zest cluster` (3 nodes, 3 partitions, replication factor 3) and the crash test
# with SIGKILLs of random nodes of such a cluster; postgres runs the history's tests on
# PostgreSQL, the Java suite against a node on it, and its outage and leader-kill faults; auth
# runs c8ctl, the Java client and the Node SDK with their own Basic settings against one node
# with --auth basic; oidc runs a real Keycloak (scripts/keycloak.sh, its download cached in
# ~/.cache/zest/keycloak) and curl, zbctl, the Java client and the Node SDK with their own OAuth
# settings against one node with --auth oidc: tests/compat/oidc/run.sh),
# CRASH_* (see
# go/crash/crash_test.go).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
SUITES=${COMPAT_SUITES:-go official zbctl zest-cli python node c8ctl ui schemathesis java spring cpt auth oidc crash partitions cluster postgres}
VERBOSE=${COMPAT_VERBOSE:-}
# the clusters' nodes and gateways the suites start share this secret (the internal port admits
# only members; `zest cluster` would make one of its own)
export ZEST_CLUSTER_SECRET=${ZEST_CLUSTER_SECRET:-compat-suites-cluster-secret}

log() { printf '\n==== %s\n' "$*"; }
die() { printf 'compat: %s\n' "$*" >&2; exit 1; }
want() { [[ " $SUITES " == *" $1 "* ]]; }
apt_install() {
  command -v apt-get >/dev/null || die "cannot install $* (no apt-get): install it by hand"
  local sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}

# ---------------------------------------------------------------------------------------------
# Target
if [ -n "${ZEEBE_ADDRESS:-}" ]; then
  MODE="external server $ZEEBE_ADDRESS"
  unset ZEST_BIN
  SUITES=${SUITES//crash/}
  echo "compat: external server: the crash test (which kills and restarts zest) is skipped"
else
  ZEST_BIN=${ZEST_BIN:-$ROOT/target/release/zest}
  case $ZEST_BIN in /*) ;; *) ZEST_BIN=$(cd "$(dirname "$ZEST_BIN")" && pwd)/$(basename "$ZEST_BIN") ;; esac
  [ -x "$ZEST_BIN" ] || die "ZEST_BIN=$ZEST_BIN is not an executable; build it with 'cargo build --release -p zest' or set ZEST_BIN / ZEEBE_ADDRESS"
  export ZEST_BIN
  MODE="zest binary $ZEST_BIN"
fi
echo "compat: suites [$SUITES] against $MODE"

# ---------------------------------------------------------------------------------------------
# Tools
export PATH=$PATH:/usr/local/go/bin:$HOME/go/bin
go_ok() { command -v go >/dev/null && go version | grep -qE 'go1\.(2[1-9]|[3-9][0-9])'; }
if want go || want official || want zbctl || want zest-cli || want crash || want partitions || want cluster; then
  if ! go_ok; then
    # Debian's golang-go is new enough from trixie on (bookworm has 1.19: use bookworm-backports'
    # golang-1.21+ or the tarball from go.dev into /usr/local/go).
    apt_install golang-go || true
    for d in /usr/lib/go-1.2[1-9]/bin; do [ -x "$d/go" ] && export PATH=$d:$PATH; done
    go_ok || die "need Go >= 1.21 (found: $(go version 2>/dev/null || echo none))"
  fi
  echo "compat: $(go version)"
fi
if want python || want partitions || want cluster; then
  command -v python3 >/dev/null || apt_install python3
  VENV=$HERE/.venv
  if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV" 2>/dev/null || { apt_install python3-venv; rm -rf "$VENV"; python3 -m venv "$VENV"; }
  fi
  STAMP=$VENV/.requirements.sha
  SUM=$(sha256sum "$HERE/python/requirements.txt" | cut -d' ' -f1)
  if [ "$(cat "$STAMP" 2>/dev/null)" != "$SUM" ]; then
    "$VENV/bin/pip" install -q --disable-pip-version-check -r "$HERE/python/requirements.txt"
    echo "$SUM" >"$STAMP"
  fi
  echo "compat: $("$VENV/bin/python" --version), pyzeebe $("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("pyzeebe"))')"
fi
if want node || want c8ctl || want ui || want auth || want oidc; then
  # Camunda's Node.js SDK (tests/compat/node) on Node 22: a system node >= 22, else the npm
  # registry's `node` package (a prebuilt Node 22 for this platform) installed into
  # tests/compat/.node by the system's npm (Debian bookworm's nodejs is 18, trixie's 20); if
  # that fails, a system node >= 20 (the suite passes on 20 too; its packages need >= 18, and
  # node --test's --test-concurrency >= 20).
  node_major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
  NODE_TOOLS=$HERE/.node
  NODE_BIN=$NODE_TOOLS/node_modules/.bin/node
  if [ "$(node_major "$NODE_BIN")" -lt 22 ]; then
    if command -v node >/dev/null && [ "$(node_major node)" -ge 22 ]; then
      NODE_BIN=$(command -v node)
    else
      command -v npm >/dev/null || apt_install nodejs npm
      npm install --loglevel=error --no-audit --no-fund --prefix "$NODE_TOOLS" node@22 >/dev/null || true
      if [ "$(node_major "$NODE_BIN")" -lt 22 ]; then
        [ "$(node_major node)" -ge 20 ] || die "need Node.js >= 20 (npm install node@22 into $NODE_TOOLS failed; system node: $(node --version 2>/dev/null || echo none))"
        echo "compat: npm install node@22 failed: the node suite runs on the system's $(node --version)"
        NODE_BIN=$(command -v node)
      fi
    fi
  fi
  NODE_PATH_DIR=$(dirname "$NODE_BIN")
fi
if want node || want python; then
  # the TLS tests (node/tls.test.js, python/test_tls.py) make their certificates with
  # make_certs.sh, which runs the openssl command
  command -v openssl >/dev/null || apt_install openssl
fi
if want node || want auth || want oidc; then
  # npm runs under the node it finds first on PATH: the one the suite runs on
  STAMP=$HERE/node/node_modules/.package-lock.sha
  SUM=$(sha256sum "$HERE/node/package-lock.json" | cut -d' ' -f1)
  if [ "$(cat "$STAMP" 2>/dev/null)" != "$SUM" ]; then
    (cd "$HERE/node" && PATH=$NODE_PATH_DIR:$PATH npm ci --loglevel=error --no-audit --no-fund >/dev/null)
    echo "$SUM" >"$STAMP"
  fi
  echo "compat: node $("$NODE_BIN" --version), @camunda8/sdk $("$NODE_BIN" -p "require('$HERE/node/node_modules/@camunda8/sdk/package.json').version"), @camunda8/orchestration-cluster-api $("$NODE_BIN" -p "require('$HERE/node/node_modules/@camunda8/orchestration-cluster-api/package.json').version")"
fi
if want c8ctl || want auth; then
  # c8ctl 3.3.0 (Camunda's REST CLI) from the shared folder beside the checkout; the suite's
  # harness copies it into tests/compat/.c8ctl and installs it there once (npm install node@22,
  # since c8ctl needs Node >= 22.18, then npm install); node --test itself runs on $NODE_BIN
  [ -f "$ROOT/../shared/tools/c8ctl-3.3.0/dist/index.js" ] ||
    die "c8ctl 3.3.0 is missing: expected $ROOT/../shared/tools/c8ctl-3.3.0 (the shared/ folder beside the checkout)"
  if [ -n "${ZEEBE_ADDRESS:-}" ]; then
    echo "compat: external server: the c8ctl suite (it starts zest on ports of its own) is skipped"
  fi
fi
if want ui; then
  # the web UI's browser tests (tests/ui): playwright-core (pinned by its package-lock) driving
  # Debian's chromium (Playwright's own browser downloads are not fetched)
  STAMP=$ROOT/tests/ui/node_modules/.package-lock.sha
  SUM=$(sha256sum "$ROOT/tests/ui/package-lock.json" | cut -d' ' -f1)
  if [ "$(cat "$STAMP" 2>/dev/null)" != "$SUM" ]; then
    (cd "$ROOT/tests/ui" && PATH=$NODE_PATH_DIR:$PATH npm ci --loglevel=error --no-audit --no-fund >/dev/null)
    echo "$SUM" >"$STAMP"
  fi
  [ -n "${CHROMIUM_BIN:-}" ] || command -v chromium >/dev/null || apt_install chromium
  echo "compat: playwright-core $("$NODE_BIN" -p "require('$ROOT/tests/ui/node_modules/playwright-core/package.json').version"), $("${CHROMIUM_BIN:-chromium}" --version 2>/dev/null | head -1)"
fi
if want schemathesis; then
  # schemathesis (PyPI) in a venv of its own (tests/compat/schemathesis/.venv), against
  # Camunda's OpenAPI document from the shared folder beside the checkout (never copied here)
  [ -f "${CAMUNDA_SPEC:-$ROOT/../shared/specs/camunda-rest-api-8.8.yaml}" ] ||
    die "Camunda's OpenAPI document is missing: expected $ROOT/../shared/specs/camunda-rest-api-8.8.yaml (the shared/ folder beside the checkout)"
  command -v python3 >/dev/null || apt_install python3
  ST_VENV=$HERE/schemathesis/.venv
  if [ ! -x "$ST_VENV/bin/python" ]; then
    python3 -m venv "$ST_VENV" 2>/dev/null || { apt_install python3-venv; rm -rf "$ST_VENV"; python3 -m venv "$ST_VENV"; }
  fi
  STAMP=$ST_VENV/.requirements.sha
  SUM=$(sha256sum "$HERE/schemathesis/requirements.txt" | cut -d' ' -f1)
  if [ "$(cat "$STAMP" 2>/dev/null)" != "$SUM" ]; then
    "$ST_VENV/bin/pip" install -q --disable-pip-version-check -r "$HERE/schemathesis/requirements.txt"
    echo "$SUM" >"$STAMP"
  fi
fi
if want java || want spring || want cpt || want partitions || want cluster || want postgres || want auth || want oidc; then
  # the official Java client (tests/compat/java), the Spring Boot starter (spring) and Camunda
  # Process Test (cpt): a JDK >= 17 and Maven; their artifacts come from Maven Central into ~/.m2
  command -v mvn >/dev/null || apt_install maven
  command -v javac >/dev/null || apt_install default-jdk-headless
  echo "compat: $(mvn -v 2>/dev/null | head -1)"
fi
if want zbctl || want oidc; then
  log "building zbctl (github.com/camunda/zeebe/clients/go/v8 v8.3.0)"
  (cd "$HERE/go" && go build -o "$HERE/bin/zbctl" github.com/camunda/zeebe/clients/go/v8/cmd/zbctl)
  export ZBCTL_BIN=$HERE/bin/zbctl
  "$ZBCTL_BIN" version | head -1
fi

# ---------------------------------------------------------------------------------------------
# Suites
GOV=(); [ -n "$VERBOSE" ] && GOV=(-v)
PYV=(-q); [ -n "$VERBOSE" ] && PYV=(-v)
declare -a SUMMARY=()
run_suite() { # name, command...
  local name=$1; shift
  log "suite $name: $*"
  local t0=$SECONDS rc=0
  "$@" || rc=$?
  local line="suite $name: $([ $rc = 0 ] && echo PASS || echo "FAIL (exit $rc)") in $((SECONDS - t0))s"
  SUMMARY+=("$line")
  echo "$line"
  if [ $rc != 0 ]; then
    echo; printf '%s\n' "${SUMMARY[@]}"
    exit $rc
  fi
}

if want go; then
  # ./tls: the Go client, zbctl (when built) and the zest CLI over TLS, against a zest of its own
  run_suite go bash -c "cd '$HERE/go' && go test ${GOV[*]} -count=1 -timeout 5m ./compat ./tls"
fi
# the official Go client's own integration tests, against a default `zest start`
if want official; then
  run_suite official "$HERE/official/run.sh"
fi
if want zbctl; then
  run_suite zbctl bash -c "cd '$HERE/go' && go test ${GOV[*]} -count=1 -timeout 5m ./zbctl"
fi
# the same zbctl commands with the zest CLI in zbctl's place
if want zest-cli && [ -n "${ZEST_BIN:-}" ]; then
  run_suite zest-cli env ZBCTL_BIN="$ZEST_BIN" \
    bash -c "cd '$HERE/go' && go test ${GOV[*]} -count=1 -timeout 5m ./zbctl"
fi
if want python; then
  run_suite python bash -c "cd '$HERE/python' && '$VENV/bin/python' -m pytest ${PYV[*]} -p no:cacheprovider ."
fi
# node --test runs each *.test.js in a process of its own; the harness starts zest (ZEST_BIN)
# or takes ZEEBE_ADDRESS
if want node; then
  run_suite node bash -c "cd '$HERE/node' && PATH='$NODE_PATH_DIR':\$PATH node --test --test-reporter=spec --test-concurrency=1"
fi
# c8ctl, Camunda's REST CLI, against `zest start` on kernel-given ports (CAMUNDA_BASE_URL only),
# and against its default profile (localhost:8080, demo/demo) when port 8080 is free (zest only)
if want c8ctl && [ -n "${ZEST_BIN:-}" ]; then
  run_suite c8ctl bash -c "cd '$HERE/c8ctl' && PATH='$NODE_PATH_DIR':\$PATH node --test --test-reporter=spec --test-concurrency=1"
fi
# the web UI as a person uses it, in Chromium driven by Playwright, against a `zest start` of its
# own (screenshots in target/ui-screenshots/)
if want ui && [ -n "${ZEST_BIN:-}" ]; then
  run_suite ui bash -c "cd '$ROOT/tests/ui' && PATH='$NODE_PATH_DIR':\$PATH node --test --test-reporter=spec --test-concurrency=1"
fi
# schemathesis over every operation of Camunda 8.8's REST API v2 that Zest serves, against a
# `zest start` of its own (kernel-given ports, from its READY line), seeded by the runner
schemathesis_suite() {
  local dir pid rest rc=0
  dir=$(mktemp -d /tmp/zest-schemathesis-XXXXXX)
  "$ZEST_BIN" start --data-dir "$dir/data" --gateway-address 127.0.0.1:0 \
    --management-address 127.0.0.1:0 --rest-address 127.0.0.1:0 >"$dir/out.log" 2>"$dir/err.log" &
  pid=$!
  for _ in $(seq 1 120); do grep -q READY "$dir/out.log" 2>/dev/null && break; sleep 0.5; done
  grep -q READY "$dir/out.log" || { echo "zest did not start:"; tail -20 "$dir/err.log"; kill "$pid" 2>/dev/null; return 1; }
  rest=http://$(sed -n 's/^READY .* rest=\([^ ]*\) .*/\1/p' "$dir/out.log" | head -1)
  "$ST_VENV/bin/python" "$HERE/schemathesis/run.py" "$rest" || rc=$?
  kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true
  [ $rc = 0 ] || { echo "zest's log (last lines):"; tail -20 "$dir/err.log"; }
  rm -rf "$dir"
  return $rc
}
if want schemathesis && [ -n "${ZEST_BIN:-}" ]; then
  run_suite schemathesis schemathesis_suite
fi
# The Maven suites (java, spring, cpt) only take addresses: against a zest binary, start one
# for each run (ZEEBE_ADDRESS: gRPC host:port; ZEEBE_REST_ADDRESS and ZEST_MANAGEMENT_ADDRESS:
# URLs; against an external server without them, its host's :8080 and :9600, Zeebe's defaults).
maven_suite() { # module directory under tests/compat
  local module=$1
  local addr=${ZEEBE_ADDRESS:-} rest=${ZEEBE_REST_ADDRESS:-} mgmt=${ZEST_MANAGEMENT_ADDRESS:-} pid="" dir=""
  if [ -z "$addr" ]; then
    # port 0 for every address: the node binds what the kernel gives and names it in READY
    # (no pick that another process could take before the node binds it)
    dir=$(mktemp -d /tmp/zest-$module-XXXXXX)
    "$ZEST_BIN" start --data-dir "$dir/data" --gateway-address 127.0.0.1:0 \
      --management-address 127.0.0.1:0 --rest-address 127.0.0.1:0 >"$dir/out.log" 2>"$dir/err.log" &
    pid=$!
    for _ in $(seq 1 120); do grep -q READY "$dir/out.log" 2>/dev/null && break; sleep 0.5; done
    grep -q READY "$dir/out.log" || { echo "zest did not start:"; tail -20 "$dir/err.log"; kill "$pid" 2>/dev/null; return 1; }
    addr=$(sed -n 's/^READY gateway=\([^ ]*\) .*/\1/p' "$dir/out.log" | head -1)
    rest=http://$(sed -n 's/^READY .* rest=\([^ ]*\) .*/\1/p' "$dir/out.log" | head -1)
    mgmt=http://$(sed -n 's/^READY .* management=\([^ ]*\) .*/\1/p' "$dir/out.log" | head -1)
  fi
  # an external server without these: Zeebe's default ports on its host
  [ -n "$rest" ] || rest=http://${addr%:*}:8080
  [ -n "$mgmt" ] || mgmt=http://${addr%:*}:9600
  local rc=0
  rm -rf "$HERE/$module/target/surefire-reports"
  (cd "$HERE/$module" && ZEEBE_ADDRESS=$addr ZEEBE_REST_ADDRESS=$rest ZEST_MANAGEMENT_ADDRESS=$mgmt \
    mvn -B -q test ${JAVA_TESTS:+"-Dtest=$JAVA_TESTS"}) || rc=$?
  if [ -n "$pid" ]; then
    kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true
    [ $rc = 0 ] || { echo "zest's log (last lines):"; tail -20 "$dir/err.log"; }
    rm -rf "$dir"
  fi
  # surefire's report says how many ran (mvn -q prints no summary line)
  python3 - "$module" "$HERE/$module/target/surefire-reports" <<'PY' || true
import glob, sys, xml.etree.ElementTree as ET
t = f = s = 0
for path in glob.glob(sys.argv[2] + "/TEST-*.xml"):
    r = ET.parse(path).getroot()
    t += int(r.get("tests", 0)); f += int(r.get("failures", 0)) + int(r.get("errors", 0))
    s += int(r.get("skipped", 0))
print(f"{sys.argv[1]}: {t - f - s} passed, {f} failed, {s} skipped")
PY
  return $rc
}
java_suite() { maven_suite java; }
if want java; then
  run_suite java java_suite
fi
# Camunda's Spring Boot starter 8.8 (a Spring Boot 3 app, the starter's defaults: REST) and
# Camunda Process Test 8.8 in its remote-runtime mode, each against a zest of its own
if want spring; then
  run_suite spring maven_suite spring
fi
if want cpt; then
  run_suite cpt maven_suite cpt
fi
# The clients with their own Basic settings against one node with --auth basic and the admin
# demo/demo (Camunda's initialization variables): c8ctl (CAMUNDA_USERNAME/PASSWORD, and its
# default local profile when the node could take localhost:8080), the Java client 8.8
# (CAMUNDA_BASIC_AUTH_USERNAME/PASSWORD, and its builder) and the Node SDK
# (CAMUNDA_AUTH_STRATEGY=BASIC), each over REST and gRPC where it has both (zest only).
auth_suite() {
  local dir pid rest_bind=127.0.0.1:0 rc=0 addr rest
  dir=$(mktemp -d /tmp/zest-auth-XXXXXX)
  # c8ctl's default profile is localhost:8080: take it when nothing holds it
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 8080))' 2>/dev/null && rest_bind=127.0.0.1:8080
  CAMUNDA_SECURITY_AUTHENTICATION_METHOD=basic \
    CAMUNDA_SECURITY_INITIALIZATION_USERS_0_USERNAME=demo CAMUNDA_SECURITY_INITIALIZATION_USERS_0_PASSWORD=demo \
    CAMUNDA_SECURITY_INITIALIZATION_DEFAULTROLES_ADMIN_USERS_0=demo \
    "$ZEST_BIN" start --data-dir "$dir/data" --gateway-address 127.0.0.1:0 \
    --management-address 127.0.0.1:0 --rest-address "$rest_bind" >"$dir/out.log" 2>"$dir/err.log" &
  pid=$!
  for _ in $(seq 1 120); do grep -q READY "$dir/out.log" 2>/dev/null && break; sleep 0.5; done
  grep -q READY "$dir/out.log" || { echo "zest did not start:"; tail -20 "$dir/err.log"; kill "$pid" 2>/dev/null; return 1; }
  addr=$(sed -n 's/^READY gateway=\([^ ]*\) .*/\1/p' "$dir/out.log" | head -1)
  rest=http://$(sed -n 's/^READY .* rest=\([^ ]*\) .*/\1/p' "$dir/out.log" | head -1)
  # demo is created a moment after READY: /v2/setup/user answers 403 once an admin exists
  for _ in $(seq 1 120); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
      -d '{"username":"probe"}' "$rest/v2/setup/user")" = 403 ] && break
    sleep 0.5
  done
  (
    export ZEEBE_ADDRESS=$addr ZEEBE_REST_ADDRESS=$rest CAMUNDA_AUTH_STRATEGY=BASIC \
      CAMUNDA_BASIC_AUTH_USERNAME=demo CAMUNDA_BASIC_AUTH_PASSWORD=demo
    cd "$HERE/c8ctl" && PATH="$NODE_PATH_DIR:$PATH" node --test --test-reporter=spec basic-auth.test.js &&
      cd "$HERE/node" && PATH="$NODE_PATH_DIR:$PATH" node --test --test-reporter=spec basic-auth.test.js &&
      cd "$HERE/java" && rm -rf target/surefire-reports && mvn -B -q test -Dtest=BasicAuthTest
  ) || rc=$?
  kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true
  [ $rc = 0 ] || { echo "zest's log (last lines):"; tail -20 "$dir/err.log"; }
  rm -rf "$dir"
  return $rc
}
if want auth && [ -n "${ZEST_BIN:-}" ]; then
  run_suite auth auth_suite
fi
if want oidc && [ -n "${ZEST_BIN:-}" ]; then
  run_suite oidc env NODE_PATH_DIR="$NODE_PATH_DIR" ZBCTL_BIN="$ZBCTL_BIN" "$HERE/oidc/run.sh"
fi
if want crash; then
  run_suite crash bash -c "cd '$HERE/go' && go test -v -count=1 -timeout 5m -tags crash ./crash -run TestCrash"
  # Again with the log's fsync off (Zeebe's raft flush disabled): a SIGKILL must still lose
  # nothing acknowledged, since every append reaches the OS before it counts as written.
  run_suite crash-no-flush env ZEST_RAFT_FLUSH_ENABLED=false \
    bash -c "cd '$HERE/go' && go test -v -count=1 -timeout 5m -tags crash ./crash -run TestCrash"
  # Again with snapshots every 100 log entries, 1 MiB log segments deleted behind them, and a
  # backup requested just before each SIGKILL: kills land during snapshots, segment deletion
  # and backups, and still lose nothing acknowledged.
  CRASH_DIR=$(mktemp -d)
  printf 'snapshot-every = 100\nlog-segment-mb = 1\nlog-tail-mb = 2\nbackup-dir = "%s/backups"\n' "$CRASH_DIR" >"$CRASH_DIR/zest.toml"
  run_suite crash-snapshots-backups env ZEST_CONFIG="$CRASH_DIR/zest.toml" CRASH_BACKUP_BEFORE_KILL=1 CRASH_KILLS=3 \
    bash -c "cd '$HERE/go' && go test -v -count=1 -timeout 5m -tags crash ./crash -run TestCrash"
  rm -rf "$CRASH_DIR"
fi

# The client suites and the crash test again, against a node of 3 partitions (zest only: the
# node reads ZEST_PARTITIONS): instances spread over partitions, jobs from all of them,
# deployments distributed, messages routed by correlation key. Not the official suite: its
# topology test and zbctl's `status` golden files expect Zeebe's one-partition test container.
if want partitions && [ -n "${ZEST_BIN:-}" ]; then
  export ZEST_PARTITIONS=3
  run_suite go-3-partitions bash -c "cd '$HERE/go' && go test ${GOV[*]} -count=1 -timeout 5m ./compat"
  run_suite python-3-partitions bash -c "cd '$HERE/python' && '$VENV/bin/python' -m pytest ${PYV[*]} -p no:cacheprovider ."
  run_suite java-3-partitions java_suite
  run_suite crash-3-partitions bash -c "cd '$HERE/go' && go test -v -count=1 -timeout 5m -tags crash ./crash -run TestCrash"
  unset ZEST_PARTITIONS
fi

# The client suites against a 3-node cluster started with `zest cluster` (each node a process,
# every partition replicated on all three; the clients talk to node 1, so most commands are
# forwarded to another node's leader), the Go suite through a standalone `zest gateway`, then
# the crash test on a cluster: random nodes killed
# (SIGKILL, restarted) and frozen (SIGSTOP for 3 s, then SIGCONT) in turn.
if want cluster && [ -n "${ZEST_BIN:-}" ]; then
  CLUSTER_DIR=$(mktemp -d /tmp/zest-cluster-XXXXXX)
  "$ZEST_BIN" cluster --nodes 3 --partitions 3 --replication-factor 3 --port-offset 1000 \
    --data-dir "$CLUSTER_DIR/data" >"$CLUSTER_DIR/out.log" 2>"$CLUSTER_DIR/err.log" &
  CLUSTER_PID=$!
  for _ in $(seq 1 120); do grep -q "CLUSTER READY" "$CLUSTER_DIR/out.log" 2>/dev/null && break; sleep 0.5; done
  grep -q "CLUSTER READY" "$CLUSTER_DIR/out.log" || { cat "$CLUSTER_DIR/out.log"; tail -30 "$CLUSTER_DIR/err.log"; kill "$CLUSTER_PID"; die "zest cluster did not start"; }
  # a failing suite exits: the cluster goes with it (and says why)
  trap 'kill -TERM "$CLUSTER_PID" 2>/dev/null; wait "$CLUSTER_PID" 2>/dev/null; tail -40 "$CLUSTER_DIR/err.log"' EXIT
  export ZEEBE_ADDRESS=127.0.0.1:27510 ZEEBE_REST_ADDRESS=http://127.0.0.1:9090
  run_suite go-cluster bash -c "cd '$HERE/go' && go test ${GOV[*]} -count=1 -timeout 5m ./compat"
  run_suite python-cluster bash -c "cd '$HERE/python' && '$VENV/bin/python' -m pytest ${PYV[*]} -p no:cacheprovider ."
  run_suite java-cluster java_suite
  # the Go client's own tests too, but for its topology test and zbctl's `status` cases,
  # whose golden files describe Zeebe's one-broker test container
  run_suite official-cluster env OFFICIAL_SKIP='TestIntegration/TestTopology$|TestZbctlWithInsecureGateway/TestCommonCommands/using_(insecure_env_var|json_flag|json_flag_and_host_and_port_arguments)$' \
    "$HERE/official/run.sh"
  # and through a standalone gateway, which finds the cluster from one contact point
  "$ZEST_BIN" gateway --contact-points 127.0.0.1:27502 --gateway-address 127.0.0.1:27600 \
    --rest-address 127.0.0.1:9180 --management-address 127.0.0.1:10700 \
    >"$CLUSTER_DIR/gateway.out" 2>"$CLUSTER_DIR/gateway.err" &
  GATEWAY_PID=$!
  trap 'kill -TERM "$GATEWAY_PID" "$CLUSTER_PID" 2>/dev/null; wait "$CLUSTER_PID" 2>/dev/null; tail -40 "$CLUSTER_DIR/err.log"' EXIT
  for _ in $(seq 1 60); do grep -q READY "$CLUSTER_DIR/gateway.out" 2>/dev/null && break; sleep 0.5; done
  grep -q READY "$CLUSTER_DIR/gateway.out" || { tail -20 "$CLUSTER_DIR/gateway.err"; die "zest gateway did not start"; }
  export ZEEBE_ADDRESS=127.0.0.1:27600
  run_suite go-gateway bash -c "cd '$HERE/go' && go test ${GOV[*]} -count=1 -timeout 5m ./compat"
  kill -TERM "$GATEWAY_PID"; wait "$GATEWAY_PID" || true
  unset ZEEBE_ADDRESS ZEEBE_REST_ADDRESS
  trap - EXIT
  kill -TERM "$CLUSTER_PID"; wait "$CLUSTER_PID" || true
  rm -rf "$CLUSTER_DIR"
  run_suite crash-cluster env CRASH_CLUSTER=3 CRASH_KILLS=4 CRASH_FAULT=mixed \
    bash -c "cd '$HERE/go' && go test -v -count=1 -timeout 5m -tags crash ./crash -run TestCrash"
  # leadership goes back to each partition's primary after a failover
  run_suite rebalance-cluster bash -c "cd '$HERE/go' && go test -v -count=1 -timeout 3m -tags cluster ./rebalance"
fi

# PostgreSQL as the history store (--history-url), on a throwaway Debian PostgreSQL server: the
# store's unit tests and the history's black-box tests again on it (a schema per test), the
# Java client's suite (its REST searches) against a node on it, and the faults: PostgreSQL
# stopped for a minute under load, and the leader of a 3-node cluster whose nodes share one
# database SIGKILLed while it exports (nothing lost, nothing twice, processing goes on).
if want postgres && [ -n "${ZEST_BIN:-}" ]; then
  PG_DIR=$(mktemp -d /tmp/zest-pg-XXXXXX)
  chmod 755 "$PG_DIR"   # the server runs as the postgres user when this runs as root
  PG_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  PG_URL=$("$ROOT/scripts/postgres.sh" start "$PG_DIR/data" "$PG_PORT")
  trap '"$ROOT/scripts/postgres.sh" stop "$PG_DIR/data" >/dev/null 2>&1; tail -20 "$PG_DIR/data/server.log" 2>/dev/null' EXIT
  echo "compat: PostgreSQL at $PG_URL"
  run_suite postgres-store env ZEST_HISTORY_TEST_POSTGRES="$PG_URL" \
    cargo test --locked -q -p zest-history
  run_suite postgres-rest env ZEST_TEST_POSTGRES="$PG_URL" \
    cargo test --locked -q -p zest --test history_rest --test history_resources_rest \
      --test batch_operations --test user_tasks_rest --test process_instances_rest \
      --test ad_hoc_rest --test export_backlog --test messages_rest --test management \
      --test job_statistics_rest --test usage_metrics_rest --test history_deletion_rest
  psql "$PG_URL" -qc "DROP SCHEMA IF EXISTS java CASCADE; CREATE SCHEMA java"
  ZEST_HISTORY_URL="$PG_URL?options=-c%20search_path%3Djava" run_suite java-postgres java_suite
  run_suite postgres-outage python3 "$HERE/postgres/outage.py" "$ZEST_BIN" \
    "$ROOT/scripts/postgres.sh" "$PG_DIR/data" "$PG_PORT" "$PG_URL" --outage-s 60
  run_suite postgres-leader-kill python3 "$HERE/postgres/outage.py" "$ZEST_BIN" \
    "$ROOT/scripts/postgres.sh" "$PG_DIR/data" "$PG_PORT" "$PG_URL" --cluster --outage-s 20
  trap - EXIT
  "$ROOT/scripts/postgres.sh" stop "$PG_DIR/data"
  rm -rf "$PG_DIR"
fi

echo; printf '%s\n' "${SUMMARY[@]}"
echo "compat: all suites passed against $MODE"
