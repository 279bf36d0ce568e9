set -u
B=target/release/zest
run() { # name cpus idle(0/1) extra
  rm -rf /tmp/zd
  taskset -c $2 $B start --data-dir /tmp/zd --gateway-address 127.0.0.1:26700 --management-address 127.0.0.1:9760 --rest-address 127.0.0.1:28180 $4 >/tmp/zs.log 2>&1 &
  pid=$!
  for i in $(seq 100); do grep -q '^READY' /tmp/zs.log && break; sleep 0.1; done
  if [ "$3" = 1 ]; then
    for t in /proc/$pid/task/*; do c=$(cat $t/comm); case $c in fjall*) chrt -i -p 0 $(basename $t) ;; esac; done
  fi
  [ -n "${SHOW:-}" ] && { for t in /proc/$pid/task/*; do cat $t/comm; done | sort | uniq -c; SHOW=; }
  echo "== $1 cpus=$2 idle=$3 $4"
  taskset -c 5 $B bench --address 127.0.0.1:26700 --rate 61.9 --in-flight 64 --streaming --duration 30s --warmup 5s --drain 10s --quiet --server-pid $pid --json $OUT/$1.json | grep -E "latency create"
  if [ -n "${METRICS:-}" ]; then curl -s 127.0.0.1:9760/metrics | grep -E "^(zeebe_process_instance_execution_time|zeebe_job_activation_time|zeebe_stream_processor_latency|zeebe_log_appender_commit_latency|zeebe_stream_processor_batch_processing_duration)_(bucket|count)" > $OUT/$1.metrics; fi
  kill $pid; wait $pid 2>/dev/null
}
METRICS=1
for i in 1 2; do run m-$i 2 0 ""; done
