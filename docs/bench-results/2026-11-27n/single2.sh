#!/bin/bash
cd /tmp/p30
for round in 3 4 5 6; do
  v=cs
  ZEST_BIN=/tmp/p30/zest-$v bash real3.sh 2 20 s-$v-$round > /dev/null 2>&1
  echo "== real $v $round"; sed -n 3,6p real-s-$v-$round.txt
done
