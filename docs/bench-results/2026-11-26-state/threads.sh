#!/bin/bash
# samples per-thread-name CPU ticks of the zest server every 15 s
while true; do
  pid=$(pgrep -f "${PAT:-zest start}" | head -1)
  if [ -n "$pid" ]; then
    ts=$(date +%s)
    for t in /proc/$pid/task/*; do
      s=$(cat $t/stat 2>/dev/null) || continue
      comm=$(echo "$s" | sed 's/^[0-9]* (\(.*\)) .*/\1/')
      rest=$(echo "$s" | sed 's/^.*) //')
      set -- $rest
      echo "$ts $comm $((${12}+${13}))"
    done | awk '{a[$1" "$2]+=$3} END{for(k in a) print k, a[k]}'
    mp=$(grep -o "management on [0-9.:]*" $LOG | tail -1 | awk "{print \$3}"); m=$(curl -s $mp/metrics | grep -E '^zest_state_disk_bytes|^zest_memory_used' | tr '\n' ' ')
    echo "$ts metrics $m"
  fi
  sleep 15
done
