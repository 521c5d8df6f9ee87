//! The event model: every event a workflow can name, what code and which workflow files it runs
//! when the publication or a person's action on the draft fires it, and what `github.*` holds in
//! its run.
//!
//! Each row follows the event's `GITHUB_SHA` / `GITHUB_REF` table in GitHub's "Events that
//! trigger workflows" (docs.github.com/en/actions/reference/workflows-and-actions/
//! events-that-trigger-workflows, one section per event, `#<event>` anchors):
//!
//! | event | `GITHUB_SHA` / `GITHUB_REF` (the docs) | here |
//! |---|---|---|
//! | `push` | last commit pushed / the pushed ref | [`Class::Branch`] |
//! | `create` | last commit on the created branch / the created branch | [`Class::Branch`] |
//! | `deployment`, `deployment_status` | the commit to deploy / the ref to deploy | [`Class::Branch`] |
//! | `pull_request` (every activity type) | last merge commit / `refs/pull/N/merge` | [`Class::Merge`] |
//! | `pull_request_review`, `pull_request_review_comment` | as `pull_request` | [`Class::Merge`] |
//! | `merge_group` | the merge group's commit / its ref (`gh-readonly-queue/...`) | [`Class::Merge`] |
//! | `pull_request_target` | last commit on the base branch / the base branch | [`Class::Privileged`] |
//! | `workflow_run`, `issue_comment`, `check_run`, `check_suite`, `status` | last commit on the default branch / the default branch | [`Class::Privileged`] |
//! | `branch_protection_rule`, `delete`, `discussion`, `discussion_comment`, `fork`, `gollum`, `image_version`, `issues`, `label`, `milestone`, `page_build`, `public`, `registry_package`, `schedule`, `watch` | last commit on the default branch / the default branch (no branch data reaches them) | [`Class::Safe`] |
//! | `release` | the release's tag | [`Class::Safe`]: neither the publication nor the draft fires it |
//! | `repository_dispatch`, `workflow_dispatch` | last commit on the default branch / the default branch (or the ref dispatched) | [`Class::Dispatch`]: a sender fills the payload or inputs; a job checking out a ref read from them is judged with the senders of the repository |
//! | `workflow_call` | the caller's | [`Class::Safe`]: judged as the calling job |
//!
//! A name not in this table is [`Class::Unknown`]: fail closed, judged like a branch event.
//! `pull_request` and its review events give a branch of the same repository the repository's
//! secrets and its default token ("Using secrets in GitHub Actions"; only forks are refused them);
//! the `pull_request` activity types all count (`labeled`, `ready_for_review`, `closed`, ... are a
//! person's action on the draft, before anyone decided about the code).

use contract::readiness::ReadinessEvent as Event;

use super::Target;
use super::expr::Val;

/// What code an event's run executes, and from which workflow files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// The branch's own commit, with the workflows of the branch (the base commit's: the diff
    /// cannot touch `.github/**`).
    Branch,
    /// The merge of the branch into the default branch, with the default branch head's
    /// workflows.
    Merge,
    /// The default branch's code and workflows, with the event's data about the branch: a job is
    /// exposed only when it checks the branch out or downloads its run's artifacts.
    Privileged,
    /// A dispatch through the API or by a person (`repository_dispatch`, `workflow_dispatch`):
    /// the default branch's code, with a payload or inputs that a sender fills; a job is exposed
    /// when it checks out or fetches a ref read from them.
    Dispatch,
    /// The default branch's code, or an event neither the publication nor the draft fires.
    Safe,
    /// Not in the model.
    Unknown,
}

/// The class of an event.
pub fn class(event: Event) -> Class {
    match event {
        Event::Push | Event::Create | Event::Deployment | Event::DeploymentStatus => Class::Branch,
        Event::PullRequest
        | Event::PullRequestReview
        | Event::PullRequestReviewComment
        | Event::MergeGroup => Class::Merge,
        Event::PullRequestTarget
        | Event::WorkflowRun
        | Event::IssueComment
        | Event::CheckRun
        | Event::CheckSuite
        | Event::Status => Class::Privileged,
        Event::BranchProtectionRule
        | Event::Delete
        | Event::Discussion
        | Event::DiscussionComment
        | Event::Fork
        | Event::Gollum
        | Event::ImageVersion
        | Event::Issues
        | Event::Label
        | Event::Milestone
        | Event::PageBuild
        | Event::Public
        | Event::RegistryPackage
        | Event::Release
        | Event::Schedule
        | Event::Watch
        | Event::WorkflowCall => Class::Safe,
        Event::RepositoryDispatch | Event::WorkflowDispatch => Class::Dispatch,
    }
}

/// The ref a `branches`/`branches-ignore` filter of this event is matched against, or `None`
/// when GitHub does not filter the event by branch (the filter is ignored: the event fires).
pub fn filtered_branch(event: Event, target: &Target) -> Option<&str> {
    match event {
        // The pushed branch; a workflow_run's `branches` name the head branch of the run that
        // triggered it (the published branch's own push or pull request run).
        Event::Push | Event::WorkflowRun => Some(&target.branch),
        // The pull request's (or the merge group's) base branch.
        Event::PullRequest | Event::PullRequestTarget | Event::MergeGroup => {
            Some(&target.base_branch)
        }
        _ => None,
    }
}

/// The `github` context of a run of `event` for the target; `None` of an unknown event (every
/// property unknown).
pub fn github_context(event: Option<Event>, target: &Target) -> Val {
    let t = target;
    let owner = t.repository.split('/').next().unwrap_or_default();
    let repo = || {
        Val::obj(
            [
                ("full_name", Val::str(&t.repository)),
                ("fork", Val::Bool(false)),
            ],
            true,
        )
    };
    let branch_ref = Val::Str(format!("refs/heads/{}", t.branch));
    // Who fires these runs: the publishing App, or a person acting on the draft; never a
    // dependency bot (they act on their own pull requests only), and never `github-actions[bot]`
    // (events made with a run's GITHUB_TOKEN start no workflow run).
    let actor = || {
        Val::Except(
            ["dependabot[bot]", "renovate[bot]", "github-actions[bot]"]
                .iter()
                .map(|s| (*s).to_owned())
                .collect(),
        )
    };
    let default_ref = Val::Str(format!("refs/heads/{}", t.base_branch));
    // The pull request: a draft from this repository into the default branch. A person can mark
    // it ready for review, so `draft` is not known.
    let pull_request = || {
        Val::obj(
            [
                ("draft", Val::AnyBool),
                ("number", Val::AnyNum),
                // A merged pull request was decided: a run on `closed` with `merged` true comes
                // after that decision.
                ("merged", Val::Bool(false)),
                ("user", Val::obj([("login", actor())], true)),
                (
                    "head",
                    Val::obj(
                        [
                            ("ref", Val::str(&t.branch)),
                            ("repo", repo()),
                            ("sha", Val::UNKNOWN),
                        ],
                        true,
                    ),
                ),
                (
                    "base",
                    Val::obj([("ref", Val::str(&t.base_branch)), ("repo", repo())], true),
                ),
            ],
            true,
        )
    };
    let Some(event) = event else {
        return Val::obj([], true);
    };
    // (ref, ref_name, head_ref, base_ref, the event payload's known fields)
    let (reference, ref_name, head_ref, base_ref, payload): (Val, Val, Val, Val, Vec<(&str, Val)>) =
        match event {
            Event::Push => (
                branch_ref,
                Val::str(&t.branch),
                Val::str(""),
                Val::str(""),
                vec![
                    ("ref", Val::Str(format!("refs/heads/{}", t.branch))),
                    ("deleted", Val::Bool(false)),
                ],
            ),
            Event::Create => (
                branch_ref,
                Val::str(&t.branch),
                Val::str(""),
                Val::str(""),
                // The create payload's `ref` is the short name.
                vec![
                    ("ref", Val::str(&t.branch)),
                    ("ref_type", Val::str("branch")),
                ],
            ),
            Event::PullRequest | Event::PullRequestReviewComment => (
                Val::shape("refs/pull/", true, "/merge"),
                Val::shape("", true, "/merge"),
                Val::str(&t.branch),
                Val::str(&t.base_branch),
                vec![("pull_request", pull_request())],
            ),
            // An approving review is a person's decision: the runs before one see a review
            // whose state is `commented`, `changes_requested` or `dismissed`.
            Event::PullRequestReview => (
                Val::shape("refs/pull/", true, "/merge"),
                Val::shape("", true, "/merge"),
                Val::str(&t.branch),
                Val::str(&t.base_branch),
                vec![
                    ("pull_request", pull_request()),
                    (
                        "review",
                        Val::obj([("state", Val::Except(vec!["approved".into()]))], true),
                    ),
                ],
            ),
            Event::PullRequestTarget => (
                default_ref,
                Val::str(&t.base_branch),
                Val::str(&t.branch),
                Val::str(&t.base_branch),
                vec![("pull_request", pull_request())],
            ),
            Event::MergeGroup => (
                Val::shape(
                    &format!("refs/heads/gh-readonly-queue/{}/", t.base_branch),
                    false,
                    "",
                ),
                Val::shape(&format!("gh-readonly-queue/{}/", t.base_branch), false, ""),
                Val::str(""),
                Val::str(""),
                vec![(
                    "merge_group",
                    Val::obj(
                        [(
                            "base_ref",
                            Val::Str(format!("refs/heads/{}", t.base_branch)),
                        )],
                        true,
                    ),
                )],
            ),
            Event::WorkflowRun => (
                default_ref,
                Val::str(&t.base_branch),
                Val::str(""),
                Val::str(""),
                vec![(
                    "workflow_run",
                    Val::obj(
                        [
                            ("head_branch", Val::str(&t.branch)),
                            ("head_repository", repo()),
                        ],
                        true,
                    ),
                )],
            ),
            Event::IssueComment => (
                default_ref,
                Val::str(&t.base_branch),
                Val::str(""),
                Val::str(""),
                vec![(
                    "issue",
                    // A comment on the draft: `issue.pull_request` is present.
                    Val::obj([("pull_request", Val::obj([], true))], true),
                )],
            ),
            Event::CheckRun | Event::CheckSuite | Event::Status => (
                default_ref,
                Val::str(&t.base_branch),
                Val::str(""),
                Val::str(""),
                Vec::new(),
            ),
            // A deployment's ref is whatever its creator chose; the rest runs the default branch.
            Event::Deployment | Event::DeploymentStatus => (
                Val::UNKNOWN,
                Val::UNKNOWN,
                Val::str(""),
                Val::str(""),
                Vec::new(),
            ),
            _ => (
                default_ref,
                Val::str(&t.base_branch),
                Val::str(""),
                Val::str(""),
                Vec::new(),
            ),
        };
    let mut payload = payload;
    payload.push(("sender", Val::obj([("login", actor())], true)));
    payload.push(("repository", {
        let mut r = repo();
        if let Val::Obj { fields, .. } = &mut r {
            fields.insert("default_branch".into(), Val::str(&t.base_branch));
        }
        r
    }));
    if matches!(event, Event::PullRequest | Event::PullRequestTarget) {
        payload.push(("number", Val::AnyNum));
    }
    // The payload's top-level keys, from the event's webhook ("Webhook events and payloads"): a
    // key the event does not send is `null` (`github.event.pull_request` on `push`), one it sends
    // is unknown unless modelled above. The events not listed keep an open payload.
    let event_payload = match payload_keys(event) {
        Some(keys) => {
            let mut fields: Vec<(&str, Val)> = COMMON_KEYS
                .iter()
                .chain(keys)
                .map(|k| (*k, Val::UNKNOWN))
                .collect();
            for (key, value) in payload {
                fields.retain(|(k, _)| *k != key);
                fields.push((key, value));
            }
            Val::obj(fields, false)
        }
        None => Val::obj(payload, true),
    };
    Val::obj(
        [
            ("event_name", Val::str(event.name())),
            (
                "ref_type",
                if matches!(event, Event::Deployment | Event::DeploymentStatus) {
                    Val::UNKNOWN
                } else {
                    Val::str("branch")
                },
            ),
            ("actor", actor()),
            ("triggering_actor", actor()),
            ("ref", reference),
            ("ref_name", ref_name),
            ("head_ref", head_ref),
            ("base_ref", base_ref),
            ("repository", Val::str(&t.repository)),
            ("repository_owner", Val::str(owner)),
            ("event", event_payload),
        ],
        true,
    )
}

/// The keys every webhook payload may carry ("Webhook events and payloads").
const COMMON_KEYS: &[&str] = &[
    "action",
    "enterprise",
    "installation",
    "organization",
    "repository",
    "sender",
];

/// The top-level keys of an event's webhook payload, per its section of "Webhook events and
/// payloads" (docs.github.com/en/webhooks/webhook-events-and-payloads), for the events a
/// condition commonly reads; `None` keeps the payload open.
fn payload_keys(event: Event) -> Option<&'static [&'static str]> {
    Some(match event {
        Event::Push => &[
            "after",
            "base_ref",
            "before",
            "commits",
            "compare",
            "created",
            "deleted",
            "forced",
            "head_commit",
            "pusher",
            "ref",
        ],
        Event::Create => &[
            "description",
            "master_branch",
            "pusher_type",
            "ref",
            "ref_type",
        ],
        Event::PullRequest | Event::PullRequestTarget => &[
            "after",
            "assignee",
            "before",
            "changes",
            "label",
            "milestone",
            "number",
            "pull_request",
            "reason",
            "requested_reviewer",
            "requested_team",
        ],
        Event::PullRequestReview => &["changes", "pull_request", "review"],
        Event::PullRequestReviewComment => &["changes", "comment", "pull_request"],
        Event::MergeGroup => &["merge_group", "reason"],
        Event::WorkflowRun => &["workflow", "workflow_run"],
        Event::IssueComment => &["changes", "comment", "issue"],
        Event::CheckRun => &["check_run", "requested_action"],
        Event::CheckSuite => &["check_suite"],
        Event::Status => &[
            "avatar_url",
            "branches",
            "commit",
            "context",
            "created_at",
            "description",
            "id",
            "name",
            "sha",
            "state",
            "target_url",
            "updated_at",
        ],
        _ => return None,
    })
}
