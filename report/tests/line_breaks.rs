//! `report`'s text sinks (markdown, workflow-command annotations, the PR body) escape each logical
//! line before joining: a line break inside a verdict message (LF, CR, NEL, U+2028, U+2029) never
//! starts a line of its own, so a message cannot print a forged `DISPATCH: pass (exit 0)` line or a
//! workflow command. Issue 28, "text output".
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{code, hostile_verdict, report, stdout};

const FORGED: &str = "DISPATCH: pass (exit 0)";

const BREAKS: &[(&str, &str)] = &[
    ("LF", "\n"),
    ("CR", "\r"),
    ("CRLF", "\r\n"),
    ("NEL", "\u{85}"),
    ("LS", "\u{2028}"),
    ("PS", "\u{2029}"),
];

fn shown_lines(out: &str) -> Vec<&str> {
    out.split([
        '\n', '\r', '\u{85}', '\u{2028}', '\u{2029}', '\u{b}', '\u{c}',
    ])
    .collect()
}

fn assert_inert(sink: &str, name: &str, out: &str) {
    for line in shown_lines(out) {
        let line = line.trim_start_matches([' ', '|', '>']);
        assert!(
            !line.starts_with(FORGED) && !line.starts_with("::"),
            "{sink} with {name}: a message started a line of its own: {line:?}\n{out}"
        );
    }
    assert!(
        !out.chars()
            .any(|c| c != '\n' && (c.is_control() || matches!(c, '\u{2028}' | '\u{2029}'))),
        "{sink} with {name}: a raw break reached the output:\n{out:?}"
    );
}

fn verdict_with_message(brk: &str) -> String {
    let mut v = hostile_verdict();
    for violation in &mut v.violations {
        violation.message = format!("bad{brk}{FORGED}{brk}::error::forged");
    }
    serde_json::to_string(&v).unwrap()
}

#[test]
fn markdown_and_annotations_keep_a_message_on_its_line() {
    for (name, brk) in BREAKS {
        let verdict = verdict_with_message(brk);
        for format in ["markdown", "annotations"] {
            let out = report(&["render", "--verdict", "-", "--format", format], &verdict);
            assert_eq!(code(&out), 0, "{format} {name}");
            let text = stdout(&out);
            // Annotations are one workflow command per finding: each starts a line, on purpose.
            let text = if format == "annotations" {
                text.lines()
                    .map(|l| l.split_once("::").map_or(l, |(_, rest)| rest))
                    .map(|l| l.split_once("::").map_or(l, |(_, rest)| rest))
                    .collect::<Vec<_>>()
                    .join("\n")
            } else {
                text
            };
            assert_inert(format, name, &text);
        }
    }
}
