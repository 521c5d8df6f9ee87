//! Integrity: SHA-256 of the raw diff bytes, compared in constant time.

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Lower-case hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for b in digest.iter() {
        out.push_str(&format!("{b:02x}"));
    }
    out
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
    let digest = Sha256::digest(bytes);
    bool::from(digest.as_slice().ct_eq(expected.as_slice()))
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
