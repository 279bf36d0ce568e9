#!/bin/bash
# alternated: base / calls256 / windows / both
cd /tmp/p30
for round in 1 2; do
  for v in base calls win both; do
    case $v in
      base) E="";;
      calls) E="ZEST_EXP_CALLS=256";;
      win) E="ZEST_EXP_CONN_WIN=262144 ZEST_EXP_STREAM_WIN=65536";;
      both) E="ZEST_EXP_CALLS=256 ZEST_EXP_CONN_WIN=262144 ZEST_EXP_STREAM_WIN=65536";;
    esac
    env $E ZEST_BIN=/tmp/p30/zest-exp bash run.sh x-$v-$round 20
    echo "== $v $round"; grep -E "completed|p50|VmHWM" /tmp/p30/out/x-$v-$round.log
  done
done
