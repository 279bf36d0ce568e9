#!/bin/bash
N=$1
ZEST_BIN=${ZEST_BIN:-/tmp/p30/zest-m0} bash /tmp/p30/real3.sh 2 20 $N > /dev/null 2>&1 &
sleep 30
SP=$(pgrep -f -- "start --partitions 2 --data-dir" | head -1); echo "perf on $SP"
perf record -F 149 --call-graph dwarf,32768 -p $SP -o /tmp/p30/perf-$N.data -- sleep 20 > /dev/null 2>&1
wait
