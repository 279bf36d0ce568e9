#!/bin/bash
# abn.sh RATE BIN ROUNDS: alternate fjall workers at nice 0 and nice 10
R=$1; B=$2; N=${3:-2}
for i in $(seq 1 $N); do
  for n in 0 10; do
    NICE=$n ZEST_BIN=/tmp/p30/zest-$B bash /tmp/p30/real5.sh 2 $R an-$n-$i > /dev/null 2>&1
    echo "nice$n $i: $(grep -o 'completed [0-9.]* PI/s\|rejected [0-9.]*/s\|p50 [0-9.]* ms\|p99 [0-9.]* ms\|CPU.*' /tmp/p30/real-an-$n-$i.txt | head -5 | tr '\n' ' ')"
  done
done
