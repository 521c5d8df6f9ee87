//! The `workflow_dispatch` inputs of the apply/verify workflow, validated once: the workflow's jobs
//! (`guard inputs`), the dispatcher (`gate dispatch`) and the verifier of its signature (`gate
//! verify-dispatch`) all read them through this module, so a value one accepts the others accept.
//!
//! The inputs arrive as strings (GitHub passes an unset optional input as `""`). The rules:
//!
//! | input | rule |
//! |---|---|
//! | `task_id` | `[A-Za-z0-9][A-Za-z0-9._-]{0,63}`, no `..`, not ending in `.` or `.lock` (it names a branch `agent-team/<task_id>`) |
//! | `base_sha` | 40 lowercase hex digits |
//! | `expected_diff_sha256` | 64 lowercase hex digits |
//! | `declared_scope` | globs separated by newlines, or by commas outside `{}` and not escaped with `\` (`src/*.{rs,toml}` is one glob; the workflow's `SPLIT_SCOPE` splits alike); each entry trimmed of ASCII white space, empty entries skipped; each 1 to 512 printable ASCII characters without spaces; 1 to 100 entries |
//! | `diff_b64` | base64 alphabet, `=` and ASCII white space only |
//! | `diff_ref` | a branch `agent-team-diffs/...` of 1 to 200 characters `[A-Za-z0-9._/-]` after the prefix, valid as a git branch name (no empty component, none starting with `.` or ending in `.lock`, no `..`, not ending in `.` or `/`) |
//! | one source | exactly one of `diff_b64` and `diff_ref` is non-empty |
//! | `dispatch_mac` | empty (checked where it is verified) or `v2:<nonce>:<expires>:<tag>`: the nonce 32 lowercase hex digits, the expiry a Unix time in decimal (no sign, no leading zero), the tag 64 lowercase hex digits; a `v1:` value is refused with its own message |
//! | `pr_title` | optional (the agent's title for the draft): at most 256 characters, no control character |
//! | `pr_description` | optional (the agent's description): at most 4,000 characters, no control character but newline and tab |
//!
//! Errors carry the offending value; their `Display` shows it escaped for a terminal and bounded
//! in length, since the values come from whoever dispatched the workflow.

use crate::escape::neutralize;

/// Longest task id (it becomes part of branch names and the run name).
pub const TASK_ID_MAX: usize = 64;
/// Most globs a declared scope may name.
pub const SCOPE_MAX_ENTRIES: usize = 100;
/// Longest single scope glob.
pub const SCOPE_ENTRY_MAX: usize = 512;
/// The branch namespace a `diff_ref` must live in.
pub const DIFF_REF_PREFIX: &str = "agent-team-diffs/";
/// Longest `diff_ref` after [`DIFF_REF_PREFIX`].
pub const DIFF_REF_MAX: usize = 200;
/// The version prefix of a `dispatch_mac` value.
pub const DISPATCH_MAC_PREFIX: &str = "v2:";
/// The prefix of the retired first version, refused with its own message.
pub const DISPATCH_MAC_V1_PREFIX: &str = "v1:";
/// Longest `pr_title`, in characters.
pub const PR_TITLE_MAX: usize = 256;
/// Longest `pr_description`, in characters.
pub const PR_DESCRIPTION_MAX: usize = 4000;

/// One invalid input. The messages say the rule; [`std::fmt::Display`] adds the value, escaped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
    #[error(
        "task_id must match [A-Za-z0-9][A-Za-z0-9._-]{{0,63}} (got {})",
        shown(found)
    )]
    TaskIdSyntax { found: String },
    #[error(
        "task_id must not contain '..' nor end in '.' or '.lock' (got {})",
        shown(found)
    )]
    TaskIdRefName { found: String },
    #[error("base_sha must be a full 40-hex commit id (got {})", shown(found))]
    BaseSha { found: String },
    #[error(
        "expected_diff_sha256 must be 64 lowercase hex digits (got {})",
        shown(found)
    )]
    DiffSha256 { found: String },
    #[error("diff_b64 is not base64 (got {})", shown(found))]
    DiffB64 { found: String },
    #[error(
        "diff_ref must be a branch agent-team-diffs/[A-Za-z0-9._/-]+ of at most {DIFF_REF_MAX} characters after the prefix (got {})",
        shown(found)
    )]
    DiffRefSyntax { found: String },
    #[error("diff_ref is not a valid branch name (got {})", shown(found))]
    DiffRefName { found: String },
    #[error("set exactly one of diff_b64 and diff_ref ({count} set)")]
    DiffSource { count: usize },
    #[error(
        "declared_scope entries must be printable ASCII without spaces, at most {SCOPE_ENTRY_MAX} characters (entry {index}: {})",
        shown(found)
    )]
    ScopeEntry { index: usize, found: String },
    #[error("declared_scope must name 1 to {SCOPE_MAX_ENTRIES} globs ({count} named)")]
    ScopeCount { count: usize },
    #[error(
        "dispatch_mac must be 'v2:', a 32-hex nonce, ':', the expiry (Unix seconds), ':' and a 64-hex tag (got {})",
        shown(found)
    )]
    DispatchMac { found: String },
    #[error(
        "dispatch_mac is version 1, which binds no nonce, expiry or workflow and is no longer accepted: sign with a dispatcher that writes v2 (gate dispatch, gate sign; REFERENCE.md, \"Signed dispatches\")"
    )]
    DispatchMacV1,
    #[error(
        "pr_title must be at most {PR_TITLE_MAX} characters without control characters (got {})",
        shown(found)
    )]
    PrTitle { found: String },
    #[error(
        "pr_description must be at most {PR_DESCRIPTION_MAX} characters without control characters other than newline and tab (got {})",
        shown(found)
    )]
    PrDescription { found: String },
    #[error("{name} is not valid UTF-8")]
    NotUtf8 { name: &'static str },
    #[error(
        "the apply/verify workflow runs on workflow_dispatch only; this run's event is {}",
        shown(found)
    )]
    Event { found: String },
}

/// A value for a message: quoted, escaped for a terminal, at most 80 characters.
fn shown(value: &str) -> String {
    const MAX: usize = 80;
    let mut cut: String = value.chars().take(MAX).collect();
    if cut.len() < value.len() {
        cut.push_str("...");
    }
    format!("\"{}\"", neutralize(&cut))
}

/// A task id that satisfies the workflow's rule.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TaskId(String);

impl TaskId {
    pub fn parse(value: &str) -> Result<Self, InputError> {
        let bytes = value.as_bytes();
        let syntax = !bytes.is_empty()
            && bytes.len() <= TASK_ID_MAX
            && bytes[0].is_ascii_alphanumeric()
            && bytes
                .iter()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
        if !syntax {
            return Err(InputError::TaskIdSyntax {
                found: value.to_owned(),
            });
        }
        if value.contains("..") || value.ends_with('.') || value.ends_with(".lock") {
            return Err(InputError::TaskIdRefName {
                found: value.to_owned(),
            });
        }
        Ok(TaskId(value.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The branch the publication creates: `agent-team/<task_id>`.
    pub fn publish_branch(&self) -> String {
        format!("agent-team/{}", self.0)
    }

    /// The branch a large diff is carried on: `agent-team-diffs/<task_id>`.
    pub fn diff_branch(&self) -> String {
        format!("{DIFF_REF_PREFIX}{}", self.0)
    }

    /// The file that branch holds: `<task_id>.patch`.
    pub fn patch_file(&self) -> String {
        format!("{}.patch", self.0)
    }
}

impl std::fmt::Display for TaskId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The one rule for hex ids ([`contract::ids`]): a full commit id (40) or a SHA-256 (64),
/// lower-case.
fn is_lower_hex(value: &str, len: usize) -> bool {
    match len {
        40 => contract::ids::CommitId::parse(value).is_ok(),
        64 => contract::ids::Sha256Hex::parse(value).is_ok(),
        _ => false,
    }
}

/// A full commit id, 40 lowercase hex digits.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BaseSha(String);

impl BaseSha {
    pub fn parse(value: &str) -> Result<Self, InputError> {
        if is_lower_hex(value, 40) {
            Ok(BaseSha(value.to_owned()))
        } else {
            Err(InputError::BaseSha {
                found: value.to_owned(),
            })
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A SHA-256 as 64 lowercase hex digits.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DiffSha256(String);

impl DiffSha256 {
    pub fn parse(value: &str) -> Result<Self, InputError> {
        if is_lower_hex(value, 64) {
            Ok(DiffSha256(value.to_owned()))
        } else {
            Err(InputError::DiffSha256 {
                found: value.to_owned(),
            })
        }
    }

    /// The hash of `bytes`, in this form.
    pub fn of(bytes: &[u8]) -> Self {
        DiffSha256(crate::hash::sha256_hex(bytes))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The white space bash's `[:space:]` class holds in the C locale (Rust's `trim_ascii` leaves out
/// the vertical tab).
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r')
}

/// The declared scope: its globs in order, as the workflow passes them to `--scope`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Scope(Vec<String>);

impl Scope {
    /// [`Scope::parse`], its errors as one message (`; `-separated), for a command's error line.
    pub fn parse_described(value: &str) -> Result<Self, String> {
        Self::parse(value).map_err(|errors| {
            errors
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ")
        })
    }

    /// Parse the `declared_scope` input: split ([`split_scope`]), trim, skip empty entries.
    /// Every bad entry is reported (numbered from 1 among the non-empty ones).
    pub fn parse(value: &str) -> Result<Self, Vec<InputError>> {
        let mut globs = Vec::new();
        let mut errors = Vec::new();
        for raw in split_scope(value) {
            let entry = trim_space(raw);
            if entry.is_empty() {
                continue;
            }
            if entry.len() > SCOPE_ENTRY_MAX || !entry.bytes().all(|b| b.is_ascii_graphic()) {
                errors.push(InputError::ScopeEntry {
                    index: globs.len() + errors.len() + 1,
                    found: entry.to_owned(),
                });
                continue;
            }
            globs.push(entry.to_owned());
        }
        let count = globs.len() + errors.len();
        if count == 0 || count > SCOPE_MAX_ENTRIES {
            errors.push(InputError::ScopeCount { count });
        }
        if errors.is_empty() {
            Ok(Scope(globs))
        } else {
            Err(errors)
        }
    }

    /// A scope from separate globs (the dispatcher's repeated `--scope`): each must be a valid
    /// entry that splits into itself (no newline, no comma outside `{}`), so that joining and
    /// re-parsing gives it back.
    pub fn from_globs(globs: &[String]) -> Result<Self, Vec<InputError>> {
        let mut errors = Vec::new();
        for (i, glob) in globs.iter().enumerate() {
            let whole = split_scope(glob).collect::<Vec<_>>() == [glob.as_str()];
            if glob.is_empty() || !whole || trim_space(glob) != glob {
                errors.push(InputError::ScopeEntry {
                    index: i + 1,
                    found: glob.clone(),
                });
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        let scope = Scope::parse(&globs.join(","))?;
        if scope.0 != globs {
            // Unreachable by the checks above; kept so that a mismatch can never pass silently.
            return Err(vec![InputError::ScopeCount { count: globs.len() }]);
        }
        Ok(scope)
    }

    pub fn globs(&self) -> &[String] {
        &self.0
    }

    /// The `declared_scope` input that parses back to this scope.
    pub fn to_input(&self) -> String {
        self.0.join(",")
    }
}

/// The raw entries of a `declared_scope`: split on newlines, and on commas outside `{}` that are
/// not escaped with `\` (the escape and the character after it are kept), as the workflow's awk
/// program `SPLIT_SCOPE` splits them.
pub fn split_scope(value: &str) -> impl Iterator<Item = &str> {
    value.split('\n').flat_map(|line| {
        let bytes = line.as_bytes();
        let mut entries = Vec::new();
        let (mut depth, mut start, mut i) = (0usize, 0usize, 0usize);
        while let Some(&b) = bytes.get(i) {
            match b {
                b'\\' if i + 1 < bytes.len() => i += 1,
                b'{' => depth += 1,
                b'}' => depth = depth.saturating_sub(1),
                // Splitting at an ASCII comma keeps both sides on character boundaries.
                b',' if depth == 0 => {
                    entries.push(line.get(start..i).unwrap_or_default());
                    start = i + 1;
                }
                _ => {}
            }
            i += 1;
        }
        entries.push(line.get(start..).unwrap_or_default());
        entries
    })
}

fn trim_space(text: &str) -> &str {
    let bytes = text.as_bytes();
    let start = bytes
        .iter()
        .position(|&b| !is_space(b))
        .unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|&b| !is_space(b))
        .map_or(start, |i| i + 1);
    // Both ends are at ASCII bytes, hence at char boundaries.
    text.get(start..end).unwrap_or("")
}

/// Where the diff bytes come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiffSource {
    /// `diff_b64`: the bytes, base64-encoded, in the input itself.
    Base64(String),
    /// `diff_ref`: a branch whose root holds `<task_id>.patch`.
    Ref(DiffRef),
}

/// A `diff_ref` branch name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffRef(String);

impl DiffRef {
    pub fn parse(value: &str) -> Result<Self, InputError> {
        let syntax = value.strip_prefix(DIFF_REF_PREFIX).is_some_and(|rest| {
            !rest.is_empty()
                && rest.len() <= DIFF_REF_MAX
                && rest
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'/' | b'-'))
        });
        if !syntax {
            return Err(InputError::DiffRefSyntax {
                found: value.to_owned(),
            });
        }
        // git check-ref-format, for the characters allowed above.
        let bad_component = value
            .split('/')
            .any(|c| c.is_empty() || c.starts_with('.') || c.ends_with(".lock"));
        if bad_component || value.contains("..") || value.ends_with('.') {
            return Err(InputError::DiffRefName {
                found: value.to_owned(),
            });
        }
        Ok(DiffRef(value.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

fn check_base64(value: &str) -> Result<(), InputError> {
    let ok = value
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=') || is_space(b));
    if ok {
        Ok(())
    } else {
        Err(InputError::DiffB64 {
            found: value.to_owned(),
        })
    }
}

/// The `dispatch_mac` input (version 2): the dispatch's nonce, its expiry and the 32-byte tag.
/// The nonce and the expiry travel in this one input (workflow_dispatch allows 25 inputs), and
/// the tag covers both.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DispatchMac {
    nonce: Nonce,
    expires_at: u64,
    tag: [u8; 32],
}

/// A dispatch's nonce: 16 random bytes as 32 lowercase hex digits.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Nonce(String);

impl Nonce {
    /// 32 lowercase hex digits.
    pub fn parse(value: &str) -> Option<Self> {
        (value.len() == 32
            && value
                .bytes()
                .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
        .then(|| Nonce(value.to_owned()))
    }

    pub fn from_bytes(bytes: [u8; 16]) -> Self {
        Nonce(bytes.iter().map(|b| format!("{b:02x}")).collect())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Nonce {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A decimal Unix time without sign or leading zero, at most 12 digits.
fn parse_unix(value: &str) -> Option<u64> {
    let ok = !value.is_empty()
        && value.len() <= 12
        && value.bytes().all(|b| b.is_ascii_digit())
        && (value == "0" || !value.starts_with('0'));
    if ok { value.parse().ok() } else { None }
}

impl DispatchMac {
    pub fn parse(value: &str) -> Result<Self, InputError> {
        let bad = || InputError::DispatchMac {
            found: value.to_owned(),
        };
        if value.starts_with(DISPATCH_MAC_V1_PREFIX) {
            return Err(InputError::DispatchMacV1);
        }
        let rest = value.strip_prefix(DISPATCH_MAC_PREFIX).ok_or_else(bad)?;
        let mut parts = rest.split(':');
        let (Some(nonce), Some(expires), Some(hex), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(bad());
        };
        let nonce = Nonce::parse(nonce).ok_or_else(bad)?;
        let expires_at = parse_unix(expires).ok_or_else(bad)?;
        if !is_lower_hex(hex, 64) {
            return Err(bad());
        }
        crate::hash::parse_sha256(hex)
            .map(|tag| DispatchMac {
                nonce,
                expires_at,
                tag,
            })
            .ok_or_else(bad)
    }

    pub fn new(nonce: Nonce, expires_at: u64, tag: [u8; 32]) -> Self {
        DispatchMac {
            nonce,
            expires_at,
            tag,
        }
    }

    pub fn nonce(&self) -> &Nonce {
        &self.nonce
    }

    /// The Unix time after which the dispatch is refused.
    pub fn expires_at(&self) -> u64 {
        self.expires_at
    }

    pub fn tag(&self) -> &[u8; 32] {
        &self.tag
    }

    /// The input value: `v2:<nonce>:<expires>:<64 hex>`.
    pub fn to_input(&self) -> String {
        format!(
            "{DISPATCH_MAC_PREFIX}{}:{}:{}",
            self.nonce,
            self.expires_at,
            crate::hash::to_hex(&self.tag)
        )
    }
}

/// The agent's title for the draft pull request (`pr_title`), checked; may be empty.
pub fn check_pr_title(value: &str) -> Result<(), InputError> {
    let ok = value.chars().count() <= PR_TITLE_MAX && !value.chars().any(char::is_control);
    if ok {
        Ok(())
    } else {
        Err(InputError::PrTitle {
            found: value.to_owned(),
        })
    }
}

/// The agent's description (`pr_description`), checked; may be empty.
pub fn check_pr_description(value: &str) -> Result<(), InputError> {
    let ok = value.chars().count() <= PR_DESCRIPTION_MAX
        && !value
            .chars()
            .any(|c| c.is_control() && c != '\n' && c != '\t');
    if ok {
        Ok(())
    } else {
        Err(InputError::PrDescription {
            found: value.to_owned(),
        })
    }
}

/// The raw inputs, as the workflow receives them (an unset optional input is `""`).
#[derive(Debug, Clone, Copy, Default)]
pub struct RawInputs<'a> {
    pub task_id: &'a str,
    pub base_sha: &'a str,
    pub expected_diff_sha256: &'a str,
    pub declared_scope: &'a str,
    pub diff_b64: &'a str,
    pub diff_ref: &'a str,
    pub dispatch_mac: &'a str,
    pub pr_title: &'a str,
    pub pr_description: &'a str,
}

/// The inputs, all valid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DispatchInputs {
    pub task_id: TaskId,
    pub base_sha: BaseSha,
    pub expected_diff_sha256: DiffSha256,
    pub scope: Scope,
    pub diff: DiffSource,
    /// `None` when the input is empty; whether that is acceptable is decided where it is verified.
    pub dispatch_mac: Option<DispatchMac>,
    /// The agent's words for the draft (empty when not given).
    pub pr_title: String,
    pub pr_description: String,
}

/// Validate every input; all problems are reported, in input order.
pub fn validate(raw: &RawInputs<'_>) -> Result<DispatchInputs, Vec<InputError>> {
    let mut errors = Vec::new();
    let task_id = TaskId::parse(raw.task_id).map_err(|e| errors.push(e)).ok();
    let base_sha = BaseSha::parse(raw.base_sha)
        .map_err(|e| errors.push(e))
        .ok();
    let expected_diff_sha256 = DiffSha256::parse(raw.expected_diff_sha256)
        .map_err(|e| errors.push(e))
        .ok();

    let mut count = 0;
    let mut diff = None;
    if !raw.diff_b64.is_empty() {
        count += 1;
        match check_base64(raw.diff_b64) {
            Ok(()) => diff = Some(DiffSource::Base64(raw.diff_b64.to_owned())),
            Err(e) => errors.push(e),
        }
    }
    if !raw.diff_ref.is_empty() {
        count += 1;
        match DiffRef::parse(raw.diff_ref) {
            Ok(r) => diff = Some(DiffSource::Ref(r)),
            Err(e) => errors.push(e),
        }
    }
    if count != 1 {
        errors.push(InputError::DiffSource { count });
    }
    let scope = Scope::parse(raw.declared_scope)
        .map_err(|e| errors.extend(e))
        .ok();
    let dispatch_mac = if raw.dispatch_mac.is_empty() {
        None
    } else {
        DispatchMac::parse(raw.dispatch_mac)
            .map_err(|e| errors.push(e))
            .ok()
    };
    if let Err(e) = check_pr_title(raw.pr_title) {
        errors.push(e);
    }
    if let Err(e) = check_pr_description(raw.pr_description) {
        errors.push(e);
    }

    match (task_id, base_sha, expected_diff_sha256, scope, diff) {
        (Some(task_id), Some(base_sha), Some(expected_diff_sha256), Some(scope), Some(diff))
            if errors.is_empty() =>
        {
            Ok(DispatchInputs {
                task_id,
                base_sha,
                expected_diff_sha256,
                scope,
                diff,
                dispatch_mac,
                pr_title: raw.pr_title.to_owned(),
                pr_description: raw.pr_description.to_owned(),
            })
        }
        _ => Err(errors),
    }
}

/// The event a run of the workflow must have been started by (its dispatch inputs are read from
/// that event).
pub const DISPATCH_EVENT: &str = "workflow_dispatch";

/// The environment variables the workflow passes the inputs through, in [`RawInputs`] order.
pub const INPUT_VARIABLES: [&str; 9] = [
    "TASK_ID",
    "BASE_SHA",
    "EXPECTED_DIFF_SHA256",
    "DECLARED_SCOPE",
    "DIFF_B64",
    "DIFF_REF",
    "DISPATCH_MAC",
    "PR_TITLE",
    "PR_DESCRIPTION",
];
