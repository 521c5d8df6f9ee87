//! The baseline's entries in a compact, sorted store: one arena of path and link-target bytes
//! and one fixed-size record per entry, sorted by path bytes, looked up by binary search. About
//! 64 bytes an entry plus its path, where a map of [`Entry`] values costs several times that; the
//! check after the build holds this and nothing else of the baseline.

use contract::ids::Sha256Hex;

use super::walk::{Entry, Kind, Snapshot};
use crate::repo_path::RepoPath;

/// One entry: where its path (and link target) lie in the arena, and its fields.
#[derive(Debug, Clone, Copy)]
struct Record {
    path: (u32, u32),
    target: Option<(u32, u32)>,
    size: u64,
    sha256: Option<[u8; 32]>,
    mode: u16,
    kind: Kind,
}

/// The entries of a baseline, sorted by path and unique.
#[derive(Debug, Clone, Default)]
pub struct Store {
    arena: Vec<u8>,
    records: Vec<Record>,
}

/// An entry's fields as the store keeps them.
#[derive(Debug, Clone, Copy)]
pub struct Stored<'a> {
    pub kind: Kind,
    pub mode: u32,
    pub size: u64,
    pub sha256: Option<&'a [u8; 32]>,
    pub target: Option<&'a [u8]>,
}

impl Stored<'_> {
    /// The entry as the walk would record it.
    pub fn entry(&self) -> Entry {
        Entry {
            kind: self.kind,
            mode: self.mode,
            size: self.size,
            sha256: self.sha256.map(Sha256Hex::from_digest),
            target: self.target.map(RepoPath::from),
        }
    }
}

impl Store {
    pub fn new() -> Store {
        Store::default()
    }

    /// The store of a walk (already sorted by path).
    pub fn from_snapshot(snapshot: &Snapshot) -> Result<Store, String> {
        let mut store = Store::new();
        for (path, entry) in snapshot {
            store.push(path.as_bytes(), entry)?;
        }
        store.finish();
        Ok(store)
    }

    fn put(&mut self, bytes: &[u8]) -> Result<(u32, u32), String> {
        let start = u32::try_from(self.arena.len()).ok();
        let len = u32::try_from(bytes.len()).ok();
        let end = start
            .zip(len)
            .and_then(|(s, l)| s.checked_add(l))
            .ok_or("the baseline's paths exceed 4 GiB")?;
        self.arena.extend_from_slice(bytes);
        debug_assert_eq!(end as usize, self.arena.len());
        Ok((start.unwrap_or_default(), len.unwrap_or_default()))
    }

    /// Appends an entry, whose path must sort after every path already held.
    pub fn push(&mut self, path: &[u8], entry: &Entry) -> Result<(), String> {
        if self
            .records
            .last()
            .is_some_and(|last| self.bytes(last.path) >= path)
        {
            return Err("entries are not sorted by path and unique".into());
        }
        let mode = u16::try_from(entry.mode)
            .ok()
            .filter(|m| *m <= 0o7777)
            .ok_or_else(|| format!("permission bits {:o} out of range", entry.mode))?;
        let path = self.put(path)?;
        let target = match &entry.target {
            Some(t) => Some(self.put(t.as_bytes())?),
            None => None,
        };
        self.records.push(Record {
            path,
            target,
            size: entry.size,
            sha256: entry.sha256.as_ref().map(Sha256Hex::digest),
            mode,
            kind: entry.kind,
        });
        Ok(())
    }

    /// Releases what the growing store reserved beyond its size.
    pub fn finish(&mut self) {
        self.arena.shrink_to_fit();
        self.records.shrink_to_fit();
    }

    fn bytes(&self, (start, len): (u32, u32)) -> &[u8] {
        let start = start as usize;
        self.arena
            .get(start..start + len as usize)
            .unwrap_or_default()
    }

    pub fn len(&self) -> usize {
        self.records.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// The index of `path`, when the store holds it.
    pub fn find(&self, path: &[u8]) -> Option<usize> {
        self.records
            .binary_search_by(|r| self.bytes(r.path).cmp(path))
            .ok()
    }

    /// The path of the entry at `index`.
    pub fn path(&self, index: usize) -> &[u8] {
        self.records
            .get(index)
            .map_or(&[][..], |r| self.bytes(r.path))
    }

    /// The entry at `index`.
    pub fn get(&self, index: usize) -> Option<Stored<'_>> {
        let r = self.records.get(index)?;
        Some(Stored {
            kind: r.kind,
            mode: u32::from(r.mode),
            size: r.size,
            sha256: r.sha256.as_ref(),
            target: r.target.map(|t| self.bytes(t)),
        })
    }

    /// The entry at `path`.
    pub fn lookup(&self, path: &[u8]) -> Option<Stored<'_>> {
        self.find(path).and_then(|i| self.get(i))
    }

    /// Every entry, in path order, as a walk.
    pub fn to_snapshot(&self) -> Snapshot {
        (0..self.len())
            .filter_map(|i| {
                self.get(i)
                    .map(|e| (RepoPath::from(self.path(i)), e.entry()))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    fn entry(kind: Kind, target: Option<&str>, sha: Option<&str>) -> Entry {
        Entry {
            kind,
            mode: 0o644,
            size: 3,
            sha256: sha.map(|s| Sha256Hex::of(s.as_bytes())),
            target: target.map(RepoPath::from),
        }
    }

    #[test]
    fn holds_entries_exactly_and_finds_them() {
        let mut snapshot = Snapshot::new();
        snapshot.insert("a".into(), entry(Kind::Dir, None, None));
        snapshot.insert("a.b".into(), entry(Kind::File, None, Some("x")));
        snapshot.insert("a/l".into(), entry(Kind::Symlink, Some("/etc"), None));
        snapshot.insert(
            RepoPath::from(&b"a/\xff"[..]),
            entry(Kind::File, None, None),
        );
        let store = Store::from_snapshot(&snapshot).unwrap();
        assert_eq!(store.len(), 4);
        assert_eq!(store.to_snapshot(), snapshot);
        for (path, e) in &snapshot {
            assert_eq!(store.lookup(path.as_bytes()).unwrap().entry(), *e);
        }
        assert!(store.lookup(b"a/").is_none());
        assert!(store.lookup(b"b").is_none());
        assert!(store.lookup(b"").is_none());
    }

    #[test]
    fn refuses_unsorted_or_repeated_paths_and_bad_modes() {
        let mut store = Store::new();
        let e = entry(Kind::File, None, None);
        store.push(b"b", &e).unwrap();
        assert!(store.push(b"b", &e).is_err());
        assert!(store.push(b"a", &e).is_err());
        let mut wide = e.clone();
        wide.mode = 0o10000;
        assert!(store.push(b"c", &wide).is_err());
        assert_eq!(store.len(), 1);
    }
}
