#!/usr/bin/env bash
# summ.sh NAME...: one line per run
for n in "$@"; do
  f=/tmp/p30/out/$n.txt; s=/tmp/p30/out/$n.samples
  echo "$n: $(grep -o 'completed [0-9.]* PI/s\|rejected [0-9.]*/s\|errors [0-9]*\|p50 [0-9.]* ms\|p99 [0-9.]* ms' $f | head -5 | tr '\n' ' ')| hwm $(grep 'node-id=' $f | awk '{printf "%d ", $3/1024}')| anon/file $(for k in node-id0 node-id1 node-id2; do grep " $k " $s | awk '{split($3,a,"=");split($4,b,"="); if(a[2]+0>m){m=a[2]+0;fl=b[2]}} END{printf "%s/%s ", m, fl}'; done) $(grep -o 'refused by backpressure (and tried again): [0-9.]*' $f | awk '{print "pubref", $NF}')"
done
