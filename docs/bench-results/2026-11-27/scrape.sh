#!/usr/bin/env bash
# scrape.sh OUT: every 5 s, node i's memory parts (used), allocator figures and RSS, for i in 0 1 2
while true; do
  for i in 0 1 2; do
    m=$(curl -s --max-time 2 http://127.0.0.1:$((9600+10*i))/metrics | grep '^zest_memory_used_bytes\|^zest_allocator_bytes\|^process_resident' | sed 's/^zest_[a-z_]*{[a-z]*="\([a-z_]*\)"} \(.*\)/\1=\2/; s/^process_resident_memory_bytes /rss=/' | awk -F= '{printf "%s=%.1f ", $1, $2/1048576}')
    echo "$(date +%s) n$i $m"
  done >> $1
  sleep 5
done
