//! Tasks that create a job for a worker.

use zest_protocol::{ErrorType, Intent};

use crate::behaviour::element_instance::pi_value;
use crate::behaviour::element_instance::Active;
use crate::behaviour::event_scopes::subscribe_boundaries;
use crate::behaviour::expressions::job_type_and_retries;
use crate::behaviour::incidents::raise_incident;
use crate::behaviour::inputs::user_task_headers;
use crate::behaviour::jobs::create_job;
use crate::context::{Ctx, ProcResult, Rejection};
use crate::element::kind::{ElementProcessor, EventVariables};

/// A task that creates a job for a worker (service, send, script and business rule tasks with a
/// task definition, job-worker user tasks).
pub(crate) struct JobWorkerTask;

impl ElementProcessor for JobWorkerTask {
    fn on_activate(&self, ctx: &mut Ctx<'_, '_, '_>, e: &Active) -> ProcResult {
        let inst = &e.inst;
        let model = &e.model;
        let idx = e.idx;
        let key = e.inst.key;
        let el = model.element(idx);
        let Some(def) = &el.task_definition else {
            return Err(Rejection::invalid_state(format!(
                "task '{}' has no task definition",
                el.id
            )));
        };
        let (job_type, retries) = match job_type_and_retries(ctx, def, key) {
            Ok(v) => v,
            Err(msg) => return raise_incident(ctx, inst, ErrorType::ExtractValueError, msg, -1),
        };
        let mut custom_headers: std::collections::BTreeMap<String, String> =
            el.task_headers.iter().cloned().collect();
        if let Some(props) = &el.user_task {
            match user_task_headers(ctx, props, key) {
                Ok(h) => custom_headers.extend(h),
                Err(msg) => {
                    return raise_incident(ctx, inst, ErrorType::ExtractValueError, msg, -1)
                }
            }
            if let Some(form_id) = &props.form_id {
                // a linked form: its key, as the custom form key would be
                match crate::behaviour::inputs::latest_form(ctx, form_id) {
                    Ok(form_key) => {
                        custom_headers
                            .insert("io.camunda.zeebe:formKey".to_string(), form_key.to_string());
                    }
                    Err(msg) => return raise_incident(ctx, inst, ErrorType::FormNotFound, msg, -1),
                }
            }
        }
        if let Err(msg) = subscribe_boundaries(ctx, inst, model, idx) {
            return raise_incident(ctx, inst, ErrorType::ExtractValueError, msg, -1);
        }
        create_job(ctx, inst, job_type, retries, custom_headers, None);
        ctx.event(key, Intent::ElementActivated, pi_value(&inst.record));
        Ok(())
    }

    fn event_variables(&self) -> EventVariables {
        EventVariables::Trigger
    }
}
