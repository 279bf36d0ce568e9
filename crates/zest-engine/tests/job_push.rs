//! Job push (Zeebe's BpmnJobActivationBehavior): with an open job stream of the job's type, a
//! job is activated in the batch that makes it activatable and pushed once that batch commits;
//! JOB YIELD gives a pushed job back when its stream cannot deliver it.

mod support;

use std::sync::{Arc, Mutex};

use serde_json::json;
use support::*;
use zest_engine::{JobStreams, SideEffect, StreamTarget};
use zest_protocol::{Intent, JobRecord, RecordValue, RejectionType, ValueType};

/// Streams for one job type with room for `room` jobs; records what it reserved.
struct FakeStreams {
    job_type: String,
    fetch: Vec<String>,
    room: Mutex<usize>,
    reserved: Mutex<Vec<i64>>,
}

impl FakeStreams {
    fn new(job_type: &str, room: usize, fetch: &[&str]) -> Arc<FakeStreams> {
        Arc::new(FakeStreams {
            job_type: job_type.into(),
            fetch: fetch.iter().map(|s| s.to_string()).collect(),
            room: Mutex::new(room),
            reserved: Mutex::new(Vec::new()),
        })
    }
    fn set_room(&self, room: usize) {
        *self.room.lock().unwrap() = room;
    }
}

impl JobStreams for FakeStreams {
    fn reserve(&self, job_key: i64, job: &JobRecord) -> Option<StreamTarget> {
        let mut room = self.room.lock().unwrap();
        if job.job_type != self.job_type || *room == 0 {
            return None;
        }
        *room -= 1;
        self.reserved.lock().unwrap().push(job_key);
        Some(StreamTarget {
            worker: "pushed-worker".into(),
            timeout: 60_000,
            fetch_variables: self.fetch.clone(),
        })
    }
}

fn pushed(batch: &Batch) -> Vec<(i64, JobRecord)> {
    batch
        .side_effects
        .iter()
        .filter_map(|e| match e {
            SideEffect::PushJob { job_key, job } => Some((*job_key, (**job).clone())),
            _ => None,
        })
        .collect()
}

fn jobs_available(batch: &Batch) -> bool {
    batch
        .side_effects
        .iter()
        .any(|e| matches!(e, SideEffect::JobsAvailable(t) if t == "work"))
}

fn harness(streams: Arc<FakeStreams>) -> Harness {
    let mut h = Harness::with_job_streams(streams);
    h.deploy_ok(&one_task("p", "task", "work", ""));
    h
}

#[test]
fn a_job_is_activated_in_the_batch_that_creates_it_and_pushed_with_its_variables() {
    let streams = FakeStreams::new("work", 8, &[]);
    let mut h = harness(streams.clone());
    let b = h.create("p", r#"{"a":1,"b":"x"}"#);
    let events = b.events();
    let created = events
        .iter()
        .position(|(vt, i, _)| *vt == ValueType::Job && *i == Intent::Created)
        .expect("JOB CREATED");
    // Zeebe's order: the activation follows the job's creation, before the task is ACTIVATED
    assert_eq!(events[created + 1].0, ValueType::JobBatch);
    assert_eq!(events[created + 1].1, Intent::Activated);
    assert_eq!(
        events[created + 2],
        (
            ValueType::ProcessInstance,
            Intent::ElementActivated,
            "task".into()
        )
    );
    let job_key = b.find(ValueType::Job, Intent::Created)[0].key;
    let activation = b.find(ValueType::JobBatch, Intent::Activated)[0];
    let RecordValue::JobBatch(logged) = &activation.value else {
        panic!("job batch expected")
    };
    assert_eq!(logged.job_keys, vec![job_key]);
    assert_eq!(logged.worker, "pushed-worker");
    assert_eq!(logged.jobs[0].deadline, h.now + 60_000);
    assert!(
        logged.jobs[0].variables.is_empty(),
        "variables are not logged"
    );
    assert_ne!(activation.key, job_key);

    let push = pushed(&b);
    assert_eq!(push.len(), 1);
    assert_eq!(push[0].0, job_key);
    assert_eq!(push[0].1.worker, "pushed-worker");
    let vars: serde_json::Value = serde_json::from_str(&push[0].1.variables).unwrap();
    assert_eq!(vars, json!({"a": 1, "b": "x"}));
    assert!(!jobs_available(&b), "a pushed job wakes no poller");
    assert_eq!(*streams.reserved.lock().unwrap(), vec![job_key]);

    // the job is the stream's: polling finds nothing, completing it completes the instance
    assert!(h.activate("work", 10).is_empty());
    let done = h.complete(job_key, r#"{"c":2}"#);
    done.accepted();
    assert_eq!(
        done.count(ValueType::ProcessInstance, Intent::ElementCompleted),
        3
    );
}

#[test]
fn a_stream_gets_only_the_variables_it_asked_for() {
    let mut h = harness(FakeStreams::new("work", 8, &["b"]));
    let b = h.create("p", r#"{"a":1,"b":"x"}"#);
    let vars: serde_json::Value = serde_json::from_str(&pushed(&b)[0].1.variables).unwrap();
    assert_eq!(vars, json!({"b": "x"}));
}

#[test]
fn without_room_in_a_stream_the_job_waits_for_workers() {
    let mut h = harness(FakeStreams::new("work", 0, &[]));
    let b = h.create("p", "{}");
    assert_eq!(b.count(ValueType::JobBatch, Intent::Activated), 0);
    assert!(pushed(&b).is_empty());
    assert!(jobs_available(&b));
    assert_eq!(h.activate("work", 10).len(), 1);
}

#[test]
fn a_yielded_job_becomes_activatable_at_once() {
    let streams = FakeStreams::new("work", 1, &[]);
    let mut h = harness(streams.clone());
    let b = h.create("p", "{}");
    let job_key = pushed(&b)[0].0;
    let y = h.internal(job_key, Intent::Yield, RecordValue::Job(Box::default()));
    assert_eq!(y.count(ValueType::Job, Intent::Yielded), 1);
    assert!(jobs_available(&y), "workers are told");
    assert!(pushed(&y).is_empty(), "a yielded job is not pushed again");
    let jobs = h.activate("work", 10);
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0].0, job_key);
    assert_eq!(jobs[0].1.worker, "test-worker");

    // only an activated job can be yielded
    h.complete(job_key, "{}").accepted();
    let again = h.client(job_key, Intent::Yield, RecordValue::Job(Box::default()));
    assert!(again
        .rejection(RejectionType::NotFound)
        .contains("Expected to yield job with key"));
}

#[test]
fn yielding_a_job_that_waits_for_workers_is_rejected() {
    let mut h = harness(FakeStreams::new("work", 0, &[]));
    let b = h.create("p", "{}");
    let job_key = b.find(ValueType::Job, Intent::Created)[0].key;
    let y = h.client(job_key, Intent::Yield, RecordValue::Job(Box::default()));
    assert_eq!(
        y.rejection(RejectionType::InvalidState),
        format!(
            "Expected to yield activated job with key '{job_key}', but it is in state 'ACTIVATABLE'"
        )
    );
}

#[test]
fn a_timed_out_job_is_pushed_to_a_stream_with_room() {
    let streams = FakeStreams::new("work", 0, &[]);
    let mut h = harness(streams.clone());
    h.create("p", "{}");
    let (job_key, _) = h.activate_with("work", 1, 1_000, &[]).remove(0);
    streams.set_room(1);
    h.advance(2_000);
    let batches = h.run_scheduler();
    let timed_out = batches
        .iter()
        .find(|b| b.count(ValueType::Job, Intent::TimedOut) == 1)
        .expect("TIMED_OUT");
    assert_eq!(timed_out.count(ValueType::JobBatch, Intent::Activated), 1);
    assert_eq!(pushed(timed_out)[0].0, job_key);
}

#[test]
fn a_failed_job_with_retries_left_is_pushed_again() {
    let streams = FakeStreams::new("work", 1, &[]);
    let mut h = harness(streams.clone());
    let b = h.create("p", "{}");
    let job_key = pushed(&b)[0].0;
    streams.set_room(1);
    let f = h.job_cmd(
        job_key,
        Intent::Fail,
        JobRecord {
            retries: 2,
            ..Default::default()
        },
    );
    f.accepted();
    assert_eq!(pushed(&f)[0].0, job_key);
    assert_eq!(pushed(&f)[0].1.retries, 2);
}
