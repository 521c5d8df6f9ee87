//! Mutations of a canonical diff aimed at `git apply`'s leniencies.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use proptest::prelude::*;
use proptest::sample::Index;

use super::generate::*;

// ---------------------------------------------------------------------------------------------
// Mutations

/// A diff as lines (without their `\n`).
#[derive(Debug, Clone)]
pub struct Doc {
    pub lines: Vec<Vec<u8>>,
    pub final_newline: bool,
}

impl Doc {
    pub fn parse(bytes: &[u8]) -> Doc {
        if bytes.is_empty() {
            return Doc {
                lines: Vec::new(),
                final_newline: true,
            };
        }
        let (body, final_newline) = match bytes.strip_suffix(b"\n") {
            Some(b) => (b, true),
            None => (bytes, false),
        };
        Doc {
            lines: body.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect(),
            final_newline,
        }
    }

    pub fn bytes(&self) -> Vec<u8> {
        let mut out = self.lines.join(&b'\n');
        if self.final_newline && !self.lines.is_empty() {
            out.push(b'\n');
        }
        out
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum K {
    DiffGit,
    Ext,
    Minus,
    Plus,
    Hunk,
    Body,
    Marker,
    Other,
}

pub fn split_number(s: &[u8]) -> Option<(u64, &[u8])> {
    let n = s.iter().take_while(|b| b.is_ascii_digit()).count();
    if n == 0 || n > 18 {
        return None;
    }
    Some((std::str::from_utf8(&s[..n]).ok()?.parse().ok()?, &s[n..]))
}

/// `@@ -a[,b] +c[,d] @@rest` -> ([a, b, c, d], whether b and d were written, rest).
pub fn hunk_numbers(line: &[u8]) -> Option<([u64; 4], [bool; 2], Vec<u8>)> {
    let rest = line.strip_prefix(b"@@ -")?;
    let (a, rest) = split_number(rest)?;
    let (b, has_b, rest) = match rest.strip_prefix(b",") {
        Some(r) => {
            let (b, r) = split_number(r)?;
            (b, true, r)
        }
        None => (1, false, rest),
    };
    let rest = rest.strip_prefix(b" +")?;
    let (c, rest) = split_number(rest)?;
    let (d, has_d, rest) = match rest.strip_prefix(b",") {
        Some(r) => {
            let (d, r) = split_number(r)?;
            (d, true, r)
        }
        None => (1, false, rest),
    };
    let rest = rest.strip_prefix(b" @@")?;
    Some(([a, b, c, d], [has_b, has_d], rest.to_vec()))
}

pub fn hunk_line(n: [u64; 4], has: [bool; 2], rest: &[u8]) -> Vec<u8> {
    let side = |s: u64, c: u64, h: bool| {
        if h || c != 1 {
            format!("{s},{c}")
        } else {
            format!("{s}")
        }
    };
    let mut out = format!(
        "@@ -{} +{} @@",
        side(n[0], n[1], has[0]),
        side(n[2], n[3], has[1])
    )
    .into_bytes();
    out.extend_from_slice(rest);
    out
}

/// Classify lines the way a reader that honours hunk counts would.
pub fn classify(lines: &[Vec<u8>]) -> Vec<K> {
    let mut out = Vec::with_capacity(lines.len());
    let mut body: Option<(u64, u64)> = None;
    let mut in_header = false;
    for line in lines {
        if let Some((old, new)) = body.as_mut() {
            if line.first() == Some(&b'\\') {
                out.push(K::Marker);
                continue;
            }
            let consumed = match line.first() {
                Some(b' ') | None if *old > 0 && *new > 0 => {
                    *old -= 1;
                    *new -= 1;
                    true
                }
                Some(b'-') if *old > 0 => {
                    *old -= 1;
                    true
                }
                Some(b'+') if *new > 0 => {
                    *new -= 1;
                    true
                }
                _ => false,
            };
            if consumed {
                out.push(K::Body);
                if *old == 0 && *new == 0 {
                    body = None;
                }
                continue;
            }
            body = None;
        }
        let k = if line.starts_with(b"diff --git ") {
            in_header = true;
            K::DiffGit
        } else if line.starts_with(b"@@ ") {
            in_header = false;
            if let Some((n, _, _)) = hunk_numbers(line)
                && (n[1] > 0 || n[3] > 0)
            {
                body = Some((n[1], n[3]));
            }
            K::Hunk
        } else if line.starts_with(b"--- ") {
            in_header = false;
            K::Minus
        } else if line.starts_with(b"+++ ") {
            K::Plus
        } else if in_header {
            K::Ext
        } else {
            K::Other
        };
        out.push(k);
    }
    out
}

/// File patches as line ranges.
pub fn patches(kinds: &[K]) -> Vec<(usize, usize)> {
    let starts: Vec<usize> = (0..kinds.len())
        .filter(|&i| kinds[i] == K::DiffGit)
        .collect();
    starts
        .iter()
        .enumerate()
        .map(|(n, &s)| (s, starts.get(n + 1).copied().unwrap_or(kinds.len())))
        .collect()
}

pub fn patch_of(kinds: &[K], line: usize) -> Option<(usize, usize)> {
    patches(kinds)
        .into_iter()
        .find(|&(s, e)| (s..e).contains(&line))
}

pub fn pick<T: Copy>(items: &[T], i: &Index) -> Option<T> {
    if items.is_empty() {
        None
    } else {
        Some(items[i.index(items.len())])
    }
}

pub fn lines_where(doc: &Doc, kinds: &[K], f: impl Fn(K, &[u8]) -> bool) -> Vec<usize> {
    (0..doc.lines.len())
        .filter(|&i| f(kinds[i], &doc.lines[i]))
        .collect()
}

pub fn needs_quote(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\' || b >= 0x7f
}

/// git's C-style quoting (`core.quotePath=true`); `force` quotes even a plain name.
pub fn quote(name: &[u8], force: bool, octal_at: Option<usize>) -> Vec<u8> {
    if !force && octal_at.is_none() && !name.iter().any(|&b| needs_quote(b)) {
        return name.to_vec();
    }
    let mut out = vec![b'"'];
    for (i, &b) in name.iter().enumerate() {
        let esc: Option<&[u8]> = match b {
            0x07 => Some(b"\\a"),
            0x08 => Some(b"\\b"),
            b'\t' => Some(b"\\t"),
            b'\n' => Some(b"\\n"),
            0x0b => Some(b"\\v"),
            0x0c => Some(b"\\f"),
            b'\r' => Some(b"\\r"),
            b'"' => Some(b"\\\""),
            b'\\' => Some(b"\\\\"),
            _ => None,
        };
        if octal_at == Some(i) || (esc.is_none() && needs_quote(b)) {
            out.extend(format!("\\{b:03o}").into_bytes());
        } else if let Some(e) = esc {
            out.extend_from_slice(e);
        } else {
            out.push(b);
        }
    }
    out.push(b'"');
    out
}

/// Decode a token: C-unquote it when it is quoted (leniently), else return it as is.
pub fn unquote(tok: &[u8]) -> Vec<u8> {
    if tok.len() < 2 || tok[0] != b'"' || tok[tok.len() - 1] != b'"' {
        return tok.to_vec();
    }
    let s = &tok[1..tok.len() - 1];
    let mut out = Vec::new();
    let mut i = 0;
    while i < s.len() {
        if s[i] != b'\\' || i + 1 == s.len() {
            out.push(s[i]);
            i += 1;
            continue;
        }
        let c = s[i + 1];
        i += 2;
        match c {
            b'a' => out.push(0x07),
            b'b' => out.push(0x08),
            b't' => out.push(b'\t'),
            b'n' => out.push(b'\n'),
            b'v' => out.push(0x0b),
            b'f' => out.push(0x0c),
            b'r' => out.push(b'\r'),
            b'0'..=b'3' if i + 2 <= s.len() => {
                let v = (u32::from(c - b'0') << 6)
                    | (u32::from(s[i].wrapping_sub(b'0')) << 3)
                    | u32::from(s[i + 1].wrapping_sub(b'0'));
                out.push(v as u8);
                i += 2;
            }
            other => out.push(other),
        }
    }
    out
}

/// End (exclusive) of a quoted token starting at `s[0] == '"'`.
pub fn quoted_end(s: &[u8]) -> Option<usize> {
    let mut i = 1;
    while i < s.len() {
        match s[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// The two name tokens of a `diff --git` line, as ranges of the line.
pub fn diff_git_tokens(line: &[u8]) -> Vec<(usize, usize)> {
    let off = b"diff --git ".len();
    let rest = &line[off..];
    let split = if rest.first() == Some(&b'"') {
        quoted_end(rest).filter(|&e| rest.get(e) == Some(&b' '))
    } else if rest.last() == Some(&b'"') {
        rest.windows(2).rposition(|w| w == b" \"")
    } else {
        let mid = rest.len() / 2;
        if rest.len() % 2 == 1
            && rest[mid] == b' '
            && rest[..mid].get(2..) == rest[mid + 1..].get(2..)
        {
            Some(mid)
        } else {
            rest.windows(3)
                .position(|w| w == b" b/")
                .or_else(|| rest.iter().position(|&b| b == b' '))
        }
    };
    match split {
        Some(p) if p < rest.len() => vec![(off, off + p), (off + p + 1, line.len())],
        _ => vec![(off, line.len())],
    }
}

pub const FROM_TO: &[&[u8]] = &[b"rename from ", b"rename to ", b"copy from ", b"copy to "];

/// Name tokens of a line, as ranges.
pub fn name_tokens(line: &[u8], k: K) -> Vec<(usize, usize)> {
    match k {
        K::DiffGit => diff_git_tokens(line),
        K::Minus | K::Plus => {
            let end = if line[4..].first() != Some(&b'"') && line.last() == Some(&b'\t') {
                line.len() - 1
            } else {
                line.len()
            };
            vec![(4, end)]
        }
        K::Ext => FROM_TO
            .iter()
            .find(|p| line.starts_with(p))
            .map(|p| vec![(p.len(), line.len())])
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// Replace every name token of `line` by `f(decoded token)`.
pub fn restyle_line(line: &mut Vec<u8>, k: K, f: &dyn Fn(&[u8]) -> Vec<u8>) {
    let tokens = name_tokens(line, k);
    for &(s, e) in tokens.iter().rev() {
        let new = f(&unquote(&line[s..e]));
        line.splice(s..e, new);
    }
}

/// Apply `f` to the names of line `i`, or of every line of its file patch when `all`.
pub fn restyle(doc: &mut Doc, kinds: &[K], i: usize, all: bool, f: &dyn Fn(&[u8]) -> Vec<u8>) {
    let range = if all {
        patch_of(kinds, i).map_or(i..i + 1, |(s, e)| s..e)
    } else {
        i..i + 1
    };
    for j in range {
        restyle_line(&mut doc.lines[j], kinds[j], f);
    }
}

pub fn name_lines(doc: &Doc, kinds: &[K]) -> Vec<usize> {
    lines_where(doc, kinds, |k, l| !name_tokens(l, k).is_empty())
}

/// Replace the name in a prefixed token, keeping the `a/`/`b/` prefix and `/dev/null`.
pub fn renamed_token(tok: &[u8], name: &[u8], octal_first: bool) -> Vec<u8> {
    if tok == b"/dev/null" {
        return tok.to_vec();
    }
    let (prefix, at) = match tok.get(..2) {
        Some(b"a/") => (&b"a/"[..], 2),
        Some(b"b/") => (&b"b/"[..], 2),
        _ => (&b""[..], 0),
    };
    let mut full = prefix.to_vec();
    full.extend_from_slice(name);
    quote(&full, false, octal_first.then_some(at))
}

pub const GARBAGE: &[&[u8]] = &[
    b"garbage",
    b"",
    b"+injected",
    b" context",
    b"-removed",
    b"\\ No newline at end of file",
    b" diff --git a/.git/config b/.git/config",
    b"From: attacker@example.com",
    b"Subject: [PATCH] x",
    b"---",
    b"-- ",
    b"2.47.3",
    b"@@ -1 +1 @@",
    b"index 0000000..1111111",
    b"diff --git a/x",
    b"new file mode 100644",
    b"rename to y",
    b"#!/bin/sh",
    b"--- a/README.md",
    b"+++ b/README.md",
];

pub const DISGUISES: &[(&[u8], bool)] = &[
    (b".git/config", false),
    (b".git/hooks/pre-commit", true),
    (b".GIT/config", false),
    (b"git~1/config", false),
    (b".git./x", false),
    (b"sub/.git/x", true),
    (b".gitmodules", false),
    (b"../escape", false),
    (b"/etc/x", false),
    (b"a//b", false),
];

pub const INDEX_MODES: &[&[u8]] = &[
    b"", b" 100644", b" 100755", b" 120000", b" 160000", b" 100664", b" 040000", b" 644",
];

pub const SECTIONS: &[&[u8]] = &[
    b"",
    b" fn main() {",
    b" @@ -9 +9 @@",
    b"\tx",
    b"x",
    b" ",
    b" diff --git a/.git/config b/.git/config",
];

pub const SIMILARITIES: &[&[u8]] = &[b"100%", b"0%", b"101%", b"50", b"050%", b"50% "];

pub const MODE_PAIRS: &[(&[u8], &[u8])] = &[
    (b"100644", b"100755"),
    (b"100755", b"100644"),
    (b"100644", b"120000"),
    (b"100644", b"160000"),
    (b"100644", b"100644"),
];

#[derive(Debug, Clone)]
pub enum Mutation {
    /// Another name on a `+++` (or `---`) line.
    MarkerName(Index, Index),
    /// Another old or new name on the `diff --git` line.
    HeaderName(Index, Index, bool),
    /// Another name on a `rename`/`copy` from/to line.
    FromToName(Index, Index),
    /// `rename old`/`rename new`, git's old spelling.
    LegacyRename(Index),
    /// rename <-> copy.
    RenameCopySwap(Index),
    /// Drop the `a/`/`b/` prefixes of a line's names.
    DropPrefixes(Index),
    /// A traditional (non-git) patch of a base file, placed at a patch boundary.
    Traditional(Index, u8, Index),
    /// One hunk number +-1.
    HunkCount(Index, u8, bool),
    /// Both start lines of a hunk +-1 (git searches for the position).
    ShiftHunk(Index, bool),
    /// CR before the LF of a line outside hunk bodies.
    CrlfHeader(Index),
    /// CR before the LF of an added line.
    CrlfAdded(Index),
    /// A line after the last one.
    Append(Index),
    /// A line before a `diff --git` line.
    Insert(Index, Index),
    /// A file patch twice.
    Duplicate(Index),
    /// The mode on an `index` line.
    IndexMode(Index, Index),
    /// Quote names that need no quoting (one line, or the whole file patch).
    Quote(Index, bool),
    /// Write quoted names raw.
    Unquote(Index, bool),
    /// An octal escape for one byte of a name.
    OctalEscape(Index, Index, bool),
    /// Every name of a file patch becomes a `.git` (or otherwise unsafe) path.
    Disguise(Index, Index),
    /// Every name of a file patch becomes another name.
    RenamePatch(Index, Index),
    /// A space or TAB after a name (one line, or every name of the file patch).
    TrailingWhitespace(Index, bool, bool),
    /// Hunk counts of 1 written out (`-3,1`) or left implicit (`-3`).
    ExplicitCounts(Index),
    /// Text after a hunk header's closing `@@`.
    HunkSection(Index, Index),
    /// `/dev/null` <-> a name on a `---`/`+++` line.
    DevNull(Index),
    Nul(Index, Index),
    TruncateLastNewline,
    /// `new file mode` <-> `deleted file mode`.
    NewDeletedSwap(Index),
    /// Remove a line outside hunk bodies.
    DropLine(Index),
    /// Repeat a line outside hunk bodies.
    RepeatLine(Index),
    /// Swap the values of `old mode` and `new mode`.
    SwapModes(Index),
    /// A similarity value, or a `dissimilarity index` line.
    Similarity(Index, Index),
    /// Add `old mode`/`new mode` lines.
    AddModeLines(Index, Index),
    /// A `\ No newline at end of file` after a hunk line.
    NoNewlineMarker(Index),
    /// An empty context line written as an empty line.
    EmptyContext(Index),
    /// Hunks replaced by a `Binary files ... differ` line.
    Binary(Index),
    /// The `---`/`+++` lines and hunks removed.
    DropContent(Index),
    /// A hunk body rewritten so that it still matches the base (see [`HunkRewrite`]).
    HunkBody(Index, HunkRewrite),
    /// Two file patches change places.
    SwapPatches(Index, Index),
}

/// Rewrites of one hunk's body that keep its old side, so it still matches the base.
#[derive(Debug, Clone, Copy)]
pub enum HunkRewrite {
    /// Removed lines become context, added lines go: only context is left.
    ContextOnly,
    /// Every removed line is added back right after it, added lines go: a change to nothing.
    NoOp,
    /// Added lines go.
    DropAdded,
    /// Removed lines become context.
    KeepRemoved,
}

pub fn mutation_strategy() -> impl Strategy<Value = Mutation> {
    let i = any::<Index>;
    let b = any::<bool>;
    prop_oneof![
        1 => (i(), i()).prop_map(|(a, n)| Mutation::MarkerName(a, n)),
        1 => (i(), i(), b()).prop_map(|(a, n, s)| Mutation::HeaderName(a, n, s)),
        1 => (i(), i()).prop_map(|(a, n)| Mutation::FromToName(a, n)),
        1 => i().prop_map(Mutation::LegacyRename),
        1 => i().prop_map(Mutation::RenameCopySwap),
        1 => i().prop_map(Mutation::DropPrefixes),
        1 => (i(), any::<u8>(), i()).prop_map(|(f, s, at)| Mutation::Traditional(f, s, at)),
        1 => (i(), 0..4u8, b()).prop_map(|(h, f, up)| Mutation::HunkCount(h, f, up)),
        3 => (i(), b()).prop_map(|(h, up)| Mutation::ShiftHunk(h, up)),
        1 => i().prop_map(Mutation::CrlfHeader),
        3 => i().prop_map(Mutation::CrlfAdded),
        1 => i().prop_map(Mutation::Append),
        1 => (i(), i()).prop_map(|(a, t)| Mutation::Insert(a, t)),
        1 => i().prop_map(Mutation::Duplicate),
        3 => (i(), i()).prop_map(|(a, m)| Mutation::IndexMode(a, m)),
        3 => (i(), b()).prop_map(|(a, all)| Mutation::Quote(a, all)),
        3 => (i(), b()).prop_map(|(a, all)| Mutation::Unquote(a, all)),
        3 => (i(), i(), b()).prop_map(|(a, p, all)| Mutation::OctalEscape(a, p, all)),
        1 => (i(), i()).prop_map(|(a, d)| Mutation::Disguise(a, d)),
        3 => (i(), i()).prop_map(|(a, n)| Mutation::RenamePatch(a, n)),
        3 => (i(), b(), b()).prop_map(|(a, tab, all)| Mutation::TrailingWhitespace(a, tab, all)),
        3 => i().prop_map(Mutation::ExplicitCounts),
        3 => (i(), i()).prop_map(|(h, t)| Mutation::HunkSection(h, t)),
        1 => i().prop_map(Mutation::DevNull),
        1 => (i(), i()).prop_map(|(a, p)| Mutation::Nul(a, p)),
        1 => Just(Mutation::TruncateLastNewline),
        1 => i().prop_map(Mutation::NewDeletedSwap),
        1 => i().prop_map(Mutation::DropLine),
        1 => i().prop_map(Mutation::RepeatLine),
        1 => i().prop_map(Mutation::SwapModes),
        3 => (i(), i()).prop_map(|(a, v)| Mutation::Similarity(a, v)),
        1 => (i(), i()).prop_map(|(a, m)| Mutation::AddModeLines(a, m)),
        3 => i().prop_map(Mutation::NoNewlineMarker),
        3 => i().prop_map(Mutation::EmptyContext),
        1 => i().prop_map(Mutation::Binary),
        1 => i().prop_map(Mutation::DropContent),
        10 => (i(), hunk_rewrite()).prop_map(|(h, r)| Mutation::HunkBody(h, r)),
        3 => (i(), i()).prop_map(|(a, b)| Mutation::SwapPatches(a, b)),
    ]
}

pub fn hunk_rewrite() -> impl Strategy<Value = HunkRewrite> {
    prop_oneof![
        Just(HunkRewrite::ContextOnly),
        Just(HunkRewrite::NoOp),
        Just(HunkRewrite::DropAdded),
        Just(HunkRewrite::KeepRemoved),
    ]
}

/// Rewrite the body of the hunk whose header is line `h`.
pub fn rewrite_hunk(doc: &mut Doc, kinds: &[K], h: usize, how: HunkRewrite) {
    let Some((n, _, rest)) = hunk_numbers(&doc.lines[h]) else {
        return;
    };
    let end = (h + 1..doc.lines.len())
        .find(|&j| !matches!(kinds[j], K::Body | K::Marker))
        .unwrap_or(doc.lines.len());
    // (kind, content, followed by a `\ No newline` marker)
    let mut body: Vec<(u8, Vec<u8>, bool)> = Vec::new();
    for (l, k) in doc.lines[h + 1..end].iter().zip(&kinds[h + 1..end]) {
        if *k == K::Marker {
            if let Some(last) = body.last_mut() {
                last.2 = true;
            }
            continue;
        }
        body.push((
            l.first().copied().unwrap_or(b' '),
            l.get(1..).unwrap_or_default().to_vec(),
            false,
        ));
    }
    let mut out: Vec<(u8, Vec<u8>, bool)> = Vec::new();
    for (k, c, m) in body {
        match (how, k) {
            (_, b'+') if !matches!(how, HunkRewrite::KeepRemoved) => {}
            (HunkRewrite::ContextOnly | HunkRewrite::KeepRemoved, b'-') => out.push((b' ', c, m)),
            (HunkRewrite::NoOp, b'-') => {
                out.push((b'-', c.clone(), m));
                out.push((b'+', c, m));
            }
            _ => out.push((k, c, m)),
        }
    }
    let old = out.iter().filter(|(k, _, _)| *k != b'+').count() as u64;
    let new = out.iter().filter(|(k, _, _)| *k != b'-').count() as u64;
    if old == 0 && new == 0 {
        return;
    }
    let mut lines = vec![hunk_line([n[0], old, n[2], new], [true, true], &rest)];
    for (k, c, m) in out {
        lines.push([&[k][..], &c[..]].concat());
        if m {
            lines.push(b"\\ No newline at end of file".to_vec());
        }
    }
    doc.lines.splice(h..end, lines);
}

/// A traditional patch adding one line at the top of a base file.
pub fn traditional_patch(base: &Tree, file: &Index, style: u8) -> Vec<Vec<u8>> {
    let files: Vec<(&Vec<u8>, &Entry)> = base.iter().filter(|(_, e)| e.mode != MODE_LINK).collect();
    let (path, entry) = files[file.index(files.len())];
    let (old, new): (Vec<u8>, Vec<u8>) = match style % 4 {
        0 => ([b"a/", &path[..]].concat(), [b"b/", &path[..]].concat()),
        1 => (path.clone(), path.clone()),
        2 => (
            [b"orig/", &path[..]].concat(),
            [b"new/", &path[..]].concat(),
        ),
        _ => (
            [b"a/", &path[..]].concat(),
            [b"b/", NEW_NAMES[usize::from(style / 4) % NEW_NAMES.len()]].concat(),
        ),
    };
    let stamp: &[u8] = if style & 0x40 != 0 {
        b"\t2026-01-01 00:00:00.000000000 +0000"
    } else {
        b""
    };
    let mut out = vec![
        [b"--- ", &quote(&old, false, None)[..], stamp].concat(),
        [b"+++ ", &quote(&new, false, None)[..], stamp].concat(),
    ];
    let doc = Doc::parse(&entry.data);
    let n = doc.lines.len() as u64;
    if n == 0 {
        out.push(b"@@ -0,0 +1 @@".to_vec());
        out.push(b"+injected".to_vec());
    } else {
        out.push(format!("@@ -1,{n} +1,{} @@", n + 1).into_bytes());
        out.push(b"+injected".to_vec());
        for l in &doc.lines {
            out.push([b" ", &l[..]].concat());
        }
        if !doc.final_newline {
            out.push(b"\\ No newline at end of file".to_vec());
        }
    }
    out
}

/// Apply one mutation; a mutation with nothing to act on leaves the diff as it is.
pub fn mutate(doc: &mut Doc, m: &Mutation, base: &Tree) {
    let kinds = classify(&doc.lines);
    let of_kind = |wanted: &[K]| lines_where(doc, &kinds, |k, _| wanted.contains(&k));
    let starts = of_kind(&[K::DiffGit]);
    match m {
        Mutation::MarkerName(a, n) => {
            if let Some(i) = pick(&of_kind(&[K::Plus, K::Minus]), a) {
                let prefix: &[u8] = if kinds[i] == K::Plus { b"b/" } else { b"a/" };
                let name = [prefix, &any_name(*n)[..]].concat();
                doc.lines[i].truncate(4);
                doc.lines[i].extend(quote(&name, false, None));
            }
        }
        Mutation::HeaderName(a, n, new_side) => {
            if let Some(i) = pick(&starts, a) {
                let toks = diff_git_tokens(&doc.lines[i]);
                if let Some(&(s, e)) = toks.get(usize::from(*new_side)) {
                    let prefix: &[u8] = if *new_side { b"b/" } else { b"a/" };
                    let name = quote(&[prefix, &any_name(*n)[..]].concat(), false, None);
                    doc.lines[i].splice(s..e, name);
                }
            }
        }
        Mutation::FromToName(a, n) => {
            let c = lines_where(doc, &kinds, |k, l| {
                k == K::Ext && FROM_TO.iter().any(|p| l.starts_with(p))
            });
            if let Some(i) = pick(&c, a) {
                let name = any_name(*n);
                restyle_line(&mut doc.lines[i], K::Ext, &|_| quote(&name, false, None));
            }
        }
        Mutation::LegacyRename(a) => {
            if let Some((s, e)) = pick(&starts, a).and_then(|i| patch_of(&kinds, i)) {
                for l in &mut doc.lines[s..e] {
                    if let Some(rest) = l.strip_prefix(b"rename from ") {
                        *l = [b"rename old ", rest].concat();
                    } else if let Some(rest) = l.strip_prefix(b"rename to ") {
                        *l = [b"rename new ", rest].concat();
                    }
                }
            }
        }
        Mutation::RenameCopySwap(a) => {
            if let Some((s, e)) = pick(&starts, a).and_then(|i| patch_of(&kinds, i)) {
                for (l, k) in doc.lines[s..e].iter_mut().zip(&kinds[s..e]) {
                    if *k != K::Ext {
                        continue;
                    }
                    if let Some(rest) = l.strip_prefix(b"rename ") {
                        *l = [b"copy ", rest].concat();
                    } else if let Some(rest) = l.strip_prefix(b"copy ") {
                        *l = [b"rename ", rest].concat();
                    }
                }
            }
        }
        Mutation::DropPrefixes(a) => {
            if let Some(i) = pick(&of_kind(&[K::DiffGit, K::Minus, K::Plus]), a) {
                restyle_line(&mut doc.lines[i], kinds[i], &|t| {
                    let bare = t
                        .strip_prefix(b"a/")
                        .or_else(|| t.strip_prefix(b"b/"))
                        .unwrap_or(t);
                    quote(bare, false, None)
                });
            }
        }
        Mutation::Traditional(f, style, at) => {
            let patch = traditional_patch(base, f, *style);
            let mut places = starts.clone();
            places.push(doc.lines.len());
            let pos = pick(&places, at).unwrap_or(0);
            doc.lines.splice(pos..pos, patch);
        }
        Mutation::HunkCount(h, field, up) => {
            if let Some(i) = pick(&of_kind(&[K::Hunk]), h)
                && let Some((mut n, has, rest)) = hunk_numbers(&doc.lines[i])
            {
                let f = usize::from(*field % 4);
                n[f] = if *up {
                    n[f] + 1
                } else {
                    n[f].saturating_sub(1)
                };
                doc.lines[i] = hunk_line(n, has, &rest);
            }
        }
        Mutation::ShiftHunk(h, up) => {
            if let Some(i) = pick(&of_kind(&[K::Hunk]), h)
                && let Some((mut n, has, rest)) = hunk_numbers(&doc.lines[i])
            {
                for f in [0, 2] {
                    n[f] = if *up {
                        n[f] + 1
                    } else {
                        n[f].saturating_sub(1)
                    };
                }
                doc.lines[i] = hunk_line(n, has, &rest);
            }
        }
        Mutation::CrlfHeader(a) => {
            let c = lines_where(doc, &kinds, |k, _| k != K::Body);
            if let Some(i) = pick(&c, a) {
                doc.lines[i].push(b'\r');
            }
        }
        Mutation::CrlfAdded(a) => {
            let c = lines_where(doc, &kinds, |k, l| k == K::Body && l.first() == Some(&b'+'));
            if let Some(i) = pick(&c, a) {
                doc.lines[i].push(b'\r');
            }
        }
        Mutation::Append(t) => doc.lines.push(GARBAGE[t.index(GARBAGE.len())].to_vec()),
        Mutation::Insert(a, t) => {
            let mut places = starts.clone();
            places.push(doc.lines.len());
            let pos = pick(&places, a).unwrap_or(0);
            doc.lines
                .insert(pos, GARBAGE[t.index(GARBAGE.len())].to_vec());
        }
        Mutation::Duplicate(a) => {
            if let Some((s, e)) = pick(&starts, a).and_then(|i| patch_of(&kinds, i)) {
                let copy: Vec<Vec<u8>> = doc.lines[s..e].to_vec();
                doc.lines.splice(e..e, copy);
            }
        }
        Mutation::IndexMode(a, m) => {
            let c = lines_where(doc, &kinds, |k, l| k == K::Ext && l.starts_with(b"index "));
            if let Some(i) = pick(&c, a) {
                let l = &mut doc.lines[i];
                if let Some(sp) = l[6..].iter().position(|&b| b == b' ') {
                    l.truncate(6 + sp);
                }
                l.extend_from_slice(INDEX_MODES[m.index(INDEX_MODES.len())]);
            }
        }
        Mutation::Quote(a, all) => {
            if let Some(i) = pick(&name_lines(doc, &kinds), a) {
                restyle(doc, &kinds, i, *all, &|t| quote(t, true, None));
            }
        }
        Mutation::Unquote(a, all) => {
            if let Some(i) = pick(&name_lines(doc, &kinds), a) {
                restyle(doc, &kinds, i, *all, &|t| t.to_vec());
            }
        }
        Mutation::OctalEscape(a, p, all) => {
            if let Some(i) = pick(&name_lines(doc, &kinds), a) {
                let p = *p;
                restyle(doc, &kinds, i, *all, &move |t| {
                    if t == b"/dev/null" || t.is_empty() {
                        t.to_vec()
                    } else {
                        quote(t, true, Some(p.index(t.len())))
                    }
                });
            }
        }
        Mutation::Disguise(a, d) => {
            if let Some(i) = pick(&starts, a) {
                let (name, octal) = DISGUISES[d.index(DISGUISES.len())];
                restyle(doc, &kinds, i, true, &|t| renamed_token(t, name, octal));
            }
        }
        Mutation::RenamePatch(a, n) => {
            if let Some(i) = pick(&starts, a) {
                let name = any_name(*n);
                restyle(doc, &kinds, i, true, &|t| renamed_token(t, &name, false));
            }
        }
        Mutation::TrailingWhitespace(a, tab, all) => {
            if let Some(i) = pick(&name_lines(doc, &kinds), a) {
                let ws = if *tab { b'\t' } else { b' ' };
                if *all {
                    restyle(doc, &kinds, i, true, &|t| {
                        if t == b"/dev/null" {
                            t.to_vec()
                        } else {
                            quote(&[t, &[ws][..]].concat(), false, None)
                        }
                    });
                } else {
                    doc.lines[i].push(ws);
                }
            }
        }
        Mutation::ExplicitCounts(h) => {
            if let Some(i) = pick(&of_kind(&[K::Hunk]), h)
                && let Some((n, has, rest)) = hunk_numbers(&doc.lines[i])
            {
                let has = if has.contains(&false) {
                    [true, true]
                } else {
                    [false, false]
                };
                doc.lines[i] = hunk_line(n, has, &rest);
            }
        }
        Mutation::HunkSection(h, t) => {
            if let Some(i) = pick(&of_kind(&[K::Hunk]), h)
                && let Some((n, has, _)) = hunk_numbers(&doc.lines[i])
            {
                doc.lines[i] = hunk_line(n, has, SECTIONS[t.index(SECTIONS.len())]);
            }
        }
        Mutation::DevNull(a) => {
            if let Some(i) = pick(&of_kind(&[K::Minus, K::Plus]), a) {
                if &doc.lines[i][4..] == b"/dev/null" {
                    let header = patch_of(&kinds, i).map(|(s, _)| s);
                    if let Some(h) = header {
                        let toks = diff_git_tokens(&doc.lines[h]);
                        let side = usize::from(kinds[i] == K::Plus);
                        if let Some(&(s, e)) = toks.get(side) {
                            let tok = doc.lines[h][s..e].to_vec();
                            doc.lines[i].truncate(4);
                            doc.lines[i].extend(tok);
                        }
                    }
                } else {
                    doc.lines[i].truncate(4);
                    doc.lines[i].extend_from_slice(b"/dev/null");
                }
            }
        }
        Mutation::Nul(a, p) => {
            if !doc.lines.is_empty() {
                let i = a.index(doc.lines.len());
                let pos = p.index(doc.lines[i].len() + 1);
                doc.lines[i].insert(pos, 0);
            }
        }
        Mutation::TruncateLastNewline => doc.final_newline = false,
        Mutation::NewDeletedSwap(a) => {
            let c = lines_where(doc, &kinds, |k, l| {
                k == K::Ext
                    && (l.starts_with(b"new file mode ") || l.starts_with(b"deleted file mode "))
            });
            if let Some(i) = pick(&c, a) {
                let l = &mut doc.lines[i];
                *l = if let Some(rest) = l.strip_prefix(b"new file mode ") {
                    [b"deleted file mode ", rest].concat()
                } else {
                    [b"new file mode ", &l[b"deleted file mode ".len()..]].concat()
                };
            }
        }
        Mutation::DropLine(a) => {
            let c = lines_where(doc, &kinds, |k, _| k != K::Body);
            if let Some(i) = pick(&c, a) {
                doc.lines.remove(i);
            }
        }
        Mutation::RepeatLine(a) => {
            let c = lines_where(doc, &kinds, |k, _| k != K::Body);
            if let Some(i) = pick(&c, a) {
                let l = doc.lines[i].clone();
                doc.lines.insert(i, l);
            }
        }
        Mutation::SwapModes(a) => {
            if let Some((s, e)) = pick(&starts, a).and_then(|i| patch_of(&kinds, i)) {
                let old = (s..e).find(|&j| doc.lines[j].starts_with(b"old mode "));
                let new = (s..e).find(|&j| doc.lines[j].starts_with(b"new mode "));
                if let (Some(o), Some(n)) = (old, new) {
                    let ov = doc.lines[o][9..].to_vec();
                    let nv = doc.lines[n][9..].to_vec();
                    doc.lines[o].truncate(9);
                    doc.lines[o].extend(nv);
                    doc.lines[n].truncate(9);
                    doc.lines[n].extend(ov);
                }
            }
        }
        Mutation::Similarity(a, v) => {
            let value = SIMILARITIES[v.index(SIMILARITIES.len())];
            let c = lines_where(doc, &kinds, |k, l| {
                k == K::Ext
                    && (l.starts_with(b"similarity index ")
                        || l.starts_with(b"dissimilarity index "))
            });
            if let Some(i) = pick(&c, a) {
                let l = &mut doc.lines[i];
                let at = l.iter().rposition(|&b| b == b' ').unwrap_or(l.len()) + 1;
                l.truncate(at);
                l.extend_from_slice(value);
            } else if let Some(i) = pick(&starts, a) {
                doc.lines
                    .insert(i + 1, [b"dissimilarity index ", value].concat());
            }
        }
        Mutation::AddModeLines(a, m) => {
            if let Some(i) = pick(&starts, a) {
                let (o, n) = MODE_PAIRS[m.index(MODE_PAIRS.len())];
                doc.lines.insert(i + 1, [b"new mode ", n].concat());
                doc.lines.insert(i + 1, [b"old mode ", o].concat());
            }
        }
        Mutation::NoNewlineMarker(a) => {
            if let Some(i) = pick(&of_kind(&[K::Body]), a) {
                doc.lines
                    .insert(i + 1, b"\\ No newline at end of file".to_vec());
            }
        }
        Mutation::EmptyContext(a) => {
            let c = lines_where(doc, &kinds, |k, l| k == K::Body && l == b" ");
            if let Some(i) = pick(&c, a) {
                doc.lines[i].clear();
            }
        }
        Mutation::HunkBody(h, how) => {
            if let Some(i) = pick(&of_kind(&[K::Hunk]), h) {
                rewrite_hunk(doc, &kinds, i, *how);
            }
        }
        Mutation::SwapPatches(a, b) => {
            let ps = patches(&kinds);
            if ps.len() >= 2 {
                let (x, y) = (a.index(ps.len()), b.index(ps.len()));
                let (x, y) = (x.min(y), x.max(y));
                if x != y {
                    let (px, py) = (ps[x], ps[y]);
                    let mut lines = doc.lines[..px.0].to_vec();
                    lines.extend_from_slice(&doc.lines[py.0..py.1]);
                    lines.extend_from_slice(&doc.lines[px.1..py.0]);
                    lines.extend_from_slice(&doc.lines[px.0..px.1]);
                    lines.extend_from_slice(&doc.lines[py.1..]);
                    doc.lines = lines;
                }
            }
        }
        Mutation::Binary(a) | Mutation::DropContent(a) => {
            if let Some((s, e)) = pick(&starts, a).and_then(|i| patch_of(&kinds, i))
                && let Some(minus) = (s..e).find(|&j| kinds[j] == K::Minus)
            {
                let replacement = if matches!(m, Mutation::Binary(_)) {
                    let old = doc.lines[minus][4..].to_vec();
                    let new = doc
                        .lines
                        .get(minus + 1)
                        .and_then(|l| l.get(4..))
                        .unwrap_or_default()
                        .to_vec();
                    vec![[b"Binary files ", &old[..], b" and ", &new[..], b" differ"].concat()]
                } else {
                    Vec::new()
                };
                doc.lines.splice(minus..e, replacement);
            }
        }
    }
}
