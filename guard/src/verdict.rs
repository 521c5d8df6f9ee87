//! The guard's decision about a candidate diff: the files it touches and the violations found.

use crate::rules::RuleId;

/// What a file patch does to its path(s).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Added,
    Deleted,
    Modified,
    Renamed,
    Copied,
}

impl Status {
    /// The one-letter code `git diff --raw` uses.
    pub fn letter(self) -> char {
        match self {
            Status::Added => 'A',
            Status::Deleted => 'D',
            Status::Modified => 'M',
            Status::Renamed => 'R',
            Status::Copied => 'C',
        }
    }
}

/// One touched file as the verdict reports it. Paths are valid UTF-8 here only when the verdict
/// accepts; in a rejecting verdict they are the escaped display form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEntry {
    pub status: Status,
    pub old_path: Option<String>,
    pub new_path: Option<String>,
    /// Octal mode as git writes it (`100644`), when known.
    pub old_mode: Option<u32>,
    pub new_mode: Option<u32>,
    /// 1-based line of the `diff --git` header in the diff.
    pub line: usize,
}

impl FileEntry {
    /// Every path this entry names, old side first.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.old_path
            .iter()
            .chain(self.new_path.iter())
            .map(String::as_str)
    }
}

/// One reason to reject.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub rule: RuleId,
    /// The offending path (the new side of a rename when both are named).
    pub path: Option<String>,
    /// The other side of a rename or copy, when there is one.
    pub old_path: Option<String>,
    /// 1-based line in the diff the finding comes from.
    pub line: Option<usize>,
    pub message: String,
    /// The policy entry that decided it (a deny glob, a limit name), when one did.
    pub policy_entry: Option<String>,
}

impl Violation {
    pub fn new(rule: RuleId, message: impl Into<String>) -> Self {
        Violation {
            rule,
            path: None,
            old_path: None,
            line: None,
            message: message.into(),
            policy_entry: None,
        }
    }

    pub fn at_line(mut self, line: usize) -> Self {
        self.line = Some(line);
        self
    }

    pub fn with_path(mut self, path: impl Into<String>) -> Self {
        self.path = Some(path.into());
        self
    }

    pub fn with_old_path(mut self, path: impl Into<String>) -> Self {
        self.old_path = Some(path.into());
        self
    }

    pub fn with_entry(mut self, entry: impl Into<String>) -> Self {
        self.policy_entry = Some(entry.into());
        self
    }
}

impl CheckMode {
    /// The stable name in the JSON verdict.
    pub fn name(self) -> &'static str {
        match self {
            CheckMode::ParserOnly => "parser-only",
            CheckMode::StoppedBeforeGit => "stopped-before-git",
            CheckMode::GitCrossChecked => "git-cross-checked",
        }
    }

    /// What the mode means, for a reader.
    pub fn explanation(self) -> &'static str {
        match self {
            CheckMode::ParserOnly => "parser-only (no --repo: git's reading was not cross-checked)",
            CheckMode::StoppedBeforeGit => {
                "stopped before git's reading (--repo was given, but the diff was rejected by its hash, size, form or path limits first)"
            }
            CheckMode::GitCrossChecked => "git-cross-checked",
        }
    }
}

/// How the verdict was reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CheckMode {
    /// Only the guard's own parse; no base tree was consulted (no `--repo`).
    ParserOnly,
    /// A base tree was given, but the diff was rejected before git's reading was compared (its
    /// hash, size, form or path limits), so nothing was cross-checked.
    StoppedBeforeGit,
    /// The guard's parse agreed with git applying the diff to a throwaway index of the base.
    GitCrossChecked,
}

/// The decision.
#[derive(Debug, Clone)]
pub struct Verdict {
    pub diff_sha256: String,
    pub mode: CheckMode,
    pub files: Vec<FileEntry>,
    pub violations: Vec<Violation>,
    /// The declared scope the verdict was checked against.
    pub scope: Vec<String>,
    /// Declared scope globs that no path of the diff matches (often a mistake: `crates` for
    /// `crates/**`).
    pub unmatched_scope: Vec<String>,
    /// Protected paths the diff touches, for a human to review (`protected: review`): findings of
    /// rule `protected-path` that do not reject. Under `protected: block` they are violations.
    pub protected: Vec<Violation>,
}

impl Verdict {
    /// Accept only when no violation was found and at least one file is patched.
    pub fn accepted(&self) -> bool {
        self.violations.is_empty() && !self.files.is_empty()
    }

    /// Whether some violation came from `rule`.
    pub fn fired(&self, rule: RuleId) -> bool {
        self.violations.iter().any(|v| v.rule == rule)
    }
}
