//! The readiness document (`agent-team-apply/readiness/v1`, written by `guard readiness`) for its
//! sinks: a step-summary section and workflow-command annotations. Workflow paths, job ids and
//! secret names come from the repository's own files, and are escaped like any other input.

use contract::readiness::{ReadinessDoc, ReadinessResult};

use crate::bounded::{SECTION_MAX_BYTES, TABLE_MAX_ROWS, fit_markdown, rows_left_out_line};
use crate::escape::{
    escape_markdown, escape_workflow_data, escape_workflow_property, neutralize, table_code_span,
};

/// A markdown section: the result, then one table row per finding (accepted ones with the
/// policy's reason), then the fix of each rule found.
pub fn markdown(doc: &ReadinessDoc) -> String {
    let mut out = String::from("### Before publishing: the second execution\n\n");
    let branch = escape_markdown(&doc.branch);
    let base = escape_markdown(&doc.base_branch);
    let read = format!(
        "{} workflow file(s) of the base commit and {} of the default branch head",
        doc.workflows.len(),
        doc.default_head_workflows.len()
    );
    if doc.findings.is_empty() {
        out.push_str(&format!(
            "No job of the {read} would run the code of {branch} (its push and creation, the pull request into {base} and every action on it) with credentials before a person decided.\n"
        ));
        out.push_str(&cleared(doc));
        return fit_markdown(out, SECTION_MAX_BYTES);
    }
    let consequence = match doc.result {
        ReadinessResult::Fail => {
            "**The run stops here** (strict; the policy's `allow.unprotected-secret-jobs` would report them only)"
        }
        ReadinessResult::Reported => {
            "Reported only (the policy sets `allow.unprotected-secret-jobs`)"
        }
        ReadinessResult::Pass => "Every one is accepted by the policy's `readiness.accept`",
    };
    out.push_str(&format!(
        "Once published, {branch} (its push and creation, the pull request into {base} and every action on it) runs the agent's code in these jobs of the {read}, which hold credentials. {consequence}. ADOPTING.md, \"The second execution\", says how to protect each.\n\n| rule | workflow | job | events | credentials | detail | accepted |\n|---|---|---|---|---|---|---|\n"
    ));
    for f in doc.findings.iter().take(TABLE_MAX_ROWS) {
        // Names a reader copies are code spans; the job's display name is prose.
        let job = match (&f.job, &f.job_name) {
            (Some(id), Some(name)) => {
                format!("{} ({})", table_code_span(id), escape_markdown(name))
            }
            (Some(id), None) => table_code_span(id),
            (None, _) => escape_markdown(&f.message),
        };
        let events: Vec<&str> = f.events.iter().map(|e| e.name()).collect();
        let credentials: Vec<String> = f.credentials.iter().map(|s| table_code_span(s)).collect();
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} |\n",
            f.rule.name(),
            table_code_span(&f.workflow),
            job,
            events.join(", "),
            credentials.join(", "),
            f.detail.as_deref().map(escape_markdown).unwrap_or_default(),
            f.accepted
                .as_deref()
                .map(|r| format!("yes: {}", escape_markdown(r)))
                .unwrap_or_else(|| "no".to_owned()),
        ));
    }
    if doc.findings.len() > TABLE_MAX_ROWS {
        out.push_str(&rows_left_out_line(
            TABLE_MAX_ROWS,
            doc.findings.len() as u64,
            "finding(s)",
            "the readiness document lists them all",
        ));
    }
    let mut rules: Vec<_> = doc.findings.iter().map(|f| (f.rule, &f.fix)).collect();
    rules.sort();
    rules.dedup();
    out.push('\n');
    for (rule, fix) in rules {
        out.push_str(&format!("- `{}`: {}\n", rule.name(), escape_markdown(fix)));
    }
    out.push_str(&cleared(doc));
    fit_markdown(out, SECTION_MAX_BYTES)
}

/// The jobs that hold credentials and were cleared, each with its reason (at most
/// [`TABLE_MAX_ROWS`]); empty when there is none.
fn cleared(doc: &ReadinessDoc) -> String {
    if doc.cleared.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\nCleared: these jobs hold credentials and give no finding, for the reason given.\n\n",
    );
    for c in doc.cleared.iter().take(TABLE_MAX_ROWS) {
        let events: Vec<&str> = c.events.iter().map(|e| e.name()).collect();
        out.push_str(&format!(
            "- {} job {} ({}): {}\n",
            table_code_span(&c.workflow),
            table_code_span(&c.job),
            events.join(", "),
            escape_markdown(&c.reason)
        ));
    }
    if doc.cleared.len() > TABLE_MAX_ROWS {
        out.push_str(&rows_left_out_line(
            TABLE_MAX_ROWS,
            doc.cleared.len() as u64,
            "cleared job(s)",
            "the readiness document lists them all",
        ));
    }
    out
}

/// One `::error` (strict) or `::warning` (reported; accepted) line per finding, attached to its
/// file, with the fix.
pub fn annotations(doc: &ReadinessDoc) -> String {
    doc.findings
        .iter()
        .map(|f| {
            let level = if doc.result == ReadinessResult::Fail && f.accepted.is_none() {
                "error"
            } else {
                "warning"
            };
            let title = format!("readiness: {}", f.rule.name());
            let mut text = format!("{} (fix: {})", f.message, f.fix);
            if let Some(reason) = &f.accepted {
                text.push_str(&format!(" [accepted by the policy: {reason}]"));
            }
            format!(
                "::{level} file={},title={}::{}\n",
                escape_workflow_property(&neutralize(&f.workflow)),
                escape_workflow_property(&title),
                escape_workflow_data(&neutralize(&text))
            )
        })
        .collect()
}
