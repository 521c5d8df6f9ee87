//! One module per subcommand: parse arguments, call the library, write the result, return an exit
//! code. Shared here: bounded input reading and error reporting.

use std::io::{Read, Write};

use report::bounded::{self, LeftOut};

pub mod build_test;
pub mod check_run;
pub mod readiness;
pub mod render;
pub mod select_run;

/// Inputs are small JSON documents; anything larger is refused rather than read without bound,
/// except by [`read_json_reduced`], which reduces it.
pub const MAX_INPUT_BYTES: u64 = 16 * 1024 * 1024;

/// Read a UTF-8 document from a file, or from stdin when `source` is `-`.
pub fn read_input(source: &str) -> Result<String, String> {
    let name = if source == "-" {
        "stdin".to_string()
    } else {
        source.to_string()
    };
    let mut buf = Vec::new();
    let read = if source == "-" {
        std::io::stdin()
            .lock()
            .take(MAX_INPUT_BYTES + 1)
            .read_to_end(&mut buf)
    } else {
        std::fs::File::open(source).and_then(|f| f.take(MAX_INPUT_BYTES + 1).read_to_end(&mut buf))
    };
    read.map_err(|e| format!("cannot read {name}: {e}"))?;
    if buf.len() as u64 > MAX_INPUT_BYTES {
        return Err(format!("{name} is larger than {MAX_INPUT_BYTES} bytes"));
    }
    String::from_utf8(buf).map_err(|_| format!("{name} is not valid UTF-8"))
}

/// Read a JSON document as [`read_input`] does, except that one larger than [`MAX_INPUT_BYTES`]
/// is not refused: it is streamed and reduced ([`report::bounded::reduce_json`]) to the head and
/// tail of its long strings and arrays, and what was left out is returned with it.
pub fn read_json_reduced(source: &str) -> Result<(String, Vec<LeftOut>), String> {
    let name = if source == "-" {
        "stdin".to_string()
    } else {
        source.to_string()
    };
    let reader: Box<dyn Read> = if source == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(std::fs::File::open(source).map_err(|e| format!("cannot read {name}: {e}"))?)
    };
    let mut reader = reader;
    let mut buf = Vec::new();
    (&mut reader)
        .take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut buf)
        .map_err(|e| format!("cannot read {name}: {e}"))?;
    if buf.len() as u64 <= MAX_INPUT_BYTES {
        let text = String::from_utf8(buf).map_err(|_| format!("{name} is not valid UTF-8"))?;
        return Ok((text, Vec::new()));
    }
    let limit = usize::try_from(MAX_INPUT_BYTES).unwrap_or(usize::MAX);
    let (text, left_out) = bounded::reduce_json(
        std::io::Cursor::new(buf).chain(reader),
        bounded::Keep::for_limit(limit),
    )
    .map_err(|e| {
        format!("{name} is larger than {MAX_INPUT_BYTES} bytes and not a JSON document: {e}")
    })?;
    if text.len() > limit {
        return Err(format!(
            "{name}: even with the middle of its long strings and arrays left out it is larger than {MAX_INPUT_BYTES} bytes"
        ));
    }
    Ok((text, left_out))
}

/// Write `text` to stdout; a closed or failing stdout is an I/O error (exit 2), not a panic.
pub fn write_stdout(text: &str) -> u8 {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => contract::cli::Exit::Pass.code(),
        Err(e) => fail(&format!("cannot write output: {e}")),
    }
}

/// Report an error on stderr, escaped for the terminal (messages can quote input), and return the
/// error exit code.
pub fn fail(message: &str) -> u8 {
    eprintln!("report: error: {}", contract::escape::neutralize(message));
    contract::cli::Exit::Error.code()
}
