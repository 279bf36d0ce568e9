#!/bin/bash
cd /tmp/p30
for round in 1 2 3; do
  for v in nice cs; do
    ZEST_BIN=/tmp/p30/zest-$v bash real3.sh 2 20 n-$v-$round > /dev/null 2>&1
    echo "== real $v $round"; sed -n 3,6p real-n-$v-$round.txt
  done
done
for round in 1 2; do
  for v in nice cs; do
    echo "== onetask $v $round"; ZBIN=/tmp/p30/zest-$v bash onetask.sh n-$v-$round
  done
done
