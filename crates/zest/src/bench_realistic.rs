//! `zest bench --scenario realistic`: Camunda's realistic benchmark, driven as Camunda's load
//! tester drives it (`load-tests/setup/scenarios/load-tester-values-realistic-benchmark.yaml`;
//! `crates/zest/bench/README.md`). One deployment of the bank dispute process, its refunding
//! process and the fraud rating DMN; each instance gets `realisticPayload.json` with
//! `customerId` set to a counter; one worker per job type completes with an empty payload after
//! its delay, and the two notification workers first publish the message the process will wait
//! for a moment later (correlation key: the job's `correlationKey`, time to live one hour as the
//! Java client's default), so the engine buffers it and correlates it when the subscription
//! opens. About 153 jobs, 51 messages, 51 timers, 50 called instances and 10 decisions per
//! instance; the job delays set a floor of about 1.5 s on an instance's duration.

/// What a worker of one job type does.
pub struct JobSpec {
    pub job_type: &'static str,
    /// Before completing.
    pub delay_ms: u64,
    /// Jobs it holds at most (the load tester's `capacity`).
    pub capacity: usize,
    /// The message it publishes before completing, correlated by the job's `correlationKey`.
    pub publish: Option<&'static str>,
}

pub const PROCESS_ID: &str = "bankDisputeHandling";
/// The payload variable that the starter sets to its counter.
pub const BUSINESS_KEY: &str = "customerId";
pub const PAYLOAD: &str = include_str!("../bench/realistic/realisticPayload.json");
/// Time to live of the published messages (the Java client's default).
pub const MESSAGE_TTL_MS: i64 = 3_600_000;

/// The workers of the scenario (the job types with a worker in Camunda's setup).
pub const WORKERS: &[JobSpec] = &[
    JobSpec {
        job_type: "customer_notification",
        delay_ms: 300,
        capacity: 30,
        publish: Some("dispute_process_receive_documents"),
    },
    JobSpec {
        job_type: "extract_data_from_document",
        delay_ms: 300,
        capacity: 30,
        publish: None,
    },
    JobSpec {
        job_type: "dispute_process_request_proof_from_vendor",
        delay_ms: 300,
        capacity: 60,
        publish: Some("dispute_process_refund_approved"),
    },
    JobSpec {
        job_type: "dispute_process_request_get_vendor_info",
        delay_ms: 10,
        capacity: 30,
        publish: None,
    },
    JobSpec {
        job_type: "refunding",
        delay_ms: 300,
        capacity: 30,
        publish: None,
    },
    JobSpec {
        job_type: "inform_about_successful_claim",
        delay_ms: 300,
        capacity: 30,
        publish: None,
    },
];

/// The resources deployed together: (name, content).
pub fn resources() -> Vec<(String, Vec<u8>)> {
    vec![
        (
            "bankCustomerComplaintDisputeHandling.bpmn".into(),
            include_bytes!("../bench/realistic/bankCustomerComplaintDisputeHandling.bpmn").to_vec(),
        ),
        (
            "refundingProcess.bpmn".into(),
            include_bytes!("../bench/realistic/refundingProcess.bpmn").to_vec(),
        ),
        (
            "determineFraudRatingConfidence.dmn".into(),
            include_bytes!("../bench/realistic/determineFraudRatingConfidence.dmn").to_vec(),
        ),
    ]
}

/// The job's `correlationKey` variable, as the load tester's worker reads it. The other
/// variables are skipped, not built: the job carries the instance's whole payload.
pub fn correlation_key(variables: &str) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Variables {
        #[serde(rename = "correlationKey")]
        correlation_key: Option<serde_json::Value>,
    }
    let doc: Variables = serde_json::from_str(variables).ok()?;
    match doc.correlation_key? {
        serde_json::Value::String(s) => Some(s),
        other => Some(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_correlation_key_is_read_from_the_job() {
        assert_eq!(
            correlation_key(r#"{"a":1,"correlationKey":"7-pos"}"#).as_deref(),
            Some("7-pos")
        );
        assert_eq!(correlation_key(r#"{"a":1}"#), None);
        // the payload's nested documents are skipped; a number is its text
        assert_eq!(
            correlation_key(r#"{"d":{"x":[1,{"y":"z"}]},"correlationKey":12}"#).as_deref(),
            Some("12")
        );
    }

    #[test]
    fn the_payload_is_an_object_with_the_business_key() {
        let doc: serde_json::Value = serde_json::from_str(PAYLOAD).unwrap();
        assert!(doc.get(BUSINESS_KEY).is_some());
    }
}
