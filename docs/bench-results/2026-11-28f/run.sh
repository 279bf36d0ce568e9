#!/usr/bin/env bash
# run.sh NAME RATE [extra env assignments via env]
NAME=$1 RATE=$2
cd /work/main
rm -f /tmp/p30/out/$NAME.samples
( sleep 8; exec /tmp/p30/sample.sh /tmp/zest-cluster-bench /tmp/p30/out/$NAME.samples ) &
S=$!
BENCH="--scenario realistic --rate $RATE --workers 40 --streaming --duration 60s --warmup 15s --drain 30s" ZEST_BIN=${ZEST_BIN:-/tmp/p30/zest-base} bash /tmp/p30/cluster-keep.sh 3 3 3 $NAME > /tmp/p30/out/$NAME.log 2>&1
kill $S
