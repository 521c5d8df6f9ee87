//! `report readiness`: the readiness document as a step-summary section and annotations, escaped
//! for each sink; inconsistent documents are refused.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::{Command, Stdio};

use serde_json::{Value, json};

/// A readiness document as JSON: any value may be wrong on purpose.
fn doc(result: &str, mode: &str, findings: Vec<Value>) -> Value {
    json!({
        "schema": "agent-team-apply/readiness/v1",
        "result": result,
        "mode": mode,
        "base_commit": "0123456789abcdef0123456789abcdef01234567",
        "default_head": "89abcdef0123456789abcdef0123456789abcdef",
        "branch": "agent-team/T-1",
        "base_branch": "main",
        "repository": "octo/repo",
        "workflows": [".github/workflows/ci.yml"],
        "default_head_workflows": [".github/workflows/ci.yml"],
        "findings": findings,
        "cleared": [],
    })
}

fn hostile() -> Value {
    json!({
        "rule": "unprotected-secret-job",
        "workflow": ".github/workflows/a|b\n::add-mask::x.yml",
        "commit": "0123456789abcdef0123456789abcdef01234567",
        "job": "dep<img>loy",
        "job_name": "@team `name`",
        "events": ["push", "pull_request"],
        "secrets": ["NPM_TOKEN"],
        "credentials": ["secret NPM_TOKEN"],
        "detail": null,
        "accepted": null,
        "message": "job `dep<img>loy` would run\n::stop-commands::x",
        "fix": "drop\n::stop-commands::y",
    })
}

fn accepted() -> Value {
    let mut f = hostile();
    f["accepted"] = json!("read-only <b>token</b>");
    f
}

fn render(doc: &Value, format: &str) -> (i32, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_report"))
        .args(["readiness", "--doc", "-", "--format", format])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let json = serde_json::to_string(doc).unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), json.as_bytes()).unwrap();
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
    )
}

#[test]
fn markdown_lists_every_finding_escaped() {
    let (code, md) = render(&doc("fail", "strict", vec![hostile()]), "markdown");
    assert_eq!(code, 0);
    assert!(md.contains("**The run stops here**"), "{md}");
    let rows: Vec<&str> = md
        .lines()
        .filter(|l| l.starts_with("| unprotected"))
        .collect();
    assert_eq!(rows.len(), 1, "{md}");
    let row = rows[0];
    // Seven cells: the pipe in the path is escaped inside its code span, the names are code spans,
    // the display name is escaped prose (no tag, no raw backtick, no mention).
    assert_eq!(row.matches(" | ").count(), 6, "{row}");
    assert!(
        row.contains("`.github/workflows/a\\|b\\u{a}::add-mask::x.yml`"),
        "{row}"
    );
    assert!(row.contains("`dep<img>loy`"), "{row}");
    assert!(!row.contains("(@team") && !row.contains(" `name`"), "{row}");
    assert!(
        row.contains("`secret NPM_TOKEN`") && row.contains("| push, pull_request |"),
        "{row}"
    );
    assert!(row.ends_with("| no |"), "{row}");
    assert!(!md.contains("\n::add-mask::"), "{md}");
}

#[test]
fn markdown_lists_cleared_jobs_with_their_reasons_escaped() {
    let mut v = doc("pass", "strict", vec![]);
    v["cleared"] = json!([{
        "workflow": ".github/workflows/n`o|t.yml",
        "commit": "0123456789abcdef0123456789abcdef01234567",
        "job": "notify",
        "job_name": null,
        "events": ["push"],
        "credentials": ["secret SLACK_WEBHOOK"],
        "reason": "runs no code of the branch <img src=x> @team\n::add-mask::x",
    }]);
    let (code, md) = render(&v, "markdown");
    assert_eq!(code, 0);
    let line = md
        .lines()
        .find(|l| l.starts_with("- ") && l.contains("notify"))
        .unwrap_or_else(|| panic!("{md}"));
    assert!(
        line.contains("(push): runs no code of the branch"),
        "{line}"
    );
    // The tag is escaped, the mention is a code span, the newline is visible.
    assert!(
        line.contains("\\<img src=x\\>") && !line.contains(" @team"),
        "{line}"
    );
    assert!(!md.contains("\n::add-mask::"), "{md}");
    // Annotations are for findings only.
    let (_, text) = render(&v, "annotations");
    assert!(text.is_empty(), "{text}");
}

#[test]
fn markdown_of_a_pass_and_of_a_report() {
    let (_, md) = render(&doc("pass", "strict", vec![]), "markdown");
    assert!(md.contains("No job of the 1 workflow file(s)"), "{md}");
    assert!(!md.contains("| rule |"));
    let (_, md) = render(&doc("reported", "report", vec![hostile()]), "markdown");
    assert!(md.contains("Reported only"), "{md}");
}

#[test]
fn annotations_are_one_command_per_finding_at_the_level_of_the_mode() {
    let (_, text) = render(
        &doc("fail", "strict", vec![hostile(), hostile()]),
        "annotations",
    );
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    for line in &lines {
        // One line each: the newlines became visible `\u{a}`, the property delimiters are encoded.
        assert!(
            line.starts_with(
                "::error file=.github/workflows/a|b\\u{a}%3A%3Aadd-mask%3A%3Ax.yml,title=readiness%3A unprotected-secret-job::"
            ),
            "{line}"
        );
        assert!(
            line.ends_with("would run\\u{a}::stop-commands::x (fix: drop\\u{a}::stop-commands::y)"),
            "{line}"
        );
    }
    let (_, text) = render(&doc("reported", "report", vec![hostile()]), "annotations");
    assert!(text.starts_with("::warning "), "{text}");
    let (_, text) = render(&doc("pass", "strict", vec![]), "annotations");
    assert!(text.is_empty());
}

#[test]
fn accepted_findings_are_shown_with_their_reason_and_do_not_fail() {
    let (code, md) = render(&doc("pass", "strict", vec![accepted()]), "markdown");
    assert_eq!(code, 0);
    assert!(md.contains("accepted by the policy"), "{md}");
    let row = md.lines().find(|l| l.starts_with("| unprotected")).unwrap();
    assert!(
        row.contains("| yes: read-only &lt;b&gt;token&lt;/b&gt; |")
            || row.contains("| yes: read-only"),
        "{row}"
    );
    assert!(!row.contains("<b>"), "{row}");
    let (_, text) = render(
        &doc("fail", "strict", vec![accepted(), hostile()]),
        "annotations",
    );
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("::warning ") && lines[0].contains("accepted by the policy"),
        "{text}"
    );
    assert!(lines[1].starts_with("::error "), "{text}");
}

#[test]
fn inconsistent_documents_are_refused() {
    for bad in [
        doc("pass", "strict", vec![hostile()]),
        doc("fail", "report", vec![hostile()]),
        doc("reported", "strict", vec![hostile()]),
        doc("fail", "strict", vec![]),
        doc("fail", "strict", vec![accepted()]),
        doc("pass", "strict", vec![accepted(), hostile()]),
        doc("ok", "strict", vec![]),
        doc("pass", "lenient", vec![]),
        {
            let mut v = doc("pass", "strict", vec![]);
            v["schema"] = json!("agent-team-apply/readiness/v2");
            v
        },
        {
            let mut v = doc("fail", "strict", vec![hostile()]);
            v["findings"][0]["rule"] = json!("made-up-rule");
            v
        },
    ] {
        let (code, out) = render(&bad, "markdown");
        assert_eq!((code, out.as_str()), (2, ""), "{bad:?}");
    }
}
