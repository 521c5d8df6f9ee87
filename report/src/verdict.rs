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
/// A message of several lines (git's own words, one per line) keeps its line breaks between
/// neutralized lines; the evidence follows the first line.
pub fn violation_message(violation: &ViolationDoc) -> String {
    use crate::escape::neutralize;
    let mut lines = violation.message.split('\n');
    let mut message = neutralize(lines.next().unwrap_or_default());
    if let (Some(old), Some(_)) = (&violation.old_path, &violation.path) {
        message.push_str(&format!(" (old path: {})", neutralize(&old.sink_text())));
    }
    if let Some(line) = violation.line {
        message.push_str(&format!(" (diff line {line})"));
    }
    if let Some(entry) = &violation.policy_entry {
        message.push_str(&format!(" (policy: {})", neutralize(entry)));
    }
    for line in lines {
        message.push('\n');
        message.push_str(&neutralize(line));
    }
    message
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
    /// The README of this project at the release the workflow runs: from
    /// `AGENT_TEAM_RELEASE_URL` (`<server>/<owner>/<repo>/releases/download/<tag>`, written by
    /// `.ci/pin-release.sh`), `<server>/<owner>/<repo>/blob/<tag>/`. Never the running
    /// repository's (`GITHUB_REPOSITORY` and `GITHUB_SHA` are the caller's in a called
    /// workflow, whose README is not this one). `None` when the variable is missing or not of
    /// that shape: no links rather than wrong ones.
    pub fn from_release_env(get: impl Fn(&str) -> Option<String>) -> Option<Self> {
        Self::from_release_url(&get("AGENT_TEAM_RELEASE_URL")?)
    }

    /// See [`DocsBase::from_release_env`].
    pub fn from_release_url(url: &str) -> Option<Self> {
        let (repo_url, tag) = url
            .trim_end_matches('/')
            .rsplit_once("/releases/download/")?;
        let well_formed = |s: &str| {
            !s.is_empty()
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-._".contains(&b))
        };
        let rest = repo_url.strip_prefix("https://")?;
        let mut parts = rest.split('/');
        let (host, owner, repo) = (parts.next()?, parts.next()?, parts.next()?);
        let host_ok = !host.is_empty()
            && host
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-.:".contains(&b));
        if parts.next().is_some()
            || !host_ok
            || !well_formed(owner)
            || !well_formed(repo)
            || !well_formed(tag)
        {
            return None;
        }
        DocsBase::parse(&format!("https://{host}/{owner}/{repo}/blob/{tag}/")).ok()
    }

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

    /// The links go to this project's README at the pinned release, whatever repository the
    /// workflow runs in (a called workflow's GITHUB_REPOSITORY is the adopter's).
    #[test]
    fn docs_base_is_this_project_at_the_pinned_release() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(key, _)| *key == k)
                    .map(|(_, v)| (*v).to_string())
            }
        };
        let base = DocsBase::from_release_env(env(&[
            (
                "AGENT_TEAM_RELEASE_URL",
                "https://github.com/agent-team/agent-team-apply/releases/download/v0.2.0",
            ),
            ("GITHUB_SERVER_URL", "https://github.com"),
            ("GITHUB_REPOSITORY", "adopter/app"),
            ("GITHUB_SHA", "0123456789abcdef0123456789abcdef01234567"),
        ]));
        assert_eq!(
            base.map(|b| b.readme_url()),
            Some(
                "https://github.com/agent-team/agent-team-apply/blob/v0.2.0/README.md".to_string()
            )
        );
        let ghes = DocsBase::from_release_url(
            "https://ghe.example.com:8443/tools/agent-team-apply/releases/download/v1.0.0",
        );
        assert_eq!(
            ghes.map(|b| b.readme_url()),
            Some(
                "https://ghe.example.com:8443/tools/agent-team-apply/blob/v1.0.0/README.md"
                    .to_string()
            )
        );
        // The caller's repository alone gives no link at all.
        assert!(
            DocsBase::from_release_env(env(&[
                ("GITHUB_SERVER_URL", "https://github.com"),
                ("GITHUB_REPOSITORY", "adopter/app"),
                ("GITHUB_SHA", "0123456789abcdef0123456789abcdef01234567"),
            ]))
            .is_none()
        );
        for bad in [
            "http://github.com/o/r/releases/download/v1",
            "https://github.com/o/r/releases/v1",
            "https://github.com/o/r/x/releases/download/v1",
            "https://github.com/o)](x/r/releases/download/v1",
            "https://github.com/o/r/releases/download/v1 x",
            "https://github.com/o/r/releases/download/",
        ] {
            assert!(DocsBase::from_release_url(bad).is_none(), "{bad}");
        }
    }

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
