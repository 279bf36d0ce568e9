#!/usr/bin/env bash
# alternating A/B of two zest builds on one-task, 1 node x 1 partition
OUT=${OUT:-/tmp/ab30}; mkdir -p $OUT
ROUNDS=${ROUNDS:-3}
run() { # name bin
  local name=$1 bin=$2 dir=$(mktemp -d /tmp/abdata-XXXX)
  $bin start --data-dir $dir/data $ZFLAGS > $OUT/$name.server.log 2>&1 &
  local pid=$!
  for i in $(seq 1 50); do grep -q READY $OUT/$name.server.log && break; sleep 0.2; done
  /tmp/zest-new bench --scenario ${SCENARIO:-one-task} --rate ${RATE:-max} --in-flight 200 --workers 2 --streaming --duration ${DUR:-30s} --warmup 10s > $OUT/$name.txt 2>&1
  grep VmHWM /proc/$pid/status >> $OUT/$name.txt
  kill $pid; wait $pid 2>/dev/null; rm -rf $dir; sleep 5
}
for r in $(seq 1 $ROUNDS); do
  if [ $((r % 2)) = 1 ]; then run old-$r /tmp/zest-old; run new-$r /tmp/zest-new; else run new-$r /tmp/zest-new; run old-$r /tmp/zest-old; fi
done
for f in $OUT/*-[0-9]*.txt; do echo "$(basename $f): $(grep -o 'completed [0-9.]* PI/s' $f | head -1) $(grep -o 'p99 [0-9.]* ms' $f | head -1) $(grep VmHWM $f)"; done
