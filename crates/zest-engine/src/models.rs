//! Parsed process models and decision graphs, cached by key in an LRU bounded by
//! `--memory-mb`; a miss parses the stored resource again. Beside them, within a share of the
//! memory budget, what saves parsing large variables again: multi-instance input collections
//! and the parts of variables that expressions read.

use std::hash::BuildHasher;
use std::sync::{Arc, Mutex};

use zest_model::dmn::DecisionRequirements;
use zest_model::Process;
use zest_protocol::DecisionRequirementsRecord;

use crate::keys::tagged_key;
use crate::state::{key_i64, Ks, Txn};
use crate::types::StoredProcess;

/// Parsed models kept by default (processes and decision graphs each).
pub const DEFAULT_CAPACITY: usize = 1024;

/// Values by key within a total weight (a count when each weighs 1, or bytes); the least
/// recently used go first.
struct Lru<V> {
    map: foldhash::HashMap<i64, (V, u64, usize)>,
    tick: u64,
    weight: usize,
    max_weight: usize,
}

impl<V: Clone> Lru<V> {
    fn get(&mut self, key: &i64) -> Option<V> {
        self.get_ref(key).cloned()
    }
}

impl<V> Lru<V> {
    fn new(max_weight: usize) -> Self {
        Lru {
            map: foldhash::HashMap::default(),
            tick: 0,
            weight: 0,
            max_weight: max_weight.max(1),
        }
    }

    /// The value under `key`, marked as used now.
    fn get_ref(&mut self, key: &i64) -> Option<&V> {
        self.tick += 1;
        let tick = self.tick;
        self.map.get_mut(key).map(|(v, used, _)| {
            *used = tick;
            &*v
        })
    }

    fn insert(&mut self, key: i64, value: V) {
        self.insert_weighing(key, value, 1);
    }

    /// Keeps `value` unless it alone weighs more than the whole; makes room by dropping the
    /// least recently used (a scan, but only when full: rare, and bounded by the capacity).
    fn insert_weighing(&mut self, key: i64, value: V, weight: usize) {
        self.remove(&key);
        if weight > self.max_weight {
            return;
        }
        while self.weight + weight > self.max_weight {
            let Some(oldest) = self
                .map
                .iter()
                .min_by_key(|(_, (_, t, _))| *t)
                .map(|(k, _)| *k)
            else {
                break;
            };
            self.remove(&oldest);
        }
        self.tick += 1;
        self.weight += weight;
        self.map.insert(key, (value, self.tick, weight));
    }

    fn remove(&mut self, key: &i64) {
        if let Some((_, _, w)) = self.map.remove(key) {
            self.weight -= w;
        }
    }

    fn clear(&mut self) {
        self.map.clear();
        self.weight = 0;
    }
}

/// Parsed process models by definition key: a cache of what state holds (the deployed XML),
/// so it never changes what the engine computes, only how fast. Bounded: a model evicted is
/// parsed again from state when next needed.
pub struct Models {
    by_key: Lru<Arc<Process>>,
    /// Parsed DMN by decision requirements key.
    decisions: Lru<Arc<DecisionRequirements>>,
    /// Evaluated input collections of multi-instance bodies (see [`Models::collection`]).
    collections: Lru<KeptCollection>,
    /// The parts of large variables that expressions read (see [`Models::read_parts`]);
    /// behind a lock because variables are read through a shared context (never contended:
    /// one engine processes on one thread at a time).
    parts: Mutex<Lru<KeptParts>>,
}

/// Memory for kept input collections by default (`Models::with_collection_bytes` sets it
/// from the memory budget).
const COLLECTION_BYTES: usize = 4 << 20;
/// Input collections larger than this (as JSON text) are evaluated each time, not kept.
pub const MAX_KEPT_COLLECTION: usize = 32 << 10;

/// What a kept collection holds in memory, from the length of the JSON texts it was evaluated
/// from: parsed JSON takes several times its text (a node is 32 bytes, strings and maps are
/// allocations of their own). 256 kept collections of the realistic benchmark's 11 KB took
/// 17-25 MB (jemalloc's heap profile), about 5 times their text; the texts are kept too.
fn collection_weight(text_bytes: usize) -> usize {
    text_bytes * 6 + 256
}

impl Default for Models {
    fn default() -> Self {
        Models::with_capacity(DEFAULT_CAPACITY)
    }
}

impl Models {
    /// A cache of at most `capacity` processes and `capacity` decision graphs.
    pub fn with_capacity(capacity: usize) -> Models {
        Models {
            by_key: Lru::new(capacity),
            decisions: Lru::new(capacity),
            collections: Lru::new(COLLECTION_BYTES - COLLECTION_BYTES / PARTS_SHARE),
            parts: Mutex::new(Lru::new(COLLECTION_BYTES / PARTS_SHARE)),
        }
    }

    /// Keeps input collections and the parts of large variables read within about `bytes` of
    /// memory (an eighth of it for the parts).
    pub fn with_collection_bytes(mut self, bytes: usize) -> Models {
        self.collections = Lru::new(bytes - bytes / PARTS_SHARE);
        self.parts = Mutex::new(Lru::new(bytes / PARTS_SHARE));
        self
    }

    /// Models held: (processes, decision graphs).
    pub fn len(&self) -> (usize, usize) {
        (self.by_key.map.len(), self.decisions.map.len())
    }
}

impl Models {
    pub fn get(&mut self, txn: &Txn<'_>, process_definition_key: i64) -> Option<Arc<Process>> {
        if let Some(p) = self.by_key.get(&process_definition_key) {
            return Some(p);
        }
        let stored: StoredProcess = txn.get(Ks::Processes, &key_i64(process_definition_key))?;
        let processes =
            match zest_model::parse_bpmn(&stored.record.resource_name, &stored.record.resource) {
                Ok(p) => p,
                Err(e) => {
                    tracing::error!(
                        "stored process {process_definition_key} no longer parses: {e}"
                    );
                    return None;
                }
            };
        let process = processes
            .into_iter()
            .find(|p| p.id == stored.record.bpmn_process_id)?;
        let process = Arc::new(process);
        self.by_key.insert(process_definition_key, process.clone());
        Some(process)
    }

    pub fn insert(&mut self, process_definition_key: i64, process: Arc<Process>) {
        self.by_key.insert(process_definition_key, process);
    }

    /// Forgets a deleted process definition.
    pub fn remove(&mut self, process_definition_key: i64) {
        self.by_key.remove(&process_definition_key);
    }

    /// The parsed decision requirements graph deployed under `key`.
    pub fn decision_requirements(
        &mut self,
        txn: &Txn<'_>,
        key: i64,
    ) -> Option<Arc<DecisionRequirements>> {
        if let Some(d) = self.decisions.get(&key) {
            return Some(d);
        }
        let stored: DecisionRequirementsRecord =
            txn.get(Ks::Decisions, &tagged_key(b'r', &key.to_be_bytes()))?;
        let drg = match zest_model::parse_dmn(&stored.resource_name, &stored.resource) {
            Ok(d) => Arc::new(d),
            Err(e) => {
                tracing::error!("stored decision requirements {key} no longer parse: {e}");
                return None;
            }
        };
        self.decisions.insert(key, drg.clone());
        Some(drg)
    }

    pub fn insert_decision_requirements(&mut self, key: i64, drg: Arc<DecisionRequirements>) {
        self.decisions.insert(key, drg);
    }

    /// Forgets a deleted decision requirements graph.
    pub fn remove_decision_requirements(&mut self, key: i64) {
        self.decisions.remove(&key);
    }

    pub fn clear(&mut self) {
        self.by_key.clear();
        self.decisions.clear();
        self.collections.clear();
        self.parts.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }

    /// The parts `parts` of the variable `name` of the scope `scope_key`, whose JSON text is
    /// `text`: as `parse` gives them, which is called unless the same parts of the same text
    /// were read last time. A call activity's input `disputeId = disputeDetails.disputeId`
    /// scans a payload of 10 KB for each of 50 children; the scans were 7 % of the realistic
    /// benchmark's engine instructions. Texts under [`KEEP_PARTS_FROM`] are parsed each time.
    pub fn read_parts(
        &self,
        scope_key: i64,
        name: &str,
        parts: &zest_feel::ReadParts,
        text: &str,
        parse: impl FnOnce() -> serde_json::Value,
    ) -> serde_json::Value {
        if text.len() < KEEP_PARTS_FROM {
            return parse();
        }
        let key = foldhash::fast::FixedState::default().hash_one((scope_key, name)) as i64;
        let mut kept = self.parts.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(k) = kept.get_ref(&key) {
            if k.name == name && k.parts == *parts && k.text == text {
                return k.value.clone();
            }
        }
        let value = parse();
        let weight = text.len() * 7 + 256;
        if weight > kept.max_weight {
            return value;
        }
        let entry = KeptParts {
            name: name.to_string(),
            parts: parts.clone(),
            text: text.to_string(),
            value: value.clone(),
        };
        kept.insert_weighing(key, entry, weight);
        value
    }

    /// The input collection of the multi-instance body `body_key`, as last evaluated from
    /// inputs whose fingerprint was `fingerprint` (the expression and the JSON texts of the
    /// variables it reads). Zeebe evaluates the input collection again for each inner instance
    /// and each completion; from the same inputs it gives the same list, so this only saves
    /// the work (parsing a large payload variable and converting it to FEEL and back).
    pub fn collection(
        &mut self,
        body_key: i64,
        texts: &[Option<String>],
    ) -> Option<Arc<Vec<serde_json::Value>>> {
        self.collections
            .get_ref(&body_key)
            .filter(|kept| kept.texts == texts)
            .map(|kept| kept.items.clone())
    }

    /// Keeps the collection evaluated from `texts` (the JSON texts of the variables its
    /// expression reads) for [`Models::collection`].
    pub fn keep_collection(
        &mut self,
        body_key: i64,
        texts: Vec<Option<String>>,
        items: Arc<Vec<serde_json::Value>>,
    ) {
        let text_bytes = texts.iter().flatten().map(String::len).sum();
        let weight = collection_weight(text_bytes);
        self.collections
            .insert_weighing(body_key, KeptCollection { texts, items }, weight);
    }
}

/// Variables whose text is shorter than this are parsed each time they are read.
const KEEP_PARTS_FROM: usize = 1024;

/// The share of [`Models::with_collection_bytes`] for the parts of variables read: 1 / this.
const PARTS_SHARE: usize = 8;

/// What [`Models::read_parts`] keeps: the parts read, and what they were read from. Weighs
/// about seven times the text: the text, and the value parsed from it, which takes several
/// times its text when it is the whole variable (see [`collection_weight`]).
struct KeptParts {
    name: String,
    parts: zest_feel::ReadParts,
    text: String,
    value: serde_json::Value,
}

/// An evaluated input collection and the texts it was evaluated from. A body's expression is
/// fixed (the body belongs to one element of one process version), so the same texts give the
/// same collection. Compared whole, not by a hash: a comparison of 10 KB costs less than
/// hashing them, and two different texts are never taken for the same.
struct KeptCollection {
    texts: Vec<Option<String>>,
    items: Arc<Vec<serde_json::Value>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_keeps_the_most_recently_used_within_its_capacity() {
        let mut lru = Lru::new(2);
        lru.insert(1, "a");
        lru.insert(2, "b");
        assert_eq!(lru.get(&1), Some("a"));
        lru.insert(3, "c"); // 2 is the least recently used
        assert_eq!(lru.get(&2), None);
        assert_eq!((lru.get(&1), lru.get(&3)), (Some("a"), Some("c")));
        assert_eq!(lru.map.len(), 2);
    }

    #[test]
    fn kept_collections_stay_within_their_memory() {
        let item = serde_json::json!({"id": 1, "text": "x".repeat(100)});
        let text = vec![Some("x".repeat(11 << 10))];
        // an eighth of the memory goes to the parts of variables read
        let mut models =
            Models::default().with_collection_bytes(collection_weight(11 << 10) * 3 * 8 / 7 + 8);
        let budget = models.collections.max_weight;
        assert!(
            (3 * collection_weight(11 << 10)..4 * collection_weight(11 << 10)).contains(&budget)
        );
        for body in 0..10 {
            let items = Arc::new(vec![item.clone(); 80]);
            models.keep_collection(body, text.clone(), items);
            assert!(models.collections.weight <= budget);
        }
        // the three most recent are kept, the others went first
        assert_eq!(models.collections.map.len(), 3);
        assert!(models.collection(9, &text).is_some() && models.collection(6, &text).is_none());
        // only for the same texts
        let mut other = text.clone();
        other[0].as_mut().unwrap().replace_range(5000..5001, "y");
        assert!(models.collection(9, &other).is_none());
        assert!(models.collection(9, &[None]).is_none());
        // a collection that alone weighs more than the whole is not kept
        let huge = vec![Some("x".repeat(budget))];
        models.keep_collection(10, huge.clone(), Arc::new(vec![]));
        assert!(models.collection(10, &huge).is_none());
        assert!(models.collections.weight <= budget);
    }

    /// The parts of a large variable are parsed once for the same scope, name, parts and
    /// text, and again when any of them differs; small texts and what does not fit in the
    /// parts' memory are parsed each time.
    #[test]
    fn the_parts_of_a_large_variable_are_parsed_once_for_the_same_text() {
        let models = Models::default().with_collection_bytes(8 * 100_000);
        let expr = zest_feel::Expression::parse("d.id").unwrap();
        let (id, whole) = (expr.reads("d"), zest_feel::ReadParts::whole());
        let text = format!(r#"{{"pad":"{}","id":7}}"#, "x".repeat(2000));
        let parses = std::cell::Cell::new(0);
        let read = |scope: i64, name: &str, parts: &zest_feel::ReadParts, text: &str| {
            models.read_parts(scope, name, parts, text, || {
                parses.set(parses.get() + 1);
                parts.parse(text).unwrap()
            })
        };
        let first = read(1, "d", &id, &text);
        assert_eq!(first, serde_json::json!({"id": 7}));
        assert_eq!(read(1, "d", &id, &text), first);
        assert_eq!(parses.get(), 1, "the same read again is kept");
        let changed = text.replace(r#""id":7"#, r#""id":8"#);
        assert_eq!(read(1, "d", &id, &changed), serde_json::json!({"id": 8}));
        assert_eq!(read(1, "d", &whole, &changed)["id"], 8);
        assert_eq!(read(2, "d", &id, &changed), serde_json::json!({"id": 8}));
        assert_eq!(parses.get(), 4, "another text, parts or scope is parsed");
        let small = r#"{"id":1}"#;
        read(1, "s", &id, small);
        read(1, "s", &id, small);
        assert_eq!(parses.get(), 6, "small texts are parsed each time");
        // 100 KB for the parts: a text of 20 KB weighs more than that
        let large = format!(r#"{{"pad":"{}","id":9}}"#, "x".repeat(20_000));
        read(3, "d", &id, &large);
        read(3, "d", &id, &large);
        assert_eq!(parses.get(), 8, "what does not fit is parsed each time");
        assert!(models.parts.lock().unwrap().weight <= 100_000);
    }
}
