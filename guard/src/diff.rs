//! A strict reader of the canonical form `git diff` emits, written for this project.
//!
//! `git apply` is lenient: it skips text between patches, reads traditional `---`/`+++` patches,
//! strips a leading component from whatever names it finds and takes names from `---`/`+++` or
//! `rename to` over the `diff --git` line. Every leniency is a place where a validator and git can
//! read the same bytes differently, so this reader accepts only what `git diff` itself produces and
//! rejects everything else as [`ParseErrorKind`]: it never guesses.
//!
//! Paths stay raw bytes here (C-unquoted, prefix removed); [`crate::path`] decides whether they are
//! safe. Hunk bodies are not copied: a hunk is checked for exact line counts and its content for
//! UTF-8 without NUL while it is read, and only the findings are kept.

use contract::verdict::ChangeKind;

/// Regular file, executable file, symlink, gitlink: the only modes `git diff` writes.
pub const MODE_FILE: u32 = 0o100644;
pub const MODE_EXEC: u32 = 0o100755;
pub const MODE_SYMLINK: u32 = 0o120000;
pub const MODE_GITLINK: u32 = 0o160000;

/// A parsed candidate diff: one [`FilePatch`] per `diff --git` header, in order.
#[derive(Debug, Clone, Default)]
pub struct CandidateDiff {
    pub patches: Vec<FilePatch>,
    /// Length in bytes of the longest line.
    pub longest_line: usize,
}

/// One file patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilePatch {
    /// 1-based line of the `diff --git` header.
    pub line: usize,
    pub status: ChangeKind,
    /// Old name (without `a/`), absent for an added file.
    pub old_path: Option<Vec<u8>>,
    /// New name (without `b/`), absent for a deleted file.
    pub new_path: Option<Vec<u8>>,
    pub old_mode: Option<u32>,
    pub new_mode: Option<u32>,
    /// The line of a `GIT binary patch` or `Binary files ... differ` marker.
    pub binary: Option<usize>,
    pub hunks: Vec<Hunk>,
    /// The first content line that is not UTF-8 text or holds a NUL byte; when several lines
    /// are, the first of the gravest kind ([`ContentIssueKind`] is ordered by gravity).
    pub content_issue: Option<ContentIssue>,
    /// For a patch whose new side is a symbolic link (mode 120000), the link's target as the
    /// hunk writes it: the new side of its one hunk, starting at line 1, with the newline of each
    /// line but a last one marked `\ No newline at end of file`. `None` for any other patch, or
    /// when the hunks do not write the whole new side.
    pub link_target: Option<Vec<u8>>,
}

/// A hunk's header; its body was verified against these counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hunk {
    pub line: usize,
    pub old_start: u64,
    pub old_count: u64,
    pub new_start: u64,
    pub new_count: u64,
    /// Lines present on both sides (context); `git diff -U0` writes hunks without any.
    pub context_lines: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContentIssue {
    pub line: usize,
    pub kind: ContentIssueKind,
}

/// What is wrong with a content line, least grave first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ContentIssueKind {
    /// The line is not UTF-8 (git still diffs it as text: it knows no encodings).
    NotUtf8,
    /// The line is not UTF-8 and holds this C0 control (other than TAB, CR, FF) or DEL.
    Control(u8),
    /// The line holds a NUL byte: git would take the file for binary.
    Nul,
}

/// Why the bytes are not a canonical git diff.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {kind}")]
pub struct ParseError {
    pub line: usize,
    pub kind: ParseErrorKind,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseErrorKind {
    #[error("the diff is empty")]
    Empty,
    #[error("the diff does not end with a newline")]
    NoFinalNewline,
    #[error(
        "expected a `diff --git` header, found `{found}`; text outside file patches (a commit message, mail headers, a diffstat) is not accepted: pass the output of `git diff` alone"
    )]
    ExpectedDiffHeader { found: String },
    #[error("the input is not a text diff ({what}): pass the uncompressed output of `git diff`")]
    NotText { what: &'static str },
    #[error("carriage return in a header line")]
    CarriageReturn,
    #[error("malformed `diff --git` header: {0}")]
    BadDiffHeader(&'static str),
    #[error("malformed quoted name: {0}")]
    BadQuoting(&'static str),
    #[error("unknown or misplaced header line `{found}`")]
    UnknownHeader { found: String },
    #[error("header `{0}` appears twice")]
    RepeatedHeader(&'static str),
    #[error("invalid mode `{found}`: only 100644, 100755, 120000 and 160000 are canonical")]
    BadMode { found: String },
    #[error("malformed `{0}` line")]
    BadHeaderValue(&'static str),
    #[error("inconsistent headers: {0}")]
    Inconsistent(&'static str),
    #[error("the {which} name `{found}` does not agree with `{with}` from the `diff --git` header")]
    NameMismatch {
        which: &'static str,
        found: String,
        with: String,
    },
    #[error("malformed hunk header `{found}`")]
    BadHunkHeader { found: String },
    #[error("hunk body does not match its header's line counts")]
    HunkCount,
    #[error("unexpected line `{found}` in a hunk")]
    BadHunkLine { found: String },
    #[error("`\\ No newline at end of file` is misplaced")]
    MisplacedNoNewline,
    #[error("the hunk changes nothing (its old and new sides are the same lines)")]
    HunkChangesNothing,
    #[error("hunks out of order or overlapping")]
    HunkOrder,
    #[error("file patch changes nothing")]
    NoChange,
    #[error("a line of {len} bytes exceeds the limit of {max}")]
    LineTooLong { len: usize, max: usize },
}

impl ParseErrorKind {
    /// Header disagreements are `ambiguous-diff`; everything else is `malformed-diff`.
    pub fn is_ambiguity(&self) -> bool {
        matches!(
            self,
            ParseErrorKind::NameMismatch { .. } | ParseErrorKind::Inconsistent(_)
        )
    }
}

/// A cursor over the lines of the input (each without its `\n`), found lazily so that a large
/// diff is never copied or indexed as a whole.
struct Lines<'a> {
    /// The input without its final `\n`.
    body: &'a [u8],
    /// Start of the line after the current one, or `None` past the end.
    next_start: Option<usize>,
    current: Option<&'a [u8]>,
    /// Byte offset of the current line (the input's length past the end).
    current_start: usize,
    /// 1-based number of the current line.
    number: usize,
    max_line_bytes: usize,
    longest: usize,
}

impl<'a> Lines<'a> {
    fn new(body: &'a [u8], max_line_bytes: usize) -> Result<Self, ParseError> {
        let mut lines = Lines {
            body,
            next_start: Some(0),
            current_start: 0,
            current: None,
            number: 0,
            max_line_bytes,
            longest: 0,
        };
        lines.advance()?;
        Ok(lines)
    }
    fn peek(&self) -> Option<&'a [u8]> {
        self.current
    }
    /// 1-based number of the line `peek` returns.
    fn number(&self) -> usize {
        self.number
    }
    /// Byte offset of the line `peek` returns (the input's length past the end).
    fn offset(&self) -> usize {
        self.current_start
    }
    fn advance(&mut self) -> Result<(), ParseError> {
        self.number += 1;
        let Some(start) = self.next_start else {
            self.current = None;
            self.current_start = self.body.len();
            return Ok(());
        };
        let rest = &self.body[start..];
        let (line, next) = match memchr::memchr(b'\n', rest) {
            Some(end) => (&rest[..end], Some(start + end + 1)),
            None => (rest, None),
        };
        if line.len() > self.max_line_bytes {
            return Err(err(
                self.number,
                ParseErrorKind::LineTooLong {
                    len: line.len(),
                    max: self.max_line_bytes,
                },
            ));
        }
        self.longest = self.longest.max(line.len());
        self.current = Some(line);
        self.current_start = start;
        self.next_start = next;
        Ok(())
    }
}

fn err(line: usize, kind: ParseErrorKind) -> ParseError {
    ParseError { line, kind }
}

fn show(bytes: &[u8]) -> String {
    let cut = &bytes[..bytes.len().min(80)];
    crate::escape::display_bytes(cut)
}

/// Why `input` is plainly not a text diff, judged before any line is read: a compressed or archived
/// file by its magic number, or a NUL byte in the first 8,000 bytes (git's own `buffer_is_binary`
/// test), unless the input starts like a diff (a NUL in a patch's content is `invalid-content`).
fn not_text(input: &[u8]) -> Option<&'static str> {
    const MAGIC: &[(&[u8], &str)] = &[
        (b"\x1f\x8b", "it starts like a gzip file"),
        (b"PK\x03\x04", "it starts like a zip file"),
        (b"BZh", "it starts like a bzip2 file"),
        (b"\xfd7zXZ\x00", "it starts like an xz file"),
        (b"\x28\xb5\x2f\xfd", "it starts like a zstd file"),
    ];
    if input.starts_with(b"diff --git ") {
        return None;
    }
    if let Some((_, what)) = MAGIC.iter().find(|(magic, _)| input.starts_with(magic)) {
        return Some(what);
    }
    let head = &input[..input.len().min(8000)];
    memchr::memchr(0, head).map(|_| "it holds a NUL byte, so it is binary")
}

/// Parse `input` as a sequence of canonical git file patches. `max_line_bytes` bounds every line.
pub fn parse(input: &[u8], max_line_bytes: usize) -> Result<CandidateDiff, ParseError> {
    if input.is_empty() {
        return Err(err(1, ParseErrorKind::Empty));
    }
    if let Some(what) = not_text(input) {
        return Err(err(1, ParseErrorKind::NotText { what }));
    }
    let body = match input.strip_suffix(b"\n") {
        Some(body) => body,
        None => {
            let line = input.iter().filter(|&&b| b == b'\n').count() + 1;
            return Err(err(line, ParseErrorKind::NoFinalNewline));
        }
    };
    let mut lines = Lines::new(body, max_line_bytes)?;
    let mut patches = Vec::new();
    let mut sides = HunkSides::default();
    while let Some(line) = lines.peek() {
        if !line.starts_with(b"diff --git ") {
            return Err(err(
                lines.number(),
                ParseErrorKind::ExpectedDiffHeader { found: show(line) },
            ));
        }
        patches.push(parse_file_patch(&mut lines, &mut sides)?);
    }
    Ok(CandidateDiff {
        patches,
        longest_line: lines.longest,
    })
}

/// Each side's lines of the hunk being read (slices into the input, never copies), kept from hunk
/// to hunk and file patch to file patch so that their buffers grow once per diff.
#[derive(Default)]
struct HunkSides<'a> {
    old: Vec<&'a [u8]>,
    new: Vec<&'a [u8]>,
}

/// Extended header values collected for one file patch.
#[derive(Default)]
struct Headers {
    old_mode: Option<u32>,
    new_mode: Option<u32>,
    deleted_mode: Option<u32>,
    new_file_mode: Option<u32>,
    similarity: Option<u32>,
    dissimilarity: Option<u32>,
    rename_from: Option<Vec<u8>>,
    rename_to: Option<Vec<u8>>,
    copy_from: Option<Vec<u8>>,
    copy_to: Option<Vec<u8>>,
    index: Option<Option<u32>>,
}

fn set_once<T>(
    slot: &mut Option<T>,
    value: T,
    name: &'static str,
    line: usize,
) -> Result<(), ParseError> {
    if slot.is_some() {
        return Err(err(line, ParseErrorKind::RepeatedHeader(name)));
    }
    *slot = Some(value);
    Ok(())
}

fn parse_file_patch<'a>(
    lines: &mut Lines<'a>,
    sides: &mut HunkSides<'a>,
) -> Result<FilePatch, ParseError> {
    let header_line = lines.number();
    let header = lines.peek().unwrap_or_default();
    if header.contains(&b'\r') {
        return Err(err(header_line, ParseErrorKind::CarriageReturn));
    }
    let header_names =
        parse_diff_git_names(&header[b"diff --git ".len()..]).map_err(|k| err(header_line, k))?;
    lines.advance()?;

    let mut h = Headers::default();
    while let Some(line) = lines.peek() {
        let n = lines.number();
        if line.starts_with(b"diff --git ")
            || line.starts_with(b"--- ")
            || line.starts_with(b"Binary files ")
        {
            break;
        }
        if line == b"GIT binary patch" {
            break;
        }
        if line.contains(&b'\r') {
            return Err(err(n, ParseErrorKind::CarriageReturn));
        }
        if let Some(v) = line.strip_prefix(b"old mode ") {
            set_once(&mut h.old_mode, parse_mode(v, n)?, "old mode", n)?;
        } else if let Some(v) = line.strip_prefix(b"new mode ") {
            set_once(&mut h.new_mode, parse_mode(v, n)?, "new mode", n)?;
        } else if let Some(v) = line.strip_prefix(b"deleted file mode ") {
            set_once(
                &mut h.deleted_mode,
                parse_mode(v, n)?,
                "deleted file mode",
                n,
            )?;
        } else if let Some(v) = line.strip_prefix(b"new file mode ") {
            set_once(&mut h.new_file_mode, parse_mode(v, n)?, "new file mode", n)?;
        } else if let Some(v) = line.strip_prefix(b"similarity index ") {
            set_once(
                &mut h.similarity,
                parse_percent(v, "similarity index", n)?,
                "similarity index",
                n,
            )?;
        } else if let Some(v) = line.strip_prefix(b"dissimilarity index ") {
            set_once(
                &mut h.dissimilarity,
                parse_percent(v, "dissimilarity index", n)?,
                "dissimilarity index",
                n,
            )?;
        } else if let Some(v) = line.strip_prefix(b"rename from ") {
            set_once(&mut h.rename_from, parse_bare_name(v, n)?, "rename from", n)?;
        } else if let Some(v) = line.strip_prefix(b"rename to ") {
            set_once(&mut h.rename_to, parse_bare_name(v, n)?, "rename to", n)?;
        } else if let Some(v) = line.strip_prefix(b"copy from ") {
            set_once(&mut h.copy_from, parse_bare_name(v, n)?, "copy from", n)?;
        } else if let Some(v) = line.strip_prefix(b"copy to ") {
            set_once(&mut h.copy_to, parse_bare_name(v, n)?, "copy to", n)?;
        } else if let Some(v) = line.strip_prefix(b"index ") {
            set_once(&mut h.index, parse_index(v, n)?, "index", n)?;
        } else {
            return Err(err(n, ParseErrorKind::UnknownHeader { found: show(line) }));
        }
        lines.advance()?;
    }

    let mut patch = resolve_headers(&h, header_names, header_line)?;

    // Content: a binary marker, or `---`/`+++` followed by hunks, or nothing at all.
    match lines.peek() {
        Some(line) if line.starts_with(b"Binary files ") || line == b"GIT binary patch" => {
            patch.binary = Some(lines.number());
            lines.advance()?;
            // The patch is rejected as binary; skip its payload up to the next file patch so that
            // every other finding can still be reported. Base85 lines never start with "diff".
            while let Some(l) = lines.peek() {
                if l.starts_with(b"diff --git ") {
                    break;
                }
                lines.advance()?;
            }
        }
        Some(line) if line.starts_with(b"--- ") => {
            parse_old_new_lines(lines, &mut patch)?;
            parse_hunks(lines, &mut patch, sides)?;
        }
        _ => {}
    }
    check_shape(&patch)?;
    Ok(patch)
}

/// Combine the extended headers and the `diff --git` names into a status, names and modes.
fn resolve_headers(h: &Headers, header: HeaderNames, line: usize) -> Result<FilePatch, ParseError> {
    let inconsistent = |what| err(line, ParseErrorKind::Inconsistent(what));
    let is_rename = h.rename_from.is_some() || h.rename_to.is_some();
    let is_copy = h.copy_from.is_some() || h.copy_to.is_some();
    let is_new = h.new_file_mode.is_some();
    let is_deleted = h.deleted_mode.is_some();
    if [is_rename, is_copy, is_new, is_deleted]
        .iter()
        .filter(|&&b| b)
        .count()
        > 1
    {
        return Err(inconsistent(
            "more than one of new file, deleted file, rename and copy",
        ));
    }
    if h.old_mode.is_some() != h.new_mode.is_some() {
        return Err(inconsistent("`old mode` without `new mode` or the reverse"));
    }
    if h.old_mode.is_some() && h.old_mode == h.new_mode {
        return Err(inconsistent("`old mode` equals `new mode`"));
    }
    if (is_new || is_deleted) && h.old_mode.is_some() {
        return Err(inconsistent(
            "`old mode`/`new mode` on a created or deleted file",
        ));
    }
    if h.similarity.is_some() != (is_rename || is_copy) {
        return Err(inconsistent(
            "`similarity index` goes with exactly a rename or a copy",
        ));
    }
    if h.dissimilarity.is_some() && (is_rename || is_copy || is_new || is_deleted) {
        return Err(inconsistent(
            "`dissimilarity index` on a rename, copy, creation or deletion",
        ));
    }
    let index_mode = h.index.unwrap_or_default();
    if index_mode.is_some() && (is_new || is_deleted || h.old_mode.is_some()) {
        return Err(inconsistent(
            "a mode on the `index` line where the mode is given elsewhere",
        ));
    }

    // Resolve the names. The `diff --git` line must agree with every other name source.
    let (status, old_path, new_path) = if is_rename || is_copy {
        let (from, to, which_from, which_to) = if is_rename {
            (&h.rename_from, &h.rename_to, "rename from", "rename to")
        } else {
            (&h.copy_from, &h.copy_to, "copy from", "copy to")
        };
        let (Some(from), Some(to)) = (from, to) else {
            return Err(inconsistent(
                "a rename or copy needs both its `from` and `to` lines",
            ));
        };
        if from == to {
            return Err(inconsistent("a rename or copy onto the same name"));
        }
        match &header {
            HeaderNames::Pair(old, new) => {
                expect_same(old, from, which_from, line)?;
                expect_same(new, to, which_to, line)?;
            }
            HeaderNames::Unsplit(rest) => {
                // Unquoted names with spaces: the only reading is `a/<from> b/<to>`.
                let mut expected = b"a/".to_vec();
                expected.extend_from_slice(from);
                expected.extend_from_slice(b" b/");
                expected.extend_from_slice(to);
                if *rest != expected {
                    let which = if is_rename {
                        "rename from/to"
                    } else {
                        "copy from/to"
                    };
                    return Err(err(
                        line,
                        ParseErrorKind::NameMismatch {
                            which,
                            found: show(&expected),
                            with: show(rest),
                        },
                    ));
                }
            }
        }
        let status = if is_rename {
            ChangeKind::Renamed
        } else {
            ChangeKind::Copied
        };
        (status, Some(from.clone()), Some(to.clone()))
    } else {
        let name = match header {
            HeaderNames::Pair(old, new) => {
                if old != new {
                    // git would treat this as an unannounced rename (or read another name).
                    return Err(err(
                        line,
                        ParseErrorKind::NameMismatch {
                            which: "new",
                            found: show(&new),
                            with: show(&old),
                        },
                    ));
                }
                old
            }
            HeaderNames::Unsplit(_) => {
                return Err(err(
                    line,
                    ParseErrorKind::BadDiffHeader("the two names differ without a rename or copy"),
                ));
            }
        };
        if is_new {
            (ChangeKind::Added, None, Some(name))
        } else if is_deleted {
            (ChangeKind::Deleted, Some(name), None)
        } else {
            (ChangeKind::Modified, Some(name.clone()), Some(name))
        }
    };

    let (old_mode, new_mode) = match status {
        ChangeKind::Added => (None, h.new_file_mode),
        ChangeKind::Deleted => (h.deleted_mode, None),
        _ => match (h.old_mode, h.new_mode) {
            (Some(o), Some(n)) => (Some(o), Some(n)),
            _ => (index_mode, index_mode),
        },
    };
    Ok(FilePatch {
        line,
        status,
        old_path,
        new_path,
        old_mode,
        new_mode,
        binary: None,
        hunks: Vec::new(),
        content_issue: None,
        link_target: None,
    })
}

fn expect_same(
    header: &[u8],
    other: &[u8],
    which: &'static str,
    line: usize,
) -> Result<(), ParseError> {
    if header == other {
        Ok(())
    } else {
        Err(err(
            line,
            ParseErrorKind::NameMismatch {
                which,
                found: show(other),
                with: show(header),
            },
        ))
    }
}

/// Structural checks once the whole file patch is read.
fn check_shape(p: &FilePatch) -> Result<(), ParseError> {
    let line = p.line;
    let has_content = p.binary.is_some() || !p.hunks.is_empty();
    let mode_change = p.old_mode.is_some() && p.new_mode.is_some() && p.old_mode != p.new_mode;
    match p.status {
        ChangeKind::Modified if !has_content && !mode_change => {
            Err(err(line, ParseErrorKind::NoChange))
        }
        ChangeKind::Added => {
            if p.hunks.iter().any(|h| h.old_count != 0 || h.old_start != 0) || p.hunks.len() > 1 {
                return Err(err(
                    line,
                    ParseErrorKind::Inconsistent("a created file's hunk must be `-0,0`"),
                ));
            }
            Ok(())
        }
        ChangeKind::Deleted => {
            if p.hunks.iter().any(|h| h.new_count != 0 || h.new_start != 0) || p.hunks.len() > 1 {
                return Err(err(
                    line,
                    ParseErrorKind::Inconsistent("a deleted file's hunk must be `+0,0`"),
                ));
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// The names on a `diff --git` line.
enum HeaderNames {
    /// Both names known (prefix removed).
    Pair(Vec<u8>, Vec<u8>),
    /// Unquoted names that differ and may contain spaces: the split is decided by `rename`/`copy`
    /// lines, and the raw text is compared with the one canonical rendering.
    Unsplit(Vec<u8>),
}

fn parse_diff_git_names(rest: &[u8]) -> Result<HeaderNames, ParseErrorKind> {
    if rest.first() == Some(&b'"') {
        let (old, used) = unquote(rest)?;
        let after = &rest[used..];
        let Some(after) = after.strip_prefix(b" ") else {
            return Err(ParseErrorKind::BadDiffHeader(
                "expected a space after the quoted old name",
            ));
        };
        let new = if after.first() == Some(&b'"') {
            let (new, used) = unquote(after)?;
            if used != after.len() {
                return Err(ParseErrorKind::BadDiffHeader(
                    "text after the quoted new name",
                ));
            }
            new
        } else {
            check_unquoted(after)?;
            after.to_vec()
        };
        return Ok(HeaderNames::Pair(
            strip_prefix(old, b"a/")?,
            strip_prefix(new, b"b/")?,
        ));
    }
    // Old name unquoted. A quoted new name is introduced by ` "b/` and closes the line.
    if rest.last() == Some(&b'"')
        && let Some(pos) = find(rest, b" \"b/")
    {
        let old = &rest[..pos];
        let quoted = &rest[pos + 1..];
        if let Ok((new, used)) = unquote(quoted)
            && used == quoted.len()
        {
            check_unquoted(old)?;
            return Ok(HeaderNames::Pair(
                strip_prefix(old.to_vec(), b"a/")?,
                strip_prefix(new, b"b/")?,
            ));
        }
    }
    check_unquoted(rest)?;
    // Both unquoted: `a/N b/N` splits in exactly one place when the names are equal.
    if rest.len() >= 5 && (rest.len() - 5).is_multiple_of(2) {
        let len = (rest.len() - 5) / 2;
        let (old, new) = (&rest[..2 + len], &rest[3 + len..]);
        if rest[2 + len] == b' '
            && old.starts_with(b"a/")
            && new.starts_with(b"b/")
            && old[2..] == new[2..]
        {
            return Ok(HeaderNames::Pair(old[2..].to_vec(), new[2..].to_vec()));
        }
    }
    if !rest.starts_with(b"a/") || find(rest, b" b/").is_none() {
        return Err(ParseErrorKind::BadDiffHeader(
            "names must be `a/<old> b/<new>`",
        ));
    }
    Ok(HeaderNames::Unsplit(rest.to_vec()))
}

fn strip_prefix(name: Vec<u8>, prefix: &[u8]) -> Result<Vec<u8>, ParseErrorKind> {
    match name.strip_prefix(prefix) {
        Some(rest) => Ok(rest.to_vec()),
        None => Err(ParseErrorKind::BadDiffHeader(
            "names must carry the `a/` and `b/` prefixes",
        )),
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// An unquoted name may not hold bytes `git diff` would have quoted, nor start with a quote.
fn check_unquoted(name: &[u8]) -> Result<(), ParseErrorKind> {
    if name.first() == Some(&b'"') {
        return Err(ParseErrorKind::BadQuoting("unbalanced quote"));
    }
    if name
        .iter()
        .any(|&b| b < 0x20 || b == 0x7f || b == b'"' || b == b'\\')
    {
        return Err(ParseErrorKind::BadQuoting(
            "an unquoted name holds a byte git always quotes",
        ));
    }
    Ok(())
}

/// Decode a C-style quoted name starting at `s[0] == '"'`, byte-exactly as git's
/// `unquote_c_style`. Returns the bytes and how many input bytes were consumed.
pub fn unquote(s: &[u8]) -> Result<(Vec<u8>, usize), ParseErrorKind> {
    if s.first() != Some(&b'"') {
        return Err(ParseErrorKind::BadQuoting("missing opening quote"));
    }
    let mut out = Vec::new();
    let mut i = 1;
    while i < s.len() {
        match s[i] {
            b'"' => return Ok((out, i + 1)),
            b'\\' => {
                let Some(&c) = s.get(i + 1) else {
                    return Err(ParseErrorKind::BadQuoting("backslash at end of name"));
                };
                i += 2;
                let byte = match c {
                    b'a' => 0x07,
                    b'b' => 0x08,
                    b't' => b'\t',
                    b'n' => b'\n',
                    b'v' => 0x0b,
                    b'f' => 0x0c,
                    b'r' => b'\r',
                    b'\\' => b'\\',
                    b'"' => b'"',
                    b'0'..=b'3' => {
                        let digits = s
                            .get(i..i + 2)
                            .ok_or(ParseErrorKind::BadQuoting("short octal escape"))?;
                        if !digits.iter().all(|d| (b'0'..=b'7').contains(d)) {
                            return Err(ParseErrorKind::BadQuoting("bad octal escape"));
                        }
                        i += 2;
                        ((c - b'0') << 6) | ((digits[0] - b'0') << 3) | (digits[1] - b'0')
                    }
                    _ => return Err(ParseErrorKind::BadQuoting("unknown escape")),
                };
                out.push(byte);
            }
            b if b < 0x20 || b == 0x7f => {
                return Err(ParseErrorKind::BadQuoting("raw control byte"));
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    Err(ParseErrorKind::BadQuoting("missing closing quote"))
}

/// A name on a `rename`/`copy` line: quoted, or the rest of the line.
fn parse_bare_name(v: &[u8], line: usize) -> Result<Vec<u8>, ParseError> {
    if v.first() == Some(&b'"') {
        let (name, used) = unquote(v).map_err(|k| err(line, k))?;
        if used != v.len() {
            return Err(err(
                line,
                ParseErrorKind::BadQuoting("text after a quoted name"),
            ));
        }
        Ok(name)
    } else {
        check_unquoted(v).map_err(|k| err(line, k))?;
        Ok(v.to_vec())
    }
}

/// A name on a `---`/`+++` line: `/dev/null`, or prefix + name, then nothing but the single TAB
/// `git diff` appends when an unquoted name contains a space.
fn parse_marker_name(v: &[u8], prefix: &[u8], line: usize) -> Result<Option<Vec<u8>>, ParseError> {
    if v == b"/dev/null" {
        return Ok(None);
    }
    let name = if v.first() == Some(&b'"') {
        let (name, used) = unquote(v).map_err(|k| err(line, k))?;
        // `git diff` appends a TAB after a name holding a space, quoted or not.
        let tab_ok = &v[used..] == b"\t" && name.contains(&b' ');
        if used != v.len() && !tab_ok {
            return Err(err(
                line,
                ParseErrorKind::BadQuoting("text after a quoted name"),
            ));
        }
        name
    } else {
        let name = match v.strip_suffix(b"\t") {
            Some(name) if name.contains(&b' ') => name,
            Some(_) => {
                return Err(err(
                    line,
                    ParseErrorKind::BadHeaderValue("---/+++ (trailing tab)"),
                ));
            }
            // `git diff` appends the TAB; other git-style writers omit it, and git reads both alike.
            None => v,
        };
        check_unquoted(name).map_err(|k| err(line, k))?;
        name.to_vec()
    };
    match name.strip_prefix(prefix) {
        Some(rest) => Ok(Some(rest.to_vec())),
        None => Err(err(
            line,
            ParseErrorKind::BadHeaderValue("---/+++ (missing a/ or b/ prefix)"),
        )),
    }
}

fn parse_old_new_lines(lines: &mut Lines<'_>, patch: &mut FilePatch) -> Result<(), ParseError> {
    let n = lines.number();
    let minus = lines.peek().unwrap_or_default();
    if minus.contains(&b'\r') {
        return Err(err(n, ParseErrorKind::CarriageReturn));
    }
    let old = parse_marker_name(&minus[4..], b"a/", n)?;
    lines.advance()?;
    let n2 = lines.number();
    let plus = match lines.peek() {
        Some(l) if l.starts_with(b"+++ ") => l,
        _ => {
            return Err(err(
                n2,
                ParseErrorKind::Inconsistent("`---` must be followed by `+++`"),
            ));
        }
    };
    if plus.contains(&b'\r') {
        return Err(err(n2, ParseErrorKind::CarriageReturn));
    }
    let new = parse_marker_name(&plus[4..], b"b/", n2)?;
    lines.advance()?;
    if old != patch.old_path {
        return Err(err(
            n,
            ParseErrorKind::NameMismatch {
                which: "`---`",
                found: old.as_deref().map_or("/dev/null".into(), show),
                with: patch.old_path.as_deref().map_or("/dev/null".into(), show),
            },
        ));
    }
    if new != patch.new_path {
        return Err(err(
            n2,
            ParseErrorKind::NameMismatch {
                which: "`+++`",
                found: new.as_deref().map_or("/dev/null".into(), show),
                with: patch.new_path.as_deref().map_or("/dev/null".into(), show),
            },
        ));
    }
    match lines.peek() {
        Some(l) if l.starts_with(b"@@ ") => Ok(()),
        _ => Err(err(
            lines.number(),
            ParseErrorKind::Inconsistent("`+++` must be followed by a hunk"),
        )),
    }
}

fn parse_hunks<'a>(
    lines: &mut Lines<'a>,
    patch: &mut FilePatch,
    sides: &mut HunkSides<'a>,
) -> Result<(), ParseError> {
    // Once a side has had its `\ No newline` it may not continue, in this hunk or a later one.
    let mut old_ended = false;
    let mut new_ended = false;
    let mut next_old_min = 0u64;
    let HunkSides {
        old: old_lines,
        new: new_lines,
    } = sides;
    while let Some(line) = lines.peek() {
        if !line.starts_with(b"@@ ") {
            break;
        }
        let n = lines.number();
        let mut hunk = parse_hunk_header(line)
            .ok_or_else(|| err(n, ParseErrorKind::BadHunkHeader { found: show(line) }))?;
        hunk.line = n;
        if old_ended || new_ended || (hunk.old_count > 0 && hunk.old_start < next_old_min.max(1)) {
            return Err(err(n, ParseErrorKind::HunkOrder));
        }
        next_old_min = hunk.old_start.saturating_add(hunk.old_count);
        lines.advance()?;
        let (body_start, body_line) = (lines.offset(), lines.number());
        let (mut old_left, mut new_left) = (hunk.old_count, hunk.new_count);
        // The side(s) the previous body line belonged to, for `\ No newline`.
        let mut last: Option<(bool, bool)> = None;
        // Each side's lines (and whether it ends without a newline): a hunk whose two sides are
        // equal changes nothing, and git refuses one without any `-` or `+` line.
        old_lines.clear();
        new_lines.clear();
        let (mut old_no_newline, mut new_no_newline) = (false, false);
        while let Some(l) = lines.peek() {
            let ln = lines.number();
            if l.first() == Some(&b'\\') {
                if l != b"\\ No newline at end of file" {
                    return Err(err(ln, ParseErrorKind::BadHunkLine { found: show(l) }));
                }
                let Some((old_side, new_side)) = last.take() else {
                    return Err(err(ln, ParseErrorKind::MisplacedNoNewline));
                };
                if (old_side && old_left != 0) || (new_side && new_left != 0) {
                    return Err(err(ln, ParseErrorKind::MisplacedNoNewline));
                }
                old_ended |= old_side;
                new_ended |= new_side;
                old_no_newline |= old_side;
                new_no_newline |= new_side;
                lines.advance()?;
                continue;
            }
            if old_left == 0 && new_left == 0 {
                break;
            }
            let (old_side, new_side) = match l.first() {
                Some(b' ') | None => (true, true),
                Some(b'-') => (true, false),
                Some(b'+') => (false, true),
                // Lines remain by the header's count, but the body has ended.
                Some(_) => return Err(err(ln, ParseErrorKind::HunkCount)),
            };
            if (old_side && (old_left == 0 || old_ended))
                || (new_side && (new_left == 0 || new_ended))
            {
                return Err(err(ln, ParseErrorKind::HunkCount));
            }
            let content = l.get(1..).unwrap_or_default();
            if old_side && new_side {
                hunk.context_lines += 1;
            }
            if old_side {
                old_left -= 1;
                old_lines.push(content);
            }
            if new_side {
                new_left -= 1;
                new_lines.push(content);
            }
            last = Some((old_side, new_side));
            lines.advance()?;
        }
        if old_left != 0 || new_left != 0 {
            return Err(err(lines.number(), ParseErrorKind::HunkCount));
        }
        if patch
            .content_issue
            .is_none_or(|i| i.kind != ContentIssueKind::Nul)
        {
            let end = lines.offset().min(lines.body.len());
            let found = content_issue(&lines.body[body_start..end], body_line);
            patch.content_issue = match (patch.content_issue, found) {
                (Some(old), Some(new)) if new.kind > old.kind => Some(new),
                (None, new) => new,
                (old, _) => old,
            };
        }
        if patch.new_mode == Some(MODE_SYMLINK) {
            // A link's blob is written whole by one hunk from line 1 (line 0 when it is empty).
            patch.link_target = (patch.hunks.is_empty() && hunk.new_start <= 1).then(|| {
                let mut target = new_lines.join(&b'\n');
                if !new_no_newline && !new_lines.is_empty() {
                    target.push(b'\n');
                }
                target
            });
        }
        if *old_lines == *new_lines && old_no_newline == new_no_newline {
            return Err(err(hunk.line, ParseErrorKind::HunkChangesNothing));
        }
        patch.hunks.push(hunk);
    }
    // After the hunks only the next file patch or the end may follow.
    match lines.peek() {
        None => Ok(()),
        Some(l) if l.starts_with(b"diff --git ") => Ok(()),
        Some(l) => Err(err(
            lines.number(),
            ParseErrorKind::BadHunkLine { found: show(l) },
        )),
    }
}

/// The first line of a hunk body (starting at line `first_line`) of the gravest issue its content
/// has: a NUL, a control in a line that is not UTF-8, or bytes that are not UTF-8. Every line
/// boundary is an ASCII newline, so the body as a whole is valid UTF-8 exactly when each line is:
/// one pass over the whole body decides the common case.
fn content_issue(body: &[u8], first_line: usize) -> Option<ContentIssue> {
    if memchr::memchr(0, body).is_none() && std::str::from_utf8(body).is_ok() {
        return None;
    }
    let mut gravest: Option<ContentIssue> = None;
    for (i, line) in body.split(|&b| b == b'\n').enumerate() {
        // A CR before the newline is content of a CRLF file, not a header.
        let kind = if line.contains(&0) {
            ContentIssueKind::Nul
        } else if std::str::from_utf8(line).is_ok() {
            continue;
        } else if let Some(&c) = line
            .iter()
            .find(|&&b| (b < 0x20 && !matches!(b, b'\t' | b'\r' | 0x0c)) || b == 0x7f)
        {
            ContentIssueKind::Control(c)
        } else {
            ContentIssueKind::NotUtf8
        };
        if gravest.is_none_or(|g| kind > g.kind) {
            gravest = Some(ContentIssue {
                line: first_line + i,
                kind,
            });
        }
        if kind == ContentIssueKind::Nul {
            break;
        }
    }
    gravest
}

/// `@@ -a[,b] +c[,d] @@[ section]`
fn parse_hunk_header(line: &[u8]) -> Option<Hunk> {
    let rest = line.strip_prefix(b"@@ -")?;
    let (old, rest) = split_range(rest)?;
    let rest = rest.strip_prefix(b" +")?;
    let (new, rest) = split_range(rest)?;
    let rest = rest.strip_prefix(b" @@")?;
    // What follows ` @@ ` is function context taken from the file (it may hold a CR of a CRLF
    // file); git ignores it.
    if !(rest.is_empty() || rest.starts_with(b" ")) {
        return None;
    }
    // A zero-length side points at the line before; otherwise lines count from 1.
    if (old.1 > 0 && old.0 == 0) || (new.1 > 0 && new.0 == 0) {
        return None;
    }
    if old.1 == 0 && new.1 == 0 {
        return None;
    }
    Some(Hunk {
        line: 0,
        old_start: old.0,
        old_count: old.1,
        new_start: new.0,
        new_count: new.1,
        context_lines: 0,
    })
}

fn split_range(s: &[u8]) -> Option<((u64, u64), &[u8])> {
    let (start, rest) = split_number(s)?;
    if let Some(rest) = rest.strip_prefix(b",") {
        let (count, rest) = split_number(rest)?;
        Some(((start, count), rest))
    } else {
        Some(((start, 1), rest))
    }
}

fn split_number(s: &[u8]) -> Option<(u64, &[u8])> {
    let digits = s.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || digits > 18 || (digits > 1 && s[0] == b'0') {
        return None;
    }
    let value = std::str::from_utf8(&s[..digits]).ok()?.parse().ok()?;
    Some((value, &s[digits..]))
}

fn parse_mode(v: &[u8], line: usize) -> Result<u32, ParseError> {
    match v {
        b"100644" => Ok(MODE_FILE),
        b"100755" => Ok(MODE_EXEC),
        b"120000" => Ok(MODE_SYMLINK),
        b"160000" => Ok(MODE_GITLINK),
        _ => Err(err(line, ParseErrorKind::BadMode { found: show(v) })),
    }
}

fn parse_percent(v: &[u8], what: &'static str, line: usize) -> Result<u32, ParseError> {
    let bad = || err(line, ParseErrorKind::BadHeaderValue(what));
    let digits = v.strip_suffix(b"%").ok_or_else(bad)?;
    let (value, rest) = split_number(digits).ok_or_else(bad)?;
    if !rest.is_empty() || value > 100 {
        return Err(bad());
    }
    Ok(value as u32)
}

/// `index <hex>..<hex>[ <mode>]`; returns the mode when present.
fn parse_index(v: &[u8], line: usize) -> Result<Option<u32>, ParseError> {
    let bad = || err(line, ParseErrorKind::BadHeaderValue("index"));
    let (ids, mode) = match v.iter().position(|&b| b == b' ') {
        Some(pos) => (&v[..pos], Some(parse_mode(&v[pos + 1..], line)?)),
        None => (v, None),
    };
    let sep = find(ids, b"..").ok_or_else(bad)?;
    let (a, b) = (&ids[..sep], &ids[sep + 2..]);
    let hex = |s: &[u8]| {
        (4..=64).contains(&s.len())
            && s.iter()
                .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c))
    };
    if !hex(a) || !hex(b) {
        return Err(bad());
    }
    Ok(mode)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_ok(s: &str) -> CandidateDiff {
        match parse(s.as_bytes(), 1 << 20) {
            Ok(d) => d,
            Err(e) => unreachable!("parse failed: {e}"),
        }
    }

    fn parse_err(s: &[u8]) -> ParseErrorKind {
        match parse(s, 1 << 20) {
            Ok(d) => unreachable!("parse succeeded: {d:?}"),
            Err(e) => e.kind,
        }
    }

    #[test]
    fn modification_with_index_mode() {
        let d = parse_ok(
            "diff --git a/src/x.rs b/src/x.rs\nindex 1234567..89abcde 100644\n--- a/src/x.rs\n+++ b/src/x.rs\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n",
        );
        let p = &d.patches[0];
        assert_eq!(p.status, ChangeKind::Modified);
        assert_eq!(p.old_path.as_deref(), Some(&b"src/x.rs"[..]));
        assert_eq!(p.new_mode, Some(MODE_FILE));
        assert_eq!(p.hunks.len(), 1);
    }

    #[test]
    fn rename_with_spaces_and_trailing_tab() {
        let d = parse_ok(
            "diff --git a/sp ace.txt b/sp ace2.txt\nsimilarity index 66%\nrename from sp ace.txt\nrename to sp ace2.txt\nindex 422c2b7..de98044 100644\n--- a/sp ace.txt\t\n+++ b/sp ace2.txt\t\n@@ -1,2 +1,3 @@\n a\n b\n+c\n",
        );
        let p = &d.patches[0];
        assert_eq!(p.status, ChangeKind::Renamed);
        assert_eq!(p.new_path.as_deref(), Some(&b"sp ace2.txt"[..]));
    }

    #[test]
    fn quoted_name_with_a_space_carries_gits_trailing_tab() {
        let d = parse_ok(
            "diff --git \"a/x \\303\\251\" \"b/x \\303\\251\"\nindex 7898192..6178079 100644\n--- \"a/x \\303\\251\"\t\n+++ \"b/x \\303\\251\"\t\n@@ -1 +1 @@\n-a\n+b\n",
        );
        assert_eq!(d.patches[0].new_path.as_deref(), Some("x é".as_bytes()));
        let k = parse_err(b"diff --git \"a/x\\303\\251\" \"b/x\\303\\251\"\nindex 7898192..6178079 100644\n--- \"a/x\\303\\251\"\t\n+++ \"b/x\\303\\251\"\t\n@@ -1 +1 @@\n-a\n+b\n");
        assert_eq!(k, ParseErrorKind::BadQuoting("text after a quoted name"));
    }

    #[test]
    fn quoted_names_are_decoded_byte_exactly() {
        let d = parse_ok(
            "diff --git \"a/ta\\tb\" \"b/ta\\tb\"\nindex bca70f3..d169a2f 100644\n--- \"a/ta\\tb\"\n+++ \"b/ta\\tb\"\n@@ -1 +1 @@\n-q\n+q2\n",
        );
        assert_eq!(d.patches[0].new_path.as_deref(), Some(&b"ta\tb"[..]));
        let d = parse_ok(
            "diff --git \"a/caf\\303\\251\" \"b/caf\\303\\251\"\nindex bca70f3..d169a2f 100644\n--- \"a/caf\\303\\251\"\n+++ \"b/caf\\303\\251\"\n@@ -1 +1 @@\n-q\n+q2\n",
        );
        assert_eq!(d.patches[0].new_path.as_deref(), Some("café".as_bytes()));
    }

    #[test]
    fn plus_name_disagreeing_with_header_is_ambiguous() {
        let k = parse_err(b"diff --git a/x b/x\nindex 1234567..89abcde 100644\n--- a/x\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n");
        assert!(matches!(k, ParseErrorKind::NameMismatch { .. }), "{k:?}");
        assert!(k.is_ambiguity());
    }

    #[test]
    fn rejects_leniencies_git_would_accept() {
        // Traditional patch.
        assert!(matches!(
            parse_err(b"--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"),
            ParseErrorKind::ExpectedDiffHeader { .. }
        ));
        // Garbage after a complete hunk.
        assert!(matches!(
            parse_err(b"diff --git a/x b/x\nindex 1234567..89abcde 100644\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n+c\n"),
            ParseErrorKind::BadHunkLine { .. }
        ));
        // No prefix.
        assert!(matches!(
            parse_err(b"diff --git foo/x foo/x\nold mode 100644\nnew mode 100755\n"),
            ParseErrorKind::BadDiffHeader(_)
        ));
        // CR in a header.
        assert_eq!(
            parse_err(b"diff --git a/x b/x\r\nold mode 100644\nnew mode 100755\n"),
            ParseErrorKind::CarriageReturn
        );
        // Unknown header.
        assert!(matches!(
            parse_err(b"diff --git a/x b/x\nrename old x\nrename new y\n"),
            ParseErrorKind::UnknownHeader { .. }
        ));
        // Hunk count off by one.
        assert_eq!(
            parse_err(b"diff --git a/x b/x\nindex 1234567..89abcde 100644\n--- a/x\n+++ b/x\n@@ -1,2 +1 @@\n-a\n+b\n"),
            ParseErrorKind::HunkCount
        );
        assert_eq!(
            parse_err(b"diff --git a/x b/x\nold mode 100644\nnew mode 100755"),
            ParseErrorKind::NoFinalNewline
        );
    }

    #[test]
    fn hunks_that_change_nothing_are_rejected() {
        // Context only: git refuses it ("corrupt patch").
        let k = parse_err(b"diff --git a/f b/f\nindex 7898192..7898192 100644\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n a\n");
        assert_eq!(k, ParseErrorKind::HunkChangesNothing);
        // Removes and re-adds the same line: git applies it and nothing changes.
        let k = parse_err(b"diff --git a/f b/f\nindex 7898192..7898192 100644\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+a\n");
        assert_eq!(k, ParseErrorKind::HunkChangesNothing);
        // The same line with and without its final newline is a change.
        parse_ok(
            "diff --git a/f b/f\nindex 7898192..78981922 100644\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+a\n\\ No newline at end of file\n",
        );
        // Moving a line is a change.
        parse_ok(
            "diff --git a/f b/f\nindex 7898192..78981922 100644\n--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-a\n b\n+a\n",
        );
    }

    #[test]
    fn no_newline_marker_and_header_lookalike_content() {
        let d = parse_ok(
            "diff --git a/n b/n\nnew file mode 100644\nindex 0000000..ef073cc\n--- /dev/null\n+++ b/n\n@@ -0,0 +1,3 @@\n+diff --git a/x b/x\n+--- a/y\n++++ b/z\n\\ No newline at end of file\n",
        );
        assert_eq!(d.patches[0].status, ChangeKind::Added);
        assert_eq!(
            parse_err(b"diff --git a/n b/n\nnew file mode 100644\nindex 0000000..ef073cc\n--- /dev/null\n+++ b/n\n@@ -0,0 +1,2 @@\n+a\n\\ No newline at end of file\n+b\n"),
            ParseErrorKind::MisplacedNoNewline
        );
    }
}
