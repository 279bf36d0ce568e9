#!/bin/bash
for i in $(seq $1 $2); do
  for n in lifo nolifo; do
    if [ $n = nolifo ]; then export ZEST_DISABLE_LIFO=1; else unset ZEST_DISABLE_LIFO; fi
    EXTRA="" SERVER_BIN=/tmp/p30/zest-unst bash /tmp/p30/real7.sh 2 20 lf-$n-$i > /dev/null 2>&1
    echo "$n $i: $(sed -n 4p /tmp/p30/real-lf-$n-$i.txt | tr -s ' ') $(grep 'server pid' /tmp/p30/real-lf-$n-$i.txt | sed 's/.*peak/peak/')"
  done
done
