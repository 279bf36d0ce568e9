//! `zest bench --rest URL`: the one-task load over the REST API v2, the path Camunda 8.8's Java
//! client and Spring starter take by default. Each of `--in-flight` creators loops on `POST
//! /v2/process-instances` with `awaitCompletion` (its latency: request to the completed
//! instance's answer); `--workers` workers loop on `POST /v2/jobs/activation` (long polling)
//! and complete each job with `POST /v2/jobs/{key}/completion`. Each instance carries the
//! gRPC run's variables (`typical_payload.json`, or `--payload`). The model is deployed over gRPC
//! (`--address`), as the gRPC run does: deployment is not what is measured. Works against
//! Zeebe's REST API as well.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;
use hdrhistogram::Histogram;
use serde_json::{json, Value};

use crate::bench::{BenchArgs, Latency, Report};

struct Shared {
    client: reqwest::Client,
    base: String,
    process_id: String,
    variables: Value,
    window_start: Instant,
    window_end: Instant,
    started: AtomicU64,
    completed: AtomicU64,
    rejected: AtomicU64,
    errors: AtomicU64,
    jobs: AtomicU64,
    latency: Mutex<Histogram<u64>>,
    stop: AtomicBool,
    first_error: Mutex<Option<String>>,
}

impl Shared {
    fn error(&self, what: String) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        let mut first = self.first_error.lock().unwrap_or_else(|p| p.into_inner());
        first.get_or_insert(what);
    }

    fn in_window(&self, at: Instant) -> bool {
        at >= self.window_start && at < self.window_end
    }
}

/// Runs the REST load against `rest` (e.g. `http://127.0.0.1:8080`).
pub async fn run(args: BenchArgs, rest: &str) -> anyhow::Result<Report> {
    let in_flight = if args.in_flight == 0 {
        64
    } else {
        args.in_flight
    };
    let mut grpc = crate::bench::connect(&args.address, args.cert_path.as_deref()).await?;
    let process_id = crate::bench::deploy_scenario(&mut grpc, &args).await?;
    let mut headers = reqwest::header::HeaderMap::new();
    if let Some(basic) = crate::credentials::Basic::from_env().header() {
        headers.insert(reqwest::header::AUTHORIZATION, basic.parse()?);
    }
    let mut client = reqwest::Client::builder()
        .default_headers(headers)
        .pool_max_idle_per_host(in_flight + args.workers)
        .timeout(Duration::from_secs(120));
    if let Some(ca) = &args.cert_path {
        let pem = zest_cluster::tls::read_ca(ca)?;
        client = client.tls_certs_only([reqwest::Certificate::from_pem(&pem)?]);
    }
    let client = client.build()?;
    let t0 = Instant::now();
    let shared = Arc::new(Shared {
        client,
        base: rest
            .trim_end_matches('/')
            .trim_end_matches("/v2")
            .to_string(),
        process_id,
        // the gRPC run's variables (typical_payload.json, or --payload), so both carry the same
        variables: match &args.payload {
            Some(p) => serde_json::from_str(
                &std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?,
            )?,
            None => serde_json::from_str(crate::bench::TYPICAL_PAYLOAD)?,
        },
        window_start: t0 + args.warmup,
        window_end: t0 + args.warmup + args.duration,
        started: AtomicU64::new(0),
        completed: AtomicU64::new(0),
        rejected: AtomicU64::new(0),
        errors: AtomicU64::new(0),
        jobs: AtomicU64::new(0),
        latency: Mutex::new(Histogram::new_with_max(600_000_000, 3).context("histogram")?),
        stop: AtomicBool::new(false),
        first_error: Mutex::new(None),
    });
    let workers: Vec<_> = (0..args.workers)
        .map(|_| tokio::spawn(work(shared.clone(), args.clone())))
        .collect();
    let creators: Vec<_> = (0..in_flight)
        .map(|_| tokio::spawn(create(shared.clone())))
        .collect();
    let until = shared.window_end + args.drain.min(Duration::from_secs(5));
    tokio::time::sleep_until(until.into()).await;
    shared.stop.store(true, Ordering::SeqCst);
    for c in creators {
        let _ = c.await;
    }
    for w in workers {
        w.abort();
    }
    let window = args.duration.as_secs_f64();
    let latency = Latency::of(&shared.latency.lock().unwrap_or_else(|p| p.into_inner()));
    let first_error = shared
        .first_error
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    Ok(Report {
        label: args.label.clone(),
        address: rest.to_string(),
        scenario: format!("{} (REST)", args.scenario),
        rate: "max".into(),
        in_flight,
        workers: args.workers,
        duration_s: window,
        warmup_s: args.warmup.as_secs_f64(),
        started_per_s: shared.started.load(Ordering::Relaxed) as f64 / window,
        completed_per_s: shared.completed.load(Ordering::Relaxed) as f64 / window,
        completion_ratio: ratio(&shared),
        rejected_per_s: shared.rejected.load(Ordering::Relaxed) as f64 / window,
        errors: shared.errors.load(Ordering::Relaxed),
        latency,
        jobs_completed_per_s: shared.jobs.load(Ordering::Relaxed) as f64
            / (window + args.warmup.as_secs_f64()),
        first_error,
        ..Report::default()
    })
}

fn ratio(s: &Shared) -> f64 {
    let started = s.started.load(Ordering::Relaxed);
    if started == 0 {
        return 0.0;
    }
    s.completed.load(Ordering::Relaxed) as f64 / started as f64
}

/// One creator: creates an instance, waits for its completion, and again.
async fn create(s: Arc<Shared>) {
    let body = json!({
        "processDefinitionId": s.process_id,
        "variables": s.variables,
        "awaitCompletion": true,
        "requestTimeout": 60_000,
    });
    let url = format!("{}/v2/process-instances", s.base);
    while !s.stop.load(Ordering::Relaxed) {
        let sent = Instant::now();
        let measured = s.in_window(sent);
        let answer = s.client.post(&url).json(&body).send().await;
        match answer {
            Ok(r) if r.status().is_success() => {
                let _ = r.bytes().await;
                if measured {
                    s.started.fetch_add(1, Ordering::Relaxed);
                    s.completed.fetch_add(1, Ordering::Relaxed);
                    let us = sent.elapsed().as_micros() as u64;
                    let mut h = s.latency.lock().unwrap_or_else(|p| p.into_inner());
                    let _ = h.record(us.max(1));
                }
            }
            Ok(r) if r.status().as_u16() == 429 || r.status().as_u16() == 503 => {
                if measured {
                    s.rejected.fetch_add(1, Ordering::Relaxed);
                }
                let _ = r.bytes().await;
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            Ok(r) => {
                let status = r.status();
                let text = r.text().await.unwrap_or_default();
                s.error(format!("create: {status}: {text}"));
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(e) => {
                s.error(format!("create: {e}"));
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

/// One worker: activates up to `--worker-capacity` jobs (long polling) and completes them all,
/// concurrently, before it asks again.
async fn work(s: Arc<Shared>, args: BenchArgs) {
    let url = format!("{}/v2/jobs/activation", s.base);
    let body = json!({
        "type": args.job_type,
        "worker": "zest-bench",
        "timeout": 60_000,
        "maxJobsToActivate": args.worker_capacity,
        "requestTimeout": args.poll_timeout_ms.max(0),
    });
    loop {
        let jobs = match s.client.post(&url).json(&body).send().await {
            Ok(r) if r.status().is_success() => match r.json::<Value>().await {
                Ok(v) => v["jobs"].as_array().cloned().unwrap_or_default(),
                Err(e) => {
                    s.error(format!("activation: {e}"));
                    Vec::new()
                }
            },
            Ok(r) => {
                let status = r.status();
                s.error(format!(
                    "activation: {status}: {}",
                    r.text().await.unwrap_or_default()
                ));
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
            Err(e) => {
                s.error(format!("activation: {e}"));
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let done = jobs.iter().filter_map(|j| j["jobKey"].as_str()).map(|key| {
            let url = format!("{}/v2/jobs/{key}/completion", s.base);
            let s = s.clone();
            async move {
                match s.client.post(&url).json(&json!({})).send().await {
                    Ok(r) if r.status().is_success() => {
                        s.jobs.fetch_add(1, Ordering::Relaxed);
                    }
                    Ok(r) => s.error(format!("completion: {}", r.status())),
                    Err(e) => s.error(format!("completion: {e}")),
                }
            }
        });
        futures::future::join_all(done).await;
    }
}
