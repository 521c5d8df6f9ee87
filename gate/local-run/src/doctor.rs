//! `local-run --doctor`: `gate doctor` rehearsed offline. The in-process `github-standin` serves
//! the repository `local/greeting` configured as ADOPTING.md's steps leave a repository (the
//! publishing App and its installation, both environments with their branches, reviewers,
//! secrets and variables, the three rulesets, the Actions settings, the caller of `gate init`
//! pinned to a release commit and the starting policy, the release's reusable workflow at that
//! commit), and the real `gate` binary runs `gate doctor` against it over HTTP with the
//! stand-in's URL, as a user runs it against api.github.com. `--doctor-break <setting-id>`
//! leaves that one setting as an unconfigured repository has it, so the doctor names it and its
//! fix.

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

use gate::doctor::Setting;
use gate::init::BuildSystem;
use github_standin::settings::{BranchPolicy, RepositorySettings, put_files};
use github_standin::{Scenario, StandIn};

use crate::samples::{BASE_BRANCH, NAME, OWNER};
use crate::{LocalRunError, io_error};

/// The publishing App of the rehearsal.
pub const APP_ID: u64 = 4711;
pub const APP_SLUG: &str = "greeting-agent-team";
/// The release commit the caller pins (the reusable workflow's repository holds it).
pub const RELEASE_PIN: &str = "0123456789abcdef0123456789abcdef01234567";
const RELEASE_REPOSITORY: &str = "agent-team/agent-team-apply";
const REUSABLE_WORKFLOW: &str = ".github/workflows/agent-team-apply-verify.yml";

/// The settings `--doctor-break` can leave unconfigured, in the doctor's order: every setting
/// but the repository itself (without it nothing is read) and the default branch's required
/// check (an unconfigured repository requires none, which is the setup's state).
pub fn breakable() -> Vec<Setting> {
    Setting::ALL
        .into_iter()
        .filter(|s| !matches!(s, Setting::Repository | Setting::DefaultBranchCheck))
        .collect()
}

/// The ids [`breakable`] lists.
pub fn breakable_ids() -> Vec<&'static str> {
    breakable().into_iter().map(Setting::id).collect()
}

/// What the stand-in serves.
struct Rehearsal {
    scenario: Scenario,
    /// The default branch's files.
    files: Vec<(&'static str, Vec<u8>)>,
}

/// The release's reusable workflow as a release's pin commit holds it: the committed file with
/// the assets' SHA-256 written in (as `.ci/pin-release.sh` writes them).
fn pinned_reusable_workflow() -> Result<Vec<u8>, LocalRunError> {
    let committed = include_str!("../../../.github/workflows/agent-team-apply-verify.yml");
    let zeros = format!("\"{}\"", "0".repeat(64));
    if committed.matches(&zeros).count() != 2 {
        return Err(LocalRunError::Setup(format!(
            "{REUSABLE_WORKFLOW} does not hold the two zero hashes a release's pin commit fills in"
        )));
    }
    Ok(committed
        .replacen(&zeros, &format!("\"{}\"", "a1".repeat(32)), 1)
        .replacen(&zeros, &format!("\"{}\"", "b2".repeat(32)), 1)
        .into_bytes())
}

fn configured() -> Result<Rehearsal, LocalRunError> {
    let system = BuildSystem::Rust;
    let caller = system
        .caller_template()
        .replace(gate::init::PLACEHOLDER_PIN, RELEASE_PIN);
    Ok(Rehearsal {
        scenario: Scenario {
            owner: OWNER.to_owned(),
            repo: NAME.to_owned(),
            settings: RepositorySettings::configured(APP_ID, APP_SLUG, BASE_BRANCH),
            other_files: vec![(
                RELEASE_REPOSITORY.to_owned(),
                RELEASE_PIN.to_owned(),
                REUSABLE_WORKFLOW.to_owned(),
                pinned_reusable_workflow()?,
            )],
            ..Scenario::default()
        },
        files: vec![
            (gate::doctor::CALLER_PATH, caller.into_bytes()),
            (
                gate::doctor::POLICY_PATH,
                system.policy_template().as_bytes().to_vec(),
            ),
            ("Cargo.toml", b"[package]\nname = \"greeting\"\n".to_vec()),
        ],
    })
}

/// Leave `setting` as a repository nobody configured has it (`false`: not [`breakable`]).
fn unconfigure(rehearsal: &mut Rehearsal, setting: Setting) -> bool {
    let settings = &mut rehearsal.scenario.settings;
    let publish = gate::doctor::ENVIRONMENT;
    let verify = gate::doctor::VERIFY_ENVIRONMENT;
    match setting {
        Setting::Repository | Setting::DefaultBranchCheck => return false,
        // The App made without `checks: write`.
        Setting::App => {
            if let Some(app) = settings.app.as_mut() {
                app.permissions.insert("checks".into(), "read".into());
            }
        }
        Setting::AppInstallation => {
            if let Some(app) = settings.app.as_mut() {
                app.installation_permissions = None;
            }
        }
        Setting::Environment => settings.environments.retain(|e| e.name != publish),
        Setting::EnvironmentBranches => {
            for e in settings
                .environments
                .iter_mut()
                .filter(|e| e.name == publish)
            {
                e.branch_policy = BranchPolicy::Any;
            }
        }
        Setting::EnvironmentReviewers => {
            for e in settings
                .environments
                .iter_mut()
                .filter(|e| e.name == publish)
            {
                e.reviewers.clear();
            }
        }
        Setting::EnvironmentSecrets => {
            for e in settings
                .environments
                .iter_mut()
                .filter(|e| e.name == publish)
            {
                e.secrets.clear();
            }
        }
        Setting::EnvironmentVariables => {
            for e in settings
                .environments
                .iter_mut()
                .filter(|e| e.name == publish)
            {
                e.variables.clear();
            }
        }
        Setting::VerifyEnvironment => settings.environments.retain(|e| e.name != verify),
        Setting::DefaultBranchReview => {
            for r in settings
                .rulesets
                .iter_mut()
                .filter(|r| r.include.iter().any(|i| i == "~DEFAULT_BRANCH"))
            {
                r.rules.retain(|rule| rule["type"] != "pull_request");
            }
        }
        Setting::AgentTeamBranches => settings
            .rulesets
            .retain(|r| !r.include.iter().any(|i| i == "refs/heads/agent-team/**")),
        Setting::AgentTeamDiffsBranches => settings.rulesets.retain(|r| {
            !r.include
                .iter()
                .any(|i| i == "refs/heads/agent-team-diffs/**")
        }),
        // GitHub's defaults for a new repository.
        Setting::WorkflowToken => {
            settings.default_workflow_permissions = "write".into();
            settings.can_approve_pull_request_reviews = true;
        }
        Setting::AllowedActions => settings.allowed_actions = "all".into(),
        // The caller as `gate init` writes it before a release is pinned.
        Setting::CallerPin => {
            for (path, bytes) in &mut rehearsal.files {
                if *path == gate::doctor::CALLER_PATH {
                    *bytes = BuildSystem::Rust.caller_template().as_bytes().to_vec();
                }
            }
        }
        // The pinned commit holds no release's reusable workflow.
        Setting::CallerRelease => rehearsal.scenario.other_files.clear(),
        Setting::Policy => rehearsal
            .files
            .retain(|(path, _)| *path != gate::doctor::POLICY_PATH),
        // `Setting` is non-exhaustive: a setting added later is not breakable until listed here
        // (and the test that breaks each breakable setting covers it).
        _ => return false,
    }
    true
}

/// Start the stand-in configured as ADOPTING.md leaves a repository (with `broken` left
/// unconfigured), run `<binaries>/gate doctor` against it, write what it printed (a header of
/// local-run's first) to `out`, and return the doctor's exit code.
pub fn rehearse(
    gate_binary: &Path,
    broken: Option<Setting>,
    out: &mut dyn std::io::Write,
) -> Result<u8, LocalRunError> {
    let mut rehearsal = configured()?;
    if let Some(setting) = broken
        && !unconfigure(&mut rehearsal, setting)
    {
        return Err(LocalRunError::Setup(format!(
            "--doctor-break {}: not a setting the rehearsal can leave unconfigured",
            setting.id()
        )));
    }
    let standin =
        StandIn::start(rehearsal.scenario).map_err(io_error("start the simulated GitHub"))?;
    {
        let mut state = standin.state();
        let files: Vec<(&str, &[u8])> = rehearsal
            .files
            .iter()
            .map(|(p, b)| (*p, b.as_slice()))
            .collect();
        put_files(&mut state, BASE_BRANCH, &files);
    }
    let repository = format!("{OWNER}/{NAME}");
    let url = standin.url();
    let header = match broken {
        None => format!(
            "local-run --doctor: the simulated GitHub at {url} serves {repository} as ADOPTING.md's steps leave it"
        ),
        Some(setting) => format!(
            "local-run --doctor: the simulated GitHub at {url} serves {repository} as ADOPTING.md's steps leave it, except {} (left unconfigured)",
            setting.id()
        ),
    };
    let command_line =
        format!("gate doctor --repository {repository} --app {APP_SLUG} --api-url {url}");
    writeln!(
        out,
        "{header}\nrunning: GH_TOKEN=<the stand-in's token> {command_line}\n"
    )
    .map_err(io_error("write the output"))?;
    let mut command = Command::new(gate_binary);
    command.env_clear();
    if let Some(path) = std::env::var_os("PATH") {
        command.env("PATH", path);
    }
    let output = command
        .env("GH_TOKEN", standin.token())
        .args(["doctor", "--repository", &repository, "--app", APP_SLUG])
        .arg(format!("--api-url={url}"))
        .stdin(Stdio::null())
        .output()
        .map_err(|e| LocalRunError::Setup(format!("cannot run {}: {e}", gate_binary.display())))?;
    // The doctor escapes what it prints; its output is passed on as it is.
    out.write_all(&output.stdout)
        .map_err(io_error("write the output"))?;
    std::io::stderr()
        .write_all(&output.stderr)
        .map_err(io_error("write the doctor's errors"))?;
    Ok(output
        .status
        .code()
        .and_then(|c| u8::try_from(c).ok())
        .unwrap_or(contract::cli::Exit::Error.code()))
}
