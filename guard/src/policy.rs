//! The policy: which paths are the denied trust-control surface, what a build may write, which extra
//! environment variables `guard run` passes through, which file kinds are allowed, and size limits;
//! plus the declared [`Scope`] of one task.
//!
//! # Sources
//!
//! The default policy is one documented file, `guard/src/default-policy.yml`, embedded in the binary
//! ([`Policy::embedded_default`]). A user policy file ([`Policy::from_yaml`]) uses the same schema and
//! is applied on top of the default: it can only *extend* the denylist and the build outputs, only
//! *lower* limits, and loosen the file-kind rules only through explicit `allow` keys and the
//! `portable-paths` switch. The default
//! denylist cannot be removed.
//!
//! ```yaml
//! version: 1                          # required; only 1 exists
//! deny:
//!   add: ["gate/**", "guard/**"]      # appended to the default denylist
//!   exclude: ["**/*.hcl"]             # default deny entries removed, written exactly
//! allow:
//!   executable-files: false           # true allows new files with mode 100755
//!   mode-changes: false               # true allows old mode != new mode
//!   unprotected-secret-jobs: false    # true: guard readiness reports instead of failing
//! portable-paths: true                # false allows names Windows cannot check out
//! symlinks:
//!   allow: false                      # true: links inside the scope may be created, retargeted, deleted
//! text:
//!   encodings: utf-8                  # utf-8 | legacy (lines that are not UTF-8, as git diffs them)
//! protect:
//!   add: ["migrations/**"]            # appended to the default protected list
//!   exclude: ["**/Makefile"]          # default protected entries removed, written exactly
//! protected: review                   # review (default) | block | allow
//! limits:                             # each 1 ..= the default value
//!   diff-bytes: 67108864
//!   files: 10000
//!   path-bytes: 4096
//!   component-bytes: 255
//!   line-bytes: 1048576
//!   path-components: 128
//! build:
//!   output: ["target/**"]             # appended to the default build outputs
//!   env: ["CARGO_HOME"]               # appended to the default env allowlist
//! readiness:                          # guard readiness (the second execution)
//!   default-token: write              # the repository's default GITHUB_TOKEN: read | write
//!   protected-environments: [production]  # appended; environments whose rules were checked
//!   accept:                           # appended; one job each, shown with its reason
//!     - workflow: .github/workflows/ci.yml
//!       job: test
//!       reason: "its token only reads a public mirror"
//! ```
//!
//! Every key is optional except `version`. Reading is strict and two-phase: the YAML is deserialized
//! into raw structs that reject unknown keys, duplicate keys, wrong types, YAML tags and merge keys,
//! under a small parse budget (input size, nodes, depth, aliases) so an alias bomb fails fast; the raw
//! values are then validated into a [`Policy`], and every error names the offending entry, for
//! example ``deny.add[3]: invalid glob `a/[`: ...``.
//!
//! # Glob semantics
//!
//! All patterns (deny, build output, scope) are globset globs ([`crate::glob`]) built with
//! `literal_separator(true)` and `backslash_escape(true)`, matched against the whole repository-relative path (`/`-separated,
//! no leading `/`):
//!
//! | glob | matches | does not match |
//! |---|---|---|
//! | `src/*` | `src/lib.rs` | `src/a/lib.rs` (`*` never crosses `/`), `src` |
//! | `src/**` | `src/lib.rs`, `src/a/b/c.rs` | `src`, `srcx/a.rs` |
//! | `**/CODEOWNERS` | `CODEOWNERS`, `docs/CODEOWNERS`, `a/b/CODEOWNERS` | `CODEOWNERS.md` |
//! | `**/*.tf` | `main.tf`, `infra/prod/main.tf` | `main.tf.md`, `terraform.md` |
//! | `src/*.{rs,toml}` | `src/a.rs`, `src/b.toml` | `src/c.md` |
//! | `docs/\*.md` | the file literally named `docs/*.md` | `docs/a.md` |
//!
//! `?` matches one character other than `/`, `[abc]`/`[!abc]` a character class, `{a,b}`
//! alternatives. A backslash may only escape a punctuation character other than `/` and `\`.
//!
//! **Deny** patterns match case-insensitively (`.GitHub/Workflows/x.yml` is denied by `.github/**`;
//! ASCII letters fold, other characters match exactly, as in globset),
//! because the same tree may be checked out on a case-insensitive file system; and a deny pattern
//! ending in `/**` also denies the directory path itself (`.github/**` denies a file named
//! `.github`), so that the surface cannot be occupied or shadowed by a file. **Scope** and
//! **build-output** patterns match case-sensitively and exactly as written (`src/**` does not match
//! `src`); both choices err on the side of rejecting.
//!
//! Patterns are validated before they are compiled: they must be non-empty, relative (no leading
//! `/`), have no empty, `.` or `..` component (also not as a `{..}` alternative), no trailing `/`,
//! no control character, and be at most [`MAX_PATTERN_BYTES`] long.
//!
//! The deny check wins over build outputs: a consumer must check [`Policy::denied`] before
//! exempting a path with [`Policy::is_build_output`].

use crate::glob::{Glob, GlobSet};
use contract::verdict::{ExclusionDoc, ExclusionList};
use serde::Deserialize;

/// The default policy file, embedded.
pub const DEFAULT_POLICY_YAML: &str = include_str!("default-policy.yml");

/// The only policy schema version.
pub const POLICY_VERSION: u64 = 1;

/// Largest policy file accepted, in bytes.
pub const MAX_POLICY_BYTES: usize = 1024 * 1024;

/// Default deny entries no policy may exclude: the workflows and the rest of `.github/`, code
/// owners, and submodule URLs.
pub const CORE_DENY: [&str; 3] = [".github/**", "**/CODEOWNERS", "**/.gitmodules"];

/// Longest glob pattern accepted, in bytes.
pub const MAX_PATTERN_BYTES: usize = 4096;

/// Size limits on a candidate diff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Total size of the raw diff.
    pub max_diff_bytes: u64,
    /// Number of file patches.
    pub max_files: usize,
    /// Bytes in one path.
    pub max_path_bytes: usize,
    /// Bytes in one path component.
    pub max_component_bytes: usize,
    /// Bytes in one diff line.
    pub max_line_bytes: usize,
    /// Components in one path (directories and the file name).
    pub max_path_components: usize,
}

impl Limits {
    /// The ceiling the embedded default is checked against: no ceiling.
    const UNBOUNDED: Limits = Limits {
        max_diff_bytes: u64::MAX,
        max_files: usize::MAX,
        max_path_bytes: usize::MAX,
        max_component_bytes: usize::MAX,
        max_line_bytes: usize::MAX,
        max_path_components: usize::MAX,
    };
}

/// How a pattern is matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PatternKind {
    /// Case-insensitive; `X/**` also matches `X`.
    Deny,
    /// Case-sensitive, as written.
    Exact,
}

/// One glob as written in the policy or the scope, read (its syntax checked) but compiled only
/// as part of its [`PatternList`].
#[derive(Debug, Clone)]
pub struct PatternEntry {
    /// Where it was written, e.g. `deny.add[3]` or `scope[0]`.
    entry: String,
    pattern: String,
    glob: Glob,
    /// For a deny pattern `X/**`: the glob `X`, so the directory path itself is denied.
    itself: Option<Glob>,
}

impl PatternEntry {
    fn new(entry: &str, pattern: &str, kind: PatternKind) -> Result<PatternEntry, PolicyError> {
        check_pattern(pattern).map_err(|reason| PolicyError::InvalidGlob {
            entry: entry.to_owned(),
            pattern: pattern.to_owned(),
            reason,
        })?;
        let case_insensitive = kind == PatternKind::Deny;
        let glob = read_glob(entry, pattern, case_insensitive)?;
        let itself = match (kind, pattern.strip_suffix("/**")) {
            (PatternKind::Deny, Some(base)) if !base.is_empty() => {
                Some(read_glob(entry, base, case_insensitive)?)
            }
            _ => None,
        };
        Ok(PatternEntry {
            entry: entry.to_owned(),
            pattern: pattern.to_owned(),
            glob,
            itself,
        })
    }

    /// The glob text as written.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    fn globs(&self) -> impl Iterator<Item = &Glob> {
        std::iter::once(&self.glob).chain(&self.itself)
    }
}

fn read_glob(entry: &str, pattern: &str, case_insensitive: bool) -> Result<Glob, PolicyError> {
    Glob::new(pattern, case_insensitive).map_err(|e| PolicyError::InvalidGlob {
        entry: entry.to_owned(),
        pattern: pattern.to_owned(),
        reason: e.to_string(),
    })
}

/// The entries of one list of the policy (or of the scope), in order, compiled together: one
/// pass over a path answers which entries match, and the first match is the lowest index, as if
/// the entries were tried in turn.
#[derive(Debug, Clone, Default)]
pub struct PatternList {
    entries: Vec<PatternEntry>,
    set: GlobSet,
}

impl PatternList {
    fn new(entries: Vec<PatternEntry>) -> Result<PatternList, PolicyError> {
        let tagged = entries
            .iter()
            .enumerate()
            .flat_map(|(i, e)| e.globs().map(move |g| (i, g)));
        match GlobSet::new(tagged) {
            Ok(set) => Ok(PatternList { entries, set }),
            // Name the entry globset's regex engine refused.
            Err(e) => Err(entries
                .iter()
                .find_map(|entry| {
                    GlobSet::new(entry.globs().map(|g| (0, g))).err().map(|e| {
                        PolicyError::InvalidGlob {
                            entry: entry.entry.clone(),
                            pattern: entry.pattern.clone(),
                            reason: e.to_string(),
                        }
                    })
                })
                .unwrap_or(PolicyError::InvalidGlob {
                    entry: "(all entries)".into(),
                    pattern: String::new(),
                    reason: e.to_string(),
                })),
        }
    }

    /// The first entry matching `path` (repository-relative, `/`-separated), or None.
    pub fn first_match(&self, path: &str) -> Option<&PatternEntry> {
        self.set.first(path).and_then(|i| self.entries.get(i))
    }

    /// Whether any entry matches `path`.
    pub fn is_match(&self, path: &str) -> bool {
        self.set.is_match(path)
    }

    /// The indices of the entries matching `path`, ascending.
    pub fn matching_indices(&self, path: &str) -> Vec<usize> {
        self.set.matches(path)
    }
}

impl std::ops::Deref for PatternList {
    type Target = [PatternEntry];

    fn deref(&self) -> &[PatternEntry] {
        &self.entries
    }
}

impl<'a> IntoIterator for &'a PatternList {
    type Item = &'a PatternEntry;
    type IntoIter = std::slice::Iter<'a, PatternEntry>;

    fn into_iter(self) -> Self::IntoIter {
        self.entries.iter()
    }
}

/// Rejects patterns that are valid globs but can never match a safe path, or that suggest a
/// misunderstanding (absolute, directory with trailing `/`), so a deny entry cannot be silently inert.
fn check_pattern(pattern: &str) -> Result<(), String> {
    if pattern.is_empty() {
        return Err("empty pattern".into());
    }
    if pattern.len() > MAX_PATTERN_BYTES {
        return Err(format!("longer than {MAX_PATTERN_BYTES} bytes"));
    }
    if pattern.chars().any(char::is_control) {
        return Err("contains a control character".into());
    }
    if pattern.starts_with('/') {
        return Err("starts with `/`; patterns are already relative to the repository root".into());
    }
    if pattern.ends_with('/') {
        return Err("ends with `/`; to match a directory's contents write `dir/**`".into());
    }
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some(e) if e.is_ascii_punctuation() && e != '/' && e != '\\' => {}
                Some(e) => {
                    return Err(format!(
                        "backslash may only escape a glob character, not {e:?}; paths never contain a backslash"
                    ));
                }
                None => return Err("ends with a dangling backslash".into()),
            }
        }
    }
    check_alternatives(pattern)?;
    for component in pattern.split('/') {
        if component.is_empty() {
            return Err("has an empty path component (`//`)".into());
        }
        // Brace alternatives are split too, so `{..,src}/**` is caught.
        for piece in component.split(['{', '}', ',']) {
            if piece == "." || piece == ".." {
                return Err(format!("has a `{piece}` path component"));
            }
        }
    }
    Ok(())
}

/// Rejects an empty `{}` alternative (`lefthook{,-local}.yml`): the glob library never matches
/// the empty branch, so such an entry would silently miss the very name it seems to list.
fn check_alternatives(pattern: &str) -> Result<(), String> {
    let mut depth = 0usize;
    let mut piece_len = 0usize;
    for (c, escaped) in glob_chars(pattern) {
        match c {
            _ if escaped => piece_len += 1,
            '{' => {
                depth += 1;
                piece_len = 0;
            }
            ',' | '}' if depth > 0 => {
                if piece_len == 0 {
                    return Err(
                        "has an empty `{}` alternative, which never matches; list every name in full (`{a,a-local}` instead of `a{,-local}`)"
                            .into(),
                    );
                }
                if c == '}' {
                    depth -= 1;
                }
                piece_len = 0;
            }
            _ => piece_len += 1,
        }
    }
    Ok(())
}

/// What a path in the protected list does to the verdict (`protected:` in the policy).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protected {
    /// The verdict accepts and lists the path as a `protected-path` finding for a human to review
    /// (the default).
    Review,
    /// The path is rejected like a denied one (`protected-path` violation).
    Block,
    /// The list is ignored.
    Allow,
}

impl Protected {
    /// The policy value: `review`, `block` or `allow`.
    pub fn name(self) -> &'static str {
        match self {
            Protected::Review => "review",
            Protected::Block => "block",
            Protected::Allow => "allow",
        }
    }
}

/// Which bytes a line of a patch's content may hold (`text.encodings:` in the policy).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextEncodings {
    /// Every line is UTF-8 (the default); anything else is `invalid-content`.
    Utf8,
    /// A line may also be bytes that are not UTF-8 (CP1252, GBK, Shift-JIS...), as git, which
    /// knows no encodings, diffs them as text. A NUL stays `invalid-content` everywhere, and so does
    /// a C0 control other than TAB, CR and FF, or DEL, in a line that is not UTF-8: without the
    /// code page nothing else can be read from such a line.
    Legacy,
}

impl TextEncodings {
    /// The policy value: `utf-8` or `legacy`.
    pub fn name(self) -> &'static str {
        match self {
            TextEncodings::Utf8 => "utf-8",
            TextEncodings::Legacy => "legacy",
        }
    }
}

/// The checked policy.
#[derive(Debug, Clone)]
pub struct Policy {
    /// The denied trust-control surface; matched case-insensitively.
    pub deny: PatternList,
    /// The protected paths: a diff may change them only with a human's explicit look; matched
    /// like deny patterns (case-insensitively, `X/**` also matches `X`).
    pub protect: PatternList,
    /// What a protected path does to the verdict.
    pub protected: Protected,
    /// Whether a diff may create, retarget or delete symbolic links whose own path and whose
    /// target (resolved as git resolves it) pass every path rule and stay in scope
    /// (`symlinks.allow`).
    pub allow_symlinks: bool,
    /// Which bytes a text line may hold (`text.encodings`).
    pub text_encodings: TextEncodings,
    /// Paths a build may write (e.g. `target/**`); matched case-sensitively.
    pub build_output: PatternList,
    /// Extra environment variable names `guard run` passes through.
    pub env_allow: Vec<String>,
    /// Whether new files may have the executable mode.
    pub allow_executable: bool,
    /// Whether a file's mode may change.
    pub allow_mode_change: bool,
    /// Whether every name the diff creates must be checkable-out on Windows
    /// ([`crate::path::check_portable`]).
    pub portable_paths: bool,
    /// Whether `guard readiness` only reports the jobs of the repository's own workflows that
    /// would run on the published branch with secrets and no environment, instead of failing.
    pub allow_unprotected_secret_jobs: bool,
    /// What `guard readiness` assumes of the repository and accepts (`readiness:`).
    pub readiness: crate::readiness::Settings,
    pub limits: Limits,
    /// Default deny and protect entries removed by `deny.exclude` / `protect.exclude`, in the
    /// order written.
    pub exclusions: Vec<contract::verdict::ExclusionDoc>,
}

impl Policy {
    /// The embedded default policy (`default-policy.yml`).
    pub fn embedded_default() -> Result<Policy, PolicyError> {
        PolicyDraft::embedded_default()?.finish()
    }

    /// The default policy extended/tightened by a user YAML file.
    pub fn from_yaml(text: &str) -> Result<Policy, PolicyError> {
        let raw = parse(text)?;
        PolicyDraft::embedded_default()?.apply(raw)?.finish()
    }

    /// The policy in the YAML file at `path` (on top of the default), or the embedded default.
    /// The error names the file.
    pub fn load(path: Option<&std::path::Path>) -> Result<Policy, String> {
        Policy::load_beside(path, |_| ()).map(|(policy, ())| policy)
    }

    /// Like [`Policy::load`], running `beside` with the policy's limits on this thread while its
    /// pattern lists are compiled on another (the compilation is most of a policy's cost, and the
    /// limits are known before it). `beside` runs only when the file was read and validated; a
    /// policy error is reported before anything `beside` returned.
    pub fn load_beside<T>(
        path: Option<&std::path::Path>,
        beside: impl FnOnce(&Limits) -> T,
    ) -> Result<(Policy, T), String> {
        let (draft, named) = match path {
            None => (
                PolicyDraft::embedded_default(),
                "embedded default policy".to_owned(),
            ),
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .map_err(|e| format!("cannot read policy {}: {e}", path.display()))?;
                let draft =
                    parse(&text).and_then(|raw| PolicyDraft::embedded_default()?.apply(raw));
                (draft, format!("policy {}", path.display()))
            }
        };
        let draft = draft.map_err(|e| format!("{named}: {e}"))?;
        let limits = draft.limits;
        let (policy, value) = std::thread::scope(|s| {
            let compiling = s.spawn(|| draft.finish());
            let value = beside(&limits);
            (compiling.join(), value)
        });
        let policy = policy
            .map_err(|_| format!("{named}: the thread compiling its patterns failed"))?
            .map_err(|e| format!("{named}: {e}"))?;
        Ok((policy, value))
    }

    /// The first deny pattern matching `path` (case-insensitively), or None.
    pub fn denied(&self, path: &str) -> Option<&str> {
        self.deny.first_match(path).map(PatternEntry::pattern)
    }

    /// Every literal component of the deny and protect patterns (one without a glob character),
    /// such as `.github` or `CODEOWNERS`: the long names a Windows 8.3 short name in a diff is read
    /// as when the base tree does not show what it would resolve to.
    pub fn deny_literal_names(&self) -> Vec<&str> {
        let mut names = literal_components(&self.deny);
        names.extend(literal_components(&self.protect));
        names.sort_unstable();
        names.dedup();
        names
    }

    /// The first protect pattern matching `path` (case-insensitively), or None. Does not look at
    /// [`Policy::protected`]; the caller decides what a match means.
    pub fn protected_by(&self, path: &str) -> Option<&str> {
        self.protect.first_match(path).map(PatternEntry::pattern)
    }

    /// Whether `path` is a build output. Does not override [`Policy::denied`].
    pub fn is_build_output(&self, path: &str) -> bool {
        self.build_output.is_match(path)
    }
}

/// A policy being read: its lists not yet compiled.
struct PolicyDraft {
    deny: Vec<PatternEntry>,
    protect: Vec<PatternEntry>,
    protected: Protected,
    allow_symlinks: bool,
    text_encodings: TextEncodings,
    build_output: Vec<PatternEntry>,
    env_allow: Vec<String>,
    allow_executable: bool,
    allow_mode_change: bool,
    portable_paths: bool,
    allow_unprotected_secret_jobs: bool,
    readiness: crate::readiness::Settings,
    limits: Limits,
    exclusions: Vec<ExclusionDoc>,
}

impl PolicyDraft {
    /// `default-policy.yml` read over an empty policy without limits.
    fn embedded_default() -> Result<PolicyDraft, PolicyError> {
        let base = PolicyDraft {
            deny: Vec::new(),
            protect: Vec::new(),
            protected: Protected::Review,
            allow_symlinks: false,
            text_encodings: TextEncodings::Utf8,
            build_output: Vec::new(),
            env_allow: Vec::new(),
            allow_executable: false,
            allow_mode_change: false,
            portable_paths: false,
            allow_unprotected_secret_jobs: false,
            readiness: crate::readiness::Settings::default(),
            limits: Limits::UNBOUNDED,
            exclusions: Vec::new(),
        };
        base.apply(parse(DEFAULT_POLICY_YAML)?)
    }

    /// Compiles the lists.
    fn finish(self) -> Result<Policy, PolicyError> {
        Ok(Policy {
            deny: PatternList::new(self.deny)?,
            protect: PatternList::new(self.protect)?,
            protected: self.protected,
            allow_symlinks: self.allow_symlinks,
            text_encodings: self.text_encodings,
            build_output: PatternList::new(self.build_output)?,
            env_allow: self.env_allow,
            allow_executable: self.allow_executable,
            allow_mode_change: self.allow_mode_change,
            portable_paths: self.portable_paths,
            allow_unprotected_secret_jobs: self.allow_unprotected_secret_jobs,
            readiness: self.readiness,
            limits: self.limits,
            exclusions: self.exclusions,
        })
    }

    /// Validates `raw` into a policy derived from `self`: lists are extended, booleans replaced,
    /// limits lowered (never raised above `self`'s).
    fn apply(mut self, raw: RawPolicy) -> Result<PolicyDraft, PolicyError> {
        if raw.version.0 != POLICY_VERSION {
            return Err(PolicyError::UnsupportedVersion {
                found: raw.version.0,
            });
        }
        // Exclusions name entries of the list as it stands (the default's), before this file's
        // additions, so an exclusion can never remove what the same file adds.
        exclude(
            &mut self.deny,
            &raw.deny.exclude,
            ExclusionList::Deny,
            &mut self.exclusions,
        )?;
        exclude(
            &mut self.protect,
            &raw.protect.exclude,
            ExclusionList::Protect,
            &mut self.exclusions,
        )?;
        for (i, pattern) in raw.deny.add.iter().enumerate() {
            let entry = format!("deny.add[{i}]");
            self.deny
                .push(PatternEntry::new(&entry, pattern, PatternKind::Deny)?);
        }
        for (i, pattern) in raw.protect.add.iter().enumerate() {
            let entry = format!("protect.add[{i}]");
            self.protect
                .push(PatternEntry::new(&entry, pattern, PatternKind::Deny)?);
        }
        if let Some(mode) = raw.protected {
            self.protected = match mode.as_str() {
                "review" => Protected::Review,
                "block" => Protected::Block,
                "allow" => Protected::Allow,
                other => {
                    return Err(PolicyError::InvalidValue {
                        key: "protected",
                        value: other.to_owned(),
                        expected: "review, block or allow",
                    });
                }
            };
        }
        for (i, pattern) in raw.build.output.iter().enumerate() {
            let entry = format!("build.output[{i}]");
            self.build_output
                .push(PatternEntry::new(&entry, pattern, PatternKind::Exact)?);
        }
        for (i, name) in raw.build.env.iter().enumerate() {
            check_env_name(name).map_err(|reason| PolicyError::InvalidEnvName {
                entry: format!("build.env[{i}]"),
                name: name.clone(),
                reason,
            })?;
            if !self.env_allow.contains(name) {
                self.env_allow.push(name.clone());
            }
        }
        if let Some(PlainBool(yes)) = raw.allow.executable_files {
            self.allow_executable = yes;
        }
        if let Some(PlainBool(yes)) = raw.allow.mode_changes {
            self.allow_mode_change = yes;
        }
        if let Some(PlainBool(yes)) = raw.portable_paths {
            self.portable_paths = yes;
        }
        if let Some(PlainBool(yes)) = raw.symlinks.allow {
            self.allow_symlinks = yes;
        }
        if let Some(encodings) = raw.text.encodings {
            self.text_encodings = match encodings.as_str() {
                "utf-8" => TextEncodings::Utf8,
                "legacy" => TextEncodings::Legacy,
                other => {
                    return Err(PolicyError::InvalidValue {
                        key: "text.encodings",
                        value: other.to_owned(),
                        expected: "utf-8 or legacy",
                    });
                }
            };
        }
        if let Some(PlainBool(yes)) = raw.allow.unprotected_secret_jobs {
            self.allow_unprotected_secret_jobs = yes;
        }
        self.apply_readiness(raw.readiness)?;
        let (l, r) = (&mut self.limits, &raw.limits);
        if let Some(v) = lower("limits.diff-bytes", r.diff_bytes, l.max_diff_bytes)? {
            l.max_diff_bytes = v;
        }
        lower_usize("limits.files", r.files, &mut l.max_files)?;
        lower_usize("limits.path-bytes", r.path_bytes, &mut l.max_path_bytes)?;
        lower_usize(
            "limits.component-bytes",
            r.component_bytes,
            &mut l.max_component_bytes,
        )?;
        lower_usize("limits.line-bytes", r.line_bytes, &mut l.max_line_bytes)?;
        lower_usize(
            "limits.path-components",
            r.path_components,
            &mut l.max_path_components,
        )?;
        Ok(self)
    }
}

impl PolicyDraft {
    /// `readiness:`: the default token replaced, environments and acceptances appended.
    fn apply_readiness(&mut self, raw: RawReadiness) -> Result<(), PolicyError> {
        use crate::readiness::{Acceptance, DefaultToken};
        let settings = &mut self.readiness;
        if let Some(token) = raw.default_token {
            settings.default_token = match token.as_str() {
                "read" => DefaultToken::Read,
                "write" => DefaultToken::Write,
                other => {
                    return Err(PolicyError::InvalidValue {
                        key: "readiness.default-token",
                        value: other.to_owned(),
                        expected: "read or write",
                    });
                }
            };
        }
        for (i, name) in raw.protected_environments.into_iter().enumerate() {
            check_readiness_text(&name).map_err(|reason| PolicyError::InvalidReadiness {
                entry: format!("readiness.protected-environments[{i}]"),
                reason,
            })?;
            settings.protected_environments.push(name);
        }
        for (i, accept) in raw.accept.into_iter().enumerate() {
            for (key, value) in [
                ("workflow", &accept.workflow),
                ("job", &accept.job),
                ("reason", &accept.reason),
            ] {
                check_readiness_text(value).map_err(|reason| PolicyError::InvalidReadiness {
                    entry: format!("readiness.accept[{i}].{key}"),
                    reason,
                })?;
            }
            if !accept.workflow.starts_with(".github/workflows/") {
                return Err(PolicyError::InvalidReadiness {
                    entry: format!("readiness.accept[{i}].workflow"),
                    reason: "must be a path under .github/workflows/".into(),
                });
            }
            settings.accept.push(Acceptance {
                workflow: accept.workflow,
                job: accept.job,
                reason: accept.reason,
            });
        }
        Ok(())
    }
}

/// A name or reason of `readiness:`: not blank, no control character, bounded.
fn check_readiness_text(text: &str) -> Result<(), String> {
    if text.trim().is_empty() {
        return Err("must not be empty".into());
    }
    if text.chars().any(char::is_control) {
        return Err("contains a control character".into());
    }
    if text.len() > MAX_PATTERN_BYTES {
        return Err(format!("longer than {MAX_PATTERN_BYTES} bytes"));
    }
    Ok(())
}

/// Remove each pattern of `excluded` from `list`, where it must be written exactly as an entry;
/// the core deny entries cannot be removed.
fn exclude(
    list: &mut Vec<PatternEntry>,
    excluded: &[String],
    kind: ExclusionList,
    record: &mut Vec<ExclusionDoc>,
) -> Result<(), PolicyError> {
    for (i, pattern) in excluded.iter().enumerate() {
        let entry = format!("{}.exclude[{i}]", kind.name());
        if kind == ExclusionList::Deny && CORE_DENY.contains(&pattern.as_str()) {
            return Err(PolicyError::CoreExclusion {
                entry,
                pattern: pattern.clone(),
            });
        }
        if excluded[..i].contains(pattern) {
            return Err(PolicyError::DuplicateExclusion {
                entry,
                pattern: pattern.clone(),
            });
        }
        let Some(index) = list.iter().position(|p| p.pattern == *pattern) else {
            return Err(PolicyError::UnknownExclusion {
                entry,
                pattern: pattern.clone(),
                list: kind.name(),
            });
        };
        list.remove(index);
        record.push(ExclusionDoc {
            list: kind,
            pattern: pattern.clone(),
        });
    }
    Ok(())
}

fn literal_components(patterns: &[PatternEntry]) -> Vec<&str> {
    let mut names: Vec<&str> = patterns
        .iter()
        .flat_map(|p| p.pattern.split('/'))
        .filter(|c| !c.contains(['*', '?', '[', ']', '{', '}', '\\']))
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// `Some(value)` if `value` is a valid lowering of `current`: at least 1 and at most `current`.
fn lower(
    key: &'static str,
    value: Option<PlainInt>,
    current: u64,
) -> Result<Option<u64>, PolicyError> {
    match value.map(|PlainInt(v)| v) {
        None => Ok(None),
        Some(0) => Err(PolicyError::ZeroLimit { key }),
        Some(value) if value > current => Err(PolicyError::LimitAboveDefault {
            key,
            value,
            max: current,
        }),
        Some(value) => Ok(Some(value)),
    }
}

fn lower_usize(
    key: &'static str,
    value: Option<PlainInt>,
    current: &mut usize,
) -> Result<(), PolicyError> {
    let ceiling = u64::try_from(*current).unwrap_or(u64::MAX);
    if let Some(v) = lower(key, value, ceiling)? {
        // v <= ceiling, which came from a usize, so this conversion cannot fail.
        *current = usize::try_from(v).unwrap_or(*current);
    }
    Ok(())
}

/// Environment names that carry credentials are refused even from a trusted policy file: the build
/// runs patch code, and nothing it can read may be a secret.
fn check_env_name(name: &str) -> Result<(), String> {
    let mut bytes = name.bytes();
    let valid_first = bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_');
    if !valid_first || !bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return Err("not a variable name ([A-Za-z_][A-Za-z0-9_]*)".into());
    }
    let upper = name.to_ascii_uppercase();
    if upper.starts_with("ACTIONS_") || upper.starts_with("RUNNER_") {
        return Err("runner-internal variables (ACTIONS_*, RUNNER_*) may carry tokens".into());
    }
    const CREDENTIAL_WORDS: &[&str] = &["TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL"];
    if let Some(word) = CREDENTIAL_WORDS.iter().find(|w| upper.contains(*w)) {
        return Err(format!("looks like a credential (contains {word})"));
    }
    Ok(())
}

/// The declared scope of one task: every touched path must match one of these globs.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    globs: PatternList,
}

impl Scope {
    /// Declared scope globs (case-sensitive). Errors on an invalid or unsafe glob (empty, leading
    /// `/`, `..` component, backslash other than as an escape, ...), naming it as `scope[i]`.
    pub fn new(globs: &[String]) -> Result<Scope, PolicyError> {
        let globs = globs
            .iter()
            .enumerate()
            .map(|(i, g)| {
                let entry = format!("scope[{i}]");
                if has_top_level_comma(g) {
                    return Err(PolicyError::InvalidGlob {
                        entry,
                        pattern: g.clone(),
                        reason: "holds a `,` outside `{}`, so it is one glob that matches nothing it seems to list: pass one --scope per glob (`--scope 'a/**' --scope 'b/**'`); the workflow's declared_scope is split the same way, on newlines and on commas outside `{}`".into(),
                    });
                }
                PatternEntry::new(&entry, g, PatternKind::Exact)
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Scope {
            globs: PatternList::new(globs)?,
        })
    }

    /// Whether no glob was declared (the checker then rejects with `no-scope`).
    pub fn is_empty(&self) -> bool {
        self.globs.is_empty()
    }

    /// The globs as written.
    pub fn globs(&self) -> Vec<String> {
        self.globs.iter().map(|p| p.pattern.clone()).collect()
    }

    /// The first glob matching `path`, or None.
    pub fn matching(&self, path: &str) -> Option<&str> {
        self.globs.first_match(path).map(PatternEntry::pattern)
    }

    /// The indices of the globs matching `path`, ascending.
    pub fn matching_globs(&self, path: &str) -> Vec<usize> {
        self.globs.matching_indices(path)
    }

    /// For a path no glob matches: a hint when a glob looks like a mistake for one that would,
    /// a directory named without `/**` (`crates` for `crates/**`). Empty when there is none.
    pub fn hint_for(&self, path: &str) -> String {
        let mistaken = self.globs.iter().find(|g| {
            !g.pattern.contains(['*', '?', '[', '{', '\\'])
                && path
                    .strip_prefix(g.pattern.as_str())
                    .is_some_and(|rest| rest.starts_with('/'))
        });
        match mistaken {
            Some(g) => format!(
                " (`{0}` matches only the path `{0}` itself; for everything beneath it declare `{0}/**`)",
                g.pattern
            ),
            None => String::new(),
        }
    }
}

/// The characters of a glob, each with whether a backslash escaped it (the backslash itself is
/// not yielded).
fn glob_chars(glob: &str) -> impl Iterator<Item = (char, bool)> + '_ {
    let mut chars = glob.chars();
    std::iter::from_fn(move || match chars.next()? {
        '\\' => chars.next().map(|c| (c, true)),
        c => Some((c, false)),
    })
}

/// Whether `glob` holds a `,` outside `{}` (and not escaped): a list of globs passed as one.
fn has_top_level_comma(glob: &str) -> bool {
    let mut depth = 0usize;
    for (c, escaped) in glob_chars(glob) {
        match c {
            _ if escaped => {}
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => return true,
            _ => {}
        }
    }
    false
}

/// Why a policy file or a scope was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// The policy file is larger than [`MAX_POLICY_BYTES`].
    #[error("policy file is {bytes} bytes; the maximum is {max}")]
    TooLarge { bytes: usize, max: usize },
    /// YAML syntax, an unknown or duplicate key, a wrong type, a tag, a merge key, or an exceeded
    /// parse budget.
    #[error("policy YAML{}: {message}", location_suffix(*line, *column))]
    Yaml {
        /// 1-based; 0 when unknown.
        line: u64,
        /// 1-based; 0 when unknown.
        column: u64,
        message: String,
    },
    #[error("version: unsupported policy version {found} (expected {POLICY_VERSION})")]
    UnsupportedVersion { found: u64 },
    /// A glob that does not compile or is unsafe; `entry` is e.g. `deny.add[3]` or `scope[0]`.
    #[error("{entry}: invalid glob `{}`: {reason}", crate::escape::neutralize(.pattern))]
    InvalidGlob {
        entry: String,
        pattern: String,
        reason: String,
    },
    #[error("{key}: must be at least 1")]
    ZeroLimit { key: &'static str },
    #[error("{key}: {value} exceeds the default {max}; a policy file can only lower limits")]
    LimitAboveDefault {
        key: &'static str,
        value: u64,
        max: u64,
    },
    #[error("{key}: `{}` is not one of {expected}", crate::escape::neutralize(.value))]
    InvalidValue {
        key: &'static str,
        value: String,
        expected: &'static str,
    },
    #[error("{entry}: {reason}")]
    InvalidReadiness { entry: String, reason: String },
    /// `deny.exclude` / `protect.exclude` names a pattern that is no entry of the default list.
    #[error(
        "{entry}: `{}` is not an entry of the default {list} list; write it exactly as the default does",
        crate::escape::neutralize(.pattern)
    )]
    UnknownExclusion {
        entry: String,
        pattern: String,
        list: &'static str,
    },
    /// `deny.exclude` names an entry of [`CORE_DENY`].
    #[error(
        "{entry}: `{}` is the trust-control core (.github/**, **/CODEOWNERS, **/.gitmodules) and cannot be excluded",
        crate::escape::neutralize(.pattern)
    )]
    CoreExclusion { entry: String, pattern: String },
    #[error("{entry}: `{}` is excluded twice", crate::escape::neutralize(.pattern))]
    DuplicateExclusion { entry: String, pattern: String },
    #[error("{entry}: environment variable {name:?} refused: {reason}")]
    InvalidEnvName {
        entry: String,
        name: String,
        reason: String,
    },
}

fn location_suffix(line: u64, column: u64) -> String {
    if line == 0 {
        String::new()
    } else {
        format!(" line {line} column {column}")
    }
}

// ---- raw, as deserialized ----

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawPolicy {
    version: PlainInt,
    #[serde(default)]
    deny: RawDeny,
    #[serde(default)]
    allow: RawAllow,
    #[serde(default)]
    limits: RawLimits,
    #[serde(default)]
    build: RawBuild,
    portable_paths: Option<PlainBool>,
    #[serde(default)]
    protect: RawDeny,
    protected: Option<String>,
    #[serde(default)]
    readiness: RawReadiness,
    #[serde(default)]
    symlinks: RawSymlinks,
    #[serde(default)]
    text: RawText,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawSymlinks {
    allow: Option<PlainBool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawText {
    encodings: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawReadiness {
    default_token: Option<String>,
    #[serde(default)]
    protected_environments: Vec<String>,
    #[serde(default)]
    accept: Vec<RawAccept>,
}

/// One `readiness.accept` entry: every key required.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAccept {
    workflow: String,
    job: String,
    reason: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawDeny {
    #[serde(default)]
    add: Vec<String>,
    #[serde(default)]
    exclude: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawAllow {
    executable_files: Option<PlainBool>,
    mode_changes: Option<PlainBool>,
    unprotected_secret_jobs: Option<PlainBool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawLimits {
    diff_bytes: Option<PlainInt>,
    files: Option<PlainInt>,
    path_bytes: Option<PlainInt>,
    component_bytes: Option<PlainInt>,
    line_bytes: Option<PlainInt>,
    path_components: Option<PlainInt>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawBuild {
    #[serde(default)]
    output: Vec<String>,
    #[serde(default)]
    env: Vec<String>,
}

/// A non-negative integer written as a YAML integer: `"1"` (a string) is a type error, which a
/// plain `u64` field would silently accept.
#[derive(Debug, Clone, Copy)]
struct PlainInt(u64);

impl<'de> Deserialize<'de> for PlainInt {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = PlainInt;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an unquoted non-negative integer")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<PlainInt, E> {
                Ok(PlainInt(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<PlainInt, E> {
                u64::try_from(v)
                    .map(PlainInt)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Signed(v), &self))
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

/// `true` or `false` written as a YAML boolean, not as a string.
#[derive(Debug, Clone, Copy)]
struct PlainBool(bool);

impl<'de> Deserialize<'de> for PlainBool {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = PlainBool;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("unquoted true or false")
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<PlainBool, E> {
                Ok(PlainBool(v))
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

fn parse(text: &str) -> Result<RawPolicy, PolicyError> {
    if text.len() > MAX_POLICY_BYTES {
        return Err(PolicyError::TooLarge {
            bytes: text.len(),
            max: MAX_POLICY_BYTES,
        });
    }
    // A policy needs no aliases, tags or merge keys; the budget is far below anything that could
    // hurt yet far above any real policy.
    let mut alias_limits = serde_saphyr::options::AliasLimits::default();
    alias_limits.max_total_replayed_events = 10_000;
    alias_limits.max_replay_stack_depth = 8;
    let options = serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_reader_input_bytes: Some(MAX_POLICY_BYTES),
            max_events: 200_000,
            max_aliases: 100,
            max_anchors: 100,
            max_depth: 16,
            max_documents: 1,
            max_nodes: 100_000,
            max_total_scalar_bytes: MAX_POLICY_BYTES,
            max_merge_keys: 0,
        },
        alias_limits: alias_limits,
        duplicate_keys: serde_saphyr::DuplicateKeyPolicy::Error,
        merge_keys: serde_saphyr::MergeKeyPolicy::Error,
        strict_booleans: true,
        reject_unsupported_tags: true,
        reject_tagged_field_names: true,
        with_snippet: false,
    };
    serde_saphyr::from_str_with_options::<RawPolicy>(text, options).map_err(|e| {
        let (line, column) = e.location().map_or((0, 0), |l| (l.line(), l.column()));
        let message = e.without_snippet().to_string();
        // The location is carried separately; drop the copy serde-saphyr appends.
        let suffix = format!(" at line {line}, column {column}");
        let message = message.strip_suffix(&suffix).unwrap_or(&message).to_owned();
        PolicyError::Yaml {
            line,
            column,
            message,
        }
    })
}
