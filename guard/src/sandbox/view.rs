//! The command's file-system view as one list: what is at each path, and where it comes from.
//!
//! The outer process plans it ([`plan`]); the setup stage builds exactly this list on an empty
//! root (a fresh tmpfs, read-only once built); the enter stage proves it ([`prove`]): every mount
//! it can see is an entry of the list (or a submount that a read-only bind of the host carried
//! with it, or a socket mask), every host directory is the very one the plan named (device and
//! inode), every link points where the host's does, and `/` holds nothing else. What is not in
//! the list is not in the view: not hidden after the fact, never mounted (bubblewrap's
//! `--ro-bind /usr /usr`, nsjail's mount list). The list travels in the proof, so the report
//! says what the build could see and from where, not what a search of the host did not find.

use std::collections::BTreeSet;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::mounts::{self, MountEntry};

/// The system directories every build sees, read-only with their submounts: programs and
/// libraries (`/usr`), their configuration (`/etc`: what is secret there, `shadow`, `gshadow`,
/// `sudoers`, the SSH host keys, is readable by root alone, and the build holds no capability
/// and no group), and the kernel's read-only information (`/sys`: CPU topology and the control
/// group's limits, which glibc, the JVM and Rust's `available_parallelism` read, and where the
/// proof reads the build's own control group).
pub const SYSTEM_DIRS: &[&str] = &["/usr", "/etc", "/sys"];
/// The names merged-usr systems keep as symbolic links into `/usr` (copied as links, with the
/// host's target); a system where one is a directory has it bound read-only like `/usr`.
pub const SYSTEM_LINKS: &[&str] = &["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];

/// Where an entry's contents come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// The host's file or directory at the same path (`from`).
    Host,
    /// A symbolic link whose target (`from`) is the host's.
    Link,
    /// A fresh, empty tmpfs.
    Tmpfs,
    /// A directory made for the build in a fresh tmpfs, owned by the build user.
    Directory,
    /// The fresh `/dev`: a tmpfs holding the host's `null`, `zero`, `full`, `random` and
    /// `urandom`, a tmpfs `shm` and a private `devpts`.
    Dev,
    /// A proc of the sandbox's pid namespace, its system-wide knobs read-only and the kernel's
    /// keys covered.
    Proc,
    /// An overlay: the host's directory `from` (device and inode `identity`) as the lower layer,
    /// never written, under the guard's bounded write layer (`layer`, [`super::layer`]).
    Overlay,
}

/// Why an entry is in the view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// `/`: empty but for the mount points and links below.
    Root,
    /// [`SYSTEM_DIRS`] and [`SYSTEM_LINKS`].
    System,
    /// The worktree (or working directory), writable.
    Worktree,
    /// Its `.git`, read-only.
    GitDir,
    /// A declared build output (`--writable`).
    Output,
    /// A declared toolchain or cache (`--read-only`, `CARGO_HOME`, `RUSTUP_HOME`).
    Toolchain,
    /// The guard binary, which the stages run.
    Guard,
    /// `/tmp`, `/var/tmp`.
    Scratch,
    /// The build's `HOME`.
    Home,
    /// A directory inside a read-only bind that the build must not see (the runner's
    /// directories, `--hide`, a directory of nothing but sockets): an empty read-only tmpfs.
    Hidden,
    /// `/dev`.
    Dev,
    /// `/proc`.
    Proc,
}

/// One path of the view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ViewEntry {
    pub path: PathBuf,
    pub source: Source,
    pub role: Role,
    /// [`Source::Host`]: the host path bound there (the same path); [`Source::Link`]: the
    /// link's target.
    pub from: Option<PathBuf>,
    pub writable: bool,
    /// [`Source::Host`], [`Source::Overlay`]: the device and inode of `from` when the plan was
    /// made.
    pub identity: Option<[u64; 2]>,
    /// [`Source::Overlay`]: the guard's write layer, holding `upper/` and `work/`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layer: Option<PathBuf>,
}

impl ViewEntry {
    fn new(path: PathBuf, source: Source, role: Role, writable: bool) -> ViewEntry {
        ViewEntry {
            path,
            source,
            role,
            from: None,
            writable,
            identity: None,
            layer: None,
        }
    }

    /// A bind of the host's `path` (canonical) at the same path.
    fn host(path: &Path, role: Role, writable: bool) -> io::Result<ViewEntry> {
        let meta = std::fs::metadata(path)?;
        Ok(ViewEntry {
            from: Some(path.to_path_buf()),
            identity: Some([meta.dev(), meta.ino()]),
            ..ViewEntry::new(path.to_path_buf(), Source::Host, role, writable)
        })
    }

    /// The host's `path` (canonical) as the lower layer of an overlay over `layer`, writable.
    fn overlay(path: &Path, role: Role, layer: &Path) -> io::Result<ViewEntry> {
        Ok(ViewEntry {
            source: Source::Overlay,
            layer: Some(layer.to_path_buf()),
            ..ViewEntry::host(path, role, true)?
        })
    }

    /// Whether the setup stage puts a mount at this path (a link and a directory are not
    /// mounts).
    pub fn is_mount(&self) -> bool {
        !matches!(self.source, Source::Link | Source::Directory)
    }

    /// Whether mounts beneath it belong to it: a read-only bind of the host carries the host's
    /// submounts (made read-only one by one), `/dev` and `/proc` hold mounts of their own.
    fn holds_submounts(&self) -> bool {
        match self.source {
            Source::Host => !self.writable && self.role != Role::GitDir,
            Source::Dev | Source::Proc => true,
            Source::Link | Source::Tmpfs | Source::Directory | Source::Overlay => false,
        }
    }
}

/// The host's system entries ([`SYSTEM_DIRS`], [`SYSTEM_LINKS`]) as they are now: a link
/// copied with its target, a directory bound read-only, a name the host lacks left out.
pub fn system_entries() -> io::Result<Vec<ViewEntry>> {
    let mut entries = Vec::new();
    for name in SYSTEM_LINKS.iter().chain(SYSTEM_DIRS) {
        let path = Path::new(name);
        let meta = match std::fs::symlink_metadata(path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        if meta.file_type().is_symlink() {
            entries.push(ViewEntry {
                from: Some(std::fs::read_link(path)?),
                ..ViewEntry::new(path.to_path_buf(), Source::Link, Role::System, false)
            });
        } else if meta.is_dir() {
            entries.push(ViewEntry::host(path, Role::System, false)?);
        }
    }
    Ok(entries)
}

/// What the view is made of besides the system entries; every path canonical.
#[derive(Debug, Clone, Copy)]
pub struct Parts<'a> {
    pub worktree: &'a Path,
    /// The guard's write layer: the worktree is an overlay over it rather than a writable bind.
    pub layer: Option<&'a Path>,
    pub git_dir: Option<&'a Path>,
    pub outputs: &'a [PathBuf],
    /// Toolchains and caches, and the guard binary last.
    pub toolchains: &'a [PathBuf],
    pub guard: &'a Path,
    pub scratch: &'a [PathBuf],
    pub hidden: &'a [PathBuf],
    pub home: &'a Path,
}

/// The whole view, in the order the setup stage builds it: the root, then by depth (a parent
/// before what lies beneath it, so a bind inside a hidden directory shows again, and a hidden
/// directory inside a bind covers what it must). Exact duplicates are dropped.
pub fn plan(system: Vec<ViewEntry>, parts: &Parts<'_>) -> io::Result<Vec<ViewEntry>> {
    let mut entries = system;
    entries.push(ViewEntry::new("/dev".into(), Source::Dev, Role::Dev, false));
    entries.push(ViewEntry::new(
        "/proc".into(),
        Source::Proc,
        Role::Proc,
        false,
    ));
    for dir in parts.scratch {
        entries.push(ViewEntry::new(
            dir.clone(),
            Source::Tmpfs,
            Role::Scratch,
            true,
        ));
    }
    for dir in parts.hidden {
        entries.push(ViewEntry::new(
            dir.clone(),
            Source::Tmpfs,
            Role::Hidden,
            false,
        ));
    }
    entries.push(match parts.layer {
        Some(layer) => ViewEntry::overlay(parts.worktree, Role::Worktree, layer)?,
        None => ViewEntry::host(parts.worktree, Role::Worktree, true)?,
    });
    for dir in parts.outputs {
        entries.push(ViewEntry::host(dir, Role::Output, true)?);
    }
    for dir in parts.toolchains {
        entries.push(ViewEntry::host(dir, Role::Toolchain, false)?);
    }
    entries.push(ViewEntry::host(parts.guard, Role::Guard, false)?);
    if let Some(git_dir) = parts.git_dir {
        entries.push(ViewEntry::host(git_dir, Role::GitDir, false)?);
    }
    entries.push(ViewEntry::new(
        parts.home.to_path_buf(),
        Source::Directory,
        Role::Home,
        true,
    ));
    // Stable: at one depth the order above holds (a bind after a cover of the same path wins).
    entries.sort_by_key(|e| e.path.components().count());
    let mut seen = BTreeSet::new();
    entries.retain(|e| seen.insert((e.path.clone(), e.source, e.writable)));
    let mut view = vec![ViewEntry::new("/".into(), Source::Tmpfs, Role::Root, false)];
    view.extend(entries);
    Ok(view)
}

/// What the enter stage found of the planned view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ViewProof {
    /// The view as planned and built: every source the build can see.
    pub entries: Vec<ViewEntry>,
    /// The host's submounts the read-only binds carried with them (`/sys/fs/cgroup`, ...), by
    /// mount point and file-system type.
    pub submounts: Vec<String>,
    /// Entries not found as planned (another device and inode, another link target, no mount).
    pub mismatched: Vec<String>,
    /// Mounts in the view that no entry accounts for.
    pub unplanned_mounts: Vec<String>,
    /// Names at the root of the view that no entry accounts for.
    pub unplanned_root_entries: Vec<String>,
}

impl ViewProof {
    pub fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        for (what, list) in [
            ("view entries not as planned", &self.mismatched),
            ("mounts outside the planned view", &self.unplanned_mounts),
            (
                "names at the root outside the planned view",
                &self.unplanned_root_entries,
            ),
        ] {
            if !list.is_empty() {
                problems.push(format!("{what}: {}", list.join(", ")));
            }
        }
        problems
    }
}

/// Checks the view the calling process sees against `planned`: `mounts` is its mount table,
/// `masks` the mount points of the socket masks the setup stage placed, `root` what `/` lists.
pub fn prove(
    planned: &[ViewEntry],
    mounts: &[MountEntry],
    masks: &[PathBuf],
    root: io::Result<Vec<std::ffi::OsString>>,
) -> ViewProof {
    let mut mismatched = Vec::new();
    let mounted: BTreeSet<&Path> = mounts.iter().map(|m| m.mount_point.as_path()).collect();
    for entry in planned {
        let shown = entry.path.display();
        match entry.source {
            Source::Host => {
                let Some([dev, ino]) = entry.identity else {
                    continue;
                };
                match std::fs::metadata(&entry.path) {
                    Ok(m) if [m.dev(), m.ino()] == [dev, ino] => {}
                    Ok(m) => mismatched.push(format!(
                        "{shown} is device {} inode {}, planned {dev} {ino}",
                        m.dev(),
                        m.ino()
                    )),
                    // Out of the build's reach on the way there: it cannot see it either.
                    Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {}
                    Err(e) => mismatched.push(format!("{shown}: {e}")),
                }
            }
            Source::Link => match std::fs::read_link(&entry.path) {
                Ok(target) if Some(&target) == entry.from.as_ref() => {}
                other => mismatched.push(format!("{shown} is not the planned link: {other:?}")),
            },
            Source::Tmpfs | Source::Dev | Source::Proc => {
                // A hidden directory removed on the host since it was planned took its cover
                // with it, and there is nothing left to hide.
                let gone =
                    entry.role == Role::Hidden && std::fs::symlink_metadata(&entry.path).is_err();
                if !mounted.contains(entry.path.as_path()) && !gone {
                    mismatched.push(format!("{shown} is not mounted"));
                }
            }
            // The lower layer's identity was checked by the setup stage before it mounted the
            // overlay (and is checked again by the outer process after the build); here the
            // worktree must be that overlay.
            Source::Overlay => {
                let overlay = mounts
                    .iter()
                    .rev()
                    .find(|m| m.mount_point == entry.path)
                    .is_some_and(|m| m.fs_type == "overlay");
                if !overlay {
                    mismatched.push(format!("{shown} is not the planned overlay"));
                }
            }
            Source::Directory => {}
        }
    }
    let mut submounts = Vec::new();
    let mut unplanned_mounts = Vec::new();
    for mount in mounts {
        let point = mount.mount_point.as_path();
        if planned.iter().any(|e| e.is_mount() && e.path == point)
            || masks.iter().any(|m| m == point)
        {
            continue;
        }
        let carrier = planned
            .iter()
            .filter(|e| e.holds_submounts() && point.starts_with(&e.path))
            .max_by_key(|e| e.path.components().count());
        match carrier {
            Some(e) if e.source == Source::Host => {
                submounts.push(format!("{} ({})", point.display(), mount.fs_type));
            }
            Some(_) => {}
            None => unplanned_mounts.push(format!("{} ({})", point.display(), mount.fs_type)),
        }
    }
    submounts.sort();
    submounts.dedup();
    unplanned_mounts.sort();
    unplanned_mounts.dedup();
    let tops: BTreeSet<&std::ffi::OsStr> = planned
        .iter()
        .filter_map(|e| match e.path.components().nth(1) {
            Some(Component::Normal(name)) => Some(name),
            _ => None,
        })
        .collect();
    let unplanned_root_entries = match root {
        Ok(names) => {
            let mut names: Vec<String> = names
                .iter()
                .filter(|n| !tops.contains(n.as_os_str()))
                .map(|n| n.to_string_lossy().into_owned())
                .collect();
            names.sort();
            names
        }
        Err(e) => vec![format!("(cannot list /: {e})")],
    };
    ViewProof {
        entries: planned.to_vec(),
        submounts,
        mismatched,
        unplanned_mounts,
        unplanned_root_entries,
    }
}

/// Whether `path` is at or beneath one of `dirs`.
pub fn beneath_any(path: &Path, dirs: &[PathBuf]) -> bool {
    dirs.iter().any(|d| mounts::within(path, d))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    fn paths(view: &[ViewEntry]) -> Vec<(String, Source, Role)> {
        view.iter()
            .map(|e| (e.path.to_string_lossy().into_owned(), e.source, e.role))
            .collect()
    }

    /// The order puts every parent first and keeps a bind after a cover of the same depth;
    /// nothing but what the parts name is in it.
    #[test]
    fn the_plan_is_the_parts_by_depth() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let work = base.join("r/work");
        let tool = base.join("tool");
        let hidden = base.join("tool/secret");
        let inner = base.join("tool/secret/bin");
        for d in [&work.join(".git"), &inner] {
            std::fs::create_dir_all(d).unwrap();
        }
        let guard = base.join("guard");
        std::fs::write(&guard, b"").unwrap();
        let toolchains = [tool.clone(), inner.clone()];
        let view = plan(
            Vec::new(),
            &Parts {
                worktree: &work,
                layer: None,
                git_dir: Some(&work.join(".git")),
                outputs: &[],
                toolchains: &toolchains,
                guard: &guard,
                scratch: &[PathBuf::from("/tmp")],
                hidden: std::slice::from_ref(&hidden),
                home: Path::new("/tmp/home"),
            },
        )
        .unwrap();
        let at = |p: &Path| view.iter().position(|e| e.path == p).unwrap();
        assert_eq!(view[0].role, Role::Root);
        assert!(at(&tool) < at(&hidden) && at(&hidden) < at(&inner));
        assert!(at(&work) < at(&work.join(".git")));
        assert!(at(Path::new("/tmp")) < at(Path::new("/tmp/home")));
        let roles: BTreeSet<String> = paths(&view)
            .into_iter()
            .map(|(_, _, r)| format!("{r:?}"))
            .collect();
        assert_eq!(
            roles,
            [
                "Dev",
                "GitDir",
                "Guard",
                "Hidden",
                "Home",
                "Proc",
                "Root",
                "Scratch",
                "Toolchain",
                "Worktree"
            ]
            .iter()
            .map(|s| s.to_string())
            .collect()
        );
        let git = &view[at(&work.join(".git"))];
        assert!(!git.writable && git.identity.is_some() && !git.holds_submounts());
        assert!(view[at(&tool)].holds_submounts());
        assert!(!view[at(&work)].holds_submounts());
    }

    fn mount(point: &str, fs_type: &str) -> MountEntry {
        MountEntry {
            id: 1,
            parent: 1,
            mount_point: PathBuf::from(point),
            options: vec!["ro".into()],
            fs_type: fs_type.into(),
        }
    }

    /// Every mount must be an entry, a submount of a read-only host bind, part of `/dev` or
    /// `/proc`, or a socket mask; anything else is named.
    #[test]
    fn mounts_outside_the_plan_are_named() {
        let usr = ViewEntry {
            from: Some("/usr".into()),
            ..ViewEntry::new("/usr".into(), Source::Host, Role::System, false)
        };
        let work = ViewEntry {
            from: Some("/w".into()),
            ..ViewEntry::new("/w".into(), Source::Host, Role::Worktree, true)
        };
        let planned = vec![
            ViewEntry::new("/".into(), Source::Tmpfs, Role::Root, false),
            usr,
            work,
            ViewEntry::new("/proc".into(), Source::Proc, Role::Proc, false),
        ];
        let mounts = [
            mount("/", "tmpfs"),
            mount("/usr", "ext4"),
            mount("/usr/share/fonts", "overlay"),
            mount("/proc", "proc"),
            mount("/proc/sys", "proc"),
            mount("/w/sock", "tmpfs"),
            mount("/w/inner", "ext4"),
            mount("/var/lib/docker", "overlay"),
        ];
        let root = ["usr", "w", "proc", "opt"]
            .map(std::ffi::OsString::from)
            .to_vec();
        let proof = prove(&planned, &mounts, &[PathBuf::from("/w/sock")], Ok(root));
        assert_eq!(proof.submounts, ["/usr/share/fonts (overlay)"]);
        assert_eq!(
            proof.unplanned_mounts,
            ["/var/lib/docker (overlay)", "/w/inner (ext4)"]
        );
        assert_eq!(proof.unplanned_root_entries, ["opt"]);
        assert!(proof.mismatched.is_empty(), "{:?}", proof.mismatched);
        assert_eq!(
            proof.problems(),
            [
                "mounts outside the planned view: /var/lib/docker (overlay), /w/inner (ext4)",
                "names at the root outside the planned view: opt"
            ]
        );
    }
}
