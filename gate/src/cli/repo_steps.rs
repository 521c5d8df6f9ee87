//! The workflow's API reads and its token revocation, through the one GitHub client: the REST
//! API named by `GITHUB_API_URL` (github.com, GitHub Enterprise Server, or a stand-in), with the
//! token from `GH_TOKEN` only, which reaches no output. They replace `gh api` calls, which read
//! neither `GITHUB_API_URL` nor, on an Enterprise Server, `GH_TOKEN`.
//!
//! - `gate require-base`: exit 0 only when the base commit is the default branch's head or
//!   behind it (GitHub's compare status `ahead` or `identical` from base to branch); for a
//!   revision (`--revise N`, the signed `revise_pull_request`), only when it is the task
//!   branch's head now (`--branch`): the draft's head the diff applies to.
//! - `gate fetch-diff`: the bytes of `<task id>.patch` on the dispatcher's diff branch, written
//!   to a file; the caller re-hashes them.
//! - `gate revoke-token`: revokes the installation token in `GH_TOKEN`.
//! - `gate branch-head`: prints the commit a branch points at now.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use contract::cli::{Exit, write_atomic};
use contract::ids::CommitId;
use gate::publish::{branch_name_problem, repository_problem};
use github::{ApiUrl, Client, ClientConfig, ProxySettings, Repository, SystemClock, Token};
use guard::escape::neutralize;
use guard::inputs::TaskId;

/// Largest diff read (GitHub serves raw contents up to 100 MB; the guard's own limit is lower).
const MAX_DIFF_BYTES: u64 = 64 << 20;
/// Each command's time limit.
const TIMEOUT: Duration = Duration::from_secs(300);

#[derive(Args)]
pub struct RequireBaseArgs {
    #[arg(long, value_name = "OWNER/NAME")]
    repository: String,
    /// The base commit (40 hex digits).
    #[arg(long, value_name = "SHA")]
    base: String,
    /// The repository's default branch.
    #[arg(long, value_name = "NAME")]
    default_branch: String,
    /// The `revise_pull_request` input: empty for a first round; else the base must be the head
    /// of --branch.
    #[arg(long, value_name = "NUMBER", default_value = "")]
    revise: String,
    /// The task branch (`agent-team/<task id>`), with --revise.
    #[arg(long, value_name = "NAME")]
    branch: Option<String>,
}

#[derive(Args)]
pub struct FetchDiffArgs {
    #[arg(long, value_name = "OWNER/NAME")]
    repository: String,
    /// The task id: the file read is `<task id>.patch`.
    #[arg(long, value_name = "ID")]
    task_id: String,
    /// The branch (or commit) holding it: the dispatch's `diff_ref`.
    #[arg(long = "ref", value_name = "REF")]
    git_ref: String,
    /// Where to write the bytes (atomically).
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
}

#[derive(Args)]
pub struct RevokeTokenArgs {}

#[derive(Args)]
pub struct BranchHeadArgs {
    #[arg(long, value_name = "OWNER/NAME")]
    repository: String,
    /// The branch (unqualified).
    #[arg(long, value_name = "NAME")]
    branch: String,
}

fn env_text(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Only `GH_TOKEN`: each step names the token it means (the job's `github.token`, or the App's).
fn gh_token_only(name: &str) -> Option<String> {
    (name == "GH_TOKEN").then(|| env_text(name)).flatten()
}

pub(crate) fn client() -> Result<Client, String> {
    let token = Token::from_env(&gh_token_only).map_err(|e| match e {
        github::ConfigError::NoToken => {
            "no token: set GH_TOKEN (GITHUB_TOKEN is not read)".to_owned()
        }
        other => other.to_string(),
    })?;
    let api_url = ApiUrl::resolve(None, &env_text).map_err(|e| e.to_string())?;
    let mut config = ClientConfig::new(api_url, token, Arc::new(SystemClock::new()));
    config.proxy = ProxySettings::from_env(&env_text);
    config.deadline = Some(TIMEOUT);
    config.max_body_bytes = MAX_DIFF_BYTES;
    Client::new(config).map_err(|e| e.to_string())
}

pub(crate) fn repository(value: &str) -> Result<Repository, String> {
    match Repository::parse(value) {
        Ok(repo) if repository_problem(value).is_none() => Ok(repo),
        _ => Err(format!("--repository {value:?} is not OWNER/NAME")),
    }
}

fn finish(command: &str, result: Result<u8, String>) -> u8 {
    match result {
        Ok(code) => code,
        Err(message) => {
            eprintln!("gate {command}: error: {}", neutralize(&message));
            Exit::Error.code()
        }
    }
}

pub fn require_base(args: RequireBaseArgs) -> u8 {
    finish("require-base", require_base_inner(&args))
}

fn require_base_inner(args: &RequireBaseArgs) -> Result<u8, String> {
    let repo = repository(&args.repository)?;
    let base = CommitId::parse(&args.base).map_err(|e| format!("--base: {e}"))?;
    if let Some(problem) = branch_name_problem(&args.default_branch) {
        return Err(format!(
            "--default-branch {:?}: {problem}",
            args.default_branch
        ));
    }
    let revision =
        gate::dispatch_mac::parse_revision(&args.revise).map_err(|e| format!("--revise: {e}"))?;
    if let Some(number) = revision {
        let branch = args
            .branch
            .as_deref()
            .ok_or("--revise needs --branch (the task branch)")?;
        if let Some(problem) = branch_name_problem(branch) {
            return Err(format!("--branch {branch:?}: {problem}"));
        }
        let client = client()?;
        let head = client
            .get_ref(&repo, &format!("heads/{branch}"))
            .map_err(|e| client.redact(&e.to_string()))?
            .map(|r| r.object.sha);
        if head.as_deref() == Some(base.as_str()) {
            println!(
                "base {} is the head of {} (revision of pull request #{number})",
                base.as_str(),
                neutralize(branch)
            );
            return Ok(Exit::Pass.code());
        }
        eprintln!(
            "gate require-base: base_sha {} is not the head of {} ({}): a revision of pull request #{number} applies to the draft's current head; dispatch again on it",
            base.as_str(),
            neutralize(branch),
            head.as_deref()
                .map_or("no such branch".to_owned(), neutralize)
        );
        return Ok(Exit::Fail.code());
    }
    let client = client()?;
    let comparison = client
        .compare(&repo, base.as_str(), &args.default_branch)
        .map_err(|e| client.redact(&e.to_string()))?;
    match comparison.status.as_str() {
        "ahead" | "identical" => {
            println!(
                "base {} is on {} (compare status: {})",
                base.as_str(),
                neutralize(&args.default_branch),
                comparison.status
            );
            Ok(Exit::Pass.code())
        }
        other => {
            eprintln!(
                "gate require-base: base_sha {} is not an ancestor of the default branch {} (compare status: {})",
                base.as_str(),
                neutralize(&args.default_branch),
                neutralize(other)
            );
            Ok(Exit::Fail.code())
        }
    }
}

pub fn fetch_diff(args: FetchDiffArgs) -> u8 {
    finish("fetch-diff", fetch_diff_inner(&args))
}

fn fetch_diff_inner(args: &FetchDiffArgs) -> Result<u8, String> {
    let repo = repository(&args.repository)?;
    let task = TaskId::parse(&args.task_id).map_err(|e| format!("--task-id: {e}"))?;
    if CommitId::parse(&args.git_ref).is_err()
        && let Some(problem) = branch_name_problem(&args.git_ref)
    {
        return Err(format!("--ref {:?}: {problem}", args.git_ref));
    }
    let client = client()?;
    let path = format!("{}.patch", task.as_str());
    let bytes = client
        .raw_contents(&repo, &path, &args.git_ref)
        .map_err(|e| client.redact(&e.to_string()))?;
    write_atomic(&args.out, &bytes)?;
    Ok(Exit::Pass.code())
}

pub fn revoke_token(_args: RevokeTokenArgs) -> u8 {
    finish("revoke-token", revoke_token_inner())
}

fn revoke_token_inner() -> Result<u8, String> {
    let client = client()?;
    client
        .revoke_installation_token()
        .map_err(|e| client.redact(&e.to_string()))?;
    println!("installation token revoked");
    Ok(Exit::Pass.code())
}

pub fn branch_head(args: BranchHeadArgs) -> u8 {
    finish("branch-head", branch_head_inner(&args))
}

fn branch_head_inner(args: &BranchHeadArgs) -> Result<u8, String> {
    let repo = repository(&args.repository)?;
    if let Some(problem) = branch_name_problem(&args.branch) {
        return Err(format!("--branch {:?}: {problem}", args.branch));
    }
    let client = client()?;
    let found = client
        .get_ref(&repo, &format!("heads/{}", args.branch))
        .map_err(|e| client.redact(&e.to_string()))?;
    let Some(found) = found else {
        return Err(format!("no branch {}", neutralize(&args.branch)));
    };
    if found.object.kind != "commit" {
        return Err(format!(
            "branch {} points at a {}, not a commit",
            neutralize(&args.branch),
            neutralize(&found.object.kind)
        ));
    }
    let commit = CommitId::parse(&found.object.sha).map_err(|e| format!("the branch head: {e}"))?;
    println!("{}", commit.as_str());
    Ok(Exit::Pass.code())
}
