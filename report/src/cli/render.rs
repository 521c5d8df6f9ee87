use clap::{Args, ValueEnum};

use report::verdict::{self, DocsBase};
use report::{annotations, markdown, sarif};

#[derive(Args)]
pub struct RenderArgs {
    /// Guard verdict (JSON v1) file, or `-` for stdin.
    #[arg(long, value_name = "FILE|-")]
    verdict: String,
    /// Output sink.
    #[arg(long, value_enum)]
    format: Format,
    /// Absolute https:// base URL, ending in `/`, that rule anchors (`README.md#rule-<id>`) are
    /// resolved against. Default: this project's README at the release the workflow pins, from
    /// AGENT_TEAM_RELEASE_URL (never the running repository's, which in a called workflow is the
    /// adopter's); without it, rule ids are not linked and SARIF has no `helpUri`.
    #[arg(long, value_name = "URL")]
    docs_base_url: Option<String>,
    /// The name of the diff file: the location of SARIF results that concern the diff as a whole
    /// (no path of their own; code scanning refuses a result without a location), and of every
    /// annotation whose diff line is known (`file=<name>,line=<diff line>`).
    #[arg(long, value_name = "NAME", default_value = report::sarif::DEFAULT_DIFF_NAME)]
    diff_name: String,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    /// GitHub-flavoured markdown for a step summary or pull request body.
    Markdown,
    /// `::error` workflow commands, one per violation.
    Annotations,
    /// SARIF 2.1.0 for GitHub code scanning.
    Sarif,
}

/// Exit 0 when the verdict was rendered, whatever it says; 2 when it could not be.
pub fn run(args: RenderArgs) -> u8 {
    let docs = match args
        .docs_base_url
        .as_deref()
        .map(DocsBase::parse)
        .transpose()
    {
        Ok(Some(docs)) => Some(docs),
        Ok(None) => DocsBase::from_release_env(|k| std::env::var(k).ok()),
        Err(e) => return super::fail(&e.to_string()),
    };
    let json = match super::read_input(&args.verdict) {
        Ok(json) => json,
        Err(e) => return super::fail(&e),
    };
    let doc = match verdict::parse(&json) {
        Ok(doc) => doc,
        Err(e) => return super::fail(&e.to_string()),
    };
    let output = match args.format {
        Format::Markdown => markdown::render(&doc, docs.as_ref()),
        Format::Annotations => annotations::render(&doc, &args.diff_name),
        Format::Sarif => match sarif::render(&doc, docs.as_ref(), &args.diff_name).to_json() {
            Ok(json) => json,
            Err(e) => return super::fail(&format!("cannot serialize SARIF: {e}")),
        },
    };
    super::write_stdout(&output)
}
