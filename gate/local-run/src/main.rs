//! `local-run`: the apply/verify workflow's whole loop on this machine, on a bundled sample (see
//! the library's documentation).
//!
//! Exit codes follow the dispatcher's authenticated outcome: `0` the gate passed and the draft
//! pull request exists; `1` the gate failed (the `hook-attack` sample's expected outcome, or a
//! publication the simulated GitHub made fail); `2` local-run's own error, or a stage that ended
//! in an error rather than a verdict.
#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use local_run::github::PublicationScenario;
use local_run::samples::Sample;
use local_run::{Binaries, Options, install};

#[derive(Parser)]
#[command(
    name = "local-run",
    version,
    about = "Play the apply/verify workflow's whole loop on this machine: the dispatcher, the jobs \
             guard -> build-test -> decide -> publish (each stage a separate process from an \
             install directory), and a simulated GitHub, on a bundled sample diff"
)]
struct Cli {
    /// The bundled sample: `accept` (passes the gate), `hook-attack` (a build.rs that writes
    /// .github/workflows/release.yml at build time: the gate fails, exit 1) or `unicode-names`
    /// (Persian and emoji file names joined by zero-width characters: passes the gate).
    #[arg(long, default_value = "accept", value_parser = ["accept", "hook-attack", "unicode-names"])]
    sample: String,
    /// The publication path the simulated GitHub plays: `fresh`; `branch-at-base` (the branch
    /// already exists at the base: reused, exit 0); `branch-elsewhere` (it holds someone else's
    /// commit: refused, exit 1); `tree-mismatch` (the simulated GitHub stores another tree: the
    /// publication fails, exit 1).
    #[arg(long, default_value = "fresh", value_parser = ["fresh", "branch-at-base", "branch-elsewhere", "tree-mismatch"])]
    scenario: String,
    /// Use the guard, gate and report binaries in DIR instead of building the static ones.
    #[arg(long, value_name = "DIR")]
    binaries: Option<PathBuf>,
    /// Keep the temporary directory (checkouts, documents, the install) and print its path.
    #[arg(long)]
    keep: bool,
    /// Rehearse `gate doctor` instead: the simulated GitHub configured as ADOPTING.md's steps
    /// leave a repository, the real `gate doctor` run against it; exit with the doctor's code.
    #[arg(long)]
    doctor: bool,
    /// With --doctor: leave this one setting unconfigured (the doctor then names it and its fix).
    #[arg(long, value_name = "SETTING-ID", requires = "doctor",
          value_parser = clap::builder::PossibleValuesParser::new(local_run::doctor::breakable_ids()))]
    doctor_break: Option<String>,
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let _ = err.print();
            return match err.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    ExitCode::SUCCESS
                }
                _ => ExitCode::from(contract::cli::Exit::Error.code()),
            };
        }
    };
    ExitCode::from(run(&cli))
}

fn error(message: &str) -> u8 {
    eprintln!("local-run: error: {}", guard::escape::neutralize(message));
    contract::cli::Exit::Error.code()
}

fn run(cli: &Cli) -> u8 {
    if cli.doctor {
        return doctor(cli);
    }
    let (Some(sample), Some(scenario)) = (
        Sample::from_name(&cli.sample),
        PublicationScenario::from_name(&cli.scenario),
    ) else {
        return error("unknown sample or scenario");
    };
    let binaries = match &cli.binaries {
        Some(dir) => Binaries::Given(dir.clone()),
        None => match build() {
            Ok(dir) => Binaries::StaticBuild(dir),
            Err(message) => return error(&message),
        },
    };
    let options = Options {
        sample,
        binaries,
        scenario,
        keep: cli.keep,
    };
    let mut stdout = std::io::stdout().lock();
    match local_run::run(&options, &mut stdout) {
        Ok(outcome) => {
            let code = outcome.exit_code();
            if !outcome.errored_stages.is_empty() {
                eprintln!(
                    "local-run: error: a stage ended in an error, not a verdict: {}",
                    guard::escape::neutralize(&outcome.errored_stages.join("; "))
                );
            }
            let word = match code {
                0 => "pass",
                1 => "fail",
                _ => "error",
            };
            println!("\nlocal-run: gate={word}, exit {code}");
            code
        }
        Err(err) => error(&err.to_string()),
    }
}

/// `--doctor`: the rehearsal's exit code is the doctor's.
fn doctor(cli: &Cli) -> u8 {
    let broken = match &cli.doctor_break {
        None => None,
        Some(id) => match gate::doctor::Setting::ALL
            .into_iter()
            .find(|s| s.id() == id)
        {
            Some(setting) => Some(setting),
            None => return error(&format!("unknown setting {id:?}")),
        },
    };
    let dir = match &cli.binaries {
        Some(dir) => dir.clone(),
        None => match build() {
            Ok(dir) => dir,
            Err(message) => return error(&message),
        },
    };
    let mut stdout = std::io::stdout().lock();
    match local_run::doctor::rehearse(&dir.join("gate"), broken, &mut stdout) {
        Ok(code) => code,
        Err(err) => error(&err.to_string()),
    }
}

/// The static build, in the target directory this executable was built in.
fn build() -> Result<PathBuf, String> {
    let exe =
        std::env::current_exe().map_err(|e| format!("cannot locate local-run itself: {e}"))?;
    // target/<profile>/local-run: the target directory is two levels up.
    let target_dir = exe
        .parent()
        .and_then(Path::parent)
        .ok_or_else(|| format!("cannot tell the target directory from {}", exe.display()))?;
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    eprintln!(
        "local-run: building the stage binaries: {}",
        install::BUILD_COMMAND_LINE
    );
    install::build_static(&workspace, target_dir).map_err(|e| e.to_string())
}
