//! `GET /v2/system/usage-metrics` through a real `zest start` (two partitions): root
//! instances started, decisions evaluated and distinct assignees (one user assigned twice
//! counts once) in `[startTime, endTime)`, per tenant; windows that include and exclude
//! them; the 400s of missing or malformed parameters.

mod common;

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::{deploy_rest, http, start_with};
use serde_json::{json, Value};

const BPMN: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="defs" targetNamespace="http://bpmn.io/schema/bpmn">
  <bpmn:process id="usage" isExecutable="true">
    <bpmn:startEvent id="start" />
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="check" />
    <bpmn:userTask id="check">
      <bpmn:extensionElements><zeebe:userTask /></bpmn:extensionElements>
    </bpmn:userTask>
    <bpmn:sequenceFlow id="f2" sourceRef="check" targetRef="end" />
    <bpmn:endEvent id="end" />
  </bpmn:process>
</bpmn:definitions>"#;

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// An RFC 3339 date-time of epoch ms, in UTC.
fn iso(ms: i64) -> String {
    let (days, rest) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    // civil date of days since 1970-01-01 (Howard Hinnant's algorithm)
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    let (h, min, s, milli) = (
        rest / 3_600_000,
        rest / 60_000 % 60,
        rest / 1000 % 60,
        rest % 1000,
    );
    format!("{y:04}-{m:02}-{d:02}T{h:02}:{min:02}:{s:02}.{milli:03}Z")
}

fn metrics(rest: &str, from: i64, to: i64, extra: &str) -> Value {
    let path = format!(
        "/v2/system/usage-metrics?startTime={}&endTime={}{extra}",
        iso(from),
        iso(to)
    );
    let (status, body) = http(rest, "GET", &path, None);
    assert_eq!(status, 200, "{path}: {body}");
    body
}

/// The figures of [from, to) once they are `expected` (history is eventually consistent).
fn wait_for(rest: &str, from: i64, to: i64, expected: Value) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let got = metrics(rest, from, to, "&withTenants=true");
        if got == expected {
            return;
        }
        assert!(Instant::now() < deadline, "expected {expected}, got {got}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn tasks(rest: &str, n: usize) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (status, page) = http(
            rest,
            "POST",
            "/v2/user-tasks/search",
            Some(json!({"filter": {"state": "CREATED"}})),
        );
        assert_eq!(status, 200, "{page}");
        let keys: Vec<String> = page["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["userTaskKey"].as_str().unwrap().to_string())
            .collect();
        if keys.len() >= n {
            return keys;
        }
        assert!(Instant::now() < deadline, "{page}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn assign(rest: &str, task: &str, user: &str) {
    let path = format!("/v2/user-tasks/{task}/assignment");
    let (status, body) = http(rest, "POST", &path, Some(json!({"assignee": user})));
    assert_eq!(status, 204, "{body}");
}

fn create(rest: &str) {
    let (status, body) = http(
        rest,
        "POST",
        "/v2/process-instances",
        Some(json!({"processDefinitionId": "usage"})),
    );
    assert_eq!(status, 200, "{body}");
}

fn evaluate(rest: &str) {
    let (status, body) = http(
        rest,
        "POST",
        "/v2/decision-definitions/evaluation",
        Some(
            json!({"decisionDefinitionId": "discount", "variables": {"customer": "gold", "amount": 200}}),
        ),
    );
    assert_eq!(status, 200, "{body}");
}

fn figures(pi: i64, di: i64, assignees: i64) -> Value {
    let tenants = if pi + di + assignees > 0 {
        json!({"<default>": {"processInstances": pi, "decisionInstances": di, "assignees": assignees}})
    } else {
        json!({})
    };
    json!({
        "processInstances": pi, "decisionInstances": di, "assignees": assignees,
        "activeTenants": i64::from(pi + di + assignees > 0), "tenants": tenants,
    })
}

#[test]
fn the_figures_count_what_happened_in_the_window() {
    let node = start_with("usage-metrics", &["--partitions", "2"]);
    let rest = node.rest.clone();
    deploy_rest(&rest, "usage.bpmn", BPMN.as_bytes());
    deploy_rest(
        &rest,
        "pricing.dmn",
        include_bytes!("../../../tests/compat/testdata/pricing.dmn"),
    );
    let before = now();
    std::thread::sleep(Duration::from_millis(20));
    // first half: three instances, two evaluations, mary assigned
    for _ in 0..3 {
        create(&rest);
    }
    evaluate(&rest);
    evaluate(&rest);
    let keys = tasks(&rest, 3);
    assign(&rest, &keys[0], "mary");
    wait_for(&rest, before, now() + 1, figures(3, 2, 1));
    std::thread::sleep(Duration::from_millis(20));
    let mid = now();
    std::thread::sleep(Duration::from_millis(20));
    // second half: one instance, one evaluation, mary again (another task) and john
    create(&rest);
    evaluate(&rest);
    assign(&rest, &keys[1], "mary");
    assign(&rest, &keys[2], "john");
    std::thread::sleep(Duration::from_millis(20));
    let after = now();
    wait_for(&rest, before, after, figures(4, 3, 2));
    // each half alone: mary counts in both, once in each
    wait_for(&rest, before, mid, figures(3, 2, 1));
    wait_for(&rest, mid, after, figures(1, 1, 2));
    // windows that hold nothing: before everything, after everything, empty
    wait_for(&rest, before - 3_600_000, before, figures(0, 0, 0));
    wait_for(&rest, after, after + 3_600_000, figures(0, 0, 0));
    wait_for(&rest, mid, mid, figures(0, 0, 0));
    // without withTenants: no breakdown; one tenant; a tenant with nothing
    let all = metrics(&rest, before, after, "");
    assert_eq!(
        (&all["processInstances"], &all["assignees"], &all["tenants"]),
        (&json!(4), &json!(2), &json!({})),
        "{all}"
    );
    let default = metrics(
        &rest,
        before,
        after,
        "&tenantId=%3Cdefault%3E&withTenants=true",
    );
    assert_eq!(default, figures(4, 3, 2));
    let other = metrics(&rest, before, after, "&tenantId=acme&withTenants=true");
    assert_eq!(other, figures(0, 0, 0));
}

#[test]
fn missing_or_malformed_parameters_are_400_problems() {
    let node = start_with("usage-metrics-bad", &[]);
    let path = "/v2/system/usage-metrics";
    let good = "startTime=2025-06-07T13:14:15Z&endTime=2025-06-08T13:14:15Z";
    for (query, names) in [
        ("", "startTime"),
        ("startTime=2025-06-07T13:14:15Z", "endTime"),
        (
            "startTime=yesterday&endTime=2025-06-08T13:14:15Z",
            "startTime",
        ),
        (
            "startTime=2025-06-07T13:14:15Z&endTime=2025-13-08",
            "endTime",
        ),
        (
            "startTime=2025-06-08T13:14:15Z&endTime=2025-06-07T13:14:15Z",
            "startTime",
        ),
        (&format!("{good}&withTenants=yes") as &str, "withTenants"),
        (&format!("{good}&tenantId=a%20b") as &str, "tenantId"),
    ] {
        let (status, problem) = http(&node.rest, "GET", &format!("{path}?{query}"), None);
        assert_eq!(status, 400, "{query}: {problem}");
        assert_eq!(problem["title"], "INVALID_ARGUMENT", "{problem}");
        assert!(
            problem["detail"].as_str().unwrap().contains(names),
            "{query}: {problem}"
        );
    }
    // Camunda's documentation writes the offset without its colon
    let (status, body) = http(
        &node.rest,
        "GET",
        &format!(
            "{path}?startTime=2025-09-16T12:30:45.123%2B0000&endTime=2025-09-17T12:30:45.123%2B0000"
        ),
        None,
    );
    assert_eq!(
        (status, &body["processInstances"]),
        (200, &json!(0)),
        "{body}"
    );
}

#[test]
fn without_history_usage_metrics_answer_403() {
    let node = start_with("usage-metrics-off", &["--history", "off"]);
    let (status, problem) = http(
        &node.rest,
        "GET",
        "/v2/system/usage-metrics?startTime=2025-06-07T13:14:15Z&endTime=2025-06-08T13:14:15Z",
        None,
    );
    assert_eq!(status, 403, "{problem}");
}
