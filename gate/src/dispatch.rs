//! The trusted dispatcher: sign the dispatch, send it, learn the run, wait, and report the
//! authenticated outcome.
//!
//! 1. The inputs are built and validated with [`guard::inputs`] (the workflow's own rules), the
//!    diff's SHA-256 computed here, and the dispatch signed ([`crate::dispatch_mac`]).
//! 2. Transport: `diff_b64` when the whole inputs payload fits GitHub's 65,535 characters;
//!    otherwise the diff is written to branch `agent-team-diffs/<task_id>` as `<task_id>.patch`
//!    through the Git database API (blob, tree, commit without parent, ref; an existing branch of
//!    that name, from an earlier attempt of the task, is moved to the new commit) and `diff_ref`
//!    is passed. Every job re-hashes what it reads, so the branch is not trusted either way.
//! 3. The dispatch asks for `return_run_details`. A `204` (a server that ignores it), or a
//!    `400`/`422` naming the parameter (one that refuses it; the dispatch is then sent once more
//!    without it), leads to the correlation of `report select-run`: the run named
//!    `agent-team-apply <task_id>`, created at or after a watermark taken from GitHub's own
//!    `Date` before the dispatch. A dispatch that may or may not have reached GitHub (a `5xx`, a
//!    connection lost after sending) is never sent again: the correlation decides whether it
//!    started a run. No run found is an error, never a guess.
//! 4. The run is checked to be this dispatch's (its name, event and workflow file).
//! 5. With `wait`, the run is polled with backoff until it completes or the deadline passes;
//!    then the jobs' conclusions decide. On success the draft pull request from
//!    `agent-team/<task_id>` must exist, its head commit must carry this run's `Run-Id` and the
//!    diff's `Diff-Sha256` trailers on the base commit, and the gate's check run on it must have
//!    succeeded. On failure the failed job and step are named, and the end of that job's log is
//!    attached, marked non-authoritative.

use std::collections::BTreeMap;
use std::time::Duration;

use base64::Engine;
use github::actions::{DispatchOutcome, WorkflowRun};
use github::{Client, Error, Repository};
use guard::inputs::{
    BaseSha, DiffRef, DiffSha256, DispatchMac, RawInputs, Scope, TaskId, validate,
};
use report::select_run::{self, Run, RunRecord, Timestamp};

use crate::dispatch_mac::{DispatchKey, FullRef, RepositoryName, SignedFields, sign};
use crate::output::dispatch_result_v1::{
    CheckRunDoc, DispatchResultDoc, FailedDoc, JobDoc, LogTailDoc, PullRequestDoc, RunDoc, SCHEMA,
};

/// GitHub's cap on the characters of a dispatch's inputs payload.
pub const MAX_INPUT_PAYLOAD: usize = 65_535;
/// The jobs of the reusable workflow whose conclusions decide, in order. The caller's job that
/// calls it prefixes their names: `apply / guard` ([`job_named`]).
pub const REQUIRED_JOBS: [&str; 4] = ["guard", "build-test", "decide", "publish"];
/// The check run the publication posts (`report check-run`'s default name).
pub const CHECK_NAME: &str = report::check_run::DEFAULT_CHECK_NAME;
/// How long a dispatched run may take to be listed before the correlation gives up.
pub const FIND_LIMIT: Duration = Duration::from_secs(300);
/// The most of a failed job's log kept.
pub const LOG_TAIL_BYTES: usize = 16 * 1024;
/// The most lines of it kept.
pub const LOG_TAIL_LINES: usize = 100;

/// A workflow file name: `[A-Za-z0-9._-]+` ending in `.yml` or `.yaml`.
pub fn parse_workflow_file(value: &str) -> Result<String, String> {
    let ok = (value.ends_with(".yml") || value.ends_with(".yaml"))
        && !value.starts_with('.')
        && value.len() <= 255
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if ok {
        Ok(value.to_owned())
    } else {
        Err(format!(
            "workflow {value:?} is not a workflow file name (NAME.yml under .github/workflows)"
        ))
    }
}

/// What to dispatch.
#[derive(Debug)]
pub struct DispatchRequest {
    pub repository: Repository,
    pub workflow: String,
    pub git_ref: FullRef,
    pub task_id: TaskId,
    pub base: BaseSha,
    pub scope: Scope,
    pub diff: Vec<u8>,
    pub key: DispatchKey,
    pub wait: bool,
    /// The whole command's budget (the client's deadline is the same point).
    pub timeout: Duration,
}

/// The result: the document and the exit code it stands for.
#[derive(Debug, Clone)]
pub struct DispatchReport {
    pub doc: DispatchResultDoc,
    pub exit_code: u8,
}

struct Progress<'a> {
    doc: DispatchResultDoc,
    log: &'a mut dyn FnMut(&str),
}

impl Progress<'_> {
    fn error(mut self, reason: String) -> DispatchReport {
        (self.log)(&format!("error: {reason}"));
        self.doc.reasons.push(reason);
        self.finish("error", contract::cli::Exit::Error.code())
    }

    fn finish(mut self, decision: &str, exit_code: u8) -> DispatchReport {
        self.doc.decision = decision.to_owned();
        self.doc.exit_code = exit_code;
        DispatchReport {
            doc: self.doc,
            exit_code,
        }
    }
}

/// Dispatch, and with `wait` follow the run to its authenticated outcome. `log` receives
/// progress lines (raw text: the caller escapes them for its sink).
pub fn run(
    client: &Client,
    request: &DispatchRequest,
    log: &mut dyn FnMut(&str),
) -> DispatchReport {
    let diff_sha256 = DiffSha256::of(&request.diff);
    let doc = DispatchResultDoc {
        schema: SCHEMA.to_owned(),
        repository: request.repository.full_name(),
        workflow: request.workflow.clone(),
        git_ref: request.git_ref.as_str().to_owned(),
        task_id: request.task_id.as_str().to_owned(),
        base_sha: request.base.as_str().to_owned(),
        diff_sha256: diff_sha256.as_str().to_owned(),
        transport: "diff_b64".to_owned(),
        diff_ref: None,
        run: None,
        jobs: Vec::new(),
        decision: "error".to_owned(),
        exit_code: contract::cli::Exit::Error.code(),
        failed: None,
        pull_request: None,
        check_run: None,
        reasons: Vec::new(),
        log_tail: None,
    };
    let mut progress = Progress { doc, log };
    match dispatch_and_follow(client, request, &diff_sha256, &mut progress) {
        Ok((decision, code)) => progress.finish(decision, code),
        Err(reason) => progress.error(reason),
    }
}

fn text(e: &Error) -> String {
    e.to_string()
}

fn dispatch_and_follow(
    client: &Client,
    request: &DispatchRequest,
    diff_sha256: &DiffSha256,
    progress: &mut Progress<'_>,
) -> Result<(&'static str, u8), String> {
    let repo = &request.repository;
    let fields = SignedFields {
        repository: RepositoryName::parse(&repo.full_name()).map_err(|e| e.to_string())?,
        git_ref: request.git_ref.clone(),
        task_id: request.task_id.clone(),
        base: request.base.clone(),
        diff_sha256: diff_sha256.clone(),
        scope: request.scope.clone(),
    };
    let mac = sign(&fields, &request.key);

    let (workflow, workflow_date) = client
        .get_workflow(repo, &request.workflow)
        .map_err(|e| text(&e))?;
    if workflow.state != "active" {
        return Err(format!(
            "workflow {} is {}, not active",
            workflow.path, workflow.state
        ));
    }
    let mut watermark = workflow_date;

    let mut inputs = base_inputs(request, diff_sha256, &mac);
    let b64 = base64::engine::general_purpose::STANDARD.encode(&request.diff);
    inputs.insert("diff_b64".to_owned(), b64);
    if payload_chars(&inputs) > MAX_INPUT_PAYLOAD {
        inputs.remove("diff_b64");
        let diff_ref =
            upload_diff(client, request).map_err(|e| format!("uploading the diff: {e}"))?;
        (progress.log)(&format!(
            "the diff is too large for diff_b64; uploaded to branch {}",
            diff_ref.as_str()
        ));
        progress.doc.transport = "diff_ref".to_owned();
        progress.doc.diff_ref = Some(diff_ref.as_str().to_owned());
        inputs.insert("diff_ref".to_owned(), diff_ref.as_str().to_owned());
    }
    check_inputs(&inputs)?;
    if payload_chars(&inputs) > MAX_INPUT_PAYLOAD {
        return Err(
            "the dispatch inputs exceed 65,535 characters even without the diff".to_owned(),
        );
    }

    let dispatch = |with_details: bool| {
        client.dispatch_workflow(
            repo,
            &request.workflow,
            request.git_ref.as_str(),
            &inputs,
            with_details,
        )
    };
    let found = match dispatch(true) {
        Ok(dispatched) => match dispatched.outcome {
            DispatchOutcome::RunDetails(details) => Found::Named(details.workflow_run_id),
            DispatchOutcome::Accepted => Found::Correlate,
            DispatchOutcome::ParameterRejected { status, .. } => {
                (progress.log)(&format!(
                    "the server refused return_run_details (HTTP {status}); dispatching without it"
                ));
                watermark = watermark.max(dispatched.date);
                match dispatch(false) {
                    Ok(again) if again.outcome == DispatchOutcome::Accepted => Found::Correlate,
                    Ok(again) => {
                        return Err(format!(
                            "unexpected answer to the dispatch: {:?}",
                            again.outcome
                        ));
                    }
                    Err(e) => ambiguous(e, progress)?,
                }
            }
        },
        Err(e) => ambiguous(e, progress)?,
    };

    let (run_id, found_by) = match found {
        Found::Named(id) => (id, "return_run_details"),
        Found::Correlate => {
            let watermark = watermark.ok_or(
                "GitHub's responses carried no Date header, so the run cannot be told apart from older ones",
            )?;
            (
                find_run(client, request, watermark)?,
                "run-name-and-watermark",
            )
        }
    };
    let run = client.get_run(repo, run_id).map_err(|e| text(&e))?;
    check_run_identity(&run, request)?;
    progress.doc.run = Some(run_doc(&run, found_by));
    (progress.log)(&format!("run {} ({})", run.id, run.html_url));
    if !request.wait {
        return Ok(("dispatched", contract::cli::Exit::Pass.code()));
    }

    let run = wait_for_completion(client, repo, run)?;
    progress.doc.run = Some(run_doc(&run, found_by));
    decide(client, request, diff_sha256, &run, progress)
}

enum Found {
    Named(u64),
    Correlate,
}

/// A failed dispatch: one that may have reached GitHub (a `5xx`, a connection lost after
/// sending) is left to the correlation, never sent again; any other failure is final.
fn ambiguous(e: Error, progress: &mut Progress<'_>) -> Result<Found, String> {
    match e {
        Error::Transport {
            may_have_reached: true,
            ..
        }
        | Error::Status {
            status: 500..=599, ..
        } => {
            (progress.log)(&format!(
                "the dispatch may or may not have started a run ({e}); looking for it instead of dispatching again"
            ));
            Ok(Found::Correlate)
        }
        e => Err(format!("dispatch refused: {e}")),
    }
}

fn base_inputs(
    request: &DispatchRequest,
    diff_sha256: &DiffSha256,
    mac: &DispatchMac,
) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("task_id".to_owned(), request.task_id.as_str().to_owned()),
        ("base_sha".to_owned(), request.base.as_str().to_owned()),
        (
            "expected_diff_sha256".to_owned(),
            diff_sha256.as_str().to_owned(),
        ),
        ("declared_scope".to_owned(), request.scope.to_input()),
        ("dispatch_mac".to_owned(), mac.to_input()),
    ])
}

/// The characters of the inputs object as sent (JSON).
pub fn payload_chars(inputs: &BTreeMap<String, String>) -> usize {
    serde_json::to_string(inputs).map_or(usize::MAX, |s| s.chars().count())
}

/// The inputs must pass the workflow's own validation before they are sent.
fn check_inputs(inputs: &BTreeMap<String, String>) -> Result<(), String> {
    let get = |name: &str| inputs.get(name).map_or("", String::as_str);
    let raw = RawInputs {
        task_id: get("task_id"),
        base_sha: get("base_sha"),
        expected_diff_sha256: get("expected_diff_sha256"),
        declared_scope: get("declared_scope"),
        diff_b64: get("diff_b64"),
        diff_ref: get("diff_ref"),
        dispatch_mac: get("dispatch_mac"),
    };
    validate(&raw).map(|_| ()).map_err(|errors| {
        let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
        format!(
            "the workflow would refuse these inputs: {}",
            messages.join("; ")
        )
    })
}

/// Blob, tree (one file at the root), commit without parent, and the branch.
fn upload_diff(client: &Client, request: &DispatchRequest) -> Result<DiffRef, Error> {
    let repo = &request.repository;
    let task = &request.task_id;
    let blob = client.create_blob(repo, &request.diff)?;
    let entry = github::git::TreeEntry {
        path: task.patch_file(),
        mode: "100644".to_owned(),
        kind: "blob".to_owned(),
        sha: Some(blob.sha),
    };
    let tree = client.create_tree(repo, None, &[entry])?;
    let message = format!(
        "agent-team-apply {task}: candidate diff\n\nDiff-Sha256: {}\n",
        DiffSha256::of(&request.diff).as_str()
    );
    let commit = client.create_commit(repo, &message, &tree.sha, &[])?;
    let branch = task.diff_branch();
    match client.create_ref(repo, &format!("refs/heads/{branch}"), &commit.sha) {
        Ok(_) => {}
        Err(Error::Status { status: 422, .. })
            if client.get_ref(repo, &format!("heads/{branch}"))?.is_some() =>
        {
            // An earlier attempt of this task left the branch: move it to this diff.
            client.update_ref(repo, &format!("heads/{branch}"), &commit.sha, true)?;
        }
        Err(e) => return Err(e),
    }
    DiffRef::parse(&branch).map_err(|e| Error::Decode {
        method: "POST",
        path: "(diff_ref)".to_owned(),
        message: e.to_string(),
    })
}

fn timestamp(unix: i64) -> Result<Timestamp, String> {
    Timestamp::parse_rfc3339(&github::date::format_rfc3339(unix)).map_err(|e| e.to_string())
}

fn as_select_run(run: &WorkflowRun) -> Result<Run, String> {
    let created =
        Timestamp::parse_rfc3339(&run.created_at).map_err(|e| format!("run {}: {e}", run.id))?;
    Ok(Run {
        record: RunRecord {
            database_id: run.id,
            // The run name (`run-name:`) is the REST `display_title`; `name` is the workflow's.
            display_title: run.display_title.clone(),
            status: run.status.clone().unwrap_or_default(),
            conclusion: run.conclusion.clone(),
            created_at: run.created_at.clone(),
            event: Some(run.event.clone()),
            head_sha: Some(run.head_sha.clone()),
            url: Some(run.html_url.clone()),
        },
        created,
    })
}

/// The run started by this dispatch, by name and watermark, polling with backoff for at most
/// [`FIND_LIMIT`] (and never past the deadline).
fn find_run(client: &Client, request: &DispatchRequest, watermark: i64) -> Result<u64, String> {
    let since = timestamp(watermark)?;
    let task = select_run::TaskId::parse(request.task_id.as_str()).map_err(|e| e.to_string())?;
    let branch = request.git_ref.as_str().strip_prefix("refs/heads/");
    let start = client.clock().elapsed();
    let mut delay = Duration::from_secs(2);
    loop {
        let listed = client
            .list_dispatch_runs(&request.repository, &request.workflow, branch)
            .map_err(|e| text(&e))?;
        let runs = listed
            .workflow_runs
            .iter()
            .filter(|r| r.event == "workflow_dispatch")
            .map(as_select_run)
            .collect::<Result<Vec<_>, _>>()?;
        if let Some(run) = select_run::select(&runs, &task, since) {
            return Ok(run.record.database_id);
        }
        let waited = client.clock().elapsed().saturating_sub(start);
        if waited + delay > FIND_LIMIT {
            return Err(format!(
                "no run named \"{}\" created at or after {} appeared within {} s",
                task.run_name(),
                github::date::format_rfc3339(watermark),
                FIND_LIMIT.as_secs()
            ));
        }
        client
            .wait(delay, "GET", "(looking for the dispatched run)")
            .map_err(|_| {
                format!(
                    "the deadline passed before a run named \"{}\" appeared",
                    task.run_name()
                )
            })?;
        delay = (delay * 2).min(Duration::from_secs(15));
    }
}

fn check_run_identity(run: &WorkflowRun, request: &DispatchRequest) -> Result<(), String> {
    let name = format!("{}{}", select_run::RUN_NAME_PREFIX, request.task_id);
    let path = format!(".github/workflows/{}", request.workflow);
    let path_ok = run.path == path || run.path.starts_with(&format!("{path}@"));
    if run.display_title != name || run.event != "workflow_dispatch" || !path_ok {
        return Err(format!(
            "run {} is not this dispatch's: name {:?}, event {:?}, workflow {:?}",
            run.id, run.display_title, run.event, run.path
        ));
    }
    Ok(())
}

fn run_doc(run: &WorkflowRun, found_by: &str) -> RunDoc {
    RunDoc {
        id: run.id,
        api_url: run.url.clone(),
        html_url: run.html_url.clone(),
        found_by: found_by.to_owned(),
        status: run.status.clone(),
        conclusion: run.conclusion.clone(),
    }
}

fn wait_for_completion(
    client: &Client,
    repo: &Repository,
    mut run: WorkflowRun,
) -> Result<WorkflowRun, String> {
    let mut delay = Duration::from_secs(2);
    while run.status.as_deref() != Some("completed") {
        client
            .wait(delay, "GET", "(waiting for the run)")
            .map_err(|_| {
                format!(
                    "timed out: run {} is still {}",
                    run.id,
                    run.status.as_deref().unwrap_or("pending")
                )
            })?;
        delay = (delay * 2).min(Duration::from_secs(30));
        run = client.get_run(repo, run.id).map_err(|e| text(&e))?;
    }
    Ok(run)
}

fn decide(
    client: &Client,
    request: &DispatchRequest,
    diff_sha256: &DiffSha256,
    run: &WorkflowRun,
    progress: &mut Progress<'_>,
) -> Result<(&'static str, u8), String> {
    let repo = &request.repository;
    let jobs = client
        .list_run_jobs(repo, run.id)
        .map_err(|e| text(&e))?
        .jobs;
    progress.doc.jobs = jobs
        .iter()
        .map(|j| JobDoc {
            name: j.name.clone(),
            status: j.status.clone(),
            conclusion: j.conclusion.clone(),
            html_url: j.html_url.clone(),
            failed_step: failed_step(j),
        })
        .collect();
    let conclusion = run.conclusion.as_deref().unwrap_or("");
    match conclusion {
        "success" => {}
        "failure" | "timed_out" => {
            let failed = REQUIRED_JOBS
                .iter()
                .filter_map(|name| job_named(&jobs, name))
                .chain(jobs.iter())
                .find(|j| matches!(j.conclusion.as_deref(), Some("failure" | "timed_out")));
            let Some(job) = failed else {
                return Err(format!(
                    "run {} concluded {conclusion} but no job failed",
                    run.id
                ));
            };
            let step = failed_step(job);
            let reason = match &step {
                Some(step) => format!("job {} failed at step \"{step}\"", job.name),
                None => format!(
                    "job {} concluded {}",
                    job.name,
                    job.conclusion.as_deref().unwrap_or("")
                ),
            };
            (progress.log)(&format!("gate failed: {reason}"));
            progress.doc.reasons.push(reason);
            progress.doc.failed = Some(FailedDoc {
                job: job.name.clone(),
                step,
            });
            progress.doc.log_tail = Some(log_tail(client, repo, job));
            return Ok(("fail", contract::cli::Exit::Fail.code()));
        }
        other => {
            return Err(format!(
                "run {} concluded {:?}: no verdict (cancelled, skipped or not started)",
                run.id, other
            ));
        }
    }
    for name in REQUIRED_JOBS {
        match job_named(&jobs, name) {
            Some(job) if job.conclusion.as_deref() == Some("success") => {}
            Some(job) => {
                return Err(format!(
                    "run {} succeeded but job {name} concluded {:?}",
                    run.id, job.conclusion
                ));
            }
            None => {
                return Err(format!(
                    "run {} succeeded without a job named {name}",
                    run.id
                ));
            }
        }
    }
    verify_publication(client, request, diff_sha256, run, progress)?;
    (progress.log)("gate passed; draft pull request verified");
    Ok(("pass", contract::cli::Exit::Pass.code()))
}

/// The one job of the run named `name`, or `<caller job> / name` as GitHub names the jobs of a
/// called workflow; `None` when there is none or more than one.
pub fn job_named<'a>(
    jobs: &'a [github::actions::Job],
    name: &str,
) -> Option<&'a github::actions::Job> {
    let suffix = format!(" / {name}");
    let mut matching = jobs
        .iter()
        .filter(|j| j.name == name || j.name.ends_with(&suffix));
    match (matching.next(), matching.next()) {
        (Some(job), None) => Some(job),
        _ => None,
    }
}

fn failed_step(job: &github::actions::Job) -> Option<String> {
    job.steps
        .iter()
        .find(|s| {
            matches!(
                s.conclusion.as_deref(),
                Some("failure" | "timed_out" | "cancelled")
            )
        })
        .map(|s| s.name.clone())
}

fn log_tail(client: &Client, repo: &Repository, job: &github::actions::Job) -> LogTailDoc {
    let note = "non-authoritative: the end of the failed job's log, which the diff's own code can write to";
    let (text, truncated, note) = match client.job_log_tail(repo, job.id, LOG_TAIL_BYTES) {
        Ok((bytes, truncated)) => {
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let lines: Vec<&str> = text.lines().collect();
            let kept = lines.len().saturating_sub(LOG_TAIL_LINES);
            (
                lines[kept..].join("\n"),
                truncated || kept > 0,
                note.to_owned(),
            )
        }
        Err(e) => (String::new(), false, format!("{note}; not available: {e}")),
    };
    LogTailDoc {
        authoritative: false,
        note,
        job: job.name.clone(),
        truncated,
        text,
    }
}

/// The draft pull request from `agent-team/<task_id>` exists, its head commit is this run's
/// publication of this diff on the base, and the gate's check run on it succeeded.
fn verify_publication(
    client: &Client,
    request: &DispatchRequest,
    diff_sha256: &DiffSha256,
    run: &WorkflowRun,
    progress: &mut Progress<'_>,
) -> Result<(), String> {
    let repo = &request.repository;
    let branch = request.task_id.publish_branch();
    let pulls = client
        .list_open_pulls_from(repo, &branch)
        .map_err(|e| text(&e))?;
    let ours: Vec<_> = pulls
        .iter()
        .filter(|p| {
            p.head.name == branch
                && p.head
                    .repo
                    .as_ref()
                    .is_some_and(|r| r.full_name.eq_ignore_ascii_case(&repo.full_name()))
        })
        .collect();
    let [pull] = ours.as_slice() else {
        return Err(format!(
            "the gate passed but {} open pull requests come from {branch} (expected one draft)",
            ours.len()
        ));
    };
    progress.doc.pull_request = Some(PullRequestDoc {
        number: pull.number,
        html_url: pull.html_url.clone(),
        draft: pull.draft == Some(true),
        head_sha: pull.head.sha.clone(),
    });
    if pull.draft != Some(true) {
        return Err(format!("pull request #{} is not a draft", pull.number));
    }
    let commit = client
        .get_commit(repo, &pull.head.sha)
        .map_err(|e| text(&e))?;
    let trailers: Vec<&str> = commit.message.lines().collect();
    let run_trailer = format!("Run-Id: {}", run.id);
    let diff_trailer = format!("Diff-Sha256: {}", diff_sha256.as_str());
    let on_base = commit.parents.len() == 1 && commit.parents[0].sha == request.base.as_str();
    if !trailers.contains(&run_trailer.as_str())
        || !trailers.contains(&diff_trailer.as_str())
        || !on_base
    {
        return Err(format!(
            "pull request #{}'s head commit {} is not this run's publication of this diff on the base",
            pull.number, commit.sha
        ));
    }
    let checks = client
        .list_check_runs(repo, &pull.head.sha, CHECK_NAME)
        .map_err(|e| text(&e))?;
    let check = checks
        .check_runs
        .iter()
        .find(|c| c.name == CHECK_NAME && c.head_sha == pull.head.sha);
    progress.doc.check_run = check.map(|c| CheckRunDoc {
        name: c.name.clone(),
        conclusion: c.conclusion.clone(),
        html_url: c.html_url.clone(),
    });
    match check {
        Some(c) if c.status == "completed" && c.conclusion.as_deref() == Some("success") => Ok(()),
        Some(c) => Err(format!(
            "the check run \"{CHECK_NAME}\" on {} concluded {:?}",
            pull.head.sha, c.conclusion
        )),
        None => Err(format!(
            "no check run \"{CHECK_NAME}\" on {}",
            pull.head.sha
        )),
    }
}
