//! The gate's core: a pure pass/fail decision over the authenticated conclusions of the jobs it
//! depends on (`toJSON(needs)`), keyed to a run id and a diff hash, and the writers of its
//! results. No process I/O here except [`github_output::StepOutputs::append_to`].
#![forbid(unsafe_code)]

pub mod decide;
pub mod github_output;
pub mod output;
pub mod strict_json;

pub use decide::{Decision, JobObservation, JobResult, JobState, Reason, ReasonCode, decide};
