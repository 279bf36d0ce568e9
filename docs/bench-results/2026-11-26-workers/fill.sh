#!/bin/bash
# usage: run.sh BIN NAME N
BIN=$1; NAME=$2; N=$3
D=/tmp/w1/data-$NAME; rm -rf $D
LOG=/tmp/w1/$NAME.log PAT="zest-.* start" bash /work/main/docs/bench-results/2026-11-26-state/threads.sh > /tmp/w1/threads-$NAME.log 2>&1 &
tp=$!
$BIN bench --fill $N --data-dir $D --in-flight 200 --streaming --duration ${DUR:-30s} --warmup ${WARM:-10s} --drain 10s --json /tmp/w1/fill-$NAME.json > /tmp/w1/$NAME.log 2>&1
kill $tp
