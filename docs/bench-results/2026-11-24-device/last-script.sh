set -u
B=target/release/zest
run() { # name cpus extra-env extra-flags
  rm -rf /tmp/zd
  env $3 taskset -c $2 $B start --data-dir /tmp/zd --gateway-address 127.0.0.1:26700 --management-address 127.0.0.1:9760 --rest-address 127.0.0.1:28180 $4 >/tmp/zs.log 2>&1 &
  pid=$!
  for i in $(seq 100); do grep -q '^READY' /tmp/zs.log && break; sleep 0.1; done
  echo "== $1 cpus=$2 env=$3 $4 threads=$(ls /proc/$pid/task | wc -l)"
  taskset -c 15 $B bench --address 127.0.0.1:26700 --rate 61.9 --in-flight 64 --streaming --duration 30s --warmup 5s --drain 10s --quiet --server-pid $pid --json $OUT/$1.json | grep -E "latency create"
  kill $pid; wait $pid 2>/dev/null
}
for i in 1 2; do
  run all-cores-$i 0-13 X=1 ""
  run all-cores-noflush-$i 0-13 X=1 "--raft-flush-enabled false"
  run one-core-1worker-$i 2 TOKIO_WORKER_THREADS=1 ""
done
