#!/bin/bash
# abt.sh TAG ROUNDS "ENV_A" "ENV_B": alternate server env A / B, realistic 20 PI/s, 2 partitions
T=$1; N=$2; A=$3; B=$4
for i in $(seq 1 $N); do
  for v in a b; do
    if [ $v = a ]; then E="$A"; else E="$B"; fi
    SERVER_ENV="$E" ZEST_BIN=${BIN:-/tmp/p30/zest-m} bash /tmp/p30/real4.sh 2 ${RATE:-20} $T-$v-$i > /dev/null 2>&1
    echo "$T $v($E) $i: $(sed -n 4p /tmp/p30/real-$T-$v-$i.txt | tr -s ' ') $(grep 'server pid' /tmp/p30/real-$T-$v-$i.txt | sed 's/.*peak/peak/')"
  done
done
