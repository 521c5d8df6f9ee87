//! `gate init`: write the caller, a starting policy, the App manifest and the rulesets for the
//! repository in `--dir` (see [`gate::init`]), then print the remaining steps. Exit 0: written
//! (or already there, identical); 1: a file exists with other contents and `--force` was not
//! given (nothing written); 2: usage or I/O error.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use contract::cli::emit;
use gate::init::{BuildSystem, InitRequest, Written, plan, write};
use guard::escape::neutralize;

#[derive(Clone, Copy, ValueEnum)]
pub enum System {
    Rust,
    Node,
    Python,
}

#[derive(Args)]
pub struct InitArgs {
    /// The repository's work tree.
    #[arg(long, value_name = "DIR", default_value = ".")]
    dir: PathBuf,
    /// The build system (default: detected from Cargo.toml, package.json, pyproject.toml,
    /// setup.py or requirements.txt).
    #[arg(long, value_enum)]
    build_system: Option<System>,
    /// The release commit to pin the reusable workflow to (default: the placeholder, to replace).
    #[arg(long, value_name = "COMMIT")]
    pin: Option<String>,
    /// The App's id: writes the rulesets, which name it.
    #[arg(long, value_name = "ID", value_parser = clap::value_parser!(u64).range(1..))]
    app_id: Option<u64>,
    /// OWNER/NAME, for the App's name and homepage and the steps.
    #[arg(long, value_name = "OWNER/NAME")]
    repository: Option<String>,
    /// Replace files whose contents differ.
    #[arg(long)]
    force: bool,
}

pub fn run_cli(args: InitArgs) -> u8 {
    let fail = |message: &str| {
        eprintln!("gate init: {}", neutralize(message));
        contract::cli::Exit::Error.code()
    };
    if let Some(r) = &args.repository
        && let Err(e) = github::Repository::parse(r)
    {
        return fail(&e.to_string());
    }
    let request = InitRequest {
        dir: args.dir.clone(),
        build_system: args.build_system.map(|s| match s {
            System::Rust => BuildSystem::Rust,
            System::Node => BuildSystem::Node,
            System::Python => BuildSystem::Python,
        }),
        pin: args.pin.clone(),
        app_id: args.app_id,
        repository: args.repository.clone(),
    };
    let plan = match plan(&request) {
        Ok(plan) => plan,
        Err(e) => return fail(&e.to_string()),
    };
    let done = match write(&args.dir, &plan, args.force) {
        Ok(Ok(done)) => done,
        Ok(Err(conflicts)) => {
            for path in &conflicts.0 {
                eprintln!(
                    "gate init: {} exists with other contents; not replaced (use --force)",
                    neutralize(path)
                );
            }
            eprintln!("gate init: nothing written");
            return contract::cli::Exit::Fail.code();
        }
        Err(e) => return fail(&e.to_string()),
    };
    let mut out = gate::output::text::TextLines::default();
    out.line(&format!(
        "gate init: a {} repository",
        plan.build_system.name()
    ));
    for (path, action) in done {
        let verb = match action {
            Written::Created => "wrote",
            Written::Unchanged => "unchanged",
            Written::Replaced => "replaced",
        };
        out.line(&format!("  {verb:<9} {path}"));
    }
    out.line("Remaining steps, in order:");
    for (i, step) in plan.steps.iter().enumerate() {
        out.line(&format!("  {}. {step}", i + 1));
    }
    let out = out.finish();
    match emit(&out) {
        Ok(()) => contract::cli::Exit::Pass.code(),
        Err(e) => fail(&e),
    }
}
