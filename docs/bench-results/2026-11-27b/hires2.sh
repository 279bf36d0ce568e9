#!/usr/bin/env bash
# hires2.sh OUT: every 0.1 s node 0's RssAnon, RssFile, VmHWM, Threads
p=
while true; do
  if [ -z "$p" ] || [ ! -e /proc/$p ]; then
    p=
    for q in $(pgrep -f "data-dir[= ]/tmp/zest-cluster-bench"); do
      tr '\0' ' ' </proc/$q/cmdline 2>/dev/null | grep -q 'node-id[= ]0\b' && p=$q
    done
  fi
  [ -n "$p" ] && echo "$(date +%s.%N | cut -c1-13) $(awk '/RssAnon|RssFile|VmHWM|Threads/{printf "%s%s ", $1, $2}' /proc/$p/status 2>/dev/null)" >> $1
  sleep 0.1
done
