#!/bin/bash
# usage: prof.sh RATE NAME: the system-alloc build with libjemalloc's profiler preloaded
R=$1; N=$2
D=/tmp/p30/pdata-$N; rm -rf $D; mkdir -p /tmp/p30/prof-$N; rm -f /tmp/p30/prof-$N/*
cd /tmp/p30/prof-$N
LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2 MALLOC_CONF=prof:true,lg_prof_sample:17,lg_prof_interval:26,prof_prefix:/tmp/p30/prof-$N/jeprof ZEST_LOG=warn /tmp/ht-target/release/zest start --partitions 2 --data-dir $D --gateway-address 127.0.0.1:26700 --management-address 127.0.0.1:9700 --rest-address 127.0.0.1:0 > /tmp/p30/$N-server.log 2>&1 &
SP=$!
sleep 3
(for i in $(seq 1 9); do sleep 10; echo "== t=$((i*10))"; grep "^zest_memory_used\|^process_resident" <(curl -s 127.0.0.1:9700/metrics); done > /tmp/p30/$N-metrics.txt) &
/work/main/target/release/zest bench --address 127.0.0.1:26700 --scenario realistic --rate $R --workers 40 --streaming --duration 60s --warmup 15s --drain 30s --quiet --json /tmp/p30/real-$N.json --server-pid $SP > /tmp/p30/real-$N.txt 2>&1
kill $SP; sleep 5; rm -rf $D
