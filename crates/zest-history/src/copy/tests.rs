use serde_json::json;

use super::*;
use crate::tests::{event, sample_at};
use crate::{resources, Conditions};
use zest_protocol::{Intent, RecordValue};

/// A SQLite store (the copy is SQLite's alone, whatever store the other tests run on).
fn open(name: &str) -> (std::path::PathBuf, History) {
    let dir = std::env::temp_dir().join(format!("zest-copy-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let h = History::open(&dir.join("history.sqlite"), 4 << 20).unwrap();
    (dir, h)
}

/// Every chunk of `source` in order (with the largest chunk's row count).
fn chunks(source: &Source) -> Vec<Chunk> {
    let mut out = Vec::new();
    let mut at = Cursor::default();
    loop {
        let chunk = source.chunk(&at).unwrap();
        let next = chunk.next.clone();
        if !chunk.rows.is_empty() {
            out.push(chunk);
        }
        match next {
            Some(n) => at = n,
            None => return out,
        }
    }
}

/// Every row of `partition` in `h`, by table (what a copy of it sends).
fn dump(h: &History, partition: u32) -> Vec<(String, Vec<Vec<Cell>>)> {
    let mut out: Vec<(String, Vec<Vec<Cell>>)> = Vec::new();
    for c in chunks(&h.copy_source(partition).unwrap()) {
        match out.last_mut() {
            Some((t, rows)) if *t == c.table => rows.extend(c.rows),
            _ => out.push((c.table, c.rows)),
        }
    }
    out
}

/// Copies `partition` from `from` into `to` as a node does, `stop_after` chunks at most (None:
/// all, then finished).
fn copy(from: &History, to: &History, partition: u32, stop_after: Option<usize>) {
    let source = from.copy_source(partition).unwrap();
    to.copy_begin(partition).unwrap();
    let all = chunks(&source);
    for c in all.iter().take(stop_after.unwrap_or(usize::MAX)) {
        to.copy_write(partition, c).unwrap();
    }
    if stop_after.is_none() {
        to.copy_finish(partition, source.end()).unwrap();
    }
}

fn instances(h: &History) -> serde_json::Value {
    h.search(
        &resources::PROCESS_INSTANCES,
        &json!({"page": {"limit": 10000}}),
        Conditions::default(),
    )
    .unwrap()["page"]["totalItems"]
        .clone()
}

#[test]
fn a_copy_gives_the_replica_the_senders_rows_of_the_partition_and_its_position() {
    let (_d1, leader) = open("leader");
    let (_d2, replica) = open("replica");
    // 1,200 instances: more element instances and variables than one chunk holds; jobs of
    // 101 of them (their counters are the partition's too), one among the replica's own rows
    let mut one = sample_at(1200, 1);
    let job = |i: i64| {
        let pi = (1 << 51) + 100 + i * 10;
        let job = RecordValue::Job(Box::new(crate::tests::job(pi)));
        event(0, pi + 5, Intent::Created, job)
    };
    one.insert(50, job(0));
    one.extend((1..=100).map(job));
    for (i, r) in one.iter_mut().enumerate() {
        r.position = i as u64 + 1;
    }
    let two = sample_at(5, 2);
    let last = one.last().unwrap().position;
    leader.export(1, &one, 500).unwrap();
    leader.export(2, &two, 40).unwrap();
    // the replica exported the start of partition 1, then a snapshot skipped the rest
    replica.export(1, &one[..100], 20).unwrap();
    replica.export(2, &two, 40).unwrap();
    let partition_two = dump(&replica, 2);
    replica.skip_to(1, last - 10, 480).unwrap();
    assert!(
        replica.copy_source(1).is_err(),
        "a store with a gap is no source"
    );

    let source = leader.copy_source(1).unwrap();
    let sent = chunks(&source);
    assert!(sent.iter().all(|c| c.rows.len() <= CHUNK_ROWS));
    assert!(
        sent.iter().any(|c| c.rows.len() == CHUNK_ROWS),
        "large tables go in several chunks"
    );
    copy(&leader, &replica, 1, None);

    assert_eq!(dump(&replica, 1), dump(&leader, 1));
    let jobs = dump(&leader, 1);
    let counted = jobs.iter().find(|(t, _)| t == "job_count");
    assert!(
        counted.is_some_and(|(_, rows)| !rows.is_empty()),
        "{jobs:?}"
    );
    assert_eq!(
        dump(&replica, 2),
        partition_two,
        "other partitions are left alone"
    );
    let at = replica.position(1).unwrap();
    assert_eq!(
        at,
        Exported {
            position: last,
            next_index: 500,
            gap_to: 0
        }
    );
    assert_eq!(instances(&replica), instances(&leader));
    assert_eq!(instances(&replica), 1205);
    let gaps: i64 = replica
        .read(|c| {
            Ok(c.query_one(
                "SELECT count(*) FROM export_position WHERE gap_to > 0",
                &[],
                |r| r.get(0),
            )?)
        })
        .unwrap();
    assert_eq!(gaps, 0, "the gap is closed");
}

#[test]
fn a_copy_cut_off_and_started_again_holds_every_row_once() {
    let (_d1, leader) = open("cut-leader");
    let (_d2, replica) = open("cut-replica");
    let one = sample_at(1200, 1);
    leader.export(1, &one, 500).unwrap();
    replica.export(1, &one[..50], 10).unwrap();
    replica.skip_to(1, 4000, 480).unwrap();
    copy(&leader, &replica, 1, Some(3));
    // cut off: the gap is still marked, and export stands where the skip left it
    let at = replica.position(1).unwrap();
    assert!(at.gap_to > 0, "{at:?}");
    assert_eq!(at.next_index, 480);
    copy(&leader, &replica, 1, None);
    assert_eq!(dump(&replica, 1), dump(&leader, 1));
    assert_eq!(replica.position(1).unwrap().gap_to, 0);
}

#[test]
fn a_copy_reflects_the_position_it_was_opened_at() {
    let (_d1, leader) = open("consistent-leader");
    let (_d2, replica) = open("consistent-replica");
    let one = sample_at(40, 1);
    let (before, after) = one.split_at(60);
    leader.export(1, before, 30).unwrap();
    let source = leader.copy_source(1).unwrap();
    let expected = dump(&leader, 1);
    // the leader's exporter goes on while the copy is read
    leader.export(1, after, 60).unwrap();
    replica.skip_to(1, 1, 2).unwrap();
    replica.copy_begin(1).unwrap();
    for c in chunks(&source) {
        replica.copy_write(1, &c).unwrap();
    }
    replica.copy_finish(1, source.end()).unwrap();
    assert_eq!(source.end().position, before.last().unwrap().position);
    assert_eq!(dump(&replica, 1), expected);
    assert_ne!(dump(&leader, 1), expected, "the leader moved on");
}

#[test]
fn chunks_of_another_partition_or_an_unknown_table_are_refused() {
    let (_d1, leader) = open("refuse-leader");
    let (_d2, replica) = open("refuse-replica");
    leader.export(2, &sample_at(3, 2), 10).unwrap();
    let sent = chunks(&leader.copy_source(2).unwrap());
    let instances = sent.iter().find(|c| c.table == "process_instance").unwrap();
    assert!(
        replica.copy_write(1, instances).is_err(),
        "partition 2's rows"
    );
    let mut unknown = instances.clone();
    unknown.table = "sqlite_master".into();
    assert!(replica.copy_write(2, &unknown).is_err());
    let mut column = instances.clone();
    column.columns[1] = "key) VALUES (1); DROP TABLE job; --".into();
    assert!(replica.copy_write(2, &column).is_err());
    replica.copy_write(2, instances).unwrap();
}

#[test]
fn every_history_table_is_copied() {
    let (_d, h) = open("tables");
    let tables: Vec<String> = h
        .read(|c| {
            Ok(c.query(
                "SELECT name FROM sqlite_master WHERE type = 'table' \
                 AND name NOT LIKE 'sqlite_%' AND name NOT IN \
                 ('export_position', 'refinery_schema_history', \
                 'variable_posting', 'posting_bucket', 'posting_fill') ORDER BY name",
                &[],
                |r| r.get(0),
            )?)
        })
        .unwrap();
    // the value postings are rebuilt from the copied variables (postings::add_rows)
    let mut copied: Vec<String> = TABLES.iter().map(|t| t.name.to_string()).collect();
    copied.sort();
    assert_eq!(
        copied, tables,
        "a new table needs its place in copy::TABLES"
    );
}
