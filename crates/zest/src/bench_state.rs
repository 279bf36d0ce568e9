//! `zest bench --fill N`: Zest with a large state. The bench starts a `zest start` of its own
//! on an empty data directory and then:
//! 1. measures the scenario (one-task by default) on the empty state;
//! 2. fills the state with N parked instances through the gateway (`bench/parked.bpmn`: a
//!    third wait for a message, a third for a timer a year away, a third for a job nobody
//!    works), reporting the fill rate, RSS, disk use and snapshot durations per step;
//! 3. kills the server with SIGKILL and restarts it on the same data, timing the restart to
//!    READY;
//! 4. measures the scenario again on top of the parked instances.
//!
//! RSS is sampled every 100 ms through all of it; the report gives the largest sample of each
//! phase and the kernel's high-water mark of each server process.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use serde::Serialize;
use tonic::Code;
use zest_gateway::proto;

use crate::bench::{self, status_kib, BenchArgs, Report};
use zest_storage::dir_bytes;

const PARKED: &[u8] = include_bytes!("../bench/parked.bpmn");
const PARKED_PROCESSES: [&str; 3] = ["parked-message-catch", "parked-timer", "parked-job"];
const PHASES: [&str; 4] = ["empty", "fill", "restart", "loaded"];

#[derive(Debug, Serialize)]
pub struct FillStep {
    /// Parked instances in state at the end of the step.
    pub parked: u64,
    pub seconds: f64,
    /// Instances created per second during the step.
    pub created_per_s: f64,
    /// Largest RSS sample of the server during the step.
    pub peak_rss_mib: f64,
    /// Size of the data directory at the end of the step.
    pub data_dir_mib: f64,
    /// Snapshots taken during the step and their mean duration.
    pub snapshots: u64,
    pub snapshot_mean_ms: Option<f64>,
}

#[derive(Debug, Serialize)]
pub struct Disk {
    pub log_mib: f64,
    pub state_mib: f64,
    pub total_mib: f64,
}

#[derive(Debug, Serialize)]
pub struct StateReport {
    pub parked: u64,
    pub empty: Report,
    pub fill: Vec<FillStep>,
    /// Disk use right after the fill.
    pub disk_after_fill: Disk,
    /// Mean snapshot duration on the empty state (during the first measurement).
    pub empty_snapshot_mean_ms: Option<f64>,
    /// SIGKILL to READY of the restarted server.
    pub restart_s: f64,
    pub loaded: Report,
    /// Loaded completions per second over empty ones.
    pub loaded_over_empty: f64,
    /// Largest RSS sample per phase (empty, fill, restart, loaded).
    pub peak_rss_mib: Vec<(String, f64)>,
    /// Kernel high-water marks (VmHWM) of the first and the restarted server process.
    pub vm_hwm_mib: Vec<f64>,
    pub disk_at_end: Disk,
}

/// A `zest start` run by the bench.
struct Server {
    child: Child,
    gateway: String,
    management: String,
}

/// A server the bench started never outlives it, whatever ends the run: an error here, a
/// signal through `--parent-pid` (the bench's own pid).
impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn spawn_server(data_dir: &Path, extra: &[String]) -> anyhow::Result<Server> {
    let exe = std::env::current_exe().context("finding the zest binary")?;
    let mut child = Command::new(exe)
        .args(["start", "--data-dir"])
        .arg(data_dir)
        .args(["--gateway-address", "127.0.0.1:0"])
        .args(["--management-address", "127.0.0.1:0"])
        .args(["--rest-address", "127.0.0.1:0"])
        // a bench killed by a signal (SIGKILL included) does not leave its server behind
        .arg("--parent-pid")
        .arg(std::process::id().to_string())
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .context("starting zest")?;
    let stdout = child.stdout.take().context("zest's stdout")?;
    let mut lines = BufReader::new(stdout).lines();
    let ready = loop {
        match lines.next() {
            Some(Ok(line)) if line.starts_with("READY") => break line,
            Some(Ok(_)) => continue,
            _ => bail!("zest start ended before it was ready"),
        }
    };
    // keep draining its stdout so that it never blocks on a full pipe
    std::thread::spawn(move || for _ in lines {});
    let field = |name: &str| {
        ready
            .split_whitespace()
            .find_map(|w| w.strip_prefix(&format!("{name}=")))
            .map(str::to_string)
            .with_context(|| format!("READY line without {name}: {ready}"))
    };
    Ok(Server {
        gateway: field("gateway")?,
        management: field("management")?,
        child,
    })
}

/// RSS of the server, sampled in the background.
struct RssSampler {
    pid: Arc<AtomicU32>,
    phase: Arc<AtomicUsize>,
    /// Largest sample per phase, in KiB.
    peaks: Arc<[AtomicU64; PHASES.len()]>,
    /// Largest sample since the last [`RssSampler::take_step`], in KiB.
    step: Arc<AtomicU64>,
}

impl RssSampler {
    fn start(pid: u32) -> RssSampler {
        let s = RssSampler {
            pid: Arc::new(AtomicU32::new(pid)),
            phase: Arc::new(AtomicUsize::new(0)),
            peaks: Arc::new(Default::default()),
            step: Arc::new(AtomicU64::new(0)),
        };
        let sampler = s.clone_handles();
        tokio::spawn(async move {
            loop {
                sampler.sample();
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        });
        s
    }

    fn clone_handles(&self) -> RssSampler {
        RssSampler {
            pid: self.pid.clone(),
            phase: self.phase.clone(),
            peaks: self.peaks.clone(),
            step: self.step.clone(),
        }
    }

    /// Reads the server's RSS now into the current phase's and step's peaks.
    fn sample(&self) {
        if let Some(kib) = status_kib(self.pid.load(Ordering::Relaxed), "VmRSS:") {
            self.peaks[self.phase.load(Ordering::Relaxed)].fetch_max(kib, Ordering::Relaxed);
            self.step.fetch_max(kib, Ordering::Relaxed);
        }
    }

    /// The largest sample since the last call (one taken now included), in MiB.
    fn take_step(&self) -> f64 {
        self.sample();
        self.step.swap(0, Ordering::Relaxed) as f64 / 1024.0
    }

    fn peak_mib(&self, phase: usize) -> f64 {
        self.peaks[phase].load(Ordering::Relaxed) as f64 / 1024.0
    }
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn disk(data_dir: &Path) -> Disk {
    Disk {
        // the log's segment files and the consensus metadata beside them
        log_mib: mib(dir_bytes(&data_dir.join("journal")) + dir_bytes(&data_dir.join("log"))),
        state_mib: mib(dir_bytes(&data_dir.join("state"))),
        total_mib: mib(dir_bytes(data_dir)),
    }
}

/// (count, sum in seconds) of the server's snapshot duration histogram.
fn snapshot_totals(management: &str) -> (u64, f64) {
    let Ok(text) = http_get(management, "/metrics") else {
        return (0, 0.0);
    };
    let value = |name: &str| -> f64 {
        text.lines()
            .filter(|l| l.starts_with(name))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum()
    };
    (
        value("zeebe_snapshot_duration_count") as u64,
        value("zeebe_snapshot_duration_sum"),
    )
}

fn mean_ms(before: (u64, f64), after: (u64, f64)) -> Option<f64> {
    let n = after.0.checked_sub(before.0)?;
    (n > 0).then(|| (after.1 - before.1) * 1000.0 / n as f64)
}

fn http_get(address: &str, path: &str) -> anyhow::Result<String> {
    let mut stream = std::net::TcpStream::connect(address)?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    write!(
        stream,
        "GET {path} HTTP/1.0\r\nHost: {address}\r\nConnection: close\r\n\r\n"
    )?;
    let mut text = String::new();
    stream.read_to_string(&mut text)?;
    Ok(text)
}

pub async fn run(args: BenchArgs) -> anyhow::Result<StateReport> {
    let n = args.fill;
    let data_dir = args.data_dir.clone();
    if std::fs::read_dir(&data_dir).is_ok_and(|mut d| d.next().is_some()) {
        bail!(
            "--data-dir {} is not empty: the bench starts its own server on a new state; give it \
             a new or empty directory",
            data_dir.display()
        );
    }
    let server = spawn_server(&data_dir, &args.server_arg)?;
    let first_pid = server.child.id();
    let rss = RssSampler::start(first_pid);
    let measure = |server: &Server, label: &str| {
        let mut a = args.clone();
        a.address = server.gateway.clone();
        a.server_pid = Some(server.child.id());
        // one latency log per measurement: FILE-empty-state.csv, FILE-parked-instances.csv
        a.latency_log = args.latency_log.as_ref().map(|p| {
            let stem = p.file_stem().unwrap_or_default().to_string_lossy();
            let slug = label.replace(' ', "-");
            p.with_file_name(match p.extension() {
                Some(ext) => format!("{stem}-{slug}.{}", ext.to_string_lossy()),
                None => format!("{stem}-{slug}"),
            })
        });
        a.label = if args.label.is_empty() {
            label.to_string()
        } else {
            format!("{} ({label})", args.label)
        };
        a
    };

    eprintln!("== {} on the empty state", args.scenario);
    let before = snapshot_totals(&server.management);
    let empty = bench::run(measure(&server, "empty state")).await?;
    let empty_snapshot_mean_ms = mean_ms(before, snapshot_totals(&server.management));

    rss.sample();
    rss.phase.store(1, Ordering::Relaxed);
    eprintln!("== filling the state with {n} parked instances");
    let fill = fill(&server, n, args.fill_concurrency, &rss, &data_dir).await?;
    let disk_after_fill = disk(&data_dir);
    let first_hwm = status_kib(first_pid, "VmHWM:").unwrap_or(0) as f64 / 1024.0;

    rss.phase.store(2, Ordering::Relaxed);
    eprintln!("== SIGKILL and restart");
    drop(server);
    let killed = Instant::now();
    let server = spawn_server(&data_dir, &args.server_arg)?;
    let restart_s = killed.elapsed().as_secs_f64();
    rss.pid.store(server.child.id(), Ordering::Relaxed);
    // the restart's peak: the new process's high-water mark when it is ready
    if let Some(kib) = status_kib(server.child.id(), "VmHWM:") {
        rss.peaks[2].fetch_max(kib, Ordering::Relaxed);
    }
    eprintln!("restarted in {restart_s:.2} s");

    rss.sample();
    rss.phase.store(3, Ordering::Relaxed);
    eprintln!("== {} on top of {n} parked instances", args.scenario);
    let loaded = bench::run(measure(&server, "parked instances")).await?;
    rss.sample();
    let second_hwm = status_kib(server.child.id(), "VmHWM:").unwrap_or(0) as f64 / 1024.0;
    drop(server);
    Ok(StateReport {
        parked: n,
        loaded_over_empty: if empty.completed_per_s > 0.0 {
            loaded.completed_per_s / empty.completed_per_s
        } else {
            0.0
        },
        empty,
        fill,
        disk_after_fill,
        empty_snapshot_mean_ms,
        restart_s,
        loaded,
        peak_rss_mib: PHASES
            .iter()
            .enumerate()
            .map(|(i, p)| (p.to_string(), rss.peak_mib(i)))
            .collect(),
        vm_hwm_mib: vec![first_hwm, second_hwm],
        disk_at_end: disk(&data_dir),
    })
}

/// Creates `n` parked instances with `concurrency` requests in flight, in ten steps.
async fn fill(
    server: &Server,
    n: u64,
    concurrency: usize,
    rss: &RssSampler,
    data_dir: &Path,
) -> anyhow::Result<Vec<FillStep>> {
    let mut client = bench::connect(&server.gateway, None).await?;
    client
        .deploy_resource(proto::DeployResourceRequest {
            resources: vec![proto::Resource {
                name: "parked.bpmn".into(),
                content: PARKED.to_vec(),
            }],
            tenant_id: String::new(),
        })
        .await
        .map_err(|s| anyhow::anyhow!("deploying parked.bpmn: {}", s.message()))?;
    let payload = bench::typical_payload_prefix()?;
    let next = Arc::new(AtomicU64::new(0));
    let step_size = n.div_ceil(10).max(1);
    let mut steps = Vec::new();
    let mut done = 0u64;
    while done < n {
        let step_end = (done + step_size).min(n);
        let started = Instant::now();
        let snapshots_before = snapshot_totals(&server.management);
        rss.take_step();
        let mut tasks = Vec::new();
        for _ in 0..concurrency.max(1) {
            let (client, next, payload) = (client.clone(), next.clone(), payload.clone());
            tasks.push(tokio::spawn(create_until(client, next, step_end, payload)));
        }
        for t in tasks {
            t.await??;
        }
        let seconds = started.elapsed().as_secs_f64();
        let snapshots_after = snapshot_totals(&server.management);
        let step = FillStep {
            parked: step_end,
            seconds,
            created_per_s: (step_end - done) as f64 / seconds,
            peak_rss_mib: rss.take_step(),
            data_dir_mib: mib(dir_bytes(data_dir)),
            snapshots: snapshots_after.0.saturating_sub(snapshots_before.0),
            snapshot_mean_ms: mean_ms(snapshots_before, snapshots_after),
        };
        eprintln!(
            "filled {:>10}  {:>7.0}/s  rss {:>6.1} MiB  data {:>8.1} MiB  snapshots {} ({} ms mean)",
            step.parked,
            step.created_per_s,
            step.peak_rss_mib,
            step.data_dir_mib,
            step.snapshots,
            step.snapshot_mean_ms
                .map_or("-".to_string(), |m| format!("{m:.1}"))
        );
        steps.push(step);
        done = step_end;
    }
    Ok(steps)
}

async fn create_until(
    mut client: proto::gateway_client::GatewayClient<crate::credentials::AuthChannel>,
    next: Arc<AtomicU64>,
    end: u64,
    payload: Arc<String>,
) -> anyhow::Result<()> {
    loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        if i >= end {
            next.fetch_sub(1, Ordering::Relaxed);
            return Ok(());
        }
        let request = proto::CreateProcessInstanceRequest {
            bpmn_process_id: PARKED_PROCESSES[(i % 3) as usize].to_string(),
            version: -1,
            variables: format!("{payload}\"parkedKey\":\"parked-{i}\"}}"),
            ..Default::default()
        };
        let mut backoff = Duration::from_millis(5);
        loop {
            match client.create_process_instance(request.clone()).await {
                Ok(_) => break,
                Err(s) if s.code() == Code::ResourceExhausted => {
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_millis(500));
                }
                Err(s) => bail!(
                    "creating parked instance {i}: {:?}: {}",
                    s.code(),
                    s.message()
                ),
            }
        }
    }
}

pub fn print_report(r: &StateReport) {
    println!("parked instances: {}", r.parked);
    bench::print_report(&r.empty);
    for s in &r.fill {
        println!(
            "fill to {:>10}: {:>7.0} created/s, peak RSS {:>6.1} MiB, data dir {:>8.1} MiB, {} snapshots{}",
            s.parked,
            s.created_per_s,
            s.peak_rss_mib,
            s.data_dir_mib,
            s.snapshots,
            s.snapshot_mean_ms
                .map_or(String::new(), |m| format!(" of {m:.1} ms mean"))
        );
    }
    let d = &r.disk_after_fill;
    println!(
        "disk after fill: log {:.1} MiB, state {:.1} MiB, total {:.1} MiB",
        d.log_mib, d.state_mib, d.total_mib
    );
    if let Some(m) = r.empty_snapshot_mean_ms {
        println!("snapshot on the empty state: {m:.1} ms mean");
    }
    println!("restart after SIGKILL to READY: {:.2} s", r.restart_s);
    bench::print_report(&r.loaded);
    println!("loaded over empty: {:.1}%", r.loaded_over_empty * 100.0);
    for (phase, peak) in &r.peak_rss_mib {
        println!("peak RSS while {phase}: {peak:.1} MiB");
    }
    println!("VmHWM of the two server processes: {:?} MiB", r.vm_hwm_mib);
}
