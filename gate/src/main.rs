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
    /// Re-verify a diff from trusted inputs and write the createCommitOnBranch input and the draft
    /// pull request to open. Never checks out or executes the patch.
    PublishPlan(Box<cli::publish_plan::PublishPlanArgs>),
    /// Sign and dispatch the workflow, learn the run, and with --wait report its authenticated
    /// outcome (token from GH_TOKEN/GITHUB_TOKEN, key from AGENT_TEAM_DISPATCH_KEY).
    Dispatch(cli::dispatch::DispatchArgs),
    /// Verify the dispatcher's signature (dispatch_mac) with the key from the environment, before
    /// anything is published.
    VerifyDispatch(cli::verify_dispatch::VerifyDispatchArgs),
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
        Command::Dispatch(args) => cli::dispatch::run_cli(args),
        Command::VerifyDispatch(args) => cli::verify_dispatch::run(args),
    };
    ExitCode::from(code)
}
