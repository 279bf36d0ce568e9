//! USER_TASK: Camunda user tasks, indexed by their element instance.

use super::*;
use crate::keys::user_task_key;
use crate::state::Ks;
use crate::state::Txn;
use crate::types::PendingTransition;
use crate::types::StoredUserTask;
use crate::types::UserTaskState;

pub(super) fn apply(txn: &mut Txn<'_>, r: &Record, u: &zest_protocol::UserTaskRecord) {
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
