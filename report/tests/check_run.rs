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
    json!({
        "schema": "agent-team-apply/gate-decision/v1",
        "gate": if pass { "pass" } else { "fail" },
        "run_id": "9876543210",
        "diff_sha256": SHA,
        "required": ["guard", "build-test"],
        "jobs": [],
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
         - job-not-successful: unexpected job \"x\\|y\" @\u{200d}org/team #\u{200d}1\\\\u{a}- \\[ \\] injected\n"
    );
}

#[test]
fn uppercase_head_sha_is_normalised() {
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
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let body: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(body["head_sha"], HEAD);
}

#[test]
fn unknown_fields_are_accepted_for_forward_compatibility() {
    let mut d = decision(true, &[]);
    d["added_later"] = json!({"guard": "success"});
    let out = check_run(&d.to_string(), &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
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
            "unknown gate decision schema",
        ),
        (with("gate", true.into()), vec![], "invalid type"),
        (
            with("gate", "PASS".into()),
            vec![],
            "neither \"pass\" nor \"fail\"",
        ),
        (with("reasons", json!(["a string"])), vec![], "invalid type"),
        (with("diff_sha256", "nope".into()), vec![], "diff_sha256"),
        (with("run_id", "".into()), vec![], "run_id"),
        (with("run_id", "1\n2".into()), vec![], "run_id"),
        (without("gate"), vec![], "missing field `gate`"),
        (without("reasons"), vec![], "missing field `reasons`"),
        (without("run_id"), vec![], "missing field `run_id`"),
        (
            without("diff_sha256"),
            vec![],
            "missing field `diff_sha256`",
        ),
        (without("schema"), vec![], "missing field `schema`"),
        ("[]".to_string(), vec![], "not valid JSON"),
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
        assert!(stderr(&out).contains("head SHA"), "{}", stderr(&out));
    }
    let out = report(&["check-run", "--head-sha", HEAD], &good.to_string());
    assert_eq!(code(&out), 2, "missing --decision");
}

#[test]
fn protected_files_are_named_in_the_title_and_listed() {
    let tmp = tempfile::tempdir().unwrap();
    let mut verdict = common::protected_verdict();
    verdict.diff_sha256 = SHA.to_string();
    let path = tmp.path().join("verdict.json");
    std::fs::write(&path, verdict.to_json()).unwrap();
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
    other.diff_sha256 = "f".repeat(64);
    std::fs::write(&path, other.to_json()).unwrap();
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
