use clap::{Args, ValueEnum};

use contract::readiness::ReadinessDoc;

#[derive(Args)]
pub struct ReadinessArgs {
    /// The readiness document (`guard readiness --format json`), or `-` for stdin.
    #[arg(long, value_name = "FILE|-")]
    doc: String,
    #[arg(long, value_enum)]
    format: Format,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    /// A step-summary section.
    Markdown,
    /// `::error`/`::warning` workflow commands, one per finding.
    Annotations,
}

/// Exit 0 when the document was rendered, whatever it says; 2 when it could not be.
pub fn run(args: ReadinessArgs) -> u8 {
    let doc = match super::read_input(&args.doc).and_then(|text| ReadinessDoc::parse(&text)) {
        Ok(doc) => doc,
        Err(e) => return super::fail(&e),
    };
    super::write_stdout(&match args.format {
        Format::Markdown => report::readiness::markdown(&doc),
        Format::Annotations => report::readiness::annotations(&doc),
    })
}
