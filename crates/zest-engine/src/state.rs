//! The engine's view of partition state: named keyspaces of ordered byte keys, read through
//! [`StateRead`] and written only through [`Txn`], an in-memory overlay that the storage layer
//! later flushes in one write batch. The engine never does I/O itself.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use serde::{de::DeserializeOwned, Serialize};
use zest_protocol::codec;

/// Meta key of the highest key generated on this partition.
pub const META_MAX_KEY: &[u8] = b"max_key";

/// State kinds. Each is one keyspace in the store; keys are ordered bytes (big-endian numbers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Ks {
    /// Partition-wide counters (max key, ...).
    Meta,
    /// process definition key -> StoredProcess
    Processes,
    /// bpmn process id -> latest (version, key)
    ProcessLatest,
    /// (bpmn process id, version) -> process definition key
    ProcessVersions,
    /// element instance key -> ElementInstance
    ElementInstances,
    /// (flow scope key, child key) -> ()
    ElementChildren,
    /// scope key -> the scope's variables as one document (`scope_variables`)
    Variables,
    /// job key -> StoredJob
    Jobs,
    /// (job type, job key) -> ()
    JobsActivatable,
    /// (deadline, job key) -> ()
    JobDeadlines,
    /// (recurring time, job key) -> ()
    JobBackoffs,
    /// timer key -> TimerRecord
    Timers,
    /// (due date, timer key) -> ()
    TimerDueDates,
    /// incident key -> StoredIncident
    Incidents,
    /// element instance key or job key -> incident key
    IncidentIndex,
    /// process instance key -> AwaitingResult
    AwaitingResults,
    /// message key -> MessageRecord (buffered messages)
    Messages,
    /// Indexes of buffered messages, by tag: `n` (name, correlation key, message key) -> ();
    /// `i` (name, correlation key, message id) -> message key; `c` (message key, bpmn process
    /// id) -> () once the message correlated to that process.
    MessageIndex,
    /// (deadline, message key) -> ()
    MessageDeadlines,
    /// Message subscriptions (message partition side): `s` (element instance key, message
    /// name) -> StoredMessageSubscription. Their index by name is `MessageSubscriptionNames`.
    MessageSubscriptions,
    /// (element instance key, message name) -> StoredProcessMessageSubscription
    ProcessMessageSubscriptions,
    /// Message start events, by tag: `s` (message name, process definition key, start event id)
    /// -> StoredStartSubscription; `l` (bpmn process id, correlation key) -> process instance
    /// key while an instance started by that key runs; `p` (process instance key) -> the `l` key.
    MessageStartSubscriptions,
    /// element instance key (process instance key for start events) -> StoredTrigger
    EventTriggers,
    /// (element instance key, timer key) -> (): the timers of an element instance (its own, or
    /// its boundary events').
    ElementTimers,
    /// Signal subscriptions, by tag: `s` (signal name, subscription key, catch event id) ->
    /// StoredSignalSubscription; `o` (subscription key, catch event id) -> signal name. The
    /// subscription key is the element instance's key, or for a start event the process
    /// definition key.
    SignalSubscriptions,
    /// element instance key -> MultiInstanceCounters: a multi-instance body's counts of inner
    /// instances, and each inner instance's loop counter.
    MultiInstance,
    /// call activity instance key -> the key of the process instance it started
    CalledInstances,
    /// Camunda user tasks, by tag: `t` (user task key) -> StoredUserTask; `e` (element instance
    /// key) -> user task key.
    UserTasks,
    /// Deployed forms, by tag: `k` (form key) -> FormRecord; `l` (form id) -> LatestVersion.
    Forms,
    /// Deployed DMN, by tag: `r` (decision requirements key) -> DecisionRequirementsRecord;
    /// `R` (decision requirements id) -> LatestVersion; `d` (decision key) -> DecisionRecord;
    /// `D` (decision id) -> LatestVersion.
    Decisions,
    /// element instance key -> ListenerProgress: how many execution listeners of the phase the
    /// element instance is in (ACTIVATING: start, COMPLETING: end) have completed, and the
    /// variables of the last one.
    ExecutionListeners,
    /// (process instance key, subscription key) -> CompensationSubscriptionRecord: completed
    /// activities a compensation throw event can undo.
    CompensationSubscriptions,
    /// ad-hoc sub-process instance key -> (): the result of its job (job worker implementation)
    /// said its completion condition is fulfilled; it completes once its flows are done.
    AdHocFulfilled,
    /// The message subscriptions by name: `n` (message name, correlation key, element instance
    /// key) -> (). A keyspace of its own, not a tag of `MessageSubscriptions`: correlation keys
    /// come in any order, and in one keyspace with the subscriptions (whose keys only grow)
    /// every flushed table spanned both and overlapped all the tables below it, so compaction
    /// rewrote the subscriptions again and again (most of a core at 9 M parked instances).
    MessageSubscriptionNames,
    /// Command distribution ([`crate::keys::distribution`]): on the partition that
    /// distributes, `p` (partition, distribution key) -> CommandDistributionRecord for each
    /// partition that has yet to acknowledge it, and `k` (distribution key, partition) -> ();
    /// on a partition that receives, `w` (origin partition) -> the key of the last
    /// distribution it processed from there.
    Distributions,
    /// Commands of the message subscription protocol sent to another partition and not yet
    /// answered, by tag: on the instance's partition `c` (opening) and `d` (closing), on the
    /// message partition `r` (correlating), each (element instance key, message name) -> the
    /// time it was sent. The broker sends them again until answered (Zeebe's pending
    /// subscription checkers). Only subscriptions between two partitions are here.
    SubscriptionCommandsInFlight,
    /// Process instances by definition ([`crate::keys::definition_instances`]): `i` (process
    /// definition key, process instance key) -> () while the instance runs, so that deleting a
    /// version finds its running instances without a scan; `d` (process definition key) -> ()
    /// for a version deleted by a distributed deletion while instances of it still ran here
    /// (it is deleted when the last one ends, as Zeebe's pending deletion).
    DefinitionInstances,
    /// Messages correlated here to a subscription whose message partition is another one
    /// (`behaviour::correlated_messages`): `c` (element instance key, message name) ->
    /// CorrelatedMessage, and `t` (time, element instance key, message name) -> () to forget
    /// them after `CORRELATION_MEMORY_MS`. A correlation sent again because its acknowledgement
    /// was lost is acknowledged again instead of rejected.
    CorrelatedMessages,
    /// Unfinished batch operations (partition 1): batch operation key -> BatchOperationRecord
    /// (filter, plan, state, cursor, counts; no items).
    BatchOperations,
    /// Identities, distributed to every partition ([`crate::keys::identity`]): `u` (username)
    /// -> UserRecord (with its password's hash); `a` (username) -> () for the members of the
    /// `admin` role.
    Identities,
}

impl Ks {
    pub const ALL: [Ks; 40] = [
        Ks::Meta,
        Ks::Processes,
        Ks::ProcessLatest,
        Ks::ProcessVersions,
        Ks::ElementInstances,
        Ks::ElementChildren,
        Ks::Variables,
        Ks::Jobs,
        Ks::JobsActivatable,
        Ks::JobDeadlines,
        Ks::JobBackoffs,
        Ks::Timers,
        Ks::TimerDueDates,
        Ks::Incidents,
        Ks::IncidentIndex,
        Ks::AwaitingResults,
        Ks::Messages,
        Ks::MessageIndex,
        Ks::MessageDeadlines,
        Ks::MessageSubscriptions,
        Ks::ProcessMessageSubscriptions,
        Ks::MessageStartSubscriptions,
        Ks::EventTriggers,
        Ks::ElementTimers,
        Ks::SignalSubscriptions,
        Ks::MultiInstance,
        Ks::CalledInstances,
        Ks::UserTasks,
        Ks::Forms,
        Ks::Decisions,
        Ks::ExecutionListeners,
        Ks::CompensationSubscriptions,
        Ks::AdHocFulfilled,
        Ks::MessageSubscriptionNames,
        Ks::Distributions,
        Ks::SubscriptionCommandsInFlight,
        Ks::DefinitionInstances,
        Ks::CorrelatedMessages,
        Ks::BatchOperations,
        Ks::Identities,
    ];

    /// Where the key an entry of this keyspace is made for (an element instance, a job, a
    /// timer: generated on this partition when it was created) sits in the entry's key of
    /// `len` bytes, for the keyspaces whose entries are created with that key and never
    /// before. An element instance that passes through within one group of commands (a
    /// gateway, an event) and a job pushed to a worker when it is created leave deletions of
    /// entries the store never had; [`Txn::into_writes`] leaves them out.
    pub fn generated_key_at(self, len: usize) -> Option<usize> {
        match self {
            Ks::ElementInstances
            | Ks::Variables
            | Ks::Jobs
            | Ks::MultiInstance
            | Ks::ExecutionListeners
            | Ks::AwaitingResults
            | Ks::Timers
            | Ks::ElementTimers
            | Ks::ProcessMessageSubscriptions => Some(0),
            // (flow scope, child), (job type, job), (deadline, job), (due date, timer)
            Ks::ElementChildren
            | Ks::JobsActivatable
            | Ks::JobDeadlines
            | Ks::JobBackoffs
            | Ks::TimerDueDates => len.checked_sub(8),
            _ => None,
        }
    }

    /// Position in [`Ks::ALL`] (declaration order), for array-indexed keyspace handles.
    pub fn index(self) -> usize {
        self as usize
    }

    /// Stable name, used as the storage keyspace name.
    pub fn name(self) -> &'static str {
        match self {
            Ks::Meta => "meta",
            Ks::Processes => "processes",
            Ks::ProcessLatest => "process_latest",
            Ks::ProcessVersions => "process_versions",
            Ks::ElementInstances => "element_instances",
            Ks::ElementChildren => "element_children",
            Ks::Variables => "variables",
            Ks::Jobs => "jobs",
            Ks::JobsActivatable => "jobs_activatable",
            Ks::JobDeadlines => "job_deadlines",
            Ks::JobBackoffs => "job_backoffs",
            Ks::Timers => "timers",
            Ks::TimerDueDates => "timer_due_dates",
            Ks::Incidents => "incidents",
            Ks::IncidentIndex => "incident_index",
            Ks::AwaitingResults => "awaiting_results",
            Ks::Messages => "messages",
            Ks::MessageIndex => "message_index",
            Ks::MessageDeadlines => "message_deadlines",
            Ks::MessageSubscriptions => "message_subscriptions",
            Ks::ProcessMessageSubscriptions => "process_message_subscriptions",
            Ks::MessageStartSubscriptions => "message_start_subscriptions",
            Ks::EventTriggers => "event_triggers",
            Ks::ElementTimers => "element_timers",
            Ks::SignalSubscriptions => "signal_subscriptions",
            Ks::MultiInstance => "multi_instance",
            Ks::CalledInstances => "called_instances",
            Ks::UserTasks => "user_tasks",
            Ks::Forms => "forms",
            Ks::Decisions => "decisions",
            Ks::ExecutionListeners => "execution_listeners",
            Ks::CompensationSubscriptions => "compensation_subscriptions",
            Ks::AdHocFulfilled => "ad_hoc_fulfilled",
            Ks::MessageSubscriptionNames => "message_subscription_names",
            Ks::Distributions => "distributions",
            Ks::SubscriptionCommandsInFlight => "subscription_commands_in_flight",
            Ks::DefinitionInstances => "definition_instances",
            Ks::CorrelatedMessages => "correlated_messages",
            Ks::BatchOperations => "batch_operations",
            Ks::Identities => "identities",
        }
    }
}

/// Read access to committed state, implemented by the storage layer (and by a plain map in
/// tests).
pub trait StateRead {
    fn get(&self, ks: Ks, key: &[u8]) -> Option<Vec<u8>>;
    /// Calls `f` for each entry whose key starts with `prefix`, in key order, until `f`
    /// returns false.
    fn scan_prefix(&self, ks: Ks, prefix: &[u8], f: &mut dyn FnMut(&[u8], &[u8]) -> bool);
}

/// An in-memory state, for tests and for the engine's unit tests.
#[derive(Debug, Default, Clone)]
pub struct MemState {
    pub map: BTreeMap<(Ks, Vec<u8>), Vec<u8>>,
}

impl MemState {
    pub fn apply(&mut self, writes: Writes) {
        for ((ks, k), v) in writes.0 {
            match v {
                Some(v) => {
                    self.map.insert((ks, k), v);
                }
                None => {
                    self.map.remove(&(ks, k));
                }
            }
        }
    }
}

impl StateRead for MemState {
    fn get(&self, ks: Ks, key: &[u8]) -> Option<Vec<u8>> {
        self.map.get(&(ks, key.to_vec())).cloned()
    }

    fn scan_prefix(&self, ks: Ks, prefix: &[u8], f: &mut dyn FnMut(&[u8], &[u8]) -> bool) {
        for ((k_ks, k), v) in self.map.range((ks, prefix.to_vec())..) {
            if *k_ks != ks || !k.starts_with(prefix) {
                break;
            }
            if !f(k, v) {
                break;
            }
        }
    }
}

/// Writes of groups that were processed but are not yet committed, each tagged with the
/// sequence number of the group that made it last. The broker processes the next group on top
/// of them while earlier groups are being committed (pipelining).
pub type Speculative = BTreeMap<(Ks, Vec<u8>), (Option<Vec<u8>>, u64)>;

/// Committed state with uncommitted writes on top.
pub struct Layered<'a> {
    pub top: &'a Speculative,
    pub base: &'a dyn StateRead,
}

impl StateRead for Layered<'_> {
    fn get(&self, ks: Ks, key: &[u8]) -> Option<Vec<u8>> {
        if let Some((v, _)) = self.top.get(&(ks, key.to_vec())) {
            return v.clone();
        }
        self.base.get(ks, key)
    }

    fn scan_prefix(&self, ks: Ks, prefix: &[u8], f: &mut dyn FnMut(&[u8], &[u8]) -> bool) {
        let top = self
            .top
            .range((ks, prefix.to_vec())..)
            .take_while(|((k_ks, k), _)| *k_ks == ks && k.starts_with(prefix))
            .map(|((_, k), (v, _))| (k.as_slice(), v.as_deref()));
        scan_shadowed(self.base, ks, prefix, top, f)
    }
}

/// Scans `base` under `prefix` merged with an upper layer's entries under the same prefix
/// (`top`, in key order; None: deleted): a top entry shadows the base entry with the same key.
/// Used for the leader's speculative writes over the committed state, and for the storage's
/// young layer over fjall.
pub fn scan_shadowed<'t>(
    base: &dyn StateRead,
    ks: Ks,
    prefix: &[u8],
    top: impl Iterator<Item = (&'t [u8], Option<&'t [u8]>)>,
    f: &mut dyn FnMut(&[u8], &[u8]) -> bool,
) {
    let mut top = top.peekable();
    if top.peek().is_none() {
        return base.scan_prefix(ks, prefix, f);
    }
    let mut go_on = true;
    base.scan_prefix(ks, prefix, &mut |k, v| {
        // the top entries up to this key; one with this key shadows the base's
        while let Some((tk, tv)) = top.next_if(|(tk, _)| *tk <= k) {
            if let Some(tv) = tv {
                go_on = f(tk, tv);
                if !go_on {
                    return false;
                }
            }
            if tk == k {
                return true;
            }
        }
        go_on = f(k, v);
        go_on
    });
    while go_on {
        let Some((tk, tv)) = top.next() else { break };
        if let Some(tv) = tv {
            go_on = f(tk, tv);
        }
    }
}

/// The writes of a transaction: `None` deletes.
#[derive(Debug, Default, Clone)]
pub struct Writes(pub BTreeMap<(Ks, Vec<u8>), Option<Vec<u8>>>);

impl Writes {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn len(&self) -> usize {
        self.0.len()
    }
}

/// A transaction over committed state: reads see its own writes first. Two layers: `outer`
/// holds the writes of earlier commands of the same group, `inner` those of the command being
/// processed, so a failing command can be rolled back alone.
pub struct Txn<'a> {
    base: &'a dyn StateRead,
    outer: BTreeMap<(Ks, Vec<u8>), Option<Vec<u8>>>,
    inner: BTreeMap<(Ks, Vec<u8>), Option<Vec<u8>>>,
    /// What was read from the base (see [`BaseReads`]).
    base_reads: RefCell<BaseReads>,
    /// [`Txn::max_key`] as last read or written (None: not known); forgotten when the entry
    /// is written other than through [`Txn::set_max_key`] or the command is rolled back. Every
    /// event reads it (`appliers::observe_key`) and every new key: decoded from the
    /// transaction's maps each time, that was 4 % of the engine's work.
    max_key: Cell<Option<i64>>,
}

/// A value read from the base, shared between what is kept and its readers.
type Shared = Arc<Vec<u8>>;

/// The values a transaction read from its base, kept for the rest of the transaction: the
/// commands of a group read the same element instances, variables and jobs again and again
/// (every scope walk reads the process instance; a job's completion, its element and their
/// parents), and a read from the store looks through its memtables and tables each time. The
/// base does not change under a transaction, and the transaction's own writes shadow what is
/// kept here, so a kept value is the one the base would give. Bounded by [`BASE_READS_BYTES`]:
/// past it, what is kept is dropped and the reads go to the base again.
///
/// A partition's leader keeps them from one group's transaction to the next
/// ([`Txn::with_reads`], [`Txn::into_parts`]): its base changes only by the groups' own
/// writes, which [`BaseReads::forget`] drops from it.
#[derive(Default)]
pub struct BaseReads {
    values: foldhash::HashMap<(Ks, Vec<u8>), Option<Shared>>,
    bytes: usize,
}

/// Bytes of keys and values a transaction keeps of its base reads (a group's transaction lives
/// for one group of commands).
const BASE_READS_BYTES: usize = 1 << 20;

impl BaseReads {
    fn weight(key: &(Ks, Vec<u8>), value: &Option<Shared>) -> usize {
        key.1.len() + value.as_ref().map_or(0, |v| v.len()) + 64
    }

    fn keep(&mut self, key: (Ks, Vec<u8>), value: Option<Shared>) {
        let bytes = Self::weight(&key, &value);
        if self.bytes + bytes > BASE_READS_BYTES {
            self.values.clear();
            self.bytes = 0;
        }
        self.bytes += bytes;
        self.values.insert(key, value);
    }

    /// Drops what is kept of the entries `writes` changes: the base they were read from now
    /// holds these writes.
    pub fn forget(&mut self, writes: &Writes) {
        if self.values.is_empty() {
            return;
        }
        for key in writes.0.keys() {
            if let Some((key, value)) = self.values.remove_entry(key) {
                self.bytes -= Self::weight(&key, &value);
            }
        }
    }

    /// How many entries are kept (for tests).
    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

impl<'a> Txn<'a> {
    pub fn new(base: &'a dyn StateRead) -> Txn<'a> {
        Txn::with_reads(base, BaseReads::default())
    }

    /// A transaction that starts with what earlier transactions read from the same base
    /// (see [`BaseReads`]): `base` must hold what it held for them, plus their writes that
    /// [`BaseReads::forget`] was told of.
    pub fn with_reads(base: &'a dyn StateRead, reads: BaseReads) -> Txn<'a> {
        Txn {
            base,
            outer: BTreeMap::new(),
            inner: BTreeMap::new(),
            base_reads: RefCell::new(reads),
            max_key: Cell::new(None),
        }
    }

    /// Calls `f` with the value under `key` (own writes first, then the base), without copying
    /// it. `f` may read the transaction again.
    pub fn with_raw<R>(&self, ks: Ks, key: &[u8], f: impl FnOnce(Option<&[u8]>) -> R) -> R {
        let k = (ks, key.to_vec());
        if let Some(v) = self.inner.get(&k) {
            return f(v.as_deref());
        }
        if let Some(v) = self.outer.get(&k) {
            return f(v.as_deref());
        }
        let value = self.base_value(k);
        f(value.as_ref().map(|v| v.as_slice()))
    }

    /// The base's value under `k`, kept for the rest of the transaction.
    fn base_value(&self, k: (Ks, Vec<u8>)) -> Option<Shared> {
        if let Some(v) = self.base_reads.borrow().values.get(&k) {
            return v.clone();
        }
        let v = self.base.get(k.0, &k.1).map(Arc::new);
        self.base_reads.borrow_mut().keep(k, v.clone());
        v
    }

    /// Keeps the writes of the current command.
    pub fn commit_command(&mut self) {
        let inner = std::mem::take(&mut self.inner);
        self.outer.extend(inner);
    }

    /// Drops the writes of the current command.
    pub fn rollback_command(&mut self) {
        self.inner.clear();
        self.max_key.set(None);
    }

    /// The highest key generated on this partition as this transaction sees it (the entry
    /// [`META_MAX_KEY`]; 0 when there is none).
    pub fn max_key(&self) -> i64 {
        if let Some(max) = self.max_key.get() {
            return max;
        }
        let max = self.get(Ks::Meta, META_MAX_KEY).unwrap_or(0);
        self.max_key.set(Some(max));
        max
    }

    /// Writes [`Txn::max_key`].
    pub fn set_max_key(&mut self, max: i64) {
        self.put(Ks::Meta, META_MAX_KEY.to_vec(), &max);
        self.max_key.set(Some(max));
    }

    /// All writes (the current command's included). A deletion of an entry keyed by a key
    /// generated in this transaction is left out: the base cannot hold it, and written to the
    /// store it would be a tombstone for nothing (see [`Ks::generated_key_at`]).
    pub fn into_writes(self) -> Writes {
        self.into_parts().0
    }

    /// [`Txn::into_writes`], and what was read from the base (to start the next transaction
    /// on the same base with, once it was told of these writes).
    pub fn into_parts(mut self) -> (Writes, BaseReads) {
        self.commit_command();
        // the processing that generated keys read it already
        let max_key = self
            .base_value((Ks::Meta, META_MAX_KEY.to_vec()))
            .and_then(|b| codec::decode::<i64>(&b).ok());
        if let Some(max_key) = max_key {
            self.outer
                .retain(|(ks, k), v| v.is_some() || !generated_after(*ks, k, max_key));
        }
        (Writes(self.outer), self.base_reads.into_inner())
    }

    pub fn get_raw(&self, ks: Ks, key: &[u8]) -> Option<Vec<u8>> {
        self.with_raw(ks, key, |v| v.map(<[u8]>::to_vec))
    }

    /// Whether a value is under `key`.
    pub fn contains(&self, ks: Ks, key: &[u8]) -> bool {
        self.with_raw(ks, key, |v| v.is_some())
    }

    /// What this transaction itself wrote under `key`, not looking at the base: for keys that
    /// cannot be in committed state (their scope was allocated in this transaction). `None` if
    /// it wrote nothing there or deleted it.
    pub fn get_own<T: DeserializeOwned>(&self, ks: Ks, key: &[u8]) -> Option<T> {
        Self::decode(ks, &self.get_own_raw(ks, key)?)
    }

    /// [`Txn::get_own`], undecoded.
    pub fn get_own_raw(&self, ks: Ks, key: &[u8]) -> Option<Vec<u8>> {
        let k = (ks, key.to_vec());
        match self.inner.get(&k) {
            Some(v) => v.clone(),
            None => self.outer.get(&k)?.clone(),
        }
    }

    pub fn put_raw(&mut self, ks: Ks, key: Vec<u8>, value: Vec<u8>) {
        self.forget_max_key(ks, &key);
        self.inner.insert((ks, key), Some(value));
    }

    pub fn delete(&mut self, ks: Ks, key: Vec<u8>) {
        self.forget_max_key(ks, &key);
        self.inner.insert((ks, key), None);
    }

    /// A write of the max key's entry other than [`Txn::set_max_key`]: what was kept of it
    /// no longer holds.
    fn forget_max_key(&mut self, ks: Ks, key: &[u8]) {
        if ks == Ks::Meta && key == META_MAX_KEY {
            self.max_key.set(None);
        }
    }

    pub fn get<T: DeserializeOwned>(&self, ks: Ks, key: &[u8]) -> Option<T> {
        self.with_raw(ks, key, |bytes| Self::decode(ks, bytes?))
    }

    fn decode<T: DeserializeOwned>(ks: Ks, bytes: &[u8]) -> Option<T> {
        match codec::decode(bytes) {
            Ok(v) => Some(v),
            Err(e) => {
                tracing::error!(keyspace = ks.name(), "undecodable state value: {e}");
                None
            }
        }
    }

    pub fn put<T: Serialize>(&mut self, ks: Ks, key: Vec<u8>, value: &T) {
        self.put_raw(ks, key, codec::encode(value));
    }

    /// Entries with the given prefix in key order, own writes merged over the base, up to
    /// `limit` entries.
    pub fn scan_prefix(&self, ks: Ks, prefix: &[u8], limit: usize) -> Vec<(Vec<u8>, Vec<u8>)> {
        // Merge: collect overlay entries for the prefix, then walk the base and skip keys the
        // overlay shadows. Overlays are small (one group of commands), the base is not.
        let mut overlay: BTreeMap<Vec<u8>, Option<Vec<u8>>> = BTreeMap::new();
        for layer in [&self.outer, &self.inner] {
            let start = (ks, prefix.to_vec());
            for ((k_ks, k), v) in layer.range((Bound::Included(start), Bound::Unbounded)) {
                if *k_ks != ks || !k.starts_with(prefix) {
                    break;
                }
                overlay.insert(k.clone(), v.clone());
            }
        }
        let mut out: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
        for (k, v) in &overlay {
            if let Some(v) = v {
                out.insert(k.clone(), v.clone());
            }
        }
        // We need `limit` live entries; base entries shadowed by deletes don't count.
        let mut taken = 0usize;
        self.base.scan_prefix(ks, prefix, &mut |k, v| {
            if !overlay.contains_key(k) {
                out.insert(k.to_vec(), v.to_vec());
                taken += 1;
            }
            taken < limit
        });
        // The first `limit` of the union are right: every base key before the cut was seen
        // (the scan is ordered), and every overlay key is in `out`.
        out.into_iter().take(limit).collect()
    }
}

/// Whether the entry `key` of `ks` is keyed by a key of this partition generated after
/// `max_key`, the highest key the base had generated: no entry of the base can hold it.
pub fn generated_after(ks: Ks, key: &[u8], max_key: i64) -> bool {
    let Some(at) = ks.generated_key_at(key.len()) else {
        return false;
    };
    if key.len() < at + 8 {
        return false;
    }
    let generated = read_i64(key, at);
    generated > max_key
        && zest_protocol::partition_of_key(generated) == zest_protocol::partition_of_key(max_key)
}

/// Big-endian key building.
pub struct KeyBuf(Vec<u8>);

impl KeyBuf {
    pub fn new() -> Self {
        KeyBuf(Vec::with_capacity(24))
    }
    pub fn i64(mut self, v: i64) -> Self {
        // flip the sign bit so negative numbers sort before positive ones
        self.0
            .extend_from_slice(&((v as u64) ^ (1 << 63)).to_be_bytes());
        self
    }
    /// A one-byte tag that separates the indexes kept in one keyspace.
    pub fn tag(mut self, t: u8) -> Self {
        self.0.push(t);
        self
    }
    /// A string followed by a 0 separator (strings in keys never contain NUL).
    pub fn str(mut self, s: &str) -> Self {
        self.0.extend_from_slice(s.as_bytes());
        self.0.push(0);
        self
    }
    pub fn build(self) -> Vec<u8> {
        self.0
    }
}

impl Default for KeyBuf {
    fn default() -> Self {
        Self::new()
    }
}

pub fn key_i64(v: i64) -> Vec<u8> {
    KeyBuf::new().i64(v).build()
}

/// Decodes an i64 written by [`KeyBuf::i64`] at `offset`.
pub fn read_i64(key: &[u8], offset: usize) -> i64 {
    let mut b = [0u8; 8];
    if key.len() >= offset + 8 {
        b.copy_from_slice(&key[offset..offset + 8]);
    }
    (u64::from_be_bytes(b) ^ (1 << 63)) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Layered reads equal the reads of the base with the writes applied, for every prefix and
    /// every early stop.
    #[test]
    fn layered_equals_applied_writes() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut rnd = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for _ in 0..300 {
            let mut base = MemState::default();
            let mut top = Speculative::new();
            for _ in 0..rnd(12) {
                let k = vec![rnd(3) as u8, rnd(6) as u8];
                base.map.insert((Ks::Jobs, k), vec![rnd(100) as u8]);
            }
            base.map.insert((Ks::Timers, vec![0, 0]), vec![1]);
            for _ in 0..rnd(12) {
                let k = vec![rnd(3) as u8, rnd(6) as u8];
                let v = (rnd(3) > 0).then(|| vec![100 + rnd(100) as u8]);
                top.insert((Ks::Jobs, k), (v, rnd(4)));
            }
            let mut merged = base.clone();
            merged.apply(Writes(
                top.iter()
                    .map(|(k, (v, _))| (k.clone(), v.clone()))
                    .collect(),
            ));
            let layered = Layered {
                top: &top,
                base: &base,
            };
            for prefix in [vec![], vec![0], vec![1], vec![2], vec![1, 3]] {
                for limit in [1usize, 2, 3, 100] {
                    let collect = |r: &dyn StateRead| {
                        let mut out = Vec::new();
                        r.scan_prefix(Ks::Jobs, &prefix, &mut |k, v| {
                            out.push((k.to_vec(), v.to_vec()));
                            out.len() < limit
                        });
                        out
                    };
                    assert_eq!(collect(&layered), collect(&merged), "prefix {prefix:?}");
                }
            }
            for a in 0..3u8 {
                for b in 0..6u8 {
                    assert_eq!(
                        layered.get(Ks::Jobs, &[a, b]),
                        merged.get(Ks::Jobs, &[a, b])
                    );
                }
            }
        }
    }

    /// `get_own` sees the transaction's own writes, in either layer, and never the base.
    #[test]
    fn get_own_ignores_the_base() {
        let mut base = MemState::default();
        base.map
            .insert((Ks::Variables, vec![1]), codec::encode(&7u32));
        let mut txn = Txn::new(&base);
        assert_eq!(txn.get::<u32>(Ks::Variables, &[1]), Some(7));
        assert_eq!(txn.get_own::<u32>(Ks::Variables, &[1]), None);
        txn.put(Ks::Variables, vec![2], &8u32);
        assert_eq!(txn.get_own::<u32>(Ks::Variables, &[2]), Some(8));
        txn.commit_command();
        assert_eq!(txn.get_own::<u32>(Ks::Variables, &[2]), Some(8));
        txn.delete(Ks::Variables, vec![2]);
        assert_eq!(txn.get_own::<u32>(Ks::Variables, &[2]), None);
        txn.rollback_command();
        assert_eq!(txn.get_own::<u32>(Ks::Variables, &[2]), Some(8));
    }

    /// Writes, deletions, commits and rollbacks of commands in any order leave the transaction
    /// reading, scanning and handing over what two layers (the group's and the command's,
    /// dropped whole on a rollback) would: a fixed pseudo-random sequence over a few keys, so
    /// that keys are written several times within a command and across commands.
    #[test]
    fn a_rollback_undoes_exactly_the_commands_writes() {
        let mut base = MemState::default();
        for i in 0..4u8 {
            base.map.insert((Ks::Jobs, vec![i]), vec![100 + i]);
        }
        let mut txn = Txn::new(&base);
        type Layer = BTreeMap<Vec<u8>, Option<Vec<u8>>>;
        let (mut group, mut command): (Layer, Layer) = Default::default();
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for step in 0..4000u32 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let key = vec![(seed % 8) as u8];
            match (seed >> 8) % 10 {
                0..=4 => {
                    let v = vec![(step % 251) as u8];
                    txn.put_raw(Ks::Jobs, key.clone(), v.clone());
                    command.insert(key, Some(v));
                }
                5 | 6 => {
                    txn.delete(Ks::Jobs, key.clone());
                    command.insert(key, None);
                }
                7 | 8 => {
                    txn.commit_command();
                    group.extend(std::mem::take(&mut command));
                }
                _ => {
                    txn.rollback_command();
                    command.clear();
                }
            }
            let expected = |k: &[u8]| match command.get(k).or_else(|| group.get(k)) {
                Some(v) => v.clone(),
                None => base.map.get(&(Ks::Jobs, k.to_vec())).cloned(),
            };
            for k in 0..8u8 {
                assert_eq!(txn.get_raw(Ks::Jobs, &[k]), expected(&[k]), "step {step}");
            }
            let live: Vec<(Vec<u8>, Vec<u8>)> = (0..8u8)
                .filter_map(|k| expected(&[k]).map(|v| (vec![k], v)))
                .collect();
            assert_eq!(txn.scan_prefix(Ks::Jobs, &[], 100), live, "step {step}");
        }
        txn.commit_command();
        group.extend(command);
        let writes: Layer = txn
            .into_writes()
            .0
            .into_iter()
            .map(|((_, k), v)| (k, v))
            .collect();
        assert_eq!(writes, group);
    }

    /// A base that counts its point reads.
    struct Counting {
        state: MemState,
        gets: std::cell::Cell<usize>,
    }

    impl StateRead for Counting {
        fn get(&self, ks: Ks, key: &[u8]) -> Option<Vec<u8>> {
            self.gets.set(self.gets.get() + 1);
            self.state.get(ks, key)
        }
        fn scan_prefix(&self, ks: Ks, prefix: &[u8], f: &mut dyn FnMut(&[u8], &[u8]) -> bool) {
            self.state.scan_prefix(ks, prefix, f)
        }
    }

    /// The max key kept by the transaction is always what its entry says: after its own
    /// writes, a rollback, a commit of the command, and writes of the entry by other means.
    #[test]
    fn the_kept_max_key_follows_its_entry() {
        let mut state = MemState::default();
        state
            .map
            .insert((Ks::Meta, META_MAX_KEY.to_vec()), codec::encode(&10i64));
        let mut txn = Txn::new(&state);
        let entry = |txn: &Txn<'_>| txn.get::<i64>(Ks::Meta, META_MAX_KEY).unwrap_or(0);
        assert_eq!(txn.max_key(), 10);
        txn.set_max_key(12);
        assert_eq!((txn.max_key(), entry(&txn)), (12, 12));
        txn.rollback_command();
        assert_eq!((txn.max_key(), entry(&txn)), (10, 10));
        txn.set_max_key(15);
        txn.commit_command();
        assert_eq!((txn.max_key(), entry(&txn)), (15, 15));
        txn.put(Ks::Meta, META_MAX_KEY.to_vec(), &20i64);
        assert_eq!((txn.max_key(), entry(&txn)), (20, 20));
        txn.delete(Ks::Meta, META_MAX_KEY.to_vec());
        assert_eq!((txn.max_key(), entry(&txn)), (0, 0));
        txn.rollback_command();
        assert_eq!((txn.max_key(), entry(&txn)), (15, 15));
        let writes = txn.into_writes();
        assert_eq!(
            writes.0.get(&(Ks::Meta, META_MAX_KEY.to_vec())),
            Some(&Some(codec::encode(&15i64)))
        );
        // an empty partition
        let empty = MemState::default();
        let mut txn = Txn::new(&empty);
        assert_eq!(txn.max_key(), 0);
        txn.set_max_key(1);
        assert_eq!(entry(&txn), 1);
    }

    /// A value read from the base is read there once per transaction, absent ones too; the
    /// transaction's writes and their rollback still show through; past the bound the reads
    /// go to the base again and stay right.
    #[test]
    fn base_reads_are_kept_for_the_transaction() {
        let mut state = MemState::default();
        for i in 0..200 {
            state
                .map
                .insert((Ks::Jobs, key_i64(i)), vec![i as u8; 10_000]);
        }
        let base = Counting {
            state,
            gets: Default::default(),
        };
        let mut txn = Txn::new(&base);
        assert_eq!(txn.get_raw(Ks::Jobs, &key_i64(1)), Some(vec![1; 10_000]));
        assert!(txn.contains(Ks::Jobs, &key_i64(1)));
        assert!(!txn.contains(Ks::Jobs, &key_i64(-1)));
        assert!(!txn.contains(Ks::Jobs, &key_i64(-1)));
        assert_eq!(base.gets.get(), 2, "one read of each key");
        txn.put_raw(Ks::Jobs, key_i64(1), vec![7]);
        assert_eq!(txn.get_raw(Ks::Jobs, &key_i64(1)), Some(vec![7]));
        txn.delete(Ks::Jobs, key_i64(1));
        assert!(!txn.contains(Ks::Jobs, &key_i64(1)));
        txn.rollback_command();
        assert_eq!(txn.get_raw(Ks::Jobs, &key_i64(1)), Some(vec![1; 10_000]));
        assert_eq!(base.gets.get(), 2);
        // 200 values of 10 KB are past the bound: the first ones are read again
        for round in 0..2 {
            for i in 0..200 {
                assert_eq!(
                    txn.get_raw(Ks::Jobs, &key_i64(i)),
                    Some(vec![i as u8; 10_000])
                );
            }
            assert!(
                base.gets.get() > 2 + 200 * round + 100,
                "{}",
                base.gets.get()
            );
        }
        assert!(txn.base_reads.borrow().bytes <= BASE_READS_BYTES);
    }

    /// Reads kept from one transaction to the next on the same base: what the first read is
    /// not read from the base again, what it wrote is (the base, as a leader's, then holds the
    /// writes), and the kept bytes stay what the kept entries weigh.
    #[test]
    fn base_reads_carry_over_to_the_next_transaction_but_not_what_it_wrote() {
        let mut state = MemState::default();
        for i in 0..4 {
            state.map.insert((Ks::Jobs, key_i64(i)), vec![i as u8; 100]);
        }
        let mut base = Counting {
            state,
            gets: Default::default(),
        };
        let mut txn = Txn::new(&base);
        for i in 0..4 {
            assert!(txn.contains(Ks::Jobs, &key_i64(i)));
        }
        assert!(!txn.contains(Ks::Jobs, &key_i64(9)));
        txn.put_raw(Ks::Jobs, key_i64(1), vec![11]);
        txn.delete(Ks::Jobs, key_i64(2));
        txn.put_raw(Ks::Jobs, key_i64(9), vec![99]);
        let (writes, mut reads) = txn.into_parts();
        // and the max key, read by `into_parts`
        assert_eq!(base.gets.get(), 6);
        reads.forget(&writes);
        assert_eq!(reads.len(), 3, "keys 0 and 3 and the max key are kept");
        let weight: usize = reads
            .values
            .iter()
            .map(|(k, v)| BaseReads::weight(k, v))
            .sum();
        assert_eq!(reads.bytes, weight);
        // the base takes the writes, as a leader's store and speculative layer do
        for ((ks, k), v) in writes.0 {
            match v {
                Some(v) => base.state.map.insert((ks, k), v),
                None => base.state.map.remove(&(ks, k)),
            };
        }
        let txn = Txn::with_reads(&base, reads);
        let got: Vec<Option<Vec<u8>>> = [0, 1, 2, 3, 9]
            .iter()
            .map(|&i| txn.get_raw(Ks::Jobs, &key_i64(i)))
            .collect();
        assert_eq!(
            got,
            vec![
                Some(vec![0; 100]),
                Some(vec![11]),
                None,
                Some(vec![3; 100]),
                Some(vec![99])
            ]
        );
        assert_eq!(base.gets.get(), 9, "only the written keys are read again");
    }

    /// Deleting what this transaction created under a key it generated writes nothing; a
    /// deletion of what the base may hold (an older key, another partition's key, a keyspace
    /// not keyed by generated keys) is written.
    #[test]
    fn deletions_of_entries_created_in_the_transaction_are_left_out() {
        use zest_protocol::encode_key;
        let mut base = MemState::default();
        let max = encode_key(1, 100);
        base.map
            .insert((Ks::Meta, META_MAX_KEY.to_vec()), codec::encode(&max));
        let mut txn = Txn::new(&base);
        let fresh = encode_key(1, 101);
        let activatable = KeyBuf::new().str("task").i64(fresh).build();
        txn.put_raw(Ks::ElementInstances, key_i64(fresh), vec![1]);
        txn.put_raw(Ks::JobsActivatable, activatable.clone(), vec![]);
        txn.commit_command();
        txn.delete(Ks::ElementInstances, key_i64(fresh));
        txn.delete(Ks::JobsActivatable, activatable);
        txn.delete(Ks::ElementInstances, key_i64(encode_key(1, 50)));
        txn.delete(Ks::ElementInstances, key_i64(encode_key(2, 5)));
        txn.delete(Ks::Messages, key_i64(encode_key(1, 102)));
        txn.put_raw(Ks::Jobs, key_i64(encode_key(1, 103)), vec![3]);
        let writes: Vec<_> = txn.into_writes().0.into_iter().collect();
        assert_eq!(
            writes,
            vec![
                ((Ks::ElementInstances, key_i64(encode_key(1, 50))), None),
                ((Ks::ElementInstances, key_i64(encode_key(2, 5))), None),
                ((Ks::Jobs, key_i64(encode_key(1, 103))), Some(vec![3])),
                ((Ks::Messages, key_i64(encode_key(1, 102))), None),
            ]
        );
    }

    #[test]
    fn overlay_shadows_base_and_scans_in_order() {
        let mut base = MemState::default();
        for i in 0..5 {
            base.map.insert((Ks::Jobs, key_i64(i)), vec![i as u8]);
        }
        base.map.insert((Ks::Timers, key_i64(1)), vec![9]);
        let mut txn = Txn::new(&base);
        txn.delete(Ks::Jobs, key_i64(1));
        txn.put_raw(Ks::Jobs, key_i64(7), vec![7]);
        txn.commit_command();
        txn.put_raw(Ks::Jobs, key_i64(2), vec![22]);
        let got: Vec<u8> = txn
            .scan_prefix(Ks::Jobs, &[], 10)
            .into_iter()
            .map(|(_, v)| v[0])
            .collect();
        assert_eq!(got, vec![0, 22, 3, 4, 7]);
        txn.rollback_command();
        let got: Vec<u8> = txn
            .scan_prefix(Ks::Jobs, &[], 3)
            .into_iter()
            .map(|(_, v)| v[0])
            .collect();
        assert_eq!(got, vec![0, 2, 3]);
        assert_eq!(txn.get_raw(Ks::Timers, &key_i64(1)), Some(vec![9]));
    }

    #[test]
    fn index_is_the_position_in_all() {
        for (i, ks) in Ks::ALL.iter().enumerate() {
            assert_eq!(ks.index(), i, "{ks:?}");
        }
    }

    #[test]
    fn negative_keys_sort_first() {
        assert!(key_i64(-1) < key_i64(0));
        assert!(key_i64(1) < key_i64(1 << 40));
        assert_eq!(read_i64(&key_i64(-5), 0), -5);
    }
}
