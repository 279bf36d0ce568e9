#!/bin/bash
# onet3.sh NAME SERVER_BIN: one-task with a 240 KB model at max rate, 64 in flight, 1 partition
N=$1; B=$2
D=/tmp/p30/odata-$N; rm -rf $D
ZEST_LOG=warn $B start --data-dir $D --gateway-address 127.0.0.1:26700 --management-address 127.0.0.1:9700 --rest-address 127.0.0.1:0 --config /tmp/p30/mg64.toml > /tmp/p30/o-$N-server.log 2>&1 &
SP=$!
sleep 3
/tmp/p30/zest-head2 bench --address 127.0.0.1:26700 --bpmn /tmp/p30/one_task_big.bpmn --in-flight 64 --streaming --duration 20s --warmup 5s --drain 20s --quiet --server-pid $SP > /tmp/p30/o-$N.txt 2>&1
kill $SP; sleep 2; rm -rf $D
echo "$N: $(sed -n 3,4p /tmp/p30/o-$N.txt | tr -s ' ' | tr '\n' ' ') $(grep 'server pid' /tmp/p30/o-$N.txt | sed 's/.*peak/peak/')"
