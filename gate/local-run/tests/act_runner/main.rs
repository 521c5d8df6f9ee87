//! The committed workflow files, executed by an independent Actions runner (nektos/act, host
//! mode) as a hosted runner's non-root user with sudo: the whole loop, dispatcher to draft pull
//! request, per scenario. `tests/act/README.md` describes the harness and where act differs
//! from GitHub.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod harness;

use harness::{
    Adoption, PROJECT_REPOSITORY, Revision, Scenario, ScenarioRun, assert_no_secret_leaked, play,
    play_adoption, play_revisions, project, rehearse_release,
};
use local_run::samples::BASE_FILES;

fn read(rel: &str) -> Vec<u8> {
    std::fs::read(project().join(rel)).unwrap()
}

/// The sample crate, with this project's own policy file beside the caller that names it.
fn sample_files() -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = BASE_FILES
        .iter()
        .map(|(p, b)| ((*p).to_owned(), b.to_vec()))
        .collect();
    files.push((
        ".github/agent-team-policy.yml".to_owned(),
        read(".github/agent-team-policy.yml"),
    ));
    files
}

fn own_caller() -> (String, Vec<u8>) {
    (
        "agent-team-apply.yml".to_owned(),
        read(".github/workflows/agent-team-apply.yml"),
    )
}

fn sample_scope() -> Vec<String> {
    ["src/**", "docs/**", "build.rs"]
        .map(str::to_owned)
        .to_vec()
}

/// A scenario on the sample crate with this repository's caller, scope and toolchain.
fn sample(name: &'static str, task_id: &'static str, diff: Vec<u8>) -> Scenario {
    Scenario {
        name,
        files: sample_files(),
        gitlinks: Vec::new(),
        caller: own_caller(),
        local_reusable: true,
        diff,
        scope: sample_scope(),
        task_id,
        rust_toolchain: true,
        attempts: 1,
    }
}

fn conclusions(run: &ScenarioRun) -> Vec<(String, String)> {
    run.conclusions("apply")
}

fn expect(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

/// The four jobs of the call `apply`, each `success`.
fn assert_every_job_succeeded(run: &ScenarioRun) {
    let all = expect(&[
        ("guard", "success"),
        ("build-test", "success"),
        ("decide", "success"),
        ("publish", "success"),
    ]);
    assert_eq!(conclusions(run), all, "{}\n{}", run.summary(), run.act_log);
}

/// The guard accepted, the build-test job failed at its build step, decide failed: the job of
/// that step.
fn build_step_failed(run: &ScenarioRun) -> &harness::JobRecord {
    let summary = run.summary();
    assert_eq!(
        conclusions(run),
        expect(&[
            ("guard", "success"),
            ("build-test", "failure"),
            ("decide", "failure"),
        ]),
        "{summary}"
    );
    let build = run.job("apply", "build-test");
    assert_eq!(
        run.step(
            build,
            "Build and test the patched tree, then check what it wrote"
        ),
        Some("failure"),
        "{summary}"
    );
    build
}

#[test]
fn the_accepted_sample_becomes_a_proven_draft_pull_request_as_the_runner_user() {
    let run = play(sample(
        "accepted-sample",
        "accept-1",
        read("fixtures/sample/accept.diff"),
    ));
    let summary = run.summary();
    assert_every_job_succeeded(&run);
    assert_eq!(
        run.dispatch_exit,
        Some(0),
        "{summary}\n{}",
        run.dispatch_stderr
    );
    assert_eq!(run.dispatch_doc["decision"], "pass", "{}", run.dispatch_doc);
    let head = run
        .refs
        .get("refs/heads/agent-team/accept-1")
        .expect("the branch");
    assert_ne!(head, &run.base);
    // The tree proven: the published head holds exactly the tree git computes locally.
    assert!(run.expected_tree.is_some());
    assert_eq!(
        run.trees.get(head),
        run.expected_tree.as_ref(),
        "the published tree is git's: {summary}"
    );
    assert_eq!(run.pulls.len(), 1, "{summary}");
    assert!(run.pulls[0].1, "the pull request is a draft");
    assert!(
        run.check_runs
            .iter()
            .any(|(_, sha, c)| sha == head && c.as_deref() == Some("success")),
        "{summary}"
    );
    // The build-test report reached its artifact, read as the runner user.
    let (name, files) = run
        .artifacts
        .iter()
        .find(|(n, _)| n.starts_with("build-test-report-non-authoritative-"))
        .expect("the report artifact");
    assert!(name.ends_with("-attempt-1"), "{name}");
    assert!(files.contains(&"build-test.json".to_owned()), "{files:?}");
    assert_no_secret_leaked(&run);
}

/// Every job of the caller as the dispatcher's result lists them, for messages.
fn failing_reasons(run: &ScenarioRun) -> String {
    format!("{}\n{}", run.dispatch_doc, run.dispatch_stderr)
}

#[test]
fn a_build_hook_attack_fails_build_test_and_nothing_is_published() {
    let run = play(sample(
        "hook-attack",
        "hook-1",
        read("fixtures/sample/hook-attack.diff"),
    ));
    let summary = run.summary();
    let build = build_step_failed(&run);
    assert!(build.log.contains("build-wrote"), "{}", run.errors(build));
    assert_eq!(run.dispatch_exit, Some(1), "{}", failing_reasons(&run));
    assert_eq!(run.dispatch_doc["decision"], "fail", "{}", run.dispatch_doc);
    assert!(
        !run.refs.keys().any(|r| r.contains("agent-team/")),
        "{:?}",
        run.refs
    );
    assert!(
        run.pulls.is_empty() && run.check_runs.is_empty(),
        "{summary}"
    );
    assert_no_secret_leaked(&run);
}

#[test]
fn a_denied_path_fails_the_guard_job_and_the_dispatcher_names_the_rule() {
    let files = sample_files();
    let diff = harness::git_diff(
        &files,
        &[(
            ".github/workflows/exfiltrate.yml",
            Some(b"on: push\njobs: {}\n"),
        )],
    );
    let run = play(Scenario {
        name: "denied-path",
        files,
        gitlinks: Vec::new(),
        caller: own_caller(),
        local_reusable: true,
        diff,
        scope: ["src/**", ".github/**"].map(str::to_owned).to_vec(),
        task_id: "denied-1",
        rust_toolchain: true,
        attempts: 1,
    });
    let summary = run.summary();
    assert_eq!(
        conclusions(&run),
        expect(&[("guard", "failure"), ("decide", "failure")]),
        "{summary}"
    );
    let guard = run.job("apply", "guard");
    assert_eq!(
        run.step(guard, "Validate the diff as data"),
        Some("failure"),
        "{summary}"
    );
    assert_eq!(run.dispatch_exit, Some(1), "{}", failing_reasons(&run));
    assert!(
        failing_reasons(&run).contains("denied-path"),
        "the dispatcher's result names the rule: {}",
        failing_reasons(&run)
    );
    assert!(
        run.pulls.is_empty() && run.check_runs.is_empty(),
        "{summary}"
    );
    assert_no_secret_leaked(&run);
}

#[test]
fn a_caller_calling_the_reusable_workflow_twice_in_one_run_publishes_once_with_two_reports() {
    let caller = r#"name: agent-team-apply
run-name: "agent-team-apply ${{ inputs.task_id }}"
on:
  workflow_dispatch:
    inputs:
      task_id: { type: string, required: true }
      base_sha: { type: string, required: true }
      expected_diff_sha256: { type: string, required: true }
      declared_scope: { type: string, required: true }
      diff_b64: { type: string, default: "" }
      diff_ref: { type: string, default: "" }
      dispatch_mac: { type: string, default: "" }
permissions: {}
jobs:
  unit:
    uses: ./.github/workflows/agent-team-apply-verify.yml
    permissions: { actions: read, checks: read, contents: read, pull-requests: read }
    secrets:
      AGENT_TEAM_APP_PRIVATE_KEY: ${{ secrets.AGENT_TEAM_APP_PRIVATE_KEY }}
      AGENT_TEAM_DISPATCH_KEY: ${{ secrets.AGENT_TEAM_DISPATCH_KEY }}
    with:
      build-command: cargo test --locked --offline --lib
  docs:
    uses: ./.github/workflows/agent-team-apply-verify.yml
    permissions: { actions: read, checks: read, contents: read, pull-requests: read }
    secrets:
      AGENT_TEAM_APP_PRIVATE_KEY: ${{ secrets.AGENT_TEAM_APP_PRIVATE_KEY }}
      AGENT_TEAM_DISPATCH_KEY: ${{ secrets.AGENT_TEAM_DISPATCH_KEY }}
    with:
      build-command: cargo test --locked --offline --doc
"#;
    let run = play(Scenario {
        name: "two-calls",
        files: sample_files(),
        gitlinks: Vec::new(),
        caller: (
            "agent-team-apply.yml".to_owned(),
            caller.as_bytes().to_vec(),
        ),
        local_reusable: true,
        diff: read("fixtures/sample/accept.diff"),
        scope: sample_scope(),
        task_id: "two-1",
        rust_toolchain: true,
        attempts: 1,
    });
    let summary = run.summary();
    for caller in ["unit", "docs"] {
        assert_eq!(
            run.conclusions(caller),
            expect(&[
                ("guard", "success"),
                ("build-test", "success"),
                ("decide", "success"),
                ("publish", "success"),
            ]),
            "{caller}: {summary}"
        );
    }
    let reports: Vec<&String> = run
        .artifacts
        .keys()
        .filter(|n| n.starts_with("build-test-report-non-authoritative-"))
        .collect();
    assert_eq!(reports.len(), 2, "one report per call: {summary}");
    assert_eq!(run.pulls.len(), 1, "one draft pull request: {summary}");
    // The dispatcher follows a run that calls the reusable workflow once: two calls are an
    // error to it (exit 2), never a pass it could not attribute.
    assert_eq!(run.dispatch_exit, Some(2), "{}", failing_reasons(&run));
    assert_ne!(run.dispatch_doc["decision"], "pass");
    assert_no_secret_leaked(&run);
}

/// A re-run of a run whose build-test failed (act re-runs every job: it cannot select the jobs
/// of a called workflow): each attempt's uploads get names of their own (upload-artifact refuses
/// a second upload of a name in a run, and a re-run is the same run), and the re-run, which has
/// no publication of its own to finish, is refused at the signature, before any other work.
#[test]
fn a_re_run_uploads_under_its_own_names_and_never_starts_a_publication() {
    let files = sample_files();
    let lib = String::from_utf8(read("fixtures/sample/base/src/lib.rs")).unwrap()
        + "\n#[test]\nfn fails_until_fixed() {\n    assert_eq!(1 + 1, 3);\n}\n";
    let diff = harness::git_diff(&files, &[("src/lib.rs", Some(lib.as_bytes()))]);
    let run = play(Scenario {
        files,
        attempts: 2,
        ..sample("re-run", "rerun-1", diff)
    });
    let summary = run.summary();
    let step = |jobs: &[harness::JobRecord], job: &str, step: &str| {
        jobs.iter()
            .find(|j| j.name == job)
            .and_then(|j| j.steps.iter().find(|(s, _)| s == step))
            .map(|(_, c)| c.clone())
    };
    let first = &run.attempts[0];
    assert_eq!(
        step(
            first,
            "build-test",
            "Build and test the patched tree, then check what it wrote"
        )
        .as_deref(),
        Some("failure"),
        "{summary}"
    );
    assert_eq!(
        step(
            first,
            "build-test",
            "Upload the non-authoritative build-test report"
        )
        .as_deref(),
        Some("success"),
        "{summary}"
    );
    let second = &run.attempts[1];
    assert_eq!(
        step(second, "guard", "Verify the dispatcher's signature").as_deref(),
        Some("failure"),
        "{summary}"
    );
    let guard = second.iter().find(|j| j.name == "guard").unwrap();
    assert!(
        guard.log.contains("a re-run never starts a publication"),
        "{}",
        run.errors(guard)
    );
    for attempt in [first, second] {
        assert_eq!(
            step(attempt, "guard", "Upload the guard's verdict artifact").as_deref(),
            Some("success"),
            "{summary}"
        );
    }
    let names: Vec<&String> = run.artifacts.keys().collect();
    for expected in ["-1-", "-2-"] {
        assert!(
            names
                .iter()
                .any(|n| n.starts_with("agent-team-guard-") && n.contains(expected)),
            "{names:?}"
        );
    }
    assert!(
        names
            .iter()
            .any(|n| n.starts_with("build-test-report-non-authoritative-")
                && n.ends_with("-attempt-1")),
        "{names:?}"
    );
    assert_eq!(run.dispatch_exit, Some(1), "{}", failing_reasons(&run));
    assert!(run.pulls.is_empty(), "{summary}");
    assert_no_secret_leaked(&run);
}

#[test]
fn an_image_without_rust_builds_a_python_project_with_the_example_caller() {
    let requirements = "\
pytest==8.3.4 --hash=sha256:50e16d954148559c9a74109af1eaf0c945ba2d8f30f0a3d3335edde19788b6f6
iniconfig==2.3.1 --hash=sha256:9121e2c1fdb355232495be3194c8dfe87ccc2d5dee45947b78e68f499790d7a7
packaging==26.4 --hash=sha256:81383611a09c1bc0b08b76e0fd5829d7c6824c65b27a6aee339da133f4233ea2
pluggy==1.7.0 --hash=sha256:7dd7b0d8832ba3cb632c306926ded123429211b83641b35dc5c41ad2d34f9bec
";
    let files: Vec<(String, Vec<u8>)> = vec![
        ("requirements.txt".into(), requirements.as_bytes().to_vec()),
        (
            "greeting.py".into(),
            b"def greeting(name):\n    return f\"Hello {name}\"\n".to_vec(),
        ),
        (
            "tests/test_greeting.py".into(),
            b"from greeting import greeting\n\n\ndef test_greets():\n    assert greeting(\"Ada\") == \"Hello Ada\"\n".to_vec(),
        ),
        ("pytest.ini".into(), b"[pytest]\npythonpath = .\n".to_vec()),
        (
            ".github/agent-team-policy.yml".into(),
            read("examples/policy/python.yml"),
        ),
    ];
    let test = b"from greeting import greeting\n\n\ndef test_greets():\n    assert greeting(\"Ada\") == \"Hello Ada\"\n\n\ndef test_greets_everyone():\n    assert greeting(\"world\") == \"Hello world\"\n";
    let diff = harness::git_diff(&files, &[("tests/test_greeting.py", Some(test))]);
    let run = play(Scenario {
        name: "python-without-rust",
        files,
        gitlinks: Vec::new(),
        caller: (
            "agent-team-apply.yml".to_owned(),
            read("examples/python.yml"),
        ),
        local_reusable: false,
        diff,
        scope: ["tests/**", "*.py"].map(str::to_owned).to_vec(),
        task_id: "py-1",
        rust_toolchain: false,
        attempts: 1,
    });
    let summary = run.summary();
    assert_every_job_succeeded(&run);
    assert!(run.act_log.contains("2 passed"), "pytest ran both tests");
    assert_eq!(run.dispatch_exit, Some(0), "{}", failing_reasons(&run));
    assert_eq!(run.pulls.len(), 1, "{summary}");
    assert_no_secret_leaked(&run);
}

#[test]
fn a_base_whose_own_workflow_would_run_the_agents_code_with_secrets_fails_readiness() {
    let mut files = sample_files();
    files.push((
        ".github/workflows/ci.yml".to_owned(),
        b"name: ci\non: [push, pull_request]\njobs:\n  test:\n    runs-on: ubuntu-24.04\n    steps:\n      - uses: actions/checkout@v4\n      - run: cargo test\n        env:\n          DEPLOY_TOKEN: ${{ secrets.DEPLOY_TOKEN }}\n"
            .to_vec(),
    ));
    let run = play(Scenario {
        files,
        ..sample("readiness", "ready-1", read("fixtures/sample/accept.diff"))
    });
    let summary = run.summary();
    assert_eq!(
        conclusions(&run),
        expect(&[("guard", "failure"), ("decide", "failure")]),
        "{summary}"
    );
    let guard = run.job("apply", "guard");
    assert_eq!(
        run.step(
            guard,
            "Check the repository's own workflows (the second execution)"
        ),
        Some("failure"),
        "{summary}"
    );
    assert_eq!(run.dispatch_exit, Some(1), "{}", failing_reasons(&run));
    assert!(run.pulls.is_empty(), "{summary}");
    assert_no_secret_leaked(&run);
}

/// The release, played (release-publish.yml as the runner user, the build's assets given), then
/// an adoption that pins what the release notes say: the tag's commit, whose reusable workflow
/// pins the published assets.
#[test]
fn a_release_tags_a_pin_commit_of_its_assets_and_an_adoption_of_that_tag_passes() {
    let rehearsal = rehearse_release();
    let log = &rehearsal.act_log;
    assert_eq!(rehearsal.act_exit, Some(0), "{log}");
    let [job] = rehearsal.jobs.as_slice() else {
        panic!("{} jobs: {log}", rehearsal.jobs.len());
    };
    assert_eq!(job.conclusion, "success", "{log}");
    let pin = rehearsal.pin.clone().expect("no tag v0.1.0");
    assert_ne!(pin, rehearsal.built);
    assert_eq!(rehearsal.pin_parents, vec![rehearsal.built.clone()]);
    let workflow = ".github/workflows/agent-team-apply-verify.yml";
    assert_eq!(rehearsal.changed, vec![workflow.to_owned()], "{log}");
    let pinned = String::from_utf8(rehearsal.files[workflow].clone()).unwrap();
    let sums = String::from_utf8(rehearsal.built_assets["SHA256SUMS"].clone()).unwrap();
    for line in sums.lines() {
        let (hash, _) = line.split_once("  ").unwrap();
        assert!(
            pinned.contains(&format!("\"{hash}\"")),
            "{hash} is not pinned"
        );
    }
    let release = rehearsal.release.clone().expect("no release");
    assert!(!release.draft);
    let published: Vec<(String, Vec<u8>)> = release.assets.clone();
    let mut names: Vec<&str> = published.iter().map(|(n, _)| n.as_str()).collect();
    names.sort_unstable();
    let mut built: Vec<&str> = rehearsal.built_assets.keys().map(String::as_str).collect();
    built.sort_unstable();
    assert_eq!(names, built);
    for (name, bytes) in &published {
        assert_eq!(bytes, &rehearsal.built_assets[name], "{name}");
    }
    let uses = format!("{PROJECT_REPOSITORY}/{workflow}@{pin} # v0.1.0");
    assert!(release.body.contains(&uses), "{}", release.body);
    assert!(
        !log.contains(&rehearsal.token) && !log.contains(harness::APP_PRIVATE_KEY),
        "a token or key reached the log"
    );

    // The adopter copies the example caller of the tagged commit and pins it as the notes say.
    let example = String::from_utf8(rehearsal.files["examples/rust.yml"].clone()).unwrap();
    let placeholder = format!("{PROJECT_REPOSITORY}/{workflow}@{}", "0".repeat(40));
    assert!(example.contains(&placeholder), "{example}");
    let caller = example.replace(
        &placeholder,
        &format!("{PROJECT_REPOSITORY}/{workflow}@{pin}"),
    );
    let run = play_adoption(
        Scenario {
            name: "adoption-of-the-release",
            files: sample_files(),
            gitlinks: Vec::new(),
            caller: ("agent-team-apply.yml".to_owned(), caller.into_bytes()),
            local_reusable: false,
            diff: read("fixtures/sample/accept.diff"),
            scope: sample_scope(),
            task_id: "adopt-1",
            rust_toolchain: true,
            attempts: 1,
        },
        &Adoption {
            reusable_ref: format!("{PROJECT_REPOSITORY}@{pin}"),
            workflow: rehearsal.files[workflow].clone(),
            bundle: &rehearsal.bundle,
        },
    );
    let summary = run.summary();
    assert_every_job_succeeded(&run);
    // Every job installed the published x86_64 asset from the release host.
    let access = std::fs::read_to_string(&rehearsal.server.log).unwrap();
    let asset = format!(
        "\"GET /{PROJECT_REPOSITORY}/releases/download/v0.1.0/agent-team-apply-v0.1.0-x86_64-unknown-linux-musl.tar.gz HTTP/1.1\" 200"
    );
    assert_eq!(access.matches(&asset).count(), 4, "{access}");
    assert_eq!(run.dispatch_exit, Some(0), "{}", failing_reasons(&run));
    assert_eq!(run.pulls.len(), 1, "{summary}");
    assert_no_secret_leaked(&run);
}

/// The caller's knobs, as the runner user plays them: a trusted setup command installs a tool
/// the build then runs from the sandbox, a restore-only cache (a miss: the harness has no cache
/// service), the publish environment and the protected-files label renamed, and reviewers
/// requested because the diff changes a protected file (`build.rs`).
#[test]
fn the_callers_knobs_set_up_a_tool_restore_a_cache_and_request_reviewers_for_protected_files() {
    let caller = String::from_utf8(read(".github/workflows/agent-team-apply.yml")).unwrap();
    let build = "      build-command: cargo test --workspace --locked --offline\n";
    assert!(caller.contains(build));
    let knobs = r#"      setup-command: |
        mkdir -p "$AGENT_TEAM_TOOLS/bin"
        printf '#!/bin/sh\necho "the setup tool ran in the sandbox"\n' > "$AGENT_TEAM_TOOLS/bin/setup-tool"
        chmod 0755 "$AGENT_TEAM_TOOLS/bin/setup-tool"
      build-command: '"$AGENT_TEAM_TOOLS/bin/setup-tool" && cargo test --workspace --locked --offline'
      cache-key: sample-cargo-v1
      cache-paths: ~/.cache/agent-team-sample
      environment: agent-team-publish-sample
      protected-label: "needs: human review"
      protected-reviewers: octocat,local/reviewers
"#;
    let caller = caller.replace(build, knobs);
    let files = sample_files();
    let build_rs = b"fn main() {\n    println!(\"cargo:rerun-if-changed=build.rs\");\n}\n";
    let diff = harness::git_diff(&files, &[("build.rs", Some(build_rs))]);
    let run = play(Scenario {
        name: "caller-knobs",
        caller: ("agent-team-apply.yml".to_owned(), caller.into_bytes()),
        ..sample("caller-knobs", "knobs-1", diff)
    });
    let summary = run.summary();
    assert_every_job_succeeded(&run);
    assert!(
        run.act_log.contains("the setup tool ran in the sandbox"),
        "the build did not run the tool the setup command installed"
    );
    assert!(
        run.act_log
            .contains("Cache not found for input keys: sample-cargo-v1"),
        "the cache was not restored"
    );
    assert_eq!(run.dispatch_exit, Some(0), "{}", failing_reasons(&run));
    let [(labels, reviewers, teams)] = run.pull_reviews.as_slice() else {
        panic!("{summary}");
    };
    assert!(
        labels.iter().any(|l| l == "needs: human review"),
        "{labels:?}"
    );
    assert_eq!(reviewers, &vec!["octocat".to_owned()]);
    assert_eq!(teams, &vec!["reviewers".to_owned()]);
    assert_no_secret_leaked(&run);
}

/// The submodule of the post-step escape's base: a gitlink and its `.gitmodules` entry. Checked
/// out without submodules (the checkout's default), its path is an empty directory of the work
/// tree, which the build can write.
const SUBMODULE: &str = "vendor/greeting-data";
/// Where the planted payload leaves its mark, should anything ever run it (outside the build's
/// view: the build's /tmp is its own).
const ESCAPE_MARKER: &str = "/tmp/agent-team-act-post-step-escape.marker";
/// The variable the payload appends to `$GITHUB_ENV`.
const PLANTED_VARIABLE: &str = "AGENT_TEAM_PLANTED";

/// What the build runs (`sh -c PLANT plant <work tree>`): a git repository in the submodule's
/// empty directory, with an index (git reads it, and so runs `core.fsmonitor`, whenever
/// `git submodule foreach --recursive` recurses into it), a remote, `core.fsmonitor` and every
/// hook pointing to a payload that creates the marker and appends to `$GITHUB_ENV`.
fn plant_script() -> String {
    format!(
        r#"set -eu
sub="$1/{SUBMODULE}"
git -C "$sub" init -q
payload="$sub/.git/agent-team-payload"
printf '#!/bin/sh\necho "ran: $0 $*" >> {ESCAPE_MARKER}\necho "{PLANTED_VARIABLE}=by-the-build" >> "$GITHUB_ENV"\nexit 1\n' > "$payload"
chmod 0755 "$payload"
for hook in post-checkout pre-commit post-merge post-index-change reference-transaction pre-push; do
  cp "$payload" "$sub/.git/hooks/$hook"
done
blob="$(echo planted | git -C "$sub" hash-object -w --stdin)"
git -C "$sub" update-index --add --cacheinfo "100644,$blob,planted"
git -C "$sub" config remote.origin.url https://github.com/local/greeting-data.git
git -C "$sub" config core.hooksPath "$sub/.git/hooks"
git -C "$sub" config core.fsmonitor "$payload"
echo "planted a repository at $sub"
"#
    )
}

/// Files of a base tree: path and bytes.
type Files = Vec<(String, Vec<u8>)>;
/// Gitlinks of a base tree: path and commit.
type Gitlinks = Vec<(String, String)>;

/// The base of the post-step escape: the sample crate, a `.gitmodules` and its gitlink.
fn submodule_base() -> (Files, Gitlinks) {
    let mut files = sample_files();
    files.push((
        ".gitmodules".to_owned(),
        format!(
            "[submodule \"{SUBMODULE}\"]\n\tpath = {SUBMODULE}\n\turl = https://github.com/local/greeting-data.git\n"
        )
        .into_bytes(),
    ));
    let gitlinks = vec![(
        SUBMODULE.to_owned(),
        "5d2f1b0c9a8e7d6c5b4a39281706f5e4d3c2b1a0".to_owned(),
    )];
    (files, gitlinks)
}

/// The control: the payload is live. The same plant in a checkout that nothing protects (a
/// clone of the same base, no sandbox, no overlay), then the checkout stand-in's post step run
/// on it as act runs it (`node post.js`, the saved path in `STATE_repositoryPath`): `git
/// submodule foreach --recursive` enters the planted repository, git runs its `core.fsmonitor`,
/// the marker appears and `$GITHUB_ENV` holds the planted variable. Without this, the
/// scenario's "no marker" would prove nothing.
fn assert_the_plant_fires_in_an_unprotected_checkout() {
    let _ = std::fs::remove_file(ESCAPE_MARKER);
    let dir = tempfile::tempdir().unwrap();
    let (files, gitlinks) = submodule_base();
    let origin = dir.path().join("origin");
    let git = |cwd: &std::path::Path, args: &[&str]| {
        let out = std::process::Command::new("git")
            .args([
                "-c",
                "user.name=Harness",
                "-c",
                "user.email=h@example.invalid",
            ])
            .args(args)
            .current_dir(cwd)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
    };
    for (path, bytes) in &files {
        let p = origin.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }
    git(&origin, &["init", "-q"]);
    git(&origin, &["add", "-A"]);
    for (path, commit) in &gitlinks {
        git(
            &origin,
            &[
                "update-index",
                "--add",
                "--cacheinfo",
                &format!("160000,{commit},{path}"),
            ],
        );
    }
    git(&origin, &["commit", "-q", "-m", "base"]);
    let work = dir.path().join("work");
    git(
        dir.path(),
        &[
            "clone",
            "-q",
            origin.to_str().unwrap(),
            work.to_str().unwrap(),
        ],
    );
    assert!(
        std::fs::read_dir(work.join(SUBMODULE))
            .unwrap()
            .next()
            .is_none(),
        "the submodule's path is an empty directory"
    );
    let plant = std::process::Command::new("sh")
        .args(["-c", &plant_script(), "plant"])
        .arg(&work)
        .output()
        .unwrap();
    assert!(plant.status.success(), "{plant:?}");
    let github_env = dir.path().join("github_env");
    std::fs::write(&github_env, "").unwrap();
    let post = std::process::Command::new("node")
        .arg(harness::project().join("tests/act/actions/checkout/post.js"))
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", dir.path())
        .env("RUNNER_TEMP", dir.path())
        .env("GITHUB_ENV", &github_env)
        .env("GITHUB_SERVER_URL", "https://github.com")
        .env("STATE_repositoryPath", &work)
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&post.stdout);
    assert!(post.status.success(), "{post:?}");
    assert!(
        log.contains("[command]/usr/bin/git submodule foreach --recursive")
            && log.contains(&format!("Entering '{SUBMODULE}'")),
        "{log}"
    );
    assert!(
        std::path::Path::new(ESCAPE_MARKER).exists(),
        "the post step did not run the planted core.fsmonitor: {log}"
    );
    let planted = std::fs::read_to_string(&github_env).unwrap();
    assert!(planted.contains(PLANTED_VARIABLE), "{planted:?}");
    std::fs::remove_file(ESCAPE_MARKER).unwrap();
}

/// The post-step escape: a base with a submodule, checked out without it, and a diff whose test
/// plants a git repository (`core.fsmonitor`, hooks, an index) in the submodule's empty
/// directory. The checkouts' post steps run anyway (`always()`) and run `git submodule foreach
/// --recursive` in `work` as the runner user with the job's environment; the build wrote through
/// guard run's overlay, whose upper layer is gone, so `work` is the checkout as it was and the
/// payload never runs. guard decides: the after-build check finds the nested repository
/// (`build-wrote`), build-test fails, decide fails, nothing is published.
#[test]
fn a_repository_planted_in_an_empty_submodule_never_reaches_the_checkouts_post_steps() {
    assert_the_plant_fires_in_an_unprotected_checkout();

    let (files, gitlinks) = submodule_base();
    let lib = String::from_utf8(read("fixtures/sample/base/src/lib.rs")).unwrap()
        + &format!(
            "\n#[test]\nfn plants_a_repository_in_the_submodules_directory() {{\n    let out = std::process::Command::new(\"sh\")\n        .args([\"-c\", PLANT, \"plant\", env!(\"CARGO_MANIFEST_DIR\")])\n        .output()\n        .expect(\"sh\");\n    assert!(out.status.success(), \"{{out:?}}\");\n}}\n\nconst PLANT: &str = r##\"{}\"##;\n",
            plant_script()
        );
    let diff = harness::git_diff(&files, &[("src/lib.rs", Some(lib.as_bytes()))]);
    let _ = std::fs::remove_file(ESCAPE_MARKER);
    let run = play(Scenario {
        files,
        gitlinks,
        ..sample("post-step-escape", "escape-1", diff)
    });
    let summary = run.summary();
    let build = build_step_failed(&run);
    // The plant happened, in the build's layer: the check after the build names it.
    assert!(
        build.log.contains("build-wrote") && build.log.contains(&format!("{SUBMODULE}/.git")),
        "{}",
        run.errors(build)
    );
    // Every checkout of every job that ran had its post step, and each succeeded.
    for job in run.attempts.last().unwrap() {
        for (step, conclusion) in &job.steps {
            if step.starts_with("Check out") && conclusion == "success" {
                assert_eq!(
                    run.step(job, &format!("Post {step}")),
                    Some("success"),
                    "{} / {}: {step} has no successful post step: {:?}",
                    job.caller,
                    job.name,
                    job.steps
                );
            }
        }
    }
    // The post step of `work` ran its `git submodule foreach --recursive` there and found no
    // repository to enter: the directory is the checkout's empty one.
    assert!(
        build
            .log
            .matches("[command]/usr/bin/git submodule foreach --recursive")
            .count()
            >= 6,
        "the two post steps ran three each: {}",
        build.log
    );
    assert!(
        !run.act_log.contains(&format!("Entering '{SUBMODULE}'")),
        "a post step entered the planted repository"
    );
    assert!(
        !std::path::Path::new(ESCAPE_MARKER).exists(),
        "the planted core.fsmonitor ran outside the sandbox: {}",
        std::fs::read_to_string(ESCAPE_MARKER).unwrap_or_default()
    );
    // act logs each line a step appends to GITHUB_ENV as `::set-env:: NAME=value`.
    assert!(
        !run.act_log
            .contains(&format!("::set-env:: {PLANTED_VARIABLE}=")),
        "GITHUB_ENV got the planted variable"
    );
    assert_eq!(run.dispatch_exit, Some(1), "{}", failing_reasons(&run));
    assert!(
        run.pulls.is_empty() && run.check_runs.is_empty(),
        "{summary}"
    );
    assert_no_secret_leaked(&run);
}

/// The files of `files` with `changes` written over them.
fn changed(files: &[(String, Vec<u8>)], changes: &[(&str, &[u8])]) -> Vec<(String, Vec<u8>)> {
    let mut out = files.to_vec();
    for (path, bytes) in changes {
        out.retain(|(p, _)| p != path);
        out.push(((*path).to_owned(), bytes.to_vec()));
    }
    out
}

/// The gate's check runs (the workflow's default name) on `commit`: their conclusions.
fn gate_checks_on(run: &ScenarioRun, commit: &str) -> Vec<Option<String>> {
    run.check_runs
        .iter()
        .filter(|(name, sha, _)| name == "agent-team-apply / gate" && sha == commit)
        .map(|(_, _, c)| c.clone())
        .collect()
}

/// The revise loop as the runner user runs it. Round 1 proposes (a protected `build.rs`); round
/// 2 revises the same draft (`gate dispatch --revise 1` on round 1's head, a change of
/// `src/lib.rs` alone): a second App-signed commit on the branch whose only parent is the first,
/// its tree git's tree of round 1's head with round 2's diff applied, still one pull request,
/// its body round 2, a check run on each head, and round 2's check run counting round 1's
/// protected file (the whole branch). Round 3 revises again, but another writer moves the branch
/// while the run goes (at the publication's `createCommitOnBranch`): every job before publish
/// succeeds (the workflow's require-base saw the signed head), and `gate publish` refuses with
/// `head-moved`: the branch stays at the other writer's commit, no third App commit, no check
/// run on any head but rounds 1 and 2's, the body still round 2's. Round 4 is dispatched on
/// round 2's head, an old one now: the workflow's require-base refuses it in the guard job.
#[test]
fn a_revision_adds_a_proven_commit_to_the_same_draft_and_a_moved_head_is_refused() {
    let files = sample_files();
    let build_rs: &[u8] = b"fn main() {\n    println!(\"cargo:rerun-if-changed=build.rs\");\n}\n";
    let diff1 = harness::git_diff(&files, &[("build.rs", Some(build_rs))]);
    let files1 = changed(&files, &[("build.rs", build_rs)]);
    let lib = String::from_utf8(read("fixtures/sample/base/src/lib.rs")).unwrap()
        + "\n/// The round that wrote this.\npub fn round() -> u32 {\n    2\n}\n";
    let diff2 = harness::git_diff(&files1, &[("src/lib.rs", Some(lib.as_bytes()))]);
    let files2 = changed(&files1, &[("src/lib.rs", lib.as_bytes())]);
    let notes: &[u8] = b"# Round 3\n";
    let diff3 = harness::git_diff(&files2, &[("docs/round-3.md", Some(notes))]);
    let diff4 = harness::git_diff(&files2, &[("docs/round-4.md", Some(notes))]);
    let runs = play_revisions(
        sample("revise-loop", "revise-1", diff1),
        &[
            Revision {
                diff: diff2,
                pull_request: 1,
                move_branch_at: None,
                on_head_of_round: None,
            },
            Revision {
                diff: diff3,
                pull_request: 1,
                move_branch_at: Some(("POST", "/graphql")),
                on_head_of_round: None,
            },
            Revision {
                diff: diff4,
                pull_request: 1,
                move_branch_at: None,
                on_head_of_round: Some(2),
            },
        ],
    );
    let [one, two, three, four] = runs.as_slice() else {
        panic!("four rounds, not {}", runs.len());
    };
    let branch = "refs/heads/agent-team/revise-1";

    // Round 1: a proven draft.
    assert_every_job_succeeded(one);
    assert_eq!(one.dispatch_exit, Some(0), "{}", failing_reasons(one));
    let head1 = one.refs.get(branch).expect("round 1's branch").clone();
    assert_eq!(one.trees.get(&head1), one.expected_tree.as_ref());
    assert_eq!(gate_checks_on(one, &head1), [Some("success".to_owned())]);
    assert_eq!(one.pulls.len(), 1, "{}", one.summary());

    // Round 2: one more App-signed commit on the same branch, on round 1's head, proven.
    let summary = two.summary();
    assert_every_job_succeeded(two);
    assert_eq!(two.dispatch_exit, Some(0), "{}", failing_reasons(two));
    assert_eq!(two.dispatch_doc["decision"], "pass", "{}", two.dispatch_doc);
    assert_eq!(two.base, head1, "round 2 is dispatched on round 1's head");
    let head2 = two.refs.get(branch).expect("round 2's branch").clone();
    assert_ne!(head2, head1);
    assert_eq!(two.created_commits.get(&head2), Some(&vec![head1.clone()]));
    assert_eq!(
        two.created_commits.get(&head1),
        Some(&vec![one.base.clone()])
    );
    assert_eq!(two.created_commits.len(), 2, "{:?}", two.created_commits);
    assert!(two.expected_tree.is_some());
    assert_eq!(
        two.trees.get(&head2),
        two.expected_tree.as_ref(),
        "round 2's tree is git's of round 1's head with round 2's diff: {summary}"
    );
    assert_eq!(two.pulls.len(), 1, "still one pull request: {summary}");
    assert!(two.pulls[0].1, "still a draft");
    assert!(
        two.pull_bodies[0].starts_with("<!-- agent-team-apply round 2 dispatch ")
            && two.pull_bodies[0].contains("**Round 2** of this draft"),
        "{}",
        two.pull_bodies[0]
    );
    assert_eq!(gate_checks_on(two, &head1), [Some("success".to_owned())]);
    assert_eq!(gate_checks_on(two, &head2), [Some("success".to_owned())]);
    // Round 2 touched no protected file; the branch has round 1's build.rs.
    let round2_check = two
        .check_summaries
        .iter()
        .rev()
        .find(|(sha, _)| *sha == head2)
        .map(|(_, s)| s.clone())
        .unwrap_or_default();
    assert!(
        round2_check.contains("Protected files need review (1)")
            && round2_check.contains("build.rs"),
        "{round2_check}"
    );
    let (labels, _, _) = &two.pull_reviews[0];
    assert!(
        labels.iter().any(|l| l == "agent-team: protected files"),
        "{labels:?}"
    );

    // Round 3: the branch moved under the run; publish refuses, nothing is written.
    let summary = three.summary();
    assert_eq!(
        conclusions(three),
        expect(&[
            ("guard", "success"),
            ("build-test", "success"),
            ("decide", "success"),
            ("publish", "failure"),
        ]),
        "{summary}"
    );
    assert_eq!(three.base, head2, "round 3 is dispatched on round 2's head");
    let publish = three.job("apply", "publish");
    assert_eq!(
        three.step(publish, "Require the base commit on the default branch"),
        Some("success"),
        "the workflow's require-base saw the signed head: {summary}"
    );
    assert_eq!(
        three.step(
            publish,
            "Publish, prove the tree, open the draft pull request, post the check run"
        ),
        Some("failure"),
        "{summary}"
    );
    assert!(
        publish.log.contains("error[head-moved]"),
        "gate publish names head-moved: {}",
        three.errors(publish)
    );
    assert_eq!(three.dispatch_exit, Some(1), "{}", failing_reasons(three));
    let moved = three.refs.get(branch).expect("the branch").clone();
    assert!(
        moved != head2 && !three.created_commits.contains_key(&moved),
        "the branch is at the other writer's commit {moved}"
    );
    assert_eq!(
        three.created_commits.len(),
        2,
        "no commit of round 3: {:?}",
        three.created_commits
    );
    for (name, sha, conclusion) in &three.check_runs {
        assert!(
            *sha != moved,
            "a check run on the moved head: {name} {conclusion:?}"
        );
    }
    assert_eq!(gate_checks_on(three, &head1), [Some("success".to_owned())]);
    assert_eq!(gate_checks_on(three, &head2), [Some("success".to_owned())]);
    assert_eq!(three.pulls.len(), 1);
    assert_eq!(
        three.pull_bodies[0], two.pull_bodies[0],
        "the body is round 2's"
    );

    // Round 4: dispatched on round 2's head, which is no longer the branch's: the workflow's
    // require-base refuses in the guard job, before any checkout of the diff or build.
    let summary = four.summary();
    assert_eq!(four.base, head2, "round 4 is dispatched on an old head");
    assert_eq!(
        conclusions(four),
        expect(&[("guard", "failure"), ("decide", "failure")]),
        "{summary}"
    );
    let guard = four.job("apply", "guard");
    assert_eq!(
        four.step(guard, "Require the base commit on the default branch"),
        Some("failure"),
        "{summary}"
    );
    assert!(
        guard.log.contains(&format!(
            "base_sha {head2} is not the head of agent-team/revise-1"
        )),
        "the require-base refusal: {}",
        four.errors(guard)
    );
    assert_eq!(four.dispatch_exit, Some(1), "{}", failing_reasons(four));
    assert_eq!(
        four.refs.get(branch),
        Some(&moved),
        "the branch is unchanged"
    );
    assert_eq!(four.created_commits.len(), 2, "{:?}", four.created_commits);
    assert_eq!(
        four.check_runs, three.check_runs,
        "no check run, not even a replay record (guard reads only): {summary}"
    );
    assert!(
        four.check_runs
            .iter()
            .all(|(name, sha, _)| name != "agent-team-apply / gate"
                || *sha == head1
                || *sha == head2),
        "{summary}"
    );
    assert_eq!(four.pull_bodies[0], two.pull_bodies[0]);
    for run in [one, two, three, four] {
        assert_no_secret_leaked(run);
    }
}

/// A real project's commit (`fixtures/real/<name>/`), as it is: its base is the parent's tree
/// with nothing added but the caller (an example, byte for byte) and the adopter's policy (the
/// example's, and the repository's default GITHUB_TOKEN read-only: Settings → Actions → General
/// → Workflow permissions; the projects' own `pull_request` workflows would otherwise run the
/// agent's branch with a write-scoped token, and guard readiness stops such a run, as the
/// scenario `readiness` shows). The agent proposes the commit's own diff, its paths as the scope.
fn play_real(
    name: &'static str,
    parent: &str,
    commit: &str,
    caller: &str,
    policy: &str,
    task_id: &'static str,
) -> ScenarioRun {
    let real = harness::real_commit(
        &format!("fixtures/real/{name}/{name}.bundle"),
        parent,
        commit,
    );
    let mut policy = read(policy);
    policy.extend_from_slice(b"readiness:\n  default-token: read\n");
    let mut files = real.files;
    files.push((".github/agent-team-policy.yml".into(), policy));
    let run = play(Scenario {
        name,
        files,
        gitlinks: Vec::new(),
        caller: ("agent-team-apply.yml".to_owned(), read(caller)),
        local_reusable: false,
        diff: real.diff,
        scope: real.paths,
        task_id,
        rust_toolchain: false,
        attempts: 1,
    });
    let summary = run.summary();
    assert_every_job_succeeded(&run);
    let build = run.job("apply", "build-test");
    assert_eq!(
        run.step(
            build,
            "Fetch the build's dependencies (trusted, before the sandbox)"
        ),
        Some("success"),
        "{summary}"
    );
    assert_eq!(run.dispatch_exit, Some(0), "{}", failing_reasons(&run));
    let head = run
        .refs
        .get(&format!("refs/heads/agent-team/{task_id}"))
        .expect("the branch");
    assert_eq!(
        run.trees.get(head),
        run.expected_tree.as_ref(),
        "the published tree is git's: {summary}"
    );
    assert_eq!(run.pulls.len(), 1, "{summary}");
    assert_eq!(
        harness::step_users(&run.act_log),
        ["runner (uid 1001, gid 121, groups 121, passwordless sudo)"],
        "measured in the steps"
    );
    assert_no_secret_leaked(&run);
    run
}

/// pallets/flask at "all teardown callbacks are called despite errors" (`fbb6f0b`:
/// src/flask/{app,ctx,helpers}.py, five test files, CHANGES.rst, docs/appcontext.rst) through
/// `examples/python-uv.yml`: its `pyproject.toml` and `uv.lock` as they are. pytest counts 495
/// tests at the commit (494 at its parent).
#[test]
fn flask_at_a_real_commit_installs_from_its_uv_lock_and_passes_its_tests_in_the_sandbox() {
    let run = play_real(
        "flask",
        "7b0088693ece1bd3a9238a6fdf56ed8df7a4d43b",
        "fbb6f0bc4c60a0bada0e03c3480d0ccf30a3c1df",
        "examples/python-uv.yml",
        "examples/policy/python.yml",
        "flask-1",
    );
    let build = run.job("apply", "build-test");
    // The project itself was installed from the work tree, offline, and every test passed.
    assert!(
        build
            .log
            .contains("Successfully installed Flask-3.2.0.dev0"),
        "{}",
        run.errors(build)
    );
    assert_eq!(
        harness::pytest_passed(&build.log),
        Some(495),
        "{}",
        run.errors(build)
    );
}

/// isaacs/inherits at "BlueOak-1.0.0" (`b10941c`: LICENSE becomes LICENSE.md, and package.json's
/// `license`, a protected path) through `examples/node.yml`: `npm ci` of its lock file outside
/// the tree (498 packages, node-tap 15 among them), then, in the sandbox, offline, the build
/// copies `node_modules` in (its `.bin` links as scripts: no symbolic link reaches the tree) and
/// `npm test` runs node-tap on the three test files, all passing, with full coverage.
#[test]
fn inherits_at_a_real_commit_installs_from_its_lock_and_passes_its_tests_in_the_sandbox() {
    let run = play_real(
        "inherits",
        "1286b65f07a03953d3857bf3dd1d77e8beede704",
        "b10941ca718ae3a01b4183fb4d044f055f109a74",
        "examples/node.yml",
        "examples/policy/node.yml",
        "inherits-1",
    );
    let build = run.job("apply", "build-test");
    // node-tap runs the files in parallel: its numbers follow the order they end in.
    for file in ["browser.js", "builtin.js", "old.js"] {
        let passed = build.log.lines().any(|l| {
            let l = l.trim_start_matches(['|', ' ']);
            l.starts_with("ok ") && l.contains(&format!(" - test/{file} "))
        });
        assert!(passed, "test/{file}: {}", run.errors(build));
    }
    assert!(!build.log.contains("not ok"), "{}", run.errors(build));
    // The package.json is protected: the draft is labelled for review.
    let (labels, _, _) = &run.pull_reviews[0];
    assert!(!labels.is_empty(), "{:?}", run.pull_reviews);
}
