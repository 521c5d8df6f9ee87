//! The readiness document, `agent-team-apply/readiness/v1`: written by `guard readiness`, rendered
//! by `report readiness`. One definition for both sides; values are exact (workflow paths, job ids
//! and secret names as the files spell them), and each sink escapes them.
//!
//! ```json
//! {"schema": "agent-team-apply/readiness/v1", "result": "fail", "mode": "strict",
//!  "base_commit": "<40 hex>", "default_head": "<40 hex>", "branch": "agent-team/T-1",
//!  "base_branch": "main", "repository": "octo/repo",
//!  "workflows": [".github/workflows/release.yml"], "default_head_workflows": [...],
//!  "findings": [{"rule": "unprotected-secret-job", "workflow": ".github/workflows/release.yml",
//!                "commit": "<40 hex>", "job": "release", "job_name": null, "events": ["push"],
//!                "secrets": ["NPM_TOKEN"], "credentials": ["secret NPM_TOKEN"],
//!                "detail": "actions/checkout of the event's commit (the branch's code)",
//!                "accepted": null, "message": "...", "fix": "..."}],
//!  "cleared": [{"workflow": ".github/workflows/notify.yml", "commit": "<40 hex>",
//!               "job": "notify", "job_name": null, "events": ["push"],
//!               "credentials": ["secret SLACK_WEBHOOK"], "reason": "runs no code of the branch: ..."}]}
//! ```

use serde::{Deserialize, Serialize};

use crate::ids::CommitId;

crate::schema_marker!(
    /// `agent-team-apply/readiness/v1`.
    ReadinessSchema,
    "agent-team-apply/readiness/v1"
);

pub const SCHEMA: &str = ReadinessSchema::ID;

crate::registry! {
    /// The findings of the readiness check.
    pub enum ReadinessRule {
        UnprotectedSecretJob => "unprotected-secret-job": "A job would run the published branch's code (push, create, a pull request event, a merge group, a deployment) with credentials (secrets, a GITHUB_TOKEN with a write grant, OIDC, a runner not hosted by GitHub) and no protected environment.",
        PrivilegedCheckout => "privileged-checkout": "A job of a privileged trigger (pull_request_target, workflow_run, issue_comment, check_run, check_suite, status) or a dispatch (repository_dispatch, workflow_dispatch) holds credentials and runs the branch's code: a checkout or fetch of a ref the branch or the payload controls, an artifact of its runs, or a script whose provenance cannot be established.",
        UnmodelledEvent => "unmodelled-event": "A job holding credentials runs on an event this check does not know to be safe.",
        UnreadableWorkflow => "unreadable-workflow": "A workflow file could not be read, so it cannot be shown safe.",
    }
}

crate::registry! {
    /// The events a workflow can name, as GitHub spells them ("Events that trigger workflows").
    pub enum ReadinessEvent {
        Push => "push": "A push to the published branch.",
        Create => "create": "The branch's creation.",
        PullRequest => "pull_request": "Any activity on the draft pull request.",
        PullRequestReview => "pull_request_review": "A review of the draft.",
        PullRequestReviewComment => "pull_request_review_comment": "A review comment on the draft's diff.",
        MergeGroup => "merge_group": "The pull request in a merge queue.",
        Deployment => "deployment": "A deployment of a ref.",
        DeploymentStatus => "deployment_status": "A deployment's status.",
        PullRequestTarget => "pull_request_target": "Activity on the draft, in the base branch's context.",
        WorkflowRun => "workflow_run": "A run of another workflow (the branch's own) was requested or completed.",
        IssueComment => "issue_comment": "A comment on the draft.",
        CheckRun => "check_run": "A check run on the branch's commit (the gate posts one).",
        CheckSuite => "check_suite": "A check suite on the branch's commit.",
        Status => "status": "A commit status on the branch's commit.",
        BranchProtectionRule => "branch_protection_rule": "A branch protection rule changed.",
        Delete => "delete": "A branch or tag was deleted.",
        Discussion => "discussion": "A discussion.",
        DiscussionComment => "discussion_comment": "A discussion comment.",
        Fork => "fork": "The repository was forked.",
        Gollum => "gollum": "The wiki changed.",
        ImageVersion => "image_version": "A custom runner image version.",
        Issues => "issues": "An issue (not a pull request).",
        Label => "label": "A label was created, edited or deleted.",
        Milestone => "milestone": "A milestone.",
        PageBuild => "page_build": "A GitHub Pages build.",
        Public => "public": "The repository was made public.",
        RegistryPackage => "registry_package": "A package was published.",
        Release => "release": "A release.",
        RepositoryDispatch => "repository_dispatch": "A repository dispatch through the API.",
        Schedule => "schedule": "A schedule.",
        Watch => "watch": "The repository was starred.",
        WorkflowCall => "workflow_call": "A call from another workflow.",
        WorkflowDispatch => "workflow_dispatch": "A manual dispatch.",
    }
}

crate::registry! {
    /// What the check concluded.
    pub enum ReadinessResult {
        Pass => "pass": "No finding, or every finding accepted by the policy.",
        Fail => "fail": "Findings, and the policy is strict: the run stops.",
        Reported => "reported": "Findings, reported only: the policy allows them.",
    }
}

crate::registry! {
    /// How findings are treated (the policy's `allow.unprotected-secret-jobs`).
    pub enum ReadinessMode {
        Strict => "strict": "Findings fail the run (the default).",
        Report => "report": "Findings are reported only.",
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadinessDoc {
    pub schema: ReadinessSchema,
    pub result: ReadinessResult,
    pub mode: ReadinessMode,
    /// The commit the publication is based on: its workflows run for the branch's own commit
    /// (`push`, `create`, deployments).
    pub base_commit: CommitId,
    /// The default branch's head when the check ran: its workflows run for the pull request's
    /// merge commit and for the privileged triggers. Equal to `base_commit` when not given.
    pub default_head: CommitId,
    pub branch: String,
    pub base_branch: String,
    pub repository: String,
    /// The workflow files read at `base_commit`, in path order.
    pub workflows: Vec<String>,
    /// The workflow files read at `default_head`, in path order.
    pub default_head_workflows: Vec<String>,
    pub findings: Vec<FindingDoc>,
    /// The jobs that hold credentials and give no finding, each with the reason (it runs no code
    /// of the branch, its condition is false on the event, a protected environment gates it).
    pub cleared: Vec<ClearedDoc>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClearedDoc {
    pub workflow: String,
    /// The commit whose workflow file was read.
    pub commit: CommitId,
    pub job: String,
    /// The job's literal `name:`, when it has one.
    pub job_name: Option<String>,
    pub events: Vec<ReadinessEvent>,
    /// Every credential the job holds, one phrase each (as in [`FindingDoc::credentials`]).
    pub credentials: Vec<String>,
    /// Why the job gives no finding.
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FindingDoc {
    pub rule: ReadinessRule,
    pub workflow: String,
    /// The commit whose workflow file gave the finding.
    pub commit: CommitId,
    /// The job id (every rule but `unreadable-workflow`).
    pub job: Option<String>,
    /// The job's literal `name:`, when it has one.
    pub job_name: Option<String>,
    pub events: Vec<ReadinessEvent>,
    /// Secret names read (upper case), `*` for the whole context, `inherit` for `secrets:
    /// inherit`.
    pub secrets: Vec<String>,
    /// Every credential the job holds, one phrase each (`secret NPM_TOKEN`, `GITHUB_TOKEN
    /// pull-requests: write`, `id-token: write`, `runner self-hosted`, ...).
    pub credentials: Vec<String>,
    /// How the job runs the branch's code (or why that cannot be established), or the event not
    /// modelled.
    pub detail: Option<String>,
    /// The policy's reason, when `readiness.accept` accepts this job: the finding is shown and
    /// does not fail the run.
    pub accepted: Option<String>,
    pub message: String,
    /// The one-line fix.
    pub fix: String,
}

impl ReadinessResult {
    /// The result of `open` findings not accepted by the policy, under `mode`.
    pub fn of(open: usize, mode: ReadinessMode) -> ReadinessResult {
        match (open, mode) {
            (0, _) => ReadinessResult::Pass,
            (_, ReadinessMode::Strict) => ReadinessResult::Fail,
            (_, ReadinessMode::Report) => ReadinessResult::Reported,
        }
    }
}

impl ReadinessDoc {
    /// The findings the policy did not accept.
    pub fn open_findings(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.accepted.is_none())
            .count()
    }

    /// Parse a document, checking that its result follows from its mode and findings.
    pub fn parse(text: &str) -> Result<ReadinessDoc, String> {
        let doc: ReadinessDoc =
            serde_json::from_str(text).map_err(|e| format!("readiness document: {e}"))?;
        let expected = ReadinessResult::of(doc.open_findings(), doc.mode);
        if doc.result != expected {
            return Err(format!(
                "readiness document: result {} with mode {} and {} open finding(s) is inconsistent",
                doc.result,
                doc.mode,
                doc.open_findings()
            ));
        }
        Ok(doc)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    fn text(cleared: &str) -> String {
        format!(
            r#"{{"schema": "agent-team-apply/readiness/v1", "result": "pass", "mode": "strict",
             "base_commit": "0123456789abcdef0123456789abcdef01234567",
             "default_head": "0123456789abcdef0123456789abcdef01234567",
             "branch": "agent-team/T-1", "base_branch": "main", "repository": "octo/repo",
             "workflows": [".github/workflows/notify.yml"], "default_head_workflows": [],
             "findings": []{cleared}}}"#
        )
    }

    #[test]
    fn a_cleared_job_carries_its_reason_and_round_trips() {
        let doc = ReadinessDoc::parse(&text(
            r#", "cleared": [{"workflow": ".github/workflows/notify.yml",
                "commit": "0123456789abcdef0123456789abcdef01234567", "job": "notify",
                "job_name": null, "events": ["push"], "credentials": ["secret SLACK_WEBHOOK"],
                "reason": "runs no code of the branch"}]"#,
        ))
        .unwrap();
        assert_eq!(doc.cleared.len(), 1);
        assert_eq!(doc.cleared[0].reason, "runs no code of the branch");
        assert_eq!(doc.cleared[0].events, [ReadinessEvent::Push]);
        let again = ReadinessDoc::parse(&serde_json::to_string(&doc).unwrap()).unwrap();
        assert_eq!(again, doc);
    }

    #[test]
    fn a_document_without_cleared_or_with_an_unknown_key_in_it_is_refused() {
        let missing = ReadinessDoc::parse(&text("")).unwrap_err();
        assert!(missing.contains("missing field `cleared`"), "{missing}");
        let unknown = ReadinessDoc::parse(&text(
            r#", "cleared": [{"workflow": "w", "commit": "0123456789abcdef0123456789abcdef01234567",
                "job": "j", "job_name": null, "events": [], "credentials": [], "reason": "r",
                "why": "x"}]"#,
        ))
        .unwrap_err();
        assert!(unknown.contains("unknown field `why`"), "{unknown}");
    }
}
