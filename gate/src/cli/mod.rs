//! One module per subcommand: parse arguments, call the library, render, return an exit code.

pub mod decide;
pub mod dispatch;
pub mod publish;
pub mod publish_plan;
pub mod verify_dispatch;

use std::io::Write;
use std::path::Path;

/// Write to a temporary file beside `path`, then rename it into place.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let fail = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(fail)?;
    tmp.write_all(bytes).map_err(fail)?;
    tmp.as_file().sync_all().map_err(fail)?;
    tmp.persist(path).map_err(|e| fail(e.error))?;
    Ok(())
}
