//! The documents of `guard verify-tree` and `guard run`'s own tree check:
//!
//! - the **result** (`agent-team-apply/verify-tree/v1`): which check ran, pass or fail, and every
//!   finding;
//! - the **snapshot** (`agent-team-apply/tree-snapshot/v1`): every entry of the worktree, `.git`
//!   included, that the check after the build compares the tree with.
//!
//! ```json
//! {"schema": "agent-team-apply/verify-tree/v1",
//!  "check": "after-apply", "result": "fail",
//!  "base_commit": "<40 hex>", "diff_sha256": "<64 hex>", "verdict_sha256": "<64 hex>",
//!  "scope": ["src/**"], "entries": 42,
//!  "baseline_sha256": "<64 hex of the snapshot written (after-apply) or read (after-build)>",
//!  "snapshot_sha256": "<64 hex of the snapshot written with --out, or null>",
//!  "findings": [{"rule": "tree-mismatch", "path": "src/extra.rs", "change": "unexpected",
//!                "message": "...", "policy_entry": null, "docs": "README.md#rule-tree-mismatch"}]}
//! ```
//!
//! `change` is one of `unexpected` (in the worktree, not in the verdict), `missing` (in the
//! verdict, not in the worktree), `differs` (in both, with another status, mode or type) after
//! apply, and `created`, `deleted`, `modified` after the build. Paths are exact ([`RepoPath`]).

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::ids::{CommitId, Sha256Hex};
use crate::repo_path::RepoPath;
use crate::rules::RuleId;

crate::schema_marker!(
    /// `agent-team-apply/verify-tree/v1`.
    VerifyTreeSchema,
    "agent-team-apply/verify-tree/v1"
);

crate::schema_marker!(
    /// `agent-team-apply/tree-snapshot/v1`.
    SnapshotSchema,
    "agent-team-apply/tree-snapshot/v1"
);

pub const SCHEMA: &str = VerifyTreeSchema::ID;
pub const SNAPSHOT_SCHEMA: &str = SnapshotSchema::ID;

/// Which of the two checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Check {
    AfterApply,
    AfterBuild,
}

impl Check {
    pub fn name(self) -> &'static str {
        match self {
            Check::AfterApply => "after-apply",
            Check::AfterBuild => "after-build",
        }
    }
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Pass or fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TreeResult {
    Pass,
    Fail,
}

impl fmt::Display for TreeResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TreeResult::Pass => "pass",
            TreeResult::Fail => "fail",
        })
    }
}

/// How a path differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Change {
    /// After apply: in the worktree, not in the verdict.
    Unexpected,
    /// After apply: in the verdict, not in the worktree.
    Missing,
    /// After apply: in both, with another status, mode or type.
    Differs,
    /// After the build: absent from the baseline.
    Created,
    /// After the build: absent now.
    Deleted,
    /// After the build: another content, permission bits, type or link target.
    Modified,
}

impl Change {
    pub fn name(self) -> &'static str {
        match self {
            Change::Unexpected => "unexpected",
            Change::Missing => "missing",
            Change::Differs => "differs",
            Change::Created => "created",
            Change::Deleted => "deleted",
            Change::Modified => "modified",
        }
    }
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a path is on the file system.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    File,
    Dir,
    Symlink,
    /// A FIFO, socket or device.
    Other,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::File => "file",
            Kind::Dir => "directory",
            Kind::Symlink => "symbolic link",
            Kind::Other => "special file",
        }
    }
}

/// Device and inode of a directory: which directory it is, whatever its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirId {
    pub dev: u64,
    pub ino: u64,
}

/// Which directories the worktree and its `.git` are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Identity {
    pub root: DirId,
    pub git: DirId,
}

/// Permission bits (`st_mode & 0o7777`), written as four octal digits (`"0644"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Permissions(u32);

impl Permissions {
    /// The bits, when they fit in four octal digits.
    pub fn new(bits: u32) -> Option<Permissions> {
        (bits <= 0o7777).then_some(Permissions(bits))
    }

    /// The permission bits of an `st_mode` (`& 0o7777`).
    pub fn of_mode(st_mode: u32) -> Permissions {
        Permissions(st_mode & 0o7777)
    }

    pub fn bits(self) -> u32 {
        self.0
    }
}

impl Serialize for Permissions {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&format!("{:04o}", self.0))
    }
}

impl<'de> Deserialize<'de> for Permissions {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Permissions, D::Error> {
        let text = String::deserialize(deserializer)?;
        let octal = text.len() == 4 && text.bytes().all(|b| (b'0'..=b'7').contains(&b));
        octal
            .then(|| u32::from_str_radix(&text, 8).ok())
            .flatten()
            .and_then(Permissions::new)
            .ok_or_else(|| {
                serde::de::Error::custom(format!(
                    "permission bits {:?} are not four octal digits",
                    crate::escape::neutralize(&text)
                ))
            })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerifyTreeDoc {
    pub schema: VerifyTreeSchema,
    pub check: Check,
    pub result: TreeResult,
    pub base_commit: CommitId,
    pub diff_sha256: Sha256Hex,
    pub verdict_sha256: Sha256Hex,
    pub scope: Vec<String>,
    /// Entries walked, `.git` included.
    pub entries: u64,
    pub baseline_sha256: Option<Sha256Hex>,
    pub snapshot_sha256: Option<Sha256Hex>,
    pub findings: Vec<FindingDoc>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FindingDoc {
    /// `tree-mismatch` or `build-wrote`.
    pub rule: RuleId,
    pub path: RepoPath,
    pub change: Change,
    pub message: String,
    pub policy_entry: Option<String>,
    pub docs: String,
}

/// Why a tree document was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TreeDocError {
    #[error("not a valid document: {0}")]
    Json(#[from] serde_json::Error),
    #[error("the result is \"pass\" but lists {count} finding(s)")]
    PassWithFindings { count: usize },
    #[error("snapshot entries are not sorted and unique at {path}")]
    Order { path: String },
}

impl VerifyTreeDoc {
    /// Parse a result document: a pass lists no finding.
    pub fn parse(json: &str) -> Result<VerifyTreeDoc, TreeDocError> {
        let doc: VerifyTreeDoc = serde_json::from_str(json)?;
        if doc.passed() && !doc.findings.is_empty() {
            return Err(TreeDocError::PassWithFindings {
                count: doc.findings.len(),
            });
        }
        Ok(doc)
    }

    pub fn passed(&self) -> bool {
        self.result == TreeResult::Pass
    }

    /// Pretty JSON with a trailing newline ([`crate::doc_json`]).
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        crate::doc_json::to_string_pretty(self)
    }
}

/// A snapshot of the worktree and what it was taken for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SnapshotDoc {
    pub schema: SnapshotSchema,
    /// The canonical worktree directory, exact.
    pub root: RepoPath,
    /// Device and inode of the worktree directory and of its `.git`: a worktree swapped for a
    /// copy is not the one the snapshot was taken of.
    pub identity: Identity,
    pub taken: Check,
    /// Whether the check that took it passed; the check after the build only accepts a verified
    /// after-apply snapshot.
    pub verified: bool,
    pub base_commit: CommitId,
    pub diff_sha256: Sha256Hex,
    /// SHA-256 of the verdict file's bytes: the check after the build reads the scope from the
    /// same verdict.
    pub verdict_sha256: Sha256Hex,
    pub scope: Vec<String>,
    /// Sorted by path, no duplicates.
    pub entries: Vec<EntryDoc>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntryDoc {
    pub path: RepoPath,
    pub kind: Kind,
    pub mode: Permissions,
    pub size: u64,
    /// SHA-256 of a file's content, when it was hashed.
    pub sha256: Option<Sha256Hex>,
    /// A symbolic link's target, exact.
    pub target: Option<RepoPath>,
}

impl SnapshotDoc {
    /// Parse a snapshot document: entries sorted by path and unique.
    pub fn parse(json: &str) -> Result<SnapshotDoc, TreeDocError> {
        let doc: SnapshotDoc = serde_json::from_str(json)?;
        for pair in doc.entries.windows(2) {
            if pair[0].path >= pair[1].path {
                return Err(TreeDocError::Order {
                    path: pair[1].path.display(),
                });
            }
        }
        Ok(doc)
    }

    /// Pretty JSON with a trailing newline ([`crate::doc_json`]).
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        crate::doc_json::to_string_pretty(self)
    }
}
