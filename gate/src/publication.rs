//! Performing a publication plan on GitHub, and proving it: the branch, the commit, the proof
//! that GitHub stored exactly the tree git computed, the draft pull request and the check run.
//! [`publish`] takes a [`github::Client`] (API URL and token), so it runs the same against GitHub
//! and against the stand-in.
//!
//! 1. **The plan is checked** against what the caller says is being published (repository,
//!    branch, base, base branch, the gate's pass decision for the same diff) and against itself
//!    (never `createCommitOnBranch` for a file written with another mode than `100644`; entries
//!    and contents in agreement). Anything else is `plan-mismatch`, before any request.
//! 2. **The replay record** ([`crate::replay`]): the App's own check run on the base, named
//!    after the dispatch's nonce, is looked up; another run's refuses (`replay-refused`), this
//!    run's is finished, none is written now, before the branch, so that no crash leaves a
//!    publication unrecorded. The App's id (`app_id`) names whose check runs count.
//! 3. **The branch** `GET git/ref/heads/<branch>`: absent, it is created; at the base commit, it
//!    is reused; at a commit that is already this publication (only parent the base, the plan's
//!    tree, the plan's headline and trailers: an earlier attempt of this run), nothing is
//!    committed again; anywhere else, `branch-elsewhere` and nothing is touched.
//! 4. **The commit**, by the plan's method:
//!    - `create-commit-on-branch`: the branch is created at the base if absent, then the
//!      mutation runs with `expectedHeadOid` = the base (the compare-and-swap). When its success
//!      is not confirmed (an error, a lost answer), the branch head is read again: moved to this
//!      publication is a confirmation; moved elsewhere is `stale-head`; unchanged or unreadable is
//!      `publication-uncertain`. Neither is ever reported as a success.
//!    - `git-database`: every new blob (its id must be git's), a tree on the base tree with
//!      explicit modes and `sha: null` for deletions (its id must be the plan's tree, or nothing
//!      is committed), a commit whose only parent is the base (no author, committer or
//!      signature: GitHub signs it as the App), then the ref: created at the commit (which fails
//!      if the ref exists: still a compare-and-swap), or, for a branch at the base, moved
//!      there without force (a fast-forward from the base only). An unconfirmed ref write is
//!      judged by reading the branch again, as above.
//!
//!    A refused ref creation or move ends as `ref-refused`, naming the cause and the fix.
//! 5. **The proof**: `GET git/commits/<commit>`; its tree id must be the plan's `tree` and its
//!    only parent the base, and the branch must point at it. Any difference is a failed
//!    publication (`tree-mismatch`, `commit-mismatch`, `stale-head`), the branch left for
//!    inspection, no pull request opened.
//! 6. **The draft pull request**: an open one from the branch into the base branch is reused;
//!    otherwise one is created with `draft: true`. GitHub's `422` for a repository without draft
//!    pull requests ends as `draft-unsupported` with the fix; the gate never opens a pull
//!    request that is ready for review.
//! 7. **Protected files**: when the gate's verdict names protected paths (the policy lets them
//!    through for a human's review), the pull request is labelled (by default
//!    [`PROTECTED_LABEL`]) and, when the caller names any, review is requested from its
//!    protected files' reviewers. A refused request fails the publication before the check
//!    run: the draft stays, labelled, without the required check (a rerun repeats the request).
//! 8. **The check run** on the new head, its body from [`report::check_run::build`] (its title
//!    says how many protected files need review).
//!
//! Once the pull request is open, the record names it (a re-run refuses once it is closed).
//! Exit 0 only after all eight. The requests and responses are cited where the `github` crate
//! defines them; every commit made here carries no `author`, `committer` or `signature`, which is
//! what makes GitHub sign it as the App ("Signature verification for bots",
//! <https://docs.github.com/en/authentication/managing-commit-signature-verification/about-commit-signature-verification#signature-verification-for-bots>).

use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use contract::cli::Exit;
use contract::decision::DecisionDoc;
use contract::ids::CommitId;
use contract::verdict::{VerdictDoc, VerdictWord, ViolationDoc};
use github::git::TreeEntry;
use github::pulls::{NewPullRequest, PullRequest};
use github::{Client, Error, Repository};

use crate::names::Reviewers;
use crate::output::publish_plan_v2::{PublishMethod, PublishPlanDoc, SCHEMA as PLAN_SCHEMA};
use crate::output::publish_result_v1::{
    CheckRunResultDoc, FailureDoc, PublishResultDoc, PullRequestResultDoc, SCHEMA, SignatureDoc,
    TreeProofDoc,
};
use crate::publish::choose_method;

/// The label a draft pull request gets by default when the verdict names protected paths.
pub const PROTECTED_LABEL: &str = crate::names::DEFAULT_PROTECTED_LABEL;

/// Why a publication is not a success. Stable ids in [`FAILURES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum FailureCode {
    PlanMismatch,
    BranchElsewhere,
    RefRefused,
    StaleHead,
    PublicationUncertain,
    BlobMismatch,
    TreeMismatch,
    CommitMismatch,
    DraftUnsupported,
    PullRequestConflict,
    ReplayRefused,
    RevisionRefused,
    HeadMoved,
    GitHubError,
}

/// Static metadata of one failure.
#[derive(Debug, Clone, Copy)]
pub struct FailureInfo {
    pub code: FailureCode,
    pub name: &'static str,
    /// [`Exit::Fail`]: GitHub's state shows the publication did not happen as planned;
    /// [`Exit::Error`]: it could not be done or established.
    pub exit: Exit,
    pub description: &'static str,
}

/// Every failure, in documentation order.
pub const FAILURES: &[FailureCode] = &[
    FailureCode::PlanMismatch,
    FailureCode::BranchElsewhere,
    FailureCode::RefRefused,
    FailureCode::StaleHead,
    FailureCode::PublicationUncertain,
    FailureCode::BlobMismatch,
    FailureCode::TreeMismatch,
    FailureCode::CommitMismatch,
    FailureCode::DraftUnsupported,
    FailureCode::PullRequestConflict,
    FailureCode::ReplayRefused,
    FailureCode::RevisionRefused,
    FailureCode::HeadMoved,
    FailureCode::GitHubError,
];

impl FailureCode {
    pub fn info(self) -> FailureInfo {
        let (name, exit, description) = match self {
            FailureCode::PlanMismatch => (
                "plan-mismatch",
                Exit::Error,
                "The plan is not for this repository, branch, base or passing decision, or \
                 contradicts itself; nothing was sent.",
            ),
            FailureCode::BranchElsewhere => (
                "branch-elsewhere",
                Exit::Fail,
                "The branch exists at a commit that is neither the base nor this publication; \
                 nothing was changed.",
            ),
            FailureCode::RefRefused => (
                "ref-refused",
                Exit::Fail,
                "GitHub refused to create or move the branch (for example an App without the \
                 workflows permission and a base whose workflow files differ from the default \
                 branch's).",
            ),
            FailureCode::StaleHead => (
                "stale-head",
                Exit::Fail,
                "The branch moved while publishing: the compare-and-swap did not hold.",
            ),
            FailureCode::PublicationUncertain => (
                "publication-uncertain",
                Exit::Error,
                "A write was not confirmed and the branch, read again, is unchanged or \
                 unreadable: whether it took effect is unknown.",
            ),
            FailureCode::BlobMismatch => (
                "blob-mismatch",
                Exit::Fail,
                "GitHub gave a new file another object id than git; nothing was committed.",
            ),
            FailureCode::TreeMismatch => (
                "tree-mismatch",
                Exit::Fail,
                "The tree GitHub made or stored is not the tree git computed; the branch is left \
                 for inspection.",
            ),
            FailureCode::CommitMismatch => (
                "commit-mismatch",
                Exit::Fail,
                "The commit GitHub stored does not have the base as its only parent.",
            ),
            FailureCode::DraftUnsupported => (
                "draft-unsupported",
                Exit::Fail,
                "The repository has no draft pull requests (HTTP 422); the gate opens nothing \
                 else.",
            ),
            FailureCode::PullRequestConflict => (
                "pull-request-conflict",
                Exit::Fail,
                "An open pull request from the branch targets another base branch.",
            ),
            FailureCode::ReplayRefused => (
                "replay-refused",
                Exit::Fail,
                "The dispatch's replay record (the App's check run on the base, named after the \
                 nonce) is another run's, or names a pull request that is closed, or is not one \
                 the gate wrote, or a re-run attempt would start a publication instead of \
                 finishing its own; nothing was written.",
            ),
            FailureCode::RevisionRefused => (
                "revision-refused",
                Exit::Fail,
                "A revision names a pull request that is not this task's open draft made by the \
                 publishing App (closed, merged, ready for review, from another branch or into \
                 another base, opened by someone else), or carries no dispatch nonce; nothing \
                 but the replay record was written.",
            ),
            FailureCode::HeadMoved => (
                "head-moved",
                Exit::Fail,
                "A revision's signed head is no longer the head of the draft's branch (someone \
                 pushed, or another round was published); no commit was made and the branch was \
                 not moved: revise again on the current head.",
            ),
            FailureCode::GitHubError => (
                "github-error",
                Exit::Error,
                "A request failed (transport, permissions, rate limits, an unexpected answer).",
            ),
        };
        FailureInfo {
            code: self,
            name,
            exit,
            description,
        }
    }

    pub fn name(self) -> &'static str {
        self.info().name
    }
}

/// A failure with its message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub code: FailureCode,
    pub message: String,
}

fn failure(code: FailureCode, message: impl Into<String>) -> Failure {
    Failure {
        code,
        message: message.into(),
    }
}

/// What is being published, as the caller (the workflow) knows it independently of the plan.
#[derive(Debug, Clone, Copy)]
pub struct PublicationRequest<'a> {
    pub repository: &'a Repository,
    /// The unqualified branch (`agent-team/<task_id>`).
    pub branch: &'a str,
    /// The base commit, 40 hex digits.
    pub base: &'a str,
    /// The branch the pull request targets.
    pub base_branch: &'a str,
    /// The gate's decision; only a pass is published.
    pub decision: &'a DecisionDoc,
    /// The verdict the plan was computed from (`gate publish-plan --verdict-out`): its files must
    /// be the plan's; its protected paths label the pull request and title the check run.
    pub verdict: &'a VerdictDoc,
    /// The check run's name and details URL.
    pub check_name: &'a str,
    pub details_url: Option<&'a str>,
    /// The label and the reviewers requested when protected files changed (checked by
    /// [`crate::names`]; no reviewers: only the label).
    pub protected_label: &'a str,
    pub protected_reviewers: &'a Reviewers,
    /// `GITHUB_RUN_ATTEMPT`: a re-run (> 1) may only finish the publication this run started.
    pub run_attempt: u32,
    /// The publishing App's id: the token must be its, and only its check runs are replay
    /// records.
    pub app_id: u64,
    /// A revision: the number of the task's open draft pull request, whose head is `base` (the
    /// signed head the diff applies to). `None`: a first round.
    pub revision: Option<u64>,
}

/// The result document and its exit code.
#[derive(Debug, Clone)]
pub struct PublicationReport {
    pub doc: PublishResultDoc,
    pub exit_code: u8,
}

/// Where the branch was before this publication wrote anything.
#[derive(Debug, Clone, PartialEq, Eq)]
enum BranchState {
    Absent,
    AtBase,
    /// At this publication's commit, made by an earlier attempt.
    Published(String),
}

struct Publisher<'a> {
    client: &'a Client,
    plan: &'a PublishPlanDoc,
    req: &'a PublicationRequest<'a>,
    doc: PublishResultDoc,
    log: &'a mut dyn FnMut(&str),
    /// The replay record, once found or written (a plan without a nonce has none).
    record: Option<crate::replay::Record>,
    /// The protected paths the pull request changes ([`protected_paths`]).
    protected: Vec<ViolationDoc>,
}

/// The protected paths the pull request changes: the verdict's own findings (this round's diff,
/// with their lines), then, for a revision, every other protected path the whole branch changes
/// (the plan's `branch`, counted from the merge base). The label, the reviewers and the check run
/// follow this list, so a round that touches no protected file still reports an earlier round's.
pub fn protected_paths(plan: &PublishPlanDoc, verdict: &VerdictDoc) -> Vec<ViolationDoc> {
    let mut protected = verdict.protected.clone();
    if let Some(branch) = &plan.branch {
        for finding in &branch.protected {
            let listed = protected.iter().any(|p| {
                finding.path.is_some() && (p.path == finding.path || p.old_path == finding.path)
            });
            if !listed {
                protected.push(finding.clone());
            }
        }
    }
    protected
}

/// Publish `plan` (see the module documentation). Progress goes to `log`, line by line.
pub fn publish(
    client: &Client,
    plan: &PublishPlanDoc,
    req: &PublicationRequest<'_>,
    log: &mut dyn FnMut(&str),
) -> PublicationReport {
    let doc = PublishResultDoc {
        schema: SCHEMA.to_owned(),
        outcome: "error".to_owned(),
        exit_code: Exit::Error.code(),
        repository: req.repository.full_name(),
        branch: req.branch.to_owned(),
        base_commit: req.base.to_owned(),
        method: plan.method,
        branch_state: None,
        commit: None,
        protected_files: 0,
        tree: TreeProofDoc {
            expected: plan.tree.clone(),
            published: None,
            proven: false,
        },
        signature: None,
        pull_request: None,
        check_run: None,
        failure: None,
    };
    let protected = protected_paths(plan, req.verdict);
    let mut doc = doc;
    doc.protected_files = u64::try_from(protected.len()).unwrap_or(u64::MAX);
    let mut publisher = Publisher {
        client,
        plan,
        req,
        doc,
        log,
        record: None,
        protected,
    };
    match publisher.run() {
        Ok(()) => {
            publisher.doc.outcome = "published".to_owned();
            publisher.doc.exit_code = Exit::Pass.code();
            (publisher.log)(&format!(
                "published: {} at {}, tree {} proven",
                req.branch,
                publisher.doc.commit.as_deref().unwrap_or("?"),
                plan.tree
            ));
        }
        Err(f) => {
            let info = f.code.info();
            (publisher.log)(&format!("error[{}]: {}", info.name, f.message));
            publisher.doc.outcome = match info.exit {
                Exit::Fail => "failed",
                Exit::Pass | Exit::Error => "error",
            }
            .to_owned();
            publisher.doc.exit_code = info.exit.code();
            publisher.doc.failure = Some(FailureDoc {
                code: info.name.to_owned(),
                message: f.message,
            });
        }
    }
    let exit_code = publisher.doc.exit_code;
    PublicationReport {
        doc: publisher.doc,
        exit_code,
    }
}

fn is_object_id(value: &str) -> bool {
    value.len() == 40
        && value
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn github_error(what: &str, e: &Error) -> Failure {
    failure(FailureCode::GitHubError, format!("{what}: {e}"))
}

fn github_error_text(message: String) -> Failure {
    failure(FailureCode::GitHubError, message)
}

/// An error after which a write may or may not have taken effect.
fn unconfirmed(e: &Error) -> bool {
    match e {
        Error::Transport { .. } | Error::Deadline { .. } | Error::GraphQl { .. } => true,
        Error::Status { status, .. } => *status >= 500,
        _ => false,
    }
}

/// GitHub's own message, when the error carries one.
fn github_message(e: &Error) -> String {
    match e {
        Error::Status {
            message: Some(m), ..
        } => m.clone(),
        other => other.to_string(),
    }
}

/// The trailer that records the signed dispatch's nonce on the commit.
pub const NONCE_TRAILER: &str = "Dispatch-Nonce: ";
/// The trailer that binds the commit to its run.
pub const RUN_TRAILER: &str = "Run-Id: ";
/// The line of the check run's `output.text` naming the tree the publish job proved.
pub const PROVEN_TREE_LINE: &str = "Proven-Tree: ";

/// The value of the trailer `key` (`"Run-Id: "`) in a commit message: the last line that starts
/// with it, as git reads trailers; `None` when there is none.
pub fn commit_trailer<'m>(message: &'m str, key: &str) -> Option<&'m str> {
    message.lines().rev().find_map(|l| l.strip_prefix(key))
}

/// The `Key: value` trailer lines of the plan's commit body.
fn trailers(plan: &PublishPlanDoc) -> Vec<&str> {
    plan.input
        .message
        .body
        .lines()
        .filter(|l| {
            ["Diff-Sha256: ", "Task-Id: ", RUN_TRAILER, NONCE_TRAILER]
                .iter()
                .any(|k| l.starts_with(k))
        })
        .collect()
}

/// The marker a revision's body opens with: `<!-- agent-team-apply round N dispatch NONCE -->`.
pub const ROUND_MARKER: &str = "<!-- agent-team-apply round ";

/// The round a revision by dispatch `nonce` is, from the pull request's current `body`: the
/// marker's round when it names this dispatch (a re-run), else one more; a body without a
/// marker is the first round's, so this is round 2.
pub fn next_round(body: &str, nonce: &str) -> u64 {
    let marked = body.lines().next().and_then(|line| {
        let rest = line.strip_prefix(ROUND_MARKER)?.strip_suffix(" -->")?;
        let (round, dispatch) = rest.split_once(" dispatch ")?;
        Some((round.parse::<u64>().ok()?, dispatch.to_owned()))
    });
    match marked {
        Some((round, dispatch)) if dispatch == nonce => round,
        Some((round, _)) => round.saturating_add(1),
        None => 2,
    }
}

/// A revision's pull request body: the marker, what this round is, then the round's own body
/// (its verdict, files and the agent's words, as a first round's).
pub fn revision_body(round: u64, nonce: &str, head: &str, plan_body: &str) -> String {
    format!(
        "{ROUND_MARKER}{round} dispatch {nonce} -->\n\
         **Round {round}** of this draft: a revision applied to the head `{head}`. What changed in \
         this round is below; every round is one App-signed commit on the branch (dispatch \
         `{nonce}`).\n\n{plan_body}"
    )
}

impl Publisher<'_> {
    fn say(&mut self, line: &str) {
        (self.log)(line);
    }

    fn repo(&self) -> &Repository {
        self.req.repository
    }

    fn short_ref(&self) -> String {
        format!("heads/{}", self.req.branch)
    }

    fn run(&mut self) -> Result<(), Failure> {
        self.check_plan()?;
        self.check_replay()?;
        let revising = match self.req.revision {
            Some(number) => Some(self.check_revision(number)?),
            None => None,
        };
        let state = match (self.branch_state(), &revising) {
            (Err(f), Some(_)) if f.code == FailureCode::BranchElsewhere => {
                return Err(self.head_moved("is at another commit"));
            }
            (state, _) => state?,
        };
        if let Some(pull) = &revising {
            match &state {
                BranchState::Absent => return Err(self.head_moved("was deleted")),
                BranchState::AtBase if pull.head.sha != self.req.base => {
                    return Err(self.head_moved(&format!(
                        "is the signed head, but pull request #{} shows head {}",
                        pull.number, pull.head.sha
                    )));
                }
                BranchState::AtBase | BranchState::Published(_) => {}
            }
        }
        self.doc.branch_state = Some(
            match &state {
                BranchState::Absent => "created",
                BranchState::AtBase if revising.is_some() => "revised-at-head",
                BranchState::AtBase => "reused-at-base",
                BranchState::Published(_) => "already-published",
            }
            .to_owned(),
        );
        let commit = match state {
            BranchState::Published(commit) => {
                self.say(&format!(
                    "the branch already holds this publication ({commit}): nothing to commit"
                ));
                commit
            }
            BranchState::Absent | BranchState::AtBase => {
                let written = match self.plan.method {
                    PublishMethod::CreateCommitOnBranch => self.commit_graphql(&state),
                    PublishMethod::GitDatabase => self.commit_git_database(&state),
                };
                // For a revision, a compare-and-swap that did not hold is the head moving.
                match written {
                    Err(f) if revising.is_some() && f.code == FailureCode::StaleHead => {
                        return Err(failure(
                            FailureCode::HeadMoved,
                            format!(
                                "{} No commit of this revision is on the branch: revise again \
                                 on the draft's current head",
                                f.message
                            ),
                        ));
                    }
                    other => other?,
                }
            }
        };
        self.doc.commit = Some(commit.clone());
        self.prove(&commit)?;
        let number = match &revising {
            Some(pull) => self.revise_pull_request(pull)?,
            None => self.pull_request()?,
        };
        self.note_pull_request(number)?;
        self.label(number)?;
        self.request_reviewers(number)?;
        self.check_run(&commit)
    }

    /// The plan is for this publication, and consistent with itself.
    fn check_plan(&self) -> Result<(), Failure> {
        let plan = self.plan;
        let input = &plan.input;
        let mismatch = |what: String| failure(FailureCode::PlanMismatch, what);
        if plan.schema != PLAN_SCHEMA {
            return Err(mismatch(format!(
                "the plan's schema is {:?}, not {PLAN_SCHEMA:?}",
                plan.schema
            )));
        }
        let full_name = self.repo().full_name();
        if !input
            .branch
            .repository_name_with_owner
            .as_deref()
            .is_some_and(|r| r.eq_ignore_ascii_case(&full_name))
        {
            return Err(mismatch(format!(
                "the plan is for repository {:?}, not {full_name}",
                input.branch.repository_name_with_owner
            )));
        }
        if input.branch.branch_name != self.req.branch || plan.pull_request.head != self.req.branch
        {
            return Err(mismatch(format!(
                "the plan is for branch {:?}, not {:?}",
                input.branch.branch_name, self.req.branch
            )));
        }
        if !is_object_id(self.req.base) || input.expected_head_oid != self.req.base {
            return Err(mismatch(format!(
                "the plan is on base {:?}, not {:?}",
                input.expected_head_oid, self.req.base
            )));
        }
        if plan.pull_request.base != self.req.base_branch || !plan.pull_request.draft {
            return Err(mismatch(format!(
                "the plan's pull request is into {:?} (draft: {}), not a draft into {:?}",
                plan.pull_request.base, plan.pull_request.draft, self.req.base_branch
            )));
        }
        let decision = self.req.decision;
        let decided = decision.diff_sha256.as_ref().map(|d| d.as_str());
        if !decision.passed() || decided != Some(plan.diff_sha256.as_str()) {
            return Err(mismatch(format!(
                "the gate decision is {:?} for diff {}, not a pass for the plan's diff {}",
                decision.gate,
                decided.unwrap_or("(none)"),
                plan.diff_sha256
            )));
        }
        let verdict = self.req.verdict;
        if verdict.verdict != VerdictWord::Accept
            || verdict.diff_sha256.as_str() != plan.diff_sha256
            || verdict.files != plan.files
        {
            return Err(mismatch(format!(
                "the verdict ({}, diff {}) is not the accepting verdict the plan was computed from",
                verdict.verdict, verdict.diff_sha256
            )));
        }
        if !is_object_id(&plan.tree) || !is_object_id(&plan.base_tree) {
            return Err(mismatch(
                "the plan's tree ids are not 40 hex digits".to_owned(),
            ));
        }
        // A revision's pull request shows the whole branch: its plan counts the branch's
        // protected paths (publish-plan --revise), a first round's has nothing to count.
        match (self.req.revision, &plan.branch) {
            (Some(_), Some(branch)) if is_object_id(&branch.merge_base) => {}
            (Some(number), _) => {
                return Err(mismatch(format!(
                    "this revision of pull request #{number} has a plan without the whole \
                     branch's protected paths (a `branch` with a merge base): make it with \
                     `gate publish-plan --revise {number}`"
                )));
            }
            (None, Some(_)) => {
                return Err(mismatch(
                    "a first round's plan lists a branch's protected paths: it was made with \
                     --revise for a revision"
                        .to_owned(),
                ));
            }
            (None, None) => {}
        }
        // The Git database reproduces any planned tree; createCommitOnBranch only one whose
        // written files are all 100644.
        let (needed, _) = choose_method(&plan.entries);
        if plan.method == PublishMethod::CreateCommitOnBranch && needed != plan.method {
            return Err(mismatch(format!(
                "the plan says {} but writes a file with another mode than 100644, which the \
                 mutation would write as 100644",
                plan.method.name()
            )));
        }
        // Entries and contents name the same paths, each once.
        let mut written: BTreeMap<&str, bool> = BTreeMap::new();
        for entry in &plan.entries {
            let consistent = match (&entry.new_mode, &entry.blob) {
                (Some(_), Some(blob)) => is_object_id(blob),
                (None, None) => entry.old_mode.is_some(),
                _ => false,
            };
            if !consistent
                || written
                    .insert(&entry.path, entry.new_mode.is_some())
                    .is_some()
            {
                return Err(mismatch(format!(
                    "the plan's entry for {:?} is inconsistent or repeated",
                    entry.path
                )));
            }
        }
        let changes = &input.file_changes;
        let mut listed: BTreeMap<&str, bool> = BTreeMap::new();
        for (path, writes) in changes
            .additions
            .iter()
            .map(|a| (a.path.as_str(), true))
            .chain(changes.deletions.iter().map(|d| (d.path.as_str(), false)))
        {
            if listed.insert(path, writes).is_some() {
                return Err(mismatch(format!("the plan lists {path:?} twice")));
            }
        }
        if written != listed {
            return Err(mismatch(
                "the plan's entries and its file changes name different paths".to_owned(),
            ));
        }
        Ok(())
    }

    /// A signed dispatch can be sent again until it expires; its replay record makes every
    /// publication of it visible, and this refuses all but the first run's (see
    /// [`crate::replay`]). A fresh publication is recorded here, before the branch is touched.
    fn check_replay(&mut self) -> Result<(), Failure> {
        let body = &self.plan.input.message.body;
        let (Some(nonce), Some(run_id)) = (
            commit_trailer(body, NONCE_TRAILER),
            commit_trailer(body, RUN_TRAILER),
        ) else {
            if self.req.run_attempt > 1 {
                return Err(failure(
                    FailureCode::ReplayRefused,
                    format!(
                        "run attempt {} publishes a plan without a Dispatch-Nonce and Run-Id: \
                         a re-run cannot be told apart from a replay",
                        self.req.run_attempt
                    ),
                ));
            }
            return Ok(());
        };
        let dispatch = crate::replay::Dispatch {
            repo: self.req.repository,
            base: self.req.base,
            nonce,
            app_id: self.req.app_id,
            run_id,
            attempt: self.req.run_attempt,
        };
        let found = crate::replay::find(self.client, &dispatch)
            .map_err(|e| github_error("looking up this dispatch's replay record", &e))?;
        match found {
            crate::replay::Verdict::Fresh => {
                let record = crate::replay::write(self.client, &dispatch, self.req.branch)
                    .map_err(|e| {
                        github_error_text(format!(
                            "recording this dispatch before publishing failed ({e}); nothing \
                             else was written. Fix: run the job again"
                        ))
                    })?;
                self.say(&format!(
                    "replay record: check run {} on the base {} (Dispatch-Nonce {nonce})",
                    record.check_run_id, self.req.base
                ));
                self.record = Some(record);
                Ok(())
            }
            crate::replay::Verdict::Finishing(record) => {
                self.say(&format!(
                    "run attempt {}: finishing the publication of replay record check run {}",
                    self.req.run_attempt, record.check_run_id
                ));
                self.record = Some(record);
                Ok(())
            }
            crate::replay::Verdict::Refused(why) => Err(failure(FailureCode::ReplayRefused, why)),
        }
    }

    /// A revision's pull request, read before anything but the replay record is written: the
    /// task's open draft (`head.ref` this branch of this repository, into the base branch), not
    /// merged, opened by the publishing App's bot. The App's login is `<slug>[bot]`, its slug
    /// read from the App's own replay record of this dispatch (a check run only this App can
    /// write, looked up by its id), so that no name given by the caller decides it.
    fn check_revision(&mut self, number: u64) -> Result<PullRequest, Failure> {
        let refused = |why: String| failure(FailureCode::RevisionRefused, why);
        let Some(nonce) = commit_trailer(&self.plan.input.message.body, NONCE_TRAILER) else {
            return Err(refused(format!(
                "a revision of pull request #{number} must come from a signed dispatch (the plan \
                 carries no Dispatch-Nonce); nothing was written"
            )));
        };
        let runs = self
            .client
            .list_app_check_runs(
                self.repo(),
                self.req.base,
                &crate::replay::record_name(nonce),
                self.req.app_id,
            )
            .map_err(|e| github_error("reading this dispatch's replay record", &e))?;
        let slug = runs
            .check_runs
            .iter()
            .filter_map(|run| run.app.as_ref())
            .find(|app| app.id == Some(self.req.app_id))
            .and_then(|app| app.slug.clone())
            .ok_or_else(|| {
                refused(format!(
                    "the App {}'s replay record of this dispatch names no App slug: the App's \
                     login, which must have opened pull request #{number}, is unknown",
                    self.req.app_id
                ))
            })?;
        let bot = format!("{slug}[bot]");
        let pull = self
            .client
            .get_pull(self.repo(), number)
            .map_err(|e| github_error(&format!("reading pull request #{number}"), &e))?
            .ok_or_else(|| refused(format!("pull request #{number} does not exist")))?;
        let full_name = self.repo().full_name();
        let author = pull.user.as_ref();
        let why = if pull.merged == Some(true) {
            Some(
                "was merged: a merged pull request is never revised; dispatch a new task"
                    .to_owned(),
            )
        } else if pull.state != "open" {
            Some(format!(
                "is {}: a closed pull request is never revised or reopened; dispatch a new task",
                pull.state
            ))
        } else if pull.head.name != self.req.branch
            || !pull
                .head
                .repo
                .as_ref()
                .is_some_and(|r| r.full_name.eq_ignore_ascii_case(&full_name))
        {
            Some(format!(
                "is from branch {:?}, not this task's {} of {full_name}: another task's pull \
                 request is never revised",
                pull.head.name, self.req.branch
            ))
        } else if pull.base.name != self.req.base_branch {
            Some(format!(
                "is into {:?}, not {:?}",
                pull.base.name, self.req.base_branch
            ))
        } else if !author.is_some_and(|u| u.kind == "Bot" && u.login == bot) {
            Some(format!(
                "was opened by {}, not by the publishing App ({bot}): only the App's own draft \
                 is revised",
                author.map_or("(unknown)", |u| u.login.as_str())
            ))
        } else if pull.draft != Some(true) {
            Some(
                "is no longer a draft (marked ready for review): only a draft is revised"
                    .to_owned(),
            )
        } else {
            None
        };
        if let Some(why) = why {
            return Err(refused(format!(
                "pull request #{number} {why}. Nothing but this dispatch's replay record was \
                 written"
            )));
        }
        self.say(&format!(
            "revision of draft pull request #{number} ({bot}, {}) at head {}",
            self.req.branch, pull.head.sha
        ));
        Ok(pull)
    }

    fn head_moved(&self, how: &str) -> Failure {
        failure(
            FailureCode::HeadMoved,
            format!(
                "the branch {} {how}, not the signed head {} this revision applies to: no commit \
                 was made and the branch was not moved. Fix: revise again on the draft's current \
                 head",
                self.req.branch, self.req.base
            ),
        )
    }

    /// For a revision, the branch is read again right before a write: still at the signed head,
    /// or nothing is written.
    fn recheck_head(&mut self) -> Result<(), Failure> {
        if self.req.revision.is_none() {
            return Ok(());
        }
        match self.read_head() {
            Ok(Some(head)) if head == self.req.base => Ok(()),
            Ok(Some(head)) => Err(self.head_moved(&format!("moved to {head}"))),
            Ok(None) => Err(self.head_moved("was deleted")),
            Err(e) => Err(github_error("cannot read the branch", &e)),
        }
    }

    /// A revision's pull request: the same number, its body replaced by this round's (the round
    /// counted from the body's marker; a re-run of the same dispatch keeps its round).
    fn revise_pull_request(&mut self, pull: &PullRequest) -> Result<u64, Failure> {
        let nonce = commit_trailer(&self.plan.input.message.body, NONCE_TRAILER).unwrap_or("");
        let round = next_round(pull.body.as_deref().unwrap_or(""), nonce);
        let body = revision_body(round, nonce, self.req.base, &self.plan.pull_request.body);
        let update = github::pulls::PullUpdate {
            title: None,
            body: Some(&body),
        };
        let updated = self
            .client
            .update_pull(self.repo(), pull.number, &update)
            .map_err(|e| {
                failure(
                    FailureCode::GitHubError,
                    format!(
                        "updating the body of pull request #{} for round {round} failed ({e}). \
                         Fix: run the job again (the proven branch is recognised)",
                        pull.number
                    ),
                )
            })?;
        self.say(&format!(
            "pull request #{}: body updated for round {round}",
            pull.number
        ));
        self.doc.pull_request = Some(PullRequestResultDoc {
            number: updated.number,
            html_url: updated.html_url,
            draft: updated.draft == Some(true),
            reused: true,
            labels: Vec::new(),
        });
        Ok(pull.number)
    }

    /// The record names the pull request (once), so that a re-run refuses once it is closed.
    fn note_pull_request(&mut self, number: u64) -> Result<(), Failure> {
        let Some(record) = self.record.clone() else {
            return Ok(());
        };
        if record.pull_request == Some(number) {
            return Ok(());
        }
        let body = &self.plan.input.message.body;
        let (Some(nonce), Some(run_id)) = (
            commit_trailer(body, NONCE_TRAILER),
            commit_trailer(body, RUN_TRAILER),
        ) else {
            return Ok(());
        };
        let dispatch = crate::replay::Dispatch {
            repo: self.req.repository,
            base: self.req.base,
            nonce,
            app_id: self.req.app_id,
            run_id,
            attempt: self.req.run_attempt,
        };
        let updated = crate::replay::note_pull_request(
            self.client,
            &dispatch,
            &record,
            self.req.branch,
            number,
        )
        .map_err(|e| {
            github_error_text(format!(
                "naming pull request #{number} in the replay record failed ({e}). Fix: run the \
                 job again (the branch and the pull request are reused)"
            ))
        })?;
        self.record = Some(updated);
        Ok(())
    }

    /// `GET git/ref/heads/<branch>`, the commit id or `None`.
    fn read_head(&self) -> Result<Option<String>, Error> {
        Ok(self
            .client
            .get_ref(self.repo(), &self.short_ref())?
            .map(|r| r.object.sha))
    }

    /// Whether `commit` is this publication: only parent the base, the plan's tree, the plan's
    /// headline and trailers (so an earlier attempt of the same run).
    fn is_this_publication(&self, commit: &str) -> Result<bool, Error> {
        let read = self.client.get_commit(self.repo(), commit)?;
        let lines: Vec<&str> = read.message.lines().collect();
        Ok(read.parents.len() == 1
            && read.parents[0].sha == self.req.base
            && read.tree.sha == self.plan.tree
            && lines.first() == Some(&self.plan.input.message.headline.as_str())
            && trailers(self.plan).iter().all(|t| lines.contains(t)))
    }

    fn branch_state(&mut self) -> Result<BranchState, Failure> {
        let head = self
            .read_head()
            .map_err(|e| github_error("cannot read the branch", &e))?;
        match head {
            None => Ok(BranchState::Absent),
            Some(head) if head == self.req.base => {
                self.say(&format!(
                    "the branch {} exists at the base {}: reused",
                    self.req.branch, self.req.base
                ));
                Ok(BranchState::AtBase)
            }
            Some(head) => {
                let ours = self
                    .is_this_publication(&head)
                    .map_err(|e| github_error("cannot read the branch's head commit", &e))?;
                if ours {
                    Ok(BranchState::Published(head))
                } else {
                    Err(failure(
                        FailureCode::BranchElsewhere,
                        format!(
                            "the branch {} already exists at {head}, which is neither the base {} \
                             nor this publication (only parent the base, tree {}, this run's \
                             trailers); nothing was changed. Fix: read what the branch holds; if \
                             it is left over from an earlier task with this id, delete it and run \
                             the job again, otherwise dispatch with another task id",
                            self.req.branch, self.req.base, self.plan.tree
                        ),
                    ))
                }
            }
        }
    }

    /// The branch head, read again after an unconfirmed write that should have left it at
    /// `wanted`: at `wanted` (or, with `publication`, at a commit that is this publication) is a
    /// confirmation; elsewhere or deleted is a stale head; unchanged (`before`) or unreadable is
    /// uncertain.
    fn judge_unconfirmed(
        &mut self,
        what: &str,
        error: &Error,
        before: Option<&str>,
        wanted: Option<&str>,
    ) -> Result<String, Failure> {
        self.say(&format!(
            "{what} was not confirmed ({error}); reading the branch again"
        ));
        let uncertain = |detail: String| {
            failure(
                FailureCode::PublicationUncertain,
                format!(
                    "{what} was not confirmed ({error}) and {detail}: whether it took effect is \
                     unknown; nothing is reported as published. Fix: run the job again: a branch \
                     at the base is reused, and a branch that already holds this publication is \
                     recognised and proven"
                ),
            )
        };
        let head = match self.read_head() {
            Ok(head) => head,
            Err(e) => return Err(uncertain(format!("the branch cannot be read ({e})"))),
        };
        let Some(head) = head else {
            return match before {
                None => Err(uncertain("the branch still does not exist".to_owned())),
                Some(_) => Err(failure(
                    FailureCode::StaleHead,
                    format!(
                        "{what} was not confirmed ({error}) and the branch {} has been deleted \
                         meanwhile: another writer is using it. Fix: find who writes agent-team/** \
                         besides the App (the ruleset should allow the App alone), then dispatch \
                         again",
                        self.req.branch
                    ),
                )),
            };
        };
        if Some(head.as_str()) == wanted {
            self.say(&format!("the branch is at {head}: confirmed"));
            return Ok(head);
        }
        if Some(head.as_str()) == before {
            return Err(uncertain(format!("the branch head is unchanged at {head}")));
        }
        match self.is_this_publication(&head) {
            Ok(true) => {
                self.say(&format!(
                    "the branch moved to {head}, which is this publication: confirmed"
                ));
                Ok(head)
            }
            Ok(false) => Err(failure(
                FailureCode::StaleHead,
                format!(
                    "{what} was not confirmed ({error}) and the branch {} moved to {head}, which \
                     is not this publication: the compare-and-swap did not hold, another writer \
                     is using the branch. The branch is left as it is. Fix: find who writes \
                     agent-team/** besides the App (the ruleset should allow the App alone), \
                     then dispatch again",
                    self.req.branch
                ),
            )),
            Err(e) => Err(uncertain(format!(
                "the branch moved to {head}, whose commit cannot be read ({e})"
            ))),
        }
    }

    /// `POST git/refs` at `sha`: fails if the ref exists.
    fn create_branch(&mut self, sha: &str) -> Result<(), Failure> {
        let full = format!("refs/heads/{}", self.req.branch);
        match self.client.create_ref(self.repo(), &full, sha) {
            Ok(_) => {
                self.say(&format!("created {full} at {sha}"));
                Ok(())
            }
            Err(e) if e.status() == Some(422) && github_message(&e).contains("already exists") => {
                // Someone created it between the read and now.
                match self.read_head() {
                    Ok(Some(head)) if head == sha => Ok(()),
                    Ok(head) => Err(failure(
                        FailureCode::StaleHead,
                        format!(
                            "the branch {} appeared meanwhile (at {}): another writer is using \
                             it; nothing of this publication was written to it. Fix: find who \
                             writes agent-team/** besides the App, then dispatch again",
                            self.req.branch,
                            head.as_deref().unwrap_or("?")
                        ),
                    )),
                    Err(read) => Err(github_error("cannot read the branch", &read)),
                }
            }
            Err(e) if matches!(e.status(), Some(403 | 422)) => {
                Err(self.ref_refused("create", sha, &e))
            }
            Err(e) if unconfirmed(&e) => self
                .judge_unconfirmed("creating the branch", &e, None, Some(sha))
                .map(|_| ()),
            Err(e) => Err(github_error("creating the branch", &e)),
        }
    }

    fn ref_refused(&self, verb: &str, sha: &str, e: &Error) -> Failure {
        let said = github_message(e);
        let workflows = said.contains("workflow");
        let cause = if workflows {
            "the App has no `workflows` permission, and the files under .github/workflows in \
             that commit differ from the default branch's: GitHub refuses such an App any ref \
             whose workflow files differ"
        } else {
            "GitHub's reason above; most often a ruleset or branch protection on agent-team/** \
             that the App may not bypass, or (GitHub's generic \"Reference update failed\") an \
             App without the `workflows` permission writing a ref whose workflow files differ \
             from the default branch's"
        };
        let fix = if workflows {
            "dispatch the task again on a base_sha at the default branch's current head (the \
             agent rebases its diff), so that the workflow files are the same; do not grant the \
             App the `workflows` permission, which would let it publish changes to the workflows \
             that guard it"
        } else {
            "let the App create and update agent-team/** branches (ADOPTING.md, step 5, \"Import the rulesets\"), or \
             dispatch on the default branch's current head, then run the job again"
        };
        failure(
            FailureCode::RefRefused,
            format!(
                "GitHub refused to {verb} the branch {} at {sha} ({e}). Cause: {cause}. Fix: {fix}",
                self.req.branch
            ),
        )
    }

    /// `createCommitOnBranch` onto the base (the branch created at the base first if absent).
    fn commit_graphql(&mut self, state: &BranchState) -> Result<String, Failure> {
        if *state == BranchState::Absent {
            self.create_branch(self.req.base)?;
        }
        self.recheck_head()?;
        match self.client.create_commit_on_branch(&self.plan.input) {
            Ok(created) => {
                self.say(&format!(
                    "createCommitOnBranch(expectedHeadOid {}): commit {}",
                    self.req.base, created.oid
                ));
                Ok(created.oid)
            }
            Err(e) => {
                let base = self.req.base;
                self.judge_unconfirmed("createCommitOnBranch", &e, Some(base), None)
            }
        }
    }

    /// Blobs, tree, commit, ref through the Git database API.
    fn commit_git_database(&mut self, state: &BranchState) -> Result<String, Failure> {
        let plan = self.plan;
        self.recheck_head()?;
        let contents: BTreeMap<&str, &str> = plan
            .input
            .file_changes
            .additions
            .iter()
            .map(|a| (a.path.as_str(), a.contents.as_str()))
            .collect();
        let mut entries = Vec::new();
        for entry in &plan.entries {
            let (mode, sha) = match (entry.new_mode, &entry.blob) {
                (Some(mode), Some(blob)) => {
                    let encoded = contents.get(entry.path.as_str()).copied().unwrap_or("");
                    let bytes = BASE64.decode(encoded).map_err(|e| {
                        failure(
                            FailureCode::PlanMismatch,
                            format!("the plan's contents of {:?}: {e}", entry.path),
                        )
                    })?;
                    let created = self
                        .client
                        .create_blob(self.repo(), &bytes)
                        .map_err(|e| github_error("creating a blob", &e))?;
                    if created.sha != *blob {
                        return Err(failure(
                            FailureCode::BlobMismatch,
                            format!(
                                "GitHub stored the contents of {:?} as {}, git's id is {blob}; \
                                 nothing was committed",
                                entry.path, created.sha
                            ),
                        ));
                    }
                    (mode.as_str(), Some(created.sha))
                }
                (None, _) => (entry.old_mode.map_or("100644", |m| m.as_str()), None),
                (Some(_), None) => {
                    return Err(failure(
                        FailureCode::PlanMismatch,
                        format!("the plan's entry for {:?} has no blob", entry.path),
                    ));
                }
            };
            entries.push(TreeEntry {
                path: entry.path.clone(),
                mode: mode.to_owned(),
                kind: "blob".to_owned(),
                sha,
            });
        }
        let tree = self
            .client
            .create_tree(self.repo(), Some(&plan.base_tree), &entries)
            .map_err(|e| github_error("creating the tree", &e))?;
        if tree.sha != plan.tree {
            self.doc.tree.published = Some(tree.sha.clone());
            return Err(failure(
                FailureCode::TreeMismatch,
                format!(
                    "GitHub made tree {} of the plan's entries on base tree {}, not the tree git \
                     computed, {}: nothing was committed and the branch was not touched",
                    tree.sha, plan.base_tree, plan.tree
                ),
            ));
        }
        let message = format!(
            "{}\n\n{}",
            plan.input.message.headline, plan.input.message.body
        );
        let parents = [self.req.base.to_owned()];
        let commit = self
            .client
            .create_commit(self.repo(), &message, &tree.sha, &parents)
            .map_err(|e| github_error("creating the commit", &e))?;
        if commit.tree.sha != plan.tree {
            self.doc.tree.published = Some(commit.tree.sha.clone());
            return Err(failure(
                FailureCode::TreeMismatch,
                format!(
                    "GitHub's commit {} has tree {}, not the tree git computed, {}: the branch \
                     was not touched",
                    commit.sha, commit.tree.sha, plan.tree
                ),
            ));
        }
        if commit.parents.len() != 1 || commit.parents[0].sha != self.req.base {
            return Err(failure(
                FailureCode::CommitMismatch,
                format!(
                    "GitHub's commit {} does not have the base {} as its only parent: the \
                     branch was not touched",
                    commit.sha, self.req.base
                ),
            ));
        }
        self.say(&format!(
            "Git database: {} blob(s), tree {}, commit {}",
            entries.iter().filter(|e| e.sha.is_some()).count(),
            tree.sha,
            commit.sha
        ));
        match state {
            BranchState::AtBase => {
                self.recheck_head()?;
                self.move_branch(&commit.sha)?;
            }
            _ => self.create_branch(&commit.sha)?,
        }
        Ok(commit.sha)
    }

    /// `PATCH git/refs/heads/<branch>` from the base to `commit`, without force.
    fn move_branch(&mut self, commit: &str) -> Result<(), Failure> {
        match self
            .client
            .update_ref(self.repo(), &self.short_ref(), commit, false)
        {
            Ok(_) => {
                self.say(&format!(
                    "moved refs/heads/{} from {} to {commit}",
                    self.req.branch, self.req.base
                ));
                Ok(())
            }
            Err(e) if matches!(e.status(), Some(403 | 422)) => {
                // Not a fast-forward (the branch moved), or refused.
                match self.read_head() {
                    Ok(Some(head)) if head == commit => Ok(()),
                    Ok(Some(head)) if head == self.req.base => {
                        Err(self.ref_refused("move", commit, &e))
                    }
                    Ok(head) => Err(failure(
                        FailureCode::StaleHead,
                        format!(
                            "the branch {} moved to {} while publishing (expected the base {}): \
                             another writer is using it. Fix: find who writes agent-team/** \
                             besides the App, then dispatch again",
                            self.req.branch,
                            head.as_deref().unwrap_or("(deleted)"),
                            self.req.base
                        ),
                    )),
                    Err(read) => Err(github_error("cannot read the branch", &read)),
                }
            }
            Err(e) if unconfirmed(&e) => {
                let base = self.req.base;
                self.judge_unconfirmed("moving the branch", &e, Some(base), Some(commit))
                    .map(|_| ())
            }
            Err(e) => Err(github_error("moving the branch", &e)),
        }
    }

    /// Read the commit back: its tree must be the plan's, its only parent the base, and the
    /// branch must point at it.
    fn prove(&mut self, commit: &str) -> Result<(), Failure> {
        let uncertain = |what: &str, e: &Error| {
            failure(
                FailureCode::PublicationUncertain,
                format!(
                    "{what} ({e}): the publication is not proven. The branch {} is left as it is. \
                     Fix: run the job again (a branch holding this publication is recognised and \
                     proven)",
                    self.req.branch
                ),
            )
        };
        let read = self
            .client
            .get_commit(self.repo(), commit)
            .map_err(|e| uncertain("the commit cannot be read back", &e))?;
        self.doc.tree.published = Some(read.tree.sha.clone());
        self.doc.signature = read.verification.as_ref().map(|v| SignatureDoc {
            verified: v.verified,
            reason: v.reason.clone(),
        });
        if read.sha != commit || read.tree.sha != self.plan.tree {
            return Err(failure(
                FailureCode::TreeMismatch,
                format!(
                    "GitHub's commit {commit} has tree {}, not the tree git computed, {}: what \
                     GitHub stored is not what was verified. The branch {} is left at {commit} \
                     for inspection (git diff-tree -r {} {}); no pull request was opened",
                    read.tree.sha, self.plan.tree, self.req.branch, self.plan.tree, read.tree.sha
                ),
            ));
        }
        if read.parents.len() != 1 || read.parents[0].sha != self.req.base {
            return Err(failure(
                FailureCode::CommitMismatch,
                format!(
                    "GitHub's commit {commit} does not have the base {} as its only parent. The \
                     branch {} is left as it is for inspection; no pull request was opened",
                    self.req.base, self.req.branch
                ),
            ));
        }
        match self.read_head() {
            Ok(Some(head)) if head == commit => {}
            Ok(head) => {
                return Err(failure(
                    FailureCode::StaleHead,
                    format!(
                        "the branch {} points at {}, not at the proven commit {commit}: another \
                         writer moved it. No pull request was opened",
                        self.req.branch,
                        head.as_deref().unwrap_or("(deleted)")
                    ),
                ));
            }
            Err(e) => return Err(uncertain("the branch cannot be read back", &e)),
        }
        self.doc.tree.proven = true;
        self.say(&format!(
            "proof: commit {commit} has tree {} (git's), only parent {}, and the branch points \
             at it",
            self.plan.tree, self.req.base
        ));
        Ok(())
    }

    /// The open pull requests from the branch of this repository.
    fn open_pulls(&self) -> Result<Vec<PullRequest>, Error> {
        let full_name = self.repo().full_name();
        Ok(self
            .client
            .list_open_pulls_from(self.repo(), self.req.branch)?
            .into_iter()
            .filter(|p| {
                p.head.name == self.req.branch
                    && p.head
                        .repo
                        .as_ref()
                        .is_some_and(|r| r.full_name.eq_ignore_ascii_case(&full_name))
            })
            .collect())
    }

    /// The number of the pull request reused, if one is.
    fn reuse(&mut self, pulls: &[PullRequest]) -> Result<Option<u64>, Failure> {
        if let Some(pull) = pulls.iter().find(|p| p.base.name == self.req.base_branch) {
            self.say(&format!(
                "an open pull request from {} exists: #{} reused",
                self.req.branch, pull.number
            ));
            self.doc.pull_request = Some(PullRequestResultDoc {
                number: pull.number,
                html_url: pull.html_url.clone(),
                draft: pull.draft == Some(true),
                reused: true,
                labels: Vec::new(),
            });
            return Ok(Some(pull.number));
        }
        if let Some(pull) = pulls.first() {
            return Err(failure(
                FailureCode::PullRequestConflict,
                format!(
                    "pull request #{} from {} is open into {}, not {}: close it, then run the job \
                     again",
                    pull.number, self.req.branch, pull.base.name, self.req.base_branch
                ),
            ));
        }
        Ok(None)
    }

    /// The draft pull request's number.
    fn pull_request(&mut self) -> Result<u64, Failure> {
        let pulls = self
            .open_pulls()
            .map_err(|e| github_error("listing the pull requests", &e))?;
        if let Some(number) = self.reuse(&pulls)? {
            return Ok(number);
        }
        let pr = &self.plan.pull_request;
        let new = NewPullRequest {
            title: pr.title.clone(),
            body: pr.body.clone(),
            head: self.req.branch.to_owned(),
            base: self.req.base_branch.to_owned(),
            draft: true,
        };
        match self.client.create_pull(self.repo(), &new) {
            Ok(pull) => {
                self.say(&format!(
                    "draft pull request #{}: {}",
                    pull.number, pull.html_url
                ));
                self.doc.pull_request = Some(PullRequestResultDoc {
                    number: pull.number,
                    html_url: pull.html_url,
                    draft: pull.draft == Some(true),
                    reused: false,
                    labels: Vec::new(),
                });
                Ok(pull.number)
            }
            Err(e)
                if e.status() == Some(422)
                    && github_message(&e).contains("Draft pull requests are not supported") =>
            {
                Err(failure(
                    FailureCode::DraftUnsupported,
                    format!(
                        "GitHub refused the draft pull request ({e}). Cause: the repository's \
                         plan has no draft pull requests (a private repository on GitHub Free, \
                         or a legacy per-repository plan). Fix: use a plan with draft pull \
                         requests (GitHub Pro, Team or Enterprise Cloud) or a public repository, \
                         then run this job again: the branch {} with its proven commit is \
                         reused. The gate never opens a pull request that is ready for review",
                        self.req.branch
                    ),
                ))
            }
            Err(e) if e.status() == Some(422) || unconfirmed(&e) => {
                // "A pull request already exists", or an answer lost: list again.
                let pulls = self
                    .open_pulls()
                    .map_err(|list| github_error("listing the pull requests", &list))?;
                if let Some(number) = self.reuse(&pulls)? {
                    return Ok(number);
                }
                Err(if unconfirmed(&e) {
                    failure(
                        FailureCode::PublicationUncertain,
                        format!(
                            "opening the draft pull request was not confirmed ({e}) and none is \
                             listed. Fix: run the job again (the proven branch is reused)"
                        ),
                    )
                } else {
                    github_error("opening the draft pull request", &e)
                })
            }
            Err(e) => Err(github_error("opening the draft pull request", &e)),
        }
    }

    /// Label the pull request when the verdict names protected paths.
    fn label(&mut self, number: u64) -> Result<(), Failure> {
        let protected = self.protected.len();
        if protected == 0 {
            return Ok(());
        }
        let label = self.req.protected_label;
        let labels = self
            .client
            .add_labels(self.repo(), number, &[label])
            .map_err(|e| {
                failure(
                    FailureCode::GitHubError,
                    format!(
                        "labelling pull request #{number} `{label}` for {protected} \
                         protected file(s) failed ({e}). Fix: run the job again (the proven branch \
                         and the pull request are reused)"
                    ),
                )
            })?;
        self.say(&format!(
            "{protected} protected file(s): pull request #{number} labelled `{label}`"
        ));
        if let Some(pull) = &mut self.doc.pull_request {
            pull.labels = labels.into_iter().map(|l| l.name).collect();
        }
        Ok(())
    }

    /// Ask the caller's protected-files reviewers for a review when the verdict names protected
    /// paths. A refusal fails the publication here, before the check run: the draft pull request
    /// stays (labelled, its body listing the files) without the required check, so it cannot be
    /// merged as is, and a rerun repeats the request.
    fn request_reviewers(&mut self, number: u64) -> Result<(), Failure> {
        let reviewers = self.req.protected_reviewers;
        if self.protected.is_empty() || reviewers.is_empty() {
            return Ok(());
        }
        let named: Vec<String> = reviewers
            .users
            .iter()
            .cloned()
            .chain(
                reviewers
                    .teams
                    .iter()
                    .map(|t| format!("{}/{t}", self.req.repository.owner())),
            )
            .collect();
        let request = github::pulls::ReviewRequest {
            reviewers: &reviewers.users,
            team_reviewers: &reviewers.teams,
        };
        self.client
            .request_reviewers(self.repo(), number, &request)
            .map_err(|e| {
                let cause = if e.status() == Some(422) {
                    " Cause: GitHub cannot request one of them (a user who is not a collaborator \
                     with read access, a team without access to the repository, or the pull \
                     request's author)."
                } else {
                    ""
                };
                failure(
                    FailureCode::GitHubError,
                    format!(
                        "requesting the protected files' review of pull request #{number} from {} \
                         failed ({e}).{cause} The draft pull request stays open, labelled `{}`, \
                         without its check run, so a ruleset that requires the check keeps it \
                         unmerged. Fix: correct protected-reviewers or the reviewers' access, then \
                         run the job again (the proven branch and the pull request are reused)",
                        named.join(", "),
                        self.req.protected_label
                    ),
                )
            })?;
        self.say(&format!(
            "pull request #{number}: review requested from {}",
            named.join(", ")
        ));
        Ok(())
    }

    fn check_run(&mut self, commit: &str) -> Result<(), Failure> {
        let head = CommitId::parse(commit)
            .map_err(|e| failure(FailureCode::GitHubError, format!("the commit id: {e}")))?;
        let mut body = report::check_run::build(
            self.req.decision,
            &head,
            self.req.check_name,
            self.req.details_url,
            &self.protected,
        )
        .map_err(|e| failure(FailureCode::PlanMismatch, format!("the check run: {e}")))?;
        // First in the text, so no cut can drop them: the tree proven above and the dispatch's
        // nonce, which the dispatcher compares with the head commit and its own.
        let mut record = format!("{PROVEN_TREE_LINE}{}\n", self.plan.tree);
        if let Some(nonce) = commit_trailer(&self.plan.input.message.body, NONCE_TRAILER) {
            record.push_str(&format!("{NONCE_TRAILER}{nonce}\n"));
        }
        body.output.text = format!("{record}\n{}", body.output.text);
        let value = serde_json::to_value(&body).map_err(|e| {
            failure(
                FailureCode::GitHubError,
                format!("the check run's body: {e}"),
            )
        })?;
        let run = self
            .client
            .create_check_run(self.repo(), &value)
            .map_err(|e| {
                failure(
                    FailureCode::GitHubError,
                    format!(
                        "posting the check run on {commit} failed ({e}). Fix: run the job again \
                         (the proven branch and the pull request are reused)"
                    ),
                )
            })?;
        self.say(&format!(
            "check run \"{}\" ({}) on {commit}",
            run.name,
            run.conclusion.as_deref().unwrap_or("?")
        ));
        self.doc.check_run = Some(CheckRunResultDoc {
            id: run.id,
            name: run.name,
            conclusion: run.conclusion,
            html_url: run.html_url,
        });
        Ok(())
    }
}
