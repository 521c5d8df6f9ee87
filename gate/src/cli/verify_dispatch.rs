//! `gate verify-dispatch`: check the dispatcher's signature before anything is published.
//!
//! The keys come from the environment (the publishing environment's secrets): the current one
//! from `AGENT_TEAM_DISPATCH_KEY` (or a file named by `AGENT_TEAM_DISPATCH_KEY_FILE`), the
//! previous one, while a rotation is under way, from `AGENT_TEAM_DISPATCH_KEY_PREVIOUS`.
//!
//! Exit 0 when the signature verifies, 1 when it is missing, wrong or covers invalid inputs
//! (nothing may be published), 2 when no usable key is configured or the result cannot be written.

use clap::{Args, ValueEnum};
use serde::Serialize;

use contract::cli::emit;
use gate::dispatch_mac::{
    FullRef, KeySlot, MacError, RepositoryName, SignedFields, verify, verifying_keys,
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
}

enum Outcome {
    Verified(KeySlot),
    Rejected(String),
    Error(String),
}

fn fields(args: &VerifyDispatchArgs) -> Result<SignedFields, String> {
    let scope = Scope::parse_described(&args.declared_scope)?;
    Ok(SignedFields {
        repository: RepositoryName::parse(&args.repository).map_err(|e| e.to_string())?,
        git_ref: FullRef::parse(&args.git_ref).map_err(|e| e.to_string())?,
        task_id: TaskId::parse(&args.task_id).map_err(|e| e.to_string())?,
        base: BaseSha::parse(&args.base).map_err(|e| e.to_string())?,
        diff_sha256: DiffSha256::parse(&args.diff_sha256).map_err(|e| e.to_string())?,
        scope,
    })
}

fn outcome(args: &VerifyDispatchArgs) -> Outcome {
    let env = |name: &str| std::env::var_os(name).map(|v| v.into_encoded_bytes());
    let keys = match verifying_keys(&env) {
        Ok(keys) => keys,
        Err(e) => return Outcome::Error(e.to_string()),
    };
    let fields = match fields(args) {
        Ok(fields) => fields,
        Err(reason) => return Outcome::Rejected(reason),
    };
    let mac = if args.mac.is_empty() {
        None
    } else {
        match DispatchMac::parse(&args.mac) {
            Ok(mac) => Some(mac),
            Err(e) => return Outcome::Rejected(e.to_string()),
        }
    };
    match verify(&fields, mac.as_ref(), &keys) {
        Ok(slot) => Outcome::Verified(slot),
        Err(e @ (MacError::Missing | MacError::Mismatch)) => Outcome::Rejected(e.to_string()),
        Err(e) => Outcome::Error(e.to_string()),
    }
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
