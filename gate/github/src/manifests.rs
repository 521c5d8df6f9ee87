//! The last step of the GitHub App manifest flow: "Create a GitHub App from a manifest",
//! `POST /app-manifests/{code}/conversions`
//! (<https://docs.github.com/en/rest/apps/apps#create-a-github-app-from-a-manifest>), which takes
//! no authentication and answers `201` with the new App, its secrets and its private key. A code
//! works once and for an hour
//! (<https://docs.github.com/en/apps/sharing-github-apps/registering-a-github-app-from-a-manifest>).

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::client::{Call, Client, Error, Method, Replay};
use crate::encode_component;

/// The App's owner (schema `simple-user` / `enterprise`), the fields read.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Owner {
    pub login: String,
    #[serde(rename = "type", default)]
    pub kind: String,
}

/// The new App, the fields read. `pem` is its private key; `client_secret` and `webhook_secret`
/// are not read at all (nothing here uses them, so nothing can print them).
#[derive(Clone, Deserialize)]
pub struct CreatedApp {
    pub id: u64,
    pub slug: String,
    pub name: String,
    pub owner: Owner,
    pub client_id: String,
    #[serde(default)]
    pub html_url: String,
    #[serde(default)]
    pub permissions: BTreeMap<String, String>,
    #[serde(default)]
    pub events: Vec<String>,
    pub pem: String,
}

impl std::fmt::Debug for CreatedApp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CreatedApp")
            .field("id", &self.id)
            .field("slug", &self.slug)
            .field("owner", &self.owner)
            .field("permissions", &self.permissions)
            .field("pem", &"<redacted>")
            .finish_non_exhaustive()
    }
}

/// Exchange the manifest flow's temporary `code` for the App. Sent once: the code is spent by
/// the first request that reaches GitHub.
pub fn convert(client: &Client, code: &str) -> Result<CreatedApp, Error> {
    let call = Call::with_json(
        Method::Post,
        format!("/app-manifests/{}/conversions", encode_component(code)),
        &serde_json::json!({}),
        Replay::Once,
    )?;
    client.json(&call, &[201])
}
