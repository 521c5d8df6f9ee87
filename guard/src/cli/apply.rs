//! `guard apply`: re-check the diff against the checkout and apply it to the worktree
//! (see [`guard::apply`]).

use std::path::{Path, PathBuf};

use clap::Args;

use guard::apply::{Applied, ApplyRequest, apply};
use guard::output::text;

use super::check::{load_policy, read_diff, scope_globs};

#[derive(Args)]
pub struct ApplyArgs {
    /// The candidate diff: a file, or `-` for standard input.
    #[arg(long, value_name = "FILE|-")]
    diff: String,
    /// SHA-256 (hex) the diff bytes must hash to.
    #[arg(long, value_name = "HEX")]
    expected_sha256: String,
    /// A declared scope glob (repeatable); every touched path must match one. Required.
    #[arg(
        long = "scope",
        value_name = "GLOB",
        required_unless_present = "declared_scope"
    )]
    scope: Vec<String>,
    /// The declared scope as the workflow input carries it (see `guard check --declared-scope`).
    #[arg(long, value_name = "TEXT", conflicts_with = "scope")]
    declared_scope: Option<String>,
    /// A YAML policy that extends or tightens the embedded default.
    #[arg(long, value_name = "FILE")]
    policy: Option<PathBuf>,
    /// The worktree to apply to: the top level of a clean checkout of the base commit.
    #[arg(long, value_name = "DIR")]
    repo: PathBuf,
    /// The base revision; HEAD must be this commit.
    #[arg(long, value_name = "REV")]
    base: String,
    /// Also write the JSON verdict of the re-check to this file (outside the worktree).
    #[arg(long, value_name = "FILE")]
    verdict_out: Option<PathBuf>,
}

/// Exit 0 applied, 1 rejected (nothing applied), 2 error (nothing applied).
pub fn run(args: ApplyArgs) -> u8 {
    match run_inner(args) {
        Ok(code) => code,
        Err(message) => {
            eprintln!(
                "guard apply: error: {}; nothing was applied",
                guard::escape::neutralize(&message)
            );
            contract::cli::Exit::Error.code()
        }
    }
}

fn run_inner(args: ApplyArgs) -> Result<u8, String> {
    let policy = load_policy(args.policy.as_ref())?;
    if let Some(out) = &args.verdict_out {
        refuse_inside(out, &args.repo, "--verdict-out")?;
    }
    let scope = scope_globs(&args.scope, args.declared_scope.as_deref())?;
    let diff = read_diff(&args.diff, policy.limits.max_diff_bytes)?;
    let request = ApplyRequest {
        diff: &diff,
        expected_sha256: &args.expected_sha256,
        scope: &scope,
        policy: &policy,
        repo: &args.repo,
        base: &args.base,
    };
    let outcome = apply(&request).map_err(|e| e.to_string())?;
    let (verdict, code) = match &outcome {
        Applied::Applied { verdict, .. } => (verdict, contract::cli::Exit::Pass.code()),
        Applied::Rejected(verdict) => (verdict, contract::cli::Exit::Fail.code()),
    };
    if let Some(path) = &args.verdict_out {
        let json = guard::output::json_v1::document(verdict)
            .to_json()
            .map_err(|e| format!("cannot encode the verdict: {e}"))?;
        std::fs::write(path, json).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    let summary = match &outcome {
        Applied::Applied { base_commit, .. } => format!(
            "APPLIED: {} file(s) onto {base_commit} in {}\n",
            verdict.files.len(),
            guard::escape::neutralize(&args.repo.to_string_lossy())
        ),
        Applied::Rejected(_) => "NOT APPLIED: the diff was rejected\n".to_string(),
    };
    contract::cli::emit(&format!("{}{summary}", text::render(verdict)))?;
    Ok(code)
}

/// Refuse an output file inside the worktree: the tree checks would count it as a change.
pub fn refuse_inside(out: &Path, repo: &Path, flag: &str) -> Result<(), String> {
    let Ok(root) = repo.canonicalize() else {
        // The command itself reports a missing repository.
        return Ok(());
    };
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let parent = parent
        .canonicalize()
        .map_err(|e| format!("{flag} {}: {e}", out.display()))?;
    if parent.starts_with(&root) {
        return Err(format!(
            "{flag} {} is inside the worktree, where the tree checks would count it",
            out.display()
        ));
    }
    Ok(())
}
