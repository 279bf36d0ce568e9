#!/bin/bash
for i in 1 2; do for v in old new; do
 B=/tmp/zest-5c503bd; [ $v = new ] && B=/tmp/zest-new4
 ZEST_BIN=$B bash /tmp/p30/real2.sh 2 20 sab-$v-$i
 echo "== $v #$i"; sed -n 3,6p /tmp/p30/real-sab-$v-$i.txt
done; done
