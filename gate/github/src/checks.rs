//! Check runs (<https://docs.github.com/en/rest/checks/runs>).

use serde::Deserialize;

use crate::client::{Call, Client, Error, Method, Replay};
use crate::{Repository, encode_path};

/// A check run (schema `check-run`); the fields used here.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct CheckRun {
    pub id: u64,
    pub name: String,
    pub head_sha: String,
    /// The creator's own reference for the run (`external_id`, nullable).
    #[serde(default)]
    pub external_id: Option<String>,
    pub status: String,
    #[serde(default)]
    pub conclusion: Option<String>,
    #[serde(default)]
    pub html_url: Option<String>,
    #[serde(default)]
    pub app: Option<CheckRunApp>,
    /// `output`: `title`, `summary`, `text` as the creator wrote them.
    #[serde(default)]
    pub output: Option<CheckRunOutput>,
}

/// The App that created the check run (schema `integration`, nullable): its numeric `id` is
/// what identifies it; `slug` names its bot, `<slug>[bot]`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct CheckRunApp {
    #[serde(default)]
    pub id: Option<u64>,
    #[serde(default)]
    pub slug: Option<String>,
}

/// `check-run.output`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
pub struct CheckRunOutput {
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub summary: Option<String>,
    #[serde(default)]
    pub text: Option<String>,
}

/// `{total_count, check_runs}`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct CheckRuns {
    pub total_count: u64,
    pub check_runs: Vec<CheckRun>,
}

crate::paginate::paged!(CheckRuns => check_runs);

impl Client {
    /// `GET /repos/{owner}/{repo}/commits/{ref}/check-runs?check_name=...` ("List check runs
    /// for a Git reference", <https://docs.github.com/en/rest/checks/runs#list-check-runs-for-a-git-reference>;
    /// OpenAPI `paths["/repos/{owner}/{repo}/commits/{ref}/check-runs"].get`). With `app_id`,
    /// only the check runs created by that App are listed (the query parameter `app_id`); the
    /// caller still checks each run's `app.id`, so a server that ignores the filter cannot
    /// pass another App's run off as that App's.
    pub fn list_check_runs(
        &self,
        repo: &Repository,
        sha: &str,
        check_name: &str,
        app_id: Option<u64>,
    ) -> Result<CheckRuns, Error> {
        let mut call = Call::get(repo.path(&format!("/commits/{}/check-runs", encode_path(sha))))
            .query("check_name", check_name);
        if let Some(app_id) = app_id {
            call = call.query("app_id", app_id.to_string());
        }
        self.get_all(&call)
    }

    /// The same list with `filter=all` (every check run of that name, not only the most recent
    /// ones, which is the default `latest`) and the `app_id` filter: the exact look-up of an
    /// App's check runs of one name on one commit. The caller checks each run's `app.id`,
    /// `name`, `head_sha` and `external_id` all the same.
    pub fn list_app_check_runs(
        &self,
        repo: &Repository,
        sha: &str,
        check_name: &str,
        app_id: u64,
    ) -> Result<CheckRuns, Error> {
        let call = Call::get(repo.path(&format!("/commits/{}/check-runs", encode_path(sha))))
            .query("check_name", check_name)
            .query("app_id", app_id.to_string())
            .query("filter", "all");
        self.get_all(&call)
    }

    /// `PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}` ("Update a check run",
    /// <https://docs.github.com/en/rest/checks/runs#update-a-check-run>; OpenAPI
    /// `paths["/repos/{owner}/{repo}/check-runs/{check_run_id}"].patch`): `200`. Only the App
    /// that created a check run can update it. Writing the same body twice leaves the same
    /// run: [`Replay::Safe`].
    pub fn update_check_run(
        &self,
        repo: &Repository,
        id: u64,
        body: &serde_json::Value,
    ) -> Result<CheckRun, Error> {
        let call = Call::with_json(
            Method::Patch,
            repo.path(&format!("/check-runs/{id}")),
            body,
            Replay::Safe,
        )?;
        self.json(&call, &[200])
    }

    /// `POST /repos/{owner}/{repo}/check-runs` ("Create a check run",
    /// <https://docs.github.com/en/rest/checks/runs#create-a-check-run>; OpenAPI
    /// `paths["/repos/{owner}/{repo}/check-runs"].post`) with a body built elsewhere (for the
    /// gate: `report check-run`); `201`. Sent as [`Replay::Once`].
    pub fn create_check_run(
        &self,
        repo: &Repository,
        body: &serde_json::Value,
    ) -> Result<CheckRun, Error> {
        let call = Call::with_json(Method::Post, repo.path("/check-runs"), body, Replay::Once)?;
        self.json(&call, &[201])
    }
}
