//! PROCESS_INSTANCE: element instances, their children, join tokens and counters, and the
//! request of a create-with-result.

use super::*;
use crate::appliers::update_instance;
use crate::keys::child_key;
use crate::keys::definition_instances;
use crate::keys::join_token_key;
use crate::models::Models;
use crate::state::key_i64;
use crate::state::Ks;
use crate::state::Txn;
use crate::types::AwaitingResult;
use crate::types::MultiInstanceCounters;
use crate::types::StoredTrigger;
use crate::types::{ElementInstance, InstanceHead};

pub(super) fn apply(
    txn: &mut Txn<'_>,
    models: &mut Models,
    r: &Record,
    pi: &zest_protocol::ProcessInstanceRecord,
) {
    match r.intent {
        Intent::ElementActivating => {
            if pi.parent_element_instance_key > 0 && pi.flow_scope_key <= 0 {
                // a process instance started by a call activity
                txn.put(
                    Ks::CalledInstances,
                    key_i64(pi.parent_element_instance_key),
                    &r.key,
                );
            }
            let inst = ElementInstance {
                key: r.key,
                parent_key: pi.flow_scope_key,
                state: Intent::ElementActivating,
                record: pi.clone(),
                job_key: -1,
                timer_key: -1,
                active_children: 0,
                active_flows: 0,
                join_tokens: BTreeMap::new(),
            };
            txn.put(Ks::ElementInstances, key_i64(r.key), &inst);
            if let Some(entry) = definition_instances::entry(pi, r.key) {
                txn.put_raw(Ks::DefinitionInstances, entry, Vec::new());
            }
            if pi.flow_scope_key > 0 {
                txn.put_raw(
                    Ks::ElementChildren,
                    child_key(pi.flow_scope_key, r.key),
                    Vec::new(),
                );
                let model = models.get(txn, pi.process_definition_key);
                update_instance(txn, pi.flow_scope_key, |scope| {
                    scope.active_children += 1;
                    if let Some(model) = &model {
                        consume_tokens(model, &pi.element_id, scope);
                    }
                });
                if is_inner_instance(model.as_deref(), pi) {
                    // the body counts its inner instances; each inner one keeps its number
                    let body = update_counters(txn, pi.flow_scope_key, |c| c.loop_counter += 1);
                    txn.put(
                        Ks::MultiInstance,
                        key_i64(r.key),
                        &MultiInstanceCounters {
                            loop_counter: body.loop_counter,
                            ..Default::default()
                        },
                    );
                }
            }
        }
        Intent::ElementActivated | Intent::ElementCompleting | Intent::ElementTerminating => {
            update_instance(txn, r.key, |e| e.state = r.intent);
        }
        Intent::ElementMigrated => {
            let k = key_i64(r.key);
            if let Some(mut inst) = txn.get::<ElementInstance>(Ks::ElementInstances, &k) {
                // a migrated process instance moves to its new version in the index
                if let Some(from) = definition_instances::entry(&inst.record, r.key) {
                    txn.delete(Ks::DefinitionInstances, from);
                }
                if let Some(to) = definition_instances::entry(pi, r.key) {
                    txn.put_raw(Ks::DefinitionInstances, to, Vec::new());
                }
                inst.record = pi.clone();
                txn.put(Ks::ElementInstances, k, &inst);
            }
        }
        Intent::ElementCompleted | Intent::ElementTerminated => {
            if pi.parent_element_instance_key > 0 && pi.flow_scope_key <= 0 {
                txn.delete(Ks::CalledInstances, key_i64(pi.parent_element_instance_key));
                if r.intent == Intent::ElementCompleted {
                    hand_variables_to_call_activity(txn, models, r.key, pi);
                }
            }
            txn.delete(Ks::ElementInstances, key_i64(r.key));
            if let Some(entry) = definition_instances::entry(pi, r.key) {
                txn.delete(Ks::DefinitionInstances, entry);
            }
            let model = models.get(txn, pi.process_definition_key);
            let element = model
                .as_ref()
                .and_then(|m| m.element_by_id(&pi.element_id))
                .map(|(_, el)| el);
            if element.is_some_and(|el| !el.execution_listeners.is_empty()) {
                txn.delete(Ks::ExecutionListeners, key_i64(r.key));
            }
            if element.is_some_and(|el| el.ad_hoc.is_some() && el.task_definition.is_some()) {
                txn.delete(Ks::AdHocFulfilled, key_i64(r.key));
            }
            // local variables go with their scope
            if txn.contains(Ks::Variables, &key_i64(r.key)) {
                txn.delete(Ks::Variables, key_i64(r.key));
            }
            if pi.flow_scope_key > 0 {
                txn.delete(Ks::ElementChildren, child_key(pi.flow_scope_key, r.key));
                update_instance(txn, pi.flow_scope_key, |scope| {
                    scope.active_children = scope.active_children.saturating_sub(1);
                });
                if let Some(el) = element.filter(|el| el.multi_instance.is_some()) {
                    // a body or an inner instance: its counters go; a body counts its inner ones
                    txn.delete(Ks::MultiInstance, key_i64(r.key));
                    if el.is_inner_instance(pi.bpmn_element_type) {
                        let completed = r.intent == Intent::ElementCompleted;
                        update_counters(txn, pi.flow_scope_key, |c| {
                            if completed {
                                c.completed += 1;
                            } else {
                                c.terminated += 1;
                            }
                        });
                    }
                }
            } else {
                txn.delete(Ks::AwaitingResults, key_i64(r.key));
                release_start_lock(txn, r.key);
            }
        }
        Intent::SequenceFlowTaken => {
            let model = models.get(txn, pi.process_definition_key);
            update_instance(txn, pi.flow_scope_key, |scope| {
                scope.active_flows += 1;
                if let Some(model) = &model {
                    if let Some(target) = join_target(model, &pi.element_id) {
                        *scope
                            .join_tokens
                            .entry(join_token_key(&target, &pi.element_id))
                            .or_insert(0) += 1;
                    }
                }
            });
        }
        Intent::SequenceFlowDeleted => {
            // a migration moves one token of a joining gateway to the target's flow
            let model = models.get(txn, pi.process_definition_key);
            update_instance(txn, pi.flow_scope_key, |scope| {
                scope.active_flows = scope.active_flows.saturating_sub(1);
                if let Some(target) = model.and_then(|m| join_target(&m, &pi.element_id)) {
                    let k = join_token_key(&target, &pi.element_id);
                    if let Some(n) = scope.join_tokens.get_mut(&k) {
                        *n = n.saturating_sub(1);
                        if *n == 0 {
                            scope.join_tokens.remove(&k);
                        }
                    }
                }
            });
        }
        _ => {}
    }
}

/// PROCESS_INSTANCE_CREATION CREATED: only a create-with-result carries its request on the
/// event; the request waits for the instance's end.
pub(super) fn creation(
    txn: &mut Txn<'_>,
    r: &Record,
    c: &zest_protocol::ProcessInstanceCreationRecord,
) {
    if r.intent == Intent::Created && r.request_id >= 0 {
        // only a create-with-result carries its request on the CREATED event
        txn.put(
            Ks::AwaitingResults,
            key_i64(c.process_instance_key),
            &AwaitingResult {
                request_id: r.request_id,
                request_stream_id: r.request_stream_id,
                fetch_variables: c.fetch_variables.clone(),
            },
        );
    }
}

/// An instance started by a message start event with a correlation key ends: the key is free.
pub(super) fn release_start_lock(txn: &mut Txn<'_>, process_instance_key: i64) {
    let owner = crate::keys::message::start_lock_owner_key(process_instance_key);
    if let Some(lock) = txn.get_raw(Ks::MessageStartSubscriptions, &owner) {
        txn.delete(Ks::MessageStartSubscriptions, lock);
        txn.delete(Ks::MessageStartSubscriptions, owner);
    }
}

/// The parallel or inclusive gateway a flow leads to, if that gateway joins several flows.
pub(crate) fn join_target(model: &Process, flow_id: &str) -> Option<String> {
    let flow = model.flow_by_id(flow_id)?;
    let target = model.element(flow.target);
    (matches!(
        target.element_type,
        BpmnElementType::ParallelGateway | BpmnElementType::InclusiveGateway
    ) && target.incoming.len() > 1)
        .then(|| target.id.clone())
}

/// An element reached by sequence flows consumes the tokens that activated it.
pub(super) fn consume_tokens(model: &Process, element_id: &str, scope: &mut InstanceHead<'_>) {
    let Some((_, element)) = model.element_by_id(element_id) else {
        return;
    };
    if element.incoming.is_empty() {
        return;
    }
    if matches!(
        element.kind,
        ElementKind::ParallelGateway | ElementKind::InclusiveGateway
    ) && element.incoming.len() > 1
    {
        // one token from each incoming flow that has one (a parallel join has one on each)
        let mut consumed = 0;
        for &f in &element.incoming {
            let k = join_token_key(&element.id, &model.flow(f).id);
            if let Some(n) = scope.join_tokens.get_mut(&k) {
                *n -= 1;
                consumed += 1;
                if *n == 0 {
                    scope.join_tokens.remove(&k);
                }
            }
        }
        scope.active_flows = scope.active_flows.saturating_sub(consumed);
    } else {
        scope.active_flows = scope.active_flows.saturating_sub(1);
    }
}

/// A process instance started by a call activity completed: its variables (in Zeebe's order)
/// become the event that completes the call activity, when the call activity takes them (all
/// child variables propagated, or output mappings to evaluate). Kept as a trigger without a
/// TRIGGERING record, as Zeebe does; consumed by the call activity's completion.
pub(super) fn hand_variables_to_call_activity(
    txn: &mut Txn<'_>,
    models: &mut Models,
    child_key: i64,
    pi: &zest_protocol::ProcessInstanceRecord,
) {
    let call_key = key_i64(pi.parent_element_instance_key);
    let Some(call) = txn.get::<ElementInstance>(Ks::ElementInstances, &call_key) else {
        return;
    };
    if call.state != Intent::ElementActivated || txn.contains(Ks::EventTriggers, &call_key) {
        return; // being terminated, or another event is already on its way
    }
    let Some(model) = models.get(txn, call.record.process_definition_key) else {
        return;
    };
    let Some((_, el)) = model.element_by_id(&call.record.element_id) else {
        return;
    };
    let takes_variables = el
        .called_element
        .as_ref()
        .is_some_and(|c| c.propagate_all_child_variables)
        || !el.outputs.is_empty();
    if !takes_variables {
        return; // nothing for it to take: Zeebe completes it without an event
    }
    let variables = {
        let doc = txn
            .get_raw(Ks::Variables, &key_i64(child_key))
            .unwrap_or_default();
        let mut vars: Vec<(String, String)> = crate::scope_variables::iter(&doc)
            .map(|e| (e.name.to_string(), e.value.to_string()))
            .collect();
        crate::scope_variables::sort_like_zeebe(&mut vars);
        let body: Vec<String> = vars
            .iter()
            .map(|(name, value)| format!("{}:{value}", serde_json::Value::from(name.as_str())))
            .collect();
        format!("{{{}}}", body.join(","))
    };
    txn.put(
        Ks::EventTriggers,
        call_key,
        &StoredTrigger {
            event_key: child_key,
            element_id: call.record.element_id.clone(),
            variables,
        },
    );
}

/// Whether `pi` is an inner instance of a multi-instance activity (its flow scope is the body).
pub(super) fn is_inner_instance(
    model: Option<&zest_model::Process>,
    pi: &zest_protocol::ProcessInstanceRecord,
) -> bool {
    model
        .and_then(|m| m.element_by_id(&pi.element_id))
        .is_some_and(|(_, el)| el.is_inner_instance(pi.bpmn_element_type))
}

/// Updates (creating if needed) the multi-instance counters of `key`; returns the new counts.
pub(super) fn update_counters(
    txn: &mut Txn<'_>,
    key: i64,
    f: impl FnOnce(&mut MultiInstanceCounters),
) -> MultiInstanceCounters {
    let k = key_i64(key);
    let mut c: MultiInstanceCounters = txn.get(Ks::MultiInstance, &k).unwrap_or_default();
    f(&mut c);
    txn.put(Ks::MultiInstance, k, &c);
    c
}
