//! How every data document is written: pretty JSON whose strings hold exact values, with the
//! characters that could mislead a reader of the raw file (controls, bidi and invisible format
//! characters, line and paragraph separators) written as JSON's own `\uXXXX` escapes.
//!
//! That is JSON's escaping, not a display form: a parser gives back exactly the original text
//! (`"docs/\u200c.md"` is the path with a real ZERO WIDTH NON-JOINER). It keeps a document shown in
//! a terminal or a log from reordering or hiding text, without changing any value.

use std::io;

use serde::Serialize;
use serde_json::ser::{Formatter, PrettyFormatter};

/// Pretty JSON with a trailing newline. A serialisation failure is an error, never an empty
/// document.
pub fn to_vec_pretty<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, serde_json::Error> {
    let mut out = Vec::with_capacity(1024);
    let mut serializer =
        serde_json::Serializer::with_formatter(&mut out, ReaderSafe(PrettyFormatter::new()));
    value.serialize(&mut serializer)?;
    out.push(b'\n');
    Ok(out)
}

/// [`to_vec_pretty`] as a `String`.
pub fn to_string_pretty<T: Serialize + ?Sized>(value: &T) -> Result<String, serde_json::Error> {
    let bytes = to_vec_pretty(value)?;
    // The serializer writes UTF-8 only; a failure here would be a bug, reported as an error.
    String::from_utf8(bytes).map_err(|e| serde_json::Error::io(io::Error::other(e)))
}

/// Whether a character is written as a `\uXXXX` escape.
pub fn escaped_in_documents(c: char) -> bool {
    crate::escape::is_hidden(c)
}

struct ReaderSafe(PrettyFormatter<'static>);

impl Formatter for ReaderSafe {
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut start = 0;
        for (at, c) in fragment.char_indices() {
            if escaped_in_documents(c) {
                writer.write_all(&fragment.as_bytes()[start..at])?;
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    write!(writer, "\\u{unit:04x}")?;
                }
                start = at + c.len_utf8();
            }
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }

    fn begin_array<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.begin_array(writer)
    }

    fn end_array<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_array(writer)
    }

    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_array_value(writer, first)
    }

    fn end_array_value<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_array_value(writer)
    }

    fn begin_object<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.begin_object(writer)
    }

    fn end_object<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_object(writer)
    }

    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_object_key(writer, first)
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.begin_object_value(writer)
    }

    fn end_object_value<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_object_value(writer)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    #[test]
    fn escapes_for_readers_and_keeps_values_exact() {
        let values = vec![
            "docs/\u{645}\u{6cc}\u{200c}\u{62e}\u{648}\u{627}\u{647}\u{645}.md".to_string(),
            "docs/\u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467}.md".to_string(),
            "evil\u{202e}cod.rs".to_string(),
            "esc\u{1b}[2J".to_string(),
            "tag\u{e0041}".to_string(),
            "caf\u{e9} \\ \"q\"".to_string(),
        ];
        let json = to_string_pretty(&values).unwrap();
        assert!(
            json.contains("\\u200c") && json.contains("\\u200d"),
            "{json}"
        );
        assert!(
            json.contains("\\u202e") && json.contains("\\u001b"),
            "{json}"
        );
        assert!(json.contains("\\udb40\\udc41"), "{json}");
        assert!(json.contains("caf\u{e9}"), "{json}");
        assert!(!json.chars().any(escaped_in_documents_raw), "{json}");
        let back: Vec<String> = serde_json::from_str(&json).unwrap();
        assert_eq!(back, values);
        assert!(json.ends_with("]\n"));
    }

    fn escaped_in_documents_raw(c: char) -> bool {
        c != '\n' && escaped_in_documents(c)
    }
}
