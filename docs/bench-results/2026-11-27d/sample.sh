#!/usr/bin/env bash
# sample.sh DIRPATTERN OUTFILE: every 2 s, anon/file RSS of each zest node whose cmdline holds DIRPATTERN
while true; do
  for p in $(pgrep -f "data-dir[= ]$1" ); do
    n=$(tr '\0' ' ' </proc/$p/cmdline 2>/dev/null | grep -o 'node-id[= ][0-9]*' | tr -d ' =' )
    a=$(awk '/RssAnon/{print $2}' /proc/$p/status 2>/dev/null); f=$(awk '/RssFile/{print $2}' /proc/$p/status 2>/dev/null)
    echo "$(date +%s) $n anon=$((a/1024)) file=$((f/1024))"
  done >> $2
  sleep 2
done
