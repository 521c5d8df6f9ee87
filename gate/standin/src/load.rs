//! Loading a real repository's commit into the stand-in: every object reachable from it, read
//! with `git cat-file --batch` and stored under the id git gives it. The stand-in computes each
//! id itself ([`crate::git::Store::put_raw`]); a different id than git's is an error, so a load
//! that succeeds also shows that the stand-in's ids are git's.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::StandIn;

fn failure(message: String) -> std::io::Error {
    std::io::Error::other(message)
}

/// `git -C dir` with a fixed environment: cleared (`PATH` kept), no system or global
/// configuration, no `HOME`, the C locale. The stand-in's one git command, also used by the GitHub
/// client's tests (which depend on the stand-in, not on the engine).
///
/// It is not `guard::git::command`: the stand-in plays GitHub's side in the tests of the gate
/// and the engine, so it depends on neither (a stand-in built on the code it checks would share
/// that code's mistakes), and the GitHub client's tests, which use the stand-in, do not build
/// the engine.
pub fn git_command(dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("HOME", "/nonexistent")
        .env("LC_ALL", "C")
        .arg("-C")
        .arg(dir);
    cmd
}

fn git(dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> std::io::Result<Vec<u8>> {
    let mut cmd = git_command(dir);
    cmd.args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn()?;
    let writer = match (stdin, child.stdin.take()) {
        (Some(input), Some(mut pipe)) => {
            let input = input.to_vec();
            Some(std::thread::spawn(move || pipe.write_all(&input)))
        }
        _ => None,
    };
    let out = child.wait_with_output()?;
    if let Some(writer) = writer {
        writer
            .join()
            .map_err(|_| failure("the writer thread panicked".into()))??;
    }
    if !out.status.success() {
        return Err(failure(format!(
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    Ok(out.stdout)
}

/// Store every object reachable from `commit` in `dir` and point `refs/heads/<branch>` at it.
pub fn load_commit(gh: &StandIn, dir: &Path, commit: &str, branch: &str) -> std::io::Result<()> {
    let list = git(dir, &["rev-list", "--objects", commit, "--"], None)?;
    let list = String::from_utf8_lossy(&list);
    let ids: Vec<&str> = list
        .lines()
        .filter_map(|l| l.split(' ').next())
        .filter(|id| !id.is_empty())
        .collect();
    let batch = git(
        dir,
        &["cat-file", "--batch"],
        Some(format!("{}\n", ids.join("\n")).as_bytes()),
    )?;
    let mut rest = batch.as_slice();
    let mut state = gh.state();
    for id in &ids {
        let bad = || failure(format!("unexpected `git cat-file --batch` output at {id}"));
        let newline = rest.iter().position(|&b| b == b'\n').ok_or_else(bad)?;
        let header = String::from_utf8_lossy(&rest[..newline]).into_owned();
        let parts: Vec<&str> = header.split(' ').collect();
        let [name, kind, size] = parts.as_slice() else {
            return Err(bad());
        };
        let size: usize = size.parse().map_err(|_| bad())?;
        let content = rest.get(newline + 1..newline + 1 + size).ok_or_else(bad)?;
        let stored = state.git.put_raw(kind, content).ok_or_else(bad)?;
        if stored != *name || stored != *id {
            return Err(failure(format!(
                "the stand-in's id of {kind} {id} is {stored}, not git's"
            )));
        }
        rest = rest.get(newline + 2 + size..).ok_or_else(bad)?;
    }
    state
        .git
        .refs
        .insert(format!("refs/heads/{branch}"), commit.to_owned());
    Ok(())
}

/// Store a commit the stand-in made (a publication's) in the local repository `dir`, under the
/// same id: its tree and parents must already be there (the plan's tree is, once git wrote it).
/// The way a test fetches a published head to plan the next round on it.
pub fn export_commit(gh: &StandIn, dir: &Path, commit: &str) -> std::io::Result<()> {
    let content = gh
        .state()
        .git
        .made_commits
        .get(commit)
        .cloned()
        .ok_or_else(|| failure(format!("the stand-in did not make commit {commit}")))?;
    let out = git(
        dir,
        &["hash-object", "-t", "commit", "-w", "--stdin"],
        Some(&content),
    )?;
    let id = String::from_utf8_lossy(&out).trim().to_owned();
    if id != commit {
        return Err(failure(format!(
            "git stored the stand-in's commit {commit} as {id}"
        )));
    }
    Ok(())
}
