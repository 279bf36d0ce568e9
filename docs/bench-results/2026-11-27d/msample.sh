#!/usr/bin/env bash
# msample.sh OUT: every 1 s node 0's allocator figures and memory used parts (management 9600)
while true; do
  m=$(curl -s --max-time 1 http://127.0.0.1:9600/metrics)
  if [ -n "$m" ]; then
    echo "$(date +%s.%N | cut -c1-14) $(echo "$m" | grep -E '^zest_allocator_bytes|^zest_memory_used_bytes|^process_resident' | awk '{printf "%s=%d ", $1, $2/1048576}')" >> $1
  fi
  sleep 1
done
