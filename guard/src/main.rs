//! `guard`: validate a candidate diff as data, apply it, verify the tree, run the build isolated.
#![forbid(unsafe_code)]

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cli;

/// Exit codes, as documented: 0 accept, 1 reject, 2 usage/configuration/I/O error.
pub const EXIT_ACCEPT: u8 = 0;
pub const EXIT_REJECT: u8 = 1;
pub const EXIT_ERROR: u8 = 2;

#[derive(Parser)]
#[command(
    name = "guard",
    version,
    about = "Validate an untrusted diff as data before anything runs"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Validate a candidate diff against the policy (and, with --repo, against git's own reading).
    Check(cli::check::CheckArgs),
    /// Re-check the diff against a clean checkout of the base and apply it to the worktree.
    Apply(cli::apply::ApplyArgs),
    /// Check the worktree against the verdict after apply, or against the baseline after the build.
    VerifyTree(cli::verify_tree::VerifyTreeArgs),
    /// Validate the workflow's dispatch inputs from TASK_ID, BASE_SHA, EXPECTED_DIFF_SHA256,
    /// DECLARED_SCOPE, DIFF_B64, DIFF_REF and DISPATCH_MAC (::error:: per problem, exit 1).
    Inputs(cli::inputs::InputsArgs),
    /// Run the build/test command without credentials or network.
    Run(cli::run::RunArgs),
    /// List the base commit's workflow jobs that would run on the published branch's push or pull
    /// request with secrets and no environment (exit 1 unless the policy allows them).
    Readiness(cli::readiness::ReadinessArgs),
    #[command(name = guard::sandbox::stage::STAGE_SUBCOMMAND, hide = true)]
    SandboxStage(cli::run::SandboxStageArgs),
}

fn main() -> ExitCode {
    guard::cli_args::exit_2_on_panic("guard");
    let cli = match guard::cli_args::parse::<Cli>() {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    let code = match cli.command {
        Command::Check(args) => cli::check::run(args),
        Command::Apply(args) => cli::apply::run(args),
        Command::VerifyTree(args) => cli::verify_tree::run(args),
        Command::Inputs(args) => cli::inputs::run(args),
        Command::Run(args) => cli::run::run(args),
        Command::Readiness(args) => cli::readiness::run(args),
        Command::SandboxStage(args) => cli::run::sandbox_stage(args),
    };
    ExitCode::from(code)
}
