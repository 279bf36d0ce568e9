use std::collections::HashMap;
use std::sync::Arc;

use zest_model::dmn::DecisionRequirements;
use zest_model::Process;
use zest_protocol::DecisionRequirementsRecord;

use crate::appliers::tagged_key;
use crate::state::{key_i64, Ks, Txn};
use crate::types::StoredProcess;

/// Parsed process models by definition key: a cache of what state holds (the deployed XML),
/// so it never changes what the engine computes, only how fast.
#[derive(Default)]
pub struct Models {
    by_key: HashMap<i64, Arc<Process>>,
    /// Parsed DMN by decision requirements key.
    decisions: HashMap<i64, Arc<DecisionRequirements>>,
}

impl Models {
    pub fn get(&mut self, txn: &Txn<'_>, process_definition_key: i64) -> Option<Arc<Process>> {
        if let Some(p) = self.by_key.get(&process_definition_key) {
            return Some(p.clone());
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
            return Some(d.clone());
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
    }
}
