//! `gate dispatch`: the trusted dispatcher (see [`gate::dispatch`]).
//!
//! The token comes from `GH_TOKEN` or `GITHUB_TOKEN`, or is minted for the one dispatch from the
//! dispatcher App's key (`--dispatcher-app-id` and `--dispatcher-app-key-file`, or
//! `AGENT_TEAM_DISPATCHER_APP_ID` and `AGENT_TEAM_DISPATCHER_APP_KEY_FILE`; [`gate::app_auth`])
//! and revoked afterwards; the signing key comes from `AGENT_TEAM_DISPATCH_KEY` (or
//! `AGENT_TEAM_DISPATCH_KEY_FILE`), never from a flag; none reaches any output. With `--wait` the publishing App's id is required (`--app-id`, or
//! `AGENT_TEAM_APP_ID`): a pass is reported only for that App's check run on the commit GitHub
//! signed for its bot. Exit 0: the gate passed and the publication is authentic (without
//! `--wait`: the run was dispatched and identified); 1: the gate failed; 2: anything else.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, ValueEnum};

use contract::cli::emit;
use gate::app_auth::{
    AppKey, DISPATCHER_APP_ID_VARIABLE, DISPATCHER_APP_KEY_FILE_VARIABLE, DispatcherApp,
};
use gate::dispatch::{DispatchRequest, Preflight, parse_workflow_file, run, run_as_app};
use gate::dispatch_mac::{FullRef, signing_key};
use github::{ApiUrl, Client, ClientConfig, Clock, ProxySettings, Repository, SystemClock, Token};
use guard::escape::neutralize;
use guard::inputs::{BaseSha, Scope, TaskId};

/// Largest diff read (GitHub's blob limit is 100 MB).
const MAX_DIFF_BYTES: u64 = 64 << 20;

#[derive(Clone, Copy, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

#[derive(Args)]
pub struct DispatchArgs {
    #[arg(long, value_name = "OWNER/NAME")]
    repository: String,
    /// The workflow file to dispatch: the caller, e.g. agent-team-apply.yml.
    #[arg(long, value_name = "FILE")]
    workflow: String,
    /// The branch (or full ref) to run the workflow on; the key is bound to it.
    #[arg(long = "ref", value_name = "BRANCH")]
    git_ref: String,
    #[arg(long, value_name = "ID")]
    task_id: String,
    /// The full commit the diff applies to (with --revise: the draft pull request's head).
    #[arg(long, value_name = "SHA")]
    base: String,
    /// Revise the task's open draft pull request NUMBER (made by the App) instead of opening
    /// one: --base is its current head, which the publication must still find (signed).
    #[arg(long, value_name = "NUMBER", value_parser = clap::value_parser!(u64).range(1..=9_999_999_999))]
    revise: Option<u64>,
    /// A declared scope glob (repeatable, at least one).
    #[arg(long = "scope", value_name = "GLOB", required = true)]
    scope: Vec<String>,
    /// The candidate diff.
    #[arg(long, value_name = "FILE")]
    diff: PathBuf,
    /// The API URL (default: $GITHUB_API_URL, else https://api.github.com).
    #[arg(long, value_name = "URL")]
    api_url: Option<String>,
    /// Follow the run to its outcome (needs --app-id).
    #[arg(long)]
    wait: bool,
    /// The publishing App's numeric id (default: $AGENT_TEAM_APP_ID); required with --wait.
    #[arg(long, value_name = "ID")]
    app_id: Option<u64>,
    /// The dispatcher App's numeric id (default: $AGENT_TEAM_DISPATCHER_APP_ID): dispatch with a
    /// token minted from its key for this repository alone, revoked afterwards, instead of
    /// GH_TOKEN/GITHUB_TOKEN.
    #[arg(long, value_name = "ID", value_parser = clap::value_parser!(u64).range(1..))]
    dispatcher_app_id: Option<u64>,
    /// The dispatcher App's private key, PEM (default: $AGENT_TEAM_DISPATCHER_APP_KEY_FILE).
    #[arg(long, value_name = "FILE")]
    dispatcher_app_key_file: Option<PathBuf>,
    /// The check run the caller's publication posts (its `check-run-name` input), read with
    /// --wait.
    #[arg(long, value_name = "NAME", default_value = gate::dispatch::CHECK_NAME)]
    check_name: String,
    /// The agent's title for the draft pull request (signed; shown as the agent's words).
    #[arg(long, value_name = "TEXT", default_value = "")]
    pr_title: String,
    /// The agent's description for the draft pull request (signed; shown as the agent's words).
    #[arg(long, value_name = "TEXT", default_value = "")]
    pr_description: String,
    /// Before dispatching, run `guard check` on this local clone at --base: a rejection (scope,
    /// denylist, ...) ends here with exit 1 and the violations, nothing dispatched.
    #[arg(long, value_name = "DIR")]
    preflight: Option<PathBuf>,
    /// The policy for --preflight (default: DIR/.github/agent-team-policy.yml when it exists,
    /// else the embedded default).
    #[arg(long, value_name = "FILE", requires = "preflight")]
    preflight_policy: Option<PathBuf>,
    /// How long the signed dispatch stays valid (at most 86400).
    #[arg(long, value_name = "SECONDS", default_value_t = gate::dispatch_mac::DEFAULT_LIFETIME_SECONDS, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    lifetime: u64,
    /// The whole command's time limit.
    #[arg(long, value_name = "SECONDS", default_value_t = 3600, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    timeout: u64,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

fn env_text(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

fn request(args: &DispatchArgs) -> Result<DispatchRequest, String> {
    let join = |errors: Vec<guard::inputs::InputError>| {
        errors
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ")
    };
    let diff = read_diff(&args.diff)?;
    let env_bytes = |name: &str| std::env::var_os(name).map(|v| v.into_encoded_bytes());
    Ok(DispatchRequest {
        repository: Repository::parse(&args.repository).map_err(|e| e.to_string())?,
        workflow: parse_workflow_file(&args.workflow)?,
        git_ref: FullRef::parse(&args.git_ref).map_err(|e| e.to_string())?,
        task_id: TaskId::parse(&args.task_id).map_err(|e| e.to_string())?,
        base: BaseSha::parse(&args.base).map_err(|e| e.to_string())?,
        scope: Scope::from_globs(&args.scope).map_err(join)?,
        diff,
        key: signing_key(&env_bytes).map_err(|e| e.to_string())?,
        wait: args.wait,
        timeout: Duration::from_secs(args.timeout),
        app_id: app_id(args.app_id)?,
        check_name: {
            gate::names::check_check_run_name(&args.check_name)
                .map_err(|e| format!("--check-name: {e}"))?;
            args.check_name.clone()
        },
        pr_title: checked_title(&args.pr_title)?,
        pr_description: checked_description(&args.pr_description)?,
        lifetime: Duration::from_secs(args.lifetime),
        nonce: None,
        preflight: args.preflight.as_ref().map(|dir| Preflight {
            dir: dir.clone(),
            policy: args.preflight_policy.clone(),
        }),
        revision: args.revise,
        dispatcher: None,
    })
}

/// `--app-id`, else `AGENT_TEAM_APP_ID` (a positive decimal; empty counts as unset).
pub fn app_id(flag: Option<u64>) -> Result<Option<u64>, String> {
    if let Some(id) = flag {
        return if id == 0 {
            Err("--app-id must be a positive App id".to_owned())
        } else {
            Ok(Some(id))
        };
    }
    match env_text("AGENT_TEAM_APP_ID").filter(|v| !v.is_empty()) {
        None => Ok(None),
        Some(text) => match text.parse::<u64>() {
            Ok(id) if id > 0 && !text.starts_with('0') => Ok(Some(id)),
            _ => Err(format!(
                "AGENT_TEAM_APP_ID {:?} is not a positive App id",
                neutralize(&text)
            )),
        },
    }
}

pub fn checked_title(value: &str) -> Result<String, String> {
    guard::inputs::check_pr_title(value)
        .map(|()| value.to_owned())
        .map_err(|e| format!("--pr-title: {e}"))
}

pub fn checked_description(value: &str) -> Result<String, String> {
    guard::inputs::check_pr_description(value)
        .map(|()| value.to_owned())
        .map_err(|e| format!("--pr-description: {e}"))
}

fn read_diff(path: &PathBuf) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| format!("--diff {}: {e}", path.display()))?;
    let mut bytes = Vec::new();
    file.take(MAX_DIFF_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("--diff {}: {e}", path.display()))?;
    if bytes.len() as u64 > MAX_DIFF_BYTES {
        return Err(format!(
            "--diff {}: larger than {MAX_DIFF_BYTES} bytes",
            path.display()
        ));
    }
    if bytes.is_empty() {
        return Err(format!("--diff {}: empty", path.display()));
    }
    Ok(bytes)
}

/// The dispatcher App (`--dispatcher-app-id` and `--dispatcher-app-key-file`, each else its
/// variable), when one is given: both or neither.
fn dispatcher_app(args: &DispatchArgs) -> Result<Option<DispatcherApp>, String> {
    let id = match args.dispatcher_app_id {
        Some(id) => Some(id),
        None => match env_text(DISPATCHER_APP_ID_VARIABLE).filter(|v| !v.is_empty()) {
            None => None,
            Some(text) => match text.parse::<u64>() {
                Ok(id) if id > 0 && !text.starts_with('0') => Some(id),
                _ => {
                    return Err(format!(
                        "{DISPATCHER_APP_ID_VARIABLE} {:?} is not a positive App id",
                        neutralize(&text)
                    ));
                }
            },
        },
    };
    let key_file = args.dispatcher_app_key_file.clone().or_else(|| {
        std::env::var_os(DISPATCHER_APP_KEY_FILE_VARIABLE)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    });
    match (id, key_file) {
        (None, None) => Ok(None),
        (Some(app_id), Some(path)) => Ok(Some(DispatcherApp {
            app_id,
            key: AppKey::from_file(&path).map_err(|e| e.to_string())?,
        })),
        (Some(_), None) => Err(format!(
            "the dispatcher App's id is given but not its key (--dispatcher-app-key-file or {DISPATCHER_APP_KEY_FILE_VARIABLE})"
        )),
        (None, Some(_)) => Err(format!(
            "the dispatcher App's key is given but not its id (--dispatcher-app-id or {DISPATCHER_APP_ID_VARIABLE})"
        )),
    }
}

/// A client presenting `token`.
fn client_with(args: &DispatchArgs, timeout: Duration, token: Token) -> Result<Client, String> {
    let api_url = ApiUrl::resolve(args.api_url.as_deref(), &env_text).map_err(|e| e.to_string())?;
    let mut config = ClientConfig::new(api_url, token, Arc::new(SystemClock::new()));
    config.proxy = ProxySettings::from_env(&env_text);
    config.deadline = Some(timeout);
    Client::new(config).map_err(|e| e.to_string())
}

/// A bearer token given as text (the App's JSON web token, an installation token).
fn token_of(text: &str) -> Result<Token, String> {
    Token::from_env(&|name: &str| (name == "GH_TOKEN").then(|| text.to_owned()))
        .map_err(|e| e.to_string())
}

pub fn run_cli(args: DispatchArgs) -> u8 {
    let fail = |message: &str| {
        eprintln!("gate dispatch: {}", neutralize(message));
        contract::cli::Exit::Error.code()
    };
    let request = match request(&args) {
        Ok(request) => request,
        Err(e) => return fail(&e),
    };
    if request.wait && request.app_id.is_none() {
        return fail(
            "--wait needs the publishing App's id (--app-id ID or AGENT_TEAM_APP_ID): a pass is only reported for that App's check run and signed commit",
        );
    }
    let app = match dispatcher_app(&args) {
        Ok(app) => app,
        Err(e) => return fail(&e),
    };
    // The caller's token, when no App mints one (the minted one never reaches a line: the
    // client redacts its own token from its errors).
    let token = match &app {
        Some(_) => None,
        None => match Token::from_env(&env_text) {
            Ok(token) => Some(token),
            Err(e) => return fail(&e.to_string()),
        },
    };
    let redact = |text: &str| {
        token
            .as_ref()
            .map_or_else(|| text.to_owned(), |t| t.redact(text))
    };
    let mut log = |line: &str| eprintln!("gate dispatch: {}", neutralize(&redact(line)));
    let report = match (&app, &token) {
        (Some(app), _) => {
            let timeout = request.timeout;
            let connect = |bearer: &str| client_with(&args, timeout, token_of(bearer)?);
            let now = SystemClock::new().unix_seconds();
            run_as_app(&connect, app, now, request, &mut log)
        }
        (None, Some(token)) => match client_with(&args, request.timeout, token.clone()) {
            Ok(client) => run(&client, &request, &mut log),
            Err(e) => return fail(&e),
        },
        (None, None) => return fail("no token: set GH_TOKEN or GITHUB_TOKEN"),
    };
    let rendered = match args.format {
        Format::Text => gate::output::text::dispatch(&report.doc),
        Format::Json => match serde_json::to_string_pretty(&report.doc) {
            Ok(json) => format!("{json}\n"),
            Err(e) => return fail(&format!("cannot serialize the result: {e}")),
        },
    };
    match emit(&redact(&rendered)) {
        Ok(()) => report.exit_code,
        Err(e) => fail(&e),
    }
}
