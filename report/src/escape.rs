//! Escapers for the sinks `report` writes to. Everything derived from a diff (paths, messages,
//! policy entries, scope globs) is attacker-influenced text; each sink has its own delimiters and
//! its own ways to turn text into markup, links, notifications or commands.
//!
//! Every renderer first applies [`neutralize`] (the contract's one definition: invisible and
//! reordering characters become a visible `\u{..}`), then the sink escaper here.

pub use contract::escape::{is_hidden, neutralize};

/// HTML numeric reference of U+200D ZERO WIDTH JOINER, inserted after characters that GitHub's
/// post-render filters would otherwise turn into mentions, issue references or emoji.
const ZWJ: &str = "&#8205;";

/// ASCII punctuation that stays raw in [`escape_markdown`]: none of it starts markup, a link, an
/// entity, a list, a heading, a table cell or math in GitHub-flavoured markdown.
const MARKDOWN_SAFE_PUNCTUATION: &[char] = &['/', ',', ';', '?', '%', '\'', '"', '^', '{', '}'];

/// Escape text for GitHub-flavoured markdown, anywhere inline text may appear: a paragraph, a
/// list item, a table cell, a heading, link text.
///
/// - Every ASCII punctuation character except [`MARKDOWN_SAFE_PUNCTUATION`] becomes a decimal
///   character reference (`|` → `&#124;`). CommonMark treats character references as literal
///   text, never as markup; GFM splits table cells on raw `|` before references are decoded; so
///   no pipe, backtick, emphasis, link, image, HTML tag, autolink (`www.`, `http:`), math (`$`),
///   block marker (`-`, `+`, `#`, `>`, `=`, `1.`) or escape (`\`) survives.
/// - GitHub resolves mentions, issue references and emoji on the *rendered* text, after
///   references are decoded. So `@`, `#` and `:` (and `-` before a digit, for `GH-123`) are
///   followed by a zero-width joiner: `@org/team` renders as `@\u{200d}org/team`, which notifies
///   no one, and `#123` links to no issue.
/// - Newlines, tabs, other controls, bidi and zero-width characters become a visible `\u{..}`
///   (see [`neutralize`]); the backslash of that form is itself escaped.
///
/// The output therefore contains no raw `|`, newline, `<`, `>`, `` ` ``, `@`, `[`, `]`, `(`, `)`,
/// `*`, `_`, `~`, `!`, `$` or `\`, and every `&` starts a reference of the form `&#DIGITS;`.
pub fn escape_markdown(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if is_hidden(c) {
            out.push_str(&format!("&#92;u{{{:x}}}", c as u32));
            continue;
        }
        match c {
            '@' | '#' | ':' => {
                push_reference(&mut out, c);
                out.push_str(ZWJ);
            }
            '-' if chars.peek().is_some_and(char::is_ascii_digit) => {
                push_reference(&mut out, c);
                out.push_str(ZWJ);
            }
            c if c.is_ascii_punctuation() && !MARKDOWN_SAFE_PUNCTUATION.contains(&c) => {
                push_reference(&mut out, c);
            }
            c => out.push(c),
        }
    }
    out
}

fn push_reference(out: &mut String, c: char) {
    out.push_str(&format!("&#{};", c as u32));
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
    fn markdown_escapes_structure_mentions_and_references() {
        assert_eq!(escape_markdown("a|b"), "a&#124;b");
        assert_eq!(escape_markdown("@org/team"), "&#64;&#8205;org/team");
        assert_eq!(escape_markdown("#12"), "&#35;&#8205;12");
        assert_eq!(escape_markdown("GH-12 a-b"), "GH&#45;&#8205;12 a&#45;b");
        assert_eq!(escape_markdown("<b>"), "&#60;b&#62;");
        assert_eq!(escape_markdown("x\ny"), "x&#92;u{a}y");
        assert_eq!(escape_markdown("src/main.rs"), "src/main&#46;rs");
        assert_eq!(escape_markdown("caf\u{e9}"), "caf\u{e9}");
        assert_eq!(escape_markdown("\u{202e}"), "&#92;u{202e}");
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
