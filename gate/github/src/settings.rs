//! The repository settings `gate doctor` reads: the repository, the App and its installation, an
//! environment with its secrets' and variables' names, the rules and classic protection of a
//! branch, rulesets, the Actions permissions and a file's contents. Reads only; every shape is
//! the one GitHub's REST reference gives (cited per request), reduced to the fields used.
//!
//! A status other than the expected one comes back as [`Error::Status`], so the caller can tell
//! a missing setting (`404`) from one its token cannot read (`403`, or `404` where GitHub hides
//! what the token may not see).

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::client::{Call, Client, Error};
use crate::{Repository, encode_component, encode_path};

/// `GET /repos/{owner}/{repo}` ("Get a repository",
/// <https://docs.github.com/en/rest/repos/repos#get-a-repository>; OpenAPI
/// `paths["/repos/{owner}/{repo}"].get`, schema `full-repository`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct RepositoryInfo {
    pub full_name: String,
    pub default_branch: String,
    pub owner: Account,
}

/// `owner` (schema `simple-user`): `type` is `User` or `Organization`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Account {
    pub login: String,
    #[serde(rename = "type")]
    pub kind: String,
}

/// `GET /apps/{app_slug}` ("Get an app",
/// <https://docs.github.com/en/rest/apps/apps#get-an-app>; OpenAPI
/// `paths["/apps/{app_slug}"].get`, schema `integration`): the App's id (the `integration_id`
/// a required status check and a ruleset's bypass actor name), and the permissions and events
/// every installation is asked for.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct App {
    pub id: u64,
    #[serde(default)]
    pub slug: Option<String>,
    /// Permission name → `read`, `write` or `admin`.
    pub permissions: BTreeMap<String, String>,
    #[serde(default)]
    pub events: Vec<String>,
}

/// `GET /orgs/{org}/installations` ("List app installations for an organization",
/// <https://docs.github.com/en/rest/orgs/orgs#list-app-installations-for-an-organization>;
/// OpenAPI `paths["/orgs/{org}/installations"].get`): `{total_count, installations}`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Installations {
    pub total_count: u64,
    pub installations: Vec<Installation>,
}

/// An installation (schema `installation`); the fields used here.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Installation {
    pub id: u64,
    pub app_id: u64,
    #[serde(default)]
    pub app_slug: Option<String>,
    /// Permission name → `read`, `write` or `admin`: what the installation was granted.
    pub permissions: BTreeMap<String, String>,
    /// `all` or `selected`.
    pub repository_selection: String,
    #[serde(default)]
    pub suspended_at: Option<String>,
}

/// `GET /repos/{owner}/{repo}/environments/{environment_name}` ("Get an environment",
/// <https://docs.github.com/en/rest/deployments/environments#get-an-environment>; OpenAPI
/// `paths["/repos/{owner}/{repo}/environments/{environment_name}"].get`, schema `environment`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Environment {
    pub name: String,
    /// `required_reviewers` (with `reviewers`), `wait_timer`, `branch_policy`.
    #[serde(default)]
    pub protection_rules: Vec<ProtectionRule>,
    /// `null` when any branch may deploy.
    #[serde(default)]
    pub deployment_branch_policy: Option<DeploymentBranchPolicy>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ProtectionRule {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub prevent_self_review: Option<bool>,
    #[serde(default)]
    pub reviewers: Vec<EnvironmentReviewer>,
}

/// A required reviewer: `type` `User` or `Team`, and the user or team (`login` or `slug`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct EnvironmentReviewer {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub reviewer: Option<ReviewerIdentity>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ReviewerIdentity {
    #[serde(default)]
    pub login: Option<String>,
    #[serde(default)]
    pub slug: Option<String>,
}

/// `deployment_branch_policy`: protected branches only, or the custom policies listed by
/// [`Client::list_deployment_branch_policies`] (exactly one of the two is `true`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub struct DeploymentBranchPolicy {
    pub protected_branches: bool,
    pub custom_branch_policies: bool,
}

/// `GET /repos/{owner}/{repo}/environments/{environment_name}/deployment-branch-policies`
/// ("List deployment branch policies",
/// <https://docs.github.com/en/rest/deployments/branch-policies#list-deployment-branch-policies>;
/// OpenAPI `paths["/repos/{owner}/{repo}/environments/{environment_name}/deployment-branch-policies"].get`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct DeploymentBranchPolicies {
    pub total_count: u64,
    pub branch_policies: Vec<DeploymentBranchPolicyEntry>,
}

/// A name pattern (Ruby `File.fnmatch` syntax) and whether it is for branches or tags.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct DeploymentBranchPolicyEntry {
    pub name: String,
    /// `branch` or `tag` (absent on older servers: `branch`).
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
}

/// `GET /repos/{owner}/{repo}/environments/{environment_name}/secrets` ("List environment
/// secrets", <https://docs.github.com/en/rest/actions/secrets#list-environment-secrets>; OpenAPI
/// `paths["/repos/{owner}/{repo}/environments/{environment_name}/secrets"].get`): names only.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct EnvironmentSecrets {
    pub total_count: u64,
    pub secrets: Vec<Named>,
}

/// `GET /repos/{owner}/{repo}/environments/{environment_name}/variables` ("List environment
/// variables", <https://docs.github.com/en/rest/actions/variables#list-environment-variables>;
/// OpenAPI `paths["/repos/{owner}/{repo}/environments/{environment_name}/variables"].get`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct EnvironmentVariables {
    pub total_count: u64,
    pub variables: Vec<Named>,
}

/// A secret's or variable's name (values are never read).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Named {
    pub name: String,
}

/// One rule of `GET /repos/{owner}/{repo}/rules/branches/{branch}` ("Get rules for a branch",
/// <https://docs.github.com/en/rest/repos/rules#get-rules-for-a-branch>; OpenAPI
/// `paths["/repos/{owner}/{repo}/rules/branches/{branch}"].get`, schema
/// `repository-rule-detailed`): every active rule that applies to the branch, from rulesets at
/// any level (`evaluate` and `disabled` rulesets excluded). Works with `metadata: read`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct BranchRule {
    /// `creation`, `update`, `deletion`, `non_fast_forward`, `pull_request`,
    /// `required_status_checks`, ...
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub parameters: Option<serde_json::Value>,
    /// `Repository`, `Organization` or `Enterprise`.
    #[serde(default)]
    pub ruleset_source_type: Option<String>,
    #[serde(default)]
    pub ruleset_source: Option<String>,
    #[serde(default)]
    pub ruleset_id: Option<u64>,
}

/// `GET /repos/{owner}/{repo}/rulesets/{ruleset_id}` ("Get a repository ruleset",
/// <https://docs.github.com/en/rest/repos/rules#get-a-repository-ruleset>; OpenAPI
/// `paths["/repos/{owner}/{repo}/rulesets/{ruleset_id}"].get`, schema `repository-ruleset`).
/// `bypass_actors` is present only for a caller who may edit the ruleset.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Ruleset {
    pub id: u64,
    pub name: String,
    /// `active`, `evaluate` or `disabled`.
    pub enforcement: String,
    #[serde(default)]
    pub bypass_actors: Option<Vec<BypassActor>>,
}

/// A ruleset's bypass actor: `actor_type` `Integration` (an App, `actor_id` its id),
/// `OrganizationAdmin`, `RepositoryRole`, `Team` or `DeployKey`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct BypassActor {
    #[serde(default)]
    pub actor_id: Option<u64>,
    pub actor_type: String,
    /// `always`, `pull_request` or `exempt`.
    #[serde(default)]
    pub bypass_mode: Option<String>,
}

/// `GET /repos/{owner}/{repo}/branches/{branch}` ("Get a branch",
/// <https://docs.github.com/en/rest/branches/branches#get-a-branch>; OpenAPI
/// `paths["/repos/{owner}/{repo}/branches/{branch}"].get`, schema `branch-with-protection`):
/// whether classic branch protection is on and its status checks, readable with `contents: read`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct BranchInfo {
    pub name: String,
    pub protected: bool,
    #[serde(default)]
    pub protection: Option<BranchProtectionSummary>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct BranchProtectionSummary {
    #[serde(default)]
    pub required_status_checks: Option<RequiredStatusChecks>,
}

/// Classic protection's `required_status_checks`: `checks` (each a `context` and the `app_id`
/// it must come from, `null` for any source).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct RequiredStatusChecks {
    #[serde(default)]
    pub checks: Vec<RequiredCheck>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct RequiredCheck {
    pub context: String,
    #[serde(default)]
    pub app_id: Option<u64>,
}

/// `GET /repos/{owner}/{repo}/branches/{branch}/protection` ("Get branch protection",
/// <https://docs.github.com/en/rest/branches/branch-protection#get-branch-protection>; OpenAPI
/// `paths["/repos/{owner}/{repo}/branches/{branch}/protection"].get`, schema
/// `branch-protection`): needs administration read; `404` when the branch is not protected.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct BranchProtection {
    #[serde(default)]
    pub required_pull_request_reviews: Option<RequiredReviews>,
    #[serde(default)]
    pub required_status_checks: Option<RequiredStatusChecks>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub struct RequiredReviews {
    #[serde(default)]
    pub required_approving_review_count: u32,
}

/// `GET /repos/{owner}/{repo}/actions/permissions/workflow` ("Get default workflow permissions
/// for a repository",
/// <https://docs.github.com/en/rest/actions/permissions#get-default-workflow-permissions-for-a-repository>;
/// OpenAPI `paths["/repos/{owner}/{repo}/actions/permissions/workflow"].get`, schema
/// `actions-get-default-workflow-permissions`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct WorkflowPermissions {
    /// `read` or `write`.
    pub default_workflow_permissions: String,
    pub can_approve_pull_request_reviews: bool,
}

/// `GET /repos/{owner}/{repo}/actions/permissions` ("Get GitHub Actions permissions for a
/// repository",
/// <https://docs.github.com/en/rest/actions/permissions#get-github-actions-permissions-for-a-repository>;
/// OpenAPI `paths["/repos/{owner}/{repo}/actions/permissions"].get`, schema
/// `actions-repository-permissions`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ActionsPermissions {
    pub enabled: bool,
    /// `all`, `local_only` or `selected` (absent when Actions is disabled).
    #[serde(default)]
    pub allowed_actions: Option<String>,
    /// Whether every action must be pinned to a full commit SHA (newer servers).
    #[serde(default)]
    pub sha_pinning_required: Option<bool>,
}

/// `GET /repos/{owner}/{repo}/actions/permissions/selected-actions` ("Get allowed actions and
/// reusable workflows for a repository",
/// <https://docs.github.com/en/rest/actions/permissions#get-allowed-actions-and-reusable-workflows-for-a-repository>;
/// OpenAPI schema `selected-actions`): read only when `allowed_actions` is `selected`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct SelectedActions {
    /// Every action of GitHub's own organizations (`actions`, `github`).
    #[serde(default)]
    pub github_owned_allowed: bool,
    /// Every action of a GitHub Marketplace verified creator.
    #[serde(default)]
    pub verified_allowed: bool,
    /// `owner/repo@ref`-style patterns with `*` wildcards (`monalisa/octocat@*`, `monalisa/*`).
    #[serde(default)]
    pub patterns_allowed: Vec<String>,
}

impl Client {
    /// [`SelectedActions`].
    pub fn get_selected_actions(&self, repo: &Repository) -> Result<SelectedActions, Error> {
        self.json(
            &Call::get(repo.path("/actions/permissions/selected-actions")),
            &[200],
        )
    }

    /// [`RepositoryInfo`].
    pub fn get_repository(&self, repo: &Repository) -> Result<RepositoryInfo, Error> {
        self.json(&Call::get(repo.path("")), &[200])
    }

    /// [`App`].
    pub fn get_app(&self, slug: &str) -> Result<App, Error> {
        self.json(
            &Call::get(format!("/apps/{}", encode_component(slug))),
            &[200],
        )
    }

    /// [`Installations`] (the first 100).
    pub fn list_org_installations(&self, org: &str) -> Result<Installations, Error> {
        let call = Call::get(format!("/orgs/{}/installations", encode_component(org)))
            .query("per_page", "100");
        self.json(&call, &[200])
    }

    /// [`Environment`].
    pub fn get_environment(&self, repo: &Repository, name: &str) -> Result<Environment, Error> {
        let call = Call::get(repo.path(&format!("/environments/{}", encode_component(name))));
        self.json(&call, &[200])
    }

    /// [`DeploymentBranchPolicies`] (the first 100).
    pub fn list_deployment_branch_policies(
        &self,
        repo: &Repository,
        environment: &str,
    ) -> Result<DeploymentBranchPolicies, Error> {
        let call = Call::get(repo.path(&format!(
            "/environments/{}/deployment-branch-policies",
            encode_component(environment)
        )))
        .query("per_page", "100");
        self.json(&call, &[200])
    }

    /// [`EnvironmentSecrets`] (the first 100 names).
    pub fn list_environment_secrets(
        &self,
        repo: &Repository,
        environment: &str,
    ) -> Result<EnvironmentSecrets, Error> {
        let call = Call::get(repo.path(&format!(
            "/environments/{}/secrets",
            encode_component(environment)
        )))
        .query("per_page", "100");
        self.json(&call, &[200])
    }

    /// [`EnvironmentVariables`] (the first 30, GitHub's most per page).
    pub fn list_environment_variables(
        &self,
        repo: &Repository,
        environment: &str,
    ) -> Result<EnvironmentVariables, Error> {
        let call = Call::get(repo.path(&format!(
            "/environments/{}/variables",
            encode_component(environment)
        )))
        .query("per_page", "30");
        self.json(&call, &[200])
    }

    /// [`BranchRule`]s of `branch` (which need not exist; the first 100).
    pub fn get_branch_rules(
        &self,
        repo: &Repository,
        branch: &str,
    ) -> Result<Vec<BranchRule>, Error> {
        let call = Call::get(repo.path(&format!("/rules/branches/{}", encode_path(branch))))
            .query("per_page", "100");
        self.json(&call, &[200])
    }

    /// [`Ruleset`].
    pub fn get_ruleset(&self, repo: &Repository, id: u64) -> Result<Ruleset, Error> {
        self.json(&Call::get(repo.path(&format!("/rulesets/{id}"))), &[200])
    }

    /// [`BranchInfo`].
    pub fn get_branch(&self, repo: &Repository, branch: &str) -> Result<BranchInfo, Error> {
        let call = Call::get(repo.path(&format!("/branches/{}", encode_path(branch))));
        self.json(&call, &[200])
    }

    /// [`BranchProtection`].
    pub fn get_branch_protection(
        &self,
        repo: &Repository,
        branch: &str,
    ) -> Result<BranchProtection, Error> {
        let call = Call::get(repo.path(&format!("/branches/{}/protection", encode_path(branch))));
        self.json(&call, &[200])
    }

    /// [`WorkflowPermissions`].
    pub fn get_workflow_permissions(
        &self,
        repo: &Repository,
    ) -> Result<WorkflowPermissions, Error> {
        self.json(
            &Call::get(repo.path("/actions/permissions/workflow")),
            &[200],
        )
    }

    /// [`ActionsPermissions`].
    pub fn get_actions_permissions(&self, repo: &Repository) -> Result<ActionsPermissions, Error> {
        self.json(&Call::get(repo.path("/actions/permissions")), &[200])
    }
}
