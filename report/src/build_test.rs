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

use crate::bounded::{
    LeftOut, SECTION_MAX_BYTES, TABLE_MAX_ROWS, Unit, fit_markdown, rows_left_out_line,
};
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
/// Bytes of build output the markdown form shows at most (the end of the tail).
pub const MARKDOWN_TAIL_BYTES: usize = 64 * 1024;

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
    /// What was left out of inputs larger than the input limit (their long strings' and arrays'
    /// middles, [`crate::bounded::reduce_json`]); absent when nothing was.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<InputLeftOut>,
}

/// Part of one input document the report was not given in full.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputLeftOut {
    /// The argument the document came from (`--run`, `--tree-after`, ...).
    pub input: String,
    #[serde(flatten)]
    pub left_out: LeftOut,
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
    /// Findings of the check's document not in `findings`: the middle of a list too long for the
    /// input limit. Absent when none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub findings_left_out: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl TreeCheckDoc {
    /// Findings the check reported, those left out included.
    pub fn findings_total(&self) -> u64 {
        self.findings.len() as u64 + self.findings_left_out
    }
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
        findings_left_out: 0,
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
        left_out: Vec::new(),
    })
}

impl BuildTestReport {
    /// Record what was left out of the inputs (`input`: the argument it came from), and count the
    /// findings left out of each tree check's list.
    pub fn note_left_out(&mut self, input: &str, left_out: Vec<LeftOut>) {
        for l in left_out {
            if l.pointer == "/findings" && l.unit == Unit::Elements {
                match input {
                    "--tree-before" => self.tree_after_apply.findings_left_out += l.count,
                    "--tree-after" => self.tree_after_build.findings_left_out += l.count,
                    _ => {}
                }
            }
            self.left_out.push(InputLeftOut {
                input: input.to_string(),
                left_out: l,
            });
        }
    }
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
        report.tree_after_apply.findings_total(),
        report.tree_after_apply.entries
    ));
    out.push_str(&format!(
        "- **Tree after the build:** {} ({} finding(s), {} entries)\n",
        word(report.tree_after_build.result == TreeResult::Pass),
        report.tree_after_build.findings_total(),
        report.tree_after_build.entries
    ));
    for (title, tree) in [
        ("Tree after apply", &report.tree_after_apply),
        ("Tree after the build", &report.tree_after_build),
    ] {
        if tree.findings.is_empty() {
            continue;
        }
        let total = tree.findings_total();
        out.push_str(&format!("\n### {title}: findings ({total})\n\n"));
        out.push_str("| Rule | Path | Change | Message | Policy entry |\n|---|---|---|---|---|\n");
        let shown = tree.findings.len().min(TABLE_MAX_ROWS);
        for f in &tree.findings[..shown] {
            out.push_str(&finding_row(f, docs));
        }
        if (shown as u64) < total {
            let where_all = if tree.findings_left_out > 0 {
                format!(
                    "the JSON report lists {} of them ({} were left out of its input, too long to read whole)",
                    tree.findings.len(),
                    tree.findings_left_out
                )
            } else {
                "the JSON report (the job's artifact) lists them all".to_string()
            };
            out.push_str(&rows_left_out_line(shown, total, "finding(s)", &where_all));
        }
    }
    if !report.left_out.is_empty() {
        out.push_str("\n### Left out of the inputs\n\n");
        out.push_str(
            "Inputs larger than the input limit were read in part: the head and the tail of each long text and list.\n\n",
        );
        let shown = report.left_out.len().min(TABLE_MAX_ROWS);
        for l in &report.left_out[..shown] {
            let unit = match l.left_out.unit {
                Unit::Bytes => "byte(s)",
                Unit::Elements => "element(s)",
            };
            out.push_str(&format!(
                "- {} {}: {} {unit} left out\n",
                code_span(&l.input),
                code_span(&l.left_out.pointer),
                l.left_out.count
            ));
        }
        if shown < report.left_out.len() {
            out.push_str(&format!("- and {} more\n", report.left_out.len() - shown));
        }
    }
    out.push_str(&output_section(b));
    fit_markdown(out, SECTION_MAX_BYTES)
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
    let mut first = lines.len().saturating_sub(MARKDOWN_TAIL_LINES);
    // At most MARKDOWN_TAIL_BYTES: the last lines that fit, or the end of one longer line.
    let mut bytes = 0usize;
    let mut cut_line: Option<&str> = None;
    for i in (first..lines.len()).rev() {
        let len = lines[i].len() + 1;
        if bytes + len > MARKDOWN_TAIL_BYTES {
            if i + 1 == lines.len() {
                let line = lines[i];
                let mut start = line.len().saturating_sub(MARKDOWN_TAIL_BYTES);
                while !line.is_char_boundary(start) {
                    start += 1;
                }
                cut_line = Some(&line[start..]);
            }
            first = i + 1;
            break;
        }
        bytes += len;
    }
    let mut shown: Vec<&str> = lines[first..].to_vec();
    if let Some(end) = cut_line {
        shown = vec![end];
    }
    let earlier_lines = lines.len() - shown.len();
    let earlier_bytes = b.output_truncated_bytes
        + (b.output_tail.len()
            - shown
                .iter()
                .map(|l| l.len() + 1)
                .sum::<usize>()
                .min(b.output_tail.len())) as u64;
    let mut out = format!("\n### Output (last {} line(s)", shown.len());
    if b.output_truncated_bytes > 0 || earlier_lines > 0 || cut_line.is_some() {
        out.push_str(&format!(
            "; {earlier_lines} earlier line(s) and {earlier_bytes} earlier byte(s) not shown"
        ));
    }
    out.push_str(")\n\n");
    if shown.is_empty() {
        out.push_str("No output.\n");
        return out;
    }
    out.push_str(&code_block(&shown));
    out
}
