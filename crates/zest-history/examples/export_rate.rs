//! How fast the history store takes one-task instances: each instance's records as the engine
//! writes them (process, start event, task, job, end event, its variables), exported in batches
//! of `BATCH` instances, as a partition's exporter does under load.
//!
//! `cargo run --release -p zest-history --example export_rate [instances] [batch] [variables]`
//! (variables per instance: 1 by default; 30 is the bench's typical payload). With
//! `ZEST_HISTORY_URL=postgres://...` the store is that PostgreSQL database (its schema is
//! emptied first: give it one of its own, `?options=-c%20search_path%3Dbench`).
//! `ZEST_HISTORY_CACHE_MB` sets SQLite's page caches (4 MiB by default). With
//! `EXPORT_RATE_UNIQUE=1` every variable's value is its instance's own (the worst case of the
//! value postings: one a variable) instead of the same payload in every instance (as the
//! bench's typical payload is).

use std::time::Instant;

mod common;
use common::{element, record};

use zest_history::History;
use zest_protocol::{BpmnElementType, Intent, JobRecord, Record, RecordValue, VariableRecord};

/// One one-task instance's events, from creation to completion (as two batches would hold
/// them: created and waiting, then the job completed).
fn instance(pi: i64, variables: i64, pos: &mut u64, out: &mut Vec<Record>) {
    let mut push = |key, intent, value| {
        *pos += 1;
        out.push(record(*pos, key, intent, value));
    };
    let job = || {
        RecordValue::Job(Box::new(JobRecord {
            job_type: "benchmark-task".into(),
            retries: 3,
            element_id: "task".into(),
            element_instance_key: pi + 3,
            process_instance_key: pi,
            bpmn_process_id: "benchmark".into(),
            process_definition_key: 1,
            tenant_id: "<default>".into(),
            ..Default::default()
        }))
    };
    // the first variable is the business key; more are like the typical payload's: short
    // numbers and strings of about 40 characters
    let unique = std::env::var("EXPORT_RATE_UNIQUE").is_ok_and(|v| v == "1");
    let var = |j: i64| {
        let n = if unique { pi * 100 + j } else { j };
        let (name, value) = match j {
            0 => (
                "businessKey".to_string(),
                format!("\"order-{}\"", 4711 + n - j),
            ),
            j if j % 3 == 0 => (
                format!("var{j}"),
                format!("\"a value of about forty characters {n:04}\""),
            ),
            j => (format!("var{j}"), (n * 7).to_string()),
        };
        RecordValue::Variable(VariableRecord {
            name,
            value,
            scope_key: pi,
            process_instance_key: pi,
            process_definition_key: 1,
            bpmn_process_id: "benchmark".into(),
            tenant_id: "<default>".into(),
        })
    };
    let p = || element(pi, "benchmark", BpmnElementType::Process);
    for j in 0..variables {
        push(pi + 10 + j, Intent::Created, var(j));
    }
    push(pi, Intent::ElementActivating, p());
    push(pi, Intent::ElementActivated, p());
    let start = || element(pi, "start", BpmnElementType::StartEvent);
    push(pi + 2, Intent::ElementActivating, start());
    push(pi + 2, Intent::ElementCompleted, start());
    push(
        pi + 5,
        Intent::SequenceFlowTaken,
        element(pi, "f1", BpmnElementType::SequenceFlow),
    );
    push(
        pi + 3,
        Intent::ElementActivating,
        element(pi, "task", BpmnElementType::ServiceTask),
    );
    push(pi + 4, Intent::Created, job());
    push(pi + 4, Intent::Completed, job());
    push(
        pi + 3,
        Intent::ElementCompleted,
        element(pi, "task", BpmnElementType::ServiceTask),
    );
    push(
        pi + 6,
        Intent::SequenceFlowTaken,
        element(pi, "f2", BpmnElementType::SequenceFlow),
    );
    push(
        pi + 7,
        Intent::ElementActivating,
        element(pi, "end", BpmnElementType::EndEvent),
    );
    push(
        pi + 7,
        Intent::ElementCompleted,
        element(pi, "end", BpmnElementType::EndEvent),
    );
    push(pi, Intent::ElementCompleted, p());
}

fn main() {
    let mut args = std::env::args().skip(1);
    let instances: i64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(200_000);
    let batch: i64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(100);
    // variables per instance: 1 (a business key), or 30 for the typical payload's
    let variables: i64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(1);
    let dir = std::env::temp_dir().join(format!("zest-export-rate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let url = std::env::var("ZEST_HISTORY_URL")
        .ok()
        .filter(|u| !u.is_empty());
    let h = match &url {
        Some(url) => {
            let h = History::open_postgres(url).unwrap();
            empty(&h);
            h
        }
        None => {
            // the page caches (writer and readers), as `--memory-mb`'s share gives them
            let mib: u64 = std::env::var("ZEST_HISTORY_CACHE_MB")
                .ok()
                .and_then(|m| m.parse().ok())
                .unwrap_or(4);
            History::open(&dir.join("history.sqlite"), mib << 20).unwrap()
        }
    };
    let (mut pos, mut index, mut records) = (0u64, 0u64, 0usize);
    let start = Instant::now();
    let mut n = 0;
    while n < instances {
        let mut batch_records = Vec::new();
        for i in n..(n + batch).min(instances) {
            instance(
                1000 + i * (10 + variables),
                variables,
                &mut pos,
                &mut batch_records,
            );
        }
        n += batch;
        index += 1;
        records += batch_records.len();
        h.export(1, &batch_records, index).unwrap();
    }
    let s = start.elapsed().as_secs_f64();
    let bytes = if url.is_some() { postgres_bytes(&h) } else { 0 }
        + std::fs::metadata(dir.join("history.sqlite"))
            .map(|m| m.len())
            .unwrap_or(0)
        + std::fs::metadata(dir.join("history.sqlite-wal"))
            .map(|m| m.len())
            .unwrap_or(0);
    println!(
        "{instances} one-task instances with {variables} variables ({records} records) in batches of {batch}: {s:.2} s, \
         {:.0} instances/s, {:.0} records/s; {:.0} bytes per instance on disk",
        instances as f64 / s,
        records as f64 / s,
        bytes as f64 / instances as f64
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Empties the PostgreSQL store's tables (a run before this one left its rows).
fn empty(h: &History) {
    h.read(|c| {
        let tables: Vec<String> = c.query(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() \
             AND tablename <> 'refinery_schema_history'",
            &[],
            |r| r.get(0),
        )?;
        for t in tables {
            c.batch(&format!("TRUNCATE {t}"))?;
        }
        Ok(())
    })
    .unwrap();
}

/// The bytes of the PostgreSQL store's tables and indexes (after a VACUUM, so the count is of
/// what the rows take).
fn postgres_bytes(h: &History) -> u64 {
    h.read(|c| {
        c.batch("VACUUM")?;
        Ok(c.query_one(
            "SELECT CAST(COALESCE(SUM(pg_total_relation_size(quote_ident(tablename))), 0) \
             AS BIGINT) FROM pg_tables WHERE schemaname = current_schema()",
            &[],
            |r| r.get::<_, i64>(0),
        )?)
    })
    .unwrap() as u64
}
