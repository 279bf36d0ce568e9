#!/bin/bash
cd /tmp/p30
for i in 1 2; do for v in base res; do
  ZEST_BIN=/tmp/p30/zest-$v bash /work/main/docs/bench-results/2026-11-26-memory/real2.sh 2 20 s2-$v-$i
done; done
for v in base res; do
  ZEST_BIN=/tmp/p30/zest-$v bash /work/main/docs/bench-results/2026-11-26-memory/real2.sh 1 14 s1-$v-1
done
echo done > /tmp/p30/single-ab.done
