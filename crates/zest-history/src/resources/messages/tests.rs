//! Message subscriptions in history: each in the state of its last record, and one row per
//! correlation of a message to it.

use serde_json::{json, Value};
use zest_protocol::{Intent, ProcessMessageSubscriptionRecord, Record, RecordValue};

use crate::resources::{CORRELATED_MESSAGES, MESSAGE_SUBSCRIPTIONS};
use crate::{Conditions, History};

fn record(position: u64, key: i64, intent: Intent, message_key: i64) -> Record {
    let value = RecordValue::ProcessMessageSubscription(ProcessMessageSubscriptionRecord {
        subscription_partition_id: 1,
        process_instance_key: 100,
        element_instance_key: 101,
        process_definition_key: 10,
        bpmn_process_id: "orders".into(),
        message_key,
        message_name: "paid".into(),
        correlation_key: "o-1".into(),
        element_id: "wait".into(),
        tenant_id: "<default>".into(),
        ..Default::default()
    });
    crate::tests::event(position, key, intent, value)
}

fn search(h: &History, q: Value, r: &crate::Resource) -> Value {
    h.search(r, &q, Conditions::default()).unwrap()
}

#[test]
fn subscriptions_keep_their_last_state_and_each_correlation() {
    let (dir, h) = crate::tests::open("messages");
    // a non-interrupting subscription correlates two messages, then is deleted
    let records = vec![
        record(1, 500, Intent::Creating, -1),
        record(2, 500, Intent::Created, -1),
        record(3, 500, Intent::Correlated, 700),
    ];
    h.export(1, &records, 1).unwrap();
    let subs = search(&h, json!({}), &MESSAGE_SUBSCRIPTIONS);
    assert_eq!(subs["page"]["totalItems"], 1);
    let sub = &subs["items"][0];
    assert_eq!(sub["messageSubscriptionKey"], "500");
    assert_eq!(sub["messageSubscriptionState"], "CORRELATED");
    assert_eq!(sub["messageName"], "paid");
    assert_eq!(sub["correlationKey"], "o-1");
    assert_eq!(sub["elementId"], "wait");
    assert_eq!(sub["elementInstanceKey"], "101");
    assert_eq!(sub["processInstanceKey"], "100");
    assert_eq!(sub["lastUpdatedDate"], "2025-01-01T00:00:03.000Z");

    let more = vec![
        record(4, 500, Intent::Correlated, 701),
        record(5, 500, Intent::Deleted, -1),
    ];
    h.export(1, &more, 2).unwrap();
    // the same records again (export resumed from an older position) change nothing
    h.export(1, &more, 2).unwrap();
    let deleted = search(
        &h,
        json!({"filter": {"messageSubscriptionState": "DELETED"}}),
        &MESSAGE_SUBSCRIPTIONS,
    );
    assert_eq!(deleted["page"]["totalItems"], 1);
    let correlated = search(
        &h,
        json!({"sort": [{"field": "messageKey", "order": "DESC"}]}),
        &CORRELATED_MESSAGES,
    );
    assert_eq!(correlated["page"]["totalItems"], 2);
    let first = &correlated["items"][0];
    assert_eq!(first["messageKey"], "701");
    assert_eq!(first["subscriptionKey"], "500");
    assert_eq!(first["partitionId"], 1);
    assert_eq!(first["processDefinitionId"], "orders");
    assert_eq!(first["correlationTime"], "2025-01-01T00:00:04.000Z");
    let by_key = search(
        &h,
        json!({"filter": {"messageKey": "700", "correlationKey": {"$like": "o-*"}}}),
        &CORRELATED_MESSAGES,
    );
    assert_eq!(by_key["page"]["totalItems"], 1);
    let _ = std::fs::remove_dir_all(&dir);
}
