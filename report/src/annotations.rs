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
//! No `line=` property is written: a violation's line is a line of the *diff*, not of the file
//! named by `file=`, and GitHub would pin the annotation to that line of the file. The diff line
//! is part of the message instead.
//!
//! GitHub shows at most 10 error annotations per step; the step summary
//! ([`crate::markdown`]) carries the full list.

use contract::verdict::{VerdictDoc, ViolationDoc};

use crate::escape::{escape_workflow_data, escape_workflow_property, neutralize};

/// One `::error` line per violation, then one `::warning` line per protected path (a change a
/// human must review); empty when there is neither.
pub fn render(doc: &VerdictDoc) -> String {
    doc.violations
        .iter()
        .map(|v| command("error", v))
        .chain(doc.protected.iter().map(|p| command("warning", p)))
        .collect()
}

fn command(level: &str, violation: &ViolationDoc) -> String {
    let mut properties = Vec::new();
    if let Some(file) = violation.path.as_ref().or(violation.old_path.as_ref()) {
        properties.push(format!(
            "file={}",
            escape_workflow_property(&neutralize(&file.sink_text()))
        ));
    }
    let title = format!("guard: {}", violation.rule);
    properties.push(format!("title={}", escape_workflow_property(&title)));

    let message = crate::verdict::violation_message(violation);
    format!(
        "::{level} {}::{}\n",
        properties.join(","),
        escape_workflow_data(&message)
    )
}
