use clap::Args;

use contract::ids::CommitId;
use report::check_run::{self, DEFAULT_CHECK_NAME};

#[derive(Args)]
pub struct CheckRunArgs {
    /// Gate decision JSON (`agent-team-apply/gate-decision/v1`) file, or `-` for stdin.
    #[arg(long, value_name = "FILE")]
    decision: String,
    /// The commit the check run is attached to: 40 hex digits.
    #[arg(long, value_name = "SHA")]
    head_sha: String,
    /// The check run's name.
    #[arg(long, value_name = "NAME", default_value = DEFAULT_CHECK_NAME)]
    name: String,
    /// An https:// URL with the full details (e.g. the workflow run).
    #[arg(long, value_name = "URL")]
    details_url: Option<String>,
    /// The guard verdict (JSON v1) the gate computed itself (`gate publish-plan --verdict-out`):
    /// its protected paths are named in the title and listed in the summary. Must be for the
    /// decision's diff.
    #[arg(long, value_name = "FILE")]
    verdict: Option<String>,
}

/// Exit 0 when the body was written, whether the decision is pass or fail (the body's
/// `conclusion` carries that); 2 on any error.
pub fn run(args: CheckRunArgs) -> u8 {
    let head_sha = match CommitId::parse(&args.head_sha) {
        Ok(sha) => sha,
        Err(e) => return super::fail(&format!("--head-sha: {e}")),
    };
    let json = match super::read_input(&args.decision) {
        Ok(json) => json,
        Err(e) => return super::fail(&e),
    };
    let verdict = match args.verdict.as_deref().map(super::read_input).transpose() {
        Ok(text) => text,
        Err(e) => return super::fail(&e),
    };
    let verdict = match verdict.as_deref().map(report::verdict::parse).transpose() {
        Ok(doc) => doc,
        Err(e) => return super::fail(&e.to_string()),
    };
    let body = check_run::parse_decision(&json).and_then(|decision| {
        if let Some(doc) = &verdict
            && Some(&doc.diff_sha256) != decision.diff_sha256.as_ref()
        {
            return Err(check_run::CheckRunError::VerdictForAnotherDiff {
                verdict: doc.diff_sha256.to_string(),
                decision: decision
                    .diff_sha256
                    .as_ref()
                    .map_or_else(|| "(none)".to_owned(), ToString::to_string),
            });
        }
        let protected = verdict.as_ref().map_or(&[][..], |doc| &doc.protected[..]);
        check_run::build(
            &decision,
            &head_sha,
            &args.name,
            args.details_url.as_deref(),
            protected,
        )
    });
    let body = match body {
        Ok(body) => body,
        Err(e) => return super::fail(&e.to_string()),
    };
    match contract::doc_json::to_string_pretty(&body) {
        Ok(json) => super::write_stdout(&json),
        Err(e) => super::fail(&format!("cannot serialize check run: {e}")),
    }
}
