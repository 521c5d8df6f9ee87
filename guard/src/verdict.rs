//! The guard's decision about a candidate diff: the files it touches and the violations found.

pub use contract::verdict::{ChangeKind, CheckMode};

use crate::repo_path::RepoPath;
use crate::rules::RuleId;

/// One touched file as the verdict reports it. Paths are exact bytes (valid UTF-8 whenever the
/// verdict accepts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEntry {
    pub status: ChangeKind,
    pub old_path: Option<RepoPath>,
    pub new_path: Option<RepoPath>,
    /// Octal mode as git writes it (`100644`), when known.
    pub old_mode: Option<u32>,
    pub new_mode: Option<u32>,
    /// 1-based line of the `diff --git` header in the diff.
    pub line: usize,
}

impl FileEntry {
    /// Every path this entry names, old side first.
    pub fn paths(&self) -> impl Iterator<Item = &RepoPath> {
        self.old_path.iter().chain(self.new_path.iter())
    }
}

/// One reason to reject.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub rule: RuleId,
    /// The offending path, exact (the new side of a rename when both are named).
    pub path: Option<RepoPath>,
    /// The other side of a rename or copy, when there is one.
    pub old_path: Option<RepoPath>,
    /// 1-based line in the diff the finding comes from.
    pub line: Option<usize>,
    pub message: String,
    /// The policy entry that decided it (a deny glob, a limit name), when one did.
    pub policy_entry: Option<String>,
    /// What the agent can change to clear it, for this path; None: the rule's general remedy.
    pub hint: Option<String>,
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
            hint: None,
        }
    }

    pub fn at_line(mut self, line: usize) -> Self {
        self.line = Some(line);
        self
    }

    pub fn with_path(mut self, path: impl Into<RepoPath>) -> Self {
        self.path = Some(path.into());
        self
    }

    pub fn with_old_path(mut self, path: impl Into<RepoPath>) -> Self {
        self.old_path = Some(path.into());
        self
    }

    pub fn with_entry(mut self, entry: impl Into<String>) -> Self {
        self.policy_entry = Some(entry.into());
        self
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

/// The decision.
#[derive(Debug, Clone)]
pub struct Verdict {
    pub diff_sha256: contract::ids::Sha256Hex,
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
    /// The default deny and protect entries the policy excluded.
    pub exclusions: Vec<contract::verdict::ExclusionDoc>,
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
