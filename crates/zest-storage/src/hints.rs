//! Seek hints for queue-like keyspaces: where a prefix scan may start.
//!
//! Some keyspaces are queues (activatable jobs by type, job deadlines and backoffs, timer due
//! dates, message deadlines): every job or timer inserts a key and soon deletes it. In an LSM
//! tree a deleted key leaves a tombstone that a scan walks over until compaction removes it, so
//! a scan from the start of such a keyspace would slow down as a run goes on, and with millions
//! of parked entries behind the front it would have to skip all the tombstones each time.
//!
//! A hint remembers, per scanned prefix, a key below which nothing under that prefix is live
//! (or that nothing under it is live at all). Scans start there, so each scan walks only the
//! tombstones left since the previous one. Memory is bounded by the number of distinct
//! prefixes scanned (job types; the due-date indexes use one), capped at [`MAX_PREFIXES`]:
//! hints are only an optimisation, dropping them all is always correct.
//!
//! Correctness rests on one rule: a hint never passes a live key. Deletes cannot break it.
//! Inserts lower the hints of their prefix, and an insert that races with a scan is recorded
//! on the hint's entry so that the scan does not learn a start past it. Callers report inserts
//! only after they are visible to readers (after the batch commit).

use std::collections::BTreeMap;
use std::sync::Mutex;

/// Distinct prefixes remembered per keyspace before all hints are dropped.
pub const MAX_PREFIXES: usize = 1024;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Start {
    /// Nothing under the prefix is below this key.
    From(Vec<u8>),
    /// Nothing under the prefix is live.
    Nothing,
}

#[derive(Debug)]
struct Entry {
    start: Start,
    /// Scans started on this prefix; a scan learns only if no other started since.
    scans: u64,
    /// Smallest key inserted under the prefix since the last scan started.
    inserted_since_scan: Option<Vec<u8>>,
}

/// The hints of one keyspace.
#[derive(Debug, Default)]
pub struct SeekHints {
    entries: Mutex<BTreeMap<Vec<u8>, Entry>>,
}

/// What a scan needs to report back what it found.
#[derive(Debug)]
pub struct ScanTicket {
    pub start: Start,
    scan: u64,
}

impl SeekHints {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<Vec<u8>, Entry>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Called when a scan of `prefix` begins: where it may start.
    pub fn begin(&self, prefix: &[u8]) -> ScanTicket {
        let mut entries = self.lock();
        if !entries.contains_key(prefix) && entries.len() >= MAX_PREFIXES {
            entries.clear();
        }
        let entry = entries.entry(prefix.to_vec()).or_insert_with(|| Entry {
            start: Start::From(prefix.to_vec()),
            scans: 0,
            inserted_since_scan: None,
        });
        entry.scans += 1;
        entry.inserted_since_scan = None;
        ScanTicket {
            start: entry.start.clone(),
            scan: entry.scans,
        }
    }

    /// Called when the scan of `prefix` ends, with the first live key it met (`None` when it
    /// met none: nothing under the prefix was live when it read).
    pub fn learned(&self, prefix: &[u8], ticket: ScanTicket, first_live: Option<&[u8]>) {
        let mut entries = self.lock();
        let Some(entry) = entries.get_mut(prefix) else {
            return;
        };
        if entry.scans != ticket.scan {
            return;
        }
        let found = first_live.map(<[u8]>::to_vec);
        entry.start = match (found, entry.inserted_since_scan.take()) {
            (None, None) => Start::Nothing,
            (Some(k), None) | (None, Some(k)) => Start::From(k),
            (Some(a), Some(b)) => Start::From(a.min(b)),
        };
    }

    /// Called after `key` was inserted and is visible to readers.
    pub fn inserted(&self, key: &[u8]) {
        let mut entries = self.lock();
        if entries.is_empty() {
            return;
        }
        // every remembered prefix of `key` (at most one per length)
        for len in 0..=key.len() {
            let Some(entry) = entries.get_mut(&key[..len]) else {
                continue;
            };
            match &entry.start {
                Start::From(k) if k.as_slice() <= key => {}
                _ => entry.start = Start::From(key.to_vec()),
            }
            match &entry.inserted_since_scan {
                Some(k) if k.as_slice() <= key => {}
                _ => entry.inserted_since_scan = Some(key.to_vec()),
            }
        }
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scan_learns_where_live_keys_begin_and_inserts_lower_it() {
        let h = SeekHints::default();
        let t = h.begin(b"a");
        assert_eq!(t.start, Start::From(b"a".to_vec()));
        h.learned(b"a", t, Some(b"a5"));
        assert_eq!(h.begin(b"a").start, Start::From(b"a5".to_vec()));
        h.inserted(b"a3");
        h.inserted(b"b1"); // another prefix: no effect on "a"
        let t = h.begin(b"a");
        assert_eq!(t.start, Start::From(b"a3".to_vec()));
        h.learned(b"a", t, None);
        assert_eq!(h.begin(b"a").start, Start::Nothing);
        h.inserted(b"a9");
        assert_eq!(h.begin(b"a").start, Start::From(b"a9".to_vec()));
    }

    #[test]
    fn an_insert_during_a_scan_is_not_skipped() {
        let h = SeekHints::default();
        let t = h.begin(b"");
        // the scan's reader did not see k2 yet, found k5 first
        h.inserted(b"k2");
        h.learned(b"", t, Some(b"k5"));
        assert_eq!(h.begin(b"").start, Start::From(b"k2".to_vec()));
        // a second scan started before the first ended: the first learns nothing
        let first = h.begin(b"");
        let second = h.begin(b"");
        h.learned(b"", first, Some(b"k9"));
        assert_eq!(h.begin(b"").start, Start::From(b"k2".to_vec()));
        drop(second);
    }

    #[test]
    fn hints_are_bounded() {
        let h = SeekHints::default();
        for i in 0..(MAX_PREFIXES as u32 + 10) {
            let t = h.begin(&i.to_be_bytes());
            h.learned(&i.to_be_bytes(), t, None);
        }
        assert!(h.len() <= MAX_PREFIXES);
    }
}
