//! Identifiers parsed once, with one rule each, everywhere: a value of these types is valid by
//! construction, and a document field of these types refuses anything else when it is read.
//!
//! Hex is lower-case only, the form `sha256sum`, `git rev-parse` and GitHub print: an upper-case
//! spelling is refused with a message that says so, by every binary alike.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Why a value is not an id of its kind.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum IdError {
    #[error("{what} must be {rule}, got {shown}")]
    Invalid {
        what: &'static str,
        rule: &'static str,
        shown: String,
    },
}

/// At most this many characters of a refused value are shown (escaped).
const SHOWN_CHARS: usize = 80;

fn invalid(what: &'static str, rule: &'static str, value: &str) -> IdError {
    let cut: String = value.chars().take(SHOWN_CHARS).collect();
    let mut shown = format!("{:?}", crate::escape::neutralize(&cut));
    if value.chars().count() > SHOWN_CHARS {
        shown.push_str("...");
    }
    IdError::Invalid { what, rule, shown }
}

fn is_lower_hex(value: &str, len: usize) -> bool {
    value.len() == len
        && value
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

macro_rules! string_id {
    ($(#[$doc:meta])* $name:ident, $what:literal, $rule:literal, $valid:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(String);

        impl $name {
            /// What the value must be, in words.
            pub const RULE: &'static str = $rule;

            pub fn parse(value: &str) -> Result<$name, IdError> {
                let valid: fn(&str) -> bool = $valid;
                if valid(value) {
                    Ok($name(value.to_owned()))
                } else {
                    Err(invalid($what, $rule, value))
                }
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl std::str::FromStr for $name {
            type Err = IdError;
            fn from_str(value: &str) -> Result<$name, IdError> {
                $name::parse(value)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(&self.0)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<$name, D::Error> {
                let text = String::deserialize(deserializer)?;
                $name::parse(&text).map_err(serde::de::Error::custom)
            }
        }
    };
}

string_id!(
    /// A SHA-256 digest: 64 lower-case hex digits.
    Sha256Hex,
    "a SHA-256",
    "64 lower-case hex digits",
    |v| is_lower_hex(v, 64)
);

string_id!(
    /// A full git commit id: 40 lower-case hex digits.
    CommitId,
    "a commit id",
    "a full commit id, 40 lower-case hex digits",
    |v| is_lower_hex(v, 40)
);

string_id!(
    /// A GitHub Actions run id: decimal digits, no leading zero, fits in 64 bits.
    RunId,
    "a run id",
    "decimal digits without a leading zero (a GitHub Actions run id)",
    |v| !v.is_empty() && !v.starts_with('0') && v.bytes().all(|b| b.is_ascii_digit()) && v.parse::<u64>().is_ok()
);

impl Sha256Hex {
    /// The digest of `bytes`.
    pub fn of(bytes: &[u8]) -> Sha256Hex {
        use sha2::Digest;
        Sha256Hex::from_digest(&sha2::Sha256::digest(bytes).into())
    }

    pub fn from_digest(digest: &[u8; 32]) -> Sha256Hex {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut text = String::with_capacity(64);
        for b in digest {
            text.push(char::from(HEX[usize::from(b >> 4)]));
            text.push(char::from(HEX[usize::from(b & 0xf)]));
        }
        Sha256Hex(text)
    }

    /// The 32 raw bytes.
    pub fn digest(&self) -> [u8; 32] {
        let mut out = [0u8; 32];
        let value = |d: u8| match d {
            b'0'..=b'9' => d - b'0',
            _ => d - b'a' + 10,
        };
        for (i, pair) in self.0.as_bytes().chunks_exact(2).enumerate() {
            out[i] = value(pair[0]) << 4 | value(pair[1]);
        }
        out
    }

    /// Whether `bytes` hash to this digest, compared in constant time.
    pub fn matches(&self, bytes: &[u8]) -> bool {
        use sha2::Digest;
        use subtle::ConstantTimeEq;
        let actual: [u8; 32] = sha2::Sha256::digest(bytes).into();
        bool::from(actual.as_slice().ct_eq(self.digest().as_slice()))
    }
}

impl RunId {
    pub fn value(&self) -> u64 {
        // Valid by construction: decimal and within u64.
        self.0.parse().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    const EMPTY: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

    #[test]
    fn one_rule_each() {
        let valid: &[(&str, bool, bool, bool)] = &[
            // value, sha256, commit, run id
            (EMPTY, true, false, false),
            (
                "0123456789abcdef0123456789abcdef01234567",
                false,
                true,
                false,
            ),
            ("1796107790", false, false, true),
            ("18446744073709551615", false, false, true),
        ];
        for (value, sha, commit, run) in valid {
            assert_eq!(Sha256Hex::parse(value).is_ok(), *sha, "{value}");
            assert_eq!(CommitId::parse(value).is_ok(), *commit, "{value}");
            assert_eq!(RunId::parse(value).is_ok(), *run, "{value}");
        }
        for bad in [
            &EMPTY.to_ascii_uppercase(),
            &EMPTY[..63],
            &format!("{EMPTY}0"),
            "0123456789ABCDEF0123456789abcdef01234567",
            "0123456789abcdef0123456789abcdef0123456",
            "01796107790",
            "18446744073709551616",
            "",
            " 1",
            "g123",
        ] {
            assert!(Sha256Hex::parse(bad).is_err(), "{bad}");
            assert!(CommitId::parse(bad).is_err(), "{bad}");
            assert!(RunId::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn messages_say_the_rule_and_show_the_value_escaped() {
        let err = Sha256Hex::parse(&EMPTY.to_ascii_uppercase()).unwrap_err();
        assert!(
            err.to_string().contains("64 lower-case hex digits"),
            "{err}"
        );
        let err = CommitId::parse("abc\u{1b}[2J").unwrap_err();
        assert!(err.to_string().contains("\\\\u{1b}"), "{err}");
        assert!(!err.to_string().contains('\u{1b}'));
    }

    #[test]
    fn digests_round_trip_and_compare() {
        let sha = Sha256Hex::of(b"");
        assert_eq!(sha.as_str(), EMPTY);
        assert_eq!(Sha256Hex::from_digest(&sha.digest()), sha);
        assert!(sha.matches(b""));
        assert!(!sha.matches(b"x"));
        let json = serde_json::to_string(&sha).unwrap();
        assert_eq!(serde_json::from_str::<Sha256Hex>(&json).unwrap(), sha);
        assert!(serde_json::from_str::<Sha256Hex>("\"ABC\"").is_err());
    }
}
