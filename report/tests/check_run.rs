//! `report check-run` through the real binary: the body shape GitHub's "Create a check run"
//! endpoint takes, input validation, and the 65535 output limit.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{SHA, code, report, stderr, stdout};
use serde_json::{Value, json};

const HEAD: &str = "0123456789abcdef0123456789abcdef01234567";

/// The shape `gate decide --format json` writes (`agent-team-apply/gate-decision/v1`); each
/// reason gets the code `job-not-successful`.
fn decision(pass: bool, reasons: &[&str]) -> Value {
    let reasons: Vec<Value> = reasons
        .iter()
        .map(|message| json!({"code": "job-not-successful", "job": null, "message": message}))
        .collect();
    let result = if pass { "success" } else { "failure" };
    json!({
        "schema": "agent-team-apply/gate-decision/v1",
        "gate": if pass { "pass" } else { "fail" },
        "run_id": "9876543210",
        "diff_sha256": SHA,
        "required": ["guard", "build-test"],
        "jobs": [
            {"job": "guard", "required": true, "state": "result", "result": "success"},
            {"job": "build-test", "required": true, "state": "result", "result": result},
        ],
        "reasons": reasons,
    })
}

fn check_run(decision: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["check-run", "--decision", "-", "--head-sha", HEAD];
    args.extend_from_slice(extra);
    report(&args, decision)
}

#[test]
fn passing_decision_body() {
    let out = check_run(
        &decision(true, &[]).to_string(),
        &[
            "--details-url",
            "https://github.com/o/r/actions/runs/9876543210",
        ],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let body: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        body,
        json!({
            "name": "agent-team-apply / gate",
            "head_sha": HEAD,
            "status": "completed",
            "conclusion": "success",
            "details_url": "https://github.com/o/r/actions/runs/9876543210",
            "output": {
                "title": "Gate passed",
                "summary": format!("**Gate decision: pass**\n\n- Run: `9876543210`\n- Diff SHA-256: `{SHA}`\n- Reasons: 0\n"),
                "text": "### Reasons\n\nNo reasons recorded.\n",
            }
        })
    );
}

#[test]
fn failing_decision_body_escapes_reasons() {
    let reasons = [
        "job `build-test` result: failure",
        "unexpected job \"x|y\" @org/team #1\n- [ ] injected",
    ];
    let out = check_run(
        &decision(false, &reasons).to_string(),
        &["--name", "gate / custom"],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let body: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(body["name"], "gate / custom");
    assert_eq!(body["conclusion"], "failure");
    assert_eq!(body["status"], "completed");
    assert!(body.get("details_url").is_none());
    assert_eq!(body["output"]["title"], "Gate failed: 2 reason(s)");
    assert_eq!(
        body["output"]["text"],
        "### Reasons\n\n- job-not-successful: job \\`build-test\\` result: failure\n\
         - job-not-successful: unexpected job \"x\\|y\" `@org/team` `#1\\u{a}-` \\[ \\] injected\n"
    );
}

/// One rule for commit ids everywhere: lower-case hex, as git and GitHub print them.
#[test]
fn uppercase_head_sha_is_refused_as_everywhere() {
    let out = report(
        &[
            "check-run",
            "--decision",
            "-",
            "--head-sha",
            &HEAD.to_uppercase(),
        ],
        &decision(true, &[]).to_string(),
    );
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("40 lower-case hex digits"),
        "{}",
        stderr(&out)
    );
}

/// The decision is one document with one definition on both sides: a field it does not define
/// is refused, not ignored.
#[test]
fn unknown_fields_are_refused() {
    let mut d = decision(true, &[]);
    d["added_later"] = json!({"guard": "success"});
    let out = check_run(&d.to_string(), &[]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("unknown field `added_later`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn long_output_is_cut_to_githubs_limit_on_a_char_boundary() {
    let long = "é".repeat(40_000); // 80000 bytes, 40000 chars
    let out = check_run(&decision(false, &[&long, "second"]).to_string(), &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let body: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let text = body["output"]["text"].as_str().unwrap();
    assert!(
        text.len() <= report::check_run::OUTPUT_MAX_BYTES,
        "{}",
        text.len()
    );
    assert!(text.starts_with("### Reasons\n\n- job-not-successful: éé"));
    assert!(
        text.contains("_Truncated: "),
        "{}",
        &text[text.len() - 200..]
    );
    assert!(!text.contains("second"));
}

#[test]
fn invalid_inputs_exit_2() {
    let good = decision(true, &[]);
    let with = |key: &str, value: Value| {
        let mut d = good.clone();
        d[key] = value;
        d.to_string()
    };
    let without = |key: &str| {
        let mut d = good.clone();
        d.as_object_mut().unwrap().remove(key);
        d.to_string()
    };
    for (input, extra, expected) in [
        (
            with("schema", "agent-team-apply/gate-decision/v0".into()),
            vec![],
            "unknown schema",
        ),
        (with("gate", true.into()), vec![], "expected value"),
        (
            with("gate", "PASS".into()),
            vec![],
            "unknown variant `PASS`",
        ),
        (with("reasons", json!(["a string"])), vec![], "invalid type"),
        (
            with("diff_sha256", "nope".into()),
            vec![],
            "a SHA-256 must be",
        ),
        (with("run_id", "".into()), vec![], "a run id must be"),
        (with("run_id", "1\n2".into()), vec![], "a run id must be"),
        (
            with("run_id", json!(null)),
            vec![],
            "not bound to a run and a diff",
        ),
        (without("gate"), vec![], "missing field `gate`"),
        (without("reasons"), vec![], "missing field `reasons`"),
        (without("run_id"), vec![], "not bound to a run and a diff"),
        (
            without("diff_sha256"),
            vec![],
            "not bound to a run and a diff",
        ),
        (without("schema"), vec![], "missing field `schema`"),
        (
            "[]".to_string(),
            vec![],
            "is not a valid agent-team-apply/gate-decision/v1 document",
        ),
        (
            good.to_string(),
            vec!["--details-url", "http://example.com"],
            "details URL",
        ),
        (
            good.to_string(),
            vec!["--details-url", "https://x/a b"],
            "details URL",
        ),
        (good.to_string(), vec!["--name", ""], "check name"),
        (good.to_string(), vec!["--name", "a\u{202e}b"], "check name"),
    ] {
        let out = check_run(&input, &extra);
        assert_eq!(code(&out), 2, "{expected}");
        assert_eq!(stdout(&out), "");
        assert!(
            stderr(&out).contains(expected),
            "{expected}: {}",
            stderr(&out)
        );
    }
    for sha in [
        "",
        "0123",
        &"g".repeat(40),
        &"a".repeat(41),
        &"a".repeat(64),
    ] {
        let out = report(
            &["check-run", "--decision", "-", "--head-sha", sha],
            &good.to_string(),
        );
        assert_eq!(code(&out), 2, "{sha}");
        assert!(stderr(&out).contains("--head-sha"), "{}", stderr(&out));
    }
    let out = report(&["check-run", "--head-sha", HEAD], &good.to_string());
    assert_eq!(code(&out), 2, "missing --decision");
}

#[test]
fn protected_files_are_named_in_the_title_and_listed() {
    let tmp = tempfile::tempdir().unwrap();
    let mut verdict = common::protected_verdict();
    verdict.diff_sha256 = contract::ids::Sha256Hex::parse(SHA).unwrap();
    let path = tmp.path().join("verdict.json");
    std::fs::write(&path, verdict.to_json().unwrap()).unwrap();
    let out = check_run(
        &decision(true, &[]).to_string(),
        &["--verdict", path.to_str().unwrap()],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let body: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(body["conclusion"], "success");
    assert_eq!(
        body["output"]["title"],
        "Gate passed: 2 protected file(s) need review"
    );
    let summary = body["output"]["summary"].as_str().unwrap();
    assert!(
        summary.contains("Protected files need review (2)"),
        "{summary}"
    );
    assert!(
        summary.contains("- `Cargo.toml` (`protect: **/Cargo.toml`)"),
        "{summary}"
    );
    assert!(
        !summary
            .replace(&report::escape::code_span(common::PATH_MARKUP), "")
            .contains("@org")
    );

    // A verdict for another diff is refused, not rendered.
    let mut other = common::protected_verdict();
    other.diff_sha256 = contract::ids::Sha256Hex::parse(&"f".repeat(64)).unwrap();
    std::fs::write(&path, other.to_json().unwrap()).unwrap();
    let out = check_run(
        &decision(true, &[]).to_string(),
        &["--verdict", path.to_str().unwrap()],
    );
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("the verdict is for diff"),
        "{}",
        stderr(&out)
    );
}
