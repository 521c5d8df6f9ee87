//! The JSON body of `POST /repos/{owner}/{repo}/check-runs` ("Create a check run",
//! <https://docs.github.com/en/rest/checks/runs#create-a-check-run>) carrying the gate decision.
//!
//! Fields used: `name` and `head_sha` (required), `details_url`, `status: "completed"`,
//! `conclusion` (required with `completed`: `success` or `failure` here), and `output` with
//! `title`, `summary` and `text` (markdown). The documented maximum of `output.summary` and
//! `output.text` is 65535 characters; GitHub enforces it in bytes ("summary exceeds a maximum
//! bytesize of 65535", github/docs#35252), so both are cut to [`OUTPUT_MAX_BYTES`] bytes on a
//! `char` boundary, with a note saying so.

use contract::decision::DecisionDoc;
use contract::ids::CommitId;
use serde::Serialize;

use contract::verdict::ViolationDoc;

use crate::escape::{code_span, escape_markdown, is_hidden};

pub const DEFAULT_CHECK_NAME: &str = "agent-team-apply / gate";
/// GitHub's limit on `output.summary` and `output.text`, applied in bytes (the stricter reading).
pub const OUTPUT_MAX_BYTES: usize = 65535;

/// Why a check-run body could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CheckRunError {
    #[error(transparent)]
    Decision(#[from] contract::decision::DecisionError),
    #[error("the gate decision is not bound to a run id and a diff hash (its inputs were invalid)")]
    Unbound,
    #[error("check name {found:?} is empty, too long or has control or hidden characters")]
    Name { found: String },
    #[error("details URL {found:?} must be an https:// URL without spaces or control characters")]
    DetailsUrl { found: String },
    #[error("the verdict is for diff {verdict}, the decision for diff {decision}")]
    VerdictForAnotherDiff { verdict: String, decision: String },
}

/// Parse and check a gate decision ([`DecisionDoc::parse`]).
pub fn parse_decision(json: &str) -> Result<DecisionDoc, CheckRunError> {
    Ok(DecisionDoc::parse(json)?)
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
    decision: &DecisionDoc,
    head_sha: &CommitId,
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

    let (Some(run_id), Some(diff_sha256)) = (&decision.run_id, &decision.diff_sha256) else {
        return Err(CheckRunError::Unbound);
    };
    let (word, conclusion) = if decision.passed() {
        ("pass", "success")
    } else {
        ("fail", "failure")
    };
    let title = match (decision.passed(), protected.len()) {
        (true, 0) => "Gate passed".to_string(),
        (true, n) => format!("Gate passed: {n} protected file(s) need review"),
        (false, _) => format!("Gate failed: {} reason(s)", decision.reasons.len()),
    };
    let mut summary = format!(
        "**Gate decision: {word}**\n\n- Run: {}\n- Diff SHA-256: `{}`\n- Reasons: {}\n",
        code_span(run_id.as_str()),
        diff_sha256,
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
