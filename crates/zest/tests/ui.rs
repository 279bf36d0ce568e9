//! The web UI on the REST port of a real `zest start` (`docs/design/ui.md`): `/` leads to
//! `/operate`; `/operate`, `/tasklist` and deep links under them answer the app's page; its
//! files answer with their content types and immutable caching, gzipped for a client that takes
//! it, 304 when the client holds them;
//! a missing file is a 404, never the app; the REST API still answers beside it. The cluster
//! page's figures (`/operate/api/figures`) carry the values `/metrics` shows, and move.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;

use common::{activate_rest, deploy_rest, http, metric, service_task_bpmn, start};

/// One HTTP/1.0 GET with extra header lines: (status, headers lower-cased, body).
fn get(addr: &str, path: &str, headers: &str) -> (u16, String, Vec<u8>) {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(s, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n{headers}\r\n").unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    let split = out
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a head");
    let head = String::from_utf8_lossy(&out[..split]).to_lowercase();
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, head, out[split + 4..].to_vec())
}

fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}: ")))
        .map(str::trim)
}

/// The app's page: its script's path (under /ui/<build>/) and its ETag.
fn app_page(addr: &str, path: &str) -> (String, String) {
    let (status, head, body) = get(addr, path, "");
    assert_eq!(status, 200, "{path}: {head}");
    assert_eq!(
        header(&head, "content-type"),
        Some("text/html; charset=utf-8")
    );
    assert_eq!(header(&head, "cache-control"), Some("no-cache"));
    let csp = header(&head, "content-security-policy").unwrap_or_default();
    assert!(csp.contains("default-src 'self'"), "{path}: {csp}");
    let html = String::from_utf8(body).unwrap();
    let script = html
        .split("<script type=\"module\" src=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap_or_else(|| panic!("{path}: no module script in {html}"))
        .to_string();
    (script, header(&head, "etag").unwrap().to_string())
}

#[test]
fn the_ui_is_served_at_camundas_paths_with_its_files() {
    let node = start("ui");
    let rest = node.rest.as_str();

    let (status, head, _) = get(rest, "/", "");
    assert_eq!(status, 302, "{head}");
    assert_eq!(header(&head, "location"), Some("/operate"));

    let (script, etag) = app_page(rest, "/operate");
    assert!(
        script.starts_with("/ui/") && script.ends_with("/app/main.js"),
        "{script}"
    );
    for deep in [
        "/operate/",
        "/operate/processes/2251799813685249",
        "/tasklist",
        "/tasklist/some/deep/link?x=1",
    ] {
        assert_eq!(
            app_page(rest, deep),
            (script.clone(), etag.clone()),
            "{deep}"
        );
    }
    let (status, _, _) = get(rest, "/operate", &format!("If-None-Match: {etag}\r\n"));
    assert_eq!(status, 304);

    // the app's module and a vendored bundle: their types, cached for good
    let (status, head, body) = get(rest, &script, "");
    assert_eq!(status, 200, "{head}");
    assert_eq!(
        header(&head, "content-type"),
        Some("text/javascript; charset=utf-8")
    );
    assert_eq!(
        header(&head, "cache-control"),
        Some("public, max-age=31536000, immutable")
    );
    assert!(String::from_utf8_lossy(&body).contains("render("));
    assert_eq!(header(&head, "content-encoding"), None);
    // gzipped for a client that takes it, under an ETag of its own
    let (status, head, zipped) = get(rest, &script, "Accept-Encoding: gzip, br\r\n");
    assert_eq!(status, 200);
    assert_eq!(header(&head, "content-encoding"), Some("gzip"));
    assert_eq!(header(&head, "vary"), Some("accept-encoding"));
    assert_eq!(&zipped[..2], &[0x1f, 0x8b]);
    assert!(zipped.len() < body.len());
    let zipped_etag = header(&head, "etag").unwrap().to_string();
    let (status, head, _) = get(
        rest,
        &script,
        &format!("Accept-Encoding: gzip\r\nIf-None-Match: {zipped_etag}\r\n"),
    );
    assert_eq!(status, 304, "{head}");
    let build = script.trim_end_matches("app/main.js");
    let font = format!("{build}vendor/bpmn-js/dist/assets/bpmn-font/font/bpmn.woff2");
    let (status, head, body) = get(rest, &font, "");
    assert_eq!(status, 200, "{font}: {head}");
    assert_eq!(header(&head, "content-type"), Some("font/woff2"));
    assert_eq!(&body[..4], b"wOF2");
    let asset_etag = header(&head, "etag").unwrap().to_string();
    let (status, _, body) = get(rest, &font, &format!("If-None-Match: {asset_etag}\r\n"));
    assert_eq!((status, body.len()), (304, 0));

    // a missing file, or one of another build, is a 404, not the app
    for missing in [
        format!("{build}app/missing.js"),
        "/ui/000000000000/app/main.js".to_string(),
        "/ui/".to_string(),
    ] {
        let (status, head, _) = get(rest, &missing, "");
        assert_eq!(status, 404, "{missing}: {head}");
    }

    // the REST API answers beside the UI, its 404 still a problem
    let (status, head, _) = get(rest, "/v2/topology", "");
    assert_eq!(status, 200, "{head}");
    let (status, head, _) = get(rest, "/v2/no-such-thing", "");
    assert_eq!(status, 404);
    assert_eq!(
        header(&head, "content-type"),
        Some("application/problem+json")
    );
}

/// The figures once `done` holds of them (counters move when the commands are processed;
/// up to 10 s).
fn figures_when(rest: &str, done: impl Fn(&serde_json::Value) -> bool) -> serde_json::Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let (status, head, body) = get(rest, "/operate/api/figures", "");
        assert_eq!(status, 200, "{head}");
        assert_eq!(header(&head, "content-type"), Some("application/json"));
        assert_eq!(header(&head, "cache-control"), Some("no-store"));
        let figures: serde_json::Value = serde_json::from_slice(&body).unwrap();
        if done(&figures) {
            return figures;
        }
        assert!(std::time::Instant::now() < deadline, "{figures}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn the_cluster_pages_figures_are_the_nodes_metrics_and_move() {
    let node = start("ui-figures");
    let rest = node.rest.as_str();
    // the export figures come once the exporter has measured its partition's log (a moment
    // after the node is ready)
    let before = figures_when(rest, |f| {
        f["partitions"][0]["export"]["recordsBehind"].is_u64()
    });
    assert_eq!(before["nodeId"], 0, "{before}");
    assert!(before["time"].as_u64().unwrap() > 0);
    let p = &before["partitions"][0];
    assert_eq!(
        before["partitions"].as_array().unwrap().len(),
        1,
        "{before}"
    );
    assert_eq!(
        (p["partitionId"].as_u64(), p["role"].as_str()),
        (Some(1), Some("leader"))
    );
    assert_eq!(p["processInstances"]["activated"], 0, "{p}");
    assert!(p["export"]["recordsBehind"].is_u64(), "history is on: {p}");
    let memory = &before["memory"];
    assert!(memory["budgetBytes"].as_u64().unwrap() > 0, "{memory}");
    assert!(memory["residentBytes"].as_u64().unwrap() > 0, "{memory}");
    assert!(memory["parts"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["part"] == "block_cache"));

    deploy_rest(
        rest,
        "figures.bpmn",
        &service_task_bpmn("figures", "figures-work"),
    );
    for _ in 0..3 {
        let (status, answer) = http(
            rest,
            "POST",
            "/v2/process-instances",
            Some(serde_json::json!({ "processDefinitionId": "figures" })),
        );
        assert_eq!(status, 200, "{answer}");
    }
    let job = activate_rest(rest, "figures-work").expect("a job");
    let (status, answer) = http(
        rest,
        "POST",
        &format!("/v2/jobs/{}/completion", job["jobKey"].as_str().unwrap()),
        Some(serde_json::json!({})),
    );
    assert_eq!(status, 204, "{answer}");

    let after = figures_when(rest, |f| {
        let p = &f["partitions"][0];
        p["processInstances"]["completed"] == 1 && p["export"]["lagCount"].as_u64() > Some(0)
    });
    let p = &after["partitions"][0];
    assert_eq!(p["processInstances"]["activated"], 3, "{p}");
    assert_eq!(p["processInstances"]["terminated"], 0, "{p}");
    assert!(p["backpressure"]["received"].as_u64().unwrap() >= 5, "{p}");
    // the limiter's limit is reported once commands went through it
    assert!(p["backpressure"]["limit"].as_u64().unwrap() > 0, "{p}");
    assert!(p["export"]["exported"].as_u64().unwrap() > 0, "{p}");
    // the very values /metrics shows on the management port
    let shown = metric(
        &node.management,
        "zeebe_executed_instances_total{action=\"activated\",partition=\"1\"",
    );
    assert_eq!(shown, Some(3.0));
    let shown = metric(
        &node.management,
        "zeebe_received_request_count_total{partition=\"1\"}",
    )
    .expect("the requests received on /metrics");
    let now = figures_when(rest, |_| true);
    let received = now["partitions"][0]["backpressure"]["received"].as_f64();
    assert!(
        received.expect("the requests received in the figures") >= shown,
        "{now} against /metrics' {shown}"
    );
}
