//! The bound on unexported log, against a real `zest start`: with exporting paused, the log
//! the exporter holds grows until new process instances are refused (RESOURCE_EXHAUSTED on
//! gRPC, 429 on REST), while the commands that drain work go on; resumed, the exporter
//! catches up and new instances are taken again.

mod common;

use std::time::{Duration, Instant};

use common::{connect, deploy_one_task, http, metric, start_with, Client};
use serde_json::json;
use zest_gateway::proto;

async fn create(c: &mut Client, variables: &str) -> Result<i64, tonic::Status> {
    c.create_process_instance(proto::CreateProcessInstanceRequest {
        bpmn_process_id: "benchmark".into(),
        version: -1,
        variables: variables.into(),
        ..Default::default()
    })
    .await
    .map(|r| r.into_inner().process_instance_key)
}

fn held_bytes(management: &str) -> f64 {
    metric(
        management,
        "zest_exporter_unexported_log_bytes{exporter=\"history\",partition=\"1\"}",
    )
    .expect("the unexported log is exported as a metric")
}

fn gate_closed(management: &str) -> bool {
    metric(
        management,
        "zest_exporter_backlog_gate_closed{partition=\"1\"}",
    )
    .expect("the gate is exported as a metric")
        == 1.0
}

#[test]
fn a_paused_exporter_holds_log_until_new_instances_are_refused_and_resumed_takes_them_again() {
    let node = start_with("export-backlog", &["--max-unexported-log-mb", "1"]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let mut c = connect(&node.gateway).await;
        deploy_one_task(&mut c).await;
        let (status, _) = http(&node.management, "POST", "/actuator/exporting/pause", None);
        assert_eq!(status, 204);

        // what a one-task instance, created and waiting for its job, holds of log (printed
        // for the design doc's argument for the default bound)
        let before = held_bytes(&node.management);
        for _ in 0..100 {
            create(&mut c, "{}").await.expect("under the bound");
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        let small = (held_bytes(&node.management) - before) / 100.0;
        assert!(small > 0.0, "the paused exporter holds what was created");
        eprintln!("log held per one-task instance created: {small:.0} bytes");

        // 16 KiB a creation (in its command and its variable's record): the 1 MiB bound is
        // passed after a few dozen instances
        let variables = format!("{{\"blob\":\"{}\"}}", "x".repeat(16 << 10));
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut taken = 0;
        let refused = loop {
            match create(&mut c, &variables).await {
                Ok(_) => taken += 1,
                Err(e) => break e,
            }
            assert!(
                Instant::now() < deadline,
                "{taken} instances and no refusal"
            );
        };
        assert_eq!(
            refused.code(),
            tonic::Code::ResourceExhausted,
            "{refused:?}"
        );
        assert!(
            refused.message().contains("max-unexported-log-mb (1)"),
            "{refused:?}"
        );
        assert!(taken >= 10, "refused after {taken} instances of 16 KiB");
        eprintln!("refused after {taken} instances of 16 KiB");
        assert!(gate_closed(&node.management));
        assert!(held_bytes(&node.management) > (1 << 20) as f64);

        // REST: Camunda's 429 problem
        let (status, problem) = http(
            &node.rest,
            "POST",
            "/v2/process-instances",
            Some(json!({"processDefinitionId": "benchmark"})),
        );
        assert_eq!(status, 429, "{problem}");
        assert_eq!(problem["title"], "RESOURCE_EXHAUSTED", "{problem}");
        assert!(
            problem["detail"]
                .as_str()
                .is_some_and(|d| d.contains("not yet exported")),
            "{problem}"
        );

        // work already started drains: its job is activated and completed
        let job = common::activate_one(&mut c, "benchmark-task")
            .await
            .expect("a job of the instances taken");
        common::complete(&mut c, job.key).await;

        // resumed, the exporter catches up and the gate opens again
        let (status, _) = http(&node.management, "POST", "/actuator/exporting/resume", None);
        assert_eq!(status, 204);
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            match create(&mut c, "{}").await {
                Ok(_) => break,
                Err(e) => {
                    assert_eq!(e.code(), tonic::Code::ResourceExhausted, "{e:?}");
                    assert!(Instant::now() < deadline, "still refused: {e:?}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
        assert!(!gate_closed(&node.management));
        assert!(held_bytes(&node.management) < (1 << 20) as f64);
    });
}
