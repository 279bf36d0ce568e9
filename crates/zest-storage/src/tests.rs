//! Storage tests: durability across reopen and kills, format checks, scans from seek hints,
//! and moving a whole state in chunks.

use super::*;
use zest_engine::state::{Ks, StateRead, Txn};

#[test]
fn state_and_log_survive_reopen() {
    let dir = std::env::temp_dir().join(format!("zest-storage-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    {
        let store = Store::open(&dir, &StoreConfig::default()).unwrap();
        let p = store.partition(1).unwrap();
        let mut txn = Txn::new(&p);
        txn.put_raw(Ks::Jobs, vec![1], vec![42]);
        p.commit_state(txn.into_writes(), [(&b"applied"[..], vec![7])])
            .unwrap();
        p.log_append(vec![(1, vec![1]), (2, vec![2]), (3, vec![3])], true)
            .unwrap();
        p.log_truncate(3).unwrap();
        p.log_purge(1, ("last_purged", b"1".to_vec())).unwrap();
        store.sync().unwrap();
    }
    let store = Store::open(&dir, &StoreConfig::default()).unwrap();
    let p = store.partition(1).unwrap();
    assert_eq!(p.get(Ks::Jobs, &[1]), Some(vec![42]));
    assert_eq!(p.sm_get(b"applied").unwrap(), Some(vec![7]));
    // the purge gives back whole segments only: entry 1 shares its segment with entry 2
    assert_eq!(p.log_range(2, 10).unwrap(), vec![(2, vec![2])]);
    assert_eq!(p.log_first_index().unwrap(), Some(1));
    assert_eq!(p.raft_get("last_purged").unwrap(), Some(b"1".to_vec()));
    assert_eq!(p.log_last().unwrap().map(|(i, _)| i), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A process killed right after an append without fsync (no destructors run, as with
/// SIGKILL) must not lose it: the append reached the OS, which outlives the process.
#[test]
fn appends_without_fsync_survive_a_killed_process() {
    const CHILD: &str = "ZEST_STORAGE_TEST_KILLED_CHILD";
    if let Some(dir) = std::env::var_os(CHILD) {
        let store = Store::open(std::path::Path::new(&dir), &StoreConfig::default()).unwrap();
        let p = store.partition(1).unwrap();
        p.log_append(vec![(1, vec![1; 100]), (2, vec![2; 100])], false)
            .unwrap();
        std::process::abort();
    }
    let dir = std::env::temp_dir().join(format!("zest-killed-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "tests::appends_without_fsync_survive_a_killed_process",
            "--test-threads=1",
        ])
        .env(CHILD, &dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(!status.success(), "the child process should have aborted");
    let store = Store::open(&dir, &StoreConfig::default()).unwrap();
    let p = store.partition(1).unwrap();
    assert_eq!(
        p.log_range(0, 10).unwrap(),
        vec![(1, vec![1; 100]), (2, vec![2; 100])]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_data_directory_of_another_format_is_refused_with_a_clear_error() {
    let dir = std::env::temp_dir().join(format!("zest-format-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    drop(Store::open(&dir, &StoreConfig::default()).unwrap());
    let written = std::fs::read_to_string(dir.join("FORMAT")).unwrap();
    assert_eq!(written.trim(), FORMAT_VERSION.to_string());
    // reopening the same format works
    drop(Store::open(&dir, &StoreConfig::default()).unwrap());
    // a database from before the FORMAT file (one fjall database, `db/`): format 1
    std::fs::remove_file(dir.join("FORMAT")).unwrap();
    std::fs::create_dir_all(dir.join("db")).unwrap();
    let err = Store::open(&dir, &StoreConfig::default()).err().unwrap();
    assert!(err.to_string().contains("data format 1"), "{err}");
    assert!(err.to_string().contains("empty data directory"), "{err}");
    std::fs::write(dir.join("FORMAT"), "99\n").unwrap();
    let err = Store::open(&dir, &StoreConfig::default()).err().unwrap();
    assert!(err.to_string().contains("data format 99"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

fn scan(p: &PartitionStore, ks: Ks, prefix: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    p.scan_prefix(ks, prefix, &mut |k, _| {
        out.push(k.to_vec());
        true
    });
    out
}

fn write(p: &PartitionStore, ks: Ks, puts: &[&[u8]], dels: &[&[u8]]) {
    let mut txn = Txn::new(p);
    for k in puts {
        txn.put_raw(ks, k.to_vec(), k.to_vec());
    }
    for k in dels {
        txn.delete(ks, k.to_vec());
    }
    p.commit_state(txn.into_writes(), []).unwrap();
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("zest-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Scans of queue-like keyspaces start from seek hints; whatever the order of inserts, deletes
/// and scans, they see exactly the live keys, across a reopen too.
#[test]
fn queue_scans_from_hints_see_exactly_the_live_keys() {
    let dir = temp_dir("hints-test");
    {
        let store = Store::open(&dir, &StoreConfig::default()).unwrap();
        let p = store.partition(1).unwrap();
        write(&p, Ks::JobsActivatable, &[b"a1", b"a2", b"b1", b"a3"], &[]);
        write(&p, Ks::JobsActivatable, &[], &[b"a2"]);
        assert_eq!(scan(&p, Ks::JobsActivatable, b"a"), [b"a1", b"a3"]);
        // the front is consumed; the hint moves past it
        write(&p, Ks::JobsActivatable, &[], &[b"a1", b"a3"]);
        assert!(scan(&p, Ks::JobsActivatable, b"a").is_empty());
        assert!(scan(&p, Ks::JobsActivatable, b"a").is_empty());
        // an insert below every earlier key is still found
        write(&p, Ks::JobsActivatable, &[b"a0"], &[]);
        assert_eq!(scan(&p, Ks::JobsActivatable, b"a"), [b"a0"]);
        write(&p, Ks::JobsActivatable, &[b"a5"], &[]);
        assert_eq!(scan(&p, Ks::JobsActivatable, b"a"), [b"a0", b"a5"]);
        assert_eq!(p.get(Ks::JobsActivatable, b"b1"), Some(b"b1".to_vec()));
        assert_eq!(p.get(Ks::JobsActivatable, b"a2"), None);
        store.sync().unwrap();
    }
    let store = Store::open(&dir, &StoreConfig::default()).unwrap();
    let p = store.partition(1).unwrap();
    assert_eq!(scan(&p, Ks::JobsActivatable, b"a"), [b"a0", b"a5"]);
    assert_eq!(scan(&p, Ks::JobsActivatable, b""), [b"a0", b"a5", b"b1"]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A prefix scan ends where the prefix does (the range is bounded, not open), also for
/// prefixes that end in 0xFF bytes, and passes over deleted keys of the prefix.
#[test]
fn prefix_scans_see_exactly_their_prefix() {
    let dir = temp_dir("prefix-scan");
    let store = Store::open(&dir, &StoreConfig::default()).unwrap();
    let p = store.partition(1).unwrap();
    let ks = Ks::MessageSubscriptionNames;
    let keys: [&[u8]; 7] = [
        b"a",
        b"a\x00",
        b"a\xff",
        b"a\xff\xff",
        b"a\xff\xffz",
        b"b",
        b"\xff\xff",
    ];
    write(&p, ks, &keys, &[]);
    write(&p, ks, &[], &[b"a\xff\xff"]);
    assert_eq!(scan(&p, ks, b"a\xff"), [&b"a\xff"[..], b"a\xff\xffz"]);
    assert_eq!(scan(&p, ks, b"a").len(), 4);
    assert_eq!(scan(&p, ks, b"\xff"), [b"\xff\xff"]);
    assert_eq!(scan(&p, ks, b"").len(), 6);
    assert!(scan(&p, ks, b"c").is_empty());
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Randomised: a queue keyspace scanned from hints agrees with a model after every step.
#[test]
fn queue_scans_agree_with_a_model_under_random_operations() {
    let dir = temp_dir("hints-model-test");
    let store = Store::open(&dir, &StoreConfig::default()).unwrap();
    let p = store.partition(1).unwrap();
    let mut model = std::collections::BTreeSet::new();
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..3000 {
        let key = vec![b"abc"[(next() % 3) as usize], (next() % 40) as u8];
        match next() % 3 {
            0 => {
                write(&p, Ks::TimerDueDates, &[&key], &[]);
                model.insert(key);
            }
            1 => {
                write(&p, Ks::TimerDueDates, &[], &[&key]);
                model.remove(&key);
            }
            _ => {
                let prefix: &[u8] = if next() % 4 == 0 { b"" } else { &key[..1] };
                let want: Vec<Vec<u8>> = model
                    .iter()
                    .filter(|k| k.starts_with(prefix))
                    .cloned()
                    .collect();
                assert_eq!(scan(&p, Ks::TimerDueDates, prefix), want);
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn all_state(p: &PartitionStore) -> Vec<(Ks, Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    for ks in Ks::ALL {
        p.scan_prefix(ks, b"", &mut |k, v| {
            out.push((ks, k.to_vec(), v.to_vec()));
            true
        });
    }
    out
}

/// A whole state moves in chunks of bounded size into a new generation of another store,
/// which switches to it durably; a reopen finds it, and the replaced generation is gone.
#[test]
fn a_state_moves_in_bounded_chunks_and_is_installed_durably() {
    let from_dir = temp_dir("transfer-from");
    let to_dir = temp_dir("transfer-to");
    let from = Store::open(&from_dir, &StoreConfig::default()).unwrap();
    let src = from.partition(1).unwrap();
    let keys: Vec<Vec<u8>> = (0..2000u32).map(|i| i.to_be_bytes().to_vec()).collect();
    let refs: Vec<&[u8]> = keys.iter().map(|k| k.as_slice()).collect();
    write(&src, Ks::Jobs, &refs, &[]);
    write(&src, Ks::TimerDueDates, &refs[..10], &[]);
    src.commit_state(Default::default(), [(&b"applied"[..], b"42".to_vec())])
        .unwrap();
    let view = src.view().unwrap();
    // writes after the view are not in it
    write(&src, Ks::Jobs, &[b"later"], &[]);
    let expected: Vec<_> = all_state(&src)
        .into_iter()
        .filter(|(_, k, _)| k != b"later")
        .collect();

    {
        let to = Store::open(&to_dir, &StoreConfig::default()).unwrap();
        let dst = to.partition(1).unwrap();
        write(&dst, Ks::Jobs, &[b"old"], &[]);
        let mut staging = dst.begin_install().unwrap();
        let mut cursor = ChunkCursor::default();
        let mut chunks = 0;
        while let Some((chunk, next)) = view.next_chunk(&cursor, 1024).unwrap() {
            assert!(chunk.len() < 1024 + 64, "chunk of {} bytes", chunk.len());
            staging.write_chunk(&chunk).unwrap();
            cursor = next;
            chunks += 1;
        }
        assert!(chunks > 10, "{chunks} chunks");
        assert_eq!(staging.entries(), 2011);
        // nothing is seen before the switch
        assert_eq!(dst.get(Ks::Jobs, b"old"), Some(b"old".to_vec()));
        dst.finish_install(staging, &[(b"membership", b"m".to_vec())])
            .unwrap();
        assert_eq!(all_state(&dst), expected);
        assert_eq!(dst.sm_get(b"applied").unwrap(), Some(b"42".to_vec()));
        assert_eq!(dst.sm_get(b"membership").unwrap(), Some(b"m".to_vec()));
    }
    let to = Store::open(&to_dir, &StoreConfig::default()).unwrap();
    let dst = to.partition(1).unwrap();
    assert_eq!(all_state(&dst), expected);
    assert_eq!(dst.get(Ks::Jobs, b"old"), None);
    // one generation's keyspaces and the generation marker, nothing of the replaced one
    let names: Vec<String> = to
        .state_db
        .list_keyspace_names()
        .iter()
        .map(|n| n.to_string())
        .collect();
    assert!(
        names.iter().all(|n| !n.starts_with("p1_") || n == "p1_gen"),
        "{names:?}"
    );
    let _ = std::fs::remove_dir_all(&from_dir);
    let _ = std::fs::remove_dir_all(&to_dir);
}

/// An installation interrupted before its switch leaves the old state in place; its
/// keyspaces are deleted when the partition opens again.
#[test]
fn an_interrupted_installation_leaves_the_old_state() {
    let dir = temp_dir("interrupted-install");
    {
        let store = Store::open(&dir, &StoreConfig::default()).unwrap();
        let p = store.partition(1).unwrap();
        write(&p, Ks::Jobs, &[b"kept"], &[]);
        let view = p.view().unwrap();
        let mut staging = p.begin_install().unwrap();
        let (chunk, _) = view
            .next_chunk(&ChunkCursor::default(), 1 << 20)
            .unwrap()
            .unwrap();
        staging.write_chunk(&chunk).unwrap();
        staging.write_chunk(&chunk).unwrap();
        store.sync().unwrap();
        drop(staging);
    }
    let store = Store::open(&dir, &StoreConfig::default()).unwrap();
    let p = store.partition(1).unwrap();
    assert_eq!(
        all_state(&p),
        [(Ks::Jobs, b"kept".to_vec(), b"kept".to_vec())]
    );
    let names: Vec<String> = store
        .state_db
        .list_keyspace_names()
        .iter()
        .map(|n| n.to_string())
        .collect();
    assert!(names.iter().all(|n| !n.starts_with("p1g")), "{names:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Two installations that overlap (a snapshot from a deposed leader still arriving while the
/// new leader's begins) write generations of their own: the one installed holds exactly what
/// was staged into it, whichever finishes first.
#[test]
fn overlapping_installations_do_not_mix() {
    let dir = temp_dir("overlapping-install");
    let store = Store::open(&dir, &StoreConfig::default()).unwrap();
    let p = store.partition(1).unwrap();
    let chunk_of = |key: &[u8]| {
        let other = store.partition(2).unwrap();
        write(&other, Ks::Jobs, &[key], &[]);
        let (chunk, _) = other
            .view()
            .unwrap()
            .next_chunk(&ChunkCursor::default(), 1 << 20)
            .unwrap()
            .unwrap();
        write(&other, Ks::Jobs, &[], &[key]);
        chunk
    };
    let (old, new) = (chunk_of(b"old"), chunk_of(b"new"));
    let mut first = p.begin_install().unwrap();
    first.write_chunk(&old).unwrap();
    let mut second = p.begin_install().unwrap();
    first.write_chunk(&old).unwrap();
    second.write_chunk(&new).unwrap();
    p.finish_install(second, &[]).unwrap();
    assert_eq!(
        all_state(&p),
        [(Ks::Jobs, b"new".to_vec(), b"new".to_vec())]
    );
    // the first goes on and is installed after it
    first.write_chunk(&old).unwrap();
    p.finish_install(first, &[]).unwrap();
    assert_eq!(
        all_state(&p),
        [(Ks::Jobs, b"old".to_vec(), b"old".to_vec())]
    );
    drop(p);
    drop(store);
    // and it is what the partition holds after a restart
    let store = Store::open(&dir, &StoreConfig::default()).unwrap();
    let p = store.partition(1).unwrap();
    assert_eq!(
        all_state(&p),
        [(Ks::Jobs, b"old".to_vec(), b"old".to_vec())]
    );
    drop(p);
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A format 6 directory (the log in the fjall keyspace `p1_log`) is upgraded on open: the
/// entries move into the journal, the keyspace is deleted, FORMAT says 7; the state is kept.
#[test]
fn a_format_6_directory_is_upgraded_on_open() {
    let dir = temp_dir("upgrade-6");
    {
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("FORMAT"), "6\n").unwrap();
        let log = fjall::Database::builder(dir.join("log")).open().unwrap();
        let ks = log
            .keyspace("p1_log", fjall::KeyspaceCreateOptions::default)
            .unwrap();
        for i in 5..2005u64 {
            ks.insert(i.to_be_bytes(), vec![(i % 251) as u8; 64])
                .unwrap();
        }
        log.keyspace("p1_raft", fjall::KeyspaceCreateOptions::default)
            .unwrap()
            .insert("vote", b"v".to_vec())
            .unwrap();
        log.persist(PersistMode::SyncAll).unwrap();
        let state = fjall::Database::builder(dir.join("state")).open().unwrap();
        state
            .keyspace("p1_jobs", fjall::KeyspaceCreateOptions::default)
            .unwrap()
            .insert([1u8], [42u8])
            .unwrap();
        state.persist(PersistMode::SyncAll).unwrap();
    }
    let store = Store::open(&dir, &StoreConfig::default()).unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.join("FORMAT")).unwrap().trim(),
        FORMAT_VERSION.to_string()
    );
    let p = store.partition(1).unwrap();
    let log = p.log_range(0, u64::MAX).unwrap();
    assert_eq!(log.len(), 2000);
    assert_eq!(log[0], (5, vec![5u8; 64]));
    assert_eq!(log[1999], (2004, vec![(2004 % 251) as u8; 64]));
    assert_eq!(p.raft_get("vote").unwrap(), Some(b"v".to_vec()));
    assert_eq!(p.get(Ks::Jobs, &[1]), Some(vec![42]));
    assert!(!store
        .log_db
        .list_keyspace_names()
        .iter()
        .any(|n| n.as_ref() as &str == "p1_log"));
    drop(p);
    drop(store);
    // and it opens again in the current format
    let store = Store::open(&dir, &StoreConfig::default()).unwrap();
    assert_eq!(
        store.partition(1).unwrap().log_last().unwrap().unwrap().0,
        2004
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A format 7 directory's subscriptions by name (tag `n` of `message_subscriptions`) move into
/// their own keyspace on open; the subscriptions stay.
#[test]
fn a_format_7_directory_is_upgraded_on_open() {
    let dir = temp_dir("upgrade-7");
    let name_key = |i: u32| [b"n".as_slice(), b"order\0", &i.to_be_bytes()].concat();
    let sub_key = |i: u32| [b"s".as_slice(), &i.to_be_bytes()].concat();
    {
        let store = Store::open(&dir, &StoreConfig::default()).unwrap();
        let subs = store
            .state_db
            .keyspace(
                "p1_message_subscriptions",
                fjall::KeyspaceCreateOptions::default,
            )
            .unwrap();
        for i in 0..3000u32 {
            subs.insert(name_key(i), []).unwrap();
            subs.insert(sub_key(i), [7u8]).unwrap();
        }
        store.state_db.persist(PersistMode::SyncAll).unwrap();
        drop(subs);
        drop(store);
        std::fs::write(dir.join("FORMAT"), "7\n").unwrap();
    }
    let store = Store::open(&dir, &StoreConfig::default()).unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.join("FORMAT")).unwrap().trim(),
        FORMAT_VERSION.to_string()
    );
    let p = store.partition(1).unwrap();
    assert_eq!(scan(&p, Ks::MessageSubscriptionNames, b"n").len(), 3000);
    assert!(scan(&p, Ks::MessageSubscriptions, b"n").is_empty());
    assert_eq!(scan(&p, Ks::MessageSubscriptions, b"s").len(), 3000);
    assert_eq!(
        p.get(Ks::MessageSubscriptionNames, &name_key(42)),
        Some(vec![])
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_format_8_directory_gets_its_instances_by_version_indexed() {
    use zest_engine::types::ElementInstance;
    let dir = temp_dir("upgrade-8");
    let instance = |key: i64, parent_key: i64, definition: i64| {
        let record = zest_protocol::ProcessInstanceRecord {
            process_definition_key: definition,
            process_instance_key: if parent_key > 0 { 1 } else { key },
            flow_scope_key: parent_key,
            bpmn_element_type: if parent_key > 0 {
                zest_protocol::BpmnElementType::ServiceTask
            } else {
                zest_protocol::BpmnElementType::Process
            },
            bpmn_process_id: "p".into(),
            version: 1,
            element_id: "e".into(),
            bpmn_event_type: zest_protocol::BpmnEventType::Unspecified,
            parent_process_instance_key: -1,
            parent_element_instance_key: -1,
            tenant_id: "<default>".into(),
        };
        let inst = ElementInstance {
            key,
            parent_key,
            state: zest_protocol::Intent::ElementActivated,
            record,
            job_key: -1,
            timer_key: -1,
            active_children: 0,
            active_flows: 0,
            join_tokens: Default::default(),
        };
        zest_protocol::codec::encode(&inst)
    };
    {
        let store = Store::open(&dir, &StoreConfig::default()).unwrap();
        let instances = store
            .state_db
            .keyspace(
                "p1_element_instances",
                fjall::KeyspaceCreateOptions::default,
            )
            .unwrap();
        // 1500 process instances of version 7, each with one task inside
        for i in 0..1500i64 {
            let root = 10 + 2 * i;
            instances
                .insert(root.to_be_bytes(), instance(root, -1, 7))
                .unwrap();
            let task = root + 1;
            instances
                .insert(task.to_be_bytes(), instance(task, root, 7))
                .unwrap();
        }
        store.state_db.persist(PersistMode::SyncAll).unwrap();
        drop(instances);
        drop(store);
        std::fs::write(dir.join("FORMAT"), "8\n").unwrap();
    }
    let store = Store::open(&dir, &StoreConfig::default()).unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.join("FORMAT")).unwrap().trim(),
        "9"
    );
    let p = store.partition(1).unwrap();
    let indexed = scan(&p, Ks::DefinitionInstances, b"i");
    assert_eq!(indexed.len(), 1500, "one entry per process instance");
    // keys are order-preserving: big-endian with the sign bit flipped
    let ordered = |n: i64| ((n as u64) ^ (1 << 63)).to_be_bytes();
    let first = [b"i".as_slice(), &ordered(7), &ordered(10)].concat();
    assert_eq!(indexed[0], first);
    let _ = std::fs::remove_dir_all(&dir);
}

/// fjall bounds each memtable, not their sum: writes spread over many keyspaces, each below
/// its own memtable size, are flushed once all of them together pass the write buffers'
/// share (`bound_write_buffers`).
#[test]
fn write_buffers_stay_within_their_share_across_keyspaces() {
    let dir = temp_dir("write-buffers");
    let config = StoreConfig {
        write_buffer_bytes: 8 << 20,
        ..StoreConfig::default()
    };
    let store = Store::open(&dir, &config).unwrap();
    let limit = store.write_buffer_limit;
    let p = store.partition(1).unwrap();
    // 12 keyspaces x 800 KiB: under each one's memtable size (1 MiB), over the sum's limit
    let value = vec![7u8; 1024];
    for (n, ks) in Ks::ALL.into_iter().skip(1).take(12).enumerate() {
        for chunk in 0..8u32 {
            let mut txn = Txn::new(&p);
            for i in 0..100u32 {
                let key = [
                    (n as u32).to_be_bytes(),
                    chunk.to_be_bytes(),
                    i.to_be_bytes(),
                ]
                .concat();
                txn.put_raw(ks, key, value.clone());
            }
            p.commit_state(txn.into_writes(), []).unwrap();
        }
    }
    // the sealed memtables are written out by fjall's workers
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while store.state_db.write_buffer_size() > limit && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let held = store.state_db.write_buffer_size();
    assert!(
        held <= limit,
        "write buffers hold {held} bytes, over {limit}"
    );
    // and nothing was lost on the way
    assert_eq!(scan(&p, Ks::ALL[5], &[]).len(), 800);
    drop(p);
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Randomised: reads through the young layer agree with a model through creations (keys
/// generated in order, as the engine makes them), updates, deletions, flushes, gets and scans,
/// whatever was flushed when. A reopen without a flush (a crash) finds the state and the
/// applied index of the last flush, consistent with each other: the log replays the rest.
#[test]
fn the_young_layer_agrees_with_a_model_and_a_crash_goes_back_to_the_last_flush() {
    use std::collections::BTreeMap;
    use zest_engine::state::META_MAX_KEY;
    let dir = temp_dir("young-model");
    let ks = Ks::JobsActivatable;
    let key_of = |n: i64| [b"t".as_slice(), &zest_engine::state::key_i64(n)].concat();
    let mut model: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    let mut flushed = (BTreeMap::new(), None);
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut max_key = zest_protocol::encode_key(1, 0);
    {
        let store = Store::open(&dir, &StoreConfig::default()).unwrap();
        let p = store.partition(1).unwrap();
        // fewer commits than `young::MAX_COMMITS`: every flush is one of the test's
        for step in 0..1000u32 {
            let live: Vec<Vec<u8>> = model.keys().cloned().collect();
            let pick = |r: u64| live[(r % live.len().max(1) as u64) as usize].clone();
            let mut txn = Txn::new(&p);
            match next() % 7 {
                0..=1 => {
                    max_key += 1;
                    let value = step.to_be_bytes().to_vec();
                    txn.put_raw(ks, key_of(max_key), value.clone());
                    txn.put(Ks::Meta, META_MAX_KEY.to_vec(), &max_key);
                    model.insert(key_of(max_key), value);
                }
                2 | 3 if !live.is_empty() => {
                    let key = pick(next());
                    txn.delete(ks, key.clone());
                    model.remove(&key);
                }
                4 if !live.is_empty() => {
                    let key = pick(next());
                    let value = format!("updated at {step}").into_bytes();
                    txn.put_raw(ks, key.clone(), value.clone());
                    model.insert(key, value);
                }
                5 if next() % 8 == 0 => {
                    p.flush_young().unwrap();
                    flushed = (model.clone(), p.sm_get(b"applied").unwrap());
                }
                _ => {
                    let got: Vec<(Vec<u8>, Vec<u8>)> = {
                        let mut out = Vec::new();
                        p.scan_prefix(ks, b"t", &mut |k, v| {
                            out.push((k.to_vec(), v.to_vec()));
                            true
                        });
                        out
                    };
                    let want: Vec<(Vec<u8>, Vec<u8>)> =
                        model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
                    assert_eq!(got, want, "step {step}");
                    if !live.is_empty() {
                        let key = pick(next());
                        assert_eq!(p.get(ks, &key), model.get(&key).cloned(), "step {step}");
                    }
                }
            }
            p.commit_state(
                txn.into_writes(),
                [(&b"applied"[..], step.to_be_bytes().to_vec())],
            )
            .unwrap();
        }
        assert!(flushed.1.is_some(), "the run flushed at least once");
        // no sync, no flush: the process ends as a killed one would
    }
    let store = Store::open(&dir, &StoreConfig::default()).unwrap();
    let p = store.partition(1).unwrap();
    let mut got = BTreeMap::new();
    p.scan_prefix(ks, b"t", &mut |k, v| {
        got.insert(k.to_vec(), v.to_vec());
        true
    });
    assert_eq!(got, flushed.0);
    assert_eq!(p.sm_get(b"applied").unwrap(), flushed.1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// An entry created and deleted between two flushes leaves nothing in the young layer (no
/// tombstone for fjall); one deleted after a flush wrote it leaves a tombstone, and reads do
/// not find it, before and after the next flush and a reopen.
#[test]
fn entries_that_live_between_two_flushes_leave_nothing() {
    use zest_engine::state::META_MAX_KEY;
    let dir = temp_dir("young-short-lived");
    let store = Store::open(&dir, &StoreConfig::default()).unwrap();
    let p = store.partition(1).unwrap();
    let key_of = zest_engine::state::key_i64;
    let first = zest_protocol::encode_key(1, 1);
    let mut txn = Txn::new(&p);
    txn.put_raw(Ks::Jobs, key_of(first), vec![1; 100]);
    txn.put(Ks::Meta, META_MAX_KEY.to_vec(), &first);
    p.commit_state(txn.into_writes(), []).unwrap();
    p.flush_young().unwrap();
    assert_eq!(p.young_bytes(), 0);
    for n in 2..200 {
        let key = zest_protocol::encode_key(1, n);
        let mut txn = Txn::new(&p);
        txn.put_raw(Ks::Jobs, key_of(key), vec![2; 1000]);
        txn.put(Ks::Meta, META_MAX_KEY.to_vec(), &key);
        p.commit_state(txn.into_writes(), []).unwrap();
        let mut txn = Txn::new(&p);
        txn.delete(Ks::Jobs, key_of(key));
        p.commit_state(txn.into_writes(), []).unwrap();
    }
    // the max key's entry only
    assert!(
        p.young_bytes() < 200,
        "young layer holds {} bytes",
        p.young_bytes()
    );
    let mut txn = Txn::new(&p);
    txn.delete(Ks::Jobs, key_of(first));
    p.commit_state(txn.into_writes(), []).unwrap();
    assert_eq!(p.get(Ks::Jobs, &key_of(first)), None);
    assert!(scan(&p, Ks::Jobs, b"").is_empty());
    store.sync().unwrap();
    drop(p);
    drop(store);
    let store = Store::open(&dir, &StoreConfig::default()).unwrap();
    let p = store.partition(1).unwrap();
    assert_eq!(p.get(Ks::Jobs, &key_of(first)), None);
    assert!(scan(&p, Ks::Jobs, b"").is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A scan sees one state of the young layer and fjall, while commits go on and flushes move
/// the layer into fjall: a token moved from key to key by each commit (and padded, so that the
/// layer fills and flushes often) is seen exactly once by every scan. The scan's callback
/// reads the store again, as the engine's readers may, while commits wait for the lock.
#[test]
fn scans_see_one_state_while_the_layer_is_flushed() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use zest_engine::state::{key_i64, META_MAX_KEY};
    let dir = temp_dir("young-concurrent");
    let config = StoreConfig {
        write_buffer_bytes: 64 << 10,
        ..StoreConfig::default()
    };
    let store = Store::open(&dir, &config).unwrap();
    let p = store.partition(1).unwrap();
    let key_of = |n: i64| [b"t".as_slice(), &key_i64(n)].concat();
    let first = zest_protocol::encode_key(1, 1);
    let mut txn = Txn::new(&p);
    txn.put_raw(Ks::JobsActivatable, key_of(first), vec![0; 4096]);
    txn.put(Ks::Meta, META_MAX_KEY.to_vec(), &first);
    p.commit_state(txn.into_writes(), []).unwrap();
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        let writer = s.spawn(|| {
            for n in 2..3000 {
                let key = zest_protocol::encode_key(1, n);
                let mut txn = Txn::new(&p);
                txn.delete(Ks::JobsActivatable, key_of(key - 1));
                txn.put_raw(Ks::JobsActivatable, key_of(key), vec![0; 4096]);
                txn.put(Ks::Meta, META_MAX_KEY.to_vec(), &key);
                // padding that outlives the flushes
                txn.put_raw(Ks::Jobs, key_i64(key), vec![1; 2048]);
                p.commit_state(txn.into_writes(), []).unwrap();
            }
            done.store(true, Ordering::SeqCst);
        });
        let mut scans = 0;
        while !done.load(Ordering::SeqCst) {
            let mut seen = Vec::new();
            p.scan_prefix(Ks::JobsActivatable, b"t", &mut |k, v| {
                seen.push(k.to_vec());
                // the scan's state stays until it ends: a read within it sees the same entry
                assert_eq!(p.get(Ks::JobsActivatable, k).as_deref(), Some(v));
                true
            });
            assert_eq!(seen.len(), 1, "scan {scans} saw {seen:?}");
            scans += 1;
        }
        writer.join().unwrap();
        assert!(scans > 10, "{scans} scans");
    });
    let last = zest_protocol::encode_key(1, 2999);
    assert_eq!(scan(&p, Ks::JobsActivatable, b"t"), [key_of(last)]);
    assert_eq!(scan(&p, Ks::Jobs, b"").len(), 2998);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A flush that fails keeps its layer readable and is written again by the next flush; a
/// flush thread that fails makes every later commit fail (openraft then stops the node)
/// instead of letting the state machine run ahead of what can be made durable.
#[test]
fn a_failed_flush_loses_nothing_and_stops_the_commits() {
    use std::sync::atomic::Ordering;
    let dir = temp_dir("young-failed-flush");
    {
        let store = Store::open(&dir, &StoreConfig::default()).unwrap();
        let p = store.partition(1).unwrap();
        let mut txn = Txn::new(&p);
        txn.put_raw(Ks::Jobs, vec![1], vec![1]);
        p.commit_state(txn.into_writes(), [(&b"applied"[..], vec![1])])
            .unwrap();
        p.inner.failing_flushes.store(1, Ordering::SeqCst);
        assert!(p.flush_young().is_err());
        // still readable while it waits in "flushing"; a commit goes into the next layer
        assert_eq!(p.get(Ks::Jobs, &[1]), Some(vec![1]));
        let mut txn = Txn::new(&p);
        txn.put_raw(Ks::Jobs, vec![2], vec![2]);
        p.commit_state(txn.into_writes(), [(&b"applied"[..], vec![2])])
            .unwrap();
        assert_eq!(scan(&p, Ks::Jobs, b"").len(), 2);
        p.flush_young().unwrap();
        assert_eq!(p.young_bytes(), 0);
    }
    // no sync: both layers reached fjall through the flushes alone
    let store = Store::open(&dir, &StoreConfig::default()).unwrap();
    let p = store.partition(1).unwrap();
    assert_eq!(scan(&p, Ks::Jobs, b"").len(), 2);
    assert_eq!(p.sm_get(b"applied").unwrap(), Some(vec![2]));

    // the flush thread: commits until the layer is full start it; it fails
    p.inner.failing_flushes.store(usize::MAX, Ordering::SeqCst);
    let mut n = 0u32;
    let err = loop {
        let mut txn = Txn::new(&p);
        txn.put_raw(Ks::Jobs, n.to_be_bytes().to_vec(), vec![3; 100]);
        if let Err(e) = p.commit_state(txn.into_writes(), []) {
            break e;
        }
        n += 1;
        assert!(n < 100_000, "no commit failed");
    };
    assert!(err.to_string().contains("injected"), "{err}");
    // what was committed before is still read
    assert_eq!(p.get(Ks::Jobs, &0u32.to_be_bytes()), Some(vec![3; 100]));
    drop(p);
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
}
