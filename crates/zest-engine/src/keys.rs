//! How the keys of each keyspace ([`Ks`](crate::state::Ks)) are built: ordered bytes, numbers
//! big-endian so that keys sort by number, strings followed by a separator or a length. The
//! appliers write with these keys and the processors read with them; this module sits at the
//! bottom with `state` and `types` and imports nothing else of the engine.

use crate::state::{key_i64, KeyBuf};

/// Key of the timer index by element instance.
pub(crate) fn element_timer_key(element_instance_key: i64, timer_key: i64) -> Vec<u8> {
    KeyBuf::new()
        .i64(element_instance_key)
        .i64(timer_key)
        .build()
}

pub(crate) fn join_token_key(join_id: &str, flow_id: &str) -> String {
    format!("{join_id}\u{0}{flow_id}")
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

/// Keys of compensation subscriptions ([`Ks::CompensationSubscriptions`](crate::state::Ks)).
pub(crate) mod compensation {
    use super::*;

    /// Key of a subscription: (process instance key, subscription key).
    pub(crate) fn subscription_key(process_instance_key: i64, key: i64) -> Vec<u8> {
        KeyBuf::new().i64(process_instance_key).i64(key).build()
    }
}

/// Keys of deployed decisions ([`Ks::Decisions`](crate::state::Ks)).
pub(crate) mod decision {
    use super::*;

    /// The key in Ks::Decisions of decision `decision_id` of the graph `drg_key`.
    pub(crate) fn member_key(drg_key: i64, decision_id: &str) -> Vec<u8> {
        let mut rest = drg_key.to_be_bytes().to_vec();
        rest.extend_from_slice(decision_id.as_bytes());
        tagged_key(b'm', &rest)
    }
}

/// Keys of event triggers ([`Ks::EventTriggers`](crate::state::Ks)).
pub(crate) mod event {
    use super::*;
    use zest_protocol::ProcessEventRecord;

    /// Where a PROCESS_EVENT's trigger is kept: under the element instance it triggers, or for a
    /// start event (whose scope is the process definition) under the new process instance, apart
    /// from the triggers of the process instance itself (its execution listeners').
    pub(crate) fn trigger_key(e: &ProcessEventRecord) -> Vec<u8> {
        if e.scope_key == e.process_definition_key {
            start_trigger_key(e.process_instance_key)
        } else {
            key_i64(e.scope_key)
        }
    }

    /// The key of the trigger that starts process instance `process_instance_key` at one of its
    /// start events.
    pub(crate) fn start_trigger_key(process_instance_key: i64) -> Vec<u8> {
        KeyBuf::new().i64(process_instance_key).tag(b's').build()
    }
}

/// Keys of buffered messages, message subscriptions and message start events.
pub(crate) mod message {
    use super::*;

    pub(crate) fn message_name_key(name: &str, correlation_key: &str, message_key: i64) -> Vec<u8> {
        KeyBuf::new()
            .tag(b'n')
            .str(name)
            .str(correlation_key)
            .i64(message_key)
            .build()
    }

    /// Prefix of the `n` (name, correlation key, key) indexes of messages and of subscriptions.
    pub(crate) fn name_prefix(name: &str, correlation_key: &str) -> Vec<u8> {
        KeyBuf::new()
            .tag(b'n')
            .str(name)
            .str(correlation_key)
            .build()
    }

    pub(crate) fn message_id_key(name: &str, correlation_key: &str, message_id: &str) -> Vec<u8> {
        KeyBuf::new()
            .tag(b'i')
            .str(name)
            .str(correlation_key)
            .str(message_id)
            .build()
    }

    pub(crate) fn correlated_key(message_key: i64, bpmn_process_id: &str) -> Vec<u8> {
        KeyBuf::new()
            .tag(b'c')
            .i64(message_key)
            .str(bpmn_process_id)
            .build()
    }

    pub(crate) fn correlated_prefix(message_key: i64) -> Vec<u8> {
        KeyBuf::new().tag(b'c').i64(message_key).build()
    }

    pub(crate) fn subscription_key(element_instance_key: i64, message_name: &str) -> Vec<u8> {
        KeyBuf::new()
            .tag(b's')
            .i64(element_instance_key)
            .str(message_name)
            .build()
    }

    pub(crate) fn subscription_name_key(
        message_name: &str,
        correlation_key: &str,
        element_instance_key: i64,
    ) -> Vec<u8> {
        KeyBuf::new()
            .tag(b'n')
            .str(message_name)
            .str(correlation_key)
            .i64(element_instance_key)
            .build()
    }

    pub(crate) fn process_subscription_key(
        element_instance_key: i64,
        message_name: &str,
    ) -> Vec<u8> {
        KeyBuf::new()
            .i64(element_instance_key)
            .str(message_name)
            .build()
    }

    pub(crate) fn start_subscription_key(
        message_name: &str,
        process_definition_key: i64,
        start_event_id: &str,
    ) -> Vec<u8> {
        KeyBuf::new()
            .tag(b's')
            .str(message_name)
            .i64(process_definition_key)
            .str(start_event_id)
            .build()
    }

    pub(crate) fn start_lock_key(bpmn_process_id: &str, correlation_key: &str) -> Vec<u8> {
        KeyBuf::new()
            .tag(b'l')
            .str(bpmn_process_id)
            .str(correlation_key)
            .build()
    }

    pub(crate) fn start_lock_owner_key(process_instance_key: i64) -> Vec<u8> {
        KeyBuf::new().tag(b'p').i64(process_instance_key).build()
    }

    /// A subscription command in flight to another partition
    /// ([`Ks::SubscriptionCommandsInFlight`](crate::state::Ks)): tag `c`, `d` or `r`.
    pub(crate) fn in_flight_key(tag: u8, element_instance_key: i64, message_name: &str) -> Vec<u8> {
        KeyBuf::new()
            .tag(tag)
            .i64(element_instance_key)
            .str(message_name)
            .build()
    }

    /// A message correlated to a subscription of another partition
    /// ([`Ks::CorrelatedMessages`](crate::state::Ks)): `c` (element instance key, message name).
    pub(crate) fn correlation_memory_key(element_instance_key: i64, message_name: &str) -> Vec<u8> {
        KeyBuf::new()
            .tag(b'c')
            .i64(element_instance_key)
            .str(message_name)
            .build()
    }

    /// The same, by the time of the correlation: `t` (time, element instance key, message name).
    pub(crate) fn correlation_memory_at_key(
        at: i64,
        element_instance_key: i64,
        message_name: &str,
    ) -> Vec<u8> {
        KeyBuf::new()
            .tag(b't')
            .i64(at)
            .i64(element_instance_key)
            .str(message_name)
            .build()
    }
}

/// Keys of signal subscriptions ([`Ks::SignalSubscriptions`](crate::state::Ks)).
pub(crate) mod signal {
    use super::*;
    use zest_protocol::SignalSubscriptionRecord;

    pub(crate) fn owner(sub: &SignalSubscriptionRecord) -> i64 {
        if sub.catch_event_instance_key > 0 {
            sub.catch_event_instance_key
        } else {
            sub.process_definition_key
        }
    }

    /// `s` (signal name, owner key, catch event id).
    pub(crate) fn subscription_key(sub: &SignalSubscriptionRecord) -> Vec<u8> {
        KeyBuf::new()
            .tag(b's')
            .str(&sub.signal_name)
            .i64(owner(sub))
            .str(&sub.catch_event_id)
            .build()
    }

    /// `o` (owner key, catch event id) -> signal name.
    pub(crate) fn owner_key(sub: &SignalSubscriptionRecord) -> Vec<u8> {
        KeyBuf::new()
            .tag(b'o')
            .i64(owner(sub))
            .str(&sub.catch_event_id)
            .build()
    }

    pub(crate) fn name_prefix(name: &str) -> Vec<u8> {
        KeyBuf::new().tag(b's').str(name).build()
    }

    pub(crate) fn owner_prefix(owner: i64) -> Vec<u8> {
        KeyBuf::new().tag(b'o').i64(owner).build()
    }
}

/// Keys of command distribution ([`Ks::Distributions`](crate::state::Ks)).
pub mod distribution {
    use super::*;

    /// `p` (target partition, distribution key): a distribution the partition has yet to
    /// acknowledge; in key order, so the oldest comes first.
    pub fn pending_key(partition: u32, key: i64) -> Vec<u8> {
        KeyBuf::new()
            .tag(b'p')
            .i64(partition as i64)
            .i64(key)
            .build()
    }

    pub fn pending_prefix(partition: u32) -> Vec<u8> {
        KeyBuf::new().tag(b'p').i64(partition as i64).build()
    }

    /// `k` (distribution key, target partition): the partitions a distribution still waits for.
    pub fn open_key(key: i64, partition: u32) -> Vec<u8> {
        KeyBuf::new()
            .tag(b'k')
            .i64(key)
            .i64(partition as i64)
            .build()
    }

    pub fn open_prefix(key: i64) -> Vec<u8> {
        KeyBuf::new().tag(b'k').i64(key).build()
    }

    /// `w` (origin partition): the key of the last distribution processed from there.
    pub fn received_key(origin: u32) -> Vec<u8> {
        KeyBuf::new().tag(b'w').i64(origin as i64).build()
    }
}

/// Keys of the process instances by definition ([`Ks::DefinitionInstances`](crate::state::Ks)).
pub mod definition_instances {
    use super::*;

    /// `i` (process definition key, process instance key): an instance of that version runs.
    pub fn instance_key(definition: i64, instance: i64) -> Vec<u8> {
        KeyBuf::new()
            .tag(b'i')
            .i64(definition)
            .i64(instance)
            .build()
    }

    /// The index entry of the element instance `key` with record `pi`, when it is a process
    /// instance's own (its root element, the process).
    pub fn entry(pi: &zest_protocol::ProcessInstanceRecord, key: i64) -> Option<Vec<u8>> {
        let process = pi.flow_scope_key <= 0
            && pi.bpmn_element_type == zest_protocol::BpmnElementType::Process;
        process.then(|| instance_key(pi.process_definition_key, key))
    }

    pub fn instances_prefix(definition: i64) -> Vec<u8> {
        KeyBuf::new().tag(b'i').i64(definition).build()
    }

    /// `d` (process definition key): the version is deleted and waits for its last instance.
    pub fn pending_deletion_key(definition: i64) -> Vec<u8> {
        KeyBuf::new().tag(b'd').i64(definition).build()
    }
}

/// Keys of identities ([`Ks::Identities`](crate::state::Ks)).
pub mod identity {
    use super::*;

    /// A user, by username.
    pub fn user_key(username: &str) -> Vec<u8> {
        KeyBuf::new().tag(b'u').str(username).build()
    }

    /// A member of the `admin` role, by username.
    pub fn admin_key(username: &str) -> Vec<u8> {
        KeyBuf::new().tag(b'a').str(username).build()
    }

    /// Every member of the `admin` role.
    pub const ADMINS: &[u8] = b"a";
}
