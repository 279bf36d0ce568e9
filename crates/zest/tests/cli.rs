//! The `zest` CLI against a real `zest start`: zbctl's commands beyond those the zbctl suite
//! (tests/compat, run with the zest binary as zbctl) covers, the examples shipped in
//! `examples/`, and one clear line on stderr for every failure.

mod common;

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{start, Node};

fn examples() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

struct Out {
    ok: bool,
    stdout: String,
    stderr: String,
}

/// Runs `zest ARGS --address GATEWAY`.
fn zest(node: &Node, args: &[&str]) -> Out {
    zest_at(&node.gateway, args)
}

fn zest_at(address: &str, args: &[&str]) -> Out {
    let out = Command::new(env!("CARGO_BIN_EXE_zest"))
        .args(args)
        .args(["--address", address])
        .env_remove("ZEEBE_ADDRESS")
        .env("RUST_BACKTRACE", "1")
        .output()
        .expect("zest runs");
    Out {
        ok: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn ok(node: &Node, args: &[&str]) -> serde_json::Value {
    let out = zest(node, args);
    assert!(
        out.ok,
        "zest {args:?} failed:\n{}\n{}",
        out.stdout, out.stderr
    );
    serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("zest {args:?} printed no JSON ({e}):\n{}", out.stdout))
}

fn ok_text(node: &Node, args: &[&str]) -> String {
    let out = zest(node, args);
    assert!(
        out.ok,
        "zest {args:?} failed:\n{}\n{}",
        out.stdout, out.stderr
    );
    out.stdout
}

/// A failure: exit status 1, nothing on stdout, one line on stderr (no backtrace, even with
/// RUST_BACKTRACE=1).
fn fails(node_or_addr: &str, args: &[&str]) -> String {
    let out = zest_at(node_or_addr, args);
    assert!(!out.ok, "zest {args:?} succeeded: {}", out.stdout);
    assert_eq!(out.stdout, "", "zest {args:?}");
    assert_eq!(
        out.stderr.lines().count(),
        1,
        "zest {args:?}: one line on stderr:\n{}",
        out.stderr
    );
    assert!(out.stderr.starts_with("Error: "), "{}", out.stderr);
    out.stderr
}

fn key(v: &serde_json::Value) -> String {
    v.as_str()
        .map(String::from)
        .unwrap_or_else(|| v.to_string())
}

fn path(file: &str) -> String {
    examples().join(file).to_string_lossy().into_owned()
}

/// Polls `activate jobs TYPE` until it gives one job.
fn activate_one(node: &Node, job_type: &str) -> serde_json::Value {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let r = ok(
            node,
            &["activate", "jobs", job_type, "--requestTimeout", "2s"],
        );
        if let Some(job) = r["jobs"].as_array().and_then(|j| j.first()) {
            return job.clone();
        }
        assert!(Instant::now() < deadline, "no job of type {job_type}");
    }
}

#[test]
fn the_examples_run_through_the_cli() {
    let node = start("cli-examples");
    // one deployment of a process, a decision and a form: the whole response is printed
    let d = ok(
        &node,
        &[
            "deploy",
            &path("order.bpmn"),
            &path("discount.dmn"),
            &path("review.form"),
            &path("review.bpmn"),
        ],
    );
    let kinds: Vec<&str> = d["deployments"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d.as_object()?.keys().next().map(String::as_str))
        .collect();
    for kind in ["process", "decision", "decisionRequirements", "form"] {
        assert!(kinds.contains(&kind), "{kind} missing in {d}");
    }

    // a decision on its own
    let e = ok(
        &node,
        &[
            "evaluate",
            "decision",
            "discount",
            "--variables",
            r#"{"customer": "gold", "amount": 120}"#,
        ],
    );
    assert_eq!(e["decisionOutput"], "0.2", "{e}");
    assert_eq!(
        e["evaluatedDecisions"][0]["matchedRules"][0]["ruleId"],
        "gold_large"
    );

    // an instance, its job taken by `activate jobs` and completed
    let i = ok(
        &node,
        &[
            "create",
            "instance",
            "order",
            "--variables",
            r#"{"customer": "gold", "amount": 120}"#,
        ],
    );
    let job = activate_one(&node, "payment");
    assert_eq!(job["processInstanceKey"], i["processInstanceKey"]);
    let vars: serde_json::Value = serde_json::from_str(job["variables"].as_str().unwrap()).unwrap();
    assert_eq!(
        vars["total"], 96.0,
        "the output mapping computed the total from the decision's result"
    );
    assert_eq!(vars["discount"], 0.2);
    let done = ok_text(&node, &["complete", "job", &key(&job["key"])]);
    assert!(done.starts_with("Completed job with key"), "{done}");

    // the same with a worker that runs examples/pay.sh, and --withResult waiting for it
    let mut worker = Command::new(env!("CARGO_BIN_EXE_zest"))
        .args(["create", "worker", "payment", "--handler", &path("pay.sh")])
        .args(["--address", &node.gateway, "--maxJobsHandle", "1"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let r = ok(
        &node,
        &[
            "create",
            "instance",
            "order",
            "--variables",
            r#"{"customer": "silver", "amount": 10}"#,
            "--withResult",
            "--requestTimeout",
            "20s",
        ],
    );
    let result: serde_json::Value = serde_json::from_str(r["variables"].as_str().unwrap()).unwrap();
    assert_eq!(result["paid"], true, "{r}");
    assert_eq!(result["discount"], 0);
    let status = worker.wait().unwrap();
    assert!(
        status.success(),
        "the worker exits after --maxJobsHandle jobs"
    );
    let mut log = String::new();
    std::io::Read::read_to_string(&mut worker.stderr.take().unwrap(), &mut log).unwrap();
    assert!(log.contains("Activated job"), "{log}");
    assert!(log.contains("Handler completed job"), "{log}");
}

#[test]
fn messages_signals_errors_timeouts_and_deletion() {
    let node = start("cli-commands");
    let dir = std::env::temp_dir().join(format!("zest-cli-models-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let model = dir.join("flow.bpmn");
    std::fs::write(&model, FLOW).unwrap();
    let d = ok(&node, &["deploy", "resource", model.to_str().unwrap()]);
    let definition = key(&d["deployments"][0]["process"]["processDefinitionKey"]);

    // a message correlates to the waiting instance
    let i = ok(
        &node,
        &[
            "create",
            "instance",
            "flow",
            "--variables",
            r#"{"id": "o-1"}"#,
        ],
    );
    let m = ok(
        &node,
        &[
            "publish",
            "message",
            "go on",
            "--correlationKey",
            "o-1",
            "--variables",
            r#"{"from": "message"}"#,
            "--ttl",
            "1m",
        ],
    );
    assert!(key(&m["key"]).parse::<i64>().unwrap() > 0, "{m}");

    // the job after it: its timeout updated, then an error thrown and caught
    let job = activate_one(&node, "cli-work");
    assert_eq!(job["processInstanceKey"], i["processInstanceKey"]);
    let vars: serde_json::Value = serde_json::from_str(job["variables"].as_str().unwrap()).unwrap();
    assert_eq!(vars["from"], "message");
    let t = ok_text(
        &node,
        &["update", "timeout", &key(&job["key"]), "--timeout", "10m"],
    );
    assert!(t.contains("10m0s"), "{t}");
    let e = ok_text(
        &node,
        &[
            "throw",
            "error",
            &key(&job["key"]),
            "--errorCode",
            "FAILED",
            "--errorMessage",
            "no stock",
        ],
    );
    assert!(e.starts_with("Threw error with code 'FAILED'"), "{e}");
    // the error boundary event leads to a second job
    let handled = activate_one(&node, "cli-handle");
    assert_eq!(handled["processInstanceKey"], i["processInstanceKey"]);
    ok_text(&node, &["complete", "job", &key(&handled["key"])]);

    // a signal starts an instance of the signal start event
    let s = ok(
        &node,
        &[
            "broadcast",
            "signal",
            "start flow",
            "--variables",
            r#"{"id": "o-2"}"#,
        ],
    );
    assert!(key(&s["key"]).parse::<i64>().unwrap() > 0, "{s}");

    // the process version cannot be deleted while instances run; cancel them first
    let refused = fails(&node.gateway, &["delete", "resource", &definition]);
    assert!(refused.contains("code = FailedPrecondition"), "{refused}");

    // --output json for the commands with a human line
    let other = ok(
        &node,
        &[
            "create",
            "instance",
            "flow",
            "--variables",
            r#"{"id": "o-3"}"#,
        ],
    );
    let c = ok(
        &node,
        &[
            "cancel",
            "instance",
            &key(&other["processInstanceKey"]),
            "-o",
            "json",
        ],
    );
    assert!(c.is_object(), "{c}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn failures_are_one_clear_line() {
    let node = start("cli-failures");
    // the server's rejection, with the gRPC status in zbctl's words
    let e = fails(&node.gateway, &["cancel", "instance", "2251799813685249"]);
    assert!(e.contains("code = NotFound"), "{e}");
    // bad input is refused before anything is sent
    let e = fails(
        &node.gateway,
        &["create", "instance", "x", "--variables", "[1]"],
    );
    assert!(e.contains("JSON object"), "{e}");
    let e = fails(&node.gateway, &["deploy", "/no/such/file.bpmn"]);
    assert!(e.contains("/no/such/file.bpmn"), "{e}");
    // the wrong port: the CLI says what it reached and where the gateway is
    let e = fails(&node.rest, &["status"]);
    assert!(e.contains("REST API") && e.contains(&node.gateway), "{e}");
    let e = fails(&node.management, &["status"]);
    assert!(e.contains("management port"), "{e}");
    // nothing listening
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let closed = free.local_addr().unwrap().to_string();
    drop(free);
    let e = fails(&closed, &["status"]);
    assert!(e.contains("cannot connect") && e.contains(&closed), "{e}");
    // a peer that accepts TCP and never answers: the connect timeout ends the wait
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_addr = silent.local_addr().unwrap().to_string();
    let started = Instant::now();
    let e = fails(&silent_addr, &["status", "--requestTimeout", "1s"]);
    assert!(started.elapsed() < Duration::from_secs(30), "{e}");
    drop(silent);
    // create --withResult with no worker: the request timeout ends it, and says so
    let model = std::env::temp_dir().join(format!("zest-cli-order-{}.bpmn", std::process::id()));
    std::fs::write(
        &model,
        std::fs::read(examples().join("order.bpmn")).unwrap(),
    )
    .unwrap();
    ok(
        &node,
        &["deploy", model.to_str().unwrap(), &path("discount.dmn")],
    );
    let e = fails(
        &node.gateway,
        &[
            "create",
            "instance",
            "order",
            "--variables",
            r#"{"customer": "x", "amount": 1}"#,
            "--withResult",
            "--requestTimeout",
            "1s",
        ],
    );
    assert!(
        e.contains("DeadlineExceeded") && e.contains("--requestTimeout"),
        "{e}"
    );
    let _ = std::fs::remove_file(model);
}

#[test]
fn every_command_has_an_example_in_its_help() {
    let help = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_zest"))
            .args(args)
            .arg("--help")
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?} --help");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert!(help(&[]).contains("Examples:"));
    for cmd in [
        vec!["deploy"],
        vec!["deploy", "resource"],
        vec!["create"],
        vec!["create", "instance"],
        vec!["create", "worker"],
        vec!["cancel", "instance"],
        vec!["set", "variables"],
        vec!["publish", "message"],
        vec!["broadcast", "signal"],
        vec!["activate", "jobs"],
        vec!["complete", "job"],
        vec!["fail", "job"],
        vec!["throw", "error"],
        vec!["update", "retries"],
        vec!["update", "timeout"],
        vec!["resolve", "incident"],
        vec!["evaluate", "decision"],
        vec!["delete", "resource"],
        vec!["status"],
        vec!["start"],
        vec!["bench"],
    ] {
        let text = help(&cmd);
        assert!(
            text.contains("Example"),
            "zest {cmd:?} --help has no example:\n{text}"
        );
    }
    let start = help(&["start"]);
    assert!(
        start.contains("info,openraft=warn"),
        "the --log default is the real one:\n{start}"
    );
    let deploy = help(&["deploy"]);
    assert!(
        deploy.contains(".dmn") && deploy.contains(".form"),
        "{deploy}"
    );
    // stdin is never read by a command that does not need it
    let mut child = Command::new(env!("CARGO_BIN_EXE_zest"))
        .arg("version")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdin.take().map(|mut s| s.write_all(b"x")));
    let out = child.wait_with_output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("zest "));
}

/// A message catch, a task with an error boundary event, and a signal start event.
const FLOW: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="t">
  <bpmn:message id="msg" name="go on">
    <bpmn:extensionElements><zeebe:subscription correlationKey="=id" /></bpmn:extensionElements>
  </bpmn:message>
  <bpmn:signal id="sig" name="start flow" />
  <bpmn:error id="err" errorCode="FAILED" />
  <bpmn:process id="flow" isExecutable="true">
    <bpmn:startEvent id="start" />
    <bpmn:startEvent id="signal_start"><bpmn:signalEventDefinition signalRef="sig" /></bpmn:startEvent>
    <bpmn:sequenceFlow id="f0" sourceRef="signal_start" targetRef="wait" />
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="wait" />
    <bpmn:intermediateCatchEvent id="wait"><bpmn:messageEventDefinition messageRef="msg" /></bpmn:intermediateCatchEvent>
    <bpmn:sequenceFlow id="f2" sourceRef="wait" targetRef="work" />
    <bpmn:serviceTask id="work"><bpmn:extensionElements><zeebe:taskDefinition type="cli-work" /></bpmn:extensionElements></bpmn:serviceTask>
    <bpmn:boundaryEvent id="failed" attachedToRef="work"><bpmn:errorEventDefinition errorRef="err" /></bpmn:boundaryEvent>
    <bpmn:sequenceFlow id="f3" sourceRef="work" targetRef="end" />
    <bpmn:sequenceFlow id="f4" sourceRef="failed" targetRef="handle" />
    <bpmn:serviceTask id="handle"><bpmn:extensionElements><zeebe:taskDefinition type="cli-handle" /></bpmn:extensionElements></bpmn:serviceTask>
    <bpmn:sequenceFlow id="f5" sourceRef="handle" targetRef="end2" />
    <bpmn:endEvent id="end" />
    <bpmn:endEvent id="end2" />
  </bpmn:process>
</bpmn:definitions>
"#;
