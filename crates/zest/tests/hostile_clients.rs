//! Clients that send part of a request and then nothing, from one address, against a real
//! `zest start` (issue 62): their bodies are refused at once past the gateway's share of the
//! budget, those let in are timed out and their connections closed, the node's memory stays
//! within its budget, and other clients are served all along.

mod common;

use std::time::{Duration, Instant};

use common::{connect, deploy_one_task, http_get, metric, rss, start_with};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tonic::Code;
use zest_gateway::proto;

/// The hostile clients' address: another loopback address than the other clients' 127.0.0.1,
/// as an attacker's is.
const HOSTILE: &str = "127.0.0.2:0";
const CONNECTIONS: usize = 1_000;
const BODY: usize = 2_000_000;

/// A connection from [`HOSTILE`] that sends the head of a request with a body of [`BODY`]
/// bytes, and half of the body.
async fn half_a_body(rest: &str) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(HOSTILE.parse().unwrap()).unwrap();
    let mut s = socket.connect(rest.parse().unwrap()).await.unwrap();
    let head = format!(
        "POST /v2/process-instances HTTP/1.1\r\nHost: {rest}\r\nContent-Type: application/json\r\n\
         Content-Length: {BODY}\r\n\r\n"
    );
    s.write_all(head.as_bytes()).await.unwrap();
    // a refused request's connection is closed: the rest of what it sends may not get in
    let half = vec![b' '; BODY / 2];
    let _ = tokio::time::timeout(Duration::from_secs(5), s.write_all(&half)).await;
    s
}

/// What the server sent on `s` within `wait`: its first line, or "" for nothing yet.
async fn first_line(s: &mut TcpStream, wait: Duration) -> String {
    let mut buf = [0u8; 64];
    match tokio::time::timeout(wait, s.read(&mut buf)).await {
        Ok(Ok(n)) => String::from_utf8_lossy(&buf[..n])
            .lines()
            .next()
            .unwrap_or("")
            .to_string(),
        _ => String::new(),
    }
}

/// Whether the server closes `s` within `wait` (what it sends before is read and dropped).
async fn closed_within(s: &mut TcpStream, wait: Duration) -> bool {
    let end = Instant::now() + wait;
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let left = end.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, s.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return true,
            Ok(Ok(_)) => continue,
            Err(_) => return false,
        }
    }
}

/// Another client's work: the REST topology and a gRPC deployment and instance.
async fn served(rest: &str, gateway: &str) -> Duration {
    let t = Instant::now();
    let topology = http_get(rest, "/v2/topology");
    assert!(topology.starts_with("HTTP/1.0 200"), "{topology}");
    let mut c = connect(gateway).await;
    deploy_one_task(&mut c).await;
    let created = c
        .create_process_instance(proto::CreateProcessInstanceRequest {
            bpmn_process_id: "benchmark".into(),
            version: -1,
            ..Default::default()
        })
        .await
        .expect("an instance is created");
    assert!(created.into_inner().process_instance_key > 0);
    t.elapsed()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn half_sent_bodies_cannot_take_the_nodes_memory_nor_keep_others_out() {
    let timeout = Duration::from_secs(2);
    let node = start_with("hostile-bodies", &["--client-timeout-ms", "2000"]);
    let pid = node.child.id();
    let budget = 128 << 20; // --memory-mb's default
    let before = rss(pid).expect("the node's VmRSS");

    let mut hostile = Vec::with_capacity(CONNECTIONS);
    for _ in 0..CONNECTIONS {
        hostile.push(half_a_body(&node.rest).await);
    }
    let during = rss(pid).expect("the node's VmRSS");
    assert!(
        during < budget,
        "{CONNECTIONS} half-sent bodies took the node from {before} to {during} bytes"
    );
    // the bodies let in hold their length in the gateway's share, no more than the share
    let bodies = r#"zest_memory_used_bytes{part="request_bodies"}"#;
    let held = metric(&node.management, bodies).unwrap_or(0.0);
    assert!(
        (BODY as f64..=(6 << 20) as f64).contains(&held),
        "{held} bytes of bodies held"
    );
    let took = served(&node.rest, &node.gateway).await;
    assert!(took < Duration::from_secs(5), "served in {took:?}");

    // all but the few bodies this client's share holds were refused at once
    let mut refused = 0;
    let mut waiting = Vec::new();
    for mut s in hostile {
        let line = first_line(&mut s, Duration::from_millis(20)).await;
        if line.starts_with("HTTP/1.1 429") {
            refused += 1;
        } else {
            assert_eq!(line, "", "a held body is not answered before its timeout");
            waiting.push(s);
        }
    }
    assert!(
        (1..=4).contains(&waiting.len()),
        "{} bodies held, {refused} refused",
        waiting.len()
    );
    // the held ones are timed out (408) and their connections closed
    for s in &mut waiting {
        let line = first_line(s, timeout * 2).await;
        assert!(line.starts_with("HTTP/1.1 408"), "{line}");
        assert!(closed_within(s, timeout).await, "closed after its timeout");
    }
    assert_eq!(metric(&node.management, bodies), Some(0.0), "given back");
    let after = rss(pid).expect("the node's VmRSS");
    assert!(after < budget, "{after} bytes after the timeout");
    served(&node.rest, &node.gateway).await;
}

#[tokio::test]
async fn a_body_over_the_limit_is_refused_before_it_is_sent() {
    let node = start_with("hostile-large", &[]);
    let mut s = TcpStream::connect(&node.rest).await.unwrap();
    let head = format!(
        "POST /v2/deployments HTTP/1.1\r\nHost: {}\r\nContent-Type: multipart/form-data; \
         boundary=x\r\nContent-Length: 5000000\r\n\r\n",
        node.rest
    );
    s.write_all(head.as_bytes()).await.unwrap();
    let line = first_line(&mut s, Duration::from_secs(2)).await;
    assert!(line.starts_with("HTTP/1.1 413"), "{line}");

    // over gRPC a message past the client's share is refused as it comes
    let mut c = connect(&node.gateway).await;
    let refused = c
        .deploy_resource(proto::DeployResourceRequest {
            resources: vec![proto::Resource {
                name: "large.bpmn".into(),
                content: vec![b' '; 6 << 20],
            }],
            tenant_id: String::new(),
        })
        .await
        .expect_err("6 MiB are refused");
    assert_eq!(refused.code(), Code::ResourceExhausted, "{refused:?}");
    // refused by the intake's share before it was read, not by the size check after it
    assert!(refused.message().contains("retry later"), "{refused:?}");
    deploy_one_task(&mut c).await;
}

#[test]
fn a_node_on_another_address_than_loopback_needs_insecure() {
    use std::io::BufRead;
    let dir = std::env::temp_dir().join(format!("zest-test-insecure-{}", std::process::id()));
    let zest = || {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_zest"));
        c.args(["start", "--data-dir"]).arg(&dir).args([
            "--gateway-address",
            "0.0.0.0:0",
            "--rest-address",
            "127.0.0.1:0",
            "--management-address",
            "127.0.0.1:0",
        ]);
        c
    };
    let out = zest().output().unwrap();
    assert!(!out.status.success());
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(
        text.contains("0.0.0.0:0") && text.contains("--insecure"),
        "{text}"
    );
    assert!(!dir.exists(), "nothing is created");

    let mut node = zest()
        .arg("--insecure")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let ready = std::io::BufReader::new(node.stdout.take().unwrap())
        .lines()
        .map_while(Result::ok)
        .find(|l| l.starts_with("READY"));
    let _ = node.kill();
    let _ = node.wait();
    let _ = std::fs::remove_dir_all(&dir);
    let ready = ready.expect("with --insecure the node starts");
    assert!(ready.contains("gateway=0.0.0.0:"), "{ready}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_past_its_requests_in_progress_is_refused_and_served_after() {
    let node = start_with("hostile-requests", &["--max-requests-per-ip", "1"]);
    let rest = node.rest.clone();
    // one request in progress: a job activation that long-polls for 2 s
    let poll = tokio::task::spawn_blocking(move || {
        common::http(
            &rest,
            "POST",
            "/v2/jobs/activation",
            Some(serde_json::json!({
                "type": "none", "maxJobsToActivate": 1, "timeout": 1000, "requestTimeout": 2000
            })),
        )
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    let topology = http_get(&node.rest, "/v2/topology");
    assert!(topology.starts_with("HTTP/1.0 429"), "{topology}");
    assert!(topology.contains("max-requests-per-ip"), "{topology}");
    let mut c = connect(&node.gateway).await;
    let refused = c
        .topology(proto::TopologyRequest {})
        .await
        .expect_err("a second request is refused");
    assert_eq!(refused.code(), Code::ResourceExhausted, "{refused:?}");
    poll.await.unwrap();
    c.topology(proto::TopologyRequest {})
        .await
        .expect("served once the first request ended");
}
