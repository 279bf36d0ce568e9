//! Camunda 8.9's job statistics through the REST API v2 of a real `zest start` on two
//! partitions: jobs of two types created, completed, failed and ended by a thrown BPMN error
//! by two workers over REST, then the five endpoints' answers checked against what was done,
//! field by field as the 8.9 spec shapes them, with their cursor pages and their 400s.

mod common;

use common::{deploy_rest, http, service_task_bpmn, start_with};

use serde_json::{json, Value};

const FROM: &str = "2000-01-01T00:00:00.000Z";
const TO: &str = "2100-01-01T00:00:00.000Z";

fn post(rest: &str, path: &str, body: Value) -> Value {
    let (status, answer) = http(rest, "POST", path, Some(body));
    assert_eq!(status, 200, "{path}: {answer}");
    answer
}

/// Activates one job of `job_type` for `worker`: its key.
fn activate(rest: &str, job_type: &str, worker: &str) -> String {
    let answer = post(
        rest,
        "/v2/jobs/activation",
        json!({"type": job_type, "worker": worker, "timeout": 60_000,
               "maxJobsToActivate": 1, "requestTimeout": 10_000}),
    );
    answer["jobs"][0]["jobKey"]
        .as_str()
        .unwrap_or_else(|| panic!("a job of {job_type}: {answer}"))
        .to_string()
}

fn done(rest: &str, path: String, body: Value) {
    let (status, answer) = http(rest, "POST", &path, Some(body));
    assert_eq!(status, 204, "{path}: {answer}");
}

/// Camunda's StatusMetric: exactly `count` and `lastUpdatedAt` (a date-time, or null for
/// a count of 0).
fn metric(m: &Value) -> i64 {
    let keys: Vec<&String> = m.as_object().expect("a metric").keys().collect();
    assert_eq!(keys, ["count", "lastUpdatedAt"], "{m}");
    let count = m["count"].as_i64().expect("an integer count");
    match &m["lastUpdatedAt"] {
        Value::Null => assert_eq!(count, 0, "{m}"),
        Value::String(at) => {
            assert!(count > 0, "{m}");
            assert!(
                at.ends_with('Z') && at.len() == 24,
                "an ISO 8601 date-time: {at}"
            );
        }
        other => panic!("lastUpdatedAt: {other}"),
    }
    count
}

/// An item's fields, sorted, must be exactly `fields`.
fn fields(item: &Value, fields: &[&str]) {
    let mut keys: Vec<&str> = item
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    keys.sort_unstable();
    let mut want = fields.to_vec();
    want.sort_unstable();
    assert_eq!(keys, want, "{item}");
}

/// The page of a search answer: the spec's four fields.
fn page_fields(answer: &Value) {
    fields(
        &answer["page"],
        &[
            "totalItems",
            "hasMoreTotalItems",
            "startCursor",
            "endCursor",
        ],
    );
    fields(answer, &["items", "page"]);
}

/// The global statistics of `pay`, once they count what was done (export is eventually
/// consistent), for 20 s.
fn global_when_exported(rest: &str) -> Value {
    let path = format!("/v2/jobs/statistics/global?from={FROM}&to={TO}");
    for _ in 0..200 {
        let (status, g) = http(rest, "GET", &path, None);
        assert_eq!(status, 200, "{g}");
        if g["created"]["count"] == 7 && g["completed"]["count"] == 4 && g["failed"]["count"] == 2 {
            return g;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("the job statistics never counted the jobs");
}

#[test]
fn job_statistics_count_what_the_workers_did() {
    let node = start_with("job-statistics", &["--partitions", "2"]);
    let rest = node.rest.clone();
    deploy_rest(&rest, "pay.bpmn", &service_task_bpmn("pay", "pay"));
    deploy_rest(&rest, "ship.bpmn", &service_task_bpmn("ship", "ship"));
    for process in ["pay", "pay", "pay", "pay", "pay", "pay", "ship"] {
        post(
            &rest,
            "/v2/process-instances",
            json!({"processDefinitionId": process}),
        );
    }
    // pay: alpha completes three and fails one; beta throws an error; one is left waiting
    for _ in 0..3 {
        let key = activate(&rest, "pay", "alpha");
        done(&rest, format!("/v2/jobs/{key}/completion"), json!({}));
    }
    let key = activate(&rest, "pay", "alpha");
    done(
        &rest,
        format!("/v2/jobs/{key}/failure"),
        json!({"retries": 0, "errorMessage": "card declined"}),
    );
    let key = activate(&rest, "pay", "beta");
    done(
        &rest,
        format!("/v2/jobs/{key}/error"),
        json!({"errorCode": "NO_STOCK", "errorMessage": "out of stock"}),
    );
    let key = activate(&rest, "ship", "beta");
    done(&rest, format!("/v2/jobs/{key}/completion"), json!({}));

    // global
    let g = global_when_exported(&rest);
    fields(&g, &["created", "completed", "failed", "isIncomplete"]);
    assert_eq!(
        [
            metric(&g["created"]),
            metric(&g["completed"]),
            metric(&g["failed"])
        ],
        [7, 4, 2]
    );
    assert_eq!(g["isIncomplete"], false);
    let (status, pay) = http(
        &rest,
        "GET",
        &format!("/v2/jobs/statistics/global?from={FROM}&to={TO}&jobType=pay"),
        None,
    );
    assert_eq!(status, 200, "{pay}");
    assert_eq!(pay["created"]["count"], 6);
    assert_eq!(pay["completed"]["count"], 3);

    // by type, a page of one at a time
    let window = json!({"from": FROM, "to": TO});
    let first = post(
        &rest,
        "/v2/jobs/statistics/by-types",
        json!({"filter": window, "page": {"limit": 1}}),
    );
    page_fields(&first);
    assert_eq!(first["page"]["totalItems"], 2);
    assert_eq!(first["page"]["hasMoreTotalItems"], false);
    let item = &first["items"][0];
    fields(
        item,
        &["jobType", "created", "completed", "failed", "workers"],
    );
    assert_eq!(item["jobType"], "pay");
    assert_eq!(
        [
            metric(&item["created"]),
            metric(&item["completed"]),
            metric(&item["failed"])
        ],
        [6, 3, 2]
    );
    assert_eq!(item["workers"], 2);
    let second = post(
        &rest,
        "/v2/jobs/statistics/by-types",
        json!({"filter": window, "page": {"limit": 1, "after": first["page"]["endCursor"]}}),
    );
    assert_eq!(second["items"][0]["jobType"], "ship");
    assert_eq!(second["items"][0]["workers"], 1);
    let only = post(
        &rest,
        "/v2/jobs/statistics/by-types",
        json!({"filter": {"from": FROM, "to": TO, "jobType": {"$in": ["ship"]}}}),
    );
    assert_eq!(only["page"]["totalItems"], 1, "{only}");

    // by worker
    let by_worker = post(
        &rest,
        "/v2/jobs/statistics/by-workers",
        json!({"filter": {"from": FROM, "to": TO, "jobType": "pay"}}),
    );
    page_fields(&by_worker);
    let items = by_worker["items"].as_array().unwrap();
    assert_eq!(items.len(), 2, "{by_worker}");
    for item in items {
        fields(item, &["worker", "created", "completed", "failed"]);
    }
    assert_eq!(items[0]["worker"], "alpha");
    assert_eq!(metric(&items[0]["completed"]), 3);
    assert_eq!(metric(&items[0]["failed"]), 1);
    assert_eq!(items[1]["worker"], "beta");
    assert_eq!(metric(&items[1]["completed"]), 0);
    assert_eq!(metric(&items[1]["failed"]), 1);

    // over time: every job fell in a minute or two
    let series = post(
        &rest,
        "/v2/jobs/statistics/time-series",
        json!({"filter": {"from": FROM, "to": TO, "jobType": "pay", "resolution": "PT1M"}}),
    );
    page_fields(&series);
    let mut created = 0;
    for item in series["items"].as_array().unwrap() {
        fields(item, &["time", "created", "completed", "failed"]);
        assert!(
            item["time"].as_str().unwrap().ends_with(":00.000Z"),
            "{item}"
        );
        created += metric(&item["created"]);
    }
    assert_eq!(created, 6, "{series}");

    // errors
    let errors = post(
        &rest,
        "/v2/jobs/statistics/errors",
        json!({"filter": {"from": FROM, "to": TO, "jobType": "pay"}}),
    );
    page_fields(&errors);
    assert_eq!(
        errors["items"],
        json!([
            {"errorCode": "", "errorMessage": "card declined", "workers": 1},
            {"errorCode": "NO_STOCK", "errorMessage": "out of stock", "workers": 1},
        ])
    );

    // what is wrong is a 400 that names it
    let bad = [
        (
            "GET",
            "/v2/jobs/statistics/global?to=2100-01-01T00:00:00Z".to_string(),
            None,
            "from",
        ),
        (
            "GET",
            format!("/v2/jobs/statistics/global?from=yesterday&to={TO}"),
            None,
            "from",
        ),
        (
            "GET",
            format!("/v2/jobs/statistics/global?from={FROM}&to={TO}&x=1"),
            None,
            "'filter.x'",
        ),
        (
            "POST",
            "/v2/jobs/statistics/by-types".into(),
            Some(json!({})),
            "from",
        ),
        (
            "POST",
            "/v2/jobs/statistics/by-workers".into(),
            Some(json!({"filter": window})),
            "jobType",
        ),
        (
            "POST",
            "/v2/jobs/statistics/by-types".into(),
            Some(json!({"filter": window, "unknown": 1})),
            "unknown",
        ),
        (
            "POST",
            "/v2/jobs/statistics/time-series".into(),
            Some(
                json!({"filter": {"from": FROM, "to": TO, "jobType": "pay", "resolution": "hourly"}}),
            ),
            "resolution",
        ),
        (
            "POST",
            "/v2/jobs/statistics/errors".into(),
            Some(
                json!({"filter": {"from": FROM, "to": TO, "jobType": "pay"}, "page": {"after": "eA=="}}),
            ),
            "page.after",
        ),
    ];
    for (method, path, body, named) in bad {
        let (status, problem) = http(&rest, method, &path, body.clone());
        assert_eq!(status, 400, "{path} {body:?}: {problem}");
        let detail = problem["detail"].as_str().unwrap_or_default();
        assert!(detail.contains(named), "{path}: {problem}");
    }
}

#[test]
fn without_history_the_job_statistics_answer_403() {
    let node = start_with("job-statistics-off", &["--history", "off"]);
    let (status, problem) = http(
        &node.rest,
        "GET",
        &format!("/v2/jobs/statistics/global?from={FROM}&to={TO}"),
        None,
    );
    assert_eq!(status, 403, "{problem}");
    let (status, problem) = http(
        &node.rest,
        "POST",
        "/v2/jobs/statistics/by-types",
        Some(json!({"filter": {"from": FROM, "to": TO}})),
    );
    assert_eq!(status, 403, "{problem}");
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("secondary storage"),
        "{problem}"
    );
}
