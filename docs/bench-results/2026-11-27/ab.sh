#!/usr/bin/env bash
# ab.sh RATE N: alternates win/base N times at RATE
RATE=$1 N=$2
for i in $(seq 1 $N); do
  for v in ${VARIANTS:-win base}; do
    ZEST_BIN=/tmp/p30/zest-$v /tmp/p30/run.sh $v$RATE-$i $RATE
    D=$(grep -o 'kept /tmp/zest-cluster-bench-[A-Za-z0-9]*' /tmp/p30/out/$v$RATE-$i.log | cut -d' ' -f2)
    echo "$v$RATE-$i: timeouts=$(grep -c 'did not answer\|[Tt]imeout' $D/err.log) elections=$(grep -ci 'elect\|became leader\|leader of' $D/err.log)" >> /tmp/p30/out/ab-$RATE.summary
    rm -rf $D
  done
done
