#!/bin/bash
# onet.sh NAME "EXTRA" "BENCHFLAGS": one-task on a fresh single-partition node (zest-rt binary)
N=$1; EX=$2; BF=$3
D=/tmp/p30/odata-$N; rm -rf $D
ZEST_LOG=warn $SERVER_BIN start --data-dir $D --gateway-address 127.0.0.1:26700 --management-address 127.0.0.1:9700 --rest-address 127.0.0.1:0 $EX > /tmp/p30/o-$N-server.log 2>&1 &
SP=$!
sleep 3
/tmp/p30/zest-spare bench --address 127.0.0.1:26700 $BF --streaming --duration 20s --warmup 5s --drain 20s --quiet --server-pid $SP > /tmp/p30/o-$N.txt 2>&1
kill $SP; sleep 2; rm -rf $D
echo "$N: $(sed -n 3,4p /tmp/p30/o-$N.txt | tr -s ' ' | tr '\n' ' ') $(grep 'server pid' /tmp/p30/o-$N.txt | sed 's/.*peak/peak/')"
