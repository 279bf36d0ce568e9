#!/bin/bash
BIN=$1; DIR=$2; OUT=$3
$BIN start --data-dir $DIR --gateway-address 127.0.0.1:26700 --rest-address 127.0.0.1:8780 --management-address 127.0.0.1:9800 > /tmp/loaded-server.log 2>&1 &
pid=$!
for i in $(seq 1 200); do grep -q "ready" /tmp/loaded-server.log && break; sleep 0.1; done
$BIN bench --address 127.0.0.1:26700 --in-flight 200 --streaming --duration 30s --warmup 10s --drain 10s --server-pid $pid --quiet --json $OUT > /dev/null 2>&1
kill $pid; wait $pid
