#!/bin/bash
# mem2.sh ROUNDS: head default vs head --memory-mb 512, single node 2 partitions realistic 20
for i in $(seq 1 $1); do
  for v in def big; do
    if [ $v = big ]; then export EXTRA="--memory-mb 512"; else export EXTRA=""; fi
    ZEST_BIN=/tmp/p30/zest-h43 ./real2.sh 2 20 m-$v-$i > /dev/null 2>&1
    echo "$v-$i $(sed -n 3,4p /tmp/p30/real-m-$v-$i.txt | tr -s ' ' | tr '\n' ' ') $(grep -o 'peak RSS.*' /tmp/p30/real-m-$v-$i.txt | head -1)"
  done
done
