//! The check pipeline: integrity, the strict parse, the policy rules, and (with a base checkout)
//! base-tree rules and the cross-check against git's own reading. Every finding is collected; the
//! verdict accepts only when there is none.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;

use crate::diff::{
    self, CandidateDiff, ContentIssueKind, FilePatch, MODE_EXEC, MODE_GITLINK, MODE_SYMLINK,
};
use crate::escape::display_bytes;
use crate::git::{self, Applied, GitRepo, RawChange, ThrowawayIndex};
use crate::hash;
use crate::path::{self, PathLimits};
use crate::policy::{Policy, PolicyError, Scope};
use crate::repo_path::RepoPath;
use crate::rules::RuleId;
use crate::verdict::{ChangeKind, CheckMode, FileEntry, Verdict, Violation};

/// A base checkout to cross-check against.
#[derive(Debug, Clone, Copy)]
pub struct RepoBase<'a> {
    pub dir: &'a Path,
    /// A revision naming the commit the diff applies to (`HEAD` when not given).
    pub base: &'a str,
}

/// What to check.
#[derive(Debug, Clone, Copy)]
pub struct CheckRequest<'a> {
    pub diff: &'a [u8],
    /// Hex SHA-256 the diff bytes must hash to.
    pub expected_sha256: &'a str,
    pub scope: &'a [String],
    pub policy: &'a Policy,
    pub repo: Option<RepoBase<'a>>,
}

/// Errors that stop the check from reaching any verdict (exit 2): bad arguments or configuration,
/// or a base checkout git cannot read. Never an acceptance.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CheckError {
    #[error("--expected-sha256 must be 64 hexadecimal digits, got {0:?}")]
    BadExpectedHash(String),
    #[error("invalid declared scope: {0}")]
    Scope(#[from] PolicyError),
    #[error(transparent)]
    Git(#[from] git::GitError),
    #[error("the git cross-check thread failed")]
    GitThread,
}

/// A verdict together with the throwaway index git produced, for callers that go on to use git's
/// result (publication reads the new contents from it).
#[derive(Debug)]
pub struct Checked {
    pub verdict: Verdict,
    pub index: Option<ThrowawayIndex>,
}

/// Run every check and return the verdict.
pub fn check(req: &CheckRequest<'_>) -> Result<Verdict, CheckError> {
    check_keeping_index(req).map(|c| c.verdict)
}

/// Like [`check`], keeping the throwaway index when git applied the diff.
pub fn check_keeping_index(req: &CheckRequest<'_>) -> Result<Checked, CheckError> {
    check_with_digest(req, hash::sha256(req.diff))
}

/// Like [`check`], for a diff whose SHA-256 was computed while it was read. The digest is used
/// only when `req.diff` is the very buffer `hashed` holds; otherwise it is computed again.
pub fn check_hashed(
    req: &CheckRequest<'_>,
    hashed: &hash::HashedDiff,
) -> Result<Verdict, CheckError> {
    let digest = if std::ptr::eq(req.diff, hashed.bytes()) {
        *hashed.digest()
    } else {
        hash::sha256(req.diff)
    };
    check_with_digest(req, digest).map(|c| c.verdict)
}

fn check_with_digest(req: &CheckRequest<'_>, digest: [u8; 32]) -> Result<Checked, CheckError> {
    let expected = hash::parse_sha256(req.expected_sha256)
        .ok_or_else(|| CheckError::BadExpectedHash(req.expected_sha256.to_string()))?;
    let scope = Scope::new(req.scope)?;
    let mut verdict = Verdict {
        diff_sha256: contract::ids::Sha256Hex::from_digest(&digest),
        // Becomes git-cross-checked only once git's reading has been compared.
        mode: CheckMode::ParserOnly,
        files: Vec::new(),
        violations: Vec::new(),
        scope: scope.globs(),
    };
    let limits = &req.policy.limits;
    // Size is known without reading the content; integrity comes before any parsing.
    if req.diff.len() as u64 > limits.max_diff_bytes {
        verdict.violations.push(
            Violation::new(
                RuleId::LimitExceeded,
                format!(
                    "the diff has more than the limit of {} bytes",
                    limits.max_diff_bytes
                ),
            )
            .with_entry("limits.diff-bytes"),
        );
        return Ok(Checked {
            verdict,
            index: None,
        });
    }
    if !hash::digests_equal(&digest, &expected) {
        verdict.violations.push(Violation::new(
            RuleId::HashMismatch,
            format!(
                "diff sha256 is {} but {} was expected",
                verdict.diff_sha256,
                req.expected_sha256.to_ascii_lowercase()
            ),
        ));
        return Ok(Checked {
            verdict,
            index: None,
        });
    }
    // git's reading runs beside the guard's own parse: it needs only the verified bytes.
    std::thread::scope(|s| {
        let git_side = req
            .repo
            .map(|repo| s.spawn(move || read_git_side(repo, req.diff)));
        let index = evaluate(req, &scope, &mut verdict, git_side)?;
        verdict
            .violations
            .sort_by_key(|v| (v.line.unwrap_or(0), v.rule));
        verdict.violations.dedup();
        Ok(Checked { verdict, index })
    })
}

type GitHandle<'s> = std::thread::ScopedJoinHandle<'s, Result<GitSide, git::GitError>>;

/// Everything after integrity: the parse, the rules, and the comparison with git's side.
fn evaluate(
    req: &CheckRequest<'_>,
    scope: &Scope,
    verdict: &mut Verdict,
    git_side: Option<GitHandle<'_>>,
) -> Result<Option<ThrowawayIndex>, CheckError> {
    let limits = &req.policy.limits;
    if scope.is_empty() {
        verdict.violations.push(Violation::new(
            RuleId::NoScope,
            "no declared scope: at least one --scope glob is required",
        ));
    }
    let parsed = match diff::parse(req.diff, limits.max_line_bytes) {
        Ok(parsed) => parsed,
        Err(e) => {
            let rule = match e.kind {
                diff::ParseErrorKind::Empty => RuleId::EmptyDiff,
                diff::ParseErrorKind::LineTooLong { .. } => RuleId::LimitExceeded,
                ref k if k.is_ambiguity() => RuleId::AmbiguousDiff,
                _ => RuleId::MalformedDiff,
            };
            verdict
                .violations
                .push(Violation::new(rule, e.kind.to_string()).at_line(e.line));
            return Ok(None);
        }
    };
    if parsed.patches.len() > limits.max_files {
        verdict.violations.push(
            Violation::new(
                RuleId::LimitExceeded,
                format!(
                    "the diff patches {} files, more than the limit of {}",
                    parsed.patches.len(),
                    limits.max_files
                ),
            )
            .with_entry("limits.files"),
        );
        return Ok(None);
    }
    verdict.files = parsed.patches.iter().map(file_entry).collect();

    let path_limits = PathLimits {
        max_path_bytes: limits.max_path_bytes,
        max_component_bytes: limits.max_component_bytes,
    };
    for patch in &parsed.patches {
        check_patch(
            patch,
            req.policy,
            scope,
            &path_limits,
            &mut verdict.violations,
        );
    }
    check_structure(&parsed, &mut verdict.violations);

    match git_side {
        None => Ok(None),
        Some(handle) => {
            let side = handle.join().map_err(|_| CheckError::GitThread)??;
            Ok(cross_check(side, &parsed, req.policy, verdict))
        }
    }
}

fn file_entry(p: &FilePatch) -> FileEntry {
    FileEntry {
        status: p.status,
        old_path: p.old_path.as_deref().map(RepoPath::from),
        new_path: p.new_path.as_deref().map(RepoPath::from),
        old_mode: p.old_mode,
        new_mode: p.new_mode,
        line: p.line,
    }
}

/// Both sides of a file patch: (raw path, display path), old side first.
fn sides(p: &FilePatch) -> Vec<&[u8]> {
    let mut out: Vec<&[u8]> = Vec::new();
    if let Some(old) = &p.old_path {
        out.push(old);
    }
    if let Some(new) = &p.new_path
        && p.old_path.as_ref() != Some(new)
    {
        out.push(new);
    }
    out
}

fn violation_for(p: &FilePatch, raw: &[u8], rule: RuleId, message: impl Into<String>) -> Violation {
    let v = Violation::new(rule, message).at_line(p.line);
    // Both sides of a rename or copy are shown as `old -> new`; the message says which side offends.
    match (&p.old_path, &p.new_path) {
        (Some(old), Some(new)) if old != new => {
            v.with_path(new.as_slice()).with_old_path(old.as_slice())
        }
        _ => v.with_path(raw),
    }
}

fn check_patch(
    p: &FilePatch,
    policy: &Policy,
    scope: &Scope,
    limits: &PathLimits,
    out: &mut Vec<Violation>,
) {
    for raw in sides(p) {
        let side = if p.new_path.as_deref() == Some(raw) {
            "new"
        } else {
            "old"
        };
        match path::validate_path(raw, limits) {
            Err(e) => out.push(violation_for(p, raw, e.rule(), format!("{side} path: {e}"))),
            Ok(valid) => {
                let plain = path::resolved_spelling(valid);
                if let Some(pattern) = policy.denied(valid).or_else(|| policy.denied(&plain)) {
                    out.push(
                        violation_for(
                            p,
                            raw,
                            RuleId::DeniedPath,
                            format!("{side} path is in the denied trust-control surface"),
                        )
                        .with_entry(format!("deny: {pattern}")),
                    );
                }
                if !scope.is_empty() && scope.matching(valid).is_none() {
                    out.push(
                        violation_for(
                            p,
                            raw,
                            RuleId::OutOfScope,
                            format!("{side} path matches no declared scope glob"),
                        )
                        .with_entry(format!("scope: {}", scope.globs().join(", "))),
                    );
                }
            }
        }
    }
    let main_path: &[u8] = p
        .new_path
        .as_deref()
        .or(p.old_path.as_deref())
        .unwrap_or_default();
    check_modes(p, p.old_mode, p.new_mode, policy, out);
    if let Some(line) = p.binary {
        let mut v = violation_for(
            p,
            main_path,
            RuleId::BinaryPatch,
            "binary patches are not accepted",
        );
        v.line = Some(line);
        out.push(v);
    }
    if let Some(issue) = p.content_issue {
        let what = match issue.kind {
            ContentIssueKind::Nul => "a NUL byte",
            ContentIssueKind::NotUtf8 => "bytes that are not UTF-8",
        };
        let mut v = violation_for(
            p,
            main_path,
            RuleId::InvalidContent,
            format!("patch content holds {what}"),
        );
        v.line = Some(issue.line);
        out.push(v);
    }
}

/// Rules on file modes. Called with the modes the diff states and again, with `--repo`, with the
/// modes the base tree supplies where a canonical diff states none (a pure rename or copy).
fn check_modes(
    p: &FilePatch,
    old_mode: Option<u32>,
    new_mode: Option<u32>,
    policy: &Policy,
    out: &mut Vec<Violation>,
) {
    let main_path: &[u8] = p
        .new_path
        .as_deref()
        .or(p.old_path.as_deref())
        .unwrap_or_default();
    for mode in [old_mode, new_mode]
        .into_iter()
        .flatten()
        .collect::<BTreeSet<_>>()
    {
        if mode == MODE_SYMLINK {
            out.push(violation_for(
                p,
                main_path,
                RuleId::Symlink,
                "symbolic links may not be added, modified, moved or removed",
            ));
        }
        if mode == MODE_GITLINK {
            out.push(violation_for(
                p,
                main_path,
                RuleId::Gitlink,
                "gitlinks (submodules) may not be added, modified, moved or removed",
            ));
        }
    }
    if let (Some(old), Some(new)) = (old_mode, new_mode)
        && old != new
    {
        if file_type(old) != file_type(new) {
            out.push(violation_for(
                p,
                main_path,
                RuleId::TypeChange,
                format!("type changes from {old:06o} to {new:06o}"),
            ));
        } else if !policy.allow_mode_change {
            out.push(
                violation_for(
                    p,
                    main_path,
                    RuleId::ModeChange,
                    format!("mode changes from {old:06o} to {new:06o}"),
                )
                .with_entry("allow.mode-changes: false"),
            );
        }
    }
    // A new path (a creation or a copy) that is executable; making an existing file executable is
    // a mode change, and an executable that keeps its mode is not a new one.
    if matches!(p.status, ChangeKind::Added | ChangeKind::Copied)
        && new_mode == Some(MODE_EXEC)
        && !policy.allow_executable
    {
        out.push(
            violation_for(
                p,
                main_path,
                RuleId::ExecutableFile,
                "a new file is executable (100755)",
            )
            .with_entry("allow.executable-files: false"),
        );
    }
}

/// File, symlink or gitlink.
fn file_type(mode: u32) -> u32 {
    mode & 0o170000
}

/// Paths a patch writes: created, modified, removed (a copy's source is only read).
fn written(p: &FilePatch) -> Vec<&[u8]> {
    match p.status {
        ChangeKind::Added | ChangeKind::Modified | ChangeKind::Copied => {
            p.new_path.iter().map(Vec::as_slice).collect()
        }
        ChangeKind::Deleted => p.old_path.iter().map(Vec::as_slice).collect(),
        ChangeKind::Renamed => p
            .old_path
            .iter()
            .chain(p.new_path.iter())
            .map(Vec::as_slice)
            .collect(),
    }
}

/// Paths present after the patch: everything but deletions and rename sources.
fn present(p: &FilePatch) -> Option<&[u8]> {
    match p.status {
        ChangeKind::Deleted => None,
        _ => p.new_path.as_deref(),
    }
}

fn ancestors(path: &[u8]) -> impl Iterator<Item = &[u8]> {
    path.iter()
        .enumerate()
        .filter(|(_, b)| **b == b'/')
        .map(move |(i, _)| &path[..i])
}

fn check_structure(parsed: &CandidateDiff, out: &mut Vec<Violation>) {
    let mut writers: HashMap<&[u8], &FilePatch> = HashMap::new();
    for p in &parsed.patches {
        for w in written(p) {
            if let Some(first) = writers.insert(w, p) {
                // `git diff` writes a change of type (file <-> symlink or gitlink) as a deletion and
                // a creation of the same path.
                let type_change = first.status == ChangeKind::Deleted
                    && p.status == ChangeKind::Added
                    && first.old_mode.map(file_type) != p.new_mode.map(file_type);
                let (rule, message) = if type_change {
                    (
                        RuleId::TypeChange,
                        format!(
                            "the path changes type ({:06o} at diff line {} to {:06o})",
                            first.old_mode.unwrap_or(0),
                            first.line,
                            p.new_mode.unwrap_or(0)
                        ),
                    )
                } else {
                    (
                        RuleId::DuplicatePath,
                        format!("path already patched at diff line {}", first.line),
                    )
                };
                out.push(violation_for(p, w, rule, message));
            }
        }
    }
    // Keyed by the folded spelling: on a case-insensitive checkout `Docs` and `docs/x` collide too.
    let present_paths: HashMap<String, &FilePatch> = parsed
        .patches
        .iter()
        .filter_map(|p| present(p).map(|n| (path::collision_key(n), p)))
        .collect();
    let mut folded: HashMap<String, &[u8]> = HashMap::new();
    for p in &parsed.patches {
        let Some(new) = present(p) else { continue };
        for dir in ancestors(new) {
            if let Some(other) = present_paths.get(&path::collision_key(dir)) {
                let rule = if other.new_mode == Some(MODE_SYMLINK)
                    || other.new_mode == Some(MODE_GITLINK)
                {
                    RuleId::BeneathSymlink
                } else {
                    RuleId::PathConflict
                };
                out.push(violation_for(
                    p,
                    new,
                    rule,
                    format!(
                        "{} is also patched as a file at diff line {}",
                        display_bytes(dir),
                        other.line
                    ),
                ));
            }
        }
        if let Some(other) = folded.insert(path::collision_key(new), new)
            && other != new
        {
            out.push(violation_for(
                p,
                new,
                RuleId::PathConflict,
                format!(
                    "differs only in case or Unicode normalization from {}, which the diff also creates",
                    display_bytes(other)
                ),
            ));
        }
    }
}

/// Base-tree rules and git's second reading.
/// What git says about the base and the diff, gathered on its own thread.
struct GitSide {
    base: HashMap<Vec<u8>, u32>,
    applied: Applied,
    changes: Option<Vec<RawChange>>,
}

fn read_git_side(repo: RepoBase<'_>, diff_bytes: &[u8]) -> Result<GitSide, git::GitError> {
    let git = GitRepo::open(repo.dir)?;
    let commit = git.resolve_commit(repo.base)?;
    let base = git.tree_modes(&commit)?;
    let applied = git.apply_cached(&commit, diff_bytes)?;
    let changes = match &applied {
        Applied::Applied(index) => Some(index.changes()?),
        Applied::Refused(_) => None,
    };
    Ok(GitSide {
        base,
        applied,
        changes,
    })
}

/// Base-tree rules and the comparison with git's reading.
fn cross_check(
    side: GitSide,
    parsed: &CandidateDiff,
    policy: &Policy,
    verdict: &mut Verdict,
) -> Option<ThrowawayIndex> {
    verdict.mode = CheckMode::GitCrossChecked;
    let base = side.base;
    let out = &mut verdict.violations;

    // Rules that need the base tree. Lookups are also made by folded spelling, because the tree
    // may later be checked out on a case-insensitive file system.
    let removed: HashSet<&[u8]> = parsed
        .patches
        .iter()
        .filter(|p| matches!(p.status, ChangeKind::Deleted | ChangeKind::Renamed))
        .filter_map(|p| p.old_path.as_deref())
        .collect();
    let mut base_folded: HashMap<String, &[u8]> = HashMap::new();
    let mut base_links: HashMap<String, u32> = HashMap::new();
    for (path, &mode) in &base {
        base_folded.insert(path::collision_key(path), path);
        if git::is_link(mode) {
            base_links.insert(path::collision_key(path), mode);
        }
    }
    for p in &parsed.patches {
        for raw in sides(p) {
            for dir in ancestors(raw) {
                let link = base
                    .get(dir)
                    .copied()
                    .filter(|m| git::is_link(*m))
                    .or_else(|| base_links.get(&path::collision_key(dir)).copied());
                if let Some(mode) = link {
                    out.push(violation_for(
                        p,
                        raw,
                        RuleId::BeneathSymlink,
                        format!(
                            "{} is a {} in the base tree",
                            display_bytes(dir),
                            link_kind(mode)
                        ),
                    ));
                }
            }
            if let Some(&mode) = base.get(raw) {
                if mode == MODE_SYMLINK {
                    out.push(violation_for(
                        p,
                        raw,
                        RuleId::Symlink,
                        "the path is a symbolic link in the base tree",
                    ));
                } else if mode == MODE_GITLINK {
                    out.push(violation_for(
                        p,
                        raw,
                        RuleId::Gitlink,
                        "the path is a gitlink (submodule) in the base tree",
                    ));
                }
            }
        }
        // A new path (creation, rename or copy target) that differs only in case from a base path.
        if matches!(
            p.status,
            ChangeKind::Added | ChangeKind::Renamed | ChangeKind::Copied
        ) && let Some(new) = &p.new_path
            && !base.contains_key(new)
            && let Some(existing) = base_folded.get(&path::collision_key(new))
            && !removed.contains(existing)
        {
            out.push(violation_for(
                p,
                new,
                RuleId::PathConflict,
                format!(
                    "differs only in case or Unicode normalization from {}, which exists in the base tree",
                    display_bytes(existing)
                ),
            ));
        }
    }

    // Fill the modes a canonical diff leaves implicit (a pure rename or copy names none), and run
    // the mode rules again on them: a 100% copy of an executable is a new executable.
    for (entry, p) in verdict.files.iter_mut().zip(&parsed.patches) {
        let source_mode = p.old_path.as_ref().and_then(|o| base.get(o)).copied();
        if entry.old_mode.is_none() && entry.status != ChangeKind::Added {
            entry.old_mode = source_mode;
        }
        if entry.new_mode.is_none() && entry.status != ChangeKind::Deleted {
            entry.new_mode = if entry.status == ChangeKind::Copied {
                source_mode
            } else {
                entry.old_mode
            };
        }
        check_modes(
            p,
            entry.old_mode,
            entry.new_mode,
            policy,
            &mut verdict.violations,
        );
    }

    // git's own reading, on a throwaway index.
    let (index, changes) = match (side.applied, side.changes) {
        (Applied::Applied(index), Some(changes)) => (index, changes),
        (Applied::Refused(message), _) => {
            verdict.violations.push(Violation::new(
                RuleId::GitRefused,
                format!("git apply refused the diff: {message}"),
            ));
            return None;
        }
        (Applied::Applied(_), None) => {
            verdict.violations.push(Violation::new(
                RuleId::GitDisagrees,
                "git's result could not be read",
            ));
            return None;
        }
    };
    let actual: BTreeSet<RawChange> = changes.into_iter().collect();
    // Paths from the parse (raw bytes), statuses and modes from the verdict (modes filled in).
    let expected =
        index_changes(
            verdict
                .files
                .iter()
                .zip(&parsed.patches)
                .map(|(entry, p)| FileChange {
                    status: entry.status,
                    old_path: p.old_path.as_deref(),
                    new_path: p.new_path.as_deref(),
                    old_mode: entry.old_mode,
                    new_mode: entry.new_mode,
                }),
        );
    match expected {
        None => verdict.violations.push(Violation::new(
            RuleId::GitDisagrees,
            "the file modes of some patch are unknown, so git's result cannot be compared",
        )),
        Some(expected) if expected != actual => {
            let only_git: Vec<String> = actual
                .difference(&expected)
                .map(RawChange::to_string)
                .collect();
            let only_guard: Vec<String> = expected
                .difference(&actual)
                .map(RawChange::to_string)
                .collect();
            verdict.violations.push(Violation::new(
                RuleId::GitDisagrees,
                format!(
                    "git's reading differs from the guard's: git only [{}]; guard only [{}]",
                    only_git.join(", "),
                    only_guard.join(", ")
                ),
            ));
        }
        Some(_) => {}
    }
    Some(index)
}

fn link_kind(mode: u32) -> &'static str {
    if mode == MODE_GITLINK {
        "gitlink"
    } else {
        "symbolic link"
    }
}

/// One touched file, as [`index_changes`] takes it: the verdict's status and modes with the raw
/// path bytes. Made from the engine's [`FileEntry`] or from a verdict document's file.
#[derive(Debug, Clone, Copy)]
pub struct FileChange<'a> {
    pub status: ChangeKind,
    pub old_path: Option<&'a [u8]>,
    pub new_path: Option<&'a [u8]>,
    pub old_mode: Option<u32>,
    pub new_mode: Option<u32>,
}

impl<'a> From<&'a FileEntry> for FileChange<'a> {
    fn from(f: &'a FileEntry) -> FileChange<'a> {
        FileChange {
            status: f.status,
            old_path: f.old_path.as_ref().map(RepoPath::as_bytes),
            new_path: f.new_path.as_ref().map(RepoPath::as_bytes),
            old_mode: f.old_mode,
            new_mode: f.new_mode,
        }
    }
}

impl<'a> From<&'a crate::output::json_v1::FileDoc> for FileChange<'a> {
    fn from(f: &'a crate::output::json_v1::FileDoc) -> FileChange<'a> {
        FileChange {
            status: f.status,
            old_path: f.old_path.as_ref().map(RepoPath::as_bytes),
            new_path: f.new_path.as_ref().map(RepoPath::as_bytes),
            old_mode: f.old_mode.map(|m| m.bits()),
            new_mode: f.new_mode.map(|m| m.bits()),
        }
    }
}

/// The raw changes `git diff-index --no-renames` reports for these files: a rename is a deletion
/// and an addition, a copy an addition, and a deletion plus a creation of one path (git's form of
/// a type change) is one change. `None` when a path or mode it needs is unknown, or when a
/// modification names two different paths (git would call that a rename).
pub fn index_changes<'a>(
    files: impl IntoIterator<Item = FileChange<'a>>,
) -> Option<BTreeSet<RawChange>> {
    let mut set = BTreeSet::new();
    for f in files {
        let added = |set: &mut BTreeSet<RawChange>| -> Option<()> {
            set.insert(RawChange {
                status: 'A',
                old_mode: 0,
                new_mode: f.new_mode?,
                path: f.new_path?.to_vec(),
            });
            Some(())
        };
        let deleted = |set: &mut BTreeSet<RawChange>| -> Option<()> {
            set.insert(RawChange {
                status: 'D',
                old_mode: f.old_mode?,
                new_mode: 0,
                path: f.old_path?.to_vec(),
            });
            Some(())
        };
        match f.status {
            ChangeKind::Added | ChangeKind::Copied => added(&mut set)?,
            ChangeKind::Deleted => deleted(&mut set)?,
            ChangeKind::Renamed => {
                deleted(&mut set)?;
                added(&mut set)?;
            }
            ChangeKind::Modified => {
                if f.old_path? != f.new_path? {
                    return None;
                }
                let (old, new) = (f.old_mode?, f.new_mode?);
                let status = if file_type(old) == file_type(new) {
                    'M'
                } else {
                    'T'
                };
                set.insert(RawChange {
                    status,
                    old_mode: old,
                    new_mode: new,
                    path: f.new_path?.to_vec(),
                });
            }
        }
    }
    let paths: Vec<Vec<u8>> = set
        .iter()
        .filter(|c| c.status == 'D')
        .map(|c| c.path.clone())
        .collect();
    for path in paths {
        let deleted = set
            .iter()
            .find(|c| c.status == 'D' && c.path == path)
            .cloned();
        let added = set
            .iter()
            .find(|c| c.status == 'A' && c.path == path)
            .cloned();
        if let (Some(d), Some(a)) = (deleted, added) {
            set.remove(&d);
            set.remove(&a);
            let status = if file_type(d.old_mode) == file_type(a.new_mode) {
                'M'
            } else {
                'T'
            };
            set.insert(RawChange {
                status,
                old_mode: d.old_mode,
                new_mode: a.new_mode,
                path,
            });
        }
    }
    Some(set)
}
