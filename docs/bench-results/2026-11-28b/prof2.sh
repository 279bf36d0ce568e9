#!/usr/bin/env bash
# prof.sh NAME RATE: realistic on 3x3 RF3 with the profiling build (jemalloc preloaded, heap dumps on new peaks)
set -euo pipefail
NAME=$1 RATE=$2
PD=/tmp/p30/prof/$NAME; rm -rf $PD; mkdir -p $PD
DIR=$(mktemp -d /tmp/zest-cluster-bench-XXXXXX)
LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2 MALLOC_CONF=narenas:1,dirty_decay_ms:1000,muzzy_decay_ms:0,prof:true,lg_prof_sample:17,prof_gdump:true,prof_prefix:$PD/jeprof \
  ${PROF_BIN:-/tmp/p30/zest-ht-sys} cluster --nodes 3 --partitions 3 --replication-factor 3 --data-dir "$DIR/data" >"$DIR/out.log" 2>"$DIR/err.log" &
L=$!
until grep -q "CLUSTER READY" "$DIR/out.log" 2>/dev/null; do sleep 0.2; done
sleep 2
PIDS=$(pgrep -f "data-dir[= ]$DIR/data" | tr '\n' ' ')
/tmp/p30/zest-base bench --address 127.0.0.1:26500 --scenario realistic --rate $RATE --workers 40 --streaming --duration 60s --warmup 15s --drain 30s --label $NAME --quiet | tee $PD/report.txt
for p in $PIDS; do
  node=$(tr '\0' ' ' </proc/$p/cmdline | grep -o 'node-id[= ][0-9]*' || echo "launcher")
  echo "$p $node: $(grep VmHWM /proc/$p/status)" | tee -a $PD/report.txt
done
kill -TERM $L; wait $L 2>/dev/null || true
rm -rf $DIR
