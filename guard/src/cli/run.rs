//! `guard run`: run the build/test command contained (see [`guard::sandbox`]), and with
//! `--verdict`/`--baseline` judge what it wrote once it is gone.

use std::ffi::OsString;

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use guard::escape;
use guard::sandbox::layer::WriteBudget;
use guard::sandbox::stage::{self, Limits, StagePlan};
use guard::sandbox::{self, Isolation, NamespaceHook, RunOutcome, RunSpec, TreeSpec};
use guard::tree::Baseline;
use guard::tree::json_v1::SnapshotDoc;
use guard::tree::walk::WalkLimits;

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
    /// Run without a network namespace if one cannot be established, because an outer layer
    /// blocks egress; every other layer is still required; recorded in the report.
    #[arg(long, value_name = "REASON")]
    no_isolation_because: Option<String>,
    /// Most entries the tree checks walk (the whole tree, `.git` included); a build that leaves
    /// more fails the check after it (rule build-wrote), with its report written.
    #[arg(long, value_name = "N", default_value_t = WalkLimits::default().max_entries)]
    max_entries: usize,
    /// The bound of all the build's memory together (its control group's memory.max, where the
    /// host allows one: started as root); default three quarters of the host's memory.
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(16 << 20..))]
    memory_max: Option<u64>,
    /// Started as root, the build writes its worktree through an overlay whose upper layer, a
    /// tmpfs of at most BYTES, only the guard reads and discards after the check: the checkout
    /// is never written. Reaching it fails the build (rule build-wrote).
    #[arg(long, value_name = "BYTES", default_value_t = WriteBudget::DEFAULT.bytes, value_parser = clap::value_parser!(u64).range(1 << 20..))]
    write_budget_bytes: u64,
    /// The number of files, directories and links the build may create or change in its
    /// worktree (the upper layer's inodes); reaching it fails the build (rule build-wrote).
    #[arg(long, value_name = "N", default_value_t = WriteBudget::DEFAULT.inodes, value_parser = clap::value_parser!(u64).range(16..))]
    write_budget_inodes: u64,
    /// The repository to build: the working directory (writable), and its .git is read-only.
    #[arg(long, value_name = "DIR")]
    repo: Option<PathBuf>,
    /// A declared build output outside the worktree, writable by the build (repeatable).
    #[arg(long = "writable", value_name = "DIR")]
    writable: Vec<PathBuf>,
    /// A directory the build reads (a toolchain, a dependency cache) outside /usr, /etc and /sys,
    /// which alone of the host are in its view; visible read-only (repeatable).
    #[arg(long = "read-only", value_name = "DIR")]
    read_only: Vec<PathBuf>,
    /// A directory inside a --read-only one that the build must not see (repeatable).
    #[arg(long = "hide", value_name = "DIR")]
    hide: Vec<PathBuf>,
    /// The verdict of the applied diff: with --baseline, the tree is checked after the build by
    /// this process, once every process of the build is gone (rule build-wrote; exit 1).
    #[arg(long, value_name = "FILE", requires = "baseline", requires = "repo")]
    verdict: Option<PathBuf>,
    /// The snapshot `guard verify-tree --out` wrote after apply; read before the build starts and
    /// kept in memory.
    #[arg(long, value_name = "FILE", requires = "verdict")]
    baseline: Option<PathBuf>,
    /// SHA-256 the baseline file must hash to.
    #[arg(long, value_name = "HEX", requires = "baseline")]
    baseline_sha256: Option<String>,
    /// Also write the after-build check as agent-team-apply/verify-tree/v1 here.
    #[arg(long, value_name = "FILE", requires = "baseline")]
    tree_report: Option<PathBuf>,
    /// The command and its arguments, after `--`.
    #[arg(last = true, required = true, num_args = 1.., value_name = "CMD")]
    command: Vec<OsString>,
}

/// The baseline and verdict, read and bound together before the build starts.
struct LoadedTree {
    spec: TreeSpec,
    doc: SnapshotDoc,
    baseline_sha256: contract::ids::Sha256Hex,
    verdict_sha256: contract::ids::Sha256Hex,
}

fn load_tree(args: &RunArgs, policy: &guard::policy::Policy) -> Result<Option<LoadedTree>, String> {
    let (Some(verdict_path), Some(baseline_path), Some(repo)) =
        (&args.verdict, &args.baseline, &args.repo)
    else {
        return Ok(None);
    };
    if let Some(out) = &args.tree_report {
        super::apply::refuse_inside(out, repo, "--tree-report")?;
    }
    let (verdict, verdict_sha256) = super::verify_tree::read_verdict(verdict_path)?;
    let (doc, entries, baseline_sha256) =
        super::verify_tree::read_baseline(baseline_path, args.baseline_sha256.as_deref())?;
    let baseline = Baseline::from_parts(repo, &doc, entries, verdict_sha256.as_str())
        .map_err(|e| e.to_string())?;
    Ok(Some(LoadedTree {
        spec: TreeSpec {
            baseline,
            verdict,
            policy: policy.clone(),
            walk: WalkLimits {
                max_entries: args.max_entries,
                ..WalkLimits::default()
            },
        },
        doc,
        baseline_sha256,
        verdict_sha256,
    }))
}

pub fn run(mut args: RunArgs) -> u8 {
    // Loaded before anything runs: a policy, verdict or baseline that cannot be read stops the
    // run (exit 2).
    let policy = match super::check::load_policy(args.policy.as_ref()) {
        Ok(policy) => policy,
        Err(message) => {
            eprintln!("guard run: {}", escape::neutralize(&message));
            return contract::cli::Exit::Error.code();
        }
    };
    if args.policy.is_some() {
        args.allow_env.extend(policy.env_allow.iter().cloned());
    }
    // The tree spec moves into the run (the baseline is not copied: it is the largest thing the
    // guard holds); what the report needs besides stays here.
    let (tree_spec, loaded) = match load_tree(&args, &policy) {
        Ok(Some(LoadedTree {
            spec,
            doc,
            baseline_sha256,
            verdict_sha256,
        })) => (Some(spec), Some((doc, baseline_sha256, verdict_sha256))),
        Ok(None) => (None, None),
        Err(message) => {
            eprintln!("guard run: {}", escape::neutralize(&message));
            return contract::cli::Exit::Error.code();
        }
    };
    let guard_exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(err) => {
            eprintln!("guard run: cannot locate the guard binary: {err}");
            return contract::cli::Exit::Error.code();
        }
    };
    let hook = std::env::var(NamespaceHook::ENV)
        .ok()
        .filter(|v| !v.is_empty())
        .map(|v| NamespaceHook::from_value(&v));
    let landlock_abi_at_most = std::env::var_os(sandbox::LANDLOCK_ABI_ENV)
        .map(|v| sandbox::landlock_abi_at_most(&v.to_string_lossy()));
    let spec = RunSpec {
        command: args.command,
        timeout: Duration::from_secs(args.timeout),
        max_output: args.max_output,
        allow_env: args.allow_env,
        repo: args.repo,
        opt_out: args.no_isolation_because,
        guard_exe,
        hook,
        landlock_abi_at_most,
        writable: args.writable,
        read_only: args.read_only,
        hide: args.hide,
        limits: Limits::default(),
        memory_max: args.memory_max,
        tree: tree_spec,
        write_budget: WriteBudget {
            bytes: args.write_budget_bytes,
            inodes: args.write_budget_inodes,
        },
    };
    let outcome = match sandbox::run(&spec) {
        Ok(outcome) => outcome,
        Err(err) => {
            eprintln!("guard run: {}", escape::neutralize(&err.to_string()));
            return contract::cli::Exit::Error.code();
        }
    };
    print_summary(&outcome);
    if let (Some((baseline, baseline_sha256, verdict_sha256)), Some(tree), Some(tree_spec)) =
        (&loaded, &outcome.tree, &spec.tree)
    {
        let doc = super::verify_tree::after_build_doc(
            baseline,
            baseline_sha256,
            &tree_spec.verdict,
            verdict_sha256,
            tree.entries,
            &tree.findings,
        );
        eprint!("{}", super::verify_tree::render(&doc, &tree.findings));
        if let Some(path) = &args.tree_report
            && let Err(err) = doc
                .to_json()
                .map_err(std::io::Error::other)
                .and_then(|json| std::fs::write(path, json))
        {
            eprintln!(
                "guard run: cannot write the tree report {}: {err}",
                escape::neutralize(&path.to_string_lossy())
            );
            return contract::cli::Exit::Error.code();
        }
    }
    if let Some(path) = &args.report {
        let written = guard::sandbox::json_v1::document(&outcome)
            .and_then(|doc| guard::doc_json::to_vec_pretty(&doc))
            .map_err(|e| format!("cannot encode the report: {e}"))
            .and_then(|json| contract::cli::write_atomic(path, &json));
        if let Err(err) = written {
            eprintln!(
                "guard run: cannot write the report {}: {err}",
                escape::neutralize(&path.to_string_lossy())
            );
            return contract::cli::Exit::Error.code();
        }
    }
    if outcome.passed() {
        contract::cli::Exit::Pass.code()
    } else {
        contract::cli::Exit::Fail.code()
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
        eprintln!("| {}", escape::neutralize(line));
    }
    if !outcome.env.refused.is_empty() {
        eprintln!(
            "guard run: secret-looking variables not passed: {}",
            outcome.env.refused.join(", ")
        );
    }
    match &outcome.isolation {
        Isolation::Namespace {
            layers,
            probe,
            network_opt_out,
            ..
        } => {
            match network_opt_out {
                None => eprintln!("guard run: network: namespace (only lo)"),
                Some(o) => eprintln!(
                    "guard run: network: NOT isolated by guard (opted out: {}; network namespace unavailable: {}); every other layer in force",
                    escape::neutralize(&o.reason),
                    escape::neutralize(&o.unavailable)
                ),
            }
            eprintln!(
                "guard run: contained as uid {} gid {}, layers: {}",
                probe.uids.first().copied().unwrap_or_default(),
                probe.gids.first().copied().unwrap_or_default(),
                layers.join(", ")
            );
        }
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
    stage: String,
    /// The stage plan, JSON.
    #[arg(long)]
    plan: String,
    #[arg(last = true, required = true, num_args = 1..)]
    command: Vec<OsString>,
}

pub fn sandbox_stage(args: SandboxStageArgs) -> u8 {
    match serde_json::from_str::<StagePlan>(&args.plan) {
        Ok(plan) => stage::run_stage(&args.stage, &plan, &args.command),
        Err(err) => {
            eprintln!("guard run: malformed sandbox plan: {err}");
            contract::cli::Exit::Error.code()
        }
    }
}
