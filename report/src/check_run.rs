//! The JSON body of `POST /repos/{owner}/{repo}/check-runs` ("Create a check run",
//! <https://docs.github.com/en/rest/checks/runs#create-a-check-run>) carrying the gate decision.
//!
//! Fields used: `name` and `head_sha` (required), `details_url`, `status: "completed"`,
//! `conclusion` (required with `completed`: `success` or `failure` here), and `output` with
//! `title`, `summary` and `text` (markdown). The documented maximum of `output.summary` and
//! `output.text` is 65535 characters; GitHub enforces it in bytes ("summary exceeds a maximum
//! bytesize of 65535", github/docs#35252), so both are cut to [`OUTPUT_MAX_BYTES`] bytes on a
//! `char` boundary, with a note saying so.

use serde::{Deserialize, Serialize};

use guard::output::json_v1::ViolationDoc;

use crate::escape::{code_span, escape_markdown, is_hidden};

pub const GATE_DECISION_SCHEMA: &str = "agent-team-apply/gate-decision/v1";
pub const DEFAULT_CHECK_NAME: &str = "agent-team-apply / gate";
/// GitHub's limit on `output.summary` and `output.text`, applied in bytes (the stricter reading).
pub const OUTPUT_MAX_BYTES: usize = 65535;

/// The gate's decision document as `gate decide --format json` writes it (`gate/src/output/
/// json_v1.rs`). Unknown fields are accepted (a later gate may add some, and `required`/`jobs`
/// are not needed here); the ones below are required.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct GateDecision {
    pub schema: String,
    /// `pass` or `fail`; anything else is refused by [`parse_decision`].
    pub gate: String,
    pub run_id: String,
    pub diff_sha256: String,
    pub reasons: Vec<GateReason>,
}

/// One reason the gate failed.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct GateReason {
    /// Stable reason code, e.g. `job-not-successful`.
    pub code: String,
    #[serde(default)]
    pub job: Option<String>,
    pub message: String,
}

impl GateDecision {
    pub fn pass(&self) -> bool {
        self.gate == "pass"
    }
}

/// Why a check-run body could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CheckRunError {
    #[error("gate decision is not valid JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("unknown gate decision schema {found:?} (expected {GATE_DECISION_SCHEMA:?})")]
    Schema { found: String },
    #[error("gate decision gate {found:?} is neither \"pass\" nor \"fail\"")]
    Gate { found: String },
    #[error("gate decision run_id {found:?} is empty, too long or has hidden characters")]
    RunId { found: String },
    #[error("gate decision diff_sha256 {found:?} is not a 64-digit hex SHA-256")]
    DiffSha256 { found: String },
    #[error("head SHA {found:?} is not 40 hex digits")]
    HeadSha { found: String },
    #[error("check name {found:?} is empty, too long or has control or hidden characters")]
    Name { found: String },
    #[error("details URL {found:?} must be an https:// URL without spaces or control characters")]
    DetailsUrl { found: String },
    #[error("the verdict is for diff {verdict}, the decision for diff {decision}")]
    VerdictForAnotherDiff { verdict: String, decision: String },
}

/// Parse and check a gate decision.
pub fn parse_decision(json: &str) -> Result<GateDecision, CheckRunError> {
    let decision: GateDecision = serde_json::from_str(json)?;
    if decision.schema != GATE_DECISION_SCHEMA {
        return Err(CheckRunError::Schema {
            found: decision.schema,
        });
    }
    if decision.gate != "pass" && decision.gate != "fail" {
        return Err(CheckRunError::Gate {
            found: decision.gate,
        });
    }
    if decision.run_id.is_empty()
        || decision.run_id.len() > 256
        || decision.run_id.chars().any(is_hidden)
    {
        return Err(CheckRunError::RunId {
            found: decision.run_id,
        });
    }
    if guard::hash::parse_sha256(&decision.diff_sha256).is_none() {
        return Err(CheckRunError::DiffSha256 {
            found: decision.diff_sha256,
        });
    }
    Ok(decision)
}

/// A commit SHA-1 as 40 hex digits, normalised to lower case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeadSha(String);

impl HeadSha {
    pub fn parse(sha: &str) -> Result<Self, CheckRunError> {
        if sha.len() == 40 && sha.bytes().all(|b| b.is_ascii_hexdigit()) {
            Ok(HeadSha(sha.to_ascii_lowercase()))
        } else {
            Err(CheckRunError::HeadSha {
                found: sha.to_string(),
            })
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The request body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckRunRequest {
    pub name: String,
    pub head_sha: String,
    pub status: &'static str,
    pub conclusion: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details_url: Option<String>,
    pub output: CheckRunOutput,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckRunOutput {
    pub title: String,
    pub summary: String,
    pub text: String,
}

/// Build the body for `decision` on `head_sha`. `name` and `details_url` are caller input, checked
/// rather than escaped: the name must be printable, the URL plain `https://`. `protected` are the
/// protected paths of the verdict the gate computed (empty when none or not given): on a pass the
/// title says that they need a human's review and the summary lists them.
pub fn build(
    decision: &GateDecision,
    head_sha: &HeadSha,
    name: &str,
    details_url: Option<&str>,
    protected: &[ViolationDoc],
) -> Result<CheckRunRequest, CheckRunError> {
    if name.trim().is_empty() || name.chars().count() > 255 || name.chars().any(is_hidden) {
        return Err(CheckRunError::Name {
            found: name.to_string(),
        });
    }
    if let Some(url) = details_url
        && (!url.starts_with("https://")
            || url.len() <= "https://".len()
            || url.chars().any(|c| c.is_whitespace() || is_hidden(c)))
    {
        return Err(CheckRunError::DetailsUrl {
            found: url.to_string(),
        });
    }

    let (word, conclusion) = if decision.pass() {
        ("pass", "success")
    } else {
        ("fail", "failure")
    };
    let title = match (decision.pass(), protected.len()) {
        (true, 0) => "Gate passed".to_string(),
        (true, n) => format!("Gate passed: {n} protected file(s) need review"),
        (false, _) => format!("Gate failed: {} reason(s)", decision.reasons.len()),
    };
    let mut summary = format!(
        "**Gate decision: {word}**\n\n- Run: {}\n- Diff SHA-256: `{}`\n- Reasons: {}\n",
        code_span(&decision.run_id),
        decision.diff_sha256.to_ascii_lowercase(),
        decision.reasons.len()
    );
    if !protected.is_empty() {
        summary.push_str(&format!(
            "\n**\u{26a0}\u{fe0f} Protected files need review ({}):** the policy lets the diff change \
             them only with a human's explicit look.\n\n",
            protected.len()
        ));
        for finding in protected {
            summary.push_str(&crate::markdown::protected_item(finding));
        }
    }
    let mut text = String::from("### Reasons\n\n");
    if decision.reasons.is_empty() {
        text.push_str("No reasons recorded.\n");
    }
    for reason in &decision.reasons {
        let line = format!("{}: {}", reason.code, reason.message);
        text.push_str(&format!("- {}\n", escape_markdown(&line)));
    }

    Ok(CheckRunRequest {
        name: name.to_string(),
        head_sha: head_sha.as_str().to_string(),
        status: "completed",
        conclusion,
        details_url: details_url.map(str::to_string),
        output: CheckRunOutput {
            title,
            summary: fit_output(summary),
            text: fit_output(text),
        },
    })
}

/// Cut `text` to at most [`OUTPUT_MAX_BYTES`] bytes, on a `char` boundary and preferably at a line
/// end (so a markdown line or a character reference is not split), and append a note saying how
/// much was cut. Text within the limit is returned unchanged.
pub fn fit_output(text: String) -> String {
    fit_to(text, OUTPUT_MAX_BYTES)
}

fn fit_to(text: String, max_bytes: usize) -> String {
    if text.len() <= max_bytes {
        return text;
    }
    let total = text.len();
    // The note's length depends on the number it prints; reserve room for the widest one.
    let note = |omitted: usize| {
        format!(
            "\n\n_Truncated: {omitted} of {total} bytes omitted (GitHub's limit is {max_bytes} bytes)._\n"
        )
    };
    let budget = max_bytes.saturating_sub(note(total).len());
    let mut cut = budget.min(total);
    while cut > 0 && !text.is_char_boundary(cut) {
        cut -= 1;
    }
    if let Some(newline) = text[..cut].rfind('\n')
        && newline >= cut / 2
    {
        cut = newline + 1;
    }
    let mut out = text[..cut].to_string();
    out.push_str(&note(total - cut));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_cuts_on_char_boundary_and_notes_it() {
        let text = "é".repeat(100);
        let out = fit_to(text.clone(), 150);
        assert!(out.len() <= 150, "{}", out.len());
        assert!(out.starts_with("éé"));
        assert!(out.contains("_Truncated: "));
        assert_eq!(fit_to(text.clone(), 200), text);
    }

    #[test]
    fn fit_prefers_a_line_end() {
        let text = format!("{}\n{}", "a".repeat(100), "b".repeat(100));
        let out = fit_to(text, 180);
        assert!(
            out.starts_with(&format!("{}\n\n\n_Truncated: 100 of 201", "a".repeat(100))),
            "{out}"
        );
    }
}
