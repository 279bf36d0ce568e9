//! TLS on the client ports (issue 62): gRPC, REST and management over TLS with a CA the client
//! is given, a plaintext client on a TLS port failing cleanly while the node keeps serving,
//! and a certificate replaced on disk reaching new connections.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::certs::TestCa;
use zest_gateway::proto;
use zest_gateway::proto::gateway_client::GatewayClient;

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("zest-tls-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A gateway client over TLS trusting only `ca`.
async fn tls_client(gateway: &str, ca: &Path) -> Result<common::Client, String> {
    let pem = std::fs::read(ca).unwrap();
    let tls = tonic::transport::ClientTlsConfig::new()
        .ca_certificate(tonic::transport::Certificate::from_pem(pem));
    let channel = tonic::transport::Endpoint::from_shared(format!("https://{gateway}"))
        .unwrap()
        .tls_config(tls)
        .unwrap()
        .connect_timeout(Duration::from_secs(5))
        .timeout(Duration::from_secs(30))
        .connect()
        .await
        .map_err(|e| format!("{e:?}"))?;
    Ok(GatewayClient::new(channel))
}

/// An HTTPS client trusting only `ca`, on a new connection each time it is made.
fn https(ca: &Path) -> reqwest::Client {
    let pem = std::fs::read(ca).unwrap();
    reqwest::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(&pem).unwrap()])
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap()
}

async fn get_status(client: &reqwest::Client, url: &str) -> Result<u16, String> {
    client
        .get(url)
        .send()
        .await
        .map(|r| r.status().as_u16())
        .map_err(|e| format!("{e:?}"))
}

/// Sends `bytes` on a new plaintext connection and reads until the server closes it: the
/// bytes it answered with, or an error; panics if the server holds it open for 10 s.
fn plaintext(addr: &str, bytes: &[u8]) -> Vec<u8> {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let _ = s.write_all(bytes);
    let mut answer = Vec::new();
    match s.read_to_end(&mut answer) {
        Ok(_) => answer,
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => answer,
        Err(e) => panic!("the server held a plaintext connection to {addr} open: {e}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn grpc_rest_and_management_over_tls_and_plaintext_clients_fail_cleanly() {
    let dir = temp_dir("ports");
    let ca = TestCa::new("Zest test CA");
    let ca_file = ca.write(&dir, "test");
    let (cert, key) = (dir.join("server.pem"), dir.join("server.key"));
    ca.issue(&cert, &key);
    let (cert_arg, key_arg) = (cert.to_str().unwrap(), key.to_str().unwrap());
    // few connections per client: a plaintext client's place must be given back
    let node = common::start_with(
        "tls-ports",
        &[
            "--grpc-tls-cert",
            cert_arg,
            "--grpc-tls-key",
            key_arg,
            "--management-tls-cert",
            cert_arg,
            "--management-tls-key",
            key_arg,
            "--max-connections-per-ip",
            "4",
            "--client-timeout-ms",
            "1000",
        ],
    );
    // gRPC with the CA: a deployment and an instance through to its job's completion
    let mut c = tls_client(&node.gateway, &ca_file)
        .await
        .expect("gRPC over TLS");
    common::deploy_one_task(&mut c).await;
    let created = tokio::spawn(common::create_with_result(
        c.clone(),
        "benchmark".into(),
        "{}".into(),
    ));
    let job = common::activate_one(&mut c, "benchmark-task").await;
    common::complete(&mut c, job.expect("a job over TLS").key).await;
    created.await.unwrap().expect("the instance completes");
    // REST shares the gRPC port's certificate; management has its own flags
    let rest = format!("https://{}/v2/topology", node.rest);
    assert_eq!(get_status(&https(&ca_file), &rest).await, Ok(200));
    let health = format!("https://{}/health", node.management);
    assert_eq!(get_status(&https(&ca_file), &health).await, Ok(200));
    // a client that does not trust the CA is refused by its own side
    let other = TestCa::new("another CA").write(&dir, "other");
    assert!(tls_client(&node.gateway, &other).await.is_err());
    assert!(get_status(&https(&other), &rest).await.is_err());

    // plaintext clients on the TLS ports: closed, never answered in plaintext; more of them
    // than a client may hold connections, so each place is given back
    for _ in 0..6 {
        let get = format!("GET /v2/topology HTTP/1.1\r\nHost: {}\r\n\r\n", node.rest);
        let answer = plaintext(&node.rest, get.as_bytes());
        assert!(!answer.starts_with(b"HTTP/"), "answered in plaintext");
        let answer = plaintext(&node.gateway, b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
        assert!(!answer.starts_with(b"HTTP/"), "answered in plaintext");
        let answer = plaintext(&node.management, b"GET /health HTTP/1.0\r\n\r\n");
        assert!(!answer.starts_with(b"HTTP/"), "answered in plaintext");
    }
    let plain = GatewayClient::connect(format!("http://{}", node.gateway)).await;
    if let Ok(mut plain) = plain {
        assert!(plain.topology(proto::TopologyRequest {}).await.is_err());
    }
    // a client that begins a handshake and stops: closed after the client timeout
    let started = Instant::now();
    plaintext(&node.rest, &[0x16, 0x03, 0x01]);
    assert!(started.elapsed() < Duration::from_secs(5));

    // the node still serves, on new connections too
    let mut c = tls_client(&node.gateway, &ca_file)
        .await
        .expect("gRPC after");
    c.topology(proto::TopologyRequest {})
        .await
        .expect("topology");
    assert_eq!(get_status(&https(&ca_file), &rest).await, Ok(200));
    // the CLI with zbctl's --certPath
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_zest"))
        .args(["status", "--address", &node.gateway, "--certPath"])
        .arg(&ca_file)
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    assert!(String::from_utf8_lossy(&status.stdout).contains("Partition 1"));
    // without it, the CLI says what is missing
    let plain = std::process::Command::new(env!("CARGO_BIN_EXE_zest"))
        .args(["status", "--address", &node.gateway])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&plain.stderr);
    assert!(
        err.contains("speaks TLS") && err.contains("--certPath"),
        "{err}"
    );
    drop(node);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_certificate_replaced_on_disk_reaches_new_connections() {
    let dir = temp_dir("reload");
    let (first, second) = (TestCa::new("first CA"), TestCa::new("second CA"));
    let (first_ca, second_ca) = (first.write(&dir, "first"), second.write(&dir, "second"));
    let (cert, key) = (dir.join("server.pem"), dir.join("server.key"));
    first.issue(&cert, &key);
    let node = common::start_with(
        "tls-reload",
        &[
            "--grpc-tls-cert",
            cert.to_str().unwrap(),
            "--grpc-tls-key",
            key.to_str().unwrap(),
        ],
    );
    let rest = format!("https://{}/v2/topology", node.rest);
    assert_eq!(get_status(&https(&first_ca), &rest).await, Ok(200));
    assert!(get_status(&https(&second_ca), &rest).await.is_err());

    // a certificate of the second CA replaces the first on disk
    second.issue(&cert, &key);
    let deadline = Instant::now() + Duration::from_secs(20);
    while get_status(&https(&second_ca), &rest).await != Ok(200) {
        assert!(
            Instant::now() < deadline,
            "the new certificate is not served"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    tls_client(&node.gateway, &second_ca)
        .await
        .expect("gRPC serves the new certificate")
        .topology(proto::TopologyRequest {})
        .await
        .expect("topology");
    assert!(get_status(&https(&first_ca), &rest).await.is_err());

    // a broken file: the pair served until now is kept
    std::fs::write(&key, "not a key").unwrap();
    tokio::time::sleep(zest_cluster::tls::RECHECK + Duration::from_millis(500)).await;
    for _ in 0..3 {
        assert_eq!(get_status(&https(&second_ca), &rest).await, Ok(200));
    }
    drop(node);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_node_with_an_unreadable_certificate_does_not_start() {
    let dir = temp_dir("unreadable");
    let key = dir.join("server.key");
    std::fs::write(&key, "not a key").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_zest"))
        .args(["start", "--data-dir"])
        .arg(dir.join("data"))
        .args(["--gateway-address", "127.0.0.1:0"])
        .args(["--rest-address", "127.0.0.1:0"])
        .args(["--management-address", "127.0.0.1:0"])
        .args(["--grpc-tls-cert"])
        .arg(dir.join("missing.pem"))
        .args(["--grpc-tls-key"])
        .arg(&key)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("missing.pem"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
