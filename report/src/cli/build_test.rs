use clap::{Args, ValueEnum};

use report::build_test;
use report::verdict::{self, DocsBase};

#[derive(Args)]
pub struct BuildTestArgs {
    /// `guard run --report` JSON (`agent-team-apply/guard-run/v1`).
    #[arg(long, value_name = "FILE")]
    run: String,
    /// `guard verify-tree --format json` after apply.
    #[arg(long, value_name = "FILE")]
    tree_before: String,
    /// `guard verify-tree --after-build --format json`.
    #[arg(long, value_name = "FILE")]
    tree_after: String,
    /// The guard verdict (JSON v1) of the diff.
    #[arg(long, value_name = "FILE")]
    verdict: String,
    #[arg(long, value_enum, default_value = "json")]
    format: Format,
    /// Absolute https:// base URL, ending in `/`, for rule links in the markdown form.
    #[arg(long, value_name = "URL")]
    docs_base_url: Option<String>,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    /// `agent-team-apply/build-test-report/v1`.
    Json,
    /// GitHub-flavoured markdown for a step summary.
    Markdown,
}

/// Exit 0 when the report was written, whatever it says; 2 when the inputs were refused.
pub fn run(args: BuildTestArgs) -> u8 {
    match assemble(&args) {
        Ok(text) => super::write_stdout(&text),
        Err(message) => super::fail(&message),
    }
}

fn assemble(args: &BuildTestArgs) -> Result<String, String> {
    let docs = args
        .docs_base_url
        .as_deref()
        .map(DocsBase::parse)
        .transpose()
        .map_err(|e| e.to_string())?;
    let run = build_test::parse_run(&super::read_input(&args.run)?).map_err(|e| e.to_string())?;
    let before = build_test::parse_tree(&super::read_input(&args.tree_before)?, "--tree-before")
        .map_err(|e| e.to_string())?;
    let after = build_test::parse_tree(&super::read_input(&args.tree_after)?, "--tree-after")
        .map_err(|e| e.to_string())?;
    let verdict = verdict::parse(&super::read_input(&args.verdict)?).map_err(|e| e.to_string())?;
    let report = build_test::build(&run, &before, &after, &verdict).map_err(|e| e.to_string())?;
    match args.format {
        Format::Json => report
            .to_json()
            .map_err(|e| format!("cannot serialize the report: {e}")),
        Format::Markdown => Ok(build_test::render_markdown(&report, docs.as_ref())),
    }
}
