//! The human form of a decision, escaped for a terminal: job names and results come from the
//! `needs` text and the command line.

use guard::escape::neutralize;

use crate::decide::{Decision, JobState, Reason};

/// One line per reason, then a summary line, then one line per job looked at.
pub fn render(decision: &Decision) -> String {
    let mut out = String::new();
    for reason in &decision.reasons {
        out.push_str("error[");
        out.push_str(reason.code().name());
        out.push_str("]: ");
        out.push_str(&neutralize(&reason.to_string()));
        out.push('\n');
    }
    let word = if decision.pass() { "PASS" } else { "FAIL" };
    out.push_str(&format!(
        "{word}: run {}, diff sha256 {}, {} required job(s), {} reason(s)\n",
        neutralize(&decision.run_id),
        neutralize(&decision.diff_sha256),
        decision.required.len(),
        decision.reasons.len(),
    ));
    for job in &decision.jobs {
        let state = match &job.state {
            JobState::Result(r) => format!("\"{}\"", neutralize(r.as_str())),
            JobState::Missing => "(missing)".to_owned(),
            JobState::NotAnObject { found } => format!("(entry is a {found})"),
            JobState::NoResult => "(no result)".to_owned(),
            JobState::ResultNotString { found } => format!("(result is a {found})"),
        };
        let role = if job.required { "" } else { " (not required)" };
        out.push_str(&format!("  {}{role}: {state}\n", neutralize(&job.job)));
    }
    out
}

/// The reasons as one line each (`code: message`), for the `reasons` step output. Escaped like
/// the terminal form, so a reason never spans lines whatever a job name contains.
pub fn reason_lines(reasons: &[Reason]) -> String {
    reasons
        .iter()
        .map(|r| format!("{}: {}", r.code().name(), neutralize(&r.to_string())))
        .collect::<Vec<_>>()
        .join("\n")
}
