#!/bin/bash
# threads.sh PID SECS: per-thread-name CPU seconds over SECS
P=$1; S=$2
snap() { for t in /proc/$P/task/*; do n=$(cat $t/comm); set -- $(cut -d')' -f2 $t/stat); echo "$n $((${12}+${13}))"; done | awk '{a[$1]+=$2} END {for (k in a) print k, a[k]}' | sort; }
snap > /tmp/p30/t1; sleep $S; snap > /tmp/p30/t2
join /tmp/p30/t1 /tmp/p30/t2 | awk -v s=$S '{d=($3-$2)/100/s; tot+=d; printf "%-24s %.3f cores\n", $1, d} END {printf "%-24s %.3f\n","TOTAL",tot}' | sort -k2 -nr
