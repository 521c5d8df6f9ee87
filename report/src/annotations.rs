//! A verdict's violations as GitHub workflow commands (`::error file=...,title=...::message`), and
//! its protected paths as warnings (`::warning ...`), one line each, printed to a step's stdout so
//! the runner turns them into annotations.
//!
//! Format and escaping follow actions/toolkit `packages/core/src/command.ts` (`escapeData`,
//! `escapeProperty`) and GitHub's "Workflow commands for GitHub Actions" documentation; see
//! [`crate::escape::escape_workflow_data`] and [`crate::escape::escape_workflow_property`].
//!
//! Every line starts with `::error ` or `::warning ` written here; diff-derived text can never begin a line
//! (line breaks are escaped), so it cannot issue `::stop-commands::`, `::add-mask::` or any other
//! command.
//!
//! Location: a violation's line is a line of the *diff*, not of the file it names, so a violation
//! with a diff line is located in the diff file (`file=<diff name>,line=<diff line>`, the name
//! `report render --diff-name` gives, as SARIF locates results about the diff) and its title names
//! the patched path; one without a diff line is located at the path itself (`file=<path>`), and
//! one with neither has no location.
//!
//! GitHub shows at most 10 error and 10 warning annotations per step: at most
//! [`ANNOTATIONS_PER_LEVEL`] of each are printed, then one `::notice` with the count of the others;
//! the step summary ([`crate::markdown`]) carries the list.

use contract::verdict::{VerdictDoc, ViolationDoc};

use crate::bounded::ANNOTATIONS_PER_LEVEL;
use crate::escape::{escape_workflow_data, escape_workflow_property, neutralize};

/// One `::error` line per violation, then one `::warning` line per protected path (a change a
/// human must review); empty when there is neither. `diff_name` is the diff file's name, where a
/// finding with a diff line is located.
pub fn render(doc: &VerdictDoc, diff_name: &str) -> String {
    let mut out: String = doc
        .violations
        .iter()
        .take(ANNOTATIONS_PER_LEVEL)
        .map(|v| command("error", v, diff_name))
        .chain(
            doc.protected
                .iter()
                .take(ANNOTATIONS_PER_LEVEL)
                .map(|p| command("warning", p, diff_name)),
        )
        .collect();
    let errors = doc.violations.len().saturating_sub(ANNOTATIONS_PER_LEVEL);
    let warnings = doc.protected.len().saturating_sub(ANNOTATIONS_PER_LEVEL);
    if errors + warnings > 0 {
        out.push_str(&format!(
            "::notice title={}::{errors} more violation(s) and {warnings} more protected path(s) not annotated (GitHub shows {ANNOTATIONS_PER_LEVEL} of each level per step); the step summary lists them\n",
            escape_workflow_property("guard: annotations left out")
        ));
    }
    out
}

fn command(level: &str, violation: &ViolationDoc, diff_name: &str) -> String {
    let mut properties = Vec::new();
    let path = violation
        .path
        .as_ref()
        .or(violation.old_path.as_ref())
        .map(|p| neutralize(&p.sink_text()));
    let mut title = format!("guard: {}", violation.rule);
    match (violation.line, &path) {
        (Some(line), _) => {
            properties.push(format!(
                "file={}",
                escape_workflow_property(&neutralize(diff_name))
            ));
            properties.push(format!("line={line}"));
            if let Some(path) = &path {
                title.push_str(&format!(": {path}"));
            }
        }
        (None, Some(path)) => properties.push(format!("file={}", escape_workflow_property(path))),
        (None, None) => {}
    }
    properties.push(format!("title={}", escape_workflow_property(&title)));

    let message = crate::verdict::violation_message(violation);
    format!(
        "::{level} {}::{}\n",
        properties.join(","),
        escape_workflow_data(&message)
    )
}
