//! A partition's log as a journal of segment files, written once, deleted whole.
//!
//! ```text
//! data/journal/partition-<N>/<first index, 20 digits>.log
//! ```
//!
//! A segment is a sequence of frames `[payload length u32][crc32 u32][index u64][payload]`
//! (little endian; the checksum covers index and payload), for consecutive indexes starting at
//! the one in its name. Appends go to the last segment until it reaches the segment size; then
//! a new one starts. Entries are written once (no write-ahead copy: the journal is the WAL),
//! and space is given back by deleting whole segments behind the last snapshot
//! ([`Journal::purge`]).
//!
//! A segment is preallocated to the segment size when it starts (`fallocate`, as Zeebe
//! preallocates its segments): an append then writes into space the file already has, so the
//! `fdatasync` of a commit writes the data alone, not the file's new size as well (about 180
//! against 125 µs here). The space after the last frame reads as zeros. When the next segment
//! starts, the previous one is cut to its frames.
//!
//! Recovery: the last segment is read through when the journal opens, and cut at the first
//! frame that is incomplete or fails its checksum (the preallocated zeros, or a write the OS
//! did not finish before a crash), then preallocated again. Earlier segments were complete
//! when the next one started (a crash before one was cut leaves zeros after its frames, which
//! end it as well). Deletions (purge from the
//! front, truncation from the back) keep the segments contiguous at every step, so a crash in
//! the middle of one leaves a valid journal.
//!
//! Memory: per segment its name and size, and the offsets of its entries once it has been read
//! (always for the last one); the number of segments is bounded by the log kept behind
//! snapshots.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{BufReader, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::{Result, StorageError};

const HEADER: usize = 16;
/// Size at which a new segment starts (Zeebe's default is 128 MiB).
pub const DEFAULT_SEGMENT_BYTES: u64 = 64 << 20;
/// Largest payload a frame may declare; anything larger is corruption, not an entry.
const MAX_PAYLOAD: u32 = 256 << 20;

fn err(what: impl std::fmt::Display) -> StorageError {
    StorageError::Other(what.to_string())
}

fn io_err(path: &Path, e: std::io::Error) -> StorageError {
    StorageError::Other(format!("journal {}: {e}", path.display()))
}

struct Segment {
    path: PathBuf,
    first: u64,
    bytes: u64,
    /// Offsets of the entries, once read.
    offsets: Option<Vec<u64>>,
}

pub struct Journal {
    dir: PathBuf,
    segment_bytes: u64,
    segments: BTreeMap<u64, Segment>,
    /// The last segment, open for appends.
    active: Option<File>,
    /// Segments written since their last fsync (the active one and any it replaced).
    unsynced: Vec<File>,
    /// Index of the last entry, if any.
    last: Option<u64>,
}

fn frame_crc(index: u64, payload: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&index.to_le_bytes());
    h.update(payload);
    h.finalize()
}

fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| io_err(dir, e))
}

/// Reads the frames of a segment: offsets of the valid ones and the end of the last valid one.
/// With `verify`, payloads are read and checked; without, only headers are (a complete
/// segment).
fn scan(path: &Path, first: u64, verify: bool) -> Result<(Vec<u64>, u64)> {
    let file = File::open(path).map_err(|e| io_err(path, e))?;
    let size = file.metadata().map_err(|e| io_err(path, e))?.len();
    let mut r = BufReader::with_capacity(1 << 20, file);
    let mut offsets = Vec::new();
    let mut at = 0u64;
    let mut header = [0u8; HEADER];
    let mut payload = Vec::new();
    loop {
        if at + HEADER as u64 > size || r.read_exact(&mut header).is_err() {
            break;
        }
        let len = u32::from_le_bytes(header[0..4].try_into().unwrap_or_default());
        let crc = u32::from_le_bytes(header[4..8].try_into().unwrap_or_default());
        let index = u64::from_le_bytes(header[8..16].try_into().unwrap_or_default());
        let end = at + HEADER as u64 + len as u64;
        if len > MAX_PAYLOAD || end > size || index != first + offsets.len() as u64 {
            break;
        }
        if verify {
            payload.resize(len as usize, 0);
            if r.read_exact(&mut payload).is_err() || frame_crc(index, &payload) != crc {
                break;
            }
        } else {
            r.seek_relative(len as i64).map_err(|e| io_err(path, e))?;
        }
        offsets.push(at);
        at = end;
    }
    Ok((offsets, at))
}

/// Gives `file` its space up to `len` bytes without writing it (the file's size becomes `len`
/// if it was smaller; what lies past the written frames reads as zeros). Where the file system
/// cannot, appends extend the file as they go: slower fsyncs, nothing else.
fn preallocate(file: &File, len: u64) {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    if let Err(e) = rustix::fs::fallocate(file, rustix::fs::FallocateFlags::empty(), 0, len) {
        tracing::debug!("no preallocation of a journal segment: {e}");
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let _ = (file, len);
}

/// Whether what follows the frames (from `at` to the file's end `len`) starts with zeros:
/// the preallocated space, not a torn write.
fn zeros_at(file: &File, at: u64, len: u64) -> bool {
    let mut header = [0u8; HEADER];
    let n = (len.saturating_sub(at) as usize).min(HEADER);
    file.read_exact_at(&mut header[..n], at).is_ok() && header[..n].iter().all(|b| *b == 0)
}

fn segment_name(first: u64) -> String {
    format!("{first:020}.log")
}

impl Journal {
    pub fn open(dir: &Path, segment_bytes: u64) -> Result<Journal> {
        std::fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
        let mut segments = BTreeMap::new();
        for entry in std::fs::read_dir(dir).map_err(|e| io_err(dir, e))? {
            let path = entry.map_err(|e| io_err(dir, e))?.path();
            let Some(first) = path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(".log"))
                .and_then(|n| n.parse::<u64>().ok())
            else {
                continue;
            };
            let bytes = std::fs::metadata(&path)
                .map_err(|e| io_err(&path, e))?
                .len();
            segments.insert(
                first,
                Segment {
                    path,
                    first,
                    bytes,
                    offsets: None,
                },
            );
        }
        let mut journal = Journal {
            dir: dir.to_path_buf(),
            segment_bytes: segment_bytes.max(HEADER as u64 + 1),
            segments,
            active: None,
            unsynced: Vec::new(),
            last: None,
        };
        journal.recover_tail()?;
        Ok(journal)
    }

    /// Verifies the last segment, cuts off a torn tail, and opens it for appends.
    fn recover_tail(&mut self) -> Result<()> {
        let count = self.segments.len();
        let Some(seg) = self.segments.values_mut().next_back() else {
            return Ok(());
        };
        let (offsets, end) = scan(&seg.path, seg.first, true)?;
        if offsets.is_empty() && count == 1 {
            // a segment started just before a crash, nothing in it: the journal is empty, and
            // its next entry may have any index
            std::fs::remove_file(&seg.path).map_err(|e| io_err(&seg.path, e))?;
            self.segments.clear();
            return Ok(());
        }
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&seg.path)
            .map_err(|e| io_err(&seg.path, e))?;
        if end < seg.bytes {
            if !zeros_at(&file, end, seg.bytes) {
                tracing::warn!(
                    segment = %seg.path.display(),
                    kept = end,
                    found = seg.bytes,
                    "the journal's last segment ends in an incomplete entry (a crash during a write); it is cut there"
                );
            }
            // cut whatever follows the last frame (a torn write must not be read again behind
            // later appends), then give the segment its space again
            file.set_len(end).map_err(|e| io_err(&seg.path, e))?;
            file.sync_all().map_err(|e| io_err(&seg.path, e))?;
        }
        preallocate(&file, self.segment_bytes);
        seg.bytes = end;
        // an empty last segment follows a full one: the last entry is just before it
        self.last = Some(seg.first + offsets.len() as u64).and_then(|n| n.checked_sub(1));
        seg.offsets = Some(offsets);
        file.seek(SeekFrom::Start(end))
            .map_err(|e| io_err(&seg.path, e))?;
        self.active = Some(file);
        Ok(())
    }

    pub fn last_index(&self) -> Option<u64> {
        self.last
    }

    /// Index of the first entry on disk (entries before it were purged).
    pub fn first_index(&self) -> Option<u64> {
        self.last?;
        self.segments.keys().next().copied()
    }

    pub fn disk_bytes(&self) -> u64 {
        self.segments.values().map(|s| s.bytes).sum()
    }

    /// Bytes of the entries from `index` on (frames included), without reading anything: a
    /// segment whose offsets were never read counts whole (at most one segment too many).
    pub fn bytes_from(&self, index: u64) -> u64 {
        let mut bytes = 0;
        for (first, seg) in self.segments.iter().rev() {
            if *first >= index {
                bytes += seg.bytes;
                continue;
            }
            let at = seg
                .offsets
                .as_deref()
                .and_then(|o| o.get((index - first) as usize).copied());
            // past the segment's last entry: nothing of it; offsets not read: all of it
            bytes += match (at, &seg.offsets) {
                (Some(at), _) => seg.bytes - at,
                (None, Some(_)) => 0,
                (None, None) => seg.bytes,
            };
            break;
        }
        bytes
    }

    pub fn segment_count(&self) -> usize {
        self.segments.len()
    }

    fn start_segment(&mut self, first: u64) -> Result<()> {
        if let Some(old) = self.active.take() {
            // the previous segment gives back the preallocated space its frames did not use
            // (made durable with its data by the next sync)
            if let Some(seg) = self.segments.values().next_back() {
                old.set_len(seg.bytes).map_err(|e| io_err(&seg.path, e))?;
            }
            self.unsynced.push(old);
        }
        let path = self.dir.join(segment_name(first));
        let file = OpenOptions::new()
            .create(true)
            .truncate(true)
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| io_err(&path, e))?;
        preallocate(&file, self.segment_bytes);
        sync_dir(&self.dir)?;
        self.segments.insert(
            first,
            Segment {
                path,
                first,
                bytes: 0,
                offsets: Some(Vec::new()),
            },
        );
        self.active = Some(file);
        Ok(())
    }

    /// Appends entries with consecutive indexes following the last one (any index when the
    /// journal is empty). With `fsync` they are durable when this returns; without, they are
    /// with the OS (a killed process loses nothing; an OS crash may, until [`Journal::sync`]).
    pub fn append(&mut self, entries: &[(u64, Vec<u8>)], fsync: bool) -> Result<()> {
        // sized once: grown by doubling, a large append held up to twice its bytes, on fresh
        // pages each time
        let bytes: usize = entries.iter().map(|(_, p)| HEADER + p.len()).sum();
        let mut buf = Vec::with_capacity(bytes.min(self.segment_bytes as usize));
        for (index, payload) in entries {
            if let Some(last) = self.last {
                if *index != last + 1 {
                    return Err(err(format!(
                        "journal {}: entry {index} does not follow the last entry {last}",
                        self.dir.display()
                    )));
                }
            }
            let full = self
                .segments
                .values()
                .next_back()
                .is_none_or(|s| s.bytes + buf.len() as u64 >= self.segment_bytes);
            if full || self.active.is_none() {
                self.flush_buf(&mut buf)?;
                self.start_segment(*index)?;
            }
            let seg = self.segments.values_mut().next_back().expect("a segment");
            let offsets = seg.offsets.get_or_insert_with(Vec::new);
            offsets.push(seg.bytes + buf.len() as u64);
            buf.extend_from_slice(&(payload.len() as u32).to_le_bytes());
            buf.extend_from_slice(&frame_crc(*index, payload).to_le_bytes());
            buf.extend_from_slice(&index.to_le_bytes());
            buf.extend_from_slice(payload);
            self.last = Some(*index);
        }
        self.flush_buf(&mut buf)?;
        if fsync {
            self.sync()?;
        }
        Ok(())
    }

    /// Writes `buf` to the active segment.
    fn flush_buf(&mut self, buf: &mut Vec<u8>) -> Result<()> {
        if buf.is_empty() {
            return Ok(());
        }
        let seg = self.segments.values_mut().next_back().expect("a segment");
        let file = self.active.as_mut().expect("an active segment");
        file.write_all(buf).map_err(|e| io_err(&seg.path, e))?;
        seg.bytes += buf.len() as u64;
        buf.clear();
        Ok(())
    }

    /// Makes every append so far durable.
    pub fn sync(&mut self) -> Result<()> {
        for f in self.unsynced.drain(..) {
            f.sync_data().map_err(|e| io_err(&self.dir, e))?;
        }
        if let Some(f) = &self.active {
            f.sync_data().map_err(|e| io_err(&self.dir, e))?;
        }
        Ok(())
    }

    fn offsets(&mut self, first: u64) -> Result<&[u64]> {
        let seg = self.segments.get_mut(&first).expect("a segment");
        if seg.offsets.is_none() {
            let (offsets, _) = scan(&seg.path, seg.first, false)?;
            seg.offsets = Some(offsets);
        }
        Ok(seg.offsets.as_deref().unwrap_or_default())
    }

    /// Entries with index in `[from, to)` that are on disk.
    pub fn range(&mut self, from: u64, to: u64) -> Result<Vec<(u64, Vec<u8>)>> {
        let mut out = Vec::new();
        let Some(last) = self.last else {
            return Ok(out);
        };
        let to = to.min(last + 1);
        if from >= to {
            return Ok(out);
        }
        let firsts: Vec<u64> = self
            .segments
            .range(..to)
            .map(|(f, _)| *f)
            .filter(|f| {
                // segments that may hold indexes >= from
                self.segments
                    .range(f + 1..)
                    .next()
                    .is_none_or(|(next, _)| *next > from)
            })
            .collect();
        for first in firsts {
            let offsets = self.offsets(first)?.to_vec();
            let seg = &self.segments[&first];
            let file = File::open(&seg.path).map_err(|e| io_err(&seg.path, e))?;
            let lo = from.max(first);
            for index in lo..to {
                let Some(&at) = offsets.get((index - first) as usize) else {
                    break;
                };
                let mut header = [0u8; HEADER];
                file.read_exact_at(&mut header, at)
                    .map_err(|e| io_err(&seg.path, e))?;
                let len = u32::from_le_bytes(header[0..4].try_into().unwrap_or_default());
                let mut payload = vec![0u8; len as usize];
                file.read_exact_at(&mut payload, at + HEADER as u64)
                    .map_err(|e| io_err(&seg.path, e))?;
                out.push((index, payload));
            }
        }
        Ok(out)
    }

    /// Removes the entries with index >= `from` (conflicting entries of an old leader),
    /// durably.
    pub fn truncate(&mut self, from: u64) -> Result<()> {
        let Some(last) = self.last else {
            return Ok(());
        };
        if from > last {
            return Ok(());
        }
        // whole segments from the back, so the journal stays contiguous at every step
        let doomed: Vec<u64> = self.segments.range(from..).map(|(f, _)| *f).rev().collect();
        self.active = None;
        self.unsynced.clear();
        for first in doomed {
            let seg = self.segments.remove(&first).expect("a segment");
            std::fs::remove_file(&seg.path).map_err(|e| io_err(&seg.path, e))?;
        }
        sync_dir(&self.dir)?;
        let Some((&first, _)) = self.segments.iter().next_back() else {
            self.last = None;
            return Ok(());
        };
        let keep = (from - first) as usize;
        let seg = self.segments.get_mut(&first).expect("a segment");
        // where its frames end: it may have been cut when the next segment started, or not yet
        // (a crash just before), and then preallocated zeros follow them
        let (mut offsets, end) = scan(&seg.path, first, false)?;
        let cut = offsets.get(keep).copied().unwrap_or(end);
        offsets.truncate(keep);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&seg.path)
            .map_err(|e| io_err(&seg.path, e))?;
        file.set_len(cut).map_err(|e| io_err(&seg.path, e))?;
        file.sync_all().map_err(|e| io_err(&seg.path, e))?;
        preallocate(&file, self.segment_bytes);
        seg.bytes = cut;
        seg.offsets = Some(offsets);
        file.seek(SeekFrom::Start(cut))
            .map_err(|e| io_err(&seg.path, e))?;
        self.active = Some(file);
        self.last = Some(from - 1);
        Ok(())
    }

    /// Deletes the segments whose entries all have index <= `upto`. Returns the bytes given
    /// back. The entries of a segment that also holds later ones stay until it is whole behind.
    pub fn purge(&mut self, upto: u64) -> Result<u64> {
        let firsts: Vec<u64> = self.segments.keys().copied().collect();
        let mut freed = 0;
        for (i, first) in firsts.iter().enumerate() {
            let last_in = match firsts.get(i + 1) {
                Some(next) => next - 1,
                None => match self.last {
                    Some(l) => l,
                    None => break,
                },
            };
            if last_in > upto {
                break;
            }
            if firsts.get(i + 1).is_none() {
                // the active segment: the journal becomes empty
                self.active = None;
                self.unsynced.clear();
                self.last = None;
            }
            let seg = self.segments.remove(first).expect("a segment");
            std::fs::remove_file(&seg.path).map_err(|e| io_err(&seg.path, e))?;
            freed += seg.bytes;
        }
        if freed > 0 {
            sync_dir(&self.dir)?;
        }
        Ok(freed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("zest-journal-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    fn entries(range: std::ops::Range<u64>) -> Vec<(u64, Vec<u8>)> {
        range
            .map(|i| (i, vec![i as u8; 100 + (i % 7) as usize]))
            .collect()
    }

    fn files(d: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn entries_roll_into_segments_and_read_back_after_reopen() {
        let d = dir("roll");
        let mut j = Journal::open(&d, 1000).unwrap();
        j.append(&entries(1..40), false).unwrap();
        j.append(&entries(40..51), true).unwrap();
        assert!(j.segment_count() >= 5, "{} segments", j.segment_count());
        assert_eq!(j.range(1, 51).unwrap(), entries(1..51));
        assert_eq!(j.range(17, 23).unwrap(), entries(17..23));
        drop(j);
        let mut j = Journal::open(&d, 1000).unwrap();
        assert_eq!(j.last_index(), Some(50));
        assert_eq!(j.first_index(), Some(1));
        assert_eq!(j.range(0, 100).unwrap(), entries(1..51));
        j.append(&entries(51..53), true).unwrap();
        assert_eq!(j.range(49, 60).unwrap(), entries(49..53));
        // a gap is refused
        assert!(j.append(&entries(60..61), true).is_err());
        let _ = std::fs::remove_dir_all(d);
    }

    #[test]
    fn purge_deletes_whole_segments_behind_and_truncate_cuts_the_tail() {
        let d = dir("purge");
        let mut j = Journal::open(&d, 1000).unwrap();
        j.append(&entries(1..60), true).unwrap();
        let before = j.segment_count();
        let bytes = j.disk_bytes();
        let freed = j.purge(30).unwrap();
        assert!(freed > 0 && j.disk_bytes() == bytes - freed);
        assert!(j.segment_count() < before);
        // what is not behind 30 is all still there, and the first segment starts at or before 31
        assert!(j.first_index().unwrap() <= 31);
        assert_eq!(j.range(31, 60).unwrap(), entries(31..60));
        assert_eq!(files(&d).len(), j.segment_count());
        // truncation of conflicting entries, across segments
        j.truncate(45).unwrap();
        assert_eq!(j.last_index(), Some(44));
        assert_eq!(j.range(31, 100).unwrap(), entries(31..45));
        j.append(&entries(45..47), true).unwrap();
        drop(j);
        let mut j = Journal::open(&d, 1000).unwrap();
        assert_eq!(j.range(31, 100).unwrap(), entries(31..47));
        // a purge past the end empties the journal, which then starts anywhere
        j.purge(1000).unwrap();
        assert_eq!((j.last_index(), j.segment_count()), (None, 0));
        j.append(&entries(2000..2003), true).unwrap();
        drop(j);
        let mut j = Journal::open(&d, 1000).unwrap();
        assert_eq!(j.range(0, u64::MAX).unwrap(), entries(2000..2003));
        let _ = std::fs::remove_dir_all(d);
    }

    /// A write the OS did not finish (a torn or garbled tail) is cut off on open; everything
    /// before it stays.
    #[test]
    fn a_torn_tail_is_cut_off_on_open() {
        let d = dir("torn");
        let mut j = Journal::open(&d, 1 << 20).unwrap();
        j.append(&entries(1..11), true).unwrap();
        drop(j);
        let seg = d.join(segment_name(1));
        // where the frames end (the preallocated space follows)
        let end = scan(&seg, 1, true).unwrap().1;
        // half of the last entry is missing
        OpenOptions::new()
            .write(true)
            .open(&seg)
            .unwrap()
            .set_len(end - 50)
            .unwrap();
        let mut j = Journal::open(&d, 1 << 20).unwrap();
        assert_eq!(j.last_index(), Some(9));
        assert_eq!(j.range(1, 11).unwrap(), entries(1..10));
        j.append(&entries(10..12), true).unwrap();
        drop(j);
        // a flipped byte in the last entry's payload
        let mut bytes = std::fs::read(&seg).unwrap();
        let n = scan(&seg, 1, true).unwrap().1 as usize;
        bytes[n - 3] ^= 0xff;
        std::fs::write(&seg, bytes).unwrap();
        let mut j = Journal::open(&d, 1 << 20).unwrap();
        assert_eq!(j.last_index(), Some(10));
        assert_eq!(j.range(1, 20).unwrap(), entries(1..11));
        let _ = std::fs::remove_dir_all(d);
    }

    /// The active segment has its space before it is written; a segment behind it holds its
    /// frames alone. A crash after the next segment started but before the previous one was
    /// cut leaves zeros after its frames: they end it, on open and on truncation.
    #[test]
    fn segments_are_preallocated_and_cut_when_the_next_one_starts() {
        let d = dir("prealloc");
        let mut j = Journal::open(&d, 4096).unwrap();
        j.append(&entries(1..5), true).unwrap();
        let first = d.join(segment_name(1));
        let len = |p: &Path| std::fs::metadata(p).unwrap().len();
        let written = j.disk_bytes();
        // 4096 where the file system preallocates, the frames alone where it cannot
        assert!(
            len(&first) == 4096 || len(&first) == written,
            "{} bytes",
            len(&first)
        );
        j.append(&entries(5..80), true).unwrap();
        assert!(j.segment_count() > 2);
        let names = files(&d);
        for name in &names[..names.len() - 1] {
            let path = d.join(name);
            let start: u64 = name.trim_end_matches(".log").parse().unwrap();
            assert_eq!(len(&path), scan(&path, start, true).unwrap().1, "{name}");
        }
        drop(j);
        // the first segment as a crash before its cut left it (a segment ends with the entry
        // that takes it to the segment size or past it)
        let frames = len(&first);
        OpenOptions::new()
            .write(true)
            .open(&first)
            .unwrap()
            .set_len(frames + 4096)
            .unwrap();
        let mut j = Journal::open(&d, 4096).unwrap();
        assert_eq!(j.range(0, u64::MAX).unwrap(), entries(1..80));
        // truncated back into it: later appends follow its frames, not its zeros
        j.truncate(3).unwrap();
        assert_eq!(j.segment_count(), 1);
        // its space again where the file system preallocates, cut inside its frames where not
        assert!(
            len(&first) == 4096 || len(&first) < frames,
            "{} bytes",
            len(&first)
        );
        j.append(&entries(3..90), true).unwrap();
        drop(j);
        let mut j = Journal::open(&d, 4096).unwrap();
        assert_eq!(j.range(0, u64::MAX).unwrap(), entries(1..90));
        let _ = std::fs::remove_dir_all(d);
    }

    /// A segment created just before a crash, with nothing in it, is not an entry.
    #[test]
    fn an_empty_last_segment_is_recovered() {
        let d = dir("empty-seg");
        let mut j = Journal::open(&d, 300).unwrap();
        j.append(&entries(1..4), true).unwrap();
        drop(j);
        let next = files(&d).len();
        std::fs::File::create(d.join(segment_name(4))).unwrap();
        let mut j = Journal::open(&d, 300).unwrap();
        assert_eq!(files(&d).len(), next + 1);
        assert_eq!(j.last_index(), Some(3));
        j.append(&entries(4..6), true).unwrap();
        assert_eq!(j.range(1, 9).unwrap(), entries(1..6));
        drop(j);
        // alone, it is removed: the journal is empty
        let d2 = dir("empty-alone");
        std::fs::create_dir_all(&d2).unwrap();
        std::fs::File::create(d2.join(segment_name(77))).unwrap();
        let mut j = Journal::open(&d2, 300).unwrap();
        assert_eq!(j.last_index(), None);
        j.append(&entries(5..6), true).unwrap();
        assert_eq!(j.range(0, 9).unwrap(), entries(5..6));
        let _ = std::fs::remove_dir_all(d);
        let _ = std::fs::remove_dir_all(d2);
    }

    /// Randomised: appends, truncations, purges and reopens against a model of the log.
    #[test]
    fn the_journal_agrees_with_a_model_under_random_operations() {
        let d = dir("model");
        let mut j = Journal::open(&d, 700).unwrap();
        let mut model: BTreeMap<u64, Vec<u8>> = BTreeMap::new();
        let mut purged = 0u64;
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..400 {
            let last = model.keys().next_back().copied().unwrap_or(purged);
            match next() % 6 {
                0..=2 => {
                    let n = 1 + next() % 8;
                    let batch = entries(last + 1..last + 1 + n);
                    j.append(&batch, next() % 2 == 0).unwrap();
                    model.extend(batch);
                }
                3 if last > purged + 2 => {
                    let from = purged + 2 + next() % (last - purged - 1);
                    j.truncate(from).unwrap();
                    model.retain(|i, _| *i < from);
                }
                4 if last > purged => {
                    let upto = purged + 1 + next() % (last - purged);
                    j.purge(upto).unwrap();
                    purged = upto;
                    model.retain(|i, _| *i > upto);
                }
                _ => {
                    drop(j);
                    j = Journal::open(&d, 700).unwrap();
                }
            }
            let want: Vec<(u64, Vec<u8>)> = model.iter().map(|(i, v)| (*i, v.clone())).collect();
            let last_model = model.keys().next_back().copied();
            if let Some(l) = last_model {
                assert_eq!(j.last_index(), Some(l));
            }
            assert_eq!(j.range(purged + 1, u64::MAX).unwrap(), want);
        }
        let _ = std::fs::remove_dir_all(d);
    }

    #[test]
    fn bytes_from_counts_the_frames_of_the_entries_from_an_index_on() {
        let d = dir("bytes-from");
        let frame = |i: u64| (HEADER + 100 + (i % 7) as usize) as u64;
        let mut j = Journal::open(&d, 1000).unwrap();
        j.append(&entries(1..51), true).unwrap();
        for from in [1, 2, 9, 10, 33, 50] {
            assert_eq!(
                j.bytes_from(from),
                (from..51).map(frame).sum::<u64>(),
                "{from}"
            );
        }
        assert_eq!(j.bytes_from(51), 0);
        assert_eq!(j.bytes_from(1), j.disk_bytes());
        // reopened, the older segments' offsets are unread: the segment holding the index
        // counts whole, never less than what is held
        drop(j);
        let j = Journal::open(&d, 1000).unwrap();
        let held = j.bytes_from(20);
        assert!(held >= (20..51).map(frame).sum::<u64>(), "{held}");
        assert!(held <= (20..51).map(frame).sum::<u64>() + 1000, "{held}");
        let _ = std::fs::remove_dir_all(d);
    }
}
