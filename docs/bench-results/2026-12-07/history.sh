#!/usr/bin/env bash
# History off, on (SQLite, the default) and on PostgreSQL (--history-url, a server on the same
# machine), one-task with the typical payload at 200 in flight over gRPC on one node,
# alternated; a fresh data directory (and schema) per run.
#   SERVER_BIN=target/release/zest PG_URL=postgres://zest@127.0.0.1:55432/zest \
#     bash docs/bench-results/2026-12-07/history.sh OUTDIR [ROUNDS]
set -euo pipefail
BIN=${SERVER_BIN:-target/release/zest}
OUT=${1:?outdir}; ROUNDS=${2:-2}
DUR=${DURATION:-20s}; WARM=${WARMUP:-5s}
PG_URL=${PG_URL:?a PostgreSQL URL}
mkdir -p "$OUT"
run() { # name history-args...
  local name=$1; shift
  local dir; dir=$(mktemp -d /tmp/zest-hb-XXXXXX)
  "$BIN" start --data-dir "$dir/data" "$@" --gateway-address 127.0.0.1:0 \
    --rest-address 127.0.0.1:0 --management-address 127.0.0.1:0 >"$dir/out" 2>"$dir/err" &
  local pid=$!
  for _ in $(seq 1 100); do grep -q READY "$dir/out" && break; sleep 0.2; done
  local gw mgmt
  gw=$(sed -n 's/^READY gateway=\([^ ]*\) .*/\1/p' "$dir/out")
  mgmt=$(sed -n 's/^READY .* management=\([^ ]*\) .*/\1/p' "$dir/out")
  "$BIN" bench --address "$gw" --in-flight 200 --duration "$DUR" --warmup "$WARM" --drain 10s \
    --server-pid "$pid" --label "$name" --quiet --json "$OUT/$name.json" | tail -8
  # how far behind the exporter was when the load ended
  curl -s "http://$mgmt/metrics" | grep -E '^zest_exporter_lag_records|^zest_export_lag_seconds_(sum|count)' || true
  kill -TERM $pid; wait $pid 2>/dev/null || true
  rm -rf "$dir"
}
for r in $(seq 1 "$ROUNDS"); do
  run "history-off-$r" --history off
  run "history-sqlite-$r" --history on
  schema="bench_$r"
  psql "$PG_URL" -qc "SET client_min_messages = warning; DROP SCHEMA IF EXISTS $schema CASCADE; CREATE SCHEMA $schema"
  run "history-postgres-$r" --history-url "$PG_URL?options=-c%20search_path%3D$schema"
done
