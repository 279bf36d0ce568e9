#!/bin/bash
# ab8.sh RATE A B ROUNDS TAG: alternate single-node 2-partition realistic runs (real7.sh)
R=$1; A=$2; B=$3; N=${4:-2}; T=${5:-ab8}
for i in $(seq 1 $N); do
  for b in $A $B; do
    SERVER_BIN=/tmp/p30/zest-$b bash /tmp/p30/real7.sh 2 $R $T-$b-$i > /dev/null 2>&1
    echo "$b $i: $(grep -E 'latency create|server pid' /tmp/p30/real-$T-$b-$i.txt | tr -s ' ' | tr '\n' ' ')"
  done
done
