//! `guard apply`: the one place a candidate diff is written into a worktree.
//!
//! In order, and nothing is written unless every step passes:
//!
//! 1. **integrity**: the bytes must hash to the expected SHA-256 (else a `hash-mismatch` verdict);
//! 2. **the checkout**: the top level of a worktree with a real `.git` directory
//!    ([`tree::open_checkout`]), the base revision must name a commit, and `HEAD` must be that
//!    commit;
//! 3. **a clean worktree**: `git status --porcelain=v2 -z --untracked-files=all --ignored` reports
//!    nothing at all (untracked and ignored files included, build outputs included: a stale
//!    `target/` is state the build must not inherit, and the check after apply would count it),
//!    and the worktree staged into a fresh throwaway index equals the base tree (so no
//!    assume-unchanged or skip-worktree bit can hide a modification);
//! 4. **the full check**, as a library call with the git cross-check against the base commit
//!    ([`check::check`]): any violation rejects;
//! 5. **apply** with the git CLI, `git apply` on the worktree (not `--index`: the real index stays
//!    at the base, so nothing under `.git` is written, and `git diff` shows the candidate change),
//!    from the verified bytes in memory, never re-read from disk. git applies all or nothing. Never
//!    libgit2, which writes through existing symlinks.
//!
//! git runs with the fixed environment of [`crate::git`], plus overrides that stop the
//! repository's configuration from running an fsmonitor or hiding files.

use std::path::Path;

use crate::check::{self, CheckError, CheckRequest, RepoBase};
use crate::escape::display_bytes;
use crate::git::GitError;
use crate::hash;
use crate::policy::Policy;
use crate::tree::{self, TreeError};
use crate::verdict::Verdict;

/// What to apply, where.
#[derive(Debug, Clone, Copy)]
pub struct ApplyRequest<'a> {
    pub diff: &'a [u8],
    pub expected_sha256: &'a str,
    pub scope: &'a [String],
    pub policy: &'a Policy,
    pub repo: &'a Path,
    pub base: &'a str,
}

/// The outcome of a request that reached a verdict.
#[derive(Debug)]
pub enum Applied {
    /// The verdict accepted and git applied the diff to the worktree.
    Applied {
        verdict: Verdict,
        base_commit: String,
    },
    /// The verdict rejected; nothing was written.
    Rejected(Verdict),
}

/// Errors that stop the apply before anything is written (exit 2).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ApplyError {
    #[error(transparent)]
    Check(#[from] CheckError),
    #[error(transparent)]
    Git(#[from] GitError),
    #[error(transparent)]
    Checkout(#[from] TreeError),
    #[error("HEAD is {head}, not the base commit {base}: check out the base commit first")]
    HeadNotBase { head: String, base: String },
    #[error(
        "the worktree is not clean ({count} entries, untracked and ignored files count): {shown}"
    )]
    Dirty { count: usize, shown: String },
    #[error(
        "the worktree differs from the base commit although git status shows nothing ({count} paths): {shown}"
    )]
    HiddenChanges { count: usize, shown: String },
    #[error("git apply refused the diff the check accepted, nothing was applied: {0}")]
    GitApply(String),
}

/// How many offending paths an error message names.
const SHOWN: usize = 10;

fn list(paths: impl Iterator<Item = String>) -> (usize, String) {
    let paths: Vec<String> = paths.collect();
    let mut shown = paths
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if paths.len() > SHOWN {
        shown.push_str(&format!(", and {} more", paths.len() - SHOWN));
    }
    (paths.len(), shown)
}

/// Run the steps above.
pub fn apply(req: &ApplyRequest<'_>) -> Result<Applied, ApplyError> {
    let mut request = CheckRequest {
        diff: req.diff,
        expected_sha256: req.expected_sha256,
        scope: req.scope,
        policy: req.policy,
        repo: None,
    };
    // Integrity before anything else: a changed diff is rejected without consulting the checkout.
    let expected = hash::parse_sha256(req.expected_sha256)
        .ok_or_else(|| CheckError::BadExpectedHash(req.expected_sha256.to_string()))?;
    if !hash::matches(req.diff, &expected) {
        return Ok(Applied::Rejected(check::check(&request)?));
    }

    let checkout = tree::open_checkout(req.repo)?;
    let git = &checkout.git;
    let base_commit = git.resolve_commit(req.base)?;
    let head = git.resolve_commit("HEAD")?;
    if head != base_commit {
        return Err(ApplyError::HeadNotBase {
            head,
            base: base_commit,
        });
    }
    let status = git.status_entries()?;
    if !status.is_empty() {
        let (count, shown) = list(
            status
                .iter()
                .map(|e| format!("{} {}", e.kind, display_bytes(&e.path))),
        );
        return Err(ApplyError::Dirty { count, shown });
    }
    let hidden = git.worktree_changes(&base_commit)?;
    if !hidden.is_empty() {
        let (count, shown) = list(hidden.iter().map(|c| display_bytes(&c.path)));
        return Err(ApplyError::HiddenChanges { count, shown });
    }

    request.repo = Some(RepoBase {
        dir: &checkout.root,
        base: &base_commit,
    });
    let verdict = check::check(&request)?;
    if !verdict.accepted() {
        return Ok(Applied::Rejected(verdict));
    }
    git.apply_to_worktree(req.diff)?
        .map_err(ApplyError::GitApply)?;
    Ok(Applied::Applied {
        verdict,
        base_commit,
    })
}
