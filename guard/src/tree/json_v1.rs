//! The versioned documents of `guard verify-tree`, kept apart from the internal types:
//!
//! - the **result** (`agent-team-apply/verify-tree/v1`, `--format json`): which check ran, pass or
//!   fail, and every finding;
//! - the **snapshot** (`agent-team-apply/tree-snapshot/v1`, `--out FILE`): the worktree's
//!   identity (`{"root": {"dev", "ino"}, "git": {"dev", "ino"}}`) and every entry of the worktree,
//!   `.git` included (every file with its SHA-256), that `--after-build --baseline FILE` compares
//!   the tree with.
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
//! apply, and `created`, `deleted`, `modified` after the build. Paths are exact
//! ([`RepoPath`]): renderers escape them for their sink.

use serde::{Deserialize, Serialize};

use super::walk::{Entry, Kind, Snapshot};
use super::{Check, Finding, Identity};
use crate::repo_path::RepoPath;

pub const SCHEMA: &str = "agent-team-apply/verify-tree/v1";
pub const SNAPSHOT_SCHEMA: &str = "agent-team-apply/tree-snapshot/v1";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerifyTreeDoc {
    pub schema: String,
    /// `after-apply` or `after-build`.
    pub check: String,
    /// `pass` or `fail`.
    pub result: String,
    pub base_commit: String,
    pub diff_sha256: String,
    pub verdict_sha256: String,
    pub scope: Vec<String>,
    /// Entries walked, `.git` included.
    pub entries: u64,
    pub baseline_sha256: Option<String>,
    pub snapshot_sha256: Option<String>,
    pub findings: Vec<FindingDoc>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FindingDoc {
    /// `tree-mismatch` or `build-wrote`.
    pub rule: String,
    pub path: RepoPath,
    pub change: String,
    pub message: String,
    pub policy_entry: Option<String>,
    pub docs: String,
}

impl FindingDoc {
    pub fn from_finding(f: &Finding) -> FindingDoc {
        FindingDoc {
            rule: f.rule.name().to_string(),
            path: f.path.clone(),
            change: f.change.name().to_string(),
            message: f.message.clone(),
            policy_entry: f.policy_entry.clone(),
            docs: f.rule.rule().anchor(),
        }
    }
}

impl VerifyTreeDoc {
    pub fn passed(&self) -> bool {
        self.result == "pass"
    }

    pub fn check_kind(&self) -> Option<Check> {
        match self.check.as_str() {
            "after-apply" => Some(Check::AfterApply),
            "after-build" => Some(Check::AfterBuild),
            _ => None,
        }
    }

    /// Serialize as pretty JSON with a trailing newline ([`crate::doc_json`]). An error, never an
    /// empty document.
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        crate::doc_json::to_string_pretty(self)
    }
}

/// A snapshot of the worktree and what it was taken for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SnapshotDoc {
    pub schema: String,
    /// The canonical worktree directory, exact.
    pub root: RepoPath,
    /// Device and inode of the worktree directory and of its `.git`: a worktree swapped for a
    /// copy is not the one the snapshot was taken of.
    pub identity: Identity,
    /// `after-apply` or `after-build`.
    pub taken: String,
    /// Whether the check that took it passed; `--after-build` only accepts a verified
    /// `after-apply` snapshot.
    pub verified: bool,
    pub base_commit: String,
    pub diff_sha256: String,
    /// SHA-256 of the verdict file's bytes: `--after-build` reads the scope from the same verdict.
    pub verdict_sha256: String,
    pub scope: Vec<String>,
    /// Sorted by path, no duplicates.
    pub entries: Vec<EntryDoc>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntryDoc {
    pub path: RepoPath,
    pub kind: Kind,
    /// Permission bits, four octal digits (`0644`).
    pub mode: String,
    pub size: u64,
    pub sha256: Option<String>,
    pub target: Option<RepoPath>,
}

/// Why a snapshot document was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SnapshotError {
    #[error("snapshot is not valid JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("unknown snapshot schema {found:?} (expected {SNAPSHOT_SCHEMA:?})")]
    Schema { found: String },
    #[error("snapshot entry {path:?}: mode {mode:?} is not four octal digits")]
    Mode { path: String, mode: String },
    #[error("snapshot entries are not sorted and unique at {path:?}")]
    Order { path: String },
}

impl SnapshotDoc {
    pub fn entries_from(snapshot: &Snapshot) -> Vec<EntryDoc> {
        snapshot
            .iter()
            .map(|(path, e)| EntryDoc {
                path: path.clone(),
                kind: e.kind,
                mode: format!("{:04o}", e.mode),
                size: e.size,
                sha256: e.sha256.clone(),
                target: e.target.clone(),
            })
            .collect()
    }

    /// Parse and check a snapshot document.
    pub fn parse(json: &str) -> Result<SnapshotDoc, SnapshotError> {
        let doc: SnapshotDoc = serde_json::from_str(json)?;
        if doc.schema != SNAPSHOT_SCHEMA {
            return Err(SnapshotError::Schema { found: doc.schema });
        }
        Ok(doc)
    }

    /// The entries as a [`Snapshot`].
    pub fn snapshot(&self) -> Result<Snapshot, SnapshotError> {
        let mut snapshot = Snapshot::new();
        let mut last: Option<&RepoPath> = None;
        for e in &self.entries {
            if last.is_some_and(|l| l >= &e.path) {
                return Err(SnapshotError::Order {
                    path: e.path.display(),
                });
            }
            last = Some(&e.path);
            let octal = e.mode.len() == 4 && e.mode.bytes().all(|b| (b'0'..=b'7').contains(&b));
            let mode = octal
                .then(|| u32::from_str_radix(&e.mode, 8).ok())
                .flatten()
                .ok_or_else(|| SnapshotError::Mode {
                    path: e.path.display(),
                    mode: e.mode.clone(),
                })?;
            snapshot.insert(
                e.path.clone(),
                Entry {
                    kind: e.kind,
                    mode,
                    size: e.size,
                    sha256: e.sha256.clone(),
                    target: e.target.clone(),
                },
            );
        }
        Ok(snapshot)
    }

    /// Serialize as pretty JSON with a trailing newline ([`crate::doc_json`]). An error, never an
    /// empty document.
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        crate::doc_json::to_string_pretty(self)
    }
}
