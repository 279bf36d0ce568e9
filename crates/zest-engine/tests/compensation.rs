//! Compensation: what users see besides the record order (which tests/anchor.rs checks against
//! Zeebe in the `compensation`, `compensation_nested` and `compensation_esp` scenarios).

mod support;

use support::*;
use zest_protocol::{Intent, ValueType};

/// start -> book (compensable: cancel_book) -> [throw] -> end, or with `throw_first` the throw
/// event before book.
fn booking(throw_first: bool) -> String {
    let order = if throw_first {
        ["start", "throw", "book", "end"]
    } else {
        ["start", "book", "throw", "end"]
    };
    let body = [
        start_event("start"),
        service_task("book", "book", ""),
        r#"<bpmn:boundaryEvent id="undo_book" attachedToRef="book"><bpmn:compensateEventDefinition /></bpmn:boundaryEvent>"#.to_string(),
        r#"<bpmn:serviceTask id="cancel_book" isForCompensation="true"><bpmn:extensionElements><zeebe:taskDefinition type="cancel-book" /></bpmn:extensionElements></bpmn:serviceTask>"#.to_string(),
        r#"<bpmn:intermediateThrowEvent id="throw"><bpmn:compensateEventDefinition /></bpmn:intermediateThrowEvent>"#.to_string(),
        end_event("end"),
        flow("f1", order[0], order[1]),
        flow("f2", order[1], order[2]),
        flow("f3", order[2], order[3]),
        r#"<bpmn:association id="a" sourceRef="undo_book" targetRef="cancel_book" />"#.to_string(),
    ];
    process("booking", &body)
}

fn count(h: &Harness, intent: Intent) -> usize {
    h.log
        .iter()
        .filter(|r| {
            r.value.value_type() == ValueType::CompensationSubscription && r.intent == intent
        })
        .count()
}

#[test]
fn a_throw_event_with_nothing_completed_to_compensate_passes_on() {
    let mut h = Harness::new();
    h.deploy_ok(&booking(true));
    let pik = h.create_ok("booking", "");
    // the throw event passed: book waits for its job
    let (book, _) = h.activate_one("book");
    assert_eq!(count(&h, Intent::Triggered), 0);
    h.complete(book, "").accepted();
    h.settle();
    assert!(h.element_instance(pik).is_none(), "the instance completed");
    // book became compensable, and its subscription went with the instance
    assert_eq!(count(&h, Intent::Created), 1);
    assert_eq!(count(&h, Intent::Deleted), 1);
    assert!(h.activate("cancel-book", 10).is_empty());
    h.assert_no_runtime_state();
}

#[test]
fn a_failing_handler_raises_an_incident_and_the_throw_event_waits_for_it() {
    let mut h = Harness::new();
    h.deploy_ok(&booking(false));
    let pik = h.create_ok("booking", r#"{"bookingId":"b-7"}"#);
    let (book, _) = h.activate_one("book");
    h.complete(book, "").accepted();
    let (undo, job) = h.activate_one("cancel-book");
    // the handler sees the instance's variables
    assert_eq!(job.variables, r#"{"bookingId":"b-7"}"#);
    h.fail(undo, 0, "booking service down", 0).accepted();
    let (incident, _) = h.incidents()[0].clone();
    assert_eq!(h.instance_of("throw").state, Intent::ElementActivated);
    h.update_retries(undo, 1).accepted();
    h.resolve(incident).accepted();
    let (undo, _) = h.activate_one("cancel-book");
    h.complete(undo, "").accepted();
    h.settle();
    assert_eq!(count(&h, Intent::Completed), 1);
    assert!(h.element_instance(pik).is_none(), "the instance completed");
    h.assert_no_runtime_state();
}
