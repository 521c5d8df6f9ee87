//! `local-run`: the apply/verify workflow's whole loop on this machine, on a bundled sample.
//!
//! 1. **Install**: the stage binaries (`guard`, `gate`, `report`), built statically by default or
//!    taken from `--binaries DIR`, are written with a `SHA256SUMS` as a release would publish
//!    them, then installed into `$RUN/bin` after one hash check per asset ([`install`]).
//! 2. **The simulated GitHub** ([`github`]) starts: the in-process `github-standin` serving the
//!    repository `local/greeting`, whose default branch holds the sample's base commit.
//! 3. **The dispatcher** (`gate dispatch --wait`, [`jobs::dispatcher`]) signs and dispatches the
//!    sample diff to it over HTTP.
//! 4. **The jobs** ([`jobs`]) `guard`, `build-test`, `decide` and `publish` run as the workflow's
//!    steps do, from the dispatch's inputs, each binary step a separate process from the install
//!    directory ([`stage`]); `publish` runs only when `decide` passed, and publishes through the
//!    simulated GitHub's API with `gate publish`, which proves the tree id.
//! 5. The jobs' conclusions become the run's jobs on the simulated GitHub; the dispatcher reads
//!    them, with the draft pull request and check run, and reports the authenticated outcome.
//!    local-run's exit follows it: `0` pass with the draft pull request, `1` gate fail, `2`
//!    error (a stage that ended in an error rather than a verdict counts as one).
#![forbid(unsafe_code)]

pub mod doctor;
pub mod github;
pub mod install;
pub mod jobs;
pub mod samples;
pub mod stage;

use std::fmt::Write as _;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use guard::escape::neutralize;
use guard::hash;

use crate::github::{PublicationScenario, SimulatedGitHub};
use crate::install::Linking;
use crate::jobs::dispatcher::{DispatchArgs, Dispatcher};
use crate::jobs::{Context, skipped};
use crate::samples::{BASE_BRANCH, BASE_FILES, SCOPE, Sample};
use crate::stage::{Runner, git_text};

pub use github_standin;

/// Where the stage binaries come from.
#[derive(Debug, Clone)]
pub enum Binaries {
    /// Built by local-run with the static release build: each must be statically linked.
    StaticBuild(PathBuf),
    /// `--binaries DIR`: used as they are.
    Given(PathBuf),
}

/// What local-run was asked to do.
#[derive(Debug, Clone)]
pub struct Options {
    pub sample: Sample,
    pub binaries: Binaries,
    pub scenario: PublicationScenario,
    /// Keep the temporary directory and print its path.
    pub keep: bool,
}

/// How the run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The dispatcher's exit code (`None`: killed by a signal).
    pub dispatch_exit: Option<i32>,
    /// Stages that ended in an error rather than a verdict.
    pub errored_stages: Vec<String>,
}

impl Outcome {
    /// local-run's exit code: the dispatcher's (0 pass, 1 fail), or 2 for any error.
    pub fn exit_code(&self) -> u8 {
        match self.dispatch_exit {
            Some(0) if self.errored_stages.is_empty() => contract::cli::Exit::Pass.code(),
            Some(1) if self.errored_stages.is_empty() => contract::cli::Exit::Fail.code(),
            _ => contract::cli::Exit::Error.code(),
        }
    }
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

pub(crate) fn io_error(context: impl Into<String>) -> impl FnOnce(io::Error) -> LocalRunError {
    let context = context.into();
    move |source| LocalRunError::Io { context, source }
}

/// A fresh dispatch key (32 random bytes, hex), for this run only.
fn dispatch_key() -> Result<String, LocalRunError> {
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(io_error("read /dev/urandom for the dispatch key"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Plays the whole loop on `opts.sample`, printing as it goes. `Err` is local-run's own failure
/// (the temporary directory, git, the install, an unreadable stage output).
pub fn run(opts: &Options, out: &mut dyn Write) -> Result<Outcome, LocalRunError> {
    let tmp = tempfile::Builder::new()
        .prefix("agent-team-local-run-")
        .tempdir()
        .map_err(io_error("create a temporary directory"))?;
    let root = tmp
        .path()
        .canonicalize()
        .map_err(io_error("resolve the temporary directory"))?;
    let mut runner = Runner::new(out, root.clone(), root.join("bin"));
    let result = play(&mut runner, opts);
    if opts.keep {
        let kept = tmp.keep();
        runner.say_verbatim(&format!("local-run: kept {}\n", kept.display()))?;
    }
    result
}

fn play(runner: &mut Runner<'_>, opts: &Options) -> Result<Outcome, LocalRunError> {
    let root = runner.root.clone();
    let sample = opts.sample;
    runner.say_verbatim(&format!(
        "local-run: the apply/verify workflow's whole loop on this machine\n  \
         dispatcher -> simulated GitHub -> guard -> build-test -> decide -> publish -> dispatcher\n\
         sample `{}` ({}, {} bytes); publication scenario `{}`\n\
         temporary directory $RUN = {}\n",
        sample.name(),
        sample.fixture(),
        sample.diff().len(),
        opts.scenario.name(),
        root.display(),
    ))?;

    install_step(runner, &opts.binaries)?;

    // The repository: the sample's base commit on the default branch.
    let origin = root.join("origin");
    for (path, bytes) in BASE_FILES {
        let full = origin.join(path);
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent)
                .map_err(io_error(format!("create {}", parent.display())))?;
        }
        std::fs::write(&full, bytes).map_err(io_error(format!("write {}", full.display())))?;
    }
    git_text(&origin, &["init", "-q", "-b", BASE_BRANCH])?;
    git_text(&origin, &["add", "--all"])?;
    git_text(
        &origin,
        &["commit", "-q", "-m", "Sample base for agent-team local-run"],
    )?;
    let base = git_text(&origin, &["rev-parse", "HEAD"])?;

    let github = SimulatedGitHub::start(&origin, &base, opts.scenario)?;
    let token = github.token();
    runner.secret(&token);
    runner.say(&format!(
        "\nsimulated GitHub: {} serving {} (default branch {BASE_BRANCH} at {base})\n",
        github.url(),
        samples::REPOSITORY
    ))?;

    // The dispatcher's side: the diff file, the key.
    let dispatch_dir = root.join("dispatcher");
    std::fs::create_dir_all(&dispatch_dir)
        .map_err(io_error("create the dispatcher's directory"))?;
    let diff_file = dispatch_dir.join(format!("{}.patch", sample.task_id()));
    std::fs::write(&diff_file, sample.diff()).map_err(io_error("write the sample diff"))?;
    let key = dispatch_key()?;
    runner.secret(&key);
    let task_id = sample.task_id();
    let api_url = github.url();
    let mut dispatcher = Dispatcher::start(
        runner,
        &dispatch_dir,
        &DispatchArgs {
            task_id: &task_id,
            base: &base,
            scope: SCOPE,
            diff: &diff_file,
            api_url: &api_url,
            token: &token,
            key: &key,
            app_id: github.app_id(),
        },
    )?;
    let dispatched =
        github.wait_for_dispatch(&mut || dispatcher.running(), Duration::from_secs(120))?;
    runner.say(&format!(
        "  the simulated GitHub received the dispatch: run {} on {}\n",
        dispatched.run_id,
        neutralize(&dispatched.git_ref)
    ))?;
    let mut shown = String::new();
    for (name, value) in &dispatched.inputs {
        let value = if value.len() > 72 {
            format!("({} characters)", value.len())
        } else {
            value.clone()
        };
        let _ = writeln!(shown, "    input {name} = {}", neutralize(&value));
    }
    runner.say(&shown)?;
    // The workflow's `env:`: the dispatch inputs, read from the event.
    for (variable, input) in [
        ("TASK_ID", "task_id"),
        ("BASE_SHA", "base_sha"),
        ("EXPECTED_DIFF_SHA256", "expected_diff_sha256"),
        ("DECLARED_SCOPE", "declared_scope"),
        ("DIFF_B64", "diff_b64"),
        ("DIFF_REF", "diff_ref"),
    ] {
        runner.set_env(variable, dispatched.input(input));
    }
    runner.alias(dispatched.input("diff_b64"), "\"$DIFF_B64\"");
    let ctx = Context {
        origin: origin.clone(),
        dispatched,
        api_url,
        token,
        key,
        app_id: github.app_id(),
    };

    let started = github.tick();
    let (guard, mut guard_report) = jobs::guard::play(runner, &ctx)?;
    upload_guard_reasons(runner, &github, &ctx)?;
    guard_report.started_at = Some(started);
    guard_report.completed_at = Some(github.tick());
    let (build_test, build_test_report) = if guard == gate::JobResult::Success {
        let started = github.tick();
        let (result, mut report) = jobs::build_test::play(runner, &ctx)?;
        upload_build_test_report(runner, &github, &ctx)?;
        report.started_at = Some(started);
        report.completed_at = Some(github.tick());
        (result, report)
    } else {
        skipped(
            runner,
            "build-test",
            "its dependency `guard` did not succeed",
        )?
    };
    let decided = jobs::decide::play(runner, &ctx, &guard, &build_test)?;
    decision_summary(runner, &ctx, &decided)?;
    let mut published = None;
    let publish_report = if decided.result == gate::JobResult::Success && decided.passed {
        prepare_scenario(runner, &github, &origin, &base, &task_id, opts.scenario)?;
        let (_, report, result) =
            jobs::publish::play(runner, &ctx, &guard, &build_test, &decided.result)?;
        published = Some(result);
        report
    } else {
        let mut why = String::from("decide did not pass: ");
        why.push_str(&decided.reasons.lines().collect::<Vec<_>>().join("; "));
        skipped(runner, "publish", &why)?.1
    };
    github.finish_run(
        ctx.dispatched.run_id,
        vec![
            guard_report,
            build_test_report,
            decided.report,
            publish_report,
        ],
    )?;
    runner.say(
        "\nthe run's jobs are recorded on the simulated GitHub; the dispatcher reads them\n",
    )?;
    let end = dispatcher.finish()?;
    report_dispatch(runner, &end)?;
    report_github(runner, &github, &task_id, published.as_ref())?;

    let errored_stages = runner.errored();
    let outcome = Outcome {
        dispatch_exit: end.exit_code,
        errored_stages,
    };
    Ok(outcome)
}

/// The decision, and on a fail what stopped the run: the failing stages of guard and
/// build-test, with their rule ids and paths.
fn decision_summary(
    runner: &mut Runner<'_>,
    ctx: &Context,
    decided: &jobs::decide::Decided,
) -> Result<(), LocalRunError> {
    let word = if decided.passed { "pass" } else { "fail" };
    let mut text = format!(
        "\nDECISION: gate={word} (run {}, diff sha256 {})\n",
        ctx.run_id(),
        ctx.expected()
    );
    for line in decided.reasons.lines() {
        let _ = writeln!(text, "  reason {}", neutralize(line));
    }
    if !decided.passed {
        let failing: Vec<&stage::StageRecord> = runner
            .records
            .iter()
            .filter(|r| r.job != "decide" && r.job != "publish" && !r.end.ok())
            .collect();
        for record in &failing {
            let _ = writeln!(
                text,
                "STOPPED BY: job {}, step \"{}\" (`{}`: {})",
                record.job,
                record.step,
                record.command_line.split(" --").next().unwrap_or_default(),
                record.end.describe()
            );
            for item in &record.evidence {
                let _ = writeln!(text, "  {}", item.render());
            }
        }
        if failing.is_empty() {
            text.push_str("STOPPED BY: the gate's reasons above\n");
        }
        text.push_str(
            "no publication: publish runs only after a pass; the environment, the App token, the \
             commit, the check run and the pull request are never reached\n",
        );
    }
    runner.say(&text)
}

/// Before the publish job: the state of the branch a rerun, or someone else, left.
fn prepare_scenario(
    runner: &mut Runner<'_>,
    github: &SimulatedGitHub,
    origin: &Path,
    base: &str,
    task_id: &str,
    scenario: PublicationScenario,
) -> Result<(), LocalRunError> {
    let branch = format!("agent-team/{task_id}");
    match scenario {
        PublicationScenario::Fresh => Ok(()),
        PublicationScenario::TreeMismatch => runner.say(&format!(
            "\nscenario tree-mismatch: the simulated GitHub adds {} to every tree it stores\n",
            github::INJECTED_PATH
        )),
        PublicationScenario::BranchAtBase => {
            github.set_branch(origin, &branch, base)?;
            runner.say(&format!(
                "\nscenario branch-at-base: {branch} already exists at the base {base} (an earlier attempt)\n"
            ))
        }
        PublicationScenario::BranchElsewhere => {
            let path = origin.join("SOMEONE-ELSE.md");
            std::fs::write(&path, b"someone else's commit\n")
                .map_err(io_error("write SOMEONE-ELSE.md"))?;
            git_text(origin, &["checkout", "-q", "-b", "someone-else"])?;
            git_text(origin, &["add", "SOMEONE-ELSE.md"])?;
            git_text(origin, &["commit", "-q", "-m", "Someone else's commit"])?;
            let other = git_text(origin, &["rev-parse", "HEAD"])?;
            git_text(origin, &["checkout", "-q", BASE_BRANCH])?;
            github.set_branch(origin, &branch, &other)?;
            runner.say(&format!(
                "\nscenario branch-elsewhere: {branch} already exists at {other}, someone else's commit\n"
            ))
        }
    }
}

fn install_step(runner: &mut Runner<'_>, binaries: &Binaries) -> Result<(), LocalRunError> {
    let (source, must_be_static, how) = match binaries {
        Binaries::StaticBuild(dir) => (
            dir,
            true,
            format!("built by `{}`", install::BUILD_COMMAND_LINE),
        ),
        Binaries::Given(dir) => (dir, false, "given with --binaries".to_owned()),
    };
    let release = runner.root.join("release");
    let install_dir = runner.bin_dir.clone();
    install::write_release(source, &release)?;
    let installed = install::install(&release, &install_dir)?;
    let mut text = format!(
        "\ninstall (the workflow's \"Install the pinned agent-team binaries\"): the release assets are\n  \
         the stage binaries {how},\n  \
         from {}, with $RUN/release/SHA256SUMS; each copied into {} and its SHA-256 checked (0555)\n",
        source.display(),
        runner.show(&install_dir)
    );
    for item in &installed {
        let _ = writeln!(
            text,
            "    {:<7} {:>9} bytes  sha256 {}  OK  {}",
            item.name,
            item.bytes,
            item.sha256,
            item.linking.describe()
        );
    }
    runner.say(&text)?;
    if must_be_static && let Some(item) = installed.iter().find(|i| i.linking != Linking::Static) {
        return Err(LocalRunError::Setup(format!(
            "{} is not statically linked: {}",
            item.name,
            item.linking.describe()
        )));
    }
    Ok(())
}

/// The guard job's last steps: its verdict and readiness report in one file named for the run
/// and attempt, uploaded as an artifact (as the workflow's "Upload the guard's verdict" steps do
/// with jq and upload-artifact's `archive: false`).
fn upload_guard_reasons(
    runner: &mut Runner<'_>,
    github: &SimulatedGitHub,
    ctx: &Context,
) -> Result<(), LocalRunError> {
    let dir = runner.root.join("guard");
    let read = |name: &str| -> serde_json::Value {
        std::fs::read(dir.join(name))
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or(serde_json::Value::Null)
    };
    let run_id = ctx.dispatched.run_id;
    let name = gate::dispatch::guard_artifact_name(run_id, 1, "local-run");
    let file = serde_json::json!({
        "schema": gate::dispatch::GUARD_REASONS_SCHEMA,
        "run_id": run_id,
        "run_attempt": 1,
        "verdict": read("verdict.json"),
        "readiness": read("readiness.json"),
    });
    let bytes = serde_json::to_vec(&file)
        .map_err(|e| LocalRunError::Stage(format!("the guard's verdict file: {e}")))?;
    github.upload_artifact(run_id, &name, bytes);
    runner.say(&format!(
        "  - Upload the guard's verdict for the dispatcher\n    artifact {name} (archive: false)\n"
    ))
}

/// The build-test job's last step: its report directory uploaded as an artifact named for the
/// call and attempt (the workflow's "Upload the non-authoritative report" step; GitHub serves an
/// artifact as a zip of the files uploaded, by their paths under the directory).
fn upload_build_test_report(
    runner: &mut Runner<'_>,
    github: &SimulatedGitHub,
    ctx: &Context,
) -> Result<(), LocalRunError> {
    use std::io::Write as _;
    let dir = runner.root.join("build-test").join("report");
    let Ok(listing) = std::fs::read_dir(&dir) else {
        return runner.say("  - Upload the non-authoritative report: no report directory\n");
    };
    let mut files: Vec<_> = listing
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .collect();
    files.sort();
    let zip_error =
        |e: zip::result::ZipError| LocalRunError::Stage(format!("the report's zip: {e}"));
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for path in &files {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| LocalRunError::Stage(format!("{}: not a UTF-8 name", path.display())))?;
        let bytes = std::fs::read(path).map_err(io_error(format!("read {}", path.display())))?;
        zip.start_file(name, options).map_err(zip_error)?;
        zip.write_all(&bytes)
            .map_err(io_error(format!("zip {}", path.display())))?;
    }
    let bytes = zip.finish().map_err(zip_error)?.into_inner();
    let name = format!(
        "{}local-run-attempt-1",
        gate::dispatch::BUILD_REPORT_ARTIFACT_PREFIX
    );
    github.upload_artifact(ctx.dispatched.run_id, &name, bytes);
    runner.say(&format!(
        "  - Upload the non-authoritative report\n    artifact {name} ({} file(s))\n",
        files.len()
    ))
}

fn report_dispatch(
    runner: &mut Runner<'_>,
    end: &jobs::dispatcher::DispatchEnd,
) -> Result<(), LocalRunError> {
    let mut text = String::from("\ndispatcher's result (agent-team-apply/dispatch-result/v2):\n");
    let _ = writeln!(
        text,
        "  gate dispatch: exit {}",
        end.exit_code
            .map_or("(signal)".to_owned(), |c| c.to_string())
    );
    match &end.doc {
        Some(doc) => {
            let _ = writeln!(
                text,
                "  decision: {} (exit {})",
                neutralize(&doc.decision),
                doc.exit_code
            );
            let _ = writeln!(text, "  diff sha256: {}", neutralize(&doc.diff_sha256));
            for job in &doc.jobs {
                let _ = writeln!(
                    text,
                    "  job {}: {}{}",
                    neutralize(&job.name),
                    neutralize(job.conclusion.as_deref().unwrap_or(&job.status)),
                    job.failed_step
                        .as_ref()
                        .map(|s| format!(" (step \"{}\")", neutralize(s)))
                        .unwrap_or_default()
                );
            }
            if let Some(pull) = &doc.pull_request {
                let _ = writeln!(
                    text,
                    "  draft pull request #{}: {} (draft: {})",
                    pull.number,
                    neutralize(&pull.html_url),
                    pull.draft
                );
            }
            if let Some(check) = &doc.check_run {
                let _ = writeln!(
                    text,
                    "  check run \"{}\": {}",
                    neutralize(&check.name),
                    neutralize(check.conclusion.as_deref().unwrap_or("(none)"))
                );
            }
            if let Some(publication) = &doc.publication {
                let _ = writeln!(
                    text,
                    "  authenticated: commit {} by {} (signature {}), tree {} = proven {}",
                    neutralize(&publication.commit),
                    neutralize(&publication.author),
                    neutralize(&publication.signature),
                    neutralize(&publication.tree),
                    neutralize(&publication.proven_tree)
                );
            }
            for reason in &doc.reasons {
                let _ = writeln!(text, "  reason: {}", neutralize(reason));
            }
            if let Some(why) = &doc.guard_verdict_unavailable {
                let _ = writeln!(text, "  guard verdict: not available ({})", neutralize(why));
            }
            if let Some(verdict) = &doc.guard_verdict {
                let _ = writeln!(
                    text,
                    "  guard verdict ({}, authoritative, {}): {}, {} violation(s)",
                    neutralize(&verdict.source),
                    neutralize(verdict.artifact.as_deref().unwrap_or("-")),
                    neutralize(&verdict.verdict),
                    verdict.violations.len()
                );
                for v in &verdict.violations {
                    let path = v
                        .path
                        .as_ref()
                        .or(v.old_path.as_ref())
                        .map(|p| p.display())
                        .unwrap_or_default();
                    let _ = writeln!(
                        text,
                        "    error[{}]: {}{}: {}\n      hint: {}",
                        neutralize(&v.rule),
                        path,
                        v.line
                            .map(|l| format!(" (diff line {l})"))
                            .unwrap_or_default(),
                        neutralize(&v.message),
                        neutralize(&v.hint)
                    );
                }
            }
            if let Some(build) = &doc.build_findings_non_authoritative {
                match &build.reason {
                    Some(why) => {
                        let _ = writeln!(
                            text,
                            "  build findings (non-authoritative): unavailable ({})",
                            neutralize(why)
                        );
                    }
                    None => {
                        let _ = writeln!(
                            text,
                            "  build findings (non-authoritative, {}): {} finding(s)",
                            neutralize(build.artifact.as_deref().unwrap_or("-")),
                            build.findings.len() as u64 + build.left_out
                        );
                    }
                }
                for f in &build.findings {
                    let _ = writeln!(
                        text,
                        "    {}[{}]: {}: {}",
                        neutralize(&f.check),
                        neutralize(&f.rule),
                        f.path.display(),
                        neutralize(&f.message)
                    );
                }
            }
            if let Some(tail) = &doc.log_tail {
                let _ = writeln!(
                    text,
                    "  log tail of {} (non-authoritative):",
                    neutralize(&tail.job)
                );
                for line in tail.text.lines() {
                    let _ = writeln!(text, "    | {}", neutralize(line));
                }
            }
        }
        None => {
            let _ = writeln!(text, "  no result document; its messages:");
            for line in end.stderr.lines() {
                let _ = writeln!(text, "    {}", neutralize(line));
            }
        }
    }
    runner.say(&text)
}

fn report_github(
    runner: &mut Runner<'_>,
    github: &SimulatedGitHub,
    task_id: &str,
    published: Option<&jobs::publish::Published>,
) -> Result<(), LocalRunError> {
    let branch = format!("agent-team/{task_id}");
    let mut text = String::from("\nthe simulated GitHub now holds:\n");
    match github.branch(&branch) {
        Some((commit, tree)) => {
            let _ = writeln!(
                text,
                "  branch {branch} at {commit} (tree {})",
                tree.as_deref().unwrap_or("?")
            );
        }
        None => {
            let _ = writeln!(text, "  no branch {branch}");
        }
    }
    if let Some(expected) = published.and_then(|p| p.expected_tree.as_deref()) {
        let _ = writeln!(text, "  expected tree (git's, the plan's): {expected}");
        let read_back = published
            .and_then(|p| p.result.as_ref())
            .and_then(|r| r.tree.published.clone());
        let _ = writeln!(
            text,
            "  published tree (read back by gate publish): {}",
            read_back.as_deref().unwrap_or("(none)")
        );
    }
    let pulls = github.pulls();
    if pulls.is_empty() {
        text.push_str("  no pull request\n");
    }
    for (number, draft, head) in pulls {
        let _ = writeln!(
            text,
            "  pull request #{number} from {} (draft: {draft})",
            neutralize(&head)
        );
    }
    for (name, head, conclusion) in github.check_runs() {
        let _ = writeln!(
            text,
            "  check run \"{}\" on {head}: {}",
            neutralize(&name),
            conclusion.as_deref().unwrap_or("(none)")
        );
    }
    let _ = writeln!(
        text,
        "  {} API request(s) received: {}",
        github.request_lines().len(),
        summarize(&github.request_lines())
    );
    runner.say(&text)
}

/// `METHOD path` lines, consecutive repeats counted.
fn summarize(lines: &[String]) -> String {
    let mut parts: Vec<(String, usize)> = Vec::new();
    for line in lines {
        match parts.last_mut() {
            Some((last, count)) if last == line => *count += 1,
            _ => parts.push((line.clone(), 1)),
        }
    }
    parts
        .iter()
        .map(|(line, count)| {
            if *count > 1 {
                format!("{line} (x{count})")
            } else {
                line.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The SHA-256 of a sample diff, as the dispatcher computes it.
pub fn sample_sha256(sample: Sample) -> String {
    hash::sha256_hex(sample.diff())
}
