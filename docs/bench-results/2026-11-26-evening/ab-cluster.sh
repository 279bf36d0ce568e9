#!/bin/bash
# alternate old/new 3x3 realistic at rate $1, $2 rounds
for i in $(seq 1 $2); do
 for v in old new; do
  B=/tmp/zest-5c503bd; [ $v = new ] && B=/tmp/zest-new4
  rm -rf /tmp/zest-cluster-bench-*
  BENCH="--scenario realistic --rate $1 --workers 40 --streaming --duration 60s --warmup 15s --drain 30s" ZEST_BIN=$B bash /tmp/p30/cluster-keep.sh 3 3 3 ab-$v-$1-$i > /tmp/p30/ab-$v-$1-$i.log 2>&1
  echo "== $v r$1 #$i"; sed -n 3,5p /tmp/p30/ab-$v-$1-$i.log; grep VmHWM /tmp/p30/ab-$v-$1-$i.log | grep "node-id=" | awk '{print $3}' | tr '\n' ' '; echo
 done
done
