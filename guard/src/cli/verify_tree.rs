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
use guard::tree::store::Store;
use guard::tree::walk::{Entry, Snapshot, WalkLimits};
use guard::tree::{self, Check, Finding};
use sha2::{Digest, Sha256};

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

/// Reads a baseline document as a stream (bounded), checks it against its pinned SHA-256 when
/// one is given, and parses it: the document without its entries, the entries in a compact
/// store, and the SHA-256 of its bytes. The bytes hashed are the bytes parsed; a document that
/// does not hash to the pinned value is refused as changed, parsed or not.
pub fn read_baseline(
    path: &std::path::Path,
    pinned: Option<&str>,
) -> Result<(SnapshotDoc, Store, Sha256Hex), String> {
    use std::io::Read;
    let pinned = pinned
        .map(|p| Sha256Hex::parse(p).map_err(|e| format!("--baseline-sha256: {e}")))
        .transpose()?;
    let shown = neutralize(&path.to_string_lossy());
    let file: Box<dyn Read> = if path.as_os_str() == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(
            std::fs::File::open(path).map_err(|e| format!("cannot read baseline {shown}: {e}"))?,
        )
    };
    let mut reader = std::io::BufReader::with_capacity(
        256 * 1024,
        Hashing {
            inner: file,
            hasher: Sha256::new(),
            read: 0,
            limit: MAX_SNAPSHOT_BYTES,
        },
    );
    let mut store = Store::new();
    let parsed = SnapshotDoc::parse_each(&mut reader, &mut |e| {
        store.push(
            e.path.as_bytes(),
            &Entry {
                kind: e.kind,
                mode: e.mode.bits(),
                size: e.size,
                sha256: e.sha256.clone(),
                target: e.target.clone(),
            },
        )
    });
    // Whatever was left unread (after a refusal) is hashed too: the pinned hash is of the file.
    let drained = std::io::copy(&mut reader, &mut std::io::sink());
    let hashing = reader.into_inner();
    if hashing.read > MAX_SNAPSHOT_BYTES {
        return Err(format!(
            "baseline {shown} is larger than the limit of {MAX_SNAPSHOT_BYTES} bytes"
        ));
    }
    drained.map_err(|e| format!("cannot read baseline {shown}: {e}"))?;
    let digest: [u8; 32] = hashing.hasher.finalize().into();
    let baseline_sha256 = Sha256Hex::from_digest(&digest);
    if let Some(pinned) = pinned
        && pinned != baseline_sha256
    {
        return Err(format!(
            "baseline {} hashes to {baseline_sha256}, not to --baseline-sha256: it changed since it was written",
            path.display()
        ));
    }
    let baseline = parsed.map_err(|e| format!("baseline: {e}"))?;
    store.finish();
    Ok((baseline, store, baseline_sha256))
}

/// A reader that hashes what it reads and stops with an error past `limit` bytes.
struct Hashing<R> {
    inner: R,
    hasher: Sha256,
    read: u64,
    limit: u64,
}

impl<R: std::io::Read> std::io::Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.read > self.limit {
            return Err(std::io::Error::other("larger than the limit"));
        }
        let n = self.inner.read(buf)?;
        let got = buf.get(..n).unwrap_or_default();
        self.hasher.update(got);
        self.read += n as u64;
        if self.read > self.limit {
            return Err(std::io::Error::other("larger than the limit"));
        }
        Ok(n)
    }
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
            let (baseline, entries, baseline_sha256) =
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
                entries,
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
