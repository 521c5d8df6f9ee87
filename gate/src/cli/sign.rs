//! `gate sign`: print the signed dispatch inputs, for a dispatcher written in another language
//! (it sends them with its own diff transport, `diff_b64` or `diff_ref`).
//!
//! The output is the JSON object of inputs `gate dispatch` would send, without the diff:
//! `task_id`, `base_sha`, `expected_diff_sha256`, `declared_scope`, `dispatch_mac` (`v2:` with the
//! nonce and the expiry) and, when given, `pr_title` and `pr_description`. The key comes from
//! `AGENT_TEAM_DISPATCH_KEY` (or `AGENT_TEAM_DISPATCH_KEY_FILE`). The encoding is documented in
//! REFERENCE.md ("Signed dispatches") with a test vector; `--nonce` and `--expires-at` reproduce
//! it, and are otherwise left to the command (16 random bytes; now plus `--lifetime`).
//!
//! Exit 0 with the inputs printed; 2 on any invalid argument or missing key.

use clap::Args;

use contract::cli::emit;
use gate::dispatch::signed_inputs;
use gate::dispatch_mac::{
    DEFAULT_LIFETIME_SECONDS, FullRef, MAX_LIFETIME_SECONDS, RepositoryName, SignedFields,
    WorkflowPath, random_nonce, sign, signing_key,
};
use guard::escape::neutralize;
use guard::inputs::{BaseSha, DiffSha256, Nonce, Scope, TaskId};

#[derive(Args)]
pub struct SignArgs {
    #[arg(long, value_name = "OWNER/NAME")]
    repository: String,
    /// The branch (or full ref) the workflow will run on.
    #[arg(long = "ref", value_name = "BRANCH")]
    git_ref: String,
    /// The caller workflow file that will be dispatched (agent-team-apply.yml).
    #[arg(long, value_name = "FILE")]
    workflow: String,
    #[arg(long, value_name = "ID")]
    task_id: String,
    #[arg(long, value_name = "SHA")]
    base: String,
    /// The diff's SHA-256 (64 lowercase hex digits).
    #[arg(long, value_name = "HEX")]
    diff_sha256: String,
    /// A declared scope glob (repeatable, at least one).
    #[arg(long = "scope", value_name = "GLOB", required = true)]
    scope: Vec<String>,
    #[arg(long, value_name = "TEXT", default_value = "")]
    pr_title: String,
    #[arg(long, value_name = "TEXT", default_value = "")]
    pr_description: String,
    /// A revision of the draft pull request NUMBER (--base is then its head).
    #[arg(long, value_name = "NUMBER", value_parser = clap::value_parser!(u64).range(1..=9_999_999_999))]
    revise: Option<u64>,
    /// The nonce (32 lowercase hex digits; default: 16 random bytes).
    #[arg(long, value_name = "HEX")]
    nonce: Option<String>,
    /// The expiry in Unix seconds (default: now plus --lifetime).
    #[arg(long, value_name = "UNIX", conflicts_with = "lifetime")]
    expires_at: Option<u64>,
    /// How long the signature stays valid, in seconds (at most 86400).
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=86_400))]
    lifetime: Option<u64>,
}

fn inputs(args: &SignArgs) -> Result<String, String> {
    let join = |errors: Vec<guard::inputs::InputError>| {
        errors
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ")
    };
    let nonce = match &args.nonce {
        Some(text) => Nonce::parse(text).ok_or_else(|| {
            format!(
                "--nonce {:?} is not 32 lowercase hex digits",
                neutralize(text)
            )
        })?,
        None => random_nonce().map_err(|e| e.to_string())?,
    };
    let expires_at = match args.expires_at {
        Some(at) => at,
        None => {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_err(|e| format!("the system clock: {e}"))?
                .as_secs();
            let lifetime = args
                .lifetime
                .unwrap_or(DEFAULT_LIFETIME_SECONDS)
                .min(MAX_LIFETIME_SECONDS);
            now.saturating_add(lifetime)
        }
    };
    let env = |name: &str| std::env::var_os(name).map(|v| v.into_encoded_bytes());
    let fields = SignedFields {
        repository: RepositoryName::parse(&args.repository).map_err(|e| e.to_string())?,
        git_ref: FullRef::parse(&args.git_ref).map_err(|e| e.to_string())?,
        workflow: WorkflowPath::parse(&args.workflow).map_err(|e| e.to_string())?,
        task_id: TaskId::parse(&args.task_id).map_err(|e| e.to_string())?,
        base: BaseSha::parse(&args.base).map_err(|e| e.to_string())?,
        diff_sha256: DiffSha256::parse(&args.diff_sha256).map_err(|e| e.to_string())?,
        nonce,
        expires_at,
        scope: Scope::from_globs(&args.scope).map_err(join)?,
        pr_title: crate::cli::dispatch::checked_title(&args.pr_title)?,
        pr_description: crate::cli::dispatch::checked_description(&args.pr_description)?,
        revision: args.revise,
    };
    let key = signing_key(&env).map_err(|e| e.to_string())?;
    let mac = sign(&fields, &key);
    let doc = signed_inputs(&fields, &mac);
    serde_json::to_string_pretty(&doc)
        .map(|json| format!("{json}\n"))
        .map_err(|e| format!("cannot serialize the inputs: {e}"))
}

pub fn run(args: SignArgs) -> u8 {
    match inputs(&args).and_then(|text| emit(&text)) {
        Ok(()) => contract::cli::Exit::Pass.code(),
        Err(message) => {
            eprintln!("gate sign: {}", neutralize(&message));
            contract::cli::Exit::Error.code()
        }
    }
}
