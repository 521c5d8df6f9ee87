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
//! The tree is generated once per size, on `/dev/shm` when that is a memory file system (tmpfs),
//! else under the system's temporary directory (`AFTER_BUILD_TMP` to put it elsewhere; the
//! output names the directory, its file system and the load average), and every row
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

/// A generated worktree of `entries` entries (directories and files) besides `.git`, committed:
/// the distinct contents are written as blobs once (`git hash-object -w --stdin-paths`), every
/// file is staged from its blob's id (`git update-index --index-info`), then `git write-tree`,
/// `git commit-tree` and `git update-ref`: the same loose objects, index entries and commit as
/// `git add -A && git commit`, without git reading the million files again.
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
    let distinct = files.min(1000);
    let samples: Vec<String> = (0..distinct)
        .map(|f| format!("d{:04}/f{f:07}.txt\n", f % dirs))
        .collect();
    let ids = run_with_input(
        git(root).args(["hash-object", "-w", "--stdin-paths"]),
        samples.concat().into_bytes(),
    );
    let ids: Vec<&str> = std::str::from_utf8(&ids).unwrap().lines().collect();
    assert_eq!(ids.len(), distinct);
    let mut info = String::with_capacity(files * 70);
    for f in 0..files {
        info.push_str(&format!(
            "100644 {}\td{:04}/f{f:07}.txt\n",
            ids[f % 1000],
            f % dirs
        ));
    }
    run_with_input(
        git(root).args(["update-index", "--add", "--index-info"]),
        info.into_bytes(),
    );
    let tree = run_ok(git(root).args(["write-tree"]));
    let tree = String::from_utf8(tree).unwrap();
    let commit = run_ok(git(root).args(["commit-tree", tree.trim(), "-m", "base"]));
    let commit = String::from_utf8(commit).unwrap();
    run_ok(git(root).args(["update-ref", "HEAD", commit.trim()]));
}

/// `cmd`'s output, given `input` on its standard input; it must succeed.
fn run_with_input(cmd: &mut std::process::Command, input: Vec<u8>) -> Vec<u8> {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&input).unwrap());
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(out.status.success(), "{cmd:?} failed");
    out.stdout
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
    // Only this path: the index holds no stat data, and git would read every file to compare.
    let diff = run_ok(git(&dir).args(["diff", "--", "d0000/f0000000.txt"]));
    run_ok(git(&dir).args(["checkout", "-q", "--", "d0000/f0000000.txt"]));
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
    // Nothing of this size is kept for the next: one `rm -rf`.
    let started = Instant::now();
    run_ok(std::process::Command::new("rm").arg("-rf").arg(&dir));
    println!("removed in {:.1} s", secs(started));
    rows
}

/// The type of the file system `path` is on (the longest mount point of `/proc/mounts` that
/// holds it).
fn file_system_of(path: &Path) -> Option<String> {
    let path = path.canonicalize().ok()?;
    let mounts = std::fs::read_to_string("/proc/mounts").ok()?;
    mounts
        .lines()
        .filter_map(|l| {
            let mut fields = l.split(' ');
            let (_, point, kind) = (fields.next()?, fields.next()?, fields.next()?);
            path.starts_with(point)
                .then(|| (point.len(), kind.to_string()))
        })
        .max_by_key(|(len, _)| *len)
        .map(|(_, kind)| kind)
}

/// The first three fields of `/proc/loadavg`.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split(' ').take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let sizes = support::arg_list(&args, "--entries", &[4000, 1_000_000]);
    let runs = support::arg(&args, "--runs", 5).max(1);
    let large_runs = support::arg(&args, "--large-runs", 3).max(1);
    let stray = support::arg(&args, "--stray", 100);
    let guard = env!("CARGO_BIN_EXE_guard");
    // A memory file system when there is one: the trees are written and removed in seconds
    // rather than minutes, and the walk reads from memory either way once they are generated.
    let shm = Path::new("/dev/shm");
    let tmp = match std::env::var_os("AFTER_BUILD_TMP") {
        Some(dir) => tempfile::tempdir_in(dir).unwrap(),
        None if file_system_of(shm).as_deref() == Some("tmpfs") => {
            tempfile::tempdir_in(shm).unwrap()
        }
        None => tempfile::tempdir().unwrap(),
    };
    println!(
        "trees under {} (file system {}); load average {}",
        tmp.path().display(),
        file_system_of(tmp.path()).unwrap_or_else(|| "unknown".into()),
        load_average()
    );
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
    println!("load average at the end {}", load_average());
}
