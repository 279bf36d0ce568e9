#!/bin/bash
N=$1
cp mg64.toml /tmp/p30/mg64.toml 2>/dev/null
EXTRA="--config /tmp/p30/mg64.toml" ZEST_BIN=/tmp/p30/zest-prof bash /tmp/p30/real3.sh 2 20 $N > /dev/null 2>&1 &
sleep 35
perf record -a -F 99 --call-graph dwarf,32768 -o /tmp/p30/perfall-$N.data -- sleep 20 > /dev/null 2>&1
wait
