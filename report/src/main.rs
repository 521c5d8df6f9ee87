//! `report`: render guard verdicts for their sinks, build the gate's check-run body, and correlate
//! a dispatched workflow run.
#![forbid(unsafe_code)]

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cli;

#[derive(Parser)]
#[command(
    name = "report",
    version,
    about = "Render verdicts and reports for their GitHub sinks"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Render a guard verdict (JSON v1) as markdown, workflow-command annotations or SARIF.
    Render(cli::render::RenderArgs),
    /// Print the JSON body of `POST /repos/{owner}/{repo}/check-runs` for a gate decision.
    CheckRun(cli::check_run::CheckRunArgs),
    /// Assemble the NON-authoritative build-test report from guard's run and tree-check documents.
    BuildTest(cli::build_test::BuildTestArgs),
    /// Render a readiness document (guard readiness) as a step-summary section or annotations.
    Readiness(cli::readiness::ReadinessArgs),
    /// Print the id of the run a dispatch started, from `gh run list --json ...` output.
    SelectRun(cli::select_run::SelectRunArgs),
}

fn main() -> ExitCode {
    contract::cli::install_panic_hook("report");
    let cli = match contract::cli::parse_args::<Cli>() {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    let code = match cli.command {
        Command::Render(args) => cli::render::run(args),
        Command::CheckRun(args) => cli::check_run::run(args),
        Command::SelectRun(args) => cli::select_run::run(args),
        Command::BuildTest(args) => cli::build_test::run(args),
        Command::Readiness(args) => cli::readiness::run(args),
    };
    ExitCode::from(code)
}
