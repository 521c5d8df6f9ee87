//! The guard's verdict as a document: `agent-team-apply/guard-verdict/v1`, written by `guard check`
//! and `guard apply`, read by `guard verify-tree`, `guard run`, `report` and the gate.
//!
//! ```json
//! {"schema": "agent-team-apply/guard-verdict/v1", "verdict": "accept",
//!  "diff_sha256": "<64 hex>", "mode": "git-cross-checked", "scope": ["src/**"],
//!  "files": [{"status": "modified", "old_path": "src/a.rs", "new_path": "src/a.rs",
//!             "old_mode": "100644", "new_mode": "100644", "line": 1}],
//!  "violations": [{"rule": "denied-path", "path": ".github/x.yml", "old_path": null, "line": 7,
//!                  "message": "...", "policy_entry": "deny: .github/**",
//!                  "docs": "README.md#rule-denied-path"}]}
//! ```
//!
//! Every field is typed and checked when the document is read ([`VerdictDoc::parse`]): the schema,
//! the verdict word, the mode, the hash, the statuses, the modes (six octal digits, one of git's),
//! the rule ids, and the invariants between them. Paths are exact ([`RepoPath`]); messages are
//! prose for people, in which a path appears in the guard's display form.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::ids::Sha256Hex;
use crate::repo_path::RepoPath;
use crate::rules::RuleId;

crate::schema_marker!(
    /// `agent-team-apply/guard-verdict/v1`.
    VerdictSchema,
    "agent-team-apply/guard-verdict/v1"
);

pub const SCHEMA: &str = VerdictSchema::ID;

/// Accept or reject.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VerdictWord {
    Accept,
    Reject,
}

impl VerdictWord {
    pub fn name(self) -> &'static str {
        match self {
            VerdictWord::Accept => "accept",
            VerdictWord::Reject => "reject",
        }
    }
}

impl fmt::Display for VerdictWord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How the verdict was reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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

impl CheckMode {
    /// The stable name in the document.
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
                "stopped before git's reading (--repo was given, but the diff was rejected by its \
                 hash, size, form or path limits first)"
            }
            CheckMode::GitCrossChecked => "git-cross-checked",
        }
    }
}

impl fmt::Display for CheckMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a file patch does to its path(s).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeKind {
    Added,
    Deleted,
    Modified,
    Renamed,
    Copied,
}

impl ChangeKind {
    /// The one-letter code `git diff --raw` uses.
    pub fn letter(self) -> char {
        match self {
            ChangeKind::Added => 'A',
            ChangeKind::Deleted => 'D',
            ChangeKind::Modified => 'M',
            ChangeKind::Renamed => 'R',
            ChangeKind::Copied => 'C',
        }
    }

    /// The past participle, for prose (`added`, `renamed`).
    pub fn verb(self) -> &'static str {
        match self {
            ChangeKind::Added => "added",
            ChangeKind::Deleted => "deleted",
            ChangeKind::Modified => "modified",
            ChangeKind::Renamed => "renamed",
            ChangeKind::Copied => "copied",
        }
    }
}

/// A git file mode: written as six octal digits (`"100644"`), one of the modes git records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileMode(u32);

impl FileMode {
    pub const REGULAR: FileMode = FileMode(0o100644);
    pub const EXECUTABLE: FileMode = FileMode(0o100755);
    pub const SYMLINK: FileMode = FileMode(0o120000);
    pub const GITLINK: FileMode = FileMode(0o160000);
    pub const TREE: FileMode = FileMode(0o040000);

    /// The mode, when it is one git records.
    pub fn new(bits: u32) -> Option<FileMode> {
        [
            FileMode::REGULAR,
            FileMode::EXECUTABLE,
            FileMode::SYMLINK,
            FileMode::GITLINK,
            FileMode::TREE,
        ]
        .into_iter()
        .find(|m| m.0 == bits)
    }

    pub fn bits(self) -> u32 {
        self.0
    }

    /// The object type bits (`0o170000`): file, symlink, gitlink or tree.
    pub fn kind_bits(self) -> u32 {
        self.0 & 0o170000
    }

    fn parse(text: &str) -> Option<FileMode> {
        (text.len() == 6 && text.bytes().all(|b| (b'0'..=b'7').contains(&b)))
            .then(|| u32::from_str_radix(text, 8).ok())
            .flatten()
            .and_then(FileMode::new)
    }
}

impl fmt::Display for FileMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:06o}", self.0)
    }
}

impl Serialize for FileMode {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for FileMode {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<FileMode, D::Error> {
        let text = String::deserialize(deserializer)?;
        FileMode::parse(&text).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "file mode {:?} is not one of git's (six octal digits: 100644, 100755, 120000, \
                 160000, 040000)",
                crate::escape::neutralize(&text)
            ))
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerdictDoc {
    pub schema: VerdictSchema,
    pub verdict: VerdictWord,
    pub diff_sha256: Sha256Hex,
    pub mode: CheckMode,
    pub scope: Vec<String>,
    pub files: Vec<FileDoc>,
    pub violations: Vec<ViolationDoc>,
    /// Protected paths the diff touches, for a human's review (rule `protected-path`, policy
    /// `protected: review`); they do not reject.
    #[serde(default)]
    pub protected: Vec<ViolationDoc>,
    /// Declared scope globs that no path of the diff matches (often a mistake: `crates` for
    /// `crates/**`).
    #[serde(default)]
    pub unmatched_scope: Vec<String>,
    /// Default deny or protect entries the policy excluded (`deny.exclude`, `protect.exclude`),
    /// shown with every verdict so that a loosening is never silent.
    #[serde(default)]
    pub exclusions: Vec<ExclusionDoc>,
}

/// Which list of the default policy an exclusion removes an entry from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExclusionList {
    Deny,
    Protect,
}

impl ExclusionList {
    /// The policy key: `deny` or `protect`.
    pub fn name(self) -> &'static str {
        match self {
            ExclusionList::Deny => "deny",
            ExclusionList::Protect => "protect",
        }
    }
}

impl fmt::Display for ExclusionList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One excluded default entry: the list and the pattern exactly as the default writes it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExclusionDoc {
    pub list: ExclusionList,
    pub pattern: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileDoc {
    pub status: ChangeKind,
    pub old_path: Option<RepoPath>,
    pub new_path: Option<RepoPath>,
    pub old_mode: Option<FileMode>,
    pub new_mode: Option<FileMode>,
    /// 1-based line of the `diff --git` header in the diff.
    pub line: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ViolationDoc {
    pub rule: RuleId,
    pub path: Option<RepoPath>,
    pub old_path: Option<RepoPath>,
    pub line: Option<usize>,
    pub message: String,
    pub policy_entry: Option<String>,
    /// What the agent can change to clear it: this path's scope entry, or that nothing admits a
    /// denied path, or the rule's general remedy ([`RuleId::remedy`]). Empty in a document of a
    /// guard that wrote none.
    #[serde(default)]
    pub hint: String,
    /// The rule's documentation anchor (informative: renderers link from the registry).
    pub docs: String,
}

/// Why a verdict document was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum VerdictError {
    #[error("the verdict is not a valid {SCHEMA} document: {0}")]
    Json(#[from] serde_json::Error),
    #[error("the verdict is \"accept\" but lists {count} violation(s)")]
    AcceptWithViolations { count: usize },
    #[error("the verdict is \"accept\" but lists no file")]
    AcceptWithoutFiles,
    #[error("the verdict is \"reject\" but lists no violation")]
    RejectWithoutViolations,
    #[error("the verdict is \"accept\" but its mode is \"stopped-before-git\"")]
    AcceptStoppedEarly,
}

impl ViolationDoc {
    /// The finding's own hint, or its rule's general remedy when the document carries none.
    pub fn hint_or_remedy(&self) -> &str {
        if self.hint.is_empty() {
            self.rule.remedy()
        } else {
            &self.hint
        }
    }
}

impl VerdictDoc {
    /// Parse a document and check the invariants between its fields: an acceptance lists files
    /// and no violation; a rejection lists at least one violation.
    pub fn parse(json: &str) -> Result<VerdictDoc, VerdictError> {
        let doc: VerdictDoc = serde_json::from_str(json)?;
        match doc.verdict {
            VerdictWord::Accept if !doc.violations.is_empty() => {
                Err(VerdictError::AcceptWithViolations {
                    count: doc.violations.len(),
                })
            }
            VerdictWord::Accept if doc.files.is_empty() => Err(VerdictError::AcceptWithoutFiles),
            VerdictWord::Accept if doc.mode == CheckMode::StoppedBeforeGit => {
                Err(VerdictError::AcceptStoppedEarly)
            }
            VerdictWord::Reject if doc.violations.is_empty() => {
                Err(VerdictError::RejectWithoutViolations)
            }
            _ => Ok(doc),
        }
    }

    pub fn accepted(&self) -> bool {
        self.verdict == VerdictWord::Accept
    }

    /// Pretty JSON with a trailing newline ([`crate::doc_json`]). An error, never an empty
    /// document.
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        crate::doc_json::to_string_pretty(self)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    const SHA: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

    fn accept() -> serde_json::Value {
        serde_json::json!({
            "schema": SCHEMA, "verdict": "accept", "diff_sha256": SHA,
            "mode": "git-cross-checked", "scope": ["**"],
            "files": [{"status": "modified", "old_path": "a", "new_path": "a",
                       "old_mode": "100644", "new_mode": "100755", "line": 1}],
            "violations": []
        })
    }

    #[test]
    fn a_written_document_reads_back() {
        let doc = VerdictDoc::parse(&accept().to_string()).unwrap();
        assert!(doc.accepted());
        assert_eq!(doc.files[0].new_mode, Some(FileMode::EXECUTABLE));
        assert_eq!(VerdictDoc::parse(&doc.to_json().unwrap()).unwrap(), doc);
    }

    #[test]
    fn every_field_is_checked_when_read() {
        let cases: &[(&str, serde_json::Value)] = &[
            ("/schema", "agent-team-apply/guard-verdict/v2".into()),
            ("/verdict", "ACCEPT".into()),
            ("/mode", "git".into()),
            ("/diff_sha256", SHA.to_ascii_uppercase().into()),
            ("/files/0/status", "moved".into()),
            ("/files/0/new_mode", "100664".into()),
            ("/files/0/new_mode", "0100644".into()),
            ("/files/0/new_path", serde_json::json!({"bytes_hex": "61"})),
        ];
        for (pointer, value) in cases {
            let mut doc = accept();
            *doc.pointer_mut(pointer).unwrap() = value.clone();
            assert!(
                VerdictDoc::parse(&doc.to_string()).is_err(),
                "{pointer} = {value}"
            );
        }
        let mut doc = accept();
        doc["violations"] = serde_json::json!([{"rule": "no-such-rule", "path": null,
            "old_path": null, "line": null, "message": "", "policy_entry": null, "docs": ""}]);
        assert!(VerdictDoc::parse(&doc.to_string()).is_err());
    }

    #[test]
    fn invariants_between_fields() {
        let violation = serde_json::json!([{"rule": "denied-path", "path": "a",
            "old_path": null, "line": 1, "message": "m", "policy_entry": null, "docs": ""}]);
        let mut doc = accept();
        doc["violations"] = violation.clone();
        assert!(matches!(
            VerdictDoc::parse(&doc.to_string()),
            Err(VerdictError::AcceptWithViolations { count: 1 })
        ));
        let mut doc = accept();
        doc["files"] = serde_json::json!([]);
        assert!(matches!(
            VerdictDoc::parse(&doc.to_string()),
            Err(VerdictError::AcceptWithoutFiles)
        ));
        let mut doc = accept();
        doc["verdict"] = "reject".into();
        assert!(matches!(
            VerdictDoc::parse(&doc.to_string()),
            Err(VerdictError::RejectWithoutViolations)
        ));
        doc["violations"] = violation;
        assert!(VerdictDoc::parse(&doc.to_string()).is_ok());
    }
}
