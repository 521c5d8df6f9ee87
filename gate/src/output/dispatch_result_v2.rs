//! `agent-team-apply/dispatch-result/v2`: what `gate dispatch` did and what GitHub reported.
//! Every field but `log_tail` and `build_findings_non_authoritative` comes from GitHub's
//! authenticated API responses; `log_tail` is the end of a failed job's log and
//! `build_findings_non_authoritative` the findings of the build-test job's report, both of which
//! the diff's own code may have written, and both are marked non-authoritative. Strings are exact values; a display escapes them for its sink.
//!
//! Version 2 (after v1) adds what the dispatch was signed with (`nonce`, `expires_at`, the
//! `workflow_path` it is bound to) and, on a pass, the `publication` that was authenticated:
//! the App, the head commit's signature and the tree the publish job proved.

use serde::{Deserialize, Serialize};

pub const SCHEMA: &str = "agent-team-apply/dispatch-result/v2";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DispatchResultDoc {
    pub schema: String,
    pub repository: String,
    pub workflow: String,
    #[serde(rename = "ref")]
    pub git_ref: String,
    pub task_id: String,
    pub base_sha: String,
    pub diff_sha256: String,
    /// The signed dispatch's nonce (32 hex digits) and expiry (Unix seconds).
    pub nonce: String,
    pub expires_at: u64,
    /// The publishing App the outcome is authenticated against (`--app-id`).
    pub app_id: Option<u64>,
    /// `diff_b64` or `diff_ref`.
    pub transport: String,
    pub diff_ref: Option<String>,
    pub run: Option<RunDoc>,
    pub jobs: Vec<JobDoc>,
    /// `pass` (exit 0), `fail` (exit 1), `dispatched` (exit 0 without `--wait`) or `error`
    /// (exit 2).
    pub decision: String,
    pub exit_code: u8,
    pub failed: Option<FailedDoc>,
    pub pull_request: Option<PullRequestDoc>,
    pub check_run: Option<CheckRunDoc>,
    /// The authenticated publication, once every check on it passed.
    pub publication: Option<PublicationDoc>,
    /// The guard's verdict on the diff, when one was read: the preflight's (`gate dispatch
    /// --preflight`, computed here, before dispatching) or the guard job's own (its artifact),
    /// with every violation. Authoritative, unlike `log_tail`: the guard computes it before any
    /// of the diff's code runs.
    pub guard_verdict: Option<GuardVerdictDoc>,
    /// Why a failed run's guard verdict could not be read (no artifact, or one that is not the
    /// guard job's).
    pub guard_verdict_unavailable: Option<String>,
    /// Why the decision is not `pass`, or what went wrong.
    pub reasons: Vec<String>,
    pub log_tail: Option<LogTailDoc>,
    /// When build-test failed: the findings of its report artifact
    /// (`build-test-report-non-authoritative-*`). NOT authoritative, like `log_tail`: the report
    /// is assembled in the job where the diff's code ran, after it ran. The decision never reads
    /// it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_findings_non_authoritative: Option<BuildFindingsDoc>,
}

/// The build-test report's tree findings, read from its artifact.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BuildFindingsDoc {
    /// Always `false`.
    pub authoritative: bool,
    pub note: String,
    /// `available`, or `unavailable` with the `reason` (never a pass: nothing is inferred).
    pub status: String,
    pub reason: Option<String>,
    /// The artifact it was read from (its name, as listed).
    pub artifact: Option<String>,
    /// At most [`BUILD_FINDINGS_MAX`], after-apply's first.
    pub findings: Vec<BuildFindingDoc>,
    /// Findings the report lists (or itself left out) beyond `findings`.
    pub left_out: u64,
}

/// Findings of the build-test report shown at most.
pub const BUILD_FINDINGS_MAX: usize = 50;

/// The note every [`BuildFindingsDoc`] carries.
pub const BUILD_FINDINGS_NOTE: &str = "non-authoritative: read from the build-test job's report artifact, written after the diff's code ran there; the decision does not read it";

impl BuildFindingsDoc {
    pub fn unavailable(artifact: Option<String>, reason: String) -> BuildFindingsDoc {
        BuildFindingsDoc {
            authoritative: false,
            note: BUILD_FINDINGS_NOTE.to_owned(),
            status: "unavailable".to_owned(),
            reason: Some(reason),
            artifact,
            findings: Vec::new(),
            left_out: 0,
        }
    }

    /// The findings of `report`'s two tree checks, bounded.
    pub fn of(artifact: String, report: &report::build_test::BuildTestReport) -> BuildFindingsDoc {
        let mut findings = Vec::new();
        let mut total = 0u64;
        for tree in [&report.tree_after_apply, &report.tree_after_build] {
            total += tree.findings_total();
            for f in &tree.findings {
                if findings.len() < BUILD_FINDINGS_MAX {
                    findings.push(BuildFindingDoc {
                        check: tree.check.to_string(),
                        rule: f.rule.to_string(),
                        path: f.path.clone(),
                        message: f.message.clone(),
                    });
                }
            }
        }
        BuildFindingsDoc {
            authoritative: false,
            note: BUILD_FINDINGS_NOTE.to_owned(),
            status: "available".to_owned(),
            reason: None,
            artifact: Some(artifact),
            left_out: total.saturating_sub(findings.len() as u64),
            findings,
        }
    }
}

/// One finding of a tree check: which check (`after-apply`, `after-build`), the rule
/// (`tree-mismatch`, `build-wrote`), the path (exact bytes) and the message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BuildFindingDoc {
    pub check: String,
    pub rule: String,
    pub path: contract::repo_path::RepoPath,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunDoc {
    pub id: u64,
    pub api_url: String,
    pub html_url: String,
    /// `return_run_details` or `run-name-and-watermark`.
    pub found_by: String,
    pub status: Option<String>,
    pub conclusion: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobDoc {
    pub name: String,
    pub status: String,
    pub conclusion: Option<String>,
    pub html_url: Option<String>,
    pub failed_step: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FailedDoc {
    pub job: String,
    pub step: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PullRequestDoc {
    pub number: u64,
    pub html_url: String,
    pub draft: bool,
    pub head_sha: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckRunDoc {
    pub name: String,
    /// The App that created it (`app.id`, `app.slug`).
    pub app_id: Option<u64>,
    pub app_slug: Option<String>,
    pub conclusion: Option<String>,
    pub html_url: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogTailDoc {
    /// Always `false`: the build's own code writes to this log.
    pub authoritative: bool,
    pub note: String,
    pub job: String,
    /// Whether earlier parts of the log were left out.
    pub truncated: bool,
    pub text: String,
}

/// What was checked on a pass: the head commit (signed by GitHub for the App's bot), its tree,
/// and the tree the publish job proved (from the App's check run).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublicationDoc {
    pub commit: String,
    pub tree: String,
    pub proven_tree: String,
    /// `<slug>[bot]`.
    pub author: String,
    /// `verification.reason` (`valid`).
    pub signature: String,
}

/// A guard verdict and its violations, as the agent needs them to repair the diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GuardVerdictDoc {
    /// `preflight` (computed by `gate dispatch` on the local clone) or `guard-job` (the run's
    /// guard job, from its artifact).
    pub source: String,
    /// Always `true`: no code from the diff ran before the verdict was computed.
    pub authoritative: bool,
    /// `accept` or `reject`.
    pub verdict: String,
    /// The artifact it was read from (`guard-job` only).
    pub artifact: Option<String>,
    pub violations: Vec<ReasonDoc>,
    /// The guard job's readiness report (`agent-team-apply/readiness/v1`) as it wrote it, when
    /// there is one (`guard-job` only).
    pub readiness: Option<serde_json::Value>,
}

/// One violation: the rule, the path(s), the diff line, the message, the policy entry that
/// decided it, a hint the agent can act on (this path's scope entry, that a denied path cannot be
/// admitted, or the rule's general remedy), the rule's text and its documentation anchor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReasonDoc {
    pub rule: String,
    pub path: Option<contract::repo_path::RepoPath>,
    pub old_path: Option<contract::repo_path::RepoPath>,
    pub line: Option<usize>,
    pub message: String,
    pub policy_entry: Option<String>,
    pub hint: String,
    /// What the rule checks, in full (the registry's description).
    pub rule_text: String,
    pub docs: String,
}

impl ReasonDoc {
    pub fn from_violation(v: &contract::verdict::ViolationDoc) -> ReasonDoc {
        ReasonDoc {
            rule: v.rule.name().to_owned(),
            path: v.path.clone(),
            old_path: v.old_path.clone(),
            line: v.line,
            message: v.message.clone(),
            policy_entry: v.policy_entry.clone(),
            hint: v.hint_or_remedy().to_owned(),
            rule_text: v.rule.description().to_owned(),
            docs: v.docs.clone(),
        }
    }
}

impl GuardVerdictDoc {
    pub fn from_verdict(
        source: &str,
        artifact: Option<String>,
        verdict: &contract::verdict::VerdictDoc,
    ) -> GuardVerdictDoc {
        GuardVerdictDoc {
            source: source.to_owned(),
            authoritative: true,
            verdict: if verdict.accepted() {
                "accept"
            } else {
                "reject"
            }
            .to_owned(),
            artifact,
            violations: verdict
                .violations
                .iter()
                .map(ReasonDoc::from_violation)
                .collect(),
            readiness: None,
        }
    }
}
