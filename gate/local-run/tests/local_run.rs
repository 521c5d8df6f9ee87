//! `local-run` through the real binary: the whole loop (dispatcher, the four jobs, the simulated
//! GitHub) on the bundled samples, and the publication's rerun and failure paths.
//!
//! The binary runs with a cleared environment (PATH, HOME, and the cargo/rustup locations so that
//! the sample's `cargo test` works), from a directory outside the workspace, so no ambient
//! GITHUB_* or CI variable reaches any stage. The stage binaries are this workspace's debug
//! builds (`--binaries`), built once here with cargo; the static build is `.ci/run`'s.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

#[path = "support/stage_binaries.rs"]
mod support;
use support::stage_binaries;

/// The simulated GitHub's token (github-standin's default): it must reach no output.
const TOKEN: &str = "ghs_standinTOKENstandinTOKEN0123456789";

fn local_run(args: &[&str], extra_env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_local-run"));
    cmd.env_clear();
    for name in ["PATH", "HOME", "RUSTUP_HOME", "CARGO_HOME"] {
        if let Some(value) = std::env::var_os(name) {
            cmd.env(name, value);
        }
    }
    cmd.envs(extra_env.iter().copied())
        .arg("--binaries")
        .arg(stage_binaries())
        .args(args)
        .current_dir(std::env::temp_dir())
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn text(out: &Output) -> (String, String) {
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(
        !stdout.contains(TOKEN) && !stderr.contains(TOKEN),
        "the token reached the output"
    );
    (stdout, stderr)
}

fn contains_all(stdout: &str, needles: &[&str]) {
    for needle in needles {
        assert!(stdout.contains(needle), "missing {needle:?} in\n{stdout}");
    }
}

fn contains_none(stdout: &str, needles: &[&str]) {
    for needle in needles {
        assert!(
            !stdout.contains(needle),
            "unexpected {needle:?} in\n{stdout}"
        );
    }
}

fn kept(stdout: &str) -> PathBuf {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("local-run: kept "))
        .map(PathBuf::from)
        .unwrap()
}

/// The value after `label` on its line.
fn value_after<'a>(stdout: &'a str, label: &str) -> &'a str {
    stdout
        .lines()
        .find_map(|l| l.trim_start().strip_prefix(label))
        .unwrap_or_else(|| panic!("no line {label:?} in\n{stdout}"))
        .trim()
}

#[test]
fn accepted_sample_runs_the_whole_loop_and_publishes_a_proven_draft() {
    let out = local_run(&[], &[]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    contains_all(
        &stdout,
        &[
            "sample `accept`",
            // The install step: three assets, each checked.
            "with $RUN/release/SHA256SUMS; each copied into $RUN/bin and its SHA-256 checked",
            "$ gate dispatch --repository local/greeting --workflow agent-team-apply.yml --ref main --task-id local-accept",
            "--wait --app-id 424242 --timeout 1800 --format json",
            "the simulated GitHub received the dispatch: run ",
            "job guard: success",
            "$ guard readiness ",
            "job build-test: success",
            "job decide: success",
            "\"build-test\": {\n          \"result\": \"success\"",
            "GITHUB_OUTPUT: gate=pass",
            "DECISION: gate=pass",
            "$ gate verify-dispatch --repository local/greeting --ref refs/heads/main",
            "dispatch signature verified with the current key",
            "PUBLICATION PLAN (agent-team-apply/publish-plan/v2)",
            "add/modify docs/usage notes.md",
            "add/modify src/lib.rs",
            "gate publish: created refs/heads/agent-team/local-accept at ",
            "= expected (proven)",
            "job publish: success",
            "job apply / publish: success",
            "draft pull request #1: https://github.com/local/greeting/pull/1 (draft: true)",
            "check run \"agent-team-apply / gate\": success",
            "pull request #1 from agent-team/local-accept (draft: true)",
            "authenticated: commit ",
            " by agent-team-apply[bot] (signature valid), tree ",
            "POST /repos/local/greeting/actions/workflows/agent-team-apply.yml/dispatches",
            "POST /graphql",
            "POST /repos/local/greeting/pulls",
            "POST /repos/local/greeting/check-runs",
            "local-run: gate=pass, exit 0",
        ],
    );
    // The replay record, then the gate's check run.
    assert_eq!(record_and_gate_check_runs(&stdout), 2, "{stdout}");
    // The build ran isolated by guard run's namespaces, or the output says loudly that it did not.
    assert!(
        stdout.contains("guard run: network: namespace (only lo)")
            || stdout.contains("!!! WARNING: guard run could not create its namespaces"),
        "{stdout}"
    );
    // The tree git computed is the one the simulated GitHub stored and the branch holds.
    let expected = value_after(&stdout, "expected tree (git's, the plan's):");
    let published = value_after(&stdout, "published tree (read back by gate publish):");
    assert_eq!(expected.len(), 40);
    assert_eq!(expected, published);
    let branch = value_after(&stdout, "branch agent-team/local-accept at");
    assert!(branch.ends_with(&format!("(tree {expected})")), "{branch}");
    // The plan is on the base the dispatcher sent.
    let base = value_after(&stdout, "input base_sha =");
    assert_eq!(value_after(&stdout, "expectedHeadOid:"), base);
}

#[test]
fn hook_attack_fails_at_build_test_and_never_reaches_publish() {
    let out = local_run(&["--sample", "hook-attack", "--keep"], &[]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    contains_all(
        &stdout,
        &[
            "sample `hook-attack`",
            // guard accepts it: build.rs is in scope and the diff itself touches nothing denied.
            "job guard: success",
            "job build-test: failure",
            "\"build-test\": {\n          \"result\": \"failure\"",
            "GITHUB_OUTPUT: gate=fail",
            "job decide: failure",
            "DECISION: gate=fail",
            "reason job-not-successful: job `build-test`",
            "STOPPED BY: job build-test, step \"Build and test the patched tree, then check what it wrote\" (`guard run`: exit 1)",
            "error[build-wrote]: .github/workflows/release.yml (created)",
            "job publish: skipped (decide did not pass",
            // The dispatcher's authenticated outcome names the failed job and step.
            "gate dispatch: exit 1",
            "decision: fail (exit 1)",
            "job apply / build-test: failure (step \"Build and test the patched tree, then check what it wrote\")",
            "job apply / publish: skipped",
            // The build's findings, from its report artifact, labelled non-authoritative.
            "artifact build-test-report-non-authoritative-local-run-attempt-1",
            "build findings (non-authoritative, build-test-report-non-authoritative-local-run-attempt-1): ",
            "after-build[build-wrote]: .github/workflows/release.yml: ",
            "log tail of apply / build-test (non-authoritative):",
            // The guard job's own verdict, from its artifact, as authoritative data.
            "guard verdict (guard-job, authoritative, agent-team-guard-",
            ".json): accept, 0 violation(s)",
            "no branch agent-team/local-hook-attack",
            "no pull request",
            "local-run: gate=fail, exit 1",
        ],
    );
    contains_none(
        &stdout,
        &[
            "$ gate publish-plan",
            "$ gate publish ",
            "PUBLICATION PLAN",
            "POST /graphql",
            "POST /repos/local/greeting/pulls",
            "POST /repos/local/greeting/check-runs",
        ],
    );
    // The signature is checked once, in guard, before anything else; publish never runs.
    assert_eq!(
        stdout.matches("$ gate verify-dispatch").count(),
        1,
        "{stdout}"
    );
    assert!(
        stdout.find("$ gate verify-dispatch") < stdout.find("$ guard check"),
        "{stdout}"
    );
    let kept = kept(&stdout);
    assert!(kept.join("decide/decision.json").is_file());
    assert!(!kept.join("publish").exists(), "the publish job ran");
    // The attack happened in build-test's view of its worktree (the check above flagged it),
    // and stayed in guard's discarded write layer: the checkout never holds it.
    assert!(
        !kept
            .join("build-test/work/.github/workflows/release.yml")
            .exists()
    );
    assert!(!kept.join("origin/.github").exists());
    // The stages ran from the install directory, read-only and executable.
    for name in ["guard", "gate", "report"] {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(kept.join("bin").join(name))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o555, "{name}");
    }
    std::fs::remove_dir_all(&kept).unwrap();
}

/// Names that real projects spell with zero-width characters pass every stage, and every data
/// document the stages wrote carries the names exactly (JSON's own escapes only).
#[test]
fn unicode_names_pass_the_whole_pipeline_with_exact_paths_in_every_document() {
    const PERSIAN: &str = "docs/\u{645}\u{6cc}\u{200c}\u{62e}\u{648}\u{627}\u{647}\u{645}.md";
    const FAMILY: &str = "docs/\u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467}.md";
    let out = local_run(&["--sample", "unicode-names", "--keep"], &[]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    contains_all(
        &stdout,
        &[
            "job guard: success",
            "job build-test: success",
            "DECISION: gate=pass",
            "PUBLICATION PLAN (agent-team-apply/publish-plan/v2)",
            "= expected (proven)",
            "local-run: gate=pass, exit 0",
        ],
    );
    let kept = kept(&stdout);
    // Data documents hold no display escape anywhere (the plan's rendered pull-request body is
    // markdown for people, escaped for that sink, so it is left out of this scan).
    let read = |path: &str| -> serde_json::Value {
        let bytes = std::fs::read(kept.join(path)).unwrap();
        let mut doc: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        if let Some(pr) = doc.get_mut("pull_request") {
            pr["body"] = serde_json::Value::Null;
        }
        assert!(
            !doc.to_string().contains("\\\\u{"),
            "{path} holds a display escape"
        );
        serde_json::from_slice(&bytes).unwrap()
    };
    let names = |files: &serde_json::Value, key: &str| -> Vec<String> {
        let mut names: Vec<String> = files
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f[key].as_str().unwrap().to_owned())
            .collect();
        names.sort();
        names
    };
    let mut want = vec![PERSIAN.to_owned(), FAMILY.to_owned()];
    want.sort();
    for verdict in [
        "guard/verdict.json",
        "build-test/report/verdict.json",
        "publish/verdict.json",
    ] {
        assert_eq!(
            names(&read(verdict)["files"], "new_path"),
            want,
            "{verdict}"
        );
    }
    let plan = read("publish/plan.json");
    assert_eq!(names(&plan["files"], "new_path"), want);
    assert_eq!(
        names(&plan["input"]["fileChanges"]["additions"], "path"),
        want
    );
    let result = read("publish/publish-result.json");
    assert_eq!(result["outcome"], "published");
    assert_eq!(result["tree"]["expected"], plan["tree"]);
    // The baseline the trusted side read before the build holds the names exactly too.
    let baseline = read("build-test/tree-baseline.json");
    let entries: Vec<&str> = baseline["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["path"].as_str())
        .collect();
    for name in [PERSIAN, FAMILY] {
        assert!(entries.contains(&name), "{name} not in the baseline");
    }
    read("build-test/report/tree-after-build.json");
    // The build saw real files under those names.
    for name in [PERSIAN, FAMILY] {
        assert!(kept.join("build-test/work").join(name).is_file(), "{name}");
    }
    std::fs::remove_dir_all(&kept).unwrap();
}

/// A rerun: the branch already exists at the base. It is reused and the publication proven; on
/// this run the machine also pretends it has no namespaces, which local-run must say loudly.
#[test]
fn a_branch_already_at_the_base_is_reused_and_without_namespaces_the_opt_out_is_loud() {
    let out = local_run(
        &["--scenario", "branch-at-base"],
        &[("GUARD_RUN_SIMULATE_NO_NAMESPACES", "no-network")],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    contains_all(
        &stdout,
        &[
            "scenario branch-at-base: agent-team/local-accept already exists at the base",
            "gate publish: the branch agent-team/local-accept exists at the base",
            "publish-result: published (exit 0), branch reused-at-base",
            "= expected (proven)",
            "pull request #1 from agent-team/local-accept (draft: true)",
            "authenticated: commit ",
            " by agent-team-apply[bot] (signature valid), tree ",
            "isolation could not be established, so the command was not run",
            "!!! WARNING: guard run could not create its namespaces on this machine.",
            "$ guard run --no-isolation-because",
            "guard run: network: NOT isolated by guard",
            "local-run: gate=pass, exit 0",
        ],
    );
    contains_none(&stdout, &["POST /repos/local/greeting/git/refs"]);
}

#[test]
fn a_branch_holding_someone_elses_commit_is_a_typed_refusal_with_nothing_written() {
    let out = local_run(&["--scenario", "branch-elsewhere"], &[]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    let other = value_after(
        &stdout,
        "scenario branch-elsewhere: agent-team/local-accept already exists at",
    )
    .split(',')
    .next()
    .unwrap()
    .to_owned();
    contains_all(
        &stdout,
        &[
            "DECISION: gate=pass",
            "gate publish: error[branch-elsewhere]: the branch agent-team/local-accept already exists at ",
            "publish-result: failed (exit 1), branch not written",
            "(NOT proven)",
            "job publish: failure",
            "job apply / publish: failure (step \"Publish, prove the tree, open the draft pull request, post the check run\")",
            "decision: fail (exit 1)",
            &format!("branch agent-team/local-accept at {other} "),
            "no pull request",
            "local-run: gate=fail, exit 1",
        ],
    );
    contains_none(
        &stdout,
        &[
            "POST /graphql",
            "POST /repos/local/greeting/git/refs",
            "PATCH /repos/local/greeting/git/refs",
            "POST /repos/local/greeting/pulls",
        ],
    );
    // One check run only: the dispatch's replay record, written before the branch was read.
    assert_eq!(record_and_gate_check_runs(&stdout), 1, "{stdout}");
}

/// How many check runs publish posted (the replay record on the base first, then the gate's).
fn record_and_gate_check_runs(stdout: &str) -> usize {
    let post = "POST /repos/local/greeting/check-runs";
    stdout
        .lines()
        .filter_map(|l| l.split_once("API request(s) received: ").map(|(_, r)| r))
        .flat_map(|r| r.split(", "))
        .map(|entry| match entry.strip_prefix(post) {
            Some("") => 1,
            Some(times) => times
                .trim()
                .strip_prefix("(x")
                .and_then(|t| t.strip_suffix(')'))
                .and_then(|t| t.parse().ok())
                .unwrap_or(0),
            None => 0,
        })
        .sum()
}

#[test]
fn a_tree_the_simulated_github_changed_fails_the_publication_and_opens_no_pull_request() {
    let out = local_run(&["--scenario", "tree-mismatch"], &[]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    contains_all(
        &stdout,
        &[
            "scenario tree-mismatch: the simulated GitHub adds INJECTED-BY-THE-SIMULATED-GITHUB.txt",
            "failure tree-mismatch: ",
            "(NOT proven)",
            "job publish: failure",
            "decision: fail (exit 1)",
            "no pull request",
            "local-run: gate=fail, exit 1",
        ],
    );
    contains_none(&stdout, &["POST /repos/local/greeting/pulls"]);
    // The replay record only, no gate check run.
    assert_eq!(record_and_gate_check_runs(&stdout), 1, "{stdout}");
    // The branch is left where the commit put it: its tree is not git's.
    let expected = value_after(&stdout, "expected tree (git's, the plan's):");
    let published = value_after(&stdout, "published tree (read back by gate publish):");
    assert_eq!(expected.len(), 40);
    assert_eq!(published.len(), 40);
    assert_ne!(expected, published);
    let branch = value_after(&stdout, "branch agent-team/local-accept at");
    assert!(branch.ends_with(&format!("(tree {published})")), "{branch}");
}

#[test]
fn unknown_sample_or_scenario_is_a_usage_error() {
    for args in [["--sample", "nope"], ["--scenario", "nope"]] {
        let out = local_run(&args, &[]);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn binaries_that_are_not_there_are_an_error_before_anything_runs() {
    let empty = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_local-run"))
        .arg("--binaries")
        .arg(empty.path())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stdout}\n{stderr}");
    assert!(stderr.contains("read the stage binary"), "{stderr}");
    contains_none(&stdout, &["$ gate dispatch", "job guard"]);
}
