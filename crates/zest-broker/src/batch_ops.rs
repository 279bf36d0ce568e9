//! The batch operations' driver (`docs/design/history.md`, "Batch operations"): while this
//! node leads partition 1, it takes each ACTIVE batch operation kept there (BATCH_OPERATION
//! records, replicated) one chunk at a time: it finds the chunk's process instances with the
//! history search (the one filter compiler, cursor paging, `CHUNK` keys in memory), submits
//! each item's command as a client would (so backpressure applies; a refusal is retried after
//! a pause that doubles), and records the chunk with BATCH_OPERATION EXECUTE. A new leader's
//! driver resumes at the replicated cursor. DELETE_PROCESS_DEFINITION deletes the history of
//! the definition's instances as DELETE_PROCESS_INSTANCE does, then the definition's own.

use std::sync::{Arc, Weak};
use std::time::Duration;

use serde_json::{json, Value};
use zest_engine::new_command;
use zest_history::Named;
use zest_protocol::{
    BatchOperationItem, BatchOperationRecord, BpmnElementType, BpmnEventType, ErrorType,
    HistoryDeletionRecord, IncidentRecord, Intent, JobRecord, MappingInstruction,
    ProcessInstanceMigrationRecord, ProcessInstanceModificationRecord, ProcessInstanceRecord,
    Record, RecordType, RecordValue, TerminateInstruction, DEFAULT_TENANT,
};

use crate::{Broker, BrokerError};

/// Process instances per chunk: the most keys the driver holds at once.
pub const CHUNK: usize = 100;
/// Item commands in flight at once.
const IN_FLIGHT: usize = 8;
/// How often the driver looks for work.
const TICK: Duration = Duration::from_millis(200);
/// Unfinished operations looked at per tick.
const OPERATIONS_PER_TICK: usize = 16;

/// Starts the driver; it ends when the broker is dropped.
pub fn spawn(broker: &Arc<Broker>) {
    if !broker.history_on() || broker.store.is_none() {
        return; // no history to find items in, or a standalone gateway
    }
    let weak = Arc::downgrade(broker);
    tokio::spawn(drive(weak));
}

async fn drive(weak: Weak<Broker>) {
    let mut pause = TICK;
    loop {
        tokio::time::sleep(pause).await;
        pause = TICK;
        let Some(broker) = weak.upgrade() else {
            return;
        };
        let Some(p1) = broker.local.partitions().get(&1) else {
            return;
        };
        if !p1.is_leading() {
            continue;
        }
        let store = p1.answered_state().into_store().await;
        let ops = zest_engine::queries::batch_operations(&store, OPERATIONS_PER_TICK);
        for op in ops.iter().filter(|o| o.state == "ACTIVE") {
            match run_chunk(&broker, op).await {
                // more to do: the next chunk at once (its commands met backpressure already)
                Ok(()) => pause = Duration::ZERO,
                Err(e) => tracing::warn!(
                    "batch operation {}: chunk failed, tried again later: {e}",
                    op.batch_operation_key
                ),
            }
        }
    }
}

/// The operation's filter as the search runs it: only ACTIVE instances (and for a
/// cancellation, root instances only), as Camunda overrides them; instances with an incident
/// for incident resolution.
///
/// A history deletion's filter stays as given: a running instance it finds is an item that
/// fails with the engine's rejection.
fn forced_filter(op: &BatchOperationRecord) -> Value {
    let mut filter: Value = serde_json::from_str(&op.filter).unwrap_or_else(|_| json!({}));
    if !filter.is_object() {
        filter = json!({});
    }
    if op.batch_operation_type.starts_with("DELETE_") {
        return filter;
    }
    filter["state"] = json!("ACTIVE");
    match op.batch_operation_type.as_str() {
        "CANCEL_PROCESS_INSTANCE" => {
            filter["parentProcessInstanceKey"] = json!({"$exists": false});
        }
        "RESOLVE_INCIDENT" => filter["hasIncident"] = json!(true),
        _ => {}
    }
    filter
}

/// A found row's item: the key its command goes to, its process instance's and its own key.
type Target = fn(&Value) -> Option<(i64, i64, i64)>;

/// What an operation's items are found in (the resource and its key, the sort) and, from
/// each row found, its [`Target`]: a decision instance deletion's items are the decision
/// instances found, and its commands their evaluations (each deleted once, with all its
/// decision instances); the others' commands and items are their process instances.
fn items_of(op: &BatchOperationRecord) -> (Named, &'static str, Target) {
    if op.batch_operation_type == "DELETE_DECISION_INSTANCE" {
        let target = |row: &Value| {
            let instance = key_of(&row["processInstanceKey"]).unwrap_or(-1);
            let evaluation = key_of(&row["decisionEvaluationKey"])?;
            let id = row["decisionEvaluationInstanceKey"].as_str()?;
            let index = id.rsplit_once('-')?.1.parse().ok()?;
            let item = zest_history::resources::decision_instance_key(evaluation, index)?;
            Some((evaluation, instance, item))
        };
        return (
            Named::DecisionInstances,
            "decisionEvaluationInstanceKey",
            target,
        );
    }
    let target = |row: &Value| key_of(&row["processInstanceKey"]).map(|k| (k, k, k));
    (Named::ProcessInstances, "processInstanceKey", target)
}

/// A decision instance deletion's items: one per decision instance found, each with the
/// outcome of its evaluation's deletion (`done`, one item per evaluation).
fn per_decision_instance(
    found: &[(i64, i64, i64)],
    done: Vec<BatchOperationItem>,
) -> Vec<BatchOperationItem> {
    found
        .iter()
        .filter_map(|(evaluation, _, item)| {
            let outcome = done.iter().find(|i| i.item_key == *evaluation)?;
            Some(BatchOperationItem {
                item_key: *item,
                ..outcome.clone()
            })
        })
        .collect()
}

/// One chunk: the next `CHUNK` rows after the cursor, their items' commands, then EXECUTE.
async fn run_chunk(broker: &Broker, op: &BatchOperationRecord) -> Result<(), String> {
    let (resource, sort, target) = items_of(op);
    let mut query = json!({
        "filter": forced_filter(op),
        "sort": [{"field": sort, "order": "ASC"}],
        "page": {"limit": CHUNK},
    });
    if !op.cursor.is_empty() {
        query["page"]["after"] = json!(op.cursor);
    }
    let page = broker
        .history_search(resource, &query, None)
        .await
        .map_err(|e| e.to_string())?;
    let rows = page["items"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    let found: Vec<(i64, i64, i64)> = rows.iter().filter_map(target).collect();
    let mut targets: Vec<(i64, i64)> = Vec::new();
    for (key, instance, _) in &found {
        if !targets.iter().any(|(k, _)| k == key) {
            targets.push((*key, *instance));
        }
    }
    let total = page["page"]["totalItems"].as_i64().unwrap_or(0);
    let cursor = match page["page"]["endCursor"].as_str() {
        Some(c) if !rows.is_empty() => c.to_string(),
        _ => op.cursor.clone(),
    };
    let mut items = Vec::new();
    for chunk in targets.chunks(IN_FLIGHT) {
        let runs = chunk.iter().map(|t| run_instance(broker, op, *t));
        for done in futures::future::join_all(runs).await {
            items.extend(done?);
        }
    }
    if op.batch_operation_type == "DELETE_DECISION_INSTANCE" {
        items = per_decision_instance(&found, items);
    }
    let last_chunk = rows.len() < CHUNK;
    if last_chunk && op.batch_operation_type == "DELETE_PROCESS_DEFINITION" {
        delete_definition(broker, op).await?;
    }
    let record = BatchOperationRecord {
        batch_operation_key: op.batch_operation_key,
        cursor,
        from_cursor: op.cursor.clone(),
        total,
        items,
        last_chunk,
        ..Default::default()
    };
    let value = RecordValue::BatchOperation(Box::new(record));
    let cmd = new_command(op.batch_operation_key, Intent::Execute, value, -1, -1);
    let answer = submit(broker, 1, cmd).await.map_err(|e| e.to_string())?;
    if answer.record_type == RecordType::CommandRejection {
        // suspended or canceled meanwhile, or recorded already: nothing more to do here
        tracing::debug!(
            "batch operation chunk not recorded: {}",
            answer.rejection_reason
        );
    }
    Ok(())
}

/// DELETE_PROCESS_DEFINITION's last step, once its instances' deletions are submitted: the
/// definition's own history (HISTORY_DELETION of its PROCESS_DEFINITION, on partition 1),
/// which each store applies once it holds no instance of the definition (one that was running
/// stays, and so does its definition). A search first waits for this node's history to have
/// the chunk's deletions. The items are the instances: the definition's outcome is logged.
async fn delete_definition(broker: &Broker, op: &BatchOperationRecord) -> Result<(), String> {
    let filter: Value = serde_json::from_str(&op.filter).unwrap_or(Value::Null);
    let Some(key) = key_of(&filter["processDefinitionKey"]) else {
        return Ok(());
    };
    let q = json!({"filter": {"processDefinitionKey": key.to_string()}, "page": {"limit": 1}});
    broker
        .history_search(Named::ProcessInstances, &q, None)
        .await
        .map_err(|e| e.to_string())?;
    let value = RecordValue::HistoryDeletion(HistoryDeletionRecord {
        resource_key: key,
        resource_type: HistoryDeletionRecord::PROCESS_DEFINITION.to_string(),
    });
    if let Err(e) = execute(broker, key, Intent::Delete, value).await {
        tracing::info!(
            "batch operation {}: process definition {key} kept in history: {e}",
            op.batch_operation_key
        );
    }
    Ok(())
}

fn key_of(v: &Value) -> Option<i64> {
    match v {
        Value::String(s) => s.parse().ok(),
        v => v.as_i64(),
    }
}

/// The items of one target (`(key, process instance key)`, [`items_of`]): the instance
/// itself, for incident resolution each of its active incidents, for a decision instance
/// deletion the evaluation. Err only when history cannot be read (the chunk is tried again).
async fn run_instance(
    broker: &Broker,
    op: &BatchOperationRecord,
    (key, instance): (i64, i64),
) -> Result<Vec<BatchOperationItem>, String> {
    let plan: Value = serde_json::from_str(&op.plan).unwrap_or(Value::Null);
    let mut items = Vec::new();
    match op.batch_operation_type.as_str() {
        "DELETE_PROCESS_INSTANCE" | "DELETE_PROCESS_DEFINITION" | "DELETE_DECISION_INSTANCE" => {
            let resource_type = if op.batch_operation_type == "DELETE_DECISION_INSTANCE" {
                HistoryDeletionRecord::DECISION_INSTANCE
            } else {
                HistoryDeletionRecord::PROCESS_INSTANCE
            };
            let value = RecordValue::HistoryDeletion(HistoryDeletionRecord {
                resource_key: key,
                resource_type: resource_type.to_string(),
            });
            let outcome = execute(broker, key, Intent::Delete, value).await;
            items.push(item(key, instance, outcome));
        }
        "RESOLVE_INCIDENT" => items = resolve_incidents(broker, instance).await?,
        "MODIFY_PROCESS_INSTANCE" => {
            let outcome = match modification(broker, instance, &plan).await? {
                Some(value) => execute(broker, instance, Intent::Modify, value).await,
                None => Err("Expected an active element of a move instruction's source \
                             element, but the process instance has none"
                    .to_string()),
            };
            items.push(item(instance, instance, outcome));
        }
        "MIGRATE_PROCESS_INSTANCE" => {
            let value = migration(instance, &plan);
            let outcome = execute(broker, instance, Intent::Migrate, value).await;
            items.push(item(instance, instance, outcome));
        }
        _ => {
            let outcome = execute(broker, instance, Intent::Cancel, cancel(instance)).await;
            items.push(item(instance, instance, outcome));
        }
    }
    Ok(items)
}

/// RESOLVE_INCIDENT's items of one instance: each of its active incidents resolved (a job out
/// of retries gets one first, as Camunda's batch does).
async fn resolve_incidents(
    broker: &Broker,
    instance: i64,
) -> Result<Vec<BatchOperationItem>, String> {
    let mut items = Vec::new();
    let q = json!({"filter": {"processInstanceKey": instance.to_string(), "state": "ACTIVE"},
                   "page": {"limit": CHUNK}});
    let page = broker
        .history_search(Named::Incidents, &q, None)
        .await
        .map_err(|e| e.to_string())?;
    let incidents: Vec<(i64, Option<i64>)> = page["items"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|i| {
                    let job = if i["errorType"] == "JOB_NO_RETRIES" {
                        key_of(&i["jobKey"])
                    } else {
                        None
                    };
                    Some((key_of(&i["incidentKey"])?, job))
                })
                .collect()
        })
        .unwrap_or_default();
    for (key, job) in incidents {
        if let Some(job) = job.filter(|j| *j > 0) {
            // a job out of retries gets one first, as Camunda's batch does
            let _ = execute(broker, job, Intent::UpdateRetries, retries(1)).await;
        }
        let outcome = execute(broker, key, Intent::Resolve, resolve()).await;
        items.push(item(key, instance, outcome));
    }
    Ok(items)
}

fn item(key: i64, instance: i64, outcome: Result<(), String>) -> BatchOperationItem {
    let (state, error_message) = match outcome {
        Ok(()) => ("COMPLETED", String::new()),
        Err(e) => ("FAILED", e),
    };
    BatchOperationItem {
        item_key: key,
        process_instance_key: instance,
        state: state.to_string(),
        error_message,
    }
}

/// Submits one item's command to its key's partition: Ok when accepted, the rejection's
/// reason (or the broker's error) when not.
async fn execute(
    broker: &Broker,
    key: i64,
    intent: Intent,
    value: RecordValue,
) -> Result<(), String> {
    let cmd = new_command(key, intent, value, -1, -1);
    match submit(broker, broker.partition_of(key), cmd).await {
        Ok(r) if r.record_type == RecordType::CommandRejection => {
            let code = serde_json::to_value(r.rejection_type).unwrap_or(Value::Null);
            Err(format!(
                "Command '{}' rejected with code '{}': {}",
                intent.name(),
                code.as_str().unwrap_or("REJECTED"),
                r.rejection_reason
            ))
        }
        Ok(_) => Ok(()),
        Err(e) => Err(e.to_string()),
    }
}

/// `Broker::submit`, waiting out backpressure: a refusal is tried again after 100 ms, then
/// twice as long each time up to 2 s, for at most a minute.
async fn submit(broker: &Broker, partition: u32, cmd: Record) -> Result<Record, BrokerError> {
    let mut pause = Duration::from_millis(100);
    let mut waited = Duration::ZERO;
    loop {
        match broker.submit(partition, cmd.clone()).await {
            Err(
                BrokerError::Backpressure(_)
                | BrokerError::NodeBusy(_)
                | BrokerError::JobBacklog(_)
                | BrokerError::MemoryFull { .. },
            ) if waited < Duration::from_secs(60) => {
                tokio::time::sleep(pause).await;
                waited += pause;
                pause = (pause * 2).min(Duration::from_secs(2));
            }
            other => return other,
        }
    }
}

fn cancel(instance: i64) -> RecordValue {
    RecordValue::ProcessInstance(ProcessInstanceRecord {
        bpmn_process_id: String::new(),
        version: -1,
        process_definition_key: -1,
        process_instance_key: instance,
        element_id: String::new(),
        flow_scope_key: -1,
        bpmn_element_type: BpmnElementType::Unspecified,
        bpmn_event_type: BpmnEventType::Unspecified,
        parent_process_instance_key: -1,
        parent_element_instance_key: -1,
        tenant_id: DEFAULT_TENANT.into(),
    })
}

fn retries(retries: i32) -> RecordValue {
    RecordValue::Job(Box::new(JobRecord {
        retries,
        ..Default::default()
    }))
}

fn resolve() -> RecordValue {
    RecordValue::Incident(IncidentRecord {
        error_type: ErrorType::Unknown,
        error_message: String::new(),
        bpmn_process_id: String::new(),
        process_definition_key: -1,
        process_instance_key: -1,
        element_id: String::new(),
        element_instance_key: -1,
        job_key: -1,
        variable_scope_key: -1,
        tenant_id: DEFAULT_TENANT.into(),
    })
}

/// The migration plan (`{targetProcessDefinitionKey, mappingInstructions}`, checked when the
/// operation was created) for one instance.
fn migration(instance: i64, plan: &Value) -> RecordValue {
    let mappings = plan["mappingInstructions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    RecordValue::ProcessInstanceMigration(ProcessInstanceMigrationRecord {
        process_instance_key: instance,
        target_process_definition_key: key_of(&plan["targetProcessDefinitionKey"]).unwrap_or(-1),
        mapping_instructions: mappings
            .iter()
            .map(|m| MappingInstruction {
                source_element_id: m["sourceElementId"].as_str().unwrap_or("").to_string(),
                target_element_id: m["targetElementId"].as_str().unwrap_or("").to_string(),
            })
            .collect(),
        tenant_id: DEFAULT_TENANT.into(),
    })
}

/// The move instructions (`[{sourceElementId, targetElementId}]`) for one instance: each
/// source's active element instances terminated, its target activated. None when no source
/// element is active.
async fn modification(
    broker: &Broker,
    instance: i64,
    moves: &Value,
) -> Result<Option<RecordValue>, String> {
    let mut terminate = Vec::new();
    let mut activate = Vec::new();
    for m in moves.as_array().into_iter().flatten() {
        let source = m["sourceElementId"].as_str().unwrap_or("");
        let q = json!({"filter": {"processInstanceKey": instance.to_string(),
                                  "elementId": source, "state": "ACTIVE"},
                       "page": {"limit": CHUNK}});
        let page = broker
            .history_search(Named::ElementInstances, &q, None)
            .await
            .map_err(|e| e.to_string())?;
        let keys: Vec<i64> = page["items"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|i| key_of(&i["elementInstanceKey"]))
                    .collect()
            })
            .unwrap_or_default();
        if keys.is_empty() {
            continue;
        }
        terminate.extend(keys.into_iter().map(|k| TerminateInstruction {
            element_instance_key: k,
        }));
        activate.push(zest_protocol::ActivateInstruction {
            element_id: m["targetElementId"].as_str().unwrap_or("").to_string(),
            ancestor_scope_key: -1,
            variable_instructions: Vec::new(),
        });
    }
    if terminate.is_empty() {
        return Ok(None);
    }
    Ok(Some(RecordValue::ProcessInstanceModification(
        ProcessInstanceModificationRecord {
            process_instance_key: instance,
            terminate_instructions: terminate,
            activate_instructions: activate,
            activated_element_instance_keys: Vec::new(),
            tenant_id: DEFAULT_TENANT.into(),
        },
    )))
}
