//! Reads and job activation over a cluster whose partitions are not all on the node asked:
//! `zest cluster --nodes 3 --partitions 3 --replication-factor 1` puts one partition on each
//! node, and a standalone `zest gateway` holds none. The REST API's searches, user tasks,
//! forms and process XML must show what every partition holds, from any of them, in key
//! order, paged across partitions; so must history's searches and gets (finished element
//! instances included, any sort, by offset and by cursor) and a definition's element
//! statistics, and the usage metrics (distinct assignees over partitions); a poll must get the
//! jobs of the partitions that answer when one does not; a follower's unexported log past its
//! bound must make the partition refuse new instances.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::cluster::{field, free_port_offset, start, Killed};
use common::{connect, create_instance, http, keys, search};
use serde_json::{json, Value};
use zest_gateway::proto;

#[test]
fn rest_reads_span_partitions_on_other_nodes_and_a_standalone_gateway() {
    let offset = free_port_offset(3);
    let dir = std::env::temp_dir().join(format!("zest-test-cluster-rest-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (_cluster, nodes) = start(
        &[
            "cluster".into(),
            "--nodes=3".into(),
            "--partitions=3".into(),
            "--replication-factor=1".into(),
            format!("--port-offset={offset}"),
            format!("--data-dir={}", dir.display()),
            "--".into(),
            "--memory-mb=64".into(),
        ],
        3,
        Some(dir),
    );
    let node0 = nodes
        .iter()
        .find(|l| l.starts_with("node 0 "))
        .expect("node 0 is ready");
    let (gateway, rest0) = (field(node0, "gateway"), field(node0, "rest"));
    let internal0 = format!("127.0.0.1:{}", 26502 + offset);
    let (_gw, standalone) = start(
        &[
            "gateway".into(),
            format!("--contact-points={internal0}"),
            "--gateway-address=127.0.0.1:0".into(),
            "--rest-address=127.0.0.1:0".into(),
            "--management-address=127.0.0.1:0".into(),
        ],
        1,
        None,
    );
    let rest_gw = field(&standalone[0], "rest");

    let rt = tokio::runtime::Runtime::new().unwrap();
    only_members_reach_the_internal_port(&rt, &internal0);
    let mut c = rt.block_on(connect(&gateway));
    rt.block_on(c.deploy_resource(proto::DeployResourceRequest {
        resources: vec![
            proto::Resource {
                name: "user_tasks.bpmn".into(),
                content: include_bytes!("../../../tests/compat/testdata/user_tasks.bpmn").to_vec(),
            },
            proto::Resource {
                name: "review.form".into(),
                content: include_bytes!("../../../tests/compat/testdata/review.form").to_vec(),
            },
            proto::Resource {
                name: "pricing.dmn".into(),
                content: include_bytes!("../../../tests/compat/testdata/pricing.dmn").to_vec(),
            },
        ],
        tenant_id: String::new(),
    }))
    .expect("the model, its form and a DMN deploy");
    // round-robin: two instances on each partition
    let mut instances = Vec::new();
    for _ in 0..6 {
        let created = create_instance(&mut c, "user_tasks", r#"{"owner":"demo"}"#);
        instances.push(rt.block_on(created));
    }
    instances.sort();
    let partitions: std::collections::BTreeSet<i64> = instances.iter().map(|k| k >> 51).collect();
    assert_eq!(
        partitions.len(),
        3,
        "instances on every partition: {instances:?}"
    );

    // every task shows up, from node 0 and from the gateway without partitions
    let all = json!({"filter": {"processDefinitionId": "user_tasks"}});
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let page = search(&rest0, "/v2/user-tasks/search", all.clone());
        if page["page"]["totalItems"] == 6 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the 6 user tasks show up: {page}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // what each of them answered, the same from both
    let mut answers = Vec::new();
    for rest in [&rest0, &rest_gw] {
        let page = search(rest, "/v2/user-tasks/search", all.clone());
        assert_eq!(page["page"]["totalItems"], 6, "{page}");
        let tasks = keys(&page, "userTaskKey");
        let mut sorted = tasks.clone();
        sorted.sort();
        assert_eq!(tasks, sorted, "key order across partitions");
        let of: Vec<i64> = keys(&page, "processInstanceKey");
        let mut of_sorted = of.clone();
        of_sorted.sort();
        assert_eq!(of_sorted, instances);

        // a page that starts in one partition and ends in the next
        let paged = search(
            rest,
            "/v2/user-tasks/search",
            json!({"filter": {"processDefinitionId": "user_tasks"}, "page": {"from": 1, "limit": 3}}),
        );
        assert_eq!(paged["page"]["totalItems"], 6);
        assert_eq!(keys(&paged, "userTaskKey"), tasks[1..4].to_vec());

        // a filter that only the last partition matches
        let last = *instances.last().unwrap();
        let one = search(
            rest,
            "/v2/user-tasks/search",
            json!({"filter": {"processInstanceKey": last.to_string()}}),
        );
        assert_eq!(keys(&one, "processInstanceKey"), vec![last], "{one}");

        // element instances in history (a process instance is not one of them): each
        // instance's task active (and the incident of none), its start event finished
        let elements = search(
            rest,
            "/v2/element-instances/search",
            json!({"filter": {"processDefinitionId": "user_tasks", "state": "ACTIVE"}, "page": {"limit": 100}}),
        );
        assert_eq!(elements["page"]["totalItems"], 6, "{elements}");
        let finished = search(
            rest,
            "/v2/element-instances/search",
            json!({"filter": {"processDefinitionId": "user_tasks", "state": "COMPLETED"}}),
        );
        assert_eq!(finished["page"]["totalItems"], 6, "{finished}");
        assert!(finished["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["elementId"] == "start"));
        let every = search(
            rest,
            "/v2/element-instances/search",
            json!({"filter": {"processDefinitionId": "user_tasks"}, "page": {"limit": 100}}),
        );
        assert_eq!(every["page"]["totalItems"], 12, "{every}");
        let element_keys = keys(&every, "elementInstanceKey");
        let mut sorted = element_keys.clone();
        sorted.sort();
        assert_eq!(element_keys, sorted, "key order across partitions");
        assert!(elements["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["hasIncident"] == false));
        let tasks_of = search(
            rest,
            "/v2/element-instances/search",
            json!({"filter": {"type": "USER_TASK"}}),
        );
        assert_eq!(keys(&tasks_of, "processInstanceKey"), instances);

        // process instances from history, sorted by start (creation order, across the
        // partitions), by offset and by cursor
        let by_start = |page: Value| {
            json!({
                "filter": {"processDefinitionId": "user_tasks"},
                "sort": [{"field": "startDate", "order": "DESC"}],
                "page": page,
            })
        };
        let full = search(
            rest,
            "/v2/process-instances/search",
            by_start(json!({"limit": 100})),
        );
        assert_eq!(full["page"]["totalItems"], 6, "{full}");
        let started = keys(&full, "processInstanceKey");
        let mut same = started.clone();
        same.sort();
        assert_eq!(same, instances);
        let items = full["items"].as_array().unwrap();
        for pair in items.windows(2) {
            let (a, b) = (&pair[0], &pair[1]);
            let date = |i: &Value| i["startDate"].as_str().unwrap().to_string();
            let key = |i: &Value| {
                i["processInstanceKey"]
                    .as_str()
                    .unwrap()
                    .parse::<i64>()
                    .unwrap()
            };
            assert!(
                // the key breaks ties in the sort's direction (an index read backwards)
                date(a) > date(b) || (date(a) == date(b) && key(a) > key(b)),
                "newest first, then by key descending: {full}"
            );
        }
        let first = search(
            rest,
            "/v2/process-instances/search",
            by_start(json!({"limit": 4})),
        );
        assert_eq!(keys(&first, "processInstanceKey"), started[..4].to_vec());
        let end = first["page"]["endCursor"].as_str().unwrap();
        let next = search(
            rest,
            "/v2/process-instances/search",
            by_start(json!({"limit": 4, "after": end})),
        );
        assert_eq!(keys(&next, "processInstanceKey"), started[4..].to_vec());
        assert_eq!(next["page"]["totalItems"], 6);
        let start = next["page"]["startCursor"].as_str().unwrap();
        let back = search(
            rest,
            "/v2/process-instances/search",
            by_start(json!({"limit": 2, "before": start})),
        );
        assert_eq!(keys(&back, "processInstanceKey"), started[2..4].to_vec());
        let middle = search(
            rest,
            "/v2/process-instances/search",
            by_start(json!({"from": 1, "limit": 3})),
        );
        assert_eq!(keys(&middle, "processInstanceKey"), started[1..4].to_vec());
        answers.push(vec![full, first, next, back, middle, every.clone()]);

        // gets by key of every partition's instances, and the definition (partition 1's)
        for &instance in &instances {
            let (status, got) = http(
                rest,
                "GET",
                &format!("/v2/process-instances/{instance}"),
                None,
            );
            assert_eq!(status, 200, "{got}");
            assert_eq!(got["processInstanceKey"], instance.to_string());
            assert_eq!(got["state"], "ACTIVE");
        }
        let element = &every["items"][11];
        let key = element["elementInstanceKey"].as_str().unwrap();
        let (status, got) = http(rest, "GET", &format!("/v2/element-instances/{key}"), None);
        assert_eq!((status, &got), (200, element));

        // the definition's element statistics, summed over the partitions
        let definition = every["items"][0]["processDefinitionKey"].as_str().unwrap();
        let (status, stats) = http(
            rest,
            "POST",
            &format!("/v2/process-definitions/{definition}/statistics/element-instances"),
            Some(json!({})),
        );
        assert_eq!(status, 200, "{stats}");
        let count = |id: &str, what: &str| {
            stats["items"]
                .as_array()
                .unwrap()
                .iter()
                .find(|i| i["elementId"] == id)
                .map(|i| i[what].as_i64().unwrap())
        };
        assert_eq!(count("review", "active"), Some(6), "{stats}");
        assert_eq!(count("start", "completed"), Some(6), "{stats}");
        let (status, got) = http(
            rest,
            "GET",
            &format!("/v2/process-definitions/{definition}"),
            None,
        );
        assert_eq!(
            (status, &got["processDefinitionKey"]),
            (200, &json!(definition))
        );
        let defs = search(rest, "/v2/process-definitions/search", json!({}));
        assert_eq!(
            defs["page"]["totalItems"], 1,
            "deployed on every partition, one: {defs}"
        );
        // decisions too: each of the DMN's four once, and one of them by key
        let decisions = search(rest, "/v2/decision-definitions/search", json!({}));
        assert_eq!(
            decisions["page"]["totalItems"], 4,
            "deployed on every partition, once each: {decisions}"
        );
        let price = search(
            rest,
            "/v2/decision-definitions/search",
            json!({"filter": {"decisionDefinitionId": "price"}}),
        );
        let price_key = price["items"][0]["decisionDefinitionKey"].as_str().unwrap();
        let (status, got) = http(
            rest,
            "GET",
            &format!("/v2/decision-definitions/{price_key}"),
            None,
        );
        assert_eq!((status, &got["name"]), (200, &json!("Price")), "{got}");

        // one task of another node's partition, its form, and its process's XML
        let task = &page["items"][5];
        let key = task["userTaskKey"].as_str().unwrap();
        let (status, got) = http(rest, "GET", &format!("/v2/user-tasks/{key}"), None);
        assert_eq!((status, &got["userTaskKey"]), (200, &task["userTaskKey"]));
        // its form is kept elsewhere (an external reference)
        let (status, _) = http(rest, "GET", &format!("/v2/user-tasks/{key}/form"), None);
        assert_eq!(status, 204);
        let definition = task["processDefinitionKey"].as_str().unwrap();
        let (status, _) = http(
            rest,
            "GET",
            &format!("/v2/process-definitions/{definition}/xml"),
            None,
        );
        assert_eq!(status, 200);
    }

    assert_eq!(
        answers[0], answers[1],
        "node 0 and the gateway answer the same"
    );

    // a task completed over the gateway leaves the open ones (history keeps it, COMPLETED)
    let page = search(&rest_gw, "/v2/user-tasks/search", all.clone());
    let key = page["items"][5]["userTaskKey"]
        .as_str()
        .unwrap()
        .to_string();
    let (status, body) = http(
        &rest_gw,
        "POST",
        &format!("/v2/user-tasks/{key}/completion"),
        Some(json!({})),
    );
    assert_eq!(status, 204, "{body}");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let remaining = search(
            &rest0,
            "/v2/user-tasks/search",
            json!({"filter": {"elementId": "review", "state": "CREATED"}}),
        );
        if remaining["page"]["totalItems"] == 5 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the completed task leaves: {remaining}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let done = search(
        &rest_gw,
        "/v2/user-tasks/search",
        json!({"filter": {"userTaskKey": key, "state": "COMPLETED"}}),
    );
    assert_eq!(done["page"]["totalItems"], 1, "{done}");
    assert!(done["items"][0]["completionDate"].is_string(), "{done}");
    // the next task of that instance, on node 2's partition, has a form deployed on node 0's
    let instance = page["items"][5]["processInstanceKey"].clone();
    let approve = json!({"filter": {"processInstanceKey": instance, "elementId": "approve"}});
    let deadline = Instant::now() + Duration::from_secs(20);
    let approve = loop {
        let found = search(&rest_gw, "/v2/user-tasks/search", approve.clone());
        if let Some(task) = found["items"].get(0) {
            break task["userTaskKey"].as_str().unwrap().to_string();
        }
        assert!(Instant::now() < deadline, "the approve task shows up");
        std::thread::sleep(Duration::from_millis(50));
    };
    for rest in [&rest0, &rest_gw] {
        let path = format!("/v2/user-tasks/{approve}/form");
        let (status, form) = http(rest, "GET", &path, None);
        assert_eq!(
            (status, &form["formId"]),
            (200, &json!("review-form")),
            "{form}"
        );
    }
    // usage metrics over the three partitions: the six roots, and "demo", the assignee of a
    // review task on every partition, one distinct user (not one per partition)
    for rest in [&rest0, &rest_gw] {
        let path = "/v2/system/usage-metrics?startTime=2000-01-01T00:00:00Z\
                    &endTime=2100-01-01T00:00:00Z&withTenants=true";
        let (status, usage) = http(rest, "GET", path, None);
        assert_eq!(status, 200, "{usage}");
        assert_eq!(
            (&usage["processInstances"], &usage["assignees"]),
            (&json!(6), &json!(1)),
            "{usage}"
        );
        assert_eq!(usage["tenants"]["<default>"]["assignees"], 1, "{usage}");
    }
    // a page too large for one answer is refused
    let (status, body) = http(
        &rest0,
        "POST",
        "/v2/user-tasks/search",
        Some(json!({"page": {"limit": 100_000}})),
    );
    assert_eq!(status, 400, "{body}");

    job_statistics_span_partitions(&rt, &mut c, &rest0, &rest_gw);

    // with node 2 killed, its partition cannot be read: 503, naming the partition
    let node2 = nodes
        .iter()
        .find(|l| l.starts_with("node 2 "))
        .expect("node 2 is ready");
    let pid = node2
        .split("(pid ")
        .nth(1)
        .and_then(|r| r.split(')').next())
        .expect("node 2's pid");
    Command::new("kill").args(["-KILL", pid]).status().unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (status, body) = http(&rest_gw, "POST", "/v2/user-tasks/search", Some(all.clone()));
        if status == 503 {
            let detail = body["detail"].as_str().unwrap_or_default();
            assert!(detail.contains("partition 3"), "{body}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the search fails once node 2 is gone: {body}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Jobs on every partition, completed: the job statistics count them all, from node 0 and
/// from the gateway that holds no partition (each partition's groups, summed).
/// The internal port refuses frames from a process that does not know the cluster secret
/// (before they reach consensus or the broker), and a gateway or node with an internal port
/// does not start without one.
fn only_members_reach_the_internal_port(rt: &tokio::runtime::Runtime, internal: &str) {
    use zest_cluster::transport::{kind, ClusterToken, Peers};
    let call = |secret: &str, frame: u32| {
        let peers = Peers::new(ClusterToken::from_secret(secret));
        rt.block_on(peers.call(internal, frame, 0, Vec::new(), Duration::from_secs(5)))
    };
    for frame in [kind::VOTE, kind::APPEND, kind::SNAPSHOT, kind::BROKER] {
        let refused = call("a secret of another cluster", frame).expect_err("refused");
        assert_eq!(refused.code(), tonic::Code::Unauthenticated, "{refused:?}");
        assert!(
            refused.message().contains("--cluster-secret"),
            "{refused:?}"
        );
    }
    // a member's frame is taken (the broker's status, as a standalone gateway asks it)
    call(common::CLUSTER_SECRET, kind::BROKER).expect("a member's status frame is answered");
    let out = Command::new(env!("CARGO_BIN_EXE_zest"))
        .args(["gateway", &format!("--contact-points={internal}")])
        .env_remove("ZEST_CLUSTER_SECRET")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--cluster-secret"), "{err}");
}

fn job_statistics_span_partitions(
    rt: &tokio::runtime::Runtime,
    c: &mut common::Client,
    rest0: &str,
    rest_gw: &str,
) {
    rt.block_on(common::deploy_one_task(c));
    for _ in 0..3 {
        rt.block_on(create_instance(c, "benchmark", ""));
    }
    for _ in 0..3 {
        let job = rt.block_on(common::activate_one(c, "benchmark-task"));
        rt.block_on(common::complete(c, job.expect("a job").key));
    }
    let path = "/v2/jobs/statistics/global?from=2000-01-01T00:00:00Z&to=2100-01-01T00:00:00Z";
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (status, g) = http(rest0, "GET", path, None);
        assert_eq!(status, 200, "{g}");
        if g["completed"]["count"] == 3 {
            assert_eq!(g["created"]["count"], 3, "{g}");
            break;
        }
        assert!(Instant::now() < deadline, "the jobs are counted: {g}");
        std::thread::sleep(Duration::from_millis(100));
    }
    let body = json!({"filter": {"from": "2000-01-01T00:00:00Z", "to": "2100-01-01T00:00:00Z",
                                 "jobType": "benchmark-task"}});
    for rest in [rest0, rest_gw] {
        let (status, g) = http(rest, "GET", path, None);
        assert_eq!((status, &g["created"]["count"]), (200, &json!(3)), "{g}");
        let (status, w) = http(
            rest,
            "POST",
            "/v2/jobs/statistics/by-workers",
            Some(body.clone()),
        );
        assert_eq!(status, 200, "{w}");
        assert_eq!(w["items"][0]["worker"], "test", "{w}");
        assert_eq!(w["items"][0]["completed"]["count"], 3, "{w}");
        let (status, t) = http(
            rest,
            "POST",
            "/v2/jobs/statistics/by-types",
            Some(json!({"filter": body["filter"]})),
        );
        assert_eq!(status, 200, "{t}");
        assert_eq!(
            t["items"][0]["workers"], 1,
            "one worker on three partitions: {t}"
        );
    }
}

/// The pid of the process whose command line holds `needle` (one of `zest cluster`'s nodes).
fn pid_of(needle: &str) -> u32 {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .find(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|c| {
                    String::from_utf8_lossy(&c)
                        .replace('\0', " ")
                        .contains(needle)
                })
                .unwrap_or(false)
        })
        .unwrap_or_else(|| panic!("no process with {needle}"))
}

#[test]
fn a_poll_gets_the_jobs_of_the_partitions_that_answer_when_one_does_not() {
    // one partition on each node: with node 2 killed, partition 3 has no leader, and a poll on
    // node 0 still gets the jobs partitions 1 and 2 activated (as Zeebe's gateway answers)
    let offset = free_port_offset(3);
    let dir = std::env::temp_dir().join(format!("zest-test-cluster-poll-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (_cluster, nodes) = start(
        &[
            "cluster".into(),
            "--nodes=3".into(),
            "--partitions=3".into(),
            "--replication-factor=1".into(),
            format!("--port-offset={offset}"),
            format!("--data-dir={}", dir.display()),
            "--".into(),
            "--memory-mb=64".into(),
        ],
        3,
        Some(dir.clone()),
    );
    let node0 = nodes
        .iter()
        .find(|l| l.starts_with("node 0 "))
        .expect("node 0 is ready");
    let gateway = field(node0, "gateway");
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let mut c = connect(&gateway).await;
        common::deploy_one_task(&mut c).await;
        // instances on every partition: right after the deployment, a partition it has not
        // reached yet hands creations to partition 1
        let mut per_partition = std::collections::BTreeMap::<i64, usize>::new();
        let deadline = Instant::now() + Duration::from_secs(20);
        while per_partition.len() < 3 || per_partition.values().any(|&n| n < 2) {
            assert!(Instant::now() < deadline, "instances on every partition");
            let key = create_instance(&mut c, "benchmark", "").await;
            *per_partition.entry(key >> 51).or_default() += 1;
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // the jobs are created with their instances; let partition 3's node go
        let node2 = pid_of(&format!("--data-dir={}", dir.join("node-2").display()));
        let killed = Command::new("kill")
            .args(["-KILL", &node2.to_string()])
            .status()
            .unwrap();
        assert!(killed.success());

        let mut answer = c
            .activate_jobs(proto::ActivateJobsRequest {
                r#type: "benchmark-task".into(),
                worker: "test".into(),
                timeout: 60_000,
                max_jobs_to_activate: 1000,
                request_timeout: -1,
                ..Default::default()
            })
            .await
            .expect("the poll is taken")
            .into_inner();
        // a message per partition that answered, and no failure for partition 3's
        let mut from = std::collections::BTreeMap::<i64, usize>::new();
        while let Some(batch) = answer
            .message()
            .await
            .expect("the poll answers with jobs, not partition 3's failure")
        {
            let partition = batch.jobs[0].key >> 51;
            assert!(
                batch.jobs.iter().all(|j| j.key >> 51 == partition),
                "one partition's jobs per message"
            );
            for job in &batch.jobs {
                *from.entry(job.key >> 51).or_default() += 1;
            }
        }
        per_partition.remove(&3);
        assert_eq!(from, per_partition, "every job of partitions 1 and 2");
    });
}

/// `zest cluster` of 3 nodes with one partition on every node (replication factor 3), each
/// node started with `extra` flags too; its data in a directory named after `name`.
fn start_replicated(name: &str, extra: &[&str]) -> (Killed, Vec<String>) {
    let offset = free_port_offset(3);
    let dir = std::env::temp_dir().join(format!("zest-test-cluster-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut args: Vec<String> = vec![
        "cluster".into(),
        "--nodes=3".into(),
        "--partitions=1".into(),
        "--replication-factor=3".into(),
        format!("--port-offset={offset}"),
        format!("--data-dir={}", dir.display()),
        "--".into(),
        "--memory-mb=64".into(),
    ];
    args.extend(extra.iter().map(|e| e.to_string()));
    start(&args, 3, Some(dir))
}

/// History deletion is replicated (`docs/design/history.md`, "History deletion"): with every
/// partition on every node (replication factor 3), each node keeps its own history, and a
/// deletion asked of one node is gone from every node's store, each asked on its own.
#[test]
fn a_history_deletion_reaches_every_replicas_store() {
    let (_cluster, nodes) = start_replicated("del", &[]);
    let rests: Vec<String> = nodes.iter().map(|l| field(l, "rest")).collect();
    let post = |rest: &str, path: &str, body: Value| {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            // a partition without a leader yet answers 503: asked again
            let (status, answer) = http(rest, "POST", path, Some(body.clone()));
            if status == 200 || Instant::now() > deadline {
                assert_eq!(status, 200, "{path}: {answer}");
                return answer;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    };
    let bpmn = common::service_task_bpmn("cdel", "cdel-task");
    common::deploy_rest(&rests[0], "cdel.bpmn", &bpmn);
    let keys: Vec<String> = (0..2)
        .map(|i| {
            let body = json!({"processDefinitionId": "cdel", "variables": {"n": i}});
            let created = post(&rests[0], "/v2/process-instances", body);
            let key = created["processInstanceKey"].as_str().unwrap().to_string();
            let path = format!("/v2/process-instances/{key}/cancellation");
            assert_eq!(http(&rests[0], "POST", &path, Some(json!({}))).0, 204);
            key
        })
        .collect();
    let count = |rest: &str, what: &str, key: &str| {
        let page = post(
            rest,
            &format!("/v2/{what}/search"),
            json!({"filter": {"processInstanceKey": key}}),
        );
        page["page"]["totalItems"].as_i64().unwrap()
    };
    let wait = |rest: &str, what: &str, key: &str, n: i64| {
        let deadline = Instant::now() + Duration::from_secs(20);
        while count(rest, what, key) != n {
            assert!(Instant::now() < deadline, "{rest} {what} of {key}: not {n}");
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    for rest in &rests {
        wait(rest, "variables", &keys[0], 1);
    }
    let path = format!("/v2/process-instances/{}/deletion", keys[0]);
    let (status, answer) = http(&rests[1], "POST", &path, None);
    assert_eq!(status, 204, "{answer}");
    for rest in &rests {
        wait(rest, "process-instances", &keys[0], 0);
        assert_eq!(count(rest, "variables", &keys[0]), 0, "{rest}");
        assert_eq!(count(rest, "process-instances", &keys[1]), 1, "{rest}");
        assert_eq!(count(rest, "variables", &keys[1]), 1, "{rest}");
    }
}

/// The bound on unexported log holds on every replica: a follower whose exporter holds its
/// log (paused softly) past `--max-unexported-log-mb` makes the leader refuse new instances
/// (429 RESOURCE_EXHAUSTED) until it is resumed.
#[test]
fn a_followers_unexported_log_past_the_bound_makes_the_partition_refuse_new_instances() {
    let (_cluster, nodes) = start_replicated("gate", &["--max-unexported-log-mb=1"]);
    let rest = field(&nodes[0], "rest");
    common::deploy_rest(
        &rest,
        "gate.bpmn",
        &common::service_task_bpmn("gate", "gate-task"),
    );
    let create = |variables: &Value| {
        let body = json!({"processDefinitionId": "gate", "variables": variables});
        http(&rest, "POST", "/v2/process-instances", Some(body))
    };
    // the leader's gRPC port, as the topology names it, finds its READY line
    let deadline = Instant::now() + Duration::from_secs(20);
    let leader_port = loop {
        let (_, topology) = http(&rest, "GET", "/v2/topology", None);
        let leader = topology["brokers"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|b| {
                b["partitions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|p| p["role"] == "leader")
            });
        if let Some(leader) = leader {
            break leader["port"].as_i64().unwrap();
        }
        assert!(Instant::now() < deadline, "no leader: {topology}");
        std::thread::sleep(Duration::from_millis(200));
    };
    let follower = nodes
        .iter()
        .find(|l| !field(l, "gateway").ends_with(&format!(":{leader_port}")))
        .expect("a follower");
    let management = field(follower, "management");
    let path = "/actuator/exporting/pause?soft=true";
    assert_eq!(http(&management, "POST", path, None).0, 204);

    // 16 KiB a creation: the follower holds 1 MiB after a few dozen, and the leader learns it
    let blob = json!({"blob": "x".repeat(16 << 10)});
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut taken = 0;
    let refused = loop {
        let (status, answer) = create(&blob);
        match status {
            200 => taken += 1,
            // a partition without a leader yet
            503 => std::thread::sleep(Duration::from_millis(100)),
            _ => break (status, answer),
        }
        assert!(
            Instant::now() < deadline,
            "{taken} instances and no refusal"
        );
    };
    assert_eq!(refused.0, 429, "{}", refused.1);
    assert_eq!(refused.1["title"], "RESOURCE_EXHAUSTED", "{}", refused.1);
    assert!(taken >= 10, "refused after {taken} instances of 16 KiB");
    let gate = "zest_exporter_backlog_gate_closed{partition=\"1\"}";
    assert_eq!(
        common::metric(&management, gate),
        Some(1.0),
        "the follower's gate"
    );

    // resumed, the follower's exporter lets the log go and the partition takes instances again
    let (status, _) = http(&management, "POST", "/actuator/exporting/resume", None);
    assert_eq!(status, 204);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (status, answer) = create(&json!({}));
        if status == 200 {
            break;
        }
        assert_eq!(status, 429, "{answer}");
        assert!(Instant::now() < deadline, "still refused: {answer}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// TLS on the internal port (Zeebe's ZEEBE_BROKER_NETWORK_SECURITY_*): a replicated cluster
/// and a standalone gateway talk over it, a process without the CA or speaking plaintext gets
/// nothing through, and the cluster secret is still checked inside TLS.
#[test]
fn the_internal_port_speaks_tls_between_nodes_and_the_gateway() {
    use zest_cluster::transport::{kind, ClusterToken, Peers};
    let dir = std::env::temp_dir().join(format!("zest-test-internal-tls-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let ca = common::certs::TestCa::new("cluster CA");
    let ca_file = ca.write(&dir, "cluster");
    let (cert, key) = (dir.join("node.pem"), dir.join("node.key"));
    ca.issue(&cert, &key);
    let tls = [
        format!("--internal-tls-cert={}", cert.display()),
        format!("--internal-tls-key={}", key.display()),
        format!("--internal-tls-ca={}", ca_file.display()),
    ];
    let tls: Vec<&str> = tls.iter().map(String::as_str).collect();
    // replication factor 3: every command goes through consensus over the internal port
    let (_cluster, nodes) = start_replicated("tls", &tls);
    // `zest cluster` puts node 0's internal port 2 above its gateway (26500 and 26502 + offset)
    let node0 = nodes.iter().find(|l| l.starts_with("node 0 ")).unwrap();
    let gateway0 = field(node0, "gateway");
    let port: u16 = gateway0.rsplit(':').next().unwrap().parse().unwrap();
    let internal0 = format!("127.0.0.1:{}", port + 2);
    let mut args = vec![
        "gateway".to_string(),
        format!("--contact-points={internal0}"),
        "--gateway-address=127.0.0.1:0".into(),
        "--rest-address=127.0.0.1:0".into(),
        "--management-address=127.0.0.1:0".into(),
    ];
    args.extend(tls.iter().map(|a| a.to_string()));
    let (_gw, standalone) = start(&args, 1, None);

    // an instance through the standalone gateway, its job activated and completed
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut c = rt.block_on(connect(&field(&standalone[0], "gateway")));
    rt.block_on(common::deploy_one_task(&mut c));
    let created = rt.spawn(common::create_with_result(
        c.clone(),
        "benchmark".into(),
        "{}".into(),
    ));
    let job = rt.block_on(common::activate_one(&mut c, "benchmark-task"));
    rt.block_on(common::complete(&mut c, job.expect("a job").key));
    rt.block_on(created)
        .unwrap()
        .expect("the instance completes");

    let call = |secret: &str, tls: Option<tonic::transport::ClientTlsConfig>| {
        let peers = Peers::new(ClusterToken::from_secret(secret)).with_tls(tls);
        rt.block_on(peers.call(
            &internal0,
            kind::BROKER,
            0,
            Vec::new(),
            Duration::from_secs(5),
        ))
    };
    let pem = std::fs::read(&ca_file).unwrap();
    let trusted = tonic::transport::ClientTlsConfig::new()
        .ca_certificate(tonic::transport::Certificate::from_pem(pem));
    call(common::CLUSTER_SECRET, Some(trusted.clone())).expect("a member over TLS is answered");
    let refused = call("a secret of another cluster", Some(trusted)).expect_err("refused");
    assert_eq!(refused.code(), tonic::Code::Unauthenticated, "{refused:?}");
    let plain = call(common::CLUSTER_SECRET, None).expect_err("plaintext gets nothing");
    assert_ne!(plain.code(), tonic::Code::Ok);
    let other = common::certs::TestCa::new("another CA").write(&dir, "other");
    let untrusted = tonic::transport::ClientTlsConfig::new().ca_certificate(
        tonic::transport::Certificate::from_pem(std::fs::read(&other).unwrap()),
    );
    call(common::CLUSTER_SECRET, Some(untrusted)).expect_err("a server it does not trust");
    let _ = std::fs::remove_dir_all(&dir);
}
