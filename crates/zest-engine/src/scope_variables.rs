//! How the variables of one scope are stored: one document per scope (keyspace `variables`,
//! key: the scope key), not one state entry per variable.
//!
//! A process instance of the benchmark payload has 30 variables. As one entry each, they were
//! three quarters of all state writes (30 puts when created, 30 tombstones when the instance
//! ends), and every write costs the LSM tree a memtable insert, a journal write, a flush and
//! compaction. As one document they are one put and one delete.
//!
//! The document is a byte string of entries sorted by name bytes (the order the per-variable
//! keys had): `[name length: u32 LE][name][variable key: i64 LE][value length: u32 LE][value]`,
//! the value being the variable's JSON text. Reads walk it without decoding or allocating;
//! a write splices one entry in. Writing a variable rewrites its scope's document, which costs
//! as much as reading all of the scope's variables, as every job activation does anyway.

/// One variable of a scope's document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry<'a> {
    pub name: &'a str,
    /// The variable's key (its VARIABLE records' key).
    pub key: i64,
    /// JSON text.
    pub value: &'a str,
}

/// The entries of a document, in name order. A malformed tail (never written by
/// [`upsert`]) ends the iteration.
pub fn iter(doc: &[u8]) -> Iter<'_> {
    Iter { rest: doc }
}

pub struct Iter<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for Iter<'a> {
    type Item = Entry<'a>;

    fn next(&mut self) -> Option<Entry<'a>> {
        let (entry, len) = parse(self.rest)?;
        self.rest = &self.rest[len..];
        Some(entry)
    }
}

/// The entry at the start of `bytes` and its encoded length.
fn parse(bytes: &[u8]) -> Option<(Entry<'_>, usize)> {
    let (raw, len) = parse_raw(bytes)?;
    Some((raw.checked()?, len))
}

/// An entry whose value's UTF-8 is not checked yet: walking past a value (a search for a
/// later name, a write) need not check it, and a kept collection can be kilobytes.
struct RawEntry<'a> {
    name: &'a [u8],
    key: i64,
    value: &'a [u8],
}

impl<'a> RawEntry<'a> {
    fn checked(&self) -> Option<Entry<'a>> {
        Some(Entry {
            name: std::str::from_utf8(self.name).ok()?,
            key: self.key,
            value: std::str::from_utf8(self.value).ok()?,
        })
    }
}

/// The entry at the start of `bytes`, its text unchecked, and its encoded length.
fn parse_raw(bytes: &[u8]) -> Option<(RawEntry<'_>, usize)> {
    let take = |at: usize, n: usize| bytes.get(at..at.checked_add(n)?);
    let name_len = u32::from_le_bytes(take(0, 4)?.try_into().ok()?) as usize;
    let name = take(4, name_len)?;
    let at = 4 + name_len;
    let key = i64::from_le_bytes(take(at, 8)?.try_into().ok()?);
    let value_len = u32::from_le_bytes(take(at + 8, 4)?.try_into().ok()?) as usize;
    let value = take(at + 12, value_len)?;
    Some((RawEntry { name, key, value }, at + 12 + value_len))
}

/// Where `name`'s entry is in the document, or would go (name order): its offset, and its
/// entry when there is one. Values are passed over unchecked.
fn locate<'a>(doc: &'a [u8], name: &str) -> (usize, Option<(RawEntry<'a>, usize)>) {
    let mut at = 0;
    while let Some((raw, len)) = parse_raw(&doc[at..]) {
        match raw.name.cmp(name.as_bytes()) {
            std::cmp::Ordering::Less => at += len,
            std::cmp::Ordering::Equal => return (at, Some((raw, len))),
            std::cmp::Ordering::Greater => break,
        }
    }
    (at, None)
}

/// The variable `name` of the document.
pub fn find<'a>(doc: &'a [u8], name: &str) -> Option<Entry<'a>> {
    locate(doc, name).1?.0.checked()
}

/// The document with `name` set to (`key`, `value`): replaced where it is, else inserted in
/// name order.
pub fn upsert(doc: &[u8], name: &str, key: i64, value: &str) -> Vec<u8> {
    let (at, found) = locate(doc, name);
    let replaced = found.map_or(0, |(_, len)| len);
    let mut out = Vec::with_capacity(doc.len() + 16 + name.len() + value.len());
    out.extend_from_slice(&doc[..at]);
    out.extend_from_slice(&(name.len() as u32).to_le_bytes());
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(&key.to_le_bytes());
    out.extend_from_slice(&(value.len() as u32).to_le_bytes());
    out.extend_from_slice(value.as_bytes());
    out.extend_from_slice(&doc[at + replaced..]);
    out
}

/// Orders one scope's variables shorter names first, then by bytes (the order of Zeebe's
/// length-prefixed state keys). It reproduces the record order of the anchored call activity
/// scenarios; Zeebe's documents do not always follow it (see tests/anchor/scenarios/call_mapped).
pub fn sort_like_zeebe<T>(vars: &mut [(String, T)]) {
    vars.sort_by(|a, b| (a.0.len(), &a.0).cmp(&(b.0.len(), &b.0)));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(doc: &[u8]) -> Vec<(String, i64, String)> {
        iter(doc)
            .map(|e| (e.name.to_string(), e.key, e.value.to_string()))
            .collect()
    }

    #[test]
    fn keeps_name_order_and_replaces_in_place() {
        let mut doc = Vec::new();
        for (name, key) in [("var2", 2), ("a", 1), ("var10", 10), ("", 0), ("b", 3)] {
            doc = upsert(&doc, name, key, &format!("\"{name}\""));
        }
        assert_eq!(
            names(&doc).iter().map(|e| e.0.as_str()).collect::<Vec<_>>(),
            ["", "a", "b", "var10", "var2"]
        );
        doc = upsert(&doc, "b", 3, "{\"long\":[1,2,3]}");
        assert_eq!(
            find(&doc, "b"),
            Some(Entry {
                name: "b",
                key: 3,
                value: "{\"long\":[1,2,3]}"
            })
        );
        assert_eq!(names(&doc).len(), 5);
        assert_eq!(find(&doc, "var2").map(|e| e.key), Some(2));
        assert_eq!(find(&doc, "c"), None);
        assert_eq!(find(&[], "a"), None);
    }

    #[test]
    fn a_malformed_tail_ends_the_iteration() {
        let doc = upsert(&upsert(&[], "a", 1, "1"), "b", 2, "2");
        for cut in 0..doc.len() {
            let n = iter(&doc[..cut]).count();
            assert!(n <= 1, "cut at {cut} gave {n} entries");
        }
        assert_eq!(iter(&doc).count(), 2);
    }

    /// `find` walks past other entries without reading their values, and a found value
    /// that is not UTF-8 (never written by `upsert`) is not returned.
    #[test]
    fn find_stops_at_the_name_and_checks_only_its_value() {
        let doc = upsert(
            &upsert(&upsert(&[], "a", 1, "1"), "m", 2, "\"xx\""),
            "z",
            3,
            "3",
        );
        assert_eq!(find(&doc, "z").map(|e| (e.key, e.value)), Some((3, "3")));
        assert_eq!(find(&doc, "b"), None);
        assert_eq!(find(&doc, "zz"), None);
        let mut broken = doc.clone();
        let at = broken.windows(4).position(|w| w == b"\"xx\"").unwrap();
        broken[at + 1] = 0xFF;
        assert_eq!(find(&broken, "m"), None);
        assert_eq!(find(&broken, "z").map(|e| e.key), Some(3));
        assert_eq!(find(&broken, "a").map(|e| e.key), Some(1));
    }
}
