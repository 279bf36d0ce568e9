#!/bin/bash
# usage: real2.sh PARTS RATE NAME  (env passes through to the server)
P=$1; R=$2; N=$3
D=/tmp/p30/rdata-$N; rm -rf $D
ZEST_LOG=${ZLOG:-warn} ${SERVER_BIN} start --partitions $P --data-dir $D --gateway-address 127.0.0.1:26700 --management-address 127.0.0.1:9700 --rest-address 127.0.0.1:0 $EXTRA > /tmp/p30/$N-server.log 2>&1 &
SP=$!
sleep 3
(for i in $(seq 1 9); do sleep 10; echo "== t=$((i*10))"; grep "^zest_memory\|^process_resident" <(curl -s 127.0.0.1:9700/metrics); done > /tmp/p30/$N-metrics.txt) &
/usr/bin/time -f "bench cpu user %U sys %S wall %e" /tmp/p30/zest-head2 bench --address 127.0.0.1:26700 --scenario realistic --rate $R --workers 40 --streaming --duration 60s --warmup 15s --drain 30s --quiet --label "zest, $P partition(s)" --json /tmp/p30/real-$N.json --server-pid $SP > /tmp/p30/real-$N.txt 2>&1
curl -s 127.0.0.1:9700/metrics > /tmp/p30/$N-final-metrics.txt; kill $SP; sleep 3; rm -rf $D
