//! Argument parsing shared by the three binaries: usage errors exit 2, `--help`/`--version` exit 0.

use std::process::ExitCode;

/// The documented exit code for usage, configuration and I/O errors.
pub const EXIT_USAGE: u8 = 2;

/// Make a panic end the process like any other error: a message on stderr (escaped for the
/// terminal: it can quote input) and exit code [`EXIT_USAGE`], from whichever thread panicked.
/// Without it a panic exits 101 (or aborts, with `panic = "abort"`); a caller that reads the exit
/// code must never see a crash as anything but an error. Each binary installs it first thing.
pub fn exit_2_on_panic(program: &'static str) {
    std::panic::set_hook(Box::new(move |info| {
        let location = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let payload = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(no message)".to_owned());
        eprintln!(
            "{program}: internal error{location}: {}",
            crate::escape::terminal(&payload)
        );
        std::process::exit(i32::from(EXIT_USAGE));
    }));
}

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
