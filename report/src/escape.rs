//! Escapers for the sinks `report` writes to. Everything derived from a diff (paths, messages,
//! policy entries, scope globs) is attacker-influenced text; each sink has its own delimiters and
//! its own ways to turn text into markup, links, notifications or commands.
//!
//! Every renderer first applies [`neutralize`] (the contract's one definition: invisible and
//! reordering characters become a visible `\u{..}`), then the sink escaper here.

pub use contract::escape::{is_hidden, neutralize};

/// ASCII punctuation that starts or ends inline markup in GitHub-flavoured markdown anywhere in a
/// line: code (`` ` ``), emphasis and strikethrough (`*`, `_`, `~`), links and images (`[`, `]`,
/// `!`), HTML and autolinks (`<`, `>`), table cells (`|`), math (`$`), entity and character
/// references (`&`), and the escape itself (`\`). Each is written backslash-escaped, which
/// CommonMark renders as the character itself.
const INLINE_MARKUP: &[char] = &[
    '\\', '`', '*', '_', '~', '[', ']', '!', '<', '>', '|', '$', '&',
];

/// Escape prose for GitHub-flavoured markdown, wherever inline text may appear: a paragraph, a list
/// item, a table cell, a heading, link text.
///
/// - [`INLINE_MARKUP`] characters are backslash-escaped (`*` → `\*`); everything else that is not
///   markup where it stands (`.`, `:`, `-`, `/`, `(`, ...) stays as it is, so the source reads as
///   the text does. At the start (after any leading white space: a block may be indented by up
///   to three spaces), `#`, `+`, `-`, `=` and the `.` or `)` after leading digits, which would
///   start a heading, a rule, a setext underline or a list there, are escaped too.
/// - GitHub resolves mentions, issue references and autolinks on the *rendered* text, where an
///   escape is gone, but never inside code. A word (a run without white space) holding what
///   GitHub could resolve (`@`, `#` before a digit, `GH-` before a digit, `://`, `www.`, a bare
///   commit SHA: seven or more hex digits standing as a word of their own) is written
///   as code spans instead ([`needs_code_span`]): `@org/team` notifies no one and copies exactly.
///   A `|` in such a word is written `\|` between the spans, so the same text is safe in a table
///   cell and outside one.
/// - Newlines, tabs, other controls, bidi and zero-width characters become a visible `\u{..}`
///   (see [`neutralize`]), its backslash escaped.
///
/// Names that readers copy (paths, globs, policy entries) belong in [`code_span`] instead.
pub fn escape_markdown(text: &str) -> String {
    let shown = neutralize(text);
    let chars: Vec<char> = shown.chars().collect();
    let mut out = String::with_capacity(shown.len() * 2);
    // What starts a block is recognised after up to three spaces of indentation (and a tab is
    // indentation too), so the line-start escapes apply at the first character that is not white
    // space, wherever it is.
    let leading_space = chars.iter().take_while(|c| c.is_whitespace()).count();
    let leading_digits = chars[leading_space..]
        .iter()
        .take_while(|c| c.is_ascii_digit())
        .count();
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].is_whitespace() {
            let end = chars[i..]
                .iter()
                .position(|c| c.is_whitespace())
                .map_or(chars.len(), |n| i + n);
            let word: String = chars[i..end].iter().collect();
            if needs_code_span(&word) {
                for (k, piece) in word.split('|').enumerate() {
                    if k > 0 {
                        out.push_str("\\|");
                    }
                    out.push_str(&fence(piece));
                }
                i = end;
                continue;
            }
        }
        let c = chars[i];
        let line_start = (i == leading_space && matches!(c, '#' | '+' | '-' | '='))
            || (i == leading_space + leading_digits
                && leading_digits > 0
                && matches!(c, '.' | ')'));
        if INLINE_MARKUP.contains(&c) || line_start {
            out.push('\\');
        }
        out.push(c);
        i += 1;
    }
    out
}

/// Whether GitHub could turn something in `word` (no white space in it) into a mention (`@`), an
/// issue or pull request reference (`#1`, `GH-1`), a commit link (a bare SHA: an alphanumeric run
/// of seven or more hex digits, which GitHub links to the commit, a fork's too) or a link
/// (`scheme://`, `www.`) on the rendered page: such a word is written in code spans by
/// [`escape_markdown`]. Ordinary words made of hex letters only (`defaced`) are written as code
/// too: a code span is harmless, a guessed link is not.
pub fn needs_code_span(word: &str) -> bool {
    let chars: Vec<char> = word.chars().collect();
    let bare_sha = word
        .split(|c: char| !c.is_alphanumeric())
        .any(|run| run.chars().count() >= 7 && run.chars().all(|c| c.is_ascii_hexdigit()));
    bare_sha
        || chars.iter().enumerate().any(|(i, &c)| {
            let next = chars.get(i + 1).copied();
            match c {
                '@' => true,
                '#' => next.is_some_and(|n| n.is_ascii_digit()),
                '-' => {
                    next.is_some_and(|n| n.is_ascii_digit())
                        && i >= 2
                        && chars[i - 2].eq_ignore_ascii_case(&'g')
                        && chars[i - 1].eq_ignore_ascii_case(&'h')
                }
                ':' => next == Some('/') && chars.get(i + 2) == Some(&'/'),
                '.' => i >= 3 && chars[i - 3..i].iter().all(|b| b.eq_ignore_ascii_case(&'w')),
                _ => false,
            }
        })
}

/// `text` as an inline code span, outside a table: copied from the rendered page it gives back
/// exactly `text` (after [`neutralize`]), and nothing in it becomes markup, a mention, a
/// reference, an emoji or a link. The fence is one backtick longer than the longest run inside,
/// and a space pads content that starts or ends with a backtick or a space.
pub fn code_span(text: &str) -> String {
    fence(&neutralize(text))
}

/// [`code_span`] for a table cell: GFM splits cells on `|` before it parses code spans, so a `|`
/// inside is written `\|` (which GFM turns back into `|` inside the span).
pub fn table_code_span(text: &str) -> String {
    fence(&neutralize(text).replace('|', "\\|"))
}

fn fence(content: &str) -> String {
    if content.is_empty() {
        return String::new();
    }
    let mut longest = 0;
    let mut run = 0;
    for c in content.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let ticks = "`".repeat(longest + 1);
    let pad = if content.starts_with(['`', ' ']) || content.ends_with(['`', ' ']) {
        " "
    } else {
        ""
    };
    format!("{ticks}{pad}{content}{pad}{ticks}")
}

/// `lines` as a fenced code block: GitHub renders nothing inside one (no markup, HTML, mention,
/// reference, emoji or link), so what a reader copies is exactly each line (after [`neutralize`],
/// which also keeps a line from holding a line break). The fence is backticks, one more than the
/// longest run of backticks in any line and at least three, so no line can close it.
pub fn code_block(lines: &[&str]) -> String {
    let shown: Vec<String> = lines.iter().map(|l| neutralize(l)).collect();
    let mut longest = 0;
    for line in &shown {
        let mut run = 0;
        for c in line.chars() {
            run = if c == '`' { run + 1 } else { 0 };
            longest = longest.max(run);
        }
    }
    let fence = "`".repeat((longest + 1).max(3));
    let mut out = format!("{fence}\n");
    for line in &shown {
        out.push_str(line);
        out.push('\n');
    }
    out.push_str(&fence);
    out.push('\n');
    out
}

/// Escape the data (message) part of a GitHub workflow command: [`contract::escape::workflow_data`]
/// (`escapeData` of actions/toolkit), the one implementation `guard inputs` shares.
pub fn escape_workflow_data(text: &str) -> String {
    contract::escape::workflow_data(text)
}

/// Escape a property value (`file=`, `title=`) of a GitHub workflow command, as `escapeProperty`
/// does in actions/toolkit `command.ts`: [`escape_workflow_data`] plus `:` → `%3A` (which would end
/// the property list) and `,` → `%2C` (which would start another property).
pub fn escape_workflow_property(text: &str) -> String {
    // The data escape writes only `%`, digits and letters, so `:` and `,` can follow it safely.
    escape_workflow_data(text)
        .replace(':', "%3A")
        .replace(',', "%2C")
}

/// Escape a SARIF 2.1.0 plain-text message string (SARIF §3.11, "message object"):
/// - `{` and `}` are placeholder delimiters and must be written `{{` and `}}`;
/// - `[text](target)` is an embedded link; a hostile path must not become one, so `\`, `[` and `]`
///   are backslash-escaped, the escape the spec defines for link characters.
pub fn escape_sarif_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '{' => out.push_str("{{"),
            '}' => out.push_str("}}"),
            '\\' | '[' | ']' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// Percent-encode a repository-relative path as a relative URI reference (RFC 3986): every byte
/// outside the unreserved set (`A-Z a-z 0-9 - . _ ~`) and `/` becomes `%XX` of its UTF-8 encoding.
///
/// Hostile shapes cannot change what the reference points at: a leading `/` (which would make an
/// absolute path, or with `//` a network-path reference to another host) is encoded as `%2F`, and
/// `.`/`..` segments (which URI resolution would remove) are encoded as `%2E`. A `:` in the first
/// segment (which would read as a scheme) is encoded like any reserved character.
pub fn percent_encode_path(path: impl AsRef<[u8]>) -> String {
    let path = path.as_ref();
    let mut out = String::with_capacity(path.len() * 3);
    for (i, segment) in path.split(|&b| b == b'/').enumerate() {
        if i > 0 {
            out.push('/');
        }
        if segment == b"." || segment == b".." {
            out.push_str(&"%2E".repeat(segment.len()));
            continue;
        }
        for &b in segment {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
                out.push(b as char);
            } else {
                out.push_str(&format!("%{b:02X}"));
            }
        }
    }
    if let Some(rest) = out.strip_prefix('/') {
        return format!("%2F{rest}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_escapes_structure_and_puts_mentions_and_references_in_code() {
        assert_eq!(escape_markdown("a|b"), "a\\|b");
        assert_eq!(escape_markdown("@org/team"), "`@org/team`");
        assert_eq!(escape_markdown("#12 x#y"), "`#12` x#y");
        assert_eq!(escape_markdown("GH-12 a-b"), "`GH-12` a-b");
        assert_eq!(escape_markdown("<b>"), "\\<b\\>");
        assert_eq!(escape_markdown("x\ny"), "x\\\\u{a}y");
        assert_eq!(escape_markdown("src/main.rs: 1.5"), "src/main.rs: 1.5");
        assert_eq!(escape_markdown("1. item"), "1\\. item");
        assert_eq!(
            escape_markdown("https://evil.example www.x.io"),
            "`https://evil.example` `www.x.io`"
        );
        // Names with `::` are prose; nothing is inserted, they copy exactly.
        assert_eq!(
            escape_markdown("test gitignore::tests::cs4 failed"),
            "test gitignore::tests::cs4 failed"
        );
        // A word in code spans keeps its pipes outside them, escaped.
        assert_eq!(escape_markdown("a|@b|c"), "`a`\\|`@b`\\|`c`");
        assert_eq!(escape_markdown("x@`y"), "``x@`y``");
        assert_eq!(escape_markdown("caf\u{e9}"), "caf\u{e9}");
        assert_eq!(escape_markdown("\u{202e}"), "\\\\u{202e}");
    }

    #[test]
    fn code_blocks_fence_longer_than_any_backtick_run() {
        assert_eq!(code_block(&["a::b", "<b>@x"]), "```\na::b\n<b>@x\n```\n");
        assert_eq!(code_block(&["````"]), "`````\n````\n`````\n");
        assert_eq!(code_block(&["a\rb"]), "```\na\\u{d}b\n```\n");
    }

    #[test]
    fn code_spans_hold_text_exactly() {
        assert_eq!(code_span("deny: .github/**"), "`deny: .github/**`");
        assert_eq!(code_span("a`b"), "``a`b``");
        assert_eq!(code_span("`x"), "`` `x ``");
        assert_eq!(code_span(""), "");
        assert_eq!(table_code_span("a|b"), "`a\\|b`");
        assert_eq!(code_span("x\ny"), "`x\\u{a}y`");
    }

    #[test]
    fn workflow_escapes_match_toolkit() {
        assert_eq!(
            escape_workflow_data("50% a\r\nb::c,d:e"),
            "50%25 a%0D%0Ab::c,d:e"
        );
        assert_eq!(
            escape_workflow_property("50% a\r\nb::c,d:e"),
            "50%25 a%0D%0Ab%3A%3Ac%2Cd%3Ae"
        );
        assert_eq!(escape_workflow_data("%0A"), "%250A");
    }

    #[test]
    fn sarif_text_escapes_links_and_placeholders() {
        assert_eq!(
            escape_sarif_text("[x](1) {0} a\\b"),
            "\\[x\\](1) {{0}} a\\\\b"
        );
    }

    #[test]
    fn uri_paths_stay_relative_and_inside() {
        assert_eq!(percent_encode_path("src/a b.rs"), "src/a%20b.rs");
        assert_eq!(percent_encode_path("/etc/passwd"), "%2Fetc/passwd");
        assert_eq!(
            percent_encode_path("//evil.example/x"),
            "%2F/evil.example/x"
        );
        assert_eq!(percent_encode_path("a/../../b"), "a/%2E%2E/%2E%2E/b");
        assert_eq!(percent_encode_path("./a"), "%2E/a");
        assert_eq!(percent_encode_path("c:x"), "c%3Ax");
        assert_eq!(percent_encode_path("\u{e9}"), "%C3%A9");
        assert_eq!(percent_encode_path("a%2Fb"), "a%252Fb");
    }

    #[test]
    fn neutralize_shows_hidden_characters_only() {
        assert_eq!(
            neutralize("a\u{1b}[31m\\b\u{2028}"),
            "a\\u{1b}[31m\\b\\u{2028}"
        );
    }
}
