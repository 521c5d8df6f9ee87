//! `gate`: decide pass/fail from the conclusions of the jobs the gate depends on, and prepare the
//! publication from trusted inputs.
#![forbid(unsafe_code)]

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cli;

#[derive(Parser)]
#[command(
    name = "gate",
    version,
    about = "Decide pass/fail from toJSON(needs), keyed to a run id and a diff hash; prepare the publication from trusted inputs"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Pass only if every required job is present in needs with result `success`, and no other.
    Decide(cli::decide::DecideArgs),
    /// Re-verify a diff from trusted inputs and write the publication plan: git's tree id, every
    /// path's mode, the method (createCommitOnBranch or the Git database), the contents and the
    /// draft pull request. Never checks out or executes the patch.
    PublishPlan(Box<cli::publish_plan::PublishPlanArgs>),
    /// Publish a plan on GitHub (token from GH_TOKEN only): branch, commit, the proof that the
    /// published tree id is git's, the draft pull request and the check run.
    Publish(Box<cli::publish::PublishArgs>),
    /// Sign and dispatch the workflow, learn the run, and with --wait report its authenticated
    /// outcome (token from GH_TOKEN/GITHUB_TOKEN, key from AGENT_TEAM_DISPATCH_KEY).
    Dispatch(cli::dispatch::DispatchArgs),
    /// Verify the dispatcher's signature (dispatch_mac v2: expiry, workflow) with the key from the
    /// environment, before any other work and again before anything is published.
    VerifyDispatch(Box<cli::verify_dispatch::VerifyDispatchArgs>),
    /// Print the signed dispatch inputs (without the diff) for a dispatcher in another language.
    Sign(cli::sign::SignArgs),
    /// Exit 0 only when the base commit is on the default branch (token from GH_TOKEN; the API
    /// from GITHUB_API_URL).
    RequireBase(cli::repo_steps::RequireBaseArgs),
    /// Fetch `<task id>.patch` from the dispatcher's diff branch (token from GH_TOKEN).
    FetchDiff(cli::repo_steps::FetchDiffArgs),
    /// Revoke the installation token in GH_TOKEN.
    RevokeToken(cli::repo_steps::RevokeTokenArgs),
    /// Print the commit a branch points at now (token from GH_TOKEN).
    BranchHead(cli::repo_steps::BranchHeadArgs),
    /// Exit 0 only when every environment the policy counts as protection exists and holds the
    /// branch back (required reviewers, or branch policies that exclude it); token from GH_TOKEN.
    VerifyEnvironments(cli::verify_environments::VerifyEnvironmentsArgs),
    /// Read the repository's GitHub settings the gate depends on (token from GH_TOKEN, read-only
    /// suffices) and report each as ok, missing or cannot read, with its fix.
    Doctor(cli::doctor::DoctorArgs),
    /// Write the caller workflow and a starting policy for the repository's build system, the
    /// App manifest and the rulesets to import, and print the remaining setup steps.
    Init(cli::init::InitArgs),
    /// Register the publishing App or the dispatcher's from its manifest (`gate app create`).
    App(cli::app::AppArgs),
    /// The release workflow's last step: the pin commit (the built commit plus the pinned
    /// hashes), its tag vX.Y.Z and the release with the assets (token from GH_TOKEN).
    Release(Box<cli::release::ReleaseArgs>),
    /// An MCP server over stdio for agent platforms: check_change (the guard's verdict from
    /// --repo), and with a dispatcher configuration propose_change and task_status.
    #[cfg(feature = "mcp")]
    Mcp(Box<cli::mcp::McpArgs>),
}

fn main() -> ExitCode {
    contract::cli::install_panic_hook("gate");
    let cli = match contract::cli::parse_args::<Cli>() {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    let code = match cli.command {
        Command::Decide(args) => cli::decide::run(args),
        Command::PublishPlan(args) => cli::publish_plan::run(*args),
        Command::Publish(args) => cli::publish::run(*args),
        Command::Dispatch(args) => cli::dispatch::run_cli(args),
        Command::VerifyDispatch(args) => cli::verify_dispatch::run(*args),
        Command::Sign(args) => cli::sign::run(args),
        Command::RequireBase(args) => cli::repo_steps::require_base(args),
        Command::FetchDiff(args) => cli::repo_steps::fetch_diff(args),
        Command::RevokeToken(args) => cli::repo_steps::revoke_token(args),
        Command::BranchHead(args) => cli::repo_steps::branch_head(args),
        Command::VerifyEnvironments(args) => cli::verify_environments::run(args),
        Command::Doctor(args) => cli::doctor::run_cli(args),
        Command::Init(args) => cli::init::run_cli(args),
        Command::App(args) => cli::app::run_cli(args),
        Command::Release(args) => cli::release::run(*args),
        #[cfg(feature = "mcp")]
        Command::Mcp(args) => cli::mcp::run(*args),
    };
    ExitCode::from(code)
}
