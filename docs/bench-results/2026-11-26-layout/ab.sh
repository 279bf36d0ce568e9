#!/bin/bash
# A/B of two zest binaries: one-task max (64 in flight) and light load (4 in flight), streaming,
# fresh data directory and server per measurement, builds alternating.
set -u
OLD=$1; NEW=$2; OUT=$3; ROUNDS=${ROUNDS:-3}
mkdir -p $OUT
measure() { # bin label part inflight
  local bin=$1 label=$2 part=$3 inflight=$4
  rm -rf /tmp/ab29/data; 
  $bin start --data-dir /tmp/ab29/data --gateway-address 127.0.0.1:26600 --rest-address 127.0.0.1:8680 --management-address 127.0.0.1:9700 > /tmp/ab29/server.log 2>&1 &
  local pid=$!
  for i in $(seq 1 100); do grep -q "ready" /tmp/ab29/server.log && break; sleep 0.1; done
  $NEW bench --address 127.0.0.1:26600 --in-flight $inflight --streaming --duration 20s --warmup 5s --server-pid $pid --quiet --label "$label" --json $OUT/$part-$r-$label.json > /dev/null 2>&1
  kill $pid; wait $pid 2>/dev/null
  sleep 3
}
for r in $(seq ${FIRST:-1} $((${FIRST:-1} + ROUNDS - 1))); do
  for part in ${PARTS:-max low}; do
    inflight=64; [ $part = low ] && inflight=4
    if [ $((r % 2)) = 0 ]; then
      measure $NEW after $part $inflight
      measure $OLD before $part $inflight
    else
      measure $OLD before $part $inflight
      measure $NEW after $part $inflight
    fi
  done
done
python3 - $OUT <<'PY'
import json,glob,sys,statistics
out=sys.argv[1]
for part in ('max','low'):
    for label in ('before','after'):
        rs=[json.load(open(f)) for f in sorted(glob.glob(f'{out}/{part}-*-{label}.json'))]
        rates=[r['completed_per_s'] for r in rs]; p50=[r['latency']['p50_ms'] for r in rs]; p99=[r['latency']['p99_ms'] for r in rs]
        cpu=[r.get('server_cpu_cores') or 0 for r in rs]
        print(part,label,'rates',[round(x,1) for x in rates],'median',round(statistics.median(rates),1),'p50',[round(x,2) for x in p50],'p99',[round(x,1) for x in p99],'cpu',[round(x,2) for x in cpu])
PY
