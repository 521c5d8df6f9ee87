//! The Git database API: blobs, trees, commits and refs
//! (<https://docs.github.com/en/rest/git>). Objects are content-addressed, so creating one
//! again is harmless ([`Replay::Safe`]); a ref creation is not, and fails if the ref exists.
//!
//! A commit created here carries no `author`, `committer` or `signature`: GitHub then signs it
//! as the authenticated App ("Commit signature verification for bots",
//! <https://docs.github.com/en/authentication/managing-commit-signature-verification/about-commit-signature-verification#signature-verification-for-bots>).

use serde::{Deserialize, Serialize};

use crate::client::{Call, Client, Error, Method, Replay};
use crate::{Repository, encode_path};

/// The `sha` (and API `url`) of a created object.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ObjectId {
    pub sha: String,
}

#[derive(Serialize)]
struct NewBlob<'a> {
    content: &'a str,
    encoding: &'static str,
}

/// One entry of `POST /repos/{owner}/{repo}/git/trees`: `path`, `mode` (`100644`, `100755`,
/// `040000`, `160000`, `120000`), `type` (`blob`, `tree`, `commit`) and `sha` (`null` deletes
/// the path from `base_tree`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TreeEntry {
    pub path: String,
    pub mode: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub sha: Option<String>,
}

#[derive(Serialize)]
struct NewTree<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    base_tree: Option<&'a str>,
    tree: &'a [TreeEntry],
}

#[derive(Serialize)]
struct NewCommit<'a> {
    message: &'a str,
    tree: &'a str,
    parents: &'a [String],
}

/// A commit as `GET /repos/{owner}/{repo}/git/commits/{commit_sha}` and `POST .../git/commits`
/// return it (schema `git-commit`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct GitCommit {
    pub sha: String,
    pub message: String,
    pub tree: ObjectId,
    pub parents: Vec<ObjectId>,
    /// The git author and committer (`name`, `email`, `date`).
    #[serde(default)]
    pub author: Option<GitActor>,
    #[serde(default)]
    pub committer: Option<GitActor>,
    /// GitHub's verification of the commit's signature (`verification`: `verified`, `reason`,
    /// ...), absent on some servers.
    #[serde(default)]
    pub verification: Option<Verification>,
}

/// `git-commit.author` / `.committer`: the identity as written in the commit object.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct GitActor {
    pub name: String,
    pub email: String,
}

/// Schema `verification` (`git-commit.verification`): whether GitHub verified the commit's
/// signature, and why not (`unsigned`, ...).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Verification {
    pub verified: bool,
    pub reason: String,
}

/// A ref (schema `git-ref`): `ref` is the full name, `object.sha` what it points at.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct GitRef {
    #[serde(rename = "ref")]
    pub name: String,
    pub object: RefObject,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct RefObject {
    pub sha: String,
    #[serde(rename = "type")]
    pub kind: String,
}

#[derive(Serialize)]
struct NewRef<'a> {
    #[serde(rename = "ref")]
    name: &'a str,
    sha: &'a str,
}

#[derive(Serialize)]
struct RefUpdate<'a> {
    sha: &'a str,
    force: bool,
}

impl Client {
    /// `POST /repos/{owner}/{repo}/git/blobs` ("Create a blob",
    /// <https://docs.github.com/en/rest/git/blobs#create-a-blob>; OpenAPI
    /// `paths["/repos/{owner}/{repo}/git/blobs"].post`): `content` and `encoding` (`base64`
    /// here, for any bytes); `201` with `sha`.
    pub fn create_blob(&self, repo: &Repository, bytes: &[u8]) -> Result<ObjectId, Error> {
        use base64::Engine;
        let content = base64::engine::general_purpose::STANDARD.encode(bytes);
        let body = NewBlob {
            content: &content,
            encoding: "base64",
        };
        let call = Call::with_json(Method::Post, repo.path("/git/blobs"), &body, Replay::Safe)?;
        self.json(&call, &[201])
    }

    /// `POST /repos/{owner}/{repo}/git/trees` ("Create a tree",
    /// <https://docs.github.com/en/rest/git/trees#create-a-tree>; OpenAPI
    /// `paths["/repos/{owner}/{repo}/git/trees"].post`): `tree` entries on an optional
    /// `base_tree`; `201` with `sha`.
    pub fn create_tree(
        &self,
        repo: &Repository,
        base_tree: Option<&str>,
        entries: &[TreeEntry],
    ) -> Result<ObjectId, Error> {
        let body = NewTree {
            base_tree,
            tree: entries,
        };
        let call = Call::with_json(Method::Post, repo.path("/git/trees"), &body, Replay::Safe)?;
        self.json(&call, &[201])
    }

    /// `POST /repos/{owner}/{repo}/git/commits` ("Create a commit",
    /// <https://docs.github.com/en/rest/git/commits#create-a-commit>; OpenAPI
    /// `paths["/repos/{owner}/{repo}/git/commits"].post`): `message`, `tree`, `parents`; no
    /// author, committer or signature, so that GitHub signs it. `201` with the commit.
    pub fn create_commit(
        &self,
        repo: &Repository,
        message: &str,
        tree: &str,
        parents: &[String],
    ) -> Result<GitCommit, Error> {
        let body = NewCommit {
            message,
            tree,
            parents,
        };
        let call = Call::with_json(Method::Post, repo.path("/git/commits"), &body, Replay::Safe)?;
        self.json(&call, &[201])
    }

    /// `GET /repos/{owner}/{repo}/git/commits/{commit_sha}` ("Get a commit object"; OpenAPI
    /// `paths["/repos/{owner}/{repo}/git/commits/{commit_sha}"].get`).
    pub fn get_commit(&self, repo: &Repository, sha: &str) -> Result<GitCommit, Error> {
        self.json(
            &Call::get(repo.path(&format!("/git/commits/{}", encode_path(sha)))),
            &[200],
        )
    }

    /// `POST /repos/{owner}/{repo}/git/refs` ("Create a reference",
    /// <https://docs.github.com/en/rest/git/refs#create-a-reference>; OpenAPI
    /// `paths["/repos/{owner}/{repo}/git/refs"].post`): `ref` (`refs/heads/...`) and `sha`;
    /// `201`, or `422` when it exists. Sent as [`Replay::Once`].
    pub fn create_ref(&self, repo: &Repository, name: &str, sha: &str) -> Result<GitRef, Error> {
        let call = Call::with_json(
            Method::Post,
            repo.path("/git/refs"),
            &NewRef { name, sha },
            Replay::Once,
        )?;
        self.json(&call, &[201])
    }

    /// `PATCH /repos/{owner}/{repo}/git/refs/{ref}` ("Update a reference"; OpenAPI
    /// `paths["/repos/{owner}/{repo}/git/refs/{ref}"].patch`): `ref` without `refs/`
    /// (`heads/x`), body `sha` and `force`.
    pub fn update_ref(
        &self,
        repo: &Repository,
        short_name: &str,
        sha: &str,
        force: bool,
    ) -> Result<GitRef, Error> {
        let path = repo.path(&format!("/git/refs/{}", encode_path(short_name)));
        let call = Call::with_json(Method::Patch, path, &RefUpdate { sha, force }, Replay::Safe)?;
        self.json(&call, &[200])
    }

    /// `GET /repos/{owner}/{repo}/git/ref/{ref}` ("Get a reference"; OpenAPI
    /// `paths["/repos/{owner}/{repo}/git/ref/{ref}"].get`): `None` on `404`.
    pub fn get_ref(&self, repo: &Repository, short_name: &str) -> Result<Option<GitRef>, Error> {
        let call = Call::get(repo.path(&format!("/git/ref/{}", encode_path(short_name))));
        let response = self.send(&call)?;
        if response.status == 404 {
            return Ok(None);
        }
        self.expect(&call, &response, &[200])?;
        self.decode(&call, &response).map(Some)
    }
}
