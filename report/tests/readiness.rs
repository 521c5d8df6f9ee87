//! `report readiness`: the readiness document as a step-summary section and annotations, escaped
//! for each sink; inconsistent documents are refused.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::{Command, Stdio};

use guard::readiness::json_v1::{FindingDoc, ReadinessDoc, SCHEMA};

fn doc(result: &str, mode: &str, findings: Vec<FindingDoc>) -> ReadinessDoc {
    ReadinessDoc {
        schema: SCHEMA.into(),
        result: result.into(),
        mode: mode.into(),
        base_commit: "0123456789abcdef0123456789abcdef01234567".into(),
        branch: "agent-team/T-1".into(),
        base_branch: "main".into(),
        repository: "octo/repo".into(),
        workflows: vec![".github/workflows/ci.yml".into()],
        findings,
    }
}

fn hostile() -> FindingDoc {
    FindingDoc {
        rule: "unprotected-secret-job".into(),
        workflow: ".github/workflows/a|b\n::add-mask::x.yml".into(),
        job: Some("dep<img>loy".into()),
        job_name: Some("@team `name`".into()),
        events: vec!["push".into(), "pull_request".into()],
        secrets: vec!["NPM_TOKEN".into()],
        message: "job `dep<img>loy` would run\n::stop-commands::x".into(),
    }
}

fn render(doc: &ReadinessDoc, format: &str) -> (i32, String) {
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
    // Five cells: no raw pipe, newline, angle bracket, backtick or mention survives.
    assert_eq!(row.matches(" | ").count(), 4, "{row}");
    assert!(!row.contains("<img>") && !row.contains('`') && !row.contains("@team"));
    assert!(!md.contains("\n::add-mask::"), "{md}");
    assert!(row.contains("NPM&#95;TOKEN"), "{row}");
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
            line.ends_with("would run\\u{a}::stop-commands::x"),
            "{line}"
        );
    }
    let (_, text) = render(&doc("reported", "report", vec![hostile()]), "annotations");
    assert!(text.starts_with("::warning "), "{text}");
    let (_, text) = render(&doc("pass", "strict", vec![]), "annotations");
    assert!(text.is_empty());
}

#[test]
fn inconsistent_documents_are_refused() {
    for bad in [
        doc("pass", "strict", vec![hostile()]),
        doc("fail", "report", vec![hostile()]),
        doc("reported", "strict", vec![hostile()]),
        doc("fail", "strict", vec![]),
        doc("ok", "strict", vec![]),
        doc("pass", "lenient", vec![]),
        ReadinessDoc {
            schema: "agent-team-apply/readiness/v2".into(),
            ..doc("pass", "strict", vec![])
        },
    ] {
        let (code, out) = render(&bad, "markdown");
        assert_eq!((code, out.as_str()), (2, ""), "{bad:?}");
    }
}
