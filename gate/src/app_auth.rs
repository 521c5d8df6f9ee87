//! The dispatcher App: `gate dispatch` mints its own short-lived token from the App's private key
//! instead of holding a long-lived one.
//!
//! 1. A JSON web token signed RS256 (RSASSA-PKCS1-v1_5, SHA-256) by the App's key, `iat` 60 s in
//!    the past (clock drift), `exp` 9 minutes ahead (GitHub allows at most 10), `iss` the App's
//!    id: "Generating a JSON Web Token (JWT) for a GitHub App",
//!    <https://docs.github.com/en/apps/creating-github-apps/authenticating-with-a-github-app/generating-a-json-web-token-jwt-for-a-github-app>.
//! 2. With it: `GET /app` (the App's slug: its runs' `actor` is `<slug>[bot]`), `GET
//!    /repos/{owner}/{repo}/installation`, and `POST /app/installations/{id}/access_tokens` for
//!    that one repository and only the permissions the dispatch uses ([`token_permissions`]).
//! 3. The dispatch runs with the installation token, which is revoked afterwards (`DELETE
//!    /installation/token`), whatever the outcome.

use std::collections::BTreeMap;

use base64::Engine;
use github::apps::AccessTokenRequest;
use github::{Client, Repository};
use ring::rand::SystemRandom;
use ring::signature::{RSA_PKCS1_SHA256, RsaKeyPair};
use rustls_pki_types::PrivateKeyDer;
use rustls_pki_types::pem::PemObject;

/// The dispatcher App's id, when `--dispatcher-app-id` is not given.
pub const DISPATCHER_APP_ID_VARIABLE: &str = "AGENT_TEAM_DISPATCHER_APP_ID";
/// The file of its private key (PEM), when `--dispatcher-app-key-file` is not given.
pub const DISPATCHER_APP_KEY_FILE_VARIABLE: &str = "AGENT_TEAM_DISPATCHER_APP_KEY_FILE";

/// How far in the past `iat` is set (GitHub's recommendation against clock drift).
pub const JWT_BACKDATE_SECONDS: i64 = 60;
/// How far ahead `exp` is set: under GitHub's 10 minutes, with room for drift.
pub const JWT_LIFETIME_SECONDS: i64 = 540;

/// Why the App's key or token could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AppKeyError {
    #[error("the dispatcher App's key {path}: {reason}")]
    Read { path: String, reason: String },
    #[error(
        "the dispatcher App's key is not a PEM private key (GitHub's download is \"-----BEGIN RSA PRIVATE KEY-----\"): {reason}"
    )]
    Pem { reason: String },
    #[error("the dispatcher App's key is not a usable RSA key (2048 bits or more): {reason}")]
    Key { reason: String },
    #[error("signing the JSON web token failed")]
    Sign,
}

/// The dispatcher App's private key (RSA, PKCS#1 or PKCS#8 PEM). `Debug` shows nothing of it.
pub struct AppKey {
    pair: RsaKeyPair,
}

impl std::fmt::Debug for AppKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AppKey(<redacted>)")
    }
}

impl AppKey {
    pub fn from_pem(pem: &[u8]) -> Result<Self, AppKeyError> {
        let der = PrivateKeyDer::from_pem_slice(pem).map_err(|e| AppKeyError::Pem {
            reason: e.to_string(),
        })?;
        let pair = match &der {
            PrivateKeyDer::Pkcs1(key) => RsaKeyPair::from_der(key.secret_pkcs1_der()),
            PrivateKeyDer::Pkcs8(key) => RsaKeyPair::from_pkcs8(key.secret_pkcs8_der()),
            _ => {
                return Err(AppKeyError::Key {
                    reason: "not an RSA key".to_owned(),
                });
            }
        }
        .map_err(|e| AppKeyError::Key {
            reason: e.to_string(),
        })?;
        Ok(AppKey { pair })
    }

    pub fn from_file(path: &std::path::Path) -> Result<Self, AppKeyError> {
        use std::io::Read;
        let read = |reason: String| AppKeyError::Read {
            path: path.display().to_string(),
            reason,
        };
        let file = std::fs::File::open(path).map_err(|e| read(e.to_string()))?;
        let mut pem = Vec::new();
        file.take(64 * 1024)
            .read_to_end(&mut pem)
            .map_err(|e| read(e.to_string()))?;
        Self::from_pem(&pem)
    }

    /// The public key, PKCS#1 `RSAPublicKey` DER (what GitHub verifies the token with).
    pub fn public_key_der(&self) -> &[u8] {
        self.pair.public().as_ref()
    }

    /// The App's JSON web token at Unix time `now` (module documentation, step 1).
    pub fn jwt(&self, app_id: u64, now: i64) -> Result<String, AppKeyError> {
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let header = b64.encode(br#"{"alg":"RS256","typ":"JWT"}"#);
        let claims = serde_json::json!({
            "iat": now - JWT_BACKDATE_SECONDS,
            "exp": now + JWT_LIFETIME_SECONDS,
            "iss": app_id.to_string(),
        });
        let claims = b64.encode(claims.to_string());
        let signing_input = format!("{header}.{claims}");
        let mut signature = vec![0; self.pair.public().modulus_len()];
        self.pair
            .sign(
                &RSA_PKCS1_SHA256,
                &SystemRandom::new(),
                signing_input.as_bytes(),
                &mut signature,
            )
            .map_err(|_| AppKeyError::Sign)?;
        Ok(format!("{signing_input}.{}", b64.encode(signature)))
    }
}

/// `gate dispatch --dispatcher-app-id --dispatcher-app-key-file`.
#[derive(Debug)]
pub struct DispatcherApp {
    pub app_id: u64,
    pub key: AppKey,
}

/// The installation token's permissions: what the dispatch does with it and nothing more.
/// `actions: write` dispatches and reads the run, its jobs, logs and artifacts; `contents`
/// reads the branch's head (finding the run) and the published commit, and is `write` only
/// when the diff travels on a branch (`diff_ref`); with `wait`, `checks: read` and
/// `pull_requests: read` authenticate the publication; `metadata: read` is implied by any.
pub fn token_permissions(wait: bool, diff_branch: bool) -> BTreeMap<&'static str, &'static str> {
    let mut permissions = BTreeMap::from([
        ("actions", "write"),
        ("contents", if diff_branch { "write" } else { "read" }),
        ("metadata", "read"),
    ]);
    if wait {
        permissions.insert("checks", "read");
        permissions.insert("pull_requests", "read");
    }
    permissions
}

/// A token minted for the dispatch, and who its runs are by.
pub struct Minted {
    pub token: String,
    /// `<slug>[bot]`: the `actor` of the runs it dispatches.
    pub bot_login: String,
    pub installation_id: u64,
    pub expires_at: String,
    pub permissions: BTreeMap<String, String>,
}

impl std::fmt::Debug for Minted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Minted")
            .field("token", &"<redacted>")
            .field("bot_login", &self.bot_login)
            .field("installation_id", &self.installation_id)
            .finish()
    }
}

/// Module documentation, step 2, with `app_client` carrying the App's JSON web token.
pub fn mint(
    app_client: &Client,
    app_id: u64,
    repo: &Repository,
    permissions: &BTreeMap<&'static str, &'static str>,
) -> Result<Minted, String> {
    let app = app_client.get_authenticated_app().map_err(|e| {
        format!(
            "the dispatcher App {app_id} was refused ({e}): is the key the App's, and its id {app_id}?"
        )
    })?;
    if app.id != app_id {
        return Err(format!(
            "the key authenticates App {}, not the dispatcher App {app_id}",
            app.id
        ));
    }
    let installation = app_client.get_repository_installation(repo).map_err(|e| {
        format!(
            "the dispatcher App {app_id} is not installed on {} ({e})",
            repo.full_name()
        )
    })?;
    let body = AccessTokenRequest {
        repositories: vec![repo.name()],
        permissions,
    };
    let token = app_client
        .create_installation_token(installation.id, &body)
        .map_err(|e| {
            format!(
                "minting the dispatcher App's installation token failed ({e}); the App needs {}",
                permissions
                    .iter()
                    .map(|(k, v)| format!("{k}: {v}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })?;
    Ok(Minted {
        token: token.token,
        bot_login: format!("{}[bot]", app.slug),
        installation_id: installation.id,
        expires_at: token.expires_at,
        permissions: token.permissions,
    })
}
