//! Validation of one path taken from a diff.
//!
//! A path is attacker bytes until every check here passes. The checks run on the raw `/`-separated
//! components and never on a normalised form: normalising `a/../../b` to `../b` (or worse, to `b`)
//! would hide exactly the traversal we must reject.
//!
//! `.git` is rejected in every disguise git itself refuses (`verify_path`, `verify_dotfile` in
//! git's `read-cache.c`; `is_ntfs_dotgit`, `is_ntfs_dotgitmodules` in `path.c`; `is_hfs_dotgit`,
//! `is_hfs_dotgitmodules` and `next_hfs_char` in `utf8.c`), on every platform: the guard runs on
//! Linux, but the tree it approves may later be checked out on Windows or macOS, where those
//! disguises name the real `.git`. Where git's rule is narrow for a reason that does not hold for
//! us, we are stricter; each such place says so.

use std::borrow::Cow;

use crate::escape;
use crate::rules::RuleId;

/// Length limits for one path, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathLimits {
    /// Longest accepted path, whole.
    pub max_path_bytes: usize,
    /// Longest accepted single component.
    pub max_component_bytes: usize,
}

impl Default for PathLimits {
    /// Linux's `PATH_MAX` and `NAME_MAX`.
    fn default() -> Self {
        Self {
            max_path_bytes: 4096,
            max_component_bytes: 255,
        }
    }
}

/// Why a path was rejected. Checks run in a fixed order (see [`validate_path`]); the first failure
/// is reported.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PathError {
    #[error("path is empty")]
    Empty,
    #[error("path is {len} bytes long, over the limit of {max}")]
    TooLong { len: usize, max: usize },
    #[error("path is not valid UTF-8 (byte 0x{byte:02x} at offset {offset})")]
    NotUtf8 { offset: usize, byte: u8 },
    #[error("path contains control character U+{:04X}", u32::from(*.ch))]
    ControlChar { ch: char },
    #[error("path contains a backslash")]
    Backslash,
    #[error("path contains bidirectional control character U+{:04X}", u32::from(*.ch))]
    BidiControl { ch: char },
    #[error("path is absolute (starts with `/`)")]
    Absolute,
    #[error("path ends with `/`")]
    TrailingSlash,
    #[error("path has an empty component (`//`)")]
    EmptyComponent,
    #[error("path has a `.` component")]
    CurrentDir,
    #[error("path has a `..` component")]
    ParentDir,
    #[error("path component is {len} bytes long, over the limit of {max}")]
    ComponentTooLong { len: usize, max: usize },
    #[error("path component `{}` names `.git`", escape::neutralize(.component))]
    GitDir { component: String },
    #[error("path component `{}` is a disguised `.gitmodules`", escape::neutralize(.component))]
    DisguisedGitmodules { component: String },
    #[error(
        "path component `{}` holds `:`, which Windows reads as an alternate data stream (`name:stream`)",
        escape::neutralize(.component)
    )]
    StreamSeparator { component: String },
    #[error(
        "path component `{}` is a Windows device name (CON, PRN, AUX, NUL, COM1-9, LPT1-9, with any extension): the file cannot be checked out on Windows",
        escape::neutralize(.component)
    )]
    ReservedName { component: String },
    #[error(
        "path component `{}` ends with a dot or a space, which Windows drops: it names another file there",
        escape::neutralize(.component)
    )]
    TrailingDotOrSpace { component: String },
}

impl PathError {
    /// [`RuleId::GitDir`] for `.git` / `.gitmodules` in any case or disguise; [`RuleId::UnsafePath`]
    /// otherwise.
    pub fn rule(&self) -> RuleId {
        match self {
            Self::GitDir { .. } | Self::DisguisedGitmodules { .. } => RuleId::GitDir,
            _ => RuleId::UnsafePath,
        }
    }
}

/// Validate raw path bytes (already unquoted from the diff, no `a/`/`b/` prefix).
/// Returns the path as `&str` when every check passes.
///
/// Order of checks, first failure wins: empty; total length; UTF-8; per character, left to right:
/// control character, backslash, bidi control; leading `/`; trailing `/`; then per component, left
/// to right: empty, `.`, `..`, component length, `.git`, disguised `.gitmodules`.
pub fn validate_path<'a>(raw: &'a [u8], limits: &PathLimits) -> Result<&'a str, PathError> {
    if raw.is_empty() {
        return Err(PathError::Empty);
    }
    if raw.len() > limits.max_path_bytes {
        return Err(PathError::TooLong {
            len: raw.len(),
            max: limits.max_path_bytes,
        });
    }
    let path = std::str::from_utf8(raw).map_err(|e| {
        let offset = e.valid_up_to();
        PathError::NotUtf8 {
            offset,
            byte: raw.get(offset).copied().unwrap_or_default(),
        }
    })?;
    for ch in path.chars() {
        if is_control(ch) {
            return Err(PathError::ControlChar { ch });
        }
        if ch == '\\' {
            return Err(PathError::Backslash);
        }
        if is_bidi_control(ch) {
            return Err(PathError::BidiControl { ch });
        }
    }
    if path.starts_with('/') {
        return Err(PathError::Absolute);
    }
    if path.ends_with('/') {
        return Err(PathError::TrailingSlash);
    }
    for component in path.split('/') {
        validate_component(component, limits)?;
    }
    Ok(path)
}

fn validate_component(component: &str, limits: &PathLimits) -> Result<(), PathError> {
    match component {
        "" => return Err(PathError::EmptyComponent),
        "." => return Err(PathError::CurrentDir),
        ".." => return Err(PathError::ParentDir),
        _ => {}
    }
    if component.len() > limits.max_component_bytes {
        return Err(PathError::ComponentTooLong {
            len: component.len(),
            max: limits.max_component_bytes,
        });
    }
    // git checks HFS+ (ignorable code points) and NTFS (trailing dots and spaces, streams, short
    // names) separately; we check the NTFS forms of the HFS-stripped name, which is their union and
    // a little more (`.g\u{200c}it.`). No legitimate name is lost to the extra strictness.
    let folded = strip_hfs_ignorable(component);
    if is_ntfs_dotgit(folded.as_bytes()) {
        return Err(PathError::GitDir {
            component: component.to_owned(),
        });
    }
    // Plain `.gitmodules` (exactly that name, any ASCII case) is a legitimate file; whether a diff
    // may touch it is the policy's call (its denied surface matches it case-insensitively). Only
    // the disguised forms are path errors: a denylist matching the name would miss them, yet on
    // Windows or macOS they would read or write the real `.gitmodules`.
    if is_ntfs_dotgitmodules(folded.as_bytes()) && !component.eq_ignore_ascii_case(".gitmodules") {
        return Err(PathError::DisguisedGitmodules {
            component: component.to_owned(),
        });
    }
    Ok(())
}

/// `path` as HFS+ and NTFS resolve it: the code points HFS+ ignores removed, an NTFS stream suffix
/// (`:stream`, `::$INDEX_ALLOCATION`) cut, and the trailing dots and spaces NTFS trims dropped from
/// each component. The denylist is matched against this spelling too, so `.hus\u{200c}ky/`,
/// `.github./` or `.github::$INDEX_ALLOCATION/` cannot reach the denied surface in disguise.
pub fn resolved_spelling(path: &str) -> String {
    path.split('/')
        .map(|c| {
            let stripped = strip_hfs_ignorable(c);
            let name = stripped.split(':').next().unwrap_or_default();
            name.trim_end_matches(['.', ' '])
                .chars()
                .map(|ch| ascii_case_twin(ch).unwrap_or(ch))
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// The ASCII letter a case-insensitive file system takes `ch` for, when `ch` is not ASCII: its
/// one-character lower or upper case is an ASCII letter. APFS folds the Kelvin sign `K` to `k`
/// and the long s `ſ` to `s` (Unicode case folding); NTFS compares upper cases, where `ſ` is `S`
/// and the dotless `ı` is `I`. So `.huſky/`, `.vſcode/` and `.gıthub/` are `.husky/`, `.vscode/`
/// and `.github/` on a Windows or macOS checkout, and the denylist must see them so.
pub fn ascii_case_twin(ch: char) -> Option<char> {
    if ch.is_ascii() {
        return None;
    }
    let mut lower = ch.to_lowercase();
    let mut upper = ch.to_uppercase();
    let single = |first: Option<char>, rest: Option<char>| match (first, rest) {
        (Some(c), None) if c.is_ascii_alphabetic() => Some(c.to_ascii_lowercase()),
        _ => None,
    };
    single(lower.next(), lower.next()).or_else(|| single(upper.next(), upper.next()))
}

/// C0 controls, DEL and the C1 range U+0080–U+009F (tab and newline included).
fn is_control(ch: char) -> bool {
    matches!(ch, '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}')
}

/// Unicode's `Bidi_Control` property (UAX #9): the marks (ALM, LRM, RLM), embeddings, overrides
/// and isolates. They reorder how a path is displayed, so a reviewer could read a different path
/// from the one git writes.
fn is_bidi_control(ch: char) -> bool {
    matches!(
        ch,
        '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
    )
}

/// The code points HFS+ ignores in file names, exactly the list of git's `next_hfs_char`.
fn is_hfs_ignorable(ch: char) -> bool {
    matches!(
        ch,
        '\u{200c}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{206a}'..='\u{206f}' | '\u{feff}'
    )
}

fn strip_hfs_ignorable(component: &str) -> Cow<'_, str> {
    if component.chars().any(is_hfs_ignorable) {
        Cow::Owned(
            component
                .chars()
                .filter(|&c| !is_hfs_ignorable(c))
                .collect(),
        )
    } else {
        Cow::Borrowed(component)
    }
}

/// NTFS trims trailing dots and spaces from a name, and `name:stream` addresses an alternate data
/// stream of `name` (`.git::$INDEX_ALLOCATION` is the directory `.git` itself). True when `rest`,
/// what follows a matched name, leaves that name intact.
fn ntfs_trailer_keeps_name(rest: &[u8]) -> bool {
    for &b in rest {
        match b {
            b':' => return true,
            b' ' | b'.' => {}
            _ => return false,
        }
    }
    true
}

fn strip_prefix_ascii_ci<'a>(name: &'a [u8], prefix: &[u8]) -> Option<&'a [u8]> {
    let head = name.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| name.get(prefix.len()..))
        .flatten()
}

/// After a short name's `~`: the numeric tail, one or more ASCII digits not starting with `0`.
/// Returns what follows it.
fn strip_short_name_tail(rest: &[u8]) -> Option<&[u8]> {
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    match rest.first() {
        Some(b'1'..=b'9') => rest.get(digits..),
        _ => None,
    }
}

/// `.git` as NTFS may resolve it: `.git` in any case, then dots/spaces, then the end or a stream;
/// or the 8.3 short name `git~N`.
///
/// Stricter than git: git only rejects `git~1`, reasoning that `.git` is the first entry it creates
/// so it always gets `~1`. That fails when another name squats `git~1` first (git's own
/// "prevent git~1 squatting" test), so we reject any numeric tail (`git~2`, `git~10`).
fn is_ntfs_dotgit(name: &[u8]) -> bool {
    if let Some(rest) = strip_prefix_ascii_ci(name, b".git") {
        return ntfs_trailer_keeps_name(rest);
    }
    strip_prefix_ascii_ci(name, b"git~")
        .and_then(strip_short_name_tail)
        .is_some_and(ntfs_trailer_keeps_name)
}

/// `.gitmodules` as NTFS may resolve it, after git's `is_ntfs_dotgitmodules`: the long name with
/// dots/spaces/stream after it, the short name `gitmod~N`, or the hashed short name Windows falls
/// back to (`gi7eba~N` and shorter prefixes of `gi7eba` with longer tails, 8 bytes in all).
///
/// This matches plain `.gitmodules` too; the caller exempts it. Stricter than git on the tail of
/// `gitmod~N` (git: `1`..=`4`, we: any numeric tail), for the same squatting reason as `git~N`.
fn is_ntfs_dotgitmodules(name: &[u8]) -> bool {
    if let Some(rest) = strip_prefix_ascii_ci(name, b".gitmodules") {
        return ntfs_trailer_keeps_name(rest);
    }
    if let Some(rest) = strip_prefix_ascii_ci(name, b"gitmod~") {
        return strip_short_name_tail(rest).is_some_and(ntfs_trailer_keeps_name);
    }
    is_ntfs_hashed_short_name(name, b"gi7eba")
}

/// git's fall-back short-name rule from `is_ntfs_dot_generic`: exactly 8 bytes made of a (possibly
/// empty) prefix of `prefix` in any ASCII case, `~`, a digit `1`..=`9`, and digits up to 8 bytes;
/// then dots/spaces and the end or a stream. (An empty prefix, `~1000000`, matches in git too.)
fn is_ntfs_hashed_short_name(name: &[u8], prefix: &[u8; 6]) -> bool {
    let (Some(head), Some(rest)) = (name.get(..8), name.get(8..)) else {
        return false;
    };
    let Some(tilde) = head.iter().position(|&b| b == b'~') else {
        return false;
    };
    let (Some(stem), Some(wanted)) = (head.get(..tilde), prefix.get(..tilde)) else {
        return false;
    };
    let Some(tail) = head.get(tilde + 1..) else {
        return false;
    };
    stem.eq_ignore_ascii_case(wanted)
        && matches!(tail.first(), Some(b'1'..=b'9'))
        && tail.iter().all(u8::is_ascii_digit)
        && ntfs_trailer_keeps_name(rest)
}

/// Whether `path` can be checked out unchanged on Windows, the rules of the `portable-paths`
/// policy switch: no component holds `:` (an NTFS alternate data stream, `.github::$INDEX_ALLOCATION`
/// is the directory `.github`), is a reserved device name with or without an extension, or ends
/// with a dot or a space (Windows drops them, so `a.` and `a` are one file).
///
/// Sources: Microsoft, "Naming Files, Paths, and Namespaces"
/// (<https://learn.microsoft.com/windows/win32/fileio/naming-a-file>): the reserved names CON, PRN,
/// AUX, NUL, COM1-COM9, COM¹-COM³, LPT1-LPT9, LPT¹-LPT³, also "followed immediately by an
/// extension", and no name ending in a space or a period; CPython's `ntpath.isreserved`, which
/// also strips spaces before the extension (`nul .txt`) and adds `CONIN$` and `CONOUT$`.
pub fn check_portable(path: &str) -> Result<(), PathError> {
    for component in path.split('/') {
        if component.contains(':') {
            return Err(PathError::StreamSeparator {
                component: component.to_owned(),
            });
        }
        if component.ends_with(['.', ' ']) {
            return Err(PathError::TrailingDotOrSpace {
                component: component.to_owned(),
            });
        }
        if is_windows_device_name(component) {
            return Err(PathError::ReservedName {
                component: component.to_owned(),
            });
        }
    }
    Ok(())
}

/// `CON`, `nul.txt`, `Com1.tar.gz`, `lpt\u{b9}`, `aux .c`: the part before the first dot, without
/// trailing spaces, is a device name in any ASCII case.
fn is_windows_device_name(component: &str) -> bool {
    let stem = component
        .split('.')
        .next()
        .unwrap_or_default()
        .trim_end_matches(' ');
    let upper = stem.to_ascii_uppercase();
    if matches!(
        upper.as_str(),
        "CON" | "PRN" | "AUX" | "NUL" | "CONIN$" | "CONOUT$"
    ) {
        return true;
    }
    let (Some(prefix), Some(digit)) = (upper.get(..3), upper.get(3..)) else {
        return false;
    };
    matches!(prefix, "COM" | "LPT")
        && matches!(
            digit,
            "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9" | "\u{b9}" | "\u{b2}" | "\u{b3}"
        )
}

/// The number of `/`-separated components of `path`.
pub fn component_count(path: &[u8]) -> usize {
    memchr::memchr_iter(b'/', path).count() + 1
}

/// One component as a case- and normalization-insensitive file system finds it (macOS, Windows):
/// canonically decomposed, without the code points HFS+ ignores, lower case, and without the
/// trailing dots and spaces NTFS drops. Two components with one key name the same entry there.
pub fn fold_component(component: &[u8]) -> String {
    // ASCII is its own canonical decomposition and holds no ignorable code point and no case twin
    // (those are all above U+007F), so lower-casing it is the whole fold: the same key, without
    // the Unicode tables (most components of most paths are ASCII).
    if component.is_ascii() {
        let mut folded: String = component
            .iter()
            .map(|&b| char::from(b.to_ascii_lowercase()))
            .collect();
        let kept = folded.trim_end_matches(['.', ' ']).len();
        folded.truncate(kept);
        return folded;
    }
    fold_unicode(component)
}

/// [`fold_component`] for any bytes, through the Unicode tables.
fn fold_unicode(component: &[u8]) -> String {
    use unicode_normalization::UnicodeNormalization;
    let mut folded: String = String::from_utf8_lossy(component)
        .nfd()
        .filter(|&c| !is_hfs_ignorable(c))
        .map(|c| ascii_case_twin(c).unwrap_or(c))
        .flat_map(char::to_lowercase)
        .collect();
    let kept = folded.trim_end_matches(['.', ' ']).len();
    folded.truncate(kept);
    folded
}

/// A component in the form of a Windows 8.3 short name: `STEM~DIGITS`, then optionally `.EXT`.
/// Windows resolves such a name to the long name it was generated for, when that entry exists
/// (`GITHUB~1` opens `.github`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShortName {
    /// Upper-cased, up to 8 characters.
    stem: String,
    /// Upper-cased, up to 3 characters; empty when there is none.
    ext: String,
}

impl ShortName {
    /// `Some` when `component` (after NTFS trims trailing dots and spaces) has the form of a short
    /// name: at most 8 characters before an optional extension of at most 3, a `~` followed by a
    /// numeric tail not starting with `0`.
    pub fn parse(component: &str) -> Option<ShortName> {
        let name = component.trim_end_matches(['.', ' ']);
        let (base, ext) = match name.rfind('.') {
            Some(dot) if dot > 0 => (name.get(..dot)?, name.get(dot + 1..)?),
            _ => (name, ""),
        };
        if !base.is_ascii() || !ext.is_ascii() || base.len() > 8 || ext.len() > 3 {
            return None;
        }
        let tilde = base.rfind('~')?;
        let (stem, tail) = (base.get(..tilde)?, base.get(tilde + 1..)?);
        if !matches!(tail.as_bytes().first(), Some(b'1'..=b'9'))
            || !tail.bytes().all(|b| b.is_ascii_digit())
        {
            return None;
        }
        Some(ShortName {
            stem: stem.to_ascii_uppercase(),
            ext: ext.to_ascii_uppercase(),
        })
    }

    /// Whether Windows could have generated this short name for the long name `long`, so that
    /// the short name opens it. Windows drops leading dots, spaces and the dots before the
    /// extension, maps other characters that are invalid in 8.3 names to `_`, keeps up to six
    /// characters of the base and three of the extension, and after a few collisions replaces
    /// all but two characters of the base with a hash of four hex digits (git's `gi7eba~1` for
    /// `.gitmodules`). The hash is unknown, so any four hex digits are taken to match: an
    /// over-approximation, which can only reject more.
    pub fn may_name(&self, long: &str) -> bool {
        let (base, ext) = short_name_parts(long);
        if !self.ext.is_empty() && !ext.starts_with(&self.ext) {
            return false;
        }
        if !self.stem.is_empty() && base.starts_with(&self.stem) {
            return true;
        }
        // The hashed form: a prefix of at most two characters of the base, then hex digits.
        let kept = base.len().min(2).min(self.stem.len());
        let (Some(head), Some(hash)) = (self.stem.get(..kept), self.stem.get(kept..)) else {
            return false;
        };
        base.starts_with(head)
            && (1..=4).contains(&hash.len())
            && hash.bytes().all(|b| b.is_ascii_hexdigit())
    }
}

/// The upper-cased base and extension from which Windows derives a short name for `long`.
fn short_name_parts(long: &str) -> (String, String) {
    let name = long.trim_start_matches(['.', ' ']);
    let (base, ext) = match name.rfind('.') {
        Some(dot) => (&name[..dot], &name[dot + 1..]),
        None => (name, ""),
    };
    let clean = |s: &str, keep: usize| -> String {
        s.chars()
            .filter(|&c| c != '.' && c != ' ')
            .map(|c| {
                if c.is_ascii_alphanumeric() || "!#$%&'()-@^_`{}~".contains(c) {
                    c.to_ascii_uppercase()
                } else {
                    '_'
                }
            })
            .take(keep)
            .collect()
    };
    (clean(base, 8), clean(ext, 3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ntfs_dotgit_matches_git_and_squatted_short_names() {
        for name in [
            ".git",
            ".GiT",
            ".git. .",
            ".git::$INDEX_ALLOCATION",
            "git~1",
            "GIT~2",
            "git~10 .",
        ] {
            assert!(is_ntfs_dotgit(name.as_bytes()), "{name:?}");
        }
        for name in [
            ".gitx", ".git x", "git~", "git~0", "git~1x", "git~01", "xgit~1", "git",
        ] {
            assert!(!is_ntfs_dotgit(name.as_bytes()), "{name:?}");
        }
    }

    #[test]
    fn ntfs_dotgitmodules_follows_gits_own_test_list() {
        // From git's t0060-path-utils.sh, "match .gitmodules".
        for name in [
            ".gitmodules",
            ".Gitmodules . ",
            "GITMOD~1",
            "gitmod~4. ",
            "GI7EBA~1",
            "gi7eba~9",
            "GI7EB~10",
            "GI7E~999",
            "~1000000",
            "~9999999",
            ".gitmodules:$DATA",
            "gitmod~4 . :$DATA",
        ] {
            assert!(is_ntfs_dotgitmodules(name.as_bytes()), "{name:?}");
        }
        for name in [
            ".gitmodules x",
            ".gitmodules .x",
            " .gitmodules",
            "..gitmodules",
            "gitmodules",
            ".gitmodule",
            "GI7EBA~",
            "GI7EBA~0",
            "GI7EBA~~1",
            "GI7EBA~X",
            "Gx7EBA~1",
            "GI7EBX~1",
            "GI7EB~1",
            "GI7EB~01",
            "GI7EB~1X",
        ] {
            assert!(!is_ntfs_dotgitmodules(name.as_bytes()), "{name:?}");
        }
    }

    #[test]
    fn resolved_spelling_and_folded_components_follow_hfs_and_ntfs() {
        assert_eq!(
            resolved_spelling(".hus\u{200c}ky/pre-commit"),
            ".husky/pre-commit"
        );
        assert_eq!(
            resolved_spelling(".github. /workflows/x.yml"),
            ".github/workflows/x.yml"
        );
        assert_eq!(resolved_spelling("src/lib.rs"), "src/lib.rs");
        assert_eq!(
            resolved_spelling(".github::$INDEX_ALLOCATION/workflows/x.yml"),
            ".github/workflows/x.yml"
        );
        assert_eq!(
            fold_component("Caf\u{e9}.TXT".as_bytes()),
            fold_component("cafe\u{301}.txt".as_bytes())
        );
        assert_ne!(fold_component(b"a.txt"), fold_component(b"b.txt"));
    }

    /// Every non-ASCII character whose one-character lower or upper case is an ASCII letter is
    /// that letter on a case-insensitive file system; the list is derived from the Unicode tables
    /// (not written by hand), and no other character is folded.
    #[test]
    fn ascii_components_fold_as_through_the_unicode_tables() {
        let mut samples: Vec<Vec<u8>> = (0u8..=0x7f).map(|b| vec![b]).collect();
        for s in [
            "",
            ".",
            "..",
            "a.",
            "A. .",
            " . ",
            ".GitHub",
            "Makefile",
            "CON.txt . ",
            "a~1",
            "K",
            "ss",
            "I",
            "x\u{7f}y",
            "tab\there",
            "Mixed-Case_123.RS..",
        ] {
            samples.push(s.as_bytes().to_vec());
        }
        for b in 0u8..=0x7f {
            samples.push([b"Ab", &[b][..], b"Z. "].concat());
        }
        for sample in &samples {
            assert_eq!(fold_component(sample), fold_unicode(sample), "{sample:?}");
        }
        // Not ASCII: the tables decide (the Kelvin sign is the letter k; a composed é is e and a
        // combining acute).
        assert_eq!(fold_component("\u{212a}".as_bytes()), "k");
        assert_eq!(fold_component("É".as_bytes()), "e\u{301}");
    }

    #[test]
    fn ascii_case_twins_are_exactly_the_unicode_ones() {
        let mut twins = Vec::new();
        for ch in (0x80..=0x10FFFF).filter_map(char::from_u32) {
            if let Some(ascii) = ascii_case_twin(ch) {
                twins.push((ch, ascii));
            }
        }
        assert_eq!(
            twins,
            vec![('\u{131}', 'i'), ('\u{17f}', 's'), ('\u{212a}', 'k')],
            "dotless i, long s, Kelvin sign"
        );
        assert_eq!(
            resolved_spelling(".hu\u{17f}ky/pre-commit"),
            ".husky/pre-commit"
        );
        assert_eq!(
            resolved_spelling(".g\u{131}thub/workflows/x.yml"),
            ".github/workflows/x.yml"
        );
        assert_eq!(resolved_spelling("lefthoo\u{212a}.yml"), "lefthook.yml");
        assert_eq!(
            resolved_spelling("docs/\u{130}stanbul.md"),
            "docs/\u{130}stanbul.md"
        );
        assert_eq!(
            fold_component("\u{17f}rc".as_bytes()),
            fold_component(b"SRC")
        );
    }

    #[test]
    fn hfs_stripping_removes_only_gits_ignorables() {
        assert_eq!(strip_hfs_ignorable(".g\u{200c}i\u{feff}t"), ".git");
        assert_eq!(strip_hfs_ignorable(".g\u{200b}it"), ".g\u{200b}it");
        assert!(matches!(
            strip_hfs_ignorable("plain"),
            Cow::Borrowed("plain")
        ));
    }

    #[test]
    fn display_escapes_the_component() {
        let err = PathError::GitDir {
            component: ".g\u{200c}it".to_owned(),
        };
        assert_eq!(
            err.to_string(),
            "path component `.g\\u{200c}it` names `.git`"
        );
        assert_eq!(
            PathError::ControlChar { ch: '\u{1b}' }.to_string(),
            "path contains control character U+001B"
        );
    }
}
