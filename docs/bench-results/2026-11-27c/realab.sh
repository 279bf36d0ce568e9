#!/bin/bash
# realab.sh ROUNDS V1 V2 ...: single node, 2 partitions, realistic 20 PI/s, alternating binaries /tmp/p30/zest-V
R=$1; shift
for i in $(seq 1 $R); do for v in "$@"; do
  ZEST_BIN=/tmp/p30/zest-$v ./real2.sh 2 20 r-$v-$i > /dev/null 2>&1
  echo "$v-$i $(sed -n 3,4p /tmp/p30/real-r-$v-$i.txt | tr -s ' ' | tr '\n' ' ') $(grep -o 'peak RSS[^|]*' /tmp/p30/real-r-$v-$i.txt | head -1)"
done; done
