//! `gate doctor` against the stand-in for GitHub's API (`github-standin`'s settings routes,
//! shapes cited in `github::settings`): for every setting, a configured repository reads `ok`, a
//! repository without it reads `missing`, and a token GitHub refuses (`403`) reads `cannot read`;
//! a required setting that is not ok fails the doctor (exit 1), advice does not. The CLI cases
//! run the real binary.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use gate::doctor::{DoctorRequest, Report, Setting, Status, caller_pin, run};
use github::{ApiUrl, Client, ClientConfig, Repository, Token, VirtualClock};
use github_standin::settings::{BranchPolicy, ClassicProtection, RepositorySettings, put_files};
use github_standin::{Canned, Fault, Scenario, StandIn};

const APP_ID: u64 = 4711;
const SLUG: &str = "octo-agent-team";
const PIN: &str = "0123456789abcdef0123456789abcdef01234567";

fn caller(pin: &str) -> String {
    include_str!("../../examples/rust.yml").replace("0000000000000000000000000000000000000000", pin)
}

const POLICY: &str = include_str!("../../examples/policy/node.yml");

/// The reusable workflow of the pin commit a release tags: the committed file with the assets'
/// SHA-256 written in (as `.ci/pin-release.sh` writes them).
fn pinned_reusable_workflow() -> Vec<u8> {
    let committed = include_str!("../../.github/workflows/agent-team-apply-verify.yml");
    let zeros = format!("\"{}\"", "0".repeat(64));
    assert_eq!(committed.matches(&zeros).count(), 2);
    committed
        .replacen(&zeros, &format!("\"{}\"", "a1".repeat(32)), 1)
        .replacen(&zeros, &format!("\"{}\"", "b2".repeat(32)), 1)
        .into_bytes()
}

fn release_file(commit: &str, workflow: Vec<u8>) -> (String, String, String, Vec<u8>) {
    (
        "agent-team/agent-team-apply".into(),
        commit.into(),
        ".github/workflows/agent-team-apply-verify.yml".into(),
        workflow,
    )
}

fn configured() -> Scenario {
    Scenario {
        settings: RepositorySettings::configured(APP_ID, SLUG, "main"),
        other_files: vec![release_file(PIN, pinned_reusable_workflow())],
        ..Scenario::default()
    }
}

fn start(scenario: Scenario, files: &[(&str, &[u8])]) -> StandIn {
    let gh = StandIn::start(scenario).unwrap();
    {
        let mut state = gh.state();
        put_files(&mut state, "main", files);
    }
    gh
}

fn client(gh: &StandIn) -> Client {
    let token = gh.token();
    let env = |name: &str| (name == "GH_TOKEN").then(|| token.clone());
    let mut config = ClientConfig::new(
        ApiUrl::parse(&gh.url()).unwrap(),
        Token::from_env(&env).unwrap(),
        Arc::new(VirtualClock::new(1_772_366_400)),
    );
    config.deadline = Some(Duration::from_secs(600));
    Client::new(config).unwrap()
}

fn doctor_with(scenario: Scenario, files: &[(&str, &[u8])]) -> Report {
    doctor_named(
        scenario,
        files,
        gate::doctor::ENVIRONMENT,
        gate::doctor::CHECK_NAME,
    )
}

fn doctor_named(
    scenario: Scenario,
    files: &[(&str, &[u8])],
    environment: &str,
    check_name: &str,
) -> Report {
    let gh = start(scenario, files);
    let report = run(
        &client(&gh),
        &DoctorRequest {
            repository: Repository::parse("octo/repo").unwrap(),
            app: SLUG.into(),
            environment: environment.into(),
            check_name: check_name.into(),
        },
    )
    .unwrap();
    // Reads only.
    assert!(gh.requests().iter().all(|r| r.method == "GET"));
    report
}

fn default_files() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        (
            ".github/workflows/agent-team-apply.yml",
            caller(PIN).into_bytes(),
        ),
        (".github/agent-team-policy.yml", POLICY.as_bytes().to_vec()),
        ("Cargo.toml", b"[package]\nname = \"x\"\n".to_vec()),
    ]
}

fn doctor(scenario: Scenario) -> Report {
    let files = default_files();
    let refs: Vec<(&str, &[u8])> = files.iter().map(|(p, b)| (*p, b.as_slice())).collect();
    doctor_with(scenario, &refs)
}

fn status(report: &Report, setting: Setting) -> (Status, String) {
    let f = report.finding(setting).unwrap();
    (f.status, f.detail.clone())
}

/// Assert `setting` reads `want`, every other setting reads ok, and the exit code follows from
/// whether `setting` is required.
fn assert_only(report: &Report, setting: Setting, want: Status, detail_has: &str) {
    assert_only_with(report, setting, want, detail_has, &[]);
}

/// As [`assert_only`], where the settings in `also` (which read what `setting` reads) are not
/// ok either.
fn assert_only_with(
    report: &Report,
    setting: Setting,
    want: Status,
    detail_has: &str,
    also: &[Setting],
) {
    let (got, detail) = status(report, setting);
    assert_eq!(got, want, "{}: {detail}", setting.id());
    assert!(
        detail.contains(detail_has),
        "{}: {detail:?} lacks {detail_has:?}",
        setting.id()
    );
    for also in also {
        assert_ne!(status(report, *also).0, Status::Ok, "{}", also.id());
    }
    for f in &report.findings {
        if f.setting != setting && !also.contains(&f.setting) {
            assert_eq!(f.status, Status::Ok, "{}: {}", f.setting.id(), f.detail);
        }
    }
    let expected = if setting.required() && want != Status::Ok {
        1
    } else {
        0
    };
    assert_eq!(report.exit_code(), expected, "{}", setting.id());
}

fn forbidden(method_path: &str) -> Fault {
    Fault::new(
        "GET",
        method_path,
        vec![Canned::status(403, "Resource not accessible by personal access token"); 8],
    )
}

fn unreadable(prefix: &str) -> Scenario {
    Scenario {
        faults: vec![forbidden(prefix)],
        ..configured()
    }
}

#[test]
fn a_fully_configured_repository_is_ok_and_exits_0() {
    let report = doctor(configured());
    assert_eq!(report.findings.len(), Setting::ALL.len());
    for f in &report.findings {
        assert_eq!(f.status, Status::Ok, "{}: {}", f.setting.id(), f.detail);
    }
    assert_eq!(report.exit_code(), 0);
    assert_eq!(report.default_branch.as_deref(), Some("main"));
}

#[test]
fn an_unconfigured_repository_fails_every_required_setting() {
    let report = doctor_with(Scenario::default(), &[]);
    assert_eq!(report.exit_code(), 1);
    for f in &report.findings {
        // The default branch requiring no gate check is the setup (`gate init`'s ruleset).
        if [Setting::Repository, Setting::DefaultBranchCheck].contains(&f.setting) {
            assert_eq!(f.status, Status::Ok, "{}: {}", f.setting.id(), f.detail);
        } else {
            assert_ne!(f.status, Status::Ok, "{}: {}", f.setting.id(), f.detail);
        }
    }
}

#[test]
fn setting_ids_are_unique_kebab_case_and_every_one_is_reported() {
    let mut ids: Vec<&str> = Setting::ALL.iter().map(|s| s.id()).collect();
    for id in &ids {
        assert!(
            id.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'),
            "{id}"
        );
    }
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), Setting::ALL.len());
    for s in Setting::ALL {
        assert!(!s.fix().is_empty() && !s.title().is_empty() && s.source().starts_with("GET "));
        assert!(!s.reads_with().is_empty());
    }
}

#[test]
fn repository() {
    let report = doctor(configured());
    assert_eq!(status(&report, Setting::Repository).0, Status::Ok);
    // A repository the token cannot see: GitHub answers 404, the doctor cannot read anything.
    let report = doctor(Scenario {
        faults: vec![Fault::new(
            "GET",
            "/repos/octo/repo",
            vec![Canned::status(404, "Not Found"); 64],
        )],
        ..configured()
    });
    assert_eq!(status(&report, Setting::Repository).0, Status::CannotRead);
    assert_eq!(report.exit_code(), 1);
}

#[test]
fn app() {
    let mut s = configured();
    let app = s.settings.app.as_mut().unwrap();
    app.permissions.insert("workflows".into(), "write".into());
    assert_only(
        &doctor(s),
        Setting::App,
        Status::Missing,
        "workflows: write (must be none)",
    );

    let mut s = configured();
    let app = s.settings.app.as_mut().unwrap();
    app.permissions.insert("checks".into(), "read".into());
    // The installation carries the App's permissions as they were accepted: only the App is off.
    assert_only(
        &doctor(s),
        Setting::App,
        Status::Missing,
        "checks: read (needs write)",
    );

    // No App by that slug, or a private one hidden from this token: GitHub says 404 to both.
    let mut s = configured();
    s.settings.app = None;
    let report = doctor(s);
    let (st, detail) = status(&report, Setting::App);
    assert_eq!(st, Status::CannotRead, "{detail}");
    assert!(
        detail.contains("no App \"octo-agent-team\" is visible"),
        "{detail}"
    );
    assert_eq!(report.exit_code(), 1);

    // Unreadable: the App's page refused. The App's id is then unknown, so what compares with it
    // cannot read either.
    let mut s = unreadable("/apps/");
    requiring_check(&mut s, gate::doctor::CHECK_NAME, Some(APP_ID));
    let report = doctor(s);
    assert_eq!(status(&report, Setting::App).0, Status::CannotRead);
    assert_eq!(
        status(&report, Setting::DefaultBranchCheck).0,
        Status::CannotRead
    );
    assert_eq!(report.exit_code(), 1);
}

#[test]
fn app_installation() {
    let mut s = configured();
    s.settings.app.as_mut().unwrap().installation_permissions = None;
    assert_only(
        &doctor(s),
        Setting::AppInstallation,
        Status::Missing,
        "not installed",
    );

    let mut s = configured();
    s.settings.app.as_mut().unwrap().repository_selection = "all".into();
    assert_only(
        &doctor(s),
        Setting::AppInstallation,
        Status::Missing,
        "repository_selection: all",
    );

    assert_only(
        &doctor(unreadable("/orgs/octo/installations")),
        Setting::AppInstallation,
        Status::CannotRead,
        "organisation owner",
    );
    // A user's installations are the App's to see.
    let mut s = configured();
    s.settings.owner_type = "User".into();
    assert_only(
        &doctor(s),
        Setting::AppInstallation,
        Status::CannotRead,
        "user account",
    );
}

#[test]
fn environment() {
    let mut s = configured();
    s.settings.environments.clear();
    let report = doctor(s);
    for setting in [
        Setting::Environment,
        Setting::EnvironmentBranches,
        Setting::EnvironmentSecrets,
        Setting::EnvironmentVariables,
    ] {
        assert_eq!(status(&report, setting).0, Status::Missing);
    }
    assert_eq!(report.exit_code(), 1);

    let report = doctor(unreadable(
        "/repos/octo/repo/environments/agent-team-publish",
    ));
    assert_eq!(status(&report, Setting::Environment).0, Status::CannotRead);
    assert_eq!(report.exit_code(), 1);
}

/// The caller's own environment and check run names are the ones read: the configured
/// repository's `agent-team-publish` and `agent-team-apply / gate` do not stand in for them.
#[test]
fn the_callers_environment_and_check_names_are_read() {
    let files = default_files();
    let refs: Vec<(&str, &[u8])> = files.iter().map(|(p, b)| (*p, b.as_slice())).collect();
    let report = doctor_named(
        configured(),
        &refs,
        "prod-publish",
        gate::doctor::CHECK_NAME,
    );
    let (got, detail) = status(&report, Setting::Environment);
    assert_eq!(got, Status::Missing);
    assert!(detail.contains("no environment prod-publish"), "{detail}");

    let mut s = configured();
    s.settings.environments[0].name = "prod-publish".into();
    assert_eq!(
        doctor_named(s, &refs, "prod-publish", gate::doctor::CHECK_NAME).exit_code(),
        0
    );

    // A check of the caller's name required from any source is found by that name.
    let mut s = configured();
    requiring_check(&mut s, "ci / gate", None);
    let report = doctor_named(s, &refs, gate::doctor::ENVIRONMENT, "ci / gate");
    assert_only(
        &report,
        Setting::DefaultBranchCheck,
        Status::Missing,
        "requires \"ci / gate\" from any source, not from the App",
    );
    let mut s = configured();
    requiring_check(&mut s, "ci / gate", None);
    assert_eq!(
        doctor_named(
            s,
            &refs,
            gate::doctor::ENVIRONMENT,
            gate::doctor::CHECK_NAME
        )
        .exit_code(),
        0
    );
}

#[test]
fn environment_branches() {
    for (policy, detail) in [
        (BranchPolicy::Any, "any branch may deploy"),
        (BranchPolicy::Protected, "every protected branch"),
        (
            BranchPolicy::Custom(vec!["main".into(), "agent-team/*".into()]),
            "agent-team/*",
        ),
        (BranchPolicy::Custom(vec![]), "wanted only"),
    ] {
        let mut s = configured();
        s.settings.environments[0].branch_policy = policy;
        assert_only(
            &doctor(s),
            Setting::EnvironmentBranches,
            Status::Missing,
            detail,
        );
    }
    assert_only(
        &doctor(unreadable(
            "/repos/octo/repo/environments/agent-team-publish/deployment-branch-policies",
        )),
        Setting::EnvironmentBranches,
        Status::CannotRead,
        "Resource not accessible",
    );
}

#[test]
fn environment_reviewers() {
    let mut s = configured();
    s.settings.environments[0].reviewers.clear();
    assert_only(
        &doctor(s),
        Setting::EnvironmentReviewers,
        Status::Missing,
        "no required reviewers",
    );
    let report = doctor(configured());
    assert!(
        status(&report, Setting::EnvironmentReviewers)
            .1
            .contains("Team maintainers")
    );
}

#[test]
fn environment_secrets() {
    let mut s = configured();
    s.settings.environments[0]
        .secrets
        .retain(|n| n != "AGENT_TEAM_DISPATCH_KEY");
    assert_only(
        &doctor(s),
        Setting::EnvironmentSecrets,
        Status::Missing,
        "no secret AGENT_TEAM_DISPATCH_KEY",
    );
    assert_only(
        &doctor(unreadable(
            "/repos/octo/repo/environments/agent-team-publish/secrets",
        )),
        Setting::EnvironmentSecrets,
        Status::CannotRead,
        "HTTP 403",
    );
}

#[test]
fn environment_variables() {
    let mut s = configured();
    s.settings.environments[0].variables.clear();
    assert_only(
        &doctor(s),
        Setting::EnvironmentVariables,
        Status::Missing,
        "no variable AGENT_TEAM_APP_CLIENT_ID, AGENT_TEAM_APP_ID",
    );
    // Without the App's id, publish's step "Require the publication's secrets and variables"
    // fails: the doctor must not say ok.
    let mut s = configured();
    s.settings.environments[0]
        .variables
        .retain(|v| v != "AGENT_TEAM_APP_ID");
    let report = doctor(s);
    assert_only(
        &report,
        Setting::EnvironmentVariables,
        Status::Missing,
        "no variable AGENT_TEAM_APP_ID",
    );
    assert_eq!(report.exit_code(), 1);
    assert_only(
        &doctor(unreadable(
            "/repos/octo/repo/environments/agent-team-publish/variables",
        )),
        Setting::EnvironmentVariables,
        Status::CannotRead,
        "HTTP 403",
    );
}

/// The default branch's ruleset (id 1) also requires the check `context` from `source` (`None`:
/// any source), as a repository that chose to require it would.
fn requiring_check(s: &mut Scenario, context: &str, source: Option<u64>) {
    let mut check = serde_json::json!({ "context": context });
    if let Some(id) = source {
        check["integration_id"] = id.into();
    }
    let r = s.settings.rulesets.iter_mut().find(|r| r.id == 1).unwrap();
    r.rules.push(
        serde_json::json!({ "type": "required_status_checks", "parameters": {
        "strict_required_status_checks_policy": false,
        "required_status_checks": [check],
    } }),
    );
}

fn without_rule(s: &mut Scenario, ruleset: u64, kind: &str) {
    let r = s
        .settings
        .rulesets
        .iter_mut()
        .find(|r| r.id == ruleset)
        .unwrap();
    r.rules.retain(|rule| rule["type"] != kind);
}

#[test]
fn default_branch_review() {
    let mut s = configured();
    without_rule(&mut s, 1, "pull_request");
    // No ruleset and no classic protection: GitHub says the branch is not protected.
    assert_only(
        &doctor(s),
        Setting::DefaultBranchReview,
        Status::Missing,
        "no ruleset or branch protection",
    );

    // Classic protection instead of a ruleset: read with administration access.
    let mut s = configured();
    without_rule(&mut s, 1, "pull_request");
    s.settings.classic_protection.insert(
        "main".into(),
        ClassicProtection {
            required_approving_review_count: Some(2),
            checks: Vec::new(),
        },
    );
    assert_only(
        &doctor(s),
        Setting::DefaultBranchReview,
        Status::Ok,
        "branch protection requires 2",
    );

    // ... and without it: a read-only token cannot see the classic protection's reviews.
    let mut s = configured();
    without_rule(&mut s, 1, "pull_request");
    s.faults = vec![forbidden("/repos/octo/repo/branches/main/protection")];
    assert_only(
        &doctor(s),
        Setting::DefaultBranchReview,
        Status::CannotRead,
        "no ruleset requires a review",
    );

    // The rules themselves unreadable.
    let report = doctor(unreadable("/repos/octo/repo/rules/branches/main"));
    assert_eq!(
        status(&report, Setting::DefaultBranchReview).0,
        Status::CannotRead
    );
    assert_eq!(report.exit_code(), 1);
}

/// The gate's check is not required on the default branch as `gate init` sets it up: a required
/// check applies to every pull request into the branch, people's and Dependabot's too, and only
/// the App's publications get it. Required from the App it is a choice (stated); required from
/// anyone else it could be satisfied by anyone who can post a check run.
#[test]
fn default_branch_check() {
    let report = doctor(configured());
    assert_only(
        &report,
        Setting::DefaultBranchCheck,
        Status::Ok,
        "people's and Dependabot's pull requests merge with a review",
    );
    assert_eq!(report.exit_code(), 0);

    let mut s = configured();
    requiring_check(&mut s, gate::doctor::CHECK_NAME, Some(APP_ID));
    assert_only(
        &doctor(s),
        Setting::DefaultBranchCheck,
        Status::Ok,
        "every pull request the App did not publish (people's, Dependabot's) is blocked",
    );

    // The right name from any source: anyone with checks: write could satisfy it.
    let mut s = configured();
    requiring_check(&mut s, gate::doctor::CHECK_NAME, None);
    assert_only(
        &doctor(s),
        Setting::DefaultBranchCheck,
        Status::Missing,
        "from any source, not from the App",
    );
    // From another App.
    let mut s = configured();
    requiring_check(&mut s, gate::doctor::CHECK_NAME, Some(15368));
    assert_only(
        &doctor(s),
        Setting::DefaultBranchCheck,
        Status::Missing,
        "from app 15368, not from the App",
    );

    // Classic protection's check with the App as source is read too.
    let mut s = configured();
    s.settings.classic_protection.insert(
        "main".into(),
        ClassicProtection {
            required_approving_review_count: None,
            checks: vec![("agent-team-apply / gate".into(), Some(APP_ID))],
        },
    );
    assert_only(
        &doctor(s),
        Setting::DefaultBranchCheck,
        Status::Ok,
        "from the App",
    );

    let report = doctor(unreadable("/repos/octo/repo/rules/branches/main"));
    assert_eq!(
        status(&report, Setting::DefaultBranchCheck).0,
        Status::CannotRead
    );
}

#[test]
fn agent_team_branches() {
    let mut s = configured();
    without_rule(&mut s, 2, "update");
    assert_only(
        &doctor(s),
        Setting::AgentTeamBranches,
        Status::Missing,
        "restricts update on agent-team/**",
    );

    // Someone besides the App may bypass.
    let mut s = configured();
    s.settings.rulesets[1]
        .bypass_actors
        .push(serde_json::json!({
            "actor_id": 5, "actor_type": "RepositoryRole", "bypass_mode": "always"
        }));
    assert_only(
        &doctor(s),
        Setting::AgentTeamBranches,
        Status::Missing,
        "Integration 4711 + RepositoryRole 5",
    );

    // Nobody may bypass: the App cannot publish either.
    let mut s = configured();
    s.settings.rulesets[1].bypass_actors.clear();
    assert_only(
        &doctor(s),
        Setting::AgentTeamBranches,
        Status::Missing,
        "bypassed by nobody",
    );

    // A read-only token does not see the bypass list.
    let mut s = configured();
    s.settings.rulesets[1].bypass_visible = false;
    assert_only(
        &doctor(s),
        Setting::AgentTeamBranches,
        Status::CannotRead,
        "bypass list is shown only",
    );
    assert_only(
        &doctor(unreadable("/repos/octo/repo/rules/branches/agent-team/")),
        Setting::AgentTeamBranches,
        Status::CannotRead,
        "HTTP 403",
    );
}

#[test]
fn agent_team_diffs_branches() {
    let mut s = configured();
    s.settings.rulesets.retain(|r| r.id != 3);
    assert_only(
        &doctor(s),
        Setting::AgentTeamDiffsBranches,
        Status::Missing,
        "agent-team-diffs/**",
    );
    let mut s = configured();
    s.settings.rulesets[2].bypass_visible = false;
    assert_only(
        &doctor(s),
        Setting::AgentTeamDiffsBranches,
        Status::CannotRead,
        "ruleset 3",
    );
}

#[test]
fn workflow_token() {
    let mut s = configured();
    s.settings.default_workflow_permissions = "write".into();
    assert_only(
        &doctor(s),
        Setting::WorkflowToken,
        Status::Missing,
        "default_workflow_permissions: write",
    );
    let mut s = configured();
    s.settings.can_approve_pull_request_reviews = true;
    assert_only(
        &doctor(s),
        Setting::WorkflowToken,
        Status::Missing,
        "can_approve_pull_request_reviews: true",
    );
    assert_only(
        &doctor(unreadable("/repos/octo/repo/actions/permissions/workflow")),
        Setting::WorkflowToken,
        Status::CannotRead,
        "administration: read",
    );
}

#[test]
fn allowed_actions() {
    let mut s = configured();
    s.settings.allowed_actions = "all".into();
    assert_only(
        &doctor(s),
        Setting::AllowedActions,
        Status::Missing,
        "allowed_actions: all",
    );
    // The fault's prefix also covers .../permissions/workflow; only this setting is asserted.
    let report = doctor(Scenario {
        faults: vec![
            Fault::new(
                "GET",
                "/repos/octo/repo/actions/permissions",
                vec![Canned::status(403, "Must have admin rights to Repository."); 1],
            )
            .passing_first(1),
        ],
        ..configured()
    });
    assert_eq!(
        status(&report, Setting::AllowedActions).0,
        Status::CannotRead
    );
    assert_eq!(report.exit_code(), 1);
}

/// The allow list is compared with what the reusable workflow pins and the caller's pin:
/// `local_only` and lists that leave one of them out (or allow it only at a tag, not the
/// pinned commit) are missing; a list allowing more is named, and fine.
#[test]
fn allowed_actions_compares_the_allow_list() {
    let mut s = configured();
    s.settings.allowed_actions = "local_only".into();
    assert_only(
        &doctor(s),
        Setting::AllowedActions,
        Status::Missing,
        "allowed_actions: local_only",
    );

    let mut s = configured();
    s.settings.selected_actions.patterns_allowed = vec!["agent-team/agent-team-apply@*".into()];
    assert_only(
        &doctor(s),
        Setting::AllowedActions,
        Status::Missing,
        "not allowed: step-security/harden-runner@",
    );

    let mut s = configured();
    s.settings.selected_actions.patterns_allowed = vec![
        "step-security/harden-runner@v2".into(),
        "agent-team/agent-team-apply@*".into(),
    ];
    assert_only(
        &doctor(s),
        Setting::AllowedActions,
        Status::Missing,
        "not allowed: step-security/harden-runner@",
    );

    // The reusable workflow's repository (the caller's pin) must be allowed too.
    let mut s = configured();
    s.settings.selected_actions.patterns_allowed = vec!["step-security/*".into()];
    assert_only(
        &doctor(s),
        Setting::AllowedActions,
        Status::Missing,
        &format!(
            "not allowed: agent-team/agent-team-apply/.github/workflows/agent-team-apply-verify.yml@{PIN}"
        ),
    );

    // GitHub's own actions by pattern instead of github_owned_allowed; more than needed is named.
    let mut s = configured();
    s.settings.selected_actions.github_owned_allowed = false;
    s.settings.selected_actions.verified_allowed = true;
    s.settings.selected_actions.patterns_allowed = vec![
        "actions/*".into(),
        "STEP-SECURITY/harden-runner@*".into(),
        "agent-team/agent-team-apply@*".into(),
        "pypa/gh-action-pypi-publish@*".into(),
    ];
    assert_only(
        &doctor(s),
        Setting::AllowedActions,
        Status::Ok,
        "also allows: every verified creator's actions, pypa/gh-action-pypi-publish@*",
    );

    // Without GitHub's own actions, the checkout cannot run.
    let mut s = configured();
    s.settings.selected_actions.github_owned_allowed = false;
    assert_only(
        &doctor(s),
        Setting::AllowedActions,
        Status::Missing,
        "not allowed: actions/checkout@",
    );
}

#[test]
fn the_pinned_actions_are_read_from_the_reusable_workflow() {
    let names: Vec<String> = gate::doctor::pinned_actions()
        .into_iter()
        .map(|(name, commit)| {
            assert_eq!(commit.len(), 40, "{name}@{commit}");
            name
        })
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(
        names,
        [
            "actions/cache/restore",
            "actions/checkout",
            "actions/create-github-app-token",
            "actions/upload-artifact",
            "step-security/harden-runner",
        ]
    );
}

#[test]
fn allow_list_patterns_match_as_github_documents() {
    use gate::doctor::pattern_allows;
    let sha = "b09bb98e06d4d774595224525879c09bc6e98c40";
    for (pattern, allows) in [
        ("step-security/harden-runner@*", true),
        ("step-security/harden-runner", true),
        ("step-security/*", true),
        ("*", true),
        (&*format!("step-security/harden-runner@{sha}"), true),
        ("step-security/harden-runner@v2", false),
        ("step-security/harden-runner@b09bb98", false),
        ("step-security/harden", false),
        ("step-security/harden-runner-fork@*", false),
        ("other/*", false),
    ] {
        assert_eq!(
            pattern_allows(pattern, "step-security/harden-runner", sha),
            allows,
            "{pattern}"
        );
    }
    // A repository's pattern allows its subdirectories (a path action, a reusable workflow).
    assert!(pattern_allows(
        "actions/cache@*",
        "actions/cache/restore",
        sha
    ));
    assert!(!pattern_allows(
        "actions/cache/save@*",
        "actions/cache/restore",
        sha
    ));
}

#[test]
fn caller_pin_setting() {
    let mut files = default_files();
    files[0].1 = caller("0000000000000000000000000000000000000000").into_bytes();
    let refs: Vec<(&str, &[u8])> = files.iter().map(|(p, b)| (*p, b.as_slice())).collect();
    // Before a release is chosen (what gate init writes without --pin): its own state, with
    // what to do, on the caller's pin and the release it names; still not a pass.
    let report = doctor_with(configured(), &refs);
    assert_only_with(
        &report,
        Setting::CallerPin,
        Status::NoRelease,
        "all-zero placeholder",
        &[Setting::CallerRelease],
    );
    assert_eq!(status(&report, Setting::CallerRelease).0, Status::NoRelease);
    assert_eq!(report.exit_code(), 1);
    let pin = report
        .findings
        .iter()
        .find(|f| f.setting == Setting::CallerPin)
        .unwrap();
    assert!(pin.fix().unwrap().contains("no release is pinned yet"));
    let doc = gate::output::doctor_v1::document(&report);
    let entry = doc.settings.iter().find(|s| s.id == "caller-pin").unwrap();
    assert_eq!(entry.status, "no-release");
    assert!(entry.fix.as_deref().unwrap().contains("gate init --pin"));
    // The placeholder beside another problem is just missing.
    let mut other = default_files();
    other[0].1 = caller("0000000000000000000000000000000000000000")
        .replace(
            "    uses: agent-team",
            "    secrets: inherit\n    uses: agent-team",
        )
        .into_bytes();
    let other_refs: Vec<(&str, &[u8])> = other.iter().map(|(p, b)| (*p, b.as_slice())).collect();
    assert_eq!(
        status(&doctor_with(configured(), &other_refs), Setting::CallerPin).0,
        Status::Missing
    );
    let refs: Vec<(&str, &[u8])> = files[1..].iter().map(|(p, b)| (*p, b.as_slice())).collect();
    assert_only_with(
        &doctor_with(configured(), &refs),
        Setting::CallerPin,
        Status::Missing,
        "no .github/workflows/agent-team-apply.yml",
        &[Setting::CallerRelease],
    );
    assert_only_with(
        &doctor(unreadable("/repos/octo/repo/contents/.github/workflows/")),
        Setting::CallerPin,
        Status::CannotRead,
        "HTTP 403",
        &[Setting::CallerRelease],
    );
}

#[test]
fn caller_pin_reads_every_uses() {
    let ok = caller(PIN);
    assert_eq!(caller_pin(ok.as_bytes()).status, Status::Ok);
    for (from, to, detail) in [
        (PIN, "v0.1.0", "not pinned to a full commit SHA"),
        (PIN, &PIN[..12], "not pinned to a full commit SHA"),
        (PIN, &PIN.to_uppercase(), "not pinned to a full commit SHA"),
        ("agent-team-apply-verify.yml@", "other.yml@", "no job calls"),
        (
            "    secrets:\n",
            "    secrets: inherit\n    x-secrets:\n",
            "secrets: inherit",
        ),
    ] {
        let text = ok.replace(from, to);
        let f = caller_pin(text.as_bytes());
        assert_eq!(f.status, Status::Missing, "{to}");
        assert!(f.detail.contains(detail), "{}", f.detail);
    }
    let f = caller_pin(b"jobs: [");
    assert_eq!(f.status, Status::Missing);
    assert!(f.detail.contains("not YAML"), "{}", f.detail);
}

#[test]
fn policy() {
    let files = default_files();
    let without: Vec<(&str, &[u8])> = files
        .iter()
        .filter(|(p, _)| *p != ".github/agent-team-policy.yml")
        .map(|(p, b)| (*p, b.as_slice()))
        .collect();
    assert_only(
        &doctor_with(configured(), &without),
        Setting::Policy,
        Status::Missing,
        "the embedded default applies",
    );
    let mut bad = default_files();
    bad[1].1 = b"version: 1\nunknown_key: true\n".to_vec();
    let refs: Vec<(&str, &[u8])> = bad.iter().map(|(p, b)| (*p, b.as_slice())).collect();
    assert_only(
        &doctor_with(configured(), &refs),
        Setting::Policy,
        Status::Missing,
        "not a valid policy",
    );
    assert_only(
        &doctor(unreadable(
            "/repos/octo/repo/contents/.github/agent-team-policy.yml",
        )),
        Setting::Policy,
        Status::CannotRead,
        "HTTP 403",
    );
}

fn cli(gh: &StandIn, extra: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_gate"))
        .env_clear()
        .env("GH_TOKEN", gh.token())
        .args(["doctor", "--repository=octo/repo", &format!("--app={SLUG}")])
        .arg(format!("--api-url={}", gh.url()))
        .args(extra)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn start_default(scenario: Scenario) -> StandIn {
    let files = default_files();
    let refs: Vec<(&str, &[u8])> = files.iter().map(|(p, b)| (*p, b.as_slice())).collect();
    start(scenario, &refs)
}

#[test]
fn cli_configured_exits_0_with_a_versioned_document() {
    let gh = start_default(configured());
    let (code, stdout, stderr) = cli(&gh, &["--format=json"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["schema"], "agent-team-apply/doctor/v1");
    assert_eq!(doc["result"], "ok");
    assert_eq!(doc["exit_code"], 0);
    assert_eq!(
        doc["settings"].as_array().unwrap().len(),
        Setting::ALL.len()
    );
    assert!(!stdout.contains(&gh.token()));

    let (code, text, _) = cli(&gh, &[]);
    assert_eq!(code, 0);
    assert!(text.contains("ok          workflow-token"), "{text}");
    assert!(text.contains("DOCTOR: ok"), "{text}");
    assert!(!text.contains("read with:"), "{text}");
}

#[test]
fn cli_missing_exits_1_and_prints_the_fix() {
    let mut s = configured();
    s.settings.default_workflow_permissions = "write".into();
    let gh = start_default(s);
    let (code, text, _) = cli(&gh, &[]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("missing     workflow-token"), "{text}");
    assert!(
        text.contains("fix: Settings → Actions → General → Workflow permissions"),
        "{text}"
    );
    // An unreadable setting says what the token lacks.
    let refused = start_default(unreadable("/repos/octo/repo/actions/permissions/workflow"));
    let (code, text, _) = cli(&refused, &[]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("cannot read workflow-token"), "{text}");
    assert!(text.contains("read with: Administration: read"), "{text}");
    let (code, json, _) = cli(&gh, &["--format=json"]);
    assert_eq!(code, 1);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["result"], "incomplete");
    let token = doc["settings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "workflow-token")
        .unwrap();
    assert_eq!(token["status"], "missing");
    assert!(
        token["fix"]
            .as_str()
            .unwrap()
            .contains("Read repository contents")
    );
}

/// `--format json` answers with a document on every exit: an error (no token, nothing
/// listening) is `result: error` with the reason, and the network error is named as one.
#[test]
fn cli_json_errors_are_documents_too() {
    let gh = start_default(configured());
    let url = gh.url();
    let json_error = |out: std::process::Output| {
        assert_eq!(out.status.code(), Some(2));
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
        assert_eq!(doc["schema"], "agent-team-apply/doctor/v1");
        assert_eq!(doc["result"], "error");
        assert_eq!(doc["exit_code"], 2);
        assert_eq!(doc["settings"], serde_json::json!([]));
        doc["error"].as_str().unwrap().to_owned()
    };
    let no_token = Command::new(env!("CARGO_BIN_EXE_gate"))
        .env_clear()
        .args([
            "doctor",
            "--repository=octo/repo",
            "--app=x",
            "--format=json",
        ])
        .arg(format!("--api-url={url}"))
        .output()
        .unwrap();
    assert!(json_error(no_token).contains("GH_TOKEN"));
    drop(gh);
    let nothing_listening = Command::new(env!("CARGO_BIN_EXE_gate"))
        .env_clear()
        .env("GH_TOKEN", "t0ken")
        .args(["doctor", "--repository=octo/repo", "--app=x", "--timeout=5"])
        .args(["--format=json", &format!("--api-url={url}")])
        .output()
        .unwrap();
    let error = json_error(nothing_listening);
    assert!(error.contains("network error"), "{error}");
    assert!(error.contains("did not reach GitHub"), "{error}");
}

#[test]
fn cli_usage_and_io_errors_exit_2() {
    let gh = start_default(configured());
    let (code, _, stderr) = Command::new(env!("CARGO_BIN_EXE_gate"))
        .env_clear()
        .args(["doctor", "--repository=octo", "--app=x"])
        .output()
        .map(|o| {
            (
                o.status.code().unwrap(),
                String::new(),
                String::from_utf8(o.stderr).unwrap(),
            )
        })
        .unwrap();
    assert_eq!(code, 2, "{stderr}");
    // No token.
    let out = Command::new(env!("CARGO_BIN_EXE_gate"))
        .env_clear()
        .args(["doctor", "--repository=octo/repo", "--app=x"])
        .arg(format!("--api-url={}", gh.url()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("GH_TOKEN"));
    // Nothing listening: no answer at all is an error, not a finding.
    let url = gh.url();
    drop(gh);
    let out = Command::new(env!("CARGO_BIN_EXE_gate"))
        .env_clear()
        .env("GH_TOKEN", "t0ken")
        .args(["doctor", "--repository=octo/repo", "--app=x", "--timeout=5"])
        .arg(format!("--api-url={url}"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn verify_environment() {
    let mut s = configured();
    s.settings
        .environments
        .retain(|e| e.name != "agent-team-verify");
    assert_only(
        &doctor(s),
        Setting::VerifyEnvironment,
        Status::Missing,
        "no environment agent-team-verify",
    );

    let mut s = configured();
    s.settings.environments[1].branch_policy = BranchPolicy::Any;
    assert_only(
        &doctor(s),
        Setting::VerifyEnvironment,
        Status::Missing,
        "any branch may deploy",
    );

    let mut s = configured();
    s.settings.environments[1].secrets.clear();
    assert_only(
        &doctor(s),
        Setting::VerifyEnvironment,
        Status::Missing,
        "no secret AGENT_TEAM_DISPATCH_KEY",
    );

    // guard's signature step looks up the replay record by the App's id: without the variable
    // the first dispatch fails there.
    let mut s = configured();
    s.settings.environments[1].variables.clear();
    let report = doctor(s);
    assert_only(
        &report,
        Setting::VerifyEnvironment,
        Status::Missing,
        "no variable AGENT_TEAM_APP_ID",
    );
    assert_eq!(report.exit_code(), 1);

    let report = doctor(unreadable(
        "/repos/octo/repo/environments/agent-team-verify",
    ));
    assert_eq!(
        status(&report, Setting::VerifyEnvironment).0,
        Status::CannotRead
    );
    assert_eq!(report.exit_code(), 1);
}

/// The pinned commit must be a release's pin commit: its reusable workflow pins the release the
/// caller's `# vX.Y.Z` names. The commit a release was built from (zero hashes), another
/// release's assets, a commit without the file and an unreadable repository all fail.
#[test]
fn caller_release() {
    let built = String::from_utf8(
        include_bytes!("../../.github/workflows/agent-team-apply-verify.yml").to_vec(),
    )
    .unwrap();
    let other_version = String::from_utf8(pinned_reusable_workflow())
        .unwrap()
        .replace("v0.1.0", "v0.2.0");
    for (workflow, detail) in [
        (Some(built.clone()), "no release is pinned there"),
        (
            Some(other_version),
            "not release v0.1.0 of agent-team/agent-team-apply",
        ),
        (None, "has no .github/workflows/agent-team-apply-verify.yml"),
    ] {
        let mut s = configured();
        s.other_files = workflow
            .map(|w| vec![release_file(PIN, w.into_bytes())])
            .unwrap_or_default();
        assert_only(&doctor(s), Setting::CallerRelease, Status::Missing, detail);
    }

    let mut s = configured();
    s.faults
        .push(forbidden("/repos/agent-team/agent-team-apply/contents/"));
    let report = doctor(s);
    assert_eq!(
        status(&report, Setting::CallerRelease).0,
        Status::CannotRead
    );
    assert_eq!(report.exit_code(), 1);

    let report = doctor(configured());
    let (got, detail) = status(&report, Setting::CallerRelease);
    assert_eq!(got, Status::Ok, "{detail}");
    assert!(
        detail.contains(&format!(
            "agent-team/agent-team-apply@{PIN} pins release v0.1.0"
        )),
        "{detail}"
    );
}
