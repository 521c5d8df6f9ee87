//! `gate decide`: the library decision over every combination of job results, the malformed inputs
//! that must fail closed, a property test, and the binary end to end (exit codes, the
//! `GITHUB_OUTPUT` file read back with GitHub's documented format).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use gate::decide::{JobResult, MAX_NEEDS_BYTES, Reason, ReasonCode, decide};
use gate::output::json_v1::{DecisionDoc, SCHEMA};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

const SHA: &str = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
const RUN: &str = "8127364512";

/// What one job looks like in needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cell {
    Success,
    Failure,
    Cancelled,
    Skipped,
    Missing,
    Neutral,
    Empty,
}

const CELLS: [Cell; 7] = [
    Cell::Success,
    Cell::Failure,
    Cell::Cancelled,
    Cell::Skipped,
    Cell::Missing,
    Cell::Neutral,
    Cell::Empty,
];

impl Cell {
    /// The `result` string, or `None` when the job is absent.
    fn result(self) -> Option<&'static str> {
        match self {
            Cell::Success => Some("success"),
            Cell::Failure => Some("failure"),
            Cell::Cancelled => Some("cancelled"),
            Cell::Skipped => Some("skipped"),
            Cell::Missing => None,
            Cell::Neutral => Some("neutral"),
            Cell::Empty => Some(""),
        }
    }
}

/// `toJSON(needs)` in GitHub's shape for these jobs (absent ones left out).
fn needs_json(jobs: &[(&str, Cell)]) -> String {
    let mut map = Map::new();
    for (name, cell) in jobs {
        if let Some(result) = cell.result() {
            map.insert(
                (*name).to_owned(),
                json!({"result": result, "outputs": {"verdict": "accept"}}),
            );
        }
    }
    Value::Object(map).to_string()
}

fn codes(reasons: &[Reason]) -> Vec<ReasonCode> {
    reasons.iter().map(Reason::code).collect()
}

// ---------------------------------------------------------------------------------------------
// Exhaustive over 2 and 3 required jobs.

fn check_combination(names: &[&str], cells: &[Cell]) {
    let jobs: Vec<(&str, Cell)> = names.iter().copied().zip(cells.iter().copied()).collect();
    let needs = needs_json(&jobs);
    let d = decide(needs.as_bytes(), names, RUN, SHA);
    let all_success = cells.iter().all(|c| *c == Cell::Success);
    assert_eq!(d.pass(), all_success, "{jobs:?}");
    assert_eq!(d.reasons.is_empty(), all_success, "{jobs:?}");

    // Exactly one reason per bad job, naming it, with the right code and result.
    let bad: Vec<(&str, Cell)> = jobs
        .iter()
        .copied()
        .filter(|(_, c)| *c != Cell::Success)
        .collect();
    assert_eq!(d.reasons.len(), bad.len(), "{jobs:?}: {:?}", d.reasons);
    for ((name, cell), reason) in bad.iter().zip(&d.reasons) {
        assert_eq!(reason.job(), Some(*name), "{jobs:?}");
        match (cell, reason) {
            (Cell::Missing, Reason::MissingJob { job }) => assert_eq!(job, name),
            (_, Reason::JobNotSuccessful { job, result }) => {
                assert_eq!(job, name);
                assert_eq!(Some(result.as_str()), cell.result());
                assert_ne!(*result, JobResult::Success);
            }
            other => panic!("unexpected reason for {jobs:?}: {other:?}"),
        }
        assert!(reason.to_string().contains(&format!("`{name}`")));
    }
    let named: BTreeSet<&str> = d.reasons.iter().filter_map(Reason::job).collect();
    let expected: BTreeSet<&str> = bad.iter().map(|(n, _)| *n).collect();
    assert_eq!(named, expected);
    assert_eq!(d.jobs.len(), names.len());
    assert!(d.jobs.iter().all(|j| j.required));
}

#[test]
fn exhaustive_two_required_jobs() {
    let names = ["guard", "build-test"];
    let mut count = 0;
    for a in CELLS {
        for b in CELLS {
            check_combination(&names, &[a, b]);
            count += 1;
        }
    }
    assert_eq!(count, 49);
}

#[test]
fn exhaustive_three_required_jobs() {
    let names = ["guard", "build-test", "lint"];
    let mut count = 0;
    for a in CELLS {
        for b in CELLS {
            for c in CELLS {
                check_combination(&names, &[a, b, c]);
                count += 1;
            }
        }
    }
    assert_eq!(count, 343);
}

// ---------------------------------------------------------------------------------------------
// Malformed and adversarial inputs: each fails with exactly these reasons.

#[test]
fn malformed_inputs_fail_closed() {
    use ReasonCode::*;
    let two = ["guard", "build-test"];
    let cases: &[(&str, &str, &[ReasonCode])] = &[
        ("empty text", "", &[MalformedNeeds]),
        ("whitespace only", " \n", &[MalformedNeeds]),
        (
            "truncated",
            r#"{"guard": {"result": "success"}"#,
            &[MalformedNeeds],
        ),
        ("not json", "success", &[MalformedNeeds]),
        ("single quotes", "{'guard': {}}", &[MalformedNeeds]),
        (
            "trailing comma",
            r#"{"guard": {"result": "success"},}"#,
            &[MalformedNeeds],
        ),
        ("two documents", "{} {}", &[MalformedNeeds]),
        ("comment", "{} // ok", &[MalformedNeeds]),
        ("array", "[]", &[NeedsNotObject]),
        ("string", r#""success""#, &[NeedsNotObject]),
        ("null", "null", &[NeedsNotObject]),
        ("number", "0", &[NeedsNotObject]),
        ("boolean", "true", &[NeedsNotObject]),
        ("empty object", "{}", &[MissingJob, MissingJob]),
        (
            "result true",
            r#"{"guard": {"result": true}, "build-test": {"result": "success"}}"#,
            &[ResultNotString],
        ),
        (
            "result null",
            r#"{"guard": {"result": null}, "build-test": {"result": "success"}}"#,
            &[ResultNotString],
        ),
        (
            "result array",
            r#"{"guard": {"result": ["success"]}, "build-test": {"result": "success"}}"#,
            &[ResultNotString],
        ),
        (
            "result object",
            r#"{"guard": {"result": {"result": "success"}}, "build-test": {"result": "success"}}"#,
            &[ResultNotString],
        ),
        (
            "result number",
            r#"{"guard": {"result": 0}, "build-test": {"result": "success"}}"#,
            &[ResultNotString],
        ),
        (
            "missing result",
            r#"{"guard": {"outputs": {}}, "build-test": {"result": "success"}}"#,
            &[MissingResult],
        ),
        (
            "result key in another case",
            r#"{"guard": {"Result": "success"}, "build-test": {"result": "success"}}"#,
            &[MissingResult],
        ),
        (
            "job is a string",
            r#"{"guard": "success", "build-test": {"result": "success"}}"#,
            &[JobNotObject],
        ),
        (
            "job is null",
            r#"{"guard": null, "build-test": {"result": "success"}}"#,
            &[JobNotObject],
        ),
        (
            "duplicated job, success last",
            r#"{"guard": {"result": "failure"}, "build-test": {"result": "success"}, "guard": {"result": "success"}}"#,
            &[DuplicateKey],
        ),
        (
            "duplicated job, success first",
            r#"{"guard": {"result": "success"}, "guard": {"result": "failure"}, "build-test": {"result": "success"}}"#,
            &[DuplicateKey],
        ),
        (
            "duplicated job, both success",
            r#"{"guard": {"result": "success"}, "guard": {"result": "success"}, "build-test": {"result": "success"}}"#,
            &[DuplicateKey],
        ),
        (
            "duplicated job spelled with an escape",
            r#"{"guard": {"result": "failure"}, "gu\u0061rd": {"result": "success"}, "build-test": {"result": "success"}}"#,
            &[DuplicateKey],
        ),
        (
            "duplicated result key",
            r#"{"guard": {"result": "failure", "result": "success"}, "build-test": {"result": "success"}}"#,
            &[DuplicateKey],
        ),
        (
            "duplicated output key",
            r#"{"guard": {"result": "success", "outputs": {"a": "1", "a": "2"}}, "build-test": {"result": "success"}}"#,
            &[DuplicateKey],
        ),
        (
            "extra job",
            r#"{"guard": {"result": "success"}, "build-test": {"result": "success"}, "deploy": {"result": "success"}}"#,
            &[UnexpectedJob],
        ),
        (
            "job name in another case",
            r#"{"Guard": {"result": "success"}, "build-test": {"result": "success"}}"#,
            &[MissingJob, UnexpectedJob],
        ),
        (
            "Success",
            r#"{"guard": {"result": "Success"}, "build-test": {"result": "success"}}"#,
            &[JobNotSuccessful],
        ),
        (
            "SUCCESS",
            r#"{"guard": {"result": "SUCCESS"}, "build-test": {"result": "success"}}"#,
            &[JobNotSuccessful],
        ),
        (
            "leading space",
            r#"{"guard": {"result": " success"}, "build-test": {"result": "success"}}"#,
            &[JobNotSuccessful],
        ),
        (
            "trailing space",
            r#"{"guard": {"result": "success "}, "build-test": {"result": "success"}}"#,
            &[JobNotSuccessful],
        ),
        (
            "trailing newline",
            r#"{"guard": {"result": "success\n"}, "build-test": {"result": "success"}}"#,
            &[JobNotSuccessful],
        ),
        (
            "trailing NUL",
            r#"{"guard": {"result": "success\u0000"}, "build-test": {"result": "success"}}"#,
            &[JobNotSuccessful],
        ),
        (
            "fullwidth letters",
            r#"{"guard": {"result": "ｓuccess"}, "build-test": {"result": "success"}}"#,
            &[JobNotSuccessful],
        ),
    ];
    for (what, needs, expected) in cases {
        let d = decide(needs.as_bytes(), &two, RUN, SHA);
        assert!(!d.pass(), "{what}");
        assert_eq!(codes(&d.reasons), *expected, "{what}: {:?}", d.reasons);
    }
}

#[test]
fn named_reasons_for_structural_problems() {
    let d = decide(
        br#"{"guard": {"result": "failure"}, "guard": {"result": "success"}}"#,
        &["guard"],
        RUN,
        SHA,
    );
    assert_eq!(
        d.reasons,
        vec![Reason::DuplicateKey {
            path: vec!["guard".into()]
        }]
    );
    assert_eq!(d.reasons[0].job(), Some("guard"));
    assert!(d.jobs.is_empty());

    let d = decide(
        br#"{"guard": {"result": "success"}, "deploy": {"result": "success"}}"#,
        &["guard"],
        RUN,
        SHA,
    );
    assert_eq!(
        d.reasons,
        vec![Reason::UnexpectedJob {
            job: "deploy".into()
        }]
    );
    assert_eq!(d.jobs.len(), 2);
    assert!(!d.jobs[1].required);
}

#[test]
fn an_escaped_spelling_of_success_is_success() {
    // JSON escapes are decoded before comparison: this is the string "success".
    let d = decide(
        br#"{"guard": {"result": "\u0073uccess"}}"#,
        &["guard"],
        RUN,
        SHA,
    );
    assert!(d.pass(), "{:?}", d.reasons);
}

#[test]
fn invalid_keys_and_required_lists_fail() {
    let ok = needs_json(&[("guard", Cell::Success)]);
    let cases: &[(&[&str], &str, &str, &[ReasonCode])] = &[
        (&["guard"], "", SHA, &[ReasonCode::InvalidRunId]),
        (&["guard"], "12x", SHA, &[ReasonCode::InvalidRunId]),
        (&["guard"], "-5", SHA, &[ReasonCode::InvalidRunId]),
        (&["guard"], RUN, "", &[ReasonCode::InvalidDiffSha256]),
        (&["guard"], RUN, &SHA[1..], &[ReasonCode::InvalidDiffSha256]),
        (
            &["guard"],
            RUN,
            "zz86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
            &[ReasonCode::InvalidDiffSha256],
        ),
        (&[], RUN, SHA, &[ReasonCode::NoRequiredJobs]),
        (&[""], RUN, SHA, &[ReasonCode::InvalidJobName]),
        (&["guard", ""], RUN, SHA, &[ReasonCode::InvalidJobName]),
        (&["gu ard"], RUN, SHA, &[ReasonCode::InvalidJobName]),
        (
            &["guard", "guard"],
            RUN,
            SHA,
            &[ReasonCode::DuplicateRequiredJob],
        ),
        (
            &["guard", "GUARD"],
            RUN,
            SHA,
            &[ReasonCode::DuplicateRequiredJob],
        ),
        (
            &["guard"],
            "0",
            "x",
            &[ReasonCode::InvalidRunId, ReasonCode::InvalidDiffSha256],
        ),
    ];
    for (required, run, sha, expected) in cases {
        let d = decide(ok.as_bytes(), required, run, sha);
        assert!(!d.pass(), "{required:?} {run:?} {sha:?}");
        assert_eq!(codes(&d.reasons), *expected, "{required:?} {run:?} {sha:?}");
    }
}

#[test]
fn the_decision_record_is_keyed_and_versioned() {
    let needs = needs_json(&[("guard", Cell::Success), ("build-test", Cell::Skipped)]);
    let d = decide(needs.as_bytes(), &["guard", "build-test"], RUN, SHA);
    let doc = gate::output::json_v1::document(&d);
    let v: Value = serde_json::from_str(&doc.to_json().unwrap()).unwrap();
    assert_eq!(v["schema"], SCHEMA);
    assert_eq!(v["schema"], "agent-team-apply/gate-decision/v1");
    assert_eq!(v["gate"], "fail");
    assert_eq!(v["run_id"], RUN);
    assert_eq!(v["diff_sha256"], SHA);
    assert_eq!(v["required"], json!(["guard", "build-test"]));
    assert_eq!(
        v["jobs"],
        json!([
            {"job": "guard", "required": true, "state": "result", "result": "success"},
            {"job": "build-test", "required": true, "state": "result", "result": "skipped"},
        ])
    );
    assert_eq!(
        v["reasons"],
        json!([{
            "code": "job-not-successful",
            "job": "build-test",
            "message": "job `build-test`: result is \"skipped\", not \"success\"",
        }])
    );
    // The document reads back into the strict type.
    let back: DecisionDoc = serde_json::from_value(v).unwrap();
    assert_eq!(back, doc);
    assert!(!back.passed());
}

// ---------------------------------------------------------------------------------------------
// Property: pass iff every required job is present with success and there is no other job.

const POOL: [&str; 6] = ["guard", "build-test", "lint", "docs", "a", "b-c"];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn pass_iff_all_required_succeeded_and_nothing_else(
        cells in proptest::collection::vec(0..CELLS.len(), POOL.len()),
        required in proptest::sample::subsequence(POOL.to_vec(), 0..=POOL.len()),
        shuffle in any::<proptest::sample::Index>(),
    ) {
        let jobs: Vec<(&str, Cell)> = POOL.iter().copied().zip(cells.iter().map(|&i| CELLS[i])).collect();
        // Needs in some order other than the pool's.
        let mut present: Vec<(&str, Cell)> = jobs.iter().copied().filter(|(_, c)| *c != Cell::Missing).collect();
        if !present.is_empty() {
            let k = shuffle.index(present.len());
            present.rotate_left(k);
        }
        let needs = needs_json(&present);
        let d = decide(needs.as_bytes(), &required, RUN, SHA);

        let state: BTreeMap<&str, Cell> = jobs.iter().copied().collect();
        let required_set: BTreeSet<&str> = required.iter().copied().collect();
        let expected = !required.is_empty()
            && required.iter().all(|r| state[r] == Cell::Success)
            && present.iter().all(|(n, _)| required_set.contains(n));
        prop_assert_eq!(d.pass(), expected);
        prop_assert_eq!(d.reasons.is_empty(), expected);

        if !required.is_empty() {
            let bad: BTreeSet<&str> = required.iter().copied().filter(|r| state[r] != Cell::Success)
                .chain(present.iter().map(|(n, _)| *n).filter(|n| !required_set.contains(n)))
                .collect();
            let named: BTreeSet<&str> = d.reasons.iter().filter_map(Reason::job).collect();
            prop_assert_eq!(named, bad.clone());
            prop_assert_eq!(d.reasons.len(), bad.len());
        } else {
            prop_assert_eq!(codes(&d.reasons), vec![ReasonCode::NoRequiredJobs]);
        }
    }

    #[test]
    fn arbitrary_bytes_never_pass_unless_they_are_exactly_right(
        bytes in proptest::collection::vec(any::<u8>(), 0..64),
    ) {
        let d = decide(&bytes, &["guard"], RUN, SHA);
        if d.pass() {
            // Only a document with exactly one key "guard" whose result is "success" passes.
            let v: Value = serde_json::from_slice(&bytes).unwrap();
            let obj = v.as_object().unwrap();
            prop_assert_eq!(obj.len(), 1);
            prop_assert_eq!(&obj["guard"]["result"], "success");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The binary end to end.

/// The `GITHUB_OUTPUT` reader shared with local-run (`contract::github_output::parse`), which
/// reads the file as the runner does.
fn parse_github_output(text: &str) -> Result<Vec<(String, String)>, String> {
    contract::github_output::parse(text).map_err(|e| e.to_string())
}

#[test]
fn the_test_parser_reads_the_documented_examples() {
    assert_eq!(
        parse_github_output("SELECTED_COLOR=green\n").unwrap(),
        vec![("SELECTED_COLOR".into(), "green".into())]
    );
    assert_eq!(
        parse_github_output("JSON_RESPONSE<<EOF\n{\n  \"a\": 1\n}\nEOF\nx=a<<b\n").unwrap(),
        vec![
            ("JSON_RESPONSE".into(), "{\n  \"a\": 1\n}".into()),
            ("x".into(), "a<<b".into())
        ]
    );
    assert!(parse_github_output("v<<EOF\nno end\n").is_err());
    assert!(parse_github_output("just text\n").is_err());
    // The naive-delimiter breakout this format is vulnerable to, when the value is not vetted.
    assert!(parse_github_output("r<<EOF\nline\nEOF\ngate=pass\nEOF\n").is_err());
    assert_eq!(
        parse_github_output("r<<EOF\nline\nEOF\ngate=pass\n").unwrap(),
        vec![("r".into(), "line".into()), ("gate".into(), "pass".into())]
    );
}

fn gate_command() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gate"));
    for (key, _) in std::env::vars_os() {
        let key_str = key.to_string_lossy();
        if key_str.starts_with("GITHUB_")
            || key_str.starts_with("RUNNER_")
            || key_str.starts_with("ACTIONS_")
            || key_str == "CI"
        {
            cmd.env_remove(&key);
        }
    }
    cmd.stdin(Stdio::null());
    cmd
}

fn run(args: &[&str]) -> Output {
    gate_command().args(args).output().unwrap()
}

fn run_stdin(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = gate_command()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

fn code(out: &Output) -> i32 {
    out.status.code().unwrap()
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn decide_args<'a>(needs: &'a str, require: &'a str, output: Option<&'a Path>) -> Vec<String> {
    let mut args: Vec<String> = [
        "decide",
        "--needs",
        needs,
        "--require",
        require,
        "--run-id",
        RUN,
        "--diff-sha256",
        SHA,
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    if let Some(path) = output {
        args.push("--github-output".into());
        args.push(path.to_str().unwrap().to_owned());
    }
    args
}

fn run_owned(args: &[String]) -> Output {
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    run(&refs)
}

fn read_outputs(path: &Path) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(path).unwrap();
    let entries = parse_github_output(&text).unwrap();
    let map: BTreeMap<String, String> = entries.iter().cloned().collect();
    assert_eq!(
        map.len(),
        entries.len(),
        "an output was written twice: {text}"
    );
    map
}

#[test]
fn binary_pass_exits_zero_and_writes_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("github_output");
    let needs = needs_json(&[("guard", Cell::Success), ("build-test", Cell::Success)]);
    let out = run_owned(&decide_args(&needs, "guard,build-test", Some(&out_file)));
    assert_eq!(code(&out), 0, "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout(&out).contains(&format!("PASS: run {RUN}, diff sha256 {SHA}")));
    let outputs = read_outputs(&out_file);
    assert_eq!(outputs.get("gate").map(String::as_str), Some("pass"));
    assert_eq!(outputs.get("reasons").map(String::as_str), Some(""));
    assert_eq!(outputs.len(), 2);
}

#[test]
fn binary_fail_exits_one_and_names_the_bad_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("github_output");
    std::fs::write(&out_file, "earlier=kept\n").unwrap();
    let needs = needs_json(&[("guard", Cell::Success), ("build-test", Cell::Cancelled)]);
    let out = run_owned(&decide_args(
        &needs,
        "guard,build-test,lint",
        Some(&out_file),
    ));
    assert_eq!(code(&out), 1);
    let text = stdout(&out);
    assert!(text.contains("error[job-not-successful]: job `build-test`: result is \"cancelled\""));
    assert!(text.contains("error[missing-job]: job `lint`"));
    assert!(text.contains("FAIL: "));
    let outputs = read_outputs(&out_file);
    assert_eq!(outputs["earlier"], "kept");
    assert_eq!(outputs["gate"], "fail");
    assert_eq!(
        outputs["reasons"],
        "job-not-successful: job `build-test`: result is \"cancelled\", not \"success\"\n\
         missing-job: job `lint`: required but absent from needs"
    );
}

#[test]
fn binary_json_format() {
    let needs = needs_json(&[("guard", Cell::Success)]);
    let mut args = decide_args(&needs, "guard", None);
    args.extend(["--format".into(), "json".into()]);
    let out = run_owned(&args);
    assert_eq!(code(&out), 0);
    let doc: DecisionDoc = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc.passed());
    assert_eq!(
        (
            doc.run_id.as_ref().map(|r| r.as_str()),
            doc.diff_sha256.as_ref().map(|d| d.as_str())
        ),
        (Some(RUN), Some(SHA))
    );

    let needs = needs_json(&[("guard", Cell::Empty)]);
    let mut args = decide_args(&needs, "guard", None);
    args.extend(["--format".into(), "json".into()]);
    let out = run_owned(&args);
    assert_eq!(code(&out), 1);
    let doc: DecisionDoc = serde_json::from_slice(&out.stdout).unwrap();
    assert!(!doc.passed());
    assert_eq!(doc.reasons[0].code.name(), "job-not-successful");
    assert_eq!(doc.reasons[0].job.as_deref(), Some("guard"));
}

#[test]
fn binary_reads_needs_from_a_file_and_from_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let needs = needs_json(&[("guard", Cell::Success)]);
    let file = dir.path().join("needs.json");
    std::fs::write(&file, &needs).unwrap();
    let at_file = format!("@{}", file.display());
    assert_eq!(code(&run_owned(&decide_args(&at_file, "guard", None))), 0);

    let args = decide_args("-", "guard", None);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_eq!(code(&run_stdin(&refs, needs.as_bytes())), 0);
    assert_eq!(
        code(&run_stdin(&refs, b"{\"guard\": {\"result\": \"failure\"}}")),
        1
    );
    assert_eq!(code(&run_stdin(&refs, b"")), 1);
}

#[test]
fn binary_oversized_needs_fails_without_reading_it_whole() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("needs.json");
    let mut big = b"{\"guard\": {\"result\": \"success\", \"outputs\": {\"x\": \"".to_vec();
    big.resize(MAX_NEEDS_BYTES * 3, b'a');
    big.extend_from_slice(b"\"}}}");
    std::fs::write(&file, &big).unwrap();
    let mut args = decide_args(&format!("@{}", file.display()), "guard", None);
    args.extend(["--format".into(), "json".into()]);
    let out = run_owned(&args);
    assert_eq!(code(&out), 1);
    let doc: DecisionDoc = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc.reasons.len(), 1);
    assert_eq!(doc.reasons[0].code.name(), "needs-too-large");
}

#[test]
fn binary_keys_are_validated() {
    let needs = needs_json(&[("guard", Cell::Success)]);
    let out = run(&[
        "decide",
        "--needs",
        &needs,
        "--require",
        "guard",
        "--run-id",
        "12 34",
        "--diff-sha256",
        SHA,
    ]);
    assert_eq!(code(&out), 1);
    assert!(stdout(&out).contains("error[invalid-run-id]"));
    let out = run(&[
        "decide",
        "--needs",
        &needs,
        "--require",
        "guard",
        "--run-id",
        RUN,
        "--diff-sha256",
        &SHA.to_uppercase(),
    ]);
    assert_eq!(code(&out), 1);
    assert!(stdout(&out).contains("error[invalid-diff-sha256]"));
    // Empty and repeated names, across repeated --require flags.
    let out = run(&[
        "decide",
        "--needs",
        &needs,
        "--require",
        "guard,",
        "--require",
        "guard",
        "--run-id",
        RUN,
        "--diff-sha256",
        SHA,
    ]);
    assert_eq!(code(&out), 1);
    let text = stdout(&out);
    assert!(text.contains("error[invalid-job-name]"), "{text}");
    assert!(text.contains("error[duplicate-required-job]"), "{text}");
}

#[test]
fn binary_usage_and_io_errors_exit_two() {
    let needs = needs_json(&[("guard", Cell::Success)]);
    let dir = tempfile::tempdir().unwrap();
    let missing_file = dir.path().join("absent.json");
    let at_missing = format!("@{}", missing_file.display());
    let at_dir = format!("@{}", dir.path().display());
    let cases: Vec<Vec<&str>> = vec![
        vec![],
        vec!["frobnicate"],
        vec!["decide"],
        vec![
            "decide",
            "--needs",
            &needs,
            "--require",
            "guard",
            "--run-id",
            RUN,
        ],
        vec![
            "decide",
            "--needs",
            &needs,
            "--run-id",
            RUN,
            "--diff-sha256",
            SHA,
        ],
        vec![
            "decide",
            "--needs",
            &needs,
            "--require",
            "guard",
            "--run-id",
            RUN,
            "--diff-sha256",
            SHA,
            "--format",
            "yaml",
        ],
        vec![
            "decide",
            "--needs",
            &needs,
            "--require",
            "guard",
            "--run-id",
            RUN,
            "--diff-sha256",
            SHA,
            "--bogus",
        ],
        vec![
            "decide",
            "--needs",
            &at_missing,
            "--require",
            "guard",
            "--run-id",
            RUN,
            "--diff-sha256",
            SHA,
        ],
        vec![
            "decide",
            "--needs",
            &at_dir,
            "--require",
            "guard",
            "--run-id",
            RUN,
            "--diff-sha256",
            SHA,
        ],
        vec![
            "decide",
            "--needs",
            "@",
            "--require",
            "guard",
            "--run-id",
            RUN,
            "--diff-sha256",
            SHA,
        ],
    ];
    for args in &cases {
        let out = run(args);
        assert_eq!(
            code(&out),
            2,
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!out.stderr.is_empty(), "{args:?}");
    }

    // An unwritable output file is an I/O error even when the decision passes; the decision is
    // still printed.
    let unwritable = dir.path().join("no/such/dir/out");
    let out = run_owned(&decide_args(&needs, "guard", Some(&unwritable)));
    assert_eq!(code(&out), 2);
    assert!(stdout(&out).contains("PASS"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot append"));

    for help in [vec!["--help"], vec!["--version"], vec!["decide", "--help"]] {
        assert_eq!(code(&run(&help)), 0, "{help:?}");
    }
}

#[test]
fn hostile_job_names_do_not_break_out_of_the_reasons_value() {
    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("github_output");
    let first_delimiter_guess = contract::github_output::delimiter_for("").unwrap();
    let hostile = [
        "EOF",
        "x\nEOF\ngate=pass\nEOF",
        "y\ngate=pass",
        "\nreasons<<EOF\n",
        first_delimiter_guess.as_str(),
        "z\r\nEOF\r\n",
        "\u{1b}[2J\u{202e}",
    ];
    let mut map = Map::new();
    map.insert("guard".into(), json!({"result": "success"}));
    for name in hostile {
        map.insert(name.into(), json!({"result": "success"}));
    }
    let needs = Value::Object(map).to_string();
    let out = run_owned(&decide_args(&needs, "guard", Some(&out_file)));
    assert_eq!(code(&out), 1);

    let raw = std::fs::read_to_string(&out_file).unwrap();
    // Naive delimiters never appear as lines.
    assert!(
        !raw.lines().any(|l| l == "EOF" || l == "gate=pass"),
        "{raw}"
    );
    let outputs = read_outputs(&out_file);
    assert_eq!(
        outputs.keys().map(String::as_str).collect::<Vec<_>>(),
        vec!["gate", "reasons"]
    );
    assert_eq!(outputs["gate"], "fail");
    let reasons: Vec<&str> = outputs["reasons"].split('\n').collect();
    assert_eq!(reasons.len(), hostile.len(), "{reasons:?}");
    for line in &reasons {
        assert!(line.starts_with("unexpected-job: job `"), "{line}");
        assert!(!line.contains(['\r', '\u{1b}', '\u{202e}']), "{line:?}");
    }
    assert!(reasons.contains(&"unexpected-job: job `x\\u{a}EOF\\u{a}gate=pass\\u{a}EOF`: present in needs but not required"));

    // The terminal rendering is escaped the same way.
    let text = stdout(&out);
    assert!(!text.contains('\u{1b}') && !text.contains('\r') && !text.contains('\u{202e}'));
    assert!(!text.lines().any(|l| l == "EOF" || l == "gate=pass"));
}
