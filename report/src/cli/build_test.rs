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
    // Documents over the input limit are read in part (the head and tail of each long string
    // and list), never refused for their size; the report says what was left out.
    let (run_text, run_left_out) = super::read_json_reduced(&args.run)?;
    let run = build_test::parse_run(&run_text).map_err(|e| e.to_string())?;
    let (before_text, before_left_out) = super::read_json_reduced(&args.tree_before)?;
    let before =
        build_test::parse_tree(&before_text, "--tree-before").map_err(|e| e.to_string())?;
    let (after_text, after_left_out) = super::read_json_reduced(&args.tree_after)?;
    let after = build_test::parse_tree(&after_text, "--tree-after").map_err(|e| e.to_string())?;
    let verdict = verdict::parse(&super::read_input(&args.verdict)?).map_err(|e| e.to_string())?;
    let mut report =
        build_test::build(&run, &before, &after, &verdict).map_err(|e| e.to_string())?;
    report.note_left_out("--run", run_left_out);
    report.note_left_out("--tree-before", before_left_out);
    report.note_left_out("--tree-after", after_left_out);
    match args.format {
        Format::Json => report
            .to_json()
            .map_err(|e| format!("cannot serialize the report: {e}")),
        Format::Markdown => Ok(build_test::render_markdown(&report, docs.as_ref())),
    }
}
