//! The element instance a step is about: loading it with its process model, and the records
//! of it and of its children.

use std::sync::Arc;

use zest_model::{ElementIdx, Process};
use zest_protocol::{ProcessInstanceRecord, RecordValue};

use crate::context::Ctx;
use crate::state::read_i64;
use crate::state::Txn;
use crate::state::{key_i64, Ks};
use crate::types::{ElementInstance, InstanceState};

/// An element instance with its process model and the index of its element: what a lifecycle
/// step is about.
pub(crate) struct Active {
    pub(crate) inst: ElementInstance,
    pub(crate) model: Arc<Process>,
    pub(crate) idx: ElementIdx,
}

impl Active {
    /// The element instance's key.
    pub(crate) fn key(&self) -> i64 {
        self.inst.key
    }

    /// The element of the model.
    pub(crate) fn element(&self) -> &zest_model::Element {
        self.model.element(self.idx)
    }
}

/// The key, flow scope and state of an element instance (see [`InstanceState`]), without
/// decoding the rest of it.
pub(crate) fn instance_state(txn: &Txn<'_>, key: i64) -> Option<InstanceState> {
    txn.with_raw(
        Ks::ElementInstances,
        &key_i64(key),
        |bytes| match InstanceState::decode(bytes?) {
            Ok(state) => Some(state),
            Err(e) => {
                tracing::error!(key, "undecodable element instance: {e}");
                None
            }
        },
    )
}

/// Loads an element instance with its process model and element index.
pub(crate) fn load(
    ctx: &mut Ctx<'_, '_, '_>,
    key: i64,
) -> Option<(ElementInstance, Arc<Process>, ElementIdx)> {
    let inst: ElementInstance = ctx.txn.get(Ks::ElementInstances, &key_i64(key))?;
    let model = ctx
        .models
        .get(ctx.txn, inst.record.process_definition_key)?;
    let (idx, _) = model.element_by_id(&inst.record.element_id)?;
    Some((inst, model, idx))
}

pub(crate) fn pi_value(r: &ProcessInstanceRecord) -> RecordValue {
    RecordValue::ProcessInstance(r.clone())
}

/// The record of a child element of `scope` in the same process instance.
pub(crate) fn child_record(
    scope: &ProcessInstanceRecord,
    scope_key: i64,
    model: &Process,
    idx: ElementIdx,
) -> ProcessInstanceRecord {
    let el = model.element(idx);
    let (bpmn_element_type, bpmn_event_type) = if el.multi_instance.is_some() {
        // a multi-instance activity is entered as its body
        (
            zest_model::BpmnElementType::MultiInstanceBody,
            zest_model::BpmnEventType::Unspecified,
        )
    } else {
        (el.element_type, el.event_type)
    };
    ProcessInstanceRecord {
        element_id: el.id.clone(),
        flow_scope_key: scope_key,
        bpmn_element_type,
        bpmn_event_type,
        ..scope.clone()
    }
}

/// Up to `limit` children of `scope_key` with a key from `from` on that can be terminated.
pub(crate) fn next_children(
    ctx: &Ctx<'_, '_, '_>,
    scope_key: i64,
    from: i64,
    limit: usize,
) -> Vec<ElementInstance> {
    let mut out = Vec::new();
    for (k, _) in ctx
        .txn
        .scan_prefix(Ks::ElementChildren, &key_i64(scope_key), usize::MAX)
    {
        let child_key = read_i64(&k, 8);
        if child_key < from {
            continue;
        }
        if let Some(child) = ctx
            .txn
            .get::<ElementInstance>(Ks::ElementInstances, &key_i64(child_key))
            .filter(|c| c.is_active())
        {
            out.push(child);
            if out.len() == limit {
                break;
            }
        }
    }
    out
}
