//! `guard verify-tree`: the tree after apply must be exactly the verdict's; after the build,
//! nothing may have been written where the build may not write (see [`guard::tree`]).

use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use contract::cli::Exit;
use contract::ids::{CommitId, Sha256Hex};
use guard::escape::neutralize;
use guard::output::json_v1::VerdictDoc;
use guard::repo_path::RepoPath;
use guard::tree::json_v1::{
    SnapshotDoc, SnapshotSchema, TreeResult, VerifyTreeDoc, VerifyTreeSchema, entries_from,
    finding_doc,
};
use guard::tree::walk::{Snapshot, WalkLimits};
use guard::tree::{self, Check, Finding};

use super::apply::refuse_inside;
use super::check::load_policy;

/// A verdict is small; a snapshot holds one line per entry of the tree.
const MAX_VERDICT_BYTES: u64 = 64 * 1024 * 1024;
const MAX_SNAPSHOT_BYTES: u64 = 1024 * 1024 * 1024;

#[derive(Clone, Copy, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

#[derive(Args)]
pub struct VerifyTreeArgs {
    /// The guard verdict (JSON v1) of the applied diff: accepting and git-cross-checked.
    #[arg(long, value_name = "FILE")]
    verdict: PathBuf,
    /// The worktree the diff was applied to (its top level).
    #[arg(long, value_name = "DIR")]
    repo: PathBuf,
    /// The base commit the diff was applied to. With --after-build it is optional and must be
    /// the full commit id the baseline records.
    #[arg(long, value_name = "REV", required_unless_present = "after_build")]
    base: Option<String>,
    /// Compare the tree with --baseline instead of with the verdict: what did the build write?
    #[arg(long, requires = "baseline")]
    after_build: bool,
    /// The snapshot `verify-tree --out` wrote after apply.
    #[arg(long, value_name = "FILE", requires = "after_build")]
    baseline: Option<PathBuf>,
    /// SHA-256 the baseline file must hash to (as printed when it was written): a build that
    /// rewrote the baseline is caught.
    #[arg(long, value_name = "HEX", requires = "after_build")]
    baseline_sha256: Option<String>,
    /// A YAML policy: its denied surface and build outputs apply after the build.
    #[arg(long, value_name = "FILE")]
    policy: Option<PathBuf>,
    /// Write the snapshot of the tree (the baseline, after apply) to this file, outside the
    /// worktree.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// Most entries walked (the whole tree, `.git` included); more is an error.
    #[arg(long, value_name = "N", default_value_t = WalkLimits::default().max_entries)]
    max_entries: usize,
}

/// Exit 0 the tree checks out, 1 findings, 2 error.
pub fn run(args: VerifyTreeArgs) -> u8 {
    match run_inner(args) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("guard verify-tree: error: {}", neutralize(&message));
            contract::cli::Exit::Error.code()
        }
    }
}

fn read_bounded(path: &std::path::Path, limit: u64, what: &str) -> Result<Vec<u8>, String> {
    contract::cli::read_bounded(&path.to_string_lossy(), limit, what)
}

/// Reads a baseline document (bounded), checks it against its pinned SHA-256 when one is given,
/// and parses it; returns it with the SHA-256 of its bytes.
pub fn read_baseline(
    path: &std::path::Path,
    pinned: Option<&str>,
) -> Result<(SnapshotDoc, Sha256Hex), String> {
    let baseline_bytes = read_bounded(path, MAX_SNAPSHOT_BYTES, "baseline")?;
    let baseline_sha256 = Sha256Hex::of(&baseline_bytes);
    if let Some(pinned) = pinned {
        let pinned = Sha256Hex::parse(pinned).map_err(|e| format!("--baseline-sha256: {e}"))?;
        if !pinned.matches(&baseline_bytes) {
            return Err(format!(
                "baseline {} hashes to {baseline_sha256}, not to --baseline-sha256: it changed since it was written",
                path.display()
            ));
        }
    }
    let text = String::from_utf8(baseline_bytes).map_err(|_| "baseline is not UTF-8")?;
    let baseline = SnapshotDoc::parse(&text).map_err(|e| format!("baseline: {e}"))?;
    Ok((baseline, baseline_sha256))
}

/// Reads and checks a verdict file (bounded); returns it with the SHA-256 of its bytes.
pub fn read_verdict(path: &std::path::Path) -> Result<(VerdictDoc, Sha256Hex), String> {
    let verdict_bytes = read_bounded(path, MAX_VERDICT_BYTES, "verdict")?;
    let verdict_sha256 = Sha256Hex::of(&verdict_bytes);
    let text = String::from_utf8(verdict_bytes)
        .map_err(|_| format!("verdict {} is not UTF-8", path.display()))?;
    let verdict =
        VerdictDoc::parse(&text).map_err(|e| format!("verdict {}: {e}", path.display()))?;
    tree::check_verdict(&verdict).map_err(|e| e.to_string())?;
    Ok((verdict, verdict_sha256))
}

/// The result document of a check after the build.
pub fn after_build_doc(
    baseline: &SnapshotDoc,
    baseline_sha256: &Sha256Hex,
    verdict: &VerdictDoc,
    verdict_sha256: &Sha256Hex,
    entries: u64,
    findings: &[Finding],
) -> VerifyTreeDoc {
    VerifyTreeDoc {
        schema: VerifyTreeSchema,
        check: Check::AfterBuild,
        result: result_of(findings),
        base_commit: baseline.base_commit.clone(),
        diff_sha256: verdict.diff_sha256.clone(),
        verdict_sha256: verdict_sha256.clone(),
        scope: verdict.scope.clone(),
        entries,
        baseline_sha256: Some(baseline_sha256.clone()),
        snapshot_sha256: None,
        findings: findings.iter().map(finding_doc).collect(),
    }
}

fn result_of(findings: &[Finding]) -> TreeResult {
    if findings.is_empty() {
        TreeResult::Pass
    } else {
        TreeResult::Fail
    }
}

/// Human form of a result document, one line per finding (escaped for the terminal).
pub fn render(doc: &VerifyTreeDoc, findings: &[Finding]) -> String {
    render_text(doc, findings)
}

fn run_inner(args: VerifyTreeArgs) -> Result<u8, String> {
    let policy = load_policy(args.policy.as_ref())?;
    if let Some(out) = &args.out {
        refuse_inside(out, &args.repo, "--out")?;
    }
    let (verdict, verdict_sha256) = read_verdict(&args.verdict)?;
    let limits = WalkLimits {
        max_entries: args.max_entries,
        ..WalkLimits::default()
    };

    let (check, base_commit, findings, snapshot, entries, baseline_sha256, identity) =
        if args.after_build {
            let Some(baseline_path) = &args.baseline else {
                return Err("--after-build needs --baseline".into());
            };
            let (baseline, baseline_sha256) =
                read_baseline(baseline_path, args.baseline_sha256.as_deref())?;
            if let Some(base) = &args.base
                && base != baseline.base_commit.as_str()
            {
                return Err(format!(
                    "--base {base} is not the full commit id the baseline was taken at ({})",
                    baseline.base_commit
                ));
            }
            let result = tree::verify_after_build(
                &args.repo,
                &baseline,
                &verdict,
                verdict_sha256.as_str(),
                &policy,
                &limits,
                args.out.is_some(),
            )
            .map_err(|e| e.to_string())?;
            let identity = baseline.identity;
            (
                Check::AfterBuild,
                baseline.base_commit,
                result.findings,
                result.snapshot,
                result.entries,
                Some(baseline_sha256),
                identity,
            )
        } else {
            let checkout = tree::open_checkout(&args.repo).map_err(|e| e.to_string())?;
            let base = args.base.as_deref().unwrap_or("HEAD");
            let result = tree::verify_after_apply(&checkout, base, &verdict, &limits)
                .map_err(|e| e.to_string())?;
            let entries = result.snapshot.len() as u64;
            (
                Check::AfterApply,
                result.base_commit,
                result.findings,
                result.snapshot,
                entries,
                None,
                result.identity,
            )
        };

    let passed = findings.is_empty();
    let snapshot_sha256 = match &args.out {
        Some(out) => Some(write_snapshot(
            out,
            &args.repo,
            check,
            passed,
            &base_commit,
            &verdict,
            &verdict_sha256,
            &snapshot,
            identity,
        )?),
        None => None,
    };
    let baseline_sha256 = match check {
        Check::AfterApply => snapshot_sha256.clone(),
        Check::AfterBuild => baseline_sha256,
    };
    let doc = VerifyTreeDoc {
        schema: VerifyTreeSchema,
        check,
        result: result_of(&findings),
        base_commit,
        diff_sha256: verdict.diff_sha256.clone(),
        verdict_sha256,
        scope: verdict.scope.clone(),
        entries,
        baseline_sha256,
        snapshot_sha256,
        findings: findings.iter().map(finding_doc).collect(),
    };
    match args.format {
        Format::Json => contract::cli::emit(
            &doc.to_json()
                .map_err(|e| format!("cannot encode the result: {e}"))?,
        )?,
        Format::Text => contract::cli::emit(&render_text(&doc, &findings))?,
    }
    Ok(Exit::verdict(passed).code())
}

#[allow(clippy::too_many_arguments)]
fn write_snapshot(
    out: &std::path::Path,
    repo: &std::path::Path,
    check: Check,
    verified: bool,
    base_commit: &CommitId,
    verdict: &VerdictDoc,
    verdict_sha256: &Sha256Hex,
    snapshot: &Snapshot,
    identity: tree::Identity,
) -> Result<Sha256Hex, String> {
    let root = repo
        .canonicalize()
        .map_err(|e| format!("--repo {}: {e}", repo.display()))?;
    let doc = SnapshotDoc {
        schema: SnapshotSchema,
        root: RepoPath::from(root.as_os_str().as_bytes()),
        identity,
        taken: check,
        verified,
        base_commit: base_commit.clone(),
        diff_sha256: verdict.diff_sha256.clone(),
        verdict_sha256: verdict_sha256.clone(),
        scope: verdict.scope.clone(),
        entries: entries_from(snapshot),
    };
    let json = doc
        .to_json()
        .map_err(|e| format!("cannot encode the snapshot: {e}"))?;
    contract::cli::write_atomic(out, json.as_bytes())?;
    Ok(Sha256Hex::of(json.as_bytes()))
}

fn render_text(doc: &VerifyTreeDoc, findings: &[Finding]) -> String {
    let mut out = String::new();
    for f in findings {
        out.push_str(&format!(
            "error[{}]: {} ({}): {}",
            f.rule,
            f.path.display(),
            f.change,
            neutralize(&f.message)
        ));
        if let Some(entry) = &f.policy_entry {
            out.push_str(&format!(" (policy: {})", neutralize(entry)));
        }
        out.push('\n');
    }
    let word = if doc.passed() { "PASS" } else { "FAIL" };
    out.push_str(&format!(
        "{word}: verify-tree {}: {} finding(s), {} entries walked, base {}\n",
        doc.check.name(),
        findings.len(),
        doc.entries,
        doc.base_commit
    ));
    if let Some(sha) = &doc.snapshot_sha256 {
        out.push_str(&format!("snapshot written, sha256 {sha}\n"));
    }
    if doc.check == Check::AfterBuild
        && let Some(sha) = &doc.baseline_sha256
    {
        out.push_str(&format!("baseline read, sha256 {sha}\n"));
    }
    out
}
