//! Command distribution between partitions (Zeebe's COMMAND_DISTRIBUTION): a command written on
//! partition 1 that every partition must see (a deployment, a signal broadcast) is sent to each
//! other partition, retried until each acknowledges it, and finished when all have.

use serde::{Deserialize, Serialize};

use crate::{DeploymentRecord, Intent, RecordValue, ValueType};

/// COMMAND_DISTRIBUTION STARTED, DISTRIBUTING, ACKNOWLEDGE, ACKNOWLEDGED, FINISHED. The record's
/// key is the distribution's (the key of the distributed command, e.g. the deployment key).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommandDistributionRecord {
    /// The partition the command goes to (DISTRIBUTING) or came back from (ACKNOWLEDGE,
    /// ACKNOWLEDGED); the origin's for STARTED and FINISHED.
    pub partition_id: u32,
    pub value_type: ValueType,
    pub intent: Intent,
    /// The distributed command's value (STARTED and DISTRIBUTING; none in the others).
    pub command_value: Option<Box<RecordValue>>,
}

impl CommandDistributionRecord {
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "partitionId": self.partition_id,
            "queueId": serde_json::Value::Null,
            "valueType": self.value_type.name(),
            "intent": self.intent.name(),
            "commandValue": self.command_value.as_ref().map(|v| v.to_json()).unwrap_or_else(|| serde_json::json!({})),
        })
    }
}

/// A deployment as partition 1 sends it to the others: the deployment and what partition 1
/// created of it, with partition 1's keys and versions, so every partition holds the same
/// process, decision and form versions under the same keys (DEPLOYMENT CREATE on the other
/// partitions; its value type is DEPLOYMENT).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DistributedDeployment {
    pub deployment: DeploymentRecord,
    /// The CREATED events of partition 1 (PROCESS, DECISION_REQUIREMENTS, DECISION, FORM):
    /// key and value, in the order written.
    pub created: Vec<(i64, RecordValue)>,
}

impl DistributedDeployment {
    /// The resources' bytes: the deployment's, and the copies its created records carry.
    pub fn payload_bytes(&self) -> usize {
        let created: usize = self
            .created
            .iter()
            .map(|(_, value)| match value {
                RecordValue::Process(p) => p.resource.len(),
                RecordValue::DecisionRequirements(d) => d.resource.len(),
                RecordValue::Form(f) => f.resource.len(),
                _ => 0,
            })
            .sum();
        let deployed: usize = self
            .deployment
            .resources
            .iter()
            .map(|r| r.resource.len())
            .sum();
        deployed + created
    }
}
