#!/bin/bash
# abr.sh RATE A B ROUNDS: alternate single-node 2-partition realistic runs
R=$1; A=$2; B=$3; N=${4:-2}
for i in $(seq 1 $N); do
  for b in $A $B; do
    ZEST_BIN=/tmp/p30/zest-$b bash /tmp/p30/real3.sh 2 $R ab-$b-$i > /dev/null 2>&1
    echo "$b $i: $(sed -n 3,4p /tmp/p30/real-ab-$b-$i.txt | tr -s ' ' | tr '\n' ' ') $(grep 'server pid' /tmp/p30/real-ab-$b-$i.txt | sed 's/.*peak/peak/')"
  done
done
