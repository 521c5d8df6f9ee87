//! The readiness check (the second execution): workflow fixtures in `fixtures/readiness/`, each with
//! the exact findings it must give for the published branch `agent-team/T-1` into `main`; a table
//! of every modelled event × {the branch's code, the default branch's} × {with, without
//! credentials}, generated in memory; GitHub's filter patterns and expressions, table-tested; the
//! policy's `readiness:` section; and `guard readiness` on a real repository (both workflow sets).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::type_complexity
)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use contract::readiness::{ReadinessDoc, ReadinessEvent, ReadinessMode, ReadinessResult};
use guard::policy::Policy;
use guard::readiness::expr::{self, Scope, Val};
use guard::readiness::filter::{Pattern, included};
use guard::readiness::{
    Acceptance, Credential, DefaultToken, Event, Finding, Reads, Rule, Settings, Target,
    WorkflowFile, assess,
};

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

/// The fixtures judged with the repository files of `fixtures/readiness/tree/` (the scripts
/// their `run:` steps execute).
fn run(files: &[WorkflowFile]) -> Vec<Finding> {
    let read = |path: &str| -> Result<Option<Vec<u8>>, String> {
        if let Some(f) = files.iter().find(|f| f.path == path) {
            return Ok(Some(f.bytes.clone()));
        }
        if path.split('/').any(|c| c == ".." || c.is_empty()) {
            return Ok(None);
        }
        Ok(std::fs::read(fixtures().join("tree").join(path)).ok())
    };
    guard::readiness::assess_in(files, &read, &target(), &Settings::default(), Reads::Both)
}

/// The credential of a job without `permissions:` under the default policy.
const DEFAULT: &str =
    "GITHUB_TOKEN with the repository's default grant (policy readiness.default-token: write)";

/// One expected finding: rule, job, events, credentials.
type Want = (
    Rule,
    &'static str,
    &'static [Event],
    &'static [&'static str],
);

/// What a fixture must give: its findings, or one unreadable-workflow finding.
enum Expect {
    Jobs(&'static [Want]),
    Unreadable(&'static str),
}

use Event::{PullRequest as PR, Push};
use Rule::{
    PrivilegedCheckout as PRIV, UnmodelledEvent as UNMODELLED, UnprotectedSecretJob as USJ,
};

#[path = "../../tests/support/git.rs"]
mod git_support;

const CASES: &[(&str, Expect)] = &[
    // -- the shapes readiness used to miss -------------------------------------------------
    (
        "pr-review.yml",
        Expect::Jobs(&[(USJ, "e2e", &[Event::PullRequestReview], &["secret E2E_KEY"])]),
    ),
    (
        "pr-review-comment.yml",
        Expect::Jobs(&[(
            USJ,
            "bench",
            &[Event::PullRequestReviewComment],
            &["secret BENCH_TOKEN"],
        )]),
    ),
    (
        "create.yml",
        Expect::Jobs(&[(USJ, "announce", &[Event::Create], &["secret SLACK_HOOK"])]),
    ),
    (
        "prt-head-checkout.yml",
        Expect::Jobs(&[(
            PRIV,
            "preview",
            &[Event::PullRequestTarget],
            &["secret PREVIEW_TOKEN"],
        )]),
    ),
    (
        "workflow-run-artifacts.yml",
        Expect::Jobs(&[(
            PRIV,
            "upload-coverage",
            &[Event::WorkflowRun],
            &["secret CODECOV_TOKEN"],
        )]),
    ),
    (
        "workflow-run-head.yml",
        Expect::Jobs(&[(
            PRIV,
            "docs",
            &[Event::WorkflowRun],
            &["GITHUB_TOKEN contents: write"],
        )]),
    ),
    (
        "issue-comment-pr-head.yml",
        Expect::Jobs(&[(
            PRIV,
            "slash-test",
            &[Event::IssueComment],
            &["secret INTEGRATION_KEY"],
        )]),
    ),
    (
        "issue-comment-api-head.yml",
        Expect::Jobs(&[
            (
                PRIV,
                "slash-bench",
                &[Event::IssueComment],
                &["secret BENCH_KEY"],
            ),
            (PRIV, "fetch-pull", &[Event::IssueComment], &["secret KEY"]),
        ]),
    ),
    (
        "check-suite-head.yml",
        Expect::Jobs(&[(PRIV, "rerun", &[Event::CheckSuite], &["secret KEY"])]),
    ),
    (
        "id-token.yml",
        Expect::Jobs(&[(USJ, "plan", &[PR], &["id-token: write"])]),
    ),
    (
        "write-token.yml",
        Expect::Jobs(&[
            (
                USJ,
                "lint",
                &[Push, PR],
                &["GITHUB_TOKEN write-all", "id-token: write"],
            ),
            (
                USJ,
                "comment",
                &[Push, PR],
                &["GITHUB_TOKEN pull-requests: write"],
            ),
        ]),
    ),
    (
        "default-token.yml",
        Expect::Jobs(&[(USJ, "test", &[PR], &[DEFAULT])]),
    ),
    (
        "self-hosted.yml",
        Expect::Jobs(&[
            (
                USJ,
                "gpu",
                &[PR],
                &["runner gpu", "runner linux", "runner self-hosted"],
            ),
            (USJ, "custom-label", &[PR], &["runner big-runner-4core"]),
            (USJ, "group", &[PR], &["runner group ubuntu-runners"]),
            (
                USJ,
                "unknown-matrix",
                &[PR],
                &["runner chosen by `${{ matrix.os }}`"],
            ),
        ]),
    ),
    (
        "success-or.yml",
        Expect::Jobs(&[(USJ, "publish", &[Push], &["secret PUBLISH_TOKEN"])]),
    ),
    (
        "literal-environment.yml",
        Expect::Jobs(&[
            (USJ, "staging", &[PR], &["secret STAGING_KEY"]),
            (USJ, "production", &[PR], &["secret PROD_KEY"]),
        ]),
    ),
    (
        "merge-group.yml",
        Expect::Jobs(&[(USJ, "e2e", &[Event::MergeGroup], &["secret E2E_KEY"])]),
    ),
    (
        "deployment.yml",
        Expect::Jobs(&[(
            USJ,
            "smoke",
            &[Event::Deployment, Event::DeploymentStatus],
            &["secret SMOKE_KEY"],
        )]),
    ),
    (
        "unknown-event.yml",
        Expect::Jobs(&[(UNMODELLED, "job", &[], &["secret KEY"])]),
    ),
    (
        "draft-skipped.yml",
        Expect::Jobs(&[(USJ, "expensive", &[PR], &["secret E2E_KEY", DEFAULT])]),
    ),
    // -- the false alarms, and the safe shapes ---------------------------------------------
    ("deploy-guard.yml", Expect::Jobs(&[])),
    (
        "bot-and-merged.yml",
        Expect::Jobs(&[(USJ, "not-dependabot", &[PR], &["secret E2E_KEY"])]),
    ),
    ("workflow-run-safe.yml", Expect::Jobs(&[])),
    ("issue-comment-safe.yml", Expect::Jobs(&[])),
    ("pull-request-target.yml", Expect::Jobs(&[])),
    ("safe-events.yml", Expect::Jobs(&[])),
    ("reusable-self-hosted.yml", Expect::Jobs(&[])),
    ("github-token-only.yml", Expect::Jobs(&[])),
    (
        "accepted.yml",
        Expect::Jobs(&[
            (USJ, "test", &[PR], &["secret READ_ONLY_TOKEN"]),
            (USJ, "other", &[PR], &["secret OTHER_TOKEN"]),
        ]),
    ),
    // -- triggers and filters --------------------------------------------------------------
    (
        "push-any-branch.yml",
        Expect::Jobs(&[(USJ, "release", &[Push], &["secret NPM_TOKEN", DEFAULT])]),
    ),
    ("push-main-only.yml", Expect::Jobs(&[])),
    ("push-branches-ignore-agent.yml", Expect::Jobs(&[])),
    ("push-tags-only.yml", Expect::Jobs(&[])),
    (
        "pr-into-main.yml",
        Expect::Jobs(&[(
            USJ,
            "test",
            &[PR],
            &["secret STAGING_DATABASE_URL", DEFAULT],
        )]),
    ),
    ("pr-into-release-only.yml", Expect::Jobs(&[])),
    (
        "negated-branches.yml",
        Expect::Jobs(&[(USJ, "build", &[PR], &["secret KEY", DEFAULT])]),
    ),
    ("dispatch-only.yml", Expect::Jobs(&[])),
    // -- conditions ------------------------------------------------------------------------
    (
        "environments.yml",
        Expect::Jobs(&[
            (
                USJ,
                "protected",
                &[Push, PR],
                &["secret STAGING_KEY", DEFAULT],
            ),
            (
                USJ,
                "protected-mapping",
                &[Push, PR],
                &["secret PROD_KEY", DEFAULT],
            ),
            (
                USJ,
                "chosen-by-expression",
                &[Push, PR],
                &["secret PROD_KEY", DEFAULT],
            ),
        ]),
    ),
    (
        "head-ref-condition.yml",
        Expect::Jobs(&[(USJ, "secrets-job", &[Push], &["secret TOKEN", DEFAULT])]),
    ),
    ("ref-condition.yml", Expect::Jobs(&[])),
    (
        "unknown-condition.yml",
        Expect::Jobs(&[(USJ, "secrets-job", &[PR], &["secret TOKEN", DEFAULT])]),
    ),
    (
        "needs-chain.yml",
        Expect::Jobs(&[(USJ, "cleanup", &[Push], &["secret CLEANUP_KEY", DEFAULT])]),
    ),
    (
        "template-condition.yml",
        Expect::Jobs(&[(USJ, "always-runs", &[Push], &["secret KEY", DEFAULT])]),
    ),
    (
        "step-condition.yml",
        Expect::Jobs(&[(
            USJ,
            "build-and-deploy",
            &[Push],
            &["secret DEPLOY_KEY", DEFAULT],
        )]),
    ),
    // -- credentials -----------------------------------------------------------------------
    (
        "secrets-inherit.yml",
        Expect::Jobs(&[
            (USJ, "call", &[PR], &["secrets: inherit", DEFAULT]),
            (
                USJ,
                "call-mapped",
                &[PR],
                &["secret PUBLISH_TOKEN", DEFAULT],
            ),
            (USJ, "call-without-secrets", &[PR], &[DEFAULT]),
        ]),
    ),
    (
        "whole-secrets-context.yml",
        Expect::Jobs(&[(
            USJ,
            "dump",
            &[Push],
            &["every secret (the whole context)", DEFAULT],
        )]),
    ),
    (
        "workflow-level-env.yml",
        Expect::Jobs(&[(USJ, "test", &[PR], &["secret SENTRY_TOKEN", DEFAULT])]),
    ),
    (
        "no-secrets.yml",
        Expect::Jobs(&[(USJ, "test", &[Push, PR], &[DEFAULT])]),
    ),
    // -- unreadable ------------------------------------------------------------------------
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

fn summary(f: &Finding) -> (Rule, String, Vec<Event>, Vec<String>) {
    (
        f.rule,
        f.job.clone().unwrap_or_default(),
        f.events.clone(),
        f.to_doc(&contract::ids::CommitId::parse(&"0".repeat(40)).unwrap())
            .credentials,
    )
}

#[test]
fn every_fixture_gives_exactly_its_findings() {
    for (name, expect) in CASES {
        let findings = run(&[load(name)]);
        match expect {
            Expect::Jobs(jobs) => {
                let mut got: Vec<_> = findings.iter().map(summary).collect();
                let mut want: Vec<_> = jobs
                    .iter()
                    .map(|(rule, job, events, credentials)| {
                        (
                            *rule,
                            (*job).to_owned(),
                            events.to_vec(),
                            credentials
                                .iter()
                                .map(|s| (*s).to_owned())
                                .collect::<Vec<_>>(),
                        )
                    })
                    .collect();
                got.sort_by(|a, b| a.1.cmp(&b.1));
                want.sort_by(|a, b| a.1.cmp(&b.1));
                assert_eq!(got, want, "{name}");
            }
            Expect::Unreadable(reason) => match findings.as_slice() {
                [f] => {
                    assert_eq!(f.rule, Rule::UnreadableWorkflow, "{name}");
                    assert_eq!(f.workflow, format!(".github/workflows/{name}"));
                    let detail = f.detail.clone().unwrap_or_default();
                    assert!(detail.contains(reason), "{name}: {detail}");
                }
                other => panic!("{name}: expected one unreadable finding, got {other:?}"),
            },
        }
    }
}

#[test]
fn every_fixture_is_in_the_table() {
    let listed: BTreeSet<&str> = CASES.iter().map(|(name, _)| *name).collect();
    // `provenance/` holds the fixtures judged with a tree of local files.
    let on_disk: BTreeSet<String> = std::fs::read_dir(fixtures())
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let on_disk: BTreeSet<&str> = on_disk.iter().map(String::as_str).collect();
    assert_eq!(listed, on_disk);
    // Every rule fires somewhere in the table.
    let mut fired = BTreeSet::new();
    for (name, _) in CASES {
        for f in run(&[load(name)]) {
            fired.insert(f.rule());
        }
    }
    assert_eq!(fired, Rule::ALL.iter().copied().collect());
}

#[test]
fn messages_say_which_event_job_and_credential_and_the_fix() {
    let f = run(&[load("pr-review.yml")]).remove(0);
    let message = f.message();
    assert!(message.contains("pull_request_review"), "{message}");
    assert!(message.contains("job `e2e`"), "{message}");
    assert!(message.contains("secret E2E_KEY"), "{message}");
    assert!(f.fix().contains("agent-team/"), "{}", f.fix());
    let f = run(&[load("prt-head-checkout.yml")]).remove(0);
    let message = f.message();
    assert!(
        message.contains("pull_request_target")
            && message.contains("github.event.pull_request.head")
            && message.contains("secret PREVIEW_TOKEN"),
        "{message}"
    );
    let f = run(&[load("default-token.yml")]).remove(0);
    assert!(
        f.fix().contains("permissions: contents: read"),
        "{}",
        f.fix()
    );
    let f = run(&[load("unknown-event.yml")]).remove(0);
    assert!(f.message().contains("a_future_event"), "{}", f.message());
}

#[test]
fn a_called_workflow_of_the_repository_lends_its_runners_to_the_caller() {
    let caller = WorkflowFile {
        path: ".github/workflows/ci.yml".into(),
        bytes: b"on: pull_request\npermissions: {}\njobs:\n  call:\n    uses: ./.github/workflows/reusable-self-hosted.yml\n  remote:\n    uses: octo/other/.github/workflows/x.yml@v1\n".to_vec(),
    };
    let findings = run(&[caller, load("reusable-self-hosted.yml")]);
    let got: Vec<_> = findings.iter().map(summary).collect();
    assert_eq!(
        got,
        [(
            USJ,
            "call".to_owned(),
            vec![PR],
            vec!["runner linux".to_owned(), "runner self-hosted".to_owned()]
        )]
    );
}

#[test]
fn only_a_listed_environment_gates_a_job() {
    let settings = Settings {
        protected_environments: vec!["production".into()],
        ..Settings::default()
    };
    let findings = assess(
        &[load("literal-environment.yml")],
        &target(),
        &settings,
        Reads::Both,
    );
    // `Production` is listed (names compare case-insensitively); `staging` is not.
    let jobs: Vec<&str> = findings.iter().filter_map(|f| f.job.as_deref()).collect();
    assert_eq!(jobs, ["staging"]);
}

#[test]
fn an_accepted_job_stays_in_the_findings_with_its_reason() {
    let settings = Settings {
        accept: vec![Acceptance {
            workflow: ".github/workflows/accepted.yml".into(),
            job: "test".into(),
            reason: "the token reads a public mirror only".into(),
        }],
        ..Settings::default()
    };
    let findings = assess(&[load("accepted.yml")], &target(), &settings, Reads::Both);
    let got: Vec<(&str, Option<&str>)> = findings
        .iter()
        .map(|f| (f.job.as_deref().unwrap(), f.accepted.as_deref()))
        .collect();
    assert_eq!(
        got,
        [
            ("other", None),
            ("test", Some("the token reads a public mirror only"))
        ]
    );
}

#[test]
fn a_read_only_default_token_is_no_credential() {
    let settings = Settings {
        default_token: DefaultToken::Read,
        ..Settings::default()
    };
    let findings = assess(
        &[load("default-token.yml"), load("no-secrets.yml")],
        &target(),
        &settings,
        Reads::Both,
    );
    assert!(findings.is_empty(), "{findings:?}");
}

#[test]
fn each_workflow_set_is_judged_for_its_own_events() {
    // push/create run the branch's commit (the base's workflows); pull request events and the
    // privileged triggers run the default branch head's.
    let files = [
        load("push-any-branch.yml"),
        load("pr-review.yml"),
        load("prt-head-checkout.yml"),
    ];
    let rules = |reads| -> Vec<(Rule, Vec<Event>)> {
        assess(&files, &target(), &Settings::default(), reads)
            .iter()
            .map(|f| (f.rule, f.events.clone()))
            .collect()
    };
    assert_eq!(rules(Reads::Base), [(USJ, vec![Push])]);
    assert_eq!(
        rules(Reads::DefaultHead),
        [
            (USJ, vec![Event::PullRequestReview]),
            (PRIV, vec![Event::PullRequestTarget])
        ]
    );
    let unknown = [load("unknown-event.yml")];
    for reads in [Reads::Base, Reads::DefaultHead] {
        let found = assess(&unknown, &target(), &Settings::default(), reads);
        assert_eq!(found.len(), 1, "{reads:?}");
    }
}

#[test]
fn the_branch_decides_push_filters() {
    let file = load("push-main-only.yml");
    let on_main = Target {
        branch: "main".into(),
        ..target()
    };
    let settings = Settings::default();
    assert_eq!(
        assess(
            std::slice::from_ref(&file),
            &on_main,
            &settings,
            Reads::Both
        )
        .len(),
        1
    );
    assert!(run(&[file]).is_empty());
    let ignore = load("push-branches-ignore-agent.yml");
    let elsewhere = Target {
        branch: "agent-teamx/T-1".into(),
        ..target()
    };
    assert_eq!(
        assess(&[ignore], &elsewhere, &settings, Reads::Both).len(),
        1
    );
}

#[test]
fn the_default_branch_decides_pull_request_filters() {
    let file = load("pr-into-release-only.yml");
    let into_release = Target {
        base_branch: "release/1.x".into(),
        ..target()
    };
    assert_eq!(
        assess(
            std::slice::from_ref(&file),
            &into_release,
            &Settings::default(),
            Reads::Both
        )
        .len(),
        1
    );
    assert!(run(&[file]).is_empty());
}

// -- every event × {branch's code, default branch's} × {with, without credentials} ------------

/// How an event's row is expected to judge the two jobs: the rule when the job runs the
/// branch's code with a secret, and when it runs the default branch's code with a secret (None:
/// no finding). Without credentials, neither gives one.
struct EventRow {
    on: &'static str,
    event: Option<Event>,
    branch_code: Option<Rule>,
    default_code: Option<Rule>,
}

const EVENT_ROWS: &[EventRow] = &[
    // The branch's own commit, or its merge: checked out by default; both jobs run it.
    EventRow {
        on: "push",
        event: Some(Push),
        branch_code: Some(USJ),
        default_code: None,
    },
    EventRow {
        on: "create",
        event: Some(Event::Create),
        branch_code: Some(USJ),
        default_code: None,
    },
    EventRow {
        on: "deployment",
        event: Some(Event::Deployment),
        branch_code: Some(USJ),
        default_code: None,
    },
    EventRow {
        on: "deployment_status",
        event: Some(Event::DeploymentStatus),
        branch_code: Some(USJ),
        default_code: None,
    },
    EventRow {
        on: "pull_request",
        event: Some(PR),
        branch_code: Some(USJ),
        default_code: None,
    },
    EventRow {
        on: "{pull_request: {types: [labeled]}}",
        event: Some(PR),
        branch_code: Some(USJ),
        default_code: None,
    },
    EventRow {
        on: "{pull_request: {types: [ready_for_review]}}",
        event: Some(PR),
        branch_code: Some(USJ),
        default_code: None,
    },
    EventRow {
        on: "{pull_request: {types: [synchronize]}}",
        event: Some(PR),
        branch_code: Some(USJ),
        default_code: None,
    },
    EventRow {
        on: "{pull_request: {types: [closed]}}",
        event: Some(PR),
        branch_code: Some(USJ),
        default_code: None,
    },
    EventRow {
        on: "pull_request_review",
        event: Some(Event::PullRequestReview),
        branch_code: Some(USJ),
        default_code: None,
    },
    EventRow {
        on: "pull_request_review_comment",
        event: Some(Event::PullRequestReviewComment),
        branch_code: Some(USJ),
        default_code: None,
    },
    EventRow {
        on: "merge_group",
        event: Some(Event::MergeGroup),
        branch_code: Some(USJ),
        default_code: None,
    },
    // Privileged: the default branch's code unless the job fetches the branch's.
    EventRow {
        on: "pull_request_target",
        event: Some(Event::PullRequestTarget),
        branch_code: Some(PRIV),
        default_code: None,
    },
    EventRow {
        on: "workflow_run",
        event: Some(Event::WorkflowRun),
        branch_code: Some(PRIV),
        default_code: None,
    },
    EventRow {
        on: "issue_comment",
        event: Some(Event::IssueComment),
        branch_code: Some(PRIV),
        default_code: None,
    },
    EventRow {
        on: "check_run",
        event: Some(Event::CheckRun),
        branch_code: Some(PRIV),
        default_code: None,
    },
    EventRow {
        on: "check_suite",
        event: Some(Event::CheckSuite),
        branch_code: Some(PRIV),
        default_code: None,
    },
    EventRow {
        on: "status",
        event: Some(Event::Status),
        branch_code: Some(PRIV),
        default_code: None,
    },
    // The allow-list: the default branch's code, or not fired by the publication or the draft.
    EventRow {
        on: "release",
        event: None,
        branch_code: None,
        default_code: None,
    },
    EventRow {
        on: "schedule",
        event: None,
        branch_code: None,
        default_code: None,
    },
    EventRow {
        on: "workflow_dispatch",
        event: None,
        branch_code: None,
        default_code: None,
    },
    EventRow {
        on: "repository_dispatch",
        event: None,
        branch_code: None,
        default_code: None,
    },
    EventRow {
        on: "issues",
        event: None,
        branch_code: None,
        default_code: None,
    },
    EventRow {
        on: "delete",
        event: None,
        branch_code: None,
        default_code: None,
    },
    EventRow {
        on: "label",
        event: None,
        branch_code: None,
        default_code: None,
    },
    EventRow {
        on: "workflow_call",
        event: None,
        branch_code: None,
        default_code: None,
    },
    EventRow {
        on: "discussion",
        event: None,
        branch_code: None,
        default_code: None,
    },
    EventRow {
        on: "watch",
        event: None,
        branch_code: None,
        default_code: None,
    },
    // Not in the model: fail closed.
    EventRow {
        on: "project_card",
        event: None,
        branch_code: Some(UNMODELLED),
        default_code: Some(UNMODELLED),
    },
];

/// One workflow: a job running the branch's code (checking out the head where the event's
/// default checkout is not the branch) or the default branch's, with or without a secret.
fn event_workflow(on: &str, branch_code: bool, credentials: bool) -> WorkflowFile {
    let checkout = if branch_code {
        "      - uses: actions/checkout@v4\n        with:\n          ref: ${{ github.event.pull_request.head.sha || github.event.workflow_run.head_sha || github.event.check_suite.head_sha || github.event.sha }}\n"
    } else {
        "      - uses: actions/checkout@v4\n        with:\n          ref: ${{ github.event.repository.default_branch }}\n"
    };
    let env = if credentials {
        "        env:\n          KEY: ${{ secrets.DEPLOY_KEY }}\n"
    } else {
        ""
    };
    let text = format!(
        "on: {on}\npermissions:\n  contents: read\njobs:\n  job:\n    runs-on: ubuntu-latest\n    steps:\n{checkout}      - run: make test\n{env}"
    );
    WorkflowFile {
        path: ".github/workflows/event.yml".into(),
        bytes: text.into_bytes(),
    }
}

#[test]
fn every_event_by_code_and_credentials() {
    let mut covered = BTreeSet::new();
    for row in EVENT_ROWS {
        for (branch_code, want) in [(true, row.branch_code), (false, row.default_code)] {
            for credentials in [true, false] {
                let file = event_workflow(row.on, branch_code, credentials);
                let findings = run(std::slice::from_ref(&file));
                let got: Vec<(Rule, Vec<Event>, Option<String>)> = findings
                    .iter()
                    .map(|f| (f.rule, f.events.clone(), f.job.clone()))
                    .collect();
                let want: Vec<(Rule, Vec<Event>, Option<String>)> = match want {
                    Some(rule) if credentials => {
                        vec![(rule, row.event.into_iter().collect(), Some("job".into()))]
                    }
                    _ => Vec::new(),
                };
                assert_eq!(
                    got, want,
                    "on: {} branch_code={branch_code} credentials={credentials}",
                    row.on
                );
            }
        }
        if let Some(event) = row.event {
            covered.insert(event);
        } else if let Some(event) = Event::from_name(row.on) {
            covered.insert(event);
        }
    }
    // Every event GitHub names that the publication or the draft fires has a row.
    for event in Event::ALL {
        if guard::readiness::events::class(*event) != guard::readiness::events::Class::Safe {
            assert!(covered.contains(event), "{event} has no row");
        }
    }
}

#[test]
fn the_event_contexts_follow_githubs_tables() {
    use guard::readiness::events::github_context;
    struct Github(Val);
    impl Scope for Github {
        fn context(&self, name: &str) -> Option<Val> {
            (name == "github").then(|| self.0.clone())
        }
        fn status(&self, _: &str) -> Val {
            Val::UNKNOWN
        }
    }
    let eval = |event: Event, condition: &str| {
        expr::condition(condition, &Github(github_context(Some(event), &target())))
            .unwrap()
            .truthy()
    };
    for (event, condition, truthy) in [
        (PR, "github.ref == 'refs/heads/main'", Some(false)),
        (PR, "startsWith(github.ref, 'refs/tags/')", Some(false)),
        (PR, "startsWith(github.ref, 'refs/pull/')", Some(true)),
        (PR, "endsWith(github.ref, '/merge')", Some(true)),
        (PR, "github.ref == 'refs/pull/12/merge'", None),
        (PR, "github.ref == 'refs/pull/x/merge'", Some(false)),
        (PR, "github.ref_name == 'main'", Some(false)),
        (PR, "contains(github.ref, 'refs/tags')", Some(false)),
        (PR, "contains(github.ref, '12/mer')", None),
        (PR, "github.head_ref == 'agent-team/T-1'", Some(true)),
        (PR, "github.base_ref == 'main'", Some(true)),
        (PR, "github.event_name == 'pull_request'", Some(true)),
        (PR, "github.event.pull_request.draft", None),
        (PR, "github.event.pull_request.head.repo.fork", Some(false)),
        (
            Event::PullRequestReview,
            "github.ref == 'refs/heads/main'",
            Some(false),
        ),
        (
            Event::PullRequestReviewComment,
            "startsWith(github.ref, 'refs/tags/')",
            Some(false),
        ),
        (
            Push,
            "github.ref == 'refs/heads/agent-team/T-1'",
            Some(true),
        ),
        (Push, "github.ref_name == 'main'", Some(false)),
        (Push, "github.head_ref", Some(false)),
        (
            Event::Create,
            "github.event.ref_type == 'branch'",
            Some(true),
        ),
        (
            Event::MergeGroup,
            "github.ref == 'refs/heads/main'",
            Some(false),
        ),
        (
            Event::MergeGroup,
            "startsWith(github.ref, 'refs/heads/gh-readonly-queue/main/')",
            Some(true),
        ),
        (
            Event::PullRequestTarget,
            "github.ref == 'refs/heads/main'",
            Some(true),
        ),
        (
            Event::WorkflowRun,
            "github.event.workflow_run.head_branch == 'agent-team/T-1'",
            Some(true),
        ),
        (
            Event::IssueComment,
            "github.event.issue.pull_request",
            Some(true),
        ),
        (Event::Deployment, "github.ref == 'refs/heads/main'", None),
        (PR, "github.actor == 'dependabot[bot]'", Some(false)),
        (PR, "github.actor != 'Dependabot[bot]'", Some(true)),
        (PR, "github.actor == 'octocat'", None),
        (PR, "github.event.pull_request.merged", Some(false)),
        (Push, "github.ref_type == 'tag'", Some(false)),
    ] {
        assert_eq!(eval(event, condition), truthy, "{event}: {condition}");
    }
}

#[test]
fn status_functions_drop_the_implicit_success() {
    let workflow = |condition: &str| {
        WorkflowFile {
        path: ".github/workflows/s.yml".into(),
        bytes: format!(
            "on: push\npermissions: {{}}\njobs:\n  gate:\n    if: github.ref == 'refs/heads/main'\n    runs-on: ubuntu-latest\n    steps: [{{run: 'true'}}]\n  job:\n    needs: gate\n    if: {condition}\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - run: x\n        env:\n          K: ${{{{ secrets.K }}}}\n"
        )
        .into_bytes(),
    }
    };
    // The needed job is skipped (its condition is false on the branch).
    for (condition, runs) in [
        ("github.event_name == 'push'", false),
        ("success()", false),
        ("success() && github.event_name == 'push'", false),
        ("success() || github.event_name == 'push'", true),
        ("always()", true),
        ("failure()", true),
        ("cancelled()", true),
        ("!cancelled()", true),
        ("always() && github.ref == 'refs/heads/main'", false),
        ("${{ failure() || success() }}", true),
    ] {
        let found = run(&[workflow(condition)]);
        assert_eq!(!found.is_empty(), runs, "if: {condition}: {found:?}");
    }
}

#[test]
fn runner_labels_hosted_by_github() {
    use guard::readiness::jobs::github_hosted;
    for label in [
        "ubuntu-latest",
        "ubuntu-24.04",
        "ubuntu-22.04-arm",
        "windows-2022",
        "windows-latest",
        "windows-11-arm",
        "macos-14",
        "macos-latest-large",
        "macos-15-xlarge",
        "macos-13",
    ] {
        assert!(github_hosted(label), "{label}");
    }
    for label in [
        "self-hosted",
        "linux",
        "ubuntu",
        "ubuntu-latest-4core",
        "my-ubuntu-latest",
        "macos",
        "windows-server",
        "",
    ] {
        assert!(!github_hosted(label), "{label}");
    }
}

#[test]
fn the_policy_readiness_section_is_strict() {
    let policy = Policy::from_yaml(
        "version: 1\nreadiness:\n  default-token: read\n  protected-environments: [production]\n  accept:\n    - workflow: .github/workflows/ci.yml\n      job: test\n      reason: reads a public mirror\n",
    )
    .unwrap();
    assert_eq!(policy.readiness.default_token, DefaultToken::Read);
    assert_eq!(policy.readiness.protected_environments, ["production"]);
    assert_eq!(policy.readiness.accept.len(), 1);
    let default = Policy::embedded_default().unwrap();
    assert_eq!(default.readiness, Settings::default());
    for (bad, says) in [
        (
            "readiness:\n  default-token: maybe\n",
            "readiness.default-token",
        ),
        ("readiness:\n  unknown: 1\n", "unknown"),
        (
            "readiness:\n  accept:\n    - {workflow: .github/workflows/a.yml, job: a}\n",
            "reason",
        ),
        (
            "readiness:\n  accept:\n    - {workflow: .github/workflows/a.yml, job: a, reason: ' '}\n",
            "readiness.accept[0].reason",
        ),
        (
            "readiness:\n  accept:\n    - {workflow: .github/workflows/a.yml, job: a, reason: r, extra: 1}\n",
            "extra",
        ),
        (
            "readiness:\n  accept:\n    - {workflow: ci.yml, job: a, reason: r}\n",
            "readiness.accept[0].workflow",
        ),
        (
            "readiness:\n  protected-environments: ['']\n",
            "readiness.protected-environments[0]",
        ),
    ] {
        let err = Policy::from_yaml(&format!("version: 1\n{bad}"))
            .unwrap_err()
            .to_string();
        assert!(err.contains(says), "{bad}: {err}");
    }
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
        ("format('{0}', github.ref)", Some(true)),
        (
            "format('{0}-latest', 'ubuntu') == 'ubuntu-latest'",
            Some(true),
        ),
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
    let findings = run(&[big, latin1]);
    let reasons: Vec<String> = findings
        .iter()
        .map(|f| {
            assert_eq!(f.rule, Rule::UnreadableWorkflow);
            f.detail.clone().unwrap()
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
    guard_readiness_with(repo, policy, &["--base", "HEAD"])
}

/// `extra` names the base (`--base REV`) and any further flags.
fn guard_readiness_with(repo: &Path, policy: Option<&Path>, extra: &[&str]) -> (i32, ReadinessDoc) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_guard"));
    cmd.args(["readiness", "--repo"])
        .arg(repo)
        .args([
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
    cmd.args(extra);
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
    std::fs::copy(
        fixtures().join("github-token-only.yml"),
        workflows.join("ci.yaml"),
    )
    .unwrap();
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
    assert_eq!(doc.default_head, doc.base_commit);
    assert_eq!(doc.default_head_workflows, doc.workflows);

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
fn the_subcommand_reads_the_default_head_for_pull_request_events_and_applies_the_policy() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    let workflows = repo.join(".github/workflows");
    std::fs::create_dir_all(&workflows).unwrap();
    // The base: a push workflow only.
    std::fs::copy(fixtures().join("create.yml"), workflows.join("create.yml")).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "base"]);
    git(&repo, &["tag", "base"]);
    // The default branch moved on: a review workflow, and the create workflow is gone.
    std::fs::remove_file(workflows.join("create.yml")).unwrap();
    std::fs::copy(
        fixtures().join("pr-review.yml"),
        workflows.join("review.yml"),
    )
    .unwrap();
    std::fs::copy(
        fixtures().join("accepted.yml"),
        workflows.join("accepted.yml"),
    )
    .unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "later"]);

    // Without --default-head the base's files are read for every event: the review workflow,
    // which a pull request event would run, is missed.
    let (code, doc) = guard_readiness_with(&repo, None, &["--base", "base"]);
    assert_eq!(code, 1);
    let found: Vec<(&str, &str)> = doc
        .findings
        .iter()
        .map(|f| (f.rule.name(), f.job.as_deref().unwrap()))
        .collect();
    assert_eq!(found, [("unprotected-secret-job", "announce")]);

    let policy = tmp.path().join("policy.yml");
    std::fs::write(
        &policy,
        "version: 1\nreadiness:\n  accept:\n    - workflow: .github/workflows/accepted.yml\n      job: test\n      reason: reads a public mirror only\n",
    )
    .unwrap();
    let (code, doc) = guard_readiness_with(
        &repo,
        Some(&policy),
        &["--base", "base", "--default-head", "main"],
    );
    assert_eq!(code, 1);
    assert_ne!(doc.default_head, doc.base_commit);
    assert_eq!(doc.workflows, [".github/workflows/create.yml"]);
    assert_eq!(
        doc.default_head_workflows,
        [
            ".github/workflows/accepted.yml",
            ".github/workflows/review.yml"
        ]
    );
    let found: Vec<(&str, &str, &str, Vec<ReadinessEvent>, Option<&str>)> = doc
        .findings
        .iter()
        .map(|f| {
            (
                f.rule.name(),
                f.workflow.as_str(),
                f.job.as_deref().unwrap(),
                f.events.clone(),
                f.accepted.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            (
                "unprotected-secret-job",
                ".github/workflows/create.yml",
                "announce",
                vec![ReadinessEvent::Create],
                None
            ),
            (
                "unprotected-secret-job",
                ".github/workflows/accepted.yml",
                "other",
                vec![ReadinessEvent::PullRequest],
                None
            ),
            (
                "unprotected-secret-job",
                ".github/workflows/accepted.yml",
                "test",
                vec![ReadinessEvent::PullRequest],
                Some("reads a public mirror only")
            ),
            (
                "unprotected-secret-job",
                ".github/workflows/review.yml",
                "e2e",
                vec![ReadinessEvent::PullRequestReview],
                None
            ),
        ]
    );
    assert_eq!(doc.findings[0].commit, doc.base_commit);
    assert_eq!(doc.findings[3].commit, doc.default_head);
    assert_eq!(doc.open_findings(), 3);
}

#[test]
fn the_subcommand_passes_when_every_finding_is_accepted() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(repo.join(".github/workflows")).unwrap();
    std::fs::copy(
        fixtures().join("pr-review.yml"),
        repo.join(".github/workflows/review.yml"),
    )
    .unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "base"]);
    let policy = tmp.path().join("policy.yml");
    std::fs::write(
        &policy,
        "version: 1\nreadiness:\n  accept:\n    - {workflow: .github/workflows/review.yml, job: e2e, reason: e2e key is a sandbox key}\n",
    )
    .unwrap();
    let (code, doc) = guard_readiness(&repo, Some(&policy));
    assert_eq!((code, doc.result), (0, ReadinessResult::Pass));
    assert_eq!(doc.findings.len(), 1);
    assert_eq!(
        doc.findings[0].accepted.as_deref(),
        Some("e2e key is a sandbox key")
    );
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

// -- issue 29: the false alarms of the held-out set ----------------------------------------------

/// A workflow `on` with one job `job` (`head` inserted at the job level) that checks out and runs
/// with `credential` (a step env line or nothing).
fn shaped(on: &str, head: &str, credential: &str) -> WorkflowFile {
    WorkflowFile {
        path: ".github/workflows/shaped.yml".into(),
        bytes: format!(
            "on: {on}\npermissions: {{}}\njobs:\n  job:\n{head}    steps:\n      - uses: actions/checkout@v4\n      - run: make test\n{credential}"
        )
        .into_bytes(),
    }
}

const SECRET: &str = "        env:\n          KEY: ${{ secrets.KEY }}\n";
const HOSTED: &str = "    runs-on: ubuntu-latest\n";

fn rules_of(found: &[Finding]) -> Vec<(Rule, String)> {
    found
        .iter()
        .map(|f| {
            (
                f.rule,
                f.credentials
                    .iter()
                    .map(|c| c.phrase())
                    .collect::<Vec<_>>()
                    .join(", "),
            )
        })
        .collect()
}

#[test]
fn conditions_use_case_typed_fields_and_absent_payload_keys() {
    // Each condition is false on its event (GitHub's expression docs: `case()`, comparisons of
    // different types as numbers; the event's webhook payload: `pull_request` absent on push).
    for (on, condition) in [
        (
            "push",
            "${{ case(github.event_name == 'push', false, true) }}",
        ),
        (
            "push",
            "case(github.ref == 'refs/heads/main', 'deploy', '') != ''",
        ),
        ("pull_request", "github.event.pull_request.draft == 'false'"),
        ("pull_request", "github.event.pull_request.draft == 'true'"),
        (
            "push",
            "contains(github.event.pull_request.labels.*.name, 'run-e2e')",
        ),
        ("push", "github.event.pull_request.number > 0"),
        (
            "push",
            "contains(fromJSON('[\"main\", \"release\"]'), github.ref_name)",
        ),
        (
            "push",
            "format('{0}/{1}', github.ref_name, 'x') == 'main/x'",
        ),
        ("push", "join(fromJSON('[\"a\", \"b\"]'), '-') != 'a-b'"),
    ] {
        let head = format!("    if: {condition:?}\n{HOSTED}");
        let found = run(&[shaped(on, &head, SECRET)]);
        assert!(found.is_empty(), "on {on}, if {condition}: {found:?}");
    }
    // The same shapes true, or not known, still run the job (the rule that fires is named).
    for (on, condition) in [
        (
            "push",
            "${{ case(github.event_name == 'push', true, false) }}",
        ),
        ("pull_request", "github.event.pull_request.draft == false"),
        (
            "pull_request",
            "contains(github.event.pull_request.labels.*.name, 'run-e2e')",
        ),
        (
            "push",
            "contains(fromJSON('[\"main\", \"agent-team/T-1\"]'), github.ref_name)",
        ),
        ("push", "case(vars.X == 'y', false, true)"),
    ] {
        let head = format!("    if: {condition:?}\n{HOSTED}");
        let found = run(&[shaped(on, &head, SECRET)]);
        assert_eq!(
            rules_of(&found),
            vec![(USJ, "secret KEY".to_owned())],
            "on {on}, if {condition}"
        );
    }
}

#[test]
fn an_environment_chosen_by_expression_gates_when_every_value_is_protected() {
    let settings = |protected: &[&str]| Settings {
        protected_environments: protected.iter().map(|s| (*s).to_owned()).collect(),
        ..Settings::default()
    };
    let head = format!(
        "    environment: ${{{{ github.ref == 'refs/heads/main' && 'production' || 'staging' }}}}\n{HOSTED}"
    );
    let file = shaped("push", &head, SECRET);
    let judge = |protected: &[&str]| {
        assess(
            std::slice::from_ref(&file),
            &target(),
            &settings(protected),
            Reads::Both,
        )
    };
    // A choice by `github.ref`, not known to the environment's scope: either value, both
    // protected, gates the job.
    assert!(judge(&["production", "Staging"]).is_empty());
    assert_eq!(
        rules_of(&judge(&["production"])),
        vec![(USJ, "secret KEY".into())]
    );
    // Over a matrix: every value protected, or one not.
    let matrix = |envs: &str| {
        format!(
            "    strategy:\n      matrix:\n        env: [{envs}]\n    environment: ${{{{ matrix.env }}}}\n{HOSTED}"
        )
    };
    let gated = shaped("push", &matrix("staging, production"), SECRET);
    let open = shaped("push", &matrix("staging, preview"), SECRET);
    let protected = settings(&["staging", "production"]);
    assert!(assess(&[gated], &target(), &protected, Reads::Both).is_empty());
    assert_eq!(
        rules_of(&assess(&[open], &target(), &protected, Reads::Both)),
        vec![(USJ, "secret KEY".into())]
    );
    // Not known (a variable): not gated.
    let unknown = shaped(
        "push",
        &format!("    environment: ${{{{ vars.ENV }}}}\n{HOSTED}"),
        SECRET,
    );
    assert_eq!(
        rules_of(&assess(&[unknown], &target(), &protected, Reads::Both)),
        vec![(USJ, "secret KEY".into())]
    );
}

#[test]
fn runs_on_reads_githubs_dated_labels_and_matrix_expressions() {
    // No secret, no token: only the runner could be a credential.
    let judge = |head: &str| rules_of(&run(&[shaped("pull_request", head, "")]));
    for label in [
        "ubuntu-slim",
        "ubuntu-24.04-arm",
        "windows-2025-vs2026",
        "macos-26-intel",
        "macos-15-intel",
        "ubuntu-26.04",
    ] {
        assert!(
            judge(&format!("    runs-on: {label}\n")).is_empty(),
            "{label}"
        );
    }
    for (head, runner) in [
        ("    runs-on: ubuntu-99.04\n", "runner ubuntu-99.04"),
        (
            "    runs-on: ubuntu-latest-4core\n",
            "runner ubuntu-latest-4core",
        ),
        (
            "    strategy:\n      matrix:\n        os: [ubuntu, self]\n    runs-on: ${{ matrix.os }}-latest\n",
            "runner self-latest",
        ),
        (
            "    runs-on: ${{ vars.RUNNER || 'ubuntu-latest' }}\n",
            "runner chosen by `${{ vars.RUNNER || 'ubuntu-latest' }}`",
        ),
    ] {
        assert_eq!(judge(head), vec![(USJ, runner.to_owned())], "{head}");
    }
    for head in [
        "    strategy:\n      matrix:\n        os: [ubuntu, windows, macos]\n    runs-on: ${{ matrix.os }}-latest\n",
        "    strategy:\n      matrix:\n        include: [{os: windows-2025}, {python: '3.12'}]\n    runs-on: ${{ matrix.os || 'ubuntu-latest' }}\n",
        "    strategy:\n      matrix:\n        cfg: [{os: ubuntu-24.04}, {os: macos-15}]\n    runs-on: ${{ matrix.cfg.os }}\n",
        "    strategy:\n      matrix:\n        arm: [true, false]\n    runs-on: ${{ case(matrix.arm, 'ubuntu-24.04-arm', 'ubuntu-24.04') }}\n",
    ] {
        assert!(judge(head).is_empty(), "{head}");
    }
}

// ---- local actions and reusable workflows, read from the same commit ----

/// A `pull_request_target` workflow whose job holds a secret and runs `step` (YAML of one step,
/// indented for the steps list).
fn privileged_with(step: &str) -> WorkflowFile {
    WorkflowFile {
        path: ".github/workflows/pr.yml".into(),
        bytes: format!(
            "on: pull_request_target\npermissions: {{}}\njobs:\n  test:\n    runs-on: ubuntu-latest\n    env:\n      KEY: ${{{{ secrets.KEY }}}}\n    steps:\n      - uses: actions/checkout@v4\n{step}"
        )
        .into_bytes(),
    }
}

fn assess_with_tree(workflow: &WorkflowFile, tree: &[(&str, &str)]) -> Vec<Finding> {
    let files = std::slice::from_ref(workflow);
    let read = |path: &str| -> Result<Option<Vec<u8>>, String> {
        Ok(tree
            .iter()
            .find(|(p, _)| *p == path)
            .map(|(_, text)| text.as_bytes().to_vec())
            .or_else(|| {
                files
                    .iter()
                    .find(|f| f.path == path)
                    .map(|f| f.bytes.clone())
            }))
    };
    guard::readiness::assess_in(files, &read, &target(), &Settings::default(), Reads::Both)
}

const HEAD_CHECKOUT: &str = "runs:\n  using: composite\n  steps:\n    - uses: actions/checkout@v4\n      with:\n        ref: ${{ github.event.pull_request.head.sha }}\n    - run: make test\n      shell: bash\n";

#[test]
fn a_local_composite_action_runs_in_the_calling_job() {
    // Its steps check out the pull request's head: the job runs the branch's code with its secret.
    let workflow = privileged_with("      - uses: ./.github/actions/test\n");
    let found = assess_with_tree(
        &workflow,
        &[(".github/actions/test/action.yml", HEAD_CHECKOUT)],
    );
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].rule, Rule::PrivilegedCheckout);
    assert!(
        found[0]
            .detail
            .as_deref()
            .unwrap()
            .contains("github.event.pull_request.head"),
        "{found:#?}"
    );

    // The ref handed in as an input (`inputs.ref` inside, the payload outside), through
    // `action.yaml` and a nested composite action.
    let workflow = privileged_with(
        "      - uses: ./tools/outer\n        with:\n          ref: ${{ github.event.pull_request.head.sha }}\n",
    );
    let found = assess_with_tree(
        &workflow,
        &[
            (
                "tools/outer/action.yaml",
                "runs:\n  using: composite\n  steps:\n    - uses: ./tools/inner\n      with:\n        ref: ${{ inputs.ref }}\n",
            ),
            (
                "tools/inner/action.yml",
                "runs:\n  using: composite\n  steps:\n    - run: git fetch origin \"$REF\" && git checkout FETCH_HEAD\n      shell: bash\n      env:\n        REF: ${{ inputs.ref }}\n",
            ),
        ],
    );
    assert_eq!(
        found.iter().map(|f| f.rule).collect::<Vec<_>>(),
        [Rule::PrivilegedCheckout],
        "{found:#?}"
    );

    // A composite action that runs no branch code (a labeller) is no finding.
    let workflow = privileged_with("      - uses: ./.github/actions/label\n");
    let found = assess_with_tree(
        &workflow,
        &[(
            ".github/actions/label/action.yml",
            "runs:\n  using: composite\n  steps:\n    - run: gh pr edit --add-label triage\n      shell: bash\n",
        )],
    );
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn a_missing_nested_too_deep_or_cyclic_local_action_is_a_finding() {
    let cases: [(&str, Vec<(&str, &str)>, &str); 3] = [
        (
            "./.github/actions/gone",
            vec![],
            "no such file at this commit",
        ),
        (
            "./a",
            vec![
                (
                    "a/action.yml",
                    "runs:\n  using: composite\n  steps:\n    - uses: ./b\n",
                ),
                (
                    "b/action.yml",
                    "runs:\n  using: composite\n  steps:\n    - uses: ./a\n",
                ),
            ],
            "uses itself",
        ),
        (
            "./c",
            vec![(
                "c/action.yml",
                "runs:\n  using: composite\n  steps:\n    - run: true\n      shell: bash\n",
            )],
            "",
        ),
    ];
    for (uses, tree, want) in cases {
        let workflow = privileged_with(&format!("      - uses: {uses}\n"));
        let found = assess_with_tree(&workflow, &tree);
        if want.is_empty() {
            assert!(found.is_empty(), "{uses}: {found:#?}");
            continue;
        }
        assert_eq!(found.len(), 1, "{uses}: {found:#?}");
        assert_eq!(found[0].rule, Rule::UnreadableWorkflow, "{uses}");
        assert!(
            found[0].detail.as_deref().unwrap().contains(want),
            "{uses}: {found:#?}"
        );
    }
    // Eleven levels of composite actions, each calling the next.
    let tree: Vec<(String, String)> = (0..11)
        .map(|i| {
            (
                format!("l{i}/action.yml"),
                format!(
                    "runs:\n  using: composite\n  steps:\n    - uses: ./l{}\n",
                    i + 1
                ),
            )
        })
        .collect();
    let tree: Vec<(&str, &str)> = tree.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    let found = assess_with_tree(&privileged_with("      - uses: ./l0\n"), &tree);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(
        found[0]
            .detail
            .as_deref()
            .unwrap()
            .contains("nested deeper than"),
        "{found:#?}"
    );
}

#[test]
fn a_local_reusable_workflow_runs_the_callers_payload_ref_with_its_secrets() {
    let caller = WorkflowFile {
        path: ".github/workflows/pr.yml".into(),
        bytes: b"on: pull_request_target\npermissions: {}\njobs:\n  test:\n    uses: ./.github/workflows/tests.yml\n    secrets: inherit\n    with:\n      sha: ${{ github.event.pull_request.head.sha }}\n".to_vec(),
    };
    let called = WorkflowFile {
        path: ".github/workflows/tests.yml".into(),
        bytes: b"on:\n  workflow_call:\n    inputs:\n      sha: { type: string, required: true }\njobs:\n  run:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n        with:\n          ref: ${{ inputs.sha }}\n      - run: make test\n".to_vec(),
    };
    let found = assess(
        &[caller.clone(), called.clone()],
        &target(),
        &Settings::default(),
        Reads::Both,
    );
    let privileged: Vec<&Finding> = found.iter().filter(|f| f.workflow == caller.path).collect();
    assert_eq!(privileged.len(), 1, "{found:#?}");
    assert_eq!(privileged[0].rule, Rule::PrivilegedCheckout);
    let detail = privileged[0].detail.as_deref().unwrap();
    assert!(
        detail.contains("`./.github/workflows/tests.yml` job `run`")
            && detail.contains("inputs.sha"),
        "{detail}"
    );
    assert!(
        privileged[0]
            .credentials
            .contains(&Credential::Secret("inherit".into())),
        "{found:#?}"
    );
}

#[test]
fn the_subcommand_reads_local_actions_from_the_commit() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(repo.join(".github/workflows")).unwrap();
    std::fs::create_dir_all(repo.join(".github/actions/test")).unwrap();
    std::fs::write(
        repo.join(".github/workflows/pr.yml"),
        privileged_with("      - uses: ./.github/actions/test\n").bytes,
    )
    .unwrap();
    std::fs::write(repo.join(".github/actions/test/action.yml"), HEAD_CHECKOUT).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "base"]);
    let (code, doc) = guard_readiness(&repo, None);
    assert_eq!(code, 1);
    assert_eq!(doc.findings.len(), 1, "{doc:#?}");
    assert_eq!(doc.findings[0].rule, Rule::PrivilegedCheckout);
    // Once the action is gone from the commit, the workflow cannot be shown safe.
    std::fs::remove_file(repo.join(".github/actions/test/action.yml")).unwrap();
    git(&repo, &["commit", "-q", "-a", "-m", "drop"]);
    let (code, doc) = guard_readiness(&repo, None);
    assert_eq!(code, 1);
    assert_eq!(doc.findings[0].rule, Rule::UnreadableWorkflow, "{doc:#?}");
}

// ---- provenance of the code a credentialed job runs: one fixture per class ----

const PR_TESTS_ACTION: &str = "runs:\n  using: composite\n  steps:\n    - uses: actions/checkout@v4\n      with:\n        ref: ${{ github.event.pull_request.head.sha }}\n    - run: make test\n      shell: bash\n";

const TEST_PR_SCRIPT: &str =
    "#!/bin/sh\nset -eu\ngit fetch origin \"pull/$PR/head\"\ngit checkout FETCH_HEAD\nmake e2e\n";

/// A fixture of `fixtures/readiness/provenance/`, as a file of `.github/workflows/`.
fn load_provenance(name: &str) -> WorkflowFile {
    WorkflowFile {
        path: format!(".github/workflows/{name}"),
        bytes: std::fs::read(fixtures().join("provenance").join(name)).unwrap(),
    }
}

/// The fixtures `names` judged together, local files read from `tree` (then the fixtures):
/// (rule, workflow file name, job, detail) of each finding.
fn provenance(
    names: &[&str],
    tree: &[(&str, &str)],
    settings: &Settings,
) -> Vec<(Rule, String, String, String)> {
    let files: Vec<WorkflowFile> = names.iter().map(|n| load_provenance(n)).collect();
    let read = |path: &str| -> Result<Option<Vec<u8>>, String> {
        Ok(tree
            .iter()
            .find(|(p, _)| *p == path)
            .map(|(_, text)| text.as_bytes().to_vec())
            .or_else(|| {
                files
                    .iter()
                    .find(|f| f.path == path)
                    .map(|f| f.bytes.clone())
            }))
    };
    guard::readiness::assess_in(&files, &read, &target(), settings, Reads::Both)
        .into_iter()
        .map(|f| {
            (
                f.rule,
                f.workflow
                    .trim_start_matches(".github/workflows/")
                    .to_owned(),
                f.job.clone().unwrap_or_default(),
                f.detail.clone().unwrap_or_default(),
            )
        })
        .collect()
}

/// One finding of `rule` on `workflow`'s `job`, its detail naming every one of `mentions`.
fn assert_one(
    got: &[(Rule, String, String, String)],
    rule: Rule,
    workflow: &str,
    job: &str,
    mentions: &[&str],
) {
    assert_eq!(got.len(), 1, "{got:#?}");
    let (r, w, j, detail) = &got[0];
    assert_eq!(
        (*r, w.as_str(), j.as_str()),
        (rule, workflow, job),
        "{got:#?}"
    );
    for m in mentions {
        assert!(detail.contains(m), "detail {detail:?} lacks {m:?}");
    }
}

#[test]
fn class_local_composite_action_checking_out_the_head() {
    let got = provenance(
        &["prov-local-composite.yml"],
        &[(".github/actions/pr-tests/action.yml", PR_TESTS_ACTION)],
        &Settings::default(),
    );
    assert_one(
        &got,
        PRIV,
        "prov-local-composite.yml",
        "integration",
        &["github.event.pull_request.head"],
    );
}

#[test]
fn class_local_reusable_workflow_with_the_head_sha_input() {
    let got = provenance(
        &["prov-local-reusable.yml", "prov-reusable-called.yml"],
        &[],
        &Settings::default(),
    );
    assert_one(
        &got,
        PRIV,
        "prov-local-reusable.yml",
        "call",
        &["prov-reusable-called.yml", "inputs.sha"],
    );
}

#[test]
fn class_same_run_artifact_of_a_job_that_ran_the_head() {
    let got = provenance(&["prov-same-run-artifact.yml"], &[], &Settings::default());
    assert_one(
        &got,
        PRIV,
        "prov-same-run-artifact.yml",
        "smoke",
        &["`dist`", "`build`"],
    );
}

#[test]
fn class_repository_script_fetching_the_pull_request() {
    let got = provenance(
        &["prov-fetch-script.yml"],
        &[("scripts/test-pr.sh", TEST_PR_SCRIPT)],
        &Settings::default(),
    );
    assert_one(
        &got,
        PRIV,
        "prov-fetch-script.yml",
        "e2e",
        &["scripts/test-pr.sh", "pull/"],
    );
    // The same script fetching nothing runs the default branch's code: no finding.
    let quiet = provenance(
        &["prov-fetch-script.yml"],
        &[("scripts/test-pr.sh", "#!/bin/sh\nmake e2e\n")],
        &Settings::default(),
    );
    assert!(quiet.is_empty(), "{quiet:#?}");
    // A script that is not in the commit: its provenance cannot be established.
    let missing = provenance(&["prov-fetch-script.yml"], &[], &Settings::default());
    assert_one(
        &missing,
        PRIV,
        "prov-fetch-script.yml",
        "e2e",
        &["scripts/test-pr.sh", "cannot be established"],
    );
}

#[test]
fn class_api_tarball_of_the_head_sha() {
    let got = provenance(&["prov-tarball.yml"], &[], &Settings::default());
    assert_one(&got, PRIV, "prov-tarball.yml", "bench", &["tarball"]);
}

#[test]
fn class_gh_api_download_of_a_pull_request_runs_artifact() {
    let got = provenance(&["prov-gh-api-artifact.yml"], &[], &Settings::default());
    assert_one(
        &got,
        PRIV,
        "prov-gh-api-artifact.yml",
        "deploy-preview",
        &["artifacts"],
    );
}

#[test]
fn class_repository_dispatch_chain_carrying_the_head() {
    let got = provenance(
        &["prov-dispatch-sender.yml", "prov-dispatch-receiver.yml"],
        &[],
        &Settings::default(),
    );
    assert_one(
        &got,
        PRIV,
        "prov-dispatch-receiver.yml",
        "integration",
        &[
            "github.event.client_payload.sha",
            "prov-dispatch-sender.yml",
        ],
    );
    // No sender in the repository: the payload's ref is unverified.
    let alone = provenance(&["prov-dispatch-receiver.yml"], &[], &Settings::default());
    assert_one(
        &alone,
        PRIV,
        "prov-dispatch-receiver.yml",
        "integration",
        &["github.event.client_payload.sha", "unverified"],
    );
}

#[test]
fn class_third_party_action_using_another_runs_artifacts() {
    let got = provenance(&["prov-coverage-comment.yml"], &[], &Settings::default());
    assert_one(
        &got,
        PRIV,
        "prov-coverage-comment.yml",
        "coverage",
        &[
            "py-cov-action/python-coverage-comment-action",
            "https://github.com/py-cov-action/python-coverage-comment-action",
        ],
    );
}

/// The review of fixtures of `provenance/`: findings and cleared jobs.
fn review(names: &[&str], tree: &[(&str, &str)]) -> guard::readiness::Review {
    let files: Vec<WorkflowFile> = names.iter().map(|n| load_provenance(n)).collect();
    let read = |path: &str| -> Result<Option<Vec<u8>>, String> {
        Ok(tree
            .iter()
            .find(|(p, _)| *p == path)
            .map(|(_, text)| text.as_bytes().to_vec())
            .or_else(|| {
                files
                    .iter()
                    .find(|f| f.path == path)
                    .map(|f| f.bytes.clone())
            }))
    };
    guard::readiness::review_in(&files, &read, &target(), &Settings::default(), Reads::Both)
}

#[test]
fn class_credentials_without_branch_code_raise_no_alarm() {
    let got = provenance(&["prov-notifier.yml"], &[], &Settings::default());
    assert!(got.is_empty(), "{got:#?}");
    // Each is cleared, and the reason says why.
    let cleared = review(&["prov-notifier.yml"], &[]).cleared;
    let jobs: Vec<(&str, &[Event], &str)> = cleared
        .iter()
        .map(|c| (c.job.as_str(), c.events.as_slice(), c.reason.as_str()))
        .collect();
    assert_eq!(jobs.len(), 2, "{cleared:#?}");
    for (job, events, reason) in jobs {
        assert_eq!(events, [Push, PR], "{job}");
        assert!(
            reason.starts_with("runs no code of the branch: no checkout"),
            "{job}: {reason}"
        );
    }
    let of = |job: &str| cleared.iter().find(|c| c.job == job).unwrap();
    assert!(
        of("notify")
            .reason
            .contains("slackapi/slack-github-action@v2"),
        "{cleared:#?}"
    );
    assert!(of("label").reason.contains("actions/labeler@v5"));
    assert!(
        of("label")
            .credentials
            .contains(&Credential::Token("pull-requests: write".into()))
    );
}

/// A `push` workflow with one credentialed job made of `steps` (indented for the list).
fn push_job(steps: &str) -> WorkflowFile {
    WorkflowFile {
        path: ".github/workflows/push.yml".into(),
        bytes: format!(
            "on: push\npermissions: {{}}\njobs:\n  job:\n    runs-on: ubuntu-latest\n    env:\n      KEY: ${{{{ secrets.KEY }}}}\n    steps:\n{steps}"
        )
        .into_bytes(),
    }
}

#[test]
fn on_the_branchs_own_events_what_runs_its_code_is_named() {
    let judge = |steps: &str, tree: &[(&str, &str)]| {
        let found = assess_with_tree(&push_job(steps), tree);
        found
            .iter()
            .map(|f| (f.rule, f.detail.clone().unwrap_or_default()))
            .collect::<Vec<_>>()
    };
    for (steps, want) in [
        (
            "      - uses: actions/checkout@v4\n      - run: make\n",
            "event's commit",
        ),
        (
            "      - uses: actions/checkout@v4\n        with:\n          ref: ${{ github.sha }}\n      - run: make\n",
            "github.sha",
        ),
        (
            "      - uses: ./tools/js-action\n",
            "the local action `./tools/js-action`",
        ),
        (
            "      - run: git clone https://github.com/octo/repo && make -C repo\n",
            "git",
        ),
        (
            "      - run: curl -L https://api.github.com/repos/octo/repo/tarball/$GITHUB_SHA | tar xz\n",
            "tarball",
        ),
        (
            "      - uses: dawidd6/action-download-artifact@v6\n        with:\n          workflow: ci.yml\n",
            "https://github.com/dawidd6/action-download-artifact",
        ),
    ] {
        let got = judge(
            steps,
            &[(
                "tools/js-action/action.yml",
                "runs:\n  using: node20\n  main: index.js\n",
            )],
        );
        assert_eq!(got.len(), 1, "{steps}: {got:#?}");
        assert_eq!(got[0].0, USJ, "{steps}");
        assert!(got[0].1.contains(want), "{steps}: {}", got[0].1);
    }
    // A reusable workflow of another repository cannot be read: fail closed.
    let remote = WorkflowFile {
        path: ".github/workflows/push.yml".into(),
        bytes: b"on: push\njobs:\n  call:\n    uses: octo/shared/.github/workflows/build.yml@v1\n    secrets: inherit\n".to_vec(),
    };
    let found = assess_with_tree(&remote, &[]);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].rule, USJ);
    assert!(
        found[0].detail.as_deref().unwrap().contains("cannot see"),
        "{found:#?}"
    );
    // The default branch's side, another repository, or nothing checked out: no finding.
    for steps in [
        "      - uses: actions/checkout@v4\n        with:\n          ref: ${{ github.event.repository.default_branch }}\n      - run: make\n",
        "      - uses: actions/checkout@v4\n        with:\n          repository: octo/docs\n      - run: make\n",
        "      - uses: actions/checkout@v4\n        with:\n          ref: main\n      - run: make\n",
        "      - run: curl -X POST \"$HOOK\" -d 'done'\n",
    ] {
        assert!(judge(steps, &[]).is_empty(), "{steps}");
    }
}

#[test]
fn same_run_artifacts_follow_names_patterns_and_all() {
    let workflow = |download: &str, build_ref: &str| {
        WorkflowFile {
        path: ".github/workflows/prt.yml".into(),
        bytes: format!(
            "on: pull_request_target\npermissions: {{}}\njobs:\n  build:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n        with:\n          ref: {build_ref}\n      - run: make\n      - uses: actions/upload-artifact@v4\n        with:\n          name: site-html\n          path: out/\n  publish:\n    needs: build\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/download-artifact@v4\n{download}      - run: ls\n        env:\n          TOKEN: ${{{{ secrets.TOKEN }}}}\n"
        )
        .into_bytes(),
    }
    };
    let head = "${{ github.event.pull_request.head.sha }}";
    for (download, exposed) in [
        ("        with:\n          name: site-html\n", true),
        ("        with:\n          pattern: site-*\n", true),
        ("", true),
        ("        with:\n          name: ${{ inputs.which }}\n", true),
        ("        with:\n          name: other\n", false),
        ("        with:\n          pattern: docs-*\n", false),
    ] {
        let found = assess_with_tree(&workflow(download, head), &[]);
        let rules: Vec<(Rule, &str)> = found
            .iter()
            .map(|f| (f.rule, f.job.as_deref().unwrap_or_default()))
            .collect();
        if exposed {
            assert_eq!(rules, [(PRIV, "publish")], "{download}");
            assert!(
                found[0]
                    .detail
                    .as_deref()
                    .unwrap()
                    .contains("`site-html` of job `build`")
            );
        } else {
            assert!(rules.is_empty(), "{download}: {found:#?}");
        }
    }
    // The producer builds the default branch: its artifact is not the branch's code.
    let found = assess_with_tree(
        &workflow("", "${{ github.event.repository.default_branch }}"),
        &[],
    );
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn fetching_commands_directly_through_env_and_in_scripts() {
    for (step, tree, want) in [
        (
            "      - run: git fetch origin \"$HEAD\" && git checkout FETCH_HEAD && make\n        env:\n          HEAD: ${{ github.head_ref }}\n",
            vec![],
            "github.head_ref",
        ),
        (
            "      - run: git checkout ${{ github.event.pull_request.head.sha }}\n",
            vec![],
            "github.event.pull_request.head",
        ),
        (
            "      - run: gh api repos/octo/repo/zipball/${{ github.event.pull_request.head.sha }} > src.zip\n",
            vec![],
            "zipball",
        ),
        (
            "      - run: bash ci/fetch.sh\n        env:\n          SHA: ${{ github.event.pull_request.head.sha }}\n",
            vec![(
                "ci/fetch.sh",
                "git fetch origin \"$SHA\"\ngit checkout \"$SHA\"\n",
            )],
            "`ci/fetch.sh`, run by a `run` step",
        ),
        (
            "      - run: python3 -u tools/get.py\n",
            vec![(
                "tools/get.py",
                "import os\nos.system('gh run download ' + os.environ['RUN'])\n",
            )],
            "gh run download",
        ),
        ("      - run: ./$SCRIPT\n", vec![], "chosen at run time"),
    ] {
        let found = assess_with_tree(&privileged_with(step), &tree);
        assert_eq!(found.len(), 1, "{step}: {found:#?}");
        assert_eq!(found[0].rule, PRIV, "{step}");
        let detail = found[0].detail.as_deref().unwrap();
        assert!(detail.contains(want), "{step}: {detail}");
    }
    // Scripts and commands that fetch nothing of the branch: no finding.
    for (step, tree) in [
        ("      - run: bash -c 'echo hi'\n", vec![]),
        ("      - run: python -m pytest\n", vec![]),
        (
            "      - run: ./ci/lint.sh\n",
            vec![("ci/lint.sh", "shellcheck *.sh\n")],
        ),
        (
            "      - run: git fetch origin main && git diff FETCH_HEAD\n",
            vec![],
        ),
    ] {
        let found = assess_with_tree(&privileged_with(step), &tree);
        assert!(found.is_empty(), "{step}: {found:#?}");
    }
}

#[test]
fn dispatch_receivers_are_judged_with_their_senders() {
    let sender = |payload: &str| {
        WorkflowFile {
        path: ".github/workflows/send.yml".into(),
        bytes: format!(
            "on: schedule\njobs:\n  send:\n    runs-on: ubuntu-latest\n    steps:\n      - run: gh workflow run receive.yml -f ref={payload}\n"
        )
        .into_bytes(),
    }
    };
    let receiver = WorkflowFile {
        path: ".github/workflows/receive.yml".into(),
        bytes: b"on:\n  workflow_dispatch:\n    inputs:\n      ref: {type: string}\njobs:\n  run:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n        with:\n          ref: ${{ inputs.ref }}\n      - run: make\n        env:\n          KEY: ${{ secrets.KEY }}\n".to_vec(),
    };
    let judge = |files: &[WorkflowFile]| {
        let review = guard::readiness::review_in(
            files,
            &|_: &str| Ok(None),
            &target(),
            &Settings::default(),
            Reads::Both,
        );
        (review.findings, review.cleared)
    };
    // A sender carrying event data.
    let (found, _) = judge(&[
        sender("${{ github.event.pull_request.head.ref }}"),
        receiver.clone(),
    ]);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].rule, PRIV);
    assert_eq!(found[0].events, [Event::WorkflowDispatch]);
    assert!(
        found[0]
            .detail
            .as_deref()
            .unwrap()
            .contains("`.github/workflows/send.yml` job `send`")
    );
    // No sender in the repository: only a holder of a token that may dispatch workflows starts
    // it (a person, or the adopter's own dispatcher): cleared, with the reason.
    let (found, cleared) = judge(std::slice::from_ref(&receiver));
    assert!(found.is_empty(), "{found:#?}");
    assert_eq!(cleared.len(), 1, "{cleared:#?}");
    assert!(
        cleared[0]
            .reason
            .contains("no workflow of this repository dispatches it"),
        "{cleared:#?}"
    );
    // Every sender fills it with a literal: cleared, with the reason.
    let (found, cleared) = judge(&[sender("main"), receiver.clone()]);
    assert!(found.is_empty(), "{found:#?}");
    assert_eq!(cleared.len(), 1, "{cleared:#?}");
    assert!(cleared[0].reason.contains("no event data"), "{cleared:#?}");
}

#[test]
fn the_registry_cites_each_actions_docs_and_reference_lists_it() {
    use guard::readiness::provenance::KNOWN_ACTIONS;
    let reference = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join("REFERENCE.md"),
    )
    .unwrap();
    assert!(!KNOWN_ACTIONS.is_empty());
    for known in KNOWN_ACTIONS {
        assert!(known.docs.starts_with("https://"), "{}", known.action);
        assert_eq!(known.action, known.action.to_ascii_lowercase());
        assert!(
            reference.contains(&format!("`{}`", known.action)) && reference.contains(known.docs),
            "REFERENCE.md lacks {} or {}",
            known.action,
            known.docs
        );
    }
}

#[test]
fn class_typed_payload_fields_and_case() {
    let got = provenance(&["prov-typed-fields.yml"], &[], &Settings::default());
    assert!(got.is_empty(), "{got:#?}");
}

#[test]
fn class_fields_absent_from_the_payload_are_null() {
    let got = provenance(&["prov-absent-fields.yml"], &[], &Settings::default());
    assert!(got.is_empty(), "{got:#?}");
}

#[test]
fn class_environment_expression_every_value_protected() {
    let settings = |protected: &[&str]| Settings {
        protected_environments: protected.iter().map(|s| (*s).to_owned()).collect(),
        ..Settings::default()
    };
    let got = provenance(
        &["prov-environment-expression.yml"],
        &[],
        &settings(&["production", "staging"]),
    );
    assert!(got.is_empty(), "{got:#?}");
    let open = provenance(
        &["prov-environment-expression.yml"],
        &[],
        &settings(&["production"]),
    );
    assert_one(&open, USJ, "prov-environment-expression.yml", "deploy", &[]);
}

#[test]
fn class_newer_hosted_labels_and_runs_on_expressions() {
    let got = provenance(&["prov-hosted-labels.yml"], &[], &Settings::default());
    assert!(got.is_empty(), "{got:#?}");
}

#[test]
fn the_subcommand_clears_jobs_that_run_no_branch_code_and_reads_their_scripts() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(repo.join(".github/workflows")).unwrap();
    std::fs::create_dir_all(repo.join("scripts")).unwrap();
    std::fs::copy(
        fixtures().join("provenance").join("prov-notifier.yml"),
        repo.join(".github/workflows/notify.yml"),
    )
    .unwrap();
    std::fs::copy(
        fixtures().join("provenance").join("prov-fetch-script.yml"),
        repo.join(".github/workflows/e2e.yml"),
    )
    .unwrap();
    std::fs::write(repo.join("scripts/test-pr.sh"), "#!/bin/sh\nmake e2e\n").unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "base"]);
    let (code, doc) = guard_readiness(&repo, None);
    assert_eq!((code, doc.result), (0, ReadinessResult::Pass), "{doc:#?}");
    let cleared: Vec<(&str, &str)> = doc
        .cleared
        .iter()
        .map(|c| (c.workflow.as_str(), c.job.as_str()))
        .collect();
    assert_eq!(
        cleared,
        [
            (".github/workflows/e2e.yml", "e2e"),
            (".github/workflows/notify.yml", "label"),
            (".github/workflows/notify.yml", "notify"),
        ]
    );
    assert!(doc.cleared.iter().all(|c| !c.reason.is_empty()));
    // The script, once it fetches the pull request, makes the job a finding.
    std::fs::write(
        repo.join("scripts/test-pr.sh"),
        "#!/bin/sh\ngit fetch origin \"pull/$PR/head\" && git checkout FETCH_HEAD\n",
    )
    .unwrap();
    git(&repo, &["commit", "-q", "-a", "-m", "fetch"]);
    let (code, doc) = guard_readiness(&repo, None);
    assert_eq!(code, 1);
    assert_eq!(doc.findings.len(), 1, "{doc:#?}");
    assert_eq!(doc.findings[0].rule, Rule::PrivilegedCheckout);
    assert_eq!(doc.findings[0].job.as_deref(), Some("e2e"));
}

#[test]
fn a_missing_local_action_of_a_job_without_credentials_fails_only_that_job() {
    let workflow = WorkflowFile {
        path: ".github/workflows/pr.yml".into(),
        bytes: b"on: pull_request_target\npermissions: {}\njobs:\n  lint:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: ./.github/actions/gone\n  comment:\n    runs-on: ubuntu-latest\n    steps:\n      - run: gh pr comment --body ok\n        env:\n          GH_TOKEN: ${{ secrets.BOT_TOKEN }}\n".to_vec(),
    };
    let found = assess_with_tree(&workflow, &[]);
    assert!(found.is_empty(), "{found:#?}");
    // The same action in the job holding the secret: the file cannot be shown safe.
    let found = assess_with_tree(
        &privileged_with("      - uses: ./.github/actions/gone\n"),
        &[],
    );
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].rule, Rule::UnreadableWorkflow);
}

#[test]
fn a_repository_dispatch_sender_implicates_only_receivers_of_its_type() {
    let sender = |event_type: &str| {
        WorkflowFile {
        path: ".github/workflows/send.yml".into(),
        bytes: format!(
            "on: issue_comment\njobs:\n  send:\n    runs-on: ubuntu-latest\n    steps:\n      - run: gh api repos/octo/repo/dispatches -f event_type={event_type} -F 'client_payload[sha]=${{{{ github.event.issue.number }}}}'\n"
        )
        .into_bytes(),
    }
    };
    let receiver = load_provenance("prov-dispatch-receiver.yml");
    let judge = |files: &[WorkflowFile]| {
        guard::readiness::review_in(
            files,
            &|_: &str| Ok(None),
            &target(),
            &Settings::default(),
            Reads::Both,
        )
    };
    // The receiver takes `ok-to-test-command` only.
    let review = judge(&[sender("ok-to-test-command"), receiver.clone()]);
    assert_eq!(review.findings.len(), 1, "{review:#?}");
    assert!(
        review.findings[0]
            .detail
            .as_deref()
            .unwrap()
            .contains("`.github/workflows/send.yml` job `send`")
    );
    // A sender of another type does not reach it: no sender of its type, so unverified.
    let review = judge(&[sender("deploy"), receiver.clone()]);
    assert_eq!(review.findings.len(), 1, "{review:#?}");
    assert!(
        review.findings[0]
            .detail
            .as_deref()
            .unwrap()
            .contains("unverified"),
        "{review:#?}"
    );
    // A type chosen at run time may be any: it reaches the receiver.
    let review = judge(&[sender("$TYPE"), receiver]);
    assert!(
        review.findings[0]
            .detail
            .as_deref()
            .unwrap()
            .contains("job `send`"),
        "{review:#?}"
    );
}

#[test]
fn class_a_script_that_runs_a_script_fetching_the_pull_request() {
    // The step runs `scripts/test-pr.sh`, which fetches nothing itself but runs (or sources)
    // another repository script that does.
    for call in [
        "./scripts/lib/fetch.sh\n",
        "bash scripts/lib/fetch.sh\n",
        ". scripts/lib/fetch.sh\n",
    ] {
        let outer = format!("#!/bin/sh\nset -e\n{call}make e2e\n");
        let got = provenance(
            &["prov-fetch-script.yml"],
            &[
                ("scripts/test-pr.sh", outer.as_str()),
                ("scripts/lib/fetch.sh", TEST_PR_SCRIPT),
            ],
            &Settings::default(),
        );
        assert_one(
            &got,
            PRIV,
            "prov-fetch-script.yml",
            "e2e",
            &["`scripts/test-pr.sh` -> `scripts/lib/fetch.sh`", "pull/"],
        );
    }
    // The inner script fetching nothing: the default branch's code, no finding.
    let quiet = provenance(
        &["prov-fetch-script.yml"],
        &[
            ("scripts/test-pr.sh", "#!/bin/sh\n./scripts/lib/fetch.sh\n"),
            ("scripts/lib/fetch.sh", "#!/bin/sh\necho ok\n"),
        ],
        &Settings::default(),
    );
    assert!(quiet.is_empty(), "{quiet:#?}");
    // The inner script missing: cannot be established, naming the chain.
    let missing = provenance(
        &["prov-fetch-script.yml"],
        &[("scripts/test-pr.sh", "#!/bin/sh\n./scripts/lib/fetch.sh\n")],
        &Settings::default(),
    );
    assert_one(
        &missing,
        PRIV,
        "prov-fetch-script.yml",
        "e2e",
        &[
            "`scripts/test-pr.sh`: `scripts/lib/fetch.sh`",
            "cannot be established",
        ],
    );
    // A chain deeper than the bound, each script running the next: cannot be established.
    let depth = guard::readiness::provenance::MAX_SCRIPT_DEPTH + 1;
    let names: Vec<String> = (0..=depth).map(|i| format!("scripts/s{i}.sh")).collect();
    let texts: Vec<String> = (0..=depth)
        .map(|i| match names.get(i + 1) {
            Some(next) => format!("#!/bin/sh\n./{next}\n"),
            None => "#!/bin/sh\necho end\n".to_owned(),
        })
        .collect();
    let mut files: Vec<(&str, &str)> = names
        .iter()
        .zip(&texts)
        .map(|(n, t)| (n.as_str(), t.as_str()))
        .collect();
    files.push(("scripts/test-pr.sh", "#!/bin/sh\n./scripts/s0.sh\n"));
    let deep = provenance(&["prov-fetch-script.yml"], &files, &Settings::default());
    assert_one(
        &deep,
        PRIV,
        "prov-fetch-script.yml",
        "e2e",
        &["nested deeper than", "cannot be established"],
    );
    // Mutually recursive scripts end (each file is read once): no finding.
    let cycle = provenance(
        &["prov-fetch-script.yml"],
        &[
            ("scripts/test-pr.sh", "#!/bin/sh\n./scripts/a.sh\n"),
            ("scripts/a.sh", "#!/bin/sh\n./scripts/test-pr.sh\n"),
        ],
        &Settings::default(),
    );
    assert!(cycle.is_empty(), "{cycle:#?}");
}

/// The project's own workflows, and each example caller beside the reusable workflow it calls
/// (as `gate init` writes them into an adopter's repository), are ready: the caller is started
/// only by the dispatcher's `workflow_dispatch`, and the job that runs the branch's code holds no
/// secret.
#[test]
fn the_committed_caller_and_every_example_caller_are_ready() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let read_repo = |rel: &str| std::fs::read(root.join(rel)).unwrap();
    let reusable = WorkflowFile {
        path: ".github/workflows/agent-team-apply-verify.yml".into(),
        bytes: read_repo(".github/workflows/agent-team-apply-verify.yml"),
    };
    let mut callers = vec![(
        ".github/workflows/agent-team-apply.yml".to_owned(),
        read_repo(".github/workflows/agent-team-apply.yml"),
    )];
    for entry in std::fs::read_dir(root.join("examples")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "yml") {
            callers.push((path.display().to_string(), std::fs::read(&path).unwrap()));
        }
    }
    assert!(callers.len() > 5, "{callers:?}");
    for (name, bytes) in callers {
        // An example calls the released workflow by its pin; in the adopter's repository the
        // same file is the caller beside it.
        let text = String::from_utf8(bytes).unwrap();
        let files = vec![
            WorkflowFile {
                path: ".github/workflows/agent-team-apply.yml".into(),
                bytes: text.into_bytes(),
            },
            reusable.clone(),
        ];
        let read = |path: &str| -> Result<Option<Vec<u8>>, String> {
            Ok(files
                .iter()
                .find(|f| f.path == path)
                .map(|f| f.bytes.clone()))
        };
        for settings in [
            Settings::default(),
            Settings {
                default_token: DefaultToken::Read,
                ..Settings::default()
            },
        ] {
            let found =
                guard::readiness::assess_in(&files, &read, &target(), &settings, Reads::Both);
            assert!(found.is_empty(), "{name}: {found:#?}");
        }
    }
}
