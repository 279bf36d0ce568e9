//! The README's quick start, run as written: the lines between `<!-- quick-start -->` and
//! `<!-- /quick-start -->`, each through `sh -c` from the repository root with this build's
//! `zest` first on PATH, as a new user would paste them.
//!
//! Two lines are the harness's: `cargo install --path crates/zest` (the test checks that the path
//! is the zest crate, and uses the binary cargo built for the test instead of installing one)
//! and `zest start &` (started on free ports with a temporary data directory, as every test
//! node is; the other commands find it through `ZEEBE_ADDRESS`, as zbctl's users do). Every
//! other line must exit with status 0; a line ending in `&` runs in the background until the
//! end. The last line's output must show what the README says it prints: the decision's
//! discount, the total computed from it, and the worker's `paid`.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The quick start's command lines (comments and blank lines left out).
fn quick_start() -> Vec<String> {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let start = readme
        .find("<!-- quick-start -->")
        .expect("README.md has a <!-- quick-start --> block");
    let end = readme
        .find("<!-- /quick-start -->")
        .expect("README.md closes its quick-start block");
    let block = &readme[start..end];
    let body = block
        .split("```sh")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("the quick start is a ```sh block");
    body.lines()
        .map(without_comment)
        .filter(|l| !l.is_empty())
        .collect()
}

/// A line without its trailing `# comment` (a `#` after whitespace, outside quotes).
fn without_comment(line: &str) -> String {
    let mut quote = None;
    let mut prev = ' ';
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '#') if prev.is_whitespace() => return line[..i].trim().to_string(),
            _ => {}
        }
        prev = c;
    }
    line.trim().to_string()
}

fn shell(line: &str, node: &common::Node) -> Command {
    let bin = Path::new(env!("CARGO_BIN_EXE_zest")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = Command::new("sh");
    cmd.args(["-c", line])
        .current_dir(root())
        .env("PATH", path)
        .env("ZEEBE_ADDRESS", &node.gateway)
        .env_remove("ZEEBE_HOST")
        .env_remove("ZEEBE_PORT");
    cmd
}

/// Runs a foreground line, bounded by a minute.
fn run(line: &str, node: &common::Node) -> Output {
    let mut child = shell(line, node)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("`{line}` still runs after 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

struct Background(Vec<Child>);

impl Drop for Background {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

#[test]
fn the_quick_start_runs_as_written() {
    let lines = quick_start();
    assert!(lines.len() >= 4, "a quick start of a few lines: {lines:?}");
    let mut node = None;
    let mut background = Background(Vec::new());
    let mut last = None;
    for line in &lines {
        if let Some(rest) = line.strip_prefix("cargo install") {
            let path = rest
                .split_whitespace()
                .skip_while(|w| *w != "--path")
                .nth(1)
                .expect("cargo install --path <crate>");
            let manifest = std::fs::read_to_string(root().join(path).join("Cargo.toml"))
                .expect("the path of `cargo install` is a crate");
            assert!(
                manifest.contains("name = \"zest\""),
                "{path} is the zest crate"
            );
            continue;
        }
        if line == "zest start &" || line == "zest start" {
            node = Some(common::start("readme"));
            continue;
        }
        let node = node
            .as_ref()
            .unwrap_or_else(|| panic!("`{line}` comes before `zest start`"));
        if let Some(command) = line.strip_suffix('&') {
            // `exec`: the command replaces the shell, so that killing it at the end kills it
            let child = shell(&format!("exec {}", command.trim()), node)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            background.0.push(child);
            continue;
        }
        let out = run(line, node);
        assert!(
            out.status.success(),
            "`{line}` failed ({}):\n{}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        last = Some(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    let last = last.expect("the quick start runs a command");
    let response: serde_json::Value =
        serde_json::from_str(&last).unwrap_or_else(|e| panic!("{e}: {last}"));
    let variables: serde_json::Value =
        serde_json::from_str(response["variables"].as_str().unwrap_or("null")).unwrap();
    assert_eq!(
        variables["paid"], true,
        "the worker completed the payment: {last}"
    );
    assert_eq!(
        variables["discount"], 0.2,
        "the decision gave the discount: {last}"
    );
    // the README: "the `total` that the business rule task's output mapping computes from it
    // (`amount * (1 - discount)`: 96)"
    assert_eq!(
        variables["total"], 96,
        "the total the discount gives is an instance variable: {last}"
    );
    // every background command was still running: none failed early
    for child in &mut background.0 {
        assert!(
            child.try_wait().unwrap().is_none(),
            "a background command of the quick start exited early"
        );
    }
}

#[test]
fn comments_are_cut_outside_quotes_only() {
    assert_eq!(without_comment("zest status   # hello"), "zest status");
    assert_eq!(
        without_comment(r##"zest x --variables '{"a": "#1"}' # c"##),
        r##"zest x --variables '{"a": "#1"}'"##
    );
    assert_eq!(without_comment("# only a comment"), "");
}
