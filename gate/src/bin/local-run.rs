//! `local-run`: the apply/verify workflow's job graph on this machine, on a bundled sample (see
//! [`gate::local_run`]). Builds the stage binaries first, into the target directory this binary
//! lives in.
//!
//! Exit codes: `0` the pipeline ran and the gate passed; `1` the gate failed (the `hook-attack`
//! sample's expected outcome); `2` local-run's own error, or a stage that ended in an error rather
//! than a verdict.
#![forbid(unsafe_code)]

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use clap::Parser;
use gate::local_run::{self, Binaries, Options, Sample};

#[derive(Parser)]
#[command(
    name = "local-run",
    version,
    about = "Play the apply/verify job graph (guard -> build-test -> gate-and-pr) on this machine, \
             on a bundled sample diff, each stage a separate process"
)]
struct Cli {
    /// The bundled sample: `accept` (passes the gate), `hook-attack` (a build.rs that writes
    /// .github/workflows/release.yml at build time: the gate fails, exit 1) or `unicode-names`
    /// (Persian and emoji file names joined by zero-width characters: passes the gate).
    #[arg(long, default_value = "accept", value_parser = ["accept", "hook-attack", "unicode-names"])]
    sample: String,
    /// Keep the temporary directory (checkouts, verdicts, reports, the plan) and print its path.
    #[arg(long)]
    keep: bool,
    /// Use the stage binaries already beside this one; do not run cargo build.
    #[arg(long)]
    no_build: bool,
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

fn run(cli: &Cli) -> u8 {
    let Some(sample) = Sample::from_name(&cli.sample) else {
        eprintln!("local-run: unknown sample {:?}", cli.sample);
        return contract::cli::Exit::Error.code();
    };
    let binaries = match stage_binaries(!cli.no_build) {
        Ok(binaries) => binaries,
        Err(message) => {
            eprintln!("local-run: error: {message}");
            return contract::cli::Exit::Error.code();
        }
    };
    let options = Options {
        sample,
        binaries,
        keep: cli.keep,
    };
    let mut stdout = std::io::stdout().lock();
    match local_run::run(&options, &mut stdout) {
        Ok(outcome) if !outcome.errored_steps.is_empty() => {
            eprintln!(
                "local-run: error: a stage ended in an error, not a verdict: {}",
                outcome.errored_steps.join("; ")
            );
            contract::cli::Exit::Error.code()
        }
        Ok(outcome) if outcome.gate_passed => {
            println!("\nlocal-run: gate=pass, exit 0");
            contract::cli::Exit::Pass.code()
        }
        Ok(_) => {
            println!("\nlocal-run: gate=fail, exit 1");
            contract::cli::Exit::Fail.code()
        }
        Err(err) => {
            eprintln!("local-run: error: {err}");
            contract::cli::Exit::Error.code()
        }
    }
}

/// `$CARGO build --locked -q -p guard -p gate -p report` into the target directory and profile of
/// this executable (cargo is a no-op when they are fresh), then the three binaries beside it.
fn stage_binaries(build: bool) -> Result<Binaries, String> {
    let exe =
        std::env::current_exe().map_err(|e| format!("cannot locate local-run itself: {e}"))?;
    let exe_dir = exe
        .parent()
        .ok_or_else(|| format!("{} has no parent directory", exe.display()))?;
    if build {
        build_stages(exe_dir)?;
    }
    Binaries::in_dir(exe_dir).map_err(|e| e.to_string())
}

fn build_stages(exe_dir: &Path) -> Result<(), String> {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    if !workspace.join("Cargo.toml").is_file() {
        return Err(format!(
            "the workspace local-run was built from is not at {} any more; rebuild it, or pass \
             --no-build with guard, gate and report beside local-run",
            workspace.display()
        ));
    }
    // target/<profile>/local-run (or target/<triple>/<profile>/): building with the parent as
    // --target-dir puts the binaries in exe_dir whatever the layout above it.
    let (Some(target_dir), Some(profile)) = (exe_dir.parent(), exe_dir.file_name()) else {
        return Err(format!(
            "cannot tell the target directory from {}",
            exe_dir.display()
        ));
    };
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"));
    let mut cmd = Command::new(&cargo);
    cmd.args([
        "build", "--locked", "-q", "-p", "guard", "-p", "gate", "-p", "report",
    ])
    .arg("--target-dir")
    .arg(target_dir);
    match profile.to_str() {
        Some("debug") => {}
        Some("release") => {
            cmd.arg("--release");
        }
        Some(other) => {
            cmd.args(["--profile", other]);
        }
        None => return Err(format!("unusual profile directory {}", exe_dir.display())),
    }
    // Only the variables that say where the target directory is are dropped: --target-dir says it.
    cmd.env_remove("CARGO_TARGET_DIR")
        .current_dir(&workspace)
        .stdin(Stdio::null());
    eprintln!(
        "local-run: building the stage binaries: {} build --locked -q -p guard -p gate -p report",
        PathBuf::from(&cargo).display()
    );
    let status = cmd
        .status()
        .map_err(|e| format!("cannot run {}: {e}", PathBuf::from(&cargo).display()))?;
    if !status.success() {
        return Err(format!(
            "cargo build of the stage binaries failed ({status})"
        ));
    }
    Ok(())
}
