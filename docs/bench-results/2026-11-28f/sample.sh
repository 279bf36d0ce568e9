#!/bin/bash
# sample.sh DIRPREFIX OUT: node 0 allocator, memory parts, guard and RSS every 2 s
while true; do
  curl -s --max-time 1 127.0.0.1:9600/metrics | grep -E '^zest_allocator_bytes|^process_resident|^zest_memory_guard_refused_total|^zest_memory_used_bytes\{part="calls"' | awk '{ if ($1 ~ /guard/) printf "%s=%d ", $1, $2; else printf "%s=%d ", $1, $2/1048576}'; echo
  sleep 2
done > $2
