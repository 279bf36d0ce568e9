//! Several partitions: deployments and signal broadcasts are distributed from partition 1 with
//! Zeebe's command distribution (COMMAND_DISTRIBUTION STARTED, DISTRIBUTING, ACKNOWLEDGE,
//! ACKNOWLEDGED, FINISHED), sent again until acknowledged and processed once; messages meet
//! their subscriptions on the partition of their correlation key. The commands between the
//! partitions go through a test network that can lose and repeat them.

mod support;

use std::collections::VecDeque;

use support::*;
use zest_engine::state::Ks;
use zest_engine::SideEffect;
use zest_protocol::{
    partition_for_correlation_key, partition_of_key, Intent, Record, RecordValue, RejectionType,
    ValueType,
};

/// Partitions 1..=n, each a harness, and the commands sent between them.
struct Partitions {
    parts: Vec<Harness>,
    /// Sent and not yet delivered: (target partition, command).
    network: VecDeque<(u32, Record)>,
}

impl Partitions {
    fn new(n: u32) -> Partitions {
        Partitions {
            parts: (1..=n).map(|p| Harness::on_partition(p, n)).collect(),
            network: VecDeque::new(),
        }
    }

    fn on(&mut self, p: u32) -> &mut Harness {
        &mut self.parts[(p - 1) as usize]
    }

    /// Runs `f` on partition `p` and sends what its batch sends to other partitions.
    fn run(&mut self, p: u32, f: impl FnOnce(&mut Harness) -> Batch) -> Batch {
        let b = f(self.on(p));
        self.collect(&b);
        b
    }

    fn collect(&mut self, b: &Batch) {
        for e in &b.side_effects {
            if let SideEffect::SendCommand(target, record) = e {
                self.network.push_back((*target, (**record).clone()));
            }
        }
    }

    /// Delivers one command sent between partitions; returns the receiver and its batch.
    fn deliver_one(&mut self) -> Option<(u32, Batch)> {
        let (target, record) = self.network.pop_front()?;
        let b = self.on(target).submit(internal(record));
        self.collect(&b);
        Some((target, b))
    }

    /// Delivers until nothing is in flight; returns every batch with its partition.
    fn deliver_all(&mut self) -> Vec<(u32, Batch)> {
        let mut out = Vec::new();
        while let Some(x) = self.deliver_one() {
            out.push(x);
            assert!(
                out.len() < 10_000,
                "the partitions keep sending each other commands"
            );
        }
        out
    }

    /// What the broker's scheduler does on partition 1: send each partition its oldest
    /// unacknowledged distribution again.
    fn redistribute(&mut self) {
        let count = self.parts.len() as u32;
        let pending = zest_engine::queries::pending_distributions(&self.on(1).state, count);
        for (target, key, intent, value) in pending {
            self.network
                .push_back((target, zest_engine::new_command(key, intent, value, -1, -1)));
        }
    }

    fn settle(&self) {
        for h in &self.parts {
            h.settle();
        }
    }
}

/// A command as another partition sends it: no request.
fn internal(mut r: Record) -> Record {
    r.request_id = -1;
    r.request_stream_id = -1;
    r
}

fn latest_version(h: &Harness, process_id: &str) -> Option<i32> {
    h.entries(Ks::ProcessLatest)
        .into_iter()
        .find(|(k, _)| k == process_id.as_bytes())
        .map(|(_, v)| {
            zest_protocol::codec::decode::<zest_engine::types::LatestVersion>(&v)
                .unwrap()
                .version
        })
}

fn count(batches: &[(u32, Batch)], p: u32, vt: ValueType, intent: Intent) -> usize {
    batches
        .iter()
        .filter(|(q, _)| *q == p)
        .map(|(_, b)| b.count(vt, intent))
        .sum()
}

#[test]
fn a_deployment_reaches_every_partition_with_the_same_keys() {
    let mut ps = Partitions::new(3);
    let b = ps.run(1, |h| h.deploy("one_task.bpmn", ONE_TASK));
    let key = match &b.accepted().value {
        RecordValue::DeploymentResponse(d) => d.processes_metadata[0].process_definition_key,
        _ => unreachable!(),
    };
    assert_eq!(b.count(ValueType::CommandDistribution, Intent::Started), 1);
    assert_eq!(
        b.count(ValueType::CommandDistribution, Intent::Distributing),
        2
    );
    assert_eq!(
        ps.network.len(),
        2,
        "one DEPLOYMENT CREATE for each other partition"
    );
    let delivered = ps.deliver_all();
    for p in [2, 3] {
        let created = delivered
            .iter()
            .filter(|(q, _)| *q == p)
            .flat_map(|(_, b)| b.find(ValueType::Process, Intent::Created))
            .map(|r| r.key)
            .collect::<Vec<_>>();
        assert_eq!(
            created,
            vec![key],
            "partition {p} holds the version under its key"
        );
        assert_eq!(
            count(&delivered, p, ValueType::Deployment, Intent::Created),
            1
        );
        assert_eq!(latest_version(ps.on(p), "benchmark"), Some(1));
    }
    assert_eq!(
        count(
            &delivered,
            1,
            ValueType::CommandDistribution,
            Intent::Acknowledged
        ),
        2
    );
    assert_eq!(
        count(
            &delivered,
            1,
            ValueType::CommandDistribution,
            Intent::Finished
        ),
        1
    );
    assert_eq!(
        ps.on(1).count(Ks::Distributions),
        0,
        "nothing waits any more"
    );
    // an instance on partition 2 runs the process, with partition 2's keys
    let pik = ps.run(2, |h| h.create("benchmark", "{}")).accepted().key;
    assert_eq!(partition_of_key(pik), 2);
    let (job, _) = ps.on(2).activate_one("benchmark-task");
    ps.run(2, |h| h.complete(job, "{}")).accepted();
    ps.settle();
}

#[test]
fn a_distribution_sent_again_is_acknowledged_and_not_processed_twice() {
    let mut ps = Partitions::new(2);
    ps.run(1, |h| h.deploy("one_task.bpmn", ONE_TASK))
        .accepted();
    let (target, command) = ps.network.front().cloned().unwrap();
    assert_eq!(target, 2);
    // the network repeats it
    ps.network.push_back((target, command));
    let delivered = ps.deliver_all();
    assert_eq!(count(&delivered, 2, ValueType::Process, Intent::Created), 1);
    assert_eq!(
        count(&delivered, 2, ValueType::Deployment, Intent::Created),
        1
    );
    assert_eq!(
        count(
            &delivered,
            1,
            ValueType::CommandDistribution,
            Intent::Acknowledged
        ),
        1
    );
    // the second acknowledgement finds nothing waiting
    let rejected: Vec<_> = delivered
        .iter()
        .filter(|(p, _)| *p == 1)
        .filter_map(|(_, b)| {
            b.records
                .iter()
                .find(|r| r.rejection_type == RejectionType::NotFound)
                .map(|r| r.intent)
        })
        .collect();
    assert_eq!(rejected, vec![Intent::Acknowledge]);
    ps.settle();
}

#[test]
fn a_lost_distribution_is_sent_again_and_later_ones_wait_for_it() {
    let mut ps = Partitions::new(2);
    ps.run(1, |h| h.deploy("one_task.bpmn", ONE_TASK))
        .accepted();
    // lost on the way to partition 2
    ps.network.clear();
    let v2 = ONE_TASK.replace(r#"name="end""#, r#"name="end v2""#);
    assert_ne!(v2, ONE_TASK);
    let b = ps.run(1, |h| h.deploy("one_task.bpmn", &v2));
    b.accepted();
    assert_eq!(
        b.count(ValueType::CommandDistribution, Intent::Distributing),
        1
    );
    assert!(
        ps.network.is_empty(),
        "version 2 waits until partition 2 acknowledged version 1"
    );
    assert_eq!(latest_version(ps.on(2), "benchmark"), None);
    ps.redistribute();
    let delivered = ps.deliver_all();
    assert_eq!(count(&delivered, 2, ValueType::Process, Intent::Created), 2);
    assert_eq!(latest_version(ps.on(2), "benchmark"), Some(2));
    assert_eq!(ps.on(1).count(Ks::Distributions), 0);
    // sending again when nothing waits sends nothing
    ps.redistribute();
    assert!(ps.network.is_empty());
    ps.settle();
}

/// start -> catch (message `paid`, key `=orderId`) -> end, and a process started by `order`.
const MESSAGES: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="defs" targetNamespace="http://bpmn.io/schema/bpmn">
  <bpmn:process id="pay" isExecutable="true">
    <bpmn:startEvent id="start" />
    <bpmn:intermediateCatchEvent id="wait"><bpmn:messageEventDefinition messageRef="m" /></bpmn:intermediateCatchEvent>
    <bpmn:endEvent id="end" />
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="wait" />
    <bpmn:sequenceFlow id="f2" sourceRef="wait" targetRef="end" />
  </bpmn:process>
  <bpmn:process id="ordered" isExecutable="true">
    <bpmn:startEvent id="s"><bpmn:messageEventDefinition messageRef="o" /></bpmn:startEvent>
    <bpmn:endEvent id="e" />
    <bpmn:sequenceFlow id="g1" sourceRef="s" targetRef="e" />
  </bpmn:process>
  <bpmn:message id="m" name="paid"><bpmn:extensionElements><zeebe:subscription correlationKey="=orderId" /></bpmn:extensionElements></bpmn:message>
  <bpmn:message id="o" name="order" />
</bpmn:definitions>
"#;

#[test]
fn a_message_meets_its_subscription_on_the_partition_of_its_correlation_key() {
    let mut ps = Partitions::new(3);
    ps.run(1, |h| h.deploy("messages.bpmn", MESSAGES))
        .accepted();
    ps.deliver_all();
    // Zeebe's hash: "über" belongs to partition 3
    assert_eq!(partition_for_correlation_key("über", 3), 3);
    let pik = ps
        .run(2, |h| h.create("pay", r#"{"orderId":"über"}"#))
        .accepted()
        .key;
    // MESSAGE_SUBSCRIPTION CREATE goes to partition 3, PROCESS_MESSAGE_SUBSCRIPTION CREATE back
    let opened = ps.deliver_all();
    assert_eq!(
        count(&opened, 3, ValueType::MessageSubscription, Intent::Created),
        1
    );
    assert_eq!(
        count(
            &opened,
            2,
            ValueType::ProcessMessageSubscription,
            Intent::Created
        ),
        1
    );
    let b = ps.run(3, |h| h.publish("paid", "über", 0, "", r#"{"amount":7}"#));
    b.accepted();
    assert_eq!(
        b.count(ValueType::MessageSubscription, Intent::Correlating),
        1
    );
    let correlated = ps.deliver_all();
    assert_eq!(
        count(
            &correlated,
            2,
            ValueType::ProcessMessageSubscription,
            Intent::Correlated
        ),
        1
    );
    assert_eq!(
        count(
            &correlated,
            3,
            ValueType::MessageSubscription,
            Intent::Correlated
        ),
        1
    );
    let completed = correlated
        .iter()
        .filter(|(p, _)| *p == 2)
        .flat_map(|(_, b)| b.find(ValueType::ProcessInstance, Intent::ElementCompleted))
        .any(|r| r.key == pik);
    assert!(
        completed,
        "the instance on partition 2 took the message and completed"
    );
    assert_eq!(
        ps.on(2).variables(pik).get("amount"),
        None,
        "gone with the instance"
    );
    // a message start event listens on every partition: the message's partition starts it
    let b = ps.run(3, |h| h.publish("order", "über", 0, "", "{}"));
    assert_eq!(
        b.count(ValueType::MessageStartEventSubscription, Intent::Correlated),
        1
    );
    for p in 1..=3 {
        ps.on(p).assert_no_runtime_state();
    }
    ps.settle();
}

/// A task that a signal `stop` interrupts, and a process that the signal `go` starts; a timer
/// start event that fires once a day.
const SIGNALS: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="defs" targetNamespace="http://bpmn.io/schema/bpmn">
  <bpmn:process id="waits" isExecutable="true">
    <bpmn:startEvent id="start" />
    <bpmn:intermediateCatchEvent id="wait"><bpmn:signalEventDefinition signalRef="stop" /></bpmn:intermediateCatchEvent>
    <bpmn:endEvent id="end" />
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="wait" />
    <bpmn:sequenceFlow id="f2" sourceRef="wait" targetRef="end" />
  </bpmn:process>
  <bpmn:process id="started" isExecutable="true">
    <bpmn:startEvent id="s"><bpmn:signalEventDefinition signalRef="go" /></bpmn:startEvent>
    <bpmn:endEvent id="e" />
    <bpmn:sequenceFlow id="g1" sourceRef="s" targetRef="e" />
  </bpmn:process>
  <bpmn:process id="daily" isExecutable="true">
    <bpmn:startEvent id="t"><bpmn:timerEventDefinition><bpmn:timeCycle>R/P1D</bpmn:timeCycle></bpmn:timerEventDefinition></bpmn:startEvent>
    <bpmn:endEvent id="te" />
    <bpmn:sequenceFlow id="t1" sourceRef="t" targetRef="te" />
  </bpmn:process>
  <bpmn:signal id="stop" name="stop" />
  <bpmn:signal id="go" name="go" />
</bpmn:definitions>
"#;

#[test]
fn a_signal_reaches_every_partition_and_a_start_event_fires_once() {
    let mut ps = Partitions::new(3);
    let b = ps.run(1, |h| h.deploy("signals.bpmn", SIGNALS));
    b.accepted();
    assert_eq!(b.count(ValueType::Timer, Intent::Created), 1);
    let delivered = ps.deliver_all();
    for p in [2, 3] {
        assert_eq!(count(&delivered, p, ValueType::Process, Intent::Created), 3);
        assert_eq!(
            count(&delivered, p, ValueType::Timer, Intent::Created),
            0,
            "timers run on partition 1"
        );
        assert_eq!(ps.on(p).count(Ks::Timers), 0);
    }
    let waiting: Vec<i64> = (1..=3)
        .map(|p| ps.run(p, |h| h.create("waits", "{}")).accepted().key)
        .collect();
    let b = ps.run(1, |h| h.broadcast("stop", r#"{"why":"done"}"#));
    let signal_key = b.accepted().key;
    assert_eq!(
        b.count(ValueType::CommandDistribution, Intent::Distributing),
        2
    );
    let delivered = ps.deliver_all();
    for p in [2, 3] {
        let broadcasted = delivered
            .iter()
            .filter(|(q, _)| *q == p)
            .flat_map(|(_, b)| b.find(ValueType::Signal, Intent::Broadcasted))
            .map(|r| r.key)
            .collect::<Vec<_>>();
        assert_eq!(
            broadcasted,
            vec![signal_key],
            "partition {p} got the broadcast once"
        );
    }
    for (p, pik) in (1..=3).zip(&waiting) {
        assert!(
            ps.on(p).element_instance(*pik).is_none(),
            "the instance on partition {p} took the signal and completed"
        );
    }
    // the signal start event: one instance, on partition 1
    let b = ps.run(1, |h| h.broadcast("go", "{}"));
    let mut started = b.count(ValueType::ProcessEvent, Intent::Triggering);
    for (_, b) in ps.deliver_all() {
        started += b.count(ValueType::ProcessEvent, Intent::Triggering);
    }
    assert_eq!(started, 1);
    ps.settle();
}

impl Partitions {
    /// What the broker's scheduler does on partition `p`: send the message subscription
    /// commands that wait for an answer again.
    fn resend_subscription_commands(&mut self, p: u32) {
        let h = self.on(p);
        let later = h.now + 1;
        let commands =
            zest_engine::queries::subscription_commands_to_resend(&h.state, p, later, 100);
        for (target, intent, value) in commands {
            self.network
                .push_back((target, zest_engine::new_command(-1, intent, value, -1, -1)));
        }
    }
}

#[test]
fn lost_subscription_commands_are_sent_again() {
    let mut ps = Partitions::new(3);
    ps.run(1, |h| h.deploy("messages.bpmn", MESSAGES))
        .accepted();
    ps.deliver_all();
    // the open (MESSAGE_SUBSCRIPTION CREATE to partition 3) is lost
    let pik = ps
        .run(2, |h| h.create("pay", r#"{"orderId":"über"}"#))
        .accepted()
        .key;
    assert_eq!(ps.network.len(), 1);
    ps.network.clear();
    ps.run(3, |h| h.publish("paid", "über", 60_000, "", "{}"))
        .accepted();
    assert!(
        ps.network.is_empty(),
        "no subscription on partition 3: the message waits"
    );
    assert_eq!(ps.on(2).count(Ks::SubscriptionCommandsInFlight), 1);
    // nothing to send again on the message partition
    ps.resend_subscription_commands(3);
    assert!(ps.network.is_empty());
    ps.resend_subscription_commands(2);
    // sent again twice (a resend that crosses the first answer): one subscription
    let again = ps.network.front().cloned().unwrap();
    ps.network.push_back(again);
    // the subscription opens, takes the buffered message, and the correlation is lost too
    let (p, b) = ps.deliver_one().unwrap();
    assert_eq!(
        (
            p,
            b.count(ValueType::MessageSubscription, Intent::Correlating)
        ),
        (3, 1)
    );
    let (p, b) = ps.deliver_one().unwrap();
    assert_eq!(p, 3);
    assert_eq!(
        b.records[1].rejection_type,
        RejectionType::InvalidState,
        "the second open finds the subscription open"
    );
    ps.network.clear();
    assert_eq!(ps.on(3).count(Ks::SubscriptionCommandsInFlight), 1);
    ps.resend_subscription_commands(3);
    let delivered = ps.deliver_all();
    assert!(
        delivered.iter().any(|(p, b)| *p == 2
            && b.find(ValueType::ProcessInstance, Intent::ElementCompleted)
                .iter()
                .any(|r| r.key == pik)),
        "the instance took the message"
    );
    // the message stays buffered until its time to live is over
    ps.on(3).advance(60_001);
    ps.on(3).run_scheduler();
    for p in 1..=3 {
        assert_eq!(
            ps.on(p).count(Ks::SubscriptionCommandsInFlight),
            0,
            "partition {p}"
        );
        ps.on(p).assert_no_runtime_state();
    }
    ps.settle();
}

#[test]
fn a_lost_close_is_sent_again() {
    let mut ps = Partitions::new(3);
    ps.run(1, |h| h.deploy("messages.bpmn", MESSAGES))
        .accepted();
    ps.deliver_all();
    let pik = ps
        .run(2, |h| h.create("pay", r#"{"orderId":"über"}"#))
        .accepted()
        .key;
    ps.deliver_all();
    // cancelling closes the subscription; the close is lost
    ps.run(2, |h| h.cancel(pik)).accepted();
    assert_eq!(ps.network.len(), 1);
    ps.network.clear();
    assert_eq!(ps.on(3).count(Ks::MessageSubscriptions), 1);
    ps.resend_subscription_commands(2);
    let delivered = ps.deliver_all();
    assert_eq!(
        count(
            &delivered,
            3,
            ValueType::MessageSubscription,
            Intent::Deleted
        ),
        1
    );
    assert_eq!(
        count(
            &delivered,
            2,
            ValueType::ProcessMessageSubscription,
            Intent::Deleted
        ),
        1
    );
    for p in 1..=3 {
        assert_eq!(ps.on(p).count(Ks::SubscriptionCommandsInFlight), 0);
        ps.on(p).assert_no_runtime_state();
    }
    ps.settle();
}

/// The key of the process version that a deployment on partition 1 created, once every
/// partition has it.
fn deploy_everywhere(ps: &mut Partitions, xml: &str) -> i64 {
    let b = ps.run(1, |h| h.deploy("one_task.bpmn", xml));
    let key = match &b.accepted().value {
        RecordValue::DeploymentResponse(d) => d.processes_metadata[0].process_definition_key,
        _ => unreachable!(),
    };
    ps.deliver_all();
    key
}

#[test]
fn a_resource_deletion_reaches_every_partition() {
    let mut ps = Partitions::new(3);
    let key = deploy_everywhere(&mut ps, ONE_TASK);
    let b = ps.run(1, |h| h.delete_resource(key));
    b.accepted();
    assert_eq!(b.count(ValueType::Process, Intent::Deleted), 1);
    assert_eq!(
        b.count(ValueType::CommandDistribution, Intent::Distributing),
        2
    );
    // the network repeats one of them: processed once, acknowledged twice
    let first = ps.network.front().cloned().unwrap();
    ps.network.push_back(first);
    let delivered = ps.deliver_all();
    for p in [2, 3] {
        assert_eq!(count(&delivered, p, ValueType::Process, Intent::Deleted), 1);
        assert_eq!(
            count(&delivered, p, ValueType::ResourceDeletion, Intent::Deleted),
            1
        );
        assert_eq!(latest_version(ps.on(p), "benchmark"), None);
        let refused = ps.run(p, |h| h.create("benchmark", "{}"));
        assert!(refused
            .rejection(RejectionType::NotFound)
            .contains("none found"));
    }
    assert_eq!(
        count(
            &delivered,
            1,
            ValueType::CommandDistribution,
            Intent::Finished
        ),
        1
    );
    assert_eq!(ps.on(1).count(Ks::Distributions), 0);
    ps.settle();
}

#[test]
fn a_version_deleted_while_another_partition_runs_it_goes_with_its_last_instance() {
    let mut ps = Partitions::new(2);
    let v1 = deploy_everywhere(&mut ps, ONE_TASK);
    let v2_xml = ONE_TASK.replace(r#"name="end""#, r#"name="end v2""#);
    let v2 = deploy_everywhere(&mut ps, &v2_xml);
    // an instance of version 2 runs on partition 2; none on partition 1
    let pik = ps.run(2, |h| h.create("benchmark", "{}")).accepted().key;
    let b = ps.run(1, |h| h.delete_resource(v2));
    b.accepted();
    let delivered = ps.deliver_all();
    assert_eq!(
        count(&delivered, 2, ValueType::Process, Intent::Deleting),
        1
    );
    assert_eq!(
        count(&delivered, 2, ValueType::Process, Intent::Deleted),
        0,
        "version 2 waits for its instance on partition 2"
    );
    // new instances start from version 1; version 2 by its key starts nothing
    assert_eq!(latest_version(ps.on(2), "benchmark"), Some(1));
    let by_key = ps.run(2, |h| {
        let value =
            RecordValue::ProcessInstanceCreation(zest_protocol::ProcessInstanceCreationRecord {
                process_definition_key: v2,
                ..Default::default()
            });
        h.client(-1, Intent::Create, value)
    });
    by_key.rejection(RejectionType::NotFound);
    let other = ps.run(2, |h| h.create("benchmark", "{}")).accepted().key;
    let created_from = ps.on(2).element_instance(other).unwrap();
    assert_eq!(created_from.record.process_definition_key, v1);
    // the running instance of version 2 goes on to its end, and the version with it
    let jobs = ps.on(2).activate("benchmark-task", 10);
    let job = jobs
        .iter()
        .find(|(_, j)| j.process_instance_key == pik)
        .map(|(k, _)| *k)
        .unwrap();
    let done = ps.run(2, |h| h.complete(job, "{}"));
    done.accepted();
    assert_eq!(done.count(ValueType::Process, Intent::Deleted), 1);
    let other_job = jobs.iter().find(|(_, j)| j.process_instance_key == other);
    ps.run(2, |h| h.complete(other_job.unwrap().0, "{}"))
        .accepted();
    ps.settle();
    ps.on(2).assert_no_runtime_state();
}

#[test]
fn partition_1_refuses_to_delete_a_version_it_runs() {
    let mut ps = Partitions::new(2);
    let key = deploy_everywhere(&mut ps, ONE_TASK);
    ps.run(1, |h| h.create("benchmark", "{}")).accepted();
    let refused = ps.run(1, |h| h.delete_resource(key));
    assert!(refused
        .rejection(RejectionType::InvalidState)
        .contains("still running instances"));
    assert!(ps.network.is_empty(), "nothing is distributed");
    ps.settle();
}

#[test]
fn a_correlation_whose_answer_was_lost_is_confirmed_again_and_correlates_once() {
    let mut ps = Partitions::new(3);
    ps.run(1, |h| h.deploy("messages.bpmn", MESSAGES))
        .accepted();
    ps.deliver_all();
    // two instances on partition 2 wait for `paid` with the key of partition 3
    let first = ps
        .run(2, |h| h.create("pay", r#"{"orderId":"über"}"#))
        .accepted()
        .key;
    let second = ps
        .run(2, |h| h.create("pay", r#"{"orderId":"über"}"#))
        .accepted()
        .key;
    ps.deliver_all();
    ps.run(3, |h| h.publish("paid", "über", 60_000, "", "{}"))
        .accepted();
    // partition 2 correlates it to the first instance; its answer to partition 3 is lost
    let (p, b) = ps.deliver_one().unwrap();
    assert_eq!(p, 2);
    assert_eq!(
        b.count(ValueType::ProcessMessageSubscription, Intent::Correlated),
        1
    );
    let ended: Vec<i64> = b
        .find(ValueType::ProcessInstance, Intent::ElementCompleted)
        .iter()
        .map(|r| r.key)
        .collect();
    assert!(ended.contains(&first));
    ps.network.clear();
    // partition 3 sends the correlation again: partition 2 confirms it instead of rejecting
    ps.resend_subscription_commands(3);
    let delivered = ps.deliver_all();
    let confirmed = delivered
        .iter()
        .filter(|(p, _)| *p == 2)
        .flat_map(|(_, b)| b.records.iter())
        .any(|r| {
            r.rejection_type == RejectionType::InvalidState
                && r.rejection_reason.contains("correlated before")
        });
    assert!(confirmed, "{delivered:?}");
    assert_eq!(
        count(
            &delivered,
            3,
            ValueType::MessageSubscription,
            Intent::Correlated
        ),
        1
    );
    assert_eq!(
        count(
            &delivered,
            3,
            ValueType::MessageSubscription,
            Intent::Rejected
        ),
        0
    );
    assert!(
        !delivered.iter().any(|(_, b)| b
            .find(ValueType::ProcessInstance, Intent::ElementCompleted)
            .iter()
            .any(|r| r.key == second)),
        "the message correlated once: the second instance still waits"
    );
    assert!(ps.on(2).element_instance(second).is_some());
    // what partition 2 remembers goes after ten minutes, with later correlations
    ps.on(2).advance(10 * 60 * 1000 + 1);
    ps.run(3, |h| h.publish("paid", "über", 0, "", "{}"))
        .accepted();
    ps.deliver_all();
    let remembered = ps
        .on(2)
        .entries(Ks::CorrelatedMessages)
        .into_iter()
        .filter(|(k, _)| k[0] == b't')
        .count();
    assert_eq!(remembered, 1, "only the last correlation is remembered");
    ps.settle();
}
