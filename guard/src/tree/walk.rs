//! A bounded walk of a worktree that records what is there without following anything: every
//! entry's type, permission bits, size, symlink target and (where asked) the SHA-256 of its
//! content. Symbolic links are recorded, never followed; directories are entered only when
//! `symlink_metadata` says they are directories.

use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::escape::display_bytes;
use crate::repo_path::RepoPath;

/// Bounds on one walk. Reaching either is an error (exit 2), never a silent cut-off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WalkLimits {
    /// Entries (files, directories, links, others) in the whole tree, `.git` included.
    pub max_entries: usize,
    /// Components in one path.
    pub max_depth: usize,
}

impl Default for WalkLimits {
    fn default() -> Self {
        WalkLimits {
            max_entries: 1_000_000,
            max_depth: 128,
        }
    }
}

pub use contract::tree::Kind;

/// One walked entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub kind: Kind,
    /// Permission bits (`st_mode & 0o7777`).
    pub mode: u32,
    /// `st_size` as `lstat` reports it.
    pub size: u64,
    /// SHA-256 of a file's content, when the walk was asked to hash it.
    pub sha256: Option<contract::ids::Sha256Hex>,
    /// A symbolic link's target, exact.
    pub target: Option<RepoPath>,
}

impl Entry {
    /// Whether the owner may execute the file: what git records as mode 100755.
    pub fn executable(&self) -> bool {
        self.mode & 0o100 != 0
    }
}

/// Every entry under a root, keyed by its exact root-relative path.
pub type Snapshot = BTreeMap<RepoPath, Entry>;

/// What an [`Entry`] leaves out, and a reused workspace still carries: how many names the
/// inode has (a hard link made to it, inside the tree or from outside), its modification time
/// (what `make` and other build tools trust), and its extended attributes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inode {
    pub nlink: u64,
    pub mtime: (i64, i64),
    /// SHA-256 over every attribute's name and value (in the kernel's order), `None` without
    /// any; the error text when they cannot be read.
    pub xattrs: Result<Option<String>, String>,
}

/// The [`Inode`] of every entry, by path.
pub type Inodes = BTreeMap<RepoPath, Inode>;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WalkError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("the tree has more than {max} entries")]
    TooManyEntries { max: usize },
    #[error("{path} has more than {max} path components")]
    TooDeep { path: String, max: usize },
    #[error("{path} changed while it was being read")]
    Changed { path: String },
}

/// Walks `root` (not following symbolic links) and returns every entry beneath it; the root
/// itself is not an entry. `hash(path, size)` says whether a file's content is hashed.
pub fn walk(
    root: &Path,
    limits: &WalkLimits,
    hash: &dyn Fn(&[u8], u64) -> bool,
) -> Result<Snapshot, WalkError> {
    walk_into(root, limits, hash, None)
}

/// [`walk`], and every entry's [`Inode`].
pub fn walk_with_inodes(
    root: &Path,
    limits: &WalkLimits,
    hash: &dyn Fn(&[u8], u64) -> bool,
) -> Result<(Snapshot, Inodes), WalkError> {
    let mut inodes = Inodes::new();
    let snapshot = walk_into(root, limits, hash, Some(&mut inodes))?;
    Ok((snapshot, inodes))
}

fn walk_into(
    root: &Path,
    limits: &WalkLimits,
    hash: &dyn Fn(&[u8], u64) -> bool,
    mut inodes: Option<&mut Inodes>,
) -> Result<Snapshot, WalkError> {
    let mut snapshot = Snapshot::new();
    let mut stack: Vec<(PathBuf, Vec<u8>, usize)> = vec![(root.to_path_buf(), Vec::new(), 0)];
    while let Some((dir, rel_dir, depth)) = stack.pop() {
        let io = |source| WalkError::Io {
            path: shown(root, &rel_dir),
            source,
        };
        let mut names = Vec::new();
        for item in std::fs::read_dir(&dir).map_err(io)? {
            names.push(item.map_err(io)?.file_name());
        }
        for name in names {
            let mut rel = rel_dir.clone();
            if !rel.is_empty() {
                rel.push(b'/');
            }
            rel.extend_from_slice(name.as_bytes());
            let abs = dir.join(&name);
            let shown = display_bytes(&rel);
            let io = |source| WalkError::Io {
                path: shown.clone(),
                source,
            };
            if snapshot.len() >= limits.max_entries {
                return Err(WalkError::TooManyEntries {
                    max: limits.max_entries,
                });
            }
            if depth + 1 > limits.max_depth {
                return Err(WalkError::TooDeep {
                    path: shown,
                    max: limits.max_depth,
                });
            }
            let meta = std::fs::symlink_metadata(&abs).map_err(io)?;
            let file_type = meta.file_type();
            let mut entry = Entry {
                kind: Kind::Other,
                mode: meta.mode() & 0o7777,
                size: meta.len(),
                sha256: None,
                target: None,
            };
            if file_type.is_symlink() {
                entry.kind = Kind::Symlink;
                let target = std::fs::read_link(&abs).map_err(io)?;
                entry.target = Some(RepoPath::from(target.as_os_str().as_bytes()));
            } else if file_type.is_dir() {
                entry.kind = Kind::Dir;
                stack.push((abs.clone(), rel.clone(), depth + 1));
            } else if file_type.is_file() {
                entry.kind = Kind::File;
                if hash(&rel, meta.len()) {
                    entry.sha256 = Some(hash_file(&abs, &meta, &shown)?);
                }
            }
            if let Some(inodes) = inodes.as_deref_mut() {
                inodes.insert(
                    RepoPath::from(rel.clone()),
                    Inode {
                        nlink: meta.nlink(),
                        mtime: (meta.mtime(), meta.mtime_nsec()),
                        xattrs: xattr_digest(&abs),
                    },
                );
            }
            snapshot.insert(RepoPath::from(rel), entry);
        }
    }
    Ok(snapshot)
}

/// The digest of `path`'s extended attributes (not following a link), `None` without any.
fn xattr_digest(path: &Path) -> Result<Option<String>, String> {
    // XATTR_LIST_MAX and XATTR_SIZE_MAX: no list or value is longer.
    let mut list = vec![0u8; 64 * 1024];
    let len = match rustix::fs::llistxattr(path, &mut list[..]) {
        Ok(len) => len,
        Err(rustix::io::Errno::NOTSUP) => return Ok(None),
        Err(e) => return Err(format!("list extended attributes: {e}")),
    };
    if len == 0 {
        return Ok(None);
    }
    let mut hasher = Sha256::new();
    let mut value = vec![0u8; 64 * 1024];
    for name in list[..len].split(|b| *b == 0).filter(|n| !n.is_empty()) {
        let n = rustix::fs::lgetxattr(path, name, &mut value[..])
            .map_err(|e| format!("read extended attribute: {e}"))?;
        hasher.update((name.len() as u64).to_le_bytes());
        hasher.update(name);
        hasher.update((n as u64).to_le_bytes());
        hasher.update(&value[..n]);
    }
    let digest: [u8; 32] = hasher.finalize().into();
    Ok(Some(
        contract::ids::Sha256Hex::from_digest(&digest)
            .as_str()
            .to_string(),
    ))
}

fn shown(root: &Path, rel: &[u8]) -> String {
    if rel.is_empty() {
        display_bytes(root.as_os_str().as_bytes())
    } else {
        display_bytes(rel)
    }
}

/// SHA-256 of a regular file's content. The opened file must be the one `lstat` saw: a path
/// swapped for a link (or anything else) in between is refused rather than followed.
fn hash_file(
    abs: &Path,
    seen: &std::fs::Metadata,
    key: &str,
) -> Result<contract::ids::Sha256Hex, WalkError> {
    let io = |source| WalkError::Io {
        path: key.to_string(),
        source,
    };
    let mut file = std::fs::File::open(abs).map_err(io)?;
    let opened = file.metadata().map_err(io)?;
    if opened.dev() != seen.dev() || opened.ino() != seen.ino() || !opened.is_file() {
        return Err(WalkError::Changed {
            path: key.to_string(),
        });
    }
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = file.read(&mut buf).map_err(io)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    let digest: [u8; 32] = hasher.finalize().into();
    Ok(contract::ids::Sha256Hex::from_digest(&digest))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    #[test]
    fn records_without_following_links() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join("a/b/f"), b"x").unwrap();
        std::os::unix::fs::symlink("/etc", root.join("a/l")).unwrap();
        let snap = walk(root, &WalkLimits::default(), &|_, _| true).unwrap();
        let keys: Vec<&[u8]> = snap.keys().map(RepoPath::as_bytes).collect();
        assert_eq!(keys, [&b"a"[..], b"a/b", b"a/b/f", b"a/l"]);
        let at = |path: &str| &snap[&RepoPath::from(path)];
        assert_eq!(at("a/l").kind, Kind::Symlink);
        assert_eq!(at("a/l").target, Some(RepoPath::from("/etc")));
        assert_eq!(
            at("a/b/f")
                .sha256
                .as_ref()
                .map(contract::ids::Sha256Hex::as_str),
            Some("2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881")
        );
        let unhashed = walk(root, &WalkLimits::default(), &|_, _| false).unwrap();
        assert_eq!(unhashed[&RepoPath::from("a/b/f")].sha256, None);
    }

    #[test]
    fn keys_are_the_exact_names() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().unwrap();
        let persian = "\u{645}\u{6cc}\u{200c}\u{62e}\u{648}\u{627}\u{647}\u{645}.md";
        std::fs::write(dir.path().join(persian), b"x").unwrap();
        std::fs::write(
            dir.path().join(std::ffi::OsStr::from_bytes(b"a\\b\xff")),
            b"x",
        )
        .unwrap();
        let snap = walk(dir.path(), &WalkLimits::default(), &|_, _| false).unwrap();
        assert!(snap.contains_key(&RepoPath::from(persian)));
        assert!(snap.contains_key(&RepoPath::from(&b"a\\b\xff"[..])));
    }

    #[test]
    fn limits_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("a/b/c")).unwrap();
        let few = WalkLimits {
            max_entries: 2,
            max_depth: 100,
        };
        assert!(matches!(
            walk(dir.path(), &few, &|_, _| true),
            Err(WalkError::TooManyEntries { max: 2 })
        ));
        let shallow = WalkLimits {
            max_entries: 100,
            max_depth: 2,
        };
        assert!(matches!(
            walk(dir.path(), &shallow, &|_, _| true),
            Err(WalkError::TooDeep { .. })
        ));
    }
}
