#!/bin/bash
cd /tmp/p30
for round in 1 2; do
  for v in g2 base; do
    ZEST_BIN=/tmp/p30/zest-$v bash run.sh ab-$v-$round 20
    curl -s 127.0.0.1:9600/metrics > /dev/null
    echo "== $v $round"; grep -E "started|VmHWM" out/ab-$v-$round.log
  done
done
ZEST_BIN=/tmp/p30/zest-g2 bash run.sh ten-g2 10; echo "== ten g2"; grep -E "started|p99|VmHWM" out/ten-g2.log
ZEST_BIN=/tmp/p30/zest-g2 bash real3.sh 2 15 s15-g2; echo "== single 15 g2"; grep -E "started|p99|RSS" real-s15-g2.txt; grep guard s15-g2-final-metrics.txt
echo ALLDONE
