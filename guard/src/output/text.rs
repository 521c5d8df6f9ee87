//! The human form of a verdict, escaped for a terminal.

use crate::escape::neutralize;
use crate::verdict::Verdict;

/// A message, its lines after the first indented beneath the finding, every line escaped on its
/// own: a multi-line message (git's own words) shows as lines, and no line of it can pass for a
/// line of the verdict.
fn push_message(out: &mut String, message: &str) {
    let mut lines = message.split('\n');
    out.push_str(&neutralize(lines.next().unwrap_or_default()));
    for line in lines {
        out.push_str("\n    ");
        out.push_str(&neutralize(line));
    }
}

pub fn render(verdict: &Verdict) -> String {
    let mut out = String::new();
    let mode = verdict.mode.explanation();
    let findings = verdict
        .violations
        .iter()
        .map(|v| ("error", v))
        .chain(verdict.protected.iter().map(|v| ("review", v)));
    for (kind, v) in findings {
        out.push_str(&format!("{kind}[{}]", v.rule));
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
        let (first, rest) = v.message.split_once('\n').unwrap_or((&v.message, ""));
        out.push_str(&neutralize(first));
        if let Some(entry) = &v.policy_entry {
            out.push_str(&format!(" (policy: {})", neutralize(entry)));
        }
        if !rest.is_empty() {
            out.push_str("\n    ");
            push_message(&mut out, rest);
        }
        if let Some(hint) = &v.hint {
            out.push_str("\n    hint: ");
            push_message(&mut out, hint);
        }
        out.push('\n');
    }
    let verdict_word = if verdict.accepted() {
        "ACCEPT"
    } else {
        "REJECT"
    };
    let protected = match verdict.protected.len() {
        0 => String::new(),
        n => format!(", {n} protected file(s) a human must review"),
    };
    out.push_str(&format!(
        "{verdict_word}: {} file(s), {} violation(s){protected}, sha256 {}, {mode}\n",
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
    for exclusion in &verdict.exclusions {
        out.push_str(&format!(
            "note: policy excludes the default {} entry `{}`\n",
            exclusion.list,
            neutralize(&exclusion.pattern)
        ));
    }
    for glob in &verdict.unmatched_scope {
        let hint = if glob.contains(['*', '?', '[', '{']) {
            String::new()
        } else {
            format!(
                " (a directory? `{}/**` matches everything beneath it)",
                neutralize(glob)
            )
        };
        out.push_str(&format!(
            "note: scope glob `{}` matches no path of the diff{hint}\n",
            neutralize(glob)
        ));
    }
    out
}
