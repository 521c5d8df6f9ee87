//! Integrity: SHA-256 of the raw diff bytes, compared in constant time.

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Lower-case hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    to_hex(&sha256(bytes))
}

/// The raw SHA-256 of `bytes`.
pub fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// Lower-case hex of a digest.
pub fn to_hex(digest: &[u8; 32]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Constant-time equality of two digests.
pub fn digests_equal(a: &[u8; 32], b: &[u8; 32]) -> bool {
    bool::from(a.as_slice().ct_eq(b.as_slice()))
}

/// Parse a 64-digit hex SHA-256 (either case). `None` when it is not one.
pub fn parse_sha256(hex: &str) -> Option<[u8; 32]> {
    let bytes = hex.as_bytes();
    if bytes.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, pair) in bytes.chunks_exact(2).enumerate() {
        let hi = (pair[0] as char).to_digit(16)?;
        let lo = (pair[1] as char).to_digit(16)?;
        out[i] = (hi * 16 + lo) as u8;
    }
    Some(out)
}

/// Whether `bytes` hash to `expected` (32 raw bytes), compared in constant time.
pub fn matches(bytes: &[u8], expected: &[u8; 32]) -> bool {
    digests_equal(&sha256(bytes), expected)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_vector_and_mismatch() {
        let empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
        assert_eq!(sha256_hex(b""), empty);
        let parsed = parse_sha256(&empty.to_uppercase()).unwrap_or([0; 32]);
        assert!(matches(b"", &parsed));
        assert!(!matches(b"x", &parsed));
        assert_eq!(parse_sha256("abc"), None);
        assert_eq!(parse_sha256(&"g".repeat(64)), None);
    }
}
