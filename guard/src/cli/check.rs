//! `guard check`: validate a candidate diff as data.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use guard::check::{CheckRequest, RepoBase, check_hashed};
use guard::hash::HashedDiff;
use guard::output::text;
use guard::policy::Policy;

#[derive(Clone, Copy, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

#[derive(Args)]
pub struct CheckArgs {
    /// The candidate diff: a file, or `-` for standard input.
    #[arg(long, value_name = "FILE|-")]
    diff: String,
    /// SHA-256 the diff bytes must hash to: 64 lower-case hex digits (`sha256sum FILE`).
    #[arg(long, value_name = "HEX")]
    expected_sha256: String,
    /// A declared scope glob (repeatable, one glob each); every touched path must match one.
    /// `*` stays within a path component, `**` crosses (`crates/**`, not `crates`). Without any,
    /// the diff is rejected (no-scope).
    #[arg(long = "scope", value_name = "GLOB")]
    scope: Vec<String>,
    /// The declared scope as the workflow input carries it (globs separated by newlines, or by
    /// commas outside `{}`), read by the one rule for that input (`guard::inputs::Scope`); instead
    /// of --scope.
    #[arg(long, value_name = "TEXT", conflicts_with = "scope")]
    declared_scope: Option<String>,
    /// A YAML policy that extends or tightens the embedded default.
    #[arg(long, value_name = "FILE")]
    policy: Option<PathBuf>,
    /// A checkout of the base: enables base-tree rules and the cross-check against git.
    #[arg(long, value_name = "DIR")]
    repo: Option<PathBuf>,
    /// The base revision in --repo (default HEAD).
    #[arg(long, value_name = "REV", requires = "repo")]
    base: Option<String>,
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// Also write the JSON verdict to this file.
    #[arg(long, value_name = "FILE")]
    verdict_out: Option<PathBuf>,
}

/// The scope globs: `--scope` as given, or `--declared-scope` split by the input's own rule.
pub fn scope_globs(scope: &[String], declared: Option<&str>) -> Result<Vec<String>, String> {
    match declared {
        None => Ok(scope.to_vec()),
        Some(text) => guard::inputs::Scope::parse_described(text)
            .map(|s| s.globs().to_vec())
            .map_err(|message| format!("--declared-scope: {message}")),
    }
}

/// Load the policy named on the command line, or the embedded default.
pub fn load_policy(path: Option<&PathBuf>) -> Result<Policy, String> {
    Policy::load(path.map(PathBuf::as_path))
}

/// Read the diff from a file or standard input, at most `limit + 1` bytes: anything longer is
/// over the limit whatever follows.
pub fn read_diff(source: &str, limit: u64) -> Result<Vec<u8>, String> {
    read_hashed_diff(source, limit).map(HashedDiff::into_bytes)
}

/// Read the diff (at most `limit + 1` bytes: anything longer is over the limit whatever follows),
/// hashing it while it is read.
pub fn read_hashed_diff(source: &str, limit: u64) -> Result<HashedDiff, String> {
    let cap = limit.saturating_add(1);
    let result = if source == "-" {
        HashedDiff::read(std::io::stdin().lock(), 0, cap)
    } else {
        std::fs::File::open(source).and_then(|f| {
            let size = f.metadata().map(|m| m.len()).unwrap_or(0);
            HashedDiff::read(f, size, cap)
        })
    };
    result.map_err(|e| {
        format!(
            "cannot read diff {}: {e}",
            guard::escape::neutralize(source)
        )
    })
}

pub fn run(args: CheckArgs) -> u8 {
    match run_inner(args) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("guard: error: {message}");
            contract::cli::Exit::Error.code()
        }
    }
}

fn run_inner(args: CheckArgs) -> Result<u8, String> {
    // The diff is read and hashed while the policy's patterns are compiled.
    let (policy, diff) = Policy::load_beside(args.policy.as_deref(), |limits| {
        read_hashed_diff(&args.diff, limits.max_diff_bytes)
    })?;
    let diff = diff?;
    let (expected, scope) = (
        args.expected_sha256.clone(),
        scope_globs(&args.scope, args.declared_scope.as_deref())?,
    );
    let base = args.base.clone().unwrap_or_else(|| "HEAD".to_string());
    let request = CheckRequest {
        diff: diff.bytes(),
        expected_sha256: &expected,
        scope: &scope,
        policy: &policy,
        repo: args
            .repo
            .as_deref()
            .map(|dir| RepoBase { dir, base: &base }),
    };
    let verdict = check_hashed(&request, &diff).map_err(|e| e.to_string())?;
    // The JSON document is encoded only when something reads it (a large diff's verdict lists
    // thousands of files).
    let json = || {
        guard::output::json_v1::document(&verdict)
            .to_json()
            .map_err(|e| format!("cannot encode the verdict: {e}"))
    };
    let json = match (&args.verdict_out, args.format) {
        (None, Format::Text) => None,
        _ => Some(json()?),
    };
    if let (Some(path), Some(json)) = (&args.verdict_out, &json) {
        std::fs::write(path, json).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    match (args.format, &json) {
        (Format::Json, Some(json)) => contract::cli::emit(json)?,
        _ => contract::cli::emit(&text::render(&verdict))?,
    }
    Ok(if verdict.accepted() {
        contract::cli::Exit::Pass.code()
    } else {
        contract::cli::Exit::Fail.code()
    })
}
