//! Zeebe's raft flush settings end to end: with the log's fsync delayed or off, instances run,
//! snapshots are taken (each makes the log durable first), and a node killed with SIGKILL comes
//! back with everything it acknowledged. That every append reaches the OS before it counts is
//! checked where it can fail reliably, in zest-storage (`appends_without_fsync_survive_a_killed_
//! process`): here, later writes would push a forgotten append out of fjall's buffer anyway.

mod common;

use common::{
    activate_one, complete, connect, create_with_result, deploy_one_task, http_get, start_in,
};
use zest_gateway::proto;

/// Runs `n` one-task instances to completion, one after the other; their keys.
async fn run_instances(gateway: &str, n: usize) -> Vec<i64> {
    let mut c = connect(gateway).await;
    let mut keys = Vec::new();
    for _ in 0..n {
        let waiter = tokio::spawn(create_with_result(
            c.clone(),
            "benchmark".into(),
            r#"{"n": 1}"#.into(),
        ));
        let job = activate_one(&mut c, "benchmark-task")
            .await
            .expect("the instance's job is activated");
        complete(&mut c, job.key).await;
        let done = waiter.await.unwrap().expect("the instance completes");
        keys.push(done.process_instance_key);
    }
    keys
}

fn snapshots_taken(management: &str) -> f64 {
    http_get(management, "/metrics")
        .lines()
        .find(|l| l.starts_with("zeebe_snapshot_duration_count"))
        .and_then(|l| l.split_whitespace().last())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0)
}

async fn survives_a_kill(name: &str, flush: &[&str]) {
    let dir = std::env::temp_dir().join(format!("zest-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("zest.toml");
    std::fs::write(&config, "snapshot-every = 100\n").unwrap();
    let config = config.to_string_lossy().to_string();
    let mut args = vec!["--config", config.as_str()];
    args.extend_from_slice(flush);
    let data = dir.join("data");

    let node = start_in(data.clone(), &args);
    let mut c = connect(&node.gateway).await;
    deploy_one_task(&mut c).await;
    let first = run_instances(&node.gateway, 80).await;
    assert!(
        snapshots_taken(&node.management) >= 1.0,
        "{name}: 80 instances write more than 100 log entries, so a snapshot was taken"
    );
    // one more instance waits for its job across the kill
    let waiting = c
        .create_process_instance(proto::CreateProcessInstanceRequest {
            bpmn_process_id: "benchmark".into(),
            version: -1,
            ..Default::default()
        })
        .await
        .expect("an instance starts")
        .into_inner()
        .process_instance_key;
    drop(c);
    let _ = node.kill();

    let node = start_in(data, &args);
    let mut c = connect(&node.gateway).await;
    // the acknowledged instance is still there, with its job
    let job = activate_one(&mut c, "benchmark-task")
        .await
        .unwrap_or_else(|| panic!("{name}: the job of the instance created before the kill"));
    assert_eq!(job.process_instance_key, waiting, "{name}");
    complete(&mut c, job.key).await;
    // the completed ones stay completed, and the deployment is there
    for key in [first[0], first[first.len() - 1]] {
        let err = c
            .cancel_process_instance(proto::CancelProcessInstanceRequest {
                process_instance_key: key,
                operation_reference: None,
            })
            .await
            .expect_err("a completed instance cannot be cancelled");
        assert_eq!(err.code(), tonic::Code::NotFound, "{name}: {err}");
    }
    let after = run_instances(&node.gateway, 3).await;
    assert!(
        after.iter().all(|k| *k > first[first.len() - 1]),
        "{name}: keys are not reused after the restart: {after:?} vs {first:?}"
    );
    drop(node);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn delayed_flush_keeps_what_it_acknowledged_across_a_kill() {
    survives_a_kill("flush-delayed", &["--raft-flush-delay-ms", "5"]).await;
}

#[tokio::test]
async fn flush_off_keeps_what_it_acknowledged_across_a_kill() {
    survives_a_kill("flush-off", &["--raft-flush-enabled", "false"]).await;
}
