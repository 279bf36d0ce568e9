#!/bin/bash
# abe.sh NAME1 "EXTRA1" NAME2 "EXTRA2" ROUNDS : alternate runs differing in server flags (zest-rt binary)
A=$1; EA=$2; B=$3; EB=$4; N=${5:-2}
for i in $(seq 1 $N); do
  for v in A B; do
    if [ $v = A ]; then n=$A; e=$EA; else n=$B; e=$EB; fi
    EXTRA="$e" ZEST_BIN=/tmp/p30/zest-rt bash /tmp/p30/real3.sh 2 20 ab-$n-$i > /dev/null 2>&1
    echo "$n $i: $(sed -n 4p /tmp/p30/real-ab-$n-$i.txt | tr -s ' ') $(grep 'server pid' /tmp/p30/real-ab-$n-$i.txt | sed 's/.*peak/peak/')"
  done
done
