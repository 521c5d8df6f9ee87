//! The versioned machine form of a gate decision, kept apart from the internal types. Strings are
//! the raw values (JSON escaping makes any string safe here); consumers that print them escape
//! them for their own sink.

use serde::{Deserialize, Serialize};

use crate::decide::{Decision, JobState};

pub const SCHEMA: &str = "agent-team-apply/gate-decision/v1";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecisionDoc {
    pub schema: String,
    /// `pass` or `fail`.
    pub gate: String,
    /// The run id the decision is keyed to, as given.
    pub run_id: String,
    /// The diff hash the decision is keyed to, as given.
    pub diff_sha256: String,
    pub required: Vec<String>,
    pub jobs: Vec<JobDoc>,
    pub reasons: Vec<ReasonDoc>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobDoc {
    pub job: String,
    pub required: bool,
    /// `result`, `missing`, `not-an-object`, `no-result` or `result-not-string`.
    pub state: String,
    /// The `result` string when there is one.
    pub result: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReasonDoc {
    /// Stable reason code, e.g. `job-not-successful`.
    pub code: String,
    pub job: Option<String>,
    pub message: String,
}

impl DecisionDoc {
    pub fn from_decision(decision: &Decision) -> Self {
        DecisionDoc {
            schema: SCHEMA.to_owned(),
            gate: if decision.pass() { "pass" } else { "fail" }.to_owned(),
            run_id: decision.run_id.clone(),
            diff_sha256: decision.diff_sha256.clone(),
            required: decision.required.clone(),
            jobs: decision
                .jobs
                .iter()
                .map(|j| {
                    let (state, result) = match &j.state {
                        JobState::Result(r) => ("result", Some(r.as_str().to_owned())),
                        JobState::Missing => ("missing", None),
                        JobState::NotAnObject { .. } => ("not-an-object", None),
                        JobState::NoResult => ("no-result", None),
                        JobState::ResultNotString { .. } => ("result-not-string", None),
                    };
                    JobDoc {
                        job: j.job.clone(),
                        required: j.required,
                        state: state.to_owned(),
                        result,
                    }
                })
                .collect(),
            reasons: decision
                .reasons
                .iter()
                .map(|r| ReasonDoc {
                    code: r.code().name().to_owned(),
                    job: r.job().map(str::to_owned),
                    message: r.to_string(),
                })
                .collect(),
        }
    }

    pub fn passed(&self) -> bool {
        self.gate == "pass"
    }

    /// Serialize as pretty JSON with a trailing newline ([`guard::doc_json`]). An error, never an
    /// empty document.
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        guard::doc_json::to_string_pretty(self)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use crate::decide::decide;

    const SHA: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    /// `report check-run --decision` consumes exactly this document: both sides of the contract.
    #[test]
    fn report_check_run_reads_the_decision_document() {
        for (needs, pass) in [
            (
                r#"{"guard":{"result":"success"},"build-test":{"result":"success"}}"#,
                true,
            ),
            (
                r#"{"guard":{"result":"success"},"build-test":{"result":"failure"}}"#,
                false,
            ),
        ] {
            let decision = decide(needs.as_bytes(), &["guard", "build-test"], "42", SHA);
            let doc = DecisionDoc::from_decision(&decision);
            let read = report::check_run::parse_decision(&doc.to_json().unwrap()).unwrap();
            assert_eq!(read.pass(), pass);
            assert_eq!(read.run_id, "42");
            assert_eq!(read.diff_sha256, SHA);
            assert_eq!(read.reasons.len(), doc.reasons.len());
            for (r, d) in read.reasons.iter().zip(&doc.reasons) {
                assert_eq!((&r.code, &r.message), (&d.code, &d.message));
            }
        }
    }
}
