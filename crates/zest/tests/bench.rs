//! `zest bench` against a real `zest start`: a short scenario runs and reports sane numbers,
//! and every metric the Grafana dashboard uses is exported. Nothing here is timed: throughput
//! and latency are measured by benchmarks (docs/benchmarks.md), not asserted.

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::{http_get, start, start_with, Node};

fn bench(node: &Node, extra: &[&str]) -> serde_json::Value {
    bench_drained(node, "20s", extra)
}

/// `zest bench` with a drain of `drain` after the 2 s window.
fn bench_drained(node: &Node, drain: &str, extra: &[&str]) -> serde_json::Value {
    static RUN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = RUN.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let json = node.dir.join(format!("report-{n}.json"));
    let out = Command::new(env!("CARGO_BIN_EXE_zest"))
        .args(["bench", "--address", &node.gateway, "--quiet"])
        .args(["--warmup", "1s", "--duration", "2s", "--drain", drain])
        .arg("--server-pid")
        .arg(node.child.id().to_string())
        .arg("--json")
        .arg(&json)
        .args(extra)
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("zest bench runs");
    assert!(
        out.status.success(),
        "zest bench failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("completed"), "prints a report: {text}");
    serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap()
}

fn f(v: &serde_json::Value, path: &[&str]) -> f64 {
    let mut v = v;
    for p in path {
        v = &v[*p];
    }
    v.as_f64()
        .unwrap_or_else(|| panic!("{path:?} is a number: {v}"))
}

fn assert_sane(r: &serde_json::Value) {
    assert!(f(r, &["completed_per_s"]) > 0.0, "instances completed: {r}");
    assert_eq!(
        f(r, &["completion_ratio"]),
        1.0,
        "every started instance completed: {r}"
    );
    assert_eq!(f(r, &["errors"]), 0.0, "{r}");
    let (p50, p99, max) = (
        f(r, &["latency", "p50_ms"]),
        f(r, &["latency", "p99_ms"]),
        f(r, &["latency", "max_ms"]),
    );
    assert!(
        0.0 < p50 && p50 <= p99 && p99 <= max,
        "ordered latencies: {r}"
    );
    assert_eq!(
        f(r, &["latency", "count"]),
        f(r, &["completed_per_s"]) * f(r, &["duration_s"]),
        "one latency per completed instance: {r}"
    );
    // every measured instance's first job was seen (and those of the warm-up and drain)
    assert!(
        f(r, &["job_activation", "count"]) >= f(r, &["latency", "count"]),
        "{r}"
    );
    assert!(f(r, &["server_peak_rss_mib"]) > 1.0, "{r}");
    assert!(f(r, &["server_cpu_seconds"]) >= 0.0, "{r}");
}

#[test]
fn bench_runs_scenarios_and_the_dashboard_metrics_exist() {
    let node = start("scenarios");
    let max = bench(&node, &["--rate", "max", "--in-flight", "8"]);
    assert_sane(&max);
    assert_eq!(max["scenario"], "one-task");
    let log = node.dir.join("latency.csv");
    let fixed = bench(
        &node,
        &[
            "--rate",
            "50",
            "--complete-delay-ms",
            "5",
            "--latency-log",
            log.to_str().unwrap(),
        ],
    );
    assert_sane(&fixed);
    // a fixed rate is a rate: 50/s for 2 s starts about 100 instances
    let started = f(&fixed, &["started_per_s"]);
    assert!((25.0..=75.0).contains(&started), "{fixed}");
    // the latency log has a line per measured instance: created within the 2 s window, its
    // latency within the report's max
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<(f64, f64)> = text
        .lines()
        .map(|l| {
            let (created, latency) = l.split_once(',').expect("created_s,latency_ms");
            (created.parse().unwrap(), latency.parse().unwrap())
        })
        .collect();
    assert_eq!(
        lines.len() as f64,
        f(&fixed, &["latency", "count"]),
        "{text}"
    );
    let max = f(&fixed, &["latency", "max_ms"]);
    for (created, latency) in lines {
        assert!((0.0..2.0).contains(&created), "{created} in {text}");
        assert!(latency > 0.0 && latency <= max + 1.0, "{latency} in {text}");
    }
    // a drain that ends before the last instances complete (their jobs take 1.5 s): those
    // are in neither the report nor the log, whenever they complete
    let cut = node.dir.join("latency-cut.csv");
    let drained = bench_drained(
        &node,
        "1s",
        &[
            "--rate",
            "50",
            "--complete-delay-ms",
            "1500",
            "--latency-log",
            cut.to_str().unwrap(),
        ],
    );
    let ratio = f(&drained, &["completion_ratio"]);
    assert!(0.0 < ratio && ratio < 1.0, "{drained}");
    let count = f(&drained, &["latency", "count"]);
    assert_eq!(count, f(&drained, &["completed_per_s"]) * 2.0, "{drained}");
    let text = std::fs::read_to_string(&cut).unwrap();
    assert_eq!(text.lines().count() as f64, count, "{text}\n{drained}");
    // any model and payload from the command line
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("bench");
    let custom = bench(
        &node,
        &[
            "--bpmn",
            dir.join("one_task.bpmn").to_str().unwrap(),
            "--payload",
            dir.join("typical_payload.json").to_str().unwrap(),
            "--in-flight",
            "4",
        ],
    );
    assert_sane(&custom);

    let metrics = http_get(&node.management, "/metrics");
    assert!(metrics.starts_with("HTTP/1.0 200") || metrics.starts_with("HTTP/1.1 200"));
    let dashboard = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../monitoring/grafana/zest-dashboard.json"),
    )
    .unwrap();
    let mut names: Vec<&str> = dashboard
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|t| t.starts_with("zeebe_") || t.starts_with("zest_") || t.starts_with("process_"))
        .collect();
    names.sort();
    names.dedup();
    assert!(names.len() > 10, "the dashboard queries metrics: {names:?}");
    for name in names {
        assert!(
            metrics.contains(&format!("\n{name}{{")) || metrics.contains(&format!("\n{name} ")),
            "the dashboard's metric {name} is exported"
        );
    }
    for (name, labels) in [
        ("zeebe_job_activation_time_count", "partition=\"1\""),
        (
            "zeebe_process_instance_execution_time_count",
            "partition=\"1\"",
        ),
        (
            "zeebe_job_events_total",
            "action=\"completed\",job_kind=\"BPMN_ELEMENT\",partition=\"1\",type=\"benchmark-task\"",
        ),
        (
            "zeebe_job_events_total",
            "action=\"activated\",job_kind=\"BPMN_ELEMENT\",partition=\"1\",type=\"benchmark-task\"",
        ),
        (
            "zeebe_executed_instances_total",
            "action=\"completed\",partition=\"1\",type=\"ROOT_PROCESS_INSTANCE\"",
        ),
    ] {
        let line = metrics
            .lines()
            .find(|l| l.starts_with(name) && l.contains(labels))
            .unwrap_or_else(|| panic!("{name} exported"));
        let v: f64 = line.rsplit(' ').next().unwrap().parse().unwrap();
        assert!(v > 0.0, "{line}");
    }
}

#[test]
fn bench_rejects_bad_arguments_clearly() {
    let out = Command::new(env!("CARGO_BIN_EXE_zest"))
        .args(["bench", "--rate", "fast", "--address", "127.0.0.1:1"])
        .env("RUST_BACKTRACE", "0")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--rate expects"), "{err}");
    let out = Command::new(env!("CARGO_BIN_EXE_zest"))
        .args(["bench", "--scenario", "nope", "--address", "127.0.0.1:1"])
        .env("RUST_BACKTRACE", "0")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown scenario 'nope'"));
    // a latency log that cannot be written is refused before any load is sent
    let out = Command::new(env!("CARGO_BIN_EXE_zest"))
        .args(["bench", "--address", "127.0.0.1:1"])
        .args(["--latency-log", "/nonexistent-dir/latency.csv"])
        .env("RUST_BACKTRACE", "0")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("creating the latency log /nonexistent-dir/latency.csv"),
        "{err}"
    );
}

/// Backpressure with the gateway protocol: beyond the limit, creates are answered
/// RESOURCE_EXHAUSTED at once; job completions are never rejected, even under a flood of
/// creates; and the rejections are counted in the metrics.
#[test]
fn backpressure_rejects_creates_but_never_completions() {
    use zest_gateway::proto;

    let node = start_with(
        "backpressure",
        &["--backpressure", "fixed", "--backpressure-limit", "2"],
    );
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let mut c = common::connect(&node.gateway).await;
        common::deploy_one_task(&mut c).await;
        let create = |c: common::Client| async move {
            let mut c = c;
            c.create_process_instance(proto::CreateProcessInstanceRequest {
                bpmn_process_id: "benchmark".into(),
                version: -1,
                ..Default::default()
            })
            .await
        };
        // a burst of creates: at most 2 in flight are accepted at a time
        let burst: Vec<_> = (0..300).map(|_| tokio::spawn(create(c.clone()))).collect();
        let (mut accepted, mut rejected) = (0, 0);
        for h in burst {
            match h.await.unwrap() {
                Ok(_) => accepted += 1,
                Err(s) if s.code() == tonic::Code::ResourceExhausted => {
                    assert!(s.message().contains("backpressure"), "{}", s.message());
                    rejected += 1;
                }
                Err(s) => panic!("unexpected {s:?}"),
            }
        }
        assert!(
            accepted >= 1 && rejected >= 1,
            "accepted {accepted}, rejected {rejected}"
        );
        // complete every job while creates keep flooding the partition
        let flood = {
            let c = c.clone();
            tokio::spawn(async move {
                for _ in 0..20 {
                    let batch: Vec<_> = (0..50).map(|_| tokio::spawn(create(c.clone()))).collect();
                    for h in batch {
                        let _ = h.await;
                    }
                }
            })
        };
        let mut completed = 0;
        while completed < accepted {
            let mut stream = c
                .activate_jobs(proto::ActivateJobsRequest {
                    r#type: "benchmark-task".into(),
                    worker: "test".into(),
                    timeout: 60_000,
                    max_jobs_to_activate: 100,
                    request_timeout: 2_000,
                    ..Default::default()
                })
                .await
                .expect("activation is never rejected")
                .into_inner();
            while let Some(batch) = stream.message().await.unwrap() {
                for job in batch.jobs {
                    common::complete(&mut c, job.key).await;
                    completed += 1;
                }
            }
        }
        flood.await.unwrap();
    });
    let metrics = http_get(&node.management, "/metrics");
    let dropped: f64 = metrics
        .lines()
        .find(|l| l.starts_with("zeebe_dropped_request_count_total{"))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
        .expect("dropped requests are exported");
    assert!(dropped >= 1.0, "{dropped}");
    let limit = metrics
        .lines()
        .find(|l| l.starts_with("zeebe_backpressure_requests_limit{"))
        .unwrap_or("");
    assert!(
        limit.ends_with(" 2"),
        "the fixed limit is exported: {limit}"
    );
}

/// `zest bench --fill`: the bench runs its own server, measures on the empty state, fills it
/// with parked instances, restarts the server after SIGKILL and measures again; the report
/// holds every figure, and the parked instances are really in state after the restart.
#[test]
fn the_fill_scenario_reports_state_size_figures_across_a_restart() {
    let dir = std::env::temp_dir().join(format!("zest-bench-fill-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let json = std::env::temp_dir().join(format!("zest-bench-fill-{}.json", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_zest"))
        .args(["bench", "--fill", "300", "--quiet", "--data-dir"])
        .arg(&dir)
        .args(["--warmup", "1s", "--duration", "2s", "--drain", "20s"])
        .args(["--server-arg=--log=warn", "--json"])
        .arg(&json)
        .arg("--latency-log")
        .arg(std::env::temp_dir().join(format!("zest-bench-fill-{}.csv", std::process::id())))
        .output()
        .expect("zest bench runs");
    assert!(
        out.status.success(),
        "zest bench --fill failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(r["parked"], 300);
    assert_sane(&r["empty"]);
    assert_sane(&r["loaded"]);
    // a latency log of each measurement, named after it
    for (part, name) in [("empty", "empty-state"), ("loaded", "parked-instances")] {
        let log =
            std::env::temp_dir().join(format!("zest-bench-fill-{}-{name}.csv", std::process::id()));
        let lines = std::fs::read_to_string(&log).unwrap().lines().count();
        assert_eq!(lines as f64, f(&r, &[part, "latency", "count"]), "{r}");
        let _ = std::fs::remove_file(log);
    }
    let steps = r["fill"].as_array().unwrap();
    assert_eq!(steps.len(), 10, "{r}");
    assert_eq!(steps.last().unwrap()["parked"], 300);
    assert!(f(&r, &["restart_s"]) > 0.0);
    assert!(f(&r, &["disk_after_fill", "state_mib"]) > 0.0);
    assert!(f(&r, &["loaded_over_empty"]) > 0.0);
    let peaks = r["peak_rss_mib"].as_array().unwrap();
    assert_eq!(peaks.len(), 4);
    assert!(peaks.iter().all(|p| p[1].as_f64().unwrap() > 1.0), "{r}");
    // a data directory that holds something is refused
    let out = Command::new(env!("CARGO_BIN_EXE_zest"))
        .args(["bench", "--fill", "10", "--data-dir"])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not empty"));
    // the parked instances are in the state the bench left: a third wait for a job
    let node = common::start_in(dir, &[]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let parked_jobs = rt.block_on(async {
        let mut c = common::connect(&node.gateway).await;
        let mut n = 0;
        while common::activate_one_within(&mut c, "parked-unworked", 1_000)
            .await
            .is_some()
        {
            n += 1;
        }
        n
    });
    assert_eq!(parked_jobs, 100);
    let _ = std::fs::remove_file(json);
}

/// A shell standing in for a launcher: it starts `zest start WATCH` with its data and log in
/// `dir`, says the node's pid, and waits. Returns the shell and the node's pid.
#[cfg(unix)]
fn launch_under_shell(watch: &str, dir: &std::path::Path) -> (std::process::Child, u32) {
    let script = format!(
        r#""$0" start {watch} --data-dir "$1/data" --gateway-address 127.0.0.1:0 --management-address 127.0.0.1:0 --rest-address 127.0.0.1:0 >/dev/null 2>"$1/node.log" & echo $!; wait"#
    );
    let mut parent = Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_zest"))
        .arg(dir)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(parent.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    (parent, line.trim().parse().unwrap())
}

/// True while `pid` runs (a process that ended but was not reaped yet, a zombie, has stopped).
#[cfg(unix)]
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            !s.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
        .unwrap_or(false)
}

/// Waits up to `secs` for `pid` to end; true when it did.
#[cfg(unix)]
fn ends_within(pid: u32, secs: u64) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while running(pid) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    !running(pid)
}

/// A node started with `--exit-with-parent` does not outlive the process that started it,
/// even when that process is killed with SIGKILL and has no chance to stop it.
#[cfg(unix)]
#[test]
fn a_node_stops_when_the_process_that_started_it_is_killed() {
    let dir =
        std::env::temp_dir().join(format!("zest-test-exit-with-parent-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (mut parent, node) = launch_under_shell("--exit-with-parent", &dir);
    std::thread::sleep(std::time::Duration::from_secs(1));
    assert!(running(node), "the node runs while its parent does");
    parent.kill().unwrap();
    parent.wait().unwrap();
    assert!(
        ends_within(node, 30),
        "node {node} outlived the process that started it"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The same when the launcher ends at once, maybe before the node even runs: with the
/// launcher's pid given (`--parent-pid`, as `zest bench` gives it) the node stops once started,
/// for that reason (it says so), instead of missing an end it did not see.
#[cfg(unix)]
#[test]
fn a_node_whose_parent_ends_while_it_starts_stops_too() {
    let dir = std::env::temp_dir().join(format!("zest-test-parent-gone-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (mut parent, node) = launch_under_shell("--parent-pid $$", &dir);
    parent.kill().unwrap();
    parent.wait().unwrap();
    assert!(
        ends_within(node, 60),
        "node {node} outlived the process that started it"
    );
    let text = std::fs::read_to_string(dir.join("node.log")).unwrap_or_default();
    assert!(
        text.contains("the process that started this node ended"),
        "the node stopped for another reason: {text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
