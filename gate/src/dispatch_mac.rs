//! The dispatcher's signature over what it asks the workflow to publish.
//!
//! The diff's SHA-256 binds the bytes in transit, but anyone who can dispatch the workflow can
//! send any diff with its own hash. The trusted dispatcher therefore signs the dispatch with a
//! key shared only with the workflow's verifying jobs: HMAC-SHA-256 (RFC 2104, FIPS 198-1) over
//! a canonical encoding (version 2) of
//!
//! 1. the repository `owner/name`, in lower case (GitHub names are case-insensitive, so
//!    `Octo/Repo` and `octo/repo` are one repository and must sign alike),
//! 2. the full ref the workflow runs on (`refs/heads/main`; a bare branch name is qualified),
//! 3. the caller workflow's path (`.github/workflows/agent-team-apply.yml`): the verifier takes
//!    it from `GITHUB_WORKFLOW_REF` with the `@ref` stripped, so a dispatch signed for one caller
//!    does not verify in another (a weaker policy, another build command, an older pin),
//! 4. the task id, 5. the base commit, 6. the diff's SHA-256 (lowercase hex),
//! 7. the nonce (32 lowercase hex digits, 16 random bytes), 8. the expiry (Unix seconds, in
//!    decimal),
//! 9. the declared scope: the globs in order, as the workflow parses `declared_scope`,
//! 10. the agent's pull request title and 11. description (each possibly empty),
//! 12. for a revision of an open draft only: the field `revision` and the pull request's number
//!     (decimal). A revision's base (5) is that pull request's head, the commit the diff applies
//!     to, so the signature binds the number and the expected head together; a first round
//!     encodes nothing here, so its encoding (and the test vector) is unchanged.
//!
//! The encoding is versioned and unambiguous: the domain `agent-team-apply/dispatch-mac/v2`,
//! then every field as a 4-byte big-endian length and its UTF-8 bytes, the scope as a 4-byte
//! count followed by each glob so encoded. Two different tuples never encode alike. The tag is
//! sent as the input `dispatch_mac` = `v2:<nonce>:<expires>:<64 lowercase hex>`, so the nonce and
//! the expiry cost no inputs of their own (workflow_dispatch allows 25). `gate sign` prints the
//! inputs for a dispatcher written in another language; REFERENCE.md, "Signed dispatches",
//! documents a test vector that `gate/tests/dispatch_mac.rs` checks.
//!
//! Verification compares in constant time (`hmac`'s `verify_slice`, over `subtle`). While a key
//! is rotated, two keys are accepted: the current one and, when set, the previous one. A
//! verified dispatch is then refused when it has expired, when its expiry lies further ahead
//! than [`MAX_LIFETIME`] (a dispatcher's clock or a signer that means "forever"), or when it was
//! signed for another workflow. Version 1 (no nonce, expiry or workflow) is refused.
//!
//! A signed dispatch can still be sent again until it expires (the signed inputs are readable
//! by anyone who can read the run). The nonce makes every publication of it visible: before the
//! branch, the publishing App records it as its own check run on the base, named after the
//! nonce (and the publication carries it: commit trailer `Dispatch-Nonce`, the check run's
//! output); `gate verify-dispatch --run-id` and `gate publish` refuse a record of another run,
//! one naming a closed pull request, or a re-run attempt that would start a publication instead
//! of finishing its own ([`crate::replay`]).

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use guard::inputs::{BaseSha, DiffSha256, DispatchMac, Nonce, Scope, TaskId};

/// Domain separation and version of the encoding.
pub const DOMAIN: &str = "agent-team-apply/dispatch-mac/v2";
/// How far ahead of the verifier's clock an expiry may lie.
pub const MAX_LIFETIME_SECONDS: u64 = 24 * 3600;
/// The dispatcher's default: the expiry is this far after signing.
pub const DEFAULT_LIFETIME_SECONDS: u64 = 3600;
/// The same, as the module documentation names it.
pub const MAX_LIFETIME: std::time::Duration = std::time::Duration::from_secs(MAX_LIFETIME_SECONDS);
/// The variable holding the current key (both for signing and verifying).
pub const KEY_VARIABLE: &str = "AGENT_TEAM_DISPATCH_KEY";
/// Alternatively, a file holding the current key (the dispatcher's side).
pub const KEY_FILE_VARIABLE: &str = "AGENT_TEAM_DISPATCH_KEY_FILE";
/// The previous key, accepted by the verifier while a rotation is under way.
pub const PREVIOUS_KEY_VARIABLE: &str = "AGENT_TEAM_DISPATCH_KEY_PREVIOUS";
/// Shortest key accepted, in bytes (after trimming white space): 256 bits of hex or base64
/// text is longer than this; `openssl rand -hex 32` gives 64.
pub const MIN_KEY_BYTES: usize = 32;

/// Why a signature could not be made or checked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MacError {
    #[error("no dispatch key: set {KEY_VARIABLE} (or {KEY_FILE_VARIABLE})")]
    NoKey,
    #[error("both {KEY_VARIABLE} and {KEY_FILE_VARIABLE} are set; set one")]
    TwoKeySources,
    #[error("{source_name}: the key is shorter than {MIN_KEY_BYTES} bytes")]
    WeakKey { source_name: String },
    #[error("{source_name}: {message}")]
    KeyFile {
        source_name: String,
        message: String,
    },
    #[error("repository {found:?} is not OWNER/NAME")]
    Repository { found: String },
    #[error("ref {found:?} is not a ref name")]
    Ref { found: String },
    #[error("the dispatch carries no dispatch_mac: it was not signed by the trusted dispatcher")]
    Missing,
    #[error(
        "dispatch_mac does not match: the dispatch was not signed with the current or previous key, or a signed field was changed (or it was signed for another workflow: this run's is {workflow})"
    )]
    Mismatch { workflow: String },
    #[error("the dispatch expired at {expires_at} (Unix seconds); it is now {now}: dispatch anew")]
    Expired { expires_at: u64, now: u64 },
    #[error(
        "the dispatch's expiry {expires_at} lies more than {MAX_LIFETIME_SECONDS} s after now ({now}): refused"
    )]
    TooLong { expires_at: u64, now: u64 },
    #[error("workflow {found:?} is not a workflow file .github/workflows/NAME.yml (or .yaml)")]
    Workflow { found: String },
    #[error(
        "GITHUB_WORKFLOW_REF {found:?} is not OWNER/NAME/.github/workflows/FILE@REF of repository {repository}"
    )]
    WorkflowRef { found: String, repository: String },
    #[error("no random nonce: {message}")]
    Random { message: String },
    #[error(
        "revise_pull_request {found:?} is not a pull request number (1 to 10 digits, no leading zero)"
    )]
    Revision { found: String },
}

/// A secret key, kept as the keyed HMAC state. Its bytes are never printed.
#[derive(Clone)]
pub struct DispatchKey(Hmac<Sha256>);

impl std::fmt::Debug for DispatchKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DispatchKey(<redacted>)")
    }
}

impl DispatchKey {
    /// A key from its text: surrounding ASCII white space (a newline left by `echo` or an
    /// editor) is not part of it.
    pub fn new(text: &[u8], source_name: &str) -> Result<Self, MacError> {
        let key = text.trim_ascii();
        if key.len() < MIN_KEY_BYTES {
            return Err(MacError::WeakKey {
                source_name: source_name.to_owned(),
            });
        }
        // HMAC accepts a key of any length (RFC 2104 §2); the error cannot occur, and is
        // reported as a weak key rather than trusted not to.
        <Hmac<Sha256> as KeyInit>::new_from_slice(key)
            .map(DispatchKey)
            .map_err(|_| MacError::WeakKey {
                source_name: source_name.to_owned(),
            })
    }

    fn mac(&self) -> Hmac<Sha256> {
        self.0.clone()
    }
}

/// Which configured key verified a dispatch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeySlot {
    Current,
    Previous,
}

impl KeySlot {
    pub fn as_str(self) -> &'static str {
        match self {
            KeySlot::Current => "current",
            KeySlot::Previous => "previous",
        }
    }
}

/// The keys a verifier accepts.
#[derive(Debug, Clone)]
pub struct VerifyingKeys {
    pub current: DispatchKey,
    pub previous: Option<DispatchKey>,
}

/// Read the current key from `AGENT_TEAM_DISPATCH_KEY` or the file named by
/// `AGENT_TEAM_DISPATCH_KEY_FILE` (exactly one; an empty variable counts as unset).
pub fn signing_key(env: &dyn Fn(&str) -> Option<Vec<u8>>) -> Result<DispatchKey, MacError> {
    let set = |name: &str| env(name).filter(|v| !v.is_empty());
    match (set(KEY_VARIABLE), set(KEY_FILE_VARIABLE)) {
        (Some(_), Some(_)) => Err(MacError::TwoKeySources),
        (Some(text), None) => DispatchKey::new(&text, KEY_VARIABLE),
        (None, Some(path)) => {
            let path = std::path::PathBuf::from(String::from_utf8_lossy(&path).into_owned());
            let source_name = format!("{KEY_FILE_VARIABLE} {}", path.display());
            let text = std::fs::read(&path).map_err(|e| MacError::KeyFile {
                source_name: source_name.clone(),
                message: e.to_string(),
            })?;
            DispatchKey::new(&text, &source_name)
        }
        (None, None) => Err(MacError::NoKey),
    }
}

/// The current key as for [`signing_key`], and the previous one from
/// `AGENT_TEAM_DISPATCH_KEY_PREVIOUS` when it is set and not empty.
pub fn verifying_keys(env: &dyn Fn(&str) -> Option<Vec<u8>>) -> Result<VerifyingKeys, MacError> {
    let current = signing_key(env)?;
    let previous = match env(PREVIOUS_KEY_VARIABLE).filter(|v| !v.is_empty()) {
        Some(text) => Some(DispatchKey::new(&text, PREVIOUS_KEY_VARIABLE)?),
        None => None,
    };
    Ok(VerifyingKeys { current, previous })
}

/// The repository `owner/name` as [`github::Repository`] allows it, kept lower-cased.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepositoryName(String);

impl RepositoryName {
    pub fn parse(value: &str) -> Result<Self, MacError> {
        github::Repository::parse(value)
            .map(|repo| RepositoryName(repo.full_name().to_ascii_lowercase()))
            .map_err(|e| MacError::Repository { found: e.found })
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The full ref a workflow run sees as `GITHUB_REF`: `refs/...` as given, anything else is a
/// branch name and becomes `refs/heads/<name>`. Printable ASCII without spaces, at most 255.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FullRef(String);

impl FullRef {
    pub fn parse(value: &str) -> Result<Self, MacError> {
        let full = if value.starts_with("refs/") {
            value.to_owned()
        } else {
            format!("refs/heads/{value}")
        };
        let ok = value != "refs/"
            && !value.is_empty()
            && full.len() <= 255
            && full.bytes().all(|b| b.is_ascii_graphic())
            && !full.ends_with('/');
        if ok {
            Ok(FullRef(full))
        } else {
            Err(MacError::Ref {
                found: value.to_owned(),
            })
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The caller workflow's path in the repository: `.github/workflows/NAME.yml` (or `.yaml`),
/// `NAME` of `[A-Za-z0-9._-]`, not starting with `.`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkflowPath(String);

impl WorkflowPath {
    /// A path, or a bare file name (`agent-team-apply.yml`), which is qualified.
    pub fn parse(value: &str) -> Result<Self, MacError> {
        let file = value.strip_prefix(".github/workflows/").unwrap_or(value);
        let ok = (file.ends_with(".yml") || file.ends_with(".yaml"))
            && !file.starts_with('.')
            && file.len() <= 255
            && file
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
        if ok {
            Ok(WorkflowPath(format!(".github/workflows/{file}")))
        } else {
            Err(MacError::Workflow {
                found: value.to_owned(),
            })
        }
    }

    /// The path from `GITHUB_WORKFLOW_REF` (`owner/name/.github/workflows/FILE@refs/...`): the
    /// `@ref` stripped, the repository prefix checked against `repository` (case-insensitive).
    /// In a reusable workflow it names the caller: the workflow that was dispatched.
    pub fn from_workflow_ref(value: &str, repository: &RepositoryName) -> Result<Self, MacError> {
        let bad = || MacError::WorkflowRef {
            found: value.to_owned(),
            repository: repository.as_str().to_owned(),
        };
        let (path, _ref) = value.split_once('@').ok_or_else(bad)?;
        let prefix = format!("{}/", repository.as_str());
        let head = path.get(..prefix.len()).ok_or_else(bad)?;
        if !head.eq_ignore_ascii_case(&prefix) {
            return Err(bad());
        }
        let rest = path.get(prefix.len()..).ok_or_else(bad)?;
        if !rest.starts_with(".github/workflows/") {
            return Err(bad());
        }
        WorkflowPath::parse(rest).map_err(|_| bad())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Everything a dispatch signature covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedFields {
    pub repository: RepositoryName,
    pub git_ref: FullRef,
    pub workflow: WorkflowPath,
    pub task_id: TaskId,
    pub base: BaseSha,
    pub diff_sha256: DiffSha256,
    pub nonce: Nonce,
    /// Unix seconds.
    pub expires_at: u64,
    pub scope: Scope,
    /// The agent's pull request title and description; empty when not given.
    pub pr_title: String,
    pub pr_description: String,
    /// A revision: the number of the task's open draft pull request, whose head is `base`.
    pub revision: Option<u64>,
}

impl SignedFields {
    /// The canonical encoding the tag is computed over (see the module documentation).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let mut field = |bytes: &[u8]| {
            push_len(&mut out, bytes.len());
            out.extend_from_slice(bytes);
        };
        field(DOMAIN.as_bytes());
        field(self.repository.as_str().as_bytes());
        field(self.git_ref.as_str().as_bytes());
        field(self.workflow.as_str().as_bytes());
        field(self.task_id.as_str().as_bytes());
        field(self.base.as_str().as_bytes());
        field(self.diff_sha256.as_str().as_bytes());
        field(self.nonce.as_str().as_bytes());
        field(self.expires_at.to_string().as_bytes());
        let globs = self.scope.globs();
        push_len(&mut out, globs.len());
        for glob in globs {
            push_len(&mut out, glob.len());
            out.extend_from_slice(glob.as_bytes());
        }
        let mut field = |bytes: &[u8]| {
            push_len(&mut out, bytes.len());
            out.extend_from_slice(bytes);
        };
        field(self.pr_title.as_bytes());
        field(self.pr_description.as_bytes());
        if let Some(number) = self.revision {
            field(REVISION_FIELD.as_bytes());
            field(number.to_string().as_bytes());
        }
        out
    }
}

/// The marker of field 12 (a revision), before the pull request's number.
pub const REVISION_FIELD: &str = "revision";
/// The workflow input carrying a revision's pull request number (empty or absent: a first round).
pub const REVISION_INPUT: &str = "revise_pull_request";

/// The `revise_pull_request` input: empty is a first round, else a pull request number.
pub fn parse_revision(text: &str) -> Result<Option<u64>, MacError> {
    if text.is_empty() {
        return Ok(None);
    }
    let ok = text.len() <= 10 && !text.starts_with('0') && text.bytes().all(|b| b.is_ascii_digit());
    match text.parse::<u64>() {
        Ok(number) if ok && number > 0 => Ok(Some(number)),
        _ => Err(MacError::Revision {
            found: text.chars().take(40).collect(),
        }),
    }
}

fn push_len(out: &mut Vec<u8>, len: usize) {
    // Every field is bounded far below 4 GiB by its parser; saturate rather than wrap.
    let len = u32::try_from(len).unwrap_or(u32::MAX);
    out.extend_from_slice(&len.to_be_bytes());
}

/// 16 bytes from the kernel's random source, as a nonce.
pub fn random_nonce() -> Result<Nonce, MacError> {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| MacError::Random {
            message: format!("/dev/urandom: {e}"),
        })?;
    Ok(Nonce::from_bytes(bytes))
}

/// The signature of `fields` under `key`: the input value carries the nonce and the expiry.
pub fn sign(fields: &SignedFields, key: &DispatchKey) -> DispatchMac {
    let mut mac = key.mac();
    mac.update(&fields.encode());
    let tag: [u8; 32] = mac.finalize().into_bytes().into();
    DispatchMac::new(fields.nonce.clone(), fields.expires_at, tag)
}

/// The dispatch is still valid at `now`, and its expiry not further than [`MAX_LIFETIME`] ahead.
pub fn check_expiry(expires_at: u64, now: u64) -> Result<(), MacError> {
    if now >= expires_at {
        return Err(MacError::Expired { expires_at, now });
    }
    if expires_at - now > MAX_LIFETIME_SECONDS {
        return Err(MacError::TooLong { expires_at, now });
    }
    Ok(())
}

/// Check `mac` over `fields` with the current key, then the previous one. Constant time in the
/// tag comparison; which key matched is returned so the rotation can be followed. `fields`'
/// nonce and expiry must be the ones `mac` carries (the caller builds them from it). The
/// expiry is checked separately ([`check_expiry`]), after the tag: an unsigned expiry means
/// nothing.
pub fn verify(
    fields: &SignedFields,
    mac: Option<&DispatchMac>,
    keys: &VerifyingKeys,
) -> Result<KeySlot, MacError> {
    let mismatch = || MacError::Mismatch {
        workflow: fields.workflow.as_str().to_owned(),
    };
    let mac = mac.ok_or(MacError::Missing)?;
    if mac.nonce() != &fields.nonce || mac.expires_at() != fields.expires_at {
        return Err(mismatch());
    }
    let encoded = fields.encode();
    let candidates = [
        (KeySlot::Current, Some(&keys.current)),
        (KeySlot::Previous, keys.previous.as_ref()),
    ];
    for (slot, key) in candidates {
        let Some(key) = key else { continue };
        let mut check = key.mac();
        check.update(&encoded);
        if check.verify_slice(mac.tag()).is_ok() {
            return Ok(slot);
        }
    }
    Err(mismatch())
}
