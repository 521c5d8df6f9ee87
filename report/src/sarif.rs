//! A verdict as a SARIF 2.1.0 log for GitHub code scanning.
//!
//! Shape: the subset GitHub documents in "SARIF support for code scanning"
//! (<https://docs.github.com/en/code-security/code-scanning/integrating-with-code-scanning/sarif-support-for-code-scanning>,
//! "Supported SARIF output file properties"): `sarifLog` {`$schema`, `version` = `2.1.0`,
//! `runs[]`}; `run.tool.driver` {`name`, `semanticVersion`, `rules[]`}; `reportingDescriptor`
//! {`id`, `shortDescription.text`, `fullDescription.text`, `help.text`, `defaultConfiguration.level`};
//! `result` {`ruleId`, `ruleIndex`, `level`, `message.text`, `locations[]`}; `physicalLocation`
//! {`artifactLocation.uri` relative to the repository root, `region.startLine`}. Field semantics
//! follow OASIS SARIF 2.1.0 (<https://docs.oasis-open.org/sarif/sarif/v2.1.0/sarif-v2.1.0.html>).
//!
//! Decisions:
//! - Rules come from [`RuleId::ALL`], so the rule list is the registry, in order.
//! - Violations are `error` results; protected paths the verdict lists for review (it accepts) are
//!   `note` results of rule `protected-path`, whose default level is `note`.
//! - A violation's line is a line of the diff, not of the file; GitHub requires
//!   `region.startLine`, so the location is the whole file (`startLine: 1`) and the diff line
//!   travels in the message and in `properties.diffLine`.
//! - Paths are percent-encoded ([`crate::escape::percent_encode_path`]); messages are neutralized
//!   and SARIF-escaped ([`crate::escape::escape_sarif_text`]) so no path can become an embedded
//!   link or a placeholder.
//! - A violation without a path of its own (a malformed diff, a hash mismatch, git's refusal) is
//!   located in the diff file itself (`--diff-name`, default [`DEFAULT_DIFF_NAME`]), at its diff
//!   line when it has one: code scanning refuses a result without a location.
//! - `helpUri` and `informationUri` must be absolute; they are written only with a [`DocsBase`].
//! - No `partialFingerprints`: `upload-sarif` computes them from the checked-out files.

use contract::ids::Sha256Hex;
use contract::rules::RuleId;
use contract::verdict::{CheckMode, VerdictWord};
use contract::verdict::{VerdictDoc, ViolationDoc};
use serde::Serialize;

use crate::escape::{escape_sarif_text, neutralize, percent_encode_path};
use crate::verdict::DocsBase;

pub const SARIF_SCHEMA: &str = "https://raw.githubusercontent.com/oasis-tcs/sarif-spec/master/Schemata/sarif-schema-2.1.0.json";
pub const SARIF_VERSION: &str = "2.1.0";
pub const DRIVER_NAME: &str = "agent-team-apply guard";
/// Where results about the diff as a whole are located when no other name is given.
pub const DEFAULT_DIFF_NAME: &str = "candidate.diff";

#[derive(Debug, Clone, Serialize)]
pub struct SarifLog {
    #[serde(rename = "$schema")]
    pub schema: &'static str,
    pub version: &'static str,
    pub runs: Vec<Run>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Run {
    pub tool: Tool,
    pub results: Vec<SarifResult>,
    pub properties: RunProperties,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunProperties {
    pub verdict: VerdictWord,
    pub diff_sha256: Sha256Hex,
    pub mode: CheckMode,
}

#[derive(Debug, Clone, Serialize)]
pub struct Tool {
    pub driver: Driver,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Driver {
    pub name: &'static str,
    pub semantic_version: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub information_uri: Option<String>,
    pub rules: Vec<ReportingDescriptor>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReportingDescriptor {
    pub id: &'static str,
    pub short_description: Text,
    pub full_description: Text,
    pub help: Text,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub help_uri: Option<String>,
    pub default_configuration: Configuration,
}

#[derive(Debug, Clone, Serialize)]
pub struct Configuration {
    pub level: &'static str,
}

#[derive(Debug, Clone, Serialize)]
pub struct Text {
    pub text: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SarifResult {
    pub rule_id: RuleId,
    pub rule_index: usize,
    pub level: &'static str,
    pub message: Text,
    pub locations: Vec<Location>,
    pub properties: ResultProperties,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResultProperties {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff_line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub policy_entry: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Location {
    pub physical_location: PhysicalLocation,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PhysicalLocation {
    pub artifact_location: ArtifactLocation,
    pub region: Region,
}

#[derive(Debug, Clone, Serialize)]
pub struct ArtifactLocation {
    pub uri: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Region {
    pub start_line: usize,
}

/// Build the SARIF log of `doc` (already checked by [`crate::verdict::parse`]); results without a
/// path are located in `diff_name`.
pub fn render(doc: &VerdictDoc, docs: Option<&DocsBase>, diff_name: &str) -> SarifLog {
    let rules = RuleId::ALL
        .iter()
        .map(|&r| ReportingDescriptor {
            id: r.name(),
            short_description: Text {
                text: r.description().to_string(),
            },
            full_description: Text {
                text: r.description().to_string(),
            },
            help: Text {
                text: format!("{} See {}.", r.description(), r.anchor()),
            },
            help_uri: docs.map(|base| base.rule_url(r)),
            default_configuration: Configuration {
                level: if r == RuleId::ProtectedPath {
                    "note"
                } else {
                    "error"
                },
            },
        })
        .collect();
    SarifLog {
        schema: SARIF_SCHEMA,
        version: SARIF_VERSION,
        runs: vec![Run {
            tool: Tool {
                driver: Driver {
                    name: DRIVER_NAME,
                    semantic_version: env!("CARGO_PKG_VERSION"),
                    information_uri: docs.map(DocsBase::readme_url),
                    rules,
                },
            },
            results: doc
                .violations
                .iter()
                .map(|v| result(v, "error", diff_name))
                .chain(doc.protected.iter().map(|p| result(p, "note", diff_name)))
                .collect(),
            properties: RunProperties {
                verdict: doc.verdict,
                diff_sha256: doc.diff_sha256.clone(),
                mode: doc.mode,
            },
        }],
    }
}

fn result(violation: &ViolationDoc, level: &'static str, diff_name: &str) -> SarifResult {
    // Every rule is registered: the index is its place in `RuleId::ALL`.
    let rule_index = RuleId::ALL
        .iter()
        .position(|&r| r == violation.rule)
        .unwrap_or_default();
    let rule_id = violation.rule;
    let message = crate::verdict::violation_message(violation);
    let location = match violation.path.as_ref().or(violation.old_path.as_ref()) {
        Some(path) => (percent_encode_path(path.as_bytes()), 1),
        None => (
            percent_encode_path(diff_name),
            violation.line.unwrap_or(1).max(1),
        ),
    };
    let locations = vec![Location {
        physical_location: PhysicalLocation {
            artifact_location: ArtifactLocation { uri: location.0 },
            region: Region {
                start_line: location.1,
            },
        },
    }];
    SarifResult {
        rule_id,
        rule_index,
        level,
        message: Text {
            text: escape_sarif_text(&message),
        },
        locations,
        properties: ResultProperties {
            diff_line: violation.line,
            policy_entry: violation.policy_entry.as_deref().map(neutralize),
        },
    }
}

impl SarifLog {
    /// Pretty JSON with a trailing newline ([`contract::doc_json`]).
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        contract::doc_json::to_string_pretty(self)
    }
}
