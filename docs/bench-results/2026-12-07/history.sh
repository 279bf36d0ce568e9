#!/usr/bin/env bash
# History on against off, and the REST path against gRPC: one-task at 200 in flight on one
# node (defaults but --history), alternated; a fresh data directory per run.
#   SERVER_BIN=target/release/zest bash docs/bench-results/2026-12-01/history.sh OUTDIR [ROUNDS]
set -euo pipefail
BIN=${SERVER_BIN:-target/release/zest}
OUT=${1:?outdir}; ROUNDS=${2:-2}
DUR=${DURATION:-20s}; WARM=${WARMUP:-5s}
mkdir -p "$OUT"
run() { # name history protocol
  local name=$1 history=$2 proto=$3 dir; dir=$(mktemp -d /tmp/zest-hb-XXXXXX)
  "$BIN" start --data-dir "$dir/data" --history "$history" --gateway-address 127.0.0.1:0 \
    --rest-address 127.0.0.1:0 --management-address 127.0.0.1:0 >"$dir/out" 2>"$dir/err" &
  local pid=$!
  for _ in $(seq 1 100); do grep -q READY "$dir/out" && break; sleep 0.2; done
  local gw rest
  gw=$(sed -n 's/^READY gateway=\([^ ]*\) .*/\1/p' "$dir/out"); rest=$(sed -n 's/^READY .* rest=\([^ ]*\) .*/\1/p' "$dir/out")
  local extra=()
  [ "$proto" = rest ] && extra=(--rest "http://$rest")
  "$BIN" bench --address "$gw" --in-flight 200 --duration "$DUR" --warmup "$WARM" --drain 10s \
    --server-pid "$pid" --label "$name" --quiet --json "$OUT/$name.json" "${extra[@]}" | tail -8
  kill -TERM $pid; wait $pid 2>/dev/null || true
  { du -sb "$dir/data/history.sqlite"* 2>/dev/null || true; } | awk '{s+=$1} END {print "history bytes:", s+0}'
  rm -rf "$dir"
}
for r in $(seq 1 "$ROUNDS"); do
  run "grpc-history-off-$r" off grpc
  run "grpc-history-on-$r" on grpc
  run "rest-history-on-$r" on rest
done
