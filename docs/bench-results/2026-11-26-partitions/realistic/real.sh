#!/bin/bash
# usage: real.sh PARTS RATE NAME
P=$1; R=$2; N=$3
D=/tmp/p30/rdata-$N; rm -rf $D
ZEST_LOG=warn ${ZEST_BIN:-target/release/zest} start --partitions $P --data-dir $D --gateway-address 127.0.0.1:26700 --management-address 127.0.0.1:9700 --rest-address 127.0.0.1:0 > /tmp/p30/$N-server.log 2>&1 &
sleep 3
PID=$(pgrep -f "data-dir $D" | head -1)
${ZEST_BIN:-target/release/zest} bench --address 127.0.0.1:26700 --scenario realistic --rate $R --workers 40 --streaming --duration 60s --warmup 15s --drain 30s --quiet --label "zest, $P partition(s)" --json /tmp/p30/real-$N.json --server-pid $PID > /tmp/p30/real-$N.txt 2>&1
kill $PID; sleep 3; rm -rf $D
