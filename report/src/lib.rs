//! `report`: renderings of guard verdicts for the sinks a workflow writes to (step summary and
//! pull-request markdown, workflow-command annotations, SARIF), the check-run body that carries
//! the gate decision, and the dispatcher's run correlation. Library code only; no process I/O.
//!
//! Everything derived from a diff is escaped for its sink by [`escape`].
#![forbid(unsafe_code)]

pub mod annotations;
pub mod bounded;
pub mod build_test;
pub mod check_run;
pub mod escape;
pub mod markdown;
pub mod pr_body;
pub mod readiness;
pub mod sarif;
pub mod select_run;
pub mod verdict;
