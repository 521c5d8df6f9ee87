//! `report build-test` through the real binary: the non-authoritative report over guard's run and
//! tree-check documents, its escaping of attacker-written build output, and its refusal of
//! documents that do not belong together.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::Path;

use common::{SHA, accept_verdict, code, report, stderr, stdout};
use serde_json::{Value, json};

const BASE: &str = "89abcdef0123456789abcdef0123456789abcdef";
const VERDICT_SHA: &str = "1111111111111111111111111111111111111111111111111111111111111111";
const BASELINE_SHA: &str = "2222222222222222222222222222222222222222222222222222222222222222";

/// Build output an attacker controls: it tries to close the `<pre>`, open HTML, ping a team,
/// start a table and a workflow command, and hide text behind a bidi override.
const HOSTILE_TAIL: &str = "compiling\n</pre><img src=x onerror=alert(1)>\n@org/team #1 | `x` [l](https://evil.example)\n::warning::forged\nrtl\u{202e}txt\n";

fn run_doc() -> Value {
    json!({
        "schema": "agent-team-apply/guard-run/v1",
        "command": ["sh", "-c", "cargo test <&2 | tee @log"],
        "exit": {"code": 101, "signal": null},
        "timed_out": false,
        "duration_ms": 1234,
        "isolation": {
            "network": "namespace", "reason": null, "unavailable": null,
            "proof": {"interfaces": ["lo"],
                      "routes": [{"family": "ipv6", "interface": "lo", "destination": "::1/128"}],
                      "netns_differs": true, "userns_differs": true, "loopback_up": true},
            "git_dir_read_only": true
        },
        "env": {"passed": ["HOME", "PATH"], "dropped": ["GITHUB_TOKEN"]},
        "output_tail": HOSTILE_TAIL,
        "output_truncated_bytes": 7
    })
}

fn tree_doc(check: &str, findings: Value) -> Value {
    let result = if findings.as_array().unwrap().is_empty() {
        "pass"
    } else {
        "fail"
    };
    json!({
        "schema": "agent-team-apply/verify-tree/v1",
        "check": check,
        "result": result,
        "base_commit": BASE,
        "diff_sha256": SHA,
        "verdict_sha256": VERDICT_SHA,
        "scope": ["src/**"],
        "entries": 42,
        "baseline_sha256": BASELINE_SHA,
        "snapshot_sha256": if check == "after-apply" { json!(BASELINE_SHA) } else { json!(null) },
        "findings": findings
    })
}

fn build_wrote() -> Value {
    json!([{
        "rule": "build-wrote",
        "path": ".github/workflows/x.yml|@org",
        "change": "created",
        "message": "the build created a file in the denied trust-control surface",
        "policy_entry": "deny: .github/**",
        "docs": "javascript:alert(1)"
    }])
}

struct Inputs {
    _dir: tempfile::TempDir,
    args: Vec<String>,
}

fn inputs(run: &Value, before: &Value, after: &Value, format: &str) -> Inputs {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, doc: &Value| {
        let path = dir.path().join(name);
        std::fs::write(&path, doc.to_string()).unwrap();
        path.to_str().unwrap().to_string()
    };
    let verdict = serde_json::to_value(accept_verdict()).unwrap();
    let args = vec![
        "build-test".to_string(),
        "--run".into(),
        write("run.json", run),
        "--tree-before".into(),
        write("before.json", before),
        "--tree-after".into(),
        write("after.json", after),
        "--verdict".into(),
        write("verdict.json", &verdict),
        "--format".into(),
        format.into(),
    ];
    Inputs { _dir: dir, args }
}

fn build_test(run: &Value, before: &Value, after: &Value, format: &str) -> std::process::Output {
    let inputs = inputs(run, before, after, format);
    let args: Vec<&str> = inputs.args.iter().map(String::as_str).collect();
    report(&args, "")
}

#[test]
fn json_report_is_marked_non_authoritative_and_carries_everything() {
    let out = build_test(
        &run_doc(),
        &tree_doc("after-apply", json!([])),
        &tree_doc("after-build", build_wrote()),
        "json",
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(doc["schema"], "agent-team-apply/build-test-report/v1");
    assert_eq!(doc["authoritative"], false);
    assert!(
        doc["note"]
            .as_str()
            .unwrap()
            .contains("Nothing downstream may decide on this report")
    );
    assert_eq!(doc["diff_sha256"], SHA);
    assert_eq!(doc["base_commit"], BASE);
    assert_eq!(doc["verdict"], "accept");
    let build = &doc["build"];
    assert_eq!(
        build["command"],
        json!(["sh", "-c", "cargo test <&2 | tee @log"])
    );
    assert_eq!(build["exit"]["code"], 101);
    assert_eq!(build["passed"], false);
    assert_eq!(build["duration_ms"], 1234);
    assert_eq!(build["network"]["network"], "namespace");
    assert_eq!(build["network"]["proof"]["interfaces"], json!(["lo"]));
    assert_eq!(
        build["output_tail"], HOSTILE_TAIL,
        "JSON keeps the raw tail"
    );
    assert_eq!(build["output_truncated_bytes"], 7);
    assert_eq!(doc["tree_after_apply"]["result"], "pass");
    assert_eq!(doc["tree_after_build"]["result"], "fail");
    assert_eq!(
        doc["tree_after_build"]["findings"][0]["path"],
        ".github/workflows/x.yml|@org"
    );
}

#[test]
fn markdown_escapes_the_build_output_and_findings() {
    let out = build_test(
        &run_doc(),
        &tree_doc("after-apply", json!([])),
        &tree_doc("after-build", build_wrote()),
        "markdown",
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let md = stdout(&out);
    assert!(md.starts_with("## Build-test report (not authoritative)\n"));
    assert!(md.contains("> **NOT AUTHORITATIVE"));
    assert!(md.contains("- **Outcome (as reported):** fail"));
    assert!(md.contains("- **Exit:** code 101"));
    assert!(md.contains("all through lo"));
    // The output is one fenced code block, where GitHub renders nothing: each line is exactly
    // the build's line (a test name like `gitignore::tests::cs4` copies as it is), neutralized.
    let (before, rest) = md.split_once("\n```\n").unwrap();
    let (inside, after) = rest.split_once("\n```\n").unwrap();
    assert_eq!(
        inside,
        "compiling\n\
         </pre><img src=x onerror=alert(1)>\n\
         @org/team #1 | `x` [l](https://evil.example)\n\
         ::warning::forged\n\
         rtl\\u{202e}txt"
    );
    assert!(!md.contains('\u{200d}'), "{md}");
    assert!(after.is_empty(), "{after}");
    // Paths are code spans, where GitHub resolves no markup, mention or link; outside them and
    // the block none of the hostile text survives.
    let outside: String = before.split('`').step_by(2).collect();
    for raw in ["<img", "@org", "](https", "\u{202e}", "javascript:"] {
        assert!(!outside.contains(raw), "raw {raw:?} in {md}");
    }
    assert!(!md.contains("\u{202e}"), "{md}");
    assert!(
        md.contains("| `build-wrote` | `.github/workflows/x.yml\\|@org` | created |"),
        "{md}"
    );
    assert!(md.contains("earlier byte(s) not shown"));
}

#[test]
fn opted_out_network_is_said_plainly() {
    let mut run = run_doc();
    run["isolation"] = json!({
        "network": "opted-out", "reason": "harden-runner <blocks> egress",
        "unavailable": "no unshare", "proof": null, "git_dir_read_only": false
    });
    let out = build_test(
        &run,
        &tree_doc("after-apply", json!([])),
        &tree_doc("after-build", json!([])),
        "markdown",
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out)
            .contains("NOT isolated by guard run (opted out: harden-runner \\<blocks\\> egress"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn documents_that_do_not_belong_together_are_refused() {
    let before = tree_doc("after-apply", json!([]));
    let after = tree_doc("after-build", json!([]));
    let with = |doc: &Value, key: &str, value: Value| {
        let mut doc = doc.clone();
        doc[key] = value;
        doc
    };
    let other = "3".repeat(64);
    let cases: Vec<(Value, Value, Value, &str)> = vec![
        (
            run_doc(),
            after.clone(),
            before.clone(),
            "is not the check after apply",
        ),
        (
            run_doc(),
            with(&before, "diff_sha256", json!(other)),
            after.clone(),
            "another diff",
        ),
        (
            run_doc(),
            before.clone(),
            with(&after, "verdict_sha256", json!(other)),
            "different verdict files",
        ),
        (
            run_doc(),
            before.clone(),
            with(&after, "baseline_sha256", json!(other)),
            "another baseline",
        ),
        (
            run_doc(),
            before.clone(),
            with(&after, "base_commit", json!("0".repeat(40))),
            "different base commits",
        ),
        (
            with(&run_doc(), "schema", json!("agent-team-apply/guard-run/v2")),
            before.clone(),
            after.clone(),
            "schema",
        ),
        (
            run_doc(),
            with(&before, "findings", build_wrote()),
            after.clone(),
            "the result is \"pass\" but lists",
        ),
        (
            run_doc(),
            with(&before, "extra", json!(1)),
            after.clone(),
            "unknown field",
        ),
    ];
    for (run, before, after, message) in cases {
        let out = build_test(&run, &before, &after, "json");
        assert_eq!(code(&out), 2, "{message}: {}", stdout(&out));
        assert!(stdout(&out).is_empty());
        assert!(
            stderr(&out).contains(message),
            "{message}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn a_missing_input_is_an_error() {
    let out = report(
        &[
            "build-test",
            "--run",
            "/nonexistent/run.json",
            "--tree-before",
            "/nonexistent/a.json",
            "--tree-after",
            "/nonexistent/b.json",
            "--verdict",
            "/nonexistent/v.json",
        ],
        "",
    );
    assert_eq!(code(&out), 2);
    assert!(!Path::new("/nonexistent/run.json").exists());
}

/// Regression: the summary inserted U+200D after every `:` of the build output and wrote the rest
/// as character references, so `gitignore::tests::cs4` could not be copied from it.
#[test]
fn test_names_and_paths_in_the_output_copy_exactly() {
    let mut run = run_doc();
    run["output_tail"] = json!(
        "test gitignore::tests::cs4 ... FAILED\nthread 'main' panicked at src/lib.rs:12:5:\n"
    );
    run["command"] = json!(["cargo", "test", "--locked", "--", "gitignore::tests"]);
    let out = build_test(
        &run,
        &tree_doc("after-apply", json!([])),
        &tree_doc("after-build", json!([])),
        "markdown",
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let md = stdout(&out);
    assert!(!md.contains('\u{200d}') && !md.contains("&#"), "{md}");
    assert!(
        md.contains(
            "\ntest gitignore::tests::cs4 ... FAILED\nthread 'main' panicked at src/lib.rs:12:5:\n"
        ),
        "{md}"
    );
    assert!(
        md.contains("- **Command:** `cargo test --locked -- gitignore::tests`"),
        "{md}"
    );
}
