//! The check after the build (`guard verify-tree --after-build`: walk the real tree, hash again
//! what the baseline hashed, compare) against `find` listing the same tree, side by side.
//!
//! Run: `cargo bench -p guard --bench after_build` (optionally
//! `-- --entries 4000,1000000 --runs 5 --large-runs 3 --stray 100`).
//!
//! For each `--entries` N, a temporary repository whose worktree holds N entries besides `.git`
//! (N/1000 directories `dNNNN/` of at most 999 files each; at most 1,000 distinct contents, so
//! `.git` stays small), committed, then a one-line diff to `d0000/` applied with `guard apply`
//! and the baseline written with `guard verify-tree --out` (each timed once, printed as setup).
//! The tree is generated once per size, on the disk under the system's temporary directory
//! (`AFTER_BUILD_TMP` to put it elsewhere; it is not a memory file system here), and every row
//! reuses it. Rows, each run after run in turn (medians of `--runs`, or `--large-runs` from
//! 100,000 entries):
//!
//! - `find <dir> -printf '%p %m %U %G %s\n' > /dev/null`, the baseline: every entry's path, mode,
//!   owner, group and size, `.git` included, as the guard's walk reads them (without the content);
//! - `guard verify-tree --after-build` where the build changed nothing (exit 0);
//! - the same where the build added `--stray` files out of scope (`extra/`; exit 1, one
//!   `build-wrote` finding each): the directory is moved into the worktree before this row and
//!   out again after it, untimed.
//!
//! Each command runs under `/usr/bin/time`; the table shows the median wall time (monotonic
//! clock), peak RSS and CPU, each also as a ratio of find's in the same run.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::time::Instant;

mod support;

use support::{Row, Timed, git, measure_with, rows_of, run_ok};

/// Files per directory: a directory and its files are at most 1,000 entries.
const PER_DIR: usize = 999;

/// A generated worktree of `entries` entries (directories and files) besides `.git`, committed.
fn generate(root: &Path, entries: usize) {
    let dirs = entries.div_ceil(PER_DIR + 1).max(1);
    let files = entries - dirs;
    std::fs::create_dir_all(root).unwrap();
    for d in 0..dirs {
        std::fs::create_dir(root.join(format!("d{d:04}"))).unwrap();
    }
    for f in 0..files {
        let path = root.join(format!("d{:04}/f{f:07}.txt", f % dirs));
        std::fs::write(
            path,
            format!("entry {:03} of the generated tree\n", f % 1000),
        )
        .unwrap();
    }
    run_ok(git(root).args(["init", "-q"]));
    run_ok(git(root).args(["add", "-A"]));
    run_ok(git(root).args(["commit", "-q", "-m", "base"]));
}

/// The text after `prefix` on a line of `out`.
fn line_after(out: &[u8], prefix: &str) -> String {
    String::from_utf8_lossy(out)
        .lines()
        .find_map(|l| l.strip_prefix(prefix).map(str::to_owned))
        .unwrap()
}

fn secs(since: Instant) -> f64 {
    since.elapsed().as_secs_f64()
}

/// The rows of one tree size.
fn rows_for(guard: &str, entries: usize, runs: usize, stray: usize, tmp: &Path) -> Vec<Row> {
    let dir = tmp.join(format!("tree-{entries}"));
    let started = Instant::now();
    generate(&dir, entries);
    let generated = secs(started);

    // A one-line change in scope, applied and verified: the baseline the build starts from.
    let first = dir.join("d0000/f0000000.txt");
    std::fs::write(&first, "entry 000 of the generated tree, edited\n").unwrap();
    let diff = run_ok(git(&dir).args(["diff"]));
    run_ok(git(&dir).args(["checkout", "-q", "--", "."]));
    let diff_path = tmp.join(format!("change-{entries}.diff"));
    std::fs::write(&diff_path, &diff).unwrap();
    let sha = guard::hash::sha256_hex(&diff);
    let verdict = tmp.join(format!("verdict-{entries}.json"));
    let baseline = tmp.join(format!("baseline-{entries}.json"));
    let max_entries = (2 * entries + 10_000).to_string();
    let [dir_arg, diff_arg, verdict_arg, baseline_arg] =
        [&dir, &diff_path, &verdict, &baseline].map(|p| p.to_str().unwrap().to_owned());
    let started = Instant::now();
    run_ok(std::process::Command::new(guard).args([
        "apply",
        "--diff",
        &diff_arg,
        "--expected-sha256",
        &sha,
        "--scope",
        "d0000/**",
        "--repo",
        &dir_arg,
        "--base",
        "HEAD",
        "--verdict-out",
        &verdict_arg,
    ]));
    let applied = secs(started);
    let started = Instant::now();
    let out = run_ok(std::process::Command::new(guard).args([
        "verify-tree",
        "--verdict",
        &verdict_arg,
        "--repo",
        &dir_arg,
        "--base",
        "HEAD",
        "--out",
        &baseline_arg,
        "--max-entries",
        &max_entries,
    ]));
    let verified = secs(started);
    let baseline_sha = line_after(&out, "snapshot written, sha256 ");
    let baseline_bytes = std::fs::metadata(&baseline).unwrap().len();

    // What the second build adds: `stray` files outside the scope, moved in and out by rename.
    let extra_out = tmp.join(format!("extra-{entries}"));
    std::fs::create_dir(&extra_out).unwrap();
    for i in 0..stray {
        std::fs::write(extra_out.join(format!("out-{i:04}.txt")), "stray\n").unwrap();
    }
    let extra_in = dir.join("extra");

    println!(
        "\n{entries} entries besides .git: generated and committed in {generated:.1} s; guard apply \
         {applied:.1} s; guard verify-tree --out {verified:.1} s (baseline {:.1} MB); {runs} runs \
         each, medians",
        baseline_bytes as f64 / 1e6
    );
    let after_build = vec![
        guard,
        "verify-tree",
        "--after-build",
        "--baseline",
        &baseline_arg,
        "--baseline-sha256",
        &baseline_sha,
        "--verdict",
        &verdict_arg,
        "--repo",
        &dir_arg,
        "--max-entries",
        &max_entries,
    ];
    let cmds: Vec<Timed<'_>> = vec![
        (
            "find -printf '%p %m %U %G %s\\n' (baseline)".into(),
            0,
            vec!["find", &dir_arg, "-printf", "%p %m %U %G %s\n"],
        ),
        (
            "guard verify-tree --after-build, unchanged".into(),
            0,
            after_build.clone(),
        ),
        (
            format!("… the build added {stray} files out of scope"),
            1,
            after_build,
        ),
    ];
    let stray_row = 2;
    let samples = measure_with(&cmds, runs, &dir, &mut |i| {
        if i == stray_row {
            std::fs::rename(&extra_out, &extra_in).unwrap();
        } else if extra_in.exists() {
            std::fs::rename(&extra_in, &extra_out).unwrap();
        }
    });
    if extra_in.exists() {
        std::fs::rename(&extra_in, &extra_out).unwrap();
    }
    let rows = rows_of(cmds, samples);
    support::print_table(&format!("after build: {entries} entries"), "find", &rows);
    // Nothing of this size is kept for the next (removing a million files takes minutes).
    std::fs::remove_dir_all(&dir).unwrap();
    rows
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let sizes = support::arg_list(&args, "--entries", &[4000, 1_000_000]);
    let runs = support::arg(&args, "--runs", 5).max(1);
    let large_runs = support::arg(&args, "--large-runs", 3).max(1);
    let stray = support::arg(&args, "--stray", 100);
    let guard = env!("CARGO_BIN_EXE_guard");
    let tmp = match std::env::var_os("AFTER_BUILD_TMP") {
        Some(dir) => tempfile::tempdir_in(dir).unwrap(),
        None => tempfile::tempdir().unwrap(),
    };
    println!("trees under {}", tmp.path().display());
    let mut summary = Vec::new();
    for entries in sizes {
        let runs = if entries >= 100_000 { large_runs } else { runs };
        let rows = rows_for(guard, entries, runs, stray, tmp.path());
        summary.push((entries, rows));
    }
    println!("\nsummary (× find of the same tree, medians: wall, peak RSS):");
    for (entries, rows) in &summary {
        let (wall, kib, _) = rows[0].1;
        let line: Vec<String> = rows
            .iter()
            .skip(1)
            .map(|(label, (w, k, _))| {
                format!(
                    "{label} {:.2}, {:.2}",
                    w / wall.max(0.001),
                    *k as f64 / kib.max(1) as f64
                )
            })
            .collect();
        println!("  {entries} entries: {}", line.join("; "));
    }
}
