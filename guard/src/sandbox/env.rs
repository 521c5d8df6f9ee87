//! The scrubbed environment the command runs with: an explicit allowlist, and a secret filter that
//! wins over the allowlist.

use std::collections::BTreeSet;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Passed through when present in the guard's own environment (and not secret-looking). `HOME` is
/// never passed through: it is replaced by a fresh empty directory.
pub const BASE_ALLOWLIST: &[&str] = &[
    "PATH",
    "LANG",
    "LC_ALL",
    "TERM",
    "TMPDIR",
    "USER",
    // The Rust toolchain: where rustup and cargo live, which toolchain, where build output goes.
    // They locate code and output, not credentials (the workflow must keep registry tokens out of
    // CARGO_HOME: the command can read it).
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "CARGO_TARGET_DIR",
];

/// The XDG base directories of the build (variable, directory inside its fresh `HOME`): made
/// empty and writable with it, so that tools keep their configuration, caches, data and state
/// there rather than giving up on them.
pub const XDG_DIRS: &[(&str, &str)] = &[
    ("XDG_CONFIG_HOME", ".config"),
    ("XDG_CACHE_HOME", ".cache"),
    ("XDG_DATA_HOME", ".local/share"),
    ("XDG_STATE_HOME", ".local/state"),
];

/// Everything the fresh `HOME` holds when the build starts: the XDG directories and their
/// parents, relative, sorted.
pub fn home_skeleton() -> Vec<String> {
    let mut entries: BTreeSet<String> = BTreeSet::new();
    for (_, dir) in XDG_DIRS {
        for ancestor in Path::new(dir).ancestors() {
            if !ancestor.as_os_str().is_empty() {
                entries.insert(ancestor.to_string_lossy().into_owned());
            }
        }
    }
    entries.into_iter().collect()
}

/// What the command gets, and what the report says about it (names only, never values).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvPlan {
    /// The complete environment of the command.
    pub vars: Vec<(OsString, OsString)>,
    /// Names passed to the command, sorted.
    pub passed: Vec<String>,
    /// Names present in the guard's environment that the command does not get, sorted.
    pub dropped: Vec<String>,
    /// The subset of `dropped` that was allowlisted or requested but looked like a secret.
    pub refused: Vec<String>,
}

/// Plans the command's environment from the guard's own (`ambient`), the names requested with
/// `--allow-env`, and the fresh `home`. When `CARGO_HOME`/`RUSTUP_HOME` are not passed through,
/// they are derived from the real `HOME` (`~/.cargo`, `~/.rustup`) if those directories exist, so
/// that `cargo` still finds its toolchain although `HOME` moved.
pub fn plan(
    ambient: impl IntoIterator<Item = (OsString, OsString)>,
    requested: &[String],
    home: &Path,
) -> EnvPlan {
    let allowed: BTreeSet<&str> = BASE_ALLOWLIST
        .iter()
        .copied()
        .chain(requested.iter().map(String::as_str))
        .collect();
    let mut vars = Vec::new();
    let mut passed = BTreeSet::new();
    let mut dropped = BTreeSet::new();
    let mut refused = BTreeSet::new();
    let mut real_home: Option<PathBuf> = None;
    for (name, value) in ambient {
        let display = name.to_string_lossy().into_owned();
        let Some(name_str) = name.to_str() else {
            dropped.insert(display);
            continue;
        };
        if name_str == "HOME" {
            real_home = Some(PathBuf::from(&value));
            continue;
        }
        if !allowed.contains(name_str) {
            dropped.insert(display);
            continue;
        }
        if secret_name(name_str).is_some() || secret_value(&value) {
            refused.insert(display.clone());
            dropped.insert(display);
            continue;
        }
        passed.insert(display);
        vars.push((name, value));
    }
    vars.push(("HOME".into(), home.as_os_str().to_owned()));
    passed.insert("HOME".to_string());
    if let Some(real_home) = real_home {
        for (name, dir) in [("CARGO_HOME", ".cargo"), ("RUSTUP_HOME", ".rustup")] {
            let derived = real_home.join(dir);
            if !passed.contains(name) && !refused.contains(name) && derived.is_dir() {
                vars.push((name.into(), derived.into_os_string()));
                passed.insert(name.to_string());
            }
        }
    }
    EnvPlan {
        vars,
        passed: passed.into_iter().collect(),
        dropped: dropped.into_iter().collect(),
        refused: refused.into_iter().collect(),
    }
}

/// Whether `name` is a valid variable name for `--allow-env`: `[A-Za-z_][A-Za-z0-9_]*`.
pub fn valid_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Prefixes of variables that belong to a CI runner or a cloud/credential tool. Everything under
/// them is dropped: they hold tokens (`GITHUB_TOKEN`, `ACTIONS_RUNTIME_TOKEN`,
/// `ACTIONS_ID_TOKEN_REQUEST_*`, action inputs `INPUT_*`), endpoints that only make sense with
/// those tokens (`ACTIONS_CACHE_URL`, `ACTIONS_RESULTS_URL`), or runner internals.
const SECRET_PREFIXES: &[&str] = &[
    "GITHUB_",
    "ACTIONS_",
    "RUNNER_",
    "INPUT_",
    "STATE_",
    "AWS_",
    "AZURE_",
    "ARM_",
    "GCP_",
    "GOOGLE_",
    "GCLOUD_",
    "CLOUDSDK_",
    "VAULT_",
    "DOCKER_",
    "NPM_CONFIG_",
    "YARN_NPM_",
    "TWINE_",
    "SSH_",
    "GPG_",
    "GNUPG",
    "KRB5",
];

/// Substrings that mark a credential wherever they occur in the name.
const SECRET_SUBSTRINGS: &[&str] = &[
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "CREDENTIAL",
    "COOKIE",
    "PRIVATE",
    "APIKEY",
    "ACCESSKEY",
    "WEBHOOK",
    "CONNECTION_STRING",
    "CONNSTR",
    "KUBECONFIG",
    "NETRC",
    "ASKPASS",
];

/// Why `name` looks like it carries a secret, or `None`. Case-insensitive. Besides the prefixes
/// and substrings above, a name *segment* (split on `_`) marks a secret when it is a key (`KEY`,
/// `KEYS`, ending in `KEY` like `APIKEY`, or `KEYFILE`/`KEYSTORE`/`KEYRING`/`KEYCHAIN`/`KEYID`/
/// `KEYPAIR` — but not `KEYBOARD`), an authentication word (contains `AUTH`, except `AUTHOR`/
/// `AUTHORS`), a session, a pass/passphrase, or one of `PAT`, `SAS`, `JWT`, `BEARER`, `DSN`, `OTP`.
pub fn secret_name(name: &str) -> Option<&'static str> {
    let upper = name.to_ascii_uppercase();
    if let Some(prefix) = SECRET_PREFIXES.iter().find(|p| upper.starts_with(*p)) {
        return Some(prefix);
    }
    if let Some(word) = SECRET_SUBSTRINGS.iter().find(|w| upper.contains(*w)) {
        return Some(word);
    }
    for segment in upper.split('_') {
        let hit = match segment {
            "KEYFILE" | "KEYSTORE" | "KEYRING" | "KEYCHAIN" | "KEYID" | "KEYPAIR" => Some("KEY"),
            s if s.ends_with("KEY") || s.ends_with("KEYS") => Some("KEY"),
            "AUTHOR" | "AUTHORS" => None,
            s if s.contains("AUTH") => Some("AUTH"),
            s if s.contains("SESSION") => Some("SESSION"),
            s if s.starts_with("PASS") || s.ends_with("PASS") => Some("PASS"),
            "PAT" => Some("PAT"),
            "SAS" => Some("SAS"),
            "JWT" => Some("JWT"),
            "BEARER" => Some("BEARER"),
            "DSN" => Some("DSN"),
            "OTP" => Some("OTP"),
            _ => None,
        };
        if hit.is_some() {
            return hit;
        }
    }
    None
}

/// Whether a value looks like a credential whatever its name: a GitHub/GitLab/Slack/npm token, an
/// AWS access key id or secret access key, a PEM private key, a URL carrying a password
/// (`scheme://user:pass@host`), a JWT, a PyPI, Stripe, Google API, OpenAI, Anthropic, Hugging
/// Face or Docker Hub token, or an Azure shared access signature (see [`vendor_token`]).
pub fn secret_value(value: &OsStr) -> bool {
    let v = value.as_bytes();
    if vendor_token(v) {
        return true;
    }
    const TOKEN_PREFIXES: &[&[u8]] = &[
        b"ghp_",
        b"gho_",
        b"ghu_",
        b"ghs_",
        b"ghr_",
        b"github_pat_",
        b"glpat-",
        b"xoxb-",
        b"xoxp-",
        b"xoxa-",
        b"npm_",
    ];
    let token_tail = |rest: &[u8]| {
        rest.iter()
            .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
            .count()
            >= 20
    };
    for prefix in TOKEN_PREFIXES {
        if find_all(v, prefix).any(|at| token_tail(&v[at + prefix.len()..])) {
            return true;
        }
    }
    for prefix in [b"AKIA", b"ASIA"] {
        let key_id = |rest: &[u8]| {
            rest.len() >= 16
                && rest[..16]
                    .iter()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
        };
        if find_all(v, prefix).any(|at| key_id(&v[at + 4..])) {
            return true;
        }
    }
    if find_all(v, b"-----BEGIN ").next().is_some() {
        return true;
    }
    // scheme://user:password@host — the userinfo ends at the first '/', '?' or '#' after "://".
    find_all(v, b"://").any(|at| {
        let authority: Vec<u8> = v[at + 3..]
            .iter()
            .copied()
            .take_while(|b| !matches!(b, b'/' | b'?' | b'#') && !b.is_ascii_whitespace())
            .collect();
        authority
            .iter()
            .rposition(|b| *b == b'@')
            .is_some_and(|end| authority[..end].contains(&b':'))
    })
}

/// The length of the run of bytes at the start of `rest` that `allowed` accepts.
fn run_of(rest: &[u8], allowed: impl Fn(u8) -> bool) -> usize {
    rest.iter().take_while(|b| allowed(**b)).count()
}

fn base64url(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// A token's fixed prefix, the least number of bytes after it, and their alphabet.
type TokenShape = (&'static [u8], usize, fn(u8) -> bool);

/// Token formats with a fixed shape, each after the rule of gitleaks
/// (`config/gitleaks.toml`, github.com/gitleaks/gitleaks) or the vendor's documentation named
/// beside it. Every pattern asks for the full length of the secret part, so that a mere mention
/// of a prefix (`sk_live_` in a help text) passes.
fn vendor_token(v: &[u8]) -> bool {
    // gitleaks `jwt`: `ey[a-zA-Z0-9]{17,}\.ey[a-zA-Z0-9\/\\_-]{17,}\.(?:[a-zA-Z0-9\/\\_-]{10,}={0,2})?`
    // (RFC 7519: base64url of a JSON header and payload, both starting `{"`, hence `ey`).
    let jwt = find_all(v, b"ey").any(|at| {
        let rest = &v[at + 2..];
        let header = run_of(rest, |b| b.is_ascii_alphanumeric());
        header >= 17
            && rest[header..].starts_with(b".ey")
            && run_of(&rest[header + 3..], |b| {
                base64url(b) || b == b'/' || b == b'\\'
            }) >= 17
    });
    // Fixed prefix, then at least `min` bytes of the token alphabet:
    let prefixed: &[TokenShape] = &[
        // gitleaks `pypi-upload-token`: `pypi-AgEIcHlwaS5vcmc[\w-]{50,1000}` (the macaroon's
        // location, "pypi.org", base64); TestPyPI's tokens carry "test.pypi.org" instead.
        (b"pypi-AgEIcHlwaS5vcmc", 50, base64url),
        (b"pypi-AgENdGVzdC5weXBpLm9yZw", 50, base64url),
        // gitleaks `stripe-access-token`: `(?:sk|rk)_(?:test|live|prod)_[a-zA-Z0-9]{10,99}`
        // (Stripe's docs, "API keys": secret keys `sk_live_`, restricted keys `rk_live_`).
        (b"sk_live_", 10, |b| b.is_ascii_alphanumeric()),
        (b"rk_live_", 10, |b| b.is_ascii_alphanumeric()),
        (b"sk_test_", 10, |b| b.is_ascii_alphanumeric()),
        (b"rk_test_", 10, |b| b.is_ascii_alphanumeric()),
        (b"sk_prod_", 10, |b| b.is_ascii_alphanumeric()),
        (b"rk_prod_", 10, |b| b.is_ascii_alphanumeric()),
        // gitleaks `gcp-api-key`: `AIza[\w-]{35}` (Google Cloud docs, "API keys").
        (b"AIza", 35, base64url),
        // gitleaks `openai-api-key` (`sk-proj-`, `sk-svcacct-`, `sk-admin-` project keys) and
        // `anthropic-api-key` (`sk-ant-api03-`, `sk-ant-admin01-`).
        (b"sk-proj-", 40, base64url),
        (b"sk-svcacct-", 40, base64url),
        (b"sk-admin-", 40, base64url),
        (b"sk-ant-api03-", 80, base64url),
        (b"sk-ant-admin01-", 80, base64url),
        // gitleaks `huggingface-access-token`: `hf_[a-zA-Z]{34}`.
        (b"hf_", 34, |b| b.is_ascii_alphabetic()),
        // Docker Hub personal access tokens (Docker docs, "Access tokens": `dckr_pat_`).
        (b"dckr_pat_", 20, base64url),
    ];
    let vendor = prefixed.iter().any(|(prefix, min, alphabet)| {
        find_all(v, prefix).any(|at| run_of(&v[at + prefix.len()..], alphabet) >= *min)
    });
    // Azure Storage shared access signature (Microsoft Learn, "Create a service SAS": the
    // `sig=` parameter is the URL-encoded base64 HMAC-SHA256 of the string-to-sign, beside the
    // `sv=` service version); trufflehog's `azure_storage_sas` detector keys on the same pair.
    let sas = find_all(v, b"sig=").any(|at| {
        run_of(&v[at + 4..], |b| {
            b.is_ascii_alphanumeric() || b"%+/=".contains(&b)
        }) >= 30
    }) && find_all(v, b"sv=").next().is_some();
    jwt || vendor || sas || aws_secret_access_key(v)
}

/// An AWS secret access key: 40 bytes of base64 (`[A-Za-z0-9/+]{40}`, trufflehog's `aws`
/// detector; AWS's docs, "Manage access keys", show `wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY`),
/// standing alone (no base64 byte on either side), with upper- and lower-case letters and a
/// digit, so that a 40-digit hexadecimal object id passes.
fn aws_secret_access_key(v: &[u8]) -> bool {
    let alphabet = |b: u8| b.is_ascii_alphanumeric() || b == b'/' || b == b'+';
    let mut at = 0;
    while at < v.len() {
        let len = run_of(&v[at..], alphabet);
        if len == 0 {
            at += 1;
            continue;
        }
        let word = &v[at..at + len];
        if len == 40
            && v.get(at + len) != Some(&b'=')
            && word.iter().any(u8::is_ascii_uppercase)
            && word.iter().any(u8::is_ascii_lowercase)
            && word.iter().any(u8::is_ascii_digit)
        {
            return true;
        }
        at += len;
    }
    false
}

fn find_all<'a>(haystack: &'a [u8], needle: &'a [u8]) -> impl Iterator<Item = usize> + 'a {
    haystack
        .windows(needle.len())
        .enumerate()
        .filter(move |(_, w)| *w == needle)
        .map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    #[test]
    fn the_home_skeleton_is_the_xdg_directories_and_their_parents() {
        assert_eq!(
            home_skeleton(),
            [
                ".cache",
                ".config",
                ".local",
                ".local/share",
                ".local/state"
            ]
        );
    }

    #[test]
    fn secret_names() {
        let secret = [
            "GITHUB_TOKEN",
            "GITHUB_SHA",
            "github_token",
            "ACTIONS_RUNTIME_TOKEN",
            "ACTIONS_ID_TOKEN_REQUEST_URL",
            "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
            "ACTIONS_CACHE_URL",
            "ACTIONS_RESULTS_URL",
            "RUNNER_TEMP",
            "INPUT_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_REGION",
            "AZURE_CLIENT_ID",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "NPM_TOKEN",
            "MY_API_KEY",
            "DB_PASSWORD",
            "DB_PASS",
            "SSH_AUTH_SOCK",
            "GH_PAT",
            "SENTRY_DSN",
            "SIGNING_KEYS",
            "MYAPIKEY",
            "SSH_KEYFILE",
            "HTTP_AUTHORIZATION",
            "OAUTH_CLIENT",
            "RAILS_SESSION_ID",
            "GPG_PASSPHRASE",
            "GIT_ASKPASS",
            "SLACK_WEBHOOK_URL",
            "KUBECONFIG",
            "PRIVATE_REGISTRY",
            "X_COOKIE_JAR",
        ];
        for name in secret {
            assert!(secret_name(name).is_some(), "{name} should be refused");
        }
        let plain = [
            "PATH",
            "HOME",
            "LANG",
            "LC_ALL",
            "TERM",
            "TMPDIR",
            "USER",
            "CARGO_HOME",
            "RUSTUP_HOME",
            "RUSTUP_TOOLCHAIN",
            "CARGO_TARGET_DIR",
            "KEYBOARD_LAYOUT",
            "GIT_AUTHOR_NAME",
            "RUST_BACKTRACE",
            "SOURCE_DATE_EPOCH",
        ];
        for name in plain {
            assert_eq!(secret_name(name), None, "{name} should pass");
        }
    }

    #[test]
    fn secret_values() {
        let secret = [
            "ghp_0123456789abcdefghijABCDEFGHIJ",
            "prefix ghs_0123456789abcdefghijABCDEFGHIJ suffix",
            "github_pat_11AAAAAAA0123456789_abcdefghijklmnopqrstuvwxyz",
            "AKIAIOSFODNN7EXAMPLE",
            "-----BEGIN OPENSSH PRIVATE KEY-----",
            "https://user:hunter2@example.com/path",
            "postgres://app:pw@db:5432/app",
            // jwt.io's example token
            "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
            "Bearer eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJodHRwczovL3Rva2VuLmV4YW1wbGUifQ.",
            "pypi-AgEIcHlwaS5vcmcCJDAwMDAwMDAwLTAwMDAtMDAwMC0wMDAwLTAwMDAwMDAwMDAwMAACKlsz",
            "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
            "rk_live_51H8abcdefghijklmnopqrstu",
            "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
            "https://acct.blob.core.windows.net/c?sv=2022-11-02&ss=b&srt=co&sp=r&se=2030-01-01T00:00:00Z&sig=abcdEFGH0123456789abcdEFGH0123456789%2BxyZ%3D",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH",
        ];
        for value in secret {
            assert!(secret_value(OsStr::new(value)), "{value} should be refused");
        }
        let plain = [
            "/usr/bin:/bin",
            "en_US.UTF-8",
            "https://example.com/a@b",
            "git@github.com:owner/repo",
            "ghp_short",
            "user@example.com",
            "https://user@example.com/",
            // a git object id, a sha256 checksum, a mention of a prefix
            "0123456789abcdef0123456789abcdef01234567",
            "E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855",
            "set sk_live_ to your key",
            "AIza-short",
            "https://example.com/?sig=short&sv=1",
            "/usr/local/lib/python3.11/site-packages",
        ];
        for value in plain {
            assert!(!secret_value(OsStr::new(value)), "{value} should pass");
        }
    }

    fn ambient(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(n, v)| (OsString::from(n), OsString::from(v)))
            .collect()
    }

    #[test]
    fn allowlist_secret_filter_and_home() {
        let home = Path::new("/tmp/fresh-home");
        let plan = plan(
            ambient(&[
                ("PATH", "/usr/bin"),
                ("HOME", "/nonexistent-real-home"),
                ("GITHUB_TOKEN", "ghp_x"),
                ("MY_API_KEY", "k"),
                ("EXTRA", "1"),
                ("UNLISTED", "2"),
                ("LANG", "https://u:p@h/"),
            ]),
            &["GITHUB_TOKEN".into(), "MY_API_KEY".into(), "EXTRA".into()],
            home,
        );
        assert_eq!(plan.passed, ["EXTRA", "HOME", "PATH"]);
        assert_eq!(
            plan.dropped,
            ["GITHUB_TOKEN", "LANG", "MY_API_KEY", "UNLISTED"]
        );
        assert_eq!(plan.refused, ["GITHUB_TOKEN", "LANG", "MY_API_KEY"]);
        let home_var = plan
            .vars
            .iter()
            .find(|(n, _)| n == "HOME")
            .map(|(_, v)| v.clone());
        assert_eq!(home_var, Some(OsString::from("/tmp/fresh-home")));
        assert_eq!(plan.vars.len(), 3);
    }

    #[test]
    fn toolchain_dirs_derived_from_real_home_when_unset() {
        let real = tempfile::tempdir().unwrap();
        std::fs::create_dir(real.path().join(".cargo")).unwrap();
        let home = Path::new("/tmp/fresh-home");
        let real_home = real.path().to_str().unwrap();
        let derived = plan(ambient(&[("HOME", real_home)]), &[], home);
        assert_eq!(
            derived.passed,
            ["CARGO_HOME", "HOME"],
            "no ~/.rustup, so RUSTUP_HOME stays unset"
        );
        let cargo_home = derived
            .vars
            .iter()
            .find(|(n, _)| n == "CARGO_HOME")
            .map(|(_, v)| PathBuf::from(v));
        assert_eq!(cargo_home, Some(real.path().join(".cargo")));

        let explicit = plan(
            ambient(&[("HOME", real_home), ("CARGO_HOME", "/opt/cargo")]),
            &[],
            home,
        );
        let cargo_home = explicit
            .vars
            .iter()
            .find(|(n, _)| n == "CARGO_HOME")
            .map(|(_, v)| v.clone());
        assert_eq!(
            cargo_home,
            Some(OsString::from("/opt/cargo")),
            "an explicit CARGO_HOME wins"
        );
    }

    #[test]
    fn variable_names() {
        for ok in ["A", "_", "CARGO_HOME", "a1_b"] {
            assert!(valid_name(ok), "{ok}");
        }
        for bad in ["", "1A", "A-B", "A=B", "A B", "Ä"] {
            assert!(!valid_name(bad), "{bad}");
        }
    }
}
