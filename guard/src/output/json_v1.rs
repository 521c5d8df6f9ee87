//! The versioned machine form of a verdict, kept apart from the internal types so that they can
//! change without breaking consumers (the `report` renderers, the workflow). Paths are exact
//! ([`RepoPath`]: a string holding the path's bytes, or `{"bytes_hex": ..}` for bytes that are not
//! UTF-8); renderers escape them for their sink. Messages are prose for people: a path inside a
//! message is in the guard's display form, the exact value is in `path`/`old_path`.

use serde::{Deserialize, Serialize};

use crate::repo_path::RepoPath;
use crate::verdict::{CheckMode, Status, Verdict};

pub const SCHEMA: &str = "agent-team-apply/guard-verdict/v1";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerdictDoc {
    pub schema: String,
    /// `accept` or `reject`.
    pub verdict: String,
    pub diff_sha256: String,
    /// `parser-only` or `git-cross-checked`.
    pub mode: String,
    pub scope: Vec<String>,
    pub files: Vec<FileDoc>,
    pub violations: Vec<ViolationDoc>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileDoc {
    pub status: Status,
    pub old_path: Option<RepoPath>,
    pub new_path: Option<RepoPath>,
    /// Octal string as git writes it, e.g. `"100644"`.
    pub old_mode: Option<String>,
    pub new_mode: Option<String>,
    pub line: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ViolationDoc {
    /// Stable rule id, e.g. `denied-path`.
    pub rule: String,
    pub path: Option<RepoPath>,
    pub old_path: Option<RepoPath>,
    pub line: Option<usize>,
    pub message: String,
    pub policy_entry: Option<String>,
    /// Anchor of the rule's documentation.
    pub docs: String,
}

impl VerdictDoc {
    pub fn from_verdict(verdict: &Verdict) -> Self {
        VerdictDoc {
            schema: SCHEMA.to_string(),
            verdict: if verdict.accepted() {
                "accept"
            } else {
                "reject"
            }
            .to_string(),
            diff_sha256: verdict.diff_sha256.clone(),
            mode: match verdict.mode {
                CheckMode::ParserOnly => "parser-only",
                CheckMode::GitCrossChecked => "git-cross-checked",
            }
            .to_string(),
            scope: verdict.scope.clone(),
            files: verdict
                .files
                .iter()
                .map(|f| FileDoc {
                    status: f.status,
                    old_path: f.old_path.clone(),
                    new_path: f.new_path.clone(),
                    old_mode: f.old_mode.map(|m| format!("{m:06o}")),
                    new_mode: f.new_mode.map(|m| format!("{m:06o}")),
                    line: f.line,
                })
                .collect(),
            violations: verdict
                .violations
                .iter()
                .map(|v| ViolationDoc {
                    rule: v.rule.name().to_string(),
                    path: v.path.clone(),
                    old_path: v.old_path.clone(),
                    line: v.line,
                    message: v.message.clone(),
                    policy_entry: v.policy_entry.clone(),
                    docs: v.rule.rule().anchor(),
                })
                .collect(),
        }
    }

    pub fn accepted(&self) -> bool {
        self.verdict == "accept"
    }

    /// Serialize as pretty JSON with a trailing newline ([`crate::doc_json`]). An error, never an
    /// empty document.
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        crate::doc_json::to_string_pretty(self)
    }
}
