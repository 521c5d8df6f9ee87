//! The readiness document, `agent-team-apply/readiness/v1`: written by `guard readiness`, rendered
//! by `report readiness`. Values are exact (no display escaping); sinks escape.

use serde::{Deserialize, Serialize};

use super::{Event, Finding, Target};

pub const SCHEMA: &str = "agent-team-apply/readiness/v1";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadinessDoc {
    pub schema: String,
    /// `pass` (no finding), `fail` (findings, strict), `reported` (findings, allowed by the
    /// policy's `allow.unprotected-secret-jobs`).
    pub result: String,
    /// `strict` or `report`.
    pub mode: String,
    pub base_commit: String,
    pub branch: String,
    pub base_branch: String,
    pub repository: String,
    /// The workflow files read, in order.
    pub workflows: Vec<String>,
    pub findings: Vec<FindingDoc>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FindingDoc {
    pub rule: String,
    pub workflow: String,
    /// The job id (`unprotected-secret-job` only).
    pub job: Option<String>,
    /// The job's literal `name:`, when it has one.
    pub job_name: Option<String>,
    /// `push`, `pull_request`.
    pub events: Vec<String>,
    pub secrets: Vec<String>,
    pub message: String,
}

impl FindingDoc {
    pub fn from_finding(finding: &Finding) -> FindingDoc {
        let (job, job_name, events, secrets) = match finding {
            Finding::UnprotectedSecretJob {
                job,
                name,
                events,
                secrets,
                ..
            } => (
                Some(job.clone()),
                name.clone(),
                events.iter().map(|e| Event::name(*e).to_owned()).collect(),
                secrets.clone(),
            ),
            Finding::UnreadableWorkflow { .. } => (None, None, Vec::new(), Vec::new()),
        };
        FindingDoc {
            rule: finding.rule().id().to_owned(),
            workflow: finding.workflow().to_owned(),
            job,
            job_name,
            events,
            secrets,
            message: finding.message(),
        }
    }
}

impl ReadinessDoc {
    pub fn new(
        target: &Target,
        base_commit: &str,
        workflows: Vec<String>,
        findings: &[Finding],
        strict: bool,
    ) -> ReadinessDoc {
        let result = match (findings.is_empty(), strict) {
            (true, _) => "pass",
            (false, true) => "fail",
            (false, false) => "reported",
        };
        ReadinessDoc {
            schema: SCHEMA.to_owned(),
            result: result.to_owned(),
            mode: if strict { "strict" } else { "report" }.to_owned(),
            base_commit: base_commit.to_owned(),
            branch: target.branch.clone(),
            base_branch: target.base_branch.clone(),
            repository: target.repository.clone(),
            workflows,
            findings: findings.iter().map(FindingDoc::from_finding).collect(),
        }
    }

    /// Parse a document, checking its schema and result.
    pub fn parse(text: &str) -> Result<ReadinessDoc, String> {
        let doc: ReadinessDoc =
            serde_json::from_str(text).map_err(|e| format!("readiness document: {e}"))?;
        if doc.schema != SCHEMA {
            return Err(format!(
                "readiness document: schema {:?}, expected {SCHEMA:?}",
                doc.schema
            ));
        }
        let consistent = match doc.result.as_str() {
            "pass" => doc.findings.is_empty(),
            "fail" => !doc.findings.is_empty() && doc.mode == "strict",
            "reported" => !doc.findings.is_empty() && doc.mode == "report",
            _ => false,
        };
        if !consistent || !matches!(doc.mode.as_str(), "strict" | "report") {
            return Err(format!(
                "readiness document: result {:?} with mode {:?} and {} finding(s) is inconsistent",
                doc.result,
                doc.mode,
                doc.findings.len()
            ));
        }
        Ok(doc)
    }
}
