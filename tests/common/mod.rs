//! Shared helpers for the workspace tests: temporary git repositories built from checked-in trees.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "../support/git.rs"]
pub mod git_support;

/// A git command with no ambient configuration or `GIT_*`/`GITHUB_*`/`CI` variables, and a fixed
/// identity and date.
pub use git_support::git;

pub fn git_ok(dir: &Path, args: &[&str]) -> String {
    let out = git(dir).args(args).output().expect("spawn git");
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Copy a directory tree (files, modes and symlinks preserved).
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let kind = entry.file_type().unwrap();
        let target = to.join(entry.file_name());
        if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(entry.path()).unwrap(), &target).unwrap();
        } else if kind.is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A fresh repository at `<tmp>/wt` with one commit holding `tree` (may be absent: empty tree).
pub fn repo_from_tree(tmp: &Path, tree: Option<&Path>) -> PathBuf {
    let wt = tmp.join("wt");
    std::fs::create_dir_all(&wt).unwrap();
    git_ok(&wt, &["init", "-q", "-b", "main"]);
    if let Some(tree) = tree.filter(|t| t.exists()) {
        copy_tree(tree, &wt);
    }
    git_ok(&wt, &["add", "-A"]);
    git_ok(&wt, &["commit", "-q", "--allow-empty", "-m", "base"]);
    wt
}

/// git's own apply tests as a corpus (`tests/corpus/git-apply/`, GPL-2.0 test data: see
/// `tests/corpus/NOTICE.md`).
pub fn git_apply_corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("corpus")
        .join("git-apply")
}

pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// The `guard` and `gate` binaries of this workspace, built (`$CARGO build --locked -q -p guard
/// -p gate`, a no-op when fresh) into the target directory and profile of the running test.
pub struct StageBinaries {
    pub guard: PathBuf,
    pub gate: PathBuf,
}

pub fn stage_binaries() -> StageBinaries {
    // target/<profile>/deps/<test>: the binaries go to target/<profile>/.
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(Path::parent).unwrap().to_path_buf();
    let target_dir = profile_dir.parent().unwrap();
    let profile = profile_dir.file_name().unwrap().to_str().unwrap();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| env!("CARGO").into());
    let mut build = Command::new(cargo);
    build
        .args(["build", "--locked", "-q", "-p", "guard", "-p", "gate"])
        .arg("--target-dir")
        .arg(target_dir)
        .env_remove("CARGO_TARGET_DIR")
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    match profile {
        "debug" => {}
        "release" => {
            build.arg("--release");
        }
        other => {
            build.args(["--profile", other]);
        }
    }
    let status = build.status().expect("run cargo build");
    assert!(status.success(), "cargo build of guard and gate failed");
    StageBinaries {
        guard: profile_dir.join("guard"),
        gate: profile_dir.join("gate"),
    }
}
