//! The command-line kit the binaries share: one exit-code type, argument parsing, bounded reads,
//! atomic writes, and a panic hook. Exit codes are the documented ones everywhere: `0` accept or
//! pass, `1` reject or fail, `2` usage, configuration or I/O error — a panic included.

use std::io::{self, Read, Write};
use std::path::Path;
use std::process::ExitCode;

/// How a command ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// `0`: the diff was accepted, the gate passed, the work was done and proven.
    Pass,
    /// `1`: a verdict or decision against: rejected, failed, not proven.
    Fail,
    /// `2`: usage, configuration or I/O error; never a verdict.
    Error,
}

impl Exit {
    pub const fn code(self) -> u8 {
        match self {
            Exit::Pass => 0,
            Exit::Fail => 1,
            Exit::Error => 2,
        }
    }

    /// [`Exit::Pass`] when `passed`, else [`Exit::Fail`].
    pub fn verdict(passed: bool) -> Exit {
        if passed { Exit::Pass } else { Exit::Fail }
    }
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> ExitCode {
        ExitCode::from(exit.code())
    }
}

/// Makes a panic end the process with [`Exit::Error`] (and a one-line message naming the binary)
/// instead of Rust's 101, which is outside the documented codes.
pub fn install_panic_hook(binary: &'static str) {
    std::panic::set_hook(Box::new(move |info| {
        let location = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        let _ = writeln!(
            io::stderr(),
            "{binary}: internal error{location}: {}",
            crate::escape::neutralize(&message)
        );
        std::process::exit(i32::from(Exit::Error.code()));
    }));
}

/// Parse the process arguments into `C`, or print clap's message and return how to end: success
/// for `--help`/`--version`, [`Exit::Error`] for every other parse failure.
pub fn parse_args<C: clap::Parser>() -> Result<C, ExitCode> {
    C::try_parse().map_err(|err| {
        let _ = err.print();
        match err.kind() {
            clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                ExitCode::SUCCESS
            }
            _ => Exit::Error.into(),
        }
    })
}

/// Write `text` to standard output. A closed or failing stdout is an I/O error for the caller to
/// turn into exit 2, not a panic (`print!` panics on a broken pipe).
pub fn emit(text: &str) -> Result<(), String> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| format!("cannot write to standard output: {e}"))
}

/// Read at most `limit` bytes from `source` (a file, or `-` for standard input); more is an
/// error, never a truncated read. `what` names the input in messages.
pub fn read_bounded(source: &str, limit: u64, what: &str) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    let shown = crate::escape::neutralize(source);
    let read = if source == "-" {
        io::stdin()
            .lock()
            .take(limit.saturating_add(1))
            .read_to_end(&mut bytes)
    } else {
        std::fs::File::open(source)
            .and_then(|f| f.take(limit.saturating_add(1)).read_to_end(&mut bytes))
    };
    read.map_err(|e| format!("cannot read {what} {shown}: {e}"))?;
    if bytes.len() as u64 > limit {
        return Err(format!(
            "{what} {shown} is larger than the limit of {limit} bytes"
        ));
    }
    Ok(bytes)
}

/// Write `bytes` to `path` atomically: a temporary file in the same directory, synced, then
/// renamed over `path`. A reader sees the old file or the whole new one, never a part.
///
/// The documents written this way are reports and plans, not secrets, and the job's later steps
/// read them as the runner user: the file is `0644`, and when root writes it into a directory
/// another user owns (a `sudo` step writing into the runner's `RUNNER_TEMP`), it is given to
/// that directory's owner and group, as a file that user wrote there would be.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let shown = crate::escape::display_bytes(path.as_os_str().as_encoded_bytes());
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let mut file = tempfile::Builder::new()
        .prefix(".agent-team-")
        .tempfile_in(dir)
        .map_err(|e| format!("cannot write {shown}: {e}"))?;
    file.write_all(bytes)
        .and_then(|()| give_to_directory_owner(file.as_file(), dir))
        .and_then(|()| file.as_file().sync_all())
        .map_err(|e| format!("cannot write {shown}: {e}"))?;
    file.persist(path)
        .map_err(|e| format!("cannot write {shown}: {}", e.error))?;
    Ok(())
}

/// `0644`; and when the file is root's (it was created by root) and `dir` is another user's,
/// that user's and group's.
fn give_to_directory_owner(file: &std::fs::File, dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    file.set_permissions(std::fs::Permissions::from_mode(0o644))?;
    let created = file.metadata()?;
    let parent = std::fs::metadata(dir)?;
    if created.uid() == 0 && parent.uid() != 0 {
        std::os::unix::fs::fchown(file, Some(parent.uid()), Some(parent.gid()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    #[test]
    fn exit_codes_are_the_documented_ones() {
        assert_eq!(
            [Exit::Pass, Exit::Fail, Exit::Error].map(Exit::code),
            [0, 1, 2]
        );
        assert_eq!(Exit::verdict(true), Exit::Pass);
        assert_eq!(Exit::verdict(false), Exit::Fail);
    }

    #[test]
    fn bounded_reads_refuse_more_than_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in");
        std::fs::write(&path, b"12345").unwrap();
        let source = path.to_str().unwrap();
        assert_eq!(read_bounded(source, 5, "input").unwrap(), b"12345");
        let err = read_bounded(source, 4, "input").unwrap_err();
        assert!(err.contains("larger than the limit of 4 bytes"), "{err}");
        assert!(read_bounded("/nonexistent/x", 4, "input").is_err());
    }

    #[test]
    fn atomic_writes_replace_whole_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("doc.json");
        write_atomic(&path, b"first").unwrap();
        write_atomic(&path, b"second").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"second");
        let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temporary file is left behind");
        assert!(write_atomic(&dir.path().join("missing/doc.json"), b"x").is_err());
    }

    /// A `sudo` step's document in the runner's directory is the runner's to read (a hosted
    /// runner's later steps run as `runner`, uid 1001, group `docker`, 121).
    #[test]
    fn a_document_root_writes_into_another_users_directory_is_theirs_and_readable() {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::metadata(dir.path()).unwrap().uid() == 0;
        if root {
            std::os::unix::fs::chown(dir.path(), Some(1001), Some(121)).unwrap();
        }
        let path = dir.path().join("build-test.json");
        write_atomic(&path, b"{}").unwrap();
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(meta.permissions().mode() & 0o7777, 0o644);
        if root {
            assert_eq!((meta.uid(), meta.gid()), (1001, 121));
        }
        // Root's own directory keeps root's file.
        let own = tempfile::tempdir().unwrap();
        let path = own.path().join("doc.json");
        write_atomic(&path, b"{}").unwrap();
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(meta.uid(), std::fs::metadata(own.path()).unwrap().uid());
        assert_eq!(meta.permissions().mode() & 0o7777, 0o644);
    }
}
