//! `agent-team-apply/publish-result/v1`: what `gate publish` did on GitHub and what it proved.
//!
//! ```json
//! {
//!   "schema": "agent-team-apply/publish-result/v1",
//!   "outcome": "published" | "failed" | "error",
//!   "exit_code": 0 | 1 | 2,
//!   "repository": "octo/repo",
//!   "branch": "agent-team/task-1",
//!   "base_commit": "<40 hex>",
//!   "method": "create-commit-on-branch" | "git-database",
//!   "branch_state": "created" | "reused-at-base" | "already-published" | null,
//!   "commit": "<40 hex>" | null,
//!   "protected_files": 0,
//!   "tree": { "expected": "<40 hex>", "published": "<40 hex>" | null, "proven": true },
//!   "signature": { "verified": true, "reason": "valid" } | null,
//!   "pull_request": { "number": 7, "html_url": "...", "draft": true, "reused": false, "labels": [] } | null,
//!   "check_run": { "id": 42, "name": "...", "conclusion": "success", "html_url": "..." } | null,
//!   "failure": { "code": "tree-mismatch", "message": "..." } | null
//! }
//! ```
//!
//! `outcome` is `published` (exit 0) only when the commit GitHub stored was read back with the
//! plan's tree id (`tree.proven`), the branch points at it, the draft pull request exists (labelled
//! when protected files need review) and the check run was posted. `failed` (exit 1): GitHub's state shows the publication did not happen as
//! planned, or GitHub refused it. `error` (exit 2): it could not be done or its result could not
//! be established (`publication-uncertain` among them). Every value is exact: GitHub's messages
//! inside `failure.message` are escaped only where they are displayed.

use serde::{Deserialize, Serialize};

use crate::output::publish_plan_v2::PublishMethod;

pub const SCHEMA: &str = "agent-team-apply/publish-result/v1";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublishResultDoc {
    pub schema: String,
    pub outcome: String,
    pub exit_code: u8,
    pub repository: String,
    pub branch: String,
    pub base_commit: String,
    pub method: PublishMethod,
    /// `created`, `reused-at-base` or `already-published`; `null` when the branch was not read.
    pub branch_state: Option<String>,
    pub commit: Option<String>,
    /// How many protected paths the verdict names (the pull request is labelled when any).
    pub protected_files: u64,
    pub tree: TreeProofDoc,
    /// GitHub's verification of the commit's signature, as read back.
    pub signature: Option<SignatureDoc>,
    pub pull_request: Option<PullRequestResultDoc>,
    pub check_run: Option<CheckRunResultDoc>,
    pub failure: Option<FailureDoc>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TreeProofDoc {
    /// The tree git computed (the plan's `tree`).
    pub expected: String,
    /// The tree of the commit GitHub stored, as read back.
    pub published: Option<String>,
    /// `expected == published`, read back from GitHub.
    pub proven: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignatureDoc {
    pub verified: bool,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PullRequestResultDoc {
    pub number: u64,
    pub html_url: String,
    pub draft: bool,
    /// An open pull request from the branch into the base branch existed already.
    pub reused: bool,
    /// Its labels after this publication labelled it (empty when it did not).
    pub labels: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckRunResultDoc {
    pub id: u64,
    pub name: String,
    pub conclusion: Option<String>,
    pub html_url: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FailureDoc {
    /// A stable kebab-case id (`gate::publication::FAILURES`).
    pub code: String,
    pub message: String,
}

impl PublishResultDoc {
    /// Pretty JSON with a trailing newline. An error, never an empty document.
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        guard::doc_json::to_string_pretty(self)
    }
}
