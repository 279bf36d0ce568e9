#!/usr/bin/env bash
# ab3.sh ROUNDS RATE A B: alternates binaries /tmp/p30/zest-A and zest-B on 3 x 3 RF 3 realistic
ROUNDS=$1 RATE=$2 A=$3 B=$4
for i in $(seq 1 $ROUNDS); do
  for v in $A $B; do
    ZEST_BIN=/tmp/p30/zest-$v bash /tmp/p30/run.sh c3-$v-$RATE-$i $RATE
    echo "== c3-$v-$RATE-$i"; grep -E "completed|p99|VmHWM|PI/s" /tmp/p30/out/c3-$v-$RATE-$i.txt | head -12
  done
done
