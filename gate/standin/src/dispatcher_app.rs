//! The dispatcher App as GitHub serves it: a JSON web token is believed when its RS256 signature
//! verifies against the App's public key and its claims are GitHub's (`iss` the App's id, `exp`
//! in the future and at most 10 minutes ahead, `iat` not in the future: "Generating a JSON Web
//! Token (JWT) for a GitHub App",
//! <https://docs.github.com/en/apps/creating-github-apps/authenticating-with-a-github-app/generating-a-json-web-token-jwt-for-a-github-app>).
//! With it: "Get the authenticated app" (`GET /app`,
//! <https://docs.github.com/en/rest/apps/apps#get-the-authenticated-app>), "Get a repository
//! installation for the authenticated app" (`GET /repos/{owner}/{repo}/installation`,
//! <https://docs.github.com/en/rest/apps/apps#get-a-repository-installation-for-the-authenticated-app>)
//! and "Create an installation access token for an app" (`POST
//! /app/installations/{installation_id}/access_tokens`,
//! <https://docs.github.com/en/rest/apps/apps#create-an-installation-access-token-for-an-app>),
//! whose token is refused once revoked (`DELETE /installation/token`).

use base64::Engine;
use serde_json::{Value, json};

use crate::State;
use crate::http::{Recorded, Reply};

/// The dispatcher App a scenario has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DispatcherApp {
    pub id: u64,
    pub slug: String,
    pub installation_id: u64,
    /// The App's public key: PKCS#1 `RSAPublicKey` DER.
    pub public_key_der: Vec<u8>,
    /// The tokens minted, in order (accepted like [`crate::Scenario::token`] until revoked).
    pub minted: Vec<String>,
    /// The bodies of the token requests (`repositories`, `permissions`), in order.
    pub token_requests: Vec<Value>,
}

impl DispatcherApp {
    pub fn new(id: u64, slug: &str, public_key_der: Vec<u8>) -> Self {
        DispatcherApp {
            id,
            slug: slug.to_owned(),
            installation_id: 77_001,
            public_key_der,
            minted: Vec::new(),
            token_requests: Vec::new(),
        }
    }
}

/// Why a presented JSON web token is not the App's (GitHub answers `401` to each).
fn verify(app: &DispatcherApp, token: &str, now: i64) -> Result<(), &'static str> {
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let mut parts = token.split('.');
    let (Some(header), Some(claims), Some(signature), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err("A JSON web token could not be decoded");
    };
    let decode =
        |part: &str| -> Option<Value> { serde_json::from_slice(&b64.decode(part).ok()?).ok() };
    let (Some(header), Some(claims), Ok(signature)) =
        (decode(header), decode(claims), b64.decode(signature))
    else {
        return Err("A JSON web token could not be decoded");
    };
    if header["alg"] != "RS256" {
        return Err("A JSON web token could not be decoded");
    }
    let signed = &token[..token.rfind('.').unwrap_or(0)];
    ring::signature::UnparsedPublicKey::new(
        &ring::signature::RSA_PKCS1_2048_8192_SHA256,
        &app.public_key_der,
    )
    .verify(signed.as_bytes(), &signature)
    .map_err(|_| "A JSON web token could not be decoded")?;
    let iss = match &claims["iss"] {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => String::new(),
    };
    if iss != app.id.to_string() {
        return Err("'Issuer' claim ('iss') must be an Integer");
    }
    let (Some(iat), Some(exp)) = (claims["iat"].as_i64(), claims["exp"].as_i64()) else {
        return Err("A JSON web token could not be decoded");
    };
    if iat > now + 1 {
        return Err("'Issued at' claim ('iat') must be an Integer representing a time in the past");
    }
    if exp <= now || exp > now + 600 {
        return Err(
            "'Expiration time' claim ('exp') is too far in the future or has already passed",
        );
    }
    Ok(())
}

fn bearer(req: &Recorded) -> &str {
    req.header("authorization")
        .and_then(|h| h.strip_prefix("Bearer "))
        .unwrap_or("")
}

fn unauthorized(message: &str) -> Reply {
    Reply::json(
        401,
        &json!({"message": message, "documentation_url": "https://docs.github.com/rest"}),
    )
}

/// The App routes, for a request bearing a token that verifies as the dispatcher App's JSON web
/// token; `None` otherwise (the request goes on to the other routes).
pub fn route(state: &mut State, req: &Recorded, segments: &[&str]) -> Option<Reply> {
    let app = state.scenario.dispatcher_app.as_ref()?;
    let token = bearer(req);
    // A JSON web token has three parts; an installation token has none.
    if token.split('.').count() != 3 {
        return None;
    }
    let s = &state.scenario;
    let ours = |owner: &str, repo: &str| {
        owner.eq_ignore_ascii_case(&s.owner) && repo.eq_ignore_ascii_case(&s.repo)
    };
    let wanted = match (req.method.as_str(), segments) {
        ("GET", ["app"]) => true,
        ("GET", ["repos", owner, repo, "installation"]) => ours(owner, repo),
        ("POST", ["app", "installations", id, "access_tokens"]) => {
            id.parse::<u64>().ok() == Some(app.installation_id)
        }
        _ => false,
    };
    if !wanted {
        return None;
    }
    if let Err(message) = verify(app, token, state.now) {
        return Some(unauthorized(message));
    }
    Some(match segments {
        ["app"] => Reply::json(
            200,
            &json!({"id": app.id, "slug": app.slug, "name": app.slug, "owner": {"login": s.owner}}),
        ),
        ["repos", ..] => Reply::json(
            200,
            &json!({"id": app.installation_id, "app_id": app.id, "app_slug": app.slug,
                    "target_type": "Organization", "account": {"login": s.owner}}),
        ),
        _ => {
            let body = req.json();
            let count = app.minted.len() + 1;
            let token = format!("ghs_standinDispatcher{count:016}");
            let permissions = body.get("permissions").cloned().unwrap_or(json!({}));
            let repositories = body.get("repositories").cloned().unwrap_or(json!([]));
            let expires = github::date::format_rfc3339(state.now + 3600);
            if let Some(app) = state.scenario.dispatcher_app.as_mut() {
                app.minted.push(token.clone());
                app.token_requests.push(body);
            }
            state.scenario.installation_tokens.push(token.clone());
            Reply::json(
                201,
                &json!({
                    "token": token,
                    "expires_at": expires,
                    "permissions": permissions,
                    "repository_selection": "selected",
                    "repositories": repositories,
                }),
            )
        }
    })
}
