#!/bin/bash
# name bin [env...]
name=$1; bin=$2; shift 2
OUT=/tmp/ab-mem; dir=$(mktemp -d /tmp/abdata-XXXX)
env "$@" $bin start --data-dir $dir/data > $OUT/$name.server.log 2>&1 &
pid=$!
for i in $(seq 1 50); do grep -q READY $OUT/$name.server.log && break; sleep 0.2; done
/tmp/zest-new bench --scenario one-task --rate max --in-flight 200 --workers 2 --streaming --duration 30s --warmup 10s > $OUT/$name.txt 2>&1
grep VmHWM /proc/$pid/status >> $OUT/$name.txt
kill $pid; wait $pid 2>/dev/null; rm -rf $dir; sleep 5
echo "$name: $(grep -o 'completed [0-9.]* PI/s' $OUT/$name.txt | head -1) $(grep -o 'p99 [0-9.]* ms' $OUT/$name.txt | head -1) $(grep VmHWM $OUT/$name.txt)"
