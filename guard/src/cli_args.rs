//! Argument parsing shared by the three binaries: usage errors exit 2, `--help`/`--version` exit 0.

use std::process::ExitCode;

/// The documented exit code for usage, configuration and I/O errors.
pub const EXIT_USAGE: u8 = 2;

/// Parse the process arguments into `C`, or print clap's message and return the exit code to end
/// with: success for `--help`/`--version`, [`EXIT_USAGE`] for every other parse failure.
pub fn parse<C: clap::Parser>() -> Result<C, ExitCode> {
    C::try_parse().map_err(|err| {
        let _ = err.print();
        match err.kind() {
            clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                ExitCode::SUCCESS
            }
            _ => ExitCode::from(EXIT_USAGE),
        }
    })
}

/// Write `text` to standard output. A closed or failing stdout is an I/O error for the caller to
/// turn into exit 2, not a panic (`print!` panics on a broken pipe).
pub fn emit(text: &str) -> Result<(), String> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| format!("cannot write to standard output: {e}"))
}
