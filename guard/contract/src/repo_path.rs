//! A path inside the repository as an exact value: the bytes the diff or the file system spells,
//! never a display form. Data documents (verdict, tree snapshot, build-test report, publication
//! plan) carry these; escaping happens only where a path is rendered for a sink
//! ([`RepoPath::display`] for a terminal, `report`'s escapers for markdown, annotations, SARIF).
//!
//! In JSON a path is a string holding exactly its bytes when they are UTF-8 (JSON's own escaping
//! is the only encoding: `"docs/\u200c.md"` is the path with a real ZERO WIDTH NON-JOINER). Bytes
//! that are not UTF-8, which only a rejecting verdict or a build's write can contain, cannot be a
//! JSON string; they are written as an object holding the bytes in lower-case hex:
//!
//! ```json
//! "src/caf\u00e9.rs"
//! {"bytes_hex": "7372632fff"}
//! ```
//!
//! A reader accepts a string, or an object with exactly that one key whose hex does **not** decode
//! to UTF-8, so every path has exactly one spelling and parsing a written document gives back the
//! same bytes.

use std::fmt;

use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The object key of a path that is not UTF-8.
pub const BYTES_HEX_KEY: &str = "bytes_hex";

/// A repository-relative path, byte-exact.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct RepoPath(Vec<u8>);

impl RepoPath {
    pub fn new(bytes: impl Into<Vec<u8>>) -> RepoPath {
        RepoPath(bytes.into())
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.0
    }

    /// The path as text, when it is UTF-8.
    pub fn to_str(&self) -> Option<&str> {
        std::str::from_utf8(&self.0).ok()
    }

    /// The path as text for a sink that escapes what it must itself (`report`'s markdown,
    /// annotation and SARIF escapers): the exact text when the path is UTF-8, else the display
    /// form, in which the bytes that are not UTF-8 read `\xNN`.
    pub fn sink_text(&self) -> std::borrow::Cow<'_, str> {
        match self.to_str() {
            Some(text) => std::borrow::Cow::Borrowed(text),
            None => std::borrow::Cow::Owned(self.display()),
        }
    }

    /// The guard's unambiguous display form for a terminal ([`crate::escape::display_bytes`]):
    /// controls, bidi and invisible characters as `\u{..}`, invalid bytes as `\xNN`. For showing
    /// only; never for comparing, matching or writing into a data document.
    pub fn display(&self) -> String {
        crate::escape::display_bytes(&self.0)
    }
}

impl fmt::Debug for RepoPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RepoPath({:?})", self.display())
    }
}

impl From<&[u8]> for RepoPath {
    fn from(bytes: &[u8]) -> RepoPath {
        RepoPath(bytes.to_vec())
    }
}

impl From<Vec<u8>> for RepoPath {
    fn from(bytes: Vec<u8>) -> RepoPath {
        RepoPath(bytes)
    }
}

impl From<&Vec<u8>> for RepoPath {
    fn from(bytes: &Vec<u8>) -> RepoPath {
        RepoPath(bytes.clone())
    }
}

impl From<&str> for RepoPath {
    fn from(text: &str) -> RepoPath {
        RepoPath(text.as_bytes().to_vec())
    }
}

impl From<String> for RepoPath {
    fn from(text: String) -> RepoPath {
        RepoPath(text.into_bytes())
    }
}

impl PartialEq<str> for RepoPath {
    fn eq(&self, other: &str) -> bool {
        self.0 == other.as_bytes()
    }
}

impl PartialEq<&str> for RepoPath {
    fn eq(&self, other: &&str) -> bool {
        self.0 == other.as_bytes()
    }
}

impl Serialize for RepoPath {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match self.to_str() {
            Some(text) => serializer.serialize_str(text),
            None => {
                let mut map = serializer.serialize_map(Some(1))?;
                map.serialize_entry(BYTES_HEX_KEY, &hex(&self.0))?;
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for RepoPath {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<RepoPath, D::Error> {
        deserializer.deserialize_any(RepoPathVisitor)
    }
}

struct RepoPathVisitor;

impl<'de> Visitor<'de> for RepoPathVisitor {
    type Value = RepoPath;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "a path: a string, or {{\"{BYTES_HEX_KEY}\": HEX}} for bytes that are not UTF-8"
        )
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<RepoPath, E> {
        Ok(RepoPath::from(text))
    }

    fn visit_string<E: de::Error>(self, text: String) -> Result<RepoPath, E> {
        Ok(RepoPath::from(text))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RepoPath, A::Error> {
        let Some(key) = map.next_key::<String>()? else {
            return Err(de::Error::custom(format!(
                "a path object needs the key {BYTES_HEX_KEY:?}"
            )));
        };
        if key != BYTES_HEX_KEY {
            return Err(de::Error::unknown_field(&key, &[BYTES_HEX_KEY]));
        }
        let text: String = map.next_value()?;
        if map.next_key::<String>()?.is_some() {
            return Err(de::Error::custom(format!(
                "a path object has exactly one key, {BYTES_HEX_KEY:?}"
            )));
        }
        let bytes = unhex(&text).ok_or_else(|| {
            de::Error::custom(format!(
                "{BYTES_HEX_KEY} must be an even number of lower-case hex digits"
            ))
        })?;
        if std::str::from_utf8(&bytes).is_ok() {
            // One spelling per path: UTF-8 paths are strings.
            return Err(de::Error::custom(format!(
                "{BYTES_HEX_KEY} holds UTF-8 text; write the path as a string"
            )));
        }
        Ok(RepoPath(bytes))
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    let digits = text.as_bytes();
    if digits.is_empty() || !digits.len().is_multiple_of(2) {
        return None;
    }
    let value = |d: u8| match d {
        b'0'..=b'9' => Some(d - b'0'),
        b'a'..=b'f' => Some(d - b'a' + 10),
        _ => None,
    };
    digits
        .chunks_exact(2)
        .map(|pair| Some(value(pair[0])? << 4 | value(pair[1])?))
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    fn round_trip(path: &RepoPath) -> RepoPath {
        serde_json::from_str(&serde_json::to_string(path).unwrap()).unwrap()
    }

    #[test]
    fn utf8_paths_are_exact_strings() {
        for text in [
            "docs/\u{645}\u{6cc}\u{200c}\u{62e}\u{648}\u{627}\u{647}\u{645}.md",
            "docs/\u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467}.md",
            "a\\b",
            "tab\there",
        ] {
            let path = RepoPath::from(text);
            let json = serde_json::to_string(&path).unwrap();
            assert_eq!(
                serde_json::from_str::<String>(&json).unwrap(),
                text,
                "{json}"
            );
            assert_eq!(round_trip(&path), path);
        }
    }

    #[test]
    fn other_bytes_are_hex_objects() {
        let path = RepoPath::from(&b"src/\xff.rs"[..]);
        let json = serde_json::to_string(&path).unwrap();
        assert_eq!(json, r#"{"bytes_hex":"7372632fff2e7273"}"#);
        assert_eq!(round_trip(&path), path);
    }

    #[test]
    fn refuses_every_second_spelling() {
        for bad in [
            r#"{"bytes_hex":"6162"}"#,     // UTF-8 written as hex
            r#"{"bytes_hex":"FF"}"#,       // upper case
            r#"{"bytes_hex":"f"}"#,        // odd length
            r#"{"bytes_hex":""}"#,         // empty
            r#"{"bytes_hex":"ff","x":1}"#, // extra key
            r#"{"hex":"ff"}"#,             // unknown key
            r#"{}"#,                       // no key
            r#"17"#,                       // not a path at all
        ] {
            assert!(
                serde_json::from_str::<RepoPath>(bad).is_err(),
                "accepted {bad}"
            );
        }
    }
}
