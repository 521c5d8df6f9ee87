//! `local-run` through the real binary: the README's first command, on both bundled samples.
//!
//! The binary runs with a cleared environment (PATH, HOME, and the cargo/rustup locations so that
//! its nested `cargo build` and the sample's `cargo test` work), from a directory outside the
//! workspace, so no ambient GITHUB_* or CI variable reaches any stage.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn local_run(args: &[&str], extra_env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_local-run"));
    cmd.env_clear();
    for name in ["PATH", "HOME", "CARGO", "RUSTUP_HOME", "CARGO_HOME"] {
        if let Some(value) = std::env::var_os(name) {
            cmd.env(name, value);
        }
    }
    cmd.envs(extra_env.iter().copied())
        .args(args)
        .current_dir(std::env::temp_dir())
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn accepted_sample_passes_the_gate_and_plans_both_files() {
    let out = local_run(&[], &[]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    for needle in [
        "sample `accept`",
        "job guard: success",
        "job build-test: success",
        "\"build-test\": {\n          \"result\": \"success\"",
        "GITHUB_OUTPUT: gate=pass",
        "DECISION: gate=pass",
        "PUBLICATION PLAN (agent-team-apply/publish-plan/v2)",
        "branch:          agent-team/local-accept",
        "expectedHeadOid: ",
        "add/modify docs/usage notes.md",
        "add/modify src/lib.rs",
        "create-commit-on-branch (expectedHeadOid ",
        "= the plan's (proven)",
        "check run: \"agent-team-apply / gate\" on ",
        ": success (Gate passed)",
        "DRAFT PULL REQUEST it would open",
        "title: agent-team-apply local-accept: 2 files",
        "local-run: gate=pass, exit 0",
    ] {
        assert!(stdout.contains(needle), "missing {needle:?} in\n{stdout}");
    }
    // The build ran isolated by guard run's namespaces, or the output says loudly that it did not.
    assert!(
        stdout.contains("guard run: network: namespace (only lo)")
            || stdout.contains("!!! WARNING: guard run could not create its namespaces"),
        "{stdout}"
    );
    // expectedHeadOid is the base commit the dispatcher recorded.
    let base = stdout
        .split("base_sha=")
        .nth(1)
        .and_then(|rest| rest.get(..40))
        .unwrap();
    assert!(
        stdout.contains(&format!("expectedHeadOid: {base}")),
        "{stdout}"
    );
}

#[test]
fn hook_attack_fails_the_gate_on_build_wrote_and_plans_nothing() {
    let out = local_run(&["--sample", "hook-attack", "--keep"], &[]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    for needle in [
        "sample `hook-attack`",
        // guard accepts it: build.rs is in scope and the diff itself touches nothing denied.
        "job guard: success",
        "job build-test: failure",
        "\"build-test\": {\n          \"result\": \"failure\"",
        "GITHUB_OUTPUT: gate=fail",
        "DECISION: gate=fail",
        "reason job-not-successful: job `build-test`",
        "STOPPED BY: job build-test, step `guard run` (exit 1)",
        "error[build-wrote]: .github/workflows/release.yml (created)",
        "no publication plan",
        "local-run: gate=fail, exit 1",
    ] {
        assert!(stdout.contains(needle), "missing {needle:?} in\n{stdout}");
    }
    for absent in [
        "$ gate publish-plan",
        "PUBLICATION PLAN",
        "expectedHeadOid",
        "$ report check-run",
        "DRAFT PULL REQUEST",
    ] {
        assert!(
            !stdout.contains(absent),
            "unexpected {absent:?} in\n{stdout}"
        );
    }
    let kept = stdout
        .lines()
        .find_map(|l| l.strip_prefix("local-run: kept "))
        .map(PathBuf::from)
        .unwrap();
    let gate_job = kept.join("gate-and-pr");
    assert!(gate_job.join("decision.json").is_file());
    assert!(!gate_job.join("plan.json").exists(), "a plan was written");
    assert!(
        !gate_job.join("diff.patch").exists(),
        "the gate fetched the diff"
    );
    // The attack really happened in build-test's worktree, and only there.
    assert!(
        kept.join("build-test/work/.github/workflows/release.yml")
            .is_file()
    );
    assert!(!kept.join("origin/.github").exists());
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
    for needle in [
        "job guard: success",
        "job build-test: success",
        "DECISION: gate=pass",
        "PUBLICATION PLAN (agent-team-apply/publish-plan/v2)",
        "local-run: gate=pass, exit 0",
    ] {
        assert!(stdout.contains(needle), "missing {needle:?} in\n{stdout}");
    }
    let kept = stdout
        .lines()
        .find_map(|l| l.strip_prefix("local-run: kept "))
        .map(PathBuf::from)
        .unwrap();
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
    for verdict in ["guard/verdict.json", "build-test/verdict.json"] {
        assert_eq!(
            names(&read(verdict)["files"], "new_path"),
            want,
            "{verdict}"
        );
    }
    let plan = read("gate-and-pr/plan.json");
    assert_eq!(names(&plan["files"], "new_path"), want);
    assert_eq!(
        names(&plan["input"]["fileChanges"]["additions"], "path"),
        want
    );
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
    read("build-test/tree-after-build.json");
    // The build saw real files under those names.
    for name in [PERSIAN, FAMILY] {
        assert!(kept.join("build-test/work").join(name).is_file(), "{name}");
    }
    std::fs::remove_dir_all(&kept).unwrap();
}

#[test]
fn without_namespaces_the_build_runs_only_with_a_loud_opt_out() {
    let out = local_run(&[], &[("GUARD_RUN_SIMULATE_NO_NAMESPACES", "missing")]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    for needle in [
        "network isolation could not be established, so the command was not run",
        "!!! WARNING: guard run could not create its namespaces on this machine.",
        "$ guard run --no-isolation-because",
        "guard run: network: NOT isolated by guard",
        "DECISION: gate=pass",
    ] {
        assert!(stdout.contains(needle), "missing {needle:?} in\n{stdout}");
    }
}

#[test]
fn unknown_sample_is_a_usage_error() {
    let out = local_run(&["--sample", "nope"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
}
