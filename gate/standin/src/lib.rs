//! A stand-in for GitHub's REST API: plain HTTP/1.1 on 127.0.0.1, one thread, no framework. It
//! follows the request and response shapes of GitHub's published REST description
//! (<https://github.com/github/rest-api-description>, cited per route below), is scripted per
//! run through a [`Scenario`], and records every request it receives for assertions.
//!
//! It models one repository and one workflow: dispatching the workflow creates a run named after
//! its `task_id` input (the workflow's `run-name: agent-team-apply <task_id>`), which completes
//! after a scripted number of polls with a scripted [`Outcome`]: on a pass the publication
//! exists (the branch `agent-team/<task_id>`, a commit whose message carries the `Diff-Sha256`,
//! `Task-Id` and `Run-Id` trailers, a draft pull request and a successful check run). The Git
//! database keeps real git object ids (SHA-1 of the object as git serialises it), so a tree id
//! computed by git locally can be compared with the stand-in's.
//!
//! The publication endpoints behave as GitHub's do, so that a tree id proven against the
//! stand-in means something: `POST /graphql` (and `/api/graphql`, GitHub Enterprise Server's
//! path; REST paths may also carry Enterprise Server's `/api/v3` prefix) runs
//! `createCommitOnBranch`, applying its `fileChanges` to the branch head's tree (every addition
//! written as `100644`, which is what GitHub does, whatever the file's mode was) as a
//! compare-and-swap on `expectedHeadOid`; `POST git/trees` applies entries with their modes on
//! `base_tree` (`sha: null` deletes); a ref is created only where none exists; a second open pull
//! request for the same head and base is refused; a repository without draft pull requests
//! refuses `draft: true` with GitHub's `422`; an App without the `workflows` permission may not
//! point a ref at a commit whose `.github/workflows` differ from the default branch's. A
//! [`Tamper`] makes the stand-in store or report another tree than it was asked for.
//!
//! Faults ([`Fault`]) answer matching requests with canned responses first: statuses,
//! `Retry-After`, rate-limit headers, dropped connections, optionally after letting some
//! requests through or after the request took effect; [`RefMove`]s move a branch when a request
//! arrives (someone else pushing meanwhile). [`RateLimits`] impose GitHub's secondary and primary
//! rate limits ([`limits`]); `GET .../actions/runs/{id}` carries an `ETag` and answers a matching
//! `If-None-Match` with `304 Not Modified`. Each connection is served on its own thread (requests
//! are handled one at a time under the state's lock), so concurrent clients are concurrent. The
//! server's clock starts at [`Scenario::start_unix`] and advances one second per request; it is
//! what `Date` headers and `created_at` say.
#![forbid(unsafe_code)]

pub mod dispatcher_app;
pub mod git;
mod http;
pub mod limits;
mod load;
pub mod manifests;
pub mod page;
mod releases;
mod routes;
pub mod settings;

use std::collections::{BTreeMap, VecDeque};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

pub use http::Recorded;
pub use limits::{LimitCounts, RateLimits};
pub use load::{export_commit, git_command, load_commit};

/// What the dispatch endpoint does with `return_run_details: true`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DispatchMode {
    /// `200` with `workflow_run_id`, `run_url`, `html_url` (the February 2026 API).
    RunDetails,
    /// `204`, ignoring the parameter (a server that predates it).
    NoContent,
    /// The given status (`400` or `422`) naming `return_run_details`, dispatching nothing; a
    /// request without the parameter then gets `204`.
    RejectParameter(u16),
}

/// How a dispatched run ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Every job succeeds and the publication exists.
    Passed,
    /// Every job succeeds but no pull request was opened (an inconsistent result).
    PassedWithoutPullRequest,
    /// `job` fails at `step`; later jobs are skipped, except decide, which runs unless the run
    /// was cancelled and fails at its decision.
    Failed { job: String, step: String },
    /// The run is cancelled during build-test.
    Cancelled,
    /// The run stays in progress until [`StandIn::complete_run`] is called.
    Pending,
}

/// The job of the caller that calls the reusable workflow: GitHub names each called job
/// `<caller job> / <job>` ("Using reusable workflows", required status checks).
pub const CALLER_JOB: &str = "apply";
/// The jobs of the reusable workflow, in order.
pub const JOBS: [&str; 4] = ["guard", "build-test", "decide", "publish"];
/// The name of the check run the publication posts.
pub const CHECK_NAME: &str = "agent-team-apply / gate";
/// The step of decide that decides.
pub const DECIDE_STEP: &str = "Decide from the upstream job results";

/// A canned response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Canned {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Canned {
    /// A status with GitHub's error body.
    pub fn status(status: u16, message: &str) -> Self {
        Canned {
            status,
            headers: Vec::new(),
            body: serde_json::json!({
                "message": message,
                "documentation_url": "https://docs.github.com/rest",
            })
            .to_string(),
        }
    }

    /// A secondary rate limit: `403` (or `429`) with `retry-after: seconds`.
    pub fn retry_after(status: u16, seconds: u64) -> Self {
        let mut canned = Canned::status(
            status,
            "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
        );
        canned
            .headers
            .push(("retry-after".into(), seconds.to_string()));
        canned
    }

    /// A primary rate limit: `403` with `x-ratelimit-remaining: 0` and a reset `seconds` after
    /// the server's now (filled in when served).
    pub fn rate_limit_reset(seconds: i64) -> Self {
        let mut canned = Canned::status(403, "API rate limit exceeded for installation ID 1.");
        canned
            .headers
            .push(("x-ratelimit-remaining".into(), "0".into()));
        canned
            .headers
            .push(("x-ratelimit-reset".into(), format!("+{seconds}")));
        canned
    }

    /// A secondary rate limit that names no wait: `status` (`403` or `429`) and GitHub's message
    /// alone.
    pub fn secondary_limit(status: u16) -> Self {
        Canned::status(
            status,
            "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
        )
    }

    /// Close the connection without answering (a dropped connection).
    pub fn drop_connection() -> Self {
        Canned {
            status: 0,
            headers: Vec::new(),
            body: String::new(),
        }
    }
}

/// Canned responses served, in order, to requests with `method` whose path starts with
/// `path_prefix` (the path under the server root, without the query).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    pub method: String,
    pub path_prefix: String,
    pub responses: VecDeque<Canned>,
    /// Matching requests handled normally before the canned responses start.
    pub pass_first: u32,
    /// Whether a matching request still takes effect, its real answer replaced by the canned
    /// one (a response lost after GitHub acted).
    pub handle_first: bool,
}

impl Fault {
    pub fn new(method: &str, path_prefix: &str, responses: Vec<Canned>) -> Self {
        Fault {
            method: method.to_owned(),
            path_prefix: path_prefix.to_owned(),
            responses: responses.into(),
            pass_first: 0,
            handle_first: false,
        }
    }

    /// The request takes effect; the canned response replaces its answer.
    pub fn after_handling(mut self) -> Self {
        self.handle_first = true;
        self
    }

    /// The first `count` matching requests are handled normally.
    pub fn passing_first(mut self, count: u32) -> Self {
        self.pass_first = count;
        self
    }
}

/// When a request with `method` whose path starts with `path_prefix` arrives, the ref `name`
/// (`refs/heads/...`) is first set to `to` (once): someone else moved the branch meanwhile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefMove {
    pub method: String,
    pub path_prefix: String,
    pub name: String,
    pub to: String,
}

/// The stand-in stores or reports another tree than it was asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tamper {
    /// Every tree written for a publication (`POST git/trees`, `createCommitOnBranch`) gets this
    /// extra file.
    ExtraFile { path: String, contents: Vec<u8> },
    /// `GET git/commits/{sha}` of a commit created during the run names this tree.
    ReadBackTree(String),
}

/// A forged publication, as someone with a workflow token (`checks: write`, `contents: write`)
/// but without the publishing App's key can make one: the simulated pass publishes it instead
/// of the App's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Forgery {
    /// The check run is created by another App (`github-actions`, id [`OTHER_APP_ID`]).
    CheckRunFromOtherApp,
    /// The head commit is another author's, unsigned (`verification.reason: unsigned`).
    UnsignedHead,
    /// The head commit is signed by another user's key (verified, but not for the App's bot).
    ForeignSignedHead,
    /// The check run's output names this tree as proven, not the head commit's.
    ProvenTree(String),
}

/// The `head_sha` of a run whose ref the Git database does not hold.
pub const PLACEHOLDER_HEAD: &str = "1111111111111111111111111111111111111111";

/// The App id GitHub Actions' own App (`github-actions`) has on github.com.
pub const OTHER_APP_ID: u64 = 15368;

/// A run that existed before the dispatch (for correlation tests).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PriorRun {
    pub display_title: String,
    /// Seconds before [`Scenario::start_unix`].
    pub age_seconds: i64,
    pub conclusion: Option<String>,
}

/// A run someone else (or something else) starts when the dispatch arrives, with the dispatched
/// run's name and inputs: what the dispatcher must not take for its own. Listed at once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IntruderRun {
    /// Seconds after the dispatch (negative: before it).
    pub offset_seconds: i64,
    /// Its `actor.login`.
    pub actor: String,
    /// The ref it runs on: `refs/heads/<branch>` or `refs/tags/<name>` (GitHub reports a tag's
    /// name as `head_branch`).
    pub git_ref: String,
    /// Its `head_sha`; `None`: the dispatched run's.
    pub head_sha: Option<String>,
    /// Its workflow file (`.github/workflows/<file>`); `None`: the scenario's.
    pub workflow_path: Option<String>,
}

/// Everything a stand-in run is scripted with.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// The token every request must carry as `Authorization: Bearer <token>`.
    pub token: String,
    /// Further tokens accepted like `token` (an App's installation token beside the
    /// dispatcher's), each until it is revoked.
    pub installation_tokens: Vec<String>,
    /// The App's JSON web token: with it, `POST /app/installations/{id}/access_tokens` mints a
    /// fresh installation token (accepted like `token` until revoked). `None`: no App.
    pub app_jwt: Option<String>,
    /// The login of the user `token` belongs to (`GET /user`; the `actor` of the runs it
    /// dispatches).
    pub token_login: String,
    /// The dispatcher App: a JSON web token signed (RS256) by its key authenticates as it
    /// ([`dispatcher_app`]); the installation tokens it mints dispatch as `<slug>[bot]`.
    pub dispatcher_app: Option<dispatcher_app::DispatcherApp>,
    /// Runs started beside the dispatched one ([`IntruderRun`]).
    pub intruders: Vec<IntruderRun>,
    pub owner: String,
    pub repo: String,
    pub workflow_file: String,
    pub workflow_name: String,
    /// `active`, or a disabled state.
    pub workflow_state: String,
    pub dispatch: DispatchMode,
    /// Whether a dispatch creates a run at all.
    pub creates_run: bool,
    /// How many run-list requests see the new run missing before it is listed.
    pub listed_after: u32,
    /// How many `GET .../actions/runs/{id}` answer in progress before the run completes.
    pub polls_until_complete: u32,
    pub outcome: Outcome,
    pub prior_runs: Vec<PriorRun>,
    pub faults: Vec<Fault>,
    /// The server clock at start (Unix seconds).
    pub start_unix: i64,
    /// Whether responses carry a `Date` header.
    pub send_date: bool,
    /// Text appended to a failed job's log (what a hostile build could print).
    pub failed_log_extra: String,
    /// The name dispatched runs get instead of `agent-team-apply <task_id>` (a workflow whose
    /// `run-name` differs).
    pub run_name: Option<String>,
    /// The repository's default branch.
    pub default_branch: String,
    /// Whether the repository's plan has draft pull requests (a private repository on GitHub
    /// Free has not).
    pub draft_pull_requests: bool,
    /// Whether the token's App lacks the `workflows` permission: a ref may then not be created
    /// or moved to a commit whose `.github/workflows` differ from the default branch's.
    pub app_without_workflows_permission: bool,
    pub tamper: Option<Tamper>,
    pub ref_moves: Vec<RefMove>,
    /// What the settings routes serve (`gate doctor`'s reads).
    pub settings: settings::RepositorySettings,
    /// The publishing App: its id and slug (its bot is `<slug>[bot]`, user id `bot_user_id`).
    /// Every check run and commit the token creates is that App's.
    pub app_id: u64,
    pub app_slug: String,
    /// The name of the check run a played publication posts (the caller's `check-run-name`).
    pub check_name: String,
    /// Files of other repositories, served by "Get repository content" at a commit:
    /// (`owner/repo`, commit, path, bytes). A caller's pinned reusable workflow lives there.
    pub other_files: Vec<(String, String, String, Vec<u8>)>,
    pub bot_user_id: u64,
    /// What the simulated pass publishes instead of the App's publication.
    pub forgery: Option<Forgery>,
    /// The file the guard job uploads as its artifact `agent-team-guard-<run>-<attempt>-standin.json`
    /// when a scripted run completes: its creation time (seconds after the run's creation; the
    /// guard job runs from +0 to +5, build-test from +10) and its bytes (`RUN_ID` in them is
    /// replaced with the run's id).
    pub guard_artifact: Option<(i64, Vec<u8>)>,
    /// What the build-test job uploads as its report artifact
    /// `build-test-report-non-authoritative-standin-attempt-1` when a scripted run completes: the
    /// bytes "Download an artifact" serves (a zip archive of the job's report directory), created
    /// as the job ends (+15).
    pub build_test_artifact: Option<Vec<u8>>,
    /// GitHub's rate limits, imposed on every API request ([`limits`]); none by default.
    pub rate_limits: RateLimits,
}

/// An artifact a job uploaded (`archive: false`: the file itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArtifactState {
    pub id: u64,
    pub name: String,
    pub run_id: u64,
    pub created_at: i64,
    pub bytes: Vec<u8>,
}

impl Default for Scenario {
    fn default() -> Self {
        Scenario {
            token: "ghs_standinTOKENstandinTOKEN0123456789".into(),
            installation_tokens: Vec::new(),
            app_jwt: None,
            token_login: "octo-dispatcher".into(),
            dispatcher_app: None,
            intruders: Vec::new(),
            owner: "octo".into(),
            repo: "repo".into(),
            workflow_file: "agent-team-apply.yml".into(),
            workflow_name: "agent-team-apply-verify".into(),
            workflow_state: "active".into(),
            dispatch: DispatchMode::RunDetails,
            creates_run: true,
            listed_after: 0,
            polls_until_complete: 0,
            outcome: Outcome::Passed,
            prior_runs: Vec::new(),
            faults: Vec::new(),
            // 2026-03-01T12:00:00Z
            start_unix: 1_772_366_400,
            send_date: true,
            failed_log_extra: String::new(),
            run_name: None,
            default_branch: "main".into(),
            draft_pull_requests: true,
            app_without_workflows_permission: false,
            tamper: None,
            ref_moves: Vec::new(),
            settings: settings::RepositorySettings::default(),
            app_id: 424_242,
            app_slug: "agent-team-apply".into(),
            check_name: CHECK_NAME.into(),
            other_files: Vec::new(),
            bot_user_id: 190_000_001,
            forgery: None,
            guard_artifact: None,
            build_test_artifact: None,
            rate_limits: RateLimits::default(),
        }
    }
}

/// A workflow run as the stand-in keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunState {
    pub id: u64,
    pub display_title: String,
    pub created_at: i64,
    pub status: String,
    pub conclusion: Option<String>,
    pub inputs: BTreeMap<String, String>,
    pub git_ref: String,
    /// `actor.login`: who dispatched it.
    pub actor: String,
    /// The commit it runs on.
    pub head_sha: String,
    /// `.github/workflows/<file>`.
    pub workflow_path: String,
    pub polls: u32,
    /// How many run lists this run has been due in.
    pub listed: u32,
    pub jobs: Vec<JobState>,
    pub outcome: Outcome,
}

/// A release and its uploaded assets (name, bytes), in upload order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReleaseState {
    pub id: u64,
    pub tag: String,
    pub name: String,
    pub body: String,
    pub draft: bool,
    pub assets: Vec<(String, Vec<u8>)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobState {
    pub id: u64,
    pub name: String,
    pub status: String,
    pub conclusion: Option<String>,
    /// (name, conclusion) in order.
    pub steps: Vec<(String, Option<String>)>,
    pub log: String,
    /// Unix seconds; `None` for a job that did not run.
    pub started_at: Option<i64>,
    pub completed_at: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullState {
    pub number: u64,
    pub title: String,
    pub body: String,
    pub head: String,
    pub head_sha: String,
    pub base: String,
    pub draft: bool,
    /// `open` or `closed`.
    pub state: String,
    pub labels: Vec<String>,
    /// Logins and team slugs review was requested from, in request order.
    pub requested_reviewers: Vec<String>,
    pub requested_teams: Vec<String>,
    /// Whether it was merged (then `state` is `closed`).
    pub merged: bool,
    /// Who opened it: a login; one ending in `[bot]` is served with `type: Bot`.
    pub user: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckRunState {
    pub id: u64,
    pub name: String,
    pub head_sha: String,
    pub conclusion: Option<String>,
    /// The App that created it.
    pub app_id: u64,
    pub app_slug: String,
    /// `output.text` as created.
    pub output_text: String,
    /// `external_id` and `output.summary` as created (or last updated).
    pub external_id: Option<String>,
    pub output_summary: String,
}

/// The stand-in's whole state, visible to tests.
#[derive(Debug)]
pub struct State {
    pub scenario: Scenario,
    pub now: i64,
    pub requests: Vec<Recorded>,
    pub runs: Vec<RunState>,
    pub run_list_requests: u32,
    pub git: git::Store,
    pub pulls: Vec<PullState>,
    pub check_runs: Vec<CheckRunState>,
    /// Commits created through the API during the run (`POST git/commits`,
    /// `createCommitOnBranch`).
    pub created_commits: std::collections::BTreeSet<String>,
    /// Tokens revoked by `DELETE /installation/token`: refused from then on.
    pub revoked_tokens: std::collections::BTreeSet<String>,
    /// Commits signed with another user's key (verified, for that user).
    pub foreign_signed: std::collections::BTreeSet<String>,
    pub artifacts: Vec<ArtifactState>,
    /// Releases created through the API (`crate::releases`).
    pub releases: Vec<ReleaseState>,
    /// Apps registered through the manifest form (`crate::manifests`).
    pub manifests: Vec<manifests::Pending>,
    /// How many requests each fault (by index) has let through.
    fault_passes: Vec<u32>,
    /// What the rate limits did.
    pub limits: LimitCounts,
    /// Each run's status and conclusion as last served, and when that changed (its
    /// `updated_at`).
    pub(crate) run_versions: BTreeMap<u64, (String, Option<String>, i64)>,
    next_id: u64,
}

impl State {
    fn new(scenario: Scenario) -> Self {
        let now = scenario.start_unix;
        let mut state = State {
            scenario,
            now,
            requests: Vec::new(),
            runs: Vec::new(),
            run_list_requests: 0,
            git: git::Store::default(),
            pulls: Vec::new(),
            check_runs: Vec::new(),
            created_commits: std::collections::BTreeSet::new(),
            revoked_tokens: std::collections::BTreeSet::new(),
            foreign_signed: std::collections::BTreeSet::new(),
            artifacts: Vec::new(),
            releases: Vec::new(),
            manifests: Vec::new(),
            fault_passes: Vec::new(),
            limits: LimitCounts::default(),
            run_versions: BTreeMap::new(),
            next_id: 100,
        };
        for prior in state.scenario.prior_runs.clone() {
            let id = state.next_id();
            state.runs.push(RunState {
                id,
                display_title: prior.display_title,
                created_at: now - prior.age_seconds,
                status: "completed".into(),
                conclusion: prior.conclusion,
                inputs: BTreeMap::new(),
                git_ref: "refs/heads/main".into(),
                actor: state.scenario.token_login.clone(),
                head_sha: PLACEHOLDER_HEAD.into(),
                workflow_path: format!(".github/workflows/{}", state.scenario.workflow_file),
                polls: 0,
                listed: u32::MAX,
                jobs: Vec::new(),
                outcome: Outcome::Pending,
            });
        }
        state
    }

    pub(crate) fn next_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }
}

/// A running stand-in. Dropping it stops the server.
pub struct StandIn {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl StandIn {
    pub fn start(scenario: Scenario) -> std::io::Result<StandIn> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let state = Arc::new(Mutex::new(State::new(scenario)));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let state = Arc::clone(&state);
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    if let Ok(stream) = stream {
                        let state = Arc::clone(&state);
                        std::thread::spawn(move || http::serve(stream, addr, &state));
                    }
                }
            })
        };
        Ok(StandIn {
            addr,
            state,
            stop,
            thread: Some(thread),
        })
    }

    /// `http://127.0.0.1:<port>`: the API URL to give the client.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn token(&self) -> String {
        self.state().scenario.token.clone()
    }

    /// The state, locked (a panic in the server thread does not hide it).
    pub fn state(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.state().requests.clone()
    }

    /// The stand-in's clock, advanced by one second (a driver's job start or end).
    pub fn tick(&self) -> i64 {
        let mut state = self.state();
        let now = state.now;
        state.now += 1;
        now
    }

    /// The stand-in's clock moved on by `seconds` (a client's clock that shares the server's
    /// time: its sleeps pass on the server too, so a rate limit's reset comes).
    pub fn advance(&self, seconds: i64) {
        self.state().now += seconds;
    }

    /// A job of run `run_id` uploads the file `name` as an artifact (`archive: false`), now.
    pub fn upload_artifact(&self, run_id: u64, name: &str, bytes: Vec<u8>) -> u64 {
        let mut state = self.state();
        let id = state.next_id();
        let created_at = state.now;
        state.now += 1;
        state.artifacts.push(ArtifactState {
            id,
            name: name.to_owned(),
            run_id,
            created_at,
            bytes,
        });
        id
    }

    /// Finish a [`Outcome::Pending`] run with `outcome` (for a driver that runs the jobs itself).
    pub fn complete_run(&self, run_id: u64, outcome: Outcome) -> bool {
        let mut state = self.state();
        routes::complete_run(&mut state, run_id, outcome)
    }
}

/// A job as a driver that ran it reports it: its conclusion and its steps' (GitHub's
/// `job` schema, "List jobs for a workflow run":
/// <https://docs.github.com/en/rest/actions/workflow-jobs#list-jobs-for-a-workflow-run>).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobReport {
    /// The reusable workflow's job (`guard`, ...); listed as `<caller job> / <name>`, or as it
    /// is when it already names its caller's job (`docs / guard`).
    pub name: String,
    /// `success`, `failure`, `skipped` or `cancelled`.
    pub conclusion: String,
    /// (step name, conclusion), in order.
    pub steps: Vec<(String, String)>,
    /// What "Download job logs for a workflow run" serves for the job.
    pub log: String,
    /// When it started and completed (the stand-in's clock, [`StandIn::tick`]); `None` when it
    /// did not run.
    pub started_at: Option<i64>,
    pub completed_at: Option<i64>,
}

impl StandIn {
    /// Finish a [`Outcome::Pending`] run with the jobs a driver really ran (`Outcome::Pending`
    /// runs are left to their driver): the run's conclusion is `success` when every job
    /// succeeded, `cancelled` when one was cancelled, else `failure`, as GitHub concludes a run
    /// from its jobs ("Get a workflow run":
    /// <https://docs.github.com/en/rest/actions/workflow-runs#get-a-workflow-run>). Nothing is
    /// published here: the driver's own publication (through the API) is what exists. `false`
    /// when there is no such pending run.
    pub fn finish_run_with_jobs(&self, run_id: u64, jobs: Vec<JobReport>) -> bool {
        let mut state = self.state();
        routes::finish_run_with_jobs(&mut state, run_id, jobs)
    }
}

impl Drop for StandIn {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop.
        let _ = TcpStream::connect(self.addr);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
