//! Preparing a publication from trusted inputs only: the base checkout and the diff bytes from the
//! trusted source, never anything the build-test job produced. Nothing from the patch is checked
//! out or executed.
//!
//! 1. The diff's SHA-256 is compared (constant time, [`guard::hash`]) with the expected hash before
//!    anything else; a mismatch stops here, before git runs.
//! 2. The full guard check runs as a library call with the git cross-check
//!    ([`guard::check::check_keeping_index`]): git applies the diff with `apply --cached` to a
//!    throwaway index of the base commit (never a worktree) and must read it as the guard did. Any
//!    violation means no plan. The guard's policy decides what may be published: a new
//!    executable file, a mode change or a symbolic link only when the policy allows it; gitlinks
//!    never.
//! 3. The new file contents are read from that index, after asserting once more that the
//!    verdict's file list and the index's changes are the same set, that every path is a regular
//!    (`100644`) or executable (`100755`) file on both sides, or a symbolic link (`120000`) when
//!    the policy allows links (nothing else is published, whatever a policy says: no gitlink, no
//!    change of type), and that every path is one git's `:<path>` blob lookup reads
//!    unambiguously.
//! 4. git writes the index's tree (`write-tree`): the plan's `tree`, which the published commit
//!    must reproduce exactly. The method follows from the modes ([`choose_method`]).
//! 5. The result is a [`PublishPlanDoc`]: the tree, every touched path with its modes and blob id,
//!    the `createCommitOnBranch` input and the draft pull request, bound to the diff hash, the
//!    task id and the run id by commit-message trailers.
//!
//! Every argument that names something on GitHub (branch, repository, ids) is validated before any
//! input is read ([`PublishTarget::new`]).

use std::collections::BTreeSet;
use std::fmt;
use std::path::Path;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use guard::check::{CheckError, CheckRequest, RepoBase, check, check_keeping_index};
use guard::escape::{is_hidden, neutralize};
use guard::git::{GitError, GitRepo, RawChange, ThrowawayIndex};
use guard::hash;
use guard::output::json_v1::ViolationDoc;
use guard::path::PathLimits;
use guard::policy::{Policy, Protected};
use guard::repo_path::RepoPath;
use guard::rules::RuleId;
use guard::verdict::{FileEntry, Verdict};

use crate::decide::valid_run_id;
use crate::output::publish_plan_v2::{
    BranchChangesDoc, CommitMessage, CommittableBranch, CreateCommitOnBranchInput, FileAddition,
    FileChanges, FileDeletion, PublishMethod, PublishPlanDoc, PublishableMode, PullRequestDoc,
    SCHEMA, TreeEntryDoc,
};

/// A regular file's mode, the only one `createCommitOnBranch` writes.
pub const MODE_REGULAR: u32 = 0o100644;
/// An executable file's mode.
pub const MODE_EXECUTABLE: u32 = 0o100755;
/// Longest accepted branch name, in bytes.
pub const MAX_BRANCH_BYTES: usize = 255;
/// Longest accepted task id.
pub const MAX_TASK_ID_LEN: usize = 64;
/// Longest repository owner (GitHub's login limit) and name.
pub const MAX_OWNER_LEN: usize = 39;
pub const MAX_REPO_NAME_LEN: usize = 100;

/// A command-line value that cannot be used; nothing was read yet when this is reported.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ArgError {
    #[error("invalid {flag} \"{value}\": {problem}")]
    BranchName {
        flag: &'static str,
        value: String,
        problem: &'static str,
    },
    #[error("invalid --task-id \"{value}\": {problem}")]
    TaskId {
        value: String,
        problem: &'static str,
    },
    #[error(
        "invalid --run-id \"{value}\": must be a decimal workflow run id (no sign, no leading zero)"
    )]
    RunId { value: String },
    #[error("invalid --dispatch-nonce \"{value}\": must be 32 lowercase hex digits")]
    Nonce { value: String },
    #[error("invalid --pr-title or --pr-description: {message}")]
    AgentWords { message: String },
    #[error("invalid --repository \"{value}\": {problem}")]
    Repository {
        value: String,
        problem: &'static str,
    },
    #[error("invalid --expected-sha256 \"{value}\": must be 64 lower-case hex digits")]
    ExpectedSha256 { value: String },
    #[error("invalid --base \"{value}\": must be a commit id of 7 to 40 hex digits")]
    Base { value: String },
    #[error("--branch \"{0}\" is the base branch: the plan must never commit onto the base branch")]
    SameBranch(String),
}

/// For messages: terminal-safe and bounded.
fn shown(value: &str) -> String {
    let cut: String = value.chars().take(200).collect();
    let mut out = neutralize(&cut);
    if cut.len() < value.len() {
        out.push_str("...");
    }
    out
}

/// Why `name` is not acceptable as a branch name, or `None`.
///
/// git's ref-name rules (`git check-ref-format`), applied to the unqualified branch name, and a
/// little more: no component may start with `.` or end with `.lock`; no `..`, `@{`, `//`, leading
/// or trailing `/`, trailing `.`; no ASCII control character, space, `~ ^ : ? * [ \`; not `@`.
/// Additionally: not empty, at most [`MAX_BRANCH_BYTES`] bytes, no leading `-` (it would read as an
/// option), not `HEAD`, no `refs/` prefix (GitHub takes the unqualified name), and no invisible or
/// reordering character (bidi controls, zero-width characters).
pub fn branch_name_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        return Some("empty");
    }
    if name.len() > MAX_BRANCH_BYTES {
        return Some("longer than 255 bytes");
    }
    if name == "@" {
        return Some("`@` alone is not a ref name");
    }
    if name == "HEAD" {
        return Some("`HEAD` is not a branch name");
    }
    if name.starts_with('-') {
        return Some("starts with `-`");
    }
    if name.starts_with("refs/") {
        return Some("give the unqualified branch name, without `refs/`");
    }
    if name.chars().any(|c| c == ' ' || is_hidden(c)) {
        return Some("contains a space, a control character or an invisible character");
    }
    if name.contains(['~', '^', ':', '?', '*', '[', '\\']) {
        return Some("contains one of ~ ^ : ? * [ \\");
    }
    if name.contains("..") {
        return Some("contains `..`");
    }
    if name.contains("@{") {
        return Some("contains `@{`");
    }
    if name.starts_with('/') || name.ends_with('/') || name.contains("//") {
        return Some("has an empty `/`-separated component");
    }
    if name.ends_with('.') {
        return Some("ends with `.`");
    }
    for component in name.split('/') {
        if component.starts_with('.') {
            return Some("a component starts with `.`");
        }
        if component.ends_with(".lock") {
            return Some("a component ends with `.lock`");
        }
    }
    None
}

/// Why `id` is not a task id (`[A-Za-z0-9._-]{1,64}`), or `None`.
pub fn task_id_problem(id: &str) -> Option<&'static str> {
    if id.is_empty() {
        Some("empty")
    } else if id.len() > MAX_TASK_ID_LEN {
        Some("longer than 64 characters")
    } else if !id
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
    {
        Some("only ASCII letters, digits, `.`, `_` and `-` are allowed")
    } else {
        None
    }
}

/// Why `value` is not `OWNER/NAME`, or `None`. The owner is a GitHub login (ASCII letters, digits
/// and `-`, not at either end, at most 39); the name is ASCII letters, digits, `.`, `_`, `-`, at
/// most 100, and not `.` or `..`.
pub fn repository_problem(value: &str) -> Option<&'static str> {
    let Some((owner, name)) = value.split_once('/') else {
        return Some("must be OWNER/NAME");
    };
    if owner.is_empty() || owner.len() > MAX_OWNER_LEN {
        return Some("the owner must be 1 to 39 characters");
    }
    if !owner
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        || owner.starts_with('-')
        || owner.ends_with('-')
    {
        return Some("the owner may hold only ASCII letters, digits and inner `-`");
    }
    if name.is_empty() || name.len() > MAX_REPO_NAME_LEN {
        return Some("the name must be 1 to 100 characters");
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        || name == "."
        || name == ".."
    {
        return Some("the name may hold only ASCII letters, digits, `.`, `_` and `-`");
    }
    None
}

/// A commit id given on the command line: 7 to 40 hex digits (either case).
fn valid_base(base: &str) -> bool {
    (7..=40).contains(&base.len()) && base.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Where and under which ids the plan publishes. Every field is validated by [`PublishTarget::new`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublishTarget {
    repository: Option<String>,
    branch: String,
    base_branch: String,
    task_id: Option<String>,
    run_id: Option<String>,
    dispatch_nonce: Option<String>,
    agent_title: String,
    agent_description: String,
}

/// The publication commit's headline.
pub fn headline(task_id: Option<&str>) -> String {
    match task_id {
        Some(task) => format!("agent-team-apply {task}: apply verified diff"),
        None => "agent-team-apply: apply verified diff".to_owned(),
    }
}

impl PublishTarget {
    pub fn new(
        repository: Option<&str>,
        branch: &str,
        base_branch: &str,
        task_id: Option<&str>,
        run_id: Option<&str>,
    ) -> Result<PublishTarget, ArgError> {
        for (flag, value) in [("--branch", branch), ("--base-branch", base_branch)] {
            if let Some(problem) = branch_name_problem(value) {
                return Err(ArgError::BranchName {
                    flag,
                    value: shown(value),
                    problem,
                });
            }
        }
        if branch == base_branch {
            return Err(ArgError::SameBranch(shown(branch)));
        }
        if let Some(problem) = repository.and_then(repository_problem) {
            return Err(ArgError::Repository {
                value: shown(repository.unwrap_or_default()),
                problem,
            });
        }
        if let Some(id) = task_id
            && let Some(problem) = task_id_problem(id)
        {
            return Err(ArgError::TaskId {
                value: shown(id),
                problem,
            });
        }
        if let Some(id) = run_id
            && !valid_run_id(id)
        {
            return Err(ArgError::RunId { value: shown(id) });
        }
        Ok(PublishTarget {
            repository: repository.map(str::to_owned),
            branch: branch.to_owned(),
            base_branch: base_branch.to_owned(),
            task_id: task_id.map(str::to_owned),
            run_id: run_id.map(str::to_owned),
            dispatch_nonce: None,
            agent_title: String::new(),
            agent_description: String::new(),
        })
    }

    /// The agent's title and description for the draft (the signed `pr_title` and
    /// `pr_description` inputs), shown in the body as the agent's words.
    pub fn with_agent_words(
        mut self,
        title: &str,
        description: &str,
    ) -> Result<PublishTarget, ArgError> {
        guard::inputs::check_pr_title(title).map_err(|e| ArgError::AgentWords {
            message: e.to_string(),
        })?;
        guard::inputs::check_pr_description(description).map_err(|e| ArgError::AgentWords {
            message: e.to_string(),
        })?;
        self.agent_title = title.to_owned();
        self.agent_description = description.to_owned();
        Ok(self)
    }

    /// The signed dispatch's nonce (32 lowercase hex digits), recorded as the commit's
    /// `Dispatch-Nonce` trailer so that a second publication of one dispatch is visible.
    pub fn with_dispatch_nonce(mut self, nonce: &str) -> Result<PublishTarget, ArgError> {
        if guard::inputs::Nonce::parse(nonce).is_none() {
            return Err(ArgError::Nonce {
                value: shown(nonce),
            });
        }
        self.dispatch_nonce = Some(nonce.to_owned());
        Ok(self)
    }

    pub fn branch(&self) -> &str {
        &self.branch
    }
}

/// Check the hash and base arguments' form, before anything is read.
pub fn validate_inputs(base: &str, expected_sha256: &str) -> Result<(), ArgError> {
    if !crate::decide::valid_sha256(expected_sha256) {
        return Err(ArgError::ExpectedSha256 {
            value: shown(expected_sha256),
        });
    }
    if !valid_base(base) {
        return Err(ArgError::Base { value: shown(base) });
    }
    Ok(())
}

/// What to publish.
#[derive(Debug, Clone, Copy)]
pub struct PublishRequest<'a> {
    /// The trusted base checkout (only read: `rev-parse`, `ls-tree`, and a throwaway index).
    pub repo_dir: &'a Path,
    /// The base commit id (7 to 40 hex digits).
    pub base: &'a str,
    /// The diff bytes from the trusted source.
    pub diff: &'a [u8],
    /// 64 lower-case hex digits.
    pub expected_sha256: &'a str,
    pub scope: &'a [String],
    pub policy: &'a Policy,
    pub target: &'a PublishTarget,
    /// A revision of the task's open draft: `base` is its head, and the plan also lists the
    /// protected paths of the whole branch ([`BranchChangesDoc`]), counted from the merge base
    /// of the checkout's `HEAD` (the dispatched commit of the base branch) and `base`.
    pub revision: bool,
}

/// Errors that stop before any decision (exit 2): bad arguments, a base git cannot resolve, git
/// failing to run. Never a plan.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PublishError {
    #[error(transparent)]
    Arg(#[from] ArgError),
    #[error(transparent)]
    Check(#[from] CheckError),
    #[error(transparent)]
    Git(#[from] GitError),
    #[error("--base {given} resolved to {resolved:?}, not a full commit id starting with it")]
    BaseMismatch { given: String, resolved: String },
    #[error(
        "the revision's head {head} has no merge base with the checkout's HEAD (the dispatched \
         commit of the base branch), so the protected paths of its branch cannot be counted: \
         {stderr}"
    )]
    NoMergeBase { head: String, stderr: String },
}

/// Stable identifiers of the reasons a guard-accepted diff still cannot be published.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum PlanReasonCode {
    UnpublishableMode,
    UnpublishablePath,
    IndexDisagrees,
}

/// Static metadata of one plan reason.
#[derive(Debug, Clone, Copy)]
pub struct PlanReasonInfo {
    pub code: PlanReasonCode,
    pub name: &'static str,
    pub description: &'static str,
}

/// Every plan reason, in documentation order.
pub const PLAN_REASONS: &[PlanReasonInfo] = &[
    PlanReasonInfo {
        code: PlanReasonCode::UnpublishableMode,
        name: "unpublishable-mode",
        description: "A file is not a regular (100644) or executable (100755) file on both \
                      sides, or changes type: nothing else is published.",
    },
    PlanReasonInfo {
        code: PlanReasonCode::UnpublishablePath,
        name: "unpublishable-path",
        description: "A path git reports is refused by the path rules, or read by git as \
                      `:<stage>:<path>`.",
    },
    PlanReasonInfo {
        code: PlanReasonCode::IndexDisagrees,
        name: "index-disagrees",
        description: "The verdict's file list and the throwaway index's changes are not the \
                      same set.",
    },
];

impl PlanReasonCode {
    pub fn info(self) -> PlanReasonInfo {
        PLAN_REASONS
            .iter()
            .copied()
            .find(|info| info.code == self)
            .unwrap_or(PlanReasonInfo {
                code: self,
                name: "unknown",
                description: "",
            })
    }

    /// The stable kebab-case id.
    pub fn name(self) -> &'static str {
        self.info().name
    }
}

impl fmt::Display for PlanReasonCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One reason a guard-accepted diff is not published. `path` is exact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanReason {
    pub code: PlanReasonCode,
    pub path: Option<RepoPath>,
    pub message: String,
}

/// No plan: the guard's verdict (which may accept) and the reasons specific to publication.
#[derive(Debug, Clone)]
pub struct Rejection {
    pub verdict: Verdict,
    pub reasons: Vec<PlanReason>,
}

/// The result of [`prepare`].
#[derive(Debug, Clone)]
pub enum Outcome {
    /// The plan, and the accepting verdict it was computed from (its protected paths, if any, are
    /// for the check run and the pull request's label).
    Plan {
        plan: Box<PublishPlanDoc>,
        verdict: Box<Verdict>,
    },
    Rejected(Box<Rejection>),
}

/// Re-verify the diff from trusted inputs and compute the publication, or say why not.
pub fn prepare(req: &PublishRequest<'_>) -> Result<Outcome, PublishError> {
    validate_inputs(req.base, req.expected_sha256)?;
    let expected =
        hash::parse_sha256(req.expected_sha256).ok_or_else(|| ArgError::ExpectedSha256 {
            value: shown(req.expected_sha256),
        })?;

    // Integrity first: on a mismatch git never runs. The verdict is the guard's own (it stops at
    // the hash before parsing), so the reason carries the guard's rule id.
    if !hash::matches(req.diff, &expected) {
        let verdict = check(&CheckRequest {
            diff: req.diff,
            expected_sha256: req.expected_sha256,
            scope: req.scope,
            policy: req.policy,
            repo: None,
        })?;
        return Ok(rejected(verdict, Vec::new()));
    }

    let git = GitRepo::open(req.repo_dir)?;
    let base_commit = git.resolve_commit(req.base)?;
    let full_hex = contract::ids::CommitId::parse(&base_commit).is_ok();
    if !full_hex || !base_commit.starts_with(&req.base.to_ascii_lowercase()) {
        return Err(PublishError::BaseMismatch {
            given: req.base.to_owned(),
            resolved: shown(&base_commit),
        });
    }

    let checked = check_keeping_index(&CheckRequest {
        diff: req.diff,
        expected_sha256: req.expected_sha256,
        scope: req.scope,
        policy: req.policy,
        repo: Some(RepoBase {
            dir: req.repo_dir,
            base: &base_commit,
        }),
    })?;
    let verdict = checked.verdict;
    if !verdict.accepted() {
        return Ok(rejected(verdict, Vec::new()));
    }
    if verdict.diff_sha256.as_str() != req.expected_sha256 {
        // Unreachable after the constant-time match above; kept so that a plan is never bound
        // to a hash other than the one it was computed from.
        return Ok(rejected(
            verdict,
            vec![PlanReason {
                code: PlanReasonCode::IndexDisagrees,
                path: None,
                message: "the verdict's diff hash is not the expected hash".to_owned(),
            }],
        ));
    }
    let Some(index) = checked.index else {
        return Ok(rejected(
            verdict,
            vec![PlanReason {
                code: PlanReasonCode::IndexDisagrees,
                path: None,
                message: "git produced no index for an accepted diff".to_owned(),
            }],
        ));
    };

    let with_ids = index.changes_with_ids()?;
    let changes: Vec<_> = with_ids.iter().map(|(change, _)| change.clone()).collect();
    let mut reasons = compare_with_index(&verdict.files, &changes);
    for change in &changes {
        reasons.extend(publishability(change, req.policy));
    }
    if !reasons.is_empty() {
        return Ok(rejected(verdict, reasons));
    }

    let mut added = Vec::new();
    let mut deletions = Vec::new();
    let mut entries = Vec::new();
    let mut seen = BTreeSet::new();
    for (change, oid) in &with_ids {
        // publishability() accepted the path: valid UTF-8, so this is the path itself.
        let path = String::from_utf8_lossy(&change.path).into_owned();
        if !seen.insert(path.clone()) {
            reasons.push(PlanReason {
                code: PlanReasonCode::IndexDisagrees,
                path: Some(RepoPath::from(&change.path)),
                message: "the index reports the path twice".to_owned(),
            });
            continue;
        }
        // publishability() accepted the modes: 0 (absent) or a mode a plan carries.
        let old_mode = PublishableMode::from_git(change.old_mode);
        let new_mode = PublishableMode::from_git(change.new_mode);
        match change.status {
            'A' | 'M' => {
                entries.push(TreeEntryDoc {
                    path: path.clone(),
                    old_mode,
                    new_mode,
                    blob: Some(oid.clone()),
                });
                added.push((path, oid.as_str()));
            }
            'D' => {
                entries.push(TreeEntryDoc {
                    path: path.clone(),
                    old_mode,
                    new_mode: None,
                    blob: None,
                });
                deletions.push(FileDeletion { path });
            }
            other => reasons.push(PlanReason {
                code: PlanReasonCode::UnpublishableMode,
                path: Some(RepoPath::from(&change.path)),
                message: format!("git reports status {other}, which a plan cannot express"),
            }),
        }
    }
    if !reasons.is_empty() {
        return Ok(rejected(verdict, reasons));
    }
    // By object id, all in one `git cat-file --batch`: a `:<path>` lookup would read `0:name`
    // as stage 0 of `name`.
    let oids: Vec<&str> = added.iter().map(|(_, oid)| *oid).collect();
    let blobs = index.blobs(&oids)?;
    let mut additions = Vec::with_capacity(added.len());
    for (i, (path, _)) in added.into_iter().enumerate() {
        let blob = blobs.get(i).ok_or(GitError::BadOutput {
            command: "cat-file --batch".into(),
        })?;
        additions.push(FileAddition {
            path,
            contents: BASE64.encode(blob),
        });
    }
    drop(blobs);

    let tree = Tree {
        base: index.base_tree()?,
        result: index.write_tree()?,
        entries,
    };
    let branch = if req.revision {
        Some(branch_changes(&git, &index, req.policy, &base_commit)?)
    } else {
        None
    };
    let mut doc = plan_doc(
        req.target,
        &verdict,
        &base_commit,
        tree,
        FileChanges {
            additions,
            deletions,
        },
    );
    doc.branch = branch;
    Ok(Outcome::Plan {
        plan: Box::new(doc),
        verdict: Box::new(verdict),
    })
}

/// What a revision's whole branch changes: the merge base of `HEAD` (the dispatched commit of
/// the base branch) and `head` (the revision's base, the draft's head), and every protected path
/// that differs between its tree and the index (`head` with this round's diff applied). A
/// repository where git finds no merge base is an error: no plan.
fn branch_changes(
    git: &GitRepo,
    index: &ThrowawayIndex,
    policy: &Policy,
    head: &str,
) -> Result<BranchChangesDoc, PublishError> {
    let mut cmd = guard::git::command(git.dir());
    cmd.args(["merge-base", "--end-of-options", "HEAD", head]);
    let out = cmd.output().map_err(GitError::Spawn)?;
    let merge_base = String::from_utf8_lossy(out.stdout.trim_ascii_end()).into_owned();
    if !out.status.success() || contract::ids::CommitId::parse(&merge_base).is_err() {
        return Err(PublishError::NoMergeBase {
            head: head.to_owned(),
            stderr: neutralize(String::from_utf8_lossy(&out.stderr).trim_end()),
        });
    }
    let protected = if policy.protected == Protected::Allow {
        Vec::new()
    } else {
        index
            .changes_since(&merge_base)?
            .iter()
            .filter_map(|change| branch_finding(policy, &change.path, &merge_base))
            .collect()
    };
    Ok(BranchChangesDoc {
        merge_base,
        protected,
    })
}

/// The `protected-path` finding of a path the branch changes, when the policy protects it (as
/// spelled, or as HFS+/NTFS resolve it, as the guard matches).
fn branch_finding(policy: &Policy, raw: &[u8], merge_base: &str) -> Option<ViolationDoc> {
    let path = std::str::from_utf8(raw).ok()?;
    let pattern = policy
        .protected_by(path)
        .or_else(|| policy.protected_by(&guard::path::resolved_spelling(path)))?;
    let rule = RuleId::ProtectedPath;
    Some(ViolationDoc {
        rule,
        path: Some(RepoPath::from(raw)),
        old_path: None,
        line: None,
        message: format!(
            "path is protected: the branch changes it since {}, and a human must review this \
             change before it is merged",
            merge_base.get(..12).unwrap_or(merge_base)
        ),
        policy_entry: Some(format!("protect: {pattern}")),
        hint: rule.remedy().to_owned(),
        docs: rule.anchor(),
    })
}

/// The publication method for `entries`, and why: `createCommitOnBranch` exactly when every path
/// the commit writes ends as a regular `100644` file, since the mutation writes every file it
/// touches as `100644` (a deletion writes nothing, so its old mode does not matter); otherwise
/// the Git database API, whose tree entries carry their mode. The published tree id is checked
/// either way.
pub fn choose_method(entries: &[TreeEntryDoc]) -> (PublishMethod, String) {
    let moded: Vec<&TreeEntryDoc> = entries
        .iter()
        .filter(|e| e.new_mode.is_some_and(|m| m != PublishableMode::Regular))
        .collect();
    match moded.as_slice() {
        [] => (
            PublishMethod::CreateCommitOnBranch,
            "every file the commit writes is a regular 100644 file, which createCommitOnBranch \
             reproduces exactly"
                .to_owned(),
        ),
        [first, rest @ ..] => {
            let more = match rest.len() {
                0 => String::new(),
                n => format!(" (and {n} more)"),
            };
            let mode = first.new_mode.map_or("?", PublishableMode::as_str);
            (
                PublishMethod::GitDatabase,
                format!(
                    "{} is written with mode {mode}{more}; createCommitOnBranch writes every file \
                     as 100644, so the commit is made through the Git database API, whose tree \
                     entries carry their mode",
                    first.path
                ),
            )
        }
    }
}

/// The trees of a plan.
struct Tree {
    base: String,
    result: String,
    entries: Vec<TreeEntryDoc>,
}

fn rejected(verdict: Verdict, reasons: Vec<PlanReason>) -> Outcome {
    Outcome::Rejected(Box::new(Rejection { verdict, reasons }))
}

/// Every verdict file must map to index changes and every index change to a verdict file.
fn compare_with_index(files: &[FileEntry], changes: &[RawChange]) -> Vec<PlanReason> {
    let implied = guard::check::index_changes(files.iter().map(|f| guard::check::FileChange {
        status: f.status,
        old_path: f.old_path.as_ref().map(|p| p.as_bytes()),
        new_path: f.new_path.as_ref().map(|p| p.as_bytes()),
        old_mode: f.old_mode,
        new_mode: f.new_mode,
    }));
    let Some(implied) = implied else {
        return vec![PlanReason {
            code: PlanReasonCode::IndexDisagrees,
            path: None,
            message: "a file of the verdict names no path or mode".to_owned(),
        }];
    };
    let actual: BTreeSet<RawChange> = changes.iter().cloned().collect();
    let mut reasons = Vec::new();
    if actual.len() != changes.len() {
        reasons.push(PlanReason {
            code: PlanReasonCode::IndexDisagrees,
            path: None,
            message: "the index reports a change twice".to_owned(),
        });
    }
    if implied != actual {
        let only_index: Vec<String> = actual
            .difference(&implied)
            .map(RawChange::to_string)
            .collect();
        let only_verdict: Vec<String> = implied
            .difference(&actual)
            .map(RawChange::to_string)
            .collect();
        reasons.push(PlanReason {
            code: PlanReasonCode::IndexDisagrees,
            path: None,
            message: format!(
                "index only [{}]; verdict only [{}]",
                only_index.join(", "),
                only_verdict.join(", ")
            ),
        });
    }
    reasons
}

/// Whether one index change can be published exactly: a regular or executable file, or a
/// symbolic link when the policy allows links (`symlinks.allow: true`, under which the guard
/// checked its target), on both sides of an addition, modification or deletion.
fn publishability(change: &RawChange, policy: &Policy) -> Vec<PlanReason> {
    let mut reasons = Vec::new();
    let file = |mode: u32| match PublishableMode::from_git(mode) {
        Some(PublishableMode::Symlink) => policy.allow_symlinks,
        Some(_) => true,
        None => false,
    };
    let modes_ok = match change.status {
        'A' => change.old_mode == 0 && file(change.new_mode),
        'D' => file(change.old_mode) && change.new_mode == 0,
        'M' => file(change.old_mode) && file(change.new_mode),
        _ => false,
    };
    if !modes_ok {
        reasons.push(PlanReason {
            code: PlanReasonCode::UnpublishableMode,
            path: Some(RepoPath::from(&change.path)),
            message: format!(
                "{} {:06o} -> {:06o}: only regular (100644) and executable (100755) files, and \
                 symbolic links (120000) under `symlinks.allow: true`, are published",
                change.status, change.old_mode, change.new_mode
            ),
        });
    }
    // The path rules again, on the path git reports (defense in depth: the guard checked the
    // diff's own names).
    let problem = match guard::path::validate_path(&change.path, &PathLimits::default()) {
        Err(e) => Some(e.to_string()),
        // git reads `:<n>:<path>` (n in 0..=3) as stage n of <path>: such a path would make a
        // `:<path>` lookup read another entry.
        Ok(path) if matches!(path.as_bytes(), [b'0'..=b'3', b':', ..]) => Some(
            "the path starts with `<digit>:`, which git's `:<path>` syntax reads as a stage number"
                .to_owned(),
        ),
        Ok(_) => None,
    };
    if let Some(problem) = problem {
        reasons.push(PlanReason {
            code: PlanReasonCode::UnpublishablePath,
            path: Some(RepoPath::from(&change.path)),
            message: problem,
        });
    }
    reasons
}

fn plan_doc(
    target: &PublishTarget,
    verdict: &Verdict,
    base_commit: &str,
    tree: Tree,
    file_changes: FileChanges,
) -> PublishPlanDoc {
    let verdict_doc = guard::output::json_v1::document(verdict);
    let file_count = verdict_doc.files.len();
    let headline = headline(target.task_id.as_deref());
    let mut body = format!(
        "Applies a candidate diff that the apply/verify gate re-verified from\n\
         trusted inputs: its SHA-256, the guard's strict parse cross-checked\n\
         with git on the base commit, the policy and the declared scope. The\n\
         build and tests ran in the build-test job; the gate relies only on\n\
         that job's conclusion.\n\n\
         Diff-Sha256: {}\n",
        verdict.diff_sha256
    );
    if let Some(task) = &target.task_id {
        body.push_str(&format!("Task-Id: {task}\n"));
    }
    if let Some(run) = &target.run_id {
        body.push_str(&format!("Run-Id: {run}\n"));
    }
    if let Some(nonce) = &target.dispatch_nonce {
        body.push_str(&format!("Dispatch-Nonce: {nonce}\n"));
    }
    let modes: Vec<report::pr_body::PathMode<'_>> = tree
        .entries
        .iter()
        .map(|e| report::pr_body::PathMode {
            path: &e.path,
            old_mode: e.old_mode.map(|m| m.mode().bits()),
            new_mode: e.new_mode.map(|m| m.mode().bits()),
        })
        .collect();
    let pr_ctx = report::pr_body::PrContext {
        task_id: target.task_id.as_deref(),
        run_id: target.run_id.as_deref(),
        diff_sha256: verdict.diff_sha256.as_str(),
        base_commit,
        modes: Some(&modes),
        agent: report::pr_body::AgentWords {
            title: &target.agent_title,
            description: &target.agent_description,
        },
    };
    let body_text = report::pr_body::render(&verdict_doc, &pr_ctx);
    let (method, method_reason) = choose_method(&tree.entries);
    PublishPlanDoc {
        schema: SCHEMA.to_owned(),
        method,
        method_reason,
        base_tree: tree.base,
        tree: tree.result,
        entries: tree.entries,
        input: CreateCommitOnBranchInput {
            branch: CommittableBranch {
                repository_name_with_owner: target.repository.clone(),
                branch_name: target.branch.clone(),
            },
            expected_head_oid: base_commit.to_owned(),
            message: CommitMessage { headline, body },
            file_changes,
        },
        pull_request: PullRequestDoc {
            title: report::pr_body::title(target.task_id.as_deref(), file_count),
            body: body_text,
            draft: true,
            base: target.base_branch.clone(),
            head: target.branch.clone(),
        },
        diff_sha256: verdict.diff_sha256.to_string(),
        files: verdict_doc.files,
        branch: None,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use guard::verdict::ChangeKind;

    #[test]
    fn branch_names() {
        let valid = [
            "main",
            "agent/task-1",
            "a.b/c_d-e",
            "feature/x@y",
            "ü-branch",
            &"a".repeat(255),
        ];
        for name in valid {
            assert_eq!(branch_name_problem(name), None, "{name}");
        }
        let invalid: &[(&str, &str)] = &[
            ("", "empty"),
            (&"a".repeat(256), "longer than 255 bytes"),
            ("@", "`@` alone is not a ref name"),
            ("HEAD", "`HEAD` is not a branch name"),
            ("-x", "starts with `-`"),
            (
                "refs/heads/x",
                "give the unqualified branch name, without `refs/`",
            ),
            (
                "a b",
                "contains a space, a control character or an invisible character",
            ),
            (
                "a\tb",
                "contains a space, a control character or an invisible character",
            ),
            (
                "a\u{7f}",
                "contains a space, a control character or an invisible character",
            ),
            (
                "a\u{202e}b",
                "contains a space, a control character or an invisible character",
            ),
            ("a~1", "contains one of ~ ^ : ? * [ \\"),
            ("a^", "contains one of ~ ^ : ? * [ \\"),
            ("a:b", "contains one of ~ ^ : ? * [ \\"),
            ("a?", "contains one of ~ ^ : ? * [ \\"),
            ("a*", "contains one of ~ ^ : ? * [ \\"),
            ("a[b", "contains one of ~ ^ : ? * [ \\"),
            ("a\\b", "contains one of ~ ^ : ? * [ \\"),
            ("a..b", "contains `..`"),
            ("a@{1}", "contains `@{`"),
            ("/a", "has an empty `/`-separated component"),
            ("a/", "has an empty `/`-separated component"),
            ("a//b", "has an empty `/`-separated component"),
            ("a.", "ends with `.`"),
            (".a", "a component starts with `.`"),
            ("a/.b", "a component starts with `.`"),
            ("a.lock", "a component ends with `.lock`"),
            ("a.lock/b", "a component ends with `.lock`"),
        ];
        for (name, problem) in invalid {
            assert_eq!(branch_name_problem(name), Some(*problem), "{name:?}");
        }
    }

    #[test]
    fn task_ids_run_ids_repositories() {
        for id in ["t", "task-1.a_B", &"x".repeat(64)] {
            assert_eq!(task_id_problem(id), None, "{id}");
        }
        for id in ["", "a b", "a/b", "é", "a\n", "@x", &"x".repeat(65)] {
            assert!(task_id_problem(id).is_some(), "{id:?}");
        }
        for repo in ["o/r", "octo-cat/re.po_x-1", "a1/.github-x"] {
            assert_eq!(repository_problem(repo), None, "{repo}");
        }
        for repo in [
            "", "o", "/r", "o/", "-o/r", "o-/r", "o_x/r", "o/r/x", "o/..", "o/.", "o/r x", "o/r\n",
        ] {
            assert!(repository_problem(repo).is_some(), "{repo:?}");
        }
        assert!(repository_problem(&format!("{}/r", "o".repeat(40))).is_some());
        assert!(repository_problem(&format!("o/{}", "r".repeat(101))).is_some());
    }

    #[test]
    fn target_checks_every_field() {
        let ok = PublishTarget::new(Some("o/r"), "agent/t", "main", Some("t"), Some("42"));
        assert!(ok.is_ok());
        assert!(matches!(
            PublishTarget::new(None, "main", "main", None, None),
            Err(ArgError::SameBranch(_))
        ));
        assert!(matches!(
            PublishTarget::new(None, "a..b", "main", None, None),
            Err(ArgError::BranchName {
                flag: "--branch",
                ..
            })
        ));
        assert!(matches!(
            PublishTarget::new(None, "x", "ma in", None, None),
            Err(ArgError::BranchName {
                flag: "--base-branch",
                ..
            })
        ));
        assert!(matches!(
            PublishTarget::new(None, "x", "main", None, Some("042")),
            Err(ArgError::RunId { .. })
        ));
        assert!(matches!(
            PublishTarget::new(None, "x", "main", Some("a b"), None),
            Err(ArgError::TaskId { .. })
        ));
        assert!(matches!(
            PublishTarget::new(Some("nope"), "x", "main", None, None),
            Err(ArgError::Repository { .. })
        ));
        // Messages are terminal-safe.
        let err = PublishTarget::new(None, "a\u{1b}[31m", "main", None, None).unwrap_err();
        assert!(!err.to_string().contains('\u{1b}'));
    }

    #[test]
    fn inputs_are_checked_for_form() {
        let sha = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
        assert!(validate_inputs("abcdef0", sha).is_ok());
        assert!(validate_inputs(&"a".repeat(40), sha).is_ok());
        assert!(validate_inputs("abcdef", sha).is_err());
        assert!(validate_inputs(&"a".repeat(41), sha).is_err());
        assert!(validate_inputs("HEAD", sha).is_err());
        assert!(validate_inputs("abcdef0", &sha.to_uppercase()).is_err());
        assert!(validate_inputs("abcdef0", &sha[1..]).is_err());
    }

    #[test]
    fn every_reason_is_registered_once() {
        let codes = [
            PlanReasonCode::UnpublishableMode,
            PlanReasonCode::UnpublishablePath,
            PlanReasonCode::IndexDisagrees,
        ];
        assert_eq!(PLAN_REASONS.len(), codes.len());
        for code in codes {
            assert_eq!(
                PLAN_REASONS.iter().filter(|i| i.code == code).count(),
                1,
                "{code:?}"
            );
            assert_ne!(code.name(), "unknown");
        }
    }

    fn change(status: char, old: u32, new: u32, path: &[u8]) -> RawChange {
        RawChange {
            status,
            old_mode: old,
            new_mode: new,
            path: path.to_vec(),
        }
    }

    fn codes(reasons: &[PlanReason]) -> Vec<PlanReasonCode> {
        reasons.iter().map(|r| r.code).collect()
    }

    #[test]
    fn only_regular_and_executable_files_at_unambiguous_paths_are_publishable() {
        use PlanReasonCode::*;
        let default = Policy::embedded_default().unwrap();
        let publishability_default = |c: &RawChange| publishability(c, &default);
        assert!(publishability_default(&change('A', 0, MODE_REGULAR, b"a")).is_empty());
        assert!(publishability_default(&change('D', MODE_REGULAR, 0, b"a b/\xc3\xa9")).is_empty());
        assert!(
            publishability_default(&change('M', MODE_REGULAR, MODE_REGULAR, b"4:x")).is_empty()
        );
        // Executable files are published with their mode (the guard's policy decided whether a
        // new executable or a mode change is allowed at all).
        for (status, old, new) in [
            ('A', 0, MODE_EXECUTABLE),
            ('D', MODE_EXECUTABLE, 0),
            ('M', MODE_EXECUTABLE, MODE_EXECUTABLE),
            ('M', MODE_REGULAR, MODE_EXECUTABLE),
            ('M', MODE_EXECUTABLE, MODE_REGULAR),
        ] {
            assert!(
                publishability_default(&change(status, old, new, b"bin/x")).is_empty(),
                "{status} {old:o} {new:o}"
            );
        }
        // Names real projects spell with zero-width joiners are published exactly.
        let persian = "docs/\u{645}\u{6cc}\u{200c}\u{62e}\u{648}\u{627}\u{647}\u{645}.md";
        assert!(
            publishability_default(&change('A', 0, MODE_REGULAR, persian.as_bytes())).is_empty()
        );
        let cases: &[(RawChange, &[PlanReasonCode])] = &[
            (change('A', 0, 0o120000, b"a"), &[UnpublishableMode]),
            (change('D', 0o120000, 0, b"a"), &[UnpublishableMode]),
            (change('M', 0o120000, 0o120000, b"a"), &[UnpublishableMode]),
            (change('T', 0o100644, 0o120000, b"a"), &[UnpublishableMode]),
            (change('T', 0o100755, 0o160000, b"a"), &[UnpublishableMode]),
            (change('A', 0, 0o160000, b"a"), &[UnpublishableMode]),
            (change('M', 0o100644, 0o040000, b"a"), &[UnpublishableMode]),
            (change('A', 0, 0o100664, b"a"), &[UnpublishableMode]),
            // An addition has no old mode, a deletion no new one.
            (
                change('A', MODE_REGULAR, MODE_REGULAR, b"a"),
                &[UnpublishableMode],
            ),
            (
                change('D', MODE_REGULAR, MODE_REGULAR, b"a"),
                &[UnpublishableMode],
            ),
            (change('A', 0, MODE_REGULAR, b"0:a"), &[UnpublishablePath]),
            (change('A', 0, MODE_REGULAR, b"3:a"), &[UnpublishablePath]),
            (change('A', 0, MODE_REGULAR, b"/a"), &[UnpublishablePath]),
            (change('A', 0, MODE_REGULAR, b""), &[UnpublishablePath]),
            (change('A', 0, MODE_REGULAR, b"a\xff"), &[UnpublishablePath]),
            (change('A', 0, MODE_REGULAR, b"a\\b"), &[UnpublishablePath]),
            (
                change('A', 0, MODE_REGULAR, b"a\x1bb"),
                &[UnpublishablePath],
            ),
            (
                change('A', 0, 0o120000, b"0:a"),
                &[UnpublishableMode, UnpublishablePath],
            ),
        ];
        for (c, expected) in cases {
            assert_eq!(codes(&publishability_default(c)), *expected, "{c:?}");
        }
    }

    #[test]
    fn symbolic_links_are_publishable_only_under_the_opt_in() {
        use PlanReasonCode::*;
        let allowing = Policy::from_yaml("version: 1\nsymlinks:\n  allow: true\n").unwrap();
        let default = Policy::embedded_default().unwrap();
        for c in [
            change('A', 0, 0o120000, b"a"),
            change('D', 0o120000, 0, b"a"),
            change('M', 0o120000, 0o120000, b"a"),
        ] {
            assert!(publishability(&c, &allowing).is_empty(), "{c:?}");
            assert_eq!(
                codes(&publishability(&c, &default)),
                [UnpublishableMode],
                "{c:?}"
            );
        }
        // A change of type and a gitlink are never published.
        for c in [
            change('T', 0o100644, 0o120000, b"a"),
            change('T', 0o120000, 0o100644, b"a"),
            change('A', 0, 0o160000, b"a"),
        ] {
            assert_eq!(
                codes(&publishability(&c, &allowing)),
                [UnpublishableMode],
                "{c:?}"
            );
        }
        assert_eq!(
            choose_method(&[planned("l", None, Some(PublishableMode::Symlink))]).0,
            PublishMethod::GitDatabase
        );
    }

    fn planned(
        path: &str,
        old: Option<PublishableMode>,
        new: Option<PublishableMode>,
    ) -> TreeEntryDoc {
        TreeEntryDoc {
            path: path.to_owned(),
            old_mode: old,
            new_mode: new,
            blob: new.map(|_| "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391".to_owned()),
        }
    }

    #[test]
    fn the_method_follows_the_modes_the_commit_writes() {
        use PublishableMode::{Executable, Regular};
        let regular = [
            planned("a", None, Some(Regular)),
            planned("b", Some(Regular), Some(Regular)),
            planned("c", Some(Regular), None),
            // A deletion writes nothing: its old mode does not decide.
            planned("d", Some(Executable), None),
            // An executable made regular is written as 100644.
            planned("e", Some(Executable), Some(Regular)),
        ];
        let (method, reason) = choose_method(&regular);
        assert_eq!(method, PublishMethod::CreateCommitOnBranch);
        assert!(reason.contains("100644"), "{reason}");
        assert_eq!(choose_method(&[]).0, PublishMethod::CreateCommitOnBranch);

        let cases: &[(&[TreeEntryDoc], &str)] = &[
            (
                &[planned("bin/x", Some(Executable), Some(Executable))],
                "bin/x is written with mode 100755;",
            ),
            (
                &[planned("bin/new", None, Some(Executable))],
                "bin/new is written with mode 100755;",
            ),
            (
                &[
                    planned("a", None, Some(Regular)),
                    planned("b", Some(Regular), Some(Executable)),
                    planned("c", None, Some(Executable)),
                ],
                "b is written with mode 100755 (and 1 more);",
            ),
        ];
        for (entries, reason_start) in cases {
            let (method, reason) = choose_method(entries);
            assert_eq!(method, PublishMethod::GitDatabase, "{entries:?}");
            assert!(reason.starts_with(reason_start), "{reason}");
        }
    }

    fn entry(status: ChangeKind, old: Option<&str>, new: Option<&str>) -> FileEntry {
        FileEntry {
            status,
            old_path: old.map(Into::into),
            new_path: new.map(Into::into),
            old_mode: old.map(|_| MODE_REGULAR),
            new_mode: new.map(|_| MODE_REGULAR),
            line: 1,
        }
    }

    #[test]
    fn verdict_and_index_must_be_the_same_set() {
        let files = [
            entry(ChangeKind::Modified, Some("m"), Some("m")),
            entry(ChangeKind::Renamed, Some("r1"), Some("r2")),
            entry(ChangeKind::Deleted, Some("d"), None),
            entry(ChangeKind::Added, None, Some("a")),
            entry(ChangeKind::Copied, Some("m"), Some("c")),
        ];
        let changes = vec![
            change('A', 0, MODE_REGULAR, b"a"),
            change('A', 0, MODE_REGULAR, b"c"),
            change('D', MODE_REGULAR, 0, b"d"),
            change('M', MODE_REGULAR, MODE_REGULAR, b"m"),
            change('D', MODE_REGULAR, 0, b"r1"),
            change('A', 0, MODE_REGULAR, b"r2"),
        ];
        assert!(compare_with_index(&files, &changes).is_empty());

        let mut extra = changes.clone();
        extra.push(change('A', 0, MODE_REGULAR, b"x"));
        let r = compare_with_index(&files, &extra);
        assert_eq!(codes(&r), [PlanReasonCode::IndexDisagrees]);
        assert!(r[0].message.contains("index only [A 000000->100644 x]"));

        let missing = &changes[1..];
        let r = compare_with_index(&files, missing);
        assert!(r[0].message.contains("verdict only [A 000000->100644 a]"));

        let mut doubled = changes.clone();
        doubled.push(changes[0].clone());
        assert!(!compare_with_index(&files, &doubled).is_empty());

        let mut other_mode = changes.clone();
        other_mode[0].new_mode = 0o100755;
        assert!(!compare_with_index(&files, &other_mode).is_empty());

        let mut no_mode = files.to_vec();
        no_mode[0].new_mode = None;
        assert!(!compare_with_index(&no_mode, &changes).is_empty());
    }
}
