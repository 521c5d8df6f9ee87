//! The base escaping of diff-derived text for the sinks it reaches. Paths from a diff are attacker
//! bytes: a terminal must not see escape sequences, a reader must not see reordered or hidden
//! text, a GitHub workflow command must not see its own delimiters. `report` adds the escapers of
//! its own sinks (markdown, SARIF) on top of [`neutralize`].

/// Render raw path bytes for display: valid UTF-8 stays as is except for characters that could
/// fool a terminal or a reader (controls, bidi and zero-width format characters), which become
/// `\u{..}`; invalid bytes become `\xNN`; a backslash becomes `\\`. The result is printable and
/// unambiguous: two different byte strings never render the same.
pub fn display_bytes(raw: &[u8]) -> String {
    let mut out = String::with_capacity(raw.len());
    for chunk in raw.utf8_chunks() {
        for c in chunk.valid().chars() {
            push_char(&mut out, c);
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

/// Make every [`is_hidden`] character visible as `\u{..}`, leaving everything else (backslashes
/// included) alone: the first step for every sink that shows text to a person (a terminal, a log,
/// markdown, an annotation, SARIF message text), before that sink's own escaping.
///
/// Unlike [`display_bytes`] it is not injective (a literal `\u{1b}` and an ESC render the same),
/// which is acceptable for display; text already in display form passes through unchanged.
pub fn neutralize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if is_hidden(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

fn push_char(out: &mut String, c: char) {
    if c == '\\' {
        out.push_str("\\\\");
    } else if is_hidden(c) {
        out.push_str(&format!("\\u{{{:x}}}", c as u32));
    } else {
        out.push(c);
    }
}

/// Characters that must never reach a reader raw, because they are invisible or reorder text:
/// C0/C1 controls, DEL, bidi controls, zero-width and other format characters, the code points
/// HFS+ ignores, variation selectors, tags, and the Unicode line and paragraph separators (which
/// some viewers treat as line breaks).
pub fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{00ad}'
                | '\u{034f}'
                | '\u{061c}'
                | '\u{115f}'..='\u{1160}'
                | '\u{17b4}'..='\u{17b5}'
                | '\u{180b}'..='\u{180e}'
                | '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{206f}'
                | '\u{3164}'
                | '\u{fe00}'..='\u{fe0f}'
                | '\u{feff}'
                | '\u{ffa0}'
                | '\u{fff0}'..='\u{fffb}'
                | '\u{e0000}'..='\u{e0fff}'
        )
}

/// Escape the data (message) part of a GitHub workflow command, as `escapeData` does in
/// actions/toolkit `packages/core/src/command.ts`: `%` → `%25`, CR → `%0D`, LF → `%0A`. The runner
/// reverses exactly these. With line breaks escaped, nothing in the data can start a new command
/// line (`::stop-commands::`, `::add-mask::`, ...); a `::` inside the data is inert because the
/// runner splits on the first `::` after the command name.
pub fn workflow_data(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '%' => out.push_str("%25"),
            '\r' => out.push_str("%0D"),
            '\n' => out.push_str("%0A"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_terminal_controls_and_invalid_bytes() {
        assert_eq!(display_bytes(b"a\x1b[31mb"), "a\\u{1b}[31mb");
        assert_eq!(display_bytes(b"caf\xc3\xa9 x"), "caf\u{e9} x");
        assert_eq!(display_bytes(b"bad\xff"), "bad\\xff");
        assert_eq!(
            display_bytes("rtl\u{202e}txt".as_bytes()),
            "rtl\\u{202e}txt"
        );
        assert_eq!(display_bytes(b"a\\xff"), "a\\\\xff");
        assert_eq!(neutralize("line\nbreak"), "line\\u{a}break");
        assert_eq!(neutralize("para\u{2029}graph"), "para\\u{2029}graph");
        let shown = display_bytes(b"tab\there\\");
        assert_eq!(neutralize(&shown), shown);
    }
}
