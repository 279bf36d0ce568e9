#!/bin/bash
# ab4.sh S E : alternate base/spare servers (max-group 64 on both), realistic 20 PI/s
for i in $(seq $1 $2); do
  for n in base spare; do
    EXTRA="--config /tmp/p30/mg64.toml" SERVER_BIN=/tmp/p30/zest-$n bash /tmp/p30/real4.sh 2 20 sp-$n-$i > /dev/null 2>&1
    echo "$n $i: $(sed -n 4p /tmp/p30/real-sp-$n-$i.txt | tr -s ' ') $(grep 'server pid' /tmp/p30/real-sp-$n-$i.txt | sed 's/.*peak/peak/')"
  done
done
