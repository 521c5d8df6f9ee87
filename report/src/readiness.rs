//! The readiness document (`agent-team-apply/readiness/v1`, written by `guard readiness`) for its
//! sinks: a step-summary section and workflow-command annotations. Workflow paths, job ids and
//! secret names come from the repository's own files, and are escaped like any other input.

use contract::readiness::{ReadinessDoc, ReadinessResult};

use crate::escape::{
    escape_markdown, escape_workflow_data, escape_workflow_property, neutralize, table_code_span,
};

/// A markdown section: the result, then one table row per finding.
pub fn markdown(doc: &ReadinessDoc) -> String {
    let mut out = String::from("### Before publishing: the second execution\n\n");
    let branch = escape_markdown(&doc.branch);
    let base = escape_markdown(&doc.base_branch);
    match doc.result {
        ReadinessResult::Pass => out.push_str(&format!(
            "No job of the {} workflow file(s) of the base commit would run on {branch} (push, pull request into {base}) with secrets and no environment.\n",
            doc.workflows.len()
        )),
        result => {
            let consequence = if result == ReadinessResult::Fail {
                "**The run stops here** (strict; the policy's `allow.unprotected-secret-jobs` would report them only)"
            } else {
                "Reported only (the policy sets `allow.unprotected-secret-jobs`)"
            };
            out.push_str(&format!(
                "Once published, {branch} (push, pull request into {base}) runs the agent's code in these jobs, which read secrets and name no environment. {consequence}. Protect each job with an environment that has required reviewers, or a condition that excludes `agent-team/` branches (ADOPTING.md, \"The second execution\").\n\n| rule | workflow | job | events | secrets |\n|---|---|---|---|---|\n"
            ));
            for f in &doc.findings {
                // Names a reader copies are code spans; the job's display name is prose.
                let job = match (&f.job, &f.job_name) {
                    (Some(id), Some(name)) => {
                        format!("{} ({})", table_code_span(id), escape_markdown(name))
                    }
                    (Some(id), None) => table_code_span(id),
                    (None, _) => escape_markdown(&f.message),
                };
                let events: Vec<&str> = f.events.iter().map(|e| e.name()).collect();
                let secrets: Vec<String> = f.secrets.iter().map(|s| table_code_span(s)).collect();
                out.push_str(&format!(
                    "| {} | {} | {} | {} | {} |\n",
                    f.rule.name(),
                    table_code_span(&f.workflow),
                    job,
                    events.join(", "),
                    secrets.join(", ")
                ));
            }
        }
    }
    out
}

/// One `::error` (strict) or `::warning` (reported) line per finding, attached to its file.
pub fn annotations(doc: &ReadinessDoc) -> String {
    let level = if doc.result == ReadinessResult::Fail {
        "error"
    } else {
        "warning"
    };
    doc.findings
        .iter()
        .map(|f| {
            let title = format!("readiness: {}", f.rule.name());
            format!(
                "::{level} file={},title={}::{}\n",
                escape_workflow_property(&neutralize(&f.workflow)),
                escape_workflow_property(&title),
                escape_workflow_data(&neutralize(&f.message))
            )
        })
        .collect()
}
