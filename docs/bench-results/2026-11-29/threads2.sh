#!/bin/bash
# per-thread CPU of the server during a realistic run: snapshot at t=25s and t=75s
N=$1
EXTRA="" SERVER_BIN=${SERVER_BIN:-/tmp/p30/zest-h3} bash /tmp/p30/real7.sh 2 20 $N > /dev/null 2>&1 &
sleep 25
SP=$(pgrep -f "rdata-$N" | head -1)
snap() { for t in /proc/$SP/task/*; do echo "$(cat $t/comm | tr ' ' '_') $(awk '{print $14+$15}' $t/stat)"; done | awk '{a[$1]+=$2} END {for (k in a) print k, a[k]}' | sort; }
snap > /tmp/p30/thr-$N-a.txt
sleep 50
snap > /tmp/p30/thr-$N-b.txt
wait
join /tmp/p30/thr-$N-a.txt /tmp/p30/thr-$N-b.txt | awk '{printf "%-24s %6.2f cores\n", $1, ($3-$2)/100/50}' | sort -k2 -n -r
echo "$(sed -n 4p /tmp/p30/real-$N.txt)"
