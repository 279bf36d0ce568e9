use serde_json::json;
use zest_protocol::{
    BpmnElementType, BpmnEventType, IncidentRecord, Intent, ProcessInstanceRecord, ProcessRecord,
    Record, RecordType, RecordValue, RejectionType, VariableRecord,
};

use super::*;

fn record(position: u64, key: i64, intent: Intent, value: RecordValue) -> Record {
    Record {
        position,
        partition_id: 1,
        key,
        timestamp: 1_735_689_600_000 + position as i64,
        record_type: RecordType::Event,
        value_type: value.value_type(),
        intent,
        rejection_type: RejectionType::NullVal,
        rejection_reason: String::new(),
        source_record_position: -1,
        request_id: -1,
        request_stream_id: -1,
        value,
    }
}

const XML: &str = r#"<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL">
  <bpmn:process id="order" name="Order"><bpmn:serviceTask id="pay" name="Pay" /></bpmn:process>
</bpmn:definitions>"#;

fn element(pi: i64, id: &str, ty: BpmnElementType) -> ProcessInstanceRecord {
    ProcessInstanceRecord {
        bpmn_process_id: "order".into(),
        version: 1,
        process_definition_key: 10,
        process_instance_key: pi,
        element_id: id.into(),
        flow_scope_key: if ty == BpmnElementType::Process {
            -1
        } else {
            pi
        },
        bpmn_element_type: ty,
        bpmn_event_type: BpmnEventType::Unspecified,
        parent_process_instance_key: -1,
        parent_element_instance_key: -1,
        tenant_id: "<default>".into(),
    }
}

/// An incident on the task (`pay`, key `pi + 1`) of instance `pi`.
fn incident(pi: i64) -> IncidentRecord {
    IncidentRecord {
        error_type: zest_protocol::ErrorType::JobNoRetries,
        error_message: "no retries left".into(),
        bpmn_process_id: "order".into(),
        process_definition_key: 10,
        process_instance_key: pi,
        element_id: "pay".into(),
        element_instance_key: pi + 1,
        job_key: -1,
        variable_scope_key: pi + 1,
        tenant_id: "<default>".into(),
    }
}

/// The job (type `pay`, 3 retries) of the task (`pay`, key `pi + 1`) of instance `pi`.
pub(crate) fn job(pi: i64) -> zest_protocol::JobRecord {
    zest_protocol::JobRecord {
        job_type: "pay".into(),
        retries: 3,
        element_id: "pay".into(),
        element_instance_key: pi + 1,
        process_instance_key: pi,
        bpmn_process_id: "order".into(),
        process_definition_key: 10,
        tenant_id: "<default>".into(),
        ..Default::default()
    }
}

/// A definition, then instances 100.. each with a task; even ones complete, every third has an
/// incident on its task, and each has a variable `n`.
fn sample(count: i64) -> Vec<Record> {
    sample_at(count, 0)
}

/// [`sample`] with every instance's keys on `partition` (in their high bits).
pub(crate) fn sample_at(count: i64, partition: i64) -> Vec<Record> {
    let base = partition << 51;
    let mut out = vec![record(
        1,
        10,
        Intent::Created,
        RecordValue::Process(ProcessRecord {
            bpmn_process_id: "order".into(),
            version: 1,
            process_definition_key: 10,
            resource_name: "order.bpmn".into(),
            checksum: vec![],
            resource: XML.as_bytes().to_vec(),
            tenant_id: "<default>".into(),
        }),
    )];
    let mut pos = 1;
    let mut next = |out: &mut Vec<Record>, key, intent, value| {
        pos += 1;
        out.push(record(pos, key, intent, value));
    };
    for i in 0..count {
        let pi = base + 100 + i * 10;
        let proc = || RecordValue::ProcessInstance(element(pi, "order", BpmnElementType::Process));
        let task =
            || RecordValue::ProcessInstance(element(pi, "pay", BpmnElementType::ServiceTask));
        next(&mut out, pi, Intent::ElementActivating, proc());
        next(&mut out, pi + 1, Intent::ElementActivating, task());
        next(
            &mut out,
            pi + 2,
            Intent::Created,
            RecordValue::Variable(VariableRecord {
                name: "n".into(),
                value: i.to_string(),
                scope_key: pi,
                process_instance_key: pi,
                process_definition_key: 10,
                bpmn_process_id: "order".into(),
                tenant_id: "<default>".into(),
            }),
        );
        if i % 3 == 0 {
            next(
                &mut out,
                pi + 3,
                Intent::Created,
                RecordValue::Incident(incident(pi)),
            );
        } else if i % 2 == 0 {
            next(&mut out, pi + 1, Intent::ElementCompleted, task());
            next(&mut out, pi, Intent::ElementCompleted, proc());
        }
    }
    out
}

/// An event record at `position`, a second apart from the one before (the resource modules'
/// tests build their records with it).
pub(crate) fn event(position: u64, key: i64, intent: Intent, value: RecordValue) -> Record {
    Record {
        timestamp: 1_735_689_600_000 + position as i64 * 1000,
        ..record(position, key, intent, value)
    }
}

/// The PostgreSQL database the tests run in instead of SQLite, when one is given
/// (`ZEST_HISTORY_TEST_POSTGRES=postgres://user@host/db`): each test in a schema of its own.
/// The suite runs them both ways (`tests/postgres.sh`).
pub(crate) const POSTGRES: &str = "ZEST_HISTORY_TEST_POSTGRES";

/// A new, empty history in a temporary directory of its own (SQLite), or in a new schema of
/// the test database (PostgreSQL, see [`POSTGRES`]).
pub(crate) fn open(name: &str) -> (std::path::PathBuf, History) {
    let dir = std::env::temp_dir().join(format!("zest-history-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let h = match std::env::var(POSTGRES) {
        Ok(url) if !url.is_empty() => open_postgres(&url, name),
        _ => History::open(&dir.join("history.sqlite"), 4 << 20).unwrap(),
    };
    (dir, h)
}

fn open_postgres(url: &str, name: &str) -> History {
    let schema: String = format!("t_{name}_{}", std::process::id())
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    let mut admin = postgres::Client::connect(url, postgres::NoTls).unwrap();
    admin
        .batch_execute(&format!(
            "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"
        ))
        .unwrap();
    let sep = if url.contains('?') { '&' } else { '?' };
    History::open_postgres(&format!("{url}{sep}options=-c%20search_path%3D{schema}")).unwrap()
}

fn search(h: &History, r: &Resource, q: serde_json::Value) -> serde_json::Value {
    h.search(r, &q, Conditions::default()).unwrap()
}

fn keys(v: &serde_json::Value, field: &str) -> Vec<String> {
    v["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i[field].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn exported_instances_are_found_by_state_incident_and_variable() {
    let (_dir, h) = open("find");
    let records = sample(12);
    let last = records.last().unwrap().position;
    h.export(1, &records, 7).unwrap();
    assert_eq!(h.position(1).unwrap().position, last);
    assert_eq!(h.position(1).unwrap().next_index, 7);

    let all = search(&h, &resources::PROCESS_INSTANCES, json!({}));
    assert_eq!(all["page"]["totalItems"], 12);
    let first = &all["items"][0];
    assert_eq!(first["processInstanceKey"], "100");
    assert_eq!(first["processDefinitionName"], "Order");
    assert_eq!(first["startDate"], "2025-01-01T00:00:00.002Z");
    assert_eq!(first["hasIncident"], true);

    // 0..12: completed are the even ones without an incident (2, 4, 8, 10)
    let done = search(
        &h,
        &resources::PROCESS_INSTANCES,
        json!({"filter": {"state": "COMPLETED"}}),
    );
    assert_eq!(
        keys(&done, "processInstanceKey"),
        ["120", "140", "180", "200"]
    );
    assert!(done["items"][0]["endDate"].is_string());
    let inc = search(
        &h,
        &resources::PROCESS_INSTANCES,
        json!({"filter": {"hasIncident": true}}),
    );
    assert_eq!(inc["page"]["totalItems"], 4);
    let var = search(
        &h,
        &resources::PROCESS_INSTANCES,
        json!({"filter": {"variables": [{"name": "n", "value": {"$in": ["5", "7"]}}]}}),
    );
    assert_eq!(keys(&var, "processInstanceKey"), ["150", "170"]);
    // equality through the value hash's index, any other operator probed per instance: the
    // same answers as the text
    let by_variable = |value: Value| {
        let filter = json!({"filter": {"variables": [{"name": "n", "value": value}]}});
        keys(
            &search(&h, &resources::PROCESS_INSTANCES, filter),
            "processInstanceKey",
        )
    };
    assert_eq!(by_variable(json!("5")), ["150"]);
    assert_eq!(by_variable(json!({"$eq": "5", "$in": ["5", "7"]})), ["150"]);
    assert_eq!(
        by_variable(json!({"$eq": "5", "$in": ["7"]})),
        Vec::<String>::new()
    );
    // an empty `$in` sets no condition (as every empty list of a filter), so only the name
    assert_eq!(by_variable(json!({"$in": []})).len(), 12);
    assert_eq!(by_variable(json!({"$like": "1*"})), ["110", "200", "210"]);
    assert_eq!(by_variable(json!({"$neq": "0"})).len(), 11);
    assert_eq!(by_variable(json!("55")), Vec::<String>::new());
    let named = |name: &str| {
        let filter = json!({"filter": {"variables": [{"name": name}]}});
        search(&h, &resources::PROCESS_INSTANCES, filter)["page"]["totalItems"].clone()
    };
    assert_eq!((named("n"), named("m")), (json!(12), json!(0)));
    let or = search(
        &h,
        &resources::PROCESS_INSTANCES,
        json!({"filter": {"$or": [{"processInstanceKey": "110"}, {"state": "COMPLETED", "processInstanceKey": {"$gt": "150"}}]}}),
    );
    assert_eq!(keys(&or, "processInstanceKey"), ["110", "180", "200"]);

    let els = search(
        &h,
        &resources::ELEMENT_INSTANCES,
        json!({"filter": {"processInstanceKey": "100"}}),
    );
    assert_eq!(els["items"][0]["elementName"], "Pay");
    assert_eq!(els["items"][0]["hasIncident"], true);
    assert_eq!(els["items"][0]["incidentKey"], "103");
    let incidents = search(
        &h,
        &resources::INCIDENTS,
        json!({"filter": {"state": "ACTIVE"}}),
    );
    assert_eq!(incidents["page"]["totalItems"], 4);
    assert_eq!(incidents["items"][0]["errorType"], "JOB_NO_RETRIES");

    let stats = h
        .element_statistics(Of::Definition(10), &json!({}))
        .unwrap();
    assert_eq!(
        stats["items"],
        json!([{"elementId": "pay", "active": 4, "canceled": 0, "incidents": 4, "completed": 4}])
    );
}

#[test]
fn cursors_page_through_every_row_once_in_both_directions() {
    let (_dir, h) = open("cursor");
    let records = sample(25);
    h.export(1, &records, records.last().unwrap().position)
        .unwrap();
    let q = |page: serde_json::Value| json!({"sort": [{"field": "state", "order": "DESC"}], "page": page});
    let mut seen = Vec::new();
    let mut page = search(&h, &resources::PROCESS_INSTANCES, q(json!({"limit": 7})));
    let mut pages = vec![];
    loop {
        let ks = keys(&page, "processInstanceKey");
        if ks.is_empty() {
            break;
        }
        pages.push(page.clone());
        seen.extend(ks);
        let end = page["page"]["endCursor"].as_str().unwrap().to_string();
        page = search(
            &h,
            &resources::PROCESS_INSTANCES,
            q(json!({"limit": 7, "after": end})),
        );
    }
    let by_offset = search(&h, &resources::PROCESS_INSTANCES, q(json!({"limit": 100})));
    assert_eq!(seen, keys(&by_offset, "processInstanceKey"));
    assert_eq!(seen.len(), 25);
    // back from the last page's start
    let start = pages[3]["page"]["startCursor"]
        .as_str()
        .unwrap()
        .to_string();
    let back = search(
        &h,
        &resources::PROCESS_INSTANCES,
        q(json!({"limit": 7, "before": start})),
    );
    assert_eq!(
        keys(&back, "processInstanceKey"),
        keys(&pages[2], "processInstanceKey")
    );
    // every cursor is what Camunda's spec says a cursor is: padded base64 of its alphabet
    // (`^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=)?$`)
    for page in &pages {
        for name in ["startCursor", "endCursor"] {
            let cursor = page["page"][name].as_str().unwrap();
            assert_eq!(cursor.len() % 4, 0, "{name} {cursor} is not padded base64");
            let alphabet = |c: char| c.is_ascii_alphanumeric() || c == '+' || c == '/';
            let body = cursor.trim_end_matches('=');
            assert!(body.chars().all(alphabet), "{name} {cursor} is not base64");
            assert!(cursor.len() - body.len() <= 2, "{name} {cursor}");
        }
    }
    // a cursor of another query is refused
    let other = h.search(
        &resources::PROCESS_INSTANCES,
        &json!({"page": {"after": start}}),
        Conditions::default(),
    );
    assert!(matches!(other, Err(SearchError::Bad(m)) if m.contains("page.after")));
}

/// Every sort field of every search sorts, both ways, and pages on by its cursor: one whose
/// value is a constant (a job's `isDenied`: `0`, which SQLite's ORDER BY read as a column
/// number and failed on, a 500 schemathesis found) included.
#[test]
fn every_sort_field_of_every_search_sorts_and_pages() {
    let (_dir, h) = open("sorts");
    let records = sample(6);
    h.export(1, &records, records.last().unwrap().position)
        .unwrap();
    for named in [
        Named::ProcessInstances,
        Named::ProcessDefinitions,
        Named::ElementInstances,
        Named::Variables,
        Named::Incidents,
        Named::Jobs,
        Named::UserTasks,
        Named::DecisionDefinitions,
        Named::DecisionRequirements,
        Named::DecisionInstances,
        Named::MessageSubscriptions,
        Named::CorrelatedMessages,
    ] {
        let r = named.resource();
        for field in r.sorts {
            for order in ["ASC", "DESC"] {
                let sort = json!([{"field": field.name, "order": order}]);
                let first = h.search(
                    r,
                    &json!({"sort": sort, "page": {"limit": 2}}),
                    Conditions::default(),
                );
                let first = first.unwrap_or_else(|e| panic!("{} by {}: {e:?}", r.name, field.name));
                if let Some(end) = first["page"]["endCursor"].as_str() {
                    let next = json!({"sort": sort, "page": {"limit": 2, "after": end}});
                    let next = h.search(r, &next, Conditions::default());
                    assert!(next.is_ok(), "{} by {} after: {next:?}", r.name, field.name);
                }
            }
        }
    }
}

#[test]
fn export_resumes_after_its_position_and_never_applies_twice() {
    let (_dir, h) = open("resume");
    let records = sample(6);
    let (a, b) = records.split_at(10);
    h.export(1, a, 1).unwrap();
    // the whole stream again (at least once delivery): the first part is skipped
    h.export(1, &records, records.last().unwrap().position)
        .unwrap();
    h.export(1, &records, records.last().unwrap().position)
        .unwrap();
    assert!(!b.is_empty());
    let inc = search(
        &h,
        &resources::PROCESS_INSTANCES,
        json!({"filter": {"processInstanceKey": "100"}}),
    );
    assert_eq!(inc["items"][0]["hasIncident"], true);
    let counts: i64 = h
        .read(|c| {
            Ok(c.query_one(
                "SELECT incidents FROM process_instance WHERE key = 100",
                &[],
                |r| r.get(0),
            )?)
        })
        .unwrap();
    assert_eq!(counts, 1, "the incident is counted once");
    let vars = search(&h, &resources::VARIABLES, json!({}));
    assert_eq!(vars["page"]["totalItems"], 6);
}

#[test]
fn bad_requests_name_the_field() {
    let (_dir, h) = open("bad");
    let cases = [
        (json!({"filter": {"nope": 1}}), "'nope'"),
        (json!({"sort": [{"field": "nope"}]}), "'nope'"),
        (json!({"page": {"limit": 10001}}), "page.limit"),
        (json!({"page": {"after": "garbage"}}), "page.after"),
        (
            json!({"filter": {"startDate": {"$gt": "soon"}}}),
            "'startDate'",
        ),
    ];
    for (q, needle) in cases {
        match h.search(&resources::PROCESS_INSTANCES, &q, Conditions::default()) {
            Err(SearchError::Bad(m)) => assert!(m.contains(needle), "{q}: {m}"),
            other => panic!("{q}: {other:?}"),
        }
    }
}

/// Variable value filters through the postings (`postings.rs`): across batches, after a
/// value changed (the old value no longer finds the instance), after retention removed
/// instances (the sweep leaves no posting naming them), and in a store whose variables were
/// written before there were postings (filled when opened).
#[test]
fn value_filters_find_through_postings_as_values_change_and_instances_go() {
    let (_dir, h) = open("postings");
    let mut records = sample(12);
    let mid = records.len() / 2;
    h.export(1, &records[..mid], 1).unwrap();
    h.export(1, &records[mid..], 2).unwrap();
    let by_value = |value: &str| {
        let filter = json!({"filter": {"variables": [{"name": "n", "value": value}]}});
        keys(
            &search(&h, &resources::PROCESS_INSTANCES, filter),
            "processInstanceKey",
        )
    };
    assert_eq!(by_value("5"), ["150"]);
    assert_eq!(by_value("11"), ["210"]);
    // 150's n becomes 7, as 170's is; 180's too (completed: a root retention removes)
    let last = records.last().unwrap().position;
    records.clear();
    for (i, pi) in [150i64, 180].into_iter().enumerate() {
        records.push(record(
            last + 1 + i as u64,
            pi + 2,
            Intent::Updated,
            RecordValue::Variable(VariableRecord {
                name: "n".into(),
                value: "7".into(),
                scope_key: pi,
                process_instance_key: pi,
                process_definition_key: 10,
                bpmn_process_id: "order".into(),
                tenant_id: "<default>".into(),
            }),
        ));
    }
    h.export(1, &records, 3).unwrap();
    assert_eq!(by_value("5"), Vec::<String>::new());
    assert_eq!(by_value("7"), ["150", "170", "180"]);
    let dangling = || -> i64 {
        h.read(|c| {
            Ok(c.query_one(
                "SELECT count(*) FROM variable_posting p, json_each(p.keys) j WHERE NOT EXISTS \
                 (SELECT 1 FROM process_instance i \
                 WHERE i.key = p.first_key + CAST(j.value AS BIGINT))",
                &[],
                |r| r.get(0),
            )?)
        })
        .unwrap()
    };
    assert_eq!(dangling(), 0);
    assert_eq!(h.remove_expired(i64::MAX, 500).unwrap(), 4);
    assert_eq!(dangling(), 0, "the sweep after retention");
    assert_eq!(by_value("7"), ["150", "170"]);
    // a store of an older version: variables, no postings; opening it fills them
    h.write_with(|c| {
        c.execute("DELETE FROM variable_posting", &[])?;
        c.execute(
            "INSERT INTO posting_fill (after_key) VALUES (-9223372036854775807)",
            &[],
        )?;
        Ok(())
    });
    assert_eq!(by_value("7"), Vec::<String>::new());
    h.write_with(crate::postings::fill);
    assert_eq!(by_value("7"), ["150", "170"]);
    assert_eq!(by_value("11"), ["210"]);
    let fills: i64 = h
        .read(|c| Ok(c.query_one("SELECT count(*) FROM posting_fill", &[], |r| r.get(0))?))
        .unwrap();
    assert_eq!(fills, 0, "the fill is done");
}

#[test]
fn long_values_are_cut_with_the_whole_value_kept() {
    let (_dir, h) = open("long");
    let long = format!("\"{}\"", "x".repeat(20_000));
    let records = vec![record(
        1,
        5,
        Intent::Created,
        RecordValue::Variable(VariableRecord {
            name: "big".into(),
            value: long.clone(),
            scope_key: 1,
            process_instance_key: 1,
            process_definition_key: 1,
            bpmn_process_id: "p".into(),
            tenant_id: "<default>".into(),
        }),
    )];
    h.export(1, &records, 1).unwrap();
    let found = search(
        &h,
        &resources::VARIABLES,
        json!({"filter": {"name": "big"}}),
    );
    assert_eq!(found["items"][0]["isTruncated"], true);
    assert_eq!(
        found["items"][0]["value"].as_str().unwrap().chars().count(),
        PREVIEW_CHARS
    );
    let whole = h.get(&resources::VARIABLE_FULL, 5).unwrap().unwrap();
    assert_eq!(whole["value"], long);
    assert_eq!(whole["isTruncated"], false);
}

#[test]
fn retention_removes_finished_roots_with_everything_under_them() {
    let (_dir, h) = open("retention");
    let records = sample(12);
    h.export(1, &records, 1).unwrap();
    let count = |table: &str| -> i64 {
        h.read(|c| Ok(c.query_one(&format!("SELECT count(*) FROM {table}"), &[], |r| r.get(0))?))
            .unwrap()
    };
    assert_eq!((count("process_instance"), count("variable")), (12, 12));
    // nothing ended before the first record
    assert_eq!(h.remove_expired(1_735_689_600_000, 500).unwrap(), 0);
    // the four completed ones, two per batch
    assert_eq!(h.remove_expired(i64::MAX, 2).unwrap(), 2);
    assert_eq!(h.remove_expired(i64::MAX, 2).unwrap(), 2);
    assert_eq!(h.remove_expired(i64::MAX, 2).unwrap(), 0);
    assert_eq!((count("process_instance"), count("variable")), (8, 8));
    assert_eq!(
        count("element_instance"),
        8,
        "the completed instances' tasks went with them"
    );
    let left = search(
        &h,
        &resources::PROCESS_INSTANCES,
        json!({"filter": {"state": "COMPLETED"}}),
    );
    assert_eq!(left["page"]["totalItems"], 0);
}

/// Two stores, each with one partition's instances, answer the same pages together (their
/// parts merged) as one store with both: by offset, by cursor in both directions, counts
/// summed, and the definition (on every partition, partition 1's key) counted once.
#[test]
fn parts_of_partitions_merge_into_the_one_store_pages() {
    let (_d1, one) = open("part-1");
    let (_d2, two) = open("part-2");
    let (_d3, both) = open("part-both");
    let (a, b) = (sample_at(9, 1), sample_at(13, 2));
    one.export(1, &a, 100).unwrap();
    two.export(2, &b, 100).unwrap();
    both.export(1, &a, 100).unwrap();
    both.export(2, &b, 100).unwrap();
    let merged = |r: &Resource, q: &serde_json::Value| {
        let parts = vec![
            one.search_part(r, q, Conditions::default(), &[1]).unwrap(),
            two.search_part(r, q, Conditions::default(), &[2]).unwrap(),
        ];
        search::merge(r, q, parts).unwrap()
    };
    let r = &resources::PROCESS_INSTANCES;
    let sort = json!([{"field": "state", "order": "DESC"}, {"field": "startDate"}]);
    for page in [
        json!({"limit": 100}),
        json!({"from": 3, "limit": 5}),
        json!({"from": 20, "limit": 5}),
    ] {
        let q = json!({"sort": sort, "page": page});
        assert_eq!(merged(r, &q), search(&both, r, q.clone()), "{q}");
    }
    // a chain of cursor pages, forward, then one back
    let q = |page: serde_json::Value| json!({"sort": sort, "page": page});
    let mut page = merged(r, &q(json!({"limit": 4})));
    let mut pages = Vec::new();
    while !keys(&page, "processInstanceKey").is_empty() {
        let end = page["page"]["endCursor"].as_str().unwrap().to_string();
        let next = q(json!({"limit": 4, "after": end}));
        assert_eq!(merged(r, &next), search(&both, r, next.clone()));
        pages.push(page);
        page = merged(r, &next);
    }
    let seen: Vec<String> = pages
        .iter()
        .flat_map(|p| keys(p, "processInstanceKey"))
        .collect();
    assert_eq!(seen.len(), 22);
    let start = pages[3]["page"]["startCursor"]
        .as_str()
        .unwrap()
        .to_string();
    let back = q(json!({"limit": 4, "before": start}));
    assert_eq!(
        keys(&merged(r, &back), "processInstanceKey"),
        keys(&pages[2], "processInstanceKey")
    );
    assert_eq!(merged(r, &back), search(&both, r, back.clone()));
    // the definition is on both stores: only the part of its key's partition (0 here) has it
    let defs = &resources::PROCESS_DEFINITIONS;
    let q = json!({});
    assert_eq!(merged(defs, &q)["page"]["totalItems"], 0);
    let parts = vec![
        one.search_part(defs, &q, Conditions::default(), &[0])
            .unwrap(),
        two.search_part(defs, &q, Conditions::default(), &[2])
            .unwrap(),
    ];
    assert_eq!(
        search::merge(defs, &q, parts).unwrap()["page"]["totalItems"],
        1
    );
    // element statistics summed over partitions
    let stats = merge_element_statistics(&[
        one.element_statistics_of(Of::Definition(10), &json!({}), &[1])
            .unwrap(),
        two.element_statistics_of(Of::Definition(10), &json!({}), &[2])
            .unwrap(),
    ]);
    assert_eq!(
        stats,
        both.element_statistics(Of::Definition(10), &json!({}))
            .unwrap()
    );
}

/// Every row carries the root of its process instance: a child instance's root is its
/// parent's, whether the parent was exported in the same batch or an earlier one, and a row
/// first written without its process instance (a job known from its activation alone) gets
/// it once a record names it.
#[test]
fn every_row_carries_its_root_instance_across_batches() {
    let (_dir, h) = open("roots");
    let child = |pi: i64, parent: i64, id: &str, ty| {
        let mut r = element(pi, id, ty);
        if ty == BpmnElementType::Process {
            r.parent_process_instance_key = parent;
            r.parent_element_instance_key = parent + 1;
        }
        RecordValue::ProcessInstance(r)
    };
    let job = |pi: i64| RecordValue::Job(Box::new(job(pi)));
    let activation = RecordValue::JobBatch(zest_protocol::JobBatchRecord {
        job_type: "pay".into(),
        job_keys: vec![305],
        jobs: vec![zest_protocol::JobRecord {
            worker: "w".into(),
            ..Default::default()
        }],
        ..Default::default()
    });
    let flow = |pi: i64| {
        let mut r = element(pi, "to-pay", BpmnElementType::SequenceFlow);
        r.flow_scope_key = pi;
        RecordValue::ProcessInstance(r)
    };
    let variable = |pi: i64| {
        RecordValue::Variable(VariableRecord {
            name: "n".into(),
            value: "1".into(),
            scope_key: pi,
            process_instance_key: pi,
            process_definition_key: 10,
            bpmn_process_id: "order".into(),
            tenant_id: "<default>".into(),
        })
    };
    let mut pos = 0;
    let mut batch = |values: Vec<(i64, Intent, RecordValue)>| {
        let records: Vec<Record> = values
            .into_iter()
            .map(|(key, intent, value)| {
                pos += 1;
                record(pos, key, intent, value)
            })
            .collect();
        h.export(1, &records, pos).unwrap();
    };
    use BpmnElementType::{Process, ServiceTask};
    // the root and its child in one batch, its element and variable in it too
    batch(vec![
        (
            100,
            Intent::ElementActivating,
            child(100, -1, "order", Process),
        ),
        (
            101,
            Intent::ElementActivating,
            child(100, -1, "pay", ServiceTask),
        ),
        (102, Intent::Created, variable(100)),
        (
            200,
            Intent::ElementActivating,
            child(200, 100, "order", Process),
        ),
    ]);
    // the grandchild in the next batch; a job known only from its activation first
    batch(vec![
        (
            300,
            Intent::ElementActivating,
            child(300, 200, "order", Process),
        ),
        (
            201,
            Intent::ElementActivating,
            child(200, -1, "pay", ServiceTask),
        ),
        (305, Intent::Activated, activation),
    ]);
    batch(vec![
        (202, Intent::Created, variable(200)),
        (301, Intent::SequenceFlowTaken, flow(300)),
        (305, Intent::Created, job(300)),
        (
            400,
            Intent::ElementActivating,
            child(400, -1, "order", Process),
        ),
    ]);
    let roots = |table: &str, by: &str| -> Vec<(i64, Option<i64>)> {
        h.read(|c| {
            Ok(c.query(
                &format!("SELECT {by}, root_process_instance_key FROM {table} ORDER BY {by}"),
                &[],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?)
        })
        .unwrap()
    };
    let root = Some(100);
    assert_eq!(
        roots("process_instance", "key"),
        vec![(100, root), (200, root), (300, root), (400, Some(400))]
    );
    assert_eq!(
        roots("element_instance", "key"),
        vec![(101, root), (201, root)]
    );
    assert_eq!(roots("variable", "key"), vec![(102, root), (202, root)]);
    assert_eq!(
        roots("sequence_flow", "process_instance_key"),
        vec![(300, root)]
    );
    assert_eq!(roots("job", "key"), vec![(305, root)]);
}

/// The element statistics of a definition from its counters (no filter) are what counting
/// its rows gives (a filter that matches every instance), through incidents, their
/// resolution, termination, migration to another definition, two batches and retention.
#[test]
fn element_counters_answer_what_counting_the_rows_answers() {
    let (_dir, h) = open("counters");
    let mut records = sample(12);
    let mut pos = records.last().unwrap().position;
    let mut push = |records: &mut Vec<Record>, key, intent, value| {
        pos += 1;
        records.push(record(pos, key, intent, value));
    };
    // instance 100 (an incident on its task): resolved, then the task and the instance end
    let pi = |k: i64, id: &str, ty| RecordValue::ProcessInstance(element(k, id, ty));
    push(
        &mut records,
        103,
        Intent::Resolved,
        RecordValue::Incident(incident(100)),
    );
    push(
        &mut records,
        101,
        Intent::ElementTerminated,
        pi(100, "pay", BpmnElementType::ServiceTask),
    );
    push(
        &mut records,
        100,
        Intent::ElementTerminated,
        pi(100, "order", BpmnElementType::Process),
    );
    // instance 110 (active) migrates to definition 11, its task becoming `charge`
    let migrated = |k: i64, id: &str, ty| {
        let mut e = element(110, id, ty);
        e.process_definition_key = 11;
        (k, e)
    };
    let (k, e) = migrated(110, "order", BpmnElementType::Process);
    push(
        &mut records,
        k,
        Intent::ElementMigrated,
        RecordValue::ProcessInstance(e),
    );
    let (k, e) = migrated(111, "charge", BpmnElementType::ServiceTask);
    push(
        &mut records,
        k,
        Intent::ElementMigrated,
        RecordValue::ProcessInstance(e),
    );
    let (first, second) = records.split_at(records.len() / 2);
    h.export(1, first, 1).unwrap();
    h.export(1, second, 2).unwrap();
    let same = |h: &History| {
        for def in [10, 11] {
            let counted = h
                .element_statistics(
                    Of::Definition(def),
                    &json!({"processDefinitionKey": def.to_string()}),
                )
                .unwrap();
            let kept = h
                .element_statistics(Of::Definition(def), &json!({}))
                .unwrap();
            assert_eq!(kept, counted, "definition {def}");
        }
        // the totals of searches by process and state, kept and counted (a condition that
        // every row meets makes the search count its rows)
        let filters = [
            json!({}),
            json!({"state": "ACTIVE"}),
            json!({"state": "terminated"}),
            json!({"processDefinitionId": "order", "state": "COMPLETED"}),
            json!({"processDefinitionKey": "10"}),
            json!({"processDefinitionKey": 11, "state": "ACTIVE"}),
        ];
        for filter in filters {
            let mut counted = filter.clone();
            counted["processInstanceKey"] = json!({"$exists": true});
            let total = |f: &serde_json::Value| {
                search(h, &resources::PROCESS_INSTANCES, json!({"filter": f}))["page"]["totalItems"]
                    .clone()
            };
            assert_eq!(total(&filter), total(&counted), "{filter}");
            assert!(total(&filter).as_i64().is_some());
        }
        // the totals of a definition's element instances at an element, by state or not
        let filters = [
            json!({"processDefinitionKey": "10", "elementId": "pay"}),
            json!({"processDefinitionKey": 10, "elementId": "pay", "state": "ACTIVE"}),
            json!({"processDefinitionKey": "10", "elementId": "pay", "state": "completed"}),
            json!({"processDefinitionKey": "10", "elementId": "pay", "state": "TERMINATED"}),
            json!({"processDefinitionKey": "11", "elementId": "charge", "state": "ACTIVE"}),
        ];
        for filter in filters {
            let mut counted = filter.clone();
            counted["elementInstanceKey"] = json!({"$exists": true});
            let total = |f: &serde_json::Value| {
                search(h, &resources::ELEMENT_INSTANCES, json!({"filter": f}))["page"]["totalItems"]
                    .clone()
            };
            assert_eq!(total(&filter), total(&counted), "{filter}");
        }
    };
    same(&h);
    let kept = h
        .element_statistics(Of::Definition(10), &json!({}))
        .unwrap();
    let pay = kept["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["elementId"] == "pay")
        .unwrap()
        .clone();
    assert_eq!(
        (
            pay["active"].as_i64(),
            pay["incidents"].as_i64(),
            pay["canceled"].as_i64()
        ),
        (Some(3), Some(3), Some(1)),
        "{kept}"
    );
    // retention removes the finished instances: their counts go with them
    let removed = h.remove_expired(i64::MAX, 100).unwrap();
    assert!(removed > 0);
    same(&h);
}

/// The totals of job searches by type, state and tenant from `job_count` are what counting the
/// rows gives, and the counters are the rows' counts, through jobs created, activated, failed,
/// given retries, timed out, completed (one created and completed in one batch), canceled and
/// thrown an error over three batches, a job known only from its activation at first, a
/// history deletion of an instance and retention.
#[test]
fn job_counters_answer_what_counting_the_rows_answers() {
    use zest_protocol::{HistoryDeletionRecord, JobBatchRecord, JobRecord};
    let (_dir, h) = open("job-counters");
    // sample(12): instances 100..=210; 120, 140, 180, 200 complete; 100, 130, ... incidents
    let job = |i: i64| {
        let mut j = job(100 + i * 10);
        j.job_type = if i % 4 == 1 { "ship" } else { "pay" }.into();
        j.tenant_id = if i == 7 { "other" } else { "<default>" }.into();
        RecordValue::Job(Box::new(j))
    };
    let key = |i: i64| 100 + i * 10 + 5;
    let activation = |is: &[i64]| {
        RecordValue::JobBatch(JobBatchRecord {
            job_type: "pay".into(),
            job_keys: is.iter().map(|i| key(*i)).collect(),
            jobs: is
                .iter()
                .map(|_| JobRecord {
                    worker: "w".into(),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        })
    };
    let mut records = sample(12);
    let mut pos = records.last().unwrap().position;
    // appends the records and answers the position of the last
    let mut batch = |records: &mut Vec<Record>, values: Vec<(i64, Intent, RecordValue)>| {
        for (key, intent, value) in values {
            pos += 1;
            records.push(record(pos, key, intent, value));
        }
        pos
    };
    // the first batch: every job created but job 11's, which is only activated
    let mut first: Vec<_> = (0..11).map(|i| (key(i), Intent::Created, job(i))).collect();
    first.push((key(11), Intent::Activated, activation(&[11])));
    let at = batch(&mut records, first);
    h.export(1, &records, at).unwrap();
    let same = |h: &History| {
        let kept: Vec<(String, String, String, i64, i64)> = h
            .read(|c| {
                Ok(c.query(
                    "SELECT job_type, state, tenant_id, partition_id, n FROM job_count \
                     WHERE n <> 0 ORDER BY job_type, state, tenant_id, partition_id",
                    &[],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
                )?)
            })
            .unwrap();
        let counted: Vec<(String, String, String, i64, i64)> = h
            .read(|c| {
                Ok(c.query(
                    "SELECT COALESCE(job_type, ''), COALESCE(state, ''), \
                     COALESCE(tenant_id, ''), key >> 51, COUNT(*) FROM job \
                     GROUP BY COALESCE(job_type, ''), COALESCE(state, ''), \
                     COALESCE(tenant_id, ''), key >> 51 ORDER BY 1, 2, 3, 4",
                    &[],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
                )?)
            })
            .unwrap();
        assert_eq!(kept, counted);
        let filters = [
            json!({}),
            json!({"type": "pay"}),
            json!({"state": "created"}),
            json!({"type": "pay", "state": "COMPLETED"}),
            json!({"type": {"$eq": "ship"}, "state": "FAILED", "tenantId": "<default>"}),
            json!({"type": "pay", "tenantId": "other"}),
            json!({"state": "CANCELED"}),
        ];
        let mut found = 0;
        for filter in filters {
            let mut counted = filter.clone();
            counted["jobKey"] = json!({"$exists": true});
            let total = |f: &serde_json::Value| {
                search(h, &resources::JOBS, json!({"filter": f}))["page"]["totalItems"]
                    .as_i64()
                    .unwrap()
            };
            assert_eq!(total(&filter), total(&counted), "{filter}");
            found += total(&filter);
        }
        assert!(found > 0);
    };
    same(&h);
    // the second: activations, failures (one with retries left), new retries, a time-out,
    // completions of the completed instances' jobs, job 11 created, job 12 created and
    // completed at once
    let failed = |i: i64, retries: i32| {
        let RecordValue::Job(mut j) = job(i) else {
            unreachable!()
        };
        j.retries = retries;
        RecordValue::Job(j)
    };
    let mut second = vec![(key(1), Intent::Activated, activation(&[1, 3, 5, 9]))];
    second.push((key(1), Intent::Failed, failed(1, 2)));
    second.push((key(5), Intent::Failed, failed(5, 0)));
    second.push((key(3), Intent::TimedOut, job(3)));
    second.push((key(3), Intent::RetriesUpdated, job(3)));
    for i in [2, 4, 8, 10] {
        second.push((key(i), Intent::Completed, job(i)));
    }
    second.push((key(11), Intent::Created, job(11)));
    second.push((key(12), Intent::Created, job(2)));
    second.push((key(12), Intent::Completed, job(2)));
    let from = records.len();
    let at = batch(&mut records, second);
    h.export(1, &records[from..], at).unwrap();
    same(&h);
    // the third: instance 110's job canceled as it terminates, job 9 throws an error, and
    // instance 120's history deleted
    let proc =
        |pi: i64| RecordValue::ProcessInstance(element(pi, "order", BpmnElementType::Process));
    let deletion = RecordValue::HistoryDeletion(HistoryDeletionRecord {
        resource_key: 120,
        resource_type: HistoryDeletionRecord::PROCESS_INSTANCE.into(),
    });
    let third = vec![
        (key(1), Intent::Canceled, job(1)),
        (110, Intent::ElementTerminated, proc(110)),
        (key(9), Intent::ErrorThrown, job(9)),
        (120, Intent::Deleted, deletion),
    ];
    let from = records.len();
    let at = batch(&mut records, third);
    h.export(1, &records[from..], at).unwrap();
    same(&h);
    let all = search(&h, &resources::JOBS, json!({}))["page"]["totalItems"].clone();
    assert_eq!(all, json!(11), "13 jobs, instance 120's two deleted");
    // retention removes the finished instances with their jobs
    assert!(h.remove_expired(i64::MAX, 100).unwrap() > 0);
    same(&h);
}

#[test]
fn a_postgres_store_down_is_retried_its_reads_unavailable_and_its_url_named_without_password() {
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = free.local_addr().unwrap().port();
    drop(free);
    let h = History::postgres(&format!("postgres://zest:s3cret@127.0.0.1:{port}/zest")).unwrap();
    assert_eq!(
        h.describe(),
        format!("postgres://zest@127.0.0.1:{port}/zest")
    );
    assert!(!h.is_ready());
    // the exporter's attempt: the store unreachable, named without its password
    let e = h.position(1).unwrap_err();
    assert!(matches!(e, HistoryError::Unreachable { .. }), "{e}");
    assert!(
        e.to_string().contains(&h.describe()) && !e.to_string().contains("s3cret"),
        "{e}"
    );
    // a read: unavailable (503), not a store failure (500)
    let read = h.get(&resources::PROCESS_DEFINITIONS, 1).unwrap_err();
    assert!(matches!(read, SearchError::Unavailable(_)), "{read}");
    assert!(read.to_string().contains("secondary storage"), "{read}");
    // a malformed URL is a configuration error at once
    let bad = History::postgres("postgres://127.0.0.1:notaport/zest");
    assert!(matches!(bad, Err(HistoryError::Config(_))));
}
