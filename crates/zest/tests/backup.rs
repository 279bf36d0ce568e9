//! Backups as a Camunda operator takes them: `POST /actuator/backupRuntime` while the node
//! works, `GET` until COMPLETED, `zest restore` into a new data directory, and a node started
//! there continues from the backup: instances created before it complete, instances created
//! after it are not there, and new keys are above every key in the backup.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::{
    activate_one_within, complete, connect, create_instance, create_numbered, fail_to_incident,
    http, search, sorted_keys, start_in, start_with,
};

fn temp(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("zest-backup-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn wait_until_done(management: &str, id: u64) -> serde_json::Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (code, status) = http(
            management,
            "GET",
            &format!("/actuator/backupRuntime/{id}"),
            None,
        );
        assert_eq!(code, 200, "{status}");
        if status["state"] != "IN_PROGRESS" {
            return status;
        }
        assert!(
            Instant::now() < deadline,
            "backup {id} still in progress: {status}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn restore(
    backup_dir: &std::path::Path,
    id: u64,
    data_dir: &std::path::Path,
) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_zest"))
        .args(["restore", "--backup-id", &id.to_string(), "--backup-dir"])
        .arg(backup_dir)
        .arg("--data-dir")
        .arg(data_dir)
        .output()
        .expect("zest restore runs")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_backup_restores_into_a_node_that_continues_from_it() {
    let backups = temp("store");
    let node = start_with(
        "backup-source",
        &["--backup-dir", backups.to_str().unwrap()],
    );
    let mut c = connect(&node.gateway).await;
    common::deploy_one_task(&mut c).await;
    let mut before = Vec::new();
    for _ in 0..3 {
        before.push(create_instance(&mut c, "benchmark", r#"{"before": true}"#).await);
    }

    let m = node.management.clone();
    let (code, body) = http(
        &m,
        "POST",
        "/actuator/backupRuntime",
        Some(serde_json::json!({"backupId": 5})),
    );
    assert_eq!(code, 202, "{body}");
    let status = wait_until_done(&m, 5);
    assert_eq!(status["state"], "COMPLETED", "{status}");
    assert_eq!(status["details"][0]["partitionId"], 1);
    assert_eq!(status["details"][0]["state"], "COMPLETED");
    assert!(
        status["details"][0]["checkpointPosition"].as_u64().unwrap() > 0,
        "{status}"
    );
    // ids are unique and grow
    let (code, body) = http(
        &m,
        "POST",
        "/actuator/backupRuntime",
        Some(serde_json::json!({"backupId": 5})),
    );
    assert_eq!(code, 409, "{body}");
    let (code, body) = http(
        &m,
        "POST",
        "/actuator/backupRuntime",
        Some(serde_json::json!({"backupId": 4})),
    );
    assert_eq!(code, 409, "{body}");
    let (code, body) = http(
        &m,
        "POST",
        "/actuator/backupRuntime",
        Some(serde_json::json!({"backupId": 0})),
    );
    assert_eq!(code, 400, "{body}");
    let (code, body) = http(
        &m,
        "POST",
        "/actuator/backupRuntime",
        Some(serde_json::json!({"id": 6})),
    );
    assert_eq!(code, 400, "{body}");
    let (code, list) = http(&m, "GET", "/actuator/backupRuntime", None);
    assert_eq!(code, 200);
    assert_eq!(list.as_array().map(|l| l.len()), Some(1), "{list}");
    let (code, missing) = http(&m, "GET", "/actuator/backupRuntime/99", None);
    assert_eq!(
        (code, missing["state"].as_str()),
        (404, Some("DOES_NOT_EXIST")),
        "{missing}"
    );

    // after the backup: not in it
    let after = create_instance(&mut c, "benchmark", r#"{"before": true}"#).await;
    drop(c);
    let source_dir = node.kill();

    let restored = temp("restored");
    let out = restore(&backups, 5, &restored);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("restored partition 1 of backup 5"));
    // a directory with data is refused, and so is a backup that does not exist
    let out = restore(&backups, 5, &source_dir);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not empty"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = restore(&backups, 7, &temp("never"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no backup with id 7"));
    let _ = std::fs::remove_dir_all(&source_dir);

    let node = start_in(restored, &["--backup-dir", backups.to_str().unwrap()]);
    let mut c = connect(&node.gateway).await;
    let mut seen = Vec::new();
    while let Some(job) = activate_one_within(&mut c, "benchmark-task", 2_000).await {
        seen.push(job.process_instance_key);
        complete(&mut c, job.key).await;
    }
    seen.sort();
    assert_eq!(
        seen, before,
        "exactly the instances of the backup are there (not {after})"
    );
    let new = create_instance(&mut c, "benchmark", r#"{"before": true}"#).await;
    assert!(
        new > *before.iter().max().unwrap(),
        "new key {new} above the backup's keys {before:?}"
    );
    let job = activate_one_within(&mut c, "benchmark-task", 10_000)
        .await
        .expect("the new instance's job");
    assert_eq!(job.process_instance_key, new);

    // the backup list survives the restart; a backup can be deleted
    let m = node.management.clone();
    let (code, _) = http(&m, "DELETE", "/actuator/backupRuntime/5", None);
    assert_eq!(code, 204);
    let (code, _) = http(&m, "GET", "/actuator/backupRuntime/5", None);
    assert_eq!(code, 404);
    let _ = std::fs::remove_dir_all(&backups);
}

/// A node of 3 partitions: the backup holds every partition, the restored directory keeps the
/// partition count (a start with another count is refused), and the instances of every
/// partition complete after the restore.
#[tokio::test(flavor = "multi_thread")]
async fn a_backup_of_three_partitions_restores_all_of_them() {
    let backups = temp("store-3p");
    let node = start_with(
        "backup-source-3p",
        &[
            "--partitions",
            "3",
            "--backup-dir",
            backups.to_str().unwrap(),
        ],
    );
    let mut c = connect(&node.gateway).await;
    common::deploy_one_task(&mut c).await;
    let mut before = Vec::new();
    for _ in 0..9 {
        before.push(create_instance(&mut c, "benchmark", r#"{"before": true}"#).await);
    }
    let mut partitions: Vec<u32> = before
        .iter()
        .map(|k| zest_protocol::partition_of_key(*k))
        .collect();
    partitions.sort();
    partitions.dedup();
    assert_eq!(partitions, vec![1, 2, 3]);
    let m = node.management.clone();
    let (code, body) = http(
        &m,
        "POST",
        "/actuator/backupRuntime",
        Some(serde_json::json!({"backupId": 1})),
    );
    assert_eq!(code, 202, "{body}");
    let status = wait_until_done(&m, 1);
    assert_eq!(status["state"], "COMPLETED", "{status}");
    assert_eq!(
        status["details"].as_array().map(|d| d.len()),
        Some(3),
        "{status}"
    );
    drop(c);
    let source_dir = node.kill();
    let _ = std::fs::remove_dir_all(&source_dir);

    let restored = temp("restored-3p");
    let out = restore(&backups, 1, &restored);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let count = std::fs::read_to_string(restored.join("PARTITIONS")).unwrap();
    assert_eq!(count.trim(), "3");
    let node = start_in(restored, &["--partitions", "3"]);
    let mut c = connect(&node.gateway).await;
    let mut seen = Vec::new();
    while let Some(job) = activate_one_within(&mut c, "benchmark-task", 2_000).await {
        seen.push(job.process_instance_key);
        complete(&mut c, job.key).await;
    }
    seen.sort();
    before.sort();
    assert_eq!(seen, before, "the instances of every partition are back");
    let _ = std::fs::remove_dir_all(&backups);
}

/// A node killed while it takes a backup loses nothing it acknowledged, and after the restart
/// the backup is COMPLETED (it finished first) or FAILED, never left IN_PROGRESS.
#[tokio::test(flavor = "multi_thread")]
async fn a_node_killed_during_a_backup_reports_it_failed_and_keeps_its_data() {
    let backups = temp("killed-store");
    let node = start_with(
        "backup-killed",
        &["--backup-dir", backups.to_str().unwrap()],
    );
    let mut c = connect(&node.gateway).await;
    common::deploy_one_task(&mut c).await;
    let mut keys = Vec::new();
    for _ in 0..50 {
        keys.push(create_instance(&mut c, "benchmark", r#"{"before": true}"#).await);
    }
    let (code, body) = http(
        &node.management,
        "POST",
        "/actuator/backupRuntime",
        Some(serde_json::json!({"backupId": 1})),
    );
    assert_eq!(code, 202, "{body}");
    drop(c);
    let dir = node.kill();
    let node = start_in(dir, &["--backup-dir", backups.to_str().unwrap()]);
    let (code, status) = http(&node.management, "GET", "/actuator/backupRuntime/1", None);
    assert_eq!(code, 200, "{status}");
    assert!(
        status["state"] == "COMPLETED" || status["state"] == "FAILED",
        "{status}"
    );
    let mut c = connect(&node.gateway).await;
    let mut seen = Vec::new();
    while let Some(job) = activate_one_within(&mut c, "benchmark-task", 2_000).await {
        seen.push(job.process_instance_key);
    }
    seen.sort();
    assert_eq!(seen, keys, "every acknowledged instance is still there");
    let _ = std::fs::remove_dir_all(&backups);
}

#[test]
fn backups_are_refused_with_a_clear_error_when_no_backup_directory_is_configured() {
    let node = common::start("backup-unconfigured");
    let (code, body) = http(
        &node.management,
        "POST",
        "/actuator/backupRuntime",
        Some(serde_json::json!({"backupId": 1})),
    );
    assert_eq!(code, 400, "{body}");
    assert!(
        body["message"].as_str().unwrap().contains("--backup-dir"),
        "{body}"
    );
}

/// History in a backup (the embedded store): a node with finished instances and an incident
/// takes a backup while its exporter is paused (so the backup's history copy stands before the
/// state and the log entries between go with it), goes on after it, and is wiped. Restored,
/// the searches find exactly the instances up to the backup, the finished ones with their
/// variables and element instances and the incident, none after it; the history has no gap,
/// and new instances are exported as before.
#[tokio::test(flavor = "multi_thread")]
async fn a_restored_node_has_the_history_of_the_backup_and_exports_on() {
    let backups = temp("history-store");
    let node = start_with(
        "backup-history",
        &["--backup-dir", backups.to_str().unwrap()],
    );
    let mut c = connect(&node.gateway).await;
    common::deploy_one_task(&mut c).await;
    let mut before = Vec::new();
    for n in 0..3 {
        before.push(create_numbered(&mut c, n).await);
    }
    let mut finished = Vec::new();
    for _ in 0..2 {
        let job = activate_one_within(&mut c, "benchmark-task", 10_000)
            .await
            .expect("a job");
        complete(&mut c, job.key).await;
        finished.push(job.process_instance_key);
    }
    finished.sort();
    // what the exporter has not exported when the backup is taken is in it all the same
    let (code, body) = http(&node.management, "POST", "/actuator/exporting/pause", None);
    assert!(code == 200 || code == 204, "{code} {body}");
    let failed = create_numbered(&mut c, 3).await;
    before.push(failed);
    let job = activate_one_within(&mut c, "benchmark-task", 10_000)
        .await
        .expect("a job");
    fail_to_incident(&mut c, job.key, "card declined").await;
    let incident_instance = job.process_instance_key;
    before.push(create_numbered(&mut c, 4).await);
    before.sort();

    let (code, body) = http(
        &node.management,
        "POST",
        "/actuator/backupRuntime",
        Some(serde_json::json!({"backupId": 1})),
    );
    assert_eq!(code, 202, "{body}");
    let status = wait_until_done(&node.management, 1);
    assert_eq!(status["state"], "COMPLETED", "{status}");
    let note = status["details"][0]["history"].as_str().unwrap_or_default();
    if std::env::var(common::POSTGRES).is_ok_and(|u| !u.is_empty()) {
        assert!(note.contains("PostgreSQL"), "{status}");
        return;
    }
    assert!(note.starts_with("included"), "{status}");
    let (code, body) = http(&node.management, "POST", "/actuator/exporting/resume", None);
    assert!(code == 200 || code == 204, "{code} {body}");
    let after = create_numbered(&mut c, 5).await;
    drop(c);
    let _ = std::fs::remove_dir_all(node.kill());

    let restored = temp("history-restored");
    let out = restore(&backups, 1, &restored);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("with its history"), "{stdout}");
    assert!(
        !stdout.contains(" 0 log entries"),
        "the paused export's entries: {stdout}"
    );

    let node = start_in(restored, &[]);
    let rest = node.rest.clone();
    let all = common::wait_items(
        &rest,
        "/v2/process-instances/search",
        serde_json::json!({}),
        before.len(),
    );
    assert_eq!(
        sorted_keys(&all, "processInstanceKey"),
        before,
        "exactly the backup's instances (not {after})"
    );
    let completed = search(
        &rest,
        "/v2/process-instances/search",
        serde_json::json!({"filter": {"state": "COMPLETED"}}),
    );
    assert_eq!(sorted_keys(&completed, "processInstanceKey"), finished);
    for key in &finished {
        let elements = search(
            &rest,
            "/v2/element-instances/search",
            serde_json::json!({"filter": {"processInstanceKey": key.to_string()}}),
        );
        let mut states: Vec<(&str, &str)> = elements["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| (e["type"].as_str().unwrap(), e["state"].as_str().unwrap()))
            .collect();
        states.sort();
        assert_eq!(
            states,
            [
                ("END_EVENT", "COMPLETED"),
                ("SERVICE_TASK", "COMPLETED"),
                ("START_EVENT", "COMPLETED")
            ],
            "{elements}"
        );
        let variables = search(
            &rest,
            "/v2/variables/search",
            serde_json::json!({"filter": {"processInstanceKey": key.to_string()}}),
        );
        let mut names: Vec<&str> = variables["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["name"].as_str().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["n", "order"], "{variables}");
    }
    let incidents = search(&rest, "/v2/incidents/search", serde_json::json!({}));
    assert_eq!(
        sorted_keys(&incidents, "processInstanceKey"),
        [incident_instance],
        "{incidents}"
    );
    assert_eq!(incidents["items"][0]["errorMessage"], "card declined");

    // new instances are exported as before
    let mut c = connect(&node.gateway).await;
    let new = create_numbered(&mut c, 6).await;
    let all = common::wait_items(
        &rest,
        "/v2/process-instances/search",
        serde_json::json!({}),
        before.len() + 1,
    );
    assert!(sorted_keys(&all, "processInstanceKey").contains(&new));
    drop(c);
    let dir = node.kill();
    let history = zest_history::History::open(&dir.join("history.sqlite"), 1 << 20).unwrap();
    let at = history.position(1).unwrap();
    assert_eq!(at.gap_to, 0, "no gap in the restored history: {at:?}");
    drop(history);
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&backups);
}
