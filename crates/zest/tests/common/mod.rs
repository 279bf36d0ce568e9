//! A real `zest start` for black-box tests, on free ports and a temporary data directory.
#![allow(dead_code)] // each test file uses its own part

pub mod certs;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use zest_gateway::proto;
use zest_gateway::proto::gateway_client::GatewayClient;

pub mod cluster;

pub struct Node {
    pub child: Child,
    pub gateway: String,
    pub management: String,
    /// The REST API v2 address.
    pub rest: String,
    pub dir: PathBuf,
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if !self.dir.as_os_str().is_empty() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

pub fn start(name: &str) -> Node {
    start_with(name, &[])
}

pub fn start_with(name: &str, extra: &[&str]) -> Node {
    let dir = std::env::temp_dir().join(format!("zest-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    start_in(dir, extra)
}

impl Node {
    /// SIGKILL, keeping the data directory for a restart with [`start_in`].
    pub fn kill(mut self) -> PathBuf {
        let _ = self.child.kill();
        let _ = self.child.wait();
        std::mem::take(&mut self.dir)
    }
}

/// The PostgreSQL database the black-box tests keep their nodes' history in instead of
/// SQLite, when one is given (`ZEST_TEST_POSTGRES=postgres://user@host/db`; the suite runs the
/// history tests both ways): each data directory gets a schema of its own, kept across a
/// restart on the same directory.
pub const POSTGRES: &str = "ZEST_TEST_POSTGRES";

/// `--history-url` of the node on `dir` when the tests run on PostgreSQL (and the test names
/// no store of its own).
fn postgres_args(dir: &std::path::Path, extra: &[&str]) -> Vec<String> {
    if extra.windows(2).any(|w| w == ["--history", "off"]) || extra.contains(&"--history-url") {
        return Vec::new();
    }
    match postgres_url(dir) {
        Some(url) => vec!["--history-url".into(), url],
        None => Vec::new(),
    }
}

/// The URL of the node on `dir`'s PostgreSQL history (a schema of its own in
/// [`POSTGRES`]'s database, created here) when the tests run on PostgreSQL.
pub fn postgres_url(dir: &std::path::Path) -> Option<String> {
    let url = match std::env::var(POSTGRES) {
        Ok(url) if !url.is_empty() => url,
        _ => return None,
    };
    // the directory's name and a hash of its whole path (two tests' `data` differ by parent)
    let name = dir.file_name().unwrap_or_default().to_string_lossy();
    let hash = dir
        .to_string_lossy()
        .bytes()
        .fold(0xcbf29ce484222325u64, |h, b| {
            (h ^ b as u64).wrapping_mul(0x100000001b3)
        });
    let schema: String = format!("t_{name}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .take(40)
        .chain(format!("_{hash:016x}").chars())
        .collect();
    let fresh = !dir.exists();
    // on a thread of its own: the client blocks on a runtime, and tests may run in one
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut admin = postgres::Client::connect(&url, postgres::NoTls).expect("PostgreSQL");
            if fresh {
                admin
                    .batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
                    .unwrap();
            }
            admin
                .batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS {schema}"))
                .unwrap();
        })
        .join()
        .expect("the test's schema is created");
    });
    let sep = if url.contains('?') { '&' } else { '?' };
    Some(format!("{url}{sep}options=-c%20search_path%3D{schema}"))
}

/// The cluster secret the tests' nodes share (a node with an internal port needs one).
#[allow(dead_code)]
pub const CLUSTER_SECRET: &str = "the tests' cluster secret";

/// Starts `zest` on `dir` as it is (a restart when it holds data).
pub fn start_in(dir: PathBuf, extra: &[&str]) -> Node {
    start_in_env(dir, extra, &[])
}

/// [`start_with`], with environment variables for the node (they override the tests' own,
/// `ZEST_CLUSTER_SECRET` included).
pub fn start_with_env(name: &str, extra: &[&str], env: &[(&str, &str)]) -> Node {
    let dir = std::env::temp_dir().join(format!("zest-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    start_in_env(dir, extra, env)
}

/// [`start_in`] with environment variables for the node.
pub fn start_in_env(dir: PathBuf, extra: &[&str], env: &[(&str, &str)]) -> Node {
    let postgres = postgres_args(&dir, extra);
    // port 0 everywhere: the server binds free ports and its READY line names them (ports
    // picked here and released could be taken by a server of a test running beside this one)
    let mut child = Command::new(env!("CARGO_BIN_EXE_zest"))
        .args(["start", "--data-dir"])
        .arg(&dir)
        .args([
            "--gateway-address",
            "127.0.0.1:0",
            "--management-address",
            "127.0.0.1:0",
            "--rest-address",
            "127.0.0.1:0",
        ])
        .args(extra)
        .args(&postgres)
        .env("ZEST_LOG", "warn")
        .env("ZEST_CLUSTER_SECRET", CLUSTER_SECRET)
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("zest starts");
    let stdout = child.stdout.take().unwrap();
    // a node that never gets ready (a cluster waiting for a member that did not start) fails
    // the test instead of holding it forever
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(stdout).lines();
        let ready = loop {
            match lines.next() {
                Some(Ok(l)) if l.starts_with("READY") => break Ok(l),
                Some(Ok(_)) => continue,
                other => break Err(format!("{other:?}")),
            }
        };
        let _ = tx.send(ready);
    });
    let ready = match rx.recv_timeout(std::time::Duration::from_secs(120)) {
        Ok(Ok(line)) => line,
        Ok(Err(end)) => panic!("zest start ended before READY: {end}"),
        Err(_) => {
            let _ = child.kill();
            panic!("zest start in {} was not READY within 120 s", dir.display())
        }
    };
    let addr = |name: &str| -> String {
        ready
            .split_whitespace()
            .find_map(|w| w.strip_prefix(&format!("{name}=")))
            .unwrap_or_else(|| panic!("no {name}= in {ready}"))
            .to_string()
    };
    let (gateway, management, rest) = (addr("gateway"), addr("management"), addr("rest"));
    Node {
        child,
        gateway,
        management,
        rest,
        dir,
    }
}

/// The resident memory of a process, in bytes (Linux).
pub fn rss(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kb = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse::<u64>()
        .ok()?;
    Some(kb * 1024)
}

pub fn http_get(addr: &str, path: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(s, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

/// A gateway client.
pub type Client = GatewayClient<tonic::transport::Channel>;

pub async fn connect(gateway: &str) -> Client {
    GatewayClient::connect(format!("http://{gateway}"))
        .await
        .expect("the gateway accepts connections")
}

pub async fn deploy_one_task(c: &mut Client) {
    c.deploy_resource(proto::DeployResourceRequest {
        resources: vec![proto::Resource {
            name: "one_task.bpmn".into(),
            content: include_bytes!("../../bench/one_task.bpmn").to_vec(),
        }],
        tenant_id: String::new(),
    })
    .await
    .expect("one_task.bpmn deploys");
}

/// Creates an instance of the latest `process_id` and waits for its result (for 60 s): spawn
/// it, since it answers only once the instance completed.
pub async fn create_with_result(
    mut c: Client,
    process_id: String,
    variables: String,
) -> Result<proto::CreateProcessInstanceWithResultResponse, tonic::Status> {
    c.create_process_instance_with_result(proto::CreateProcessInstanceWithResultRequest {
        request: Some(proto::CreateProcessInstanceRequest {
            bpmn_process_id: process_id,
            version: -1,
            variables,
            ..Default::default()
        }),
        request_timeout: 60_000,
        fetch_variables: vec![],
    })
    .await
    .map(|r| r.into_inner())
}

/// Activates one job of `job_type` (waiting up to 10 s for one), for 60 s.
pub async fn activate_one(c: &mut Client, job_type: &str) -> Option<proto::ActivatedJob> {
    activate_one_within(c, job_type, 10_000).await
}

/// Activates one job of `job_type`, waiting up to `request_timeout` ms for one, for 60 s.
pub async fn activate_one_within(
    c: &mut Client,
    job_type: &str,
    request_timeout: i64,
) -> Option<proto::ActivatedJob> {
    let mut jobs = c
        .activate_jobs(proto::ActivateJobsRequest {
            r#type: job_type.into(),
            worker: "test".into(),
            timeout: 60_000,
            max_jobs_to_activate: 1,
            request_timeout,
            ..Default::default()
        })
        .await
        .ok()?
        .into_inner();
    jobs.message()
        .await
        .ok()?
        .and_then(|r| r.jobs.into_iter().next())
}

/// Creates an instance of the latest `process_id` with `variables` (JSON text, "" for none):
/// its key.
pub async fn create_instance(c: &mut Client, process_id: &str, variables: &str) -> i64 {
    c.create_process_instance(proto::CreateProcessInstanceRequest {
        bpmn_process_id: process_id.into(),
        version: -1,
        variables: variables.into(),
        ..Default::default()
    })
    .await
    .expect("an instance is created")
    .into_inner()
    .process_instance_key
}

/// Creates an instance of one-task (`benchmark`) with the variables `n` and `order`
/// ("A-{n}"): its key.
pub async fn create_numbered(c: &mut Client, n: i64) -> i64 {
    let variables = serde_json::json!({"n": n, "order": format!("A-{n}")});
    create_instance(c, "benchmark", &variables.to_string()).await
}

/// Fails a job without retries left, with `message`: its element gets an incident.
pub async fn fail_to_incident(c: &mut Client, job_key: i64, message: &str) {
    c.fail_job(proto::FailJobRequest {
        job_key,
        retries: 0,
        error_message: message.into(),
        ..Default::default()
    })
    .await
    .expect("the job fails");
}

/// Completes a job without variables; completions are never refused.
pub async fn complete(c: &mut Client, job_key: i64) {
    c.complete_job(proto::CompleteJobRequest {
        job_key,
        variables: String::new(),
        result: None,
    })
    .await
    .expect("the job completes");
}

/// One HTTP/1.0 request: (status, parsed JSON body or Null).
/// The value of the metric line starting with `name` (labels included), if exported.
pub fn metric(management: &str, name: &str) -> Option<f64> {
    http_get(management, "/metrics")
        .lines()
        .find(|l| l.starts_with(name))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

pub fn http(
    addr: &str,
    method: &str,
    path: &str,
    body: Option<serde_json::Value>,
) -> (u16, serde_json::Value) {
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    http_with(addr, method, path, "application/json", body.as_bytes())
}

/// One HTTP/1.0 request with a body of `content_type` (Basic demo:demo, as c8ctl sends by
/// default, is accepted and ignored): (status, parsed JSON body or Null).
pub fn http_with(
    addr: &str,
    method: &str,
    path: &str,
    content_type: &str,
    body: &[u8],
) -> (u16, serde_json::Value) {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.0\r\nHost: {addr}\r\nAuthorization: Basic ZGVtbzpkZW1v\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .unwrap();
    s.write_all(body).unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let status = out
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let text = out.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or("");
    (
        status,
        serde_json::from_str(text).unwrap_or(serde_json::Value::Null),
    )
}

/// A multipart/form-data body of `resources` files (name, content) and text parts: (content
/// type, body).
pub fn multipart(files: &[(&str, &[u8])], texts: &[(&str, &str)]) -> (String, Vec<u8>) {
    let boundary = "zest-test-boundary-7d3f";
    let mut body = Vec::new();
    for (name, content) in files {
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"resources\"; filename=\"{name}\"\r\nContent-Type: application/octet-stream\r\n\r\n"
            )
            .as_bytes(),
        );
        body.extend_from_slice(content);
        body.extend_from_slice(b"\r\n");
    }
    for (name, value) in texts {
        body.extend_from_slice(
            format!("--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n")
                .as_bytes(),
        );
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

/// Deploys one resource over REST (`POST /v2/deployments`) and returns the DeploymentResult.
pub fn deploy_rest(rest: &str, name: &str, content: &[u8]) -> serde_json::Value {
    let (content_type, body) = multipart(&[(name, content)], &[]);
    let (status, answer) = http_with(rest, "POST", "/v2/deployments", &content_type, &body);
    assert_eq!(status, 200, "{name} deploys: {answer}");
    answer
}

/// Activates up to one job of `job_type` over REST, waiting up to 10 s for one.
pub fn activate_rest(rest: &str, job_type: &str) -> Option<serde_json::Value> {
    let (status, answer) = http(
        rest,
        "POST",
        "/v2/jobs/activation",
        Some(serde_json::json!({
            "type": job_type, "worker": "rest-test", "timeout": 60_000,
            "maxJobsToActivate": 1, "requestTimeout": 10_000,
        })),
    );
    assert_eq!(status, 200, "{answer}");
    answer["jobs"].as_array().unwrap().first().cloned()
}

/// A process with one service task of type `job_type`, id `process_id`.
pub fn service_task_bpmn(process_id: &str, job_type: &str) -> Vec<u8> {
    include_str!("../../../../tests/compat/testdata/one_task.bpmn")
        .replace("\"benchmark\"", &format!("\"{process_id}\""))
        .replace("benchmark-task", job_type)
        .into_bytes()
}

/// The page of the REST search `path` (`/v2/.../search`, or a statistics' path) for `body`;
/// asserts that it answers 200.
pub fn search(rest: &str, path: &str, body: serde_json::Value) -> serde_json::Value {
    let (status, page) = http(rest, "POST", path, Some(body));
    assert_eq!(status, 200, "{path}: {page}");
    page
}

/// A page's `totalItems`.
pub fn total(page: &serde_json::Value) -> i64 {
    page["page"]["totalItems"].as_i64().expect("totalItems")
}

/// The keys in `field` of a page's items, in the page's order.
pub fn keys(page: &serde_json::Value, field: &str) -> Vec<i64> {
    page["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| i[field].as_str().unwrap().parse().unwrap())
        .collect()
}

/// [`keys`] in ascending order.
pub fn sorted_keys(page: &serde_json::Value, field: &str) -> Vec<i64> {
    let mut keys = keys(page, field);
    keys.sort();
    keys
}

/// The page of the search `path` for `body` once it holds `n` items (history is eventually
/// consistent; up to 10 s).
pub fn wait_items(rest: &str, path: &str, body: serde_json::Value, n: usize) -> serde_json::Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let (status, page) = http(rest, "POST", path, Some(body.clone()));
        assert_eq!(status, 200, "{path}: {page}");
        if page["items"].as_array().map(Vec::len) == Some(n) {
            return page;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{path} {body}: {page}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
