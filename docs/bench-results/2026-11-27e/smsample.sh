#!/usr/bin/env bash
# smsample.sh OUT: every 1 s node 0's smaps_rollup (anon/file) and allocator figures
while true; do
  P=$(pgrep -f "start .*node-id[= ]0 " | head -1)
  [ -z "$P" ] && P=$(pgrep -f -- "--node-id 0" | head -1)
  if [ -n "$P" ]; then
    r=$(awk '/^Rss|^Anonymous|^Shared_Clean|^Private_Clean/ {printf "%s%d ", $1, $2/1024}' /proc/$P/smaps_rollup 2>/dev/null)
    m=$(curl -s --max-time 1 http://127.0.0.1:9600/metrics | grep -E '^zest_allocator_bytes' | awk '{printf "%s=%d ", $1, $2/1048576}')
    t=$(grep Threads /proc/$P/status | awk '{print $2}')
    echo "$(date +%s) thr=$t $r $m" >> $1
  fi
  sleep 1
done
