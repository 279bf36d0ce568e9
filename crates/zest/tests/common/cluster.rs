//! Clusters for black-box tests: `zest cluster` (or `zest gateway`) started on a free block of
//! ports, killed with its nodes when the test ends.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// A child process killed (with its nodes, which watch its pid) when the test ends.
pub struct Killed(Child, Option<std::path::PathBuf>);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.0.id().to_string()])
            .status();
        let _ = self.0.wait();
        if let Some(dir) = &self.1 {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// Starts `zest` with `args` and returns it with the READY lines it printed (`count` of them).
pub fn start(
    args: &[String],
    count: usize,
    dir: Option<std::path::PathBuf>,
) -> (Killed, Vec<String>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_zest"))
        .args(args)
        .env("ZEST_LOG", "warn")
        .env("ZEST_CLUSTER_SECRET", super::CLUSTER_SECRET)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("zest starts");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    let child = Killed(child, dir);
    let mut ready = Vec::new();
    while ready.len() < count {
        let line = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("zest prints READY");
        if line.contains("READY ") && !line.starts_with("CLUSTER READY") {
            ready.push(line);
        }
    }
    (child, ready)
}

pub fn field(ready: &str, name: &str) -> String {
    ready
        .split_whitespace()
        .find_map(|w| w.strip_prefix(&format!("{name}=")))
        .unwrap_or_else(|| panic!("no {name}= in {ready}"))
        .to_string()
}

/// A `--port-offset` under which every port `zest cluster --nodes N` takes is free now: below
/// the ephemeral range, starting apart for test runs beside this one, and never one this
/// process handed out before (the tests of this file run at once and would find the same
/// block free).
pub fn free_port_offset(nodes: u32) -> u32 {
    static GIVEN: std::sync::Mutex<Vec<u32>> = std::sync::Mutex::new(Vec::new());
    let mut given = GIVEN.lock().unwrap_or_else(|e| e.into_inner());
    let free = |offset: u32| {
        (0..nodes).all(|i| {
            [8080, 9600, 26500, 26502].iter().all(|base| {
                let port = (base + 10 * i + offset) as u16;
                std::net::TcpListener::bind(("127.0.0.1", port)).is_ok()
            })
        })
    };
    let start = std::process::id() % 130;
    let offset = (0..130)
        .map(|k| 1000 + ((start + k) % 130) * 30)
        .find(|offset| !given.contains(offset) && free(*offset))
        .expect("a free block of ports");
    given.push(offset);
    offset
}
