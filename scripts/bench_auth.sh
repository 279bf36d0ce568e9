#!/usr/bin/env bash
# The cost of authentication and TLS (issue 62, docs/benchmarks.md): one-task, 200 in flight,
# history off, with nothing, with --auth basic, and with Basic and TLS on the gRPC port, the
# modes alternating for ROUNDS rounds on the same binary. Prints one line per run.
#   scripts/bench_auth.sh            # BIN=target/release/zest ROUNDS=2 DURATION=30s
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=${BIN:-$ROOT/target/release/zest}
ROUNDS=${ROUNDS:-2}
DURATION=${DURATION:-30s}
WORK=$(mktemp -d /tmp/zest-bench-auth-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
bash "$ROOT/tests/compat/make_certs.sh" "$WORK"
for round in $(seq 1 "$ROUNDS"); do
  for mode in off basic tls; do
    rm -rf data
    args=(start --data-dir data --history off)
    env=()
    addr=127.0.0.1:26500
    extra=()
    creds=(CAMUNDA_BASIC_AUTH_USERNAME=demo CAMUNDA_BASIC_AUTH_PASSWORD=demo)
    case $mode in
      basic) args+=(--auth basic --admin-user demo:demo); env=("${creds[@]}") ;;
      tls)
        args+=(--auth basic --admin-user demo:demo --grpc-tls-cert server.pem --grpc-tls-key server.key)
        env=("${creds[@]}"); addr=https://127.0.0.1:26500; extra=(--cert-path ca.pem) ;;
    esac
    "$BIN" "${args[@]}" >node.log 2>&1 &
    pid=$!
    for _ in $(seq 1 60); do grep -q READY node.log && break; sleep 0.5; done
    env "${env[@]}" "$BIN" bench --address "$addr" "${extra[@]}" --scenario one-task \
      --in-flight 200 --duration "$DURATION" --warmup 5s >bench.out 2>&1
    rss=$(awk '/VmHWM/ {print int($2 / 1024)}' "/proc/$pid/status")
    kill "$pid"; wait "$pid" 2>/dev/null
    echo "round $round, $mode: $(grep -E 'PI/s \|' bench.out | tail -1 | sed 's/ *| *errors.*//'), $(grep -oE 'p99 [0-9.]+ ms \| max' bench.out | tail -1 | sed 's/ | max//'), peak ${rss} MiB"
  done
done
