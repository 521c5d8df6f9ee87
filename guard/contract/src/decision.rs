//! The gate's decision as a document: `agent-team-apply/gate-decision/v1`, written by `gate decide`
//! and read by `report check-run` (and the publishing job). One definition for both sides.
//!
//! ```json
//! {"schema": "agent-team-apply/gate-decision/v1", "gate": "fail",
//!  "run_id": "1796107790", "diff_sha256": "<64 hex>", "required": ["guard", "build-test"],
//!  "jobs": [{"job": "guard", "required": true, "state": "result", "result": "success"},
//!           {"job": "build-test", "required": true, "state": "result", "result": "failure"}],
//!  "reasons": [{"code": "job-not-successful", "job": "build-test",
//!               "message": "job `build-test`: result is \"failure\", not \"success\""}]}
//! ```
//!
//! `run_id` and `diff_sha256` are the keys the decision is bound to; when `gate decide` was given
//! a value that is not one, the field is `null` and a reason says so (such a decision fails).
//! Strings other than the typed fields are raw values (a job name or result as `needs` spelled
//! it): consumers escape them for their sink.

use serde::{Deserialize, Serialize};

use crate::ids::{RunId, Sha256Hex};

crate::schema_marker!(
    /// `agent-team-apply/gate-decision/v1`.
    DecisionSchema,
    "agent-team-apply/gate-decision/v1"
);

pub const SCHEMA: &str = DecisionSchema::ID;

crate::registry! {
    /// Stable identifiers of the reasons a decision fails.
    pub enum ReasonCode {
        InvalidRunId => "invalid-run-id": "The run id is not a decimal number without leading zeros.",
        InvalidDiffSha256 => "invalid-diff-sha256": "The diff hash is not 64 lower-case hex digits.",
        NoRequiredJobs => "no-required-jobs": "The required job set is empty.",
        InvalidJobName => "invalid-job-name": "A required job name is empty, too long, or not a GitHub job id.",
        DuplicateRequiredJob => "duplicate-required-job": "A job is required twice (compared ignoring ASCII case).",
        NeedsTooLarge => "needs-too-large": "The needs text exceeds the size limit.",
        MalformedNeeds => "malformed-needs": "The needs text is not one JSON document.",
        NeedsNotObject => "needs-not-object": "The needs document is not a JSON object.",
        DuplicateKey => "duplicate-key": "An object in the needs document has the same key twice.",
        MissingJob => "missing-job": "A required job is absent from needs.",
        UnexpectedJob => "unexpected-job": "needs has a job that is not in the required set.",
        JobNotObject => "job-not-object": "A job's entry in needs is not an object.",
        MissingResult => "missing-result": "A job's entry in needs has no `result`.",
        ResultNotString => "result-not-string": "A job's `result` is not a string.",
        JobNotSuccessful => "job-not-successful": "A required job's result is not exactly `success`.",
    }
}

/// Pass or fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Gate {
    Pass,
    Fail,
}

/// What `needs` said about one job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum JobStateWord {
    /// `result` is a string (in `result`).
    Result,
    /// The job is not a key of `needs`.
    Missing,
    /// The job's value is not an object.
    NotAnObject,
    /// The job's object has no `result`.
    NoResult,
    /// `result` is not a string.
    ResultNotString,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecisionDoc {
    pub schema: DecisionSchema,
    pub gate: Gate,
    pub run_id: Option<RunId>,
    pub diff_sha256: Option<Sha256Hex>,
    pub required: Vec<String>,
    pub jobs: Vec<JobDoc>,
    pub reasons: Vec<ReasonDoc>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobDoc {
    pub job: String,
    pub required: bool,
    pub state: JobStateWord,
    /// The `result` string when there is one, as `needs` spelled it.
    pub result: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReasonDoc {
    pub code: ReasonCode,
    pub job: Option<String>,
    pub message: String,
}

/// Why a decision document was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DecisionError {
    #[error("the gate decision is not a valid {SCHEMA} document: {0}")]
    Json(#[from] serde_json::Error),
    #[error("the gate decision passes but {0}")]
    InconsistentPass(&'static str),
    #[error("the gate decision fails without a reason")]
    FailWithoutReason,
}

impl DecisionDoc {
    /// Parse a decision and check the invariants between its fields: a pass carries both keys,
    /// no reason, and a `success` result for every job, each of them required; a fail carries at
    /// least one reason.
    pub fn parse(json: &str) -> Result<DecisionDoc, DecisionError> {
        let doc: DecisionDoc = serde_json::from_str(json)?;
        match doc.gate {
            Gate::Pass => {
                if !doc.reasons.is_empty() {
                    return Err(DecisionError::InconsistentPass("lists reasons"));
                }
                if doc.run_id.is_none() || doc.diff_sha256.is_none() {
                    return Err(DecisionError::InconsistentPass(
                        "is not bound to a run and a diff",
                    ));
                }
                if doc.required.is_empty() || doc.jobs.len() != doc.required.len() {
                    return Err(DecisionError::InconsistentPass(
                        "does not list exactly the required jobs",
                    ));
                }
                let success = |j: &JobDoc| {
                    j.required
                        && j.state == JobStateWord::Result
                        && j.result.as_deref() == Some("success")
                };
                if !doc.jobs.iter().all(success) {
                    return Err(DecisionError::InconsistentPass("a job did not succeed"));
                }
            }
            Gate::Fail if doc.reasons.is_empty() => return Err(DecisionError::FailWithoutReason),
            Gate::Fail => {}
        }
        Ok(doc)
    }

    pub fn passed(&self) -> bool {
        self.gate == Gate::Pass
    }

    /// Pretty JSON with a trailing newline ([`crate::doc_json`]).
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        crate::doc_json::to_string_pretty(self)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    const SHA: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

    fn pass() -> serde_json::Value {
        serde_json::json!({"schema": SCHEMA, "gate": "pass", "run_id": "42", "diff_sha256": SHA,
            "required": ["guard"],
            "jobs": [{"job": "guard", "required": true, "state": "result", "result": "success"}],
            "reasons": []})
    }

    #[test]
    fn a_pass_is_consistent_or_refused() {
        assert!(DecisionDoc::parse(&pass().to_string()).unwrap().passed());
        let mutations: &[(&str, serde_json::Value)] = &[
            ("/run_id", serde_json::Value::Null),
            ("/diff_sha256", serde_json::Value::Null),
            ("/jobs/0/result", "failure".into()),
            ("/jobs/0/state", "missing".into()),
            ("/jobs/0/required", false.into()),
            ("/jobs", serde_json::json!([])),
            (
                "/reasons",
                serde_json::json!([{"code": "missing-job", "job": null, "message": ""}]),
            ),
            ("/gate", "PASS".into()),
            ("/run_id", "042".into()),
            ("/schema", "agent-team-apply/gate-decision/v2".into()),
        ];
        for (pointer, value) in mutations {
            let mut doc = pass();
            *doc.pointer_mut(pointer).unwrap() = value.clone();
            assert!(
                DecisionDoc::parse(&doc.to_string()).is_err(),
                "{pointer} = {value}"
            );
        }
        let mut doc = pass();
        doc["gate"] = "fail".into();
        assert!(matches!(
            DecisionDoc::parse(&doc.to_string()),
            Err(DecisionError::FailWithoutReason)
        ));
    }

    #[test]
    fn reason_codes_are_registered_once() {
        let mut seen = std::collections::BTreeSet::new();
        for &code in ReasonCode::ALL {
            assert!(seen.insert(code.name()));
            assert_eq!(ReasonCode::from_name(code.name()), Some(code));
            assert!(code.description().ends_with('.'));
        }
    }
}
