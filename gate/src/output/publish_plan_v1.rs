//! The versioned publication plan: the input of GitHub's `createCommitOnBranch` GraphQL mutation,
//! and the draft pull request to open on top of it.
//!
//! # Document
//!
//! ```json
//! {
//!   "schema": "agent-team-apply/publish-plan/v1",
//!   "input": {
//!     "branch": { "repositoryNameWithOwner": "octo/repo", "branchName": "agent/task-1" },
//!     "expectedHeadOid": "<40 hex: the base commit>",
//!     "message": { "headline": "...", "body": "...\n\nDiff-Sha256: ...\nTask-Id: ...\nRun-Id: ..." },
//!     "fileChanges": {
//!       "additions": [ { "path": "src/a.rs", "contents": "<base64>" } ],
//!       "deletions": [ { "path": "src/old.rs" } ]
//!     }
//!   },
//!   "pull_request": { "title": "...", "body": "...", "draft": true, "base": "main", "head": "agent/task-1" },
//!   "diff_sha256": "<64 hex>",
//!   "files": [ <the guard verdict's file entries, agent-team-apply/guard-verdict/v1 shape> ]
//! }
//! ```
//!
//! `repositoryNameWithOwner` is present only when `--repository` was given; without it the
//! consumer must add it (or an `id`) before sending the input.
//!
//! # The `input` shapes, as GitHub defines them
//!
//! From GitHub's public GraphQL schema (`schema.graphql` in `octokit/graphql-schema`, commit
//! 82ff2d4780080e6929ebb95608cefa22dfa05ac7, the schema GitHub publishes at
//! docs.github.com → GraphQL → "Public schema"; rendered in the GraphQL reference, "Input objects"
//! and "Commits" → `createCommitOnBranch`):
//!
//! ```graphql
//! input CreateCommitOnBranchInput {
//!   branch: CommittableBranch!        # The Ref to be updated. Must be a branch.
//!   clientMutationId: String
//!   expectedHeadOid: GitObjectID!     # The git commit oid expected at the head of the branch prior to the commit
//!   fileChanges: FileChanges
//!   message: CommitMessage!
//! }
//! input CommittableBranch {
//!   branchName: String                # The unqualified name of the branch to append the commit to.
//!   id: ID
//!   repositoryNameWithOwner: String
//! }
//! input CommitMessage { body: String  headline: String! }
//! input FileChanges {
//!   additions: [FileAddition!] = []
//!   deletions: [FileDeletion!] = []
//! }
//! input FileAddition { contents: Base64String!  path: String! }
//! input FileDeletion { path: String! }
//! ```
//!
//! The `FileChanges` description adds: paths use `/` and are not slash-prefixed; `path` values must
//! be unique across all additions and deletions; contents are given in full, RFC 4648 base64 with
//! padding, no transcoding or line-ending normalization; a modification is an addition at an
//! existing path, a rename is a deletion plus an addition; a deleted path must exist. The mutation
//! appends to an *existing* branch whose head must equal `expectedHeadOid` (a compare-and-swap),
//! and carries no file modes — so the plan only ever contains regular 100644 files.
//!
//! `clientMutationId` and `CommittableBranch.id` are never written.

use serde::{Deserialize, Serialize};

use guard::output::json_v1::FileDoc;

pub const SCHEMA: &str = "agent-team-apply/publish-plan/v1";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublishPlanDoc {
    pub schema: String,
    /// The `input` argument of `createCommitOnBranch`, ready to send.
    pub input: CreateCommitOnBranchInput,
    pub pull_request: PullRequestDoc,
    /// The SHA-256 of the diff the plan was computed from (lower-case hex).
    pub diff_sha256: String,
    /// The guard verdict's file list.
    pub files: Vec<FileDoc>,
}

/// `CreateCommitOnBranchInput`, without `clientMutationId`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateCommitOnBranchInput {
    pub branch: CommittableBranch,
    /// The full 40-hex id of the base commit.
    pub expected_head_oid: String,
    pub message: CommitMessage,
    pub file_changes: FileChanges,
}

/// `CommittableBranch`, by `repositoryNameWithOwner` and `branchName` (never by node `id`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CommittableBranch {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository_name_with_owner: Option<String>,
    pub branch_name: String,
}

/// `CommitMessage`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommitMessage {
    pub headline: String,
    pub body: String,
}

/// `FileChanges`; both lists are always written, possibly empty.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileChanges {
    pub additions: Vec<FileAddition>,
    pub deletions: Vec<FileDeletion>,
}

/// `FileAddition`: the full new contents of `path`, standard base64 with padding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileAddition {
    pub path: String,
    pub contents: String,
}

/// `FileDeletion`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileDeletion {
    pub path: String,
}

/// The draft pull request to open from `head` into `base` once the commit exists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PullRequestDoc {
    pub title: String,
    pub body: String,
    /// Always `true`.
    pub draft: bool,
    pub base: String,
    pub head: String,
}

impl PublishPlanDoc {
    /// Serialize as pretty JSON with a trailing newline. An error, never an empty document.
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        guard::doc_json::to_string_pretty(self)
    }
}
