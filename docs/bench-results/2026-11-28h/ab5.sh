#!/bin/bash
for i in $(seq $1 $2); do
  for n in rt rtnice; do
    if [ $n = rtnice ]; then R=-5; else R=; fi
    RENICE=$R ZEST_PROCESSING_THREADS=2 EXTRA="--config /tmp/p30/mg64.toml" SERVER_BIN=/tmp/p30/zest-rt bash /tmp/p30/real5.sh 2 20 ni-$n-$i > /dev/null 2>&1
    echo "$n $i: $(sed -n 4p /tmp/p30/real-ni-$n-$i.txt | tr -s ' ') $(grep 'server pid' /tmp/p30/real-ni-$n-$i.txt | sed 's/.*peak/peak/')"
  done
done
