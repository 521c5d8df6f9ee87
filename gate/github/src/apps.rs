//! Who the token is, and a GitHub App's installation tokens: the dispatcher's identity (the
//! actor its runs carry) and the token `gate dispatch` mints for itself from the dispatcher App's
//! key. The App's own calls are made with its JSON web token as the bearer token (a [`Client`]
//! built with it), every other call with the installation token minted here.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::Repository;
use crate::client::{Call, Client, Error, Method, Replay};

/// `GET /user` ("Get the authenticated user",
/// <https://docs.github.com/en/rest/users/users#get-the-authenticated-user>; OpenAPI
/// `paths["/user"].get`): the fields read. An installation token is refused (`403`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct AuthenticatedUser {
    pub login: String,
}

/// `GET /app` ("Get the authenticated app",
/// <https://docs.github.com/en/rest/apps/apps#get-the-authenticated-app>; OpenAPI
/// `paths["/app"].get`, schema `integration`), with the App's JSON web token.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct AuthenticatedApp {
    pub id: u64,
    pub slug: String,
}

/// `GET /repos/{owner}/{repo}/installation` ("Get a repository installation for the authenticated
/// app", <https://docs.github.com/en/rest/apps/apps#get-a-repository-installation-for-the-authenticated-app>;
/// OpenAPI `paths["/repos/{owner}/{repo}/installation"].get`, schema `installation`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct RepositoryInstallation {
    pub id: u64,
    #[serde(default)]
    pub app_id: Option<u64>,
}

/// The body of `POST /app/installations/{installation_id}/access_tokens` ("Create an installation
/// access token for an app", <https://docs.github.com/en/rest/apps/apps#create-an-installation-access-token-for-an-app>;
/// OpenAPI `paths["/app/installations/{installation_id}/access_tokens"].post`): the repositories
/// (by name) and the permissions (`read` or `write` each) the token is limited to.
#[derive(Debug, Clone, Serialize)]
pub struct AccessTokenRequest<'a> {
    pub repositories: Vec<&'a str>,
    pub permissions: &'a BTreeMap<&'static str, &'static str>,
}

/// Its `201` body (schema `installation-token`): the fields read. The token is never printed.
#[derive(Clone, Deserialize)]
pub struct InstallationToken {
    pub token: String,
    pub expires_at: String,
    #[serde(default)]
    pub permissions: BTreeMap<String, String>,
}

impl std::fmt::Debug for InstallationToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InstallationToken")
            .field("token", &"<redacted>")
            .field("expires_at", &self.expires_at)
            .field("permissions", &self.permissions)
            .finish()
    }
}

impl Client {
    pub fn get_authenticated_user(&self) -> Result<AuthenticatedUser, Error> {
        self.json(&Call::get("/user".to_owned()), &[200])
    }

    /// With the App's JSON web token.
    pub fn get_authenticated_app(&self) -> Result<AuthenticatedApp, Error> {
        self.json(&Call::get("/app".to_owned()), &[200])
    }

    /// With the App's JSON web token.
    pub fn get_repository_installation(
        &self,
        repo: &Repository,
    ) -> Result<RepositoryInstallation, Error> {
        self.json(&Call::get(repo.path("/installation")), &[200])
    }

    /// With the App's JSON web token. Sent as [`Replay::Once`]: a token minted twice would
    /// leave one unrevoked.
    pub fn create_installation_token(
        &self,
        installation_id: u64,
        body: &AccessTokenRequest<'_>,
    ) -> Result<InstallationToken, Error> {
        let call = Call::with_json(
            Method::Post,
            format!("/app/installations/{installation_id}/access_tokens"),
            body,
            Replay::Once,
        )?;
        self.json(&call, &[201])
    }
}
