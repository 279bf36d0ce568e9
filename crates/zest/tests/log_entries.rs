//! A log entry is one processing group, replicated and applied whole: a group stops taking
//! commands once it wrote 4096 records, and the commands it left lead the next group, in
//! order, so that commands whose follow-ups write many records never make one huge entry.

mod common;

use common::*;
use zest_gateway::proto;

/// Each instance writes about 1,600 records when created (200 parallel inner instances of a
/// manual task, each activated and completed at once).
const MODEL: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="defs" targetNamespace="http://bpmn.io/schema/bpmn">
  <bpmn:process id="fan" isExecutable="true">
    <bpmn:startEvent id="start" />
    <bpmn:manualTask id="each">
      <bpmn:multiInstanceLoopCharacteristics>
        <bpmn:extensionElements><zeebe:loopCharacteristics inputCollection="=for i in 1..200 return i" inputElement="i" /></bpmn:extensionElements>
      </bpmn:multiInstanceLoopCharacteristics>
    </bpmn:manualTask>
    <bpmn:endEvent id="end" />
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="each" />
    <bpmn:sequenceFlow id="f2" sourceRef="each" targetRef="end" />
  </bpmn:process>
</bpmn:definitions>"#;

/// `name{partition="1",le="LE"}` (or without `le`) from the metrics.
fn metric(management: &str, name: &str, le: Option<&str>) -> f64 {
    let labels = match le {
        Some(le) => format!("{{partition=\"1\",le=\"{le}\"}}"),
        None => "{partition=\"1\"}".to_string(),
    };
    let prefix = format!("{name}{labels} ");
    http_get(management, "/metrics")
        .lines()
        .find_map(|l| l.strip_prefix(&prefix).map(str::to_string))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{prefix}is exported"))
}

#[test]
fn commands_that_write_many_records_are_split_over_log_entries() {
    let node = start("log-entries");
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let mut c = connect(&node.gateway).await;
        c.deploy_resource(proto::DeployResourceRequest {
            resources: vec![proto::Resource {
                name: "fan.bpmn".into(),
                content: MODEL.as_bytes().to_vec(),
            }],
            tenant_id: String::new(),
        })
        .await
        .expect("the model deploys");
        // at once: they queue behind the first and would make one group of 39 instances
        let created: Vec<_> = (0..40)
            .map(|_| tokio::spawn(create_with_result(c.clone(), "fan".into(), "{}".into())))
            .collect();
        for instance in created {
            instance.await.unwrap().expect("every instance completes");
        }
    });
    let name = "zest_records_per_log_entry";
    let entries = metric(&node.management, &format!("{name}_count"), None);
    let records = metric(&node.management, &format!("{name}_sum"), None);
    let within = metric(&node.management, &format!("{name}_bucket"), Some("8192"));
    assert!(records >= 40.0 * 1600.0, "{records} records written");
    assert_eq!(
        within, entries,
        "no entry holds more than 4096 records and one command's (~1,600): {} of {entries} are larger",
        entries - within
    );
    assert!(
        entries >= records / 8192.0,
        "{entries} entries for {records} records"
    );
}
