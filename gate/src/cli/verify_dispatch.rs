//! `gate verify-dispatch`: check the dispatcher's signature before any other work (the guard
//! job's first step after the inputs) and again before anything is published.
//!
//! Beyond the tag (version 2, [`gate::dispatch_mac`]): the dispatch must not have expired, its
//! expiry must lie at most 24 hours ahead, and it must have been signed for the workflow this
//! run is (`--workflow-ref "$GITHUB_WORKFLOW_REF"`, the `@ref` stripped). With `--run-id` (the
//! guard job, which also passes `--run-attempt`), the dispatch's replay record is looked up
//! through the API (`GH_TOKEN` with `checks: read` and `pull-requests: read`, `GITHUB_API_URL`):
//! the publishing App's check run on the base named after the nonce (`--app-id`, else
//! `AGENT_TEAM_APP_ID`, names the App). A record of another run, one naming a closed pull request,
//! or a re-run attempt with nothing of its own to finish is refused ([`gate::replay`]), before any
//! reviewer is asked; `gate publish` checks the same again, then records the dispatch before it
//! writes the branch.
//!
//! The keys come from the environment (the verifying jobs' secrets): the current one
//! from `AGENT_TEAM_DISPATCH_KEY` (or a file named by `AGENT_TEAM_DISPATCH_KEY_FILE`), the
//! previous one, while a rotation is under way, from `AGENT_TEAM_DISPATCH_KEY_PREVIOUS`.
//!
//! Exit 0 when the signature verifies, 1 when it is missing, wrong or covers invalid inputs
//! (nothing may be published), 2 when no usable key is configured or the result cannot be written.

use clap::{Args, ValueEnum};
use serde::Serialize;

use contract::cli::emit;
use gate::dispatch_mac::{
    FullRef, KeySlot, MacError, RepositoryName, SignedFields, WorkflowPath, check_expiry, verify,
    verifying_keys,
};
use guard::escape::neutralize;
use guard::inputs::{BaseSha, DiffSha256, DispatchMac, Scope, TaskId};

pub const SCHEMA: &str = "agent-team-apply/dispatch-verification/v1";

#[derive(Clone, Copy, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

#[derive(Args)]
pub struct VerifyDispatchArgs {
    /// The repository the run belongs to (`$GITHUB_REPOSITORY`).
    #[arg(long, value_name = "OWNER/NAME")]
    repository: String,
    /// The ref the run was dispatched on (`$GITHUB_REF`).
    #[arg(long = "ref", value_name = "REF")]
    git_ref: String,
    /// The `task_id` input.
    #[arg(long, value_name = "ID")]
    task_id: String,
    /// The `base_sha` input.
    #[arg(long, value_name = "SHA")]
    base: String,
    /// The `expected_diff_sha256` input.
    #[arg(long, value_name = "HEX")]
    diff_sha256: String,
    /// The `declared_scope` input as received (commas or newlines between globs).
    #[arg(long, value_name = "TEXT")]
    declared_scope: String,
    /// The `dispatch_mac` input as received (may be empty: then the dispatch is rejected).
    #[arg(long, value_name = "MAC", allow_hyphen_values = true)]
    mac: String,
    /// The workflow this run is (`$GITHUB_WORKFLOW_REF`: OWNER/NAME/.github/workflows/FILE@REF).
    #[arg(long, value_name = "REF")]
    workflow_ref: String,
    #[command(flatten)]
    agent: super::AgentWordsArgs,
    /// The `revise_pull_request` input as received: empty for a first round, else the number of
    /// the draft pull request this dispatch revises (signed; --base is then its head).
    #[arg(long, value_name = "NUMBER", default_value = "")]
    revise: String,
    /// The time to check the expiry against, in Unix seconds (default: the system clock).
    #[arg(long, value_name = "UNIX")]
    now: Option<u64>,
    /// This run's id (`$GITHUB_RUN_ID`): also refuse a replay, reading what was published for
    /// this dispatch's nonce (token from GH_TOKEN, API from GITHUB_API_URL).
    #[arg(long, value_name = "ID")]
    run_id: Option<String>,
    /// This run's attempt (`$GITHUB_RUN_ATTEMPT`), with --run-id.
    #[arg(long, value_name = "N", requires = "run_id", value_parser = clap::value_parser!(u32).range(1..))]
    run_attempt: Option<u32>,
    /// The publishing App's numeric id (default: $AGENT_TEAM_APP_ID), needed with --run-id: its
    /// check runs are the replay records.
    #[arg(long, value_name = "ID")]
    app_id: Option<u64>,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

#[derive(Serialize)]
struct VerificationDoc {
    schema: &'static str,
    /// `verified`, `rejected` or `error`.
    result: &'static str,
    /// `current` or `previous` when verified.
    key: Option<&'static str>,
    reason: Option<String>,
    repository: String,
    #[serde(rename = "ref")]
    git_ref: String,
    task_id: String,
    base_sha: String,
    diff_sha256: String,
    workflow: Option<String>,
    nonce: Option<String>,
    expires_at: Option<u64>,
}

enum Outcome {
    Verified(KeySlot),
    Rejected(String),
    Error(String),
}

fn fields(args: &VerifyDispatchArgs, mac: &DispatchMac) -> Result<SignedFields, String> {
    let scope = Scope::parse_described(&args.declared_scope)?;
    let repository = RepositoryName::parse(&args.repository).map_err(|e| e.to_string())?;
    guard::inputs::check_pr_title(&args.agent.pr_title).map_err(|e| e.to_string())?;
    guard::inputs::check_pr_description(&args.agent.pr_description).map_err(|e| e.to_string())?;
    Ok(SignedFields {
        workflow: WorkflowPath::from_workflow_ref(&args.workflow_ref, &repository)
            .map_err(|e| e.to_string())?,
        repository,
        git_ref: FullRef::parse(&args.git_ref).map_err(|e| e.to_string())?,
        task_id: TaskId::parse(&args.task_id).map_err(|e| e.to_string())?,
        base: BaseSha::parse(&args.base).map_err(|e| e.to_string())?,
        diff_sha256: DiffSha256::parse(&args.diff_sha256).map_err(|e| e.to_string())?,
        nonce: mac.nonce().clone(),
        expires_at: mac.expires_at(),
        scope,
        pr_title: args.agent.pr_title.clone(),
        pr_description: args.agent.pr_description.clone(),
        revision: gate::dispatch_mac::parse_revision(&args.revise).map_err(|e| e.to_string())?,
    })
}

fn now(args: &VerifyDispatchArgs) -> Result<u64, String> {
    match args.now {
        Some(now) => Ok(now),
        None => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .map_err(|e| format!("the system clock: {e}")),
    }
}

fn outcome(args: &VerifyDispatchArgs) -> Outcome {
    let env = |name: &str| std::env::var_os(name).map(|v| v.into_encoded_bytes());
    let keys = match verifying_keys(&env) {
        Ok(keys) => keys,
        Err(e) => return Outcome::Error(e.to_string()),
    };
    let now = match now(args) {
        Ok(now) => now,
        Err(e) => return Outcome::Error(e),
    };
    if args.mac.is_empty() {
        return Outcome::Rejected(MacError::Missing.to_string());
    }
    let mac = match DispatchMac::parse(&args.mac) {
        Ok(mac) => mac,
        Err(e) => return Outcome::Rejected(e.to_string()),
    };
    let fields = match fields(args, &mac) {
        Ok(fields) => fields,
        Err(reason) => return Outcome::Rejected(reason),
    };
    let slot = match verify(&fields, Some(&mac), &keys) {
        Ok(slot) => slot,
        Err(e @ (MacError::Missing | MacError::Mismatch { .. })) => {
            return Outcome::Rejected(e.to_string());
        }
        Err(e) => return Outcome::Error(e.to_string()),
    };
    if let Err(e) = check_expiry(mac.expires_at(), now) {
        return Outcome::Rejected(e.to_string());
    }
    if args.run_id.is_some() {
        return match replay(args, &fields) {
            Ok(gate::replay::Verdict::Refused(why)) => Outcome::Rejected(why),
            Ok(_) => Outcome::Verified(slot),
            Err(e) => Outcome::Error(e),
        };
    }
    Outcome::Verified(slot)
}

fn replay(
    args: &VerifyDispatchArgs,
    fields: &SignedFields,
) -> Result<gate::replay::Verdict, String> {
    use std::sync::Arc;
    let env = |name: &str| std::env::var(name).ok();
    let run_id = args.run_id.as_deref().unwrap_or_default();
    if !gate::decide::valid_run_id(run_id) {
        return Err(format!("--run-id {:?} is not a run id", neutralize(run_id)));
    }
    let app_id = super::dispatch::app_id(args.app_id)?.ok_or(
        "--run-id needs the publishing App's id (--app-id, or AGENT_TEAM_APP_ID: the variable of \
         the job's environment, which the workflow passes): the replay record is that App's check run",
    )?;
    let token = github::Token::from_env(&env).map_err(|e| e.to_string())?;
    let api_url = github::ApiUrl::resolve(None, &env).map_err(|e| e.to_string())?;
    let mut config =
        github::ClientConfig::new(api_url, token.clone(), Arc::new(github::SystemClock::new()));
    config.proxy = github::ProxySettings::from_env(&env);
    config.deadline = Some(std::time::Duration::from_secs(300));
    let client = github::Client::new(config).map_err(|e| e.to_string())?;
    let repo = github::Repository::parse(&args.repository).map_err(|e| e.to_string())?;
    let dispatch = gate::replay::Dispatch {
        repo: &repo,
        base: fields.base.as_str(),
        nonce: fields.nonce.as_str(),
        app_id,
        run_id,
        attempt: args.run_attempt.unwrap_or(1),
    };
    gate::replay::find(&client, &dispatch)
        .map_err(|e| token.redact(&format!("looking up this dispatch's replay record: {e}")))
}

pub fn run(args: VerifyDispatchArgs) -> u8 {
    let outcome = outcome(&args);
    let (result, key, reason, code) = match &outcome {
        Outcome::Verified(slot) => (
            "verified",
            Some(slot.as_str()),
            None,
            contract::cli::Exit::Pass.code(),
        ),
        Outcome::Rejected(reason) => (
            "rejected",
            None,
            Some(reason.clone()),
            contract::cli::Exit::Fail.code(),
        ),
        Outcome::Error(reason) => (
            "error",
            None,
            Some(reason.clone()),
            contract::cli::Exit::Error.code(),
        ),
    };
    let text = match args.format {
        Format::Text => match (key, &reason) {
            (Some(slot), _) => format!("dispatch signature verified with the {slot} key\n"),
            (None, Some(reason)) => {
                format!("dispatch signature {result}: {}\n", neutralize(reason))
            }
            (None, None) => format!("dispatch signature {result}\n"),
        },
        Format::Json => {
            let mac_parts = DispatchMac::parse(&args.mac).ok();
            let workflow = RepositoryName::parse(&args.repository)
                .and_then(|r| WorkflowPath::from_workflow_ref(&args.workflow_ref, &r))
                .ok()
                .map(|w| w.as_str().to_owned());
            let doc = VerificationDoc {
                schema: SCHEMA,
                result,
                key,
                reason,
                repository: args.repository,
                git_ref: args.git_ref,
                task_id: args.task_id,
                base_sha: args.base,
                diff_sha256: args.diff_sha256,
                workflow,
                nonce: mac_parts.as_ref().map(|m| m.nonce().as_str().to_owned()),
                expires_at: mac_parts.as_ref().map(DispatchMac::expires_at),
            };
            match serde_json::to_string_pretty(&doc) {
                Ok(json) => format!("{json}\n"),
                Err(e) => {
                    eprintln!("gate verify-dispatch: cannot serialize the result: {e}");
                    return contract::cli::Exit::Error.code();
                }
            }
        }
    };
    match emit(&text) {
        Ok(()) => code,
        Err(message) => {
            eprintln!("gate verify-dispatch: {message}");
            contract::cli::Exit::Error.code()
        }
    }
}
