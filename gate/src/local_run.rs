//! `local-run`: the apply/verify workflow's job graph played on this machine, on a bundled sample.
//!
//! The three jobs of `.github/workflows/agent-team-apply-verify.yml` run in order, and every step
//! that runs a binary of this workspace runs it as a **separate process** with only what the
//! workflow would give it: its own checkout of the base commit (a clone, as `actions/checkout`
//! makes one), the diff bytes from the trusted source (the bundled sample) re-hashed against the
//! dispatcher's hash, and its command-line arguments. The environment of every stage is cleared
//! down to `PATH`, `HOME` and the toolchain locations (`CARGO_HOME`, `RUSTUP_HOME`), with no
//! ambient git configuration; no stage reads a file another job wrote, except that `gate decide`
//! is given `toJSON(needs)` built from the two jobs' real conclusions, as GitHub would.
//!
//! | job | steps (processes) | conclusion |
//! |---|---|---|
//! | `guard` | `guard check --repo <base clone> --format json --verdict-out` | `success` iff it exits 0 |
//! | `build-test` | `guard apply`; `guard verify-tree --out <baseline>`; `guard run --repo <work> --verdict --baseline --baseline-sha256 -- cargo test --offline --locked` (the build contained, and the tree checked by guard run itself once the build is gone); `report build-test` | `skipped` unless `guard` succeeded; else `success` iff every step that ran exited 0 |
//! | `gate-and-pr` | `gate decide --needs <toJSON(needs)> --github-output`; on pass `gate publish-plan` (from its own clone of the base and the diff bytes, never build-test's worktree) and `report check-run` | the decision |
//!
//! Where the workflow calls GitHub, local-run stands in for it and says so: the branch and the
//! `createCommitOnBranch` compare-and-swap are simulated with git plumbing on the local "origin"
//! repository (so the check run gets a real head commit), and the draft pull request is printed,
//! not posted.
//!
//! Steps follow the workflow's conditions: after a failed step the job's later steps are skipped,
//! except the report, which runs whenever the patch was applied (the workflow's
//! `if: !cancelled() && steps.apply.outcome != 'skipped'`).

use std::ffi::{OsStr, OsString};
use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use guard::escape::neutralize;
use guard::hash;
use guard::output::json_v1::VerdictDoc;
use guard::tree::json_v1::VerifyTreeDoc;

use crate::decide::JobResult;
use crate::output::publish_plan_v1::PublishPlanDoc;

/// The declared scope of both samples.
pub const SCOPE: &[&str] = &["src/**", "docs/**", "build.rs"];
/// The jobs `gate decide` requires, in the workflow's `needs:` order.
pub const REQUIRED_JOBS: &[&str] = &["guard", "build-test"];
/// The build/test command build-test runs under `guard run`: the sample crate has no
/// dependencies, and nothing can be fetched inside the sandbox anyway.
pub const BUILD_COMMAND: &[&str] = &["cargo", "test", "--offline", "--locked"];
/// Where the workflow would open the pull request.
pub const BASE_BRANCH: &str = "main";
/// The repository name the plan is written for (`repositoryNameWithOwner`).
pub const REPOSITORY: &str = "local/greeting";

/// The base tree: `fixtures/sample/base/`, embedded so that the command works from any directory.
/// A test compares this list with the directory.
pub const BASE_FILES: &[(&str, &[u8])] = &[
    (
        ".gitignore",
        include_bytes!("../../fixtures/sample/base/.gitignore"),
    ),
    (
        "Cargo.lock",
        include_bytes!("../../fixtures/sample/base/Cargo.lock"),
    ),
    (
        "Cargo.toml",
        include_bytes!("../../fixtures/sample/base/Cargo.toml"),
    ),
    (
        "README.md",
        include_bytes!("../../fixtures/sample/base/README.md"),
    ),
    (
        "src/lib.rs",
        include_bytes!("../../fixtures/sample/base/src/lib.rs"),
    ),
];

/// A bundled candidate diff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sample {
    /// `fixtures/sample/accept.diff`: changes `src/lib.rs` and adds `docs/usage notes.md`.
    Accept,
    /// `fixtures/sample/hook-attack.diff`: adds a `build.rs` (in scope, so `guard check` accepts
    /// it) that writes `.github/workflows/release.yml` when the build runs.
    HookAttack,
    /// `fixtures/sample/unicode-names.diff`: adds `docs/می‌خواهم.md` (Persian, spelled with a ZERO
    /// WIDTH NON-JOINER) and `docs/👨‍👩‍👧.md` (an emoji sequence joined by ZERO WIDTH JOINERs),
    /// which every document must carry exactly.
    UnicodeNames,
}

impl Sample {
    pub const ALL: &'static [Sample] = &[Sample::Accept, Sample::HookAttack, Sample::UnicodeNames];

    pub fn name(self) -> &'static str {
        match self {
            Sample::Accept => "accept",
            Sample::HookAttack => "hook-attack",
            Sample::UnicodeNames => "unicode-names",
        }
    }

    pub fn from_name(name: &str) -> Option<Sample> {
        Sample::ALL.iter().copied().find(|s| s.name() == name)
    }

    pub fn fixture(self) -> &'static str {
        match self {
            Sample::Accept => "fixtures/sample/accept.diff",
            Sample::HookAttack => "fixtures/sample/hook-attack.diff",
            Sample::UnicodeNames => "fixtures/sample/unicode-names.diff",
        }
    }

    pub fn diff(self) -> &'static [u8] {
        match self {
            Sample::Accept => include_bytes!("../../fixtures/sample/accept.diff"),
            Sample::HookAttack => include_bytes!("../../fixtures/sample/hook-attack.diff"),
            Sample::UnicodeNames => include_bytes!("../../fixtures/sample/unicode-names.diff"),
        }
    }

    /// The dispatcher's task id; the branch is `agent-team/<task id>`.
    pub fn task_id(self) -> String {
        format!("local-{}", self.name())
    }
}

/// What local-run was asked to do.
#[derive(Debug, Clone)]
pub struct Options {
    pub sample: Sample,
    /// The stage binaries: `guard`, `gate` and `report`.
    pub binaries: Binaries,
    /// Keep the temporary directory (checkouts, verdicts, reports, plan) and print its path.
    pub keep: bool,
}

/// Where the stage binaries are.
#[derive(Debug, Clone)]
pub struct Binaries {
    pub guard: PathBuf,
    pub gate: PathBuf,
    pub report: PathBuf,
}

impl Binaries {
    /// The three binaries in `dir`, which must all exist.
    pub fn in_dir(dir: &Path) -> Result<Binaries, LocalRunError> {
        let find = |name: &str| {
            let path = dir.join(name);
            if path.is_file() {
                Ok(path)
            } else {
                Err(LocalRunError::Setup(format!(
                    "no `{name}` binary at {}",
                    path.display()
                )))
            }
        };
        Ok(Binaries {
            guard: find("guard")?,
            gate: find("gate")?,
            report: find("report")?,
        })
    }
}

/// How the run ended, when it ran to the end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// `gate decide` passed and the publication was planned.
    pub gate_passed: bool,
    /// Steps that ended in an error rather than a verdict (exit 2, a signal): the run is then not
    /// a verdict on the sample, and local-run exits 2.
    pub errored_steps: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LocalRunError {
    #[error("{0}")]
    Setup(String),
    #[error("{context}: {source}")]
    Io { context: String, source: io::Error },
    #[error("git {args}: {detail}")]
    Git { args: String, detail: String },
    #[error("{0}")]
    Stage(String),
}

fn io_error(context: impl Into<String>) -> impl FnOnce(io::Error) -> LocalRunError {
    let context = context.into();
    move |source| LocalRunError::Io { context, source }
}

/// `toJSON(needs)` as GitHub renders it for a job with `needs: [guard, build-test]` whose
/// dependencies declare no outputs: two-space indentation, keys in `needs:` order.
pub fn needs_json(guard: &JobResult, build_test: &JobResult) -> String {
    let mut out = String::from("{\n");
    let jobs = [(REQUIRED_JOBS[0], guard), (REQUIRED_JOBS[1], build_test)];
    for (i, (job, result)) in jobs.iter().enumerate() {
        let comma = if i + 1 < jobs.len() { "," } else { "" };
        let _ = write!(
            out,
            "  \"{job}\": {{\n    \"result\": \"{}\",\n    \"outputs\": {{}}\n  }}{comma}\n",
            result.as_str()
        );
    }
    out.push('}');
    out
}

/// The single-line and `name<<DELIMITER` multi-line entries of a `$GITHUB_OUTPUT` file, in order.
pub fn parse_github_output(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut entries = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.is_empty() {
            continue;
        }
        if let Some((name, delimiter)) = line.split_once("<<") {
            let mut value = Vec::new();
            loop {
                match lines.next() {
                    Some(l) if l == delimiter => break,
                    Some(l) => value.push(l),
                    None => return Err(format!("output `{name}`: no closing delimiter")),
                }
            }
            entries.push((name.to_owned(), value.join("\n")));
        } else if let Some((name, value)) = line.split_once('=') {
            entries.push((name.to_owned(), value.to_owned()));
        } else {
            return Err(format!("unreadable line {line:?}"));
        }
    }
    Ok(entries)
}

// ---------------------------------------------------------------------------------------------
// Steps and jobs

/// How a step ended.
#[derive(Debug, Clone, PartialEq, Eq)]
enum StepEnd {
    /// Exit code 0 or 1: a verdict.
    Exit(i32),
    /// Any other exit code, or a signal: an error, not a verdict.
    Error(String),
}

impl StepEnd {
    fn ok(&self) -> bool {
        *self == StepEnd::Exit(0)
    }

    fn describe(&self) -> String {
        match self {
            StepEnd::Exit(code) => format!("exit {code}"),
            StepEnd::Error(what) => what.clone(),
        }
    }
}

/// One step that ran, with the evidence it left (rule ids and paths) for the failure summary.
#[derive(Debug, Clone)]
struct StepRecord {
    job: &'static str,
    name: &'static str,
    end: StepEnd,
    evidence: Vec<Evidence>,
}

/// A rule id and what it found (path, change, message, policy entry).
#[derive(Debug, Clone)]
struct Evidence {
    rule: String,
    detail: String,
}

impl Evidence {
    fn render(&self) -> String {
        format!(
            "error[{}]: {}",
            neutralize(&self.rule),
            neutralize(&self.detail)
        )
    }
}

/// Job conclusions and step records of one run.
struct Run<'a> {
    out: &'a mut dyn Write,
    root: PathBuf,
    env: StageEnv,
    bins: Binaries,
    steps: Vec<StepRecord>,
    /// Arguments shown by name rather than by value, as the workflow passes them.
    aliases: Vec<(OsString, &'static str)>,
}

/// The environment every stage process gets: nothing else from local-run's own.
#[derive(Debug, Clone)]
struct StageEnv {
    vars: Vec<(OsString, OsString)>,
}

impl StageEnv {
    fn from_ambient() -> StageEnv {
        let mut vars: Vec<(OsString, OsString)> = Vec::new();
        for name in ["PATH", "HOME", "CARGO_HOME", "RUSTUP_HOME"] {
            if let Some(value) = std::env::var_os(name) {
                vars.push((name.into(), value));
            }
        }
        // The test hook of `guard run` can only take isolation away (see guard::sandbox).
        if let Some(value) = std::env::var_os(guard::sandbox::NamespaceHook::ENV) {
            vars.push((guard::sandbox::NamespaceHook::ENV.into(), value));
        }
        vars.push(("GIT_CONFIG_NOSYSTEM".into(), "1".into()));
        vars.push(("GIT_CONFIG_GLOBAL".into(), "/dev/null".into()));
        StageEnv { vars }
    }
}

impl Run<'_> {
    fn say(&mut self, text: &str) -> Result<(), LocalRunError> {
        self.out
            .write_all(text.as_bytes())
            .and_then(|()| self.out.flush())
            .map_err(io_error("write the output"))
    }

    /// A path under the run's temporary root, shown as `$RUN/...`.
    fn show(&self, path: &Path) -> String {
        match path.strip_prefix(&self.root) {
            Ok(rel) => format!("$RUN/{}", rel.display()),
            Err(_) => path.display().to_string(),
        }
    }

    /// The command line as printed: program file name, arguments with the root shortened.
    fn command_line(&self, program: &Path, args: &[OsString]) -> String {
        let root = self.root.to_string_lossy().into_owned();
        let mut line = program
            .file_name()
            .unwrap_or(program.as_os_str())
            .to_string_lossy()
            .into_owned();
        for arg in args {
            if let Some((_, alias)) = self.aliases.iter().find(|(value, _)| value == arg) {
                line.push(' ');
                line.push_str(alias);
                continue;
            }
            let arg = arg.to_string_lossy().replace(&root, "$RUN");
            line.push(' ');
            if arg.is_empty() || arg.contains([' ', '*', '{', '"', '\'', '\n']) {
                line.push_str(&format!("'{arg}'"));
            } else {
                line.push_str(&arg);
            }
        }
        neutralize(&line)
    }

    /// Runs one stage binary as its own process and prints what it said, indented and escaped.
    fn stage(
        &mut self,
        name: &'static str,
        program: &Path,
        args: Vec<OsString>,
        stdout_to: Option<&Path>,
    ) -> Result<(StepEnd, Output), LocalRunError> {
        let line = self.command_line(program, &args);
        self.say(&format!("  - {name}\n    $ {line}"))?;
        if let Some(path) = stdout_to {
            let shown = self.show(path);
            self.say(&format!(" > {shown}"))?;
        }
        self.say("\n")?;
        let mut cmd = Command::new(program);
        cmd.args(&args)
            .env_clear()
            .envs(self.env.vars.iter().map(|(k, v)| (k, v)))
            .current_dir(&self.root)
            .stdin(Stdio::null());
        let output = cmd
            .output()
            .map_err(io_error(format!("run {}", program.display())))?;
        if let Some(path) = stdout_to {
            std::fs::write(path, &output.stdout)
                .map_err(io_error(format!("write {}", path.display())))?;
        } else {
            self.print_indented(&output.stdout)?;
        }
        self.print_indented(&output.stderr)?;
        let end = match output.status.code() {
            Some(code @ (0 | 1)) => StepEnd::Exit(code),
            Some(code) => StepEnd::Error(format!("exit {code} (an error, not a verdict)")),
            None => StepEnd::Error("killed by a signal".to_owned()),
        };
        self.say(&format!("    -> {}\n", end.describe()))?;
        Ok((end, output))
    }

    fn print_indented(&mut self, bytes: &[u8]) -> Result<(), LocalRunError> {
        let root = self.root.to_string_lossy().into_owned();
        let text = String::from_utf8_lossy(bytes).replace(&root, "$RUN");
        let mut block = String::new();
        for line in text.lines() {
            let _ = writeln!(block, "    {}", neutralize(line));
        }
        self.say(&block)
    }

    fn record(
        &mut self,
        job: &'static str,
        name: &'static str,
        end: &StepEnd,
        evidence: Vec<Evidence>,
    ) {
        self.steps.push(StepRecord {
            job,
            name,
            end: end.clone(),
            evidence,
        });
    }

    /// git for local-run's own plumbing (the dispatcher's base commit, checkouts, the simulated
    /// GitHub side): fixed identity and dates, no ambient configuration.
    fn git(
        &self,
        dir: &Path,
        args: &[&OsStr],
        stdin: Option<&[u8]>,
    ) -> Result<Vec<u8>, LocalRunError> {
        self.git_env(dir, args, stdin, None)
    }

    /// [`Run::git`] with `GIT_INDEX_FILE` set to `index`: plumbing on a throwaway index.
    fn git_env(
        &self,
        dir: &Path,
        args: &[&OsStr],
        stdin: Option<&[u8]>,
        index: Option<&OsStr>,
    ) -> Result<Vec<u8>, LocalRunError> {
        let mut cmd = Command::new("git");
        cmd.env_clear();
        if let Some(index) = index {
            cmd.env("GIT_INDEX_FILE", index);
        }
        if let Some(path) = std::env::var_os("PATH") {
            cmd.env("PATH", path);
        }
        cmd.env("HOME", &self.root)
            .env("LC_ALL", "C")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_AUTHOR_NAME", "agent-team local-run")
            .env("GIT_AUTHOR_EMAIL", "local-run@agent-team.invalid")
            .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
            .env("GIT_COMMITTER_NAME", "agent-team local-run")
            .env("GIT_COMMITTER_EMAIL", "local-run@agent-team.invalid")
            .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
            .args([
                "-c",
                "commit.gpgsign=false",
                "-c",
                "core.hooksPath=/dev/null",
            ])
            .args(args)
            .current_dir(dir)
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let shown = || {
            args.iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        };
        let mut child = cmd.spawn().map_err(|e| LocalRunError::Git {
            args: shown(),
            detail: format!("cannot run git: {e}"),
        })?;
        if let (Some(bytes), Some(mut pipe)) = (stdin, child.stdin.take()) {
            pipe.write_all(bytes).map_err(io_error("write to git"))?;
        }
        let output = child.wait_with_output().map_err(io_error("wait for git"))?;
        if !output.status.success() {
            return Err(LocalRunError::Git {
                args: shown(),
                detail: neutralize(String::from_utf8_lossy(&output.stderr).trim()),
            });
        }
        Ok(output.stdout)
    }

    fn git_text(&self, dir: &Path, args: &[&str]) -> Result<String, LocalRunError> {
        let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
        let out = self.git(dir, &args, None)?;
        Ok(String::from_utf8_lossy(&out).trim().to_owned())
    }

    /// What `actions/checkout` with `ref: <sha>` gives a job: a fresh clone at that commit.
    fn checkout(&self, origin: &Path, dest: &Path, sha: &str) -> Result<(), LocalRunError> {
        let args: [&OsStr; 5] = [
            OsStr::new("clone"),
            OsStr::new("-q"),
            OsStr::new("--no-hardlinks"),
            origin.as_os_str(),
            dest.as_os_str(),
        ];
        self.git(&self.root, &args, None)?;
        self.git_text(dest, &["checkout", "-q", "--detach", sha])?;
        Ok(())
    }

    /// The workflow's "Fetch the diff and re-hash it" step: the bytes from the trusted source,
    /// compared with the dispatcher's hash before any binary sees them.
    fn fetch_diff(
        &mut self,
        dir: &Path,
        diff: &[u8],
        expected: &str,
    ) -> Result<PathBuf, LocalRunError> {
        let path = dir.join("diff.patch");
        std::fs::write(&path, diff).map_err(io_error(format!("write {}", path.display())))?;
        let actual = hash::sha256_hex(diff);
        if actual != expected {
            return Err(LocalRunError::Stage(format!(
                "the diff bytes hash to {actual}, not the expected {expected}"
            )));
        }
        let shown = self.show(&path);
        self.say(&format!(
            "  - fetch the diff and re-hash it\n    {shown}: sha256 {actual} (matches)\n"
        ))?;
        Ok(path)
    }
}

fn os(s: impl AsRef<OsStr>) -> OsString {
    s.as_ref().to_owned()
}

fn scope_args() -> Vec<OsString> {
    SCOPE.iter().flat_map(|g| [os("--scope"), os(g)]).collect()
}

/// `<subcommand> --diff F --expected-sha256 H --scope ... --repo R --base B`: what every stage that
/// re-verifies the diff against a checkout of the base is given.
fn diff_stage_args(
    subcommand: &str,
    diff_file: &Path,
    expected: &str,
    repo: &Path,
    base: &str,
) -> Vec<OsString> {
    let mut args = vec![
        os(subcommand),
        os("--diff"),
        os(diff_file),
        os("--expected-sha256"),
        os(expected),
    ];
    args.extend(scope_args());
    args.extend([os("--repo"), os(repo), os("--base"), os(base)]);
    args
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Option<T> {
    let bytes = std::fs::read(path).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// The rule and `path: message` of each of a verdict's violations.
fn verdict_evidence(verdict: &VerdictDoc) -> Vec<Evidence> {
    verdict
        .violations
        .iter()
        .map(|v| Evidence {
            rule: v.rule.to_string(),
            detail: match &v.path {
                Some(path) => format!("{}: {}", path.display(), v.message),
                None => v.message.clone(),
            },
        })
        .collect()
}

/// The rule and `path (change): message (policy: ...)` of each of a tree check's findings.
fn tree_evidence(doc: &VerifyTreeDoc) -> Vec<Evidence> {
    doc.findings
        .iter()
        .map(|f| {
            let mut detail = format!("{} ({}): {}", f.path.display(), f.change, f.message);
            if let Some(entry) = &f.policy_entry {
                detail.push_str(&format!(" (policy: {entry})"));
            }
            Evidence {
                rule: f.rule.to_string(),
                detail,
            }
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The run

/// Plays the job graph on `opts.sample`, printing as it goes. `Err` is local-run's own failure
/// (the temporary directory, git, an unreadable stage output); a step that fails is part of the
/// outcome.
pub fn run(opts: &Options, out: &mut dyn Write) -> Result<Outcome, LocalRunError> {
    let tmp = tempfile::Builder::new()
        .prefix("agent-team-local-run-")
        .tempdir()
        .map_err(io_error("create a temporary directory"))?;
    let root = tmp
        .path()
        .canonicalize()
        .map_err(io_error("resolve the temporary directory"))?;
    let mut run = Run {
        out,
        root,
        env: StageEnv::from_ambient(),
        bins: opts.binaries.clone(),
        steps: Vec::new(),
        aliases: Vec::new(),
    };
    let result = play(&mut run, opts.sample);
    if opts.keep {
        let kept = tmp.keep();
        run.say(&format!("local-run: kept {}\n", kept.display()))?;
    }
    result
}

fn play(run: &mut Run<'_>, sample: Sample) -> Result<Outcome, LocalRunError> {
    let diff = sample.diff();
    let expected = hash::sha256_hex(diff);
    let task_id = sample.task_id();
    let run_id = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(1)
        .max(1)
        .to_string();
    let root = run.root.clone();

    // The dispatcher: the base commit in the repository ("origin"), the diff's hash, the scope.
    let origin = root.join("origin");
    for (path, bytes) in BASE_FILES {
        let full = origin.join(path);
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent)
                .map_err(io_error(format!("create {}", parent.display())))?;
        }
        std::fs::write(&full, bytes).map_err(io_error(format!("write {}", full.display())))?;
    }
    run.git_text(&origin, &["init", "-q", "-b", BASE_BRANCH])?;
    run.git_text(&origin, &["add", "--all"])?;
    run.git_text(
        &origin,
        &["commit", "-q", "-m", "Sample base for agent-team local-run"],
    )?;
    let base = run.git_text(&origin, &["rev-parse", "HEAD"])?;

    run.say(&format!(
        "local-run: the apply/verify job graph on this machine (guard -> build-test -> gate-and-pr)\n\
         dispatch: sample `{}` ({}, {} bytes)\n  \
         task_id={task_id} base_sha={base} run_id={run_id}\n  \
         expected_diff_sha256={expected}\n  \
         declared_scope={}\n  \
         temporary directory $RUN = {}\n",
        sample.name(),
        sample.fixture(),
        diff.len(),
        SCOPE.join(","),
        root.display(),
    ))?;

    let guard_result = job_guard(run, &origin, &base, diff, &expected)?;
    let build_test_result = if guard_result == JobResult::Success {
        job_build_test(run, &origin, &base, diff, &expected)?
    } else {
        run.say("\njob build-test: skipped (its dependency `guard` did not succeed)\n")?;
        JobResult::Skipped
    };
    let gate_passed = job_gate_and_pr(
        run,
        &GateInputs {
            origin: &origin,
            base: &base,
            diff,
            expected: &expected,
            task_id: &task_id,
            run_id: &run_id,
            guard: guard_result,
            build_test: build_test_result,
        },
    )?;

    let errored_steps: Vec<String> = run
        .steps
        .iter()
        .filter_map(|s| match &s.end {
            StepEnd::Error(what) => Some(format!("{} / {}: {what}", s.job, s.name)),
            StepEnd::Exit(_) => None,
        })
        .collect();
    Ok(Outcome {
        gate_passed,
        errored_steps,
    })
}

fn job_guard(
    run: &mut Run<'_>,
    origin: &Path,
    base: &str,
    diff: &[u8],
    expected: &str,
) -> Result<JobResult, LocalRunError> {
    const JOB: &str = "guard";
    run.say("\njob guard (contents: read; validates the diff as data, never applies it)\n")?;
    let dir = run.root.join(JOB);
    std::fs::create_dir_all(&dir).map_err(io_error(format!("create {}", dir.display())))?;
    let checkout = dir.join("base");
    run.checkout(origin, &checkout, base)?;
    let diff_file = run.fetch_diff(&dir, diff, expected)?;
    let verdict = dir.join("verdict.json");
    let mut args = diff_stage_args("check", &diff_file, expected, &checkout, base);
    args.extend([
        os("--format"),
        os("json"),
        os("--verdict-out"),
        os(&verdict),
    ]);
    let guard = run.bins.guard.clone();
    let (end, _) = run.stage(
        "guard check",
        &guard,
        args,
        Some(&dir.join("check-stdout.json")),
    )?;
    let mut evidence = Vec::new();
    if let Some(doc) = read_json::<VerdictDoc>(&verdict) {
        let mut summary = format!(
            "    verdict: {}, {} file(s), {} violation(s), {}\n",
            doc.verdict,
            doc.files.len(),
            doc.violations.len(),
            doc.mode
        );
        for file in &doc.files {
            let path = file.new_path.as_ref().or(file.old_path.as_ref());
            let _ = writeln!(
                summary,
                "      {:?} {}",
                file.status,
                path.map_or_else(|| "?".to_string(), |p| p.display())
            );
        }
        evidence = verdict_evidence(&doc);
        for item in &evidence {
            let _ = writeln!(summary, "      {}", item.render());
        }
        run.say(&summary)?;
    }
    run.record(JOB, "guard check", &end, evidence);
    let result = if end.ok() {
        JobResult::Success
    } else {
        JobResult::Failure
    };
    run.say(&format!("  job guard: {}\n", result.as_str()))?;
    Ok(result)
}

fn job_build_test(
    run: &mut Run<'_>,
    origin: &Path,
    base: &str,
    diff: &[u8],
    expected: &str,
) -> Result<JobResult, LocalRunError> {
    const JOB: &str = "build-test";
    run.say(
        "\njob build-test (contents: read, no secrets; the only job that applies and runs the patch)\n",
    )?;
    let dir = run.root.join(JOB);
    std::fs::create_dir_all(&dir).map_err(io_error(format!("create {}", dir.display())))?;
    let work = dir.join("work");
    run.checkout(origin, &work, base)?;
    let diff_file = run.fetch_diff(&dir, diff, expected)?;
    let guard = run.bins.guard.clone();
    let report = run.bins.report.clone();
    let verdict = dir.join("verdict.json");
    let baseline = dir.join("tree-baseline.json");
    let tree_after_apply = dir.join("tree-after-apply.json");
    let run_report = dir.join("run.json");
    let tree_after_build = dir.join("tree-after-build.json");
    let mut all_ok = true;

    // Step `apply`: guard apply, then the tree check that writes the baseline.
    let mut args = diff_stage_args("apply", &diff_file, expected, &work, base);
    args.extend([os("--verdict-out"), os(&verdict)]);
    let (end, _) = run.stage("guard apply", &guard, args, None)?;
    let evidence = read_json::<VerdictDoc>(&verdict)
        .map(|d| verdict_evidence(&d))
        .unwrap_or_default();
    run.record(JOB, "guard apply", &end, evidence);
    let mut applied = end.ok();
    let mut baseline_sha256 = String::new();
    if applied {
        let args = vec![
            os("verify-tree"),
            os("--verdict"),
            os(&verdict),
            os("--repo"),
            os(&work),
            os("--base"),
            os(base),
            os("--out"),
            os(&baseline),
            os("--format"),
            os("json"),
        ];
        let (end, _) = run.stage(
            "guard verify-tree (after apply)",
            &guard,
            args,
            Some(&tree_after_apply),
        )?;
        let doc = read_json::<VerifyTreeDoc>(&tree_after_apply);
        let evidence = doc.as_ref().map(tree_evidence).unwrap_or_default();
        print_tree_doc(run, doc.as_ref())?;
        run.record(JOB, "guard verify-tree (after apply)", &end, evidence);
        applied = end.ok();
        if applied {
            let bytes = std::fs::read(&baseline)
                .map_err(io_error(format!("read {}", baseline.display())))?;
            // The workflow pins it in a step output, which the build cannot rewrite.
            baseline_sha256 = hash::sha256_hex(&bytes);
            run.say(&format!("    baseline_sha256={baseline_sha256}\n"))?;
        }
    }
    all_ok &= applied;

    // Step `build`: the patch's code runs here and nowhere else; guard run checks the tree itself
    // once the build is gone, against the baseline pinned above.
    if applied {
        let mut args = vec![
            os("run"),
            os("--repo"),
            os(&work),
            os("--verdict"),
            os(&verdict),
            os("--baseline"),
            os(&baseline),
            os("--baseline-sha256"),
            os(&baseline_sha256),
            os("--tree-report"),
            os(&tree_after_build),
            os("--report"),
            os(&run_report),
            os("--"),
        ];
        args.extend(BUILD_COMMAND.iter().map(os));
        let (mut end, output) = run.stage("guard run", &guard, args.clone(), None)?;
        if isolation_unavailable(&end, &output, &run_report) {
            let reason = "local-run: network namespaces are unavailable on this machine; the bundled \
                          sample has no dependencies and builds --offline. NOTHING isolates the \
                          network of this build";
            run.say(
                "    !!! WARNING: guard run could not create its namespaces on this machine.\n    \
                 !!! Re-running it with --no-isolation-because: the build below runs WITHOUT\n    \
                 !!! network isolation, and nothing else blocks its network here (the workflow\n    \
                 !!! never opts out: there the job fails instead).\n",
            )?;
            let mut retry = vec![os("run"), os("--no-isolation-because"), os(reason)];
            retry.extend(args.into_iter().skip(1));
            end = run
                .stage("guard run (NOT isolated)", &guard, retry, None)?
                .0;
        }
        let doc = read_json::<VerifyTreeDoc>(&tree_after_build);
        let evidence = doc.as_ref().map(tree_evidence).unwrap_or_default();
        print_tree_doc(run, doc.as_ref())?;
        run.record(JOB, "guard run", &end, evidence);
        all_ok &= end.ok();
    } else {
        run.say("  - guard run: skipped (an earlier step failed)\n")?;
    }

    // The report runs whenever the patch was applied, like the workflow's `if:`.
    if applied {
        if run_report.is_file() && tree_after_build.is_file() {
            let args = vec![
                os("build-test"),
                os("--run"),
                os(&run_report),
                os("--tree-before"),
                os(&tree_after_apply),
                os("--tree-after"),
                os(&tree_after_build),
                os("--verdict"),
                os(&verdict),
            ];
            let report_file = dir.join("build-test-report.json");
            let (end, _) = run.stage(
                "report build-test (NOT authoritative)",
                &report,
                args,
                Some(&report_file),
            )?;
            run.record(JOB, "report build-test", &end, Vec::new());
            all_ok &= end.ok();
        } else {
            run.say("  - report build-test: skipped (no run report or tree check to assemble)\n")?;
        }
    }

    let result = if all_ok {
        JobResult::Success
    } else {
        JobResult::Failure
    };
    run.say(&format!("  job build-test: {}\n", result.as_str()))?;
    Ok(result)
}

/// `guard run` exiting 2 without a report because it could not establish its namespaces.
fn isolation_unavailable(end: &StepEnd, output: &Output, report: &Path) -> bool {
    *end == StepEnd::Error("exit 2 (an error, not a verdict)".to_owned())
        && !report.exists()
        && String::from_utf8_lossy(&output.stderr)
            .contains("network isolation could not be established")
}

fn print_tree_doc(run: &mut Run<'_>, doc: Option<&VerifyTreeDoc>) -> Result<(), LocalRunError> {
    let Some(doc) = doc else { return Ok(()) };
    let mut text = format!(
        "    {}: {}, {} entries walked, {} finding(s)\n",
        doc.check,
        doc.result,
        doc.entries,
        doc.findings.len()
    );
    for item in tree_evidence(doc) {
        let _ = writeln!(text, "      {}", item.render());
    }
    run.say(&text)
}

struct GateInputs<'a> {
    origin: &'a Path,
    base: &'a str,
    diff: &'a [u8],
    expected: &'a str,
    task_id: &'a str,
    run_id: &'a str,
    guard: JobResult,
    build_test: JobResult,
}

fn job_gate_and_pr(run: &mut Run<'_>, inputs: &GateInputs<'_>) -> Result<bool, LocalRunError> {
    const JOB: &str = "gate-and-pr";
    run.say(
        "\njob gate-and-pr (if: always(); App token on pass; never checks out or runs the patch)\n",
    )?;
    let dir = run.root.join(JOB);
    std::fs::create_dir_all(&dir).map_err(io_error(format!("create {}", dir.display())))?;
    let trusted = dir.join("trusted");
    run.checkout(inputs.origin, &trusted, inputs.base)?;
    let gate = run.bins.gate.clone();
    let report = run.bins.report.clone();

    let needs = needs_json(&inputs.guard, &inputs.build_test);
    run.aliases.push((os(&needs), "\"$NEEDS_JSON\""));
    let mut shown_needs =
        String::from("  - NEEDS_JSON = toJSON(needs), from the jobs' real conclusions:\n");
    for line in needs.lines() {
        let _ = writeln!(shown_needs, "      {line}");
    }
    run.say(&shown_needs)?;
    let github_output = dir.join("github_output");
    std::fs::write(&github_output, b"").map_err(io_error("create the GITHUB_OUTPUT file"))?;
    let decision = dir.join("decision.json");
    let args = vec![
        os("decide"),
        os("--needs"),
        os(&needs),
        os("--require"),
        os(REQUIRED_JOBS.join(",")),
        os("--run-id"),
        os(inputs.run_id),
        os("--diff-sha256"),
        os(inputs.expected),
        os("--github-output"),
        os(&github_output),
        os("--format"),
        os("json"),
    ];
    let (end, _) = run.stage("gate decide", &gate, args, Some(&decision))?;
    run.record(JOB, "gate decide", &end, Vec::new());
    if let StepEnd::Error(what) = &end {
        return Err(LocalRunError::Stage(format!("gate decide failed: {what}")));
    }
    let text =
        std::fs::read_to_string(&github_output).map_err(io_error("read the GITHUB_OUTPUT file"))?;
    let outputs = parse_github_output(&text)
        .map_err(|e| LocalRunError::Stage(format!("gate decide's GITHUB_OUTPUT: {e}")))?;
    let get = |name: &str| {
        outputs
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    let word = get("gate").unwrap_or_default();
    let reasons = get("reasons").unwrap_or_default();
    let mut shown = format!("    GITHUB_OUTPUT: gate={}\n", neutralize(&word));
    for line in reasons.lines() {
        let _ = writeln!(shown, "    GITHUB_OUTPUT: reasons: {}", neutralize(line));
    }
    run.say(&shown)?;
    let passed = match (word.as_str(), &end) {
        ("pass", StepEnd::Exit(0)) => true,
        ("fail", StepEnd::Exit(1)) => false,
        _ => {
            return Err(LocalRunError::Stage(format!(
                "gate decide exited with {} but wrote gate={word:?}",
                end.describe()
            )));
        }
    };

    if !passed {
        let mut text = format!(
            "\nDECISION: gate=fail (run {}, diff sha256 {})\n",
            inputs.run_id, inputs.expected
        );
        for line in reasons.lines() {
            let _ = writeln!(text, "  reason {}", neutralize(line));
        }
        run.say(&text)?;
        stopped_by(run)?;
        run.say(
            "no publication plan: the job stops at \"Require a pass decision\"; gate publish-plan, \
             the App token, the commit, the check run and the pull request are never reached\n",
        )?;
        return Ok(false);
    }

    // Pass: re-fetch and re-hash the diff from the trusted source, plan from the trusted clone.
    let diff_file = run.fetch_diff(&dir, inputs.diff, inputs.expected)?;
    let plan_file = dir.join("plan.json");
    let branch = format!("agent-team/{}", inputs.task_id);
    let mut args = diff_stage_args(
        "publish-plan",
        &diff_file,
        inputs.expected,
        &trusted,
        inputs.base,
    );
    args.extend([
        os("--branch"),
        os(&branch),
        os("--base-branch"),
        os(BASE_BRANCH),
        os("--repository"),
        os(REPOSITORY),
        os("--task-id"),
        os(inputs.task_id),
        os("--run-id"),
        os(inputs.run_id),
        os("--out"),
        os(&plan_file),
    ]);
    let (end, _) = run.stage("gate publish-plan", &gate, args, None)?;
    run.record(JOB, "gate publish-plan", &end, Vec::new());
    if !end.ok() {
        run.say("\nDECISION: gate=pass, but gate publish-plan refused: no publication plan\n")?;
        return Ok(false);
    }
    let plan_bytes =
        std::fs::read(&plan_file).map_err(io_error(format!("read {}", plan_file.display())))?;
    let plan: PublishPlanDoc = serde_json::from_slice(&plan_bytes)
        .map_err(|e| LocalRunError::Stage(format!("the publication plan is unreadable: {e}")))?;

    // GitHub's side, simulated: the branch at the base, then createCommitOnBranch's CAS.
    let head = simulate_commit_on_branch(run, inputs.origin, &plan)?;

    let check_run_file = dir.join("check-run.json");
    let args = vec![
        os("check-run"),
        os("--decision"),
        os(&decision),
        os("--head-sha"),
        os(&head),
    ];
    let (end, _) = run.stage("report check-run", &report, args, Some(&check_run_file))?;
    run.record(JOB, "report check-run", &end, Vec::new());
    if !end.ok() {
        return Err(LocalRunError::Stage(
            "report check-run could not build the check run body".to_owned(),
        ));
    }
    let check_run: serde_json::Value = read_json(&check_run_file)
        .ok_or_else(|| LocalRunError::Stage("report check-run printed no JSON body".to_owned()))?;
    let field = |pointer: &str| {
        check_run
            .pointer(pointer)
            .and_then(serde_json::Value::as_str)
            .map(neutralize)
            .unwrap_or_default()
    };
    run.say(&format!(
        "    check run: \"{}\" on {}: {} ({})\n",
        field("/name"),
        field("/head_sha"),
        field("/conclusion"),
        field("/output/title"),
    ))?;

    print_plan(run, inputs, &plan, &head)?;
    Ok(true)
}

/// Why the gate failed: the failing steps of the first failed job, with their rule ids and paths.
fn stopped_by(run: &mut Run<'_>) -> Result<(), LocalRunError> {
    let mut text = String::new();
    let failing: Vec<StepRecord> = run
        .steps
        .iter()
        .filter(|s| s.job != "gate-and-pr" && !s.end.ok())
        .cloned()
        .collect();
    for step in &failing {
        let _ = writeln!(
            text,
            "STOPPED BY: job {}, step `{}` ({})",
            step.job,
            step.name,
            step.end.describe()
        );
        for item in &step.evidence {
            let _ = writeln!(text, "  {}", item.render());
        }
    }
    if failing.is_empty() {
        text.push_str("STOPPED BY: the gate's reasons above\n");
    }
    run.say(&text)
}

/// Stands in for the GitHub API the workflow calls with the App token: `POST git/refs` (the branch
/// at the base commit), then `createCommitOnBranch` with the plan's input — a compare-and-swap on
/// `expectedHeadOid`, building the commit's tree from the base tree plus the plan's file changes.
/// Returns the new head commit.
fn simulate_commit_on_branch(
    run: &mut Run<'_>,
    origin: &Path,
    plan: &PublishPlanDoc,
) -> Result<String, LocalRunError> {
    let input = &plan.input;
    let branch_ref = format!("refs/heads/{}", input.branch.branch_name);
    // Create only: the empty old value makes update-ref fail when the branch exists.
    run.git_text(
        origin,
        &["update-ref", &branch_ref, &input.expected_head_oid, ""],
    )?;
    let head = run.git_text(origin, &["rev-parse", "--verify", &branch_ref])?;
    if head != input.expected_head_oid {
        return Err(LocalRunError::Stage(format!(
            "simulated createCommitOnBranch: the branch is at {head}, not expectedHeadOid {}",
            input.expected_head_oid
        )));
    }
    let index = run.root.join("simulated-github.index");
    let index_env = index.as_os_str().to_owned();
    let with_index = |run: &Run<'_>, args: &[&str], stdin: Option<&[u8]>| {
        let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
        run.git_env(origin, &args, stdin, Some(&index_env))
    };
    with_index(run, &["read-tree", &input.expected_head_oid], None)?;
    let mut index_info = Vec::new();
    for addition in &input.file_changes.additions {
        let contents = BASE64.decode(&addition.contents).map_err(|e| {
            LocalRunError::Stage(format!("plan: contents of {}: {e}", addition.path))
        })?;
        let oid = run.git(
            origin,
            &[
                OsStr::new("hash-object"),
                OsStr::new("-w"),
                OsStr::new("--stdin"),
            ],
            Some(&contents),
        )?;
        let oid = String::from_utf8_lossy(&oid).trim().to_owned();
        index_info.extend_from_slice(format!("100644 {oid}\t{}\0", addition.path).as_bytes());
    }
    for deletion in &input.file_changes.deletions {
        index_info
            .extend_from_slice(format!("0 {}\t{}\0", "0".repeat(40), deletion.path).as_bytes());
    }
    with_index(
        run,
        &["update-index", "-z", "--index-info"],
        Some(&index_info),
    )?;
    let tree = String::from_utf8_lossy(&with_index(run, &["write-tree"], None)?)
        .trim()
        .to_owned();
    let message = format!("{}\n\n{}", input.message.headline, input.message.body);
    let commit = run.git(
        origin,
        &[
            OsStr::new("commit-tree"),
            OsStr::new(&tree),
            OsStr::new("-p"),
            OsStr::new(&input.expected_head_oid),
            OsStr::new("-F"),
            OsStr::new("-"),
        ],
        Some(message.as_bytes()),
    )?;
    let commit = String::from_utf8_lossy(&commit).trim().to_owned();
    run.git_text(
        origin,
        &["update-ref", &branch_ref, &commit, &input.expected_head_oid],
    )?;
    run.say(&format!(
        "  - simulated GitHub (local stand-in for the App-token API calls)\n    \
         POST git/refs: {} at {}\n    \
         createCommitOnBranch(expectedHeadOid {}): commit {commit}, tree {tree}\n",
        neutralize(&branch_ref),
        input.expected_head_oid,
        input.expected_head_oid,
    ))?;
    Ok(commit)
}

fn print_plan(
    run: &mut Run<'_>,
    inputs: &GateInputs<'_>,
    plan: &PublishPlanDoc,
    head: &str,
) -> Result<(), LocalRunError> {
    let input = &plan.input;
    let mut text = format!(
        "\nDECISION: gate=pass (run {}, diff sha256 {})\n\nPUBLICATION PLAN ({})\n",
        inputs.run_id, inputs.expected, plan.schema
    );
    let _ = writeln!(
        text,
        "  repository:      {}",
        neutralize(
            input
                .branch
                .repository_name_with_owner
                .as_deref()
                .unwrap_or("(not set)")
        )
    );
    let _ = writeln!(
        text,
        "  branch:          {}",
        neutralize(&input.branch.branch_name)
    );
    let _ = writeln!(text, "  expectedHeadOid: {}", input.expected_head_oid);
    let _ = writeln!(text, "  files:");
    for addition in &input.file_changes.additions {
        let _ = writeln!(text, "    add/modify {}", neutralize(&addition.path));
    }
    for deletion in &input.file_changes.deletions {
        let _ = writeln!(text, "    delete     {}", neutralize(&deletion.path));
    }
    let _ = writeln!(
        text,
        "  commit headline: {}",
        neutralize(&input.message.headline)
    );
    let _ = writeln!(text, "  head after the commit (simulated): {head}");
    let pr = &plan.pull_request;
    let _ = writeln!(
        text,
        "\nDRAFT PULL REQUEST it would open (POST /repos/{REPOSITORY}/pulls, draft: {}, {} <- {}):",
        pr.draft,
        neutralize(&pr.base),
        neutralize(&pr.head)
    );
    let _ = writeln!(text, "  title: {}", neutralize(&pr.title));
    let _ = writeln!(text, "  body:");
    for line in pr.body.lines() {
        let _ = writeln!(text, "  | {}", neutralize(line));
    }
    run.say(&text)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use crate::decide::decide;

    #[test]
    fn needs_json_is_what_the_gate_reads() {
        let text = needs_json(&JobResult::Success, &JobResult::Skipped);
        assert_eq!(
            text,
            "{\n  \"guard\": {\n    \"result\": \"success\",\n    \"outputs\": {}\n  },\n  \
             \"build-test\": {\n    \"result\": \"skipped\",\n    \"outputs\": {}\n  }\n}"
        );
        let sha = "a".repeat(64);
        let fail = decide(text.as_bytes(), REQUIRED_JOBS, "7", &sha);
        assert!(!fail.pass());
        let ok = needs_json(&JobResult::Success, &JobResult::Success);
        assert!(decide(ok.as_bytes(), REQUIRED_JOBS, "7", &sha).pass());
    }

    #[test]
    fn github_output_entries() {
        let text = "gate=fail\nreasons<<EOF_1\na: b\nc: d\nEOF_1\nempty<<X\nX\n";
        assert_eq!(
            parse_github_output(text).unwrap(),
            vec![
                ("gate".to_owned(), "fail".to_owned()),
                ("reasons".to_owned(), "a: b\nc: d".to_owned()),
                ("empty".to_owned(), String::new()),
            ]
        );
        assert!(parse_github_output("reasons<<EOF\nnever closed\n").is_err());
        assert!(parse_github_output("no separator\n").is_err());
    }

    #[test]
    fn embedded_base_is_the_fixture_directory() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/sample/base");
        let mut on_disk = Vec::new();
        let mut stack = vec![dir.clone()];
        while let Some(d) = stack.pop() {
            for entry in std::fs::read_dir(&d).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else {
                    let rel = path
                        .strip_prefix(&dir)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned();
                    on_disk.push((rel, std::fs::read(&path).unwrap()));
                }
            }
        }
        on_disk.sort();
        let embedded: Vec<(String, Vec<u8>)> = BASE_FILES
            .iter()
            .map(|(p, b)| ((*p).to_owned(), b.to_vec()))
            .collect();
        assert_eq!(embedded, on_disk);
    }

    #[test]
    fn samples_are_the_fixture_files() {
        for sample in Sample::ALL {
            let path = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("..")
                .join(sample.fixture());
            assert_eq!(std::fs::read(path).unwrap(), sample.diff());
            assert_eq!(Sample::from_name(sample.name()), Some(*sample));
        }
    }
}
