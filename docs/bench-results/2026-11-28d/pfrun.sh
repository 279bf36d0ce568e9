#!/bin/bash
# pfrun.sh NAME BIN: 3x3 RF3 realistic 20 PI/s, page faults of node 0 counted for 30 s
N=$1; B=$2
(ZEST_BIN=$B timeout 400 bash /tmp/p30/run.sh $N 20 > /dev/null 2>&1 &)
sleep 35; P=$(pgrep -f -- "node-id[= ]0 " | head -1)
perf stat -e page-faults,minor-faults -p $P -o /tmp/p30/out/$N.pfstat -- sleep 30 > /dev/null 2>&1
while pgrep -f "bash /tmp/p30/run.sh $N " > /dev/null; do sleep 2; done
grep -E "started|VmHWM|latency" /tmp/p30/out/$N.log; grep faults /tmp/p30/out/$N.pfstat
