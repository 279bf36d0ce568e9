//! Camunda's clock API through the REST API v2 of a real `zest start`, as Camunda Process
//! Test uses it: with the clock pinned, an instance waits at an hour's timer until the clock is
//! pinned past it, then completes; the clock is reset; a pin without a timestamp is a 400. And
//! Zeebe's `/actuator/clock` on the management port, which Camunda Process Test 8.8 calls.

mod common;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::{deploy_rest, http, start};
use serde_json::json;

#[test]
fn a_timer_falls_due_when_the_pinned_clock_passes_it() {
    let node = start("clock-rest");
    let rest = node.rest.clone();
    let timer = include_str!("../../../tests/compat/testdata/timer.bpmn")
        .replace("zest_proc", "rest_clock")
        .replace("PT1S", "PT1H");
    deploy_rest(&rest, "timer.bpmn", timer.as_bytes());
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let (status, body) = http(&rest, "PUT", "/v2/clock", Some(json!({"timestamp": now})));
    assert_eq!(status, 204, "{body}");
    let awaited = {
        let rest = rest.clone();
        std::thread::spawn(move || {
            http(
                &rest,
                "POST",
                "/v2/process-instances",
                Some(
                    json!({"processDefinitionId": "rest_clock", "awaitCompletion": true,
                            "requestTimeout": 30_000}),
                ),
            )
        })
    };
    std::thread::sleep(Duration::from_millis(1_500));
    assert!(!awaited.is_finished(), "the instance waits for its timer");
    let later = now + 3_600_000 + 1_000;
    let (status, body) = http(&rest, "PUT", "/v2/clock", Some(json!({"timestamp": later})));
    assert_eq!(status, 204, "{body}");
    let (status, done) = awaited.join().unwrap();
    assert_eq!(status, 200, "the timer fired on the pinned clock: {done}");

    let (status, body) = http(&rest, "POST", "/v2/clock/reset", None);
    assert_eq!(status, 204, "{body}");
    let (status, problem) = http(&rest, "PUT", "/v2/clock", Some(json!({})));
    assert_eq!(status, 400, "{problem}");
    assert!(
        problem["detail"].as_str().unwrap().contains("timestamp"),
        "{problem}"
    );
}

/// Zeebe's `/actuator/clock` on the management port, as Camunda Process Test 8.8 calls it
/// (`CamundaProcessTestContext.increaseTime`): read, add an offset, pin, reset; each answers
/// the clock as it then reads; a body without the field is a 400.
#[test]
fn the_actuator_clock_reads_adds_pins_and_resets() {
    let node = start("clock-actuator");
    let mgmt = node.management.clone();
    let (status, before) = http(&mgmt, "GET", "/actuator/clock", None);
    assert_eq!(status, 200, "{before}");
    let now = before["epochMilli"].as_i64().unwrap();
    assert!(
        before["instant"].as_str().unwrap().ends_with('Z'),
        "{before}"
    );

    let (status, added) = http(
        &mgmt,
        "POST",
        "/actuator/clock/add",
        Some(json!({"offsetMilli": 86_400_000})),
    );
    assert_eq!(status, 200, "{added}");
    let later = added["epochMilli"].as_i64().unwrap();
    assert!(
        later >= now + 86_400_000 && later < now + 86_400_000 + 60_000,
        "{added}"
    );
    std::thread::sleep(Duration::from_millis(20));
    let (_, read) = http(&mgmt, "GET", "/actuator/clock", None);
    assert_eq!(
        read["epochMilli"].as_i64(),
        Some(later),
        "the clock stays where it was put"
    );

    let (status, pinned) = http(
        &mgmt,
        "POST",
        "/actuator/clock/pin",
        Some(json!({"epochMilli": 1_700_000_000_000i64})),
    );
    assert_eq!(status, 200, "{pinned}");
    assert_eq!(pinned["instant"], "2023-11-14T22:13:20.000Z", "{pinned}");

    let (status, reset) = http(&mgmt, "DELETE", "/actuator/clock", None);
    assert_eq!(status, 200, "{reset}");
    let wall = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    assert!(
        (reset["epochMilli"].as_i64().unwrap() - wall).abs() < 60_000,
        "{reset}"
    );

    let (status, problem) = http(&mgmt, "POST", "/actuator/clock/add", Some(json!({})));
    assert_eq!(status, 400, "{problem}");
    assert!(
        problem["message"].as_str().unwrap().contains("offsetMilli"),
        "{problem}"
    );
}
