//! The GitHub App manifest flow
//! (<https://docs.github.com/en/apps/sharing-github-apps/registering-a-github-app-from-a-manifest>):
//! the web form GitHub shows (`POST /settings/apps/new` for a personal account,
//! `POST /organizations/{org}/settings/apps/new` for an organization, with the form field
//! `manifest` and the query's `state`), which registers the App when the person confirms and
//! redirects to the manifest's `redirect_url` with a temporary `code` and the `state`; and the
//! exchange of that code, `POST /app-manifests/{code}/conversions`, without authentication
//! ("Create a GitHub App from a manifest",
//! <https://docs.github.com/en/rest/apps/apps#create-a-github-app-from-a-manifest>): `201` with
//! the App, its `client_secret`, `webhook_secret` and `pem`; a code works once, for an hour.

use serde_json::{Value, json};

use crate::State;
use crate::http::{Recorded, Reply};

/// A key in PEM form, as the conversion returns it (a test value; nothing verifies with it).
pub const TEST_PEM: &str = "-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu\nKUpRKfFLfRYC9AIKjbJTWit+CqvjWYzvQwECAwEAAQJAIJLixBy2qpFoS4DSmoEm\no3qGy0t6z09AIJtH+5OeRV1be+N4cDYJKffGzDa88vQENZiRm0GRq6a+HPGQMd2k\nTQIhAKMSvzIBnni7ot/OSie2TmJLY4SwTQAevXysE2RbFDYdAiEBCUEaRQnMnbp7\n9mxDXDf6AU0cN/RPBjb9qSHDcWZHGzUCIG2Es59z8ugGrDY+pxLQnwfotadxd+Uy\nv/Ow5T0q5gIJAiEAyS4RaI9YG8EWx/2w0T67ZUVAw8eOMB6BIUg0Xcu+3okCIBOs\n/5OiPgoTdSy7bcF9IGpSE8ZgGKzgYQVe+Knfvdb1\n-----END RSA PRIVATE KEY-----\n";

/// An App registered through the form, waiting for its code to be exchanged.
#[derive(Debug, Clone)]
pub struct Pending {
    pub code: String,
    pub owner: String,
    pub owner_type: &'static str,
    pub manifest: Value,
    pub exchanged: bool,
}

fn error(status: u16, message: &str) -> Reply {
    Reply::json(status, &json!({ "message": message }))
}

/// The form GitHub serves on github.com, as the stand-in serves it on its own address.
pub fn web_route(state: &mut State, req: &Recorded) -> Option<Reply> {
    if req.method != "POST" {
        return None;
    }
    let segments: Vec<&str> = req.path.trim_start_matches('/').split('/').collect();
    let (owner, owner_type) = match segments.as_slice() {
        ["settings", "apps", "new"] => (state.scenario.owner.clone(), "User"),
        ["organizations", org, "settings", "apps", "new"] => ((*org).to_owned(), "Organization"),
        _ => return None,
    };
    let body = String::from_utf8_lossy(&req.body);
    let manifest = body
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(k, _)| *k == "manifest")
        .map(|(_, v)| crate::http::decode_form(v));
    let Some(manifest) = manifest else {
        return Some(error(422, "manifest is missing"));
    };
    let Ok(manifest) = serde_json::from_str::<Value>(&manifest) else {
        return Some(error(422, "manifest is not JSON"));
    };
    // `url` is the one required field; without `redirect_url` GitHub has nowhere to send the code.
    let Some(redirect) = manifest["redirect_url"].as_str().map(str::to_owned) else {
        return Some(error(422, "redirect_url is missing"));
    };
    if manifest["url"].as_str().is_none() {
        return Some(error(422, "url is missing"));
    }
    let code = format!("{:040x}", state.next_id() * 7_919);
    state.manifests.push(Pending {
        code: code.clone(),
        owner,
        owner_type,
        manifest,
        exchanged: false,
    });
    let mut location = format!("{redirect}?code={code}");
    if let Some((_, s)) = req.query.iter().find(|(k, _)| k == "state") {
        location.push_str("&state=");
        location.push_str(&crate::http::encode_form(s));
    }
    Some(Reply {
        status: 302,
        headers: vec![("location".into(), location)],
        body: Vec::new(),
    })
}

/// `POST /app-manifests/{code}/conversions`.
pub fn conversion(state: &mut State, code: &str) -> Reply {
    let id = state.next_id();
    let Some(pending) = state
        .manifests
        .iter_mut()
        .find(|p| p.code == code && !p.exchanged)
    else {
        return error(404, "Not Found");
    };
    pending.exchanged = true;
    let m = &pending.manifest;
    let name = m["name"].as_str().unwrap_or("app").to_owned();
    let slug: String = name
        .to_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    Reply::json(
        201,
        &json!({
            "id": id,
            "slug": slug,
            "node_id": format!("A_{id}"),
            "owner": { "login": pending.owner, "type": pending.owner_type },
            "name": name,
            "description": m["description"],
            "external_url": m["url"],
            "html_url": format!("https://github.com/apps/{slug}"),
            "created_at": "2026-01-01T00:00:00Z",
            "updated_at": "2026-01-01T00:00:00Z",
            "permissions": m.get("default_permissions").cloned().unwrap_or(json!({})),
            "events": m.get("default_events").cloned().unwrap_or(json!([])),
            "client_id": format!("Iv1.{id:016x}"),
            "client_secret": format!("client-secret-{id}"),
            "webhook_secret": format!("webhook-secret-{id}"),
            "pem": TEST_PEM,
        }),
    )
}
