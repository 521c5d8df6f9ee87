//! `gate verify-environments` against the stand-in: an environment the policy counts as
//! protection must exist and hold back the published branch, through its required reviewers or
//! custom deployment branch policies that exclude it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::Command;

use github_standin::settings::{BranchPolicy, EnvironmentSettings, RepositorySettings};
use github_standin::{Scenario, StandIn};

const BRANCH: &str = "agent-team/task-1";

fn environment(name: &str, reviewers: &[&str], policy: BranchPolicy) -> EnvironmentSettings {
    EnvironmentSettings {
        name: name.to_owned(),
        reviewers: reviewers
            .iter()
            .map(|r| ("User".to_owned(), (*r).to_owned()))
            .collect(),
        branch_policy: policy,
        secrets: Vec::new(),
        variables: Vec::new(),
    }
}

/// Runs the command for a policy listing `listed` against a repository holding `environments`.
fn verify(listed: &[&str], environments: Vec<EnvironmentSettings>) -> (Option<i32>, String) {
    let gh = StandIn::start(Scenario {
        owner: "octo".into(),
        repo: "repo".into(),
        settings: RepositorySettings {
            environments,
            ..RepositorySettings::default()
        },
        ..Scenario::default()
    })
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.yml");
    let mut yaml = "version: 1\n".to_owned();
    if !listed.is_empty() {
        yaml.push_str("readiness:\n  protected-environments:\n");
    }
    for name in listed {
        yaml.push_str(&format!("    - {name}\n"));
    }
    std::fs::write(&policy, yaml).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_gate"))
        .args([
            "verify-environments",
            "--repository",
            "octo/repo",
            "--branch",
            BRANCH,
        ])
        .arg("--policy")
        .arg(&policy)
        .env_clear()
        .env("GH_TOKEN", gh.token())
        .env("GITHUB_API_URL", gh.url())
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(!text.contains(&gh.token()), "the token reached the output");
    (out.status.code(), text)
}

#[test]
fn required_reviewers_or_branch_policies_that_exclude_the_branch_hold() {
    let (code, text) = verify(
        &["production", "staging"],
        vec![
            environment("production", &["octocat"], BranchPolicy::Any),
            environment(
                "staging",
                &[],
                BranchPolicy::Custom(vec!["main".into(), "release/*".into()]),
            ),
        ],
    );
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("environment production: holds (1 required reviewer(s))"),
        "{text}"
    );
    assert!(text.contains("environment staging: holds (2 deployment branch policy(ies), none admitting agent-team/task-1)"), "{text}");
}

#[test]
fn a_missing_environment_is_not_protection() {
    let (code, text) = verify(&["production"], Vec::new());
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("environment production does not exist: GitHub creates it, unprotected"),
        "{text}"
    );
}

#[test]
fn an_environment_without_reviewers_that_admits_the_branch_is_not_protection() {
    for (policy, expected) in [
        (BranchPolicy::Any, "admits every branch"),
        (BranchPolicy::Protected, "admits protected branches"),
        (
            BranchPolicy::Custom(vec!["main".into(), "agent-team/*".into()]),
            "admits agent-team/task-1 through its deployment branch policy `agent-team/*`",
        ),
        (
            BranchPolicy::Custom(vec!["*/*".into()]),
            "through its deployment branch policy `*/*`",
        ),
    ] {
        let (code, text) = verify(&["deploy"], vec![environment("deploy", &[], policy)]);
        assert_eq!(code, Some(1), "{text}");
        assert!(text.contains(expected), "{expected}: {text}");
    }
}

/// `*` does not cross `/` in GitHub's deployment branch patterns: `agent-*` does not admit
/// `agent-team/task-1`, `agent-team/**`... does.
#[test]
fn branch_patterns_read_as_github_reads_them() {
    let (code, text) = verify(
        &["deploy"],
        vec![environment(
            "deploy",
            &[],
            BranchPolicy::Custom(vec!["agent-*".into()]),
        )],
    );
    assert_eq!(code, Some(0), "{text}");
    let (code, text) = verify(
        &["deploy"],
        vec![environment(
            "deploy",
            &[],
            BranchPolicy::Custom(vec!["agent-team/**".into()]),
        )],
    );
    assert_eq!(code, Some(1), "{text}");
}

#[test]
fn nothing_listed_is_nothing_to_verify() {
    let (code, text) = verify(&[], Vec::new());
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("nothing to verify"), "{text}");
}
