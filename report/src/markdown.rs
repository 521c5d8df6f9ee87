//! A verdict as a GitHub-flavoured markdown section, for `$GITHUB_STEP_SUMMARY` or a pull request
//! body. Names people copy (paths, scope globs, policy entries, modes) are code spans
//! ([`table_code_span`], [`code_span`]); prose (messages) goes through [`escape_markdown`]; only
//! values the renderer validated or produced itself (the verdict word, the mode, the hex hash,
//! counts, registry rule ids and links) are written raw.

use contract::verdict::{FileDoc, VerdictDoc, ViolationDoc};

use crate::bounded::{SECTION_MAX_BYTES, TABLE_MAX_ROWS, fit_markdown, rows_left_out_line};
use crate::escape::{code_span, escape_markdown, table_code_span};
use contract::repo_path::RepoPath;
use contract::rules::RuleId;

use crate::verdict::DocsBase;

/// Render `doc` (already checked by [`crate::verdict::parse`]). Rule ids link to their
/// documentation under `docs` (an absolute URL: a relative one breaks in a step summary or a pull
/// request); without it they are plain code spans.
pub fn render(doc: &VerdictDoc, docs: Option<&DocsBase>) -> String {
    let mut out = String::new();
    out.push_str(&format!("## Guard verdict: {}\n\n", doc.verdict));
    out.push_str(&format!("- **Verdict:** {}\n", doc.verdict));
    out.push_str(&format!("- **Diff SHA-256:** `{}`\n", doc.diff_sha256));
    out.push_str(&format!("- **Mode:** {}\n", doc.mode));
    if doc.scope.is_empty() {
        out.push_str("- **Scope:** none declared\n");
    } else {
        let scope: Vec<String> = doc.scope.iter().map(|s| code_span(s)).collect();
        out.push_str(&format!("- **Scope:** {}\n", scope.join(", ")));
    }

    if let Some(line) = exclusions_line(doc) {
        out.push_str(&line);
    }

    if !doc.protected.is_empty() {
        out.push_str(&format!(
            "- **Protected files:** {} (a human must review them)\n",
            doc.protected.len()
        ));
        out.push_str(&protected_section(doc, docs));
    }

    out.push_str(&format!("\n### Files ({})\n\n", doc.files.len()));
    if doc.files.is_empty() {
        out.push_str("No files.\n");
    } else {
        out.push_str("| Status | Path | Mode | Diff line |\n|---|---|---|---|\n");
        for file in doc.files.iter().take(TABLE_MAX_ROWS) {
            out.push_str(&file_row(file));
        }
        out.push_str(&left_out_line(doc.files.len(), "file(s)"));
    }

    out.push_str(&format!("\n### Violations ({})\n\n", doc.violations.len()));
    if doc.violations.is_empty() {
        out.push_str("No violations.\n");
    } else {
        out.push_str(
            "| Rule | Path | Diff line | Message | Policy entry |\n|---|---|---|---|---|\n",
        );
        for violation in doc.violations.iter().take(TABLE_MAX_ROWS) {
            out.push_str(&violation_row(violation, docs));
        }
        out.push_str(&left_out_line(doc.violations.len(), "violation(s)"));
    }
    fit_markdown(out, SECTION_MAX_BYTES)
}

/// The count of rows a table of `total` left out ([`TABLE_MAX_ROWS`] shown); empty when none.
fn left_out_line(total: usize, what: &str) -> String {
    if total <= TABLE_MAX_ROWS {
        return String::new();
    }
    rows_left_out_line(
        TABLE_MAX_ROWS,
        total as u64,
        what,
        "the verdict JSON lists them all",
    )
}

fn file_row(file: &FileDoc) -> String {
    let mode = match (&file.old_mode, &file.new_mode) {
        (Some(old), Some(new)) if old != new => {
            format!("`{old}` → `{new}`")
        }
        (_, Some(mode)) | (Some(mode), None) => format!("`{mode}`"),
        (None, None) => String::new(),
    };
    format!(
        "| {} | {} | {} | {} |\n",
        file.status.letter(),
        paths(file.old_path.as_ref(), file.new_path.as_ref()),
        mode,
        file.line
    )
}

fn violation_row(violation: &ViolationDoc, docs: Option<&DocsBase>) -> String {
    format!(
        "| {} | {} | {} | {} | {} |\n",
        rule_cell(violation.rule, docs),
        paths(violation.old_path.as_ref(), violation.path.as_ref()),
        violation.line.map(|l| l.to_string()).unwrap_or_default(),
        message_cell(&violation.message),
        violation
            .policy_entry
            .as_deref()
            .map(table_code_span)
            .unwrap_or_default()
    )
}

/// The protected paths the verdict lists, first and prominently: the change is allowed, but only
/// with a human's explicit look.
/// The default deny and protect entries the policy excluded, one list item (`None` without any):
/// a loosening of the default is shown with every verdict.
pub fn exclusions_line(doc: &VerdictDoc) -> Option<String> {
    if doc.exclusions.is_empty() {
        return None;
    }
    let items: Vec<String> = doc
        .exclusions
        .iter()
        .map(|e| format!("{} {}", e.list, code_span(&e.pattern)))
        .collect();
    Some(format!(
        "- **Policy exclusions:** {} (default entries the repository's policy removed)\n",
        items.join(", ")
    ))
}

pub fn protected_section(doc: &VerdictDoc, docs: Option<&DocsBase>) -> String {
    let mut out = format!(
        "\n### \u{26a0}\u{fe0f} Protected files need review ({})\n\n\
         These paths are on the policy's protected list (rule {}): the diff may change them, but \
         a human must review the change before it is merged.\n\n\
         | Path | Diff line | Why | Policy entry |\n|---|---|---|---|\n",
        doc.protected.len(),
        rule_cell(RuleId::ProtectedPath, docs),
    );
    for finding in doc.protected.iter().take(TABLE_MAX_ROWS) {
        out.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            paths(finding.old_path.as_ref(), finding.path.as_ref()),
            finding.line.map(|l| l.to_string()).unwrap_or_default(),
            message_cell(&finding.message),
            finding
                .policy_entry
                .as_deref()
                .map(table_code_span)
                .unwrap_or_default()
        ));
    }
    out.push_str(&left_out_line(doc.protected.len(), "protected path(s)"));
    out
}

/// One protected path as a list item: `` - `path` (`protect: pattern`) `` (`` `old` → `new` `` for
/// both sides of a rename or copy), for the pull request body and the check run.
pub fn protected_item(finding: &ViolationDoc) -> String {
    let path = match (finding.old_path.as_ref(), finding.path.as_ref()) {
        (Some(old), Some(new)) if old != new => {
            format!(
                "{} → {}",
                code_span(&old.sink_text()),
                code_span(&new.sink_text())
            )
        }
        (_, Some(path)) | (Some(path), None) => code_span(&path.sink_text()),
        (None, None) => String::new(),
    };
    let entry = finding
        .policy_entry
        .as_deref()
        .map(|e| format!(" ({})", code_span(e)))
        .unwrap_or_default();
    format!("- {path}{entry}\n")
}

/// A rule links to its documentation when the base URL is known (a relative link breaks in a
/// step summary or a pull request); else it is a code span. Links come from the registry only,
/// never from a document's `docs` field, so a forged document cannot plant one.
pub fn rule_cell(rule: RuleId, docs: Option<&DocsBase>) -> String {
    match docs {
        Some(base) => format!("[`{}`]({})", rule.name(), base.rule_url(rule)),
        None => format!("`{}`", rule.name()),
    }
}

/// A message in a table cell: each line escaped, lines separated by `<br>` (a cell is one line).
fn message_cell(message: &str) -> String {
    message
        .split('\n')
        .map(escape_markdown)
        .collect::<Vec<_>>()
        .join("<br>")
}

/// `old → new` for a rename or copy, else the one path; as code spans.
fn paths(old: Option<&RepoPath>, new: Option<&RepoPath>) -> String {
    match (old, new) {
        (Some(old), Some(new)) if old != new => {
            format!(
                "{} → {}",
                table_code_span(&old.sink_text()),
                table_code_span(&new.sink_text())
            )
        }
        (_, Some(path)) | (Some(path), None) => table_code_span(&path.sink_text()),
        (None, None) => String::new(),
    }
}
