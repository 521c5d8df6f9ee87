//! The whole path of an accepted diff (`guard apply`, `guard verify-tree`, `gate publish-plan`)
//! against git applying the same diff to an index and writing its tree, side by side.
//!
//! Run: `cargo build --release --locked -p guard && cargo bench --locked -p gate --bench
//! whole_path` (optionally `-- --files 4000 --lines 90 --runs 5`). `guard` is the release build
//! beside gate's own binary (`target/release/guard`), or `WHOLE_PATH_GUARD`.
//!
//! The input is guard's `versus_git` volume: a temporary repository of `--files` text files, every
//! line of each rewritten, the diff taken with `git diff` (about 36 MB for the defaults). Rows,
//! each run after run in turn (medians of `--runs`):
//!
//! - `git apply --cached` + `git write-tree`, the baseline: the index read from the base
//!   (`git read-tree`, untimed) into a fresh index and object directory on the disk beside the
//!   repository (the repository's objects as alternates), git's default settings;
//! - `guard apply --verdict-out` (the full check with its git cross-check, then `git apply` of
//!   the worktree), the worktree reset to the base before it, untimed;
//! - `guard verify-tree --out` on the tree `guard apply` left (the baseline of the build);
//! - `gate publish-plan --out` on the base checkout (the check again, the diff applied to a
//!   throwaway index, the tree and the plan);
//! - `git apply --check`, for the scale of the other benches;
//!
//! - the floor of the cross-check, as in `versus_git`: `git read-tree` of the base into a
//!   throwaway index, then `git apply --cached` with a throwaway object directory on tmpfs and
//!   the guard's settings, both timed (an empty index and object directory before each run,
//!   untimed).
//!
//! A last line sums the three steps of the path.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

#[path = "../../guard/benches/support/mod.rs"]
mod support;

use support::{Timed, git, measure_with, rows_of, run_ok};

fn guard_binary() -> PathBuf {
    let path = match std::env::var_os("WHOLE_PATH_GUARD") {
        Some(path) => PathBuf::from(path),
        None => Path::new(env!("CARGO_BIN_EXE_gate")).with_file_name("guard"),
    };
    assert!(
        path.is_file(),
        "no guard binary at {}: run `cargo build --release --locked -p guard` first, or set \
         WHOLE_PATH_GUARD",
        path.display()
    );
    path
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let files = support::arg(&args, "--files", 4000);
    let lines = support::arg(&args, "--lines", 90);
    let runs = support::arg(&args, "--runs", 5).max(1);
    let guard = guard_binary();
    let gate = env!("CARGO_BIN_EXE_gate");

    let tmp = tempfile::tempdir().unwrap();
    let volume = support::volume(tmp.path(), files, lines);
    let repo = &volume.repo;
    let base = String::from_utf8(run_ok(git(repo).args(["rev-parse", "HEAD"])))
        .unwrap()
        .trim()
        .to_owned();
    let path_of = |name: &str| tmp.path().join(name).to_str().unwrap().to_owned();
    let (verdict, snapshot, plan, scratch) = (
        path_of("verdict.json"),
        path_of("snapshot.json"),
        path_of("plan.json"),
        tmp.path().join("git-scratch"),
    );
    let repo_arg = repo.to_str().unwrap();
    let diff_arg = volume.diff.to_str().unwrap();
    let guard_arg = guard.to_str().unwrap();
    println!(
        "volume: {:.1} MB diff, {files} files; {runs} runs each, medians; guard {}",
        volume.bytes as f64 / 1e6,
        guard.display()
    );

    // git's own path: apply to a fresh index, write the tree (objects into a fresh directory,
    // so that every run writes them all).
    let git_script = format!(
        "export GIT_INDEX_FILE={s}/index GIT_OBJECT_DIRECTORY={s}/objects \
         GIT_ALTERNATE_OBJECT_DIRECTORIES={repo_arg}/.git/objects; \
         git apply --cached \"$1\" && git write-tree",
        s = scratch.display()
    );
    let floor = support::Floor::new(repo, tmp.path());
    let cmds: Vec<Timed<'_>> = vec![
        (
            "git apply --cached + git write-tree (baseline)".into(),
            0,
            vec!["sh", "-c", &git_script, "sh", diff_arg],
        ),
        (
            "guard apply".into(),
            0,
            vec![
                guard_arg,
                "apply",
                "--diff",
                diff_arg,
                "--expected-sha256",
                &volume.sha256,
                "--scope",
                "src/**",
                "--repo",
                repo_arg,
                "--base",
                &base,
                "--verdict-out",
                &verdict,
            ],
        ),
        (
            "guard verify-tree --out".into(),
            0,
            vec![
                guard_arg,
                "verify-tree",
                "--verdict",
                &verdict,
                "--repo",
                repo_arg,
                "--base",
                &base,
                "--out",
                &snapshot,
            ],
        ),
        (
            "gate publish-plan".into(),
            0,
            vec![
                gate,
                "publish-plan",
                "--repo",
                repo_arg,
                "--base",
                &base,
                "--diff",
                diff_arg,
                "--expected-sha256",
                &volume.sha256,
                "--branch",
                "agent-team-apply/bench",
                "--base-branch",
                "main",
                "--repository",
                "octo-org/bench",
                "--scope",
                "src/**",
                "--out",
                &plan,
            ],
        ),
        (
            "git apply --check".into(),
            0,
            vec!["git", "apply", "--check", diff_arg],
        ),
        (
            "floor: read-tree + apply --cached, guard's".into(),
            0,
            floor.argv(diff_arg),
        ),
    ];
    let (baseline_row, apply_row, plan_row, floor_row) = (0, 1, 3, 5);
    let samples = measure_with(&cmds, runs, repo, &mut |i| {
        if i == baseline_row {
            if scratch.exists() {
                std::fs::remove_dir_all(&scratch).unwrap();
            }
            std::fs::create_dir_all(scratch.join("objects")).unwrap();
            run_ok(
                git(repo)
                    .env("GIT_INDEX_FILE", scratch.join("index"))
                    .args(["read-tree", "HEAD"]),
            );
        }
        if i == floor_row {
            floor.reset();
        }
        if i == apply_row || i == plan_row {
            // The worktree at the base, as `guard apply` requires and the trusted checkout is.
            run_ok(git(repo).args(["checkout", "-q", "--", "."]));
        }
    });
    let rows = rows_of(cmds, samples);
    support::print_table("whole path", "git", &rows);
    let path_wall: f64 = rows[1..=3].iter().map(|(_, (wall, _, _))| wall).sum();
    let path_cpu: f64 = rows[1..=3].iter().map(|(_, (_, _, cpu))| cpu).sum();
    let (git_wall, _, git_cpu) = rows[0].1;
    println!(
        "whole path (guard apply + guard verify-tree + gate publish-plan, sum of medians): \
         {path_wall:.3} s wall, {:.2}× git apply --cached + git write-tree; {path_cpu:.2} s CPU, \
         {:.2}×",
        path_wall / git_wall.max(0.001),
        path_cpu / git_cpu.max(0.001)
    );
}
