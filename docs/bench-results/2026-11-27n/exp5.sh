#!/bin/bash
cd /tmp/p30
for round in 1 2; do
  for v in 512 256; do
    ZEST_EXP_CALLS=$v ZEST_BIN=/tmp/p30/zest-exp2 bash run.sh z-$v-$round 20
    echo "== $v $round"; grep -E "completed|p50|VmHWM|refused" /tmp/p30/out/z-$v-$round.log
  done
done
