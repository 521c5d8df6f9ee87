//! A strict reading of JSON text that keeps every object entry, so that duplicate keys can be
//! detected. `serde_json::Value` silently keeps the last of two equal keys; for a trust decision
//! that is a parser differential (GitHub, `jq` and this gate could each read a different
//! conclusion), so a duplicate anywhere in the document rejects it. Keys are compared after JSON
//! unescaping, so `"guard"` and `"gu\u0061rd"` are the same key.
//!
//! Syntax, UTF-8 and the nesting limit are serde_json's (it refuses more than 128 levels).

use std::collections::BTreeSet;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};

/// A JSON value with object entries in document order, duplicates included.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    /// The number's value is never needed by the gate, only its kind.
    Number,
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    /// The JSON type name, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "boolean",
            Json::Number => "number",
            Json::String(_) => "string",
            Json::Array(_) => "array",
            Json::Object(_) => "object",
        }
    }

    /// The value of `key` in an object (the first one; a parsed document has no duplicates).
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
}

/// Why a text is not acceptable JSON.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum JsonError {
    /// Not JSON at all: syntax, invalid UTF-8, trailing data, too deep.
    #[error("{0}")]
    Syntax(String),
    /// An object has the same key twice. `path` is the chain of keys from the top level down to
    /// and including the duplicated key (array positions appear as `[N]`).
    #[error("duplicate key at {}", path.join("."))]
    DuplicateKey { path: Vec<String> },
}

/// Parse `bytes` as one JSON document, rejecting duplicate keys at any depth.
pub fn parse(bytes: &[u8]) -> Result<Json, JsonError> {
    let value: Json =
        serde_json::from_slice(bytes).map_err(|e| JsonError::Syntax(e.to_string()))?;
    let mut path = Vec::new();
    find_duplicate(&value, &mut path)?;
    Ok(value)
}

fn find_duplicate(value: &Json, path: &mut Vec<String>) -> Result<(), JsonError> {
    match value {
        Json::Object(entries) => {
            let mut seen = BTreeSet::new();
            for (key, child) in entries {
                path.push(key.clone());
                if !seen.insert(key.as_str()) {
                    return Err(JsonError::DuplicateKey { path: path.clone() });
                }
                find_duplicate(child, path)?;
                path.pop();
            }
        }
        Json::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                path.push(format!("[{i}]"));
                find_duplicate(child, path)?;
                path.pop();
            }
        }
        Json::Null | Json::Bool(_) | Json::Number | Json::String(_) => {}
    }
    Ok(())
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Json, E> {
        Ok(Json::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Json, E> {
        Ok(Json::Number)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Json, E> {
        Ok(Json::Number)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Json, E> {
        Ok(Json::Number)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Json, E> {
        Ok(Json::String(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Json, E> {
        Ok(Json::String(v))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Json>()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value::<Json>()?;
            entries.push((key, value));
        }
        Ok(Json::Object(entries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dup_path(text: &str) -> Option<Vec<String>> {
        match parse(text.as_bytes()) {
            Err(JsonError::DuplicateKey { path }) => Some(path),
            _ => None,
        }
    }

    #[test]
    fn keeps_entries_in_order() {
        let v = parse(br#"{"b": {"result": "success"}, "a": [1, true, null, "x"]}"#);
        let expected = Json::Object(vec![
            (
                "b".into(),
                Json::Object(vec![("result".into(), Json::String("success".into()))]),
            ),
            (
                "a".into(),
                Json::Array(vec![
                    Json::Number,
                    Json::Bool(true),
                    Json::Null,
                    Json::String("x".into()),
                ]),
            ),
        ]);
        assert_eq!(v, Ok(expected));
    }

    #[test]
    fn duplicates_are_found_at_any_depth_and_after_unescaping() {
        assert_eq!(dup_path(r#"{"a": 1, "a": 2}"#), Some(vec!["a".into()]));
        assert_eq!(
            dup_path(r#"{"guard": {}, "gu\u0061rd": {}}"#),
            Some(vec!["guard".into()])
        );
        assert_eq!(
            dup_path(r#"{"j": {"result": "failure", "result": "success"}}"#),
            Some(vec!["j".into(), "result".into()])
        );
        assert_eq!(
            dup_path(r#"{"j": {"outputs": [{"k": 1, "k": 1}]}}"#),
            Some(vec!["j".into(), "outputs".into(), "[0]".into(), "k".into()])
        );
        // Equal keys in sibling objects are not duplicates.
        assert_eq!(dup_path(r#"{"a": {"k": 1}, "b": {"k": 1}}"#), None);
        assert!(parse(br#"{"a": {"k": 1}, "b": {"k": 1}}"#).is_ok());
    }

    #[test]
    fn syntax_errors() {
        for bad in [
            &b""[..],
            b"{",
            b"{} {}",
            b"{'a': 1}",
            b"{\"a\": 1,}",
            b"\xef\xbb\xbf{}",
            b"{\"a\xff\": 1}",
            b"{\"\\ud800\": 1}",
            b"NaN",
        ] {
            assert!(
                matches!(parse(bad), Err(JsonError::Syntax(_))),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert!(matches!(parse(deep.as_bytes()), Err(JsonError::Syntax(_))));
    }
}
