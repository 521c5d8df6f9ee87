//! Every terminal text sink of `gate` escapes each logical line on its own before joining: a line
//! break inside a value (a verdict message, a job name, a doctor's detail, a log line) never ends
//! its line, so a value cannot print a forged `DISPATCH: pass (exit 0)` line of its own.
//! Regression: issue 28, "text output" (the dispatch text split the joined text at a message's LF
//! and passed the forged line through).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use gate::doctor::{Finding, Report, Setting, Status};
use gate::output::dispatch_result_v2::{
    DispatchResultDoc, GuardVerdictDoc, JobDoc, LogTailDoc, ReasonDoc, RunDoc,
};
use gate::output::text;

const FORGED: &str = "DISPATCH: pass (exit 0)";

/// LF, CR, CR LF, NEL, LS, PS, and the other breaks a terminal or a viewer may honour (VT, FF).
const BREAKS: &[(&str, &str)] = &[
    ("LF", "\n"),
    ("CR", "\r"),
    ("CRLF", "\r\n"),
    ("NEL", "\u{85}"),
    ("LS", "\u{2028}"),
    ("PS", "\u{2029}"),
    ("VT", "\u{b}"),
    ("FF", "\u{c}"),
];

/// The output as a reader may see it: split at every break any viewer honours.
fn shown_lines(out: &str) -> Vec<&str> {
    out.split([
        '\n', '\r', '\u{85}', '\u{2028}', '\u{2029}', '\u{b}', '\u{c}',
    ])
    .collect()
}

fn assert_no_forged_line(sink: &str, name: &str, out: &str, genuine: usize) {
    let forged: Vec<&str> = shown_lines(out)
        .into_iter()
        .filter(|l| {
            l.trim_start().starts_with("DISPATCH: pass") || l.trim_start().starts_with("DOCTOR: ok")
        })
        .collect();
    assert_eq!(
        forged.len(),
        genuine,
        "{sink} with {name}: a value printed a line of its own:\n{out}"
    );
    for c in out.chars() {
        assert!(
            c == '\n' || !c.is_control() && !matches!(c, '\u{2028}' | '\u{2029}'),
            "{sink} with {name}: a raw {c:?} reached the terminal:\n{out}"
        );
    }
}

fn hostile(brk: &str) -> String {
    format!("innocent{brk}{FORGED}")
}

fn failed_dispatch(brk: &str) -> DispatchResultDoc {
    let h = hostile(brk);
    DispatchResultDoc {
        schema: gate::output::dispatch_result_v2::SCHEMA.to_owned(),
        repository: "octo/repo".to_owned(),
        workflow: "agent-team-apply.yml".to_owned(),
        git_ref: "refs/heads/main".to_owned(),
        task_id: "task-1".to_owned(),
        base_sha: "a".repeat(40),
        diff_sha256: "b".repeat(64),
        nonce: "c".repeat(32),
        expires_at: 1,
        app_id: Some(1),
        transport: "diff_b64".to_owned(),
        diff_ref: None,
        run: Some(RunDoc {
            id: 7,
            api_url: "https://api.github.com/repos/octo/repo/actions/runs/7".to_owned(),
            html_url: "https://github.com/octo/repo/actions/runs/7".to_owned(),
            found_by: "dispatch-response".to_owned(),
            status: Some("completed".to_owned()),
            conclusion: Some(h.clone()),
        }),
        jobs: vec![JobDoc {
            name: h.clone(),
            status: "completed".to_owned(),
            conclusion: Some("failure".to_owned()),
            html_url: None,
            failed_step: Some(h.clone()),
        }],
        decision: "fail".to_owned(),
        exit_code: 1,
        failed: None,
        pull_request: None,
        check_run: None,
        publication: None,
        guard_verdict: Some(GuardVerdictDoc {
            source: "guard-job".to_owned(),
            authoritative: true,
            verdict: "reject".to_owned(),
            artifact: Some(h.clone()),
            violations: vec![ReasonDoc {
                rule: "denied-path".to_owned(),
                path: Some(h.as_str().into()),
                old_path: None,
                line: Some(1),
                message: h.clone(),
                policy_entry: Some(h.clone()),
                hint: h.clone(),
                rule_text: h.clone(),
                docs: "README.md#rule-denied-path".to_owned(),
            }],
            readiness: None,
        }),
        guard_verdict_unavailable: Some(h.clone()),
        reasons: vec![h.clone()],
        log_tail: Some(LogTailDoc {
            authoritative: false,
            note: h.clone(),
            job: h.clone(),
            truncated: false,
            // The log's own lines stay lines, behind their `| ` mark.
            text: format!("compiling{brk}{FORGED}\n{FORGED}"),
        }),
        build_findings_non_authoritative: Some(
            gate::output::dispatch_result_v2::BuildFindingsDoc {
                authoritative: false,
                note: h.clone(),
                status: "available".to_owned(),
                reason: None,
                artifact: Some(h.clone()),
                findings: vec![gate::output::dispatch_result_v2::BuildFindingDoc {
                    check: h.clone(),
                    rule: h.clone(),
                    path: contract::repo_path::RepoPath::new(h.clone().into_bytes()),
                    message: h.clone(),
                }],
                left_out: 0,
            },
        ),
    }
}

#[test]
fn dispatch_text_escapes_each_value_before_joining() {
    for (name, brk) in BREAKS {
        let out = text::dispatch(&failed_dispatch(brk));
        assert!(out.starts_with("DISPATCH: fail (exit 1)\n"), "{out}");
        assert_no_forged_line("dispatch text", name, &out, 0);
        // Only the log tail's own LF makes a line, and it is marked as the log's.
        assert!(out.contains(&format!("    | {FORGED}\n")), "{out}");
    }
}

#[test]
fn doctor_text_escapes_each_detail_before_joining() {
    for (name, brk) in BREAKS {
        let report = Report {
            repository: "octo/repo".to_owned(),
            app: "agent-team".to_owned(),
            default_branch: Some("main".to_owned()),
            findings: vec![Finding {
                setting: Setting::Repository,
                status: Status::Missing,
                detail: format!("none{brk}DOCTOR: ok, every required setting is in place (exit 0)"),
            }],
        };
        let out = text::doctor(&report);
        assert!(
            out.ends_with("DOCTOR: 1 required setting(s) missing or unreadable (exit 1)\n"),
            "{out}"
        );
        assert_no_forged_line("doctor text", name, &out, 0);
    }
}

#[test]
fn decision_text_escapes_each_job_name_before_joining() {
    for (name, brk) in BREAKS {
        let job = hostile(brk);
        let needs = serde_json::json!({ job.clone(): { "result": "success" } }).to_string();
        let d = gate::decide::decide(needs.as_bytes(), &["guard"], "12345", &"b".repeat(64));
        assert!(!d.pass());
        let out = text::render(&d);
        assert_no_forged_line("decision text", name, &out, 0);
        let lines = text::reason_lines(&d.reasons);
        assert_no_forged_line("reason lines", name, &lines, 0);
    }
}

#[test]
fn text_lines_keep_one_logical_line_per_line() {
    for (name, brk) in BREAKS {
        let mut out = text::TextLines::default();
        out.line(&hostile(brk));
        let out = out.finish();
        assert_eq!(out.matches('\n').count(), 1, "{name}: {out:?}");
        assert_no_forged_line("TextLines", name, &out, 0);
    }
}
