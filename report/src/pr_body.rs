//! The title and markdown body of the draft pull request the gate opens, rendered from the guard's
//! verdict document and the identifiers the publication is bound to.
//!
//! The body states what the gate verified itself, from trusted inputs, and what it did not: the
//! build and tests ran in `build-test`, and the gate knows only that job's conclusion. Every string
//! that came from the diff (paths) or from the dispatcher (scope globs, ids) is a code span
//! ([`code_span`], [`table_code_span`]): copied from the page it gives back the exact name, and
//! nothing in it becomes markup, a mention or a link. The title carries no diff-derived text at all.
//!
//! What the body says about file modes is rendered from the publication plan's entries (every
//! path with the mode it had and the mode the commit writes), never assumed. The agent's own
//! title and description, when the dispatcher sent them (signed), appear under a heading that
//! says they are the agent's, escaped for markdown with mentions, references and links
//! neutralised ([`escape_markdown`]).

use contract::verdict::{FileDoc, VerdictDoc};

use crate::escape::{code_span, escape_markdown, table_code_span};
use contract::verdict::ChangeKind;

/// What the pull request is bound to, besides the verdict.
#[derive(Debug, Clone, Copy)]
pub struct PrContext<'a> {
    /// The dispatcher's task id, when given.
    pub task_id: Option<&'a str>,
    /// The workflow run id, when given.
    pub run_id: Option<&'a str>,
    /// The SHA-256 of the diff the gate re-verified.
    pub diff_sha256: &'a str,
    /// The full id of the base commit the change was computed against.
    pub base_commit: &'a str,
    /// Every path the commit writes or deletes, with its modes (the plan's entries); `None`
    /// when not known, and the body then says nothing about modes.
    pub modes: Option<&'a [PathMode<'a>]>,
    /// The agent's words, as the dispatcher sent them (signed, not verified).
    pub agent: AgentWords<'a>,
}

/// One path of the publication with the mode it had (`None`: new) and the mode written
/// (`None`: deleted), as octal numbers (`0o100644`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathMode<'a> {
    pub path: &'a str,
    pub old_mode: Option<u32>,
    pub new_mode: Option<u32>,
}

/// The agent's title and description for the draft (empty: not given).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AgentWords<'a> {
    pub title: &'a str,
    pub description: &'a str,
}

/// The pull-request title: `agent-team-apply <task id>: <N> file(s)`. The task id is included only
/// when it is made of `[A-Za-z0-9._-]`, so that nothing a reader could mistake for markup or a
/// mention reaches the title; nothing derived from the diff is included except the file count.
pub fn title(task_id: Option<&str>, file_count: usize) -> String {
    let files = if file_count == 1 { "file" } else { "files" };
    match task_id.filter(|id| is_plain_id(id)) {
        Some(id) => format!("agent-team-apply {id}: {file_count} {files}"),
        None => format!("agent-team-apply: {file_count} {files}"),
    }
}

fn is_plain_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// The markdown body.
pub fn render(verdict: &VerdictDoc, ctx: &PrContext<'_>) -> String {
    let mut out = String::new();
    out.push_str("## Draft: verified agent change\n\n");
    out.push_str(
        "This draft pull request was prepared by the apply/verify gate. It is a proposal: \
         review it like any other change. The gate never merges.\n\n",
    );
    out.push_str("| | |\n|---|---|\n");
    if let Some(task) = ctx.task_id {
        out.push_str(&format!("| Task | {} |\n", table_code_span(task)));
    }
    if let Some(run) = ctx.run_id {
        out.push_str(&format!("| Workflow run | {} |\n", table_code_span(run)));
    }
    out.push_str(&format!(
        "| Diff SHA-256 | {} |\n",
        table_code_span(ctx.diff_sha256)
    ));
    out.push_str(&format!(
        "| Base commit | {} |\n\n",
        table_code_span(ctx.base_commit)
    ));

    out.push_str(&protected_section(verdict));
    out.push_str(&agent_section(&ctx.agent));
    if !verdict.accepted() {
        out.push_str(
            "### Not verified\n\nThe guard REJECTED this diff; nothing in it is verified.\n\n",
        );
        out.push_str(&files_section(verdict));
        return out;
    }
    out.push_str("### Verified by the gate, from trusted inputs\n\n");
    out.push_str(
        "The gate job read only the base commit and the diff bytes from the trusted source. It \
         did not check out or run the patch, and it read nothing the build-test job produced.\n\n",
    );
    out.push_str(
        "- **Integrity**: the diff bytes hash to the SHA-256 above, compared in constant time \
         with the expected hash.\n",
    );
    let mode = if verdict.mode == contract::verdict::CheckMode::GitCrossChecked {
        "- **Two readings agree**: the guard's strict parser and `git apply --cached` on a \
         throwaway index of the base commit report the same files, statuses and modes; the \
         new file contents were read from that index.\n"
    } else {
        "- **Parser only**: git's reading was NOT cross-checked.\n"
    };
    out.push_str(mode);
    out.push_str(
        "- **Policy**: no path in the denied trust-control surface; path safety; no symlinks, \
         submodules, binary patches, mode or type changes; UTF-8 text content; no duplicate or \
         conflicting paths; size limits. Protected paths, if any, are listed above for review.\n",
    );
    if let Some(line) = crate::markdown::exclusions_line(verdict) {
        out.push_str(&line);
    }
    if verdict.scope.is_empty() {
        out.push_str("- **Declared scope**: none.\n");
    } else {
        let globs: Vec<String> = verdict.scope.iter().map(|g| code_span(g)).collect();
        out.push_str(&format!(
            "- **Declared scope**: every touched path matches one of {}.\n",
            globs.join(", ")
        ));
    }
    if let Some(modes) = ctx.modes {
        out.push_str(&modes_statement(modes));
    }
    out.push('\n');

    out.push_str("### Not verified by the gate\n\n");
    out.push_str(
        "The build and tests ran in the `build-test` job, without credentials. The gate decides \
         only from that job's conclusion as GitHub Actions reports it (`gate decide` over \
         `needs`); it did not read the job's report, logs or artifacts, and nothing here asserts \
         more than that conclusion.\n\n",
    );

    out.push_str(&files_section(verdict));
    out
}

/// What the commit writes, by mode, from the plan's entries: regular files, executable files,
/// symbolic links (under the policy's `symlinks.allow: true`), mode changes and deletions, each
/// with its paths.
fn modes_statement(modes: &[PathMode<'_>]) -> String {
    const REGULAR: u32 = 0o100644;
    const EXECUTABLE: u32 = 0o100755;
    const SYMLINK: u32 = 0o120000;
    let paths = |keep: &dyn Fn(&PathMode<'_>) -> bool| -> Vec<String> {
        modes
            .iter()
            .filter(|m| keep(m))
            .map(|m| code_span(m.path))
            .collect()
    };
    let regular = paths(&|m| m.new_mode == Some(REGULAR));
    let executable = paths(&|m| m.new_mode == Some(EXECUTABLE));
    let links = paths(&|m| m.new_mode == Some(SYMLINK));
    let other = paths(&|m| {
        m.new_mode
            .is_some_and(|n| n != REGULAR && n != EXECUTABLE && n != SYMLINK)
    });
    let changed: Vec<String> = modes
        .iter()
        .filter_map(|m| match (m.old_mode, m.new_mode) {
            (Some(old), Some(new)) if old != new => {
                Some(format!("{} ({old:o} → {new:o})", code_span(m.path)))
            }
            _ => None,
        })
        .collect();
    let deleted = paths(&|m| m.new_mode.is_none());
    let mut parts = Vec::new();
    if !regular.is_empty() {
        parts.push(format!("{} regular file(s), mode 100644", regular.len()));
    }
    if !executable.is_empty() {
        parts.push(format!(
            "{} executable file(s), mode 100755: {}",
            executable.len(),
            executable.join(", ")
        ));
    }
    if !links.is_empty() {
        parts.push(format!(
            "{} symbolic link(s), mode 120000: {}",
            links.len(),
            links.join(", ")
        ));
    }
    if !other.is_empty() {
        parts.push(format!(
            "{} file(s) of another mode: {}",
            other.len(),
            other.join(", ")
        ));
    }
    if !deleted.is_empty() {
        parts.push(format!("{} deletion(s)", deleted.len()));
    }
    let mut out = format!(
        "- **Modes written**: {}. The published tree's id, which covers every mode, was proven \
         equal to git's.\n",
        if parts.is_empty() {
            "nothing".to_owned()
        } else {
            parts.join("; ")
        }
    );
    if !changed.is_empty() {
        out.push_str(&format!("- **Mode changes**: {}.\n", changed.join(", ")));
    }
    out
}

/// The agent's title and description, under a heading that says whose words they are.
fn agent_section(agent: &AgentWords<'_>) -> String {
    if agent.title.is_empty() && agent.description.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "### The agent's words (not verified)\n\n\
         The agent that wrote the diff describes it so; the dispatcher signed these words, the \
         gate checked none of what they claim.\n\n",
    );
    if !agent.title.is_empty() {
        out.push_str(&format!("**{}**\n\n", escape_markdown(agent.title)));
    }
    // Each line inside the quote as a paragraph line, never a block of its own: leading white
    // space (four spaces would open an indented code block) is dropped, as a paragraph drops it
    // anyway, and the line-start markers that remain are escaped by `escape_markdown`.
    for line in agent.description.lines() {
        out.push_str(&format!("> {}\n", escape_markdown(line.trim_start())));
    }
    if !agent.description.is_empty() {
        out.push('\n');
    }
    out
}

/// The protected paths, before anything else: the diff may change them, but a human must review the
/// change (the workflow also labels the pull request).
fn protected_section(verdict: &VerdictDoc) -> String {
    if verdict.protected.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "### \u{26a0}\u{fe0f} Protected files: a human must review these before merging ({})\n\n\
         The policy lists them as protected (`protect:`): build, install and test configuration, \
         toolchains, package manifests and lock files, instructions for agents. The gate let the \
         change through for review; it did not judge it.\n\n",
        verdict.protected.len()
    );
    for finding in &verdict.protected {
        out.push_str(&crate::markdown::protected_item(finding));
    }
    out.push('\n');
    out
}

fn files_section(verdict: &VerdictDoc) -> String {
    let mut out = format!("### Files ({})\n\n", verdict.files.len());
    for file in &verdict.files {
        out.push_str("- ");
        out.push_str(&file_line(file));
        out.push('\n');
    }
    if verdict.files.is_empty() {
        out.push_str("- (none)\n");
    }
    out
}

fn file_line(file: &FileDoc) -> String {
    let verb = match file.status {
        ChangeKind::Added => "added",
        ChangeKind::Deleted => "deleted",
        ChangeKind::Modified => "modified",
        ChangeKind::Renamed => "renamed",
        ChangeKind::Copied => "copied",
    };
    let old = file.old_path.as_ref().map(|p| code_span(&p.sink_text()));
    let new = file.new_path.as_ref().map(|p| code_span(&p.sink_text()));
    match (file.status, old, new) {
        (ChangeKind::Renamed | ChangeKind::Copied, Some(old), Some(new)) => {
            format!("{verb}: {old} → {new}")
        }
        (_, _, Some(path)) | (_, Some(path), None) => format!("{verb}: {path}"),
        (_, None, None) => verb.to_owned(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn verdict(files: Vec<FileDoc>) -> VerdictDoc {
        VerdictDoc {
            schema: contract::verdict::VerdictSchema,
            verdict: contract::verdict::VerdictWord::Accept,
            diff_sha256: contract::ids::Sha256Hex::parse(&"ab".repeat(32)).unwrap(),
            mode: contract::verdict::CheckMode::GitCrossChecked,
            scope: vec!["src/**".to_owned()],
            files,
            violations: Vec::new(),
            protected: vec![],
            unmatched_scope: vec![],
            exclusions: vec![],
        }
    }

    fn file(status: ChangeKind, old: Option<&str>, new: Option<&str>) -> FileDoc {
        FileDoc {
            status,
            old_path: old.map(Into::into),
            new_path: new.map(Into::into),
            old_mode: Some(contract::verdict::FileMode::REGULAR),
            new_mode: Some(contract::verdict::FileMode::REGULAR),
            line: 1,
        }
    }

    #[test]
    fn title_has_no_diff_text() {
        assert_eq!(
            title(Some("task-7.a_b"), 1),
            "agent-team-apply task-7.a_b: 1 file"
        );
        assert_eq!(title(Some("t"), 3), "agent-team-apply t: 3 files");
        assert_eq!(title(None, 0), "agent-team-apply: 0 files");
        assert_eq!(title(Some("@x y"), 2), "agent-team-apply: 2 files");
        assert_eq!(title(Some(""), 2), "agent-team-apply: 2 files");
    }

    #[test]
    fn body_lists_files_escaped_and_states_what_was_verified() {
        let doc = verdict(vec![
            file(ChangeKind::Modified, Some("src/a.rs"), Some("src/a.rs")),
            file(
                ChangeKind::Renamed,
                Some("src/@old"),
                Some("src/new [x](y)"),
            ),
            file(ChangeKind::Deleted, Some("src/#9"), None),
            file(ChangeKind::Added, None, Some("src/n.rs")),
        ]);
        let ctx = PrContext {
            task_id: Some("task-1"),
            run_id: Some("42"),
            diff_sha256: &"ab".repeat(32),
            base_commit: &"c".repeat(40),
            modes: None,
            agent: AgentWords::default(),
        };
        let body = render(&doc, &ctx);
        let e = code_span;
        assert!(body.contains(&format!("- modified: {}\n", e("src/a.rs"))));
        assert!(body.contains(&format!(
            "- renamed: {} → {}\n",
            e("src/@old"),
            e("src/new [x](y)")
        )));
        assert!(body.contains(&format!("- deleted: {}\n", e("src/#9"))));
        assert!(body.contains(&format!("- added: {}\n", e("src/n.rs"))));
        // Outside code spans no markup, mention or reference from a path survives.
        let outside: String = body.split('`').step_by(2).collect();
        for raw in ["@old", "](y)", "[x]", "#9"] {
            assert!(!outside.contains(raw), "raw {raw:?} in the body:\n{body}");
        }
        assert!(body.contains("### Files (4)"));
        assert!(body.contains(&"ab".repeat(32)));
        assert!(body.contains(&format!("| Task | {} |", e("task-1"))));
        assert!(body.contains("| Workflow run | `42` |"));
        assert!(body.contains("git apply \\-\\-cached") || body.contains("`git apply --cached`"));
        assert!(body.contains("Not verified by the gate"));
        assert!(body.contains(&e("src/**")));
    }

    /// A context with no task or run and placeholder hashes.
    fn bare_context() -> PrContext<'static> {
        PrContext {
            task_id: None,
            run_id: None,
            diff_sha256: "x",
            base_commit: "y",
            modes: None,
            agent: AgentWords::default(),
        }
    }

    #[test]
    fn modes_are_stated_from_the_entries() {
        let doc = verdict(vec![file(ChangeKind::Added, None, Some("run.sh"))]);
        let entries = [
            PathMode {
                path: "src/a.rs",
                old_mode: Some(0o100644),
                new_mode: Some(0o100644),
            },
            PathMode {
                path: "run.sh",
                old_mode: None,
                new_mode: Some(0o100755),
            },
            PathMode {
                path: "tool",
                old_mode: Some(0o100644),
                new_mode: Some(0o100755),
            },
            PathMode {
                path: "gone.rs",
                old_mode: Some(0o100644),
                new_mode: None,
            },
            PathMode {
                path: "docs/latest",
                old_mode: None,
                new_mode: Some(0o120000),
            },
        ];
        let ctx = PrContext {
            modes: Some(&entries),
            ..bare_context()
        };
        let body = render(&doc, &ctx);
        assert!(
            body.contains(
                "- **Modes written**: 1 regular file(s), mode 100644; 2 executable file(s), mode 100755: `run.sh`, `tool`; 1 symbolic link(s), mode 120000: `docs/latest`; 1 deletion(s)."
            ),
            "{body}"
        );
        assert!(
            body.contains("- **Mode changes**: `tool` (100644 → 100755).\n"),
            "{body}"
        );
        // Never the unconditional claim of old.
        assert!(
            !body.contains("every file is a regular non-executable file"),
            "{body}"
        );
        let regular_only = [entries[0]];
        let body = render(
            &doc,
            &PrContext {
                modes: Some(&regular_only),
                ..bare_context()
            },
        );
        assert!(
            body.contains("- **Modes written**: 1 regular file(s), mode 100644. "),
            "{body}"
        );
        assert!(!body.contains("100755"), "{body}");
    }

    #[test]
    fn the_agents_words_are_shown_as_theirs_and_neutralised() {
        let doc = verdict(vec![file(ChangeKind::Added, None, Some("a"))]);
        let ctx = PrContext {
            agent: AgentWords {
                title: "Fix @octo/admins [click](https://evil.example)",
                description: "# Approved\nsee #12 and @root\n- done",
            },
            ..bare_context()
        };
        let body = render(&doc, &ctx);
        assert!(
            body.contains("### The agent's words (not verified)"),
            "{body}"
        );
        let section =
            &body[body.find("### The agent's words").unwrap()..body.find("### Verified").unwrap()];
        // Mentions, references and links are code spans, which GitHub renders as text: outside
        // the spans none of them is left.
        let outside: String = section.split('`').step_by(2).collect();
        assert!(
            section.contains("`@octo/admins`") && section.contains("`#12`"),
            "{section}"
        );
        let section = outside.as_str();
        for raw in [
            "@octo",
            "@root",
            "#12",
            "](https://",
            "\n# Approved",
            "\n- done",
        ] {
            assert!(!section.contains(raw), "raw {raw:?} in:\n{section}");
        }
        assert!(section.contains("> \\# Approved\n"), "{section}");
        assert!(!render(&doc, &bare_context()).contains("The agent's words"));
    }

    #[test]
    fn protected_paths_open_the_body() {
        let mut doc = verdict(vec![file(
            ChangeKind::Modified,
            Some("Cargo.toml"),
            Some("Cargo.toml"),
        )]);
        doc.protected = vec![contract::verdict::ViolationDoc {
            rule: contract::rules::RuleId::ProtectedPath,
            path: Some("Cargo.toml".into()),
            old_path: None,
            line: Some(1),
            message: "new path is protected".to_owned(),
            policy_entry: Some("protect: **/Cargo.toml".to_owned()),
            hint: String::new(),
            docs: String::new(),
        }];
        let ctx = bare_context();
        let body = render(&doc, &ctx);
        let section = body
            .find("Protected files: a human must review these before merging (1)")
            .unwrap_or(usize::MAX);
        assert!(
            section < body.find("### Verified by the gate").unwrap_or(0),
            "{body}"
        );
        assert!(
            body.contains("- `Cargo.toml` (`protect: **/Cargo.toml`)\n"),
            "{body}"
        );
        doc.protected.clear();
        assert!(!render(&doc, &ctx).contains("Protected files"));
    }

    #[test]
    fn parser_only_verdicts_say_so() {
        let mut doc = verdict(vec![file(ChangeKind::Added, None, Some("a"))]);
        doc.mode = contract::verdict::CheckMode::ParserOnly;
        let ctx = bare_context();
        let body = render(&doc, &ctx);
        assert!(body.contains("NOT cross-checked"));
        assert!(!body.contains("| Task |"));
        doc.verdict = contract::verdict::VerdictWord::Reject;
        let body = render(&doc, &ctx);
        assert!(body.contains("REJECTED"));
        assert!(!body.contains("Verified by the gate"));
    }
}
