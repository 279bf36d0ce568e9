//! The job worker implementation of ad-hoc sub-processes (Camunda's AI agent pattern) on a real
//! `zest start`, over gRPC as a worker drives it: the sub-process's job (kind
//! AD_HOC_SUB_PROCESS) carries its task headers and the `adHocSubProcessElements` variable;
//! completing it with an `adHocSubProcess` result activates tools with variables; each finished
//! tool call brings a new job that sees the collected results; a result that says the
//! completion condition is fulfilled ends the sub-process. Bad results are refused with the
//! status Zeebe gives.

mod common;

use common::{activate_one, activate_one_within, connect, create_with_result, start};
use serde_json::{json, Value};
use tonic::Code;
use zest_gateway::proto;
use zest_gateway::proto::activated_job::JobKind;

const MODEL: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="x">
  <bpmn:process id="agent" isExecutable="true">
    <bpmn:startEvent id="start" />
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="tools" />
    <bpmn:adHocSubProcess id="tools">
      <bpmn:extensionElements>
        <zeebe:taskDefinition type="ai-agent" retries="3" />
        <zeebe:taskHeaders><zeebe:header key="model" value="small" /></zeebe:taskHeaders>
        <zeebe:adHoc outputCollection="toolCallResults" outputElement="={id: toolCall.id, content: toolCallResult}" />
      </bpmn:extensionElements>
      <bpmn:serviceTask id="lookup" name="Look up">
        <bpmn:documentation>Finds a customer</bpmn:documentation>
        <bpmn:extensionElements><zeebe:taskDefinition type="lookup" /></bpmn:extensionElements>
      </bpmn:serviceTask>
      <bpmn:serviceTask id="notify">
        <bpmn:extensionElements><zeebe:taskDefinition type="notify" /></bpmn:extensionElements>
      </bpmn:serviceTask>
    </bpmn:adHocSubProcess>
    <bpmn:sequenceFlow id="f2" sourceRef="tools" targetRef="end" />
    <bpmn:endEvent id="end" />
  </bpmn:process>
</bpmn:definitions>
"#;

fn vars(job: &proto::ActivatedJob) -> Value {
    serde_json::from_str(&job.variables).expect("job variables are a JSON object")
}

fn result(activate: &[(&str, Value)], done: bool) -> proto::JobResult {
    proto::JobResult {
        r#type: Some("adHocSubProcess".into()),
        activate_elements: activate
            .iter()
            .map(|(id, v)| proto::JobResultActivateElement {
                element_id: id.to_string(),
                variables: v.to_string(),
            })
            .collect(),
        is_completion_condition_fulfilled: Some(done),
        ..Default::default()
    }
}

#[tokio::test]
async fn a_worker_decides_which_tools_run_until_it_says_the_sub_process_is_done() {
    let node = start("ad-hoc-agent");
    let mut c = connect(&node.gateway).await;
    c.deploy_resource(proto::DeployResourceRequest {
        resources: vec![proto::Resource {
            name: "agent.bpmn".into(),
            content: MODEL.as_bytes().to_vec(),
        }],
        tenant_id: String::new(),
    })
    .await
    .expect("the model deploys");
    let outcome = tokio::spawn(create_with_result(
        c.clone(),
        "agent".into(),
        r#"{"question":"who?"}"#.into(),
    ));

    // the sub-process's own job: its kind, headers and the tools it can choose from
    let job = activate_one(&mut c, "ai-agent")
        .await
        .expect("the sub-process creates a job");
    assert_eq!(job.kind(), JobKind::AdHocSubProcess);
    assert_eq!(job.element_id, "tools");
    assert_eq!(job.retries, 3);
    let headers: Value = serde_json::from_str(&job.custom_headers).unwrap();
    assert_eq!(headers, json!({"model": "small"}));
    let v = vars(&job);
    assert_eq!(v["question"], "who?");
    assert_eq!(
        v["adHocSubProcessElements"],
        json!([{"elementId": "lookup", "elementName": "Look up", "documentation": "Finds a customer"}, {"elementId": "notify"}])
    );
    assert_eq!(v["toolCallResults"], json!([]));

    // bad results are refused and leave the job as it was
    let client = c.clone();
    let complete_with = |job_key: i64, result: proto::JobResult, variables: &str| {
        let mut c = client.clone();
        let variables = variables.to_string();
        async move {
            c.complete_job(proto::CompleteJobRequest {
                job_key,
                variables,
                result: Some(result),
            })
            .await
        }
    };
    let err = complete_with(job.key, result(&[("nope", json!({}))], false), "")
        .await
        .expect_err("an unknown element is refused");
    assert_eq!(err.code(), Code::NotFound, "{err:?}");
    assert!(
        err.message()
            .contains("but the given elements [nope] do not exist"),
        "{}",
        err.message()
    );
    let mut bad_type = result(&[], false);
    bad_type.r#type = Some("somethingElse".into());
    let err = complete_with(job.key, bad_type, "")
        .await
        .expect_err("an unknown result type is refused");
    assert_eq!(err.code(), Code::InvalidArgument, "{err:?}");

    // the worker calls a tool, with the call's variables local to it
    complete_with(
        job.key,
        result(&[("lookup", json!({"toolCall": {"id": "call-1"}}))], false),
        r#"{"agentContext":{"turn":1}}"#,
    )
    .await
    .expect("the result is accepted");
    let tool = activate_one(&mut c, "lookup")
        .await
        .expect("the chosen tool runs");
    assert_eq!(vars(&tool)["toolCall"], json!({"id": "call-1"}));
    c.complete_job(proto::CompleteJobRequest {
        job_key: tool.key,
        variables: r#"{"toolCallResult":"Ada"}"#.into(),
        result: None,
    })
    .await
    .expect("the tool's job completes");

    // a new job sees what the tool returned and decides that the work is done
    let job = activate_one(&mut c, "ai-agent")
        .await
        .expect("a finished tool call brings a new job");
    let v = vars(&job);
    assert_eq!(
        v["toolCallResults"],
        json!([{"id": "call-1", "content": "Ada"}])
    );
    assert_eq!(v["agentContext"], json!({"turn": 1}));
    complete_with(job.key, result(&[], true), r#"{"answer":"Ada"}"#)
        .await
        .expect("the final result is accepted");

    let done = outcome
        .await
        .unwrap()
        .expect("the instance completes once the worker says it is done");
    let v: Value = serde_json::from_str(&done.variables).unwrap();
    assert_eq!(v["answer"], "Ada");
    assert_eq!(
        v["toolCallResults"],
        json!([{"id": "call-1", "content": "Ada"}])
    );
    // nothing was left behind: no other tool ran
    assert!(
        activate_one_within(&mut c, "notify", 100).await.is_none(),
        "no notify job"
    );
}
