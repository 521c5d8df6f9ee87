//! GitHub Actions: workflows, the workflow dispatch, runs, jobs and job logs.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::client::{Call, Client, Error, Method, Replay};
use crate::{Repository, encode_component};

/// `GET /repos/{owner}/{repo}/actions/workflows/{workflow_id}` ("Get a workflow",
/// <https://docs.github.com/en/rest/actions/workflows#get-a-workflow>; OpenAPI
/// `paths["/repos/{owner}/{repo}/actions/workflows/{workflow_id}"].get`, schema `workflow`).
/// `workflow_id` may be the file name.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Workflow {
    pub id: u64,
    pub name: String,
    /// `.github/workflows/<file>`.
    pub path: String,
    /// `active`, `deleted`, `disabled_fork`, `disabled_inactivity` or `disabled_manually`.
    pub state: String,
}

/// The body of `POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches` ("Create
/// a workflow dispatch event", <https://docs.github.com/en/rest/actions/workflows#create-a-workflow-dispatch-event>;
/// OpenAPI `paths["/repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches"].post`):
/// `ref` (required), `inputs` (at most 25 properties; 65,535 characters of payload), and
/// `return_run_details` (February 2026: `true` asks for a `200` with the run instead of `204`).
#[derive(Debug, Clone, Serialize)]
pub struct DispatchBody<'a> {
    #[serde(rename = "ref")]
    pub git_ref: &'a str,
    pub inputs: &'a BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub return_run_details: Option<bool>,
}

/// The answer to [`Client::poll_run`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunPoll {
    /// The run as it is now, and its `ETag` for the next poll.
    Changed {
        run: Box<WorkflowRun>,
        etag: Option<String>,
    },
    /// `304`: unchanged since the copy with the `ETag` given.
    NotModified,
}

/// The `200` body: schema `workflow-dispatch-response` (`workflow_run_id`, `run_url`,
/// `html_url`, all required).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct DispatchRunDetails {
    pub workflow_run_id: u64,
    pub run_url: String,
    pub html_url: String,
}

/// What the dispatch endpoint answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DispatchOutcome {
    /// `200`: the run was created and is named.
    RunDetails(DispatchRunDetails),
    /// `204`: the run was created; which one is not said.
    Accepted,
    /// `400` or `422` naming `return_run_details`: a server without the parameter. Nothing
    /// was dispatched.
    ParameterRejected { status: u16, message: String },
}

/// A dispatch's answer and the server's `Date` of it (Unix seconds), which bounds the run's
/// creation time from above (for `204`) or from below (for a rejection, before a retry).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dispatched {
    pub outcome: DispatchOutcome,
    pub date: Option<i64>,
}

/// One workflow run: schema `workflow-run` (<https://docs.github.com/en/rest/actions/workflow-runs#get-a-workflow-run>).
/// `name` is the workflow's name; `display_title` is the run name (`run-name:`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct WorkflowRun {
    pub id: u64,
    #[serde(default)]
    pub name: Option<String>,
    pub display_title: String,
    /// `queued`, `in_progress`, `completed`, `waiting`, `requested`, `pending`.
    #[serde(default)]
    pub status: Option<String>,
    /// Set once completed: `success`, `failure`, `cancelled`, `skipped`, `timed_out`,
    /// `action_required`, `neutral`, `stale`, `startup_failure`.
    #[serde(default)]
    pub conclusion: Option<String>,
    pub event: String,
    /// The workflow file, `.github/workflows/<file>` (possibly followed by `@<ref>`).
    pub path: String,
    #[serde(default)]
    pub head_branch: Option<String>,
    pub head_sha: String,
    pub created_at: String,
    pub html_url: String,
    pub url: String,
    /// Which attempt of the run this is (1 for the first).
    #[serde(default)]
    pub run_attempt: Option<u64>,
    /// The user (or App bot) whose dispatch created the run: schema `simple-user`. A re-run
    /// keeps it (`triggering_actor` is who re-ran).
    #[serde(default)]
    pub actor: Option<RunActor>,
}

/// `workflow-run.actor` (schema `simple-user`): the fields read.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct RunActor {
    pub login: String,
}

/// `GET /repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs` ("List workflow runs for a
/// workflow", <https://docs.github.com/en/rest/actions/workflow-runs#list-workflow-runs-for-a-workflow>;
/// OpenAPI `paths["/repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs"].get`):
/// `{total_count, workflow_runs}`, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct WorkflowRuns {
    pub total_count: u64,
    pub workflow_runs: Vec<WorkflowRun>,
}

/// One job of a run: schema `job` (<https://docs.github.com/en/rest/actions/workflow-jobs#list-jobs-for-a-workflow-run>).
/// `name` is the job's `name:`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Job {
    pub id: u64,
    pub run_id: u64,
    pub name: String,
    pub status: String,
    #[serde(default)]
    pub conclusion: Option<String>,
    #[serde(default)]
    pub html_url: Option<String>,
    #[serde(default)]
    pub steps: Vec<JobStep>,
    /// RFC 3339 times GitHub records; `null` for a job that did not start or finish.
    #[serde(default)]
    pub started_at: Option<String>,
    #[serde(default)]
    pub completed_at: Option<String>,
}

/// An artifact of a run (schema `artifact`, "List workflow run artifacts",
/// <https://docs.github.com/en/rest/actions/artifacts#list-workflow-run-artifacts>); the fields
/// used here.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Artifact {
    pub id: u64,
    pub name: String,
    pub size_in_bytes: u64,
    pub expired: bool,
    #[serde(default)]
    pub created_at: Option<String>,
    #[serde(default)]
    pub workflow_run: Option<ArtifactRun>,
}

/// `artifact.workflow_run`: the run that uploaded it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ArtifactRun {
    pub id: u64,
}

/// `{total_count, artifacts}`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Artifacts {
    pub total_count: u64,
    pub artifacts: Vec<Artifact>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct JobStep {
    pub name: String,
    pub status: String,
    #[serde(default)]
    pub conclusion: Option<String>,
    pub number: u64,
}

/// `GET /repos/{owner}/{repo}/actions/runs/{run_id}/jobs` ("List jobs for a workflow run";
/// OpenAPI `paths["/repos/{owner}/{repo}/actions/runs/{run_id}/jobs"].get`): `{total_count, jobs}`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Jobs {
    pub total_count: u64,
    pub jobs: Vec<Job>,
}

crate::paginate::paged!(Jobs => jobs, WorkflowRuns => workflow_runs, Artifacts => artifacts);

fn names_parameter(message: &str) -> bool {
    message.contains("return_run_details")
}

impl Client {
    pub fn get_workflow(
        &self,
        repo: &Repository,
        workflow: &str,
    ) -> Result<(Workflow, Option<i64>), Error> {
        let call = Call::get(repo.path(&format!(
            "/actions/workflows/{}",
            encode_component(workflow)
        )));
        let response = self.send(&call)?;
        self.expect(&call, &response, &[200])?;
        Ok((self.decode(&call, &response)?, response.date()))
    }

    /// Dispatch `workflow` on `git_ref`. Sent as [`Replay::Once`]: a dispatch that may have
    /// reached GitHub is never repeated by the client.
    pub fn dispatch_workflow(
        &self,
        repo: &Repository,
        workflow: &str,
        git_ref: &str,
        inputs: &BTreeMap<String, String>,
        return_run_details: bool,
    ) -> Result<Dispatched, Error> {
        let body = DispatchBody {
            git_ref,
            inputs,
            return_run_details: return_run_details.then_some(true),
        };
        let path = repo.path(&format!(
            "/actions/workflows/{}/dispatches",
            encode_component(workflow)
        ));
        let call = Call::with_json(Method::Post, path, &body, Replay::Once)?;
        let response = self.send(&call)?;
        let date = response.date();
        let outcome = match response.status {
            200 if return_run_details => {
                DispatchOutcome::RunDetails(self.decode(&call, &response)?)
            }
            204 => DispatchOutcome::Accepted,
            400 | 422 if return_run_details => {
                let message = response
                    .github_message()
                    .unwrap_or_else(|| String::from_utf8_lossy(&response.body).into_owned());
                if names_parameter(&message) {
                    DispatchOutcome::ParameterRejected {
                        status: response.status,
                        message,
                    }
                } else {
                    return Err(self.unexpected(&call, &response));
                }
            }
            _ => return Err(self.unexpected(&call, &response)),
        };
        Ok(Dispatched { outcome, date })
    }

    /// `GET /repos/{owner}/{repo}/actions/runs/{run_id}` ("Get a workflow run"; OpenAPI
    /// `paths["/repos/{owner}/{repo}/actions/runs/{run_id}"].get`).
    pub fn get_run(&self, repo: &Repository, run_id: u64) -> Result<WorkflowRun, Error> {
        self.json(
            &Call::get(repo.path(&format!("/actions/runs/{run_id}"))),
            &[200],
        )
    }

    /// "Get a workflow run" as a conditional request: with the `ETag` of the copy last read,
    /// GitHub answers `304 Not Modified` while the run is unchanged, which does not count
    /// against the primary rate limit ("Use conditional requests if appropriate",
    /// <https://docs.github.com/en/rest/using-the-rest-api/best-practices-for-using-the-rest-api#use-conditional-requests-if-appropriate>).
    pub fn poll_run(
        &self,
        repo: &Repository,
        run_id: u64,
        etag: Option<&str>,
    ) -> Result<RunPoll, Error> {
        let call = Call::get(repo.path(&format!("/actions/runs/{run_id}"))).if_none_match(etag);
        let response = self.send(&call)?;
        if response.status == 304 && etag.is_some() {
            return Ok(RunPoll::NotModified);
        }
        self.expect(&call, &response, &[200])?;
        let run = self.decode(&call, &response)?;
        Ok(RunPoll::Changed {
            run,
            etag: response.etag().map(str::to_owned),
        })
    }

    /// The `workflow_dispatch` runs of `workflow`, newest first, every page
    /// ([`crate::paginate`]), optionally on one branch.
    pub fn list_dispatch_runs(
        &self,
        repo: &Repository,
        workflow: &str,
        branch: Option<&str>,
    ) -> Result<WorkflowRuns, Error> {
        let mut call = Call::get(repo.path(&format!(
            "/actions/workflows/{}/runs",
            encode_component(workflow)
        )))
        .query("event", "workflow_dispatch");
        if let Some(branch) = branch {
            call = call.query("branch", branch);
        }
        self.get_all(&call)
    }

    /// The jobs of the run's latest attempt (`filter=latest`), every page.
    pub fn list_run_jobs(&self, repo: &Repository, run_id: u64) -> Result<Jobs, Error> {
        let call =
            Call::get(repo.path(&format!("/actions/runs/{run_id}/jobs"))).query("filter", "latest");
        self.get_all(&call)
    }

    /// `GET /repos/{owner}/{repo}/actions/jobs/{job_id}/logs` ("Download job logs for a workflow
    /// run", <https://docs.github.com/en/rest/actions/workflow-jobs#download-job-logs-for-a-workflow-run>;
    /// OpenAPI `paths["/repos/{owner}/{repo}/actions/jobs/{job_id}/logs"].get`): `302` with a
    /// `Location` that expires after a minute. The log is then read without the token; only
    /// its last `keep` bytes are kept.
    /// `GET /repos/{owner}/{repo}/actions/runs/{run_id}/artifacts?name=...` ("List workflow run
    /// artifacts", <https://docs.github.com/en/rest/actions/artifacts#list-workflow-run-artifacts>).
    pub fn list_run_artifacts(
        &self,
        repo: &Repository,
        run_id: u64,
        name: Option<&str>,
    ) -> Result<Artifacts, Error> {
        let mut call = Call::get(repo.path(&format!("/actions/runs/{run_id}/artifacts")));
        if let Some(name) = name {
            call = call.query("name", name);
        }
        self.get_all(&call)
    }

    /// `GET /repos/{owner}/{repo}/actions/artifacts/{artifact_id}/{archive_format}` with
    /// `zip` ("Download an artifact",
    /// <https://docs.github.com/en/rest/actions/artifacts#download-an-artifact>): a `302` to the
    /// content, read here up to `max` bytes (more is an error). An artifact uploaded with
    /// `archive: false` is the file itself.
    pub fn download_artifact(
        &self,
        repo: &Repository,
        artifact_id: u64,
        max: usize,
    ) -> Result<Vec<u8>, Error> {
        let call = Call::get(repo.path(&format!("/actions/artifacts/{artifact_id}/zip")));
        let response = self.send(&call)?;
        self.expect(&call, &response, &[302])?;
        let location = response.header("location").ok_or_else(|| Error::Decode {
            method: "GET",
            path: call.target(),
            message: "302 without a Location".to_owned(),
        })?;
        let (bytes, dropped) =
            self.fetch_redirect_tail(location, max, u64::try_from(max).unwrap_or(u64::MAX) + 1)?;
        if dropped {
            return Err(Error::Decode {
                method: "GET",
                path: call.target(),
                message: format!("the artifact is larger than {max} bytes"),
            });
        }
        Ok(bytes)
    }

    pub fn job_log_tail(
        &self,
        repo: &Repository,
        job_id: u64,
        keep: usize,
    ) -> Result<(Vec<u8>, bool), Error> {
        let call = Call::get(repo.path(&format!("/actions/jobs/{job_id}/logs")));
        let response = self.send(&call)?;
        self.expect(&call, &response, &[302])?;
        let location = response.header("location").ok_or_else(|| Error::Decode {
            method: "GET",
            path: call.target(),
            message: "302 without a Location".to_owned(),
        })?;
        self.fetch_redirect_tail(location, keep, 64 << 20)
    }
}
