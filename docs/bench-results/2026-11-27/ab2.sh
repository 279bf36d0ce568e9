#!/usr/bin/env bash
# ab2.sh RATE ROUNDS TAG VARIANT...: alternates binaries /tmp/p30/zest-VARIANT at RATE, with scraping; runs named VARIANT-TAG-RATE-r
RATE=$1 ROUNDS=$2 TAG=$3; shift 3
for r in $(seq 1 $ROUNDS); do
  for v in "$@"; do
    n=$v-$TAG-$RATE-$r
    rm -f out/$n.scr; (sleep 10; exec ./scrape.sh /tmp/p30/out/$n.scr) & SP=$!
    ZEST_BIN=/tmp/p30/zest-$v ./run.sh $n $RATE
    kill $SP
    ./summ.sh $n >> out/ab2-$TAG.summary
  done
done
