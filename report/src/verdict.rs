//! Reading a guard verdict (JSON v1, [`guard::output::json_v1::VerdictDoc`]) for rendering, and
//! the rule documentation links the renderers print.
//!
//! The renderers are non-authoritative, but they still fail closed on a document they do not
//! understand: an unknown `schema`, verdict word or mode, a malformed hash, or an `accept` that
//! carries violations is an error, not something to render.

use guard::output::json_v1::{SCHEMA, VerdictDoc, ViolationDoc};
use guard::rules::{RULES, Rule};

/// Why a verdict document was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum VerdictError {
    #[error("verdict is not valid JSON v1: {0}")]
    Json(#[from] serde_json::Error),
    #[error("unknown verdict schema {found:?} (expected {SCHEMA:?})")]
    Schema { found: String },
    #[error("unknown verdict {found:?} (expected \"accept\" or \"reject\")")]
    Verdict { found: String },
    #[error("unknown mode {found:?} (expected \"parser-only\" or \"git-cross-checked\")")]
    Mode { found: String },
    #[error("diff_sha256 {found:?} is not a 64-digit hex SHA-256")]
    DiffSha256 { found: String },
    #[error("verdict is \"accept\" but lists {count} violation(s)")]
    AcceptWithViolations { count: usize },
}

/// Parse and check a verdict document.
pub fn parse(json: &str) -> Result<VerdictDoc, VerdictError> {
    let doc: VerdictDoc = serde_json::from_str(json)?;
    if doc.schema != SCHEMA {
        return Err(VerdictError::Schema { found: doc.schema });
    }
    if doc.verdict != "accept" && doc.verdict != "reject" {
        return Err(VerdictError::Verdict { found: doc.verdict });
    }
    if doc.mode != "parser-only" && doc.mode != "git-cross-checked" {
        return Err(VerdictError::Mode { found: doc.mode });
    }
    if guard::hash::parse_sha256(&doc.diff_sha256).is_none() {
        return Err(VerdictError::DiffSha256 {
            found: doc.diff_sha256,
        });
    }
    if doc.accepted() && !doc.violations.is_empty() {
        return Err(VerdictError::AcceptWithViolations {
            count: doc.violations.len(),
        });
    }
    Ok(doc)
}

/// The registered rule with this id, if any. Renderers build rule links from the registry only,
/// never from the document's `docs` field, so a forged document cannot plant a link.
/// A violation's message with its evidence (old path, diff line, policy entry), every part
/// neutralized; the sink-specific escaping comes after.
pub fn violation_message(violation: &ViolationDoc) -> String {
    use crate::escape::neutralize;
    let mut message = neutralize(&violation.message);
    if let (Some(old), Some(_)) = (&violation.old_path, &violation.path) {
        message.push_str(&format!(" (old path: {})", neutralize(&old.sink_text())));
    }
    if let Some(line) = violation.line {
        message.push_str(&format!(" (diff line {line})"));
    }
    if let Some(entry) = &violation.policy_entry {
        message.push_str(&format!(" (policy: {})", neutralize(entry)));
    }
    message
}

pub fn rule(id: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.name == id)
}

/// An absolute base URL the rule anchors (`README.md#rule-<id>`) are resolved against, e.g.
/// `https://github.com/OWNER/REPO/blob/<sha>/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocsBase(String);

/// Why a docs base URL was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DocsBaseError {
    #[error("docs base URL {0:?} must start with https:// and end with /")]
    Shape(String),
    #[error(
        "docs base URL {0:?} contains a character that is not allowed in a markdown link target"
    )]
    Character(String),
}

impl DocsBase {
    /// Accept an `https://` URL ending in `/` made only of URI characters that are also safe in a
    /// markdown link target (no spaces, parentheses, angle brackets, quotes or backslashes).
    pub fn parse(url: &str) -> Result<Self, DocsBaseError> {
        if !url.starts_with("https://") || !url.ends_with('/') || url.len() <= "https://".len() + 1
        {
            return Err(DocsBaseError::Shape(url.to_string()));
        }
        let allowed = |c: char| c.is_ascii_alphanumeric() || "-._~:/?#@!$&*+,;=%".contains(c);
        if !url.chars().all(allowed) {
            return Err(DocsBaseError::Character(url.to_string()));
        }
        Ok(DocsBase(url.to_string()))
    }

    /// The absolute URL of `rule`'s documentation.
    pub fn rule_url(&self, rule: &Rule) -> String {
        format!("{}{}", self.0, rule.anchor())
    }

    /// The absolute URL of the rule reference itself.
    pub fn readme_url(&self) -> String {
        format!("{}README.md", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docs_base_accepts_plain_https_only() {
        assert!(DocsBase::parse("https://github.com/o/r/blob/main/").is_ok());
        for bad in [
            "http://x/",
            "https://x",
            "https:///",
            "javascript:alert(1)//",
            "https://x/a b/",
            "https://x/(a)/",
            "https://x/<a>/",
        ] {
            assert!(DocsBase::parse(bad).is_err(), "{bad}");
        }
    }
}
