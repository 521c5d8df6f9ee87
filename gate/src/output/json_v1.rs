//! The gate decision as its document ([`contract::decision`]): the one mapping from the engine's
//! [`Decision`].

pub use contract::decision::{
    DecisionDoc, DecisionSchema, Gate, JobDoc, JobStateWord, ReasonDoc, SCHEMA,
};
use contract::ids::{RunId, Sha256Hex};

use crate::decide::{Decision, JobState};

/// The document of `decision`. A run id or hash that is not valid (the decision then fails with
/// a reason saying so) is written as `null`.
pub fn document(decision: &Decision) -> DecisionDoc {
    DecisionDoc {
        schema: DecisionSchema,
        gate: if decision.pass() {
            Gate::Pass
        } else {
            Gate::Fail
        },
        run_id: RunId::parse(&decision.run_id).ok(),
        diff_sha256: Sha256Hex::parse(&decision.diff_sha256).ok(),
        required: decision.required.clone(),
        jobs: decision
            .jobs
            .iter()
            .map(|j| {
                let (state, result) = match &j.state {
                    JobState::Result(r) => (JobStateWord::Result, Some(r.as_str().to_owned())),
                    JobState::Missing => (JobStateWord::Missing, None),
                    JobState::NotAnObject { .. } => (JobStateWord::NotAnObject, None),
                    JobState::NoResult => (JobStateWord::NoResult, None),
                    JobState::ResultNotString { .. } => (JobStateWord::ResultNotString, None),
                };
                JobDoc {
                    job: j.job.clone(),
                    required: j.required,
                    state,
                    result,
                }
            })
            .collect(),
        reasons: decision
            .reasons
            .iter()
            .map(|r| ReasonDoc {
                code: r.code(),
                job: r.job().map(str::to_owned),
                message: r.to_string(),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use crate::decide::decide;

    const SHA: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    fn head() -> contract::ids::CommitId {
        contract::ids::CommitId::parse("0123456789abcdef0123456789abcdef01234567").unwrap()
    }

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
            let doc = document(&decision);
            let read = DecisionDoc::parse(&doc.to_json().unwrap()).unwrap();
            assert_eq!(read, doc);
            assert_eq!(read.passed(), pass);
            assert_eq!(read.run_id.as_ref().map(RunId::as_str), Some("42"));
            assert_eq!(read.diff_sha256.as_ref().map(Sha256Hex::as_str), Some(SHA));
            // And the check run is built from exactly that document.
            report::check_run::build(&read, &head(), "agent-team-apply / gate", None, &[]).unwrap();
        }
    }
}
