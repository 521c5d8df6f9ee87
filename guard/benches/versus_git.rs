//! `guard check` against `git apply --check` on the same generated diff, side by side.
//!
//! Run: `cargo bench -p guard --bench versus_git` (optionally
//! `-- --files 4000 --lines 90 --runs 5 --shape-runs 3`). With `VERSUS_GIT_BASELINE` set to
//! another build of `guard` (say, the previous release profile's), every table has its two rows
//! too, measured in the same run, so two builds are compared on one machine's load.
//!
//! 1. **Volume.** A temporary repository of `--files` text files, every line of each rewritten,
//!    the diff taken with `git diff` (about 36 MB for the defaults). Rows: `git apply --check`
//!    (the baseline), `guard check` parser-only, `guard check --repo` (the git cross-check), git's
//!    floor for the cross-check (`git read-tree` of the base into a throwaway index, then
//!    `git apply --cached` with a throwaway object directory on tmpfs and the guard's settings,
//!    both timed, run in the same rounds just before `--repo`), and `git apply --cached` alone
//!    (measured apart, `read-tree` untimed) to show how much of the cross-check is git writing
//!    objects.
//! 2. **Path shapes** (`--shape-runs` each), each diff against a repository with one file, each
//!    row a ratio of `git apply --check` on the same diff: *deep*, one path of 20,000 components
//!    (rejected: too long); *long*, 300 files with 4,089-byte paths of 2,045 components (rejected:
//!    over `limits.path-components`, so git is never asked); *many*, 2,000 files with paths of
//!    about 3,900 bytes in 121 components, within every limit (accepted).
//!
//! Each command runs under `/usr/bin/time`, the commands of one table in turn, run after run (so a
//! change in the machine's load falls on all of them alike); the table shows the median wall time
//! (monotonic clock), peak RSS and CPU, each also as a ratio of git's in the same run, and a last
//! line `ratios` sums up the wall ratios; a closing `summary` puts the volume's ratios beside
//! their targets and lists every path shape's parser-only and `--repo` ratios. Targets: parser-only
//! ≤ 0.3× git's wall time and ≤ 1× its peak memory; with the git cross-check (`--repo`) ≤ 1.15×
//! git's floor, the median of the ratios of the paired runs (each round's `--repo` over the floor
//! run just before it); every path shape linear (no row grows with the square of path depth).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::process::Command;

mod support;

use support::{Row, Timed, git, measure_apply_cached, rows_of, run_ok};

fn arg(args: &[String], name: &str, default: usize) -> usize {
    support::arg(args, name, default)
}

fn print_table(title: &str, rows: &[Row]) {
    support::print_table(title, "git", rows);
}

/// A repository with one committed file, for diffs that only add files.
fn small_repo(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    run_ok(git(dir).args(["init", "-q"]));
    std::fs::write(dir.join("README"), "base\n").unwrap();
    run_ok(git(dir).args(["add", "-A"]));
    run_ok(git(dir).args(["commit", "-q", "-m", "base"]));
}

/// A diff creating each of `paths` with one line.
fn creation_diff(paths: &[String]) -> Vec<u8> {
    let mut out = String::new();
    for p in paths {
        out.push_str(&format!(
            "diff --git a/{p} b/{p}\nnew file mode 100644\nindex 0000000..587be6b\n--- /dev/null\n+++ b/{p}\n@@ -0,0 +1 @@\n+x\n"
        ));
    }
    out.into_bytes()
}

/// What one comparison runs on.
struct Inputs<'a> {
    /// The builds of `guard` compared: a label and the binary.
    guards: &'a [(&'a str, &'a str)],
    diff: &'a str,
    sha: &'a str,
    scope: &'a str,
    repo: &'a Path,
}

/// `git apply --check`, then for each build `guard check` parser-only and `guard check --repo` on
/// one diff, each required to exit with its code: the rows of a table, git's first. With a
/// `floor`, git's floor for the cross-check runs in the same rounds, just before each build's
/// `--repo` (its own row, after the builds'), and each build's `--repo` is also returned as the
/// median of its round-by-round ratios to the floor.
fn side_by_side(
    inputs: &Inputs<'_>,
    runs: usize,
    git_code: i32,
    guard_code: i32,
    floor: Option<&support::Floor>,
) -> (Vec<Row>, Vec<(String, f64)>) {
    let repo = inputs.repo;
    let repo_arg = repo.to_str().unwrap();
    let mut cmds: Vec<Timed<'_>> = vec![(
        "git apply --check (baseline)".into(),
        git_code,
        vec!["git", "apply", "--check", inputs.diff],
    )];
    let mut pairs = Vec::new();
    for &(name, guard) in inputs.guards {
        let check_args = vec![
            guard,
            "check",
            "--diff",
            inputs.diff,
            "--expected-sha256",
            inputs.sha,
            "--scope",
            inputs.scope,
        ];
        let mut cross_args = check_args.clone();
        cross_args.extend(["--repo", repo_arg]);
        cmds.push((
            format!("{name}guard check, parser-only"),
            guard_code,
            check_args,
        ));
        if let Some(floor) = floor {
            cmds.push((FLOOR_LABEL.into(), 0, floor.argv(inputs.diff)));
        }
        pairs.push((cmds.len(), cmds.len().saturating_sub(1)));
        cmds.push((format!("{name}guard check --repo"), guard_code, cross_args));
    }
    let floor_rows: Vec<usize> = (0..cmds.len())
        .filter(|&i| floor.is_some() && cmds[i].0 == FLOOR_LABEL)
        .collect();
    let rounds = support::measure_rounds(&cmds, runs, repo, &mut |i| {
        if let Some(floor) = floor.filter(|_| floor_rows.contains(&i)) {
            floor.reset();
        }
    });
    let mut to_floor = Vec::new();
    if floor.is_some() {
        for &(cross, floor_row) in &pairs {
            to_floor.push((
                cmds[cross].0.clone(),
                support::paired_wall_ratio(&rounds[cross], &rounds[floor_row]),
            ));
        }
    }
    // One floor row, after the builds': the samples of every build's floor run together.
    let mut floor_samples = Vec::new();
    let mut kept_cmds = Vec::new();
    let mut kept_samples = Vec::new();
    for (cmd, samples) in cmds.into_iter().zip(rounds) {
        if floor.is_some() && cmd.0 == FLOOR_LABEL {
            floor_samples.extend(samples);
        } else {
            kept_cmds.push(cmd);
            kept_samples.push(support::medians(&samples));
        }
    }
    let mut rows = rows_of(kept_cmds, kept_samples);
    if !floor_samples.is_empty() {
        rows.push((FLOOR_LABEL.into(), support::medians(&floor_samples)));
    }
    (rows, to_floor)
}

/// The label of git's floor for the cross-check.
const FLOOR_LABEL: &str = "floor: read-tree + apply --cached, guard's";

/// The rows of one path shape: git's check, then the guard parser-only and with `--repo`.
fn shape_rows(
    name: &str,
    paths: &[String],
    guard_code: i32,
    runs: usize,
    tmp: &Path,
    guards: &[(&str, &str)],
) -> Vec<Row> {
    let repo = tmp.join(format!("shape-{name}"));
    small_repo(&repo);
    let diff = creation_diff(paths);
    let diff_path = tmp.join(format!("shape-{name}.diff"));
    std::fs::write(&diff_path, &diff).unwrap();
    let sha = guard::hash::sha256_hex(&diff);
    let diff_arg = diff_path.to_str().unwrap();
    // git itself refuses the deepest path (it cannot stat it); its exit code is whatever it is,
    // recorded once and then required of every run.
    let git_code = Command::new("git")
        .args(["apply", "--check", diff_arg])
        .current_dir(&repo)
        .output()
        .unwrap()
        .status
        .code()
        .unwrap_or(-1);
    let (rows, _) = side_by_side(
        &Inputs {
            guards,
            diff: diff_arg,
            sha: &sha,
            scope: "**",
            repo: &repo,
        },
        runs,
        git_code,
        guard_code,
        None,
    );
    println!(
        "shape {name}: {} files, diff {:.1} MB, longest path {} bytes, git apply --check exit {git_code}",
        paths.len(),
        diff.len() as f64 / 1e6,
        paths.iter().map(String::len).max().unwrap_or(0)
    );
    rows.into_iter()
        .map(|(label, sample)| (format!("{name}: {label}"), sample))
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let files = arg(&args, "--files", 4000);
    let lines = arg(&args, "--lines", 90);
    let runs = arg(&args, "--runs", 5).max(1);
    let shape_runs = arg(&args, "--shape-runs", 3).max(1);
    let baseline = std::env::var("VERSUS_GIT_BASELINE").ok();
    let mut guards = vec![("", env!("CARGO_BIN_EXE_guard"))];
    if let Some(path) = baseline.as_deref() {
        guards.push(("baseline ", path));
    }

    let tmp = tempfile::tempdir().unwrap();
    let volume = support::volume(tmp.path(), files, lines);
    let repo = volume.repo;
    let diff_path = volume.diff;
    let sha = volume.sha256;
    let diff_arg = diff_path.to_str().unwrap();
    println!(
        "volume: {:.1} MB diff, {files} files; {runs} runs each, medians; path shapes: {shape_runs} runs each",
        volume.bytes as f64 / 1e6
    );

    let floor = support::Floor::new(&repo, tmp.path());
    let (mut rows, to_floor) = side_by_side(
        &Inputs {
            guards: &guards,
            diff: diff_arg,
            sha: &sha,
            scope: "src/**",
            repo: &repo,
        },
        runs,
        0,
        0,
        Some(&floor),
    );
    let apply_cached = measure_apply_cached(runs, &repo, &diff_path, tmp.path());
    rows.push((
        "git apply --cached alone, throwaway index".into(),
        apply_cached,
    ));
    print_table("volume", &rows);

    // Path shapes: deep, long, many.
    let deep = vec![format!("{}x", "a/".repeat(20_000))];
    let long: Vec<String> = (0..300)
        .map(|i| {
            let name = format!("f{i:03}");
            let dirs = "a/".repeat((4089 - name.len()) / 2);
            format!("{dirs}{name}")
        })
        .collect();
    let many: Vec<String> = (0..2000)
        .map(|i| {
            let dirs: String = (0..120)
                .map(|d| format!("dir{d:03}-{}/", "p".repeat(24)))
                .collect();
            format!("{dirs}file-{i:05}.txt")
        })
        .collect();
    let mut shapes = Vec::new();
    for (name, paths, code) in [("deep", &deep, 1), ("long", &long, 1), ("many", &many, 0)] {
        let shape = shape_rows(name, paths, code, shape_runs, tmp.path(), &guards);
        print_table(&format!("path shape: {name}"), &shape);
        shapes.push((name, shape));
    }
    print_summary(&rows, &to_floor, &shapes);
}

/// The wall ratio of each row to its table's first (git's) row, by label.
fn wall_ratios(rows: &[Row]) -> Vec<(&str, f64)> {
    let base = rows
        .first()
        .map_or(0.001, |(_, (wall, _, _))| wall.max(0.001));
    rows.iter()
        .skip(1)
        .map(|(label, (wall, _, _))| (label.as_str(), wall / base))
        .collect()
}

/// One line against the targets: the volume's rows against `git apply --check` (parser-only
/// ≤ 0.3×), each build's `--repo` against git's floor (≤ 1.15×, paired runs), then every path
/// shape's parser-only and `--repo`.
fn print_summary(volume: &[Row], to_floor: &[(String, f64)], shapes: &[(&str, Vec<Row>)]) {
    let verdict = |ratio: f64, target: f64| if ratio <= target { "met" } else { "NOT met" };
    println!("\nsummary (wall × git apply --check of the same table, medians):");
    for (label, ratio) in wall_ratios(volume) {
        let target = if label.ends_with("guard check, parser-only") {
            Some(0.3)
        } else {
            None
        };
        match target {
            Some(t) => println!(
                "  volume {label}: {ratio:.2} (target ≤ {t}: {})",
                verdict(ratio, t)
            ),
            None => println!("  volume {label}: {ratio:.2}"),
        }
    }
    println!(
        "summary against git's floor for the cross-check (git read-tree + git apply --cached, \
         guard's settings, tmpfs; median of the ratios of paired runs, each round's floor run \
         just before the --repo run):"
    );
    for (label, ratio) in to_floor {
        println!(
            "  volume {label}: {ratio:.2}× the floor (target ≤ 1.15: {})",
            verdict(*ratio, 1.15)
        );
    }
    for (name, rows) in shapes {
        let line: Vec<String> = wall_ratios(rows)
            .into_iter()
            .map(|(label, ratio)| {
                let label = label.strip_prefix(&format!("{name}: ")).unwrap_or(label);
                format!("{label} {ratio:.2}")
            })
            .collect();
        println!("  shape {name}: {}", line.join("; "));
    }
}
