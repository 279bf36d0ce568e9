//! A node with several partitions, as a user runs it: instances spread over the partitions,
//! a worker gets the jobs of every partition, a message reaches an instance on another
//! partition, a signal reaches instances on every partition, the topology shows them all, and
//! the partition count of a data directory cannot change.

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use zest_gateway::proto;
use zest_protocol::partition_of_key;

const MODEL: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="defs" targetNamespace="http://bpmn.io/schema/bpmn">
  <bpmn:process id="order" isExecutable="true">
    <bpmn:startEvent id="start" />
    <bpmn:serviceTask id="pack"><bpmn:extensionElements><zeebe:taskDefinition type="pack" /></bpmn:extensionElements></bpmn:serviceTask>
    <bpmn:intermediateCatchEvent id="paid"><bpmn:messageEventDefinition messageRef="m" /></bpmn:intermediateCatchEvent>
    <bpmn:intermediateCatchEvent id="shipped"><bpmn:signalEventDefinition signalRef="s" /></bpmn:intermediateCatchEvent>
    <bpmn:endEvent id="end" />
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="pack" />
    <bpmn:sequenceFlow id="f2" sourceRef="pack" targetRef="paid" />
    <bpmn:sequenceFlow id="f3" sourceRef="paid" targetRef="shipped" />
    <bpmn:sequenceFlow id="f4" sourceRef="shipped" targetRef="end" />
  </bpmn:process>
  <bpmn:message id="m" name="paid"><bpmn:extensionElements><zeebe:subscription correlationKey="=orderId" /></bpmn:extensionElements></bpmn:message>
  <bpmn:signal id="s" name="shipped" />
</bpmn:definitions>
"#;

async fn process_instance_exists(c: &mut Client, key: i64) -> bool {
    // a cancel of a finished instance is NOT_FOUND
    match c
        .cancel_process_instance(proto::CancelProcessInstanceRequest {
            process_instance_key: key,
            operation_reference: None,
        })
        .await
    {
        Ok(_) => true,
        Err(s) if s.code() == tonic::Code::NotFound => false,
        Err(s) => panic!("cancel: {s}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn instances_jobs_messages_and_signals_span_three_partitions() {
    let node = start_with("partitions", &["--partitions", "3"]);
    let mut c = connect(&node.gateway).await;
    let topology = c
        .topology(proto::TopologyRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(topology.partitions_count, 3);
    assert_eq!(topology.brokers[0].partitions.len(), 3);
    let (status, partitions) = http(&node.management, "GET", "/actuator/partitions", None);
    assert_eq!(status, 200);
    for p in ["1", "2", "3"] {
        assert_eq!(partitions[p]["role"], "LEADER", "{partitions}");
    }

    c.deploy_resource(proto::DeployResourceRequest {
        resources: vec![proto::Resource {
            name: "order.bpmn".into(),
            content: MODEL.as_bytes().to_vec(),
        }],
        tenant_id: String::new(),
    })
    .await
    .expect("deploys");
    // right after the deployment: every partition creates instances (the first ones may be
    // created on partition 1 while the deployment travels)
    let mut instances = Vec::new();
    for i in 0..30 {
        let r = c
            .create_process_instance(proto::CreateProcessInstanceRequest {
                bpmn_process_id: "order".into(),
                version: -1,
                variables: format!(r#"{{"orderId":"order-{i}"}}"#),
                ..Default::default()
            })
            .await
            .expect("creates")
            .into_inner();
        instances.push((i, r.process_instance_key));
    }
    let mut on: Vec<u32> = instances
        .iter()
        .map(|(_, k)| partition_of_key(*k))
        .collect();
    on.sort();
    on.dedup();
    assert_eq!(
        on,
        vec![1, 2, 3],
        "instances are spread over the partitions"
    );

    // one worker gets the jobs of every partition
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut jobs = Vec::new();
    while jobs.len() < instances.len() && Instant::now() < deadline {
        let mut stream = c
            .activate_jobs(proto::ActivateJobsRequest {
                r#type: "pack".into(),
                worker: "test".into(),
                timeout: 60_000,
                max_jobs_to_activate: 7,
                request_timeout: 1_000,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        while let Some(batch) = stream.message().await.unwrap() {
            jobs.extend(batch.jobs);
        }
    }
    assert_eq!(
        jobs.len(),
        instances.len(),
        "every job, from every partition"
    );
    for job in &jobs {
        assert_eq!(
            partition_of_key(job.key),
            partition_of_key(job.process_instance_key),
            "a job lives with its instance"
        );
        complete(&mut c, job.key).await;
    }

    // the messages go to the partitions of their correlation keys, whichever partition the
    // instance is on; publishing before the subscription is open buffers them (ttl)
    for (i, _) in &instances {
        c.publish_message(proto::PublishMessageRequest {
            name: "paid".into(),
            correlation_key: format!("order-{i}"),
            time_to_live: 60_000,
            ..Default::default()
        })
        .await
        .expect("publishes");
    }
    // then one signal reaches the instances waiting on every partition
    let mut finished = 0;
    let deadline = Instant::now() + Duration::from_secs(30);
    while finished < instances.len() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(300)).await;
        c.broadcast_signal(proto::BroadcastSignalRequest {
            signal_name: "shipped".into(),
            ..Default::default()
        })
        .await
        .expect("broadcasts");
        tokio::time::sleep(Duration::from_millis(300)).await;
        finished = 0;
        for (_, key) in &instances {
            if !process_instance_exists(&mut c, *key).await {
                finished += 1;
            }
        }
    }
    assert_eq!(
        finished,
        instances.len(),
        "every instance took its message and the signal"
    );

    // the partition count belongs to the data directory
    let dir = node.kill();
    let mut child = Command::new(env!("CARGO_BIN_EXE_zest"))
        .args(["start", "--partitions", "2", "--data-dir"])
        .arg(&dir)
        .args([
            "--gateway-address",
            "127.0.0.1:0",
            "--management-address",
            "127.0.0.1:0",
            "--rest-address",
            "127.0.0.1:0",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            panic!("zest started on a data directory of 3 partitions with --partitions 2");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert!(!status.success());
    assert!(
        err.contains("holds 3 partition(s)") && err.contains("--partitions 3"),
        "{err}"
    );
    // and with its own count it starts again, with what it held
    let node = start_in(dir, &["--partitions", "3"]);
    let mut c = connect(&node.gateway).await;
    let r = c
        .create_process_instance(proto::CreateProcessInstanceRequest {
            bpmn_process_id: "order".into(),
            version: -1,
            ..Default::default()
        })
        .await
        .expect("the deployment is still on every partition");
    assert!(r.into_inner().process_instance_key > 0);
}

/// A poll that gets jobs from several partitions is answered with one message per partition,
/// as Zeebe's gateway answers: each partition's batch is bounded under a client's default
/// 4 MiB message limit, and the batches of three partitions together are not.
#[tokio::test(flavor = "multi_thread")]
async fn a_poll_answers_each_partitions_jobs_in_a_message_of_their_own() {
    let node = start_with("poll-messages", &["--partitions", "3"]);
    let mut c = connect(&node.gateway).await; // a client's default limit: 4 MiB a message
    deploy_one_task(&mut c).await;
    // 2 MB of variables per job, 3 instances per partition: 6 MB of jobs per partition, of
    // which a batch carries what fits 3 MiB (one job), 6 MB over the three partitions
    let blob = "x".repeat(2_000_000);
    let mut on = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while on.len() < 9 && Instant::now() < deadline {
        let r = c
            .create_process_instance(proto::CreateProcessInstanceRequest {
                bpmn_process_id: "benchmark".into(),
                version: -1,
                variables: format!(r#"{{"blob":"{blob}"}}"#),
                ..Default::default()
            })
            .await
            .expect("creates")
            .into_inner();
        on.push(partition_of_key(r.process_instance_key));
    }
    for p in [1, 2, 3] {
        assert!(on.contains(&p), "instances on every partition: {on:?}");
    }
    // the jobs are created right after their instances
    tokio::time::sleep(Duration::from_secs(2)).await;
    let mut stream = c
        .activate_jobs(proto::ActivateJobsRequest {
            r#type: "benchmark-task".into(),
            worker: "test".into(),
            timeout: 60_000,
            max_jobs_to_activate: 9,
            request_timeout: 1_000,
            ..Default::default()
        })
        .await
        .expect("activates")
        .into_inner();
    let mut partitions_answered = Vec::new();
    while let Some(batch) = stream
        .message()
        .await
        .expect("every message fits the client's default limit")
    {
        let mut of: Vec<u32> = batch.jobs.iter().map(|j| partition_of_key(j.key)).collect();
        of.dedup();
        assert_eq!(of.len(), 1, "one partition's jobs per message: {of:?}");
        partitions_answered.push(of[0]);
        for job in &batch.jobs {
            assert!(job.variables.contains(&blob[..100]));
        }
    }
    partitions_answered.sort();
    assert_eq!(
        partitions_answered,
        vec![1, 2, 3],
        "a message from each partition"
    );
}
