//! The management endpoints as Zeebe users' monitoring reads them: Spring Boot's actuator paths
//! beside Zest's own, and a Prometheus exposition that a strict parser accepts (each family
//! declared once, its samples together, no series twice).

mod common;

use std::collections::{HashMap, HashSet};

use common::{http_get, start};

fn body(response: &str) -> &str {
    response.split("\r\n\r\n").nth(1).unwrap_or("")
}

fn status(response: &str) -> &str {
    response.split_whitespace().nth(1).unwrap_or("")
}

/// Checks the text exposition format strictly; returns the samples by series.
fn parse_strictly(text: &str) -> HashMap<String, f64> {
    let mut types: HashMap<String, String> = HashMap::new();
    let mut helps = HashSet::new();
    let mut closed: HashSet<String> = HashSet::new();
    let mut current: Option<String> = None;
    let mut series = HashMap::new();
    for line in text.lines().filter(|l| !l.is_empty()) {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let name = rest.split_whitespace().next().unwrap().to_string();
            assert!(helps.insert(name.clone()), "HELP {name} twice");
            continue;
        }
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let mut parts = rest.split_whitespace();
            let name = parts.next().unwrap().to_string();
            let kind = parts.next().unwrap().to_string();
            assert!(
                types.insert(name.clone(), kind).is_none(),
                "TYPE {name} twice"
            );
            if let Some(previous) = current.replace(name) {
                closed.insert(previous);
            }
            continue;
        }
        assert!(!line.starts_with('#'), "unknown comment line {line}");
        let (key, value) = line.rsplit_once(' ').unwrap();
        let name = key.split('{').next().unwrap();
        let family = [
            name,
            name.trim_end_matches("_bucket"),
            name.trim_end_matches("_sum"),
            name.trim_end_matches("_count"),
        ]
        .into_iter()
        .find(|f| types.contains_key(*f))
        .unwrap_or_else(|| panic!("sample {line} of a family without TYPE"));
        assert_eq!(
            current.as_deref(),
            Some(family),
            "sample {line} outside its family's group"
        );
        assert!(!closed.contains(family), "family {family} split in two");
        let value: f64 = value
            .parse()
            .unwrap_or_else(|_| panic!("value of {line} is no number"));
        assert!(
            series.insert(key.to_string(), value).is_none(),
            "series {key} twice"
        );
    }
    series
}

#[test]
fn actuator_paths_and_a_strict_prometheus_exposition() {
    let node = start("management");
    for path in [
        "/actuator/health",
        "/actuator/health/liveness",
        "/actuator/health/readiness",
        "/actuator/health/startup",
    ] {
        let r = http_get(&node.management, path);
        assert_eq!(status(&r), "200", "{path}: {r}");
        let doc: serde_json::Value = serde_json::from_str(body(&r)).unwrap();
        assert_eq!(doc["status"], "UP", "{path}: {doc}");
    }
    let info = http_get(&node.management, "/actuator/info");
    assert_eq!(status(&info), "200", "{info}");

    // some work, so that every family has samples; then idle
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let mut c = common::connect(&node.gateway).await;
        common::deploy_one_task(&mut c).await;
    });

    for path in ["/metrics", "/actuator/prometheus"] {
        let r = http_get(&node.management, path);
        assert_eq!(status(&r), "200", "{path}");
        let series = parse_strictly(body(&r));
        assert!(
            series
                .keys()
                .any(|k| k.starts_with("process_resident_memory_bytes")),
            "{path} has the process metrics"
        );
        let inflight: Vec<f64> = series
            .iter()
            .filter(|(k, _)| k.starts_with("zeebe_backpressure_inflight_requests_count"))
            .map(|(_, v)| *v)
            .collect();
        assert!(!inflight.is_empty(), "{path} has the in-flight gauge");
        assert!(
            inflight.iter().all(|v| *v == 0.0),
            "{path}: nothing in flight when idle: {inflight:?}"
        );
    }
}

#[test]
fn a_data_directory_in_use_is_named_as_such() {
    let node = start("in-use");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_zest"))
        .args(["start", "--data-dir"])
        .arg(&node.dir)
        .args([
            "--gateway-address",
            "127.0.0.1:0",
            "--management-address",
            "127.0.0.1:0",
            "--rest-address",
            "127.0.0.1:0",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("in use by another Zest process"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// `--memory-mb` sizes the store's parts, and /metrics shows the split, what the store uses
/// within it, and the log's and state's size on disk.
#[test]
fn the_memory_budget_split_and_disk_sizes_are_in_the_metrics() {
    let node = common::start_with("memory", &["--memory-mb", "64"]);
    let series = parse_strictly(body(&http_get(&node.management, "/metrics")));
    let get = |k: &str| {
        *series
            .get(k)
            .unwrap_or_else(|| panic!("{k} is exposed: {:?}", series.keys()))
    };
    let mib = 1024.0 * 1024.0;
    assert_eq!(get("zest_memory_budget_bytes{part=\"total\"}"), 64.0 * mib);
    // a quarter is kept for code, runtime and connections; the parts share the rest, 48 MiB
    assert_eq!(
        get("zest_memory_budget_bytes{part=\"reserve\"}"),
        16.0 * mib
    );
    assert_eq!(
        get("zest_memory_budget_bytes{part=\"block_cache\"}"),
        6.0 * mib
    );
    // a quarter less a thirty-second, which goes to the history store's page caches
    assert_eq!(
        get("zest_memory_budget_bytes{part=\"write_buffers\"}"),
        10.5 * mib
    );
    assert_eq!(get("zest_memory_budget_bytes{part=\"history\"}"), 1.5 * mib);
    assert!(get("zest_memory_budget_bytes{part=\"model_cache\"}") <= 3.0 * mib);
    assert_eq!(
        get("zest_memory_budget_bytes{part=\"command_queues\"}"),
        6.0 * mib
    );
    assert_eq!(
        get("zest_memory_budget_bytes{part=\"pipelines\"}"),
        3.0 * mib
    );
    // jobs pushed to workers and not yet read, all the node's job streams together
    assert_eq!(
        get("zest_memory_budget_bytes{part=\"job_streams\"}"),
        6.0 * mib
    );
    assert!(get("zest_memory_used_bytes{part=\"job_streams\"}") <= 6.0 * mib);
    assert!(get("zest_memory_used_bytes{part=\"command_queues\"}") <= 6.0 * mib);
    assert!(get("zest_memory_used_bytes{part=\"block_cache\"}") <= 6.0 * mib);
    assert!(get("zest_memory_used_bytes{part=\"write_buffers\"}") <= 12.0 * mib);
    // exposed (get panics otherwise); its tables are written at the first flush, so it may
    // still be 0 here
    get("zest_state_disk_bytes{partition=\"1\"}");
    assert!(
        get("zest_log_disk_bytes{partition=\"1\"}") > 0.0,
        "the log holds the first entries"
    );
    assert!(get("zest_disk_bytes") > 0.0, "the store is on disk");
    // the allocator's own figures, to tell what the program holds from what the pages hold
    let allocated = get("zest_allocator_bytes{kind=\"allocated\"}");
    let active = get("zest_allocator_bytes{kind=\"active\"}");
    let resident = get("zest_allocator_bytes{kind=\"resident\"}");
    assert!(allocated > 0.0 && allocated <= active && active <= resident);
    assert!(resident <= get("process_resident_memory_bytes"));
    drop(node);
    // too small a budget is refused with the reason
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_zest"))
        .args(["start", "--memory-mb", "8", "--data-dir"])
        .arg(std::env::temp_dir().join(format!("zest-memory-refused-{}", std::process::id())))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("at least 32 MiB"));
}
