//! `report select-run` through the real binary over the fixtures in `fixtures/runs/`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{code, fixture, report, stderr, stdout};

const WATERMARK: &str = "2024-05-01T10:00:00Z";

fn select(task: &str, since: &str, runs: &str, extra: &[&str]) -> std::process::Output {
    let path = fixture(&format!("runs/{runs}"));
    let mut args = vec![
        "select-run",
        "--task-id",
        task,
        "--since",
        since,
        "--runs",
        path.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    report(&args, "")
}

#[test]
fn picks_the_live_run_of_exactly_this_task_after_the_watermark() {
    // 1001 is before the watermark, 1002/1003/1006/1007 are other names (prefix, suffix, trailing
    // space, case), 1004 is cancelled and superseded, 1008 was created at 10:00:01Z (written
    // with a +02:00 offset, so it sorts after 1005 as a string but before it in time).
    let out = select("123", WATERMARK, "mixed.json", &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "1005\n");
}

#[test]
fn json_format_prints_the_run() {
    let out = select("123", WATERMARK, "mixed.json", &["--format", "json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let run: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        run,
        serde_json::json!({
            "databaseId": 1005,
            "displayTitle": "agent-team-apply 123",
            "status": "in_progress",
            "conclusion": "",
            "createdAt": "2024-05-01T10:00:03Z",
            "event": "workflow_dispatch",
            "headSha": "5555555555555555555555555555555555555555",
            "url": "https://github.com/o/r/actions/runs/1005"
        })
    );
}

#[test]
fn shared_prefix_task_ids_do_not_match_each_other() {
    assert_eq!(
        stdout(&select("12", WATERMARK, "mixed.json", &[])),
        "1002\n"
    );
    assert_eq!(
        stdout(&select("1234", WATERMARK, "mixed.json", &[])),
        "1003\n"
    );
    let out = select("1", WATERMARK, "mixed.json", &[]);
    assert_eq!(code(&out), 1);
}

#[test]
fn a_later_watermark_leaves_only_the_cancelled_run() {
    // At 10:00:04Z only the cancelled 1004 qualifies; it is not superseded, so it is the answer.
    let out = select("123", "2024-05-01T10:00:04Z", "mixed.json", &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "1004\n");
}

#[test]
fn equal_instants_prefer_the_larger_id() {
    // 2002 (.000Z) and 2001 (Z) are the same instant; 1999 is a nanosecond earlier.
    let out = select("T-7", WATERMARK, "same-instant.json", &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "2002\n");
}

#[test]
fn only_cancelled_runs_yield_the_latest_cancelled_one() {
    let out = select("42", WATERMARK, "only-cancelled.json", &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "3002\n");
}

#[test]
fn a_run_created_exactly_at_the_watermark_counts() {
    assert_eq!(
        stdout(&select("9", WATERMARK, "at-watermark.json", &[])),
        "8001\n"
    );
    assert_eq!(
        stdout(&select(
            "9",
            "2024-05-01T12:00:00+02:00",
            "at-watermark.json",
            &[]
        )),
        "8001\n"
    );
    let out = select(
        "9",
        "2024-05-01T10:00:00.000000001Z",
        "at-watermark.json",
        &[],
    );
    assert_eq!(code(&out), 1);
}

#[test]
fn nothing_qualifying_is_exit_1_and_no_guess() {
    // 4004 reads as later than the watermark when compared as a string (11:59:59+02:00) but
    // was created at 09:59:59Z.
    for (task, runs) in [
        ("123", "none-matching.json"),
        ("123", "empty.json"),
        ("T-8", "same-instant.json"),
    ] {
        let out = select(task, WATERMARK, runs, &[]);
        assert_eq!(code(&out), 1, "{runs}");
        assert_eq!(stdout(&out), "", "{runs}");
        assert!(
            stderr(&out).contains(&format!("no run named \"agent-team-apply {task}\"")),
            "{}",
            stderr(&out)
        );
    }
}

/// gh lists the workflow's name as `name` and the run's `run-name:` as `displayTitle`
/// (REST `name` and `display_title`): only the run name identifies the dispatch.
#[test]
fn the_run_name_is_the_display_title_not_the_workflow_name() {
    let out = select("123", WATERMARK, "gh-both-names.json", &[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "7002\n");
}

#[test]
fn malformed_input_is_exit_2() {
    for (runs, expected) in [
        (
            "malformed-created-at.json",
            "run 5001: \"2024-05-01 10:00:05\" is not an RFC 3339 timestamp",
        ),
        (
            "malformed-shape.json",
            "not the expected `gh run list --json` array",
        ),
        ("malformed-missing-id.json", "missing field `databaseId`"),
        // gh's `name` is the workflow's name: a list without the run names cannot be read.
        ("malformed-name-only.json", "missing field `displayTitle`"),
        ("does-not-exist.json", "cannot read"),
    ] {
        let out = select("123", WATERMARK, runs, &[]);
        assert_eq!(code(&out), 2, "{runs}");
        assert_eq!(stdout(&out), "");
        assert!(stderr(&out).contains(expected), "{runs}: {}", stderr(&out));
    }
}

#[test]
fn bad_arguments_are_exit_2() {
    for (task, since) in [
        ("123", "2024-05-01 10:00:00Z"),
        ("123", "2024-05-01T10:00:00"),
        ("123", "yesterday"),
        ("", WATERMARK),
        (" 123", WATERMARK),
        ("12\n3", WATERMARK),
    ] {
        let out = select(task, since, "mixed.json", &[]);
        assert_eq!(code(&out), 2, "{task:?} {since:?}: {}", stderr(&out));
    }
    let out = report(&["select-run", "--task-id", "123"], "[]");
    assert_eq!(code(&out), 2, "missing --since");
}

#[test]
fn reads_runs_from_stdin_by_default() {
    let runs = std::fs::read_to_string(fixture("runs/mixed.json")).unwrap();
    let out = report(
        &["select-run", "--task-id", "123", "--since", WATERMARK],
        &runs,
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(stdout(&out), "1005\n");
}
