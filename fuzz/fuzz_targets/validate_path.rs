//! `guard::path::validate_path` over arbitrary bytes.
//!
//! Properties: no panic; an accepted path is the input unchanged, within the limits, and has no
//! empty, `.` or `..` component, no backslash, no control character, and no component that is
//! `.git` in any ASCII case — nor one that becomes `.git` once HFS+-ignorable code points are
//! dropped and NTFS's trailing dots/spaces and `:stream` suffix are cut.
#![no_main]
#![forbid(unsafe_code)]

use guard::path::{PathLimits, validate_path};

/// git's `next_hfs_char` list of code points HFS+ ignores.
fn hfs_ignorable(c: char) -> bool {
    matches!(
        c,
        '\u{200c}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{206a}'..='\u{206f}' | '\u{feff}'
    )
}

/// What a component names on HFS+ or NTFS.
fn as_filesystems_read_it(component: &str) -> String {
    let folded: String = component.chars().filter(|&c| !hfs_ignorable(c)).collect();
    let base = folded.split(':').next().unwrap_or_default();
    base.trim_end_matches([' ', '.']).to_owned()
}

fn run(data: &[u8]) {
    let limits = PathLimits::default();
    let Ok(path) = validate_path(data, &limits) else {
        return;
    };
    assert_eq!(path.as_bytes(), data);
    assert!(path.len() <= limits.max_path_bytes);
    assert!(!path.contains('\\'), "backslash in {path:?}");
    assert!(
        !path.chars().any(char::is_control),
        "control char in {path:?}"
    );
    assert!(!path.starts_with('/'), "absolute: {path:?}");
    for component in path.split('/') {
        assert!(
            !matches!(component, "" | "." | ".."),
            "bad component {component:?} in {path:?}"
        );
        assert!(component.len() <= limits.max_component_bytes);
        assert!(
            !component.eq_ignore_ascii_case(".git"),
            "`.git` component in {path:?}"
        );
        assert!(
            !as_filesystems_read_it(component).eq_ignore_ascii_case(".git"),
            "disguised `.git` component {component:?} in {path:?}"
        );
    }
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| run(data));
