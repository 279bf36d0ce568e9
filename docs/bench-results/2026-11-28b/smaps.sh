#!/usr/bin/env bash
# smaps.sh OUT: node 0's Rss / Anonymous / RssFile / threads every 20 ms
while true; do
  P=$(pgrep -f -- "node-id[= ]0 " | head -1)
  if [ -n "$P" ]; then
    while [ -e /proc/$P ]; do
      echo "$(date +%s.%N | cut -c1-13) $(awk '/^(Rss|Anonymous|Pss_File):/ {printf "%s ", $2}' /proc/$P/smaps_rollup 2>/dev/null) $(awk '/Threads/ {print $2}' /proc/$P/status)" >> $1
      sleep 0.02
    done
  fi
  sleep 0.5
done
