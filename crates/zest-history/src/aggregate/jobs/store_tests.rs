//! The job statistics over a store (SQLite, or PostgreSQL with `ZEST_HISTORY_TEST_POSTGRES`):
//! JOB records exported on two partitions, every statistics' counts, windows, buckets and
//! pages, exactness under a batch exported twice, and retention.

use serde_json::{json, Value};
use zest_protocol::{Intent, JobRecord, RecordValue};

use crate::aggregate::{Aggregate, AggregateKind, Groups};
use crate::tests::{event, open};
use crate::History;

use super::Of;

/// 2025-01-01T00:00:00Z, the tests' epoch.
const T0: i64 = 1_735_689_600_000;
const MIN: i64 = 60_000;

/// A JOB event of `partition` at `T0 + at` ms.
fn job(
    partition: u32,
    position: u64,
    key: i64,
    at: i64,
    intent: Intent,
    (job_type, worker, code, message): (&str, &str, &str, &str),
) -> zest_protocol::Record {
    let mut r = event(
        position,
        key,
        intent,
        RecordValue::Job(Box::new(JobRecord {
            job_type: job_type.into(),
            worker: worker.into(),
            error_code: code.into(),
            error_message: message.into(),
            tenant_id: "<default>".into(),
            ..Default::default()
        })),
    );
    r.partition_id = partition;
    r.timestamp = T0 + at;
    r
}

/// Partition 1: three `pay` jobs created in minute 0, two completed by w1 in minute 1, one
/// failed by w2 ("boom") in minute 2, one error E1 thrown by w1 in minute 3, and one timed out
/// at w1 in minute 4 (failed, not an error); a yield (not counted) in minute 5. Partition 2: a `pay` job created in minute 0 and failed by w1
/// ("boom") in minute 2, a `ship` job created in minute 0 and completed by w3 in minute 5.
fn export(h: &History) {
    let pay = |w: &'static str| ("pay", w, "", "");
    let one = vec![
        job(1, 1, 1, 0, Intent::Created, pay("")),
        job(1, 2, 2, 10_000, Intent::Created, pay("")),
        job(1, 3, 3, 20_000, Intent::Created, pay("")),
        job(1, 4, 1, MIN + 1_000, Intent::Completed, pay("w1")),
        job(1, 5, 2, MIN + 2_000, Intent::Completed, pay("w1")),
        job(1, 6, 3, 2 * MIN, Intent::Failed, ("pay", "w2", "", "boom")),
        job(
            1,
            7,
            3,
            3 * MIN + 5,
            Intent::ErrorThrown,
            ("pay", "w1", "E1", "bad"),
        ),
        job(1, 8, 3, 4 * MIN, Intent::TimedOut, pay("w1")),
        job(1, 9, 3, 5 * MIN, Intent::Yielded, pay("w1")),
    ];
    // delivered in two batches, the second one twice (at least once): counted once
    h.export(1, &one[..5], 5).unwrap();
    h.export(1, &one[3..], 9).unwrap();
    h.export(1, &one, 9).unwrap();
    let two = vec![
        job(2, 1, 11, 30_000, Intent::Created, pay("")),
        job(2, 2, 12, 40_000, Intent::Created, ("ship", "", "", "")),
        job(
            2,
            3,
            11,
            2 * MIN + 7,
            Intent::Failed,
            ("pay", "w1", "", "boom"),
        ),
        job(2, 4, 12, 5 * MIN, Intent::Completed, ("ship", "w3", "", "")),
    ];
    h.export(2, &two, 4).unwrap();
}

fn iso(ms: i64) -> String {
    super::iso(T0 + ms).as_str().unwrap().to_string()
}

fn window(from: i64, to: i64) -> Value {
    json!({"from": iso(from), "to": iso(to)})
}

/// The answer to `body`, read once from the whole store and once per partition then summed
/// (the path over a cluster): both must be the same.
fn ask(h: &History, of: Of, body: Value) -> Value {
    let a = Aggregate::of_request(AggregateKind::Jobs(of), &body).unwrap();
    let whole = super::super::page(&a, vec![h.aggregate(&a, None).unwrap()], &body).unwrap();
    let parts: Vec<Groups> = [1, 2]
        .iter()
        .map(|p| h.aggregate(&a, Some(&[*p])).unwrap())
        .collect();
    let split = super::super::page(&a, parts, &body).unwrap();
    assert_eq!(whole, split, "{body}");
    whole
}

fn metric(count: i64, last: Option<i64>) -> Value {
    json!({"count": count, "lastUpdatedAt": last.map(iso)})
}

#[test]
fn global_statistics_count_each_job_event_once_in_the_window() {
    let (_dir, h) = open("jobs_global");
    export(&h);
    let all = ask(&h, Of::Global, json!({"filter": window(0, 60 * MIN)}));
    assert_eq!(
        all,
        json!({
            "created": metric(5, Some(40_000)),
            "completed": metric(3, Some(5 * MIN)),
            "failed": metric(4, Some(4 * MIN)),
            "isIncomplete": false,
        })
    );
    let mut pay = window(0, 60 * MIN);
    pay["jobType"] = json!("pay");
    let pay = ask(&h, Of::Global, json!({"filter": pay}));
    assert_eq!(pay["created"], metric(4, Some(30_000)));
    assert_eq!(pay["completed"], metric(2, Some(MIN + 2_000)));
    // from inside minute 1 counts minute 1 whole; to is exclusive
    let later = ask(
        &h,
        Of::Global,
        json!({"filter": window(MIN + 30_000, 3 * MIN)}),
    );
    assert_eq!(later["created"], metric(0, None));
    assert_eq!(later["completed"], metric(2, Some(MIN + 2_000)));
    assert_eq!(later["failed"], metric(2, Some(2 * MIN + 7)));
    let none = ask(
        &h,
        Of::Global,
        json!({"filter": window(10 * MIN, 20 * MIN)}),
    );
    assert_eq!(none["created"], metric(0, None));
}

#[test]
fn type_statistics_count_distinct_workers_and_page_by_cursor() {
    let (_dir, h) = open("jobs_types");
    export(&h);
    let body = json!({"filter": window(0, 60 * MIN), "page": {"limit": 1}});
    let first = ask(&h, Of::Types, body);
    assert_eq!(first["page"]["totalItems"], 2);
    assert_eq!(first["page"]["hasMoreTotalItems"], false);
    assert_eq!(
        first["items"],
        json!([{
            "jobType": "pay",
            "created": metric(4, Some(30_000)),
            "completed": metric(2, Some(MIN + 2_000)),
            "failed": metric(4, Some(4 * MIN)),
            "workers": 2,
        }])
    );
    let after = first["page"]["endCursor"].clone();
    let body = json!({"filter": window(0, 60 * MIN), "page": {"limit": 1, "after": after}});
    let second = ask(&h, Of::Types, body);
    assert_eq!(second["items"][0]["jobType"], "ship");
    assert_eq!(second["items"][0]["workers"], 1);
    assert_eq!(second["items"][0]["completed"], metric(1, Some(5 * MIN)));
    let body =
        json!({"filter": window(0, 60 * MIN), "page": {"after": second["page"]["endCursor"]}});
    let third = ask(&h, Of::Types, body);
    assert_eq!(third["items"], json!([]));
    assert_eq!(third["page"]["endCursor"], Value::Null);
    // a string filter on the type
    let mut f = window(0, 60 * MIN);
    f["jobType"] = json!({"$like": "sh*"});
    let ship = ask(&h, Of::Types, json!({"filter": f}));
    assert_eq!(ship["page"]["totalItems"], 1);
    assert_eq!(ship["items"][0]["jobType"], "ship");
    // a cursor of another query is refused
    let other = Aggregate::of_request(
        AggregateKind::Jobs(Of::Types),
        &json!({"filter": window(0, 30 * MIN)}),
    )
    .unwrap();
    let e = super::super::page(&other, vec![], &json!({"page": {"after": after}})).unwrap_err();
    assert!(e.to_string().contains("page.after"), "{e}");
}

#[test]
fn worker_statistics_of_a_type() {
    let (_dir, h) = open("jobs_workers");
    export(&h);
    let mut f = window(0, 60 * MIN);
    f["jobType"] = json!("pay");
    let w = ask(&h, Of::Workers, json!({"filter": f}));
    assert_eq!(
        w["items"],
        json!([
            {"worker": "w1", "created": metric(0, None), "completed": metric(2, Some(MIN + 2_000)),
             "failed": metric(3, Some(4 * MIN))},
            {"worker": "w2", "created": metric(0, None), "completed": metric(0, None),
             "failed": metric(1, Some(2 * MIN))},
        ])
    );
    assert_eq!(w["page"]["totalItems"], 2);
}

#[test]
fn time_series_buckets_by_the_resolution_from_the_window_start() {
    let (_dir, h) = open("jobs_series");
    export(&h);
    let mut f = window(0, 60 * MIN);
    f["jobType"] = json!("pay");
    f["resolution"] = json!("PT2M");
    let s = ask(&h, Of::TimeSeries, json!({"filter": f}));
    assert_eq!(
        s["items"],
        json!([
            {"time": iso(0), "created": metric(4, Some(30_000)),
             "completed": metric(2, Some(MIN + 2_000)), "failed": metric(0, None)},
            {"time": iso(2 * MIN), "created": metric(0, None), "completed": metric(0, None),
             "failed": metric(3, Some(3 * MIN + 5))},
            {"time": iso(4 * MIN), "created": metric(0, None), "completed": metric(0, None),
             "failed": metric(1, Some(4 * MIN))},
        ])
    );
    // the default resolution over an hour is a minute; pages go on by cursor
    f.as_object_mut().unwrap().remove("resolution");
    let page = ask(
        &h,
        Of::TimeSeries,
        json!({"filter": f.clone(), "page": {"limit": 2}}),
    );
    let times: Vec<&Value> = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| &i["time"])
        .collect();
    assert_eq!(times, [&json!(iso(0)), &json!(iso(MIN))]);
    assert_eq!(page["page"]["totalItems"], 5);
    let next = json!({"filter": f, "page": {"after": page["page"]["endCursor"]}});
    let next = ask(&h, Of::TimeSeries, next);
    let times: Vec<&Value> = next["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| &i["time"])
        .collect();
    assert_eq!(
        times,
        [
            &json!(iso(2 * MIN)),
            &json!(iso(3 * MIN)),
            &json!(iso(4 * MIN))
        ]
    );
}

#[test]
fn error_statistics_per_code_and_message_with_their_workers() {
    let (_dir, h) = open("jobs_errors");
    export(&h);
    let mut f = window(0, 60 * MIN);
    f["jobType"] = json!("pay");
    let e = ask(&h, Of::Errors, json!({"filter": f.clone()}));
    assert_eq!(
        e["items"],
        json!([
            {"errorCode": "", "errorMessage": "boom", "workers": 2},
            {"errorCode": "E1", "errorMessage": "bad", "workers": 1},
        ])
    );
    f["errorCode"] = json!({"$eq": "E1"});
    let e1 = ask(&h, Of::Errors, json!({"filter": f}));
    assert_eq!(e1["page"]["totalItems"], 1);
    assert_eq!(e1["items"][0]["errorMessage"], "bad");
}

#[test]
fn retention_removes_buckets_older_than_the_cutoff() {
    let (_dir, h) = open("jobs_retention");
    export(&h);
    h.remove_expired(T0 + 2 * MIN, 10).unwrap();
    let all = ask(&h, Of::Global, json!({"filter": window(0, 60 * MIN)}));
    assert_eq!(all["created"], metric(0, None));
    assert_eq!(all["completed"], metric(1, Some(5 * MIN)));
    assert_eq!(all["failed"], metric(4, Some(4 * MIN)));
}

#[test]
fn a_gap_in_a_partitions_history_makes_the_global_statistics_incomplete() {
    let (_dir, h) = open("jobs_gap");
    export(&h);
    let body = json!({"filter": window(0, 60 * MIN)});
    assert_eq!(ask(&h, Of::Global, body.clone())["isIncomplete"], false);
    // a snapshot skipped partition 2's log up to position 10
    h.skip_to(2, 10, 10).unwrap();
    let all = ask(&h, Of::Global, body.clone());
    assert_eq!(all["isIncomplete"], true);
    let a = Aggregate::of_request(AggregateKind::Jobs(Of::Global), &body).unwrap();
    let one = super::super::page(&a, vec![h.aggregate(&a, Some(&[1])).unwrap()], &body).unwrap();
    assert_eq!(one["isIncomplete"], false, "partition 1 has no gap");
}
