#!/bin/bash
# abx.sh ROUNDS: head default vs head with $XFLAGS
N=${1:-1}
for i in $(seq 1 $N); do
  for v in d x; do
    if [ $v = x ]; then export EXTRA="$XFLAGS"; else export EXTRA=""; fi
    ZEST_BIN=${BIN:-/tmp/p30/zest-h} bash /tmp/p30/real3.sh 2 20 abx${TAG}-$v-$i > /dev/null 2>&1
    echo "$v $i: $(sed -n 3,4p /tmp/p30/real-abx${TAG}-$v-$i.txt | tr -s ' ' | tr '\n' ' ') $(grep 'server pid' /tmp/p30/real-abx${TAG}-$v-$i.txt | sed 's/.*peak/peak/')"
  done
done
