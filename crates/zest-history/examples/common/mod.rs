//! What the examples share: records of the `benchmark` process as the engine writes them.

use zest_protocol::{
    BpmnElementType, BpmnEventType, Intent, ProcessInstanceRecord, Record, RecordType, RecordValue,
    RejectionType,
};

/// An event of partition 1 at `position`, a millisecond after the one before it.
pub fn record(position: u64, key: i64, intent: Intent, value: RecordValue) -> Record {
    Record {
        position,
        partition_id: 1,
        key,
        timestamp: 1_735_689_600_000 + position as i64,
        record_type: RecordType::Event,
        value_type: value.value_type(),
        intent,
        rejection_type: RejectionType::NullVal,
        rejection_reason: String::new(),
        source_record_position: -1,
        request_id: -1,
        request_stream_id: -1,
        value,
    }
}

/// A `benchmark` element of instance `pi`.
pub fn element(pi: i64, id: &str, ty: BpmnElementType) -> RecordValue {
    RecordValue::ProcessInstance(ProcessInstanceRecord {
        bpmn_process_id: "benchmark".into(),
        version: 1,
        process_definition_key: 1,
        process_instance_key: pi,
        element_id: id.into(),
        flow_scope_key: pi,
        bpmn_element_type: ty,
        bpmn_event_type: BpmnEventType::None,
        parent_process_instance_key: -1,
        parent_element_instance_key: -1,
        tenant_id: "<default>".into(),
    })
}
