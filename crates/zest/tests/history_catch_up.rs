//! A replica's history after a snapshot (`docs/design/history.md`, "In a cluster"): in a
//! 3-node cluster (every partition on every node, SQLite history), a node is killed, the
//! others run enough instances that their log is purged behind it (snapshots every 100
//! entries, 10 entries kept behind them), and the node comes back through a snapshot, which
//! skips the log its history never saw. It copies the partitions' history from a complete
//! replica, and then its own store holds every instance, completed, with its element
//! instances, variables and jobs: it answers alone once the other two are killed.

mod common;

use std::time::{Duration, Instant};

use common::{http, http_get, start_in, Node};
use serde_json::{json, Value};

const PROCESS: &str = "catchup";
const JOB_TYPE: &str = "catchup-task";

/// A free port on 127.0.0.1 (bound and released: the nodes' internal addresses must be known
/// before they start, to name each other as contact points).
/// A free port below the ephemeral range (from 32768): one the kernel hands out for port 0
/// may be taken, before its node binds it, by an outgoing connection of a node starting
/// beside it (a node that then cannot start holds the others, which wait for it, forever).
fn free_port() -> u16 {
    static NEXT: std::sync::atomic::AtomicU16 = std::sync::atomic::AtomicU16::new(0);
    let base = 20_000 + (std::process::id() % 500) as u16 * 20;
    loop {
        let port = base + NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst) % 2_000;
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

/// `node`'s flags in a cluster of the nodes at `internal`.
fn node_args(node: usize, internal: &[String], config: &str) -> Vec<String> {
    let others: Vec<String> = (0..internal.len())
        .filter(|&j| j != node)
        .map(|j| internal[j].clone())
        .collect();
    [
        "--node-id",
        &node.to_string(),
        "--cluster-size",
        "3",
        "--partitions",
        "2",
        "--replication-factor",
        "3",
        "--internal-address",
        &internal[node],
        "--contact-points",
        &others.join(","),
        "--config",
        config,
        "--memory-mb",
        "64",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn start(dir: &std::path::Path, args: &[String]) -> Node {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    start_in(dir.to_path_buf(), &args)
}

/// A request answered 2xx, asked again while a partition is between leaders.
fn post(rest: &str, path: &str, body: Value) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (status, answer) = http(rest, "POST", path, Some(body.clone()));
        if (200..300).contains(&status) {
            return answer;
        }
        assert!(Instant::now() < deadline, "{path}: {status} {answer}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Runs `n` instances to their end: created, their jobs activated and completed.
fn run_instances(rest: &str, n: usize) {
    for i in 0..n {
        let body = json!({"processDefinitionId": PROCESS, "variables": {"n": i}});
        post(rest, "/v2/process-instances", body);
    }
    let mut done = 0;
    let deadline = Instant::now() + Duration::from_secs(120);
    while done < n {
        assert!(Instant::now() < deadline, "{done} of {n} jobs completed");
        let body = json!({"type": JOB_TYPE, "worker": "t", "timeout": 60_000,
            "maxJobsToActivate": 100, "requestTimeout": 1_000});
        let answer = post(rest, "/v2/jobs/activation", body);
        for job in answer["jobs"].as_array().unwrap() {
            let key = job["jobKey"].as_str().unwrap();
            let path = format!("/v2/jobs/{key}/completion");
            let deadline = Instant::now() + Duration::from_secs(30);
            loop {
                let (status, answer) = http(rest, "POST", &path, Some(json!({})));
                // 404: an earlier try went through before its answer was lost
                if status == 204 || status == 404 {
                    break;
                }
                assert!(Instant::now() < deadline, "{path}: {status} {answer}");
                std::thread::sleep(Duration::from_millis(200));
            }
            done += 1;
        }
    }
}

/// What a node's history holds: completed instances, and the element instances, variables
/// and jobs of the process.
fn totals(rest: &str) -> Vec<i64> {
    let total = |what: &str, filter: Value| {
        let page = post(
            rest,
            &format!("/v2/{what}/search"),
            json!({"filter": filter}),
        );
        page["page"]["totalItems"].as_i64().unwrap()
    };
    vec![
        total(
            "process-instances",
            json!({"processDefinitionId": PROCESS, "state": "COMPLETED"}),
        ),
        total("process-instances", json!({"processDefinitionId": PROCESS})),
        total(
            "element-instances",
            json!({"processDefinitionId": PROCESS, "state": "COMPLETED"}),
        ),
        total("variables", json!({"name": "n"})),
        // through the value postings, which a copy derives from the variables it copies
        total(
            "process-instances",
            json!({"processDefinitionId": PROCESS, "variables": [{"name": "n", "value": "7"}]}),
        ),
        total("jobs", json!({"type": JOB_TYPE, "state": "COMPLETED"})),
    ]
}

/// The copies of history `management`'s node made, per partition.
fn copies(management: &str) -> Vec<f64> {
    let metrics = http_get(management, "/metrics");
    (1..=2)
        .map(|p| {
            metrics
                .lines()
                .find(|l| {
                    l.starts_with("zest_history_copies_total")
                        && l.contains(&format!("partition=\"{p}\""))
                })
                .and_then(|l| l.split_whitespace().last())
                .and_then(|v| v.parse().ok())
                .unwrap_or(0.0)
        })
        .collect()
}

#[test]
fn a_node_caught_up_by_a_snapshot_copies_the_history_it_missed() {
    if std::env::var(common::POSTGRES).is_ok_and(|u| !u.is_empty()) {
        // the nodes would each get a schema of their own, not the one database PostgreSQL
        // replicas share (where there is no gap to copy)
        eprintln!("SQLite only: skipped with {}", common::POSTGRES);
        return;
    }
    let root = std::env::temp_dir().join(format!("zest-test-catch-up-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let config = root.join("zest.toml");
    // a follower receiving a snapshot of a debug build on a busy machine may not hear its
    // leader for a while: a long election timeout keeps it from starting elections meanwhile
    // (which would make the leader start the snapshot over)
    std::fs::write(
        &config,
        "snapshot-every = 100\nkeep-behind-snapshot = 10\nelection-timeout-ms = 5000\n",
    )
    .unwrap();
    let config = config.to_string_lossy().to_string();
    let internal: Vec<String> = (0..3)
        .map(|_| format!("127.0.0.1:{}", free_port()))
        .collect();
    let dirs: Vec<_> = (0..3).map(|i| root.join(format!("node-{i}"))).collect();
    let args: Vec<Vec<String>> = (0..3).map(|i| node_args(i, &internal, &config)).collect();
    // each waits for a leader of every partition, so they start together
    let mut nodes: Vec<Option<Node>> = std::thread::scope(|s| {
        let started: Vec<_> = (0..3)
            .map(|i| {
                let (dir, args) = (&dirs[i], &args[i]);
                s.spawn(move || start(dir, args))
            })
            .collect();
        started
            .into_iter()
            .map(|h| Some(h.join().unwrap()))
            .collect()
    });
    let rest0 = nodes[0].as_ref().unwrap().rest.clone();
    common::deploy_rest(
        &rest0,
        "catchup.bpmn",
        &common::service_task_bpmn(PROCESS, JOB_TYPE),
    );
    run_instances(&rest0, 10);

    // node 2 goes; the others run on until their logs are purged far behind it
    let dir2 = nodes[2].take().unwrap().kill();
    run_instances(&rest0, 200);
    // what node 0 answered for another partition's leader may reach its history a moment later
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut expected = totals(&rest0);
    while expected[0] != 210 {
        assert!(
            Instant::now() < deadline,
            "210 instances completed: {expected:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
        expected = totals(&rest0);
    }
    assert_eq!(expected[4], 2, "n = 7 in each run: {expected:?}");

    let node2 = start(&dir2, &args[2]);
    let deadline = Instant::now() + Duration::from_secs(90);
    while copies(&node2.management).iter().any(|&c| c < 1.0) {
        assert!(
            Instant::now() < deadline,
            "node 2 copied each partition's history: {:?}",
            copies(&node2.management)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    // found from node 2's REST API at once (and from its own store, below)
    let deadline = Instant::now() + Duration::from_secs(30);
    while totals(&node2.rest) != expected {
        assert!(
            Instant::now() < deadline,
            "node 2 finds every instance: {:?} vs {expected:?}",
            totals(&node2.rest)
        );
        std::thread::sleep(Duration::from_millis(200));
    }

    // node 2's own history holds it all: it answers alone
    for node in nodes.iter_mut().take(2) {
        node.take().unwrap().kill();
    }
    assert_eq!(totals(&node2.rest), expected);
    let _ = std::fs::remove_dir_all(&root);
}
