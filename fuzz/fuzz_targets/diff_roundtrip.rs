//! Round trip: re-serialising the header-only file patches of an accepted parse (mode changes,
//! pure renames and copies, empty files created or deleted) in `git diff`'s canonical form and
//! parsing that again yields the same files (status, both names, both modes).
//!
//! Patches with hunks or a binary payload are left out: the parser does not keep hunk bodies, so
//! they cannot be rendered back.
#![no_main]
#![forbid(unsafe_code)]

use fuzz_support::{FileKey, file_key, is_header_only, render_headers};
use guard::diff::FilePatch;

fn run(data: &[u8]) {
    let Ok(diff) = guard::diff::parse(data, 1 << 20) else {
        return;
    };
    let header_only: Vec<&FilePatch> = diff.patches.iter().filter(|p| is_header_only(p)).collect();
    if header_only.is_empty() {
        return;
    }
    let Some(rendered) = render_headers(&header_only) else {
        panic!("cannot render {header_only:?}");
    };
    let reparsed = match guard::diff::parse(&rendered, 1 << 20) {
        Ok(d) => d,
        Err(e) => panic!(
            "the canonical rendering does not parse: {e}\n{}",
            String::from_utf8_lossy(&rendered)
        ),
    };
    let before: Vec<FileKey> = header_only.iter().map(|p| file_key(p)).collect();
    let after: Vec<FileKey> = reparsed.patches.iter().map(file_key).collect();
    assert_eq!(
        before,
        after,
        "round trip changed the files; rendering:\n{}",
        String::from_utf8_lossy(&rendered)
    );
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| run(data));
