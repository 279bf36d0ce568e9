//! What a worker learns about a job over gRPC: an execution listener's job says so
//! (ActivatedJob.kind EXECUTION_LISTENER, listenerEventType START or END), a task's job is a
//! BPMN_ELEMENT job, as Zeebe's gateway reports them.

mod common;

use common::{activate_one, complete, connect, start};
use zest_gateway::proto;
use zest_gateway::proto::activated_job::{JobKind, ListenerEventType};

const MODEL: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="x">
  <bpmn:process id="listened" isExecutable="true">
    <bpmn:startEvent id="s" />
    <bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="work" />
    <bpmn:serviceTask id="work">
      <bpmn:extensionElements>
        <zeebe:taskDefinition type="work" />
        <zeebe:executionListeners>
          <zeebe:executionListener eventType="start" type="before" />
          <zeebe:executionListener eventType="end" type="after" />
        </zeebe:executionListeners>
      </bpmn:extensionElements>
    </bpmn:serviceTask>
    <bpmn:sequenceFlow id="f2" sourceRef="work" targetRef="e" />
    <bpmn:endEvent id="e" />
  </bpmn:process>
</bpmn:definitions>
"#;

#[tokio::test]
async fn listener_jobs_report_their_kind_and_event_type() {
    let node = start("job-kind");
    let mut c = connect(&node.gateway).await;
    c.deploy_resource(proto::DeployResourceRequest {
        resources: vec![proto::Resource {
            name: "listened.bpmn".into(),
            content: MODEL.as_bytes().to_vec(),
        }],
        tenant_id: String::new(),
    })
    .await
    .expect("the model deploys");
    c.create_process_instance(proto::CreateProcessInstanceRequest {
        bpmn_process_id: "listened".into(),
        version: -1,
        ..Default::default()
    })
    .await
    .expect("an instance starts");
    for (job_type, kind, event) in [
        (
            "before",
            JobKind::ExecutionListener,
            ListenerEventType::Start,
        ),
        ("work", JobKind::BpmnElement, ListenerEventType::Unspecified),
        ("after", JobKind::ExecutionListener, ListenerEventType::End),
    ] {
        let job = activate_one(&mut c, job_type)
            .await
            .unwrap_or_else(|| panic!("a {job_type} job is activated"));
        assert_eq!(
            (job.kind(), job.listener_event_type()),
            (kind, event),
            "{job_type}"
        );
        complete(&mut c, job.key).await;
    }
}
