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

/// What an [`Entry`] leaves out, and a reused workspace or a later step still acts on: how many
/// names the inode has (a hard link made to it, inside the tree or from outside), its
/// modification time (what `make` and other build tools trust), its owner and group, its inode
/// flags (`chattr`: immutable, append-only, no-dump, no-atime, synchronous, ...) and its extended
/// attributes (`user.*`, POSIX ACLs in `system.posix_acl_*`, capabilities in `security.*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inode {
    pub nlink: u64,
    pub mtime: (i64, i64),
    pub uid: u32,
    pub gid: u32,
    /// The flags `FS_IOC_GETFLAGS` reports that someone sets ([`SETTABLE_FLAGS`]; those the file
    /// system keeps itself, such as extents or a directory index, are left out); `None` for a
    /// symbolic link or special file and where the file system has no flags.
    pub flags: Option<u32>,
    /// SHA-256 over every attribute's name and value (in the kernel's order), `None` without
    /// any or where the file system has none.
    pub xattrs: Option<contract::ids::Sha256Hex>,
}

/// `FS_IOC_GETFLAGS` bits a user or administrator sets (`chattr` letters `s u c S i a d A D j t
/// T C x P F`); the rest the file system sets itself as the file grows or moves between file
/// systems (an overlay's copy-up).
pub const SETTABLE_FLAGS: u32 = 0x0000_0001 // s secure deletion
    | 0x0000_0002 // u undeletable
    | 0x0000_0004 // c compressed
    | 0x0000_0008 // S synchronous updates
    | 0x0000_0010 // i immutable
    | 0x0000_0020 // a append only
    | 0x0000_0040 // d no dump
    | 0x0000_0080 // A no atime updates
    | 0x0000_4000 // j data journalling
    | 0x0000_8000 // t no tail merging
    | 0x0001_0000 // D synchronous directory updates
    | 0x0002_0000 // T top of directory hierarchies
    | 0x0080_0000 // C no copy on write
    | 0x0200_0000 // x direct access
    | 0x2000_0000 // P project hierarchy
    | 0x4000_0000; // F case-insensitive lookups

/// The `chattr` letters of `flags`, in `lsattr`'s order.
pub fn flag_letters(flags: u32) -> String {
    const LETTERS: [(u32, char); 16] = [
        (0x0000_0001, 's'),
        (0x0000_0002, 'u'),
        (0x0000_0008, 'S'),
        (0x0001_0000, 'D'),
        (0x0000_0010, 'i'),
        (0x0000_0020, 'a'),
        (0x0000_0040, 'd'),
        (0x0000_0080, 'A'),
        (0x0000_0004, 'c'),
        (0x0000_4000, 'j'),
        (0x0000_8000, 't'),
        (0x0002_0000, 'T'),
        (0x0080_0000, 'C'),
        (0x0200_0000, 'x'),
        (0x2000_0000, 'P'),
        (0x4000_0000, 'F'),
    ];
    let letters: String = LETTERS
        .iter()
        .filter(|(bit, _)| flags & bit != 0)
        .map(|(_, c)| *c)
        .collect();
    if letters.is_empty() {
        "none".to_string()
    } else {
        letters
    }
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
    let mut snapshot = Snapshot::new();
    walk_each(root, limits, hash, false, &mut |path, entry, _| {
        snapshot.insert(path, entry);
    })?;
    Ok(snapshot)
}

/// [`walk`], and every entry's [`Inode`].
pub fn walk_with_inodes(
    root: &Path,
    limits: &WalkLimits,
    hash: &dyn Fn(&[u8], u64) -> bool,
) -> Result<(Snapshot, Inodes), WalkError> {
    let mut snapshot = Snapshot::new();
    let mut inodes = Inodes::new();
    walk_each(root, limits, hash, true, &mut |path, entry, inode| {
        if let Some(inode) = inode {
            inodes.insert(path.clone(), inode);
        }
        snapshot.insert(path, entry);
    })?;
    Ok((snapshot, inodes))
}

/// The walk as a stream: `visit` is given each entry (with its [`Inode`] when `with_inodes`) as
/// it is read, and nothing is kept; returns how many entries there were. Depth first, each
/// directory's names in byte order: what is held at any moment is the names of the directories
/// on the current path, at most `limits.max_depth` of them.
pub fn walk_each(
    root: &Path,
    limits: &WalkLimits,
    hash: &dyn Fn(&[u8], u64) -> bool,
    with_inodes: bool,
    visit: &mut dyn FnMut(RepoPath, Entry, Option<Inode>),
) -> Result<usize, WalkError> {
    struct Frame {
        dir: PathBuf,
        rel: Vec<u8>,
        depth: usize,
        names: std::vec::IntoIter<std::ffi::OsString>,
    }
    let read =
        |dir: &Path, rel: &[u8]| -> Result<std::vec::IntoIter<std::ffi::OsString>, WalkError> {
            let io = |source| WalkError::Io {
                path: shown(root, rel),
                source,
            };
            let mut names = Vec::new();
            for item in std::fs::read_dir(dir).map_err(io)? {
                names.push(item.map_err(io)?.file_name());
            }
            names.sort_unstable_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
            Ok(names.into_iter())
        };
    let mut count = 0usize;
    let mut stack = vec![Frame {
        dir: root.to_path_buf(),
        rel: Vec::new(),
        depth: 0,
        names: read(root, b"")?,
    }];
    while let Some(frame) = stack.last_mut() {
        let Some(name) = frame.names.next() else {
            stack.pop();
            continue;
        };
        let depth = frame.depth;
        let mut rel = frame.rel.clone();
        if !rel.is_empty() {
            rel.push(b'/');
        }
        rel.extend_from_slice(name.as_bytes());
        let abs = frame.dir.join(&name);
        // The display form is made only for an error: most entries never need it.
        let io = |source| WalkError::Io {
            path: display_bytes(&rel),
            source,
        };
        if count >= limits.max_entries {
            return Err(WalkError::TooManyEntries {
                max: limits.max_entries,
            });
        }
        if depth + 1 > limits.max_depth {
            return Err(WalkError::TooDeep {
                path: display_bytes(&rel),
                max: limits.max_depth,
            });
        }
        count += 1;
        let meta = std::fs::symlink_metadata(&abs).map_err(io)?;
        let file_type = meta.file_type();
        let mut entry = Entry {
            kind: Kind::Other,
            mode: meta.mode() & 0o7777,
            size: meta.len(),
            sha256: None,
            target: None,
        };
        let mut descend = false;
        if file_type.is_symlink() {
            entry.kind = Kind::Symlink;
            let target = std::fs::read_link(&abs).map_err(io)?;
            entry.target = Some(RepoPath::from(target.as_os_str().as_bytes()));
        } else if file_type.is_dir() {
            entry.kind = Kind::Dir;
            descend = true;
        } else if file_type.is_file() {
            entry.kind = Kind::File;
            if hash(&rel, meta.len()) {
                entry.sha256 = Some(hash_file(&abs, &meta, &rel)?);
            }
        }
        let inode = if with_inodes {
            Some(inode_of(&abs, entry.kind, &meta, &rel)?)
        } else {
            None
        };
        if descend {
            let names = read(&abs, &rel)?;
            visit(RepoPath::from(rel.clone()), entry, inode);
            stack.push(Frame {
                dir: abs,
                rel,
                depth: depth + 1,
                names,
            });
        } else {
            visit(RepoPath::from(rel), entry, inode);
        }
    }
    Ok(count)
}

/// Whether an error means the file system has no such thing (no flags, no extended
/// attributes): "none", not a failure.
fn unsupported(e: rustix::io::Errno) -> bool {
    e == rustix::io::Errno::NOTTY
        || e == rustix::io::Errno::NOTSUP
        || e == rustix::io::Errno::OPNOTSUPP
}

/// The [`Inode`] of the entry `lstat` described as `meta`. A file or directory is opened (not
/// following a link, not blocking, not as a controlling terminal) to read its flags and
/// attributes, and must be the inode `lstat` saw; a link or special file is not opened, nor is a
/// file the walk may not open (a build output of mode `000`, walked as its owner): its
/// attributes are read by path and its flags are not known (`None`, as on a file system without
/// them; a mode change outside the scope is a finding of its own). Any other error but "not
/// supported here" fails the walk.
fn inode_of(
    abs: &Path,
    kind: Kind,
    meta: &std::fs::Metadata,
    key: &[u8],
) -> Result<Inode, WalkError> {
    use rustix::fs::{Mode, OFlags};
    let fail = |what: &str, e: rustix::io::Errno| WalkError::Io {
        path: display_bytes(key),
        source: std::io::Error::other(format!("{what}: {e}")),
    };
    let mut inode = Inode {
        nlink: meta.nlink(),
        mtime: (meta.mtime(), meta.mtime_nsec()),
        uid: meta.uid(),
        gid: meta.gid(),
        flags: None,
        xattrs: None,
    };
    let fd = if matches!(kind, Kind::File | Kind::Dir) {
        match rustix::fs::open(
            abs,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
            Mode::empty(),
        ) {
            Ok(fd) => Some(fd),
            Err(rustix::io::Errno::ACCESS) => None,
            Err(e) => return Err(fail("open", e)),
        }
    } else {
        None
    };
    match fd {
        Some(fd) => {
            let stat = rustix::fs::fstat(&fd).map_err(|e| fail("fstat", e))?;
            if stat.st_dev != meta.dev() || stat.st_ino != meta.ino() {
                return Err(WalkError::Changed {
                    path: display_bytes(key),
                });
            }
            inode.flags = match rustix::fs::ioctl_getflags(&fd) {
                Ok(flags) => Some(flags.bits() & SETTABLE_FLAGS),
                Err(e) if unsupported(e) => None,
                Err(e) => return Err(fail("read inode flags", e)),
            };
            inode.xattrs = xattr_digest(
                || rustix::fs::flistxattr_query(&fd),
                |list| rustix::fs::flistxattr(&fd, list),
                |name, value| rustix::fs::fgetxattr(&fd, name, value),
                |name| rustix::fs::fgetxattr_query(&fd, name),
            )
            .map_err(|(what, e)| fail(what, e))?;
        }
        None => {
            inode.xattrs = xattr_digest(
                || rustix::fs::llistxattr_query(abs),
                |list| rustix::fs::llistxattr(abs, list),
                |name, value| rustix::fs::lgetxattr(abs, name, value),
                |name| rustix::fs::lgetxattr_query(abs, name),
            )
            .map_err(|(what, e)| fail(what, e))?;
        }
    }
    Ok(inode)
}

type Xattr<T> = Result<T, (&'static str, rustix::io::Errno)>;

/// The digest of an inode's extended attributes, `None` without any (or where the file system
/// has none). The list's size is asked first: an inode without attributes costs one call.
fn xattr_digest(
    list_size: impl Fn() -> rustix::io::Result<usize>,
    list: impl Fn(&mut [u8]) -> rustix::io::Result<usize>,
    get: impl Fn(&[u8], &mut [u8]) -> rustix::io::Result<usize>,
    get_size: impl Fn(&[u8]) -> rustix::io::Result<usize>,
) -> Xattr<Option<contract::ids::Sha256Hex>> {
    let size = match list_size() {
        Ok(0) => return Ok(None),
        Ok(size) => size,
        Err(e) if unsupported(e) => return Ok(None),
        Err(e) => return Err(("list extended attributes", e)),
    };
    let mut names = vec![0u8; size];
    let len = list(&mut names[..]).map_err(|e| ("list extended attributes", e))?;
    let names = names.get(..len).unwrap_or_default();
    if names.is_empty() {
        return Ok(None);
    }
    let mut hasher = Sha256::new();
    let mut value = Vec::new();
    for name in names.split(|b| *b == 0).filter(|n| !n.is_empty()) {
        let size = get_size(name).map_err(|e| ("read extended attribute", e))?;
        value.resize(size, 0);
        let n = get(name, &mut value[..]).map_err(|e| ("read extended attribute", e))?;
        let value = value.get(..n).unwrap_or_default();
        hasher.update((name.len() as u64).to_le_bytes());
        hasher.update(name);
        hasher.update((value.len() as u64).to_le_bytes());
        hasher.update(value);
    }
    let digest: [u8; 32] = hasher.finalize().into();
    Ok(Some(contract::ids::Sha256Hex::from_digest(&digest)))
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
    key: &[u8],
) -> Result<contract::ids::Sha256Hex, WalkError> {
    let io = |source| WalkError::Io {
        path: display_bytes(key),
        source,
    };
    let mut file = std::fs::File::open(abs).map_err(io)?;
    let opened = file.metadata().map_err(io)?;
    if opened.dev() != seen.dev() || opened.ino() != seen.ino() || !opened.is_file() {
        return Err(WalkError::Changed {
            path: display_bytes(key),
        });
    }
    let mut hasher = Sha256::new();
    // No larger than the file (and one byte to see its end): most files are small, and a
    // buffer of 64 KiB zeroed for each would cost more than reading them.
    let len = usize::try_from(seen.len()).unwrap_or(usize::MAX);
    let mut buf = vec![0u8; len.saturating_add(1).min(64 * 1024)];
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

    /// The walk reads a file's inode flags and a digest of its extended attributes (names and
    /// values: a value rewritten is another digest).
    #[test]
    fn inode_flags_and_attributes_are_read() {
        use rustix::fs::{IFlags, XattrFlags};
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, b"x").unwrap();
        let inode = |root: &Path| {
            let (_, inodes) =
                walk_with_inodes(root, &WalkLimits::default(), &|_, _| false).unwrap();
            inodes[&RepoPath::from("f")].clone()
        };
        let before = inode(dir.path());
        assert_eq!(before.xattrs, None);
        let fd = std::fs::File::open(&file).unwrap();
        match rustix::fs::fsetxattr(&fd, "user.x", b"1", XattrFlags::empty()) {
            Ok(()) => {
                let with = inode(dir.path());
                assert!(with.xattrs.is_some(), "{with:?}");
                rustix::fs::fsetxattr(&fd, "user.x", b"2", XattrFlags::empty()).unwrap();
                let other = inode(dir.path());
                assert!(
                    other.xattrs.is_some() && other.xattrs != with.xattrs,
                    "{other:?}"
                );
            }
            Err(e) => eprintln!(
                "skipped the attribute half: {} takes no user.x: {e}",
                dir.path().display()
            ),
        }
        match before.flags {
            Some(flags) => {
                assert_eq!(flags & 0x40, 0, "{before:?}");
                let now = rustix::fs::ioctl_getflags(&fd).unwrap();
                match rustix::fs::ioctl_setflags(&fd, now | IFlags::NODUMP) {
                    Ok(()) => {
                        let after = inode(dir.path());
                        assert_eq!(after.flags, Some(flags | 0x40), "{after:?}");
                        assert_eq!(flag_letters(0x40 | 0x80 | 0x08), "SdA");
                    }
                    Err(e) => eprintln!("skipped the flag half: no chattr +d here: {e}"),
                }
            }
            None => eprintln!(
                "skipped the flag half: {} has no inode flags",
                dir.path().display()
            ),
        }
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
