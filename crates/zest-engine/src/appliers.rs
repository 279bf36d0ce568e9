//! Event appliers: the only code that changes state. Processing applies each event as it is
//! written; replay and followers apply the same events from the log and reach the same state.

use std::collections::BTreeMap;

use zest_model::{BpmnElementType, ElementKind, Process};
use zest_protocol::{partition_of_key, Intent, Record, RecordValue};

use crate::engine::META_MAX_KEY;
use crate::models::Models;
use crate::state::{key_i64, read_i64, KeyBuf, Ks, Txn};
use crate::types::*;

/// Keeps the key generator past `r`'s key, so a replayed partition generates the keys the
/// leader generated. Applied to events and to follow-up commands (whose key may be used by no
/// event, e.g. a parallel join's rejected activation).
pub fn observe_key(txn: &mut Txn<'_>, r: &Record) {
    if r.key > 0 && partition_of_key(r.key) == r.partition_id {
        let max: i64 = txn.get(Ks::Meta, META_MAX_KEY).unwrap_or(0);
        if r.key > max {
            txn.put(Ks::Meta, META_MAX_KEY.to_vec(), &r.key);
        }
    }
}

pub fn apply_event(txn: &mut Txn<'_>, models: &mut Models, r: &Record) {
    observe_key(txn, r);
    match &r.value {
        RecordValue::Process(p) if r.intent == Intent::Created => {
            txn.put(
                Ks::Processes,
                key_i64(r.key),
                &StoredProcess { record: p.clone() },
            );
            let latest: Option<LatestVersion> =
                txn.get(Ks::ProcessLatest, p.bpmn_process_id.as_bytes());
            if latest.map(|l| l.version < p.version).unwrap_or(true) {
                txn.put(
                    Ks::ProcessLatest,
                    p.bpmn_process_id.as_bytes().to_vec(),
                    &LatestVersion {
                        version: p.version,
                        key: r.key,
                    },
                );
            }
            txn.put(
                Ks::ProcessVersions,
                version_key(&p.bpmn_process_id, p.version),
                &r.key,
            );
        }
        RecordValue::Process(p) if r.intent == Intent::Deleted => {
            txn.delete(Ks::Processes, key_i64(r.key));
            // the version entry stays: version numbers are not given again, and a lookup by
            // version finds no process behind it
            let latest: Option<LatestVersion> =
                txn.get(Ks::ProcessLatest, p.bpmn_process_id.as_bytes());
            if latest.is_some_and(|l| l.key == r.key) {
                let prefix = KeyBuf::new().str(&p.bpmn_process_id).build();
                let previous = txn
                    .scan_prefix(Ks::ProcessVersions, &prefix, usize::MAX)
                    .into_iter()
                    .rev()
                    .filter_map(|(k, v)| {
                        let key: i64 = zest_protocol::codec::decode(&v).ok()?;
                        let version = read_i64(&k, prefix.len()) as i32;
                        (key != r.key && txn.get_raw(Ks::Processes, &key_i64(key)).is_some())
                            .then_some(LatestVersion { version, key })
                    })
                    .next();
                match previous {
                    Some(l) => {
                        txn.put(Ks::ProcessLatest, p.bpmn_process_id.as_bytes().to_vec(), &l)
                    }
                    None => txn.delete(Ks::ProcessLatest, p.bpmn_process_id.as_bytes().to_vec()),
                }
            }
            models.remove(r.key);
        }
        RecordValue::ProcessInstanceCreation(c)
            if r.intent == Intent::Created && r.request_id >= 0 =>
        {
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
        RecordValue::ProcessInstance(pi) => apply_process_instance(txn, models, r, pi),
        RecordValue::Job(j) => apply_job(txn, r, j),
        RecordValue::JobBatch(b) if r.intent == Intent::Activated => {
            for (job_key, job) in b.job_keys.iter().zip(b.jobs.iter()) {
                let Some(mut stored): Option<StoredJob> = txn.get(Ks::Jobs, &key_i64(*job_key))
                else {
                    continue;
                };
                txn.delete(
                    Ks::JobsActivatable,
                    activatable_key(&stored.record.job_type, *job_key),
                );
                stored.state = JobState::Activated;
                stored.record.worker = job.worker.clone();
                stored.record.deadline = job.deadline;
                stored.record.timeout = job.timeout;
                txn.put_raw(
                    Ks::JobDeadlines,
                    due_key(job.deadline, *job_key),
                    Vec::new(),
                );
                txn.put(Ks::Jobs, key_i64(*job_key), &stored);
            }
        }
        RecordValue::CompensationSubscription(c) => {
            let key = crate::compensation::subscription_key(c.process_instance_key, r.key);
            match r.intent {
                Intent::Created | Intent::Triggered => {
                    txn.put(Ks::CompensationSubscriptions, key, c)
                }
                Intent::Completed | Intent::Deleted => {
                    txn.delete(Ks::CompensationSubscriptions, key)
                }
                _ => {}
            }
        }
        // a migrated variable keeps its value (the record carries none)
        RecordValue::Variable(_) if r.intent == Intent::Migrated => {}
        RecordValue::Variable(v) => {
            let scope = key_i64(v.scope_key);
            let doc = txn.get_raw(Ks::Variables, &scope).unwrap_or_default();
            let doc = crate::scope_variables::upsert(&doc, &v.name, r.key, &v.value);
            txn.put_raw(Ks::Variables, scope, doc);
        }
        RecordValue::Incident(i) => match r.intent {
            Intent::Created => {
                let failed_step = if i.job_key > 0 {
                    FailedStep::Job
                } else {
                    let inst: Option<ElementInstance> =
                        txn.get(Ks::ElementInstances, &key_i64(i.element_instance_key));
                    // resolving it re-runs the step from the start, its execution listeners
                    // included (as Zeebe re-processes the command that failed)
                    txn.delete(Ks::ExecutionListeners, key_i64(i.element_instance_key));
                    match inst.map(|e| e.state) {
                        Some(Intent::ElementCompleting) => FailedStep::CompleteElement,
                        _ => FailedStep::ActivateElement,
                    }
                };
                txn.put(
                    Ks::Incidents,
                    key_i64(r.key),
                    &StoredIncident {
                        record: i.clone(),
                        failed_step,
                    },
                );
                let index_key = if i.job_key > 0 {
                    i.job_key
                } else {
                    i.element_instance_key
                };
                txn.put(Ks::IncidentIndex, key_i64(index_key), &r.key);
            }
            Intent::Migrated => {
                if let Some(mut stored) = txn.get::<StoredIncident>(Ks::Incidents, &key_i64(r.key))
                {
                    stored.record = i.clone();
                    txn.put(Ks::Incidents, key_i64(r.key), &stored);
                }
            }
            Intent::Resolved => {
                txn.delete(Ks::Incidents, key_i64(r.key));
                let index_key = if i.job_key > 0 {
                    i.job_key
                } else {
                    i.element_instance_key
                };
                txn.delete(Ks::IncidentIndex, key_i64(index_key));
                if i.job_key > 0 {
                    if let Some(mut job) = txn.get::<StoredJob>(Ks::Jobs, &key_i64(i.job_key)) {
                        if matches!(job.state, JobState::Failed | JobState::ErrorThrown) {
                            job.state = JobState::Activatable;
                            txn.put_raw(
                                Ks::JobsActivatable,
                                activatable_key(&job.record.job_type, i.job_key),
                                Vec::new(),
                            );
                            txn.put(Ks::Jobs, key_i64(i.job_key), &job);
                        }
                    }
                }
            }
            _ => {}
        },
        RecordValue::Message(_)
        | RecordValue::MessageSubscription(_)
        | RecordValue::ProcessMessageSubscription(_)
        | RecordValue::MessageStartEventSubscription(_)
        | RecordValue::ProcessEvent(_) => apply_message(txn, r),
        RecordValue::SignalSubscription(sub) => apply_signal_subscription(txn, r, sub),
        RecordValue::Signal(_) | RecordValue::ProcessInstanceBatch(_) => {}
        RecordValue::UserTask(u) => apply_user_task(txn, r, u),
        // the result of an ad-hoc sub-process's job said it is done: it completes once its
        // flows are (ad_hoc::job_flow_completed)
        RecordValue::AdHocSubProcessInstruction(a)
            if r.intent == Intent::Completed && a.completion_condition_fulfilled =>
        {
            txn.put_raw(
                Ks::AdHocFulfilled,
                key_i64(a.ad_hoc_sub_process_instance_key),
                Vec::new(),
            );
        }
        RecordValue::Form(f) if r.intent == Intent::Deleted => {
            txn.delete(Ks::Forms, tagged_key(b'k', &r.key.to_be_bytes()));
            let previous = previous_version(txn, Ks::Forms, b'k', r.key, |v| {
                let f2: zest_protocol::FormRecord = zest_protocol::codec::decode(v).ok()?;
                (f2.form_id == f.form_id).then_some(f2.version)
            });
            set_latest(
                txn,
                Ks::Forms,
                tagged_key(b'l', f.form_id.as_bytes()),
                r.key,
                previous,
            );
        }
        RecordValue::DecisionRequirements(d) if r.intent == Intent::Deleted => {
            txn.delete(Ks::Decisions, tagged_key(b'r', &r.key.to_be_bytes()));
            let previous = previous_version(txn, Ks::Decisions, b'r', r.key, |v| {
                let d2: zest_protocol::DecisionRequirementsRecord =
                    zest_protocol::codec::decode(v).ok()?;
                (d2.decision_requirements_id == d.decision_requirements_id)
                    .then_some(d2.decision_requirements_version)
            });
            let latest = tagged_key(b'R', d.decision_requirements_id.as_bytes());
            set_latest(txn, Ks::Decisions, latest, r.key, previous);
            models.remove_decision_requirements(r.key);
        }
        RecordValue::Decision(d) if r.intent == Intent::Deleted => {
            txn.delete(Ks::Decisions, tagged_key(b'd', &r.key.to_be_bytes()));
            txn.delete(
                Ks::Decisions,
                crate::decisions::member_key(d.decision_requirements_key, &d.decision_id),
            );
            let previous = previous_version(txn, Ks::Decisions, b'd', r.key, |v| {
                let d2: zest_protocol::DecisionRecord = zest_protocol::codec::decode(v).ok()?;
                (d2.decision_id == d.decision_id).then_some(d2.version)
            });
            let latest = tagged_key(b'D', d.decision_id.as_bytes());
            set_latest(txn, Ks::Decisions, latest, r.key, previous);
        }
        RecordValue::Form(f) if r.intent == Intent::Created => {
            txn.put(Ks::Forms, tagged_key(b'k', &r.key.to_be_bytes()), f);
            put_latest(
                txn,
                Ks::Forms,
                tagged_key(b'l', f.form_id.as_bytes()),
                f.version,
                r.key,
            );
        }
        RecordValue::DecisionRequirements(d) if r.intent == Intent::Created => {
            txn.put(Ks::Decisions, tagged_key(b'r', &r.key.to_be_bytes()), d);
            put_latest(
                txn,
                Ks::Decisions,
                tagged_key(b'R', d.decision_requirements_id.as_bytes()),
                d.decision_requirements_version,
                r.key,
            );
        }
        RecordValue::Decision(d) if r.intent == Intent::Created => {
            txn.put(Ks::Decisions, tagged_key(b'd', &r.key.to_be_bytes()), d);
            put_latest(
                txn,
                Ks::Decisions,
                tagged_key(b'D', d.decision_id.as_bytes()),
                d.version,
                r.key,
            );
            put_latest(
                txn,
                Ks::Decisions,
                crate::decisions::member_key(d.decision_requirements_key, &d.decision_id),
                d.version,
                r.key,
            );
        }
        RecordValue::Timer(t) => match r.intent {
            Intent::Created => {
                txn.put(Ks::Timers, key_i64(r.key), t);
                txn.put_raw(Ks::TimerDueDates, due_key(t.due_date, r.key), Vec::new());
                txn.put_raw(
                    Ks::ElementTimers,
                    element_timer_key(timer_owner(t), r.key),
                    Vec::new(),
                );
                update_instance(txn, t.element_instance_key, |e| {
                    if e.record.element_id == t.target_element_id {
                        e.timer_key = r.key;
                    }
                });
            }
            // a migrated timer keeps its due date and owner; its target and process change
            Intent::Migrated => txn.put(Ks::Timers, key_i64(r.key), t),
            Intent::Triggered | Intent::Canceled => {
                txn.delete(Ks::Timers, key_i64(r.key));
                txn.delete(Ks::TimerDueDates, due_key(t.due_date, r.key));
                txn.delete(Ks::ElementTimers, element_timer_key(timer_owner(t), r.key));
                update_instance(txn, t.element_instance_key, |e| {
                    if e.timer_key == r.key {
                        e.timer_key = -1;
                    }
                });
            }
            _ => {}
        },
        _ => {}
    }
}

/// Messages, message subscriptions (both sides), message start events and event triggers.
fn apply_message(txn: &mut Txn<'_>, r: &Record) {
    use crate::events::trigger_key;
    use crate::messages::*;
    use crate::types::ProcessMessageSubscriptionState as Pms;
    match (&r.value, r.intent) {
        (RecordValue::Message(m), Intent::Published) => {
            txn.put(Ks::Messages, key_i64(r.key), m);
            txn.put_raw(
                Ks::MessageIndex,
                message_name_key(&m.name, &m.correlation_key, r.key),
                Vec::new(),
            );
            txn.put_raw(Ks::MessageDeadlines, due_key(m.deadline, r.key), Vec::new());
            if !m.message_id.is_empty() {
                txn.put(
                    Ks::MessageIndex,
                    message_id_key(&m.name, &m.correlation_key, &m.message_id),
                    &r.key,
                );
            }
        }
        (RecordValue::Message(_), Intent::Expired) => {
            let Some(m) = txn.get::<zest_protocol::MessageRecord>(Ks::Messages, &key_i64(r.key))
            else {
                return;
            };
            txn.delete(Ks::Messages, key_i64(r.key));
            txn.delete(
                Ks::MessageIndex,
                message_name_key(&m.name, &m.correlation_key, r.key),
            );
            txn.delete(Ks::MessageDeadlines, due_key(m.deadline, r.key));
            if !m.message_id.is_empty() {
                txn.delete(
                    Ks::MessageIndex,
                    message_id_key(&m.name, &m.correlation_key, &m.message_id),
                );
            }
            for (k, _) in txn.scan_prefix(Ks::MessageIndex, &correlated_prefix(r.key), usize::MAX) {
                txn.delete(Ks::MessageIndex, k);
            }
        }
        (RecordValue::MessageSubscription(m), intent) => {
            let k = subscription_key(m.element_instance_key, &m.message_name);
            match intent {
                Intent::Created => {
                    txn.put(
                        Ks::MessageSubscriptions,
                        k,
                        &StoredMessageSubscription {
                            key: r.key,
                            record: m.clone(),
                            correlating: false,
                        },
                    );
                    txn.put_raw(
                        Ks::MessageSubscriptions,
                        subscription_name_key(
                            &m.message_name,
                            &m.correlation_key,
                            m.element_instance_key,
                        ),
                        Vec::new(),
                    );
                }
                Intent::Correlating => {
                    txn.put_raw(
                        Ks::MessageIndex,
                        correlated_key(m.message_key, &m.bpmn_process_id),
                        Vec::new(),
                    );
                    if let Some(mut sub) =
                        txn.get::<StoredMessageSubscription>(Ks::MessageSubscriptions, &k)
                    {
                        sub.correlating = true;
                        sub.record.message_key = m.message_key;
                        sub.record.variables = m.variables.clone();
                        txn.put(Ks::MessageSubscriptions, k, &sub);
                    }
                }
                Intent::Correlated if !m.interrupting => {
                    if let Some(mut sub) =
                        txn.get::<StoredMessageSubscription>(Ks::MessageSubscriptions, &k)
                    {
                        sub.correlating = false;
                        txn.put(Ks::MessageSubscriptions, k, &sub);
                    }
                }
                Intent::Rejected => {
                    txn.delete(
                        Ks::MessageIndex,
                        correlated_key(m.message_key, &m.bpmn_process_id),
                    );
                    if let Some(mut sub) =
                        txn.get::<StoredMessageSubscription>(Ks::MessageSubscriptions, &k)
                    {
                        sub.correlating = false;
                        txn.put(Ks::MessageSubscriptions, k, &sub);
                    }
                }
                Intent::Migrated => {
                    if let Some(mut sub) =
                        txn.get::<StoredMessageSubscription>(Ks::MessageSubscriptions, &k)
                    {
                        sub.record.bpmn_process_id = m.bpmn_process_id.clone();
                        txn.put(Ks::MessageSubscriptions, k, &sub);
                    }
                }
                Intent::Correlated | Intent::Deleted => {
                    txn.delete(Ks::MessageSubscriptions, k);
                    txn.delete(
                        Ks::MessageSubscriptions,
                        subscription_name_key(
                            &m.message_name,
                            &m.correlation_key,
                            m.element_instance_key,
                        ),
                    );
                }
                _ => {}
            }
        }
        (RecordValue::ProcessMessageSubscription(m), intent) => {
            let k = process_subscription_key(m.element_instance_key, &m.message_name);
            let set_state = |txn: &mut Txn<'_>, state: Pms| {
                if let Some(mut sub) =
                    txn.get::<StoredProcessMessageSubscription>(Ks::ProcessMessageSubscriptions, &k)
                {
                    sub.state = state;
                    txn.put(Ks::ProcessMessageSubscriptions, k.clone(), &sub);
                }
            };
            match intent {
                Intent::Creating => txn.put(
                    Ks::ProcessMessageSubscriptions,
                    k.clone(),
                    &StoredProcessMessageSubscription {
                        key: r.key,
                        record: m.clone(),
                        state: Pms::Creating,
                    },
                ),
                Intent::Created => set_state(txn, Pms::Created),
                Intent::Correlated if !m.interrupting => set_state(txn, Pms::Created),
                Intent::Deleting => set_state(txn, Pms::Deleting),
                Intent::Migrated => {
                    if let Some(mut sub) = txn.get::<StoredProcessMessageSubscription>(
                        Ks::ProcessMessageSubscriptions,
                        &k,
                    ) {
                        sub.record = m.clone();
                        txn.put(Ks::ProcessMessageSubscriptions, k.clone(), &sub);
                    }
                }
                Intent::Correlated | Intent::Deleted => {
                    txn.delete(Ks::ProcessMessageSubscriptions, k.clone())
                }
                _ => {}
            }
        }
        (RecordValue::MessageStartEventSubscription(m), intent) => {
            let k = start_subscription_key(
                &m.message_name,
                m.process_definition_key,
                &m.start_event_id,
            );
            match intent {
                Intent::Created => txn.put(
                    Ks::MessageStartSubscriptions,
                    k,
                    &StoredStartSubscription {
                        key: r.key,
                        record: m.clone(),
                    },
                ),
                Intent::Deleted => txn.delete(Ks::MessageStartSubscriptions, k),
                Intent::Correlated => {
                    txn.put_raw(
                        Ks::MessageIndex,
                        correlated_key(m.message_key, &m.bpmn_process_id),
                        Vec::new(),
                    );
                    if !m.correlation_key.is_empty() {
                        let lock = start_lock_key(&m.bpmn_process_id, &m.correlation_key);
                        txn.put(
                            Ks::MessageStartSubscriptions,
                            lock.clone(),
                            &m.process_instance_key,
                        );
                        txn.put_raw(
                            Ks::MessageStartSubscriptions,
                            start_lock_owner_key(m.process_instance_key),
                            lock,
                        );
                    }
                }
                _ => {}
            }
        }
        (RecordValue::ProcessEvent(e), Intent::Triggering) => txn.put(
            Ks::EventTriggers,
            trigger_key(e),
            &StoredTrigger {
                event_key: r.key,
                element_id: e.target_element_id.clone(),
                variables: e.variables.clone(),
            },
        ),
        (RecordValue::ProcessEvent(e), Intent::Triggered) => {
            txn.delete(Ks::EventTriggers, trigger_key(e))
        }
        _ => {}
    }
}

/// SIGNAL_SUBSCRIPTION CREATED / DELETED: the subscription and its index by owner.
fn apply_signal_subscription(
    txn: &mut Txn<'_>,
    r: &Record,
    sub: &zest_protocol::SignalSubscriptionRecord,
) {
    use crate::signals::{owner_key, subscription_key};
    let k = subscription_key(sub);
    match r.intent {
        Intent::Created | Intent::Migrated => {
            if r.intent == Intent::Migrated {
                // the catch event id is part of the keys: the subscription of the same owner
                // and signal under its old id goes, the migrated one comes
                for (old_owner_key, old) in crate::signals::owned(txn, sub.catch_event_instance_key)
                {
                    if old.signal_name == sub.signal_name {
                        txn.delete(Ks::SignalSubscriptions, subscription_key(&old));
                        txn.delete(Ks::SignalSubscriptions, old_owner_key);
                    }
                }
            }
            txn.put(
                Ks::SignalSubscriptions,
                k,
                &crate::types::StoredSignalSubscription {
                    key: r.key,
                    record: sub.clone(),
                },
            );
            txn.put(Ks::SignalSubscriptions, owner_key(sub), &sub.signal_name);
        }
        Intent::Deleted => {
            txn.delete(Ks::SignalSubscriptions, k);
            txn.delete(Ks::SignalSubscriptions, owner_key(sub));
        }
        _ => {}
    }
}

/// An instance started by a message start event with a correlation key ends: the key is free.
fn release_start_lock(txn: &mut Txn<'_>, process_instance_key: i64) {
    let owner = crate::messages::start_lock_owner_key(process_instance_key);
    if let Some(lock) = txn.get_raw(Ks::MessageStartSubscriptions, &owner) {
        txn.delete(Ks::MessageStartSubscriptions, lock);
        txn.delete(Ks::MessageStartSubscriptions, owner);
    }
}

fn apply_process_instance(
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
        Intent::ElementMigrated => update_instance(txn, r.key, |e| e.record = pi.clone()),
        Intent::ElementCompleted | Intent::ElementTerminated => {
            if pi.parent_element_instance_key > 0 && pi.flow_scope_key <= 0 {
                txn.delete(Ks::CalledInstances, key_i64(pi.parent_element_instance_key));
                if r.intent == Intent::ElementCompleted {
                    hand_variables_to_call_activity(txn, models, r.key, pi);
                }
            }
            txn.delete(Ks::ElementInstances, key_i64(r.key));
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
            if txn.get_raw(Ks::Variables, &key_i64(r.key)).is_some() {
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

/// Whose timer it is: the element instance's, or for a timer start event the process
/// definition's (a new version cancels the previous version's start timers through it).
pub(crate) fn timer_owner(t: &zest_protocol::TimerRecord) -> i64 {
    if t.element_instance_key > 0 {
        t.element_instance_key
    } else {
        t.process_definition_key
    }
}

/// Key of the timer index by element instance.
pub(crate) fn element_timer_key(element_instance_key: i64, timer_key: i64) -> Vec<u8> {
    KeyBuf::new()
        .i64(element_instance_key)
        .i64(timer_key)
        .build()
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

pub(crate) fn join_token_key(join_id: &str, flow_id: &str) -> String {
    format!("{join_id}\u{0}{flow_id}")
}

/// An element reached by sequence flows consumes the tokens that activated it.
fn consume_tokens(model: &Process, element_id: &str, scope: &mut ElementInstance) {
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

/// The job's element id in ERROR_THROWN when no catch event caught the error (Zeebe's marker).
pub(crate) const NO_CATCH_EVENT_FOUND: &str = "NO_CATCH_EVENT_FOUND";

/// Removes a job; returns the state of its element instance.
fn remove_job(txn: &mut Txn<'_>, job_key: i64) -> Option<Intent> {
    let key = key_i64(job_key);
    let stored = txn.get::<StoredJob>(Ks::Jobs, &key)?;
    remove_job_indexes(txn, job_key, &stored);
    txn.delete(Ks::Jobs, key);
    let mut state = None;
    update_instance(txn, stored.record.element_instance_key, |e| {
        e.job_key = -1;
        state = Some(e.state);
    });
    state
}

/// A task listener's job completed: one more listener of its task's transition is done.
fn count_task_listener(txn: &mut Txn<'_>, element_instance_key: i64) {
    let Some(task_key) = txn.get::<i64>(Ks::UserTasks, &user_task_key(b'e', element_instance_key))
    else {
        return;
    };
    let pending_key = user_task_key(b'p', task_key);
    if let Some(mut p) = txn.get::<PendingTransition>(Ks::UserTasks, &pending_key) {
        p.done += 1;
        txn.put(Ks::UserTasks, pending_key, &p);
    }
}

/// An execution listener's job completed (its element instance is ACTIVATING or COMPLETING):
/// one more listener of that phase is done.
fn count_listener(txn: &mut Txn<'_>, element_instance_key: i64, state: Option<Intent>) {
    let Some(phase) = state.and_then(crate::listeners::phase) else {
        return;
    };
    let end = phase == zest_model::ListenerEventType::End;
    let key = key_i64(element_instance_key);
    let mut progress: ListenerProgress = txn
        .get(Ks::ExecutionListeners, &key)
        .filter(|p: &ListenerProgress| p.end == end)
        .unwrap_or(ListenerProgress { end, done: 0 });
    progress.done += 1;
    txn.put(Ks::ExecutionListeners, key, &progress);
}

fn apply_job(txn: &mut Txn<'_>, r: &Record, j: &zest_protocol::JobRecord) {
    let key = key_i64(r.key);
    match r.intent {
        Intent::Created => {
            txn.put(
                Ks::Jobs,
                key.clone(),
                &StoredJob {
                    state: JobState::Activatable,
                    record: j.clone(),
                },
            );
            txn.put_raw(
                Ks::JobsActivatable,
                activatable_key(&j.job_type, r.key),
                Vec::new(),
            );
            update_instance(txn, j.element_instance_key, |e| e.job_key = r.key);
        }
        Intent::Completed => {
            let state = remove_job(txn, r.key);
            if j.kind == zest_protocol::JobKind::TaskListener {
                count_task_listener(txn, j.element_instance_key);
            } else {
                count_listener(txn, j.element_instance_key, state);
            }
        }
        Intent::Canceled => {
            remove_job(txn, r.key);
        }
        // a caught error: the job ends (Zeebe marks an uncaught one NO_CATCH_EVENT_FOUND and
        // keeps it for its incident)
        Intent::ErrorThrown if j.element_id != NO_CATCH_EVENT_FOUND => {
            remove_job(txn, r.key);
        }
        _ => {
            let Some(mut stored) = txn.get::<StoredJob>(Ks::Jobs, &key) else {
                return;
            };
            remove_job_indexes(txn, r.key, &stored);
            match r.intent {
                Intent::Failed => {
                    stored.record.retries = j.retries;
                    stored.record.error_message = j.error_message.clone();
                    stored.record.retry_backoff = j.retry_backoff;
                    stored.record.recurring_time = j.recurring_time;
                    stored.record.deadline = -1;
                    stored.state = if j.retries > 0 {
                        if j.retry_backoff > 0 {
                            JobState::FailedBackoff
                        } else {
                            JobState::Activatable
                        }
                    } else {
                        JobState::Failed
                    };
                }
                Intent::TimedOut | Intent::RecurredAfterBackoff | Intent::Yielded => {
                    stored.record.deadline = -1;
                    stored.state = JobState::Activatable;
                }
                Intent::RetriesUpdated => stored.record.retries = j.retries,
                Intent::ErrorThrown => {
                    stored.state = JobState::ErrorThrown;
                    stored.record.error_code = j.error_code.clone();
                    stored.record.error_message = j.error_message.clone();
                    stored.record.deadline = -1;
                }
                Intent::TimeoutUpdated => {
                    stored.record.deadline = j.deadline;
                    stored.record.timeout = j.timeout;
                }
                Intent::Migrated => {
                    stored.record.element_id = j.element_id.clone();
                    stored.record.bpmn_process_id = j.bpmn_process_id.clone();
                    stored.record.process_definition_key = j.process_definition_key;
                    stored.record.process_definition_version = j.process_definition_version;
                }
                _ => {}
            }
            add_job_indexes(txn, r.key, &stored);
            txn.put(Ks::Jobs, key, &stored);
        }
    }
}

fn remove_job_indexes(txn: &mut Txn<'_>, job_key: i64, job: &StoredJob) {
    match job.state {
        JobState::Activatable => txn.delete(
            Ks::JobsActivatable,
            activatable_key(&job.record.job_type, job_key),
        ),
        JobState::Activated => txn.delete(Ks::JobDeadlines, due_key(job.record.deadline, job_key)),
        JobState::FailedBackoff => {
            txn.delete(Ks::JobBackoffs, due_key(job.record.recurring_time, job_key))
        }
        JobState::Failed | JobState::ErrorThrown => {}
    }
}

fn add_job_indexes(txn: &mut Txn<'_>, job_key: i64, job: &StoredJob) {
    match job.state {
        JobState::Activatable => txn.put_raw(
            Ks::JobsActivatable,
            activatable_key(&job.record.job_type, job_key),
            Vec::new(),
        ),
        JobState::Activated => txn.put_raw(
            Ks::JobDeadlines,
            due_key(job.record.deadline, job_key),
            Vec::new(),
        ),
        JobState::FailedBackoff => txn.put_raw(
            Ks::JobBackoffs,
            due_key(job.record.recurring_time, job_key),
            Vec::new(),
        ),
        JobState::Failed | JobState::ErrorThrown => {}
    }
}

/// A process instance started by a call activity completed: its variables (in Zeebe's order)
/// become the event that completes the call activity, when the call activity takes them (all
/// child variables propagated, or output mappings to evaluate). Kept as a trigger without a
/// TRIGGERING record, as Zeebe does; consumed by the call activity's completion.
fn hand_variables_to_call_activity(
    txn: &mut Txn<'_>,
    models: &mut Models,
    child_key: i64,
    pi: &zest_protocol::ProcessInstanceRecord,
) {
    let call_key = key_i64(pi.parent_element_instance_key);
    let Some(call) = txn.get::<ElementInstance>(Ks::ElementInstances, &call_key) else {
        return;
    };
    if call.state != Intent::ElementActivated || txn.get_raw(Ks::EventTriggers, &call_key).is_some()
    {
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
        crate::variables::sort_like_zeebe(&mut vars);
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
fn is_inner_instance(
    model: Option<&zest_model::Process>,
    pi: &zest_protocol::ProcessInstanceRecord,
) -> bool {
    model
        .and_then(|m| m.element_by_id(&pi.element_id))
        .is_some_and(|(_, el)| el.is_inner_instance(pi.bpmn_element_type))
}

/// Updates (creating if needed) the multi-instance counters of `key`; returns the new counts.
fn update_counters(
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

pub(crate) fn update_instance(txn: &mut Txn<'_>, key: i64, f: impl FnOnce(&mut ElementInstance)) {
    let k = key_i64(key);
    if let Some(mut inst) = txn.get::<ElementInstance>(Ks::ElementInstances, &k) {
        f(&mut inst);
        txn.put(Ks::ElementInstances, k, &inst);
    }
}

pub fn version_key(bpmn_process_id: &str, version: i32) -> Vec<u8> {
    KeyBuf::new()
        .str(bpmn_process_id)
        .i64(version as i64)
        .build()
}

pub fn activatable_key(job_type: &str, job_key: i64) -> Vec<u8> {
    KeyBuf::new().str(job_type).i64(job_key).build()
}

pub fn due_key(due: i64, key: i64) -> Vec<u8> {
    KeyBuf::new().i64(due).i64(key).build()
}

pub fn child_key(parent: i64, child: i64) -> Vec<u8> {
    KeyBuf::new().i64(parent).i64(child).build()
}

/// Records `key` as the latest version of what `latest_key` names, unless a later version is
/// already recorded.
fn put_latest(txn: &mut Txn<'_>, ks: Ks, latest_key: Vec<u8>, version: i32, key: i64) {
    let latest: Option<LatestVersion> = txn.get(ks, &latest_key);
    if latest.map(|l| l.version < version).unwrap_or(true) {
        txn.put(ks, latest_key, &LatestVersion { version, key });
    }
}

/// The newest version left (by version number) among the entries under `tag` (keyed by their
/// 8-byte key) that `version_of` recognizes, leaving out `deleted`.
fn previous_version(
    txn: &Txn<'_>,
    ks: Ks,
    tag: u8,
    deleted: i64,
    version_of: impl Fn(&[u8]) -> Option<i32>,
) -> Option<LatestVersion> {
    txn.scan_prefix(ks, &[tag], usize::MAX)
        .into_iter()
        .filter_map(|(k, v)| {
            let key = i64::from_be_bytes(k.get(1..9)?.try_into().ok()?);
            let version = version_of(&v)?;
            (key != deleted).then_some(LatestVersion { version, key })
        })
        .max_by_key(|l| l.version)
}

/// After deleting `deleted`: if it was the latest, `previous` becomes the latest (or none is).
fn set_latest(
    txn: &mut Txn<'_>,
    ks: Ks,
    latest_key: Vec<u8>,
    deleted: i64,
    previous: Option<LatestVersion>,
) {
    let latest: Option<LatestVersion> = txn.get(ks, &latest_key);
    if latest.is_some_and(|l| l.key == deleted) {
        match previous {
            Some(p) => txn.put(ks, latest_key, &p),
            None => txn.delete(ks, latest_key),
        }
    }
}

/// A key of one tag byte and the rest: in Ks::Forms (`k` and the form key, or `l` and the form
/// id) and in Ks::Decisions (see there).
pub(crate) fn tagged_key(tag: u8, rest: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(rest.len() + 1);
    k.push(tag);
    k.extend_from_slice(rest);
    k
}

/// The key of a user task (`t`) or of an element instance's user task (`e`) in Ks::UserTasks.
pub fn user_task_key(tag: u8, key: i64) -> Vec<u8> {
    KeyBuf::new().tag(tag).i64(key).build()
}

fn apply_user_task(txn: &mut Txn<'_>, r: &Record, u: &zest_protocol::UserTaskRecord) {
    let key = user_task_key(b't', r.key);
    let store = |txn: &mut Txn<'_>, state: UserTaskState| {
        // the per-command fields belong to the command's records, not to the task
        let mut record = u.clone();
        record.changed_attributes.clear();
        record.action.clear();
        record.variables.clear();
        txn.put(
            Ks::UserTasks,
            key.clone(),
            &StoredUserTask { state, record },
        );
    };
    let set_state = |txn: &mut Txn<'_>, state: UserTaskState| {
        if let Some(mut t) = txn.get::<StoredUserTask>(Ks::UserTasks, &key) {
            t.state = state;
            txn.put(Ks::UserTasks, key.clone(), &t);
        }
    };
    let pending_key = user_task_key(b'p', r.key);
    // a transition begins: what it will write at its end waits for its task listeners
    let begin = |txn: &mut Txn<'_>| {
        txn.put(
            Ks::UserTasks,
            pending_key.clone(),
            &PendingTransition {
                record: u.clone(),
                done: 0,
                corrected: Vec::new(),
                request_id: r.request_id,
                request_stream_id: r.request_stream_id,
            },
        );
    };
    match r.intent {
        Intent::Creating => {
            store(txn, UserTaskState::Creating);
            txn.put(
                Ks::UserTasks,
                user_task_key(b'e', u.element_instance_key),
                &r.key,
            );
            begin(txn);
        }
        Intent::Created | Intent::Assigned | Intent::Updated => {
            store(txn, UserTaskState::Created);
            txn.delete(Ks::UserTasks, pending_key);
        }
        Intent::Assigning
        | Intent::Claiming
        | Intent::Updating
        | Intent::Completing
        | Intent::Canceling => {
            let state = match r.intent {
                Intent::Assigning => UserTaskState::Assigning,
                Intent::Claiming => UserTaskState::Claiming,
                Intent::Updating => UserTaskState::Updating,
                Intent::Completing => UserTaskState::Completing,
                _ => UserTaskState::Canceling,
            };
            set_state(txn, state);
            begin(txn);
        }
        Intent::Corrected => {
            if let Some(mut p) = txn.get::<PendingTransition>(Ks::UserTasks, &pending_key) {
                // the transition's own changes stay what they were
                let changed = std::mem::take(&mut p.record.changed_attributes);
                p.record = u.clone();
                p.record.changed_attributes = changed;
                for a in &u.changed_attributes {
                    if !p.corrected.contains(a) {
                        p.corrected.push(a.clone());
                    }
                }
                txn.put(Ks::UserTasks, pending_key, &p);
            }
        }
        Intent::AssignmentDenied | Intent::UpdateDenied | Intent::CompletionDenied => {
            set_state(txn, UserTaskState::Created);
            txn.delete(Ks::UserTasks, pending_key);
        }
        Intent::Completed | Intent::Canceled => {
            txn.delete(Ks::UserTasks, key);
            txn.delete(Ks::UserTasks, user_task_key(b'e', u.element_instance_key));
            txn.delete(Ks::UserTasks, pending_key);
        }
        Intent::Migrated => {
            if let Some(mut t) = txn.get::<StoredUserTask>(Ks::UserTasks, &key) {
                t.record.element_id = u.element_id.clone();
                t.record.bpmn_process_id = u.bpmn_process_id.clone();
                t.record.process_definition_key = u.process_definition_key;
                t.record.process_definition_version = u.process_definition_version;
                txn.put(Ks::UserTasks, key.clone(), &t);
            }
        }
        _ => {}
    }
}
