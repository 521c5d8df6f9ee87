//! `gate decide`: read the needs text, decide, record the outputs, render.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use contract::github_output::{OutputError, StepOutputs};
use gate::decide::{MAX_NEEDS_BYTES, decide};
use gate::output::{json_v1, text};

#[derive(Clone, Copy, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

#[derive(Args)]
pub struct DecideArgs {
    /// The text of `toJSON(needs)`: literal JSON, `@FILE` to read a file, or `-` for stdin. Pass it
    /// through an environment variable or a file, never by interpolating it into a script.
    #[arg(long, value_name = "JSON|@FILE|-")]
    needs: String,
    /// The jobs that must all have succeeded, comma-separated; may be repeated. Any other job in
    /// needs fails the gate.
    #[arg(long, value_name = "JOB,...", required = true)]
    require: Vec<String>,
    /// The workflow run id the decision is keyed to (decimal).
    #[arg(long, value_name = "ID")]
    run_id: String,
    /// The SHA-256 of the candidate diff the decision is keyed to (64 lower-case hex digits).
    #[arg(long, value_name = "HEX")]
    diff_sha256: String,
    /// Append `gate=pass|fail` and the multi-line `reasons` to this file (`$GITHUB_OUTPUT`).
    #[arg(long, value_name = "FILE")]
    github_output: Option<PathBuf>,
    /// Output format on stdout.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

pub fn run(args: DecideArgs) -> u8 {
    let needs = match read_needs(&args.needs) {
        Ok(needs) => needs,
        Err(message) => {
            eprintln!("gate decide: {message}");
            return contract::cli::Exit::Error.code();
        }
    };
    let required: Vec<&str> = args.require.iter().flat_map(|r| r.split(',')).collect();
    let decision = decide(&needs, &required, &args.run_id, &args.diff_sha256);
    let pass = decision.pass();

    let mut code = if pass {
        contract::cli::Exit::Pass.code()
    } else {
        contract::cli::Exit::Fail.code()
    };
    if let Some(path) = &args.github_output
        && let Err(err) = write_outputs(path, pass, &text::reason_lines(&decision.reasons))
    {
        eprintln!("gate decide: {err}");
        code = contract::cli::Exit::Error.code();
    }

    let rendered = match args.format {
        Format::Text => text::render(&decision),
        Format::Json => match json_v1::document(&decision).to_json() {
            Ok(json) => json,
            Err(err) => {
                eprintln!("gate decide: cannot encode the decision: {err}");
                return contract::cli::Exit::Error.code();
            }
        },
    };
    let mut stdout = io::stdout().lock();
    if let Err(err) = stdout
        .write_all(rendered.as_bytes())
        .and_then(|()| stdout.flush())
    {
        eprintln!("gate decide: cannot write to stdout: {err}");
        code = contract::cli::Exit::Error.code();
    }
    code
}

fn write_outputs(path: &std::path::Path, pass: bool, reasons: &str) -> Result<(), OutputError> {
    let mut outputs = StepOutputs::new();
    outputs.set("gate", if pass { "pass" } else { "fail" })?;
    outputs.set_multiline("reasons", reasons)?;
    outputs.append_to(path)
}

/// The needs bytes, read at most one byte past the limit so that an oversized input is reported
/// by the decision as too large rather than read whole.
fn read_needs(source: &str) -> Result<Vec<u8>, String> {
    let limit = MAX_NEEDS_BYTES as u64 + 1;
    if source == "-" {
        return read_bounded(io::stdin().lock(), limit)
            .map_err(|e| format!("cannot read needs from stdin: {e}"));
    }
    if let Some(path) = source.strip_prefix('@') {
        if path.is_empty() {
            return Err("--needs @FILE: the file name is empty".to_owned());
        }
        return File::open(path)
            .and_then(|file| read_bounded(file, limit))
            .map_err(|e| format!("cannot read needs from {path:?}: {e}"));
    }
    Ok(source.as_bytes().to_vec())
}

fn read_bounded(reader: impl Read, limit: u64) -> io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    reader.take(limit).read_to_end(&mut buf)?;
    Ok(buf)
}
