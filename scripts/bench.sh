#!/usr/bin/env bash
# Measures Zest and the real Zeebe engine with the same load generator (`zest bench`) and the same
# settings, in one run, and writes one JSON report per measurement plus a summary table.
#
# Usage: scripts/bench.sh [OUTDIR]            (default OUTDIR: target/bench/<date>)
# Env:   DURATION=60s WARMUP=15s IN_FLIGHT=64 WORKERS=2 TYPICAL_RATE=50 TYPICAL_DURATION=60s
#        PARTS="max maxpoll low half typical overload"   which measurements to run
#        STREAMING=1                        workers take jobs by job streaming (StreamActivatedJobs);
#                                           0: by polling ActivateJobs. `maxpoll` always polls.
#        ZEEBE=1                            also measure Zeebe (needs a JDK >= 21 and Maven)
#        SETTLE=10                          seconds of rest after each measurement
#        ZEST_BIN=target/release/zest       (built when absent)
#        SERVER_CPUS=0 BENCH_CPUS=1         pin the server (either system) and the load generator
#                                           to these CPUs (taskset lists), so that they do not
#                                           share cores; unset: no pinning
#        REPEAT=1                           runs of the parts max, max-noflush, half and
#                                           half-noflush per system, alternating systems (files
#                                           NAME-N-SYSTEM.json): throughput and tail latency on a
#                                           shared VM vary from run to run; the summary gives the
#                                           median of the runs and, for max, Zest's over Zeebe's
#        ZEST_FLAGS=                        extra flags for `zest start`
#        OVERLOAD_MAX_JOB_WAIT_MS=100       the job backlog gate for the part `overload` (it
#                                           is off by default; 0 keeps it off)
#        OVERLOAD_AIMD_RTT_MS=50            AIMD's round-trip target for the part `overload`
#                                           (the default is Zeebe's 200)
#
# Parts `max-noflush` and `half-noflush` measure Zest with the log's fsync off
# (`--raft-flush-enabled false`, Zeebe's cluster.raft.flush.enabled = false): the Zeebe engine
# measured here keeps its log in memory, so these are Zest measured the way that Zeebe runs.
#
# Zeebe is Zeebe's own engine from Maven Central (zeebe-process-test-engine, in-memory log and
# state, one partition) started by ../shared/anchors/zeebe/run-engine.sh; each measurement gets a
# fresh server of either system, started the same way every time.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${1:-target/bench/$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
DURATION=${DURATION:-60s}
WARMUP=${WARMUP:-15s}
IN_FLIGHT=${IN_FLIGHT:-64}
WORKERS=${WORKERS:-2}
TYPICAL_RATE=${TYPICAL_RATE:-50}
TYPICAL_DURATION=${TYPICAL_DURATION:-60s}
PARTS=${PARTS:-max maxpoll low half typical overload}
STREAMING=${STREAMING:-1}
# Polling workers at a fixed rate poll without long polling, every 5 ms: the in-memory gateway of
# the Zeebe engine used here does not wake parked long polls, so with long polling its jobs would
# wait for the poll timeout (measured: 5 s p50). Both systems get the same settings.
POLL_WORKERS="--poll-timeout-ms -1 --poll-interval-ms 5"
if [ "$STREAMING" = 1 ]; then
  WORKER_MODE=--streaming
  FIXED_RATE_WORKERS=${FIXED_RATE_WORKERS:---streaming}
else
  WORKER_MODE=
  FIXED_RATE_WORKERS=${FIXED_RATE_WORKERS:-$POLL_WORKERS}
fi
ZEEBE=${ZEEBE:-1}
SETTLE=${SETTLE:-10}
ZEST_BIN=${ZEST_BIN:-target/release/zest}
[ -x "$ZEST_BIN" ] || cargo build --release --locked -p zest
ZEST_BIN=$(cd "$(dirname "$ZEST_BIN")" && pwd)/$(basename "$ZEST_BIN")
export RUST_BACKTRACE=0
REPEAT=${REPEAT:-1}
read -r -a ZEST_EXTRA <<<"${ZEST_FLAGS:-}"
SERVER_PIN=()
BENCH_PIN=()
[ -n "${SERVER_CPUS:-}" ] && SERVER_PIN=(taskset -c "$SERVER_CPUS")
[ -n "${BENCH_CPUS:-}" ] && BENCH_PIN=(taskset -c "$BENCH_CPUS")

PORT=26600
MGMT=9700
SERVER_PID=

stop_server() {
  if [ -n "$SERVER_PID" ]; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=
  fi
}
trap stop_server EXIT

wait_ready() { # log file
  for _ in $(seq 1 600); do
    grep -q '^READY' "$1" 2>/dev/null && return 0
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$1" >&2; return 1; }
    sleep 0.2
  done
  echo "server did not get ready" >&2; return 1
}

start_zest() {
  rm -rf "$OUT/zest-data"
  ZEST_LOG=warn "${SERVER_PIN[@]}" "$ZEST_BIN" start --data-dir "$OUT/zest-data" \
    --gateway-address 127.0.0.1:$PORT --management-address 127.0.0.1:$MGMT \
    --rest-address 127.0.0.1:0 "${ZEST_EXTRA[@]}" >"$OUT/zest.log" 2>&1 &
  SERVER_PID=$!
  wait_ready "$OUT/zest.log"
}

ANCHOR=${ANCHOR_DIR:-${TMPDIR:-/tmp}/zeebe-anchor}
start_zeebe() {
  if [ ! -f "$ANCHOR/target/zeebe-anchor-1.jar" ]; then
    mkdir -p "$ANCHOR"
    cp -r "$ROOT/../shared/anchors/zeebe/." "$ANCHOR/"
  fi
  "${SERVER_PIN[@]}" "$ANCHOR/run-engine.sh" $PORT >"$OUT/zeebe.log" 2>&1 &
  SERVER_PID=$!
  wait_ready "$OUT/zeebe.log"
}

# measure NAME SYSTEM bench-args...
measure() {
  local name=$1 system=$2
  shift 2
  "start_$system"
  echo "== $name ($system)" >&2
  "${BENCH_PIN[@]}" "$ZEST_BIN" bench --address 127.0.0.1:$PORT --server-pid "$SERVER_PID" --label "$system" \
    --workers "$WORKERS" --quiet --json "$OUT/$name-$system.json" "$@" | tee -a "$OUT/summary.txt"
  stop_server
  # let the machine settle: right after a server of ~1 GiB exits, the kernel is still reclaiming
  # its memory, which showed as a few ms added to the next measurement's latencies
  sleep "$SETTLE"
}

start_zest-noflush() {
  local saved=("${ZEST_EXTRA[@]}")
  ZEST_EXTRA+=(--raft-flush-enabled false)
  start_zest
  ZEST_EXTRA=("${saved[@]}")
}

# median completed PI/s of the max runs of SYSTEM (max-SYSTEM.json or max-N-SYSTEM.json)
median_max() {
  python3 - "$OUT" "$1" <<'PY'
import glob, json, statistics, sys
out, system = sys.argv[1], sys.argv[2]
files = glob.glob(f"{out}/max-{system}.json") + glob.glob(f"{out}/max-[0-9]*-{system}.json")
if not files:
    sys.exit(1)
print(statistics.median(json.load(open(f))["completed_per_s"] for f in files))
PY
}

systems="zest"
[ "$ZEEBE" = 1 ] && systems="zeebe zest"

for part in $PARTS; do
  case $part in
    max|max-noflush)
      these=$systems; [ "$part" = max-noflush ] && these=zest-noflush
      for i in $(seq 1 "$REPEAT"); do
        suffix=; [ "$REPEAT" -gt 1 ] && suffix=-$i
        for s in $these; do
          measure "max$suffix" "$s" --scenario one-task --rate max --in-flight "$IN_FLIGHT" \
            --warmup "$WARMUP" --duration "$DURATION" $WORKER_MODE
        done
      done ;;
    maxpoll)
      # the same with workers that poll (long polling) instead of streaming
      for s in $systems; do
        measure maxpoll "$s" --scenario one-task --rate max --in-flight "$IN_FLIGHT" \
          --warmup "$WARMUP" --duration "$DURATION"
      done ;;
    low)
      # closed loop with few instances in flight: latency at light load, for both systems
      for s in $systems; do
        measure low "$s" --scenario one-task --rate max --in-flight 4 \
          --warmup "$WARMUP" --duration "$DURATION" $WORKER_MODE
      done ;;
    half|half-noflush)
      # half of Zeebe's max rate (the median of its runs), or of Zest's when Zeebe is not measured
      rate=$(median_max zeebe || median_max zest || median_max zest-noflush)
      rate=$(python3 -c "print(round($rate / 2, 1))")
      these=$systems; [ "$part" = half-noflush ] && these=zest-noflush
      for i in $(seq 1 "$REPEAT"); do
        suffix=; [ "$REPEAT" -gt 1 ] && suffix=-$i
        for s in $these; do
          measure "half$suffix" "$s" --scenario one-task --rate "$rate" --warmup "$WARMUP" \
            --duration "$DURATION" $FIXED_RATE_WORKERS
        done
      done ;;
    typical)
      for s in $systems; do
        measure typical "$s" --scenario typical --rate "$TYPICAL_RATE" --warmup "$WARMUP" \
          --duration "$TYPICAL_DURATION" --drain 180s $FIXED_RATE_WORKERS
      done ;;
    overload)
      # With the job backlog gate at 100 ms (off by default) and an AIMD round-trip target of
      # 50 ms (200 by default, Zeebe's): under 3x overload the command limit alone lets jobs
      # pile up behind the workers, and a lower target keeps the accepted ones fast
      # (docs/benchmarks.md says so beside the figures).
      rate=$(median_max zest)
      rate=$(python3 -c "print(round($rate * 3, 1))")
      saved=("${ZEST_EXTRA[@]}")
      ZEST_EXTRA+=(--backpressure-max-job-wait-ms "${OVERLOAD_MAX_JOB_WAIT_MS:-100}"
        --backpressure-aimd-rtt-ms "${OVERLOAD_AIMD_RTT_MS:-50}")
      measure overload zest --scenario one-task --rate "$rate" --in-flight 20000 \
        --warmup "$WARMUP" --duration "$DURATION" $FIXED_RATE_WORKERS
      ZEST_EXTRA=("${saved[@]}") ;;
    *) echo "unknown part $part" >&2; exit 2 ;;
  esac
done

rm -rf "$OUT/zest-data" # the last Zest server's data directory: hundreds of MiB of log
python3 - "$OUT" <<'PY' | tee "$OUT/table.md"
import json, os, sys
out = sys.argv[1]
rows = []
for f in sorted(os.listdir(out)):
    if not f.endswith(".json"):
        continue
    r = json.load(open(os.path.join(out, f)))
    rows.append((f[:-5], r))
print("| measurement | rate | completed PI/s | ratio | rejected/s | p50 ms | p99 ms | max ms | peak RSS MiB | CPU cores |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for name, r in rows:
    l = r["latency"]
    print(f"| {name} | {r['rate']} | {r['completed_per_s']:.1f} | {r['completion_ratio']:.3f} | "
          f"{r['rejected_per_s']:.1f} | {l['p50_ms']:.2f} | {l['p99_ms']:.2f} | {l['max_ms']:.2f} | "
          f"{(r.get('server_peak_rss_mib') or 0):.1f} | {(r.get('server_cpu_cores') or 0):.2f} |")
# repeated runs (PART-N-SYSTEM): the median of each figure over the runs
import re, statistics
groups = {}
for name, r in rows:
    m = re.fullmatch(r"(\w+)-\d+-(.+)", name)
    if m:
        groups.setdefault((m.group(1), m.group(2)), []).append(r)
if groups:
    print()
    print("| median of runs | runs | completed PI/s | p50 ms | p99 ms | peak RSS MiB | CPU cores | PI/s per core |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    med = lambda rs, f: statistics.median(f(r) for r in rs)
    for (part, system), rs in sorted(groups.items()):
        pis = med(rs, lambda r: r["completed_per_s"])
        cores = med(rs, lambda r: r.get("server_cpu_cores") or 0)
        per_core = med(rs, lambda r: r["completed_per_s"] / r["server_cpu_cores"] if r.get("server_cpu_cores") else 0)
        print(f"| {part} {system} | {len(rs)} | {pis:.1f} | {med(rs, lambda r: r['latency']['p50_ms']):.2f} | "
              f"{med(rs, lambda r: r['latency']['p99_ms']):.2f} | {med(rs, lambda r: r.get('server_peak_rss_mib') or 0):.1f} | "
              f"{cores:.2f} | {per_core:.1f} |")
    zeebe = groups.get(("max", "zeebe"))
    if zeebe:
        base = med(zeebe, lambda r: r["completed_per_s"])
        for system in ("zest", "zest-noflush"):
            if ("max", system) in groups and base > 0:
                z = med(groups[("max", system)], lambda r: r["completed_per_s"])
                print(f"\nmax, median of runs: {system} {z:.1f} PI/s / zeebe {base:.1f} PI/s = {z / base:.1f}x")
PY
