//! The repository's settings as `gate doctor` reads them: the repository, the App and its
//! installation, environments (reviewers, deployment branches, secrets' and variables' names),
//! rulesets and the rules they give a branch, classic branch protection, and the Actions
//! permissions. Each route follows its operation in GitHub's REST description (cited in
//! `github::settings`); a setting left out answers `404` as GitHub does, and a [`crate::Fault`]
//! on its path plays a token that may not read it (`403`).

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::State;
use crate::http::{Recorded, Reply};

/// The App as `GET /apps/{app_slug}` and its installation show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppSettings {
    pub id: u64,
    pub slug: String,
    /// What the App asks every installation for.
    pub permissions: BTreeMap<String, String>,
    pub events: Vec<String>,
    /// What the installation on the repository's owner was granted (`None`: not installed).
    pub installation_permissions: Option<BTreeMap<String, String>>,
    /// `all` or `selected`.
    pub repository_selection: String,
}

/// Which branches may deploy to an environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BranchPolicy {
    /// Any branch (`deployment_branch_policy: null`).
    Any,
    /// Protected branches only.
    Protected,
    /// These name patterns (`type: branch`).
    Custom(Vec<String>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvironmentSettings {
    pub name: String,
    /// Required reviewers: (`User` or `Team`, login or slug).
    pub reviewers: Vec<(String, String)>,
    pub branch_policy: BranchPolicy,
    pub secrets: Vec<String>,
    pub variables: Vec<String>,
}

/// A repository ruleset.
#[derive(Debug, Clone, PartialEq)]
pub struct RulesetSettings {
    pub id: u64,
    pub name: String,
    /// `active`, `evaluate` or `disabled`.
    pub enforcement: String,
    /// `conditions.ref_name.include`: `~DEFAULT_BRANCH`, `~ALL`, `refs/heads/<name>` or
    /// `refs/heads/<prefix>/**`.
    pub include: Vec<String>,
    /// Rules as GitHub lists them (`{"type": ..., "parameters": ...}`).
    pub rules: Vec<Value>,
    /// `{"actor_id", "actor_type", "bypass_mode"}`.
    pub bypass_actors: Vec<Value>,
    /// Whether `GET .../rulesets/{id}` shows `bypass_actors` (only to a caller who may edit it).
    pub bypass_visible: bool,
}

/// Classic protection of one branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassicProtection {
    pub required_approving_review_count: Option<u32>,
    /// (context, app id).
    pub checks: Vec<(String, Option<u64>)>,
}

/// Everything the settings routes serve. The default is a repository nobody configured: no
/// App, no environment, no ruleset, the workflow token may write, every action allowed.
#[derive(Debug, Clone, PartialEq)]
pub struct RepositorySettings {
    /// `Organization` or `User`.
    pub owner_type: String,
    pub app: Option<AppSettings>,
    pub environments: Vec<EnvironmentSettings>,
    pub rulesets: Vec<RulesetSettings>,
    /// Branch name → its classic protection.
    pub classic_protection: BTreeMap<String, ClassicProtection>,
    pub default_workflow_permissions: String,
    pub can_approve_pull_request_reviews: bool,
    pub actions_enabled: bool,
    pub allowed_actions: String,
    /// The allow list when `allowed_actions` is `selected`.
    pub selected_actions: SelectedActionsSettings,
}

/// `selected-actions`: what `allowed_actions: selected` allows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SelectedActionsSettings {
    pub github_owned_allowed: bool,
    pub verified_allowed: bool,
    pub patterns_allowed: Vec<String>,
}

impl Default for RepositorySettings {
    fn default() -> Self {
        RepositorySettings {
            owner_type: "Organization".into(),
            app: None,
            environments: Vec::new(),
            rulesets: Vec::new(),
            classic_protection: BTreeMap::new(),
            default_workflow_permissions: "write".into(),
            can_approve_pull_request_reviews: true,
            actions_enabled: true,
            allowed_actions: "all".into(),
            selected_actions: SelectedActionsSettings::default(),
        }
    }
}

/// The permissions the gate's App needs, exactly.
pub fn app_permissions() -> BTreeMap<String, String> {
    [
        ("checks", "write"),
        ("contents", "write"),
        ("metadata", "read"),
        ("pull_requests", "write"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect()
}

impl RepositorySettings {
    /// A repository set up as the adoption guide says, for the App `slug` with id `app_id` and
    /// the default branch `default_branch`.
    pub fn configured(app_id: u64, slug: &str, default_branch: &str) -> Self {
        let app_bypass =
            json!({ "actor_id": app_id, "actor_type": "Integration", "bypass_mode": "always" });
        RepositorySettings {
            owner_type: "Organization".into(),
            app: Some(AppSettings {
                id: app_id,
                slug: slug.to_owned(),
                permissions: app_permissions(),
                events: Vec::new(),
                installation_permissions: Some(app_permissions()),
                repository_selection: "selected".into(),
            }),
            environments: vec![
                EnvironmentSettings {
                    name: "agent-team-publish".into(),
                    reviewers: vec![("Team".into(), "maintainers".into())],
                    branch_policy: BranchPolicy::Custom(vec![default_branch.to_owned()]),
                    secrets: vec![
                        "AGENT_TEAM_APP_PRIVATE_KEY".into(),
                        "AGENT_TEAM_DISPATCH_KEY".into(),
                    ],
                    variables: vec![
                        "AGENT_TEAM_APP_CLIENT_ID".into(),
                        "AGENT_TEAM_APP_ID".into(),
                    ],
                },
                EnvironmentSettings {
                    name: "agent-team-verify".into(),
                    reviewers: Vec::new(),
                    branch_policy: BranchPolicy::Custom(vec![default_branch.to_owned()]),
                    secrets: vec!["AGENT_TEAM_DISPATCH_KEY".into()],
                    variables: vec!["AGENT_TEAM_APP_ID".into()],
                },
            ],
            rulesets: vec![
                RulesetSettings {
                    id: 1,
                    name: "default branch".into(),
                    enforcement: "active".into(),
                    include: vec!["~DEFAULT_BRANCH".into()],
                    rules: vec![
                        json!({ "type": "deletion" }),
                        json!({ "type": "non_fast_forward" }),
                        json!({ "type": "pull_request", "parameters": {
                            "required_approving_review_count": 1,
                            "dismiss_stale_reviews_on_push": true,
                            "require_code_owner_review": true,
                            "require_last_push_approval": true,
                            "required_review_thread_resolution": false,
                        } }),
                    ],
                    bypass_actors: Vec::new(),
                    bypass_visible: true,
                },
                RulesetSettings {
                    id: 2,
                    name: "agent-team branches".into(),
                    enforcement: "active".into(),
                    include: vec!["refs/heads/agent-team/**".into()],
                    rules: vec![
                        json!({ "type": "creation" }),
                        json!({ "type": "update" }),
                        json!({ "type": "deletion" }),
                    ],
                    bypass_actors: vec![app_bypass],
                    bypass_visible: true,
                },
                RulesetSettings {
                    id: 3,
                    name: "agent-team-diffs branches".into(),
                    enforcement: "active".into(),
                    include: vec!["refs/heads/agent-team-diffs/**".into()],
                    rules: vec![
                        json!({ "type": "creation" }),
                        json!({ "type": "update" }),
                        json!({ "type": "deletion" }),
                    ],
                    bypass_actors: vec![
                        json!({ "actor_id": 7, "actor_type": "Team", "bypass_mode": "always" }),
                    ],
                    bypass_visible: true,
                },
            ],
            classic_protection: BTreeMap::new(),
            default_workflow_permissions: "read".into(),
            can_approve_pull_request_reviews: false,
            actions_enabled: true,
            allowed_actions: "selected".into(),
            // What ADOPTING's Actions settings allow: GitHub's own actions, the pinned
            // third-party action and the reusable workflow's repository.
            selected_actions: SelectedActionsSettings {
                github_owned_allowed: true,
                verified_allowed: false,
                patterns_allowed: vec![
                    "step-security/harden-runner@*".into(),
                    "agent-team/agent-team-apply@*".into(),
                ],
            },
        }
    }
}

/// Whether a ruleset's `ref_name.include` pattern names `branch` (`fnmatch`-style: `**` matches
/// across `/`, `*` within a component; only the forms [`RulesetSettings::include`] lists).
fn include_matches(pattern: &str, branch: &str, default_branch: &str) -> bool {
    let full = format!("refs/heads/{branch}");
    match pattern {
        "~ALL" => true,
        "~DEFAULT_BRANCH" => branch == default_branch,
        _ => match pattern.strip_suffix("/**") {
            Some(prefix) => full.starts_with(&format!("{prefix}/")),
            None => pattern == full,
        },
    }
}

fn environment<'a>(state: &'a State, name: &str) -> Option<&'a EnvironmentSettings> {
    state
        .scenario
        .settings
        .environments
        .iter()
        .find(|e| e.name.eq_ignore_ascii_case(name))
}

fn not_found() -> Reply {
    Reply::json(
        404,
        &json!({ "message": "Not Found", "documentation_url": "https://docs.github.com/rest" }),
    )
}

fn installation_json(app: &AppSettings, permissions: &BTreeMap<String, String>) -> Value {
    json!({
        "id": 9000 + app.id,
        "app_id": app.id,
        "app_slug": app.slug,
        "permissions": permissions,
        "repository_selection": app.repository_selection,
        "events": app.events,
        "suspended_at": null,
        "target_type": "Organization",
    })
}

/// Routes outside `/repos/{owner}/{repo}`: `GET /apps/{slug}`, `GET /orgs/{org}/installations`.
pub fn global_route(state: &State, req: &Recorded, segments: &[&str], base: &str) -> Option<Reply> {
    if req.method != "GET" {
        return None;
    }
    let settings = &state.scenario.settings;
    Some(match segments {
        ["apps", slug] => match &settings.app {
            Some(app) if app.slug == *slug => Reply::json(
                200,
                &json!({
                    "id": app.id,
                    "slug": app.slug,
                    "name": app.slug,
                    "permissions": app.permissions,
                    "events": app.events,
                }),
            ),
            _ => not_found(),
        },
        ["orgs", org, "installations"]
            if org.eq_ignore_ascii_case(&state.scenario.owner)
                && settings.owner_type == "Organization" =>
        {
            let installations: Vec<Value> = settings
                .app
                .iter()
                .filter_map(|app| {
                    app.installation_permissions
                        .as_ref()
                        .map(|p| installation_json(app, p))
                })
                .collect();
            crate::page::serve(
                req,
                base,
                installations,
                crate::page::MAX_PER_PAGE,
                |total, page| json!({ "total_count": total, "installations": page }),
            )
        }
        _ => return None,
    })
}

/// Routes under `/repos/{owner}/{repo}` (`rest` is what follows).
pub fn repo_route(state: &State, req: &Recorded, rest: &[&str], base: &str) -> Option<Reply> {
    if req.method != "GET" {
        return None;
    }
    let s = &state.scenario;
    let settings = &s.settings;
    Some(match rest {
        [] => Reply::json(
            200,
            &json!({
                "full_name": format!("{}/{}", s.owner, s.repo),
                "name": s.repo,
                "default_branch": s.default_branch,
                "owner": { "login": s.owner, "type": settings.owner_type },
            }),
        ),
        ["environments", name] => match environment(state, name) {
            Some(env) => Reply::json(200, &environment_json(env)),
            None => not_found(),
        },
        ["environments", name, "deployment-branch-policies"] => match environment(state, name) {
            Some(EnvironmentSettings {
                branch_policy: BranchPolicy::Custom(names),
                ..
            }) => {
                let policies: Vec<Value> = names
                    .iter()
                    .enumerate()
                    .map(|(i, n)| json!({ "id": i + 1, "name": n, "type": "branch" }))
                    .collect();
                crate::page::serve(
                    req,
                    base,
                    policies,
                    crate::page::MAX_PER_PAGE,
                    |total, page| json!({ "total_count": total, "branch_policies": page }),
                )
            }
            Some(_) => crate::page::serve(
                req,
                base,
                Vec::new(),
                crate::page::MAX_PER_PAGE,
                |total, page| json!({ "total_count": total, "branch_policies": page }),
            ),
            None => not_found(),
        },
        ["environments", name, "secrets"] => match environment(state, name) {
            Some(env) => {
                let secrets: Vec<Value> = env
                    .secrets
                    .iter()
                    .map(|n| json!({ "name": n, "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z" }))
                    .collect();
                crate::page::serve(
                    req,
                    base,
                    secrets,
                    crate::page::MAX_PER_PAGE,
                    |total, page| json!({ "total_count": total, "secrets": page }),
                )
            }
            None => not_found(),
        },
        ["environments", name, "variables"] => match environment(state, name) {
            Some(env) => {
                let variables: Vec<Value> = env
                    .variables
                    .iter()
                    .map(|n| json!({ "name": n, "value": "Iv23standin", "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z" }))
                    .collect();
                // "List environment variables": `per_page` "(max 30)".
                crate::page::serve(
                    req,
                    base,
                    variables,
                    30,
                    |total, page| json!({ "total_count": total, "variables": page }),
                )
            }
            None => not_found(),
        },
        ["rules", "branches", branch @ ..] => {
            let branch = branch.join("/");
            let rules: Vec<Value> = settings
                .rulesets
                .iter()
                .filter(|r| r.enforcement == "active")
                .filter(|r| {
                    r.include
                        .iter()
                        .any(|p| include_matches(p, &branch, &s.default_branch))
                })
                .flat_map(|r| {
                    r.rules.iter().map(move |rule| {
                        let mut rule = rule.clone();
                        rule["ruleset_source_type"] = json!("Repository");
                        rule["ruleset_source"] = json!(format!("{}/{}", s.owner, s.repo));
                        rule["ruleset_id"] = json!(r.id);
                        rule
                    })
                })
                .collect();
            crate::page::serve(req, base, rules, crate::page::MAX_PER_PAGE, |_, page| {
                Value::Array(page)
            })
        }
        ["rulesets", id] => match settings
            .rulesets
            .iter()
            .find(|r| id.parse::<u64>().ok() == Some(r.id))
        {
            Some(r) => {
                let mut value = json!({
                    "id": r.id,
                    "name": r.name,
                    "target": "branch",
                    "source_type": "Repository",
                    "source": format!("{}/{}", s.owner, s.repo),
                    "enforcement": r.enforcement,
                    "conditions": { "ref_name": { "include": r.include, "exclude": [] } },
                    "rules": r.rules,
                });
                if r.bypass_visible {
                    value["bypass_actors"] = json!(r.bypass_actors);
                }
                Reply::json(200, &value)
            }
            None => not_found(),
        },
        ["branches", name, "protection"] => match settings.classic_protection.get(*name) {
            Some(p) => {
                let mut value = json!({ "url": "", "required_status_checks": classic_checks(p) });
                if let Some(count) = p.required_approving_review_count {
                    value["required_pull_request_reviews"] =
                        json!({ "required_approving_review_count": count });
                }
                Reply::json(200, &value)
            }
            None => Reply::json(
                404,
                &json!({ "message": "Branch not protected", "documentation_url": "https://docs.github.com/rest" }),
            ),
        },
        ["branches", name]
            if *name == s.default_branch
                || state.git.refs.contains_key(&format!("refs/heads/{name}")) =>
        {
            let protection = settings.classic_protection.get(*name);
            Reply::json(
                200,
                &json!({
                    "name": name,
                    "protected": protection.is_some(),
                    "protection": match protection {
                        Some(p) => json!({ "enabled": true, "required_status_checks": classic_checks(p) }),
                        None => json!({ "enabled": false, "required_status_checks": { "enforcement_level": "off", "contexts": [], "checks": [] } }),
                    },
                }),
            )
        }
        ["actions", "permissions", "workflow"] => Reply::json(
            200,
            &json!({
                "default_workflow_permissions": settings.default_workflow_permissions,
                "can_approve_pull_request_reviews": settings.can_approve_pull_request_reviews,
            }),
        ),
        // Only a `selected` policy has an allow list; GitHub's docs say the endpoint needs
        // `allowed_actions: selected` (any other policy answers 409 here).
        ["actions", "permissions", "selected-actions"] => {
            if settings.actions_enabled && settings.allowed_actions == "selected" {
                let selected = &settings.selected_actions;
                Reply::json(
                    200,
                    &json!({
                        "github_owned_allowed": selected.github_owned_allowed,
                        "verified_allowed": selected.verified_allowed,
                        "patterns_allowed": selected.patterns_allowed,
                    }),
                )
            } else {
                Reply::json(
                    409,
                    &json!({ "message": "The allowed actions policy is not selected" }),
                )
            }
        }
        ["actions", "permissions"] => {
            let mut value = json!({ "enabled": settings.actions_enabled });
            if settings.actions_enabled {
                value["allowed_actions"] = json!(settings.allowed_actions);
            }
            Reply::json(200, &value)
        }
        _ => return None,
    })
}

fn classic_checks(p: &ClassicProtection) -> Value {
    let checks: Vec<Value> = p
        .checks
        .iter()
        .map(|(context, app_id)| json!({ "context": context, "app_id": app_id }))
        .collect();
    let contexts: Vec<&String> = p.checks.iter().map(|(c, _)| c).collect();
    json!({ "enforcement_level": "non_admins", "contexts": contexts, "checks": checks })
}

fn environment_json(env: &EnvironmentSettings) -> Value {
    let mut rules = Vec::new();
    if !env.reviewers.is_empty() {
        let reviewers: Vec<Value> = env
            .reviewers
            .iter()
            .map(|(kind, name)| {
                let reviewer = if kind == "Team" {
                    json!({ "slug": name })
                } else {
                    json!({ "login": name })
                };
                json!({ "type": kind, "reviewer": reviewer })
            })
            .collect();
        rules.push(json!({ "id": 1, "type": "required_reviewers", "prevent_self_review": true, "reviewers": reviewers }));
    }
    let policy = match &env.branch_policy {
        BranchPolicy::Any => Value::Null,
        BranchPolicy::Protected => {
            rules.push(json!({ "id": 2, "type": "branch_policy" }));
            json!({ "protected_branches": true, "custom_branch_policies": false })
        }
        BranchPolicy::Custom(_) => {
            rules.push(json!({ "id": 2, "type": "branch_policy" }));
            json!({ "protected_branches": false, "custom_branch_policies": true })
        }
    };
    json!({
        "id": 1,
        "name": env.name,
        "protection_rules": rules,
        "deployment_branch_policy": policy,
    })
}

/// A commit on `branch` holding exactly `files` (path, bytes), each `100644`: the repository's
/// files as the contents API serves them.
pub fn put_files(state: &mut State, branch: &str, files: &[(&str, &[u8])]) -> String {
    let mut leaves = BTreeMap::new();
    for (path, bytes) in files {
        let id = state.git.put_blob(bytes.to_vec());
        leaves.insert((*path).to_owned(), ("100644".to_owned(), id));
    }
    let tree = state.git.build(&leaves);
    let commit = state
        .git
        .put_commit(&tree, &[], "files\n", state.scenario.start_unix, false);
    state
        .git
        .refs
        .insert(format!("refs/heads/{branch}"), commit.clone());
    commit
}
