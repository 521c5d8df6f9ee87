//! The readiness document (`agent-team-apply/readiness/v1`, written by `guard readiness`) for its
//! sinks: a step-summary section and workflow-command annotations. Workflow paths, job ids and
//! secret names come from the repository's own files, and are escaped like any other input.

use guard::readiness::json_v1::ReadinessDoc;

use crate::escape::{escape_markdown, escape_workflow_data, escape_workflow_property, neutralize};

/// A markdown section: the result, then one table row per finding.
pub fn markdown(doc: &ReadinessDoc) -> String {
    let mut out = String::from("### Before publishing: the second execution\n\n");
    let branch = escape_markdown(&doc.branch);
    let base = escape_markdown(&doc.base_branch);
    match doc.result.as_str() {
        "pass" => out.push_str(&format!(
            "No job of the {} workflow file(s) of the base commit would run on {branch} (push, pull request into {base}) with secrets and no environment.\n",
            doc.workflows.len()
        )),
        result => {
            let consequence = if result == "fail" {
                "**The run stops here** (strict; the policy's `allow.unprotected-secret-jobs` would report them only)"
            } else {
                "Reported only (the policy sets `allow.unprotected-secret-jobs`)"
            };
            out.push_str(&format!(
                "Once published, {branch} (push, pull request into {base}) runs the agent's code in these jobs, which read secrets and name no environment. {consequence}. Protect each job with an environment that has required reviewers, or a condition that excludes `agent-team/` branches (ADOPTING.md, \"The second execution\").\n\n| rule | workflow | job | events | secrets |\n|---|---|---|---|---|\n"
            ));
            for f in &doc.findings {
                let job = match (&f.job, &f.job_name) {
                    (Some(id), Some(name)) => {
                        format!("{} ({})", escape_markdown(id), escape_markdown(name))
                    }
                    (Some(id), None) => escape_markdown(id),
                    (None, _) => escape_markdown(&f.message),
                };
                out.push_str(&format!(
                    "| {} | {} | {} | {} | {} |\n",
                    escape_markdown(&f.rule),
                    escape_markdown(&f.workflow),
                    job,
                    escape_markdown(&f.events.join(", ")),
                    escape_markdown(&f.secrets.join(", "))
                ));
            }
        }
    }
    out
}

/// One `::error` (strict) or `::warning` (reported) line per finding, attached to its file.
pub fn annotations(doc: &ReadinessDoc) -> String {
    let level = if doc.result == "fail" {
        "error"
    } else {
        "warning"
    };
    doc.findings
        .iter()
        .map(|f| {
            let title = format!("readiness: {}", neutralize(&f.rule));
            format!(
                "::{level} file={},title={}::{}\n",
                escape_workflow_property(&neutralize(&f.workflow)),
                escape_workflow_property(&title),
                escape_workflow_data(&neutralize(&f.message))
            )
        })
        .collect()
}
