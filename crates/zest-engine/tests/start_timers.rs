//! Timer start events: the timer is set when the version is deployed, each due time starts an
//! instance, a cycle repeats, and a new version replaces the timers of the previous one.

mod support;

use support::*;
use zest_engine::state::Ks;
use zest_protocol::{Intent, RecordValue, ValueType};

fn timer_process(timer: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d">
  <bpmn:process id="ticker" isExecutable="true">
    <bpmn:startEvent id="start"><bpmn:timerEventDefinition>{timer}</bpmn:timerEventDefinition></bpmn:startEvent>
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="task" />
    <bpmn:serviceTask id="task"><bpmn:extensionElements><zeebe:taskDefinition type="tick" /></bpmn:extensionElements></bpmn:serviceTask>
  </bpmn:process>
</bpmn:definitions>"#
    )
}

fn started(batches: &[Batch]) -> usize {
    batches
        .iter()
        .map(|b| b.count(ValueType::ProcessEvent, Intent::Triggering))
        .sum()
}

#[test]
fn an_endless_cycle_starts_an_instance_every_interval() {
    let mut h = Harness::new();
    h.deploy_ok(&timer_process("<bpmn:timeCycle>R/PT1M</bpmn:timeCycle>"));
    // nothing is due yet
    assert_eq!(started(&h.run_scheduler()), 0);
    for _ in 0..3 {
        h.advance(60_000);
        assert_eq!(started(&h.run_scheduler()), 1);
    }
    assert_eq!(h.activate("tick", 10).len(), 3);
    assert_eq!(h.count(Ks::Timers), 1, "the next timer is set");
    h.settle();
}

#[test]
fn a_new_version_replaces_the_timers_and_a_date_fires_once() {
    let mut h = Harness::new();
    let v1 = h.deploy_ok(&timer_process("<bpmn:timeCycle>R5/PT1M</bpmn:timeCycle>"));
    let b = h.deploy(
        "p.bpmn",
        &timer_process("<bpmn:timeDate>=\"2030-01-01T00:00:00Z\"</bpmn:timeDate>"),
    );
    b.accepted();
    let canceled = b.find(ValueType::Timer, Intent::Canceled);
    assert_eq!(canceled.len(), 1);
    let RecordValue::Timer(t) = &canceled[0].value else {
        unreachable!()
    };
    assert_eq!(t.process_definition_key, v1);
    let created = b.find(ValueType::Timer, Intent::Created);
    let RecordValue::Timer(t) = &created[0].value else {
        unreachable!()
    };
    assert_eq!(t.repetitions, 1);
    // an hour later nothing of version 1 fires
    h.advance(3_600_000);
    assert_eq!(started(&h.run_scheduler()), 0);
    // the date: one instance, of version 2, then no timer is left
    h.now = zest_model::time::parse_date_time("2030-01-01T00:00:01Z").unwrap();
    assert_eq!(started(&h.run_scheduler()), 1);
    assert_eq!(h.count(Ks::Timers), 0);
    let jobs = h.activate("tick", 10);
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0].1.process_definition_version, 2);
    h.settle();
}

#[test]
fn a_feel_timer_that_needs_variables_is_rejected_at_deployment() {
    let mut h = Harness::new();
    let b = h.deploy(
        "p.bpmn",
        &timer_process("<bpmn:timeDuration>=wait</bpmn:timeDuration>"),
    );
    let reason = b.rejection(zest_protocol::RejectionType::InvalidArgument);
    assert!(reason.contains("Element: start"), "{reason}");
    assert!(reason.contains("evaluated at deployment"), "{reason}");
}
