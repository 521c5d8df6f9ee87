//! The command's output (stdout and stderr interleaved through one pipe), bounded to its tail, and
//! the sandbox's own announcements that precede it on the same pipe.
//!
//! The inner stage writes its probe and its decision as lines `GUARD-SANDBOX <nonce> <kind> <json>`
//! and then execs the command. Everything before the `exec` announcement is the sandbox's (error
//! messages of `unshare`, `mount`, ...); everything after it is the command's. The command cannot
//! write before the announcement, so it cannot forge the probe; a file written by the inner stage
//! would not give that guarantee, because the command runs with the same file-system access.

use super::proof::ContainmentProbe;

/// Bytes before the `exec` announcement kept for diagnostics.
const PREAMBLE_LIMIT: usize = 64 * 1024;

pub const MARKER: &str = "GUARD-SANDBOX";

/// Keeps the last `max` bytes and counts the rest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tail {
    buf: Vec<u8>,
    max: usize,
    total: u64,
}

impl Tail {
    pub fn new(max: usize) -> Tail {
        Tail {
            buf: Vec::new(),
            max,
            total: 0,
        }
    }

    pub fn push(&mut self, bytes: &[u8]) {
        self.total = self.total.saturating_add(bytes.len() as u64);
        if bytes.len() >= self.max {
            self.buf.clear();
            self.buf.extend_from_slice(&bytes[bytes.len() - self.max..]);
            return;
        }
        self.buf.extend_from_slice(bytes);
        // Trim lazily (amortized O(1) per byte): only once the buffer holds twice the tail.
        if self.buf.len() > self.max.saturating_mul(2).max(64 * 1024) {
            self.trim();
        }
    }

    fn trim(&mut self) {
        if self.buf.len() > self.max {
            let excess = self.buf.len() - self.max;
            self.buf.drain(..excess);
        }
    }

    /// The kept bytes and how many were dropped before them.
    pub fn finish(mut self) -> (Vec<u8>, u64) {
        self.trim();
        let dropped = self.total - self.buf.len() as u64;
        (self.buf, dropped)
    }
}

/// What the reader saw on the pipe.
#[derive(Debug, Clone)]
pub struct Capture {
    /// `Some(nonce)` while waiting for the sandbox's announcements; `None` once the command's
    /// output begins (immediately when there is no sandbox).
    awaiting: Option<String>,
    pending: Vec<u8>,
    pub preamble: Vec<u8>,
    pub probe: Option<Result<ContainmentProbe, String>>,
    pub refused: Option<String>,
    /// Whether the command was started (the `exec` announcement, or no sandbox at all).
    pub started: bool,
    pub tail: Tail,
}

impl Capture {
    /// Output of a sandboxed run: announcements first.
    pub fn sandboxed(nonce: &str, max_output: usize) -> Capture {
        Capture {
            awaiting: Some(nonce.to_string()),
            pending: Vec::new(),
            preamble: Vec::new(),
            probe: None,
            refused: None,
            started: false,
            tail: Tail::new(max_output),
        }
    }

    /// Output of a command run directly: all of it is the command's.
    pub fn direct(max_output: usize) -> Capture {
        let mut capture = Capture::sandboxed("", max_output);
        capture.awaiting = None;
        capture.started = true;
        capture
    }

    pub fn feed(&mut self, bytes: &[u8]) {
        let Some(nonce) = self.awaiting.clone() else {
            self.tail.push(bytes);
            return;
        };
        self.pending.extend_from_slice(bytes);
        let prefix = format!("{MARKER} {nonce} ");
        while let Some(end) = self.pending.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=end).collect();
            let line = &line[..line.len() - 1];
            let Some(announcement) = line.strip_prefix(prefix.as_bytes()) else {
                self.keep_preamble(line);
                self.keep_preamble(b"\n");
                continue;
            };
            let announcement = String::from_utf8_lossy(announcement);
            let (kind, payload) = announcement.split_once(' ').unwrap_or((&announcement, ""));
            match kind {
                "probe" => {
                    self.probe = Some(
                        serde_json::from_str(payload).map_err(|e| format!("malformed probe: {e}")),
                    )
                }
                "refuse" => {
                    self.refused =
                        Some(serde_json::from_str(payload).unwrap_or_else(|_| payload.to_string()))
                }
                "exec" => {
                    self.started = true;
                    self.awaiting = None;
                    let rest = std::mem::take(&mut self.pending);
                    self.tail.push(&rest);
                    return;
                }
                other => self.keep_preamble(format!("unknown announcement {other:?}\n").as_bytes()),
            }
        }
        if self.pending.len() > PREAMBLE_LIMIT {
            let pending = std::mem::take(&mut self.pending);
            self.keep_preamble(&pending);
        }
    }

    fn keep_preamble(&mut self, bytes: &[u8]) {
        let room = PREAMBLE_LIMIT.saturating_sub(self.preamble.len());
        self.preamble
            .extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    /// The pre-command text, for an error message.
    pub fn preamble_text(&self) -> String {
        let mut text = String::from_utf8_lossy(&self.preamble).into_owned();
        text.push_str(&String::from_utf8_lossy(&self.pending));
        text.trim().to_string()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    #[test]
    fn tail_keeps_last_bytes_and_counts_the_rest() {
        let mut tail = Tail::new(5);
        for chunk in [&b"abc"[..], b"defg", b"", b"hij"] {
            tail.push(chunk);
        }
        assert_eq!(tail.finish(), (b"fghij".to_vec(), 5));

        let mut big = Tail::new(1000);
        for _ in 0..1000 {
            big.push(&[b'y'; 10_000]);
        }
        let (kept, dropped) = big.finish();
        assert_eq!((kept.len(), dropped), (1000, 10_000_000 - 1000));

        let mut none = Tail::new(0);
        none.push(b"abc");
        assert_eq!(none.finish(), (Vec::new(), 3));
    }

    #[test]
    fn announcements_precede_command_output() {
        let probe = r#"{"interfaces":["lo"],"routes":[],"netns":"net:[2]","userns":"user:[2]","loopback_up":true,"git_dir_read_only":null}"#;
        let stream = format!(
            "unshare: noise\nGUARD-SANDBOX n1 probe {probe}\nGUARD-SANDBOX n1 exec\nGUARD-SANDBOX n1 probe {{}}\nhello"
        );
        let mut capture = Capture::sandboxed("n1", 1000);
        // Byte by byte: announcements split across reads must still be recognised.
        for b in stream.as_bytes() {
            capture.feed(std::slice::from_ref(b));
        }
        assert!(capture.started);
        assert_eq!(capture.preamble_text(), "unshare: noise");
        assert!(
            matches!(&capture.probe, Some(Err(e)) if e.contains("malformed probe")),
            "a network-only probe is not a containment proof"
        );
        let (tail, _) = capture.tail.finish();
        assert_eq!(
            tail, b"GUARD-SANDBOX n1 probe {}\nhello",
            "after exec it is all command output"
        );
    }

    #[test]
    fn wrong_nonce_and_refusal() {
        let mut capture = Capture::sandboxed("n1", 1000);
        capture.feed(b"GUARD-SANDBOX n2 exec\nGUARD-SANDBOX n1 refuse \"mount failed\"\n");
        assert!(!capture.started);
        assert_eq!(capture.refused.as_deref(), Some("mount failed"));
        assert_eq!(capture.preamble_text(), "GUARD-SANDBOX n2 exec");
    }
}
