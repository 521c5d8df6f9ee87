//! The check pipeline: integrity, the strict parse, the policy rules, and (with a base checkout)
//! base-tree rules and the cross-check against git's own reading. Every finding is collected; the
//! verdict accepts only when there is none.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;

use crate::diff::{
    self, CandidateDiff, ContentIssueKind, FilePatch, MODE_EXEC, MODE_GITLINK, MODE_SYMLINK,
};
use crate::escape::{self, display_bytes};
use crate::folded::{FoldedPaths, NodeId};
use crate::git::{self, Applied, GitRepo, RawChange, ThrowawayIndex};
use crate::hash;
use crate::links::{self, TreeEntry};
use crate::path::{self, PathLimits};
use crate::policy::{Policy, PolicyError, Protected, Scope, TextEncodings};
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
    #[error(
        "--expected-sha256 must be {}, got `{}`",
        hash::SHA256_FORM,
        crate::escape::neutralize(.0)
    )]
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
    check_with_digest(req, hash::sha256(req.diff), false).map(|c| c.verdict)
}

/// Like [`check`], keeping the throwaway index when git applied the diff.
pub fn check_keeping_index(req: &CheckRequest<'_>) -> Result<Checked, CheckError> {
    check_with_digest(req, hash::sha256(req.diff), true)
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
    check_with_digest(req, digest, false).map(|c| c.verdict)
}

/// The check, for a diff whose SHA-256 is `digest`. With `keep_objects`, the throwaway index git
/// produced keeps the objects it wrote (the caller reads the new contents from it); otherwise they
/// are removed as soon as git's reading no longer needs them.
fn check_with_digest(
    req: &CheckRequest<'_>,
    digest: [u8; 32],
    keep_objects: bool,
) -> Result<Checked, CheckError> {
    let expected = hash::parse_sha256(req.expected_sha256)
        .ok_or_else(|| CheckError::BadExpectedHash(req.expected_sha256.to_string()))?;
    let scope = Scope::new(req.scope)?;
    let mut verdict = Verdict {
        diff_sha256: contract::ids::Sha256Hex::from_digest(&digest),
        // Becomes git-cross-checked only once git's reading has been compared.
        mode: if req.repo.is_some() {
            CheckMode::StoppedBeforeGit
        } else {
            CheckMode::ParserOnly
        },
        files: Vec::new(),
        violations: Vec::new(),
        scope: scope.globs(),
        unmatched_scope: Vec::new(),
        protected: Vec::new(),
        exclusions: req.policy.exclusions.clone(),
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
                "the diff's sha256 is {} but {} was expected: the bytes are not the diff the hash was computed for (hash exactly the file passed as --diff, e.g. with sha256sum)",
                verdict.diff_sha256, req.expected_sha256
            ),
        ));
        return Ok(Checked {
            verdict,
            index: None,
        });
    }
    // git reads the verified bytes beside the guard's own parse, unless a `diff --git` line is
    // already too long or too deep for any path within the limits: git's own cost grows with the
    // square of a path's depth, so such a diff (which the path rules reject) never reaches it.
    std::thread::scope(|s| {
        let (go, go_signal) = std::sync::mpsc::channel::<bool>();
        if req.repo.is_some() {
            let _ = go.send(headers_within_path_limits(req.diff, limits));
        }
        let git_side = req.repo.map(|repo| {
            let (base_out, base_in) = std::sync::mpsc::channel();
            let thread =
                s.spawn(move || read_git_side(repo, req.diff, &go_signal, &base_out, keep_objects));
            GitThread { thread, base_in }
        });
        let index = evaluate(req, &scope, &mut verdict, git_side)?;
        for findings in [&mut verdict.violations, &mut verdict.protected] {
            one_of_each(findings);
        }
        Ok(Checked { verdict, index })
    })
}

/// The findings in diff order, each said once: a finding that repeats another's rule, paths,
/// message and policy entry at a later line (the same path read from several lines of its file
/// patch, or by the guard and by git's reading) is dropped, the earliest line kept.
fn one_of_each(findings: &mut Vec<Violation>) {
    findings.sort_by_key(|v| (v.line.unwrap_or(0), v.rule));
    let mut seen = std::collections::HashSet::new();
    findings.retain(|v| {
        seen.insert((
            v.rule,
            v.path.clone(),
            v.old_path.clone(),
            v.message.clone(),
            v.policy_entry.clone(),
        ))
    });
}

/// git's result of applying the diff, and what the index then differs in from the base.
type GitReading = (Applied, Option<Vec<RawChange>>);

/// git's side of the check, running: the base tree arrives on `base_in` as soon as it is listed,
/// git's reading of the diff when the thread ends.
struct GitThread<'s> {
    thread: std::thread::ScopedJoinHandle<'s, Result<GitSide, git::GitError>>,
    base_in: std::sync::mpsc::Receiver<BaseTree>,
}

impl GitThread<'_> {
    /// The base tree, or the error that ended the git side before it was listed.
    fn base(&self) -> Result<BaseTree, CheckError> {
        self.base_in.recv().map_err(|_| CheckError::GitThread)
    }

    /// git's reading: `None` when git was told not to apply the diff.
    fn reading(self) -> Result<Option<GitReading>, CheckError> {
        let side = self.thread.join().map_err(|_| CheckError::GitThread)??;
        Ok(side.applied.map(|applied| (applied, side.changes)))
    }
}

/// Whether every `diff --git` line of `diff` could hold paths within the limits, measured before
/// anything is parsed: a line longer than two quoted paths of `max_path_bytes` (each byte at
/// most four characters, `\ooo`) or with more `/` than two paths of `max_path_components` cannot.
/// The other header lines must name the same paths, or the parse rejects the diff. No honest diff
/// is kept from git by this bound; the path rules report what exceeds the limits.
fn headers_within_path_limits(diff: &[u8], limits: &crate::policy::Limits) -> bool {
    let max_line = limits.max_path_bytes.saturating_mul(8).saturating_add(64);
    let max_slashes = limits
        .max_path_components
        .saturating_mul(2)
        .saturating_add(2);
    memchr::memmem::find_iter(diff, b"diff --git ")
        .filter(|&at| at == 0 || diff.get(at - 1) == Some(&b'\n'))
        .all(|at| {
            let line = &diff[at..];
            let line = &line[..memchr::memchr(b'\n', line).unwrap_or(line.len())];
            line.len() <= max_line && memchr::memchr_iter(b'/', line).count() <= max_slashes
        })
}

/// Everything after integrity: the parse, the rules, and the comparison with git's side.
fn evaluate(
    req: &CheckRequest<'_>,
    scope: &Scope,
    verdict: &mut Verdict,
    git_side: Option<GitThread<'_>>,
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

    // The rules below look at the base tree when there is one, which git lists first; git goes
    // on applying the diff beside them, and its reading is awaited only where it is compared.
    let base = match &git_side {
        None => None,
        Some(side) => match side.base() {
            Ok(base) => Some(base),
            // The git side ended without a base: its own error says why.
            Err(e) => {
                return match git_side.map(GitThread::reading) {
                    Some(Err(e)) => Err(e),
                    _ => Err(e),
                };
            }
        },
    };
    let view = View::build(&parsed, base.as_ref(), req.policy);
    let path_limits = PathLimits {
        max_path_bytes: limits.max_path_bytes,
        max_component_bytes: limits.max_component_bytes,
    };
    let mut budget = ShortNameBudget::default();
    let literal_names = req.policy.deny_literal_names();
    let rules = PatchRules {
        policy: req.policy,
        scope,
        limits: &path_limits,
        view: &view,
        literal_names: &literal_names,
    };
    for (index, patch) in parsed.patches.iter().enumerate() {
        rules.check(
            index,
            patch,
            &mut budget,
            &mut verdict.violations,
            &mut verdict.protected,
        );
    }
    if budget.exhausted {
        verdict.violations.push(
            Violation::new(
                RuleId::LimitExceeded,
                format!(
                    "the diff holds too many possible Windows 8.3 short names to read them all (more than {} comparisons)",
                    ShortNameBudget::LIMIT
                ),
            )
            .with_entry("limits.path-components"),
        );
    }
    check_structure(&parsed, &view, &mut verdict.violations);
    check_git_dirs(&parsed, &view, &mut verdict.violations);
    verdict.unmatched_scope = unmatched_scope(&parsed, scope);

    let Some(base) = base.as_ref() else {
        if req.policy.allow_symlinks {
            for p in parsed.patches.iter().filter(|p| is_link_patch(p)) {
                let path = p.new_path.as_deref().or(p.old_path.as_deref());
                verdict.violations.push(
                    violation_for(
                        p,
                        path.unwrap_or_default(),
                        RuleId::Symlink,
                        "a symbolic link's target can only be resolved against the base tree: check with --repo",
                    )
                    .with_entry("symlinks.allow: true"),
                );
            }
        }
        return Ok(None);
    };
    base_rules(base, &parsed, &view, req.policy, verdict);
    if req.policy.allow_symlinks {
        let rules = LinkRules {
            base,
            policy: req.policy,
            scope,
            limits: &path_limits,
        };
        rules.check(&parsed, verdict);
    }
    let git_reading = match git_side {
        Some(side) => side.reading()?,
        None => None,
    };
    match git_reading {
        Some(reading) => Ok(compare_with_git(reading, &parsed, verdict)),
        None => {
            // git was not asked: a path is over a limit, which the path rules reported.
            if verdict.violations.is_empty() {
                verdict.violations.push(Violation::new(
                    RuleId::LimitExceeded,
                    "git's reading was not asked for because a path is over a limit",
                ));
            }
            Ok(None)
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

/// Both sides of a file patch, old side first (once when they are the same path).
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

/// The name the patch creates, when it creates one (a new file, the target of a rename or copy).
fn created(p: &FilePatch) -> Option<&[u8]> {
    match p.status {
        ChangeKind::Added | ChangeKind::Renamed | ChangeKind::Copied => p.new_path.as_deref(),
        ChangeKind::Modified | ChangeKind::Deleted => None,
    }
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

/// A path as a hint quotes it between backticks (a backtick in it would end the code span).
fn hint_path(path: &str) -> String {
    path.replace('`', "'")
}

/// What the agent can do about a denied path: nothing in the diff or the scope admits it.
fn denied_hint(path: &str, pattern: &str) -> String {
    format!(
        "Leave `{}` out of the diff: it is in the denied trust-control surface (`{}`), which no scope \
         admits; a person changes it in a pull request of their own.",
        hint_path(path),
        hint_path(pattern)
    )
}

/// The scope entries that would admit an out-of-scope path (the path itself, and everything in
/// its directory), or that none can when the path is denied too.
fn out_of_scope_hint(path: &str, denied: bool) -> String {
    let path_shown = hint_path(path);
    if denied {
        return format!(
            "Leave `{path_shown}` out of the diff: it is denied, and no scope entry admits a denied path."
        );
    }
    match path.rsplit_once('/') {
        Some((dir, _)) => format!(
            "If the task is meant to change `{path_shown}`, dispatch it with a scope that admits it \
             (`{path_shown}`, or `{}/**` for its directory); otherwise leave it out of the diff.",
            hint_path(dir)
        ),
        None => format!(
            "If the task is meant to change `{path_shown}`, dispatch it with a scope that admits it \
             (`{path_shown}`); otherwise leave it out of the diff."
        ),
    }
}

/// The declared scope globs no path of the diff (either side of any file patch) matches.
fn unmatched_scope(parsed: &CandidateDiff, scope: &Scope) -> Vec<String> {
    let globs = scope.globs();
    let mut used = vec![false; globs.len()];
    for path in parsed.patches.iter().flat_map(sides) {
        let Ok(path) = std::str::from_utf8(path) else {
            continue;
        };
        for i in scope.matching_globs(path) {
            if let Some(flag) = used.get_mut(i) {
                *flag = true;
            }
        }
    }
    globs
        .into_iter()
        .zip(used)
        .filter(|(_, used)| !used)
        .map(|(g, _)| g)
        .collect()
}

/// A bound on the comparisons of Windows short names with sibling names, so that a diff of many
/// `X~1` names against a directory of many entries cannot make the check quadratic. Reaching it
/// rejects (`limit-exceeded`); no honest diff comes near it.
#[derive(Debug, Default)]
struct ShortNameBudget {
    spent: usize,
    exhausted: bool,
}

impl ShortNameBudget {
    const LIMIT: usize = 1_000_000;
    /// The most readings one path may have before it counts as exhausting the budget.
    const MAX_READINGS: usize = 64;

    fn spend(&mut self, n: usize) -> bool {
        self.spent = self.spent.saturating_add(n);
        if self.spent > Self::LIMIT {
            self.exhausted = true;
        }
        !self.exhausted
    }
}

/// The two lists of paths the rules look up in the same ways.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Surface {
    /// `deny`: the trust-control surface.
    Denied,
    /// `protect`: paths a human must review.
    Protected,
}

impl Reached {
    /// How the path reached the list, for the message (empty when it did so directly).
    fn explained(&self) -> String {
        match self {
            Reached::Directly => String::new(),
            Reached::ShortName { reading } => format!(
                ", read as `{}` on Windows, where a `~N` name can be the 8.3 short name of another entry",
                escape::neutralize(reading)
            ),
            Reached::LinkTarget { link, target } => format!(
                " as or beneath `{}`, where the symbolic link `{}` of the base tree points",
                display_bytes(target),
                display_bytes(link)
            ),
        }
    }

    /// The policy entry that decided, `deny: <pattern>` or `protect: <pattern>` (with the link).
    fn entry(&self, list: &str, pattern: &str) -> String {
        match self {
            Reached::LinkTarget { link, .. } => {
                format!("{list}: {pattern} (via symlink {})", display_bytes(link))
            }
            _ => format!("{list}: {pattern}"),
        }
    }
}

/// How a path reached the denied or protected list.
#[derive(Debug, Clone)]
enum Reached {
    /// The path itself, or its HFS+/NTFS spelling, matches.
    Directly,
    /// The path, read with a Windows 8.3 short name resolved, matches.
    ShortName { reading: String },
    /// The path is, or lies beneath, what a denied symbolic link of the base resolves to.
    LinkTarget { link: Vec<u8>, target: Vec<u8> },
}

/// The per-file-patch path rules.
struct PatchRules<'a> {
    policy: &'a Policy,
    scope: &'a Scope,
    limits: &'a PathLimits,
    view: &'a View<'a>,
    /// The denylist's literal names ([`Policy::deny_literal_names`]), computed once per check.
    literal_names: &'a [&'a str],
}

impl PatchRules<'_> {
    fn check(
        &self,
        index: usize,
        p: &FilePatch,
        budget: &mut ShortNameBudget,
        out: &mut Vec<Violation>,
        protected: &mut Vec<Violation>,
    ) {
        let policy = self.policy;
        for raw in sides(p) {
            let side = if p.new_path.as_deref() == Some(raw) {
                "new"
            } else {
                "old"
            };
            let valid = match path::validate_path(raw, self.limits) {
                Err(e) => {
                    out.push(violation_for(p, raw, e.rule(), format!("{side} path: {e}")));
                    continue;
                }
                Ok(valid) => valid,
            };
            let components = path::component_count(raw);
            if components > policy.limits.max_path_components {
                out.push(
                    violation_for(
                        p,
                        raw,
                        RuleId::LimitExceeded,
                        format!(
                            "{side} path has {components} components, over the limit of {}",
                            policy.limits.max_path_components
                        ),
                    )
                    .with_entry("limits.path-components"),
                );
                continue;
            }
            if policy.portable_paths
                && created(p) == Some(raw)
                && let Err(e) = path::check_portable(valid)
            {
                out.push(
                    violation_for(p, raw, e.rule(), format!("{side} path: {e}"))
                        .with_entry("portable-paths: true"),
                );
            }
            let denied = self.reached(Surface::Denied, index, raw, valid, budget);
            let is_denied = denied.is_some();
            if let Some((pattern, reached)) = denied {
                out.push(
                    violation_for(
                        p,
                        raw,
                        RuleId::DeniedPath,
                        format!(
                            "{side} path is in the denied trust-control surface{}",
                            reached.explained()
                        ),
                    )
                    .with_entry(reached.entry("deny", &pattern))
                    .with_hint(denied_hint(valid, &pattern)),
                );
            } else if policy.protected != Protected::Allow
                && let Some((pattern, reached)) =
                    self.reached(Surface::Protected, index, raw, valid, budget)
            {
                let finding = violation_for(
                    p,
                    raw,
                    RuleId::ProtectedPath,
                    format!(
                        "{side} path is protected{}: {}",
                        reached.explained(),
                        match policy.protected {
                            Protected::Block =>
                                "the policy blocks changes to it (protected: block)",
                            _ => "a human must review this change before it is merged",
                        }
                    ),
                )
                .with_entry(reached.entry("protect", &pattern));
                match policy.protected {
                    Protected::Block => out.push(finding.with_hint(format!(
                        "Leave `{}` out of the diff: the policy blocks changes to protected paths \
                         (`protected: block`), so a person changes it in a pull request of their own.",
                        hint_path(valid)
                    ))),
                    _ => protected.push(finding),
                }
            }
            if !self.scope.is_empty() && self.scope.matching(valid).is_none() {
                out.push(
                    violation_for(
                        p,
                        raw,
                        RuleId::OutOfScope,
                        format!(
                            "{side} path matches no declared scope glob{}",
                            self.scope.hint_for(valid)
                        ),
                    )
                    .with_entry(format!("scope: {}", self.scope.globs().join(", ")))
                    .with_hint(out_of_scope_hint(valid, is_denied)),
                );
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
            let legacy = policy.text_encodings == TextEncodings::Legacy;
            let what = match issue.kind {
                ContentIssueKind::Nul => {
                    Some("a NUL byte (git would take the file for binary)".to_owned())
                }
                ContentIssueKind::Control(c) => Some(format!(
                    "a control character (0x{c:02x}) in a line that is not UTF-8"
                )),
                ContentIssueKind::NotUtf8 if legacy => None,
                ContentIssueKind::NotUtf8 => Some("bytes that are not UTF-8".to_owned()),
            };
            if let Some(what) = what {
                let mut v = violation_for(
                    p,
                    main_path,
                    RuleId::InvalidContent,
                    format!("patch content holds {what}"),
                );
                v.line = Some(issue.line);
                if issue.kind != ContentIssueKind::Nul {
                    v = v.with_entry(format!("text.encodings: {}", policy.text_encodings.name()));
                }
                out.push(v);
            }
        }
    }

    /// The pattern of `surface` that `valid` (the raw path `raw`, a side of patch `index`)
    /// reaches, and how: as spelled or as HFS+/NTFS resolve it, read with a Windows short name
    /// resolved, or as the target of a symbolic link of the base that is itself on the surface.
    fn reached(
        &self,
        surface: Surface,
        index: usize,
        raw: &[u8],
        valid: &str,
        budget: &mut ShortNameBudget,
    ) -> Option<(String, Reached)> {
        let policy = self.policy;
        let lookup = |path: &str| match surface {
            Surface::Denied => policy.denied(path),
            Surface::Protected => policy.protected_by(path),
        };
        let direct = |path: &str| {
            let resolved = path::resolved_spelling(path);
            lookup(path)
                .or_else(|| (resolved != path).then(|| lookup(&resolved)).flatten())
                .map(str::to_owned)
        };
        if let Some(pattern) = direct(valid) {
            return Some((pattern, Reached::Directly));
        }
        for reading in self
            .view
            .short_name_readings(valid, self.literal_names, budget)
        {
            if let Some(pattern) = direct(&reading) {
                return Some((pattern, Reached::ShortName { reading }));
            }
        }
        self.view.link_target_of(surface, index, raw).map(|t| {
            (
                t.pattern.clone(),
                Reached::LinkTarget {
                    link: t.link.clone(),
                    target: t.target.clone(),
                },
            )
        })
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
        if mode == MODE_SYMLINK && !policy.allow_symlinks {
            out.push(
                violation_for(
                    p,
                    main_path,
                    RuleId::Symlink,
                    "symbolic links may not be added, modified, moved or removed",
                )
                .with_entry("symlinks.allow: false"),
            );
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

/// What the rules record on one folded name of the tree.
#[derive(Debug, Default)]
struct Mark {
    /// Base entries with this folded name: indices into [`View::base`].
    base: Vec<usize>,
    /// Patches whose path after the patch has this folded name.
    present: Vec<usize>,
    /// Denied symbolic links of the base that resolve to this name: indices into
    /// [`View::targets`].
    targets: Vec<usize>,
}

/// What a denied or protected symbolic link of the base resolves to, inside the repository.
#[derive(Debug)]
struct LinkTarget {
    link: Vec<u8>,
    target: Vec<u8>,
    /// The list the link's own path is on.
    surface: Surface,
    /// The pattern the link's own path matches.
    pattern: String,
}

/// One component of a path: its node and the end of the prefix of the path it closes.
type Step = (NodeId, usize);

/// The base tree and the diff's paths in one folded trie, with what each name holds.
struct View<'a> {
    trie: FoldedPaths<Mark>,
    /// Base entries: exact path and mode.
    base: Vec<(&'a [u8], u32)>,
    targets: Vec<LinkTarget>,
    /// Per patch, the steps of its old and new path.
    steps: Vec<[Vec<Step>; 2]>,
}

impl<'a> View<'a> {
    fn build(parsed: &CandidateDiff, base: Option<&'a BaseTree>, policy: &Policy) -> View<'a> {
        let mut trie: FoldedPaths<Mark> = FoldedPaths::new();
        let mut base_list = Vec::new();
        if let Some(tree) = base {
            // git lists a tree before what lies beneath it, so each entry's parent is known and
            // only its last component is folded.
            let mut nodes: HashMap<&[u8], NodeId> = HashMap::new();
            for (path, mode) in &tree.entries {
                let (parent, name) = match path.iter().rposition(|&b| b == b'/') {
                    Some(slash) => (&path[..slash], &path[slash + 1..]),
                    None => (&path[..0], &path[..]),
                };
                let parent_node = if parent.is_empty() {
                    FoldedPaths::<Mark>::ROOT
                } else {
                    match nodes.get(parent) {
                        Some(&id) => id,
                        None => trie.insert(parent).last().copied().unwrap_or_default(),
                    }
                };
                let node = trie.insert_child(parent_node, name);
                nodes.insert(path, node);
                if let Some(mark) = trie.data_mut(node) {
                    mark.base.push(base_list.len());
                }
                base_list.push((path.as_slice(), *mode));
            }
        }
        let mut steps = Vec::with_capacity(parsed.patches.len());
        for (index, p) in parsed.patches.iter().enumerate() {
            let old = p.old_path.as_deref().map(|o| insert_steps(&mut trie, o));
            let new = p.new_path.as_deref().map(|n| insert_steps(&mut trie, n));
            if present(p).is_some()
                && let Some(&(node, _)) = new.as_ref().and_then(|n| n.last())
                && let Some(mark) = trie.data_mut(node)
            {
                mark.present.push(index);
            }
            steps.push([old.unwrap_or_default(), new.unwrap_or_default()]);
        }
        let mut targets = Vec::new();
        if let Some(tree) = base {
            for (link, target) in &tree.links {
                let Ok(link_text) = std::str::from_utf8(link) else {
                    continue;
                };
                let resolved_text = path::resolved_spelling(link_text);
                let on = |surface: Surface| {
                    let lookup = |p: &str| match surface {
                        Surface::Denied => policy.denied(p),
                        Surface::Protected => policy.protected_by(p),
                    };
                    lookup(link_text)
                        .or_else(|| lookup(&resolved_text))
                        .map(|pattern| (surface, pattern))
                };
                let listed = on(Surface::Denied).or_else(|| on(Surface::Protected));
                let (Some((surface, pattern)), Some(resolved)) =
                    (listed, resolve_link(link, target, tree))
                else {
                    continue;
                };
                let node = trie.insert(&resolved).last().copied().unwrap_or_default();
                if let Some(mark) = trie.data_mut(node) {
                    mark.targets.push(targets.len());
                }
                targets.push(LinkTarget {
                    link: link.clone(),
                    target: resolved,
                    surface,
                    pattern: pattern.to_owned(),
                });
            }
        }
        View {
            trie,
            base: base_list,
            targets,
            steps,
        }
    }

    fn mark(&self, node: NodeId) -> Option<&Mark> {
        self.trie.data(node)
    }

    /// The steps of `raw`, a side of patch `index`.
    fn steps_of(&self, index: usize, raw: &[u8], p: &FilePatch) -> &[Step] {
        let side = usize::from(p.old_path.as_deref() != Some(raw));
        self.steps
            .get(index)
            .and_then(|s| s.get(side))
            .map_or(&[], Vec::as_slice)
    }

    /// A link target on `surface` that `raw` (a side of patch `index`) is or lies beneath.
    fn link_target_of(&self, surface: Surface, index: usize, raw: &[u8]) -> Option<&LinkTarget> {
        let steps = self.steps.get(index)?;
        let chain = steps
            .iter()
            .find(|s| s.last().is_some_and(|&(_, end)| end == raw.len()))?;
        chain
            .iter()
            .filter_map(|&(node, _)| self.mark(node))
            .flat_map(|m| m.targets.iter())
            .filter_map(|&t| self.targets.get(t))
            .find(|t| t.surface == surface)
    }

    /// Every reading of `path` in which one or more components of the form of a Windows 8.3 short
    /// name are replaced by a long name they could stand for: a sibling in the base tree or in
    /// the diff, or a literal name of the denylist. Empty when no component has that form.
    fn short_name_readings(
        &self,
        path: &str,
        literal_names: &[&str],
        budget: &mut ShortNameBudget,
    ) -> Vec<String> {
        let components: Vec<&str> = path.split('/').collect();
        if !components
            .iter()
            .any(|c| path::ShortName::parse(c).is_some())
        {
            return Vec::new();
        }
        // Depth-first over (component index, node of the reading so far, reading, replaced?).
        let mut readings = Vec::new();
        let mut stack: Vec<(usize, Option<NodeId>, String, bool)> =
            vec![(0, Some(FoldedPaths::<Mark>::ROOT), String::new(), false)];
        while let Some((i, node, prefix, replaced)) = stack.pop() {
            let Some(component) = components.get(i) else {
                if replaced {
                    readings.push(prefix);
                }
                continue;
            };
            if readings.len() + stack.len() > ShortNameBudget::MAX_READINGS {
                budget.exhausted = true;
                break;
            }
            let join = |name: &str| {
                if prefix.is_empty() {
                    name.to_owned()
                } else {
                    format!("{prefix}/{name}")
                }
            };
            let child = |name: &str| node.and_then(|n| self.trie.child(n, name.as_bytes()));
            stack.push((i + 1, child(component), join(component), replaced));
            let Some(short) = path::ShortName::parse(component) else {
                continue;
            };
            let mut longs: Vec<String> = Vec::new();
            if let Some(n) = node {
                if !budget.spend(self.trie.child_count(n)) {
                    break;
                }
                longs.extend(
                    self.trie
                        .children(n)
                        .map(|c| String::from_utf8_lossy(self.trie.spelling(c)).into_owned()),
                );
            }
            if !budget.spend(literal_names.len()) {
                break;
            }
            longs.extend(literal_names.iter().map(|s| (*s).to_owned()));
            longs.sort_unstable();
            longs.dedup();
            for long in longs {
                if long != *component && short.may_name(&long) {
                    stack.push((i + 1, child(&long), join(&long), true));
                }
            }
        }
        readings
    }
}

/// Insert `path` and return its steps: every component's node with the end of the prefix it
/// closes.
fn insert_steps(trie: &mut FoldedPaths<Mark>, path: &[u8]) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut at = FoldedPaths::<Mark>::ROOT;
    let mut start = 0;
    for end in memchr::memchr_iter(b'/', path).chain(std::iter::once(path.len())) {
        let component = &path[start..end];
        if !component.is_empty() {
            at = trie.insert_child(at, component);
            steps.push((at, end));
        }
        start = end + 1;
    }
    steps
}

/// Where the symbolic link `link` (with target `target`) of the base tree resolves to, as a path
/// inside the repository, following further links of the base ([`links::resolve`]). `None` when
/// it leaves the repository (absolute, or `..` past the root), enters a gitlink, or loops.
fn resolve_link(link: &[u8], target: &[u8], tree: &BaseTree) -> Option<Vec<u8>> {
    // The base's own links, resolved once each: bounded by the hops alone, as before.
    let mut unbounded = links::Budget {
        lookups: usize::MAX,
        depth: usize::MAX,
    };
    let exact = |name: &[u8], key: &mut Vec<u8>| key.extend_from_slice(name);
    links::resolve(link, target, &mut unbounded, exact, |path| {
        match tree.links.get(path) {
            Some(next) => TreeEntry::Link(next),
            None if tree.modes.get(path) == Some(&MODE_GITLINK) => TreeEntry::Gitlink,
            None => TreeEntry::Other,
        }
    })
    .ok()
    .map(|r| r.path)
}

fn check_structure(parsed: &CandidateDiff, view: &View<'_>, out: &mut Vec<Violation>) {
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
    // Folded names: on a case-insensitive checkout `Docs` and `docs/x` collide too.
    for (index, p) in parsed.patches.iter().enumerate() {
        let Some(new) = present(p) else { continue };
        let steps = view.steps_of(index, new, p);
        let Some((&(own, _), ancestors)) = steps.split_last() else {
            continue;
        };
        for &(node, end) in ancestors {
            let Some(&other) = view.mark(node).and_then(|m| m.present.first()) else {
                continue;
            };
            let Some(other) = parsed.patches.get(other) else {
                continue;
            };
            let rule =
                if other.new_mode == Some(MODE_SYMLINK) || other.new_mode == Some(MODE_GITLINK) {
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
                    display_bytes(&new[..end]),
                    other.line
                ),
            ));
        }
        let earlier = view
            .mark(own)
            .into_iter()
            .flat_map(|m| m.present.iter())
            .take_while(|&&i| i < index)
            .filter_map(|&i| parsed.patches.get(i))
            .filter_map(present)
            .find(|&other| other != new);
        if let Some(other) = earlier {
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

/// git's own test for a git directory (`is_git_directory` in git's `setup.c`): a `HEAD`, and an
/// `objects` and a `refs` (or a `commondir` naming where they are). git takes any directory that
/// passes it for a repository when a command runs inside it (`safe.bareRepository` defaults to
/// `all`), and reads its `config`, whose `core.fsmonitor` or `core.hooksPath` run programs: a
/// shell prompt that calls `git status` is enough. Names are matched as a case-insensitive file
/// system finds them, and contents are not looked at: a `HEAD` that is not a valid reference
/// still makes the directory suspect.
fn is_git_directory(view: &View<'_>, dir: NodeId) -> bool {
    let has = |name: &str| view.trie.has_child(dir, name);
    has("head") && ((has("objects") && has("refs")) || has("commondir"))
}

/// A diff may not create, complete or alter a directory git would take for a repository: the test
/// runs on the union of the base tree and every path of the diff, for each directory a path of the
/// diff lies in.
fn check_git_dirs(parsed: &CandidateDiff, view: &View<'_>, out: &mut Vec<Violation>) {
    let mut verdicts: HashMap<NodeId, bool> = HashMap::new();
    let root = FoldedPaths::<Mark>::ROOT;
    for (index, p) in parsed.patches.iter().enumerate() {
        for raw in sides(p) {
            let steps = view.steps_of(index, raw, p);
            let dirs = std::iter::once((root, 0)).chain(
                steps
                    .split_last()
                    .map_or(&[][..], |(_, ancestors)| ancestors)
                    .iter()
                    .copied(),
            );
            for (dir, end) in dirs {
                if *verdicts
                    .entry(dir)
                    .or_insert_with(|| is_git_directory(view, dir))
                {
                    let shown = if end == 0 {
                        "the repository root".to_owned()
                    } else {
                        format!("`{}`", display_bytes(&raw[..end]))
                    };
                    out.push(violation_for(
                        p,
                        raw,
                        RuleId::GitDir,
                        format!(
                            "{shown} would be a git repository (it holds HEAD with objects/ and refs/, or commondir, with the base tree): git run inside it reads its config, which can run programs"
                        ),
                    ));
                    break;
                }
            }
        }
    }
}

/// The base commit's tree as the rules need it.
struct BaseTree {
    /// Every entry, trees included, in git's order.
    entries: Vec<(Vec<u8>, u32)>,
    /// The same entries by path.
    modes: HashMap<Vec<u8>, u32>,
    /// Every symbolic link and its target.
    links: HashMap<Vec<u8>, Vec<u8>>,
}

/// What git says about the diff, gathered on its own thread.
struct GitSide {
    /// `None` when the guard told git not to apply the diff.
    applied: Option<Applied>,
    changes: Option<Vec<RawChange>>,
}

/// git's side: the base tree (listed on one more thread and sent on `base_out` as soon as it is
/// read) and a throwaway index of the base; then, if `go` says so, the diff applied to that index
/// and git's reading of the result. The copy of the (verified) bytes git will read is written
/// while git resolves the base and reads its tree. Unless `keep_objects`, the objects git wrote
/// are removed while `git diff-index` reads the result (it compares ids and reads none of them).
fn read_git_side(
    repo: RepoBase<'_>,
    diff_bytes: &[u8],
    go: &std::sync::mpsc::Receiver<bool>,
    base_out: &std::sync::mpsc::Sender<BaseTree>,
    keep_objects: bool,
) -> Result<GitSide, git::GitError> {
    let thread_failed = |what: &str| git::GitError::BadOutput {
        command: format!("{what} (thread)"),
    };
    let scratch = git::Scratch::new()?;
    let (prepared, staged) = std::thread::scope(|s| {
        let staging = s.spawn(|| scratch.stage(diff_bytes));
        let prepared = GitRepo::open_resolved(repo.dir, repo.base).and_then(|(git, commit)| {
            let (listed, read) = std::thread::scope(|s| {
                let listing = s.spawn(|| {
                    read_base_tree(&git, &commit).map(|base| {
                        // The receiver is gone only when the check stopped early.
                        let _ = base_out.send(base);
                    })
                });
                let read = git.read_tree(&scratch, &commit);
                let listed = listing
                    .join()
                    .unwrap_or_else(|_| Err(thread_failed("ls-tree")));
                (listed, read)
            });
            listed.and(read).map(|()| (git, commit))
        });
        let staged = staging
            .join()
            .unwrap_or_else(|_| Err(thread_failed("staging")));
        (prepared, staged)
    });
    let (git, commit) = prepared?;
    staged?;
    let applied = match go.recv() {
        Ok(true) => Some(git.staged_in(scratch, &commit).apply()?),
        _ => None,
    };
    let changes = match &applied {
        Some(Applied::Applied(index)) if keep_objects => Some(index.changes()?),
        Some(Applied::Applied(index)) => Some(std::thread::scope(|s| {
            // A failed removal leaves the files to the directory's removal when it is dropped.
            s.spawn(|| index.discard_objects());
            index.changes()
        })?),
        _ => None,
    };
    Ok(GitSide { applied, changes })
}

/// The base commit's tree with the target of every symbolic link.
fn read_base_tree(git: &GitRepo, commit: &str) -> Result<BaseTree, git::GitError> {
    let listed = git.tree_entries(commit)?;
    let link_oids: Vec<&str> = listed
        .iter()
        .filter(|(_, e)| e.mode == MODE_SYMLINK)
        .map(|(_, e)| e.oid.as_str())
        .collect();
    let targets = git.blobs(&link_oids)?;
    let links: HashMap<Vec<u8>, Vec<u8>> = listed
        .iter()
        .filter(|(_, e)| e.mode == MODE_SYMLINK)
        .map(|(path, _)| path.clone())
        .zip(targets)
        .collect();
    let entries: Vec<(Vec<u8>, u32)> = listed.into_iter().map(|(p, e)| (p, e.mode)).collect();
    let modes = entries.iter().cloned().collect();
    Ok(BaseTree {
        entries,
        modes,
        links,
    })
}

/// The rules that need the base tree.
fn base_rules(
    base_tree: &BaseTree,
    parsed: &CandidateDiff,
    view: &View<'_>,
    policy: &Policy,
    verdict: &mut Verdict,
) {
    let base = &base_tree.modes;
    let out = &mut verdict.violations;

    // Rules that need the base tree. Names are also compared folded, because the tree may later
    // be checked out on a case-insensitive file system.
    let removed: HashSet<&[u8]> = parsed
        .patches
        .iter()
        .filter(|p| matches!(p.status, ChangeKind::Deleted | ChangeKind::Renamed))
        .filter_map(|p| p.old_path.as_deref())
        .collect();
    let base_at = |node: NodeId| {
        view.mark(node)
            .into_iter()
            .flat_map(|m| m.base.iter())
            .filter_map(|&i| view.base.get(i).copied())
    };
    for (index, p) in parsed.patches.iter().enumerate() {
        for raw in sides(p) {
            let steps = view.steps_of(index, raw, p);
            let ancestors = steps.split_last().map_or(&[][..], |(_, a)| a);
            for &(node, end) in ancestors {
                let dir = &raw[..end];
                if let Some((_, mode)) = base_at(node).find(|&(_, m)| git::is_link(m)) {
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
                    if !policy.allow_symlinks {
                        out.push(
                            violation_for(
                                p,
                                raw,
                                RuleId::Symlink,
                                "the path is a symbolic link in the base tree",
                            )
                            .with_entry("symlinks.allow: false"),
                        );
                    }
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
        if !matches!(
            p.status,
            ChangeKind::Added | ChangeKind::Renamed | ChangeKind::Copied
        ) {
            continue;
        }
        let Some(new) = p.new_path.as_deref() else {
            continue;
        };
        let steps = view.steps_of(index, new, p);
        let Some((&(own, _), ancestors)) = steps.split_last() else {
            continue;
        };
        // A new path that differs only in case from a base path (a file or a directory).
        if !base.contains_key(new)
            && let Some((existing, _)) = base_at(own).find(|(path, _)| !removed.contains(path))
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
        // A directory of the new path that differs only in case from a base file: the mirror.
        for &(node, end) in ancestors {
            let dir = &new[..end];
            let file = base_at(node).find(|&(path, mode)| {
                path != dir
                    && file_type(mode) != 0o040000
                    && !git::is_link(mode)
                    && !removed.contains(path)
            });
            if let Some((file, _)) = file {
                out.push(violation_for(
                    p,
                    new,
                    RuleId::PathConflict,
                    format!(
                        "{} is a directory here, but {} is a file in the base tree and differs only in case or Unicode normalization",
                        display_bytes(dir),
                        display_bytes(file)
                    ),
                ));
            }
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
}

/// Whether either side of the patch, as the diff states it, is a symbolic link.
fn is_link_patch(p: &FilePatch) -> bool {
    p.old_mode == Some(MODE_SYMLINK) || p.new_mode == Some(MODE_SYMLINK)
}

/// With `symlinks.allow: true`: the target of every link present after the diff (created,
/// retargeted, renamed or copied), resolved in the tree after the diff (the base's links with the
/// diff's changes: [`links::resolve`]), must be a repository path that passes every path rule,
/// is in neither the denied nor (under `protected: block`) the protected surface, and is inside
/// the declared scope. Names are looked up folded, as a case-insensitive checkout finds them.
struct LinkRules<'a> {
    base: &'a BaseTree,
    policy: &'a Policy,
    scope: &'a Scope,
    limits: &'a PathLimits,
}

/// The tree after the diff as link resolution sees it: links by folded path ([`folded_key`];
/// `None`: a target the diff does not write whole) and gitlinks.
struct LinkTree {
    links: HashMap<String, Option<Vec<u8>>>,
    gitlinks: HashSet<String>,
}

impl LinkTree {
    /// What the path whose folded key is `key` is.
    fn entry(&self, key: &[u8]) -> TreeEntry<'_> {
        let Ok(key) = std::str::from_utf8(key) else {
            return TreeEntry::Other;
        };
        match self.links.get(key) {
            Some(Some(next)) => TreeEntry::Link(next),
            Some(None) => TreeEntry::UnknownLink,
            None if self.gitlinks.contains(key) => TreeEntry::Gitlink,
            None => TreeEntry::Other,
        }
    }
}

/// A path's components folded ([`path::fold_component`]), the key links are looked up by.
fn folded_key(path: &[u8]) -> String {
    path.split(|&b| b == b'/')
        .filter(|c| !c.is_empty())
        .map(path::fold_component)
        .collect::<Vec<_>>()
        .join("/")
}

impl LinkRules<'_> {
    const ENTRY: &'static str = "symlinks.allow: true";
    /// The lookups all links of one diff may spend ([`links::resolve`]); thousands of honest
    /// links of a few components each spend a few thousand.
    const LOOKUPS: usize = 200_000;

    /// The target a patch gives its new side: the base's when no hunk writes it (a pure rename,
    /// copy or mode change), else what the hunk writes (`None`: not written whole).
    fn target_of(&self, p: &FilePatch) -> Option<Vec<u8>> {
        if p.hunks.is_empty() {
            let source = p.old_path.as_deref().or(p.new_path.as_deref())?;
            self.base.links.get(source).cloned()
        } else {
            p.link_target.clone()
        }
    }

    fn check(&self, parsed: &CandidateDiff, verdict: &mut Verdict) {
        let mut links: HashMap<String, Option<Vec<u8>>> = self
            .base
            .links
            .iter()
            .map(|(l, t)| (folded_key(l), Some(t.clone())))
            .collect();
        let gitlinks: HashSet<String> = self
            .base
            .entries
            .iter()
            .filter(|(_, mode)| *mode == MODE_GITLINK)
            .map(|(path, _)| folded_key(path))
            .collect();
        let mut present_links = Vec::new();
        for (entry, p) in verdict.files.iter().zip(&parsed.patches) {
            if matches!(p.status, ChangeKind::Deleted | ChangeKind::Renamed)
                && let Some(old) = &p.old_path
            {
                links.remove(&folded_key(old));
            }
            let Some(new) = present(p) else { continue };
            if entry.new_mode == Some(MODE_SYMLINK) {
                let target = self.target_of(p);
                links.insert(folded_key(new), target.clone());
                present_links.push((p, new, target));
            } else {
                links.remove(&folded_key(new));
            }
        }
        let tree = LinkTree { links, gitlinks };
        let mut budget = links::Budget {
            lookups: Self::LOOKUPS,
            depth: self.policy.limits.max_path_components,
        };
        for (p, link, target) in present_links {
            let spent = self.check_link(p, link, target.as_deref(), &tree, &mut budget, verdict);
            if spent {
                // Reported once, at the link that found it spent; the rest are not resolved.
                break;
            }
        }
    }

    /// The rules on one link present after the diff; `true` when the budget of lookups was found
    /// spent (reported here as `limit-exceeded`).
    fn check_link(
        &self,
        p: &FilePatch,
        link: &[u8],
        target: Option<&[u8]>,
        tree: &LinkTree,
        budget: &mut links::Budget,
        verdict: &mut Verdict,
    ) -> bool {
        let shown = display_bytes(link);
        let refuse = |why: String| {
            violation_for(
                p,
                link,
                RuleId::Symlink,
                format!("symbolic link `{shown}`: {why}"),
            )
            .with_entry(Self::ENTRY)
        };
        let out = &mut verdict.violations;
        let Some(target) = target else {
            out.push(refuse(
                "its target is not known: the patch does not write the link whole (one hunk from line 1, with its mode 120000)".into(),
            ));
            return false;
        };
        let bad = if target.is_empty() {
            Some("its target is empty".to_owned())
        } else if target.contains(&0) || target.contains(&b'\n') {
            Some("its target holds a NUL or a newline".to_owned())
        } else if target.len() > self.limits.max_path_bytes {
            Some(format!(
                "its target is {} bytes long, over the limit of {}",
                target.len(),
                self.limits.max_path_bytes
            ))
        } else {
            None
        };
        if let Some(why) = bad {
            out.push(refuse(why));
            return false;
        }
        let folded = |name: &[u8], key: &mut Vec<u8>| {
            key.extend_from_slice(path::fold_component(name).as_bytes())
        };
        let resolved = match links::resolve(link, target, budget, folded, |key| tree.entry(key)) {
            Ok(resolved) => resolved,
            Err(links::Unresolved::OverBudget) => {
                out.push(
                    violation_for(
                        p,
                        link,
                        RuleId::LimitExceeded,
                        format!(
                            "symbolic link `{shown}`: the diff's links need more than {} lookups to resolve",
                            Self::LOOKUPS
                        ),
                    )
                    .with_entry(Self::ENTRY),
                );
                return true;
            }
            Err(e) => {
                out.push(refuse(format!(
                    "its target `{}` does not resolve to a path inside the repository: {e}",
                    display_bytes(target)
                )));
                return false;
            }
        };
        let to = display_bytes(&resolved.path);
        let via = format!("its target `{}` resolves to `{to}`", display_bytes(target));
        if resolved.path.is_empty() {
            out.push(refuse(format!(
                "its target `{}` is the repository root, which holds `.git` and every path out of scope",
                display_bytes(target)
            )));
            return false;
        }
        // Every name the resolution looked up, and the path it ends at, must pass the path rules:
        // a `.git` in any disguise is refused even where a later `..` leaves it again.
        let names = resolved
            .targets
            .iter()
            .flat_map(|t| t.split(|&b| b == b'/'))
            .filter(|c| !matches!(*c, b"" | b"." | b".."));
        for name in names.chain(std::iter::once(resolved.path.as_slice())) {
            if let Err(e) = path::validate_path(name, self.limits) {
                out.push(
                    violation_for(
                        p,
                        link,
                        e.rule(),
                        format!("symbolic link `{shown}`: {via}: {e}"),
                    )
                    .with_entry(Self::ENTRY),
                );
                return false;
            }
        }
        let Ok(resolved) = std::str::from_utf8(&resolved.path) else {
            return false;
        };
        let spelled = path::resolved_spelling(resolved);
        let on =
            |lookup: &dyn Fn(&str) -> Option<String>| lookup(resolved).or_else(|| lookup(&spelled));
        if let Some(pattern) = on(&|p: &str| self.policy.denied(p).map(str::to_owned)) {
            out.push(
                violation_for(
                    p,
                    link,
                    RuleId::DeniedPath,
                    format!("symbolic link `{shown}`: {via}, in the denied trust-control surface"),
                )
                .with_entry(format!("deny: {pattern}"))
                .with_hint(denied_hint(resolved, &pattern)),
            );
        } else if self.policy.protected != Protected::Allow
            && let Some(pattern) = on(&|p: &str| self.policy.protected_by(p).map(str::to_owned))
        {
            let finding = violation_for(
                p,
                link,
                RuleId::ProtectedPath,
                format!("symbolic link `{shown}`: {via}, which is protected"),
            )
            .with_entry(format!("protect: {pattern}"));
            if self.policy.protected == Protected::Block {
                out.push(finding);
            } else {
                verdict.protected.push(finding);
            }
        }
        if self.scope.matching(resolved).is_none() {
            verdict.violations.push(
                violation_for(
                    p,
                    link,
                    RuleId::OutOfScope,
                    format!(
                        "symbolic link `{shown}`: {via}, which matches no declared scope glob: the link would show an out-of-scope file under an in-scope name"
                    ),
                )
                .with_entry(format!("scope: {}", self.scope.globs().join(", "))),
            );
        }
        false
    }
}

/// git's own reading, on a throwaway index, compared with the guard's (modes filled in by
/// [`base_rules`]).
fn compare_with_git(
    (applied, changes): GitReading,
    parsed: &CandidateDiff,
    verdict: &mut Verdict,
) -> Option<ThrowawayIndex> {
    verdict.mode = CheckMode::GitCrossChecked;
    let (index, changes) = match (applied, changes) {
        (Applied::Applied(index), Some(changes)) => (index, changes),
        (Applied::Refused(message), _) => {
            let git_lines: Vec<String> = message.lines().map(|l| format!("git: {l}")).collect();
            verdict.violations.push(Violation::new(
                RuleId::GitRefused,
                format!(
                    "git apply refused the diff{}\n{}",
                    likely_cause(&message, parsed, &verdict.violations),
                    git_lines.join("\n")
                ),
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

/// What most likely made git refuse, from its message, the diff's shape and the findings already
/// made; empty when unclear.
fn likely_cause(message: &str, parsed: &CandidateDiff, findings: &[Violation]) -> String {
    // A binary patch (a `git diff` made without `--binary` writes only a `Binary files ... differ`
    // stub) is refused by git whatever the base; it is already reported beside this finding.
    let binary: Vec<String> = findings
        .iter()
        .filter(|v| v.rule == RuleId::BinaryPatch)
        .filter_map(|v| v.path.as_ref().map(|p| format!("`{}`", p.display())))
        .collect();
    if !binary.is_empty() {
        let (first, more) = binary.split_at(1);
        let more = match more.len() {
            0 => String::new(),
            n => format!(" and {n} more"),
        };
        return format!(
            "; likely cause: the binary patch of {}{more} (reported as binary-patch): a diff made without `--binary` holds only a `Binary files ... differ` line, which git cannot apply, and binary patches are not accepted either way",
            first.concat()
        );
    }
    // `git diff -U0` shapes: a hunk that inserts or removes lines in the middle of a file with no
    // line around it, or several hunks of one file none of which has context. (A small file
    // rewritten whole has one hunk without context too, so that alone says nothing.)
    let without_context = parsed.patches.iter().any(|p| {
        let bare = |h: &diff::Hunk| h.context_lines == 0;
        p.hunks.iter().any(|h| {
            bare(h)
                && ((h.old_count == 0 && h.old_start > 0) || (h.new_count == 0 && h.new_start > 0))
        }) || (p.hunks.len() > 1 && p.hunks.iter().all(bare))
    });
    let cause = if message.contains("patch does not apply") && without_context {
        "the diff has hunks without context lines, as `git diff -U0` makes them, and git needs context to apply a patch: make the diff with the default context (`git diff`)"
    } else if message.contains("patch does not apply")
        || message.contains("does not exist in index")
    {
        "the lines or files the diff changes are not those of the base: does --base name the commit the diff was made against?"
    } else if message.contains("already exists in index") {
        "a file the diff creates already exists in the base: does --base name the commit the diff was made against, or was the diff applied already?"
    } else {
        return String::new();
    };
    format!("; likely cause: {cause}")
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

#[cfg(test)]
mod one_of_each_tests {
    use super::*;

    fn finding(rule: RuleId, path: &str, line: usize, message: &str) -> Violation {
        let mut v = Violation::new(rule, message);
        v.path = Some(RepoPath::new(path));
        v.line = Some(line);
        v
    }

    #[test]
    fn a_finding_repeated_at_later_lines_is_said_once_at_its_first() {
        let mut findings = vec![
            finding(
                RuleId::Symlink,
                "src/l",
                30,
                "symbolic links may not be added",
            ),
            finding(
                RuleId::Symlink,
                "src/l",
                12,
                "symbolic links may not be added",
            ),
            finding(
                RuleId::OutOfScope,
                "src/l",
                12,
                "matches no declared scope glob",
            ),
            finding(
                RuleId::Symlink,
                "src/l",
                20,
                "symbolic links may not be added",
            ),
            finding(
                RuleId::Symlink,
                "src/m",
                40,
                "symbolic links may not be added",
            ),
        ];
        one_of_each(&mut findings);
        let kept: Vec<(RuleId, Option<usize>, String)> = findings
            .iter()
            .map(|v| {
                (
                    v.rule,
                    v.line,
                    v.path
                        .as_ref()
                        .and_then(RepoPath::to_str)
                        .unwrap_or_default()
                        .to_owned(),
                )
            })
            .collect();
        assert_eq!(
            kept,
            vec![
                (RuleId::OutOfScope, Some(12), "src/l".to_owned()),
                (RuleId::Symlink, Some(12), "src/l".to_owned()),
                (RuleId::Symlink, Some(40), "src/m".to_owned()),
            ]
        );
    }
}
