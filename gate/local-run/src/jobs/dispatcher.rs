//! The trusted dispatcher: `gate dispatch ... --wait --format json`, the installed `gate`
//! binary, with the dispatch key in `AGENT_TEAM_DISPATCH_KEY` and the simulated GitHub's token
//! in `GH_TOKEN`. It signs and sends the dispatch, then follows the run until local-run has
//! played its jobs, and reports the authenticated outcome: the jobs' conclusions as GitHub lists
//! them, and on a pass the draft pull request and check run `gate publish` created.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use gate::output::dispatch_result_v2::DispatchResultDoc;

use crate::samples::{BASE_BRANCH, REPOSITORY, WORKFLOW_FILE};
use crate::stage::Runner;
use crate::{LocalRunError, io_error};

/// How long the dispatcher may follow the run.
pub const TIMEOUT_SECONDS: &str = "1800";

/// A running `gate dispatch`.
pub struct Dispatcher {
    child: Child,
    stdout: PathBuf,
    stderr: PathBuf,
}

/// What it reported.
pub struct DispatchEnd {
    pub exit_code: Option<i32>,
    pub doc: Option<DispatchResultDoc>,
    pub stderr: String,
}

pub struct DispatchArgs<'a> {
    pub task_id: &'a str,
    pub base: &'a str,
    pub scope: &'a [&'a str],
    pub diff: &'a Path,
    pub api_url: &'a str,
    pub token: &'a str,
    pub key: &'a str,
    /// The simulated GitHub's publishing App, whose check run and signed commit authenticate
    /// the outcome.
    pub app_id: u64,
}

impl Dispatcher {
    pub fn start(
        runner: &mut Runner<'_>,
        dir: &Path,
        args: &DispatchArgs<'_>,
    ) -> Result<Dispatcher, LocalRunError> {
        let mut argv: Vec<OsString> = vec![
            "dispatch".into(),
            "--repository".into(),
            REPOSITORY.into(),
            "--workflow".into(),
            WORKFLOW_FILE.into(),
            "--ref".into(),
            BASE_BRANCH.into(),
            "--task-id".into(),
            args.task_id.into(),
            "--base".into(),
            args.base.into(),
        ];
        for glob in args.scope {
            argv.push("--scope".into());
            argv.push((*glob).into());
        }
        argv.extend([
            "--diff".into(),
            args.diff.as_os_str().to_owned(),
            "--api-url".into(),
            args.api_url.into(),
            "--wait".into(),
            "--app-id".into(),
            args.app_id.to_string().into(),
            "--timeout".into(),
            TIMEOUT_SECONDS.into(),
            "--format".into(),
            "json".into(),
        ]);
        let stdout = dir.join("dispatch-result.json");
        let stderr = dir.join("dispatch.stderr");
        runner.say(&format!(
            "\ndispatcher (trusted; AGENT_TEAM_DISPATCH_KEY and GH_TOKEN in its environment)\n  $ {} > {}\n",
            runner.command_line("gate", &argv),
            runner.show(&stdout)
        ))?;
        let out = std::fs::File::create(&stdout)
            .map_err(io_error(format!("create {}", stdout.display())))?;
        let err = std::fs::File::create(&stderr)
            .map_err(io_error(format!("create {}", stderr.display())))?;
        let mut cmd = Command::new(runner.bin_dir.join("gate"));
        cmd.args(&argv).env_clear();
        if let Some(path) = std::env::var_os("PATH") {
            cmd.env("PATH", path);
        }
        let child = cmd
            .env("AGENT_TEAM_DISPATCH_KEY", args.key)
            .env("GH_TOKEN", args.token)
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(io_error("run gate dispatch"))?;
        Ok(Dispatcher {
            child,
            stdout,
            stderr,
        })
    }

    /// Whether it is still running.
    pub fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Waits for it to end and reads what it printed.
    pub fn finish(mut self) -> Result<DispatchEnd, LocalRunError> {
        let status = self
            .child
            .wait()
            .map_err(io_error("wait for gate dispatch"))?;
        let doc = std::fs::read(&self.stdout)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok());
        let stderr = std::fs::read(&self.stderr)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default();
        Ok(DispatchEnd {
            exit_code: status.code(),
            doc,
            stderr,
        })
    }
}

impl Drop for Dispatcher {
    fn drop(&mut self) {
        // Only a dispatcher that was not waited for (local-run's own error) is still running.
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
