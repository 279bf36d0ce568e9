//! `zest bench`: a load tester for any endpoint that speaks Zeebe's gRPC gateway protocol (Zest
//! or Zeebe). A starter creates process instances with `CreateProcessInstanceWithResult`, either
//! at a fixed rate or as fast as the endpoint accepts with a bounded number in flight; workers
//! complete the jobs (polling with `ActivateJobs`, or pushed with `StreamActivatedJobs`) after a
//! configurable delay. Latency is measured per instance from the create request to its result,
//! so it covers every job and timer of the model, on both systems alike.
//!
//! Only instances created inside the measurement window (after the warm-up) are counted; after
//! the window the starter stops and waits up to `--drain` for them to complete.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context};
use hdrhistogram::Histogram;
use serde::Serialize;
use tokio::sync::Semaphore;

use crate::credentials::AuthChannel;
use tonic::Code;
use zest_gateway::proto;
use zest_gateway::proto::gateway_client::GatewayClient;

const ONE_TASK: &[u8] = include_bytes!("../bench/one_task.bpmn");
const TYPICAL: &[u8] = include_bytes!("../bench/typical_process.bpmn");
const TEN_TASKS: &[u8] = include_bytes!("../bench/ten_tasks.bpmn");
pub(crate) const TYPICAL_PAYLOAD: &str = include_str!("../bench/typical_payload.json");

/// Largest latency the histograms hold (10 minutes, in microseconds).
const MAX_LATENCY_US: u64 = 600_000_000;

#[derive(clap::Args, Debug, Clone)]
pub struct BenchArgs {
    /// Gateway address of the system under test (Zest or Zeebe)
    #[arg(long, env = "ZEEBE_ADDRESS", default_value = "127.0.0.1:26500")]
    pub address: String,
    /// PEM file of the CA to trust: gRPC (and --rest) over TLS (zbctl's --certPath,
    /// environment ZEEBE_CA_CERTIFICATE_PATH)
    #[arg(
        long = "cert-path",
        alias = "certPath",
        env = "ZEEBE_CA_CERTIFICATE_PATH"
    )]
    pub cert_path: Option<PathBuf>,
    /// Built-in scenario: one-task, typical, ten-tasks, or realistic (Camunda's bank dispute
    /// process with its own workers, see crates/zest/bench/README.md; ignored when --bpmn is
    /// given)
    #[arg(long, default_value = "one-task")]
    pub scenario: String,
    /// A BPMN file to run instead of a built-in scenario
    #[arg(long)]
    pub bpmn: Option<PathBuf>,
    /// Variables of each new instance: a JSON object file (default: typical_payload.json)
    #[arg(long)]
    pub payload: Option<PathBuf>,
    /// Process id to start (default: the first process of the deployed model)
    #[arg(long)]
    pub process_id: Option<String>,
    /// Instances per second, or `max` for as fast as the endpoint accepts
    #[arg(long, default_value = "max")]
    pub rate: String,
    /// Most instances in flight (created, not yet completed). With `--rate max` this is the
    /// load; with a fixed rate it only protects the load generator.
    #[arg(long, default_value_t = 0)]
    pub in_flight: usize,
    /// Job type the workers complete
    #[arg(long, default_value = "benchmark-task")]
    pub job_type: String,
    /// Number of workers
    #[arg(long, default_value_t = 2)]
    pub workers: usize,
    /// Jobs a worker holds at most (maxJobsActive)
    #[arg(long, default_value_t = 64)]
    pub worker_capacity: usize,
    /// Delay before a worker completes a job, in milliseconds
    #[arg(long, default_value_t = 0)]
    pub complete_delay_ms: u64,
    /// ActivateJobs long-polling timeout in ms; -1 turns long polling off, and a worker that
    /// found no job asks again after --poll-interval-ms
    #[arg(long, default_value_t = 5_000, allow_hyphen_values = true)]
    pub poll_timeout_ms: i64,
    /// Pause after an empty ActivateJobs answer, in ms
    #[arg(long, default_value_t = 0)]
    pub poll_interval_ms: u64,
    /// Push jobs to the workers with StreamActivatedJobs (plus polling, as the official clients do)
    #[arg(long)]
    pub streaming: bool,
    /// Drive the load over the REST API v2 at this URL (e.g. http://127.0.0.1:8080) instead
    /// of gRPC: creations with awaitCompletion, job activation and completion over HTTP, as
    /// Camunda 8.8's Java client does by default (one job type; --address still deploys)
    #[arg(long)]
    pub rest: Option<String>,
    /// Measurement duration, e.g. 60s, 2m
    #[arg(long, default_value = "60s", value_parser = parse_secs)]
    pub duration: Duration,
    /// Warm-up before measuring
    #[arg(long, default_value = "10s", value_parser = parse_secs)]
    pub warmup: Duration,
    /// How long to wait after the window for the measured instances to complete
    #[arg(long, default_value = "30s", value_parser = parse_secs)]
    pub drain: Duration,
    /// Process id of the server, to report its peak RSS and CPU seconds
    #[arg(long)]
    pub server_pid: Option<u32>,
    /// Write the report as JSON to this file (`-` for stdout)
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Do not print progress every second
    #[arg(long)]
    pub quiet: bool,
    /// Write one line per measured instance to this file, `created_s,latency_ms`: when it was
    /// created (seconds into the measurement window) and its create-to-completed latency. Tells
    /// a tail made of a few stalls (slow instances bunched in time) from saturation (latency
    /// high throughout)
    #[arg(long)]
    pub latency_log: Option<PathBuf>,
    /// A label for the system under test, copied into the report
    #[arg(long, default_value = "")]
    pub label: String,
    /// Large-state run: start a `zest start` of the bench's own on --data-dir, measure the
    /// scenario on the empty state, fill the state with this many parked instances (message
    /// catch, timer a year away, unworked job), restart the server after SIGKILL and measure
    /// again on top; reports RSS, disk, snapshot durations and restart time
    #[arg(long, default_value_t = 0)]
    pub fill: u64,
    /// With --fill: the data directory of the server the bench starts (new or empty)
    #[arg(long, default_value = "bench-data")]
    pub data_dir: PathBuf,
    /// With --fill: an argument for the `zest start` the bench runs (repeat for several)
    #[arg(long, allow_hyphen_values = true)]
    pub server_arg: Vec<String>,
    /// With --fill: creates in flight while filling
    #[arg(long, default_value_t = 64)]
    pub fill_concurrency: usize,
}

/// The typical payload as the start of a JSON object, ready for more variables.
pub fn typical_payload_prefix() -> anyhow::Result<Arc<String>> {
    Ok(Arc::new(payload_prefix(TYPICAL_PAYLOAD, "businessKey")?))
}

fn parse_secs(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (num, mult) = if let Some(n) = s.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix('m') {
        (n, 60.0)
    } else {
        (s, 1.0)
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("expected a duration like 30s, 2m or 500ms, got '{s}'"))?;
    if !(v >= 0.0 && v.is_finite()) {
        return Err(format!("expected a non-negative duration, got '{s}'"));
    }
    Ok(Duration::from_secs_f64(v * mult))
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Rate {
    Max,
    Fixed(f64),
}

fn parse_rate(s: &str) -> anyhow::Result<Rate> {
    if s.eq_ignore_ascii_case("max") {
        return Ok(Rate::Max);
    }
    match s.parse::<f64>() {
        Ok(r) if r > 0.0 && r.is_finite() => Ok(Rate::Fixed(r)),
        _ => bail!("--rate expects a positive number of instances per second or 'max', got '{s}'"),
    }
}

/// Latencies in milliseconds.
#[derive(Debug, Serialize, Default, Clone)]
pub struct Latency {
    pub count: u64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

impl Latency {
    pub(crate) fn of(h: &Histogram<u64>) -> Latency {
        let ms = |v: u64| v as f64 / 1000.0;
        Latency {
            count: h.len(),
            p50_ms: ms(h.value_at_quantile(0.50)),
            p90_ms: ms(h.value_at_quantile(0.90)),
            p99_ms: ms(h.value_at_quantile(0.99)),
            max_ms: ms(h.max()),
        }
    }
}

#[derive(Debug, Serialize, Default, Clone)]
pub struct Report {
    pub label: String,
    pub address: String,
    pub scenario: String,
    pub rate: String,
    pub in_flight: usize,
    pub workers: usize,
    pub complete_delay_ms: u64,
    pub streaming: bool,
    pub duration_s: f64,
    pub warmup_s: f64,
    /// Instances whose create was sent in the window and not rejected, per second.
    pub started_per_s: f64,
    /// Instances created in the window that completed (during the window or the drain), per
    /// second of window.
    pub completed_per_s: f64,
    pub completion_ratio: f64,
    /// Creates answered RESOURCE_EXHAUSTED (backpressure), per second.
    pub rejected_per_s: f64,
    /// Creates that failed otherwise (deadline, unavailable, ...).
    pub errors: u64,
    /// Creates not sent because the load generator's in-flight limit was reached.
    pub skipped: u64,
    /// Create request to instance completion.
    pub latency: Latency,
    /// Create request to the activation of the instance's first job.
    pub job_activation: Latency,
    pub jobs_completed_per_s: f64,
    pub server_pid: Option<u32>,
    pub server_peak_rss_mib: Option<f64>,
    pub server_cpu_seconds: Option<f64>,
    /// Server CPU seconds per second of window (cores busy).
    pub server_cpu_cores: Option<f64>,
    pub first_error: Option<String>,
    /// Publishes of the scenario's workers (realistic) answered RESOURCE_EXHAUSTED and tried
    /// again, per second.
    pub messages_rejected_per_s: f64,
}

#[derive(Default)]
struct Counters {
    started: AtomicU64,
    completed: AtomicU64,
    rejected: AtomicU64,
    errors: AtomicU64,
    skipped: AtomicU64,
    jobs_completed: AtomicU64,
    /// Publishes of the scenario's workers answered RESOURCE_EXHAUSTED (tried again).
    messages_rejected: AtomicU64,
}

struct Shared {
    t0: Instant,
    window_start: Instant,
    window_end: Instant,
    /// Counts of instances created in the window.
    window: Counters,
    /// Counts over the whole run, for progress.
    all: Counters,
    /// Latencies of the instances created in the window, and `--latency-log`'s lines.
    measured: Mutex<Measured>,
    activation: Mutex<Histogram<u64>>,
    /// Instances whose first job was activated, until their creation is answered (at most
    /// `MAX_SEEN` keys: an instance whose answer never comes stays until the set is cleared).
    first_job_seen: Mutex<HashSet<i64>>,
    /// The process the starter creates instances of (jobs of other processes, called ones,
    /// are not first jobs).
    process_id: String,
    /// Latencies of the last progress interval.
    interval: Mutex<Histogram<u64>>,
    stop_workers: AtomicBool,
    first_error: Mutex<Option<String>>,
}

/// What is measured of the instances created in the window, under one lock so that the
/// report and `--latency-log` hold the same instances: their latencies and the log's lines.
struct Measured {
    /// Taken when the drain ends: an instance completing later is in neither (nor counted as
    /// completed in the window).
    latency: Option<Histogram<u64>>,
    log: LatencyLog,
}

/// `--latency-log`'s file.
enum LatencyLog {
    Off,
    Writing(std::io::BufWriter<std::fs::File>),
    /// The write error that stopped it (reported at the end: the lines after it would leave
    /// a hole).
    Failed(std::io::Error),
}

impl LatencyLog {
    /// One line: the instance's creation, in seconds into the window, and its latency in ms.
    fn write(&mut self, created_s: f64, latency_ms: f64) {
        if let LatencyLog::Writing(out) = self {
            if let Err(e) =
                std::io::Write::write_fmt(out, format_args!("{created_s:.3},{latency_ms:.3}\n"))
            {
                *self = LatencyLog::Failed(e);
            }
        }
    }

    /// Writes what is buffered and closes the file; the first error of the run, if any.
    fn finish(&mut self) -> std::io::Result<()> {
        match std::mem::replace(self, LatencyLog::Off) {
            LatencyLog::Off => Ok(()),
            LatencyLog::Writing(mut out) => std::io::Write::flush(&mut out),
            LatencyLog::Failed(e) => Err(e),
        }
    }
}

fn histogram() -> Histogram<u64> {
    // invariant: the bounds are valid constants (1 us .. 10 min, 3 significant figures)
    Histogram::new_with_bounds(1, MAX_LATENCY_US, 3).expect("valid histogram bounds")
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn epoch_micros() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

/// Keys kept of instances whose first job was seen: far above any number in flight.
const MAX_SEEN: usize = 1 << 20;

impl Shared {
    /// Whether this is the first job activated for the instance (and remembers it).
    fn first_job(&self, process_instance_key: i64) -> bool {
        let mut seen = lock(&self.first_job_seen);
        if seen.len() >= MAX_SEEN {
            seen.clear();
        }
        seen.insert(process_instance_key)
    }

    fn in_window(&self, at: Instant) -> bool {
        at >= self.window_start && at < self.window_end
    }

    /// Records a measured instance created at `sent` that completed after `us` microseconds,
    /// unless the measurement was closed.
    fn record_measured(&self, sent: Instant, us: u64) {
        let mut m = lock(&self.measured);
        let Some(latency) = m.latency.as_mut() else {
            return; // closed
        };
        self.window.completed.fetch_add(1, Ordering::Relaxed);
        let _ = latency.record(us);
        let created = sent.saturating_duration_since(self.window_start);
        m.log.write(created.as_secs_f64(), us as f64 / 1000.0);
    }

    /// Ends the measurement (the drain is over): the latencies, and how the log's writing went.
    fn close_measurement(&self) -> (Histogram<u64>, std::io::Result<()>) {
        let mut m = lock(&self.measured);
        (m.latency.take().unwrap_or_else(histogram), m.log.finish())
    }

    fn record_error(&self, e: &tonic::Status) {
        let mut first = lock(&self.first_error);
        if first.is_none() {
            *first = Some(format!("{:?}: {}", e.code(), e.message()));
        }
    }
}

/// A client of the gateway at `address`, over TLS trusting `ca` when given.
pub async fn connect(
    address: &str,
    ca: Option<&std::path::Path>,
) -> anyhow::Result<GatewayClient<AuthChannel>> {
    let channel = crate::tls::endpoint(address, ca)?
        .tcp_nodelay(true)
        .connect()
        .await
        .with_context(|| format!("connecting to the gateway at {address}"))?;
    Ok(crate::credentials::client(channel)
        .max_decoding_message_size(64 << 20)
        .max_encoding_message_size(64 << 20))
}

/// The payload as the text of a JSON object without its closing brace, so that per-instance
/// variables can be appended without re-serializing it.
fn payload_prefix(payload: &str, business_key: &str) -> anyhow::Result<String> {
    let v: serde_json::Value =
        serde_json::from_str(payload).context("the payload is not valid JSON")?;
    let serde_json::Value::Object(mut map) = v else {
        bail!("the payload must be a JSON object (the variables of each instance)");
    };
    // the starter sets the business key of each instance
    map.remove(business_key);
    let text = serde_json::to_string(&serde_json::Value::Object(map.clone()))?;
    let mut prefix = text[..text.len() - 1].to_string();
    if !map.is_empty() {
        prefix.push(',');
    }
    Ok(prefix)
}

pub async fn run(args: BenchArgs) -> anyhow::Result<Report> {
    let rate = parse_rate(&args.rate)?;
    if args.duration.is_zero() {
        bail!("--duration must be greater than 0");
    }
    if args.workers == 0 || args.worker_capacity == 0 {
        bail!("--workers and --worker-capacity must be at least 1");
    }
    let in_flight = match (args.in_flight, rate) {
        (0, Rate::Max) => 64,
        (0, Rate::Fixed(_)) => 20_000,
        (n, _) => n,
    };
    let scenario = scenario_model(&args)?;
    let payload = match &args.payload {
        Some(p) => {
            std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?
        }
        None => scenario.payload.to_string(),
    };
    let prefix = Arc::new(payload_prefix(&payload, scenario.business_key)?);

    let latency_log = match &args.latency_log {
        Some(path) => LatencyLog::Writing(std::io::BufWriter::new(
            std::fs::File::create(path)
                .with_context(|| format!("creating the latency log {}", path.display()))?,
        )),
        None => LatencyLog::Off,
    };
    let mut client = connect(&args.address, args.cert_path.as_deref()).await?;
    let process_id = deploy(&mut client, &args, scenario.resources, scenario.process_id).await?;

    let t0 = Instant::now();
    let shared = Arc::new(Shared {
        t0,
        window_start: t0 + args.warmup,
        window_end: t0 + args.warmup + args.duration,
        window: Counters::default(),
        all: Counters::default(),
        measured: Mutex::new(Measured {
            latency: Some(histogram()),
            log: latency_log,
        }),
        activation: Mutex::new(histogram()),
        first_job_seen: Mutex::new(HashSet::new()),
        process_id: process_id.clone(),
        interval: Mutex::new(histogram()),
        stop_workers: AtomicBool::new(false),
        first_error: Mutex::new(None),
    });

    // Workers first, so that the first jobs find them: the scenario's, one per job type, or
    // --workers of --job-type
    let specs: Vec<(String, u64, usize, Option<&'static str>)> = match scenario.workers {
        Some(list) => list
            .iter()
            // --workers replicas of each: Camunda scales the worker deployments with the load
            .map(|j| {
                let capacity = j.capacity * args.workers;
                (j.job_type.to_string(), j.delay_ms, capacity, j.publish)
            })
            .collect(),
        None => (0..args.workers)
            .map(|_| {
                let t = args.job_type.clone();
                (t, args.complete_delay_ms, args.worker_capacity, None)
            })
            .collect(),
    };
    let mut worker_tasks = Vec::new();
    for (w, (job_type, delay_ms, capacity, publish)) in specs.into_iter().enumerate() {
        let client = connect(&args.address, args.cert_path.as_deref()).await?;
        let worker = Worker {
            client,
            shared: shared.clone(),
            job_type,
            name: format!("zest-bench-{w}"),
            capacity: Arc::new(Semaphore::new(capacity)),
            max_jobs: capacity,
            delay: Duration::from_millis(delay_ms),
            poll_timeout_ms: args.poll_timeout_ms,
            poll_interval: Duration::from_millis(args.poll_interval_ms),
            publish,
        };
        if args.streaming {
            worker_tasks.push(tokio::spawn(worker.clone().stream()));
        }
        worker_tasks.push(tokio::spawn(worker.poll()));
    }

    let cpu_before_window = Arc::new(Mutex::new(None));
    let sampler = args.server_pid.map(|pid| {
        let shared = shared.clone();
        let cpu = cpu_before_window.clone();
        tokio::spawn(async move {
            tokio::time::sleep_until(shared.window_start.into()).await;
            *lock(&cpu) = server_cpu_seconds(pid);
        })
    });

    let progress = (!args.quiet).then(|| tokio::spawn(progress(shared.clone())));

    let starter = Starter {
        client: connect(&args.address, args.cert_path.as_deref()).await?,
        shared: shared.clone(),
        process_id,
        prefix,
        business_key: scenario.business_key,
        slots: Arc::new(Semaphore::new(in_flight)),
    };
    let run_until = shared.window_end;
    match rate {
        Rate::Max => starter.run_max(run_until).await,
        Rate::Fixed(r) => starter.run_fixed(r, run_until).await,
    }
    let cpu_after_window = args.server_pid.and_then(server_cpu_seconds);
    let rss = args.server_pid.and_then(peak_rss_mib);
    if let Some(s) = sampler {
        let _ = s.await;
    }
    // Drain: wait for the instances created in the window.
    let drain_deadline = Instant::now() + args.drain;
    while Instant::now() < drain_deadline && starter.slots.available_permits() < in_flight {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    shared.stop_workers.store(true, Ordering::SeqCst);
    // the report and the log hold the instances that completed until now, the same ones
    let (latency, log) = shared.close_measurement();
    if let Some(path) = &args.latency_log {
        log.with_context(|| format!("writing the latency log {}", path.display()))?;
    }
    if let Some(p) = progress {
        p.abort();
    }
    for w in worker_tasks {
        w.abort();
    }

    let secs = args.duration.as_secs_f64();
    let w = &shared.window;
    let started = w
        .started
        .load(Ordering::SeqCst)
        .saturating_sub(w.rejected.load(Ordering::SeqCst));
    let completed = w.completed.load(Ordering::SeqCst);
    let cpu = match (*lock(&cpu_before_window), cpu_after_window) {
        (Some(a), Some(b)) => Some(b - a),
        _ => None,
    };
    let report = Report {
        label: args.label.clone(),
        address: args.address.clone(),
        scenario: scenario.name,
        rate: args.rate.clone(),
        in_flight,
        workers: args.workers,
        complete_delay_ms: args.complete_delay_ms,
        streaming: args.streaming,
        duration_s: secs,
        warmup_s: args.warmup.as_secs_f64(),
        started_per_s: started as f64 / secs,
        completed_per_s: completed as f64 / secs,
        completion_ratio: if started == 0 {
            0.0
        } else {
            completed as f64 / started as f64
        },
        rejected_per_s: w.rejected.load(Ordering::SeqCst) as f64 / secs,
        errors: w.errors.load(Ordering::SeqCst),
        skipped: w.skipped.load(Ordering::SeqCst),
        latency: Latency::of(&latency),
        job_activation: Latency::of(&lock(&shared.activation)),
        jobs_completed_per_s: w.jobs_completed.load(Ordering::SeqCst) as f64 / secs,
        server_pid: args.server_pid,
        server_peak_rss_mib: rss,
        server_cpu_seconds: cpu,
        server_cpu_cores: cpu.map(|c| c / secs),
        first_error: lock(&shared.first_error).clone(),
        messages_rejected_per_s: w.messages_rejected.load(Ordering::SeqCst) as f64 / secs,
    };
    Ok(report)
}

/// What a run deploys and how it drives it.
struct Scenario {
    name: String,
    /// Deployed together: (resource name, content).
    resources: Vec<(String, Vec<u8>)>,
    /// The process to start unless --process-id says otherwise (None: the first deployed).
    process_id: Option<String>,
    /// The payload unless --payload gives one.
    payload: &'static str,
    /// The payload variable set to the starter's counter.
    business_key: &'static str,
    /// Its own workers, one per job type (None: --workers of --job-type).
    workers: Option<&'static [crate::bench_realistic::JobSpec]>,
}

/// A built-in scenario, or `--bpmn FILE`.
fn scenario_model(args: &BenchArgs) -> anyhow::Result<Scenario> {
    let plain = |name: String, resource: String, bytes: Vec<u8>| Scenario {
        name,
        resources: vec![(resource, bytes)],
        process_id: None,
        payload: TYPICAL_PAYLOAD,
        business_key: "businessKey",
        workers: None,
    };
    if let Some(path) = &args.bpmn {
        let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        let resource = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "model.bpmn".into());
        return Ok(plain(path.display().to_string(), resource, bytes));
    }
    let bytes = match args.scenario.as_str() {
        "one-task" => ONE_TASK,
        "typical" => TYPICAL,
        "ten-tasks" => TEN_TASKS,
        "realistic" => {
            use crate::bench_realistic as r;
            return Ok(Scenario {
                name: args.scenario.clone(),
                resources: r::resources(),
                process_id: Some(r::PROCESS_ID.into()),
                payload: r::PAYLOAD,
                business_key: r::BUSINESS_KEY,
                workers: Some(r::WORKERS),
            });
        }
        other => bail!(
            "unknown scenario '{other}': use one-task, typical, ten-tasks, realistic or --bpmn FILE"
        ),
    };
    Ok(plain(
        args.scenario.clone(),
        format!("{}.bpmn", args.scenario),
        bytes.to_vec(),
    ))
}

/// Deploys the scenario's model (`--scenario` or `--bpmn`) and returns the process id to start.
pub(crate) async fn deploy_scenario(
    client: &mut GatewayClient<AuthChannel>,
    args: &BenchArgs,
) -> anyhow::Result<String> {
    let scenario = scenario_model(args)?;
    deploy(client, args, scenario.resources, scenario.process_id).await
}

/// Deploys the resources and returns the process id to start (`--process-id`, the scenario's,
/// or the first deployed process).
async fn deploy(
    client: &mut GatewayClient<AuthChannel>,
    args: &BenchArgs,
    resources: Vec<(String, Vec<u8>)>,
    process_id: Option<String>,
) -> anyhow::Result<String> {
    let deployed = client
        .deploy_resource(proto::DeployResourceRequest {
            resources: resources
                .into_iter()
                .map(|(name, content)| proto::Resource { name, content })
                .collect(),
            tenant_id: String::new(),
        })
        .await
        .map_err(|s| anyhow::anyhow!("deploying the model: {:?}: {}", s.code(), s.message()))?
        .into_inner();
    if let Some(p) = args.process_id.clone().or(process_id) {
        return Ok(p);
    }
    deployed
        .deployments
        .iter()
        .find_map(|d| match &d.metadata {
            Some(proto::deployment::Metadata::Process(p)) => Some(p.bpmn_process_id.clone()),
            _ => None,
        })
        .context("the deployment holds no process")
}

pub fn print_report(r: &Report) {
    let label = if r.label.is_empty() {
        r.address.clone()
    } else {
        format!("{} ({})", r.label, r.address)
    };
    println!("== zest bench: {} on {label}", r.scenario);
    println!(
        "   rate {} | in flight {} | {} workers{} | complete delay {} ms | {:.0}s after {:.0}s warm-up",
        r.rate,
        r.in_flight,
        r.workers,
        if r.streaming { " (streaming)" } else { "" },
        r.complete_delay_ms,
        r.duration_s,
        r.warmup_s
    );
    println!(
        "   started {:.1} PI/s | completed {:.1} PI/s | completion ratio {:.3} | rejected {:.1}/s | errors {} | skipped {}",
        r.started_per_s, r.completed_per_s, r.completion_ratio, r.rejected_per_s, r.errors, r.skipped
    );
    println!(
        "   latency create->completed: p50 {:.2} ms | p90 {:.2} ms | p99 {:.2} ms | max {:.2} ms ({} instances)",
        r.latency.p50_ms, r.latency.p90_ms, r.latency.p99_ms, r.latency.max_ms, r.latency.count
    );
    println!(
        "   job activation (create->first job activated): p50 {:.2} ms | p99 {:.2} ms | jobs completed {:.1}/s",
        r.job_activation.p50_ms, r.job_activation.p99_ms, r.jobs_completed_per_s
    );
    if r.messages_rejected_per_s > 0.0 {
        println!(
            "   worker publishes refused by backpressure (and tried again): {:.1}/s",
            r.messages_rejected_per_s
        );
    }
    if let Some(pid) = r.server_pid {
        println!(
            "   server pid {pid}: peak RSS {} | CPU {} s ({} cores)",
            r.server_peak_rss_mib
                .map(|m| format!("{m:.1} MiB"))
                .unwrap_or_else(|| "?".into()),
            r.server_cpu_seconds
                .map(|c| format!("{c:.1}"))
                .unwrap_or_else(|| "?".into()),
            r.server_cpu_cores
                .map(|c| format!("{c:.2}"))
                .unwrap_or_else(|| "?".into()),
        );
    }
    if let Some(e) = &r.first_error {
        println!("   first error: {e}");
    }
}

async fn progress(shared: Arc<Shared>) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.tick().await;
    let mut last = (0u64, 0u64, 0u64);
    loop {
        tick.tick().await;
        let a = &shared.all;
        let now = (
            a.started
                .load(Ordering::Relaxed)
                .saturating_sub(a.rejected.load(Ordering::Relaxed)),
            a.completed.load(Ordering::Relaxed),
            a.rejected.load(Ordering::Relaxed),
        );
        let p99 = {
            let mut h = lock(&shared.interval);
            let v = if h.is_empty() {
                0.0
            } else {
                h.value_at_quantile(0.99) as f64 / 1000.0
            };
            h.reset();
            v
        };
        let phase = if Instant::now() < shared.window_start {
            "warm-up"
        } else if Instant::now() < shared.window_end {
            "measuring"
        } else {
            "draining"
        };
        eprintln!(
            "[{:>4}s {phase:>9}] started {:>6}/s  completed {:>6}/s  rejected {:>6}/s  p99 {:>8.2} ms",
            shared.t0.elapsed().as_secs(),
            now.0 - last.0,
            now.1 - last.1,
            now.2 - last.2,
            p99
        );
        last = now;
    }
}

#[derive(Clone)]
struct Starter {
    client: GatewayClient<AuthChannel>,
    shared: Arc<Shared>,
    process_id: String,
    prefix: Arc<String>,
    /// The payload variable set to the instance's number.
    business_key: &'static str,
    slots: Arc<Semaphore>,
}

impl Starter {
    async fn run_max(&self, until: Instant) {
        let mut counter = 0u64;
        while Instant::now() < until {
            let Ok(permit) = self.slots.clone().acquire_owned().await else {
                return;
            };
            counter += 1;
            let this = self.clone();
            tokio::spawn(async move {
                this.create(counter).await;
                drop(permit);
            });
        }
    }

    async fn run_fixed(&self, rate: f64, until: Instant) {
        let begin = Instant::now();
        let mut sent = 0u64;
        let mut tick = tokio::time::interval(Duration::from_millis(1));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        while Instant::now() < until {
            tick.tick().await;
            let due = (begin.elapsed().as_secs_f64() * rate) as u64;
            while sent < due {
                sent += 1;
                match self.slots.clone().try_acquire_owned() {
                    Ok(permit) => {
                        let this = self.clone();
                        let n = sent;
                        tokio::spawn(async move {
                            this.create(n).await;
                            drop(permit);
                        });
                    }
                    Err(_) => {
                        self.shared.all.skipped.fetch_add(1, Ordering::Relaxed);
                        if self.shared.in_window(Instant::now()) {
                            self.shared.window.skipped.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
            }
        }
    }

    async fn create(mut self, n: u64) {
        let variables = format!(
            "{}\"{}\":{n},\"zestBenchStart\":{}}}",
            self.prefix,
            self.business_key,
            epoch_micros()
        );
        let request = proto::CreateProcessInstanceWithResultRequest {
            request: Some(proto::CreateProcessInstanceRequest {
                bpmn_process_id: self.process_id.clone(),
                version: -1,
                variables,
                ..Default::default()
            }),
            request_timeout: 600_000,
            // only the bench's own marker: the result does not carry the payload back
            fetch_variables: vec!["zestBenchStart".into()],
        };
        let sent = Instant::now();
        let measured = self.shared.in_window(sent);
        // sent counts as started unless it comes back rejected
        self.shared.all.started.fetch_add(1, Ordering::Relaxed);
        if measured {
            self.shared.window.started.fetch_add(1, Ordering::Relaxed);
        }
        let result = self
            .client
            .create_process_instance_with_result(request)
            .await;
        let s = &self.shared;
        let count = |c: &dyn Fn(&Counters) -> &AtomicU64| {
            c(&s.all).fetch_add(1, Ordering::Relaxed);
            if measured {
                c(&s.window).fetch_add(1, Ordering::Relaxed);
            }
        };
        match result {
            Ok(response) => {
                lock(&s.first_job_seen).remove(&response.into_inner().process_instance_key);
                let us = (sent.elapsed().as_micros() as u64).clamp(1, MAX_LATENCY_US);
                // the window's count goes with the measured latency (see `Measured::latency`)
                s.all.completed.fetch_add(1, Ordering::Relaxed);
                if measured {
                    s.record_measured(sent, us);
                }
                let _ = lock(&s.interval).record(us);
            }
            Err(e) if e.code() == Code::ResourceExhausted => {
                count(&|c| &c.rejected);
                // back off before the slot is used again, as the official clients do
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            Err(e) => {
                // the instance may have been created: it counts as started, not completed
                count(&|c| &c.errors);
                s.record_error(&e);
            }
        }
    }
}

#[derive(Clone)]
struct Worker {
    client: GatewayClient<AuthChannel>,
    shared: Arc<Shared>,
    job_type: String,
    name: String,
    capacity: Arc<Semaphore>,
    max_jobs: usize,
    delay: Duration,
    poll_timeout_ms: i64,
    poll_interval: Duration,
    /// A message to publish before completing, correlated by the job's `correlationKey`
    /// (the realistic scenario).
    publish: Option<&'static str>,
}

impl Worker {
    async fn poll(mut self) {
        while !self.shared.stop_workers.load(Ordering::Relaxed) {
            // wait for room, then ask for as many jobs as there is room for
            let Ok(p) = self.capacity.acquire().await else {
                return;
            };
            drop(p);
            let room = self.capacity.available_permits().min(self.max_jobs).max(1);
            let request = proto::ActivateJobsRequest {
                r#type: self.job_type.clone(),
                worker: self.name.clone(),
                timeout: 60_000,
                max_jobs_to_activate: room as i32,
                fetch_variable: vec![],
                request_timeout: self.poll_timeout_ms,
                tenant_ids: vec![],
            };
            let mut stream = match self.client.activate_jobs(request).await {
                Ok(s) => s.into_inner(),
                Err(e) => {
                    self.shared.record_error(&e);
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            };
            let mut got = 0;
            loop {
                match stream.message().await {
                    Ok(Some(batch)) => {
                        got += batch.jobs.len();
                        for job in batch.jobs {
                            self.handle(job).await;
                        }
                    }
                    Ok(None) => break,
                    Err(e) => {
                        self.shared.record_error(&e);
                        break;
                    }
                }
            }
            if got == 0 && !self.poll_interval.is_zero() {
                tokio::time::sleep(self.poll_interval).await;
            }
        }
    }

    async fn stream(mut self) {
        while !self.shared.stop_workers.load(Ordering::Relaxed) {
            let request = proto::StreamActivatedJobsRequest {
                r#type: self.job_type.clone(),
                worker: self.name.clone(),
                timeout: 60_000,
                fetch_variable: vec![],
                tenant_ids: vec![],
            };
            let mut stream = match self.client.stream_activated_jobs(request).await {
                Ok(s) => s.into_inner(),
                Err(e) if e.code() == Code::Unimplemented => {
                    eprintln!(
                        "{}: the endpoint does not stream jobs ({}); polling only",
                        self.name,
                        e.message()
                    );
                    return; // polling carries on alone
                }
                Err(e) => {
                    self.shared.record_error(&e);
                    tokio::time::sleep(Duration::from_millis(500)).await;
                    continue;
                }
            };
            loop {
                match stream.message().await {
                    Ok(Some(job)) => self.handle(job).await,
                    Ok(None) => break,
                    Err(e) => {
                        self.shared.record_error(&e);
                        break;
                    }
                }
            }
        }
    }

    async fn handle(&self, job: proto::ActivatedJob) {
        let activated = epoch_micros();
        let Ok(permit) = self.capacity.clone().acquire_owned().await else {
            return;
        };
        // Activation latency of the instance's first job: from its create request (a called
        // process's jobs are not first jobs, though their variables may hold the start time).
        // Only a first job's variables are searched for the start time.
        let own = job.bpmn_process_id == self.shared.process_id;
        if own && self.shared.first_job(job.process_instance_key) {
            if let Some(start) = bench_start(&job.variables) {
                let us = (activated - start).clamp(1, MAX_LATENCY_US as i64) as u64;
                let _ = lock(&self.shared.activation).record(us);
            }
        }
        let mut client = self.client.clone();
        let shared = self.shared.clone();
        let delay = self.delay;
        let publish = self.publish;
        tokio::spawn(async move {
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            if let Some(name) = publish {
                publish_for(&mut client, &shared, name, &job.variables).await;
            }
            let r = client
                .complete_job(proto::CompleteJobRequest {
                    job_key: job.key,
                    // no variables, as the load tester's workers complete
                    variables: String::new(),
                    result: None,
                })
                .await;
            match r {
                Ok(_) => {
                    shared.all.jobs_completed.fetch_add(1, Ordering::Relaxed);
                    if shared.in_window(Instant::now()) {
                        shared.window.jobs_completed.fetch_add(1, Ordering::Relaxed);
                    }
                }
                Err(e) => shared.record_error(&e),
            }
            drop(permit);
        });
    }
}

/// Publishes `name` with the job's `correlationKey` (the realistic scenario's notification
/// workers). A refusal by backpressure is tried again after a pause, as a worker would (the
/// instance waits for this message); refusals are counted (`messages_rejected_per_s`).
async fn publish_for(
    client: &mut GatewayClient<AuthChannel>,
    shared: &Shared,
    name: &str,
    variables: &str,
) {
    let request = proto::PublishMessageRequest {
        name: name.into(),
        correlation_key: crate::bench_realistic::correlation_key(variables).unwrap_or_default(),
        time_to_live: crate::bench_realistic::MESSAGE_TTL_MS,
        ..Default::default()
    };
    for attempt in 1..=100u64 {
        match client.publish_message(request.clone()).await {
            Ok(_) => return,
            Err(e) if e.code() == Code::ResourceExhausted => {
                shared.all.messages_rejected.fetch_add(1, Ordering::Relaxed);
                if shared.in_window(Instant::now()) {
                    shared
                        .window
                        .messages_rejected
                        .fetch_add(1, Ordering::Relaxed);
                }
                tokio::time::sleep(Duration::from_millis((10 * attempt).min(200))).await;
            }
            Err(e) => {
                shared.record_error(&e);
                return;
            }
        }
    }
}

/// `zestBenchStart` from a job's variables, without parsing the whole document.
fn bench_start(variables: &str) -> Option<i64> {
    let at = variables.find("\"zestBenchStart\":")? + "\"zestBenchStart\":".len();
    let rest = variables[at..].trim_start();
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '-'))
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

/// Peak resident set size (VmHWM) of a process, in MiB.
fn peak_rss_mib(pid: u32) -> Option<f64> {
    Some(status_kib(pid, "VmHWM:")? as f64 / 1024.0)
}

/// A KiB field of `/proc/PID/status` (`VmRSS:`, `VmHWM:`).
pub(crate) fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// User plus system CPU seconds of a process and its threads.
fn server_cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // fields after the command name, which is in parentheses and may contain blanks
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    let ticks = 100.0; // USER_HZ on Linux
    Some((utime + stime) / ticks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_durations_and_rates() {
        assert_eq!(parse_secs("60s").unwrap(), Duration::from_secs(60));
        assert_eq!(parse_secs("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_secs("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_secs("3").unwrap(), Duration::from_secs(3));
        assert!(parse_secs("soon").is_err());
        assert_eq!(parse_rate("max").unwrap(), Rate::Max);
        assert_eq!(parse_rate("300").unwrap(), Rate::Fixed(300.0));
        assert!(parse_rate("0").is_err());
        assert!(parse_rate("fast").is_err());
    }

    #[test]
    fn payload_prefix_appends_variables() {
        let p = payload_prefix(TYPICAL_PAYLOAD, "businessKey").unwrap();
        let doc = format!("{p}\"businessKey\":7,\"zestBenchStart\":123}}");
        let v: serde_json::Value = serde_json::from_str(&doc).unwrap();
        assert_eq!(v["businessKey"], 7);
        assert_eq!(v["var2"], true);
        assert_eq!(bench_start(&doc), Some(123));
        let empty = payload_prefix("{}", "businessKey").unwrap();
        let v: serde_json::Value = serde_json::from_str(&format!("{empty}\"a\":1}}")).unwrap();
        assert_eq!(v["a"], 1);
        assert!(payload_prefix("[1]", "businessKey").is_err());
    }

    #[test]
    fn reads_own_process_stats() {
        let pid = std::process::id();
        assert!(peak_rss_mib(pid).unwrap() > 0.0);
        assert!(server_cpu_seconds(pid).unwrap() >= 0.0);
    }
}
