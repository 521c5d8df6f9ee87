//! Integrity: SHA-256 of the raw diff bytes, compared in constant time.

use std::io::Read;

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

/// What every expected diff hash must be, said once for every message that refuses one.
pub const SHA256_FORM: &str = "64 lower-case hex digits, as sha256sum prints them";

/// Parse a SHA-256 written as 64 lower-case hex digits, the one form every consumer of a diff hash
/// accepts (guard, gate, report and the workflow's input check alike). `None` otherwise, upper
/// case included: a hash compared as text somewhere must not be accepted in another spelling here.
pub fn parse_sha256(hex: &str) -> Option<[u8; 32]> {
    contract::ids::Sha256Hex::parse(hex)
        .ok()
        .map(|sha| sha.digest())
}

/// Whether `bytes` hash to `expected` (32 raw bytes), compared in constant time.
pub fn matches(bytes: &[u8], expected: &[u8; 32]) -> bool {
    digests_equal(&sha256(bytes), expected)
}

/// Diff bytes together with their SHA-256. The fields are private, so the digest always belongs
/// to exactly these bytes, however they were read.
#[derive(Debug, Clone)]
pub struct HashedDiff {
    bytes: Vec<u8>,
    digest: [u8; 32],
}

impl HashedDiff {
    /// Hash `bytes`.
    pub fn new(bytes: Vec<u8>) -> HashedDiff {
        let digest = sha256(&bytes);
        HashedDiff { bytes, digest }
    }

    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    pub fn digest(&self) -> &[u8; 32] {
        &self.digest
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    /// Read at most `limit` bytes from `reader` (`size_hint`, e.g. a file's length, sizes the buffer)
    /// and hash them as they arrive: chunks are hashed on a second thread while the next ones are
    /// read, so a large diff costs about the longer of the two instead of their sum.
    pub fn read(mut reader: impl Read, size_hint: u64, limit: u64) -> std::io::Result<HashedDiff> {
        const CHUNK: usize = 1 << 20;
        let presized = usize::try_from(size_hint.min(limit)).unwrap_or(0);
        // Zeroed pages come from the allocator untouched: the read writes each page once.
        let mut bytes = vec![0u8; presized];
        let (mut filled, mut at_end) = (0usize, false);
        let mut hasher = std::thread::scope(|s| -> std::io::Result<Sha256> {
            let (sender, receiver) = std::sync::mpsc::sync_channel::<&[u8]>(4);
            let hashing = s.spawn(move || {
                let mut hasher = Sha256::new();
                for chunk in receiver {
                    hasher.update(chunk);
                }
                hasher
            });
            for chunk in bytes.chunks_mut(CHUNK) {
                let len = chunk.len();
                let n = fill(&mut reader, chunk)?;
                filled += n;
                let done: &[u8] = chunk;
                if n > 0 && sender.send(&done[..n]).is_err() {
                    return Err(std::io::Error::other("the hashing thread ended early"));
                }
                if n < len {
                    at_end = true;
                    break;
                }
            }
            drop(sender);
            hashing
                .join()
                .map_err(|_| std::io::Error::other("the hashing thread failed"))
        })?;
        bytes.truncate(filled);
        if !at_end {
            // The input was longer than its size hint (or had none): read and hash the rest here.
            let mut rest = Vec::new();
            reader
                .take(limit.saturating_sub(filled as u64))
                .read_to_end(&mut rest)?;
            hasher.update(&rest);
            bytes.extend_from_slice(&rest);
        }
        Ok(HashedDiff {
            bytes,
            digest: hasher.finalize().into(),
        })
    }
}

/// Read into `buf` until it is full or the input ends; the number of bytes read.
fn fill(reader: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match reader.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_vector_and_mismatch() {
        let empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
        assert_eq!(sha256_hex(b""), empty);
        let parsed = parse_sha256(empty).unwrap_or([0; 32]);
        assert!(matches(b"", &parsed));
        assert_eq!(parse_sha256(&empty.to_uppercase()), None);
        assert!(!matches(b"x", &parsed));
        assert_eq!(parse_sha256("abc"), None);
        assert_eq!(parse_sha256(&"g".repeat(64)), None);
    }

    #[test]
    fn read_hashes_exactly_the_bytes_it_returns() {
        const CHUNK: usize = 1 << 20;
        for len in [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK + 5] {
            let input: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            for hint in [
                0,
                len as u64 / 2,
                len as u64,
                len as u64 + 7,
                10 * CHUNK as u64,
            ] {
                for limit in [u64::MAX, len as u64, (len as u64).saturating_sub(1), 3] {
                    let read = HashedDiff::read(&input[..], hint, limit)
                        .unwrap_or_else(|_| HashedDiff::new(vec![9]));
                    let want = &input[..len.min(usize::try_from(limit).unwrap_or(usize::MAX))];
                    assert_eq!(read.bytes(), want, "len {len} hint {hint} limit {limit}");
                    assert_eq!(
                        read.digest(),
                        &sha256(want),
                        "len {len} hint {hint} limit {limit}"
                    );
                }
            }
        }
    }
}
