#!/usr/bin/env bash
# manual3.sh NAME RATE: 3 nodes x 3 partitions RF3 started by hand, node 0 under heaptrack (HT=1)
NAME=$1 RATE=$2
BIN=${ZEST_BIN:-/tmp/ht-target/release/zest}
DIR=/tmp/zest-cluster-bench-man; rm -rf $DIR; mkdir -p $DIR
pids=()
for i in 0 1 2; do
  cps=(); for j in 0 1 2; do [ $j != $i ] && cps+=("127.0.0.1:$((26502+10*j))"); done
  args=(start --node-id=$i --cluster-size=3 --partitions=3 --replication-factor=3 --internal-address=127.0.0.1:$((26502+10*i)) --gateway-address=127.0.0.1:$((26500+10*i)) --rest-address=127.0.0.1:$((8080+10*i)) --management-address=127.0.0.1:$((9600+10*i)) --data-dir=$DIR/data/node-$i --contact-points=$(IFS=,; echo "${cps[*]}"))
  if [ $i = 0 ] && [ -n "$HT" ]; then
    heaptrack -o /tmp/p30/out/$NAME.ht $BIN "${args[@]}" > $DIR/n$i.log 2>&1 &
  else
    $BIN "${args[@]}" > $DIR/n$i.log 2>&1 &
  fi
  pids+=($!)
done
for i in 0 1 2; do until grep -q READY $DIR/n$i.log; do sleep 0.5; done; done
sleep 3
if [ -n "$PERF" ]; then perf record -q -e page-faults -c 8 --call-graph dwarf,8192 -p ${pids[0]} -o /tmp/p30/out/$NAME.perf -- sleep 75 > /dev/null 2>&1 & fi
$BIN bench --address 127.0.0.1:26500 --scenario realistic --rate $RATE --workers 40 --streaming --duration 60s --warmup 15s --drain 30s --quiet --label $NAME > /tmp/p30/out/$NAME.txt 2>&1
for p in $(pgrep -f "data-dir=$DIR"); do echo "$(tr '\0' ' ' </proc/$p/cmdline | grep -o 'node-id=[0-9]') $(grep VmHWM /proc/$p/status)"; done >> /tmp/p30/out/$NAME.txt
kill ${pids[@]}; sleep 5; pkill -f "data-dir=$DIR"; sleep 1
rm -rf $DIR
