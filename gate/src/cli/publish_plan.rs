//! `gate publish-plan`: validate the arguments, read the trusted inputs, prepare, write the plan.
//!
//! Exit 0 with a plan; 1 when the diff is rejected or cannot be published (no plan is written, the
//! reasons go to stderr with their rule ids); 2 on a usage, configuration or I/O error (no plan).

use std::io::{self, Read, Write};
use std::path::PathBuf;

use clap::Args;
use gate::publish::{Outcome, PublishRequest, PublishTarget, Rejection, prepare, validate_inputs};
use guard::escape::neutralize;
use guard::policy::Policy;

#[derive(Args)]
pub struct PublishPlanArgs {
    /// The trusted checkout of the base commit. Only read; the diff is applied to a throwaway index.
    #[arg(long, value_name = "DIR")]
    repo: PathBuf,
    /// The base commit (7 to 40 hex digits); the plan's expectedHeadOid is its full id.
    #[arg(long, value_name = "SHA")]
    base: String,
    /// The diff from the trusted source (never a build-test artifact): a file, or `-` for stdin.
    #[arg(long, value_name = "FILE|-")]
    diff: String,
    /// The SHA-256 the diff bytes must hash to (64 lower-case hex digits).
    #[arg(long, value_name = "HEX")]
    expected_sha256: String,
    /// The branch to commit to and open the pull request from (unqualified; `gate publish`
    /// creates it, or reuses it at the base commit).
    #[arg(long, value_name = "NAME")]
    branch: String,
    /// The branch the pull request targets. Must differ from --branch.
    #[arg(long, value_name = "NAME")]
    base_branch: String,
    /// OWNER/NAME of the repository, written as the input's repositoryNameWithOwner.
    #[arg(long, value_name = "OWNER/NAME")]
    repository: Option<String>,
    /// A declared scope glob (repeatable); every touched path must match one. Required.
    #[arg(long = "scope", value_name = "GLOB")]
    scope: Vec<String>,
    /// A YAML policy that extends or tightens the embedded default.
    #[arg(long, value_name = "FILE")]
    policy: Option<PathBuf>,
    /// The dispatcher's task id (`[A-Za-z0-9._-]{1,64}`), bound into the commit message.
    #[arg(long, value_name = "ID")]
    task_id: Option<String>,
    /// The workflow run id (decimal), bound into the commit message.
    #[arg(long, value_name = "ID")]
    run_id: Option<String>,
    /// The signed dispatch's nonce (the `dispatch_mac` input's second field), bound into the
    /// commit message as `Dispatch-Nonce`.
    #[arg(long, value_name = "HEX")]
    dispatch_nonce: Option<String>,
    /// The agent's title for the draft (the signed `pr_title` input; may be empty), shown in the
    #[command(flatten)]
    agent: super::AgentWordsArgs,
    /// A revision: the number of the task's open draft pull request; --base is then its head.
    /// The plan also lists the protected paths of the whole branch, counted from the merge base
    /// of the checkout's HEAD (the dispatched commit of --base-branch) and --base. Empty (the
    /// workflow's `revise_pull_request` of a first round): a first round.
    #[arg(long, value_name = "NUMBER", default_value = "")]
    revise: String,
    /// Write the plan here instead of stdout (atomically: the file exists only when complete).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Also write the pull-request body (markdown) here.
    #[arg(long, value_name = "FILE")]
    pr_body_out: Option<PathBuf>,
    /// Also write the guard verdict (JSON v1) the plan was computed from here: its protected
    /// paths go to `report check-run --verdict` and decide the pull request's label.
    #[arg(long, value_name = "FILE")]
    verdict_out: Option<PathBuf>,
}

pub fn run(args: PublishPlanArgs) -> u8 {
    match run_inner(&args) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("gate publish-plan: error: {message}");
            contract::cli::Exit::Error.code()
        }
    }
}

fn run_inner(args: &PublishPlanArgs) -> Result<u8, String> {
    // Every argument is checked before anything is read.
    let target = PublishTarget::new(
        args.repository.as_deref(),
        &args.branch,
        &args.base_branch,
        args.task_id.as_deref(),
        args.run_id.as_deref(),
    )
    .map_err(|e| e.to_string())?;
    let target = match &args.dispatch_nonce {
        Some(nonce) => target
            .with_dispatch_nonce(nonce)
            .map_err(|e| e.to_string())?,
        None => target,
    };
    let target = target
        .with_agent_words(&args.agent.pr_title, &args.agent.pr_description)
        .map_err(|e| e.to_string())?;
    validate_inputs(&args.base, &args.expected_sha256).map_err(|e| e.to_string())?;
    let revision =
        gate::dispatch_mac::parse_revision(&args.revise).map_err(|e| format!("--revise: {e}"))?;

    let policy = Policy::load(args.policy.as_deref())?;
    let diff = read_diff(&args.diff, policy.limits.max_diff_bytes)?;
    let outcome = prepare(&PublishRequest {
        repo_dir: &args.repo,
        base: &args.base,
        diff: &diff,
        expected_sha256: &args.expected_sha256,
        scope: &args.scope,
        policy: &policy,
        target: &target,
        revision: revision.is_some(),
    })
    .map_err(|e| e.to_string())?;

    let plan = match outcome {
        Outcome::Rejected(rejection) => {
            eprint!("{}", render_rejection(&rejection));
            return Ok(contract::cli::Exit::Fail.code());
        }
        Outcome::Plan { plan, verdict } => {
            if let Some(path) = &args.verdict_out {
                let json = guard::output::json_v1::document(&verdict)
                    .to_json()
                    .map_err(|e| format!("cannot encode the verdict: {e}"))?;
                contract::cli::write_atomic(path, json.as_bytes())?;
            }
            plan
        }
    };
    let json = plan
        .to_json()
        .map_err(|e| format!("cannot serialize the plan: {e}"))?;
    if let Some(path) = &args.pr_body_out {
        contract::cli::write_atomic(path, plan.pull_request.body.as_bytes())?;
    }
    match &args.out {
        Some(path) => contract::cli::write_atomic(path, json.as_bytes())?,
        None => {
            let mut stdout = io::stdout().lock();
            stdout
                .write_all(json.as_bytes())
                .and_then(|()| stdout.flush())
                .map_err(|e| format!("cannot write to stdout: {e}"))?;
        }
    }
    let changes = &plan.input.file_changes;
    eprintln!(
        "PLAN: {} addition(s), {} deletion(s) onto {} for branch {}, diff sha256 {}; tree {} \
         via {}: {}",
        changes.additions.len(),
        changes.deletions.len(),
        plan.input.expected_head_oid,
        neutralize(&plan.input.branch.branch_name),
        plan.diff_sha256,
        plan.tree,
        plan.method.name(),
        neutralize(&plan.method_reason),
    );
    Ok(contract::cli::Exit::Pass.code())
}

/// The guard's own rendering of its verdict, then the publication reasons, then the outcome.
fn render_rejection(rejection: &Rejection) -> String {
    let mut out = guard::output::text::render(&rejection.verdict);
    for reason in &rejection.reasons {
        out.push_str(&format!("error[{}]: ", reason.code));
        if let Some(path) = &reason.path {
            out.push_str(&path.display());
            out.push_str(": ");
        }
        out.push_str(&neutralize(&reason.message));
        out.push('\n');
    }
    out.push_str("NO PLAN: the diff was not re-verified or cannot be published exactly\n");
    out
}

/// At most `limit + 1` bytes: anything longer is over the limit whatever follows, and the check
/// reports it.
fn read_diff(source: &str, limit: u64) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    let take = limit.saturating_add(1);
    let result = if source == "-" {
        io::stdin().lock().take(take).read_to_end(&mut bytes)
    } else {
        std::fs::File::open(source).and_then(|f| f.take(take).read_to_end(&mut bytes))
    };
    result.map_err(|e| format!("cannot read diff {}: {e}", neutralize(source)))?;
    Ok(bytes)
}
