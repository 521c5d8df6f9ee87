//! The build-test report (`agent-team-apply/build-test-report/v1`): what the build did and what
//! the two tree checks found, gathered from the documents the build-test job wrote
//! (`guard run --report`, `guard verify-tree --format json` after apply and after the build, and
//! the guard verdict).
//!
//! **It is not authoritative.** Every input was written in the job where untrusted patch code ran,
//! after it ran, and the code could have rewritten any of them. The document says so in
//! `"authoritative": false` and in its `note`; the gate decides from the jobs' conclusions only and
//! never reads it. It is for a human reading the step summary or the uploaded artifact.
//!
//! ```json
//! {"schema": "agent-team-apply/build-test-report/v1",
//!  "authoritative": false,
//!  "note": "NOT AUTHORITATIVE ...",
//!  "diff_sha256": "<64 hex>", "verdict": "accept", "base_commit": "<hex>",
//!  "build": {"command": ["cargo", "test"], "exit": {"code": 0, "signal": null},
//!            "timed_out": false, "duration_ms": 1234, "passed": true,
//!            "network": {"network": "namespace", "reason": null, "unavailable": null,
//!                        "proof": {...}, "git_dir_read_only": true},
//!            "env": {"passed": [...], "dropped": [...]},
//!            "output_tail": "...", "output_truncated_bytes": 0},
//!  "tree_after_apply": {"check": "after-apply", "result": "pass", "entries": 42,
//!                       "baseline_sha256": "<64 hex>", "findings": []},
//!  "tree_after_build": {"check": "after-build", "result": "fail", "entries": 57,
//!                       "baseline_sha256": "<64 hex>",
//!                       "findings": [{"rule": "build-wrote", "path": ".github/x.yml", ...}]}}
//! ```
//!
//! The inputs must agree (same diff hash, same verdict file, same base commit, the baseline the
//! second check read is the one the first wrote); a report over documents that do not belong
//! together is refused rather than rendered.

use serde::{Deserialize, Serialize};

use contract::ids::{CommitId, Sha256Hex};
use contract::run::{EnvDoc, ExitDoc, IsolationDoc, Network, RunReportDoc};
use contract::tree::{Check, FindingDoc, TreeDocError, TreeResult, VerifyTreeDoc};
use contract::verdict::{VerdictDoc, VerdictWord};

use crate::escape::{code_block, code_span, escape_markdown, table_code_span};
use crate::verdict::{DocsBase, VerdictError};

contract::schema_marker!(
    /// `agent-team-apply/build-test-report/v1`.
    BuildTestReportSchema,
    "agent-team-apply/build-test-report/v1"
);

pub const SCHEMA: &str = BuildTestReportSchema::ID;

/// The top-level note every report carries.
pub const NOTE: &str = "NOT AUTHORITATIVE: assembled in the build-test job from files written \
after untrusted patch code ran there, which that code could have rewritten. Nothing downstream may \
decide on this report; the gate decides from the jobs' conclusions only.";

/// Lines of build output the markdown form shows (the JSON form keeps the whole tail).
pub const MARKDOWN_TAIL_LINES: usize = 200;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BuildTestReport {
    pub schema: BuildTestReportSchema,
    /// Always `false`.
    pub authoritative: bool,
    pub note: String,
    pub diff_sha256: Sha256Hex,
    pub verdict: VerdictWord,
    pub base_commit: CommitId,
    pub build: BuildDoc,
    pub tree_after_apply: TreeCheckDoc,
    pub tree_after_build: TreeCheckDoc,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BuildDoc {
    pub command: Vec<String>,
    pub exit: ExitDoc,
    pub timed_out: bool,
    pub duration_ms: u64,
    /// Exit code 0 within the time limit.
    pub passed: bool,
    /// How the network was closed, with the proof `guard run` recorded.
    pub network: IsolationDoc,
    pub env: EnvDoc,
    /// The last bytes of output, raw (lossy UTF-8): renderers escape it.
    pub output_tail: String,
    pub output_truncated_bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TreeCheckDoc {
    pub check: Check,
    pub result: TreeResult,
    pub entries: u64,
    pub baseline_sha256: Option<Sha256Hex>,
    pub findings: Vec<FindingDoc>,
}

/// Why the inputs were refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildTestError {
    #[error("{what} is not a valid document of its schema: {source}")]
    Json {
        what: &'static str,
        #[source]
        source: serde_json::Error,
    },
    #[error("{what}: {source}")]
    Tree {
        what: &'static str,
        #[source]
        source: TreeDocError,
    },
    #[error(transparent)]
    Verdict(#[from] VerdictError),
    #[error("{what}: {problem}")]
    Invalid { what: &'static str, problem: String },
    #[error("the inputs do not belong together: {0}")]
    Inconsistent(String),
}

/// Parse a `guard run --report` document.
pub fn parse_run(json: &str) -> Result<RunReportDoc, BuildTestError> {
    RunReportDoc::parse(json).map_err(|source| BuildTestError::Json {
        what: "--run",
        source,
    })
}

/// Parse a tree-check document; `what` names the argument it came from. A failing check must
/// list its findings.
pub fn parse_tree(json: &str, what: &'static str) -> Result<VerifyTreeDoc, BuildTestError> {
    let doc = VerifyTreeDoc::parse(json).map_err(|source| BuildTestError::Tree { what, source })?;
    if !doc.passed() && doc.findings.is_empty() {
        return Err(BuildTestError::Invalid {
            what,
            problem: "result is fail but it lists no finding".into(),
        });
    }
    Ok(doc)
}

/// Assemble the report, refusing inputs that do not belong together.
pub fn build(
    run: &RunReportDoc,
    after_apply: &VerifyTreeDoc,
    after_build: &VerifyTreeDoc,
    verdict: &VerdictDoc,
) -> Result<BuildTestReport, BuildTestError> {
    let inconsistent = |m: &str| Err(BuildTestError::Inconsistent(m.to_string()));
    if after_apply.check != Check::AfterApply {
        return inconsistent("--tree-before is not the check after apply");
    }
    if after_build.check != Check::AfterBuild {
        return inconsistent("--tree-after is not the check after the build");
    }
    let diff = &verdict.diff_sha256;
    if &after_apply.diff_sha256 != diff || &after_build.diff_sha256 != diff {
        return inconsistent("the tree checks were run for another diff than the verdict's");
    }
    if after_apply.verdict_sha256 != after_build.verdict_sha256 {
        return inconsistent("the two tree checks read different verdict files");
    }
    if after_apply.base_commit != after_build.base_commit {
        return inconsistent("the two tree checks name different base commits");
    }
    if let (Some(written), Some(read)) =
        (&after_apply.baseline_sha256, &after_build.baseline_sha256)
        && written != read
    {
        return inconsistent(
            "the check after the build read another baseline than the one written after apply",
        );
    }
    let tree = |doc: &VerifyTreeDoc| TreeCheckDoc {
        check: doc.check,
        result: doc.result,
        entries: doc.entries,
        baseline_sha256: doc.baseline_sha256.clone(),
        findings: doc.findings.clone(),
    };
    Ok(BuildTestReport {
        schema: BuildTestReportSchema,
        authoritative: false,
        note: NOTE.to_string(),
        diff_sha256: diff.clone(),
        verdict: verdict.verdict,
        base_commit: after_apply.base_commit.clone(),
        build: BuildDoc {
            command: run.command.clone(),
            exit: run.exit.clone(),
            timed_out: run.timed_out,
            duration_ms: run.duration_ms,
            passed: run.passed(),
            network: run.isolation.clone(),
            env: run.env.clone(),
            output_tail: run.output_tail.clone(),
            output_truncated_bytes: run.output_truncated_bytes,
        },
        tree_after_apply: tree(after_apply),
        tree_after_build: tree(after_build),
    })
}

impl BuildTestReport {
    /// Serialize as pretty JSON with a trailing newline.
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        contract::doc_json::to_string_pretty(self)
    }
}

/// The report as GitHub-flavoured markdown. Values the report validated or produced (hex hashes,
/// numbers, the verdict and result words, registry rule ids and links) are written raw; the
/// command, interface names, paths and policy entries are code spans, the build output a code
/// block, and prose goes through [`escape_markdown`].
pub fn render_markdown(report: &BuildTestReport, docs: Option<&DocsBase>) -> String {
    let mut out = String::from("## Build-test report (not authoritative)\n\n");
    // The constant, not the document's copy: it is ours and must read the same in every report.
    out.push_str(&format!("> **{NOTE}**\n\n"));
    let b = &report.build;
    let word = |ok: bool| if ok { "pass" } else { "fail" };
    let overall = b.passed
        && report.tree_after_apply.result == TreeResult::Pass
        && report.tree_after_build.result == TreeResult::Pass;
    out.push_str(&format!("- **Outcome (as reported):** {}\n", word(overall)));
    out.push_str(&format!("- **Diff SHA-256:** `{}`\n", report.diff_sha256));
    out.push_str(&format!("- **Base commit:** `{}`\n", report.base_commit));
    out.push_str(&format!("- **Verdict:** {}\n", report.verdict));
    out.push_str(&format!(
        "- **Command:** {}\n",
        code_span(&b.command.join(" "))
    ));
    out.push_str(&format!("- **Exit:** {}\n", exit_text(b)));
    out.push_str(&format!("- **Duration:** {} ms\n", b.duration_ms));
    out.push_str(&format!("- **Network:** {}\n", network_text(&b.network)));
    out.push_str(&format!(
        "- **Tree after apply:** {} ({} finding(s), {} entries)\n",
        word(report.tree_after_apply.result == TreeResult::Pass),
        report.tree_after_apply.findings.len(),
        report.tree_after_apply.entries
    ));
    out.push_str(&format!(
        "- **Tree after the build:** {} ({} finding(s), {} entries)\n",
        word(report.tree_after_build.result == TreeResult::Pass),
        report.tree_after_build.findings.len(),
        report.tree_after_build.entries
    ));
    for (title, tree) in [
        ("Tree after apply", &report.tree_after_apply),
        ("Tree after the build", &report.tree_after_build),
    ] {
        if tree.findings.is_empty() {
            continue;
        }
        out.push_str(&format!(
            "\n### {title}: findings ({})\n\n",
            tree.findings.len()
        ));
        out.push_str("| Rule | Path | Change | Message | Policy entry |\n|---|---|---|---|---|\n");
        for f in &tree.findings {
            out.push_str(&finding_row(f, docs));
        }
    }
    out.push_str(&output_section(b));
    out
}

fn exit_text(b: &BuildDoc) -> String {
    let mut text = match (b.exit.code, b.exit.signal) {
        (Some(code), _) => format!("code {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        (None, None) => "unknown".to_string(),
    };
    if b.timed_out {
        text.push_str(", timed out");
    }
    text
}

fn network_text(n: &IsolationDoc) -> String {
    match (&n.proof, n.network) {
        (Some(proof), Network::Namespace) => {
            let interfaces: Vec<String> = proof.interfaces.iter().map(|i| code_span(i)).collect();
            let via_lo = proof.routes.iter().all(|r| r.interface == "lo");
            format!(
                "isolated by guard run in a network namespace; interfaces: {}; {} route(s){}; \
                 network namespace differs: {}; user namespace differs: {}; .git read-only: {}",
                interfaces.join(", "),
                proof.routes.len(),
                if via_lo {
                    ", all through lo"
                } else {
                    ", NOT all through lo"
                },
                yes(proof.netns_differs),
                yes(proof.userns_differs),
                yes(n.git_dir_read_only)
            )
        }
        _ => format!(
            "NOT isolated by guard run (opted out: {}; namespaces unavailable: {}); only an outer layer blocks egress",
            escape_markdown(n.reason.as_deref().unwrap_or_default()),
            escape_markdown(n.unavailable.as_deref().unwrap_or_default())
        ),
    }
}

fn yes(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

fn finding_row(f: &FindingDoc, docs: Option<&DocsBase>) -> String {
    format!(
        "| {} | {} | {} | {} | {} |\n",
        crate::markdown::rule_cell(f.rule, docs),
        table_code_span(&f.path.sink_text()),
        f.change.name(),
        escape_markdown(&f.message),
        f.policy_entry
            .as_deref()
            .map(table_code_span)
            .unwrap_or_default()
    )
}

/// The output tail in a fenced code block ([`code_block`]): test names (`gitignore::tests::cs4`),
/// paths and messages copy exactly, and nothing in it is rendered.
fn output_section(b: &BuildDoc) -> String {
    let lines: Vec<&str> = b.output_tail.lines().collect();
    let shown = &lines[lines.len().saturating_sub(MARKDOWN_TAIL_LINES)..];
    let mut out = format!("\n### Output (last {} line(s)", shown.len());
    if b.output_truncated_bytes > 0 || shown.len() < lines.len() {
        out.push_str(&format!(
            "; {} earlier line(s) and {} earlier byte(s) not shown",
            lines.len() - shown.len(),
            b.output_truncated_bytes
        ));
    }
    out.push_str(")\n\n");
    if shown.is_empty() {
        out.push_str("No output.\n");
        return out;
    }
    out.push_str(&code_block(shown));
    out
}
