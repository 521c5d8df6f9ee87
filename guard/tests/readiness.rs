//! The readiness check (the second execution): workflow fixtures in `fixtures/readiness/`, each with
//! the exact findings it must give for the published branch `agent-team/T-1` into `main`; GitHub's
//! filter patterns and expressions, table-tested; and `guard readiness` on a real repository.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use contract::readiness::{ReadinessDoc, ReadinessEvent, ReadinessMode, ReadinessResult};
use guard::readiness::expr::{self, Scope, Val};
use guard::readiness::filter::{Pattern, included};
use guard::readiness::{Event, Finding, Rule, Target, WorkflowFile, assess};

fn target() -> Target {
    Target {
        branch: "agent-team/T-1".into(),
        base_branch: "main".into(),
        repository: "octo/repo".into(),
    }
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("fixtures")
        .join("readiness")
}

fn load(name: &str) -> WorkflowFile {
    WorkflowFile {
        path: format!(".github/workflows/{name}"),
        bytes: std::fs::read(fixtures().join(name)).unwrap(),
    }
}

/// What a fixture must give: exposed jobs as (job, events, secrets), or unreadable.
enum Expect {
    Jobs(&'static [(&'static str, &'static [Event], &'static [&'static str])]),
    Unreadable(&'static str),
}

use Event::{PullRequest as PR, Push};

#[path = "../../tests/support/git.rs"]
mod git_support;

const CASES: &[(&str, Expect)] = &[
    (
        "push-any-branch.yml",
        Expect::Jobs(&[("release", &[Push], &["NPM_TOKEN"])]),
    ),
    ("push-main-only.yml", Expect::Jobs(&[])),
    ("push-branches-ignore-agent.yml", Expect::Jobs(&[])),
    ("push-tags-only.yml", Expect::Jobs(&[])),
    (
        "pr-into-main.yml",
        Expect::Jobs(&[("test", &[PR], &["STAGING_DATABASE_URL"])]),
    ),
    ("pr-into-release-only.yml", Expect::Jobs(&[])),
    (
        "environments.yml",
        Expect::Jobs(&[("chosen-by-expression", &[Push, PR], &["PROD_KEY"])]),
    ),
    (
        "head-ref-condition.yml",
        Expect::Jobs(&[("secrets-job", &[Push], &["TOKEN"])]),
    ),
    ("ref-condition.yml", Expect::Jobs(&[])),
    (
        "unknown-condition.yml",
        Expect::Jobs(&[("secrets-job", &[PR], &["TOKEN"])]),
    ),
    (
        "needs-chain.yml",
        Expect::Jobs(&[("cleanup", &[Push], &["CLEANUP_KEY"])]),
    ),
    (
        "secrets-inherit.yml",
        Expect::Jobs(&[
            ("call", &[PR], &["inherit"]),
            ("call-mapped", &[PR], &["PUBLISH_TOKEN"]),
        ]),
    ),
    ("github-token-only.yml", Expect::Jobs(&[])),
    (
        "whole-secrets-context.yml",
        Expect::Jobs(&[("dump", &[Push], &["*"])]),
    ),
    (
        "workflow-level-env.yml",
        Expect::Jobs(&[("test", &[PR], &["SENTRY_TOKEN"])]),
    ),
    ("dispatch-only.yml", Expect::Jobs(&[])),
    ("draft-skipped.yml", Expect::Jobs(&[])),
    (
        "template-condition.yml",
        Expect::Jobs(&[("always-runs", &[Push], &["KEY"])]),
    ),
    (
        "step-condition.yml",
        Expect::Jobs(&[("build-and-deploy", &[Push], &["DEPLOY_KEY"])]),
    ),
    ("pull-request-target.yml", Expect::Jobs(&[])),
    (
        "negated-branches.yml",
        Expect::Jobs(&[("build", &[PR], &["KEY"])]),
    ),
    ("no-secrets.yml", Expect::Jobs(&[])),
    ("not-yaml.yml", Expect::Unreadable("not YAML")),
    (
        "both-branch-filters.yml",
        Expect::Unreadable("has both `branches` and `branches-ignore`"),
    ),
    (
        "unparsable-condition.yml",
        Expect::Unreadable("cannot read its `if`"),
    ),
    ("duplicate-key.yml", Expect::Unreadable("not YAML")),
];

#[test]
fn every_fixture_gives_exactly_its_findings() {
    for (name, expect) in CASES {
        let findings = assess(&[load(name)], &target());
        match expect {
            Expect::Jobs(jobs) => {
                let got: Vec<(String, Vec<Event>, Vec<String>)> = findings
                    .iter()
                    .map(|f| match f {
                        Finding::UnprotectedSecretJob {
                            job,
                            events,
                            secrets,
                            ..
                        } => (job.clone(), events.clone(), secrets.clone()),
                        other => panic!("{name}: unexpected {other:?}"),
                    })
                    .collect();
                let want: Vec<(String, Vec<Event>, Vec<String>)> = jobs
                    .iter()
                    .map(|(job, events, secrets)| {
                        (
                            (*job).to_owned(),
                            events.to_vec(),
                            secrets.iter().map(|s| (*s).to_owned()).collect(),
                        )
                    })
                    .collect();
                assert_eq!(got, want, "{name}");
            }
            Expect::Unreadable(reason) => match findings.as_slice() {
                [
                    Finding::UnreadableWorkflow {
                        workflow,
                        reason: r,
                    },
                ] => {
                    assert_eq!(workflow, &format!(".github/workflows/{name}"));
                    assert!(r.contains(reason), "{name}: {r}");
                }
                other => panic!("{name}: expected one unreadable finding, got {other:?}"),
            },
        }
    }
}

#[test]
fn every_fixture_is_in_the_table() {
    let listed: BTreeSet<&str> = CASES.iter().map(|(name, _)| *name).collect();
    let on_disk: BTreeSet<String> = std::fs::read_dir(fixtures())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let on_disk: BTreeSet<&str> = on_disk.iter().map(String::as_str).collect();
    assert_eq!(listed, on_disk);
    // Both rules fire somewhere in the table.
    let mut fired = BTreeSet::new();
    for (name, _) in CASES {
        for f in assess(&[load(name)], &target()) {
            fired.insert(f.rule());
        }
    }
    assert_eq!(fired, Rule::ALL.iter().copied().collect());
}

#[test]
fn the_branch_decides_push_filters() {
    let file = load("push-main-only.yml");
    let on_main = Target {
        branch: "main".into(),
        ..target()
    };
    assert_eq!(assess(std::slice::from_ref(&file), &on_main).len(), 1);
    assert!(assess(&[file], &target()).is_empty());
    let ignore = load("push-branches-ignore-agent.yml");
    let elsewhere = Target {
        branch: "agent-teamx/T-1".into(),
        ..target()
    };
    assert_eq!(assess(&[ignore], &elsewhere).len(), 1);
}

#[test]
fn the_default_branch_decides_pull_request_filters() {
    let file = load("pr-into-release-only.yml");
    let into_release = Target {
        base_branch: "release/1.x".into(),
        ..target()
    };
    assert_eq!(assess(std::slice::from_ref(&file), &into_release).len(), 1);
    assert!(assess(&[file], &target()).is_empty());
}

#[test]
fn filter_patterns_follow_githubs_cheat_sheet() {
    for (pattern, text, matches) in [
        ("main", "main", true),
        ("main", "Main", false),
        ("feature/*", "feature/a", true),
        ("feature/*", "feature/a/b", false),
        ("feature/**", "feature/a/b", true),
        ("feature/**", "feature", false),
        ("**", "agent-team/T-1", true),
        ("*", "agent-team/T-1", false),
        ("agent-team/**", "agent-team/T-1", true),
        ("agent-team/*", "agent-team/T-1", true),
        ("v2*", "v2.1", true),
        ("v[12].[0-9]+.[0-9]+", "v1.10.3", true),
        ("v[12].[0-9]+.[0-9]+", "v3.1.1", false),
        ("v[12].[0-9]+.[0-9]+", "v1..1", false),
        ("*feature", "my-feature", true),
        ("ma?in", "main", true),
        ("ma?in", "mai", false),
        ("ma?in", "min", true),
        ("ma+in", "maaain", true),
        ("ma+in", "min", false),
        ("releases/\\*", "releases/*", true),
        ("releases/\\*", "releases/x", false),
        ("**-post", "mona/octocat-post", true),
    ] {
        let p = Pattern::parse(pattern).unwrap();
        assert_eq!(p.matches(text), matches, "{pattern} ~ {text}");
    }
    for bad in ["a\\", "[a-", "[]", "?a", "*+", "[z-a]"] {
        assert!(Pattern::parse(bad).is_err(), "{bad}");
    }
    let list: Vec<Pattern> = ["releases/**", "!releases/**-alpha", "releases/keep-alpha"]
        .iter()
        .map(|p| Pattern::parse(p).unwrap())
        .collect();
    assert!(included(&list, "releases/10"));
    assert!(!included(&list, "releases/10-alpha"));
    assert!(included(&list, "releases/keep-alpha"));
    assert!(!included(&list, "main"));
}

/// A scope for expression tests: `github.ref` is `refs/heads/x`, everything else unknown.
struct TestScope;

impl Scope for TestScope {
    fn context(&self, name: &str) -> Option<Val> {
        match name {
            "github" => Some(Val::obj(
                [
                    ("ref", Val::str("refs/heads/x")),
                    ("head_ref", Val::str("")),
                    ("event", Val::obj([("pull_request", Val::Null)], true)),
                ],
                true,
            )),
            "inputs" => Some(Val::obj([], false)),
            "needs" | "vars" | "secrets" => Some(Val::obj([], true)),
            _ => None,
        }
    }

    fn status(&self, function: &str) -> Val {
        if function == "always" {
            Val::Bool(true)
        } else {
            Val::UNKNOWN
        }
    }
}

#[test]
fn conditions_evaluate_in_three_values() {
    // Some(b): known truthiness; None: unknown (the job may run).
    for (condition, truthy) in [
        ("true", Some(true)),
        ("false", Some(false)),
        ("github.ref == 'refs/heads/x'", Some(true)),
        ("github.ref == 'REFS/HEADS/X'", Some(true)),
        ("github.ref != 'refs/heads/x'", Some(false)),
        ("startsWith(github.ref, 'refs/heads/')", Some(true)),
        ("STARTSWITH(github.ref, 'REFS/')", Some(true)),
        ("endsWith(github.ref, '/x')", Some(true)),
        ("contains(github.ref, 'heads')", Some(true)),
        ("github.head_ref", Some(false)),
        ("github.event.pull_request", Some(false)),
        ("github.event.pull_request.head.ref == 'x'", Some(false)),
        ("github.actor == 'bot'", None),
        ("vars.DEPLOY == 'true'", None),
        ("needs.a.result == 'success' && false", Some(false)),
        ("needs.a.result == 'success' || true", Some(true)),
        ("needs.a.result == 'success' && true", None),
        ("!(needs.a.result == 'success')", None),
        ("inputs.force", Some(false)),
        ("always()", Some(true)),
        ("failure()", None),
        ("null == false", Some(true)),
        ("'' == 0", Some(true)),
        ("'1' == 1", Some(true)),
        ("'abc' == 0", Some(false)),
        ("1 < 2 && 2 <= 2 && 3 > 2 && 3 >= 3", Some(true)),
        ("0x10 == 16", Some(true)),
        ("'it''s' == 'IT''S'", Some(true)),
        ("github['ref'] == 'refs/heads/x'", Some(true)),
        ("${{ github.ref == 'refs/heads/x' }}", Some(true)),
        ("${{ false }} && ${{ false }}", Some(true)),
        ("github.event.*.name", None),
        ("format('{0}', github.ref)", None),
    ] {
        let value =
            expr::condition(condition, &TestScope).unwrap_or_else(|e| panic!("{condition}: {e}"));
        assert_eq!(value.truthy(), truthy, "{condition}");
    }
    for bad in [
        "github.ref ==",
        "a &&& b",
        "unknowncontext.x",
        "nosuchfunction()",
        "startsWith(github.ref)",
        "'unterminated",
        "(github.ref",
        "${{ github.ref",
        "success(1)",
    ] {
        assert!(expr::condition(bad, &TestScope).is_err(), "{bad}");
    }
    let deep = format!("{}true{}", "(".repeat(100), ")".repeat(100));
    assert!(expr::condition(&deep, &TestScope).is_err());
}

#[test]
fn secret_reads_are_found_in_every_form() {
    for (expression, names) in [
        ("secrets.NPM_TOKEN", vec!["NPM_TOKEN"]),
        ("secrets.npm_token", vec!["NPM_TOKEN"]),
        ("secrets['Key']", vec!["KEY"]),
        ("toJSON(secrets)", vec!["*"]),
        ("secrets[format('{0}', 'X')]", vec!["*"]),
        ("secrets.GITHUB_TOKEN", vec![]),
        ("secrets.github_token || secrets.B", vec!["B"]),
        ("github.token", vec![]),
    ] {
        let parsed = expr::parse(expression).unwrap();
        assert_eq!(expr::secrets_read(&parsed), names, "{expression}");
    }
}

#[test]
fn a_workflow_file_over_the_limit_or_not_utf8_is_unreadable() {
    let big = WorkflowFile {
        path: ".github/workflows/big.yml".into(),
        bytes: vec![b'#'; guard::readiness::MAX_WORKFLOW_BYTES + 1],
    };
    let latin1 = WorkflowFile {
        path: ".github/workflows/latin1.yml".into(),
        bytes: b"on: push\n# caf\xe9\njobs: {}\n".to_vec(),
    };
    let findings = assess(&[big, latin1], &target());
    let reasons: Vec<String> = findings
        .iter()
        .map(|f| match f {
            Finding::UnreadableWorkflow { reason, .. } => reason.clone(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert!(reasons[0].contains("larger than"), "{reasons:?}");
    assert_eq!(reasons[1], "not UTF-8");
}

// -- the subcommand on a real repository ------------------------------------------------------

fn git(dir: &Path, args: &[&str]) {
    let out = git_support::git(dir).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn guard_readiness(repo: &Path, policy: Option<&Path>) -> (i32, ReadinessDoc) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_guard"));
    cmd.args(["readiness", "--repo"])
        .arg(repo)
        .args([
            "--base",
            "HEAD",
            "--branch",
            "agent-team/T-1",
            "--base-branch",
            "main",
            "--repository",
            "octo/repo",
            "--format",
            "json",
        ])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap());
    if let Some(policy) = policy {
        cmd.arg("--policy").arg(policy);
    }
    let out = cmd.output().unwrap();
    let doc = ReadinessDoc::parse(&String::from_utf8(out.stdout).unwrap())
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code().unwrap(), doc)
}

#[test]
fn the_subcommand_reads_the_base_commit_and_fails_only_when_strict() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    let workflows = repo.join(".github/workflows");
    std::fs::create_dir_all(&workflows).unwrap();
    std::fs::copy(
        fixtures().join("push-any-branch.yml"),
        workflows.join("release.yml"),
    )
    .unwrap();
    std::fs::copy(fixtures().join("no-secrets.yml"), workflows.join("ci.yaml")).unwrap();
    // Not a workflow file (wrong extension, or in a subdirectory): GitHub does not read them.
    std::fs::write(workflows.join("notes.md"), "on: push\n").unwrap();
    std::fs::create_dir_all(workflows.join("sub")).unwrap();
    std::fs::copy(
        fixtures().join("push-any-branch.yml"),
        workflows.join("sub/nested.yml"),
    )
    .unwrap();
    std::os::unix::fs::symlink("ci.yaml", workflows.join("linked.yml")).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "base"]);
    // The work tree is not what is read: a change not committed does not count.
    std::fs::remove_file(workflows.join("release.yml")).unwrap();

    let (code, doc) = guard_readiness(&repo, None);
    assert_eq!(code, 1);
    assert_eq!(doc.result, ReadinessResult::Fail);
    assert_eq!(doc.mode, ReadinessMode::Strict);
    assert_eq!(
        doc.workflows,
        [
            ".github/workflows/ci.yaml",
            ".github/workflows/linked.yml",
            ".github/workflows/release.yml",
        ]
    );
    let found: Vec<(&str, &str, Option<&str>)> = doc
        .findings
        .iter()
        .map(|f| (f.rule.name(), f.workflow.as_str(), f.job.as_deref()))
        .collect();
    assert_eq!(
        found,
        [
            ("unreadable-workflow", ".github/workflows/linked.yml", None),
            (
                "unprotected-secret-job",
                ".github/workflows/release.yml",
                Some("release")
            ),
        ]
    );
    assert_eq!(doc.findings[1].events, [ReadinessEvent::Push]);
    assert_eq!(doc.findings[1].secrets, ["NPM_TOKEN"]);

    let policy = tmp.path().join("policy.yml");
    std::fs::write(
        &policy,
        "version: 1\nallow:\n  unprotected-secret-jobs: true\n",
    )
    .unwrap();
    let (code, doc) = guard_readiness(&repo, Some(&policy));
    assert_eq!(code, 0);
    assert_eq!(doc.result, ReadinessResult::Reported);
    assert_eq!(doc.mode, ReadinessMode::Report);
    assert_eq!(doc.findings.len(), 2);
}

#[test]
fn the_subcommand_passes_a_repository_without_exposed_jobs() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(repo.join(".github/workflows")).unwrap();
    std::fs::copy(
        fixtures().join("ref-condition.yml"),
        repo.join(".github/workflows/ci.yml"),
    )
    .unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "base"]);
    let (code, doc) = guard_readiness(&repo, None);
    assert_eq!((code, doc.result), (0, ReadinessResult::Pass));
    assert!(doc.findings.is_empty());
}

#[test]
fn the_subcommand_refuses_bad_arguments_with_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    for (flag, value) in [
        ("--repository", "no-slash"),
        ("--branch", "two words"),
        ("--base-branch", ""),
    ] {
        let mut args = vec![
            "readiness".to_owned(),
            "--repo".into(),
            tmp.path().display().to_string(),
            "--base".into(),
            "HEAD".into(),
        ];
        for (f, v) in [
            ("--branch", "agent-team/T-1"),
            ("--base-branch", "main"),
            ("--repository", "octo/repo"),
        ] {
            args.push(f.into());
            args.push(if f == flag { value } else { v }.into());
        }
        let out = Command::new(env!("CARGO_BIN_EXE_guard"))
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{flag}={value:?}");
        assert!(out.stdout.is_empty());
    }
}
