//! Messages and signals through the REST API v2 of a real `zest start`: a published message
//! correlates to the instance waiting for it (whose awaited creation then answers), a
//! correlated message reaches the instance waiting now and answers its key (404 when none
//! waits), a broadcast signal moves an instance on; all answer their keys.

mod common;

use std::time::Duration;

use common::{activate_rest, deploy_rest, http, start};
use serde_json::json;

#[test]
fn a_published_message_correlates_and_a_broadcast_signal_is_caught() {
    let node = start("messages-rest");
    let rest = node.rest.clone();
    let receive = include_str!("../../../tests/compat/testdata/receive_message.bpmn")
        .replace("zest_proc", "rest_msg");
    deploy_rest(&rest, "receive.bpmn", receive.as_bytes());
    let awaited = {
        let rest = rest.clone();
        std::thread::spawn(move || {
            http(
                &rest,
                "POST",
                "/v2/process-instances",
                Some(
                    json!({"processDefinitionId": "rest_msg", "variables": {"orderId": "o-1"},
                            "awaitCompletion": true, "requestTimeout": 20_000}),
                ),
            )
        })
    };
    std::thread::sleep(Duration::from_millis(500));
    let (status, published) = http(
        &rest,
        "POST",
        "/v2/messages/publication",
        Some(
            json!({"name": "rest_msg-paid", "correlationKey": "o-1", "timeToLive": 10_000,
                    "variables": {"paid": 42}}),
        ),
    );
    assert_eq!(status, 200, "{published}");
    assert!(
        published["messageKey"]
            .as_str()
            .unwrap()
            .parse::<i64>()
            .unwrap()
            > 0
    );
    assert_eq!(published["tenantId"], "<default>");
    let (status, done) = awaited.join().unwrap();
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["variables"]["paid"], 42);

    // correlation: to the instance waiting now, answering its key; nothing waiting is a 404
    let (status, created) = http(
        &rest,
        "POST",
        "/v2/process-instances",
        Some(json!({"processDefinitionId": "rest_msg", "variables": {"orderId": "o-2"}})),
    );
    assert_eq!(status, 200, "{created}");
    let correlate = |key: &str| {
        http(
            &rest,
            "POST",
            "/v2/messages/correlation",
            Some(json!({"name": "rest_msg-paid", "correlationKey": key, "variables": {"paid": 7}})),
        )
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let correlated = loop {
        // the instance's subscription opens on the message partition just after its creation
        let (status, answer) = correlate("o-2");
        if status == 200 {
            break answer;
        }
        assert_eq!(status, 404, "{answer}");
        assert!(
            std::time::Instant::now() < deadline,
            "never correlated: {answer}"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(
        correlated["processInstanceKey"],
        created["processInstanceKey"]
    );
    assert!(
        correlated["messageKey"]
            .as_str()
            .unwrap()
            .parse::<i64>()
            .unwrap()
            > 0
    );
    assert_eq!(correlated["tenantId"], "<default>");
    let (status, problem) = correlate("o-2");
    assert_eq!(
        (status, problem["title"].as_str()),
        (404, Some("NOT_FOUND")),
        "{problem}"
    );
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("'rest_msg-paid'"),
        "{problem}"
    );
    // nothing buffered: an instance that starts waiting later does not get it
    let (status, problem) = correlate("o-3");
    assert_eq!(status, 404, "{problem}");

    let signal = include_str!("../../../tests/compat/testdata/signal_catch.bpmn")
        .replace("zest_proc", "rest_sig");
    deploy_rest(&rest, "signal.bpmn", signal.as_bytes());
    let (status, created) = http(
        &rest,
        "POST",
        "/v2/process-instances",
        Some(json!({"processDefinitionId": "rest_sig"})),
    );
    assert_eq!(status, 200, "{created}");
    std::thread::sleep(Duration::from_millis(200));
    let (status, sent) = http(
        &rest,
        "POST",
        "/v2/signals/broadcast",
        Some(json!({"signalName": "rest_sig-go", "variables": {"via": "signal"}})),
    );
    assert_eq!(status, 200, "{sent}");
    assert!(sent["signalKey"].as_str().unwrap().parse::<i64>().unwrap() > 0);
    let job = activate_rest(&rest, "rest_sig-after").expect("the signal moved the instance on");
    assert_eq!(job["processInstanceKey"], created["processInstanceKey"]);
    assert_eq!(job["variables"]["via"], "signal");

    // bad input
    let (status, problem) = http(
        &rest,
        "POST",
        "/v2/messages/publication",
        Some(json!({"correlationKey": "k"})),
    );
    assert_eq!(status, 400, "{problem}");
    assert!(
        problem["detail"].as_str().unwrap().contains("name"),
        "{problem}"
    );
    let (status, problem) = http(
        &rest,
        "POST",
        "/v2/signals/broadcast",
        Some(json!({"signalName": "s", "tenantId": "other"})),
    );
    assert_eq!(status, 400, "{problem}");
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("multi-tenancy"),
        "{problem}"
    );
}
