//! The human forms of a decision and of a dispatch result, escaped for a terminal line by line: job
//! names and results come from the `needs` text and the command line, a dispatch result's values
//! from GitHub and the run's artifacts.

use guard::escape::neutralize;

use crate::decide::{Decision, JobState, Reason};
use crate::doctor::{Report, Status};
use crate::output::dispatch_result_v2::DispatchResultDoc;

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

/// A terminal text built of logical lines, each escaped on its own as it is added ([`neutralize`]
/// turns a line break inside a value, LF, CR, NEL, U+2028 or U+2029, into a visible `\u{..}`), so
/// a value can never end its line and print one of its own: escaping after joining would split
/// the text at the value's LF first and pass the forged line through as a line of the output.
#[derive(Debug, Default)]
pub struct TextLines(String);

impl TextLines {
    /// Add one logical line (without its line break).
    pub fn line(&mut self, logical: &str) {
        self.0.push_str(&neutralize(logical));
        self.0.push('\n');
    }

    pub fn finish(self) -> String {
        self.0
    }
}

/// The human form of a dispatch result: one logical line per fact, each escaped on its own.
/// Everything but the fixed words comes from GitHub's answers or from the run's artifacts (a
/// verdict message, a step name, the log tail the diff's code may have written).
pub fn dispatch(doc: &DispatchResultDoc) -> String {
    let mut out = TextLines::default();
    out.line(&format!(
        "DISPATCH: {} (exit {})",
        doc.decision, doc.exit_code
    ));
    out.line(&format!(
        "  task {} on {} {}, diff sha256 {} via {}",
        doc.task_id,
        doc.repository,
        doc.git_ref,
        doc.diff_sha256,
        doc.diff_ref.as_deref().unwrap_or(&doc.transport)
    ));
    if let Some(run) = &doc.run {
        out.line(&format!(
            "  run {} ({}, found by {}): {}",
            run.id,
            run.html_url,
            run.found_by,
            run.conclusion
                .as_deref()
                .or(run.status.as_deref())
                .unwrap_or("?")
        ));
    }
    for job in &doc.jobs {
        out.line(&format!(
            "  job {}: {}{}",
            job.name,
            job.conclusion.as_deref().unwrap_or(&job.status),
            job.failed_step
                .as_ref()
                .map(|s| format!(" (step \"{s}\")"))
                .unwrap_or_default()
        ));
    }
    if let Some(pull) = &doc.pull_request {
        out.line(&format!(
            "  draft pull request #{}: {}",
            pull.number, pull.html_url
        ));
    }
    if let Some(publication) = &doc.publication {
        out.line(&format!(
            "  publication: commit {} by {} (signature {}), tree {} = proven {}",
            publication.commit,
            publication.author,
            publication.signature,
            publication.tree,
            publication.proven_tree
        ));
    }
    for reason in &doc.reasons {
        out.line(&format!("  reason: {reason}"));
    }
    if let Some(why) = &doc.guard_verdict_unavailable {
        out.line(&format!("  guard verdict: not available ({why})"));
    }
    if let Some(verdict) = &doc.guard_verdict {
        out.line(&format!(
            "  guard verdict ({}, authoritative): {}, {} violation(s)",
            verdict.source,
            verdict.verdict,
            verdict.violations.len()
        ));
        for v in &verdict.violations {
            let path = v
                .path
                .as_ref()
                .or(v.old_path.as_ref())
                .map(|p| p.display())
                .unwrap_or_default();
            let line = v
                .line
                .map(|l| format!(" (diff line {l})"))
                .unwrap_or_default();
            out.line(&format!(
                "    error[{}]: {path}{line}: {}",
                v.rule, v.message
            ));
            out.line(&format!("      hint: {}", v.hint));
        }
    }
    if let Some(build) = &doc.build_findings_non_authoritative {
        match &build.reason {
            Some(why) => out.line(&format!(
                "  build findings (non-authoritative): unavailable ({why})"
            )),
            None => out.line(&format!(
                "  build findings (non-authoritative, from {}): {} finding(s){}",
                build.artifact.as_deref().unwrap_or(""),
                build.findings.len() as u64 + build.left_out,
                if build.left_out > 0 {
                    format!(", {} left out", build.left_out)
                } else {
                    String::new()
                }
            )),
        }
        for f in &build.findings {
            out.line(&format!(
                "    {}[{}]: {}: {}",
                f.check,
                f.rule,
                f.path.display(),
                f.message
            ));
        }
    }
    if let Some(tail) = &doc.log_tail {
        out.line(&format!("  log tail of {} ({}):", tail.job, tail.note));
        // The log's own lines stay lines, each behind the `|` that marks it as the log's.
        for line in tail.text.lines() {
            out.line(&format!("    | {line}"));
        }
    }
    out.finish()
}

/// One line per setting (`ok`, `missing`, `cannot read`), the fix under each that is not ok,
/// and the outcome; every line escaped for the terminal on its own (a detail is read from
/// GitHub).
pub fn doctor(report: &Report) -> String {
    let mut out = TextLines::default();
    out.line(&format!(
        "gate doctor: {} (App {})",
        report.repository, report.app
    ));
    for f in &report.findings {
        let kind = if f.setting.required() {
            ""
        } else {
            " (advice)"
        };
        out.line(&format!(
            "  {:<11} {}{kind}: {}",
            f.status.as_str(),
            f.setting.id(),
            f.detail
        ));
        if f.status == Status::CannotRead {
            out.line(&format!(
                "              read with: {}",
                f.setting.reads_with()
            ));
        }
        if let Some(fix) = f.fix() {
            out.line(&format!("              fix: {fix}"));
        }
    }
    let failing = report
        .findings
        .iter()
        .filter(|f| f.setting.required() && f.status != Status::Ok)
        .count();
    if failing == 0 {
        out.line("DOCTOR: ok, every required setting is in place (exit 0)");
    } else {
        out.line(&format!(
            "DOCTOR: {failing} required setting(s) missing or unreadable (exit 1)"
        ));
    }
    out.finish()
}
