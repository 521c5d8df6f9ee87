//! The stage runner: every step of the workflow that runs one of the installed binaries runs it
//! here as a **separate process**, from the install directory, with the environment a workflow
//! step would have (cleared down to `PATH`, `HOME`, the toolchain locations and the workflow's own
//! variables; no ambient git configuration). Each stage's command line, exit code and evidence
//! (rule ids and paths) are recorded: they are printed as the run goes, and each job's record
//! becomes its log on the simulated GitHub.
//!
//! The stages come from one table, [`STAGES`]: job, step name, program, subcommand and the set of
//! flags the workflow's step passes. [`Runner::stage`] refuses an invocation whose flags are not
//! that set, and a test reads `.github/workflows/agent-team-apply-verify.yml` and checks each
//! entry against the step of that name.

use std::collections::BTreeSet;
use std::ffi::{OsStr, OsString};
use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use guard::escape::neutralize;

use crate::LocalRunError;

/// One step of the workflow that runs an installed binary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StageSpec {
    /// The job (`jobs.<id>`).
    pub job: &'static str,
    /// The step's `name:`.
    pub step: &'static str,
    /// `guard`, `gate` or `report`, as installed under `/opt/agent-team/bin`.
    pub program: &'static str,
    pub subcommand: &'static str,
    /// Every flag the step passes (long names), each once whatever its repetitions.
    pub flags: &'static [&'static str],
}

/// `guard inputs` opens every job.
pub const VALIDATE_INPUTS: &str = "Validate inputs";

const fn inputs(job: &'static str) -> StageSpec {
    StageSpec {
        job,
        step: VALIDATE_INPUTS,
        program: "guard",
        subcommand: "inputs",
        flags: &[],
    }
}

pub const GUARD_INPUTS: StageSpec = inputs("guard");
pub const GUARD_CHECK: StageSpec = StageSpec {
    job: "guard",
    step: "Validate the diff as data",
    program: "guard",
    subcommand: "check",
    flags: &[
        "--diff",
        "--expected-sha256",
        "--declared-scope",
        "--policy",
        "--repo",
        "--base",
        "--format",
    ],
};
const READINESS_FLAGS: &[&str] = &[
    "--repo",
    "--base",
    "--branch",
    "--default-head",
    "--base-branch",
    "--repository",
    "--policy",
    "--format",
];
pub const GUARD_READINESS: StageSpec = StageSpec {
    job: "guard",
    step: "Check the repository's own workflows (the second execution)",
    program: "guard",
    subcommand: "readiness",
    flags: READINESS_FLAGS,
};
pub const PUBLISH_READINESS: StageSpec = StageSpec {
    job: "publish",
    step: "Check the repository's own workflows again, before the publication",
    program: "guard",
    subcommand: "readiness",
    flags: READINESS_FLAGS,
};
pub const BUILD_TEST_INPUTS: StageSpec = inputs("build-test");
const APPLY_STEP: &str = "Apply the diff and verify the tree";
pub const GUARD_APPLY: StageSpec = StageSpec {
    job: "build-test",
    step: APPLY_STEP,
    program: "guard",
    subcommand: "apply",
    flags: &[
        "--diff",
        "--expected-sha256",
        "--declared-scope",
        "--policy",
        "--repo",
        "--base",
        "--verdict-out",
    ],
};
pub const GUARD_VERIFY_TREE: StageSpec = StageSpec {
    job: "build-test",
    step: APPLY_STEP,
    program: "guard",
    subcommand: "verify-tree",
    flags: &["--verdict", "--repo", "--base", "--out", "--format"],
};
pub const GUARD_RUN: StageSpec = StageSpec {
    job: "build-test",
    step: "Build and test the patched tree, then check what it wrote",
    program: "guard",
    subcommand: "run",
    flags: &[
        "--repo",
        "--read-only",
        "--allow-env",
        "--policy",
        "--verdict",
        "--baseline",
        "--baseline-sha256",
        "--tree-report",
        "--timeout",
        "--max-output",
        "--write-budget-bytes",
        "--write-budget-inodes",
        "--report",
    ],
};
pub const REPORT_BUILD_TEST: StageSpec = StageSpec {
    job: "build-test",
    step: "Assemble the non-authoritative report",
    program: "report",
    subcommand: "build-test",
    flags: &["--run", "--tree-before", "--tree-after", "--verdict"],
};
pub const DECIDE_INPUTS: StageSpec = inputs("decide");
const DECIDE_FLAGS: &[&str] = &[
    "--needs",
    "--require",
    "--run-id",
    "--diff-sha256",
    "--github-output",
    "--format",
];
pub const GATE_DECIDE: StageSpec = StageSpec {
    job: "decide",
    step: "Decide from the upstream job results",
    program: "gate",
    subcommand: "decide",
    flags: DECIDE_FLAGS,
};
pub const PUBLISH_INPUTS: StageSpec = inputs("publish");
pub const GATE_REDECIDE: StageSpec = StageSpec {
    job: "publish",
    step: "Decide again from the upstream job results",
    program: "gate",
    subcommand: "decide",
    flags: DECIDE_FLAGS,
};
const VERIFY_DISPATCH_FLAGS: &[&str] = &[
    "--repository",
    "--ref",
    "--task-id",
    "--base",
    "--diff-sha256",
    "--declared-scope",
    "--workflow-ref",
    "--pr-title",
    "--pr-description",
    "--revise",
    "--mac",
];
/// guard checks the signature first, before any other work, and a replay (`--run-id`).
pub const GUARD_VERIFY_DISPATCH: StageSpec = StageSpec {
    job: "guard",
    step: "Verify the dispatcher's signature",
    program: "gate",
    subcommand: "verify-dispatch",
    flags: &[
        "--repository",
        "--ref",
        "--task-id",
        "--base",
        "--diff-sha256",
        "--declared-scope",
        "--workflow-ref",
        "--pr-title",
        "--pr-description",
        "--revise",
        "--run-id",
        "--run-attempt",
        "--mac",
    ],
};
pub const GATE_VERIFY_DISPATCH: StageSpec = StageSpec {
    job: "publish",
    step: "Verify the dispatcher's signature",
    program: "gate",
    subcommand: "verify-dispatch",
    flags: VERIFY_DISPATCH_FLAGS,
};
pub const GATE_PUBLISH_PLAN: StageSpec = StageSpec {
    job: "publish",
    step: "Plan the publication",
    program: "gate",
    subcommand: "publish-plan",
    flags: &[
        "--repo",
        "--base",
        "--diff",
        "--expected-sha256",
        "--branch",
        "--base-branch",
        "--repository",
        "--task-id",
        "--run-id",
        "--dispatch-nonce",
        "--pr-title",
        "--pr-description",
        "--revise",
        "--policy",
        "--scope",
        "--out",
        "--verdict-out",
    ],
};
pub const GATE_PUBLISH: StageSpec = StageSpec {
    job: "publish",
    step: "Publish, prove the tree, open the draft pull request, post the check run",
    program: "gate",
    subcommand: "publish",
    flags: &[
        "--plan",
        "--repository",
        "--branch",
        "--base",
        "--base-branch",
        "--decision",
        "--verdict",
        "--run-attempt",
        "--check-name",
        "--protected-label",
        "--protected-reviewers",
        "--details-url",
        "--revise",
        "--out",
    ],
};

/// Every stage local-run plays, in the order the workflow runs them.
pub const STAGES: &[StageSpec] = &[
    GUARD_INPUTS,
    GUARD_VERIFY_DISPATCH,
    GUARD_CHECK,
    GUARD_READINESS,
    BUILD_TEST_INPUTS,
    GUARD_APPLY,
    GUARD_VERIFY_TREE,
    GUARD_RUN,
    REPORT_BUILD_TEST,
    DECIDE_INPUTS,
    GATE_DECIDE,
    PUBLISH_INPUTS,
    GATE_REDECIDE,
    GATE_VERIFY_DISPATCH,
    GATE_PUBLISH_PLAN,
    PUBLISH_READINESS,
    GATE_PUBLISH,
];

/// The workflow file the table follows, relative to the workspace.
pub const WORKFLOW: &str = ".github/workflows/agent-team-apply-verify.yml";

/// How a stage ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepEnd {
    /// Exit code 0 or 1: a verdict.
    Exit(i32),
    /// Any other exit code, or a signal: an error, not a verdict.
    Error(String),
}

impl StepEnd {
    pub fn ok(&self) -> bool {
        *self == StepEnd::Exit(0)
    }

    pub fn describe(&self) -> String {
        match self {
            StepEnd::Exit(code) => format!("exit {code}"),
            StepEnd::Error(what) => what.clone(),
        }
    }
}

/// A rule id and what it found (path, change, message, policy entry).
#[derive(Debug, Clone)]
pub struct Evidence {
    pub rule: String,
    pub detail: String,
}

impl Evidence {
    pub fn render(&self) -> String {
        format!(
            "error[{}]: {}",
            neutralize(&self.rule),
            neutralize(&self.detail)
        )
    }
}

/// One stage that ran.
#[derive(Debug, Clone)]
pub struct StageRecord {
    pub job: &'static str,
    pub step: &'static str,
    /// As printed: program name, arguments with the temporary root shortened to `$RUN`.
    pub command_line: String,
    pub end: StepEnd,
    pub evidence: Vec<Evidence>,
}

/// One invocation of a [`StageSpec`].
pub struct Invocation {
    spec: StageSpec,
    flags: Vec<(&'static str, OsString)>,
    /// A flag the workflow never passes, with the reason it is passed here (shown).
    deviation: Option<(&'static str, OsString)>,
    trailing: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    stdout_to: Option<PathBuf>,
}

impl Invocation {
    pub fn new(spec: StageSpec) -> Self {
        Invocation {
            spec,
            flags: Vec::new(),
            deviation: None,
            trailing: Vec::new(),
            env: Vec::new(),
            stdout_to: None,
        }
    }

    pub fn flag(mut self, name: &'static str, value: impl AsRef<OsStr>) -> Self {
        self.flags.push((name, value.as_ref().to_owned()));
        self
    }

    /// `-- <args>` after the flags.
    pub fn trailing(mut self, args: &[&str]) -> Self {
        self.trailing = args.iter().map(OsString::from).collect();
        self
    }

    pub fn env(mut self, name: &str, value: impl AsRef<OsStr>) -> Self {
        self.env.push((name.into(), value.as_ref().to_owned()));
        self
    }

    /// Standard output to a file, as the workflow's `> file`.
    pub fn stdout_to(mut self, path: &Path) -> Self {
        self.stdout_to = Some(path.to_path_buf());
        self
    }

    /// A flag the workflow does not pass (only `guard run --no-isolation-because` on a machine
    /// without namespaces).
    pub fn deviation(mut self, name: &'static str, value: impl AsRef<OsStr>) -> Self {
        self.deviation = Some((name, value.as_ref().to_owned()));
        self
    }

    /// The flags given must be the table's, each at least once, and no other.
    fn check(&self) -> Result<(), LocalRunError> {
        let given: BTreeSet<&str> = self.flags.iter().map(|(n, _)| *n).collect();
        let want: BTreeSet<&str> = self.spec.flags.iter().copied().collect();
        if given != want {
            return Err(LocalRunError::Setup(format!(
                "stage {} {} (job {}, step {:?}) given flags {given:?}, the table says {want:?}",
                self.spec.program, self.spec.subcommand, self.spec.job, self.spec.step
            )));
        }
        Ok(())
    }

    fn args(&self) -> Vec<OsString> {
        let mut args = vec![OsString::from(self.spec.subcommand)];
        if let Some((name, value)) = &self.deviation {
            args.push(OsString::from(*name));
            args.push(value.clone());
        }
        for (name, value) in &self.flags {
            args.push(OsString::from(*name));
            args.push(value.clone());
        }
        if !self.trailing.is_empty() {
            args.push(OsString::from("--"));
            args.extend(self.trailing.iter().cloned());
        }
        args
    }
}

/// Runs the stages of one local run and keeps their records.
pub struct Runner<'a> {
    out: &'a mut dyn Write,
    /// The run's temporary directory, shown as `$RUN`.
    pub root: PathBuf,
    /// Where the stage binaries were installed.
    pub bin_dir: PathBuf,
    env: Vec<(OsString, OsString)>,
    pub records: Vec<StageRecord>,
    /// Arguments shown by name rather than by value, as the workflow passes them.
    aliases: Vec<(OsString, String)>,
    /// Values never printed (the dispatch key, the token).
    secrets: Vec<String>,
}

impl<'a> Runner<'a> {
    pub fn new(out: &'a mut dyn Write, root: PathBuf, bin_dir: PathBuf) -> Self {
        let mut env: Vec<(OsString, OsString)> = Vec::new();
        for name in ["PATH", "HOME", "CARGO_HOME", "RUSTUP_HOME"] {
            if let Some(value) = std::env::var_os(name) {
                env.push((name.into(), value));
            }
        }
        // The test hook of `guard run` can only take isolation away (see guard::sandbox).
        if let Some(value) = std::env::var_os(guard::sandbox::NamespaceHook::ENV) {
            env.push((guard::sandbox::NamespaceHook::ENV.into(), value));
        }
        env.push(("GIT_CONFIG_NOSYSTEM".into(), "1".into()));
        env.push(("GIT_CONFIG_GLOBAL".into(), "/dev/null".into()));
        Runner {
            out,
            root,
            bin_dir,
            env,
            records: Vec::new(),
            aliases: Vec::new(),
            secrets: Vec::new(),
        }
    }

    /// A variable every later stage gets (the workflow's `env:`).
    pub fn set_env(&mut self, name: &str, value: impl AsRef<OsStr>) {
        self.env.retain(|(n, _)| n != name);
        self.env.push((name.into(), value.as_ref().to_owned()));
    }

    /// Show `value` as `alias` in command lines.
    pub fn alias(&mut self, value: impl AsRef<OsStr>, alias: &str) {
        self.aliases
            .push((value.as_ref().to_owned(), alias.to_owned()));
    }

    /// Never print `value`.
    pub fn secret(&mut self, value: &str) {
        if !value.is_empty() {
            self.secrets.push(value.to_owned());
        }
    }

    fn redact(&self, text: &str) -> String {
        self.redact_secrets(&text.replace(&*self.root.to_string_lossy(), "$RUN"))
    }

    fn redact_secrets(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for secret in &self.secrets {
            text = text.replace(secret.as_str(), "***");
        }
        text
    }

    /// [`Runner::say`] without shortening the root (the line that says what `$RUN` is).
    pub fn say_verbatim(&mut self, text: &str) -> Result<(), LocalRunError> {
        let text = self.redact_secrets(text);
        self.out
            .write_all(text.as_bytes())
            .and_then(|()| self.out.flush())
            .map_err(crate::io_error("write the output"))
    }

    pub fn say(&mut self, text: &str) -> Result<(), LocalRunError> {
        let text = self.redact(text);
        self.out
            .write_all(text.as_bytes())
            .and_then(|()| self.out.flush())
            .map_err(crate::io_error("write the output"))
    }

    /// A path under the run's temporary root, shown as `$RUN/...`.
    pub fn show(&self, path: &Path) -> String {
        match path.strip_prefix(&self.root) {
            Ok(rel) => format!("$RUN/{}", rel.display()),
            Err(_) => path.display().to_string(),
        }
    }

    /// The command line as printed: program file name, arguments with the root shortened.
    pub fn command_line(&self, program: &str, args: &[OsString]) -> String {
        let mut line = program.to_owned();
        for arg in args {
            if let Some((_, alias)) = self.aliases.iter().find(|(value, _)| value == arg) {
                line.push(' ');
                line.push_str(alias);
                continue;
            }
            let arg = self.redact(&arg.to_string_lossy());
            line.push(' ');
            if arg.is_empty() || arg.contains([' ', '*', '{', '"', '\'', '\n', '$', ',']) {
                line.push_str(&format!("'{arg}'"));
            } else {
                line.push_str(&arg);
            }
        }
        neutralize(&line)
    }

    /// Runs one stage as its own process from the install directory and prints what it said,
    /// indented and escaped.
    pub fn stage(&mut self, inv: Invocation) -> Result<(StepEnd, Output), LocalRunError> {
        inv.check()?;
        let spec = inv.spec;
        let program = self.bin_dir.join(spec.program);
        let args = inv.args();
        let line = self.command_line(spec.program, &args);
        let mut shown = format!("  - {}\n    $ {line}", spec.step);
        if let Some(path) = &inv.stdout_to {
            let _ = write!(shown, " > {}", self.show(path));
        }
        shown.push('\n');
        self.say(&shown)?;
        let mut cmd = Command::new(&program);
        cmd.args(&args)
            .env_clear()
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .envs(inv.env.iter().map(|(k, v)| (k, v)))
            .current_dir(&self.root)
            .stdin(Stdio::null());
        let output = cmd
            .output()
            .map_err(crate::io_error(format!("run {}", program.display())))?;
        if let Some(path) = &inv.stdout_to {
            std::fs::write(path, &output.stdout)
                .map_err(crate::io_error(format!("write {}", path.display())))?;
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
        self.records.push(StageRecord {
            job: spec.job,
            step: spec.step,
            command_line: line,
            end: end.clone(),
            evidence: Vec::new(),
        });
        Ok((end, output))
    }

    /// Attach evidence to the last record.
    pub fn evidence(&mut self, evidence: Vec<Evidence>) {
        if let Some(last) = self.records.last_mut() {
            last.evidence.extend(evidence);
        }
    }

    pub fn print_indented(&mut self, bytes: &[u8]) -> Result<(), LocalRunError> {
        let text = String::from_utf8_lossy(bytes).into_owned();
        let mut block = String::new();
        for line in text.lines() {
            let _ = writeln!(block, "    {}", neutralize(line));
        }
        self.say(&block)
    }

    /// The log of `job` as the simulated GitHub serves it: each stage's command line, exit and
    /// evidence (escaped; non-authoritative, like any job log).
    pub fn job_log(&self, job: &str) -> String {
        let mut log = String::new();
        for record in self.records.iter().filter(|r| r.job == job) {
            let _ = writeln!(log, "{}: $ {}", record.step, record.command_line);
            for item in &record.evidence {
                let _ = writeln!(log, "{}: {}", record.step, item.render());
            }
            let _ = writeln!(log, "{}: {}", record.step, record.end.describe());
        }
        self.redact(&log)
    }

    /// Stages that ended in an error rather than a verdict.
    pub fn errored(&self) -> Vec<String> {
        self.records
            .iter()
            .filter_map(|r| match &r.end {
                StepEnd::Error(what) => Some(format!("{} / {}: {what}", r.job, r.step)),
                StepEnd::Exit(_) => None,
            })
            .collect()
    }
}

/// git for local-run's own plumbing (the repository, checkouts): fixed identity and dates, no
/// ambient configuration.
pub fn git(dir: &Path, args: &[&OsStr], stdin: Option<&[u8]>) -> Result<Vec<u8>, LocalRunError> {
    let mut cmd = guard::git::command(dir);
    cmd.env("GIT_AUTHOR_NAME", "agent-team local-run")
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
        .args(args);
    if stdin.is_some() {
        cmd.stdin(Stdio::piped());
    }
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
        pipe.write_all(bytes)
            .map_err(crate::io_error("write to git"))?;
    }
    let output = child
        .wait_with_output()
        .map_err(crate::io_error("wait for git"))?;
    if !output.status.success() {
        return Err(LocalRunError::Git {
            args: shown(),
            detail: neutralize(String::from_utf8_lossy(&output.stderr).trim()),
        });
    }
    Ok(output.stdout)
}

pub fn git_text(dir: &Path, args: &[&str]) -> Result<String, LocalRunError> {
    let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
    let out = git(dir, &args, None)?;
    Ok(String::from_utf8_lossy(&out).trim().to_owned())
}

/// What `actions/checkout` with `ref: <sha>` gives a job: a fresh clone at that commit (full
/// history, as `fetch-depth: 0`).
pub fn checkout(origin: &Path, dest: &Path, sha: &str) -> Result<(), LocalRunError> {
    let parent = dest.parent().unwrap_or(dest);
    let args: [&OsStr; 5] = [
        OsStr::new("clone"),
        OsStr::new("-q"),
        OsStr::new("--no-hardlinks"),
        origin.as_os_str(),
        dest.as_os_str(),
    ];
    git(parent, &args, None)?;
    git_text(dest, &["checkout", "-q", "--detach", sha])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    #[test]
    fn an_invocation_must_pass_exactly_the_tables_flags() {
        let full = || {
            GUARD_VERIFY_TREE
                .flags
                .iter()
                .fold(Invocation::new(GUARD_VERIFY_TREE), |inv, f| {
                    inv.flag(f, "x")
                })
        };
        assert!(full().check().is_ok());
        // Repeating a flag is the same set.
        assert!(full().flag("--repo", "y").check().is_ok());
        let err = full().flag("--extra", "x").check().unwrap_err().to_string();
        assert!(
            err.contains("--extra") && err.contains("verify-tree"),
            "{err}"
        );
        let missing = GUARD_VERIFY_TREE.flags[1..]
            .iter()
            .fold(Invocation::new(GUARD_VERIFY_TREE), |inv, f| {
                inv.flag(f, "x")
            });
        assert!(missing.check().is_err());
        // The one deviation is passed before the flags and does not count as one of them.
        let args = full().deviation("--no-isolation-because", "why").args();
        assert_eq!(args[..3], ["verify-tree", "--no-isolation-because", "why"]);
        assert!(
            full()
                .deviation("--no-isolation-because", "why")
                .check()
                .is_ok()
        );
    }

    #[test]
    fn every_stage_of_the_table_is_unique_and_runs_an_installed_binary() {
        let mut seen = BTreeSet::new();
        for spec in STAGES {
            assert!(
                ["guard", "gate", "report"].contains(&spec.program),
                "{spec:?}"
            );
            assert!(
                seen.insert((spec.job, spec.step, spec.subcommand)),
                "{spec:?} twice"
            );
            let flags: BTreeSet<&str> = spec.flags.iter().copied().collect();
            assert_eq!(flags.len(), spec.flags.len(), "{spec:?} repeats a flag");
            assert!(spec.flags.iter().all(|f| f.starts_with("--")), "{spec:?}");
        }
    }

    #[test]
    fn secrets_and_the_root_never_reach_the_output_or_a_job_log() {
        let root = PathBuf::from("/tmp/agent-team-local-run-XYZ");
        let mut out = Vec::new();
        {
            let mut runner = Runner::new(&mut out, root.clone(), root.join("bin"));
            runner.secret("s3cr3t-token");
            runner
                .say("token s3cr3t-token in /tmp/agent-team-local-run-XYZ/guard\n")
                .unwrap();
            let line = runner.command_line(
                "gate",
                &[
                    "publish".into(),
                    "--token=s3cr3t-token".into(),
                    "a\u{1b}[2Jb".into(),
                ],
            );
            assert!(!line.contains("s3cr3t-token"), "{line}");
            assert!(!line.contains('\u{1b}'), "{line}");
            runner.records.push(StageRecord {
                job: "publish",
                step: "Publish",
                command_line: line,
                end: StepEnd::Exit(1),
                evidence: vec![Evidence {
                    rule: "r".into(),
                    detail: "s3cr3t-token at /tmp/agent-team-local-run-XYZ/x".into(),
                }],
            });
            let log = runner.job_log("publish");
            assert!(
                !log.contains("s3cr3t-token") && !log.contains("local-run-XYZ"),
                "{log}"
            );
            assert!(log.contains("Publish: exit 1"), "{log}");
            runner
                .say_verbatim("root /tmp/agent-team-local-run-XYZ s3cr3t-token\n")
                .unwrap();
        }
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "token *** in $RUN/guard\nroot /tmp/agent-team-local-run-XYZ ***\n"
        );
    }
}
