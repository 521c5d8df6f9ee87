//! Repository reads the workflow's jobs make before any publication: whether the base commit is
//! on the default branch, the diff a dispatcher stored on a branch, and the installation token's
//! revocation once the publish job is done with it.

use serde::Deserialize;

use crate::client::{Call, Client, Error, Method, Replay};
use crate::{Repository, encode_component, encode_path};

/// The media type for a file's raw bytes ("Get repository content", custom media types).
pub const ACCEPT_RAW: &str = "application/vnd.github.raw+json";

/// `{status}` of "Compare two commits" (schema `commit-comparison`): one of `diverged`, `ahead`,
/// `behind`, `identical`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Comparison {
    pub status: String,
}

impl Client {
    /// `GET /repos/{owner}/{repo}/compare/{base}...{head}` ("Compare two commits",
    /// <https://docs.github.com/en/rest/commits/commits#compare-two-commits>; OpenAPI
    /// `paths["/repos/{owner}/{repo}/compare/{basehead}"].get`). `per_page=1` keeps the commit
    /// list short: only `status` is read.
    pub fn compare(&self, repo: &Repository, base: &str, head: &str) -> Result<Comparison, Error> {
        let basehead = format!("{}...{}", encode_component(base), encode_component(head));
        let call = Call::get(repo.path(&format!("/compare/{basehead}"))).query("per_page", "1");
        self.json(&call, &[200])
    }

    /// `GET /repos/{owner}/{repo}/contents/{path}?ref=` with the raw media type ("Get
    /// repository content", <https://docs.github.com/en/rest/repos/contents#get-repository-content>;
    /// OpenAPI `paths["/repos/{owner}/{repo}/contents/{path}"].get`): the file's bytes, `200`.
    /// GitHub serves files up to 100 MB this way; the client's body limit bounds the read.
    pub fn raw_contents(
        &self,
        repo: &Repository,
        path: &str,
        git_ref: &str,
    ) -> Result<Vec<u8>, Error> {
        let mut call =
            Call::get(repo.path(&format!("/contents/{}", encode_path(path)))).query("ref", git_ref);
        call.accept = ACCEPT_RAW;
        let response = self.send(&call)?;
        self.expect(&call, &response, &[200])?;
        Ok(response.body)
    }

    /// `DELETE /installation/token` ("Revoke an installation access token",
    /// <https://docs.github.com/en/rest/apps/installations#revoke-an-installation-access-token>;
    /// OpenAPI `paths["/installation/token"].delete`): `204`; the token used is the one revoked.
    pub fn revoke_installation_token(&self) -> Result<(), Error> {
        let call = Call {
            method: Method::Delete,
            path: "/installation/token".to_owned(),
            query: Vec::new(),
            body: None,
            accept: crate::client::ACCEPT_JSON,
            replay: Replay::Safe,
            endpoint: crate::Endpoint::Rest,
            if_none_match: None,
        };
        let response = self.send(&call)?;
        self.expect(&call, &response, &[204])
    }
}
