//! What the benches share: timing a command under `/usr/bin/time`, medians over rounds, the table
//! of ratios against a baseline measured in the same run, and the generated volume repository.
//!
//! Included by each bench with `#[path = "<relative path to>/guard/benches/support/mod.rs"] mod
//! support;` (guard's benches and gate's); each uses part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

// The repositories are set up with the tests' git command; the timed runs start git the way a
// user would (under /usr/bin/time, with only the system and global configuration turned off),
// which is the baseline measured.
#[path = "../../../tests/support/git.rs"]
pub mod git_support;

pub use git_support::git;

pub fn run_ok(cmd: &mut Command) -> Vec<u8> {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The value after `name` on the command line, or `default`.
pub fn arg(args: &[String], name: &str, default: usize) -> usize {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The comma-separated values after `name` (`--entries 4000,1000000`), or `default`.
pub fn arg_list(args: &[String], name: &str, default: &[usize]) -> Vec<usize> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(|v| {
            v.split(',')
                .map(|n| n.trim().replace('_', "").parse().unwrap())
                .collect()
        })
        .unwrap_or_else(|| default.to_vec())
}

/// Median wall seconds, peak RSS (KiB) and CPU seconds of one command.
pub type Sample = (f64, u64, f64);

/// One timed command: a label, the exit code it must end with, its arguments.
pub type Timed<'a> = (String, i32, Vec<&'a str>);

/// One row: a label and its (wall, peak KiB, cpu) medians.
pub type Row = (String, Sample);

/// Wall seconds, peak RSS (KiB) and CPU seconds (user + system) of one run of `cmd`; asserts the
/// exit status.
pub fn run_once(label: &str, expect_code: i32, cmd: &[&str], dir: &Path) -> Sample {
    let mut timed = Command::new("/usr/bin/time");
    timed
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null");
    time_command(label, expect_code, &mut timed, cmd)
}

/// `timed` (a `/usr/bin/time` command with its directory and environment set) run on `cmd`:
/// wall seconds from a monotonic clock (`time` prints only hundredths of a second), and from
/// `time`, peak RSS (KiB; of the largest process, children included) and CPU seconds (user +
/// system, children included). The command's output goes to `/dev/null`; asserts the exit status.
pub fn time_command(label: &str, expect_code: i32, timed: &mut Command, cmd: &[&str]) -> Sample {
    let started = std::time::Instant::now();
    let out = timed
        .args(["-f", "BENCH %e %M %U %S"])
        .args(cmd)
        .stdout(Stdio::null())
        .output()
        .unwrap();
    let wall = started.elapsed().as_secs_f64();
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
    (wall, fields[1] as u64, fields[2] + fields[3])
}

/// The medians of each command over `runs` rounds, each round running every command once, in turn.
pub fn measure_all(cmds: &[Timed<'_>], runs: usize, dir: &Path) -> Vec<Sample> {
    measure_with(cmds, runs, dir, &mut |_| {})
}

/// [`measure_all`], with `prepare(i)` run (untimed) before command `i` of every round, to put the
/// tree in the state that command is measured on.
pub fn measure_with(
    cmds: &[Timed<'_>],
    runs: usize,
    dir: &Path,
    prepare: &mut dyn FnMut(usize),
) -> Vec<Sample> {
    measure_rounds(cmds, runs, dir, prepare)
        .iter()
        .map(|s| medians(s))
        .collect()
}

/// [`measure_with`], keeping every round's sample of each command (round `r` of command `i` is
/// `[i][r]`), for ratios taken round by round.
pub fn measure_rounds(
    cmds: &[Timed<'_>],
    runs: usize,
    dir: &Path,
    prepare: &mut dyn FnMut(usize),
) -> Vec<Vec<Sample>> {
    let mut samples: Vec<Vec<Sample>> = vec![Vec::new(); cmds.len()];
    for _ in 0..runs {
        for (i, ((label, code, argv), out)) in cmds.iter().zip(&mut samples).enumerate() {
            prepare(i);
            out.push(run_once(label, *code, argv, dir));
        }
    }
    samples
}

/// The median of the round-by-round wall ratios `num[r] / den[r]` (commands run in the same
/// rounds, so each ratio is of two runs under the same load).
pub fn paired_wall_ratio(num: &[Sample], den: &[Sample]) -> f64 {
    let mut ratios: Vec<f64> = num
        .iter()
        .zip(den)
        .map(|(n, d)| n.0 / d.0.max(0.001))
        .collect();
    ratios.sort_by(f64::total_cmp);
    ratios[ratios.len() / 2]
}

/// git's floor for the cross-check, as one timed command: `git read-tree` of `HEAD` into a
/// throwaway index, then `git apply --cached` of the diff, with a throwaway object directory on
/// tmpfs (`/dev/shm` when there is one), the repository's objects as alternates and the guard's
/// settings (its `-c` options, `GLIBC_TUNABLES`, `LC_ALL=C`). Both git commands are timed, with
/// the `sh` that runs them; [`Floor::reset`] (untimed) gives every run an empty index and object
/// directory.
pub struct Floor {
    scratch: PathBuf,
    script: String,
}

impl Floor {
    pub fn new(repo: &Path, tmp: &Path) -> Floor {
        let shm = Path::new("/dev/shm");
        let root = if shm.is_dir() { shm } else { tmp };
        let scratch = root.join(format!("bench-floor-{}", std::process::id()));
        let mut config = String::new();
        for setting in [
            "core.protectNTFS=true",
            "core.protectHFS=true",
            "core.quotePath=true",
        ]
        .iter()
        .chain(guard::git::THROWAWAY_CONFIG)
        {
            config.push_str(&format!(" -c '{setting}'"));
        }
        let script = format!(
            "export LC_ALL=C GIT_INDEX_FILE='{s}/index' GIT_OBJECT_DIRECTORY='{s}/objects' \
             GIT_ALTERNATE_OBJECT_DIRECTORIES='{objects}' GLIBC_TUNABLES='{malloc}'; \
             git{config} read-tree HEAD && \
             exec git{config} -c apply.whitespace=nowarn apply --cached \"$1\"",
            s = scratch.display(),
            objects = repo.join(".git/objects").display(),
            malloc = guard::git::THROWAWAY_MALLOC,
        );
        Floor { scratch, script }
    }

    /// The command line of one run on `diff`.
    pub fn argv<'a>(&'a self, diff: &'a str) -> Vec<&'a str> {
        vec!["sh", "-c", &self.script, "sh", diff]
    }

    /// An empty index and object directory for the next run.
    pub fn reset(&self) {
        if self.scratch.exists() {
            std::fs::remove_dir_all(&self.scratch).unwrap();
        }
        std::fs::create_dir_all(self.scratch.join("objects")).unwrap();
    }
}

impl Drop for Floor {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.scratch);
    }
}

/// The labels of `cmds` beside their medians: the rows of a table.
pub fn rows_of(cmds: Vec<Timed<'_>>, samples: Vec<Sample>) -> Vec<Row> {
    cmds.into_iter()
        .zip(samples)
        .map(|((label, _, _), sample)| (label, sample))
        .collect()
}

pub fn medians(samples: &[Sample]) -> Sample {
    let mut walls: Vec<f64> = samples.iter().map(|s| s.0).collect();
    let mut rss: Vec<u64> = samples.iter().map(|s| s.1).collect();
    let mut cpu: Vec<f64> = samples.iter().map(|s| s.2).collect();
    walls.sort_by(f64::total_cmp);
    cpu.sort_by(f64::total_cmp);
    rss.sort_unstable();
    let mid = samples.len() / 2;
    (walls[mid], rss[mid], cpu[mid])
}

/// The table of `rows`, each also as a ratio of the first row (the baseline, called `base` in the
/// headers), and a last line `ratios` of the wall ratios.
pub fn print_table(title: &str, base: &str, rows: &[Row]) {
    let (base_wall, base_kib, base_cpu) = rows[0].1;
    let ratios: Vec<String> = rows
        .iter()
        .skip(1)
        .map(|(label, (wall, _, _))| format!("{label} {:.2}", wall / base_wall.max(0.001)))
        .collect();
    let (wall_h, mem_h, cpu_h) = (
        format!("wall ×{base}"),
        format!("mem ×{base}"),
        format!("cpu ×{base}"),
    );
    println!("\n{title}");
    println!(
        "{:<46} {:>8} {:>9} {:>8} {:>10} {:>9} {:>9}",
        "command", "wall s", "peak MiB", "cpu s", wall_h, mem_h, cpu_h
    );
    for (label, (wall, kib, cpu)) in rows {
        println!(
            "{label:<46} {wall:>8.3} {:>9.1} {cpu:>8.2} {:>10.2} {:>9.2} {:>9.2}",
            *kib as f64 / 1024.0,
            wall / base_wall.max(0.001),
            *kib as f64 / base_kib.max(1) as f64,
            cpu / base_cpu.max(0.001)
        );
    }
    println!("ratios ({title}, wall ×{base}): {}", ratios.join("; "));
}

fn file_text(file: usize, lines: usize, version: &str) -> String {
    (0..lines)
        .map(|l| format!("{version} line {l:04} of module {file:05}: lorem ipsum dolor\n"))
        .collect()
}

/// The volume diff: a repository of `files` text files of `lines` lines under `src/mNN/`, one
/// commit, and the `git diff` that rewrites every line of every file (the worktree is left at
/// the base).
pub struct Volume {
    pub repo: PathBuf,
    pub diff: PathBuf,
    pub sha256: String,
    pub bytes: usize,
}

pub fn volume(tmp: &Path, files: usize, lines: usize) -> Volume {
    let repo = tmp.join("repo");
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
    let diff_path = tmp.join("candidate.diff");
    std::fs::write(&diff_path, &diff).unwrap();
    Volume {
        repo,
        diff: diff_path,
        sha256: guard::hash::sha256_hex(&diff),
        bytes: diff.len(),
    }
}

/// The cross-check's own git step, alone: a throwaway index and object directory set up as the
/// guard does (`read-tree` of the base, then `git apply --cached` with the same settings), timed
/// around `git apply --cached` only.
pub fn measure_apply_cached(runs: usize, repo: &Path, diff: &Path, tmp: &Path) -> Sample {
    let objects = repo.join(".git/objects");
    // Where the guard puts its throwaway index: a memory file system when there is one.
    let shm = Path::new("/dev/shm");
    let root = if shm.is_dir() { shm } else { tmp };
    let mut samples = Vec::new();
    for i in 0..runs {
        let scratch = root.join(format!("versus-git-cached-{}-{i}", std::process::id()));
        std::fs::create_dir_all(scratch.join("objects")).unwrap();
        let with_env = |cmd: &mut Command| {
            cmd.current_dir(repo)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .env("GIT_INDEX_FILE", scratch.join("index"))
                .env("GIT_OBJECT_DIRECTORY", scratch.join("objects"))
                .env("GIT_ALTERNATE_OBJECT_DIRECTORIES", &objects)
                .env("GLIBC_TUNABLES", guard::git::THROWAWAY_MALLOC);
        };
        let mut read_tree = Command::new("git");
        with_env(&mut read_tree);
        run_ok(read_tree.args(["read-tree", "HEAD"]));
        let mut args = vec!["git"];
        for setting in guard::git::THROWAWAY_CONFIG {
            args.extend(["-c", setting]);
        }
        args.extend([
            "-c",
            "apply.whitespace=nowarn",
            "apply",
            "--cached",
            diff.to_str().unwrap(),
        ]);
        let mut timed = Command::new("/usr/bin/time");
        with_env(&mut timed);
        samples.push(time_command(
            "git apply --cached alone",
            0,
            &mut timed,
            &args,
        ));
        std::fs::remove_dir_all(&scratch).unwrap();
    }
    medians(&samples)
}
