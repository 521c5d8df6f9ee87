//! A verdict as a GitHub-flavoured markdown section, for `$GITHUB_STEP_SUMMARY` or a pull request
//! body. Every string that comes from the document goes through
//! [`escape_markdown`](crate::escape::escape_markdown); only values the renderer validated or
//! produced itself (the verdict word, the mode, the hex hash, counts, registry rule ids and links)
//! are written raw.

use contract::repo_path::RepoPath;
use contract::verdict::{FileDoc, VerdictDoc, ViolationDoc};

use crate::escape::escape_markdown;
use crate::verdict::{DocsBase, rule_link};

/// Render `doc` (already checked by [`crate::verdict::parse`]). Rule ids link to their
/// documentation: absolute under `docs` when given, else the repository-relative anchor.
pub fn render(doc: &VerdictDoc, docs: Option<&DocsBase>) -> String {
    let mut out = String::new();
    out.push_str(&format!("## Guard verdict: {}\n\n", doc.verdict));
    out.push_str(&format!("- **Verdict:** {}\n", doc.verdict));
    out.push_str(&format!("- **Diff SHA-256:** `{}`\n", doc.diff_sha256));
    out.push_str(&format!("- **Mode:** {}\n", doc.mode));
    if doc.scope.is_empty() {
        out.push_str("- **Scope:** none declared\n");
    } else {
        let scope: Vec<String> = doc.scope.iter().map(|s| escape_markdown(s)).collect();
        out.push_str(&format!("- **Scope:** {}\n", scope.join(", ")));
    }

    out.push_str(&format!("\n### Files ({})\n\n", doc.files.len()));
    if doc.files.is_empty() {
        out.push_str("No files.\n");
    } else {
        out.push_str("| ChangeKind | Path | Mode | Diff line |\n|---|---|---|---|\n");
        for file in &doc.files {
            out.push_str(&file_row(file));
        }
    }

    out.push_str(&format!("\n### Violations ({})\n\n", doc.violations.len()));
    if doc.violations.is_empty() {
        out.push_str("No violations.\n");
    } else {
        out.push_str(
            "| Rule | Path | Diff line | Message | Policy entry |\n|---|---|---|---|---|\n",
        );
        for violation in &doc.violations {
            out.push_str(&violation_row(violation, docs));
        }
    }
    out
}

fn file_row(file: &FileDoc) -> String {
    let mode = match (&file.old_mode, &file.new_mode) {
        (Some(old), Some(new)) if old != new => {
            format!("{old} → {new}")
        }
        (_, Some(mode)) | (Some(mode), None) => mode.to_string(),
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
    let rule_cell = rule_link(violation.rule, docs);
    format!(
        "| {} | {} | {} | {} | {} |\n",
        rule_cell,
        paths(violation.old_path.as_ref(), violation.path.as_ref()),
        violation.line.map(|l| l.to_string()).unwrap_or_default(),
        escape_markdown(&violation.message),
        violation
            .policy_entry
            .as_deref()
            .map(escape_markdown)
            .unwrap_or_default()
    )
}

/// `old → new` for a rename or copy, else the one path; escaped.
fn paths(old: Option<&RepoPath>, new: Option<&RepoPath>) -> String {
    match (old, new) {
        (Some(old), Some(new)) if old != new => {
            format!(
                "{} → {}",
                escape_markdown(&old.sink_text()),
                escape_markdown(&new.sink_text())
            )
        }
        (_, Some(path)) | (Some(path), None) => escape_markdown(&path.sink_text()),
        (None, None) => String::new(),
    }
}
