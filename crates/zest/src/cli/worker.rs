//! `zest create worker <type> --handler <command>`: a polling job worker, as zbctl's. Each job's
//! variables go to the handler's stdin as JSON; on exit status 0 its stdout (a JSON object, or
//! nothing) completes the job; otherwise the job fails with one retry less and the handler's
//! stderr as the message. Every job is logged on stderr as zbctl logs it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::sync::Semaphore;
use zest_gateway::proto;

use super::conn::{CliError, Client, ConnArgs};
use super::print::parse_duration;

#[derive(clap::Args, Debug)]
pub struct WorkerArgs {
    job_type: String,
    /// The command to run for each job (split at spaces; the job's variables on its stdin)
    #[arg(long, required = true)]
    handler: String,
    /// Worker name, shown on the jobs it activates
    #[arg(long, default_value = "zbctl")]
    name: String,
    /// How long an activated job stays with this worker, e.g. 30s or 5m
    #[arg(long, default_value = "5m", value_parser = parse_duration)]
    timeout: Duration,
    /// Most jobs activated and not yet handled
    #[arg(long = "maxJobsActive", default_value_t = 32)]
    max_jobs_active: usize,
    /// Most handlers running at once
    #[arg(long, default_value_t = 4)]
    concurrency: usize,
    /// Longest pause between polls, e.g. 100ms
    #[arg(long = "pollInterval", default_value = "100ms", value_parser = parse_duration)]
    poll_interval: Duration,
    /// Poll for more once fewer than this share of maxJobsActive are left
    #[arg(long = "pollThreshold", default_value_t = 0.3)]
    poll_threshold: f64,
    /// Exit after handling this many jobs (0: never)
    #[arg(long = "maxJobsHandle", default_value_t = 0, hide = true)]
    max_jobs_handle: usize,
    #[command(flatten)]
    conn: ConnArgs,
}

/// A line on stderr with the local time in front, as Go's log package writes it.
fn log(line: &str) {
    eprintln!(
        "{} {line}",
        chrono::Local::now().format("%Y/%m/%d %H:%M:%S")
    );
}

pub async fn run(args: WorkerArgs, outer: &ConnArgs) -> Result<(), CliError> {
    let conn = args.conn.clone().or(outer);
    let handler: Vec<String> = args.handler.split_whitespace().map(String::from).collect();
    if handler.is_empty() {
        return Err(CliError::Usage(
            "--handler is empty: give the command to run".into(),
        ));
    }
    let client = conn.connect_with(None).await?;
    let handler = Arc::new(handler);
    let slots = Arc::new(Semaphore::new(args.concurrency.max(1)));
    let active = Arc::new(AtomicUsize::new(0));
    let handled = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(tokio::sync::Notify::new());
    let max_active = args.max_jobs_active.max(1);
    let threshold = ((max_active as f64) * args.poll_threshold).floor() as usize;
    loop {
        if args.max_jobs_handle > 0 && handled.load(Ordering::SeqCst) >= args.max_jobs_handle {
            return Ok(());
        }
        let in_hand = active.load(Ordering::SeqCst);
        if in_hand > threshold {
            tokio::select! {
                _ = done.notified() => {}
                _ = tokio::time::sleep(args.poll_interval) => {}
            }
            continue;
        }
        let want = max_active - in_hand;
        let jobs = match activate(&client, &args, &conn, want as i32).await {
            Ok(jobs) => jobs,
            Err(s) => {
                log(&format!(
                    "Unable to activate jobs: {}",
                    conn.failed(s).await
                ));
                tokio::time::sleep(args.poll_interval).await;
                continue;
            }
        };
        if jobs.is_empty() {
            tokio::time::sleep(args.poll_interval).await;
            continue;
        }
        for job in jobs {
            active.fetch_add(1, Ordering::SeqCst);
            let (client, handler, slots, active, handled, done, conn) = (
                client.clone(),
                handler.clone(),
                slots.clone(),
                active.clone(),
                handled.clone(),
                done.clone(),
                conn.clone(),
            );
            tokio::spawn(async move {
                let _slot = slots.acquire_owned().await;
                handle(client, &handler, job, &conn).await;
                active.fetch_sub(1, Ordering::SeqCst);
                handled.fetch_add(1, Ordering::SeqCst);
                done.notify_one();
            });
        }
    }
}

async fn activate(
    client: &Client,
    args: &WorkerArgs,
    conn: &ConnArgs,
    max: i32,
) -> Result<Vec<proto::ActivatedJob>, tonic::Status> {
    let timeout = conn.timeout();
    let mut request = tonic::Request::new(proto::ActivateJobsRequest {
        r#type: args.job_type.clone(),
        worker: args.name.clone(),
        timeout: args.timeout.as_millis() as i64,
        max_jobs_to_activate: max,
        fetch_variable: vec![],
        request_timeout: (timeout - (timeout / 10).min(Duration::from_secs(10))).as_millis() as i64,
        tenant_ids: vec![],
    });
    request.set_timeout(timeout);
    let mut stream = client.clone().activate_jobs(request).await?.into_inner();
    let mut jobs = Vec::new();
    while let Some(batch) = stream.message().await? {
        jobs.extend(batch.jobs);
    }
    Ok(jobs)
}

/// Runs the handler for one job and completes or fails the job by its outcome.
async fn handle(client: Client, handler: &[String], job: proto::ActivatedJob, conn: &ConnArgs) {
    log(&format!(
        "Activated job {} with variables {}",
        job.key, job.variables
    ));
    let outcome = run_handler(handler, &job.variables).await;
    let mut client = client;
    match outcome {
        Ok(variables) => {
            let request = with_timeout(
                proto::CompleteJobRequest {
                    job_key: job.key,
                    variables: variables.clone(),
                    result: None,
                },
                conn,
            );
            match client.complete_job(request).await {
                Ok(_) => log(&format!(
                    "Handler completed job {} with variables {variables}",
                    job.key
                )),
                Err(s) => log(&format!(
                    "Unable to complete job {}: {}",
                    job.key,
                    CliError::Status(s)
                )),
            }
        }
        Err(message) => {
            log(&format!(
                "Command failed to handle job {} {message}",
                job.key
            ));
            let request = with_timeout(
                proto::FailJobRequest {
                    job_key: job.key,
                    retries: job.retries - 1,
                    error_message: message,
                    retry_back_off: 0,
                    variables: String::new(),
                },
                conn,
            );
            if let Err(s) = client.fail_job(request).await {
                log(&format!("Unable to fail job: {}", CliError::Status(s)));
            }
        }
    }
}

fn with_timeout<T>(message: T, conn: &ConnArgs) -> tonic::Request<T> {
    let mut r = tonic::Request::new(message);
    r.set_timeout(conn.timeout());
    r
}

/// The handler's stdout (the variables to complete with), or why the job fails.
async fn run_handler(handler: &[String], variables: &str) -> Result<String, String> {
    let mut child = tokio::process::Command::new(&handler[0])
        .args(&handler[1..])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("failed to start command '{}': {e}", handler.join(" ")))?;
    if let Some(mut stdin) = child.stdin.take() {
        // a handler that does not read its input is fine
        let _ = stdin.write_all(variables.as_bytes()).await;
    }
    let out = child
        .wait_with_output()
        .await
        .map_err(|e| format!("failed to run command '{}': {e}", handler.join(" ")))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let stdout = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if stdout.len() < 2 {
        return Ok("{}".into());
    }
    match serde_json::from_str::<serde_json::Value>(&stdout) {
        Ok(v) if v.is_object() => Ok(stdout),
        _ => Err(format!(
            "the handler's output is not a JSON object of variables: {stdout}"
        )),
    }
}
