//! Reports bounded for their consumers, through the real binary: an input over the input limit
//! is reduced (head and tail kept, the rest counted), never refused; a markdown section stays
//! within its share of GitHub's 1 MiB step summary; tables and annotations are cut with a count.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{SHA, accept_verdict, code, hostile_verdict, report, stderr, stdout};
use report::bounded::{
    ANNOTATIONS_PER_LEVEL, SECTION_MAX_BYTES, STEP_SUMMARY_MAX_BYTES, TABLE_MAX_ROWS,
};
use serde_json::{Value, json};

const BASE: &str = "89abcdef0123456789abcdef0123456789abcdef";
const VERDICT_SHA: &str = "1111111111111111111111111111111111111111111111111111111111111111";
const BASELINE_SHA: &str = "2222222222222222222222222222222222222222222222222222222222222222";
/// The input limit of `report` (16 MiB).
const INPUT_LIMIT: usize = 16 * 1024 * 1024;

fn run_doc(output_tail: &str) -> Value {
    json!({
        "schema": "agent-team-apply/guard-run/v1",
        "command": ["bash", "-c", "cargo test"],
        "exit": {"code": 0, "signal": null},
        "timed_out": false,
        "duration_ms": 1,
        "isolation": {
            "network": "namespace", "reason": null, "unavailable": null,
            "proof": {"interfaces": ["lo"],
                      "routes": [{"family": "ipv6", "interface": "lo", "destination": "::1/128"}],
                      "netns_differs": true, "userns_differs": true, "loopback_up": true},
            "git_dir_read_only": true
        },
        "env": {"passed": ["HOME", "PATH"], "dropped": []},
        "output_tail": output_tail,
        "output_truncated_bytes": 0
    })
}

fn tree_doc(check: &str, findings: Vec<Value>) -> Value {
    json!({
        "schema": "agent-team-apply/verify-tree/v1",
        "check": check,
        "result": if findings.is_empty() { "pass" } else { "fail" },
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

/// `n` build-wrote findings, `f0` .. `f<n-1>`, each with a message of `message_bytes`.
fn findings(n: usize, message_bytes: usize) -> Vec<Value> {
    (0..n)
        .map(|i| {
            json!({
                "rule": "build-wrote",
                "path": format!("target/../f{i}"),
                "change": "created",
                "message": "m".repeat(message_bytes),
                "policy_entry": null,
                "docs": "README.md#rule-build-wrote"
            })
        })
        .collect()
}

/// `report build-test` over the documents, in `format`.
fn build_test(run: &Value, after: &Value, format: &str) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, doc: &Value| {
        let path = dir.path().join(name);
        std::fs::write(&path, doc.to_string()).unwrap();
        path.to_str().unwrap().to_string()
    };
    let verdict = serde_json::to_value(accept_verdict()).unwrap();
    let args = [
        "build-test".to_string(),
        "--run".into(),
        write("run.json", run),
        "--tree-before".into(),
        write("before.json", &tree_doc("after-apply", vec![])),
        "--tree-after".into(),
        write("after.json", after),
        "--verdict".into(),
        write("verdict.json", &verdict),
        "--format".into(),
        format.into(),
    ];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    report(&args, "")
}

#[test]
fn an_after_build_check_over_the_input_limit_is_reduced_with_a_count_not_refused() {
    let n = 20_000;
    let after = tree_doc("after-build", findings(n, 1000));
    assert!(
        after.to_string().len() > INPUT_LIMIT,
        "the input is over the limit"
    );
    let run = run_doc("ok\n");

    let out = build_test(&run, &after, "json");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let tree = &doc["tree_after_build"];
    let kept = tree["findings"].as_array().unwrap();
    let left_out = tree["findings_left_out"].as_u64().unwrap();
    assert!(left_out > 0);
    assert_eq!(kept.len() as u64 + left_out, n as u64);
    // The head and the tail of the list.
    assert_eq!(kept[0]["path"], "target/../f0");
    assert_eq!(
        kept[kept.len() - 1]["path"],
        format!("target/../f{}", n - 1)
    );
    assert_eq!(
        doc["left_out"],
        json!([{"input": "--tree-after", "pointer": "/findings", "count": left_out, "unit": "elements"}])
    );
    assert!(stdout(&out).len() <= INPUT_LIMIT);

    let out = build_test(&run, &after, "markdown");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let md = stdout(&out);
    assert!(md.len() <= SECTION_MAX_BYTES, "{} bytes", md.len());
    assert!(
        md.contains(&format!("({n} finding(s), 42 entries)")),
        "the true count"
    );
    assert!(
        md.contains(&format!(
            "_{} of {n} finding(s) not shown (this section shows at most {TABLE_MAX_ROWS})",
            n - TABLE_MAX_ROWS
        )),
        "{}",
        &md[md.len().saturating_sub(3000)..]
    );
    assert!(md.contains(&format!("{left_out} were left out of its input")));
    assert!(md.contains("### Left out of the inputs"));
}

#[test]
fn a_run_report_whose_output_is_over_the_input_limit_keeps_its_head_and_tail() {
    // Control characters: each is six bytes of JSON (`\u0001`), as guard writes them.
    let body = "\u{1}".repeat(4 * 1024 * 1024);
    let tail = format!("FIRST LINE\n{body}\nLAST LINE\n");
    let run = run_doc(&tail);
    assert!(run.to_string().len() > INPUT_LIMIT);
    let after = tree_doc("after-build", vec![]);

    let out = build_test(&run, &after, "json");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let kept = doc["build"]["output_tail"].as_str().unwrap();
    assert!(kept.starts_with("FIRST LINE\n"));
    assert!(kept.ends_with("\nLAST LINE\n"));
    let note = &doc["left_out"][0];
    assert_eq!(note["input"], "--run");
    assert_eq!(note["pointer"], "/output_tail");
    assert_eq!(note["unit"], "bytes");
    let count = note["count"].as_u64().unwrap();
    // What is kept is the tail less what was left out, plus the marker that says so.
    let marker = report::bounded::string_cut_marker(count);
    assert_eq!(
        kept.len() as u64,
        tail.len() as u64 - count + marker.len() as u64
    );
    assert!(kept.contains(&format!(
        "[... report: {count} bytes of this text left out here ...]"
    )));

    let out = build_test(&run, &after, "markdown");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let md = stdout(&out);
    assert!(md.len() <= SECTION_MAX_BYTES, "{} bytes", md.len());
    assert!(md.contains("LAST LINE"));
    assert!(md.contains("earlier byte(s) not shown"));
}

#[test]
fn the_step_summary_of_the_report_step_stays_within_githubs_limit() {
    // Under the input limit, but a table of every finding and a long output would be megabytes.
    let n = 5_000;
    let after = tree_doc("after-build", findings(n, 300));
    let long_line = "x".repeat(3 * 1024 * 1024);
    let run = run_doc(&format!("{long_line}\n"));
    let out = build_test(&run, &after, "markdown");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let build_md = stdout(&out);
    assert!(
        build_md.len() <= SECTION_MAX_BYTES,
        "{} bytes",
        build_md.len()
    );
    assert_eq!(
        build_md.matches("| `build-wrote` |").count(),
        TABLE_MAX_ROWS,
        "the table is cut to its rows"
    );
    assert!(build_md.contains(&format!(
        "_{} of {n} finding(s) not shown",
        n - TABLE_MAX_ROWS
    )));
    assert!(build_md.contains("the JSON report (the job's artifact) lists them all"));
    // The output: its end, in one closed code block, and how much is not shown.
    assert!(build_md.contains("earlier byte(s) not shown"));
    assert_eq!(
        build_md.matches("\n```\n").count() % 2,
        0,
        "fences balanced"
    );

    // The verdict the same step renders first, with as many violations.
    let mut verdict = hostile_verdict();
    let one = verdict.violations[1].clone();
    verdict.violations = vec![one; n];
    let verdict_json = verdict.to_json().unwrap();
    let out = report(
        &["render", "--verdict", "-", "--format", "markdown"],
        &verdict_json,
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let verdict_md = stdout(&out);
    assert!(verdict_md.len() <= SECTION_MAX_BYTES);
    assert!(verdict_md.contains(&format!("### Violations ({n})")));
    assert!(verdict_md.contains(&format!(
        "_{} of {n} violation(s) not shown",
        n - TABLE_MAX_ROWS
    )));
    assert!(verdict_md.len() + build_md.len() <= STEP_SUMMARY_MAX_BYTES);

    // Annotations: GitHub shows ten per level and step; the rest is one notice with the count.
    let out = report(
        &["render", "--verdict", "-", "--format", "annotations"],
        &verdict_json,
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let annotations = stdout(&out);
    let errors = annotations
        .lines()
        .filter(|l| l.starts_with("::error "))
        .count();
    assert_eq!(errors, ANNOTATIONS_PER_LEVEL);
    let notices: Vec<&str> = annotations
        .lines()
        .filter(|l| l.starts_with("::notice "))
        .collect();
    assert_eq!(notices.len(), 1, "{annotations}");
    assert!(
        notices[0].contains(&format!(
            "{} more violation(s) and 0 more protected path(s) not annotated",
            n - ANNOTATIONS_PER_LEVEL
        )),
        "{}",
        notices[0]
    );
}
