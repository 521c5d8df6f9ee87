//! git for the tests of every crate: [`guard::git::command`] (the library's one hermetic git
//! command) with a fixed identity and date added, so that commits are reproducible and nothing of
//! the machine's configuration or environment reaches them.
//!
//! Included by each test crate that runs git with
//! `#[path = "<relative path to>/tests/support/git.rs"] mod git_support;`.
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

/// The author and committer of every commit a test makes.
pub const NAME: &str = "fixture";
pub const EMAIL: &str = "fixture@example.invalid";
/// The author and committer date of every commit a test makes.
pub const DATE: &str = "2026-01-01T00:00:00Z";

/// `git -C dir` with guard's fixed environment (see [`guard::git::command`]: stdin empty, stdout
/// and stderr captured) and the fixed identity and date.
pub fn git(dir: &Path) -> Command {
    let mut cmd = guard::git::command(dir);
    with_identity(&mut cmd);
    cmd
}

/// Add the fixed identity and date to a command that runs git.
pub fn with_identity(cmd: &mut Command) -> &mut Command {
    cmd.env("GIT_AUTHOR_NAME", NAME)
        .env("GIT_AUTHOR_EMAIL", EMAIL)
        .env("GIT_AUTHOR_DATE", DATE)
        .env("GIT_COMMITTER_NAME", NAME)
        .env("GIT_COMMITTER_EMAIL", EMAIL)
        .env("GIT_COMMITTER_DATE", DATE)
}

/// [`git`] started through `launcher` (for example `setpriv --reuid=.. --`): the launcher runs
/// git with git's arguments, git's environment alone (the launcher's own is cleared) and git's
/// directory.
pub fn git_through(mut launcher: Command, dir: &Path) -> Command {
    let git = git(dir);
    launcher
        .arg(git.get_program())
        .args(git.get_args())
        .env_clear();
    for (key, value) in git.get_envs() {
        match value {
            Some(value) => launcher.env(key, value),
            None => launcher.env_remove(key),
        };
    }
    if let Some(cwd) = git.get_current_dir() {
        launcher.current_dir(cwd);
    }
    launcher
}
