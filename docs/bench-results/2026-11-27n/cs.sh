#!/bin/bash
cd /tmp/p30
for round in 1 2; do
  for v in cs 47b; do
    ( sleep 15; for i in $(seq 1 40); do curl -s 127.0.0.1:9600/metrics | grep -E '^zest_memory_used_bytes\{part="calls"\}|^zest_gateway|^process_resident' | tr '\n' ' '; echo; sleep 2; done > /tmp/p30/out/y-$v-$round.calls ) &
    ZEST_BIN=/tmp/p30/zest-$v bash run.sh y-$v-$round 20
    wait
    echo "== $v $round"; grep -E "completed|p50|VmHWM|refused" /tmp/p30/out/y-$v-$round.log
  done
done
