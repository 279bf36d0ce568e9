#!/bin/bash
for i in $(seq $1 $2); do
  for n in base head2; do
    EXTRA="--config /tmp/p30/mg64.toml" SERVER_BIN=/tmp/p30/zest-$n bash /tmp/p30/real7.sh 2 20 ph-$n-$i > /dev/null 2>&1
    echo "$n $i: $(sed -n 4p /tmp/p30/real-ph-$n-$i.txt | tr -s ' ') $(grep 'server pid' /tmp/p30/real-ph-$n-$i.txt | sed 's/.*peak/peak/')"
  done
done
