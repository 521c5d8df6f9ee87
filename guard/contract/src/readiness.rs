//! The readiness document, `agent-team-apply/readiness/v1`: written by `guard readiness`, rendered
//! by `report readiness`. One definition for both sides; values are exact (workflow paths, job ids
//! and secret names as the files spell them), and each sink escapes them.
//!
//! ```json
//! {"schema": "agent-team-apply/readiness/v1", "result": "fail", "mode": "strict",
//!  "base_commit": "<40 hex>", "branch": "agent-team/T-1", "base_branch": "main",
//!  "repository": "octo/repo", "workflows": [".github/workflows/release.yml"],
//!  "findings": [{"rule": "unprotected-secret-job", "workflow": ".github/workflows/release.yml",
//!                "job": "release", "job_name": null, "events": ["push"],
//!                "secrets": ["NPM_TOKEN"], "message": "..."}]}
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
        UnprotectedSecretJob => "unprotected-secret-job": "A job would run on the published branch's push or pull request with secrets and no environment.",
        UnreadableWorkflow => "unreadable-workflow": "A workflow file of the base tree could not be read, so it cannot be shown safe.",
    }
}

crate::registry! {
    /// The events of the second execution.
    pub enum ReadinessEvent {
        Push => "push": "A push to the published branch.",
        PullRequest => "pull_request": "The draft pull request into the default branch.",
    }
}

crate::registry! {
    /// What the check concluded.
    pub enum ReadinessResult {
        Pass => "pass": "No finding.",
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
    pub base_commit: CommitId,
    pub branch: String,
    pub base_branch: String,
    pub repository: String,
    /// The workflow files read, in path order.
    pub workflows: Vec<String>,
    pub findings: Vec<FindingDoc>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FindingDoc {
    pub rule: ReadinessRule,
    pub workflow: String,
    /// The job id (`unprotected-secret-job` only).
    pub job: Option<String>,
    /// The job's literal `name:`, when it has one.
    pub job_name: Option<String>,
    pub events: Vec<ReadinessEvent>,
    /// Secret names read (upper case), `*` for the whole context, `inherit` for `secrets: inherit`.
    pub secrets: Vec<String>,
    pub message: String,
}

impl ReadinessResult {
    /// The result of `findings` findings under `mode`.
    pub fn of(findings: usize, mode: ReadinessMode) -> ReadinessResult {
        match (findings, mode) {
            (0, _) => ReadinessResult::Pass,
            (_, ReadinessMode::Strict) => ReadinessResult::Fail,
            (_, ReadinessMode::Report) => ReadinessResult::Reported,
        }
    }
}

impl ReadinessDoc {
    /// Parse a document, checking that its result follows from its mode and findings.
    pub fn parse(text: &str) -> Result<ReadinessDoc, String> {
        let doc: ReadinessDoc =
            serde_json::from_str(text).map_err(|e| format!("readiness document: {e}"))?;
        let expected = ReadinessResult::of(doc.findings.len(), doc.mode);
        if doc.result != expected {
            return Err(format!(
                "readiness document: result {} with mode {} and {} finding(s) is inconsistent",
                doc.result,
                doc.mode,
                doc.findings.len()
            ));
        }
        Ok(doc)
    }
}
