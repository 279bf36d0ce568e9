#!/usr/bin/env bash
# envab.sh RATE ROUNDS NAME=ENV... : alternates settings given as env assignments (';'-separated) on zest-alloc, with scraping
RATE=$1 ROUNDS=$2; shift 2
for r in $(seq 1 $ROUNDS); do
  for spec in "$@"; do
    name=${spec%%=*}; envs=${spec#*=}
    n=$name$RATE-$r
    rm -f out/$n.scr; (sleep 10; exec ./scrape.sh /tmp/p30/out/$n.scr) & SP=$!
    ( IFS=';'; for kv in $envs; do [ -n "$kv" ] && export "$kv"; done; ZEST_BIN=${ENVAB_BIN:-/tmp/p30/zest-alloc} ./run.sh $n $RATE )
    kill $SP
    ./summ.sh $n >> out/envab-$RATE.summary
  done
done
