//! Forms in history: every deployed version kept, a deleted one too (a finished task's form is
//! still found), the latest not deleted found by a search, and a form as a deployed resource.

use serde_json::json;
use zest_protocol::{FormRecord, Intent, RecordValue};

use crate::resources::{FORMS, RESOURCES, RESOURCE_CONTENT};
use crate::tests::{event, open};
use crate::Conditions;

const P1: i64 = 1 << 51;

fn form(key: i64, version: i32) -> RecordValue {
    RecordValue::Form(FormRecord {
        form_id: "approve".into(),
        version,
        form_key: key,
        resource_name: "approve.form".into(),
        checksum: Vec::new(),
        resource: format!(r#"{{"id":"approve","v":{version}}}"#).into_bytes(),
        tenant_id: "<default>".into(),
        deployment_key: key - 1,
    })
}

#[test]
fn deployed_forms_stay_after_deletion_and_the_latest_is_the_newest_not_deleted() {
    let (dir, h) = open("forms");
    let (v1, v2, v3) = (P1 + 10, P1 + 20, P1 + 30);
    let records = [
        event(1, v1, Intent::Created, form(v1, 1)),
        event(2, v2, Intent::Created, form(v2, 2)),
        event(3, v3, Intent::Created, form(v3, 3)),
        // the newest and the oldest version deleted
        event(4, v3, Intent::Deleted, form(v3, 3)),
        event(5, v1, Intent::Deleted, form(v1, 1)),
    ];
    h.export(1, &records, 6).unwrap();
    // exported again (a replica replaying its log): nothing changes
    h.export(1, &records, 6).unwrap();

    let got = h.get(&FORMS, v1).unwrap().expect("a deleted form is kept");
    assert_eq!(
        got,
        json!({"formKey": v1.to_string(), "formId": "approve", "version": 1,
               "schema": r#"{"id":"approve","v":1}"#, "tenantId": "<default>"})
    );
    let latest = json!({
        "filter": {"formId": "approve", "tenantId": "<default>", "isDeleted": false},
        "sort": [{"field": "version", "order": "DESC"}],
        "page": {"limit": 1},
    });
    let found = h.search(&FORMS, &latest, Conditions::default()).unwrap();
    assert_eq!(found["items"][0]["formKey"], v2.to_string(), "{found}");
    assert_eq!(found["page"]["totalItems"], 1);

    let resource = h
        .get(&RESOURCES, v2)
        .unwrap()
        .expect("a form is a resource");
    assert_eq!(resource["resourceId"], "approve");
    assert_eq!(resource["resourceName"], "approve.form");
    assert_eq!(resource["version"], 2);
    let content = h.get(&RESOURCE_CONTENT, v2).unwrap().unwrap();
    assert_eq!(content["content"], r#"{"id":"approve","v":2}"#);
    assert!(h.get(&FORMS, P1 + 99).unwrap().is_none());
    let _ = std::fs::remove_dir_all(&dir);
}
