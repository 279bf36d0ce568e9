//! Decisions: evaluated on partition 1, where they are deployed.

use zest_protocol::{DecisionEvaluationRecord, Intent, RecordValue, DEFAULT_TENANT};

use super::{variables_document, CommandError, Commands};

/// An evaluation's answer: its key (the decision instance's) and what was evaluated.
#[derive(Debug)]
pub struct Evaluated {
    pub key: i64,
    pub evaluation: DecisionEvaluationRecord,
}

impl Commands {
    /// Evaluates the decision `key` (when above 0) or the latest version of `id` with
    /// `variables` (JSON object text).
    pub async fn evaluate_decision(
        &self,
        key: i64,
        id: &str,
        variables: String,
    ) -> Result<Evaluated, CommandError> {
        if key <= 0 && id.trim().is_empty() {
            return Err(CommandError::Invalid(
                "Expected either a decision id or a valid decision key, but none provided".into(),
            ));
        }
        let command = DecisionEvaluationRecord {
            decision_key: if key > 0 { key } else { -1 },
            decision_id: id.trim().to_string(),
            variables: variables_document(variables, "variables")?,
            tenant_id: DEFAULT_TENANT.into(),
            ..Default::default()
        };
        let value = RecordValue::DecisionEvaluation(Box::new(command));
        let event = self.send(1, -1, Intent::Evaluate, value).await?;
        match event.value {
            RecordValue::DecisionEvaluation(d) => Ok(Evaluated {
                key: event.key,
                evaluation: *d,
            }),
            _ => Err(CommandError::Internal(
                "unexpected answer to a decision evaluation".into(),
            )),
        }
    }
}
