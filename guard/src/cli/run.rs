//! `guard run`: run the build/test command without credentials or network (see [`guard::sandbox`]).

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use guard::escape;
use guard::sandbox::json_v1::RunReportDoc;
use guard::sandbox::stage::{self, StagePlan};
use guard::sandbox::{self, Isolation, NamespaceHook, RunOutcome, RunSpec};

use crate::{EXIT_ACCEPT, EXIT_ERROR, EXIT_REJECT};

#[derive(Args)]
pub struct RunArgs {
    /// Wall-clock limit in seconds; the whole process tree is killed when it is reached.
    #[arg(long, value_name = "SECONDS", default_value_t = 3600, value_parser = clap::value_parser!(u64).range(1..))]
    timeout: u64,
    /// Keep the last BYTES of output (stdout and stderr interleaved) and count the rest.
    #[arg(long, value_name = "BYTES", default_value_t = 1024 * 1024)]
    max_output: usize,
    /// Write the versioned JSON report (agent-team-apply/guard-run/v1) here; not written when
    /// the command did not run (exit 2).
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// Also pass this environment variable through (repeatable); secret-looking names and values
    /// are dropped anyway.
    #[arg(long = "allow-env", value_name = "NAME")]
    allow_env: Vec<String>,
    /// Policy file whose `build.env` names are passed through like --allow-env (the secret
    /// filter still applies).
    #[arg(long, value_name = "FILE")]
    policy: Option<PathBuf>,
    /// Run without namespaces if they cannot be established, because an outer layer isolates the
    /// network; recorded in the report.
    #[arg(long, value_name = "REASON")]
    no_isolation_because: Option<String>,
    /// The repository to build: the working directory, and its .git is made read-only.
    #[arg(long, value_name = "DIR")]
    repo: Option<PathBuf>,
    /// The command and its arguments, after `--`.
    #[arg(last = true, required = true, num_args = 1.., value_name = "CMD")]
    command: Vec<OsString>,
}

pub fn run(mut args: RunArgs) -> u8 {
    if let Some(path) = &args.policy {
        // Loaded before anything runs: a policy that cannot be read stops the run (exit 2).
        match super::check::load_policy(Some(path)) {
            Ok(policy) => args.allow_env.extend(policy.env_allow),
            Err(message) => {
                eprintln!("guard run: {}", escape::terminal(&message));
                return EXIT_ERROR;
            }
        }
    }
    let guard_exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(err) => {
            eprintln!("guard run: cannot locate the guard binary: {err}");
            return EXIT_ERROR;
        }
    };
    let hook = std::env::var(NamespaceHook::ENV)
        .ok()
        .filter(|v| !v.is_empty())
        .map(|v| NamespaceHook::from_value(&v));
    let spec = RunSpec {
        command: args.command,
        timeout: Duration::from_secs(args.timeout),
        max_output: args.max_output,
        allow_env: args.allow_env,
        repo: args.repo,
        opt_out: args.no_isolation_because,
        guard_exe,
        hook,
    };
    let outcome = match sandbox::run(&spec) {
        Ok(outcome) => outcome,
        Err(err) => {
            eprintln!("guard run: {}", escape::terminal(&err.to_string()));
            return EXIT_ERROR;
        }
    };
    print_summary(&outcome);
    if let Some(path) = &args.report {
        let doc = RunReportDoc::from_outcome(&outcome);
        let written = guard::doc_json::to_vec_pretty(&doc)
            .map_err(std::io::Error::other)
            .and_then(|json| std::fs::write(path, json));
        if let Err(err) = written {
            eprintln!(
                "guard run: cannot write the report {}: {err}",
                escape::terminal(&path.to_string_lossy())
            );
            return EXIT_ERROR;
        }
    }
    if outcome.passed() {
        EXIT_ACCEPT
    } else {
        EXIT_REJECT
    }
}

/// The command's output is attacker-controlled: it reaches the log escaped, each line behind a
/// `| ` prefix so that no line can start a GitHub workflow command (`::...`).
fn print_summary(outcome: &RunOutcome) {
    let tail = String::from_utf8_lossy(&outcome.output_tail);
    if outcome.output_truncated_bytes > 0 {
        eprintln!(
            "guard run: output: last {} bytes ({} earlier bytes dropped)",
            outcome.output_tail.len(),
            outcome.output_truncated_bytes
        );
    }
    for line in tail.lines() {
        eprintln!("| {}", escape::terminal(line));
    }
    if !outcome.env.refused.is_empty() {
        eprintln!(
            "guard run: secret-looking variables not passed: {}",
            outcome.env.refused.join(", ")
        );
    }
    match &outcome.isolation {
        Isolation::Namespace { .. } => eprintln!("guard run: network: namespace (only lo)"),
        Isolation::OptedOut {
            reason,
            unavailable,
        } => eprintln!(
            "guard run: network: NOT isolated by guard (opted out: {}; namespaces unavailable: {})",
            escape::terminal(reason),
            escape::terminal(unavailable)
        ),
    }
    let how = outcome.exit.describe(outcome.timed_out);
    eprintln!(
        "guard run: command {how} after {} ms",
        outcome.duration.as_millis()
    );
}

/// Internal: a sandbox stage (see `guard::sandbox::stage`). Not for direct use.
#[derive(Args)]
pub struct SandboxStageArgs {
    #[arg(long)]
    stage: u8,
    #[arg(long)]
    nonce: String,
    #[arg(long)]
    outer_netns: String,
    #[arg(long)]
    outer_userns: String,
    #[arg(long)]
    guard_exe: PathBuf,
    #[arg(long)]
    unshare: PathBuf,
    #[arg(long)]
    mount: PathBuf,
    #[arg(long)]
    ip: Option<PathBuf>,
    #[arg(long)]
    git_dir: Option<PathBuf>,
    #[arg(last = true, required = true, num_args = 1..)]
    command: Vec<OsString>,
}

pub fn sandbox_stage(args: SandboxStageArgs) -> u8 {
    let plan = StagePlan {
        stage: args.stage,
        nonce: args.nonce,
        outer_netns: args.outer_netns,
        outer_userns: args.outer_userns,
        git_dir: args.git_dir,
        guard_exe: args.guard_exe,
        unshare: args.unshare,
        mount: args.mount,
        ip: args.ip,
        command: args.command,
    };
    stage::run_stage(&plan)
}
