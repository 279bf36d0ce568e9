#!/bin/bash
# killrestart.sh BIN NAME: one-task load, SIGKILL of the server at 15 s, restart, time to /ready
B=$1; N=$2; D=/tmp/p30/kr-$N; rm -rf $D
$B start --data-dir $D --gateway-address 127.0.0.1:26900 --management-address 127.0.0.1:9900 --rest-address 127.0.0.1:0 > /tmp/p30/kr-$N.log 2>&1 &
SP=$!; sleep 3
$B bench --address 127.0.0.1:26900 --scenario one-task --rate max --in-flight 200 --workers 2 --streaming --duration 30s --warmup 2s --drain 2s --quiet > /dev/null 2>&1 &
BP=$!
sleep 15; kill -9 $SP; wait $SP 2>/dev/null; kill $BP 2>/dev/null
T0=$(date +%s.%N)
$B start --data-dir $D --gateway-address 127.0.0.1:26900 --management-address 127.0.0.1:9900 --rest-address 127.0.0.1:0 > /tmp/p30/kr-$N-2.log 2>&1 &
SP=$!
until curl -sf 127.0.0.1:9900/ready > /dev/null; do sleep 0.05; done
T1=$(date +%s.%N)
echo "$N: ready $(echo "$T1 - $T0" | bc) s after restart; log $(du -sh $D/journal | cut -f1)"
kill $SP; wait $SP 2>/dev/null; rm -rf $D
