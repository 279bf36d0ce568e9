//! Flow control between Zest and its clients, with the gateway protocol against a real
//! `zest start`: job streaming (StreamActivatedJobs) pushes jobs no faster than its client
//! reads them, and (when the job backlog gate is on) jobs that pile up behind busy workers
//! refuse new instances.

mod common;

use std::collections::HashSet;
use std::time::Duration;

use common::{connect, deploy_one_task, http_get, start_with, Client};
use zest_gateway::proto;
use zest_gateway::proto::gateway_client::GatewayClient;

async fn create(c: &mut Client, variables: &str) -> Result<i64, tonic::Status> {
    c.create_process_instance(proto::CreateProcessInstanceRequest {
        bpmn_process_id: "benchmark".into(),
        version: -1,
        variables: variables.into(),
        ..Default::default()
    })
    .await
    .map(|r| r.into_inner().process_instance_key)
}

/// The number of jobs activated so far on partition 1, from the metrics.
fn jobs_activated(management: &str) -> u64 {
    http_get(management, "/metrics")
        .lines()
        .find(|l| l.starts_with("zeebe_job_activation_time_count{"))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse::<f64>().ok())
        .expect("zeebe_job_activation_time_count is exported") as u64
}

/// A job stream of `benchmark-task` on a connection whose client takes 64 KiB at a time (HTTP/2
/// flow control; the default window of this client is 2 MiB), so the transport holds few jobs.
async fn slow_stream(
    gateway: &str,
    worker: &str,
    timeout: i64,
) -> tonic::Streaming<proto::ActivatedJob> {
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{gateway}"))
        .unwrap()
        .initial_stream_window_size(65_535)
        .initial_connection_window_size(65_535)
        .connect()
        .await
        .unwrap();
    GatewayClient::new(channel)
        .stream_activated_jobs(proto::StreamActivatedJobsRequest {
            r#type: "benchmark-task".into(),
            worker: worker.into(),
            timeout,
            ..Default::default()
        })
        .await
        .expect("the stream opens")
        .into_inner()
}

#[test]
fn job_stream_pushes_jobs_as_fast_as_its_client_reads() {
    let node = start_with("stream", &[]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let mut c = connect(&node.gateway).await;
        deploy_one_task(&mut c).await;

        // bad requests are refused before the stream opens
        for (job_type, timeout) in [("  ", 1000), ("benchmark-task", 0)] {
            let err = c
                .stream_activated_jobs(proto::StreamActivatedJobsRequest {
                    r#type: job_type.into(),
                    worker: "w".into(),
                    timeout,
                    ..Default::default()
                })
                .await
                .expect_err("refused");
            assert_eq!(err.code(), tonic::Code::InvalidArgument, "{err:?}");
        }

        // open a stream and do not read it
        let mut stream = slow_stream(&node.gateway, "streamer", 60_000).await;
        // large variables: the transport's own buffers hold few jobs
        let pad = "x".repeat(8 * 1024);
        let total = 300;
        let mut keys = HashSet::new();
        for _ in 0..total {
            keys.insert(
                create(&mut c, &format!("{{\"pad\":\"{pad}\"}}"))
                    .await
                    .expect("created"),
            );
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
        let ahead = jobs_activated(&node.management);
        assert!(
            (1..total as u64 / 2).contains(&ahead),
            "a stream nobody reads holds a bounded number of jobs, not all {total}: {ahead} were activated"
        );

        // reading it delivers every job, each once, activated for this worker
        let mut seen = HashSet::new();
        while seen.len() < total {
            let job = tokio::time::timeout(Duration::from_secs(20), stream.message())
                .await
                .expect("the stream pushes the next job within 20 s")
                .expect("the stream stays open")
                .expect("the stream does not end");
            assert_eq!(job.r#type, "benchmark-task");
            assert_eq!(job.worker, "streamer");
            assert!(keys.contains(&job.process_instance_key), "{job:?}");
            assert!(seen.insert(job.key), "job {} pushed twice", job.key);
            common::complete(&mut c, job.key).await;
        }
        assert_eq!(jobs_activated(&node.management), total as u64);

        // a job created while the stream is open is pushed at once
        let key = create(&mut c, "{}").await.unwrap();
        let job = tokio::time::timeout(Duration::from_secs(10), stream.message())
            .await
            .expect("pushed within 10 s")
            .unwrap()
            .unwrap();
        assert_eq!(job.process_instance_key, key);
    });
}

async fn activate(c: &mut Client, max: i32) -> Vec<proto::ActivatedJob> {
    let mut stream = c
        .activate_jobs(proto::ActivateJobsRequest {
            r#type: "benchmark-task".into(),
            worker: "late".into(),
            timeout: 60_000,
            max_jobs_to_activate: max,
            request_timeout: -1,
            ..Default::default()
        })
        .await
        .expect("activation is never refused")
        .into_inner();
    let mut jobs = Vec::new();
    while let Some(batch) = stream.message().await.unwrap() {
        jobs.extend(batch.jobs);
    }
    jobs
}

#[test]
fn by_default_jobs_that_wait_or_are_held_refuse_nothing() {
    // what the official Go client's integration tests do: a job waits a second for a worker
    // that asks for exactly one, the worker holds it, and the next instance is created
    let node = start_with("default-gate", &[]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let mut c = connect(&node.gateway).await;
        deploy_one_task(&mut c).await;
        for _ in 0..3 {
            create(&mut c, "{}").await.unwrap();
        }
        tokio::time::sleep(Duration::from_millis(1200)).await;
        let held = activate(&mut c, 1).await;
        assert_eq!(held.len(), 1);
        tokio::time::sleep(Duration::from_millis(1200)).await;
        for _ in 0..3 {
            create(&mut c, "{}")
                .await
                .expect("no gate by default: waiting and held jobs refuse nothing");
        }
    });
}

#[test]
fn lagging_workers_close_the_job_backlog_gate_for_new_instances() {
    // jobs left behind by busy workers for more than 2 s close the gate
    let node = start_with("gate", &["--backpressure-max-job-wait-ms", "2000"]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let mut c = connect(&node.gateway).await;
        deploy_one_task(&mut c).await;
        create(&mut c, "{}").await.expect("no job waits yet");
        // no worker for a while: jobs waiting without workers close nothing
        tokio::time::sleep(Duration::from_millis(2500)).await;
        // a worker asks for one and takes the only one: nothing is left in line
        let only = activate(&mut c, 1).await;
        assert_eq!(only.len(), 1);
        for _ in 0..6 {
            create(&mut c, "{}")
                .await
                .expect("a job that waited for its first worker closes nothing");
        }
        // the worker holds its job well past the limit: a job being worked on closes nothing
        tokio::time::sleep(Duration::from_millis(2500)).await;
        create(&mut c, "{}")
            .await
            .expect("jobs held by their worker or nobody asked for do not close the gate");
        // a worker takes 3 of the 7 waiting jobs; the next in line had waited 2.5 s
        let first = activate(&mut c, 3).await;
        assert_eq!(first.len(), 3);
        let refused = create(&mut c, "{}")
            .await
            .expect_err("new instances are refused while jobs pile up behind busy workers");
        assert_eq!(refused.code(), tonic::Code::ResourceExhausted);
        assert!(
            refused.message().contains("backpressure-max-job-wait-ms"),
            "the rejection names the setting that caused it: {}",
            refused.message()
        );
        // work that drains the backlog is never refused
        for job in &first {
            common::complete(&mut c, job.key).await;
        }
        // the worker takes the rest: fewer than it asked for, so no backlog is left
        let rest = activate(&mut c, 100).await;
        assert_eq!(rest.len(), 4);
        create(&mut c, "{}")
            .await
            .expect("the gate opens once the backlog is gone");
    });
}

/// The number of records of a kind written on partition 1, from the metrics.
fn records_written(management: &str, value_type: &str, intent: &str) -> u64 {
    http_get(management, "/metrics")
        .lines()
        .filter(|l| l.starts_with("zeebe_stream_processor_records_total{"))
        .filter(|l| l.contains(&format!("valueType=\"{value_type}\"")))
        .filter(|l| l.contains(&format!("intent=\"{intent}\"")))
        .filter(|l| l.contains("recordType=\"EVENT\""))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum::<f64>() as u64
}

#[test]
fn jobs_a_stream_did_not_deliver_go_back_to_workers_when_its_client_leaves() {
    let node = start_with("yield", &[]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let mut c = connect(&node.gateway).await;
        deploy_one_task(&mut c).await;
        // a stream that reads nothing
        let stream = slow_stream(&node.gateway, "leaves", 600_000).await;
        // jobs of 64 KiB: the transport's buffers hold a few, the stream's window 16 (its
        // 1 MiB, before its 32 jobs)
        let pad = "x".repeat(64 * 1024);
        let total = 50u64;
        for _ in 0..total {
            create(&mut c, &format!("{{\"pad\":\"{pad}\"}}"))
                .await
                .expect("created");
        }
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while records_written(&node.management, "JOB_BATCH", "ACTIVATED") < 16 {
            assert!(
                std::time::Instant::now() < deadline,
                "the stream's window fills"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let pushed = jobs_activated(&node.management);
        assert!(pushed < total, "the stream holds a bounded number: {pushed}");

        // the worker goes away without reading: what the stream held comes back at once (the
        // jobs were activated for 10 minutes)
        drop(stream);
        let mut late = HashSet::new();
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while (late.len() as u64) < total - 16 && std::time::Instant::now() < deadline {
            for job in activate(&mut c, 64).await {
                assert!(late.insert(job.key), "job {} activated twice", job.key);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let yielded = records_written(&node.management, "JOB", "YIELDED");
        // (a place or two may be between a job the transport took and the one refilling it)
        assert!(
            yielded >= 14,
            "the jobs in the stream's window are yielded: {yielded}"
        );
        assert!(
            late.len() as u64 >= total - 16,
            "another worker gets all but what the transport took ({} of {total}, {yielded} yielded)",
            late.len()
        );
    });
}

/// The bytes the node's client commands in progress hold (its call share), from the metrics.
fn call_bytes_held(management: &str) -> u64 {
    http_get(management, "/metrics")
        .lines()
        .find(|l| l.starts_with("zest_memory_used_bytes{part=\"calls\"}"))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse::<f64>().ok())
        .expect("the call share is exported") as u64
}

#[test]
fn commands_in_progress_are_bounded_by_the_node_s_memory_and_completions_go_on() {
    // 32 MiB: the call share is 3 MiB, so five creations with result of 512 KiB each, waiting
    // for their instances, leave no room for a sixth. The memory guard would refuse the small
    // creation below too (the node's resident memory passes its budget; see the next test):
    // off here, so that the share alone is seen.
    let node = start_with(
        "call-share",
        &["--memory-mb", "32", "--memory-guard", "false"],
    );
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let mut c = connect(&node.gateway).await;
        deploy_one_task(&mut c).await;
        let big = format!("{{\"blob\":\"{}\"}}", "x".repeat(512 << 10));
        let mut waiting = Vec::new();
        for _ in 0..5 {
            waiting.push(tokio::spawn(common::create_with_result(
                c.clone(),
                "benchmark".into(),
                big.clone(),
            )));
        }
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while call_bytes_held(&node.management) < 5 * (512 << 10) {
            assert!(std::time::Instant::now() < deadline, "the five calls wait");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let refused = create(&mut c, &big).await.expect_err("the share is full");
        assert_eq!(
            refused.code(),
            tonic::Code::ResourceExhausted,
            "{refused:?}"
        );
        assert!(refused.message().contains("--memory-mb"), "{refused:?}");
        // the share counts bytes: what is left of it still takes a small command
        create(&mut c, "{}")
            .await
            .expect("a small creation fits in the rest of the share");

        // job completions are never refused: they end the waiting calls and free the share
        let mut done = 0;
        while done < 6 {
            for job in activate(&mut c, 5).await {
                common::complete(&mut c, job.key).await;
                done += 1;
            }
        }
        for call in waiting {
            call.await
                .unwrap()
                .expect("each instance completes and its call is answered");
        }
        assert_eq!(call_bytes_held(&node.management), 0);
        create(&mut c, &big)
            .await
            .expect("with the share free, creations go again");
    });
}

/// Process instance creations refused since the node started, from the metrics.
fn guard_refusals(management: &str) -> u64 {
    http_get(management, "/metrics")
        .lines()
        .find(|l| l.starts_with("zest_memory_guard_refused_total"))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse::<f64>().ok())
        .expect("the guard's refusals are exported") as u64
}

/// The node's resident memory, from the metrics.
fn resident_mib(management: &str) -> u64 {
    http_get(management, "/metrics")
        .lines()
        .find(|l| l.starts_with("process_resident_memory_bytes"))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse::<f64>().ok())
        .expect("the resident memory is exported") as u64
        >> 20
}

#[test]
#[cfg(target_os = "linux")]
fn past_its_memory_budget_a_node_refuses_new_instances_and_moves_the_started_ones_on() {
    // 32 MiB: five creations with result of 512 KiB each take the node's resident memory past
    // the budget (their documents are held in the call, the record, the log and the state)
    let node = start_with("memory-guard", &["--memory-mb", "32"]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let mut c = connect(&node.gateway).await;
        deploy_one_task(&mut c).await;
        let big = format!("{{\"blob\":\"{}\"}}", "x".repeat(512 << 10));
        let mut waiting = Vec::new();
        for _ in 0..5 {
            waiting.push(tokio::spawn(common::create_with_result(
                c.clone(),
                "benchmark".into(),
                big.clone(),
            )));
        }
        // a small creation is refused once the guard has seen the memory
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        let refused = loop {
            match create(&mut c, "{}").await {
                Err(e) if e.message().contains("resident") => break e,
                _ => {
                    let rss = resident_mib(&node.management);
                    assert!(
                        std::time::Instant::now() < deadline,
                        "no creation refused; resident {rss} MiB"
                    );
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            }
        };
        assert_eq!(
            refused.code(),
            tonic::Code::ResourceExhausted,
            "{refused:?}"
        );
        assert!(refused.message().contains("--memory-mb 32"), "{refused:?}");
        assert!(guard_refusals(&node.management) >= 1);
        // what moves the started instances on is not refused: their jobs complete (with the
        // jobs of the small instances created before the guard saw the memory) and the
        // waiting calls are answered
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while !waiting.iter().all(|call| call.is_finished()) {
            assert!(
                std::time::Instant::now() < deadline,
                "the waiting calls end"
            );
            for job in activate(&mut c, 5).await {
                common::complete(&mut c, job.key).await;
            }
        }
        // the big creations the guard let in completed; the others it refused
        let mut completed = 0;
        for call in waiting {
            match call.await.unwrap() {
                Ok(_) => completed += 1,
                Err(e) => assert!(e.message().contains("resident"), "{e:?}"),
            }
        }
        assert!(completed >= 1, "the instances let in complete");
    });
}
