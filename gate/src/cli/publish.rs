//! `gate publish`: perform a publication plan on GitHub and prove it ([`gate::publication`]).
//!
//! The token comes from `GH_TOKEN` only, never from a flag or from `GITHUB_TOKEN`: the App's
//! installation token is the one identity that may publish (and the one GitHub signs the commit
//! as); an ambient `GITHUB_TOKEN` must not stand in for it. It reaches no output.
//!
//! The publishing App's id (`--app-id`, else `AGENT_TEAM_APP_ID`) is required: the dispatch's
//! replay record is that App's check run on the base ([`gate::replay`]), looked up by it and
//! written before the branch; a token of another App is refused before anything else is written.
//!
//! Exit 0: published and proven (the commit's tree is git's, the branch points at it, the draft
//! pull request exists, the check run is posted). 1: GitHub's state shows the publication did not
//! happen as planned or GitHub refused it. 2: usage, configuration or I/O error, or a result that
//! could not be established. The result document (`agent-team-apply/publish-result/v1`) is written
//! in every case once the arguments are valid.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use contract::cli::{Exit, emit, read_bounded, write_atomic};
use contract::ids::CommitId;
use gate::names::{Reviewers, check_check_run_name, check_label};
use gate::output::publish_plan_v2::PublishPlanDoc;
use gate::publication::{PROTECTED_LABEL, PublicationRequest, publish};
use gate::publish::{branch_name_problem, repository_problem};
use github::{ApiUrl, Client, ClientConfig, ProxySettings, Repository, SystemClock, Token};
use guard::escape::neutralize;
use report::check_run::{DEFAULT_CHECK_NAME, parse_decision};

/// Largest plan read (the contents of every new file, base64).
const MAX_PLAN_BYTES: u64 = 512 << 20;
/// Largest decision or verdict read.
const MAX_DOCUMENT_BYTES: u64 = 64 << 20;

#[derive(Args)]
pub struct PublishArgs {
    /// The plan `gate publish-plan` wrote (`agent-team-apply/publish-plan/v2`).
    #[arg(long, value_name = "FILE")]
    plan: String,
    /// OWNER/NAME; the plan must be for it.
    #[arg(long, value_name = "OWNER/NAME")]
    repository: String,
    /// The branch to publish on (unqualified); the plan must be for it.
    #[arg(long, value_name = "NAME")]
    branch: String,
    /// The base commit (40 hex digits); the plan must be on it.
    #[arg(long, value_name = "SHA")]
    base: String,
    /// The branch the draft pull request targets.
    #[arg(long, value_name = "NAME")]
    base_branch: String,
    /// `gate decide`'s decision (`agent-team-apply/gate-decision/v1`): a pass for the plan's
    /// diff; it is also the check run's content.
    #[arg(long, value_name = "FILE")]
    decision: String,
    /// The verdict the plan was computed from (`gate publish-plan --verdict-out`): its protected
    /// paths label the pull request and title the check run.
    #[arg(long, value_name = "FILE")]
    verdict: String,
    /// The run attempt (`$GITHUB_RUN_ATTEMPT`): a re-run may only finish the publication its
    /// run started, never start one.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    run_attempt: u32,
    /// A revision: the number of the task's open draft pull request (made by the App, from
    /// --branch); --base is then its head, the signed head the diff applies to. The commit is
    /// added on the branch with a compare-and-swap on that head, the body says the round.
    /// Empty (the workflow's `revise_pull_request` of a first round): a first round.
    #[arg(long, value_name = "NUMBER", default_value = "")]
    revise: String,
    /// The check run's name.
    #[arg(long, value_name = "NAME", default_value = DEFAULT_CHECK_NAME)]
    check_name: String,
    /// The publishing App's numeric id (default: $AGENT_TEAM_APP_ID; one of them is required):
    /// the token must be this App's, and only its check runs are replay records.
    #[arg(long, value_name = "ID")]
    app_id: Option<u64>,
    /// The label the pull request gets when protected files changed.
    #[arg(long, value_name = "NAME", default_value = PROTECTED_LABEL)]
    protected_label: String,
    /// Users and teams (`octocat,ORG/TEAM-SLUG`) asked for a review when protected files
    /// changed, beside the label; empty: nobody.
    #[arg(long, value_name = "LIST", default_value = "")]
    protected_reviewers: String,
    /// An https:// URL for the check run's details (the workflow run).
    #[arg(long, value_name = "URL")]
    details_url: Option<String>,
    /// The REST API URL (default: $GITHUB_API_URL, else https://api.github.com). GraphQL goes to
    /// <URL>/graphql, or <host>/api/graphql for an Enterprise Server URL ending in /api/v3.
    #[arg(long, value_name = "URL")]
    api_url: Option<String>,
    /// Write the result document here (atomically) instead of stdout.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// The whole command's time limit.
    #[arg(long, value_name = "SECONDS", default_value_t = 900, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    timeout: u64,
}

/// Only `GH_TOKEN` (see the module documentation).
fn gh_token_only(name: &str) -> Option<String> {
    (name == "GH_TOKEN")
        .then(|| std::env::var(name).ok())
        .flatten()
}

fn env_text(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

fn client(args: &PublishArgs) -> Result<(Client, Token), String> {
    let token = Token::from_env(&gh_token_only).map_err(|e| match e {
        github::ConfigError::NoToken => "no token: set GH_TOKEN (the App's installation token; \
                                         GITHUB_TOKEN is not read)"
            .to_owned(),
        other => other.to_string(),
    })?;
    let api_url = ApiUrl::resolve(args.api_url.as_deref(), &env_text).map_err(|e| e.to_string())?;
    let mut config = ClientConfig::new(api_url, token.clone(), Arc::new(SystemClock::new()));
    config.proxy = ProxySettings::from_env(&env_text);
    config.deadline = Some(Duration::from_secs(args.timeout));
    Ok((Client::new(config).map_err(|e| e.to_string())?, token))
}

fn fail(message: &str) -> u8 {
    eprintln!("gate publish: error: {}", neutralize(message));
    Exit::Error.code()
}

fn text(source: &str, limit: u64, what: &str) -> Result<String, String> {
    String::from_utf8(read_bounded(source, limit, what)?)
        .map_err(|_| format!("{what} is not UTF-8"))
}

pub fn run(args: PublishArgs) -> u8 {
    match run_inner(&args) {
        Ok(code) => code,
        Err(message) => fail(&message),
    }
}

fn run_inner(args: &PublishArgs) -> Result<u8, String> {
    // Every argument is checked before anything is read or sent.
    let repository = match Repository::parse(&args.repository) {
        Ok(repo) if repository_problem(&args.repository).is_none() => repo,
        _ => {
            return Err(format!(
                "--repository {:?} is not OWNER/NAME",
                args.repository
            ));
        }
    };
    for (flag, value) in [
        ("--branch", &args.branch),
        ("--base-branch", &args.base_branch),
    ] {
        if let Some(problem) = branch_name_problem(value) {
            return Err(format!("{flag} {value:?}: {problem}"));
        }
    }
    if args.branch == args.base_branch {
        return Err("--branch is the base branch: never publish onto the base branch".to_owned());
    }
    check_check_run_name(&args.check_name).map_err(|e| format!("--check-name: {e}"))?;
    check_label(&args.protected_label).map_err(|e| format!("--protected-label: {e}"))?;
    let reviewers = Reviewers::parse(&args.protected_reviewers, &repository).map_err(|errors| {
        let all: Vec<String> = errors.iter().map(ToString::to_string).collect();
        format!("--protected-reviewers: {}", all.join("; "))
    })?;
    let base = CommitId::parse(&args.base).map_err(|e| format!("--base: {e}"))?;
    let revision =
        gate::dispatch_mac::parse_revision(&args.revise).map_err(|e| format!("--revise: {e}"))?;
    let app_id = super::dispatch::app_id(args.app_id)?.ok_or(
        "no publishing App id: give --app-id or set AGENT_TEAM_APP_ID (the variable of the job's \
         environment, which the workflow passes): the replay record is the App's own check run",
    )?;
    let plan: PublishPlanDoc = serde_json::from_str(&text(&args.plan, MAX_PLAN_BYTES, "--plan")?)
        .map_err(|e| format!("--plan: {e}"))?;
    let decision = parse_decision(&text(&args.decision, MAX_DOCUMENT_BYTES, "--decision")?)
        .map_err(|e| format!("--decision: {e}"))?;
    let verdict = report::verdict::parse(&text(&args.verdict, MAX_DOCUMENT_BYTES, "--verdict")?)
        .map_err(|e| format!("--verdict: {e}"))?;
    // The check run's name and URL are checked by building a body once, before any request.
    report::check_run::build(
        &decision,
        &base,
        &args.check_name,
        args.details_url.as_deref(),
        &verdict.protected,
    )
    .map_err(|e| e.to_string())?;
    let (client, token) = client(args)?;
    let request = PublicationRequest {
        repository: &repository,
        branch: &args.branch,
        base: base.as_str(),
        base_branch: &args.base_branch,
        decision: &decision,
        verdict: &verdict,
        check_name: &args.check_name,
        details_url: args.details_url.as_deref(),
        protected_label: &args.protected_label,
        protected_reviewers: &reviewers,
        run_attempt: args.run_attempt,
        app_id,
        revision,
    };
    let mut log = |line: &str| eprintln!("gate publish: {}", neutralize(&token.redact(line)));
    let report = publish(&client, &plan, &request, &mut log);
    let json = report
        .doc
        .to_json()
        .map_err(|e| format!("cannot serialize the result: {e}"))?;
    let json = token.redact(&json);
    match &args.out {
        Some(path) => write_atomic(path, json.as_bytes())?,
        None => emit(&json)?,
    }
    Ok(report.exit_code)
}
