//! Batch operations in history (`docs/design/history.md`, "Batch operations"): partition 1's
//! BATCH_OPERATION events become rows of `batch_operation` (state, dates, counts) and
//! `batch_operation_item` (one per item done), and the two searchable resources over them,
//! through the one filter compiler.

use crate::db::{params, Conn, Row};
use serde_json::{json, Map, Value};
use zest_protocol::{BatchOperationRecord, Intent};

use crate::filter::{field, Field, Kind};
use crate::resources::{date, Resource};

/// The batch operation events of one exported batch, in log order.
#[derive(Default, Debug)]
pub struct BatchChanges {
    events: Vec<(i64, i64, Intent, BatchOperationRecord)>,
}

impl BatchChanges {
    /// Takes in one BATCH_OPERATION event (`key`, its timestamp `at`).
    pub fn add(&mut self, key: i64, at: i64, intent: Intent, r: &BatchOperationRecord) {
        self.events.push((key, at, intent, r.clone()));
    }
}

/// Partition 1's key space: item rows are numbered from here.
const ITEM_KEYS: i64 = 1 << 51;

/// Writes the events' rows in `tx`.
pub fn write(tx: &Conn, changes: &BatchChanges) -> crate::db::Result<()> {
    for (key, at, intent, r) in &changes.events {
        match intent {
            Intent::Created => {
                tx.execute(
                    "INSERT INTO batch_operation (key, operation_type, state, start_date) \
                     VALUES (?1, ?2, ?3, ?4) ON CONFLICT(key) DO NOTHING",
                    params![key, r.batch_operation_type, r.state, at],
                )?;
            }
            Intent::Executed => executed(tx, *key, *at, r)?,
            Intent::Suspended | Intent::Resumed | Intent::Completed | Intent::Canceled => {
                let end = matches!(intent, Intent::Completed | Intent::Canceled).then_some(*at);
                tx.execute(
                    "UPDATE batch_operation SET state = ?2, end_date = COALESCE(?3, end_date) \
                     WHERE key = ?1",
                    params![key, r.state, end],
                )?;
            }
            _ => {}
        }
    }
    Ok(())
}

/// One chunk: the counts as the event has them, and its items.
fn executed(tx: &Conn, key: i64, at: i64, r: &BatchOperationRecord) -> crate::db::Result<()> {
    tx.execute(
        "UPDATE batch_operation SET total = CASE WHEN CAST(?2 AS BIGINT) > 0 THEN ?2 ELSE 0 END, completed = ?3, failed = ?4 WHERE key = ?1",
    params![key, r.total, r.completed, r.failed])?;
    for item in &r.items {
        let error = (!item.error_message.is_empty()).then_some(&item.error_message);
        tx.execute(
            "INSERT INTO batch_operation_item (key, batch_operation_key, operation_type, \
             item_key, process_instance_key, state, error_message, processed_date) \
             VALUES ((SELECT COALESCE(MAX(key), ?1) + 1 FROM batch_operation_item), \
             ?2, ?3, ?4, ?5, ?6, ?7, ?8) \
             ON CONFLICT(batch_operation_key, item_key) DO UPDATE SET state = excluded.state, \
             error_message = excluded.error_message, processed_date = excluded.processed_date",
            params![
                ITEM_KEYS,
                key,
                r.batch_operation_type,
                item.item_key,
                item.process_instance_key,
                item.state,
                error,
                at
            ],
        )?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// batch operations

const OP_FIELDS: &[Field] = &[
    field("batchOperationKey", "t.key", Kind::Key),
    field("operationType", "t.operation_type", Kind::Enum),
    field("state", "t.state", Kind::Enum),
];

const OP_SORTS: &[Field] = &[
    field("batchOperationKey", "t.key", Kind::Key),
    field("operationType", "t.operation_type", Kind::Enum),
    field("state", "t.state", Kind::Enum),
    field("startDate", "COALESCE(t.start_date, 0)", Kind::Date),
    field(
        "endDate",
        "COALESCE(t.end_date, 9223372036854775807)",
        Kind::Date,
    ),
];

fn op_row(row: &Row) -> crate::db::Result<Value> {
    let mut out = Map::new();
    out.insert(
        "batchOperationKey".into(),
        json!(row.get::<_, i64>(0)?.to_string()),
    );
    out.insert("batchOperationType".into(), json!(row.get::<_, String>(1)?));
    out.insert("state".into(), json!(row.get::<_, String>(2)?));
    if let Some(d) = row.get::<_, Option<i64>>(3)? {
        out.insert("startDate".into(), date(d));
    }
    if let Some(d) = row.get::<_, Option<i64>>(4)? {
        out.insert("endDate".into(), date(d));
    }
    out.insert("operationsTotalCount".into(), json!(row.get::<_, i64>(5)?));
    out.insert("operationsFailedCount".into(), json!(row.get::<_, i64>(7)?));
    out.insert(
        "operationsCompletedCount".into(),
        json!(row.get::<_, i64>(6)?),
    );
    out.insert("errors".into(), json!([]));
    Ok(Value::Object(out))
}

pub const BATCH_OPERATIONS: Resource = Resource {
    name: "batch operation",
    from: "batch_operation t",
    select: "t.key, t.operation_type, t.state, t.start_date, t.end_date, t.total, t.completed, \
             t.failed",
    fields: OP_FIELDS,
    sorts: OP_SORTS,
    special: None,
    row: op_row,
};

// ---------------------------------------------------------------------------------------------
// batch operation items

const ITEM_FIELDS: &[Field] = &[
    field("batchOperationKey", "t.batch_operation_key", Kind::Key),
    field("itemKey", "t.item_key", Kind::Key),
    field("processInstanceKey", "t.process_instance_key", Kind::Key),
    field("state", "t.state", Kind::Enum),
];

const ITEM_SORTS: &[Field] = &[
    field("batchOperationKey", "t.batch_operation_key", Kind::Key),
    field("itemKey", "t.item_key", Kind::Key),
    field("processInstanceKey", "t.process_instance_key", Kind::Key),
    field("state", "t.state", Kind::Enum),
];

fn item_row(row: &Row) -> crate::db::Result<Value> {
    let mut out = Map::new();
    out.insert("operationType".into(), json!(row.get::<_, String>(1)?));
    out.insert(
        "batchOperationKey".into(),
        json!(row.get::<_, i64>(2)?.to_string()),
    );
    out.insert("itemKey".into(), json!(row.get::<_, i64>(3)?.to_string()));
    out.insert(
        "processInstanceKey".into(),
        json!(row.get::<_, i64>(4)?.to_string()),
    );
    out.insert("state".into(), json!(row.get::<_, String>(5)?));
    if let Some(d) = row.get::<_, Option<i64>>(7)? {
        out.insert("processedDate".into(), date(d));
    }
    if let Some(e) = row.get::<_, Option<String>>(6)? {
        out.insert("errorMessage".into(), json!(e));
    }
    Ok(Value::Object(out))
}

pub const BATCH_OPERATION_ITEMS: Resource = Resource {
    name: "batch operation item",
    from: "batch_operation_item t",
    select: "t.key, t.operation_type, t.batch_operation_key, t.item_key, t.process_instance_key, \
             t.state, t.error_message, t.processed_date",
    fields: ITEM_FIELDS,
    sorts: ITEM_SORTS,
    special: None,
    row: item_row,
};

#[cfg(test)]
mod tests {
    use serde_json::json;
    use zest_protocol::{
        BatchOperationItem, BatchOperationRecord, Intent, Record, RecordType, RecordValue,
        RejectionType,
    };

    use super::{BATCH_OPERATIONS, BATCH_OPERATION_ITEMS};
    use crate::Conditions;

    const OP: i64 = (1 << 51) + 7;

    fn record(position: u64, intent: Intent, r: BatchOperationRecord) -> Record {
        keyed(position, OP, intent, r)
    }

    fn keyed(position: u64, key: i64, intent: Intent, r: BatchOperationRecord) -> Record {
        let value = RecordValue::BatchOperation(Box::new(r));
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

    fn op(state: &str, completed: i64, failed: i64, items: &[(i64, &str)]) -> BatchOperationRecord {
        BatchOperationRecord {
            batch_operation_key: OP,
            batch_operation_type: "CANCEL_PROCESS_INSTANCE".into(),
            state: state.into(),
            total: 3,
            completed,
            failed,
            items: items
                .iter()
                .map(|(k, s)| BatchOperationItem {
                    item_key: *k,
                    process_instance_key: *k,
                    state: s.to_string(),
                    error_message: if *s == "FAILED" {
                        "gone".into()
                    } else {
                        String::new()
                    },
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn an_operation_and_its_items_are_found_with_their_counts_and_states() {
        let (dir, h) = crate::tests::open("batch");
        let records = [
            record(1, Intent::Created, op("ACTIVE", 0, 0, &[])),
            record(
                2,
                Intent::Executed,
                op("ACTIVE", 1, 1, &[(101, "COMPLETED"), (102, "FAILED")]),
            ),
            record(
                3,
                Intent::Executed,
                op("ACTIVE", 2, 1, &[(103, "COMPLETED")]),
            ),
            record(4, Intent::Completed, op("COMPLETED", 2, 1, &[])),
        ];
        // in two transactions, as the exporter hands them over
        h.export(1, &records[..2], 3).unwrap();
        h.export(1, &records, 5).unwrap();
        let got = h
            .get(&BATCH_OPERATIONS, OP)
            .unwrap()
            .expect("the operation");
        assert_eq!(got["state"], "COMPLETED");
        assert_eq!(got["operationsTotalCount"], 3);
        assert_eq!(got["operationsCompletedCount"], 2);
        assert_eq!(got["operationsFailedCount"], 1);
        assert_eq!(got["startDate"], "2025-01-01T00:00:00.001Z");
        assert_eq!(got["endDate"], "2025-01-01T00:00:00.004Z");

        let q = json!({"filter": {"batchOperationKey": OP.to_string(), "state": "FAILED"}});
        let failed = h
            .search(&BATCH_OPERATION_ITEMS, &q, Conditions::default())
            .unwrap();
        assert_eq!(failed["page"]["totalItems"], 1, "{failed}");
        assert_eq!(failed["items"][0]["itemKey"], "102");
        assert_eq!(failed["items"][0]["errorMessage"], "gone");
        let q = json!({"sort": [{"field": "itemKey", "order": "DESC"}]});
        let all = h
            .search(&BATCH_OPERATION_ITEMS, &q, Conditions::default())
            .unwrap();
        let keys: Vec<&str> = all["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["itemKey"].as_str().unwrap())
            .collect();
        assert_eq!(keys, ["103", "102", "101"]);
        let bad = h.search(
            &BATCH_OPERATIONS,
            &json!({"filter": {"color": "red"}}),
            Conditions::default(),
        );
        assert!(bad.unwrap_err().to_string().contains("color"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Rows of `table` (the operations' or their items').
    fn count(h: &crate::History, table: &str) -> i64 {
        h.read(|c| Ok(c.query_one(&format!("SELECT count(*) FROM {table}"), &[], |r| r.get(0))?))
            .unwrap()
    }

    #[test]
    fn retention_removes_finished_operations_with_their_items_in_small_batches() {
        let (dir, h) = crate::tests::open("batch_retention");
        let items = |from: i64, n: i64| -> Vec<(i64, &str)> {
            (from..from + n).map(|k| (k, "COMPLETED")).collect()
        };
        let (done, running, canceled) = (OP, OP + 1, OP + 2);
        let records = [
            keyed(1, done, Intent::Created, op("ACTIVE", 0, 0, &[])),
            keyed(
                2,
                done,
                Intent::Executed,
                op("ACTIVE", 3, 0, &items(100, 3)),
            ),
            keyed(3, done, Intent::Completed, op("COMPLETED", 3, 0, &[])),
            keyed(4, running, Intent::Created, op("ACTIVE", 0, 0, &[])),
            keyed(
                5,
                running,
                Intent::Executed,
                op("ACTIVE", 2, 0, &items(200, 2)),
            ),
            keyed(6, canceled, Intent::Created, op("ACTIVE", 0, 0, &[])),
            keyed(
                7,
                canceled,
                Intent::Executed,
                op("ACTIVE", 70, 0, &items(300, 70)),
            ),
            keyed(8, canceled, Intent::Canceled, op("CANCELED", 70, 0, &[])),
        ];
        h.export(1, &records, 9).unwrap();
        assert_eq!(count(&h, "batch_operation"), 3);
        assert_eq!(count(&h, "batch_operation_item"), 75);
        // only the one that ended before the cutoff (the 3rd millisecond's)
        assert_eq!(h.remove_expired(1_735_689_600_004, 1).unwrap(), 1);
        assert!(h.get(&BATCH_OPERATIONS, done).unwrap().is_none());
        assert_eq!(count(&h, "batch_operation_item"), 72);
        // a pass of batch 1 takes at most 64 items: the canceled one's 70 take two passes,
        // its row going with its last items; the running one stays
        assert_eq!(h.remove_expired(i64::MAX, 1).unwrap(), 1, "items left");
        assert_eq!(count(&h, "batch_operation_item"), 8);
        assert!(h.get(&BATCH_OPERATIONS, canceled).unwrap().is_some());
        assert_eq!(h.remove_expired(i64::MAX, 1).unwrap(), 1);
        assert!(h.get(&BATCH_OPERATIONS, canceled).unwrap().is_none());
        assert_eq!(h.remove_expired(i64::MAX, 1).unwrap(), 0);
        assert_eq!(count(&h, "batch_operation"), 1);
        let left = json!({"filter": {"batchOperationKey": running.to_string()}});
        let found = h
            .search(&BATCH_OPERATION_ITEMS, &left, Conditions::default())
            .unwrap();
        assert_eq!(
            found["page"]["totalItems"], 2,
            "the running one's items stay"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
