//! A job's completion result, as a worker gives it (gRPC's `JobResult`, REST's `JobResult`):
//! the ad-hoc sub-process kind (the elements to activate, whether the sub-process is done), or
//! the user task kind (a task listener that denies or corrects its task).

use serde::Deserialize;
use zest_protocol::{AdHocActivateElement, JobResult, JobResultType};

use super::{variables_document, CommandError};

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct WorkerResult {
    /// `userTask` (the default) or `adHocSubProcess`.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub denied: Option<bool>,
    pub denied_reason: Option<String>,
    pub corrections: Option<Corrections>,
    pub activate_elements: Vec<ActivateElement>,
    pub is_completion_condition_fulfilled: Option<bool>,
    pub is_cancel_remaining_instances: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Corrections {
    pub assignee: Option<String>,
    pub due_date: Option<String>,
    pub follow_up_date: Option<String>,
    pub candidate_users: Option<Vec<String>>,
    pub candidate_groups: Option<Vec<String>>,
    pub priority: Option<i32>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ActivateElement {
    pub element_id: String,
    /// JSON object text.
    #[serde(deserialize_with = "super::super::rest::json_text")]
    pub variables: String,
}

impl WorkerResult {
    /// The engine's result, checked.
    pub fn into_result(self) -> Result<JobResult, CommandError> {
        match self.kind.as_deref().unwrap_or("userTask") {
            "adHocSubProcess" => self.ad_hoc(),
            "userTask" => Ok(self.user_task()),
            other => Err(CommandError::Invalid(format!(
                "Property 'result.type' must be one of [userTask, adHocSubProcess], but was '{other}'"
            ))),
        }
    }

    fn ad_hoc(self) -> Result<JobResult, CommandError> {
        let mut activate_elements = Vec::with_capacity(self.activate_elements.len());
        for (i, e) in self.activate_elements.into_iter().enumerate() {
            if e.element_id.trim().is_empty() {
                return Err(CommandError::Invalid(format!(
                    "Property 'result.activateElements[{i}].elementId' is empty; name an element of the ad-hoc sub-process"
                )));
            }
            let variables = variables_document(
                e.variables,
                &format!("result.activateElements[{i}].variables"),
            )?;
            activate_elements.push(AdHocActivateElement {
                element_id: e.element_id,
                variables,
            });
        }
        Ok(JobResult {
            result_type: JobResultType::AdHocSubProcess,
            activate_elements,
            completion_condition_fulfilled: self.is_completion_condition_fulfilled.unwrap_or(false),
            cancel_remaining_instances: self.is_cancel_remaining_instances.unwrap_or(false),
            ..Default::default()
        })
    }

    /// The corrected attributes are the corrections given, as Zeebe's gateway lists them.
    fn user_task(self) -> JobResult {
        let mut result = JobResult {
            denied: self.denied.unwrap_or(false),
            denied_reason: self.denied_reason.unwrap_or_default(),
            ..Default::default()
        };
        let Some(c) = self.corrections else {
            return result;
        };
        let (out, corrected) = (&mut result.corrections, &mut result.corrected_attributes);
        if let Some(v) = c.assignee {
            out.assignee = v;
            corrected.push("assignee".into());
        }
        if let Some(v) = c.due_date {
            out.due_date = v;
            corrected.push("dueDate".into());
        }
        if let Some(v) = c.follow_up_date {
            out.follow_up_date = v;
            corrected.push("followUpDate".into());
        }
        if let Some(v) = c.candidate_users {
            out.candidate_users = v;
            corrected.push("candidateUsersList".into());
        }
        if let Some(v) = c.candidate_groups {
            out.candidate_groups = v;
            corrected.push("candidateGroupsList".into());
        }
        if let Some(v) = c.priority {
            out.priority = v;
            corrected.push("priority".into());
        }
        result
    }
}
