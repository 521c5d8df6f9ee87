//! The versioned machine form of a verdict, kept apart from the internal types so that they can
//! change without breaking consumers (the `report` renderers, the workflow). Paths are the escaped
//! display form (`escape::display_bytes`), which equals the real path for every accepted diff.

use serde::{Deserialize, Serialize};

use crate::verdict::{Status, Verdict};

pub const SCHEMA: &str = "agent-team-apply/guard-verdict/v1";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerdictDoc {
    pub schema: String,
    /// `accept` or `reject`.
    pub verdict: String,
    pub diff_sha256: String,
    /// `parser-only`, `stopped-before-git` or `git-cross-checked`.
    pub mode: String,
    pub scope: Vec<String>,
    pub files: Vec<FileDoc>,
    pub violations: Vec<ViolationDoc>,
    /// Protected paths the diff touches, for a human's review (rule `protected-path`, policy
    /// `protected: review`); they do not reject. Absent in documents of earlier versions.
    #[serde(default)]
    pub protected: Vec<ViolationDoc>,
    /// Declared scope globs that no path of the diff matches.
    #[serde(default)]
    pub unmatched_scope: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileDoc {
    pub status: Status,
    pub old_path: Option<String>,
    pub new_path: Option<String>,
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
    pub path: Option<String>,
    pub old_path: Option<String>,
    pub line: Option<usize>,
    pub message: String,
    pub policy_entry: Option<String>,
    /// Anchor of the rule's documentation.
    pub docs: String,
}

impl From<&crate::verdict::Violation> for ViolationDoc {
    fn from(v: &crate::verdict::Violation) -> Self {
        ViolationDoc {
            rule: v.rule.name().to_string(),
            path: v.path.clone(),
            old_path: v.old_path.clone(),
            line: v.line,
            message: v.message.clone(),
            policy_entry: v.policy_entry.clone(),
            docs: v.rule.rule().anchor(),
        }
    }
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
            mode: verdict.mode.name().to_string(),
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
            violations: verdict.violations.iter().map(ViolationDoc::from).collect(),
            protected: verdict.protected.iter().map(ViolationDoc::from).collect(),
            unmatched_scope: verdict.unmatched_scope.clone(),
        }
    }

    pub fn accepted(&self) -> bool {
        self.verdict == "accept"
    }

    /// Serialize as pretty JSON with a trailing newline.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }
}
