//! Pull requests (<https://docs.github.com/en/rest/pulls/pulls>).

use serde::{Deserialize, Serialize};

use crate::Repository;
use crate::client::{Call, Client, Error, Method, Replay};

/// A pull request (schema `pull-request-simple` in lists, `pull-request` when created); the
/// fields used here.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PullRequest {
    pub number: u64,
    pub html_url: String,
    pub state: String,
    #[serde(default)]
    pub draft: Option<bool>,
    pub head: Branch,
    pub base: Branch,
    /// Whether it was merged (`pull-request` only; absent from lists).
    #[serde(default)]
    pub merged: Option<bool>,
    /// Who opened it: `login` and `type` (`Bot` for an App, whose login is `<slug>[bot]`).
    #[serde(default)]
    pub user: Option<PullUser>,
    #[serde(default)]
    pub body: Option<String>,
}

/// `user` of a pull request (schema `simple-user`): the fields used here.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PullUser {
    pub login: String,
    #[serde(rename = "type")]
    pub kind: String,
}

/// The body of `PATCH /repos/{owner}/{repo}/pulls/{pull_number}`: only the fields given change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PullUpdate<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<&'a str>,
}

/// `head` / `base`: the branch name (`ref`), its commit, and its repository (`null` when a
/// fork was deleted).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Branch {
    #[serde(rename = "ref")]
    pub name: String,
    pub sha: String,
    #[serde(default)]
    pub repo: Option<BranchRepository>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct BranchRepository {
    pub full_name: String,
}

/// The body of `POST /repos/{owner}/{repo}/pulls`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NewPullRequest {
    pub title: String,
    pub body: String,
    pub head: String,
    pub base: String,
    pub draft: bool,
}

/// The body of `POST /repos/{owner}/{repo}/pulls/{pull_number}/requested_reviewers`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReviewRequest<'a> {
    pub reviewers: &'a [String],
    pub team_reviewers: &'a [String],
}

impl Client {
    /// `GET /repos/{owner}/{repo}/pulls?head={owner}:{branch}&state=open` ("List pull
    /// requests", <https://docs.github.com/en/rest/pulls/pulls#list-pull-requests>; OpenAPI
    /// `paths["/repos/{owner}/{repo}/pulls"].get`): the open pull requests from `branch` of
    /// this repository, every page ([`crate::paginate`]).
    pub fn list_open_pulls_from(
        &self,
        repo: &Repository,
        branch: &str,
    ) -> Result<Vec<PullRequest>, Error> {
        self.pulls_from(repo, branch, "open")
    }

    /// The same list with `state=all`: open and closed pull requests from `branch` of this
    /// repository, a closed one listed even after its branch was deleted (its `head.sha` stays).
    pub fn list_all_pulls_from(
        &self,
        repo: &Repository,
        branch: &str,
    ) -> Result<Vec<PullRequest>, Error> {
        self.pulls_from(repo, branch, "all")
    }

    fn pulls_from(
        &self,
        repo: &Repository,
        branch: &str,
        state: &'static str,
    ) -> Result<Vec<PullRequest>, Error> {
        let call = Call::get(repo.path("/pulls"))
            .query("head", format!("{}:{branch}", repo.owner()))
            .query("state", state);
        self.get_all(&call)
    }

    /// `GET /repos/{owner}/{repo}/pulls/{pull_number}` ("Get a pull request",
    /// <https://docs.github.com/en/rest/pulls/pulls#get-a-pull-request>; OpenAPI
    /// `paths["/repos/{owner}/{repo}/pulls/{pull_number}"].get`): `200`, or `None` for `404`.
    pub fn get_pull(&self, repo: &Repository, number: u64) -> Result<Option<PullRequest>, Error> {
        let call = Call::get(repo.path(&format!("/pulls/{number}")));
        let response = self.send(&call)?;
        if response.status == 404 {
            return Ok(None);
        }
        self.expect(&call, &response, &[200])?;
        self.decode(&call, &response).map(Some)
    }

    /// `POST /repos/{owner}/{repo}/pulls` ("Create a pull request",
    /// <https://docs.github.com/en/rest/pulls/pulls#create-a-pull-request>; OpenAPI
    /// `paths["/repos/{owner}/{repo}/pulls"].post`): `201`. Sent as [`Replay::Once`].
    pub fn create_pull(
        &self,
        repo: &Repository,
        pull: &NewPullRequest,
    ) -> Result<PullRequest, Error> {
        let call = Call::with_json(Method::Post, repo.path("/pulls"), pull, Replay::Once)?;
        self.json(&call, &[201])
    }

    /// `PATCH /repos/{owner}/{repo}/pulls/{pull_number}` ("Update a pull request",
    /// <https://docs.github.com/en/rest/pulls/pulls#update-a-pull-request>; OpenAPI
    /// `paths["/repos/{owner}/{repo}/pulls/{pull_number}"].patch`): `200` with the pull request.
    /// Writing the same title and body twice leaves the same pull request: [`Replay::Safe`].
    pub fn update_pull(
        &self,
        repo: &Repository,
        number: u64,
        update: &PullUpdate<'_>,
    ) -> Result<PullRequest, Error> {
        let call = Call::with_json(
            Method::Patch,
            repo.path(&format!("/pulls/{number}")),
            update,
            Replay::Safe,
        )?;
        self.json(&call, &[200])
    }

    /// `POST /repos/{owner}/{repo}/pulls/{pull_number}/requested_reviewers` ("Request reviewers
    /// for a pull request",
    /// <https://docs.github.com/en/rest/pulls/review-requests#request-reviewers-for-a-pull-request>;
    /// OpenAPI `paths["/repos/{owner}/{repo}/pulls/{pull_number}/requested_reviewers"].post`):
    /// body `reviewers` (user logins) and `team_reviewers` (team slugs); `201` with the pull
    /// request, `422` when a reviewer cannot be requested (not a collaborator, the author).
    /// Requesting a reviewer already requested changes nothing: [`Replay::Safe`].
    pub fn request_reviewers(
        &self,
        repo: &Repository,
        number: u64,
        request: &ReviewRequest<'_>,
    ) -> Result<PullRequest, Error> {
        let call = Call::with_json(
            Method::Post,
            repo.path(&format!("/pulls/{number}/requested_reviewers")),
            request,
            Replay::Safe,
        )?;
        self.json(&call, &[201])
    }
}
