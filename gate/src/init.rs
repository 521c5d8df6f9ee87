//! `gate init`: the files an adopting repository starts from, for its build system (detected
//! from its files): the caller workflow (the example caller of [`examples/`], the same file
//! zizmor and the workflow invariants check), a starting policy, the App's manifest with exactly
//! the permissions the gate needs, and the rulesets as JSON GitHub imports; then the remaining
//! steps, in order.
//!
//! [`plan`] computes every file without touching the disk; [`write`] refuses to replace a file
//! whose contents differ unless forced (an identical file is left as it is), and never follows
//! a symbolic link.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::doctor::{
    APP_PERMISSIONS, CALLER_PATH, CHECK_NAME, ENVIRONMENT, POLICY_PATH, SECRETS, VARIABLES,
    VERIFY_ENVIRONMENT, VERIFY_SECRETS,
};

/// The placeholder pin of the example callers.
pub const PLACEHOLDER_PIN: &str = "0000000000000000000000000000000000000000";
/// Where the setup documents (the manifest, the rulesets) are written.
pub const SETUP_DIR: &str = ".github/agent-team-setup";
pub const MANIFEST_PATH: &str = ".github/agent-team-setup/app-manifest.json";
pub const RULESET_DEFAULT_PATH: &str = ".github/agent-team-setup/ruleset-default-branch.json";
pub const RULESET_BRANCHES_PATH: &str = ".github/agent-team-setup/ruleset-agent-team-branches.json";

/// A build system `gate init` writes a caller for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum BuildSystem {
    Rust,
    Node,
    Python,
}

impl BuildSystem {
    pub const ALL: [BuildSystem; 3] = [BuildSystem::Rust, BuildSystem::Node, BuildSystem::Python];

    pub fn name(self) -> &'static str {
        match self {
            BuildSystem::Rust => "rust",
            BuildSystem::Node => "node",
            BuildSystem::Python => "python",
        }
    }

    /// The files that mark a repository as this build system's, at its root.
    pub fn markers(self) -> &'static [&'static str] {
        match self {
            BuildSystem::Rust => &["Cargo.toml"],
            BuildSystem::Node => &["package.json"],
            BuildSystem::Python => &["pyproject.toml", "setup.py", "requirements.txt"],
        }
    }

    /// The example caller (`examples/<name>.yml`).
    pub fn caller_template(self) -> &'static str {
        match self {
            BuildSystem::Rust => include_str!("../../examples/rust.yml"),
            BuildSystem::Node => include_str!("../../examples/node.yml"),
            BuildSystem::Python => include_str!("../../examples/python.yml"),
        }
    }

    /// The starting policy (`examples/policy/<name>.yml`; Rust's needs nothing beyond the
    /// embedded default, whose `build.output` already has `target/**`).
    pub fn policy_template(self) -> &'static str {
        match self {
            BuildSystem::Rust => RUST_POLICY,
            BuildSystem::Node => include_str!("../../examples/policy/node.yml"),
            BuildSystem::Python => include_str!("../../examples/policy/python.yml"),
        }
    }
}

const RUST_POLICY: &str = "\
# .github/agent-team-policy.yml of a Rust repository (read from the dispatched commit; .github/**
# is in the denied surface, so no diff can change it). On top of guard's embedded default policy,
# which already protects Cargo.toml, Cargo.lock, build.rs and the toolchain files and lets the
# build write target/**.
version: 1
";

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InitError {
    #[error(
        "no build system detected in {dir}: none of Cargo.toml, package.json, pyproject.toml, setup.py, requirements.txt; pass --build-system"
    )]
    NotDetected { dir: String },
    #[error("several build systems detected in {dir} ({found}); pass --build-system")]
    Ambiguous { dir: String, found: String },
    #[error("--pin {found:?} is not a full commit SHA (40 lowercase hex digits, not all zero)")]
    Pin { found: String },
    #[error("{path}: {message}")]
    Io { path: String, message: String },
    #[error("{path} is a symbolic link; not followed")]
    Symlink { path: String },
    #[error("cannot serialize {what}: {message}")]
    Serialize { what: &'static str, message: String },
}

/// What `gate init` is asked for.
#[derive(Debug, Clone)]
pub struct InitRequest {
    pub dir: PathBuf,
    /// Detected when `None`.
    pub build_system: Option<BuildSystem>,
    /// The release commit the caller pins; the placeholder when `None`.
    pub pin: Option<String>,
    /// The App's id: the rulesets are written only when it is known (they name it).
    pub app_id: Option<u64>,
    /// `owner/name`, for the App's name and homepage.
    pub repository: Option<String>,
}

/// One file to write, relative to the repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedFile {
    pub path: &'static str,
    pub contents: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub build_system: BuildSystem,
    pub files: Vec<PlannedFile>,
    /// The remaining steps, in order.
    pub steps: Vec<String>,
}

/// The build systems whose markers exist at `dir`'s root.
pub fn detect(dir: &Path) -> Result<Vec<BuildSystem>, InitError> {
    let mut found = Vec::new();
    for system in BuildSystem::ALL {
        for marker in system.markers() {
            let path = dir.join(marker);
            match std::fs::symlink_metadata(&path) {
                Ok(_) => {
                    found.push(system);
                    break;
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    return Err(InitError::Io {
                        path: path.display().to_string(),
                        message: e.to_string(),
                    });
                }
            }
        }
    }
    Ok(found)
}

fn check_pin(pin: &str) -> Result<(), InitError> {
    let ok = pin.len() == 40
        && pin
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        && pin != PLACEHOLDER_PIN;
    if ok {
        Ok(())
    } else {
        Err(InitError::Pin {
            found: pin.to_owned(),
        })
    }
}

/// The App's manifest (<https://docs.github.com/en/apps/sharing-github-apps/registering-a-github-app-from-a-manifest>,
/// "GitHub App Manifest parameters"): private, exactly [`APP_PERMISSIONS`], no events, no
/// webhook deliveries.
pub fn app_manifest(repository: Option<&str>) -> Value {
    let (name, url) = match repository {
        Some(r) => (
            format!("{}-agent-team", r.rsplit('/').next().unwrap_or(r)),
            format!("https://github.com/{r}"),
        ),
        None => (
            "agent-team-apply".to_owned(),
            "https://github.com/agent-team/agent-team-apply".to_owned(),
        ),
    };
    let permissions: serde_json::Map<String, Value> = APP_PERMISSIONS
        .iter()
        .map(|(k, v)| ((*k).to_owned(), json!(v)))
        .collect();
    json!({
        "name": name,
        "url": url,
        "description": "Publishes the draft pull requests and check runs of agent-team-apply (contents, pull requests, checks; no workflows).",
        "public": false,
        "hook_attributes": { "url": url, "active": false },
        "default_permissions": permissions,
        "default_events": [],
    })
}

/// The default branch's ruleset in the shape GitHub exports and imports (the REST
/// "Create a repository ruleset" body,
/// <https://docs.github.com/en/rest/repos/rules#create-a-repository-ruleset>): a pull request
/// with an approving review, no force pushes or deletions, and the gate's check from the App.
pub fn ruleset_default_branch(app_id: u64) -> Value {
    json!({
        "name": "agent-team-apply: default branch",
        "target": "branch",
        "enforcement": "active",
        "conditions": { "ref_name": { "include": ["~DEFAULT_BRANCH"], "exclude": [] } },
        "bypass_actors": [],
        "rules": [
            { "type": "deletion" },
            { "type": "non_fast_forward" },
            { "type": "pull_request", "parameters": {
                "required_approving_review_count": 1,
                "dismiss_stale_reviews_on_push": true,
                "require_code_owner_review": true,
                "require_last_push_approval": true,
                "required_review_thread_resolution": false,
            } },
            { "type": "required_status_checks", "parameters": {
                "strict_required_status_checks_policy": false,
                "do_not_enforce_on_create": false,
                "required_status_checks": [ { "context": CHECK_NAME, "integration_id": app_id } ],
            } },
        ],
    })
}

/// `refs/heads/agent-team/**`: creation, update and deletion restricted, the App alone on the
/// bypass list.
pub fn ruleset_agent_team_branches(app_id: u64) -> Value {
    json!({
        "name": "agent-team-apply: agent-team/** branches",
        "target": "branch",
        "enforcement": "active",
        "conditions": { "ref_name": { "include": ["refs/heads/agent-team/**"], "exclude": [] } },
        "bypass_actors": [ { "actor_id": app_id, "actor_type": "Integration", "bypass_mode": "always" } ],
        "rules": [
            { "type": "creation" },
            { "type": "update" },
            { "type": "deletion" },
            { "type": "non_fast_forward" },
        ],
    })
}

fn pretty(what: &'static str, value: &Value) -> Result<String, InitError> {
    serde_json::to_string_pretty(value)
        .map(|s| format!("{s}\n"))
        .map_err(|e| InitError::Serialize {
            what,
            message: e.to_string(),
        })
}

/// Every file and step, from `request`; reads only which marker files exist.
pub fn plan(request: &InitRequest) -> Result<Plan, InitError> {
    let build_system = match request.build_system {
        Some(system) => system,
        None => {
            let found = detect(&request.dir)?;
            match found.as_slice() {
                [] => {
                    return Err(InitError::NotDetected {
                        dir: request.dir.display().to_string(),
                    });
                }
                [one] => *one,
                several => {
                    return Err(InitError::Ambiguous {
                        dir: request.dir.display().to_string(),
                        found: several
                            .iter()
                            .map(|s| s.name())
                            .collect::<Vec<_>>()
                            .join(", "),
                    });
                }
            }
        }
    };
    if let Some(pin) = &request.pin {
        check_pin(pin)?;
    }
    let caller = match &request.pin {
        Some(pin) => build_system.caller_template().replace(PLACEHOLDER_PIN, pin),
        None => build_system.caller_template().to_owned(),
    };
    let mut files = vec![
        PlannedFile {
            path: CALLER_PATH,
            contents: caller,
        },
        PlannedFile {
            path: POLICY_PATH,
            contents: build_system.policy_template().to_owned(),
        },
        PlannedFile {
            path: MANIFEST_PATH,
            contents: pretty(
                "the App manifest",
                &app_manifest(request.repository.as_deref()),
            )?,
        },
    ];
    if let Some(id) = request.app_id {
        files.push(PlannedFile {
            path: RULESET_DEFAULT_PATH,
            contents: pretty("the default branch's ruleset", &ruleset_default_branch(id))?,
        });
        files.push(PlannedFile {
            path: RULESET_BRANCHES_PATH,
            contents: pretty(
                "the agent-team/** ruleset",
                &ruleset_agent_team_branches(id),
            )?,
        });
    }
    Ok(Plan {
        build_system,
        steps: steps(request),
        files,
    })
}

fn steps(request: &InitRequest) -> Vec<String> {
    let repo = request.repository.as_deref().unwrap_or("OWNER/REPO");
    let mut steps = Vec::new();
    if request.pin.is_none() {
        steps.push(format!(
            "Pin the release: in {CALLER_PATH}, replace @{PLACEHOLDER_PIN} with the full commit the release notes name (keep the `# vX.Y.Z` comment), or rerun with --pin <commit>."
        ));
    }
    steps.push(format!(
        "Create the App from {MANIFEST_PATH} (Settings → Developer settings → GitHub Apps → New GitHub App, with exactly these permissions: contents, pull requests, checks write; no events), generate its private key, and install it on {repo} only."
    ));
    steps.push(format!(
        "Create the environment {ENVIRONMENT}: deployment branches = the default branch only, required reviewers if you want a person to approve each publication; secrets {} (the App's key; `openssl rand -hex 32` for the dispatch key), variable {} (the App's client ID).",
        SECRETS.join(", "),
        VARIABLES.join(", ")
    ));
    steps.push(format!(
        "Create the environment {VERIFY_ENVIRONMENT} (the guard job's): deployment branches = the default branch only, no reviewers; secret {} (the same value as in {ENVIRONMENT}).",
        VERIFY_SECRETS.join(", ")
    ));
    steps.push(
        "Actions settings: workflow permissions Read repository contents, GitHub Actions may not create or approve pull requests; allow select actions only (agent-team/agent-team-apply and the actions it pins).".to_owned(),
    );
    if request.app_id.is_some() {
        steps.push(format!(
            "Rulesets: Settings → Rules → Rulesets → New ruleset → Import a ruleset: {RULESET_DEFAULT_PATH} and {RULESET_BRANCHES_PATH}; if you use agent-team-diffs/** branches, restrict them to the dispatcher's identity."
        ));
    } else {
        steps.push(
            "Rulesets: once the App exists, rerun `gate init --app-id <the App's id>` to write the two rulesets (the default branch's required check and the agent-team/** bypass name the App), then import them (Settings → Rules → Rulesets → Import a ruleset).".to_owned(),
        );
    }
    steps.push(format!(
        "Commit {CALLER_PATH} and {POLICY_PATH} on the default branch through a reviewed pull request; the files under {SETUP_DIR} are for the steps above and need not be committed."
    ));
    steps.push(
        "Dispatcher: install `gate` from the pinned release; its token reads actions, contents, pull requests and checks and has actions: write (and contents: write for agent-team-diffs/** branches); give it AGENT_TEAM_DISPATCH_KEY.".to_owned(),
    );
    steps.push(format!(
        "Check: `GH_TOKEN=<read-only token> gate doctor --repository {repo} --app <the App's slug>` exits 0."
    ));
    steps
}

/// What [`write`] did with each file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    Created,
    Unchanged,
    Replaced,
}

/// Each file and what was done with it, or the files that were in the way.
pub type WriteOutcome = Result<Vec<(&'static str, Written)>, Conflicts>;

/// Files that exist with other contents (refused without `force`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflicts(pub Vec<&'static str>);

fn io(path: &Path, e: &std::io::Error) -> InitError {
    InitError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// Refuse a symbolic link anywhere from `dir` down to `relative`'s parent directories and the
/// file itself.
fn refuse_links(dir: &Path, relative: &str) -> Result<(), InitError> {
    let mut path = dir.to_path_buf();
    for component in relative.split('/') {
        path.push(component);
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(InitError::Symlink {
                    path: path.display().to_string(),
                });
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(io(&path, &e)),
        }
    }
    Ok(())
}

/// Write the plan's files under `dir`. Without `force`, nothing is written when any file exists
/// with other contents (`Ok(Err(conflicts))`).
pub fn write(dir: &Path, plan: &Plan, force: bool) -> Result<WriteOutcome, InitError> {
    let mut actions = Vec::new();
    let mut conflicts = Vec::new();
    for file in &plan.files {
        refuse_links(dir, file.path)?;
        let path = dir.join(file.path);
        let action = match std::fs::read(&path) {
            Ok(existing) if existing == file.contents.as_bytes() => Written::Unchanged,
            Ok(_) => {
                conflicts.push(file.path);
                Written::Replaced
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Written::Created,
            Err(e) => return Err(io(&path, &e)),
        };
        actions.push((file, action));
    }
    if !conflicts.is_empty() && !force {
        return Ok(Err(Conflicts(conflicts)));
    }
    let mut done = Vec::new();
    for (file, action) in actions {
        let path = dir.join(file.path);
        if action != Written::Unchanged {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(|e| io(parent, &e))?;
            }
            std::fs::write(&path, file.contents.as_bytes()).map_err(|e| io(&path, &e))?;
        }
        done.push((file.path, action));
    }
    Ok(Ok(done))
}
