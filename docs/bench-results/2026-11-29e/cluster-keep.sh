#!/usr/bin/env bash
# One-task at 200 in flight against Zest run as N nodes x P partitions with replication factor
# R (`zest cluster`, or `zest start` for one node), load on node 0's gateway (so with several
# nodes most commands are forwarded to another node's leader). Prints zest bench's report and
# each node's peak RSS (VmHWM).
#   cluster.sh NODES PARTITIONS RF NAME
# BENCH="..." replaces the one-task flags (e.g. the realistic scenario's).
set -euo pipefail
NODES=$1 PARTS=$2 RF=$3 NAME=$4; shift 4
ZEST_BIN=${ZEST_BIN:-target/release/zest}
OUT=/tmp/p30/out
DIR=$(mktemp -d /tmp/zest-cluster-bench-XXXXXX)
if [ "$NODES" = 1 ]; then
  "$ZEST_BIN" start --partitions "$PARTS" --data-dir "$DIR/data" --gateway-address 127.0.0.1:26500 \
    --rest-address 127.0.0.1:8080 --management-address 127.0.0.1:9600 >"$DIR/out.log" 2>"$DIR/err.log" &
  LAUNCHER=$!
  until grep -q READY "$DIR/out.log" 2>/dev/null; do sleep 0.2; done
else
  "$ZEST_BIN" cluster --nodes "$NODES" --partitions "$PARTS" --replication-factor "$RF" \
    --data-dir "$DIR/data" ${EXTRA:+-- $EXTRA} >"$DIR/out.log" 2>"$DIR/err.log" &
  LAUNCHER=$!
  until grep -q "CLUSTER READY" "$DIR/out.log" 2>/dev/null; do sleep 0.2; done
fi
sleep 2
PIDS=$(pgrep -f "data-dir[= ]$DIR/data" | tr '\n' ' ')
BENCH=${BENCH:---scenario one-task --rate max --in-flight 200 --workers 2 --streaming --duration 30s --warmup 10s --drain 10s}
# shellcheck disable=SC2086
"$ZEST_BIN" bench --address 127.0.0.1:26500 $BENCH --label "$NAME" \
  --json "$OUT/$NAME.json" --quiet | tee "$OUT/$NAME.txt"
for p in $PIDS; do
  node=$(tr '\0' ' ' </proc/$p/cmdline | grep -o 'node-id[= ][0-9]*' || echo "node-id 0")
  echo "$node: $(grep VmHWM /proc/$p/status)" | tee -a "$OUT/$NAME.txt"
done
kill -TERM "$LAUNCHER"; wait "$LAUNCHER" 2>/dev/null || true
if [ -n "${KEEP:-}" ]; then echo kept $DIR; else rm -rf "$DIR"; fi
