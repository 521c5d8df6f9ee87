//! `guard`: validate a candidate diff as data, apply it, verify the tree, run the build isolated.
#![forbid(unsafe_code)]

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cli;

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
    #[command(
        after_help = "Exit codes: 0 accept; 1 reject (any violation, a malformed or ambiguous diff included); 2 usage, configuration or I/O error (no verdict). Never 0 when anything went wrong.\nRules and policy: README.md#guard-check"
    )]
    Check(cli::check::CheckArgs),
    /// Re-check the diff against a clean checkout of the base and apply it to the worktree.
    #[command(
        after_help = "Exit codes: 0 applied; 1 rejected (nothing applied); 2 usage, configuration or I/O error (nothing applied)."
    )]
    Apply(cli::apply::ApplyArgs),
    /// Check the worktree against the verdict after apply, or against the baseline after the build.
    #[command(
        after_help = "Exit codes: 0 the tree checks out; 1 findings (tree-mismatch, build-wrote); 2 usage, configuration or I/O error."
    )]
    VerifyTree(cli::verify_tree::VerifyTreeArgs),
    /// Validate the workflow's dispatch inputs from TASK_ID, BASE_SHA, EXPECTED_DIFF_SHA256,
    /// DECLARED_SCOPE, DIFF_B64, DIFF_REF and DISPATCH_MAC (::error:: per problem, exit 1).
    Inputs(cli::inputs::InputsArgs),
    /// Run the build/test command without credentials or network.
    #[command(
        after_help = "Exit codes: 0 the command ran isolated and exited 0; 1 it ran and failed (non-zero exit, signal or timeout); 2 it could not be run isolated, or a usage or I/O error."
    )]
    Run(cli::run::RunArgs),
    /// List the base commit's workflow jobs that would run on the published branch's push or pull
    /// request with secrets and no environment (exit 1 unless the policy allows them).
    Readiness(cli::readiness::ReadinessArgs),
    #[command(name = guard::sandbox::stage::STAGE_SUBCOMMAND, hide = true)]
    SandboxStage(cli::run::SandboxStageArgs),
}

fn main() -> ExitCode {
    contract::cli::install_panic_hook("guard");
    let cli = match contract::cli::parse_args::<Cli>() {
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
