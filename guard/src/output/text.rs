//! The human form of a verdict, escaped for a terminal.

use crate::escape::neutralize;
use crate::verdict::{CheckMode, Verdict};

pub fn render(verdict: &Verdict) -> String {
    let mut out = String::new();
    let mode = match verdict.mode {
        CheckMode::ParserOnly => "parser-only (no --repo: git's reading was not cross-checked)",
        CheckMode::GitCrossChecked => "git-cross-checked",
    };
    for v in &verdict.violations {
        out.push_str(&format!("error[{}]", v.rule));
        if let Some(line) = v.line {
            out.push_str(&format!(" diff line {line}"));
        }
        out.push_str(": ");
        match (&v.old_path, &v.path) {
            (Some(old), Some(new)) => {
                out.push_str(&format!("{} -> {}: ", old.display(), new.display()))
            }
            (None, Some(p)) | (Some(p), None) => out.push_str(&format!("{}: ", p.display())),
            (None, None) => {}
        }
        out.push_str(&neutralize(&v.message));
        if let Some(entry) = &v.policy_entry {
            out.push_str(&format!(" (policy: {})", neutralize(entry)));
        }
        out.push('\n');
    }
    let verdict_word = if verdict.accepted() {
        "ACCEPT"
    } else {
        "REJECT"
    };
    out.push_str(&format!(
        "{verdict_word}: {} file(s), {} violation(s), sha256 {}, {mode}\n",
        verdict.files.len(),
        verdict.violations.len(),
        verdict.diff_sha256
    ));
    for f in &verdict.files {
        let paths = match (&f.old_path, &f.new_path) {
            (Some(o), Some(n)) if o != n => format!("{} -> {}", o.display(), n.display()),
            (_, Some(p)) | (Some(p), None) => p.display(),
            (None, None) => String::new(),
        };
        out.push_str(&format!("  {} {}\n", f.status.letter(), paths));
    }
    out
}
