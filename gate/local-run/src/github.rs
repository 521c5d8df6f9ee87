//! The simulated GitHub: the in-process `github-standin` serving the simulated repository
//! (`local/greeting`, its default branch holding the sample's base commit), which the dispatcher
//! and `gate publish` talk to over HTTP (`--api-url`, `GITHUB_API_URL`), exactly as they talk to
//! api.github.com. A dispatch registers a run that stays queued until local-run has played the
//! jobs and records their real conclusions as the run's jobs; `gate dispatch --wait` then reads
//! them, with the draft pull request and check run that `gate publish` created.

use std::path::Path;
use std::time::{Duration, Instant};

use github_standin::{JobReport, Outcome, Scenario, StandIn, Tamper};

use crate::LocalRunError;
use crate::samples::{BASE_BRANCH, NAME, OWNER, WORKFLOW_FILE};

/// A publication path played against the simulated GitHub.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PublicationScenario {
    /// A fresh repository: the branch is created at the base.
    Fresh,
    /// The branch already exists at the base (a rerun after the branch was created): reused.
    BranchAtBase,
    /// The branch exists and points elsewhere (someone else's commit): a typed refusal, nothing
    /// written.
    BranchElsewhere,
    /// The simulated GitHub stores a tree with an extra file: the read-back tree id differs from
    /// git's and the publication fails (the branch is left, no pull request).
    TreeMismatch,
}

impl PublicationScenario {
    pub const ALL: &'static [PublicationScenario] = &[
        PublicationScenario::Fresh,
        PublicationScenario::BranchAtBase,
        PublicationScenario::BranchElsewhere,
        PublicationScenario::TreeMismatch,
    ];

    pub fn name(self) -> &'static str {
        match self {
            PublicationScenario::Fresh => "fresh",
            PublicationScenario::BranchAtBase => "branch-at-base",
            PublicationScenario::BranchElsewhere => "branch-elsewhere",
            PublicationScenario::TreeMismatch => "tree-mismatch",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|s| s.name() == name)
    }
}

/// The file the [`PublicationScenario::TreeMismatch`] stand-in adds to every tree it stores.
pub const INJECTED_PATH: &str = "INJECTED-BY-THE-SIMULATED-GITHUB.txt";

/// The dispatch as the simulated GitHub received it.
#[derive(Debug, Clone)]
pub struct Dispatched {
    pub run_id: u64,
    pub git_ref: String,
    pub inputs: std::collections::BTreeMap<String, String>,
}

impl Dispatched {
    /// An input, `""` when absent (as GitHub passes an unset optional input).
    pub fn input(&self, name: &str) -> String {
        self.inputs.get(name).cloned().unwrap_or_default()
    }
}

/// The running stand-in.
pub struct SimulatedGitHub {
    pub standin: StandIn,
}

impl SimulatedGitHub {
    /// Starts the stand-in with the repository's base commit (every object reachable from it,
    /// under git's ids) on the default branch.
    pub fn start(
        origin: &Path,
        base: &str,
        scenario: PublicationScenario,
    ) -> Result<SimulatedGitHub, LocalRunError> {
        let tamper = (scenario == PublicationScenario::TreeMismatch).then(|| Tamper::ExtraFile {
            path: INJECTED_PATH.to_owned(),
            contents: b"not in the plan\n".to_vec(),
        });
        let standin = StandIn::start(Scenario {
            owner: OWNER.to_owned(),
            repo: NAME.to_owned(),
            workflow_file: WORKFLOW_FILE.to_owned(),
            default_branch: BASE_BRANCH.to_owned(),
            outcome: Outcome::Pending,
            tamper,
            ..Scenario::default()
        })
        .map_err(crate::io_error("start the simulated GitHub"))?;
        github_standin::load_commit(&standin, origin, base, BASE_BRANCH).map_err(
            crate::io_error("load the base commit into the simulated GitHub"),
        )?;
        Ok(SimulatedGitHub { standin })
    }

    pub fn url(&self) -> String {
        self.standin.url()
    }

    /// The simulated GitHub's clock, advanced a second (a job's start or end).
    pub fn tick(&self) -> i64 {
        self.standin.tick()
    }

    /// A job of the run uploads an artifact.
    pub fn upload_artifact(&self, run_id: u64, name: &str, bytes: Vec<u8>) -> u64 {
        self.standin.upload_artifact(run_id, name, bytes)
    }

    /// The publishing App's id (the dispatcher's `--app-id`).
    pub fn app_id(&self) -> u64 {
        self.standin.state().scenario.app_id
    }

    pub fn token(&self) -> String {
        self.standin.token()
    }

    /// Points `refs/heads/<branch>` at `commit`, loading the commit's objects from `origin`.
    pub fn set_branch(
        &self,
        origin: &Path,
        branch: &str,
        commit: &str,
    ) -> Result<(), LocalRunError> {
        github_standin::load_commit(&self.standin, origin, commit, branch).map_err(crate::io_error(
            format!("point {branch} at {commit} on the simulated GitHub"),
        ))
    }

    /// Waits until a dispatch registered a run (or `gate dispatch` ended without one).
    pub fn wait_for_dispatch(
        &self,
        dispatcher_running: &mut dyn FnMut() -> bool,
        limit: Duration,
    ) -> Result<Dispatched, LocalRunError> {
        let start = Instant::now();
        loop {
            if let Some(run) = self.standin.state().runs.first() {
                return Ok(Dispatched {
                    run_id: run.id,
                    git_ref: run.git_ref.clone(),
                    inputs: run.inputs.clone(),
                });
            }
            if !dispatcher_running() {
                return Err(LocalRunError::Stage(
                    "gate dispatch ended before any run was dispatched".to_owned(),
                ));
            }
            if start.elapsed() > limit {
                return Err(LocalRunError::Stage(format!(
                    "no dispatch reached the simulated GitHub within {} s",
                    limit.as_secs()
                )));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Records the jobs' real conclusions as the run's jobs; the run completes.
    pub fn finish_run(&self, run_id: u64, jobs: Vec<JobReport>) -> Result<(), LocalRunError> {
        if self.standin.finish_run_with_jobs(run_id, jobs) {
            Ok(())
        } else {
            Err(LocalRunError::Stage(format!(
                "the simulated GitHub has no pending run {run_id}"
            )))
        }
    }

    /// The commit `refs/heads/<branch>` points at, and its tree.
    pub fn branch(&self, branch: &str) -> Option<(String, Option<String>)> {
        let state = self.standin.state();
        let commit = state.git.refs.get(&format!("refs/heads/{branch}"))?.clone();
        let tree = state.git.commit_tree(&commit).map(str::to_owned);
        Some((commit, tree))
    }

    /// (number, draft, head branch) of every pull request.
    pub fn pulls(&self) -> Vec<(u64, bool, String)> {
        self.standin
            .state()
            .pulls
            .iter()
            .map(|p| (p.number, p.draft, p.head.clone()))
            .collect()
    }

    /// (name, head sha, conclusion) of every check run.
    pub fn check_runs(&self) -> Vec<(String, String, Option<String>)> {
        self.standin
            .state()
            .check_runs
            .iter()
            .map(|c| (c.name.clone(), c.head_sha.clone(), c.conclusion.clone()))
            .collect()
    }

    /// `METHOD path` of every request received, in order (no headers, no bodies: no token).
    pub fn request_lines(&self) -> Vec<String> {
        self.standin
            .requests()
            .iter()
            .map(|r| format!("{} {}", r.method, r.path))
            .collect()
    }
}
