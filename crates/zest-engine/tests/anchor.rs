//! Record streams checked against the real Zeebe engine.
//!
//! Each `tests/anchor/scenarios/NAME.steps` holds a scenario (the steps of
//! `tests/anchor/RecordDump.java`, one per line); `NAME.zeebe` beside it is what Zeebe 8.8 wrote
//! for it (made by `tests/anchor/regen.sh`, which runs `../shared/anchors/zeebe`). This test runs
//! the same steps through Zest's engine, prints its log in the same format and compares.
//!
//! Records that Zest does not write at all (identity setup, usage metrics) are left out of the
//! Zeebe dump by RecordDump.java; every other record must match in order, kind, value type,
//! intent and detail.

mod support;

use std::path::{Path, PathBuf};

use support::*;
use zest_protocol::{Intent, Record, RecordType, RecordValue};

fn anchor_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/anchor")
}

/// One line per record, as RecordDump.java prints it.
fn line(r: &Record) -> String {
    let kind = match r.record_type {
        RecordType::Command => "C",
        RecordType::Event => "E",
        RecordType::CommandRejection => "R",
    };
    let detail = match &r.value {
        RecordValue::ProcessInstance(p) => format!(
            "{} {} {}",
            p.element_id,
            enum_name(&p.bpmn_element_type),
            enum_name(&p.bpmn_event_type)
        ),
        RecordValue::Job(j) if j.kind == zest_protocol::JobKind::AdHocSubProcess => {
            // as RecordDump.java shows the jobs of ad-hoc sub-processes
            let mut b = format!(
                "{} {} kind=AD_HOC_SUB_PROCESS retries={} headers={{{}}}",
                j.element_id,
                j.job_type,
                j.retries,
                j.custom_headers
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            if j.result.result_type == zest_protocol::JobResultType::AdHocSubProcess {
                b += " result=[";
                for e in &j.result.activate_elements {
                    b += &format!("{}{};", e.element_id, java_map(&e.variables));
                }
                b += &format!(
                    "] done={} cancel={}",
                    j.result.completion_condition_fulfilled, j.result.cancel_remaining_instances
                );
            }
            b
        }
        RecordValue::Job(j) => format!("{} {}", j.element_id, j.job_type),
        RecordValue::Timer(t) => t.target_element_id.clone(),
        RecordValue::Incident(i) => format!(
            "{} {} {}",
            i.element_id,
            enum_name(&i.error_type),
            i.error_message
        ),
        RecordValue::Variable(v) => format!("{}={}", v.name, v.value),
        RecordValue::Form(f) => format!("{} v{}", f.form_id, f.version),
        RecordValue::CompensationSubscription(c) => format!(
            "{} throw={} handler={}",
            c.compensable_activity_id, c.throw_event_id, c.compensation_handler_id
        ),
        RecordValue::ProcessEvent(e) => e.target_element_id.clone(),
        RecordValue::ProcessMessageSubscription(s) => {
            format!("{} {}", s.element_id, s.message_name)
        }
        RecordValue::MessageSubscription(s) => s.message_name.clone(),
        RecordValue::SignalSubscription(s) => format!("{} {}", s.signal_name, s.catch_event_id),
        RecordValue::UserTask(u) => format!(
            "{} assignee={} candidateGroups=[{}] candidateUsers=[{}] dueDate={} followUpDate={} priority={} formKey={} externalForm={} changed=[{}] action={}",
            u.element_id,
            u.assignee,
            u.candidate_groups.join(", "),
            u.candidate_users.join(", "),
            u.due_date,
            u.follow_up_date,
            u.priority,
            if u.form_key > 0 { "<key>".to_string() } else { "-1".to_string() },
            u.external_form_reference,
            u.changed_attributes.join(", "),
            u.action
        ),
        RecordValue::Decision(d) => format!(
            "{} {} v{} drg={} duplicate=false",
            d.decision_id, d.decision_name, d.version, d.decision_requirements_id
        ),
        RecordValue::DecisionRequirements(d) => format!(
            "{} {} v{} {} duplicate=false",
            d.decision_requirements_id,
            d.decision_requirements_name,
            d.decision_requirements_version,
            d.resource_name
        ),
        RecordValue::DecisionEvaluation(d) => {
            let mut b = format!(
                "{} v{} drg={} element={} output={}",
                d.decision_id,
                d.decision_version,
                d.decision_requirements_id,
                d.element_id,
                d.decision_output
            );
            if !d.failed_decision_id.is_empty() {
                b += &format!(
                    " failed={} message={}",
                    d.failed_decision_id, d.evaluation_failure_message
                );
            }
            for e in &d.evaluated_decisions {
                b += &format!(
                    " [{} {} {} output={} inputs=",
                    e.decision_id, e.decision_name, e.decision_type, e.decision_output
                );
                for i in &e.evaluated_inputs {
                    b += &format!("{}({})={};", i.input_id, i.input_name, i.input_value);
                }
                b += " rules=";
                for m in &e.matched_rules {
                    b += &format!("{}#{}{{", m.rule_id, m.rule_index);
                    for o in &m.evaluated_outputs {
                        b += &format!("{}({})={};", o.output_id, o.output_name, o.output_value);
                    }
                    b += "}";
                }
                b += "]";
            }
            b
        }
        _ => String::new(),
    };
    let mut out = format!(
        "{kind} {} {} {detail}",
        r.value_type.name(),
        r.intent.name()
    );
    if r.record_type == RecordType::CommandRejection {
        out.push_str(&format!(
            " | {}: {}",
            enum_name(&r.rejection_type),
            r.rejection_reason
        ));
    }
    out
}

/// The keys of the open jobs of a type, oldest first (RecordDump.java's `openJobs`).
/// A task listener's job result from RecordDump.java's `tljob` JSON: the corrected attributes
/// are the corrections given, as the gateway lists them.
fn task_listener_result(spec: &serde_json::Value) -> zest_protocol::JobResult {
    let mut r = zest_protocol::JobResult {
        denied: spec["denied"].as_bool().unwrap_or(false),
        denied_reason: spec["deniedReason"].as_str().unwrap_or("").to_string(),
        ..Default::default()
    };
    let c = &spec["corrections"];
    let list = |v: &serde_json::Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    };
    let text = |v: &serde_json::Value| v.as_str().unwrap_or("").to_string();
    for (name, attr) in [
        ("assignee", "assignee"),
        ("dueDate", "dueDate"),
        ("followUpDate", "followUpDate"),
        ("candidateUsers", "candidateUsersList"),
        ("candidateGroups", "candidateGroupsList"),
        ("priority", "priority"),
    ] {
        let Some(v) = c.get(name) else { continue };
        match name {
            "assignee" => r.corrections.assignee = text(v),
            "dueDate" => r.corrections.due_date = text(v),
            "followUpDate" => r.corrections.follow_up_date = text(v),
            "candidateUsers" => r.corrections.candidate_users = list(v),
            "candidateGroups" => r.corrections.candidate_groups = list(v),
            _ => r.corrections.priority = v.as_i64().unwrap_or(0) as i32,
        }
        r.corrected_attributes.push(attr.to_string());
    }
    r
}

fn open_jobs(h: &Harness, job_type: &str) -> Vec<i64> {
    let mut open: Vec<i64> = h
        .jobs()
        .into_iter()
        .filter(|(_, j)| j.record.job_type == job_type)
        .map(|(k, _)| k)
        .collect();
    open.sort();
    open
}

/// The `activate` list of an `adhocjob` or `adhocactivate` step.
fn activate_elements(spec: &serde_json::Value) -> Vec<zest_protocol::AdHocActivateElement> {
    spec["activate"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|a| zest_protocol::AdHocActivateElement {
            element_id: a["elementId"].as_str().unwrap_or("").to_string(),
            variables: a
                .get("variables")
                .map(|v| v.to_string())
                .unwrap_or_default(),
        })
        .collect()
}

/// A JSON object of scalars as Java's `Map.toString` prints it: `{a=1, b=x}`.
fn java_map(json: &str) -> String {
    let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(json) else {
        return "{}".to_string();
    };
    let items: Vec<String> = map
        .iter()
        .map(|(k, v)| match v {
            serde_json::Value::String(s) => format!("{k}={s}"),
            other => format!("{k}={other}"),
        })
        .collect();
    format!("{{{}}}", items.join(", "))
}

/// The SCREAMING_SNAKE_CASE name serde gives an enum value.
fn enum_name<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// Runs the steps of a scenario (the grammar of RecordDump.java) and returns Zest's log.
// One arm per step of the scenario language (RecordDump.java's): it reads best as one table
// beside the Java side's.
fn run(steps: &[Vec<String>]) -> Vec<String> {
    let mut h = Harness::new();
    let mut last_instance = -1;
    // VARIABLE lines name their scope (RecordDump.java's `scopes` step)
    let mut scopes = false;
    for step in steps {
        let arg = |i: usize| step.get(i).map(String::as_str).unwrap_or("");
        match arg(0) {
            "deploy" => {
                let path = anchor_dir().join(arg(1));
                let xml = std::fs::read_to_string(&path)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                // named as RecordDump.java names it (the path given to the client)
                let name = arg(1).to_string();
                let b = h.deploy(&name, &xml);
                let r = b.response();
                assert_eq!(
                    r.record_type,
                    RecordType::Event,
                    "deploying {name}: {}",
                    r.rejection_reason
                );
            }
            "create" => {
                last_instance = h.create_ok(arg(1), arg(2));
            }
            "scopes" => scopes = true,
            "cancel" => {
                h.cancel(last_instance);
            }
            "complete" => {
                for (key, _) in h.activate(arg(1), 100) {
                    h.complete(key, arg(2));
                }
            }
            "fail" => {
                for (key, _) in h.activate(arg(1), 100) {
                    h.fail(key, arg(2).parse().unwrap(), "", 0);
                }
            }
            "throw" => {
                for (key, _) in h.activate(arg(1), 100) {
                    h.throw_error(key, arg(2), arg(3));
                }
            }
            "publish" => {
                h.publish(arg(1), arg(2), 3_600_000, "", arg(3));
            }
            "signal" => {
                h.broadcast(arg(1), arg(2)).accepted();
            }
            "time" => {
                let d = zest_model::time::parse_iso_duration(arg(1)).unwrap();
                h.now = d.add_to(h.now).unwrap();
                h.run_scheduler();
            }
            "modify" => {
                // +ELEMENT[={vars}];-ELEMENT, as RecordDump.java reads it
                let mut m = zest_protocol::ProcessInstanceModificationRecord {
                    process_instance_key: last_instance,
                    ..Default::default()
                };
                for item in arg(1).split(';') {
                    let (op, rest) = item.split_at(1);
                    let (id, vars) = rest.split_once('=').unwrap_or((rest, ""));
                    if op == "+" {
                        m.activate_instructions
                            .push(zest_protocol::ActivateInstruction {
                                element_id: id.to_string(),
                                ancestor_scope_key: -1,
                                variable_instructions: if vars.is_empty() {
                                    Vec::new()
                                } else {
                                    vec![zest_protocol::VariableInstruction {
                                        variables: vars.to_string(),
                                        element_id: String::new(),
                                    }]
                                },
                            });
                    } else {
                        let mut keys: Vec<i64> = h
                            .element_instances()
                            .iter()
                            .filter(|e| {
                                e.record.process_instance_key == last_instance
                                    && e.record.element_id == id
                            })
                            .map(|e| e.key)
                            .collect();
                        keys.sort();
                        if keys.is_empty() {
                            keys.push(-1);
                        }
                        for key in keys {
                            m.terminate_instructions
                                .push(zest_protocol::TerminateInstruction {
                                    element_instance_key: key,
                                });
                        }
                    }
                }
                h.client(
                    -1,
                    Intent::Modify,
                    RecordValue::ProcessInstanceModification(m),
                );
            }
            "delete" => {
                // the latest version of a process, a decision requirements graph or a form, by
                // id (as RecordDump.java finds it)
                let key = h
                    .log
                    .iter()
                    .rev()
                    .filter(|r| r.record_type == RecordType::Event && r.intent != Intent::Deleted)
                    .find_map(|r| match &r.value {
                        RecordValue::Process(p) if p.bpmn_process_id == arg(1) => {
                            Some(p.process_definition_key)
                        }
                        RecordValue::DecisionRequirements(d)
                            if d.decision_requirements_id == arg(1) =>
                        {
                            Some(d.decision_requirements_key)
                        }
                        RecordValue::Form(f) if f.form_id == arg(1) => Some(f.form_key),
                        _ => None,
                    })
                    .unwrap_or(-1);
                h.delete_resource(key);
            }
            "adhocjob" => {
                // adhocjob TYPE JSON: completes every open job of TYPE with an ad-hoc result
                // (RecordDump.java's step)
                let spec: serde_json::Value = serde_json::from_str(arg(2)).unwrap();
                let result = zest_protocol::JobResult {
                    result_type: zest_protocol::JobResultType::AdHocSubProcess,
                    activate_elements: activate_elements(&spec),
                    completion_condition_fulfilled: spec["done"].as_bool().unwrap_or(false),
                    cancel_remaining_instances: spec["cancel"].as_bool().unwrap_or(false),
                    ..Default::default()
                };
                let vars = spec
                    .get("variables")
                    .map(|v| v.to_string())
                    .unwrap_or_default();
                for key in open_jobs(&h, arg(1)) {
                    h.complete_with_result(key, &vars, result.clone());
                }
            }
            "tljob" => {
                // tljob TYPE JSON: completes every open task listener job of TYPE with a user
                // task result (RecordDump.java's step)
                let spec: serde_json::Value = serde_json::from_str(arg(2)).unwrap();
                let result = task_listener_result(&spec);
                let vars = spec
                    .get("variables")
                    .map(|v| v.to_string())
                    .unwrap_or_default();
                for key in open_jobs(&h, arg(1)) {
                    h.complete_with_result(key, &vars, result.clone());
                }
            }
            "adhocactivate" => {
                // adhocactivate ELEMENT JSON: AD_HOC_SUB_PROCESS_INSTRUCTION ACTIVATE on the
                // active instance of the ad-hoc sub-process ELEMENT (RecordDump.java's step)
                let key = h
                    .element_instances()
                    .iter()
                    .find(|e| {
                        e.record.process_instance_key == last_instance
                            && e.record.element_id == arg(1)
                    })
                    .map(|e| e.key)
                    .unwrap_or(-1);
                let spec: serde_json::Value = serde_json::from_str(arg(2)).unwrap();
                let instruction = zest_protocol::AdHocSubProcessInstructionRecord {
                    ad_hoc_sub_process_instance_key: key,
                    activate_elements: activate_elements(&spec),
                    cancel_remaining_instances: spec["cancel"].as_bool().unwrap_or(false),
                    ..Default::default()
                };
                h.client(
                    key,
                    Intent::Activate,
                    RecordValue::AdHocSubProcessInstruction(instruction),
                );
            }
            "retries" => {
                for key in open_jobs(&h, arg(1)) {
                    h.update_retries(key, arg(2).parse().unwrap());
                }
            }
            "migrate" => {
                // migrate PROCESS_ID SOURCE=TARGET[;...]: to the latest version of the process
                let target = h
                    .log
                    .iter()
                    .rev()
                    .filter(|r| r.record_type == RecordType::Event)
                    .find_map(|r| match &r.value {
                        RecordValue::Process(p) if p.bpmn_process_id == arg(1) => {
                            Some(p.process_definition_key)
                        }
                        _ => None,
                    })
                    .unwrap_or(-1);
                let mappings: Vec<(&str, &str)> = arg(2)
                    .split(';')
                    .map(|m| m.split_once('=').unwrap())
                    .collect();
                h.migrate(last_instance, target, &mappings);
            }
            "resolve" => {
                let mut open: Vec<i64> = h.incidents().iter().map(|(k, _)| *k).collect();
                open.sort();
                for key in open {
                    h.resolve(key);
                }
            }
            "usertask" => {
                let key = h.user_task_key(arg(2));
                match arg(1) {
                    "complete" => {
                        h.complete_user_task(key, arg(3));
                    }
                    "assign" => {
                        h.assign_user_task(key, Intent::Assign, arg(3));
                    }
                    "claim" => {
                        h.assign_user_task(key, Intent::Claim, arg(3));
                    }
                    "unassign" => {
                        h.assign_user_task(key, Intent::Assign, "");
                    }
                    "update" => {
                        let changes: serde_json::Value = serde_json::from_str(arg(3)).unwrap();
                        let mut u = zest_protocol::UserTaskRecord {
                            action: "update".to_string(),
                            ..zest_protocol::UserTaskRecord::command()
                        };
                        let strings = |v: &serde_json::Value| -> Vec<String> {
                            v.as_array()
                                .unwrap()
                                .iter()
                                .map(|s| s.as_str().unwrap().to_string())
                                .collect()
                        };
                        // the order RecordDump.java sets them in
                        if let Some(v) = changes.get("dueDate") {
                            u.due_date = v.as_str().unwrap().to_string();
                            u.changed_attributes.push("dueDate".into());
                        }
                        if let Some(v) = changes.get("followUpDate") {
                            u.follow_up_date = v.as_str().unwrap().to_string();
                            u.changed_attributes.push("followUpDate".into());
                        }
                        if let Some(v) = changes.get("priority") {
                            u.priority = v.as_i64().unwrap() as i32;
                            u.changed_attributes.push("priority".into());
                        }
                        if let Some(v) = changes.get("candidateGroups") {
                            u.candidate_groups = strings(v);
                            u.changed_attributes.push("candidateGroupsList".into());
                        }
                        if let Some(v) = changes.get("candidateUsers") {
                            u.candidate_users = strings(v);
                            u.changed_attributes.push("candidateUsersList".into());
                        }
                        h.user_task(key, Intent::Update, u);
                    }
                    other => panic!("unknown user task step {other}"),
                }
            }
            other => panic!("unknown step {other}"),
        }
    }
    let element_ids: std::collections::HashMap<i64, &str> = h
        .log
        .iter()
        .filter_map(|r| match &r.value {
            RecordValue::ProcessInstance(p) => Some((r.key, p.element_id.as_str())),
            _ => None,
        })
        .collect();
    let lines = h
        .log
        .iter()
        .filter(|r| shown(r))
        .map(|r| match &r.value {
            RecordValue::Variable(v) if scopes => {
                let scope = element_ids.get(&v.scope_key).copied().unwrap_or("?");
                format!("{} @{scope}", line(r))
            }
            _ => line(r),
        })
        .collect();
    if std::env::var_os("ANCHOR_SKIP_CHECKS").is_none() {
        h.assert_state_consistent();
        h.assert_replay_matches();
    }
    lines
}

/// Records RecordDump.java prints; deployments, process records and process instance batches
/// are left out on both sides.
fn shown(r: &Record) -> bool {
    !matches!(
        r.value,
        RecordValue::Deployment(_) | RecordValue::Process(_) | RecordValue::ProcessInstanceBatch(_)
    )
}

/// A line without trailing blanks, and with the keys that rejection messages quote replaced
/// by `<key>`: Zeebe's test engine hands out keys for records Zest does not write (identity
/// setup), so the same entity has a different key on each side.
fn normalize(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line.trim_end();
    while let Some(start) = rest.find(['\'', '`']) {
        let (head, tail) = rest.split_at(start + 1);
        out.push_str(head);
        let digits = tail.chars().take_while(char::is_ascii_digit).count();
        if digits >= 16 && tail[digits..].starts_with(['\'', '`']) {
            out.push_str("<key>");
            rest = &tail[digits..];
        } else {
            rest = tail;
        }
    }
    out.push_str(rest);
    sort_context_keys(sort_ad_hoc_elements(out))
}

/// Writes the value of a VARIABLE record with the keys of its contexts sorted: Zeebe keeps a
/// FEEL context's entries in a hash map's order (FEEL-scala), Zest in the order they were
/// written; key order carries no meaning in JSON.
fn sort_context_keys(line: String) -> String {
    let Some(rest) = line.strip_prefix("E VARIABLE ") else {
        return line;
    };
    let Some((head, value)) = rest.split_once('=') else {
        return line;
    };
    let Ok(parsed) = serde_json::from_str::<serde_json::Value>(value) else {
        return line;
    };
    fn sorted(v: serde_json::Value) -> serde_json::Value {
        match v {
            serde_json::Value::Object(map) => {
                let mut entries: Vec<_> = map.into_iter().collect();
                entries.sort_by(|a, b| a.0.cmp(&b.0));
                serde_json::Value::Object(
                    entries.into_iter().map(|(k, v)| (k, sorted(v))).collect(),
                )
            }
            serde_json::Value::Array(items) => {
                serde_json::Value::Array(items.into_iter().map(sorted).collect())
            }
            other => other,
        }
    }
    format!("E VARIABLE {head}={}", sorted(parsed))
}

/// Sorts the entries of an `adHocSubProcessElements` variable by element id: Zeebe lists them
/// in the order of a hash map filled in an order that changes from run to run (its model
/// API collects the elements per type through a HashSet of types); Zest in document order.
fn sort_ad_hoc_elements(line: String) -> String {
    let Some(start) = line.find("adHocSubProcessElements=") else {
        return line;
    };
    let json_start = start + "adHocSubProcessElements=".len();
    let json_end = line[json_start..]
        .find(" @")
        .map_or(line.len(), |i| json_start + i);
    let Ok(serde_json::Value::Array(mut entries)) =
        serde_json::from_str::<serde_json::Value>(&line[json_start..json_end])
    else {
        return line;
    };
    entries.sort_by(|a, b| a["elementId"].as_str().cmp(&b["elementId"].as_str()));
    format!(
        "{}{}{}",
        &line[..json_start],
        serde_json::Value::Array(entries),
        &line[json_end..]
    )
}

/// Sorts each run of DECISION CREATED (and DELETED) lines: Zeebe writes a graph's decisions in the order of a
/// hash map (neither document nor id order), Zest in document order.
fn sort_decisions(mut lines: Vec<String>) -> Vec<String> {
    for prefix in ["E DECISION CREATED ", "E DECISION DELETED "] {
        lines = sort_runs(lines, prefix);
    }
    lines
}

/// Sorts each run of consecutive lines starting with `prefix`.
fn sort_runs(mut lines: Vec<String>, prefix: &str) -> Vec<String> {
    let is_decision = |l: &String| l.starts_with(prefix);
    let mut i = 0;
    while i < lines.len() {
        let run = lines[i..].iter().take_while(|l| is_decision(l)).count();
        lines[i..i + run].sort();
        i += run.max(1);
    }
    lines
}

/// Splits a step line into words; a JSON argument in braces may contain spaces.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line.trim();
    while !rest.is_empty() {
        if rest.starts_with('{') {
            out.push(rest.to_string());
            break;
        }
        let end = rest.find(' ').unwrap_or(rest.len());
        out.push(rest[..end].to_string());
        rest = rest[end..].trim_start();
    }
    out
}

#[test]
fn record_streams_match_zeebe() {
    let dir = anchor_dir().join("scenarios");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "steps"))
        .collect();
    names.sort();
    // ANCHOR=name[,name] runs only those scenarios (while a model is being worked on);
    // ANCHOR_SKIP_CHECKS=1 leaves out the state checks, to see the records of a broken run
    if let Ok(only) = std::env::var("ANCHOR") {
        let only: Vec<&str> = only.split(',').collect();
        names.retain(|p| only.iter().any(|o| p.file_stem().is_some_and(|s| s == *o)));
    }
    assert!(!names.is_empty(), "no scenarios in {}", dir.display());
    let mut failures = Vec::new();
    for path in &names {
        let steps: Vec<Vec<String>> = std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
            .map(words)
            .collect();
        let expected_path = path.with_extension("zeebe");
        let expected: Vec<String> = std::fs::read_to_string(&expected_path)
            .unwrap_or_else(|e| panic!("{}: {e}", expected_path.display()))
            .lines()
            .map(normalize)
            .collect();
        let expected = sort_decisions(expected);
        // a multi-line message (FEEL warnings) is several lines in Zeebe's dump, one that
        // ends with a line break is followed by an empty one
        let actual = sort_decisions(
            run(&steps)
                .iter()
                .flat_map(|l| l.split('\n'))
                .map(normalize)
                .collect(),
        );
        if actual != expected {
            let name = path.file_stem().unwrap().to_string_lossy();
            let out = std::env::temp_dir().join(format!("zest-anchor-{name}.zest"));
            std::fs::write(&out, actual.join("\n") + "\n").unwrap();
            failures.push(format!(
                "{name}: Zest's records differ from Zeebe's; see diff {} {}",
                expected_path.display(),
                out.display()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
