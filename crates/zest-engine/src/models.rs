//! Parsed process models and decision graphs, cached by key in an LRU bounded by
//! `--memory-mb`; a miss parses the stored resource again.

use std::collections::HashMap;
use std::sync::Arc;

use zest_model::dmn::DecisionRequirements;
use zest_model::Process;
use zest_protocol::DecisionRequirementsRecord;

use crate::keys::tagged_key;
use crate::state::{key_i64, Ks, Txn};
use crate::types::StoredProcess;

/// Parsed models kept by default (processes and decision graphs each).
pub const DEFAULT_CAPACITY: usize = 1024;

/// At most `capacity` values by key; the least recently used goes first.
struct Lru<V> {
    map: HashMap<i64, (V, u64)>,
    tick: u64,
    capacity: usize,
}

impl<V: Clone> Lru<V> {
    fn new(capacity: usize) -> Self {
        Lru {
            map: HashMap::new(),
            tick: 0,
            capacity: capacity.max(1),
        }
    }

    fn get(&mut self, key: &i64) -> Option<V> {
        self.tick += 1;
        let tick = self.tick;
        self.map.get_mut(key).map(|(v, used)| {
            *used = tick;
            v.clone()
        })
    }

    fn insert(&mut self, key: i64, value: V) {
        if self.map.len() >= self.capacity && !self.map.contains_key(&key) {
            // a scan, but only when full and a model is not cached: rare, and bounded
            if let Some(oldest) = self
                .map
                .iter()
                .min_by_key(|(_, (_, t))| *t)
                .map(|(k, _)| *k)
            {
                self.map.remove(&oldest);
            }
        }
        self.tick += 1;
        self.map.insert(key, (value, self.tick));
    }

    fn remove(&mut self, key: &i64) {
        self.map.remove(key);
    }

    fn clear(&mut self) {
        self.map.clear();
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
    collections: Lru<(u128, Arc<Vec<serde_json::Value>>)>,
}

/// Bodies whose input collection is kept.
const COLLECTIONS: usize = 256;
/// Input collections larger than this (as JSON text) are evaluated each time, not kept: 256 of
/// them stay within some tens of MiB.
pub const MAX_KEPT_COLLECTION: usize = 32 << 10;

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
            collections: Lru::new(COLLECTIONS),
        }
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
    }

    /// The input collection of the multi-instance body `body_key`, as last evaluated from
    /// inputs whose fingerprint was `fingerprint` (the expression and the JSON texts of the
    /// variables it reads). Zeebe evaluates the input collection again for each inner instance
    /// and each completion; from the same inputs it gives the same list, so this only saves
    /// the work (parsing a large payload variable and converting it to FEEL and back).
    pub fn collection(
        &mut self,
        body_key: i64,
        fingerprint: u128,
    ) -> Option<Arc<Vec<serde_json::Value>>> {
        self.collections
            .get(&body_key)
            .filter(|(f, _)| *f == fingerprint)
            .map(|(_, items)| items)
    }

    pub fn keep_collection(
        &mut self,
        body_key: i64,
        fingerprint: u128,
        items: Arc<Vec<serde_json::Value>>,
    ) {
        self.collections.insert(body_key, (fingerprint, items));
    }
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
}
