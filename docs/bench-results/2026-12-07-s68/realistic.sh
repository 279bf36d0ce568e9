#!/usr/bin/env bash
# Camunda's realistic benchmark at RATE PI/s on one node with PARTS partitions, history on (the
# default) or off, a fresh data directory each; prints zest bench's summary, and with history on
# the history store's bytes per completed instance (history.sqlite and its WAL after the load).
#   ZEST_BIN=target/release/zest bash docs/bench-results/2026-12-07-s68/realistic.sh PARTS RATE on|off OUTDIR
set -euo pipefail
P=$1; R=$2; H=$3; OUT=$4
BIN=${ZEST_BIN:-target/release/zest}
mkdir -p "$OUT"
D=$(mktemp -d /tmp/zest-real-XXXXXX)
ZEST_LOG=warn "$BIN" start --partitions "$P" --history "$H" --data-dir "$D/data" \
  --gateway-address 127.0.0.1:26700 --management-address 127.0.0.1:9700 \
  --rest-address 127.0.0.1:0 > "$D/server.log" 2>&1 &
PID=$!
for _ in $(seq 1 100); do grep -q READY "$D/server.log" && break; sleep 0.2; done
NAME="realistic-p$P-r$R-history-$H"
"$BIN" bench --address 127.0.0.1:26700 --scenario realistic --rate "$R" --workers 40 --streaming \
  --duration 60s --warmup 15s --drain 30s --quiet --label "zest, $P partition(s), history $H" \
  --json "$OUT/$NAME.json" --server-pid "$PID" | tee "$OUT/$NAME.txt"
if [ "$H" = on ]; then
  sleep 2  # the exporter's last batches
  curl -s http://127.0.0.1:9700/metrics | grep -E '^zest_exporter_lag_records' || true
  bytes=$(du -cb "$D"/data/history.sqlite* | tail -1 | cut -f1)
  n=$(sqlite3 "file:$D/data/history.sqlite?mode=ro" "SELECT count(*) FROM process_instance WHERE state = 'COMPLETED'" 2>/dev/null || echo 0)
  echo "history: $bytes bytes, $n completed instances, $(( bytes / (n > 0 ? n : 1) )) bytes per instance" | tee -a "$OUT/$NAME.txt"
fi
kill -TERM "$PID"; wait "$PID" 2>/dev/null || true
[ -n "${KEEP:-}" ] && echo "data kept in $D" || rm -rf "$D"
