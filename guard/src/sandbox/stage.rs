//! The inner stages, run by the guard binary itself (`guard __sandbox-stage`) inside the namespaces
//! that `unshare` created. They only return on failure: on success the last one execs the command.

use std::convert::Infallible;
use std::ffi::OsString;
use std::io::{self, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::capture::MARKER;
use super::probe::NetworkProbe;

/// The hidden subcommand that runs a stage.
pub const STAGE_SUBCOMMAND: &str = "__sandbox-stage";

/// Everything a stage needs, passed on its command line by the outer process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StagePlan {
    /// 1: in the new pid + mount namespace, make `.git` read-only, then enter stage 2 through a
    /// new user + network + mount namespace. 2: bring up loopback, probe, verify, exec.
    pub stage: u8,
    /// Random; prefixes the announcements so that no other text can pass for one.
    pub nonce: String,
    /// `readlink /proc/self/ns/net` and `.../user` of the outer process.
    pub outer_netns: String,
    pub outer_userns: String,
    pub git_dir: Option<PathBuf>,
    pub guard_exe: PathBuf,
    pub unshare: PathBuf,
    pub mount: PathBuf,
    pub ip: Option<PathBuf>,
    pub command: Vec<OsString>,
}

impl StagePlan {
    /// The arguments of the guard binary that run this plan as `stage`.
    pub fn to_args(&self, stage: u8) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec![
            STAGE_SUBCOMMAND.into(),
            "--stage".into(),
            stage.to_string().into(),
        ];
        let mut flag = |name: &str, value: OsString| {
            args.push(name.into());
            args.push(value);
        };
        flag("--nonce", self.nonce.clone().into());
        flag("--outer-netns", self.outer_netns.clone().into());
        flag("--outer-userns", self.outer_userns.clone().into());
        flag("--guard-exe", self.guard_exe.clone().into());
        flag("--unshare", self.unshare.clone().into());
        flag("--mount", self.mount.clone().into());
        if let Some(ip) = &self.ip {
            flag("--ip", ip.clone().into());
        }
        if let Some(git_dir) = &self.git_dir {
            flag("--git-dir", git_dir.clone().into());
        }
        args.push("--".into());
        args.extend(self.command.iter().cloned());
        args
    }
}

enum Failure {
    /// Isolation could not be established or verified; the command was not started.
    Refuse(String),
    /// The command was announced but could not be executed.
    Exec(io::Error),
}

/// Runs the stage; returns the process exit code only when it could not exec (2 when it refused,
/// 126/127 when the command itself could not be executed, as a shell would).
pub fn run_stage(plan: &StagePlan) -> u8 {
    let result = match plan.stage {
        1 => stage_one(plan),
        2 => stage_two(plan),
        other => Err(Failure::Refuse(format!("unknown sandbox stage {other}"))),
    };
    match result {
        Ok(never) => match never {},
        Err(Failure::Refuse(reason)) => {
            let payload = serde_json::to_string(&reason).unwrap_or_default();
            // If even this write fails the outer process sees no `exec` and refuses anyway.
            let _ = announce(&plan.nonce, "refuse", &payload);
            2
        }
        Err(Failure::Exec(err)) => {
            let program = plan
                .command
                .first()
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default();
            eprintln!(
                "guard run: cannot execute {}: {err}",
                crate::escape::terminal(&program)
            );
            if err.kind() == io::ErrorKind::NotFound {
                127
            } else {
                126
            }
        }
    }
}

fn stage_one(plan: &StagePlan) -> Result<Infallible, Failure> {
    if std::process::id() != 1 {
        return Err(Failure::Refuse(
            "stage 1 is not the init process of a new pid namespace".into(),
        ));
    }
    if let Some(git_dir) = &plan.git_dir {
        // Made here, in the mount namespace of the more privileged user namespace, the read-only
        // bind mount is locked in stage 2's namespace: root there cannot remount or unmount it.
        mount(
            &plan.mount,
            &["--bind".as_ref(), git_dir.as_os_str(), git_dir.as_os_str()],
        )?;
        mount(
            &plan.mount,
            &[
                "-o".as_ref(),
                "remount,bind,ro".as_ref(),
                git_dir.as_os_str(),
            ],
        )?;
    }
    let err = Command::new(&plan.unshare)
        .args(["--user", "--map-root-user", "--net", "--mount", "--"])
        .arg(&plan.guard_exe)
        .args(plan.to_args(2))
        .exec();
    Err(Failure::Refuse(format!(
        "cannot execute {}: {err}",
        plan.unshare.display()
    )))
}

fn mount(tool: &Path, args: &[&std::ffi::OsStr]) -> Result<(), Failure> {
    let output = Command::new(tool)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| Failure::Refuse(format!("cannot run {}: {e}", tool.display())))?;
    if output.status.success() {
        return Ok(());
    }
    let shown: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    Err(Failure::Refuse(format!(
        "mount {} failed ({}): {}",
        shown.join(" "),
        output.status,
        String::from_utf8_lossy(&output.stderr).trim()
    )))
}

fn stage_two(plan: &StagePlan) -> Result<Infallible, Failure> {
    let loopback_up = plan.ip.as_ref().is_some_and(|ip| {
        Command::new(ip)
            .args(["link", "set", "lo", "up"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    });
    let git_dir_read_only = plan
        .git_dir
        .as_deref()
        .map(|g| write_is_refused(g, &plan.nonce));
    let probe = NetworkProbe::collect(loopback_up, git_dir_read_only)
        .map_err(|e| Failure::Refuse(format!("cannot read the network probe from /proc: {e}")))?;
    let mut problems = probe.problems(&plan.outer_netns, &plan.outer_userns);
    if std::process::id() != 1 {
        problems.push("not the init process of a new pid namespace".into());
    }
    let payload = serde_json::to_string(&probe)
        .map_err(|e| Failure::Refuse(format!("cannot encode the probe: {e}")))?;
    announce(&plan.nonce, "probe", &payload)
        .map_err(|e| Failure::Refuse(format!("cannot announce the probe: {e}")))?;
    if !problems.is_empty() {
        return Err(Failure::Refuse(format!(
            "isolation not proven: {}",
            problems.join("; ")
        )));
    }
    let Some((program, args)) = plan.command.split_first() else {
        return Err(Failure::Refuse("no command".into()));
    };
    announce(&plan.nonce, "exec", "")
        .map_err(|e| Failure::Refuse(format!("cannot announce the command: {e}")))?;
    Err(Failure::Exec(Command::new(program).args(args).exec()))
}

/// Whether creating a file in `git_dir` fails with "read-only file system" (a created file is
/// removed again and counts as writable).
fn write_is_refused(git_dir: &Path, nonce: &str) -> bool {
    let path = git_dir.join(format!(".guard-run-write-probe-{nonce}"));
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
    {
        Err(err) => err.kind() == io::ErrorKind::ReadOnlyFilesystem,
        Ok(_) => {
            let _ = std::fs::remove_file(&path);
            false
        }
    }
}

/// One announcement line on stdout, flushed before anything else can happen (exec does not flush
/// Rust's buffer).
fn announce(nonce: &str, kind: &str, payload: &str) -> io::Result<()> {
    let mut stdout = io::stdout().lock();
    let line = if payload.is_empty() {
        format!("{MARKER} {nonce} {kind}\n")
    } else {
        format!("{MARKER} {nonce} {kind} {payload}\n")
    };
    stdout.write_all(line.as_bytes())?;
    stdout.flush()
}
