#!/bin/bash
cd /tmp/p30
for v in g5-1:g5 base-3:base g5-2:g5; do
  n=${v%%:*}; b=${v##*:}
  ZEST_BIN=/tmp/p30/zest-$b bash run.sh ab-$n 20
  echo "== $n"; grep -E "started|p50|VmHWM" out/ab-$n.log; tail -1 out/ab-$n.samples | grep -o "zest_memory_guard[^ ]*"
done
ZEST_BIN=/tmp/p30/zest-g5 bash run.sh ten-g5 10; echo "== ten g5"; grep -E "started|p50|VmHWM" out/ten-g5.log; tail -1 out/ten-g5.samples | grep -o "zest_memory_guard[^ ]*"
ZEST_BIN=/tmp/p30/zest-g5 bash real3.sh 2 20 s20-g5; echo "== single 20 g5"; grep -E "started|p50|RSS" real-s20-g5.txt; grep guard_refused s20-g5-final-metrics.txt
ZEST_BIN=/tmp/p30/zest-g5 bash real3.sh 2 15 s15-g5; echo "== single 15 g5"; grep -E "started|p50|RSS" real-s15-g5.txt; grep guard_refused s15-g5-final-metrics.txt
echo ALLDONE
