//! The versioned publication plan: the commit to publish (its exact tree, as git computes it,
//! with every touched path's mode and blob id), how it is published and why, the input of
//! GitHub's `createCommitOnBranch` GraphQL mutation (which also carries the new contents for
//! either method), and the draft pull request to open on top of it.
//!
//! # Document
//!
//! ```json
//! {
//!   "schema": "agent-team-apply/publish-plan/v2",
//!   "method": "create-commit-on-branch" | "git-database",
//!   "method_reason": "...",
//!   "base_tree": "<40 hex: the tree of the base commit>",
//!   "tree": "<40 hex: git write-tree of the base with the diff applied>",
//!   "entries": [
//!     { "path": "bin/run.sh", "old_mode": "100755", "new_mode": "100755", "blob": "<40 hex>" },
//!     { "path": "src/old.rs", "old_mode": "100644", "new_mode": null, "blob": null }
//!   ],
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
//!   "files": [ <the guard verdict's file entries, agent-team-apply/guard-verdict/v1 shape> ],
//!   "branch": { "merge_base": "<40 hex>", "protected": [ <protected-path findings> ] }
//! }
//! ```
//!
//! `branch` is present only in a revision's plan (`gate publish-plan --revise N`): the protected
//! paths that the whole branch changes, from the merge base of the checkout's `HEAD` (the
//! dispatched commit of the base branch) and the revision's head, to `tree`. The pull request
//! shows every round, so its label, reviewers and the check run's count come from this list
//! together with this round's own findings.
//!
//! `entries` are git's own changes (`diff-index --raw` of the throwaway index against the base,
//! renames not detected), in git's path order: one per path, `new_mode`/`blob` `null` for a
//! deletion, `old_mode` `null` for a new file. Modes are `100644` or `100755`; nothing else is
//! ever planned. `tree` is the proof's reference: a publication succeeds only when the commit
//! GitHub stored has exactly this tree id.
//!
//! `method` is `create-commit-on-branch` when every path the commit writes ends as a regular
//! `100644` file (deletions carry no mode): the mutation writes every file it touches as
//! `100644`, so it reproduces such a tree exactly. Otherwise it is `git-database`: blobs, a tree
//! on `base_tree` with explicit modes, a commit whose only parent is the base, and the branch
//! ref at that commit. `method_reason` says which rule chose it, naming a path.
//!
//! The schema is `v2` because a `v1` consumer sent `input` as-is through `createCommitOnBranch`:
//! given a `v2` plan with an executable file it would silently publish another tree. It refuses
//! the new schema instead.
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
//! and carries no file modes.
//!
//! `clientMutationId` and `CommittableBranch.id` are never written.

use contract::verdict::FileMode;
use serde::{Deserialize, Serialize};

use guard::output::json_v1::{FileDoc, ViolationDoc};

pub const SCHEMA: &str = "agent-team-apply/publish-plan/v2";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublishPlanDoc {
    pub schema: String,
    /// How the commit is made.
    pub method: PublishMethod,
    /// Why that method (names the path that decided it).
    pub method_reason: String,
    /// The base commit's tree id.
    pub base_tree: String,
    /// The tree id git computes for the base with the diff applied (`git write-tree`).
    pub tree: String,
    /// git's changes, one per path, with modes and blob ids.
    pub entries: Vec<TreeEntryDoc>,
    /// The `input` argument of `createCommitOnBranch`, ready to send; for either method, the
    /// commit's message and the new contents.
    pub input: CreateCommitOnBranchInput,
    pub pull_request: PullRequestDoc,
    /// The SHA-256 of the diff the plan was computed from (lower-case hex).
    pub diff_sha256: String,
    /// The guard verdict's file list.
    pub files: Vec<FileDoc>,
    /// A revision only (absent in a first round's plan): what the whole branch changes, from its
    /// merge base with the base branch to `tree`, as far as protected paths go.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<BranchChangesDoc>,
}

/// What a revision's branch changes as a whole: the pull request shows every round, so its label,
/// its reviewers and the check run's count of protected files come from here, not from this
/// round's diff alone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BranchChangesDoc {
    /// The merge base of the dispatched commit of the base branch and the revision's head: the
    /// commit the pull request's changes are counted from.
    pub merge_base: String,
    /// Every protected path (`protected-path` findings) that differs between the merge base's
    /// tree and `tree`, in git's path order. Empty when the policy says `protected: allow`.
    pub protected: Vec<ViolationDoc>,
}

/// How the commit is made on GitHub.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PublishMethod {
    /// GraphQL `createCommitOnBranch`: every written file is `100644`.
    CreateCommitOnBranch,
    /// The Git database REST API: blobs, a tree with explicit modes, a commit, the ref.
    GitDatabase,
}

impl PublishMethod {
    /// The name the document uses.
    pub fn name(self) -> &'static str {
        match self {
            PublishMethod::CreateCommitOnBranch => "create-commit-on-branch",
            PublishMethod::GitDatabase => "git-database",
        }
    }
}

/// A mode a plan can carry: a regular file or an executable one, the two
/// [`contract::verdict::FileMode`]s a publication writes (`100644`/`100755`, as the Git database
/// API writes them). A narrower type than the verdict's mode on purpose: a plan holding a symlink
/// or a gitlink does not parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum PublishableMode {
    #[serde(rename = "100644")]
    Regular,
    #[serde(rename = "100755")]
    Executable,
    /// A symbolic link: its blob is the target. Planned only under the policy's
    /// `symlinks.allow: true`, and then only through the Git database API.
    #[serde(rename = "120000")]
    Symlink,
}

impl PublishableMode {
    /// The mode from git's octal number; `None` for anything but `100644`, `100755` and `120000`.
    pub fn from_git(bits: u32) -> Option<PublishableMode> {
        match FileMode::new(bits)? {
            FileMode::REGULAR => Some(PublishableMode::Regular),
            FileMode::EXECUTABLE => Some(PublishableMode::Executable),
            FileMode::SYMLINK => Some(PublishableMode::Symlink),
            _ => None,
        }
    }

    /// The verdict's mode for it.
    pub fn mode(self) -> FileMode {
        match self {
            PublishableMode::Regular => FileMode::REGULAR,
            PublishableMode::Executable => FileMode::EXECUTABLE,
            PublishableMode::Symlink => FileMode::SYMLINK,
        }
    }

    /// `100644`, `100755` or `120000`.
    pub fn as_str(self) -> &'static str {
        match self {
            PublishableMode::Regular => "100644",
            PublishableMode::Executable => "100755",
            PublishableMode::Symlink => "120000",
        }
    }
}

/// One path git's change touches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TreeEntryDoc {
    pub path: String,
    /// `null` for a new file.
    pub old_mode: Option<PublishableMode>,
    /// `null` for a deletion.
    pub new_mode: Option<PublishableMode>,
    /// The id git gives the new contents (`null` for a deletion).
    pub blob: Option<String>,
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
