//! Ground truth about the worktree the candidate diff was applied to, before and after the build.
//!
//! # After apply (`guard verify-tree`)
//!
//! The real delta between the base commit and the worktree must equal the verdict's file list
//! exactly: same paths, same statuses (a rename is its source deleted and its target added, as
//! `git diff --no-renames` shows it), same modes, nothing else. The delta is read twice:
//!
//! 1. **git's view**: every file on disk is staged into a throwaway index holding the base tree
//!    (`git add --all --force`, so untracked *and ignored* files count; [`GitRepo::worktree_changes`])
//!    and compared with the base. A fresh index has no assume-unchanged or skip-worktree bits and no
//!    stat cache that could hide a change; file modes and symlinks are taken from the file system
//!    whatever the repository's `core.fileMode`/`core.symlinks` say.
//! 2. **the file system's view**: a walk that follows nothing ([`walk::walk`]) must find exactly
//!    the expected tree (the base tree with the verdict's changes): every file with its executable
//!    bit, every symlink of the base, no other entry. This covers what git cannot stage: files
//!    inside a nested `.git` directory, FIFOs, sockets, empty directories.
//!
//! Any difference is a `tree-mismatch` finding naming the path. Contents of the changed files are
//! not compared with the diff here: `guard apply` wrote them with git from hash-checked bytes a
//! moment before, in the same trusted step.
//!
//! # The baseline
//!
//! The same walk is recorded as a [`Baseline`]: (path, type, permission bits, size, SHA-256,
//! symlink target) of every entry under the worktree, **`.git` included** (config, hooks, info,
//! refs, index and every object, loose or packed, by the SHA-256 of its bytes: a rewrite that keeps
//! an object's size is still a change), and ignored files included; and the [`Identity`] of the
//! worktree directory and of its `.git` (device and inode), so that a worktree swapped for a copy
//! (`mv work work.orig; cp -a work.orig work`) is not mistaken for the original. It binds the base
//! commit, the diff hash, the verdict file's hash and the scope. `guard run --verdict --base` keeps
//! it in memory, out of the build's reach; `guard verify-tree --out` writes it as a document
//! ([`json_v1::SnapshotDoc`]).
//!
//! # After the build (`guard run --verdict`, or `guard verify-tree --after-build`)
//!
//! The worktree directory and its `.git` must still be the same directories (device and inode);
//! a replaced one is a `build-wrote` finding at `.` or `.git`. The tree is walked again, without
//! running git (the build may have rewritten `.git/config`, and git would obey it), and compared
//! with the baseline. Every path the build created, modified (content, permission bits, type, link
//! target) or deleted is a `build-wrote` finding when it is
//!
//! - inside `.git/` (anything at all, the index included: a build has no business there, and
//!   `guard run --repo` mounts it read-only; the check is what catches a build that ran without
//!   that mount);
//! - a symbolic link that was created or changed, anywhere (build outputs included);
//! - at a path the path rules refuse (a nested `.git` in any disguise, not UTF-8, controls, ...);
//! - in the denied surface ([`Policy::denied`]), build outputs included: deny beats build output;
//! - outside the verdict's declared scope, unless the policy declares it a build output
//!   ([`Policy::is_build_output`], default `target/**`).
//!
//! Directories themselves are reported only in the first, third and fourth case (creating
//! `target/` is not a write; creating `.github/` is); their sizes are not compared, since file
//! systems change them as entries come and go.
//!
//! `guard run` also compares what an [`Entry`] leaves out ([`walk::Inode`], read just before the
//! build): hard-link counts anywhere, an entry made immutable or append-only anywhere, and
//! outside the scope the owner and group, the inode flags (`chattr`), the extended attributes
//! (POSIX ACLs included) and a file's modification time. The check streams: the baseline is held
//! as a compact store sorted by path ([`store::Store`], read from its document as a stream), each
//! walked entry is looked up there, judged as it is read and then dropped; at most
//! [`MAX_FINDINGS`] findings are listed, the rest counted.

pub mod json_v1;
pub mod store;
pub mod walk;

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::check::FileChange;
use crate::diff::{MODE_EXEC, MODE_FILE, MODE_GITLINK, MODE_SYMLINK};
use crate::escape::display_bytes;
use crate::git::{GitError, GitRepo, RawChange};
use crate::output::json_v1::{CheckMode, VerdictDoc};
use crate::path::{PathLimits, validate_path};
use crate::policy::{Policy, Scope};
use crate::repo_path::RepoPath;
use crate::rules::RuleId;
use json_v1::Kind;
use json_v1::SnapshotDoc;
pub use json_v1::{Change, Check, DirId, Identity};
use store::{Store, Stored};
use walk::{Entry, Snapshot, WalkError, WalkLimits};

const MODE_TREE: u32 = 0o040000;

/// One reason the tree check fails.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub rule: RuleId,
    /// Root-relative, exact.
    pub path: RepoPath,
    pub change: Change,
    pub message: String,
    /// The policy entry that decided it, when one did.
    pub policy_entry: Option<String>,
}

/// Errors that stop a tree check from reaching a result (exit 2).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TreeError {
    #[error("--repo {path}: {reason}")]
    Repo { path: String, reason: String },
    #[error(transparent)]
    Git(#[from] GitError),
    #[error(transparent)]
    Walk(#[from] WalkError),
    #[error("verdict: {0}")]
    Verdict(String),
    #[error("baseline: {0}")]
    Baseline(String),
}

/// A worktree checked out at its top level with a real `.git` directory.
#[derive(Debug, Clone)]
pub struct Checkout {
    /// Canonical path of the worktree's top level.
    pub root: PathBuf,
    pub git: GitRepo,
}

/// Opens the worktree at `dir`, which must be the top level of a non-bare repository whose `.git`
/// is a directory (not a symlink, not the `gitdir:` file of a linked worktree or submodule: the
/// hooks and config that matter would live elsewhere, out of the checks' sight).
pub fn open_checkout(dir: &Path) -> Result<Checkout, TreeError> {
    let fail = |reason: String| TreeError::Repo {
        path: display_bytes(dir.as_os_str().as_bytes()),
        reason,
    };
    let root = dir.canonicalize().map_err(|e| fail(e.to_string()))?;
    let git = GitRepo::open(&root)?;
    let top = git.toplevel()?;
    let top = top.canonicalize().map_err(|e| fail(e.to_string()))?;
    if top != root {
        return Err(fail(format!(
            "not the top level of its worktree ({})",
            display_bytes(top.as_os_str().as_bytes())
        )));
    }
    match std::fs::symlink_metadata(root.join(".git")) {
        Ok(meta) if meta.is_dir() => Ok(Checkout { root, git }),
        Ok(_) => Err(fail(
            ".git is not a directory (a linked worktree, a submodule or a symlink); use a plain clone"
                .into(),
        )),
        Err(e) => Err(fail(format!(".git: {e}"))),
    }
}

/// Whether a root-relative path is `.git` or inside it.
pub fn in_git_dir(path: &[u8]) -> bool {
    path == b".git" || path.starts_with(b".git/")
}

/// Files whose content the baseline hashes: all of them, git's objects included (an object
/// rewritten in place with the same size must not pass as unchanged).
pub fn hashed_in_baseline(_path: &[u8], _size: u64) -> bool {
    true
}

/// `lstat` of `root` and `root/.git`; both must be directories (not symlinks).
pub fn identity_of(root: &Path) -> Result<Identity, TreeError> {
    use std::os::unix::fs::MetadataExt;
    let id = |path: &Path| -> Result<DirId, TreeError> {
        let meta = std::fs::symlink_metadata(path).map_err(|e| TreeError::Repo {
            path: display_bytes(path.as_os_str().as_bytes()),
            reason: e.to_string(),
        })?;
        if !meta.is_dir() {
            return Err(TreeError::Repo {
                path: display_bytes(path.as_os_str().as_bytes()),
                reason: "not a directory".into(),
            });
        }
        Ok(DirId {
            dev: meta.dev(),
            ino: meta.ino(),
        })
    };
    Ok(Identity {
        root: id(root)?,
        git: id(&root.join(".git"))?,
    })
}

/// What the tree check after the build compares with: the verified tree after apply, taken by the
/// trusted side before the build ran.
#[derive(Debug, Clone)]
pub struct Baseline {
    /// Canonical worktree directory.
    pub root: PathBuf,
    pub identity: Identity,
    pub base_commit: contract::ids::CommitId,
    pub diff_sha256: contract::ids::Sha256Hex,
    pub verdict_sha256: contract::ids::Sha256Hex,
    pub scope: Vec<String>,
    /// Every entry, compact and sorted by path ([`Store`]).
    pub snapshot: Store,
}

impl Baseline {
    /// The baseline a snapshot document describes, for the worktree at `root`: a verified
    /// after-apply snapshot, taken of this very directory, with the verdict whose bytes hash to
    /// `verdict_sha256`.
    pub fn from_doc(
        root: &Path,
        doc: &SnapshotDoc,
        verdict_sha256: &str,
    ) -> Result<Baseline, TreeError> {
        let snapshot =
            Store::from_snapshot(&json_v1::snapshot_of(doc)).map_err(TreeError::Baseline)?;
        Baseline::from_parts(root, doc, snapshot, verdict_sha256)
    }

    /// [`Baseline::from_doc`] for a document read as a stream ([`SnapshotDoc::parse_each`]):
    /// `doc` without its entries, `snapshot` the entries it held.
    pub fn from_parts(
        root: &Path,
        doc: &SnapshotDoc,
        snapshot: Store,
        verdict_sha256: &str,
    ) -> Result<Baseline, TreeError> {
        if doc.taken != Check::AfterApply || !doc.verified {
            return Err(TreeError::Baseline(
                "not the snapshot of a passing check after apply".into(),
            ));
        }
        if verdict_sha256 != doc.verdict_sha256.as_str() {
            return Err(TreeError::Baseline(
                "the verdict file is not the one the baseline was taken with".into(),
            ));
        }
        let root = root.canonicalize().map_err(|e| TreeError::Repo {
            path: display_bytes(root.as_os_str().as_bytes()),
            reason: e.to_string(),
        })?;
        let exact_root = RepoPath::from(root.as_os_str().as_bytes());
        if exact_root != doc.root {
            return Err(TreeError::Baseline(format!(
                "taken of {}, not of {}",
                doc.root.display(),
                exact_root.display()
            )));
        }
        Ok(Baseline {
            root,
            identity: doc.identity,
            base_commit: doc.base_commit.clone(),
            diff_sha256: doc.diff_sha256.clone(),
            verdict_sha256: doc.verdict_sha256.clone(),
            scope: doc.scope.clone(),
            snapshot,
        })
    }
}

/// Checks a verdict document before a tree is compared with it: an accepting, git-cross-checked
/// guard verdict whose file list maps onto git's changes (the document's own fields were checked
/// when it was read).
pub fn check_verdict(doc: &VerdictDoc) -> Result<(), TreeError> {
    if !doc.accepted() || !doc.violations.is_empty() {
        return Err(TreeError::Verdict(
            "the verdict does not accept the diff".into(),
        ));
    }
    if doc.mode != CheckMode::GitCrossChecked {
        return Err(TreeError::Verdict(
            "the verdict was not cross-checked with git (guard check --repo)".into(),
        ));
    }
    expected_changes(doc).map(|_| ())
}

/// The raw changes `git diff-index --no-renames <base>` must show for the verdict's file list
/// ([`crate::check::index_changes`], the one mapping), keyed by path; every path valid.
pub fn expected_changes(doc: &VerdictDoc) -> Result<BTreeMap<Vec<u8>, RawChange>, TreeError> {
    let changes =
        crate::check::index_changes(doc.files.iter().map(FileChange::from)).ok_or_else(|| {
            TreeError::Verdict(
                "a file of the list lacks a path or mode it needs, or a modification names two \
                 paths"
                    .into(),
            )
        })?;
    let mut out: BTreeMap<Vec<u8>, RawChange> = BTreeMap::new();
    for change in changes {
        if validate_path(&change.path, &PathLimits::default()).is_err() {
            return Err(TreeError::Verdict(format!(
                "the file list holds an invalid path {}",
                display_bytes(&change.path)
            )));
        }
        let shown = display_bytes(&change.path);
        if out.insert(change.path.clone(), change).is_some() {
            return Err(TreeError::Verdict(format!(
                "the file list names {shown} twice"
            )));
        }
    }
    Ok(out)
}

/// The outcome of the check after apply.
#[derive(Debug)]
pub struct AfterApply {
    pub base_commit: contract::ids::CommitId,
    pub findings: Vec<Finding>,
    /// The walk, to be written as the baseline.
    pub snapshot: Snapshot,
    /// The worktree's and `.git`'s device and inode, taken before the walk.
    pub identity: Identity,
}

/// Compares the worktree of `checkout` with `base` plus the verdict's file list (see the module
/// documentation). `verdict` must have passed [`check_verdict`].
pub fn verify_after_apply(
    checkout: &Checkout,
    base: &str,
    verdict: &VerdictDoc,
    limits: &WalkLimits,
) -> Result<AfterApply, TreeError> {
    check_verdict(verdict)?;
    let expected = expected_changes(verdict)?;
    let identity = identity_of(&checkout.root)?;
    let git = &checkout.git;
    let resolved = git.resolve_commit(base)?;
    let base_commit = contract::ids::CommitId::parse(&resolved).map_err(|e| {
        TreeError::Verdict(format!("--base {}: {e}", display_bytes(base.as_bytes())))
    })?;
    let base_tree = git.tree_modes(base_commit.as_str())?;
    let actual: BTreeMap<Vec<u8>, RawChange> = git
        .worktree_changes(base_commit.as_str())?
        .into_iter()
        .map(|c| (c.path.clone(), c))
        .collect();

    let mut findings: BTreeMap<RepoPath, Finding> = BTreeMap::new();
    let paths: BTreeSet<&Vec<u8>> = expected.keys().chain(actual.keys()).collect();
    for path in paths {
        let finding = match (expected.get(path), actual.get(path)) {
            (Some(e), Some(a)) if e == a => continue,
            (Some(e), Some(a)) => mismatch(
                path,
                Change::Differs,
                format!(
                    "the verdict has {} but the worktree has {}",
                    describe(e),
                    describe(a)
                ),
            ),
            (Some(e), None) => mismatch(path, Change::Missing, missing_message(e)),
            (None, Some(a)) => mismatch(path, Change::Unexpected, unexpected_message(a)),
            (None, None) => continue,
        };
        findings.insert(finding.path.clone(), finding);
    }

    // The expected tree: the base's files, links and gitlinks with the verdict's changes.
    let mut tree: BTreeMap<RepoPath, u32> = base_tree
        .iter()
        .filter(|(_, mode)| **mode != MODE_TREE)
        .map(|(p, m)| (RepoPath::from(p.as_slice()), *m))
        .collect();
    for change in expected.values() {
        let key = RepoPath::from(change.path.as_slice());
        if change.status == 'D' {
            tree.remove(&key);
        } else {
            tree.insert(key, change.new_mode);
        }
    }
    let mut dirs: BTreeSet<&[u8]> = BTreeSet::new();
    for (path, mode) in &tree {
        let path = path.as_bytes();
        if *mode == MODE_GITLINK {
            dirs.insert(path);
        }
        for (i, _) in path.iter().enumerate().filter(|(_, b)| **b == b'/') {
            dirs.insert(&path[..i]);
        }
    }

    let snapshot = walk::walk(&checkout.root, limits, &hashed_in_baseline)?;
    let mut stray_dirs: Vec<&[u8]> = Vec::new();
    for (path, entry) in snapshot.iter().filter(|(p, _)| !in_git_dir(p.as_bytes())) {
        let problem = match (entry.kind, tree.get(path)) {
            (Kind::Dir, _) if dirs.contains(path.as_bytes()) => None,
            (Kind::Dir, _) => {
                stray_dirs.push(path.as_bytes());
                None
            }
            (Kind::File, Some(&MODE_FILE)) if !entry.executable() => None,
            (Kind::File, Some(&MODE_EXEC)) if entry.executable() => None,
            (Kind::Symlink, Some(&MODE_SYMLINK)) => None,
            (_, Some(mode)) => Some(mismatch(
                path.as_bytes(),
                Change::Differs,
                format!(
                    "expected {} ({mode:06o}) but the worktree has {}",
                    mode_kind(*mode),
                    found(entry)
                ),
            )),
            (_, None) => Some(mismatch(
                path.as_bytes(),
                Change::Unexpected,
                format!(
                    "not in the verdict: the worktree has {} that the expected tree does not \
                     (git cannot see it: inside a nested .git directory, or not a file)",
                    found(entry)
                ),
            )),
        };
        if let Some(f) = problem {
            findings.entry(path.clone()).or_insert(f);
        }
    }
    for (path, mode) in &tree {
        if !snapshot.contains_key(path) {
            let f = mismatch(
                path.as_bytes(),
                Change::Missing,
                format!(
                    "expected {} ({mode:06o}) but the worktree has nothing here",
                    mode_kind(*mode)
                ),
            );
            findings.entry(path.clone()).or_insert(f);
        }
    }
    for dir in stray_dirs {
        let mut prefix = dir.to_vec();
        prefix.push(b'/');
        if !findings.keys().any(|p| p.as_bytes().starts_with(&prefix)) {
            let f = mismatch(
                dir,
                Change::Unexpected,
                "not in the verdict: a directory that holds nothing the expected tree has".into(),
            );
            findings.entry(RepoPath::from(dir)).or_insert(f);
        }
    }
    if identity_of(&checkout.root)? != identity {
        return Err(TreeError::Repo {
            path: display_bytes(checkout.root.as_os_str().as_bytes()),
            reason: "the worktree or its .git was replaced during the check".into(),
        });
    }
    Ok(AfterApply {
        base_commit,
        findings: findings.into_values().collect(),
        snapshot,
        identity,
    })
}

fn mismatch(path: &[u8], change: Change, message: String) -> Finding {
    Finding {
        rule: RuleId::TreeMismatch,
        path: RepoPath::from(path),
        change,
        message,
        policy_entry: None,
    }
}

fn mode_kind(mode: u32) -> &'static str {
    match mode {
        MODE_SYMLINK => "a symbolic link",
        MODE_GITLINK => "a gitlink (embedded repository)",
        MODE_EXEC => "an executable file",
        _ => "a file",
    }
}

fn found(entry: &Entry) -> String {
    match entry.kind {
        Kind::File if entry.executable() => format!("an executable file ({:04o})", entry.mode),
        Kind::File => format!("a non-executable file ({:04o})", entry.mode),
        Kind::Symlink => "a symbolic link".to_string(),
        Kind::Dir => "a directory".to_string(),
        Kind::Other => "a special file (FIFO, socket or device)".to_string(),
    }
}

fn describe(c: &RawChange) -> String {
    let what = match c.status {
        'A' => "added",
        'D' => "deleted",
        'T' => "type-changed",
        _ => "modified",
    };
    format!("{what} {:06o} -> {:06o}", c.old_mode, c.new_mode)
}

fn missing_message(e: &RawChange) -> String {
    match e.status {
        'A' => format!(
            "the verdict adds {} ({:06o}) but the worktree does not have it",
            mode_kind(e.new_mode),
            e.new_mode
        ),
        'D' => "the verdict deletes this file but the worktree still has it as in the base".into(),
        _ => "the verdict changes this file but the worktree has it as in the base (a reverted change?)"
            .into(),
    }
}

fn unexpected_message(a: &RawChange) -> String {
    // A link is accepted only as the verdict lists it (`symlinks.allow: true`); any other is this.
    let symlink = if a.new_mode == MODE_SYMLINK {
        " (a symbolic link)"
    } else {
        ""
    };
    match a.status {
        'A' => format!(
            "not in the verdict: the worktree has {} ({:06o}) that the base does not (untracked and ignored files count){symlink}",
            mode_kind(a.new_mode),
            a.new_mode
        ),
        'D' => "not in the verdict: the file is missing from the worktree".into(),
        'T' => format!(
            "not in the verdict: the type changes from {:06o} to {:06o}{symlink}",
            a.old_mode, a.new_mode
        ),
        _ if a.old_mode != a.new_mode => format!(
            "not in the verdict: the mode changes from {:06o} to {:06o}",
            a.old_mode, a.new_mode
        ),
        _ => "not in the verdict: the content differs from the base".into(),
    }
}

/// At most this many findings of a check after the build are carried in full, the first by
/// path; the rest are counted, in one more finding at `.` ("and 899,000 more"). A build that
/// leaves a million stray files fails just the same, with a report and a log of bounded size.
pub const MAX_FINDINGS: usize = 1_000;

/// The outcome of the check after the build.
#[derive(Debug)]
pub struct AfterBuild {
    /// At most [`MAX_FINDINGS`] of them, and one that counts the rest.
    pub findings: Vec<Finding>,
    /// Entries walked.
    pub entries: u64,
    /// The walk, for `--out`; empty unless it was asked for.
    pub snapshot: Snapshot,
}

/// Compares the worktree at `root` with a baseline document (see the module documentation).
/// `verdict` is the verdict file the baseline was taken for (`verdict_sha256` the hash of its
/// bytes); its scope is the declared scope. `baseline` is the document without its entries and
/// `entries` what it held ([`SnapshotDoc::parse_each`]). `keep`: whether the walk is kept, for
/// `--out`.
#[allow(clippy::too_many_arguments)]
pub fn verify_after_build(
    root: &Path,
    baseline: &SnapshotDoc,
    entries: Store,
    verdict: &VerdictDoc,
    verdict_sha256: &str,
    policy: &Policy,
    limits: &WalkLimits,
    keep: bool,
) -> Result<AfterBuild, TreeError> {
    let baseline = Baseline::from_parts(root, baseline, entries, verdict_sha256)?;
    verify_against(&baseline, verdict, policy, limits, None, None, keep)
}

/// The [`walk::Inode`] of each of a baseline's entries as read just before the build, by the
/// entry's index in the baseline's [`Store`] (`None` for one not read): one record an entry,
/// without a second copy of the paths.
#[derive(Debug, Clone, Default)]
pub struct BaselineInodes(Vec<Option<walk::Inode>>);

impl BaselineInodes {
    /// The inode of the baseline's entry at `index`.
    pub fn get(&self, index: usize) -> Option<&walk::Inode> {
        self.0.get(index).and_then(Option::as_ref)
    }

    /// Every inode read, with its entry's index in the baseline's store.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (usize, &mut walk::Inode)> {
        self.0
            .iter_mut()
            .enumerate()
            .filter_map(|(i, inode)| inode.as_mut().map(|inode| (i, inode)))
    }
}

/// Findings in path order, at most [`MAX_FINDINGS`] kept, the rest counted.
#[derive(Debug, Default)]
struct Bounded {
    kept: BTreeMap<(RepoPath, usize), Finding>,
    seq: usize,
    more: u64,
}

impl Bounded {
    fn push(&mut self, finding: Finding) {
        self.seq += 1;
        self.kept.insert((finding.path.clone(), self.seq), finding);
        if self.kept.len() > MAX_FINDINGS {
            self.kept.pop_last();
            self.more += 1;
        }
    }

    fn len(&self) -> u64 {
        self.kept.len() as u64 + self.more
    }

    fn finish(self) -> Vec<Finding> {
        let more = self.more;
        let mut out: Vec<Finding> = self.kept.into_values().collect();
        if more > 0 {
            out.push(Finding {
                rule: RuleId::BuildWrote,
                path: RepoPath::from("."),
                change: Change::Modified,
                message: format!(
                    "and {} more findings like these, not listed (the first {} by path are)",
                    thousands(more),
                    MAX_FINDINGS
                ),
                policy_entry: None,
            });
        }
        out
    }
}

/// `899000` as `899,000`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Compares the worktree with an in-memory baseline (see the module documentation): the
/// worktree and `.git` must be the same directories, and every write the build made is judged.
/// `verdict` must be the one the baseline was taken with (the caller binds them). `inodes`: the
/// hard-link counts, modification times and extended attributes read just before the build
/// ([`changed_since`]), compared too. `view`: where the tree the build left is walked when it
/// is not the worktree itself (`guard run`'s read-only merged view of its write layer over the
/// worktree, which stays the lower layer and whose identity is checked as ever).
///
/// The cost is bounded by the baseline: only a file the baseline hashed, of the same size as
/// then, is read again (a new or resized file differs without reading it, however large or
/// sparse), and a tree the walk cannot read whole (more entries or depth than `limits`, an
/// unreadable directory) is a finding, not an error.
pub fn verify_against(
    baseline: &Baseline,
    verdict: &VerdictDoc,
    policy: &Policy,
    limits: &WalkLimits,
    inodes: Option<&BaselineInodes>,
    view: Option<&Path>,
    keep: bool,
) -> Result<AfterBuild, TreeError> {
    check_verdict(verdict)?;
    let root = &baseline.root;
    let scope = Scope::new(&verdict.scope).map_err(|e| TreeError::Verdict(e.to_string()))?;
    let mut findings = Vec::new();
    let now = identity_of(root);
    for (path, before, after) in [
        (
            ".",
            baseline.identity.root,
            now.as_ref().ok().map(|n| n.root),
        ),
        (
            ".git",
            baseline.identity.git,
            now.as_ref().ok().map(|n| n.git),
        ),
    ] {
        if after != Some(before) {
            let now = match after {
                Some(a) => format!("device {} inode {}", a.dev, a.ino),
                None => "no directory".to_string(),
            };
            findings.push(Finding {
                rule: RuleId::BuildWrote,
                path: RepoPath::from(path),
                change: Change::Modified,
                message: format!(
                    "the build replaced this directory: the baseline was taken of device {} inode {}, now there is {now}",
                    before.dev, before.ino
                ),
                policy_entry: None,
            });
        }
    }
    if !findings.is_empty() {
        // A replaced worktree is not the tree the baseline describes: comparing paths would only
        // compare the attacker's copy.
        return Ok(AfterBuild {
            findings,
            entries: 0,
            snapshot: Snapshot::new(),
        });
    }
    let before = &baseline.snapshot;
    let path_limits = PathLimits {
        max_path_bytes: policy.limits.max_path_bytes,
        max_component_bytes: policy.limits.max_component_bytes,
    };
    let exempt_content = |path: &[u8]| {
        !in_git_dir(path)
            && validate_path(path, &path_limits)
                .is_ok_and(|text| policy.denied(text).is_none() && policy.is_build_output(text))
    };
    let hash = |path: &[u8], size: u64| {
        before
            .lookup(path)
            .is_some_and(|b| b.kind == Kind::File && b.size == size && b.sha256.is_some())
            && !exempt_content(path)
    };
    let walked_root = view.unwrap_or(root);
    // The walk is a stream: each entry is judged as it is read and dropped (kept only for
    // `--out`); what stays is which of the baseline's entries were seen (a bit each) and the
    // bounded findings.
    let mut found = Bounded::default();
    let mut seen = vec![false; before.len()];
    let mut snapshot = Snapshot::new();
    let walked = walk::walk_each(
        walked_root,
        limits,
        &hash,
        inodes.is_some(),
        &mut |path, a, a_inode| {
            let index = before.find(path.as_bytes());
            let b = index.and_then(|i| {
                if let Some(seen) = seen.get_mut(i) {
                    *seen = true;
                }
                before.get(i)
            });
            let mut judged = false;
            if b.is_none_or(|b| !same_stored(&b, &a))
                && let Some(f) = build_write(
                    &path,
                    b.map(|b| b.entry()).as_ref(),
                    Some(&a),
                    policy,
                    &scope,
                    &path_limits,
                )
            {
                found.push(f);
                judged = true;
            }
            if !judged
                && let (Some(before), Some(a_inode)) = (inodes, &a_inode)
                && let Some(f) = inode_change(
                    &path,
                    Some(a.kind),
                    index.and_then(|i| before.get(i)),
                    a_inode,
                    policy,
                    &scope,
                    &path_limits,
                )
            {
                found.push(f);
            }
            if keep {
                snapshot.insert(path, a);
            }
        },
    );
    let entries = match walked {
        Ok(entries) => entries as u64,
        Err(e) => {
            // What was judged so far is moot: nothing of a tree the check cannot read whole is
            // trusted.
            findings.push(Finding {
                rule: RuleId::BuildWrote,
                path: RepoPath::from("."),
                change: Change::Modified,
                message: format!(
                    "the build left a tree the check cannot read whole ({e}); nothing in it is trusted"
                ),
                policy_entry: None,
            });
            return Ok(AfterBuild {
                findings,
                entries: 0,
                snapshot: Snapshot::new(),
            });
        }
    };
    for (i, seen) in seen.iter().enumerate() {
        if !seen
            && let Some(b) = before.get(i)
            && let Some(f) = build_write(
                &RepoPath::from(before.path(i)),
                Some(&b.entry()),
                None,
                policy,
                &scope,
                &path_limits,
            )
        {
            found.push(f);
        }
    }
    debug_assert!(found.len() >= found.kept.len() as u64);
    Ok(AfterBuild {
        findings: found.finish(),
        entries,
        snapshot,
    })
}

/// The paths at which the worktree differs from `baseline` in any way (identity included):
/// empty when it is exactly the tree the baseline describes. Used before a build starts; the
/// inodes of the same walk ([`BaselineInodes`], of the baseline's entries: any other entry is a
/// change already) are what the check after the build compares with. Each path in the guard's
/// display form.
pub fn changed_since(
    baseline: &Baseline,
    limits: &WalkLimits,
) -> Result<(Vec<String>, BaselineInodes), TreeError> {
    let mut changed = Vec::new();
    if identity_of(&baseline.root)? != baseline.identity {
        changed.push(". (the worktree or its .git is another directory)".to_string());
        return Ok((changed, BaselineInodes::default()));
    }
    let mut more = 0u64;
    let mut note = |path: &RepoPath| {
        if changed.len() < MAX_FINDINGS {
            changed.push(path.display());
        } else {
            more += 1;
        }
    };
    let before = &baseline.snapshot;
    let mut inodes: Vec<Option<walk::Inode>> = vec![None; before.len()];
    let mut seen = vec![false; before.len()];
    walk::walk_each(
        &baseline.root,
        limits,
        &hashed_in_baseline,
        true,
        &mut |path, a, inode| match before.find(path.as_bytes()) {
            Some(i) => {
                if let Some(seen) = seen.get_mut(i) {
                    *seen = true;
                }
                if before.get(i).is_none_or(|b| !same_stored(&b, &a)) {
                    note(&path);
                }
                if let Some(slot) = inodes.get_mut(i) {
                    *slot = inode;
                }
            }
            None => note(&path),
        },
    )?;
    for (i, seen) in seen.iter().enumerate() {
        if !seen {
            note(&RepoPath::from(before.path(i)));
        }
    }
    if more > 0 {
        changed.push(format!("and {} more", thousands(more)));
    }
    Ok((changed, BaselineInodes(inodes)))
}

/// The `build-wrote` finding for a change an [`Entry`] does not show: hard links, an entry made
/// immutable or append-only, and outside the scope the owner and group, the inode flags, the
/// extended attributes (POSIX ACLs included) and the modification time. `kind` is the entry's
/// kind after the build.
fn inode_change(
    path: &RepoPath,
    kind: Option<Kind>,
    b: Option<&walk::Inode>,
    a: &walk::Inode,
    policy: &Policy,
    scope: &Scope,
    limits: &PathLimits,
) -> Option<Finding> {
    let finding = |message: String, entry: Option<String>| Finding {
        rule: RuleId::BuildWrote,
        path: path.clone(),
        change: if b.is_some() {
            Change::Modified
        } else {
            Change::Created
        },
        message,
        policy_entry: entry,
    };
    let text = validate_path(path.as_bytes(), limits).ok();
    if !in_git_dir(path.as_bytes()) && text.is_some_and(|t| policy.is_build_output(t)) {
        return None;
    }
    let in_scope =
        !in_git_dir(path.as_bytes()) && text.is_some_and(|t| scope.matching(t).is_some());
    let scope_entry = || Some(format!("scope: {}", scope.globs().join(", ")));
    if kind != Some(Kind::Dir) {
        let before = b.map_or(1, |b| b.nlink);
        if a.nlink != before || (b.is_none() && a.nlink > 1) {
            return Some(finding(
                format!(
                    "the build changed the number of hard links to this file from {before} to {} (git records none; a link shares the inode with another name)",
                    a.nlink
                ),
                None,
            ));
        }
    }
    // Immutable or append-only: the runner cannot rewrite or remove the entry, in scope too.
    const PINNED: u32 = 0x10 | 0x20;
    let letters = |f: Option<u32>| f.map_or_else(|| "unknown".to_string(), walk::flag_letters);
    if a.flags.unwrap_or(0) & PINNED & !b.and_then(|b| b.flags).unwrap_or(0) != 0 {
        return Some(finding(
            format!(
                "the build made an entry immutable or append-only (inode flags from {} to {}; chattr): the runner cannot rewrite or remove it",
                letters(b.and_then(|b| b.flags)),
                letters(a.flags)
            ),
            None,
        ));
    }
    let b = b?;
    if (a.uid, a.gid) != (b.uid, b.gid) && !in_scope {
        let what = if a.uid != b.uid {
            format!("owner from uid {} to uid {}", b.uid, a.uid)
        } else {
            format!("group from gid {} to gid {}", b.gid, a.gid)
        };
        return Some(finding(
            format!(
                "the build changed the {what} of an entry outside the declared scope (who may read or write it later; git records neither)"
            ),
            scope_entry(),
        ));
    }
    if a.flags != b.flags && !in_scope {
        return Some(finding(
            format!(
                "the build changed the inode flags of an entry outside the declared scope from {} to {} (chattr; git records none)",
                letters(b.flags),
                letters(a.flags)
            ),
            scope_entry(),
        ));
    }
    if a.xattrs != b.xattrs && !in_scope {
        return Some(finding(
            "the build changed the extended attributes (POSIX ACLs and capabilities included) of an entry outside the declared scope"
                .into(),
            scope_entry(),
        ));
    }
    if kind != Some(Kind::Dir) && a.mtime != b.mtime && !in_scope {
        return Some(finding(
            "the build changed the modification time of a file outside the declared scope (build tools trust it)".into(),
            scope_entry(),
        ));
    }
    None
}

/// [`same_stored`] of two walked entries.
#[cfg(test)]
fn same(b: &Entry, a: &Entry) -> bool {
    let digest = b.sha256.as_ref().map(contract::ids::Sha256Hex::digest);
    let stored = Stored {
        kind: b.kind,
        mode: b.mode,
        size: b.size,
        sha256: digest.as_ref(),
        target: b.target.as_ref().map(RepoPath::as_bytes),
    };
    same_stored(&stored, a)
}

/// Whether an entry is unchanged (`b` as the baseline's store keeps it). Directory sizes are
/// file-system bookkeeping; a content hash is compared when both sides have one.
fn same_stored(b: &Stored<'_>, a: &Entry) -> bool {
    b.kind == a.kind
        && b.mode == a.mode
        && b.target == a.target.as_ref().map(RepoPath::as_bytes)
        && (a.kind == Kind::Dir
            || (b.size == a.size
                && match (b.sha256, &a.sha256) {
                    (Some(x), Some(y)) => *x == y.digest(),
                    _ => true,
                }))
}

/// What happened to a path, in words.
fn what_changed(b: Option<&Entry>, a: Option<&Entry>) -> String {
    match (b, a) {
        (None, Some(a)) => match &a.target {
            Some(t) => format!("created a symbolic link to {}", t.display()),
            None => format!("created {}", article(a.kind)),
        },
        (Some(b), None) => format!("deleted {}", article(b.kind)),
        (Some(b), Some(a)) if b.kind != a.kind => {
            format!("replaced {} with {}", article(b.kind), article(a.kind))
        }
        (Some(b), Some(a)) if b.target != a.target => format!(
            "changed a symbolic link to point to {}",
            a.target.as_ref().map(RepoPath::display).unwrap_or_default()
        ),
        (Some(b), Some(a)) if b.mode != a.mode => format!(
            "changed the permissions of {} from {:04o} to {:04o}",
            article(a.kind),
            b.mode,
            a.mode
        ),
        (Some(b), _) => format!("modified the content of {}", article(b.kind)),
        (None, None) => String::new(),
    }
}

fn article(kind: Kind) -> String {
    match kind {
        Kind::Other => "a special file".to_string(),
        k => format!("a {}", k.name()),
    }
}

/// The `build-wrote` finding for one changed path, or None when the build may write there. The
/// path rules, the denylist and the scope judge the exact path.
fn build_write(
    path: &RepoPath,
    b: Option<&Entry>,
    a: Option<&Entry>,
    policy: &Policy,
    scope: &Scope,
    limits: &PathLimits,
) -> Option<Finding> {
    let change = match (b, a) {
        (None, _) => Change::Created,
        (_, None) => Change::Deleted,
        _ => Change::Modified,
    };
    let what = what_changed(b, a);
    let finding = |message: String, entry: Option<String>| Finding {
        rule: RuleId::BuildWrote,
        path: path.clone(),
        change,
        message,
        policy_entry: entry,
    };
    if in_git_dir(path.as_bytes()) {
        return Some(finding(
            format!("the build {what} inside .git, which later git commands read and obey"),
            None,
        ));
    }
    if a.is_some_and(|a| a.kind == Kind::Symlink) {
        return Some(finding(
            format!("the build {what}; symbolic links may not be created or changed anywhere"),
            None,
        ));
    }
    // What no part of the worktree may hold, build outputs included: a later step, or the next
    // job of a reused workspace, would open, execute or fail to remove it.
    if let Some(a) = a {
        if a.kind == Kind::Other {
            return Some(finding(
                format!(
                    "the build {what} (a FIFO, socket or device node); no special file may be left in the worktree"
                ),
                None,
            ));
        }
        let new_bits =
            |mask: u32| a.mode & mask != 0 && b.is_none_or(|b| b.mode & mask != a.mode & mask);
        if new_bits(0o7000) {
            return Some(finding(
                format!(
                    "the build {what} with the set-user-ID, set-group-ID or sticky bit ({:04o})",
                    a.mode
                ),
                None,
            ));
        }
        if a.kind == Kind::Dir
            && a.mode & 0o700 != 0o700
            && b.is_none_or(|b| b.kind != Kind::Dir || b.mode != a.mode)
        {
            return Some(finding(
                format!(
                    "the build {what} that its owner cannot enter, list or change ({:04o}): the runner cannot remove it",
                    a.mode
                ),
                None,
            ));
        }
    }
    let text = match validate_path(path.as_bytes(), limits) {
        Ok(text) => text,
        Err(e) => {
            return Some(finding(
                format!("the build {what} at a path the path rules refuse: {e}"),
                None,
            ));
        }
    };
    if let Some(pattern) = policy.denied(text) {
        return Some(finding(
            format!("the build {what} in the denied trust-control surface"),
            Some(format!("deny: {pattern}")),
        ));
    }
    if policy.is_build_output(text) {
        return None;
    }
    if let Some(a) = a
        && a.mode & 0o002 != 0
        && b.is_none_or(|b| b.mode & 0o002 == 0)
    {
        return Some(finding(
            format!("the build {what}, writable by every user ({:04o})", a.mode),
            None,
        ));
    }
    if let Some(a) = a
        && a.kind == Kind::File
        && a.size > policy.limits.max_diff_bytes
        && b.is_none_or(|b| b.size != a.size)
    {
        return Some(finding(
            format!(
                "the build left a file of {} bytes, more than any diff may hold ({}), outside the build outputs; it was not read",
                a.size, policy.limits.max_diff_bytes
            ),
            Some(format!(
                "limits: max_diff_bytes {}",
                policy.limits.max_diff_bytes
            )),
        ));
    }
    // A directory made or removed, unchanged otherwise, is nothing git records; one whose
    // permissions changed outside the scope is a change to a tree the build may not touch.
    let only_dirs = b.is_none_or(|e| e.kind == Kind::Dir) && a.is_none_or(|e| e.kind == Kind::Dir);
    let dir_mode_changed = matches!((b, a), (Some(b), Some(a)) if b.mode != a.mode);
    if only_dirs && (!dir_mode_changed || scope.matching(text).is_some()) {
        return None;
    }
    if scope.matching(text).is_none() {
        return Some(finding(
            format!("the build {what} outside the declared scope and outside the build outputs"),
            Some(format!("scope: {}", scope.globs().join(", "))),
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    fn file(mode: u32, sha: &str) -> Entry {
        Entry {
            kind: Kind::File,
            mode,
            size: 1,
            sha256: Some(contract::ids::Sha256Hex::of(sha.as_bytes())),
            target: None,
        }
    }

    fn dir() -> Entry {
        Entry {
            kind: Kind::Dir,
            mode: 0o755,
            size: 4096,
            sha256: None,
            target: None,
        }
    }

    fn link(target: &str) -> Entry {
        Entry {
            kind: Kind::Symlink,
            mode: 0o777,
            size: 4,
            sha256: None,
            target: Some(target.into()),
        }
    }

    fn classify(path: &str, b: Option<&Entry>, a: Option<&Entry>) -> Option<(Change, String)> {
        let policy = Policy::embedded_default().unwrap();
        let scope = Scope::new(&["src/**".to_string()]).unwrap();
        build_write(
            &RepoPath::from(path),
            b,
            a,
            &policy,
            &scope,
            &PathLimits::default(),
        )
        .map(|f| (f.change, f.policy_entry.unwrap_or_default()))
    }

    #[test]
    fn build_writes_are_classified() {
        let f = file(0o644, "a");
        let g = file(0o644, "b");
        let x = file(0o755, "a");
        // Allowed: in scope, build outputs, plain directories outside scope.
        assert_eq!(classify("src/gen.rs", None, Some(&f)), None);
        assert_eq!(classify("src/lib.rs", Some(&f), Some(&g)), None);
        assert_eq!(classify("target/debug/x", None, Some(&f)), None);
        assert_eq!(classify("target", None, Some(&dir())), None);
        // Refused.
        assert_eq!(
            classify(".github/workflows/x.yml", None, Some(&f)),
            Some((Change::Created, "deny: .github/**".into()))
        );
        assert_eq!(
            classify(".github", None, Some(&dir())),
            Some((Change::Created, "deny: .github/**".into()))
        );
        assert_eq!(
            classify("target/.github/workflows/x.yml", None, Some(&f)),
            None,
            "deny patterns anchored at the root do not reach into target/"
        );
        assert_eq!(
            classify("target/CODEOWNERS", None, Some(&f)),
            Some((Change::Created, "deny: **/CODEOWNERS".into())),
            "deny beats build output"
        );
        assert_eq!(
            classify("docs/x.md", Some(&f), None),
            Some((Change::Deleted, "scope: src/**".into()))
        );
        assert_eq!(
            classify("README.md", Some(&f), Some(&x)),
            Some((Change::Modified, "scope: src/**".into()))
        );
        assert!(classify("target/l", None, Some(&link("/etc"))).is_some());
        assert!(classify("src/l", Some(&link("a")), Some(&link("b"))).is_some());
        assert!(classify(".git/hooks/pre-commit", None, Some(&f)).is_some());
        assert!(classify(".git/index", Some(&f), Some(&g)).is_some());
        assert!(classify("src/.git/config", None, Some(&f)).is_some());
        assert!(classify("src/a\\xff", None, Some(&f)).is_some());
        // The exact path is judged, not a display form: names that display escaped are fine in
        // scope, and bytes that are not UTF-8 are refused by the path rules.
        let persian = "src/\u{645}\u{6cc}\u{200c}\u{62e}\u{648}\u{627}\u{647}\u{645}.rs";
        assert_eq!(classify(persian, None, Some(&f)), None);
        let policy = Policy::embedded_default().unwrap();
        let scope = Scope::new(&["src/**".to_string()]).unwrap();
        let raw = RepoPath::from(&b"src/a\xff"[..]);
        let finding = build_write(
            &raw,
            None,
            Some(&f),
            &policy,
            &scope,
            &PathLimits::default(),
        );
        assert!(finding.is_some_and(|f| f.message.contains("not valid UTF-8")));
    }

    fn inode(gid: u32, flags: Option<u32>, xattrs: Option<&str>) -> walk::Inode {
        walk::Inode {
            nlink: 1,
            mtime: (1, 0),
            uid: 1001,
            gid,
            flags,
            xattrs: xattrs.map(|x| contract::ids::Sha256Hex::of(x.as_bytes())),
        }
    }

    /// The recorded before and after states of one entry, judged as the check after the build
    /// judges them: the message of the finding, if any.
    fn inode_finding(path: &str, b: &walk::Inode, a: &walk::Inode) -> Option<String> {
        let policy = Policy::embedded_default().unwrap();
        let scope = Scope::new(&["src/**".to_string()]).unwrap();
        inode_change(
            &RepoPath::from(path),
            Some(Kind::File),
            Some(b),
            a,
            &policy,
            &scope,
            &PathLimits::default(),
        )
        .map(|f| {
            assert_eq!(f.rule, RuleId::BuildWrote);
            assert_eq!(f.path, RepoPath::from(path));
            f.message
        })
    }

    #[test]
    fn group_flags_and_attributes_outside_the_scope_are_findings() {
        let plain = inode(121, Some(0), None);
        let message = |a: &walk::Inode| inode_finding("README.md", &plain, a).unwrap_or_default();
        assert!(message(&inode(0, Some(0), None)).contains("group from gid 121 to gid 0"));
        assert!(
            message(&inode(121, Some(0x40 | 0x80), None))
                .contains("inode flags of an entry outside the declared scope from none to dA")
        );
        assert!(message(&inode(121, Some(0), Some("user.x=1"))).contains("extended attributes"));
        assert!(message(&inode(121, Some(0x10), None)).contains("immutable or append-only"));
        // Unchanged, or in scope, or a build output: nothing, but for a pinned entry anywhere
        // outside the build outputs.
        assert_eq!(inode_finding("README.md", &plain, &plain), None);
        for changed in [
            inode(0, Some(0), None),
            inode(121, Some(0x40), None),
            inode(121, Some(0), Some("user.x=1")),
        ] {
            assert_eq!(inode_finding("src/lib.rs", &plain, &changed), None);
            assert_eq!(inode_finding("target/x", &plain, &changed), None);
        }
        assert!(
            inode_finding("src/lib.rs", &plain, &inode(121, Some(0x20), None))
                .is_some_and(|m| m.contains("immutable or append-only"))
        );
        // A file system without flags (None) on both sides is no change.
        let none = inode(121, None, None);
        assert_eq!(inode_finding("README.md", &none, &none), None);
    }

    #[test]
    fn findings_beyond_the_bound_are_counted() {
        let mut found = Bounded::default();
        for i in (0..MAX_FINDINGS + 2500).rev() {
            found.push(Finding {
                rule: RuleId::BuildWrote,
                path: RepoPath::from(format!("stray/{i:06}").as_str()),
                change: Change::Created,
                message: String::new(),
                policy_entry: None,
            });
        }
        assert_eq!(found.len(), (MAX_FINDINGS + 2500) as u64);
        let list = found.finish();
        assert_eq!(list.len(), MAX_FINDINGS + 1);
        assert_eq!(list[0].path, RepoPath::from("stray/000000"));
        assert_eq!(list[MAX_FINDINGS - 1].path, RepoPath::from("stray/000999"));
        let last = &list[MAX_FINDINGS];
        assert_eq!(last.path, RepoPath::from("."));
        assert!(
            last.message.starts_with("and 2,500 more findings"),
            "{}",
            last.message
        );
        assert_eq!(thousands(899_000), "899,000");
        assert_eq!(thousands(1_000_000), "1,000,000");
        assert_eq!(thousands(999), "999");
    }

    #[test]
    fn entries_compare_without_directory_sizes() {
        let mut d = dir();
        assert!(same(&dir(), &d));
        d.size = 8192;
        assert!(same(&dir(), &d));
        d.mode = 0o700;
        assert!(!same(&dir(), &d));
        assert!(!same(&file(0o644, "a"), &file(0o644, "b")));
        assert!(!same(&file(0o644, "a"), &file(0o755, "a")));
        assert!(!same(&link("a"), &link("b")));
        let mut unhashed = file(0o644, "a");
        unhashed.sha256 = None;
        assert!(same(&file(0o644, "a"), &unhashed));
    }

    #[test]
    fn verdict_file_list_becomes_raw_changes() {
        let doc: VerdictDoc = serde_json::from_value(serde_json::json!({
            "schema": crate::output::json_v1::SCHEMA,
            "verdict": "accept",
            "diff_sha256": "0".repeat(64),
            "mode": "git-cross-checked",
            "scope": ["src/**"],
            "files": [
                {"status": "renamed", "old_path": "src/a", "new_path": "src/b",
                 "old_mode": "100644", "new_mode": "100644", "line": 1},
                {"status": "modified", "old_path": "src/c", "new_path": "src/c",
                 "old_mode": "100644", "new_mode": "100755", "line": 5},
                {"status": "copied", "old_path": "src/c", "new_path": "src/d",
                 "old_mode": "100644", "new_mode": "100644", "line": 9}
            ],
            "violations": []
        }))
        .unwrap();
        check_verdict(&doc).unwrap();
        let changes: Vec<String> = expected_changes(&doc)
            .unwrap()
            .values()
            .map(|c| {
                format!(
                    "{} {:o} {:o} {}",
                    c.status,
                    c.old_mode,
                    c.new_mode,
                    String::from_utf8_lossy(&c.path)
                )
            })
            .collect();
        assert_eq!(
            changes,
            [
                "D 100644 0 src/a",
                "A 0 100644 src/b",
                "M 100644 100755 src/c",
                "A 0 100644 src/d"
            ]
        );
        let mut rejected = doc.clone();
        rejected.verdict = crate::output::json_v1::VerdictWord::Reject;
        assert!(check_verdict(&rejected).is_err());
        let mut parser_only = doc.clone();
        parser_only.mode = CheckMode::ParserOnly;
        assert!(check_verdict(&parser_only).is_err());
        let mut no_mode = doc;
        no_mode.files[0].new_mode = None;
        assert!(check_verdict(&no_mode).is_err());
    }
}
