//! `guard check` against `git apply --check` on the same generated diff, side by side.
//!
//! Run: `cargo bench -p guard --bench versus_git` (optionally `-- --files 4000 --lines 90 --runs 5`).
//! It builds a temporary repository of `--files` text files, rewrites every line of each, takes the
//! diff with `git diff` (about 36 MB for the defaults), then times each command `--runs` times with
//! `/usr/bin/time` and prints the median wall time and peak RSS, and each figure as a ratio of git's.
//! Targets: parser-only ≤ 0.5× git's wall time and ≤ 1× its peak memory; with the git cross-check
//! (`--repo`) ≤ 1.5× git's wall time.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::process::Command;

fn git(dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "bench")
        .env("GIT_AUTHOR_EMAIL", "bench@example.invalid")
        .env("GIT_COMMITTER_NAME", "bench")
        .env("GIT_COMMITTER_EMAIL", "bench@example.invalid");
    cmd
}

fn run_ok(cmd: &mut Command) -> Vec<u8> {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn file_text(file: usize, lines: usize, version: &str) -> String {
    (0..lines)
        .map(|l| format!("{version} line {l:04} of module {file:05}: lorem ipsum dolor\n"))
        .collect()
}

/// Median wall seconds, peak RSS (KiB) and CPU seconds (user + system) of `cmd` over `runs`
/// runs; asserts the exit status.
fn measure(
    label: &str,
    runs: usize,
    expect_code: i32,
    cmd: &[&str],
    dir: &Path,
) -> (f64, u64, f64) {
    let (mut walls, mut rss, mut cpu) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        let started = std::time::Instant::now();
        let out = Command::new("/usr/bin/time")
            .args(["-f", "BENCH %e %M %U %S"])
            .args(cmd)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let code = out.status.code().unwrap_or(-1);
        assert_eq!(
            code, expect_code,
            "{label}: unexpected exit {code}: {stderr}"
        );
        let line = stderr
            .lines()
            .rev()
            .find(|l| l.starts_with("BENCH "))
            .unwrap();
        let fields: Vec<f64> = line
            .split_whitespace()
            .skip(1)
            .map(|f| f.parse().unwrap())
            .collect();
        // Wall time from a monotonic clock (`time` prints only hundredths of a second).
        walls.push(started.elapsed().as_secs_f64());
        rss.push(fields[1] as u64);
        cpu.push(fields[2] + fields[3]);
    }
    for v in [&mut walls, &mut cpu] {
        v.sort_by(f64::total_cmp);
    }
    rss.sort_unstable();
    (walls[runs / 2], rss[runs / 2], cpu[runs / 2])
}

fn arg(args: &[String], name: &str, default: usize) -> usize {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let files = arg(&args, "--files", 4000);
    let lines = arg(&args, "--lines", 90);
    let runs = arg(&args, "--runs", 5).max(1);
    let guard = env!("CARGO_BIN_EXE_guard");

    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    run_ok(git(&repo).args(["init", "-q"]));
    for f in 0..files {
        let dir = repo.join(format!("src/m{:02}", f % 50));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("f{f:05}.txt")), file_text(f, lines, "old")).unwrap();
    }
    run_ok(git(&repo).args(["add", "-A"]));
    run_ok(git(&repo).args(["commit", "-q", "-m", "base"]));
    for f in 0..files {
        let path = repo.join(format!("src/m{:02}/f{f:05}.txt", f % 50));
        std::fs::write(path, file_text(f, lines, "new")).unwrap();
    }
    let diff = run_ok(git(&repo).args(["diff"]));
    run_ok(git(&repo).args(["checkout", "-q", "--", "."]));
    let diff_path = tmp.path().join("candidate.diff");
    std::fs::write(&diff_path, &diff).unwrap();
    let sha = guard::hash::sha256_hex(&diff);
    let diff_arg = diff_path.to_str().unwrap();
    let repo_arg = repo.to_str().unwrap();
    println!(
        "diff: {:.1} MB, {files} files, {runs} runs each, medians",
        diff.len() as f64 / 1e6
    );

    let git_check = measure(
        "git apply --check",
        runs,
        0,
        &["git", "apply", "--check", diff_arg],
        &repo,
    );
    let check_args = [
        guard,
        "check",
        "--diff",
        diff_arg,
        "--expected-sha256",
        &sha,
        "--scope",
        "src/**",
    ];
    let parser_only = measure("guard check (parser-only)", runs, 0, &check_args, &repo);
    let cross_args: Vec<&str> = check_args
        .iter()
        .copied()
        .chain(["--repo", repo_arg])
        .collect();
    let cross = measure("guard check --repo", runs, 0, &cross_args, &repo);
    println!(
        "{:<34} {:>8} {:>9} {:>8} {:>10} {:>9} {:>9}",
        "command", "wall s", "peak MiB", "cpu s", "wall ×git", "mem ×git", "cpu ×git"
    );
    for (label, (wall, kib, cpu)) in [
        ("git apply --check (baseline)", git_check),
        ("guard check, parser-only", parser_only),
        ("guard check --repo (cross-check)", cross),
    ] {
        println!(
            "{label:<34} {wall:>8.3} {:>9.1} {cpu:>8.2} {:>10.2} {:>9.2} {:>9.2}",
            kib as f64 / 1024.0,
            wall / git_check.0.max(0.001),
            kib as f64 / git_check.1.max(1) as f64,
            cpu / git_check.2.max(0.001)
        );
    }
}
