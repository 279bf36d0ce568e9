//! A node whose PostgreSQL history store is down at start still starts (history is a
//! secondary store): commands work, history reads answer 503 naming the secondary storage (and
//! not the URL's password), the exporter's failures show in /metrics. Where the tests have a
//! PostgreSQL server (`ZEST_TEST_POSTGRES`), it then comes up (a proxy opens on the closed
//! port): the schema is migrated and export catches up, and the reads answer.

mod common;

use std::net::{Shutdown, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use common::{deploy_rest, http, metric, service_task_bpmn, start_with, wait_items};
use serde_json::json;

/// A port nothing listens on (bound and let go).
fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().unwrap().port()
}

/// `url` with its host and port replaced by 127.0.0.1:`port` (user, database and options
/// kept).
fn via(url: &str, port: u16) -> String {
    let (scheme, rest) = url.split_once("://").expect("a URL");
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let user = authority
        .rsplit_once('@')
        .map(|(u, _)| format!("{u}@"))
        .unwrap_or_default();
    format!("{scheme}://{user}127.0.0.1:{port}{path}")
}

/// The server `url` names, as host:port.
fn server_of(url: &str) -> String {
    let config: postgres::Config = url.parse().expect("ZEST_TEST_POSTGRES is a URL");
    let host = match config.get_hosts().first() {
        Some(postgres::config::Host::Tcp(h)) => h.clone(),
        _ => "127.0.0.1".into(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    format!("{host}:{port}")
}

/// Forwards the connections `listener` takes to `upstream`, each way on a thread of its own.
fn proxy(listener: TcpListener, upstream: String) {
    std::thread::spawn(move || {
        for client in listener.incoming().map_while(Result::ok) {
            let Ok(server) = TcpStream::connect(&upstream) else {
                continue;
            };
            let (c2, s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
            for (mut from, mut to) in [(client, s2), (server, c2)] {
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut from, &mut to);
                    let _ = to.shutdown(Shutdown::Both);
                });
            }
        }
    });
}

#[test]
fn a_node_whose_postgres_is_down_starts_answers_503_on_history_and_exports_once_it_is_up() {
    let port = closed_port();
    let dir = std::env::temp_dir().join(format!("zest-test-pg-down-{}", std::process::id()));
    let real = common::postgres_url(&dir);
    let url = match &real {
        Some(real) => via(real, port),
        None => format!("postgres://zest:s3cret@127.0.0.1:{port}/zest"),
    };
    // a malformed URL is a configuration error: refused at start
    let bad_dir = std::env::temp_dir().join(format!("zest-test-pg-bad-{}", std::process::id()));
    let mut refused = std::process::Command::new(env!("CARGO_BIN_EXE_zest"))
        .args([
            "start",
            "--history-url",
            "postgres://127.0.0.1:notaport/zest",
        ])
        .args([
            "--gateway-address",
            "127.0.0.1:0",
            "--management-address",
            "127.0.0.1:0",
        ])
        .args(["--rest-address", "127.0.0.1:0", "--data-dir"])
        .arg(&bad_dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("zest runs");
    let deadline = Instant::now() + Duration::from_secs(30);
    let exit = loop {
        if let Some(exit) = refused.try_wait().unwrap() {
            break exit;
        }
        if Instant::now() > deadline {
            let _ = refused.kill();
            panic!("a malformed history URL did not stop the node");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(!exit.success(), "a malformed URL is refused");
    let _ = std::fs::remove_dir_all(&bad_dir);

    let node = start_with("pg-down", &["--history-url", &url]);
    let rest = &node.rest;
    deploy_rest(rest, "down.bpmn", &service_task_bpmn("down", "down-task"));
    let (status, created) = http(
        rest,
        "POST",
        "/v2/process-instances",
        Some(json!({"processDefinitionId": "down"})),
    );
    assert_eq!(status, 200, "commands work without history: {created}");

    let (status, problem) = http(
        rest,
        "POST",
        "/v2/process-instances/search",
        Some(json!({})),
    );
    assert_eq!(status, 503, "{problem}");
    let detail = problem["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("secondary storage"), "{problem}");
    assert!(
        !detail.contains("s3cret"),
        "no password in answers: {problem}"
    );

    let failures = "zest_exporter_failures_total{exporter=\"history\",partition=\"1\"}";
    let deadline = Instant::now() + Duration::from_secs(20);
    while metric(&node.management, failures).unwrap_or(0.0) < 1.0 {
        assert!(
            Instant::now() < deadline,
            "the exporter's failures are counted"
        );
        std::thread::sleep(Duration::from_millis(100));
    }

    let Some(real) = real else {
        eprintln!("ZEST_TEST_POSTGRES not set: the recovery is not checked");
        return;
    };
    // PostgreSQL comes up on the port the node was given
    proxy(
        TcpListener::bind(("127.0.0.1", port)).expect("the closed port is free"),
        server_of(&real),
    );
    // 503 until the exporter's next try (its backoff is at most 10 s) migrates the schema
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (status, page) = http(
            rest,
            "POST",
            "/v2/process-instances/search",
            Some(json!({})),
        );
        if status == 200 {
            break;
        }
        assert_eq!(status, 503, "{page}");
        assert!(
            Instant::now() < deadline,
            "history still unavailable: {page}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let page = wait_items(rest, "/v2/process-instances/search", json!({}), 1);
    assert_eq!(
        page["items"][0]["processInstanceKey"], created["processInstanceKey"],
        "{page}"
    );
}
