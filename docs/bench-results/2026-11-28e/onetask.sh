#!/bin/bash
# onetask.sh NAME [malloc conf]
N=$1; C=$2; D=/tmp/p30/ot-$N; rm -rf $D
_RJEM_MALLOC_CONF=$C ${ZBIN:-/tmp/p30/zest-res} start --data-dir $D --gateway-address 127.0.0.1:26800 --management-address 127.0.0.1:9800 --rest-address 127.0.0.1:0 > /tmp/p30/ot-$N.log 2>&1 &
SP=$!; sleep 3
${ZBIN:-/tmp/p30/zest-res} bench --address 127.0.0.1:26800 --scenario one-task --rate max --in-flight 200 --workers 2 --streaming --duration 20s --warmup 5s --drain 5s --quiet --label $N --server-pid $SP > /tmp/p30/out/ot-$N.txt 2>&1
kill $SP; sleep 2; rm -rf $D
sed -n 3,6p /tmp/p30/out/ot-$N.txt
