//! What a command's answer says was done, a read of the node's state then shows. With one
//! voter per partition (a single node), a command is answered once the log holds its records,
//! which may be before they are applied to the state that REST reads; those reads wait for the
//! apply (`AppliedInfo::wait_applied`). Each creation here is followed at once by a search, many
//! times over.

mod common;

use common::{connect, deploy_one_task, http, start};
use serde_json::json;
use zest_gateway::proto;

/// A process that ends as it starts.
const PASS: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d" targetNamespace="http://zest.example">
  <bpmn:process id="pass" isExecutable="true">
    <bpmn:startEvent id="start"/>
    <bpmn:sequenceFlow id="f" sourceRef="start" targetRef="end"/>
    <bpmn:endEvent id="end"/>
  </bpmn:process>
</bpmn:definitions>"#;

#[test]
fn an_instance_is_found_by_the_search_that_follows_its_creation() {
    let node = start("answers-then-reads");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut c = rt.block_on(connect(&node.gateway));
    rt.block_on(deploy_one_task(&mut c));
    rt.block_on(c.deploy_resource(proto::DeployResourceRequest {
        resources: vec![proto::Resource {
            name: "pass.bpmn".into(),
            content: PASS.as_bytes().to_vec(),
        }],
        tenant_id: String::new(),
    }))
    .expect("pass.bpmn deploys");
    // other clients keep the node busy with instances that end at once (the state the
    // searches scan stays small), so that applying trails the log
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let load: Vec<_> = (0..8)
        .map(|_| {
            let (mut c, stop) = (c.clone(), stop.clone());
            rt.spawn(async move {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let _ = c
                        .create_process_instance(proto::CreateProcessInstanceRequest {
                            bpmn_process_id: "pass".into(),
                            version: -1,
                            variables: format!(r#"{{"payload":"{}"}}"#, "x".repeat(20_000)),
                            ..Default::default()
                        })
                        .await;
                }
            })
        })
        .collect();
    for round in 0..300 {
        let instance = rt
            .block_on(
                c.create_process_instance(proto::CreateProcessInstanceRequest {
                    bpmn_process_id: "benchmark".into(),
                    version: -1,
                    ..Default::default()
                }),
            )
            .expect("the instance is created")
            .into_inner()
            .process_instance_key;
        let (status, page) = http(
            &node.rest,
            "POST",
            "/v2/element-instances/search",
            Some(
                json!({"filter": {"processInstanceKey": instance.to_string(), "elementId": "task"}}),
            ),
        );
        assert_eq!(status, 200, "{page}");
        let items = page["items"].as_array().cloned().unwrap_or_default();
        assert_eq!(
            items.len(),
            1,
            "round {round}: the search right after the creation shows its task: {page}"
        );
        assert_eq!(items[0]["processInstanceKey"], json!(instance.to_string()));
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for l in load {
        rt.block_on(l).unwrap();
    }
}
