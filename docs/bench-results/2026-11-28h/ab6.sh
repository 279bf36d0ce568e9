#!/bin/bash
for i in $(seq $1 $2); do
  for n in b2 b1; do
    if [ $n = b1 ]; then BE="TOKIO_WORKER_THREADS=1"; else BE="X=1"; fi
    BENCH_ENV="$BE" EXTRA="--config /tmp/p30/mg64.toml" SERVER_BIN=/tmp/p30/zest-base bash /tmp/p30/real6.sh 2 20 bt-$n-$i > /dev/null 2>&1
    echo "$n $i: $(sed -n 4p /tmp/p30/real-bt-$n-$i.txt | tr -s ' ') $(grep 'server pid' /tmp/p30/real-bt-$n-$i.txt | sed 's/.*peak/peak/') $(grep 'bench cpu' /tmp/p30/real-bt-$n-$i.txt)"
  done
done
