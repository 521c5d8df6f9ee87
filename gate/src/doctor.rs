//! `gate doctor`: the GitHub settings the gate's security depends on, read through the API with
//! a read-only token, each reported as ok, missing or unreadable with its fix.
//!
//! Every setting is a [`Setting`] with fixed metadata (id, whether it is required, what it
//! checks, where it is read from, its fix); [`Setting::ALL`] lists them in the order of the
//! adoption guide. A required setting that is missing or cannot be read fails the doctor: a
//! setting nobody can see is not known to be there.

use std::collections::{BTreeMap, BTreeSet};

use github::settings::{BranchRule, BypassActor};
use github::{Client, Error, Repository};
use serde::Serialize;

/// The environment `publish` names by default (the reusable workflow's input `environment`).
pub const ENVIRONMENT: &str = crate::names::DEFAULT_ENVIRONMENT;
/// The check run `gate publish` posts by default (input `check-run-name`; the required status
/// check).
pub const CHECK_NAME: &str = crate::names::DEFAULT_CHECK_RUN_NAME;
/// The caller workflow.
pub const CALLER_PATH: &str = ".github/workflows/agent-team-apply.yml";
/// The policy the caller reads by default.
pub const POLICY_PATH: &str = ".github/agent-team-policy.yml";
/// The environment's secrets.
pub const SECRETS: [&str; 2] = ["AGENT_TEAM_APP_PRIVATE_KEY", "AGENT_TEAM_DISPATCH_KEY"];
/// The environment the guard job names: the dispatch keys it verifies signatures with.
pub const VERIFY_ENVIRONMENT: &str = "agent-team-verify";
/// Its secrets.
pub const VERIFY_SECRETS: [&str; 1] = ["AGENT_TEAM_DISPATCH_KEY"];
/// The reusable workflow a caller pins.
pub const REUSABLE_PATH: &str = ".github/workflows/agent-team-apply-verify.yml";
/// The environment's variables.
pub const VARIABLES: [&str; 1] = ["AGENT_TEAM_APP_CLIENT_ID"];
/// The publishing App's id, a variable of both environments: `guard`'s signature step looks up
/// the replay record by it, and `publish` requires it.
pub const APP_ID_VARIABLE: &str = "AGENT_TEAM_APP_ID";
/// The variables `agent-team-publish` must hold.
const PUBLISH_VARIABLES: [&str; 2] = [VARIABLES[0], APP_ID_VARIABLE];
/// The variables `agent-team-verify` must hold.
const VERIFY_VARIABLES: [&str; 1] = [APP_ID_VARIABLE];
/// The App's permissions, exactly (`metadata: read` is every App's).
pub const APP_PERMISSIONS: [(&str, &str); 4] = [
    ("checks", "write"),
    ("contents", "write"),
    ("metadata", "read"),
    ("pull_requests", "write"),
];
/// A branch name under `agent-team/` (it need not exist: rules are given for any name).
const PROBE_BRANCH: &str = "agent-team/doctor-probe";
const PROBE_DIFFS_BRANCH: &str = "agent-team-diffs/doctor-probe";

/// One setting the doctor reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Setting {
    Repository,
    App,
    AppInstallation,
    Environment,
    EnvironmentBranches,
    EnvironmentReviewers,
    EnvironmentSecrets,
    EnvironmentVariables,
    VerifyEnvironment,
    DefaultBranchReview,
    DefaultBranchCheck,
    AgentTeamBranches,
    AgentTeamDiffsBranches,
    WorkflowToken,
    AllowedActions,
    CallerPin,
    CallerRelease,
    Policy,
}

impl Setting {
    pub const ALL: [Setting; 18] = [
        Setting::Repository,
        Setting::App,
        Setting::AppInstallation,
        Setting::Environment,
        Setting::EnvironmentBranches,
        Setting::EnvironmentReviewers,
        Setting::EnvironmentSecrets,
        Setting::EnvironmentVariables,
        Setting::VerifyEnvironment,
        Setting::DefaultBranchReview,
        Setting::DefaultBranchCheck,
        Setting::AgentTeamBranches,
        Setting::AgentTeamDiffsBranches,
        Setting::WorkflowToken,
        Setting::AllowedActions,
        Setting::CallerPin,
        Setting::CallerRelease,
        Setting::Policy,
    ];

    pub fn id(self) -> &'static str {
        match self {
            Setting::Repository => "repository",
            Setting::App => "app",
            Setting::AppInstallation => "app-installation",
            Setting::Environment => "environment",
            Setting::EnvironmentBranches => "environment-branches",
            Setting::EnvironmentReviewers => "environment-reviewers",
            Setting::EnvironmentSecrets => "environment-secrets",
            Setting::EnvironmentVariables => "environment-variables",
            Setting::VerifyEnvironment => "verify-environment",
            Setting::DefaultBranchReview => "default-branch-review",
            Setting::DefaultBranchCheck => "default-branch-check",
            Setting::AgentTeamBranches => "agent-team-branches",
            Setting::AgentTeamDiffsBranches => "agent-team-diffs-branches",
            Setting::WorkflowToken => "workflow-token",
            Setting::AllowedActions => "allowed-actions",
            Setting::CallerPin => "caller-pin",
            Setting::CallerRelease => "caller-release",
            Setting::Policy => "policy",
        }
    }

    /// Whether the doctor fails unless this setting is ok. The others are advice: the
    /// installation (GitHub shows it only to organisation administrators and the App itself),
    /// environment reviewers (optional in the guide), the `agent-team-diffs/**` branches (used
    /// only for large diffs) and the policy file (the embedded default applies without one).
    pub fn required(self) -> bool {
        !matches!(
            self,
            Setting::AppInstallation
                | Setting::EnvironmentReviewers
                | Setting::AgentTeamDiffsBranches
                | Setting::Policy
        )
    }

    /// What is checked.
    pub fn title(self) -> &'static str {
        match self {
            Setting::Repository => "the repository and its default branch",
            Setting::App => {
                "the App's permissions: contents, pull_requests, checks write; metadata read; nothing else"
            }
            Setting::AppInstallation => {
                "the App's installation on the owner and what it was granted"
            }
            Setting::Environment => "environment agent-team-publish exists",
            Setting::EnvironmentBranches => {
                "only the default branch may deploy to agent-team-publish"
            }
            Setting::EnvironmentReviewers => "agent-team-publish has required reviewers",
            Setting::EnvironmentSecrets => {
                "agent-team-publish holds AGENT_TEAM_APP_PRIVATE_KEY and AGENT_TEAM_DISPATCH_KEY"
            }
            Setting::EnvironmentVariables => {
                "agent-team-publish holds the variables AGENT_TEAM_APP_CLIENT_ID and AGENT_TEAM_APP_ID"
            }
            Setting::VerifyEnvironment => {
                "environment agent-team-verify: only the default branch may deploy, and it holds AGENT_TEAM_DISPATCH_KEY and the variable AGENT_TEAM_APP_ID"
            }
            Setting::DefaultBranchReview => {
                "the default branch requires a pull request with an approving review"
            }
            Setting::DefaultBranchCheck => {
                "the default branch requires the check `agent-team-apply / gate` from nobody but the App, or not at all (it blocks every pull request the App did not publish)"
            }
            Setting::AgentTeamBranches => {
                "only the App may create, update or delete agent-team/** branches"
            }
            Setting::AgentTeamDiffsBranches => {
                "agent-team-diffs/** branches are restricted to the dispatcher"
            }
            Setting::WorkflowToken => {
                "the default GITHUB_TOKEN is read-only and cannot approve pull requests"
            }
            Setting::AllowedActions => "only selected actions may run",
            Setting::CallerPin => "the caller pins the reusable workflow to a full commit SHA",
            Setting::CallerRelease => {
                "the pinned commit is a release's pin commit: its reusable workflow pins the assets of the release the caller names"
            }
            Setting::Policy => "the policy file .github/agent-team-policy.yml",
        }
    }

    /// Where it is read (the REST operation).
    pub fn source(self) -> &'static str {
        match self {
            Setting::Repository => "GET /repos/{owner}/{repo}",
            Setting::App => "GET /apps/{app_slug}",
            Setting::AppInstallation => "GET /orgs/{org}/installations",
            Setting::Environment | Setting::EnvironmentReviewers => {
                "GET /repos/{owner}/{repo}/environments/agent-team-publish"
            }
            Setting::EnvironmentBranches => {
                "GET /repos/{owner}/{repo}/environments/agent-team-publish/deployment-branch-policies"
            }
            Setting::EnvironmentSecrets => {
                "GET /repos/{owner}/{repo}/environments/agent-team-publish/secrets"
            }
            Setting::EnvironmentVariables => {
                "GET /repos/{owner}/{repo}/environments/agent-team-publish/variables"
            }
            Setting::VerifyEnvironment => {
                "GET /repos/{owner}/{repo}/environments/agent-team-verify[/deployment-branch-policies, /secrets]"
            }
            Setting::DefaultBranchReview | Setting::DefaultBranchCheck => {
                "GET /repos/{owner}/{repo}/rules/branches/{branch}, GET /repos/{owner}/{repo}/branches/{branch}[/protection]"
            }
            Setting::AgentTeamBranches | Setting::AgentTeamDiffsBranches => {
                "GET /repos/{owner}/{repo}/rules/branches/{branch}, GET /repos/{owner}/{repo}/rulesets/{ruleset_id}"
            }
            Setting::WorkflowToken => "GET /repos/{owner}/{repo}/actions/permissions/workflow",
            Setting::AllowedActions => {
                "GET /repos/{owner}/{repo}/actions/permissions, GET /repos/{owner}/{repo}/actions/permissions/selected-actions"
            }
            Setting::CallerPin => {
                "GET /repos/{owner}/{repo}/contents/.github/workflows/agent-team-apply.yml"
            }
            Setting::CallerRelease => {
                "GET /repos/{pinned owner}/{pinned repo}/contents/.github/workflows/agent-team-apply-verify.yml?ref={pin}"
            }
            Setting::Policy => "GET /repos/{owner}/{repo}/contents/.github/agent-team-policy.yml",
        }
    }

    /// What a fine-grained token needs to read it (GitHub's "Fine-grained access tokens" section
    /// of each operation's page): the hint for `cannot read`.
    pub fn reads_with(self) -> &'static str {
        match self {
            Setting::Repository => "Metadata: read",
            Setting::App => "any token; a private App is shown to tokens of its owner",
            Setting::AppInstallation => {
                "an organisation owner's token (organization Administration: read)"
            }
            Setting::Environment | Setting::EnvironmentBranches | Setting::EnvironmentReviewers => {
                "Actions: read"
            }
            Setting::EnvironmentSecrets => "Secrets: read",
            Setting::VerifyEnvironment => "Actions: read and Secrets: read",
            Setting::EnvironmentVariables => "Environments: read",
            Setting::DefaultBranchReview | Setting::DefaultBranchCheck => {
                "Metadata: read for rulesets; Administration: read for classic branch protection"
            }
            Setting::AgentTeamBranches | Setting::AgentTeamDiffsBranches => {
                "Metadata: read for the rules; Administration: read for a ruleset's bypass list"
            }
            Setting::WorkflowToken | Setting::AllowedActions => "Administration: read",
            Setting::CallerPin | Setting::Policy => "Contents: read",
            Setting::CallerRelease => "read access to the pinned repository (public: any token)",
        }
    }

    /// The one-line fix.
    pub fn fix(self) -> &'static str {
        match self {
            Setting::Repository => {
                "check --repository and that the token can read the repository (metadata: read)"
            }
            Setting::App => {
                "App settings → Permissions: Contents, Pull requests and Checks read & write, nothing else (no Workflows, no Administration)"
            }
            Setting::AppInstallation => {
                "install the App on this repository only (Only select repositories) and accept its requested permissions"
            }
            Setting::Environment => {
                "Settings → Environments → New environment `agent-team-publish`"
            }
            Setting::EnvironmentBranches => {
                "agent-team-publish → Deployment branches and tags → Selected branches: the default branch only"
            }
            Setting::EnvironmentReviewers => {
                "agent-team-publish → Required reviewers: add the people or teams who approve publications"
            }
            Setting::EnvironmentSecrets => {
                "agent-team-publish → Environment secrets: AGENT_TEAM_APP_PRIVATE_KEY (the App's key), AGENT_TEAM_DISPATCH_KEY (openssl rand -hex 32)"
            }
            Setting::EnvironmentVariables => {
                "agent-team-publish → Environment variables: AGENT_TEAM_APP_CLIENT_ID (the App's client ID), AGENT_TEAM_APP_ID (the App's id)"
            }
            Setting::VerifyEnvironment => {
                "Settings → Environments → `agent-team-verify`: Selected branches, the default branch only; secret AGENT_TEAM_DISPATCH_KEY (the same value as in agent-team-publish); variable AGENT_TEAM_APP_ID (the App's id)"
            }
            Setting::DefaultBranchReview => {
                "ruleset on the default branch: Require a pull request before merging, 1 approval"
            }
            Setting::DefaultBranchCheck => {
                "ruleset on the default branch: remove the required status check `agent-team-apply / gate` (people's and Dependabot's pull requests never get it; agent-team/** written by the App alone holds the agent's), or set its source to the App"
            }
            Setting::AgentTeamBranches => {
                "ruleset on refs/heads/agent-team/**: Restrict creations, updates, deletions; bypass list: the App only"
            }
            Setting::AgentTeamDiffsBranches => {
                "ruleset on refs/heads/agent-team-diffs/**: Restrict creations, updates, deletions; bypass list: the dispatcher only"
            }
            Setting::WorkflowToken => {
                "Settings → Actions → General → Workflow permissions: Read repository contents; do not allow GitHub Actions to create or approve pull requests"
            }
            Setting::AllowedActions => {
                "Settings → Actions → General → Actions permissions → Allow select actions: GitHub's own actions (or `actions/*`), `step-security/harden-runner@*` and the reusable workflow's repository (`OWNER/REPO@*`, as the caller pins it); a tag pattern (`@v2`) does not allow a pinned commit"
            }
            Setting::CallerPin => {
                "pin `uses: …/agent-team-apply-verify.yml@<full commit SHA> # vX.Y.Z` to the commit the release notes name (gate init writes the caller)"
            }
            Setting::CallerRelease => {
                "pin the commit the release's tag names (its notes give the `uses:` line), not the commit it was built from"
            }
            Setting::Policy => {
                "add .github/agent-team-policy.yml (gate init writes a starting one), or rely on the embedded default"
            }
        }
    }
}

/// What the doctor found for a setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    Ok,
    Missing,
    /// The token cannot read it (`403`, or a `404` where GitHub hides what it may not show).
    CannotRead,
    /// The caller pins the all-zero placeholder `gate init` writes before a release is chosen:
    /// nothing is wrong yet, and no job can run until a release is pinned.
    NoRelease,
}

/// What to do while the caller pins no release.
pub const NO_RELEASE_FIX: &str = "no release is pinned yet (the all-zero placeholder gate init writes): choose a release of the reusable workflow's repository, and run `gate init --pin <the commit its tag names> --tag vX.Y.Z` (it changes only the pin line) or replace the zeros in the caller; every job fails at its install step until then";

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Missing => "missing",
            Status::CannotRead => "cannot read",
            Status::NoRelease => "no release",
        }
    }
}

impl Finding {
    /// What to do about it; `None` when it is ok.
    pub fn fix(&self) -> Option<&'static str> {
        match self.status {
            Status::Ok => None,
            Status::NoRelease => Some(NO_RELEASE_FIX),
            Status::Missing | Status::CannotRead => Some(self.setting.fix()),
        }
    }
}

/// One setting's result; `detail` quotes GitHub's values exactly (a display escapes them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub setting: Setting,
    pub status: Status,
    pub detail: String,
}

/// A read that did not reach an answer: the doctor stops (exit 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct DoctorError(pub String);

#[derive(Debug, Clone)]
pub struct DoctorRequest {
    pub repository: Repository,
    /// The App's slug (`github.com/apps/<slug>`).
    pub app: String,
    /// The publication's environment and the check run's name, as the caller's inputs
    /// `environment` and `check-run-name` set them ([`ENVIRONMENT`], [`CHECK_NAME`] by default;
    /// checked by [`crate::names`]). Titles and fixes name the defaults.
    pub environment: String,
    pub check_name: String,
}

/// Every finding, in [`Setting::ALL`]'s order.
#[derive(Debug, Clone)]
pub struct Report {
    pub repository: String,
    pub app: String,
    pub default_branch: Option<String>,
    pub findings: Vec<Finding>,
}

impl Report {
    /// 0 when every required setting is ok, else 1.
    pub fn exit_code(&self) -> u8 {
        if self
            .findings
            .iter()
            .all(|f| !f.setting.required() || f.status == Status::Ok)
        {
            0
        } else {
            1
        }
    }

    pub fn finding(&self, setting: Setting) -> Option<&Finding> {
        self.findings.iter().find(|f| f.setting == setting)
    }
}

/// How one read ended.
enum Read<T> {
    Found(T),
    /// `404` (with GitHub's message).
    NotFound(String),
    /// `401`, `403` or another status, or an answer of another shape.
    Unreadable(String),
}

fn read<T>(result: Result<T, Error>) -> Result<Read<T>, DoctorError> {
    match result {
        Ok(value) => Ok(Read::Found(value)),
        Err(Error::Status {
            status: 404,
            message,
            ..
        }) => Ok(Read::NotFound(
            message.unwrap_or_else(|| "Not Found".into()),
        )),
        Err(e @ (Error::Status { .. } | Error::Decode { .. } | Error::BodyTooLarge { .. })) => {
            Ok(Read::Unreadable(e.to_string()))
        }
        Err(e) => Err(DoctorError(e.to_string())),
    }
}

fn found(setting: Setting, status: Status, detail: impl Into<String>) -> Finding {
    Finding {
        setting,
        status,
        detail: detail.into(),
    }
}

/// Read every setting. Only a failure to get an answer at all (the connection, the deadline, a
/// rate limit longer than allowed) is an error; a status or an unexpected shape is a finding.
pub fn run(client: &Client, request: &DoctorRequest) -> Result<Report, DoctorError> {
    let repo = &request.repository;
    let mut findings = Vec::new();

    let info = match read(client.get_repository(repo))? {
        Read::Found(info) => {
            findings.push(found(
                Setting::Repository,
                Status::Ok,
                format!("{}, default branch {}", info.full_name, info.default_branch),
            ));
            Some(info)
        }
        Read::NotFound(m) | Read::Unreadable(m) => {
            findings.push(found(Setting::Repository, Status::CannotRead, m));
            None
        }
    };
    let default_branch = info.as_ref().map(|i| i.default_branch.clone());

    let app = check_app(client, request, &mut findings)?;
    findings.push(check_installation(client, info.as_ref(), app.as_ref())?);
    findings.extend(check_environment(
        client,
        repo,
        &request.environment,
        default_branch.as_deref(),
    )?);
    findings.push(check_verify_environment(
        client,
        repo,
        default_branch.as_deref(),
    )?);
    findings.extend(check_default_branch(
        client,
        repo,
        &request.check_name,
        default_branch.as_deref(),
        app.as_ref().map(|a| a.id),
    )?);
    findings.push(check_restricted_branches(
        client,
        repo,
        Setting::AgentTeamBranches,
        PROBE_BRANCH,
        app.as_ref().map(|a| a.id),
    )?);
    findings.push(check_restricted_branches(
        client,
        repo,
        Setting::AgentTeamDiffsBranches,
        PROBE_DIFFS_BRANCH,
        app.as_ref().map(|a| a.id),
    )?);
    findings.push(check_workflow_token(client, repo)?);
    let (files, reusable) = check_files(client, repo, default_branch.as_deref())?;
    findings.push(check_allowed_actions(client, repo, reusable.as_ref())?);
    findings.extend(files);

    findings.sort_by_key(|f| f.setting);
    Ok(Report {
        repository: repo.full_name(),
        app: request.app.clone(),
        default_branch,
        findings,
    })
}

fn wanted_permissions() -> BTreeMap<String, String> {
    APP_PERMISSIONS
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// The differences between granted permissions and [`APP_PERMISSIONS`], one phrase each.
fn permission_differences(granted: &BTreeMap<String, String>) -> Vec<String> {
    let wanted = wanted_permissions();
    let mut out = Vec::new();
    for (name, level) in &wanted {
        match granted.get(name) {
            Some(have) if have == level => {}
            Some(have) => out.push(format!("{name}: {have} (needs {level})")),
            None => out.push(format!("{name}: none (needs {level})")),
        }
    }
    for (name, level) in granted {
        if !wanted.contains_key(name) {
            out.push(format!("{name}: {level} (must be none)"));
        }
    }
    out
}

fn check_app(
    client: &Client,
    request: &DoctorRequest,
    findings: &mut Vec<Finding>,
) -> Result<Option<github::settings::App>, DoctorError> {
    Ok(match read(client.get_app(&request.app))? {
        Read::Found(app) => {
            let differences = permission_differences(&app.permissions);
            findings.push(if differences.is_empty() {
                found(
                    Setting::App,
                    Status::Ok,
                    format!(
                        "App {} (id {}): checks, contents, pull_requests write; metadata read",
                        request.app, app.id
                    ),
                )
            } else {
                found(
                    Setting::App,
                    Status::Missing,
                    format!(
                        "App {} (id {}): {}",
                        request.app,
                        app.id,
                        differences.join(", ")
                    ),
                )
            });
            Some(app)
        }
        // GitHub answers 404 for a private App the token may not see, as for none at all.
        Read::NotFound(_) => {
            findings.push(found(
                Setting::App,
                Status::CannotRead,
                format!(
                    "no App {:?} is visible to this token (a private App is visible to its owner)",
                    request.app
                ),
            ));
            None
        }
        Read::Unreadable(m) => {
            findings.push(found(Setting::App, Status::CannotRead, m));
            None
        }
    })
}

fn check_installation(
    client: &Client,
    info: Option<&github::settings::RepositoryInfo>,
    app: Option<&github::settings::App>,
) -> Result<Finding, DoctorError> {
    let setting = Setting::AppInstallation;
    let (Some(info), Some(app)) = (info, app) else {
        return Ok(found(
            setting,
            Status::CannotRead,
            "the repository or the App could not be read",
        ));
    };
    if info.owner.kind != "Organization" {
        return Ok(found(
            setting,
            Status::CannotRead,
            "an installation on a user account is shown only to the App itself",
        ));
    }
    Ok(
        match read(client.list_org_installations(&info.owner.login))? {
            Read::Found(list) => match list.installations.iter().find(|i| i.app_id == app.id) {
                None => found(
                    setting,
                    Status::Missing,
                    format!("the App is not installed on {}", info.owner.login),
                ),
                Some(installation) => {
                    let mut problems = permission_differences(&installation.permissions);
                    if installation.repository_selection != "selected" {
                        problems.push(format!(
                            "repository_selection: {} (install on selected repositories only)",
                            installation.repository_selection
                        ));
                    }
                    if let Some(at) = &installation.suspended_at {
                        problems.push(format!("suspended at {at}"));
                    }
                    if problems.is_empty() {
                        found(
                            setting,
                            Status::Ok,
                            format!(
                                "installation {} on selected repositories, the App's permissions",
                                installation.id
                            ),
                        )
                    } else {
                        found(
                            setting,
                            Status::Missing,
                            format!("installation {}: {}", installation.id, problems.join(", ")),
                        )
                    }
                }
            },
            Read::NotFound(m) | Read::Unreadable(m) => found(
                setting,
                Status::CannotRead,
                format!("{m} (listing installations needs an organisation owner's token)"),
            ),
        },
    )
}

fn check_environment(
    client: &Client,
    repo: &Repository,
    environment_name: &str,
    default_branch: Option<&str>,
) -> Result<Vec<Finding>, DoctorError> {
    let all = [
        Setting::Environment,
        Setting::EnvironmentBranches,
        Setting::EnvironmentReviewers,
        Setting::EnvironmentSecrets,
        Setting::EnvironmentVariables,
    ];
    let environment = match read(client.get_environment(repo, environment_name))? {
        Read::Found(environment) => environment,
        Read::NotFound(_) => {
            return Ok(all
                .iter()
                .map(|s| {
                    found(
                        *s,
                        Status::Missing,
                        format!("no environment {environment_name} (GitHub would create it unprotected on first use)"),
                    )
                })
                .collect());
        }
        Read::Unreadable(m) => {
            return Ok(all
                .iter()
                .map(|s| found(*s, Status::CannotRead, m.clone()))
                .collect());
        }
    };
    let mut out = vec![found(
        Setting::Environment,
        Status::Ok,
        format!("environment {}", environment.name),
    )];

    // Deployment branches: custom policies naming exactly the default branch.
    let (status, detail) = deployment_branches(
        client,
        repo,
        environment_name,
        environment.deployment_branch_policy.as_ref(),
        default_branch,
    )?;
    out.push(found(Setting::EnvironmentBranches, status, detail));

    let reviewers: Vec<String> = environment
        .protection_rules
        .iter()
        .filter(|r| r.kind == "required_reviewers")
        .flat_map(|r| r.reviewers.iter())
        .map(|r| {
            let name = r
                .reviewer
                .as_ref()
                .and_then(|i| i.login.clone().or_else(|| i.slug.clone()))
                .unwrap_or_default();
            format!("{} {name}", r.kind)
        })
        .collect();
    out.push(if reviewers.is_empty() {
        found(
            Setting::EnvironmentReviewers,
            Status::Missing,
            "no required reviewers: a passing run publishes without a person's approval",
        )
    } else {
        found(
            Setting::EnvironmentReviewers,
            Status::Ok,
            format!("required reviewers: {}", reviewers.join(", ")),
        )
    });

    out.push(names_finding(
        Setting::EnvironmentSecrets,
        "secret",
        &SECRETS,
        read(client.list_environment_secrets(repo, environment_name))?
            .map(|l| l.secrets.into_iter().map(|n| n.name).collect()),
    ));
    out.push(names_finding(
        Setting::EnvironmentVariables,
        "variable",
        &PUBLISH_VARIABLES,
        read(client.list_environment_variables(repo, environment_name))?
            .map(|l| l.variables.into_iter().map(|n| n.name).collect()),
    ));
    Ok(out)
}

/// Whether only the default branch may deploy to `environment_name`: custom policies naming
/// exactly the default branch.
fn deployment_branches(
    client: &Client,
    repo: &Repository,
    environment_name: &str,
    policy: Option<&github::settings::DeploymentBranchPolicy>,
    default_branch: Option<&str>,
) -> Result<(Status, String), DoctorError> {
    Ok(match (policy, default_branch) {
        (None, _) => (
            Status::Missing,
            "any branch may deploy (no deployment branch policy)".to_owned(),
        ),
        (Some(p), _) if p.protected_branches => (
            Status::Missing,
            "every protected branch may deploy, not only the default branch".to_owned(),
        ),
        (Some(_), None) => (
            Status::CannotRead,
            "the default branch is unknown".to_owned(),
        ),
        (Some(_), Some(default)) => {
            match read(client.list_deployment_branch_policies(repo, environment_name))? {
                Read::Found(list) => {
                    let names: Vec<String> = list
                        .branch_policies
                        .iter()
                        .map(|p| match p.kind.as_deref() {
                            Some("tag") => format!("tag {}", p.name),
                            _ => p.name.clone(),
                        })
                        .collect();
                    if names == [default.to_owned()] {
                        (Status::Ok, format!("only {default} may deploy"))
                    } else {
                        (
                            Status::Missing,
                            format!("may deploy: {names:?}; wanted only {default:?}"),
                        )
                    }
                }
                Read::NotFound(m) | Read::Unreadable(m) => (Status::CannotRead, m),
            }
        }
    })
}

/// `agent-team-verify`, which the guard job names for the dispatch keys: it exists, only the
/// default branch may deploy to it, and it holds the dispatch key and the App's id.
fn check_verify_environment(
    client: &Client,
    repo: &Repository,
    default_branch: Option<&str>,
) -> Result<Finding, DoctorError> {
    let setting = Setting::VerifyEnvironment;
    let environment = match read(client.get_environment(repo, VERIFY_ENVIRONMENT))? {
        Read::Found(environment) => environment,
        Read::NotFound(_) => {
            return Ok(found(
                setting,
                Status::Missing,
                format!(
                    "no environment {VERIFY_ENVIRONMENT} (GitHub would create it unprotected on first use, without the dispatch key the guard job verifies with)"
                ),
            ));
        }
        Read::Unreadable(m) => return Ok(found(setting, Status::CannotRead, m)),
    };
    let branches = deployment_branches(
        client,
        repo,
        VERIFY_ENVIRONMENT,
        environment.deployment_branch_policy.as_ref(),
        default_branch,
    )?;
    let secrets = names_finding(
        setting,
        "secret",
        &VERIFY_SECRETS,
        read(client.list_environment_secrets(repo, VERIFY_ENVIRONMENT))?
            .map(|l| l.secrets.into_iter().map(|n| n.name).collect()),
    );
    let variables = names_finding(
        setting,
        "variable",
        &VERIFY_VARIABLES,
        read(client.list_environment_variables(repo, VERIFY_ENVIRONMENT))?
            .map(|l| l.variables.into_iter().map(|n| n.name).collect()),
    );
    let parts = [
        branches,
        (secrets.status, secrets.detail),
        (variables.status, variables.detail),
    ];
    let status = if parts.iter().all(|(s, _)| *s == Status::Ok) {
        Status::Ok
    } else if parts.iter().any(|(s, _)| *s == Status::Missing) {
        Status::Missing
    } else {
        Status::CannotRead
    };
    let detail: Vec<String> = parts.into_iter().map(|(_, d)| d).collect();
    Ok(found(
        setting,
        status,
        format!("{VERIFY_ENVIRONMENT}: {}", detail.join("; ")),
    ))
}

impl<T> Read<T> {
    fn map<U>(self, f: impl FnOnce(T) -> U) -> Read<U> {
        match self {
            Read::Found(v) => Read::Found(f(v)),
            Read::NotFound(m) => Read::NotFound(m),
            Read::Unreadable(m) => Read::Unreadable(m),
        }
    }
}

fn names_finding(
    setting: Setting,
    what: &str,
    wanted: &[&str],
    names: Read<BTreeSet<String>>,
) -> Finding {
    match names {
        Read::Found(names) => {
            let missing: Vec<&str> = wanted
                .iter()
                .copied()
                .filter(|w| !names.contains(*w))
                .collect();
            if missing.is_empty() {
                found(
                    setting,
                    Status::Ok,
                    format!("{what}s {}", wanted.join(", ")),
                )
            } else {
                found(
                    setting,
                    Status::Missing,
                    format!("no {what} {}", missing.join(", ")),
                )
            }
        }
        Read::NotFound(m) | Read::Unreadable(m) => found(setting, Status::CannotRead, m),
    }
}

fn rule_param<'a>(rule: &'a BranchRule, pointer: &str) -> Option<&'a serde_json::Value> {
    rule.parameters.as_ref().and_then(|p| p.pointer(pointer))
}

fn check_default_branch(
    client: &Client,
    repo: &Repository,
    check_name: &str,
    default_branch: Option<&str>,
    app_id: Option<u64>,
) -> Result<Vec<Finding>, DoctorError> {
    let Some(branch) = default_branch else {
        return Ok(vec![
            found(
                Setting::DefaultBranchReview,
                Status::CannotRead,
                "the default branch is unknown",
            ),
            found(
                Setting::DefaultBranchCheck,
                Status::CannotRead,
                "the default branch is unknown",
            ),
        ]);
    };
    let rules = match read(client.get_branch_rules(repo, branch))? {
        Read::Found(rules) => rules,
        Read::NotFound(m) | Read::Unreadable(m) => {
            return Ok(vec![
                found(Setting::DefaultBranchReview, Status::CannotRead, m.clone()),
                found(Setting::DefaultBranchCheck, Status::CannotRead, m),
            ]);
        }
    };

    // Review: a ruleset's pull_request rule, else classic protection (administration read).
    let ruleset_reviews = rules
        .iter()
        .filter(|r| r.kind == "pull_request")
        .filter_map(|r| rule_param(r, "/required_approving_review_count").and_then(|v| v.as_u64()))
        .max();
    let review = match ruleset_reviews {
        Some(n) if n >= 1 => found(
            Setting::DefaultBranchReview,
            Status::Ok,
            format!("a ruleset requires a pull request with {n} approving review(s) on {branch}"),
        ),
        _ => match read(client.get_branch_protection(repo, branch))? {
            Read::Found(p) => match p.required_pull_request_reviews {
                Some(r) if r.required_approving_review_count >= 1 => found(
                    Setting::DefaultBranchReview,
                    Status::Ok,
                    format!(
                        "branch protection requires {} approving review(s) on {branch}",
                        r.required_approving_review_count
                    ),
                ),
                _ => found(
                    Setting::DefaultBranchReview,
                    Status::Missing,
                    format!("{branch} does not require an approving review"),
                ),
            },
            Read::NotFound(m) if m == "Branch not protected" => found(
                Setting::DefaultBranchReview,
                Status::Missing,
                format!("no ruleset or branch protection requires a review on {branch}"),
            ),
            Read::NotFound(m) | Read::Unreadable(m) => found(
                Setting::DefaultBranchReview,
                Status::CannotRead,
                format!("no ruleset requires a review on {branch}; its branch protection: {m}"),
            ),
        },
    };

    // The required check, with its source.
    let mut sources: Vec<Option<u64>> = rules
        .iter()
        .filter(|r| r.kind == "required_status_checks")
        .filter_map(|r| rule_param(r, "/required_status_checks").and_then(|v| v.as_array()))
        .flatten()
        .filter(|c| c.get("context").and_then(|v| v.as_str()) == Some(check_name))
        .map(|c| c.get("integration_id").and_then(|v| v.as_u64()))
        .collect();
    if let Read::Found(b) = read(client.get_branch(repo, branch))? {
        sources.extend(
            b.protection
                .and_then(|p| p.required_status_checks)
                .map(|c| c.checks)
                .unwrap_or_default()
                .into_iter()
                .filter(|c| c.context == check_name)
                .map(|c| c.app_id),
        );
    }
    // Not requiring the check is the design (`init::ruleset_default_branch`): a required check
    // applies to every pull request into the branch, and only the App's publications get it.
    let check = match app_id {
        _ if sources.is_empty() => found(
            Setting::DefaultBranchCheck,
            Status::Ok,
            format!(
                "{branch} does not require {check_name:?}: people's and Dependabot's pull requests merge with a review; the agent's come only from agent-team/**, which the App alone writes"
            ),
        ),
        Some(id) if sources.contains(&Some(id)) => found(
            Setting::DefaultBranchCheck,
            Status::Ok,
            format!(
                "{branch} requires {check_name:?} from the App (id {id}): every pull request the App did not publish (people's, Dependabot's) is blocked; keep it only if the agent opens every pull request into {branch}"
            ),
        ),
        Some(id) => found(
            Setting::DefaultBranchCheck,
            Status::Missing,
            format!(
                "{branch} requires {check_name:?} from {}, not from the App (id {id}): anyone who can post a check run of that name could satisfy it",
                describe_sources(&sources)
            ),
        ),
        None => found(
            Setting::DefaultBranchCheck,
            Status::CannotRead,
            format!(
                "{branch} requires {check_name:?} from {}; the App could not be read to compare",
                describe_sources(&sources)
            ),
        ),
    };
    Ok(vec![review, check])
}

fn describe_sources(sources: &[Option<u64>]) -> String {
    sources
        .iter()
        .map(|s| match s {
            Some(id) => format!("app {id}"),
            None => "any source".to_owned(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn describe_actor(actor: &BypassActor) -> String {
    match actor.actor_id {
        Some(id) => format!("{} {id}", actor.actor_type),
        None => actor.actor_type.clone(),
    }
}

/// `creation`, `update` and `deletion` on `probe`'s branches, each from a ruleset whose bypass
/// list is the App alone (for `agent-team/**`) or not empty (for `agent-team-diffs/**`, whose
/// writer is the dispatcher, whom the API cannot name here).
fn check_restricted_branches(
    client: &Client,
    repo: &Repository,
    setting: Setting,
    probe: &str,
    app_id: Option<u64>,
) -> Result<Finding, DoctorError> {
    let pattern = format!("{}/**", probe.split('/').next().unwrap_or(probe));
    let rules = match read(client.get_branch_rules(repo, probe))? {
        Read::Found(rules) => rules,
        Read::NotFound(m) | Read::Unreadable(m) => {
            return Ok(found(setting, Status::CannotRead, m));
        }
    };
    let kinds = ["creation", "update", "deletion"];
    let absent: Vec<&str> = kinds
        .iter()
        .copied()
        .filter(|k| !rules.iter().any(|r| r.kind == *k))
        .collect();
    if !absent.is_empty() {
        return Ok(found(
            setting,
            Status::Missing,
            format!(
                "no active ruleset restricts {} on {pattern}",
                absent.join(", ")
            ),
        ));
    }
    let ids: BTreeSet<u64> = rules
        .iter()
        .filter(|r| kinds.contains(&r.kind.as_str()))
        .filter_map(|r| r.ruleset_id)
        .collect();
    let mut bypass: BTreeMap<u64, Vec<BypassActor>> = BTreeMap::new();
    for id in ids {
        match read(client.get_ruleset(repo, id))? {
            Read::Found(ruleset) => match ruleset.bypass_actors {
                Some(actors) => {
                    bypass.insert(id, actors);
                }
                None => {
                    return Ok(found(
                        setting,
                        Status::CannotRead,
                        format!(
                            "ruleset {id}'s bypass list is shown only to those who may edit it"
                        ),
                    ));
                }
            },
            Read::NotFound(m) | Read::Unreadable(m) => {
                return Ok(found(
                    setting,
                    Status::CannotRead,
                    format!("ruleset {id}: {m}"),
                ));
            }
        }
    }
    let is_app =
        |a: &BypassActor| a.actor_type == "Integration" && a.actor_id == app_id && app_id.is_some();
    for kind in kinds {
        let carriers: Vec<&Vec<BypassActor>> = rules
            .iter()
            .filter(|r| r.kind == kind)
            .filter_map(|r| r.ruleset_id.and_then(|id| bypass.get(&id)))
            .collect();
        let ok = match setting {
            Setting::AgentTeamBranches => {
                if app_id.is_none() {
                    return Ok(found(
                        setting,
                        Status::CannotRead,
                        "the App could not be read to compare with the bypass list",
                    ));
                }
                // Every ruleset must let the App through, and one must let nobody else.
                carriers.iter().all(|actors| actors.iter().any(is_app))
                    && carriers.iter().any(|actors| actors.iter().all(is_app))
            }
            _ => carriers.iter().any(|actors| !actors.is_empty()),
        };
        if !ok {
            let lists: Vec<String> = carriers
                .iter()
                .map(|actors| {
                    if actors.is_empty() {
                        "nobody".to_owned()
                    } else {
                        actors
                            .iter()
                            .map(describe_actor)
                            .collect::<Vec<_>>()
                            .join(" + ")
                    }
                })
                .collect();
            let wanted = if setting == Setting::AgentTeamBranches {
                "the App alone"
            } else {
                "the dispatcher"
            };
            return Ok(found(
                setting,
                Status::Missing,
                format!(
                    "{kind} on {pattern} may be bypassed by {}; wanted {wanted}",
                    lists.join("; ")
                ),
            ));
        }
    }
    let who: BTreeSet<String> = bypass.values().flatten().map(describe_actor).collect();
    Ok(found(
        setting,
        Status::Ok,
        format!(
            "creation, update and deletion on {pattern} restricted; bypass: {}",
            who.into_iter().collect::<Vec<_>>().join(", ")
        ),
    ))
}

fn check_workflow_token(client: &Client, repo: &Repository) -> Result<Finding, DoctorError> {
    let setting = Setting::WorkflowToken;
    Ok(match read(client.get_workflow_permissions(repo))? {
        Read::Found(p) => {
            let mut problems = Vec::new();
            if p.default_workflow_permissions != "read" {
                problems.push(format!(
                    "default_workflow_permissions: {}",
                    p.default_workflow_permissions
                ));
            }
            if p.can_approve_pull_request_reviews {
                problems.push("can_approve_pull_request_reviews: true".to_owned());
            }
            if problems.is_empty() {
                found(setting, Status::Ok, "read; cannot approve pull requests")
            } else {
                found(setting, Status::Missing, problems.join(", "))
            }
        }
        Read::NotFound(m) | Read::Unreadable(m) => found(
            setting,
            Status::CannotRead,
            format!("{m} (needs administration: read)"),
        ),
    })
}

/// The reusable workflow this release is: the actions it pins are read from it at build time.
const REUSABLE_WORKFLOW: &str = include_str!("../../.github/workflows/agent-team-apply-verify.yml");

/// Actions the reusable workflow runs only when the caller asks (`cache-key`): not allowing
/// them is a note, not a missing setting.
const OPTIONAL_ACTIONS: [&str; 1] = ["actions/cache/restore"];

/// The actions the reusable workflow pins, as `(owner/repo[/path], commit)`, each once, in the
/// order they first appear.
pub fn pinned_actions() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in REUSABLE_WORKFLOW.lines() {
        let line = line.trim_start().trim_start_matches("- ");
        let Some(target) = line.strip_prefix("uses:") else {
            continue;
        };
        let target = target.split('#').next().unwrap_or("").trim();
        if let Some((name, commit)) = target.split_once('@')
            && !name.starts_with("./")
            && !out.iter().any(|(n, _)| n == name)
        {
            out.push((name.to_owned(), commit.to_owned()));
        }
    }
    out
}

/// Whether `pattern` (GitHub's `patterns_allowed` form: `owner/repo[/path][@ref]`, `*` a
/// wildcard; no `@` allows every ref) allows `name@reference`. A pattern naming the action's
/// repository also allows an action or workflow in a subdirectory of it. Names compare
/// case-insensitively, as GitHub's owner and repository names do; refs exactly.
pub fn pattern_allows(pattern: &str, name: &str, reference: &str) -> bool {
    let (name_pattern, ref_pattern) = pattern.split_once('@').unwrap_or((pattern, "*"));
    let name = name.to_ascii_lowercase();
    let name_pattern = name_pattern.to_ascii_lowercase();
    let repository: String = name.split('/').take(2).collect::<Vec<_>>().join("/");
    (wildcard(&name_pattern, &name) || wildcard(&name_pattern, &repository))
        && wildcard(ref_pattern, reference)
}

/// `*` matches any run of characters (`/` included); everything else matches itself.
fn wildcard(pattern: &str, text: &str) -> bool {
    let (p, t) = (pattern.as_bytes(), text.as_bytes());
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, ti));
            pi += 1;
        } else if pi < p.len() && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&b| b == b'*')
}

/// Whether the allow list lets `name@reference` run.
fn allowed_by(selected: &github::settings::SelectedActions, name: &str, reference: &str) -> bool {
    let owner = name.split('/').next().unwrap_or("");
    (selected.github_owned_allowed
        && (owner.eq_ignore_ascii_case("actions") || owner.eq_ignore_ascii_case("github")))
        || selected
            .patterns_allowed
            .iter()
            .any(|p| pattern_allows(p, name, reference))
}

/// `allowed-actions`: Actions enabled, and `allowed_actions: selected` with an allow list that
/// lets every action the reusable workflow pins, and the reusable workflow itself (the
/// caller's pin, when the caller is readable), run at the pinned commit. `all` lets any action
/// run; `local_only` lets none of them. What the list allows beyond them (the repository's own
/// CI needs its actions) is named in the detail, not a failure.
fn check_allowed_actions(
    client: &Client,
    repo: &Repository,
    reusable: Option<&ReusablePin>,
) -> Result<Finding, DoctorError> {
    let setting = Setting::AllowedActions;
    let permissions = match read(client.get_actions_permissions(repo))? {
        Read::Found(p) => p,
        Read::NotFound(m) | Read::Unreadable(m) => {
            return Ok(found(
                setting,
                Status::CannotRead,
                format!("{m} (needs administration: read)"),
            ));
        }
    };
    if !permissions.enabled {
        return Ok(found(setting, Status::Missing, "Actions is disabled"));
    }
    let allowed = permissions.allowed_actions.unwrap_or_default();
    let pinning = match permissions.sha_pinning_required {
        Some(true) => "; full-SHA pinning required",
        _ => "",
    };
    match allowed.as_str() {
        "selected" => {}
        "local_only" => {
            return Ok(found(
                setting,
                Status::Missing,
                format!(
                    "allowed_actions: local_only (only this repository's own actions: the reusable workflow and the actions it pins cannot run){pinning}"
                ),
            ));
        }
        other => {
            return Ok(found(
                setting,
                Status::Missing,
                format!("allowed_actions: {other} (any action may run){pinning}"),
            ));
        }
    }
    let selected = match read(client.get_selected_actions(repo))? {
        Read::Found(s) => s,
        Read::NotFound(m) | Read::Unreadable(m) => {
            return Ok(found(
                setting,
                Status::CannotRead,
                format!(
                    "allowed_actions: selected; the allow list: {m} (needs administration: read)"
                ),
            ));
        }
    };
    let mut wanted = pinned_actions();
    if let Some((name, commit)) = reusable {
        wanted.push((format!("{name}/{REUSABLE_PATH}"), commit.clone()));
    }
    let mut refused = Vec::new();
    let mut optional_refused = Vec::new();
    for (name, commit) in &wanted {
        if !allowed_by(&selected, name, commit) {
            let entry = format!("{name}@{commit}");
            if OPTIONAL_ACTIONS.contains(&name.as_str()) {
                optional_refused.push(entry);
            } else {
                refused.push(entry);
            }
        }
    }
    let mut beyond = Vec::new();
    if selected.verified_allowed {
        beyond.push("every verified creator's actions".to_owned());
    }
    for pattern in &selected.patterns_allowed {
        if !wanted.iter().any(|(n, c)| pattern_allows(pattern, n, c)) {
            beyond.push(pattern.clone());
        }
    }
    let mut detail = format!("allowed_actions: selected{pinning}");
    if reusable.is_none() {
        detail.push_str(
            "; the reusable workflow's repository is not checked (the caller's pin is unreadable)",
        );
    }
    if !optional_refused.is_empty() {
        detail.push_str(&format!(
            "; not allowed, needed only with cache-key: {}",
            optional_refused.join(", ")
        ));
    }
    if !beyond.is_empty() {
        detail.push_str(&format!("; also allows: {}", beyond.join(", ")));
    }
    if refused.is_empty() {
        Ok(found(setting, Status::Ok, detail))
    } else {
        Ok(found(
            setting,
            Status::Missing,
            format!("not allowed: {}; {detail}", refused.join(", ")),
        ))
    }
}

/// The reusable workflow a caller pins: `(owner/repo, commit)`.
type ReusablePin = (String, String);

/// The caller, the release it pins and the policy; and the reusable workflow the caller pins
/// (`owner/repo`, commit), when it can be read.
fn check_files(
    client: &Client,
    repo: &Repository,
    default_branch: Option<&str>,
) -> Result<(Vec<Finding>, Option<ReusablePin>), DoctorError> {
    let Some(branch) = default_branch else {
        return Ok((
            vec![
                found(
                    Setting::CallerPin,
                    Status::CannotRead,
                    "the default branch is unknown",
                ),
                found(
                    Setting::CallerRelease,
                    Status::CannotRead,
                    "the default branch is unknown",
                ),
                found(
                    Setting::Policy,
                    Status::CannotRead,
                    "the default branch is unknown",
                ),
            ],
            None,
        ));
    };
    let mut reusable = None;
    let (caller, release) = match read(client.raw_contents(repo, CALLER_PATH, branch))? {
        Read::Found(bytes) => {
            reusable = reusable_pin(&bytes);
            (caller_pin(&bytes), caller_release(client, &bytes)?)
        }
        Read::NotFound(_) => {
            let detail = format!("no {CALLER_PATH} on {branch}");
            (
                found(Setting::CallerPin, Status::Missing, detail.clone()),
                found(Setting::CallerRelease, Status::Missing, detail),
            )
        }
        Read::Unreadable(m) => (
            found(Setting::CallerPin, Status::CannotRead, m.clone()),
            found(Setting::CallerRelease, Status::CannotRead, m),
        ),
    };
    let policy = match read(client.raw_contents(repo, POLICY_PATH, branch))? {
        Read::Found(bytes) => match std::str::from_utf8(&bytes)
            .map_err(|e| e.to_string())
            .and_then(|text| guard::policy::Policy::from_yaml(text).map_err(|e| e.to_string()))
        {
            Ok(_) => found(
                Setting::Policy,
                Status::Ok,
                format!("{POLICY_PATH} is a valid policy"),
            ),
            Err(e) => found(
                Setting::Policy,
                Status::Missing,
                format!("{POLICY_PATH} is not a valid policy: {e}"),
            ),
        },
        Read::NotFound(_) => found(
            Setting::Policy,
            Status::Missing,
            format!("no {POLICY_PATH} on {branch}: the embedded default applies"),
        ),
        Read::Unreadable(m) => found(Setting::Policy, Status::CannotRead, m),
    };
    Ok((vec![caller, release, policy], reusable))
}

/// The one reusable workflow call of a caller: `(owner/repo, commit)`.
fn reusable_pin(caller: &[u8]) -> Option<ReusablePin> {
    let marker = format!("/{REUSABLE_PATH}@");
    let jobs = caller_jobs(caller).ok()?;
    let calls: Vec<&str> = jobs
        .values()
        .filter_map(|job| job.get("uses").and_then(|u| u.as_str()))
        .filter(|u| u.contains(&marker))
        .collect();
    let [target] = calls.as_slice() else {
        return None;
    };
    let (pinned, commit) = target.split_once(&marker)?;
    Some((pinned.to_owned(), commit.to_owned()))
}

/// The release a caller pins: the job that calls the reusable workflow names
/// `OWNER/REPO/.github/workflows/agent-team-apply-verify.yml@<commit> # vX.Y.Z`; that commit's
/// reusable workflow must pin release vX.Y.Z of OWNER/REPO, both assets with a SHA-256 that is
/// not the all-zero placeholder. A caller that pins the commit a release was built from, rather
/// than the tag's pin commit, reads `missing` here: every job would fail at its install step.
pub fn caller_release(client: &Client, caller: &[u8]) -> Result<Finding, DoctorError> {
    let setting = Setting::CallerRelease;
    let missing = |detail: String| Ok(found(setting, Status::Missing, detail));
    let jobs = match caller_jobs(caller) {
        Ok(jobs) => jobs,
        Err(e) => return missing(e),
    };
    let marker = format!("/{REUSABLE_PATH}@");
    let calls: Vec<&str> = jobs
        .values()
        .filter_map(|job| job.get("uses").and_then(|u| u.as_str()))
        .filter(|u| u.contains(&marker))
        .collect();
    let [target] = calls.as_slice() else {
        return missing(format!(
            "{} jobs of {CALLER_PATH} call …{marker}<commit> (expected one)",
            calls.len()
        ));
    };
    let Some((pinned, commit)) = target.split_once(&marker) else {
        return missing(format!("{CALLER_PATH}: cannot read {target:?}"));
    };
    // The release's name lives in the comment beside the pin, which YAML drops: the text's line.
    let comment = String::from_utf8_lossy(caller)
        .lines()
        .find(|l| l.trim_start().starts_with("uses:") && l.contains(*target))
        .and_then(|l| l.split_once('#').map(|(_, c)| c.to_owned()))
        .unwrap_or_default();
    let version = comment.split_whitespace().next().unwrap_or("");
    if crate::release::version_problem(version).is_some() {
        return missing(format!(
            "the pin {commit} has no `# vX.Y.Z` beside it naming its release"
        ));
    }
    let Ok(repository) = Repository::parse(pinned) else {
        return missing(format!("{pinned:?} is not OWNER/REPO"));
    };
    if commit.len() == 40 && commit.bytes().all(|b| b == b'0') {
        return Ok(found(
            setting,
            Status::NoRelease,
            format!("{pinned}@{commit}: the placeholder, no release pinned yet"),
        ));
    }
    if contract::ids::CommitId::parse(commit).is_err() {
        return missing(format!(
            "{commit:?} is not a commit to read (see caller-pin)"
        ));
    }
    let workflow = match read(client.raw_contents(&repository, REUSABLE_PATH, commit))? {
        Read::Found(bytes) => bytes,
        Read::NotFound(m) => {
            return missing(format!("{pinned}@{commit} has no {REUSABLE_PATH} ({m})"));
        }
        Read::Unreadable(m) => return Ok(found(setting, Status::CannotRead, m)),
    };
    let Ok(workflow) = std::str::from_utf8(&workflow) else {
        return missing(format!("{pinned}@{commit}: {REUSABLE_PATH} is not UTF-8"));
    };
    let mut problems = Vec::new();
    let url = crate::release::env_line(workflow, "AGENT_TEAM_RELEASE_URL").unwrap_or("");
    let want = format!("/{}/releases/download/{version}", repository.full_name());
    if !url.ends_with(&want) {
        problems.push(format!(
            "it pins the release URL {url:?}, not release {version} of {pinned}"
        ));
    }
    let mut hashes = Vec::new();
    for (target, key) in crate::release::TARGETS {
        let asset = crate::release::env_line(workflow, &format!("AGENT_TEAM_ASSET_{key}"));
        if asset != Some(crate::release::asset_name(version, target).as_str()) {
            problems.push(format!("its {key} asset is {asset:?}, not of {version}"));
        }
        let hash = crate::release::env_line(workflow, &format!("AGENT_TEAM_SHA256_{key}"))
            .unwrap_or("")
            .trim_matches('"');
        if contract::ids::Sha256Hex::parse(hash).is_err() || hash.bytes().all(|b| b == b'0') {
            problems.push(format!(
                "its {key} SHA-256 is {hash:?}: no release is pinned there (a release's built commit, not its pin commit?)"
            ));
        } else {
            hashes.push(format!("{key} {}", &hash[..12]));
        }
    }
    if problems.is_empty() {
        Ok(found(
            setting,
            Status::Ok,
            format!(
                "{pinned}@{commit} pins release {version} ({})",
                hashes.join(", ")
            ),
        ))
    } else {
        missing(format!("{pinned}@{commit}: {}", problems.join("; ")))
    }
}

/// The caller's pin: every `uses:` of a job or a step is local (`./`) or pinned to a full commit
/// SHA that is not the all-zero placeholder, at least one job calls
/// `agent-team-apply-verify.yml`, and no job passes `secrets: inherit`.
/// The caller's jobs, as its YAML reads.
fn caller_jobs(bytes: &[u8]) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    let value: serde_json::Value = std::str::from_utf8(bytes)
        .map_err(|e| e.to_string())
        .and_then(|t| serde_saphyr::from_str(t).map_err(|e| e.to_string()))
        .map_err(|e| format!("{CALLER_PATH} is not YAML: {e}"))?;
    match value.get("jobs").and_then(|j| j.as_object()) {
        Some(jobs) => Ok(jobs.clone()),
        None => Err(format!("{CALLER_PATH} has no jobs")),
    }
}

pub fn caller_pin(bytes: &[u8]) -> Finding {
    let setting = Setting::CallerPin;
    let jobs = match caller_jobs(bytes) {
        Ok(jobs) => jobs,
        Err(e) => return found(setting, Status::Missing, e),
    };
    let mut uses: Vec<(String, String)> = Vec::new();
    let mut inherit = Vec::new();
    for (name, job) in &jobs {
        if let Some(u) = job.get("uses").and_then(|u| u.as_str()) {
            uses.push((format!("job {name}"), u.to_owned()));
        }
        if job.get("secrets").and_then(|s| s.as_str()) == Some("inherit") {
            inherit.push(name.clone());
        }
        for step in job
            .get("steps")
            .and_then(|s| s.as_array())
            .into_iter()
            .flatten()
        {
            if let Some(u) = step.get("uses").and_then(|u| u.as_str()) {
                uses.push((format!("a step of job {name}"), u.to_owned()));
            }
        }
    }
    let mut problems = Vec::new();
    let mut pins = Vec::new();
    let mut placeholder = false;
    for (place, target) in &uses {
        if target.starts_with("./") {
            continue;
        }
        let pin = target.rsplit_once('@').map(|(_, r)| r).unwrap_or("");
        let full_sha = pin.len() == 40
            && pin
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if !full_sha {
            problems.push(format!(
                "{place}: {target} is not pinned to a full commit SHA"
            ));
        } else if pin.bytes().all(|b| b == b'0') {
            placeholder = true;
            problems.push(format!("{place}: {target} pins the all-zero placeholder"));
        } else {
            pins.push(target.clone());
        }
    }
    if !uses.iter().any(|(place, t)| {
        place.starts_with("job ") && t.contains("/.github/workflows/agent-team-apply-verify.yml@")
    }) {
        problems.push("no job calls …/.github/workflows/agent-team-apply-verify.yml".to_owned());
    }
    if !inherit.is_empty() {
        problems.push(format!(
            "job {} passes `secrets: inherit` (pass the three secrets by name)",
            inherit.join(", ")
        ));
    }
    if problems.is_empty() {
        found(setting, Status::Ok, format!("pinned: {}", pins.join(", ")))
    } else if placeholder && problems.len() == 1 {
        found(setting, Status::NoRelease, problems.join("; "))
    } else {
        found(setting, Status::Missing, problems.join("; "))
    }
}
