//! Reading a guard verdict (JSON v1, [`contract::verdict::VerdictDoc`]) for rendering, and
//! the rule documentation links the renderers print.
//!
//! The renderers are non-authoritative, but they still fail closed on a document they do not
//! understand: an unknown `schema`, verdict word, mode or rule, a malformed hash, or an `accept`
//! that carries violations is an error, not something to render. Rule links come from the
//! registry, never from the document's `docs` field, so a forged document cannot plant a link.

use contract::rules::RuleId;
use contract::verdict::{VerdictDoc, ViolationDoc};

pub use contract::verdict::VerdictError;

/// Parse and check a verdict document ([`VerdictDoc::parse`]: every field typed, the invariants
/// between them checked).
pub fn parse(json: &str) -> Result<VerdictDoc, VerdictError> {
    VerdictDoc::parse(json)
}

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

/// The markdown cell of a rule: its id, linked to its documentation (absolute under `docs` when
/// given, else the repository-relative anchor).
pub fn rule_link(rule: RuleId, docs: Option<&DocsBase>) -> String {
    let target = docs.map_or_else(|| rule.anchor(), |base| base.rule_url(rule));
    format!("[{}]({})", rule.name(), target)
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
    pub fn rule_url(&self, rule: RuleId) -> String {
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
