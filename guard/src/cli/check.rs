//! `guard check`: validate a candidate diff as data.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use guard::check::{CheckRequest, RepoBase, check_hashed};
use guard::hash::HashedDiff;
use guard::output::{json_v1::VerdictDoc, text};
use guard::policy::Policy;

/// The sample the README's first command checks: a diff that must be accepted.
const SAMPLE_DIFF: &[u8] = include_bytes!("../../../fixtures/sample/accept.diff");
const SAMPLE_SCOPE: &[&str] = &["src/**", "docs/**"];

#[derive(Clone, Copy, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

#[derive(Args)]
pub struct CheckArgs {
    /// The candidate diff: a file, or `-` for standard input.
    #[arg(long, value_name = "FILE|-", required_unless_present = "sample")]
    diff: Option<String>,
    /// SHA-256 (hex) the diff bytes must hash to.
    #[arg(long, value_name = "HEX", required_unless_present = "sample")]
    expected_sha256: Option<String>,
    /// A declared scope glob (repeatable); every touched path must match one. Required.
    #[arg(long = "scope", value_name = "GLOB")]
    scope: Vec<String>,
    /// The declared scope as the workflow input carries it (globs separated by commas or
    /// newlines), read by the one rule for that input (`guard::inputs::Scope`); instead of --scope.
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
    /// Check the bundled sample diff (with its own hash and scope) instead of --diff.
    #[arg(long, conflicts_with_all = ["diff", "expected_sha256", "scope", "declared_scope"])]
    sample: bool,
}

/// The scope globs: `--scope` as given, or `--declared-scope` split by the input's own rule.
pub fn scope_globs(scope: &[String], declared: Option<&str>) -> Result<Vec<String>, String> {
    match declared {
        None => Ok(scope.to_vec()),
        Some(text) => guard::inputs::Scope::parse(text)
            .map(|s| s.globs().to_vec())
            .map_err(|errors| {
                let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
                format!("--declared-scope: {}", messages.join("; "))
            }),
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
    result.map_err(|e| format!("cannot read diff {}: {e}", guard::escape::terminal(source)))
}

pub fn run(args: CheckArgs) -> u8 {
    match run_inner(args) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("guard: error: {message}");
            crate::EXIT_ERROR
        }
    }
}

fn run_inner(args: CheckArgs) -> Result<u8, String> {
    let policy = load_policy(args.policy.as_ref())?;
    let (diff, expected, scope) = if args.sample {
        let scope = SAMPLE_SCOPE.iter().map(|s| s.to_string()).collect();
        let diff = HashedDiff::new(SAMPLE_DIFF.to_vec());
        let expected = guard::hash::to_hex(diff.digest());
        (diff, expected, scope)
    } else {
        let source = args.diff.as_deref().unwrap_or("-");
        let diff = read_hashed_diff(source, policy.limits.max_diff_bytes)?;
        (
            diff,
            args.expected_sha256.clone().unwrap_or_default(),
            scope_globs(&args.scope, args.declared_scope.as_deref())?,
        )
    };
    if args.sample && matches!(args.format, Format::Text) {
        guard::cli_args::emit(&format!(
            "Checking the bundled sample diff (fixtures/sample/accept.diff) with scope {}\n",
            SAMPLE_SCOPE.join(", ")
        ))?;
    }
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
    let json = VerdictDoc::from_verdict(&verdict)
        .to_json()
        .map_err(|e| format!("cannot encode the verdict: {e}"))?;
    if let Some(path) = &args.verdict_out {
        std::fs::write(path, &json).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    match args.format {
        Format::Text => guard::cli_args::emit(&text::render(&verdict))?,
        Format::Json => guard::cli_args::emit(&json)?,
    }
    Ok(if verdict.accepted() {
        crate::EXIT_ACCEPT
    } else {
        crate::EXIT_REJECT
    })
}
