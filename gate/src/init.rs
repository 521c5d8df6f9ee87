//! `gate init`: the files an adopting repository starts from, for its build system (detected
//! from its files): the caller workflow (the example caller of [`examples/`], the same file
//! zizmor and the workflow invariants check), a starting policy, the App's manifest with exactly
//! the permissions the gate needs, and the rulesets as JSON GitHub imports; then the remaining
//! steps, in order.
//!
//! [`plan`] computes every file (reading the marker files, an existing caller's pin, and, for
//! readiness, the policy and HEAD's workflows);
//! [`write`] changes only what `gate init` owns and never follows a symbolic link. Re-running
//! is safe: the App's manifest and the rulesets are `gate init`'s and are rewritten; the caller
//! and the policy are the repository's once they exist: the policy is kept as it is, the caller
//! too except its release pin, which `--pin`/`--tag` update in place; `--force` replaces both
//! with the templates (keeping the pin). A caller that does not call the reusable workflow is in
//! the way and is refused without `--force`. [`changes`] says what a run would do, and
//! `--dry-run` shows it as a diff.
//!
//! Readiness ([`scan_readiness`]) reads the workflows of the repository's HEAD as `guard readiness`
//! reads a base commit (local actions and reusable workflows from the same tree), with the
//! readiness settings of the policy the repository will commit. What it finds becomes commented
//! proposals ([`proposals`]) at the end of a new policy: `readiness.protected-environments` for
//! the environments the workflows name, `readiness.accept` for each job found. None is in force
//! until a person uncomments it; a policy that exists is kept, and the proposals are printed.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::doctor::{
    APP_PERMISSIONS, CALLER_PATH, ENVIRONMENT, POLICY_PATH, SECRETS, VARIABLES, VERIFY_ENVIRONMENT,
    VERIFY_SECRETS,
};

/// The placeholder pin of the example callers.
pub const PLACEHOLDER_PIN: &str = "0000000000000000000000000000000000000000";
/// Where the setup documents (the manifest, the rulesets) are written.
pub const SETUP_DIR: &str = ".github/agent-team-setup";
pub const MANIFEST_PATH: &str = ".github/agent-team-setup/app-manifest.json";
pub const RULESET_DEFAULT_PATH: &str = ".github/agent-team-setup/ruleset-default-branch.json";
pub const RULESET_BRANCHES_PATH: &str = ".github/agent-team-setup/ruleset-agent-team-branches.json";

/// A build system `gate init` writes a caller for: an ecosystem and the lock file its fetch
/// reads. Each has its example caller `examples/<name>.yml`, whose `fetch-command` fails with
/// an `::error::` naming the lock file when it is missing (fail closed) and whose
/// `build-command` installs offline from what the fetch downloaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum BuildSystem {
    /// `Cargo.lock`: `cargo fetch --locked`, then `cargo test --locked --offline`.
    Rust,
    /// `go.mod`/`go.sum`: `go mod download`, then `go test` with `GOPROXY=off`.
    Go,
    /// npm's `package-lock.json` (or `npm-shrinkwrap.json`): `npm ci --ignore-scripts`.
    Node,
    /// `pnpm-lock.yaml`: `pnpm fetch`, then an offline, frozen install without scripts.
    NodePnpm,
    /// Yarn 1's `yarn.lock` (no `.yarnrc.yml`): `yarn install --frozen-lockfile`.
    NodeYarn,
    /// Yarn 2+'s `yarn.lock` beside `.yarnrc.yml`: `yarn install --immutable`, builds skipped.
    NodeYarnBerry,
    /// A hash-pinned `requirements.txt`.
    Python,
    /// `uv.lock`, exported with hashes by a hash-pinned uv.
    PythonUv,
    /// `poetry.lock`, exported with hashes by `poetry export`.
    PythonPoetry,
    /// `pdm.lock`, exported with hashes by `pdm export`.
    PythonPdm,
}

/// An ecosystem: the files at a repository's root that mark it, and the lock files that choose
/// its [`BuildSystem`] (the first whose every file exists; the last, with no file, is the
/// default).
struct Ecosystem {
    markers: &'static [&'static str],
    locks: &'static [(&'static [&'static str], BuildSystem)],
}

const ECOSYSTEMS: [Ecosystem; 4] = [
    Ecosystem {
        markers: &["Cargo.toml"],
        locks: &[(&[], BuildSystem::Rust)],
    },
    Ecosystem {
        markers: &["go.mod"],
        locks: &[(&[], BuildSystem::Go)],
    },
    Ecosystem {
        markers: &["package.json"],
        locks: &[
            (&["pnpm-lock.yaml"], BuildSystem::NodePnpm),
            (&["yarn.lock", ".yarnrc.yml"], BuildSystem::NodeYarnBerry),
            (&["yarn.lock"], BuildSystem::NodeYarn),
            (&[], BuildSystem::Node),
        ],
    },
    Ecosystem {
        markers: &["pyproject.toml", "setup.py", "requirements.txt"],
        locks: &[
            (&["uv.lock"], BuildSystem::PythonUv),
            (&["poetry.lock"], BuildSystem::PythonPoetry),
            (&["pdm.lock"], BuildSystem::PythonPdm),
            (&[], BuildSystem::Python),
        ],
    },
];

impl BuildSystem {
    pub const ALL: [BuildSystem; 10] = [
        BuildSystem::Rust,
        BuildSystem::Go,
        BuildSystem::Node,
        BuildSystem::NodePnpm,
        BuildSystem::NodeYarn,
        BuildSystem::NodeYarnBerry,
        BuildSystem::Python,
        BuildSystem::PythonUv,
        BuildSystem::PythonPoetry,
        BuildSystem::PythonPdm,
    ];

    /// Its name, the example caller's file name (`examples/<name>.yml`) and `--build-system`'s
    /// value.
    pub fn name(self) -> &'static str {
        match self {
            BuildSystem::Rust => "rust",
            BuildSystem::Go => "go",
            BuildSystem::Node => "node",
            BuildSystem::NodePnpm => "node-pnpm",
            BuildSystem::NodeYarn => "node-yarn",
            BuildSystem::NodeYarnBerry => "node-yarn-berry",
            BuildSystem::Python => "python",
            BuildSystem::PythonUv => "python-uv",
            BuildSystem::PythonPoetry => "python-poetry",
            BuildSystem::PythonPdm => "python-pdm",
        }
    }

    /// The build system named `name` ([`BuildSystem::name`]).
    pub fn from_name(name: &str) -> Option<BuildSystem> {
        BuildSystem::ALL.into_iter().find(|s| s.name() == name)
    }

    /// The files that mark a repository as this build system's ecosystem, at its root.
    pub fn markers(self) -> &'static [&'static str] {
        ECOSYSTEMS
            .iter()
            .find(|e| e.locks.iter().any(|(_, s)| *s == self))
            .map_or(&[], |e| e.markers)
    }

    /// The example caller (`examples/<name>.yml`).
    pub fn caller_template(self) -> &'static str {
        match self {
            BuildSystem::Rust => include_str!("../../examples/rust.yml"),
            BuildSystem::Go => include_str!("../../examples/go.yml"),
            BuildSystem::Node => include_str!("../../examples/node.yml"),
            BuildSystem::NodePnpm => include_str!("../../examples/node-pnpm.yml"),
            BuildSystem::NodeYarn => include_str!("../../examples/node-yarn.yml"),
            BuildSystem::NodeYarnBerry => include_str!("../../examples/node-yarn-berry.yml"),
            BuildSystem::Python => include_str!("../../examples/python.yml"),
            BuildSystem::PythonUv => include_str!("../../examples/python-uv.yml"),
            BuildSystem::PythonPoetry => include_str!("../../examples/python-poetry.yml"),
            BuildSystem::PythonPdm => include_str!("../../examples/python-pdm.yml"),
        }
    }

    /// The starting policy (`examples/policy/<ecosystem>.yml`; Rust's and Go's need nothing
    /// beyond the embedded default, whose `build.output` already has `target/**` and which
    /// protects their manifests and lock files).
    pub fn policy_template(self) -> &'static str {
        match self {
            BuildSystem::Rust => RUST_POLICY,
            BuildSystem::Go => GO_POLICY,
            BuildSystem::Node
            | BuildSystem::NodePnpm
            | BuildSystem::NodeYarn
            | BuildSystem::NodeYarnBerry => include_str!("../../examples/policy/node.yml"),
            BuildSystem::Python
            | BuildSystem::PythonUv
            | BuildSystem::PythonPoetry
            | BuildSystem::PythonPdm => include_str!("../../examples/policy/python.yml"),
        }
    }
}

const GO_POLICY: &str = "\
# .github/agent-team-policy.yml of a Go repository (read from the dispatched commit; .github/**
# is in the denied surface, so no diff can change it). On top of guard's embedded default policy,
# which already protects go.mod, go.sum, go.work and go.work.sum.
version: 1
";

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
        "no build system detected in {dir}: none of Cargo.toml, go.mod, package.json, pyproject.toml, setup.py, requirements.txt; pass --build-system"
    )]
    NotDetected { dir: String },
    #[error("several build systems detected in {dir} ({found}); pass --build-system")]
    Ambiguous { dir: String, found: String },
    #[error("--pin {found:?} is not a full commit SHA (40 lowercase hex digits, not all zero)")]
    Pin { found: String },
    #[error("--tag {found:?} is not a release tag vX.Y.Z: {problem}")]
    Tag {
        found: String,
        problem: &'static str,
    },
    #[error("--pin and --tag go together: the commit a release's tag names, and the tag")]
    PinWithoutTag,
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
    /// The release commit the caller pins (with [`InitRequest::tag`]); when `None`, an existing
    /// caller's pin is kept, else the placeholder.
    pub pin: Option<String>,
    /// The release's tag `vX.Y.Z`, written beside the pin.
    pub tag: Option<String>,
    /// The App's id: the agent-team/** ruleset is written only when it is known (it names it).
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

#[derive(Debug, Clone)]
pub struct Plan {
    pub build_system: BuildSystem,
    pub files: Vec<PlannedFile>,
    /// The remaining steps, in order.
    pub steps: Vec<String>,
    /// What readiness found in HEAD's workflows.
    pub readiness: ReadinessScan,
    /// The commented proposals of [`Plan::readiness`] (YAML comment lines, each starting with
    /// `#`), appended to a new policy; empty when there is nothing to propose.
    pub proposals: String,
}

/// What `gate init` found running readiness (as `guard readiness` does) on the workflows of
/// the repository's HEAD.
#[derive(Debug, Clone)]
pub enum ReadinessScan {
    /// Not run, and why (no git repository at the directory, no commit at HEAD, a policy that
    /// cannot be read).
    NotRun(String),
    Ran {
        commit: String,
        /// The branch the default branch was taken to be (HEAD's).
        base_branch: String,
        workflows: Vec<String>,
        findings: Vec<guard::readiness::Finding>,
        /// Environments the workflows name that the policy does not list as protected.
        environments: Vec<String>,
    },
}

/// The branch readiness imagines the publication pushes.
const READINESS_BRANCH: &str = "agent-team/gate-init";

/// Readiness over the workflows of HEAD's tree of the repository at `dir`, judged with the
/// readiness settings of `policy_text` (the policy the repository will commit).
pub fn scan_readiness(dir: &Path, policy_text: &str, repository: Option<&str>) -> ReadinessScan {
    use guard::readiness::{Reads, Target, assess_commit};
    let repo = match guard::git::GitRepo::open(dir) {
        Ok(repo) => repo,
        Err(e) => {
            return ReadinessScan::NotRun(format!(
                "{} is not a git repository ({e})",
                dir.display()
            ));
        }
    };
    let commit = match repo.resolve_commit("HEAD") {
        Ok(commit) => commit,
        Err(e) => return ReadinessScan::NotRun(format!("no commit at HEAD ({e})")),
    };
    let policy = match guard::policy::Policy::from_yaml(policy_text) {
        Ok(policy) => policy,
        Err(e) => {
            return ReadinessScan::NotRun(format!("the policy {POLICY_PATH} cannot be read: {e}"));
        }
    };
    let mut branch = guard::git::command(dir);
    branch.args(["symbolic-ref", "--quiet", "--short", "HEAD"]);
    let base_branch = branch
        .output()
        .ok()
        .filter(|out| out.status.success())
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "main".to_owned());
    let target = Target {
        branch: READINESS_BRANCH.to_owned(),
        base_branch: base_branch.clone(),
        repository: repository.unwrap_or("OWNER/REPO").to_owned(),
    };
    match assess_commit(&repo, &commit, &target, &policy.readiness, Reads::Both) {
        Ok(found) => {
            let protected = &policy.readiness.protected_environments;
            let environments = found
                .environments
                .into_iter()
                .filter(|e| !protected.iter().any(|p| p.eq_ignore_ascii_case(e)))
                .collect();
            ReadinessScan::Ran {
                commit,
                base_branch,
                workflows: found.workflows,
                findings: found.findings,
                environments,
            }
        }
        Err(e) => ReadinessScan::NotRun(format!("cannot read HEAD's workflows: {e}")),
    }
}

/// `text` as a YAML double-quoted scalar that is printable ASCII on one line: `"` and `\`
/// escaped, every other character outside printable ASCII as `\uXXXX` (or `\UXXXXXXXX`), so no
/// value can end the comment it sits in.
fn yaml_quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    out.push_str(&yaml_escaped(text));
    out.push('"');
    out
}

fn yaml_escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            ' '..='~' => out.push(c),
            c if (c as u32) <= 0xffff => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out
}

/// The commented proposals for `scan`: `readiness.protected-environments` for the environments
/// the workflows name and `readiness.accept` for each job found, every line a YAML comment that,
/// with its leading `# ` removed, is the policy entry. Empty when there is nothing to propose.
pub fn proposals(scan: &ReadinessScan) -> String {
    let ReadinessScan::Ran {
        commit,
        findings,
        environments,
        ..
    } = scan
    else {
        return String::new();
    };
    let mut jobs: Vec<(&str, &str, &guard::readiness::Finding)> = Vec::new();
    for finding in findings.iter().filter(|f| f.accepted.is_none()) {
        if let Some(job) = &finding.job
            && !jobs
                .iter()
                .any(|(w, j, _)| *w == finding.workflow && *j == job.as_str())
        {
            jobs.push((&finding.workflow, job, finding));
        }
    }
    if jobs.is_empty() && environments.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "\n# Proposals of `gate init`, which read the workflows of {commit} as `guard readiness` reads\n\
         # them for an agent-team/** branch. None is in force: each is commented out. Uncomment one\n\
         # (remove the leading `# `) only after checking it; a rerun of `gate init` keeps this file.\n\
         # readiness:\n"
    );
    if !environments.is_empty() {
        out.push_str(
            "#   # Environments the workflows name. List one only once its protection rules are\n\
             #   # checked: required reviewers, or deployment branches that exclude agent-team/**.\n\
             #   protected-environments:\n",
        );
        for name in environments {
            out.push_str(&format!("#     - {}\n", yaml_quoted(name)));
        }
    }
    if !jobs.is_empty() {
        out.push_str(
            "#   # Jobs that would run the branch's code with credentials before a person decided.\n\
             #   # Better: fix the job (the `fix` of `guard readiness`); accept it only with a reason.\n\
             #   accept:\n",
        );
        for (workflow, job, finding) in jobs {
            out.push_str(&format!(
                "#     # {}: {}\n#     - workflow: {}\n#       job: {}\n#       reason: \"REPLACE: why this job's credentials are safe on agent-team/** branches\"\n",
                finding.rule,
                yaml_escaped(&finding.message()),
                yaml_quoted(workflow),
                yaml_quoted(job),
            ));
        }
    }
    out
}

/// Whether `name` exists at `dir`'s root (a symbolic link counts: it is not followed).
fn exists(dir: &Path, name: &str) -> Result<bool, InitError> {
    let path = dir.join(name);
    match std::fs::symlink_metadata(&path) {
        Ok(_) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(InitError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        }),
    }
}

/// The build systems of the ecosystems whose markers exist at `dir`'s root, one for each: the
/// first of its lock files that exists chooses it. Two lock files of one ecosystem (`uv.lock`
/// and `poetry.lock`) are ambiguous: both are named, and none is chosen.
pub fn detect(dir: &Path) -> Result<Vec<BuildSystem>, InitError> {
    let mut found = Vec::new();
    for ecosystem in &ECOSYSTEMS {
        let mut marked = false;
        for marker in ecosystem.markers {
            if exists(dir, marker)? {
                marked = true;
                break;
            }
        }
        if !marked {
            continue;
        }
        let mut chosen = Vec::new();
        for (files, system) in ecosystem.locks {
            let mut all = true;
            for file in *files {
                all &= exists(dir, file)?;
            }
            // Yarn 2+ (yarn.lock and .yarnrc.yml) is one choice, not also Yarn 1.
            let covered = chosen
                .iter()
                .any(|c: &(&[&str], BuildSystem)| files.iter().all(|f| c.0.contains(f)));
            if all && !files.is_empty() && !covered {
                chosen.push((*files, *system));
            }
        }
        match chosen.as_slice() {
            [] => found.extend(ecosystem.locks.last().map(|(_, s)| *s)),
            several => found.extend(several.iter().map(|(_, s)| *s)),
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
/// <https://docs.github.com/en/rest/repos/rules#create-a-repository-ruleset>): every pull request
/// needs an approving review (code owners', of the latest push, stale approvals dismissed), and
/// no force pushes or deletions. It applies alike to people, Dependabot and the agent, and names
/// no actor, so it needs no App id.
///
/// It requires no status check, on purpose. A ruleset targets the branch a pull request merges
/// into, never the branch it comes from ("Creating rulesets for a repository", *Targeting
/// branches or tags*,
/// <https://docs.github.com/en/repositories/configuring-branches-and-merges-in-your-repository/managing-rulesets/creating-rulesets-for-a-repository#using-fnmatch-syntax>),
/// and a required status check must pass on every pull request into its target ("Available
/// rules for rulesets", *Require status checks to pass before merging*,
/// <https://docs.github.com/en/repositories/configuring-branches-and-merges-in-your-repository/managing-rulesets/available-rules-for-rulesets#require-status-checks-to-pass-before-merging>):
/// requiring `agent-team-apply / gate` would block every pull request the App did not publish,
/// people's and Dependabot's. The agent's pull requests are held by
/// [`ruleset_agent_team_branches`] instead: only the App may write `agent-team/**`, and it
/// writes a branch only in `publish`, after `decide` passed, with its check run on the head.
pub fn ruleset_default_branch() -> Value {
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
    let release = match (&request.pin, &request.tag) {
        (Some(pin), Some(tag)) => {
            check_pin(pin)?;
            if let Some(problem) = crate::release::version_problem(tag) {
                return Err(InitError::Tag {
                    found: tag.clone(),
                    problem,
                });
            }
            Some((pin.clone(), Some(tag.clone())))
        }
        (Some(_), None) | (None, Some(_)) => return Err(InitError::PinWithoutTag),
        (None, None) => existing_release(&request.dir)?,
    };
    let mut caller = build_system.caller_template().to_owned();
    if let Some((pin, tag)) = &release {
        caller = with_release(&caller, pin, tag.as_deref()).unwrap_or(caller);
    }
    refuse_links(&request.dir, POLICY_PATH)?;
    let policy_path = request.dir.join(POLICY_PATH);
    let existing_policy = match std::fs::read(&policy_path) {
        Ok(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(io(&policy_path, &e)),
    };
    let readiness = scan_readiness(
        &request.dir,
        existing_policy
            .as_deref()
            .unwrap_or(build_system.policy_template()),
        request.repository.as_deref(),
    );
    let proposals = proposals(&readiness);
    let mut files = vec![
        PlannedFile {
            path: CALLER_PATH,
            contents: caller,
        },
        PlannedFile {
            path: POLICY_PATH,
            contents: format!("{}{proposals}", build_system.policy_template()),
        },
        PlannedFile {
            path: MANIFEST_PATH,
            contents: pretty(
                "the App manifest",
                &app_manifest(request.repository.as_deref()),
            )?,
        },
    ];
    files.push(PlannedFile {
        path: RULESET_DEFAULT_PATH,
        contents: pretty("the default branch's ruleset", &ruleset_default_branch())?,
    });
    if let Some(id) = request.app_id {
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
        steps: steps(request, release.is_some()),
        files,
        readiness,
        proposals,
    })
}

/// The marker of the caller's line that pins the reusable workflow.
const PIN_MARKER: &str = "/.github/workflows/agent-team-apply-verify.yml@";

/// `caller` with the reusable workflow's pin line set to `pin # tag` (the tag, when `None`, as
/// the line had it); `None` when no line pins the reusable workflow.
fn with_release(caller: &str, pin: &str, tag: Option<&str>) -> Option<String> {
    let mut found = false;
    let mut out = String::with_capacity(caller.len());
    for line in caller.split_inclusive('\n') {
        let body = line.trim_end_matches('\n');
        match body.find(PIN_MARKER) {
            Some(at) if !found && body.trim_start().starts_with("uses:") => {
                found = true;
                let head = &body[..at + PIN_MARKER.len()];
                let old_tag = body.split_once('#').map(|(_, c)| c.trim().to_owned());
                out.push_str(head);
                out.push_str(pin);
                if let Some(tag) = tag.map(str::to_owned).or(old_tag) {
                    out.push_str(" # ");
                    out.push_str(&tag);
                }
                out.push_str(&line[body.len()..]);
            }
            _ => out.push_str(line),
        }
    }
    found.then_some(out)
}

/// The release an existing caller pins: its commit and the `# vX.Y.Z` beside it (when it is
/// one); `None` when there is no caller, or it pins the placeholder or nothing readable.
fn existing_release(dir: &Path) -> Result<Option<(String, Option<String>)>, InitError> {
    refuse_links(dir, CALLER_PATH)?;
    let path = dir.join(CALLER_PATH);
    let text = match std::fs::read(&path) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(&path, &e)),
    };
    Ok(release_line(&text))
}

/// The setup's steps, in order: ADOPTING.md's "Setting up" has one heading `### N. <title>` for
/// each, in this order (a test holds them together), and `gate init` prints each as
/// `N. <title>: <what to do>`.
pub const STEP_TITLES: [&str; 8] = [
    "Pin a release and run gate init",
    "Create the publishing App",
    "Create the two environments and their secrets",
    "Restrict the Actions settings",
    "Import the rulesets",
    "Commit the caller and the policy",
    "Set up the dispatcher",
    "Check the settings with gate doctor",
];

fn steps(request: &InitRequest, pinned: bool) -> Vec<String> {
    let repo = request.repository.as_deref().unwrap_or("OWNER/REPO");
    let pin = if pinned {
        format!(
            "done: {CALLER_PATH} pins a release (rerun with --pin <commit> --tag vX.Y.Z to move it; nothing else changes)."
        )
    } else {
        format!(
            "rerun with --pin <the commit the release's tag names> --tag vX.Y.Z (it changes only that line of {CALLER_PATH}), or replace @{PLACEHOLDER_PIN} and the `# vX.Y.Z` beside it by hand."
        )
    };
    let app = format!(
        "`gate app create --kind publish --repository {repo} --key-out app.pem` (`--org` for an organisation's repository) registers it from its manifest and writes its key (by hand: from {MANIFEST_PATH}, Settings → Developer settings → GitHub Apps → New GitHub App, with exactly these permissions: contents, pull requests, checks write; no webhook, no events; then generate its private key); install it on {repo} only."
    );
    let environments = format!(
        "Create the environment {VERIFY_ENVIRONMENT} (the guard job's): deployment branches and tags = Selected branches and tags, the default branch only, no reviewers; secret {}. Create the environment {ENVIRONMENT}: the default branch only, required reviewers if a person should approve each publication; secrets {} (the App's key) and {} (`openssl rand -hex 32`, the same value in both), variable {} (the App's client ID); the variable AGENT_TEAM_APP_ID (the App's id) in both.",
        VERIFY_SECRETS.join(", "),
        SECRETS[0],
        SECRETS[1],
        VARIABLES.join(", ")
    );
    let actions = "workflow permissions: read repository contents and packages; GitHub Actions may not create or approve pull requests; allow select actions only (agent-team/agent-team-apply, the actions it pins and your own workflows' actions); fork pull request workflows: require approval for all external contributors.".to_owned();
    let rulesets = if request.app_id.is_some() {
        format!(
            "Settings → Rules → Rulesets → New ruleset → Import a ruleset: {RULESET_DEFAULT_PATH} (a reviewed pull request for everyone, people and Dependabot included; no required status check, so their pull requests are not blocked) and {RULESET_BRANCHES_PATH} (agent-team/** written by the App alone: what holds the agent's pull requests); if you use agent-team-diffs/** branches, restrict them to the dispatcher's identity."
        )
    } else {
        format!(
            "import {RULESET_DEFAULT_PATH} now (Settings → Rules → Rulesets → New ruleset → Import a ruleset: a reviewed pull request for everyone, no required status check); once the App exists, rerun `gate init --app-id <the App's id>` to write {RULESET_BRANCHES_PATH} (agent-team/** written by the App alone; it names the App) and import it."
        )
    };
    let commit = format!(
        "commit {CALLER_PATH} and {POLICY_PATH} on the default branch through a reviewed pull request; the files under {SETUP_DIR} are for the steps above and need not be committed."
    );
    let dispatcher = "install `gate` from the pinned release on a machine the agent cannot reach; its token reads actions, contents, pull requests and checks and has actions: write (and contents: write for agent-team-diffs/** branches); give it AGENT_TEAM_DISPATCH_KEY.".to_owned();
    let doctor = format!(
        "`GH_TOKEN=<read-only token> gate doctor --repository {repo} --app <the App's slug>` exits 0."
    );
    let texts = [
        pin,
        app,
        environments,
        actions,
        rulesets,
        commit,
        dispatcher,
        doctor,
    ];
    STEP_TITLES
        .iter()
        .zip(texts)
        .map(|(title, text)| format!("{title}: {text}"))
        .collect()
}

/// What [`write`] did (or, for [`changes`], would do) with each file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    Created,
    Unchanged,
    /// Replaced by the template: `gate init`'s own files, or the caller and policy with `--force`.
    Replaced,
    /// The caller's release pin line changed, nothing else.
    Updated,
    /// The repository's own version, different from the template, left as it is.
    Kept,
}

/// One file's change: what is there now (`None`: nothing) and what it becomes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub path: &'static str,
    pub action: Written,
    pub before: Option<String>,
    pub after: String,
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

/// What writing the plan under `dir` would do, file by file, without writing: see the module
/// documentation for who owns which file. `Err(conflicts)`: a caller that does not call the
/// reusable workflow is in the way (without `force`).
pub fn changes(
    dir: &Path,
    plan: &Plan,
    force: bool,
) -> Result<Result<Vec<Change>, Conflicts>, InitError> {
    let mut out = Vec::new();
    let mut conflicts = Vec::new();
    for file in &plan.files {
        refuse_links(dir, file.path)?;
        let path = dir.join(file.path);
        let before = match std::fs::read(&path) {
            Ok(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(io(&path, &e)),
        };
        let (action, after) = match &before {
            None => (Written::Created, file.contents.clone()),
            Some(existing) if *existing == file.contents => {
                (Written::Unchanged, file.contents.clone())
            }
            Some(_) if force => (Written::Replaced, file.contents.clone()),
            Some(existing) if file.path == POLICY_PATH => (Written::Kept, existing.clone()),
            Some(existing) if file.path == CALLER_PATH => {
                match release_line(&file.contents)
                    .and_then(|(pin, tag)| with_release(existing, &pin, tag.as_deref()))
                {
                    Some(updated) if updated == *existing => (Written::Kept, updated),
                    Some(updated) => (Written::Updated, updated),
                    // The template pins the placeholder: the caller keeps whatever it pins.
                    None if with_release(existing, PLACEHOLDER_PIN, None).is_some() => {
                        (Written::Kept, existing.clone())
                    }
                    None => {
                        conflicts.push(file.path);
                        (Written::Replaced, file.contents.clone())
                    }
                }
            }
            Some(_) => (Written::Replaced, file.contents.clone()),
        };
        out.push(Change {
            path: file.path,
            action,
            before,
            after,
        });
    }
    if conflicts.is_empty() {
        Ok(Ok(out))
    } else {
        Ok(Err(Conflicts(conflicts)))
    }
}

/// The release a caller's text pins on its `uses: …agent-team-apply-verify.yml@` line: the
/// commit, unless the placeholder, and the `# vX.Y.Z` beside it when it is one.
fn release_line(caller: &str) -> Option<(String, Option<String>)> {
    caller.lines().find_map(|line| {
        let at = line.find(PIN_MARKER)?;
        line.trim_start().starts_with("uses:").then_some(())?;
        let rest = &line[at + PIN_MARKER.len()..];
        let pin = rest.split_whitespace().next()?;
        check_pin(pin).ok()?;
        let tag = rest
            .split_once('#')
            .and_then(|(_, c)| c.split_whitespace().next())
            .filter(|t| crate::release::version_problem(t).is_none())
            .map(str::to_owned);
        Some((pin.to_owned(), tag))
    })
}

/// Write the plan's files under `dir` as [`changes`] says; nothing is written when a file is
/// in the way (`Ok(Err(conflicts))`).
pub fn write(dir: &Path, plan: &Plan, force: bool) -> Result<WriteOutcome, InitError> {
    let changes = match changes(dir, plan, force)? {
        Ok(changes) => changes,
        Err(conflicts) => return Ok(Err(conflicts)),
    };
    let mut done = Vec::new();
    for change in changes {
        if matches!(
            change.action,
            Written::Created | Written::Replaced | Written::Updated
        ) {
            let path = dir.join(change.path);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(|e| io(parent, &e))?;
            }
            std::fs::write(&path, change.after.as_bytes()).map_err(|e| io(&path, &e))?;
        }
        done.push((change.path, change.action));
    }
    Ok(Ok(done))
}
