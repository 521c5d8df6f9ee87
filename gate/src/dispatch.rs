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
//!    without it), leads to the correlation ([`find_run`]): the run named
//!    `agent-team-apply <task_id> <dispatch_mac>` ([`run_name`]: the signed input, with this
//!    dispatch's nonce), of the workflow file and event `workflow_dispatch`, on the dispatched
//!    branch at its head, by the dispatcher (`actor.login`: the token's user, or the dispatcher
//!    App's bot), created at or after a watermark taken from GitHub's own `Date` before the
//!    dispatch. A dispatch that may or may not have reached GitHub (a `5xx`, a connection lost
//!    after sending) is never sent again: the correlation decides whether it started a run. No
//!    run found is an error, and so are two, never a guess.
//! 4. The run is checked to be this dispatch's (its name with the nonce, event and workflow
//!    file). Everything read afterwards (jobs, logs, the guard's artifact) is that run's own.
//! 5. With `wait`, the run is polled with backoff until it completes or the deadline passes
//!    (the last wait is cut to end on the deadline, where a last poll is made), each poll
//!    conditional on the last `ETag` (an unchanged run is a `304`); then the jobs'
//!    conclusions decide. On success the publication is authenticated ([`verify_publication`]):
//!    the draft pull request from `agent-team/<task_id>` exists; the gate's check run on its
//!    head was created by the publishing App (`--app-id`: listed with the `app_id` filter, and
//!    its `app.id` checked) and succeeded; the head commit is signed and verified by GitHub
//!    (`verification.verified`, reason `valid`), authored by the App's bot `<slug>[bot]` and
//!    committed by it or by GitHub, has the plan's headline, this run's `Run-Id`, the diff's
//!    `Diff-Sha256` and this dispatch's `Dispatch-Nonce` trailers, the base as only parent, and
//!    the tree that the check run says the publish job proved. Anyone with `checks: write` can
//!    post a check run of any name, and anyone who can push can move the branch: only the App's
//!    own check run and GitHub's signature for the App's bot are evidence. On failure the
//!    failed job and step are named, and the end of that job's log is attached, marked
//!    non-authoritative.

use std::collections::BTreeMap;
use std::time::Duration;

use base64::Engine;
use github::actions::{DispatchOutcome, RunPoll, WorkflowRun};
use github::{Client, Error, Repository};
use guard::inputs::{
    BaseSha, DiffRef, DiffSha256, DispatchMac, Nonce, RawInputs, Scope, TaskId, validate,
};
use report::select_run::{self, Timestamp};

use crate::dispatch_mac::{
    DispatchKey, FullRef, RepositoryName, SignedFields, WorkflowPath, random_nonce, sign,
};
use crate::output::dispatch_result_v2::{
    CheckRunDoc, DispatchResultDoc, FailedDoc, JobDoc, LogTailDoc, PublicationDoc, PullRequestDoc,
    RunDoc, SCHEMA,
};
use crate::publication::{NONCE_TRAILER, PROVEN_TREE_LINE, commit_trailer};

/// GitHub's cap on the characters of a dispatch's inputs payload.
pub const MAX_INPUT_PAYLOAD: usize = 65_535;
/// The jobs of the reusable workflow whose conclusions decide, in order. The caller's job that
/// calls it prefixes their names: `apply / guard` ([`job_named`]).
pub const REQUIRED_JOBS: [&str; 4] = ["guard", "build-test", "decide", "publish"];
/// The check run the publication posts (`report check-run`'s default name).
pub const CHECK_NAME: &str = report::check_run::DEFAULT_CHECK_NAME;
/// How long a dispatched run may take to be listed before the correlation gives up.
pub const FIND_LIMIT: Duration = Duration::from_secs(300);
/// How much earlier than the watermark (GitHub's `Date` before the dispatch, whole seconds) a
/// run's `created_at` may say it was created and still be this dispatch's.
pub const CLOCK_SKEW_SECONDS: i64 = 2;

/// The caller workflow's run name (its `run-name: "agent-team-apply ${{ inputs.task_id }}
/// ${{ inputs.dispatch_mac }}"`): the task and the signed `dispatch_mac` input, whose nonce only
/// this dispatch carries.
pub fn run_name(task: &TaskId, mac: &DispatchMac) -> String {
    format!("{}{task} {}", select_run::RUN_NAME_PREFIX, mac.to_input())
}
/// The most of a failed job's log kept.
pub const LOG_TAIL_BYTES: usize = 16 * 1024;
/// The most lines of it kept.
pub const LOG_TAIL_LINES: usize = 100;
/// The schema of the file the guard job uploads as its artifact.
pub const GUARD_REASONS_SCHEMA: &str = "agent-team-apply/guard-reasons/v1";
/// The largest guard artifact read.
pub const GUARD_ARTIFACT_MAX: usize = 8 << 20;

/// The guard job's artifact for an attempt of a run and one call of the reusable workflow:
/// `agent-team-guard-<run id>-<attempt>-<call>.json`, `<call>` told apart by the call's inputs
/// (a caller may call the workflow more than once in a run, and a name is unique in a run).
pub fn guard_artifact_name(run_id: u64, attempt: u64, call: &str) -> String {
    format!("{}{call}.json", guard_artifact_prefix(run_id, attempt))
}

/// What every guard artifact of an attempt of a run is named with first.
pub fn guard_artifact_prefix(run_id: u64, attempt: u64) -> String {
    format!("agent-team-guard-{run_id}-{attempt}-")
}

/// The file the guard job uploads: its verdict and readiness documents as written (`null`
/// where a step wrote none), bound to the run and attempt.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct GuardReasonsFile {
    schema: String,
    run_id: u64,
    run_attempt: u64,
    verdict: Option<serde_json::Value>,
    readiness: Option<serde_json::Value>,
}

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
    /// The publishing App's id: required with `wait` (the outcome is authenticated against it).
    pub app_id: Option<u64>,
    /// The check run the publication posts (the caller's `check-run-name`; default
    /// [`CHECK_NAME`]), read with `wait`.
    pub check_name: String,
    /// The agent's title and description for the draft (empty: none).
    pub pr_title: String,
    pub pr_description: String,
    /// How long the signed dispatch stays valid (at most [`crate::dispatch_mac::MAX_LIFETIME`]).
    pub lifetime: Duration,
    /// The nonce to sign with; `None`: 16 random bytes.
    pub nonce: Option<Nonce>,
    /// Before dispatching, run the guard's check on this local clone at the base (with this
    /// policy file, else the clone's `.github/agent-team-policy.yml`, else the default).
    pub preflight: Option<Preflight>,
    /// A revision of the task's open draft pull request (this number); `base` is its head.
    pub revision: Option<u64>,
    /// The login the dispatched run's `actor` must be: the dispatcher App's bot `<slug>[bot]`
    /// when the token was minted from its key; `None`: the token's user (`GET /user`), read when
    /// the run has to be looked for.
    pub dispatcher: Option<String>,
}

/// `gate dispatch --preflight DIR`.
#[derive(Debug, Clone)]
pub struct Preflight {
    pub dir: std::path::PathBuf,
    pub policy: Option<std::path::PathBuf>,
}

/// The guard's check of the diff on the local clone at the base, as the guard job runs it (the
/// same library, with git's cross-check): a verdict, or why none could be reached.
pub fn preflight(
    preflight: &Preflight,
    request: &DispatchRequest,
    diff_sha256: &DiffSha256,
) -> Result<contract::verdict::VerdictDoc, String> {
    let default_policy = preflight.dir.join(".github/agent-team-policy.yml");
    let policy_path = match &preflight.policy {
        Some(path) => Some(path.clone()),
        None => default_policy.is_file().then_some(default_policy),
    };
    let policy = guard::policy::Policy::load(policy_path.as_deref())
        .map_err(|e| format!("preflight: {e}"))?;
    let verdict = guard::check::check(&guard::check::CheckRequest {
        diff: &request.diff,
        expected_sha256: diff_sha256.as_str(),
        scope: request.scope.globs(),
        policy: &policy,
        repo: Some(guard::check::RepoBase {
            dir: &preflight.dir,
            base: request.base.as_str(),
        }),
    })
    .map_err(|e| format!("preflight: {e}"))?;
    Ok(guard::output::json_v1::document(&verdict))
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
    let doc = initial_doc(request, &diff_sha256);
    run_with(client, request, &diff_sha256, Progress { doc, log })
}

/// Dispatch with a token minted from the dispatcher App's key ([`crate::app_auth`]) at Unix time
/// `now`, the App's bot as the dispatcher, and the token revoked afterwards, whatever happened.
/// `connect` builds a client presenting the given bearer token (the App's JSON web token, then
/// the installation token).
pub fn run_as_app(
    connect: &dyn Fn(&str) -> Result<Client, String>,
    app: &crate::app_auth::DispatcherApp,
    now: i64,
    mut request: DispatchRequest,
    log: &mut dyn FnMut(&str),
) -> DispatchReport {
    let diff_sha256 = DiffSha256::of(&request.diff);
    let doc = initial_doc(&request, &diff_sha256);
    let progress = Progress { doc, log };
    let permissions =
        crate::app_auth::token_permissions(request.wait, needs_diff_branch(&request, &diff_sha256));
    let minted = app
        .key
        .jwt(app.app_id, now)
        .map_err(|e| e.to_string())
        .and_then(|jwt| connect(&jwt))
        .and_then(|app_client| {
            crate::app_auth::mint(&app_client, app.app_id, &request.repository, &permissions)
        });
    let minted = match minted {
        Ok(minted) => minted,
        Err(reason) => return progress.error(reason),
    };
    let client = match connect(&minted.token) {
        Ok(client) => client,
        Err(reason) => return progress.error(reason),
    };
    (progress.log)(&format!(
        "dispatching as {} with an installation token of App {} (installation {}; {}), revoked afterwards",
        minted.bot_login,
        app.app_id,
        minted.installation_id,
        minted
            .permissions
            .iter()
            .map(|(k, v)| format!("{k}: {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    request.dispatcher = Some(minted.bot_login.clone());
    let mut report = run_with(&client, &request, &diff_sha256, progress);
    if let Err(e) = client.revoke_installation_token() {
        let reason = format!(
            "the installation token could not be revoked ({e}); it expires at {}",
            minted.expires_at
        );
        log(&format!("warning: {reason}"));
        report.doc.reasons.push(reason);
    }
    report
}

/// Whether the diff will travel on a branch (`diff_ref`): the inputs with `diff_b64`, the
/// `dispatch_mac` counted longer than it is and the title and description even when empty,
/// exceed [`MAX_INPUT_PAYLOAD`] (an overestimate at worst asks for `contents: write` needlessly).
fn needs_diff_branch(request: &DispatchRequest, diff_sha256: &DiffSha256) -> bool {
    let mut inputs = BTreeMap::from([
        ("task_id".to_owned(), request.task_id.as_str().to_owned()),
        ("base_sha".to_owned(), request.base.as_str().to_owned()),
        (
            "expected_diff_sha256".to_owned(),
            diff_sha256.as_str().to_owned(),
        ),
        ("declared_scope".to_owned(), request.scope.to_input()),
        ("dispatch_mac".to_owned(), "x".repeat(128)),
        ("pr_title".to_owned(), request.pr_title.clone()),
        ("pr_description".to_owned(), request.pr_description.clone()),
    ]);
    if let Some(number) = request.revision {
        inputs.insert(
            crate::dispatch_mac::REVISION_INPUT.to_owned(),
            number.to_string(),
        );
    }
    inputs.insert(
        "diff_b64".to_owned(),
        base64::engine::general_purpose::STANDARD.encode(&request.diff),
    );
    payload_chars(&inputs) > MAX_INPUT_PAYLOAD
}

fn initial_doc(request: &DispatchRequest, diff_sha256: &DiffSha256) -> DispatchResultDoc {
    DispatchResultDoc {
        schema: SCHEMA.to_owned(),
        repository: request.repository.full_name(),
        workflow: request.workflow.clone(),
        git_ref: request.git_ref.as_str().to_owned(),
        task_id: request.task_id.as_str().to_owned(),
        base_sha: request.base.as_str().to_owned(),
        diff_sha256: diff_sha256.as_str().to_owned(),
        nonce: String::new(),
        expires_at: 0,
        app_id: request.app_id,
        transport: "diff_b64".to_owned(),
        diff_ref: None,
        run: None,
        jobs: Vec::new(),
        decision: "error".to_owned(),
        exit_code: contract::cli::Exit::Error.code(),
        failed: None,
        pull_request: None,
        check_run: None,
        publication: None,
        guard_verdict: None,
        guard_verdict_unavailable: None,
        reasons: Vec::new(),
        log_tail: None,
        build_findings_non_authoritative: None,
    }
}

fn run_with(
    client: &Client,
    request: &DispatchRequest,
    diff_sha256: &DiffSha256,
    mut progress: Progress<'_>,
) -> DispatchReport {
    if let Some(check) = &request.preflight {
        match preflight(check, request, diff_sha256) {
            Ok(verdict) => {
                let accepted = verdict.accepted();
                progress.doc.guard_verdict = Some(
                    crate::output::dispatch_result_v2::GuardVerdictDoc::from_verdict(
                        "preflight",
                        None,
                        &verdict,
                    ),
                );
                if !accepted {
                    let reason = format!(
                        "preflight: guard check rejected the diff on {} at {} ({} violation(s)); nothing was dispatched",
                        check.dir.display(),
                        request.base.as_str(),
                        verdict.violations.len()
                    );
                    (progress.log)(&reason);
                    progress.doc.reasons.push(reason);
                    return progress.finish("fail", contract::cli::Exit::Fail.code());
                }
                (progress.log)("preflight: guard check accepts the diff at the base");
            }
            Err(reason) => return progress.error(reason),
        }
    }
    match dispatch_and_follow(client, request, diff_sha256, &mut progress) {
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
    if request.wait && request.app_id.is_none() {
        return Err(
            "--wait needs the publishing App's id (--app-id or AGENT_TEAM_APP_ID): without it no outcome can be authenticated"
                .to_owned(),
        );
    }
    if request.lifetime.is_zero() || request.lifetime > crate::dispatch_mac::MAX_LIFETIME {
        return Err(format!(
            "the dispatch's lifetime must be 1 s to {} s",
            crate::dispatch_mac::MAX_LIFETIME_SECONDS
        ));
    }
    let nonce = match &request.nonce {
        Some(nonce) => nonce.clone(),
        None => random_nonce().map_err(|e| e.to_string())?,
    };
    let now = u64::try_from(client.clock().unix_seconds()).unwrap_or(0);
    let fields = SignedFields {
        repository: RepositoryName::parse(&repo.full_name()).map_err(|e| e.to_string())?,
        git_ref: request.git_ref.clone(),
        workflow: WorkflowPath::parse(&request.workflow).map_err(|e| e.to_string())?,
        task_id: request.task_id.clone(),
        base: request.base.clone(),
        diff_sha256: diff_sha256.clone(),
        nonce: nonce.clone(),
        expires_at: now.saturating_add(request.lifetime.as_secs()),
        scope: request.scope.clone(),
        pr_title: request.pr_title.clone(),
        pr_description: request.pr_description.clone(),
        revision: request.revision,
    };
    let mac = sign(&fields, &request.key);
    let name = run_name(&request.task_id, &mac);
    progress.doc.nonce = nonce.as_str().to_owned();
    progress.doc.expires_at = fields.expires_at;

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

    let mut inputs = signed_inputs(&fields, &mac);
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
                find_run(client, request, &name, watermark, progress.log)?,
                "run-name-and-watermark",
            )
        }
    };
    let run = client.get_run(repo, run_id).map_err(|e| text(&e))?;
    check_run_identity(&run, request, &name)?;
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

/// The dispatch inputs a signature stands for (without the diff's transport): what `gate sign`
/// prints and `gate dispatch` sends. `pr_title` and `pr_description` only when not empty.
pub fn signed_inputs(fields: &SignedFields, mac: &DispatchMac) -> BTreeMap<String, String> {
    let mut inputs = BTreeMap::from([
        ("task_id".to_owned(), fields.task_id.as_str().to_owned()),
        ("base_sha".to_owned(), fields.base.as_str().to_owned()),
        (
            "expected_diff_sha256".to_owned(),
            fields.diff_sha256.as_str().to_owned(),
        ),
        ("declared_scope".to_owned(), fields.scope.to_input()),
        ("dispatch_mac".to_owned(), mac.to_input()),
    ]);
    if !fields.pr_title.is_empty() {
        inputs.insert("pr_title".to_owned(), fields.pr_title.clone());
    }
    if !fields.pr_description.is_empty() {
        inputs.insert("pr_description".to_owned(), fields.pr_description.clone());
    }
    if let Some(number) = fields.revision {
        inputs.insert(
            crate::dispatch_mac::REVISION_INPUT.to_owned(),
            number.to_string(),
        );
    }
    inputs
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
        pr_title: get("pr_title"),
        pr_description: get("pr_description"),
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

/// Who the dispatch's runs are by: [`DispatchRequest::dispatcher`], else the token's user.
fn dispatcher_login(client: &Client, request: &DispatchRequest) -> Result<String, String> {
    match &request.dispatcher {
        Some(login) => Ok(login.clone()),
        None => client.get_authenticated_user().map(|u| u.login).map_err(|e| {
            format!(
                "the run has to be looked for, and it is matched to the token's identity, which could not be read ({e}): an installation token has none; give the dispatcher App's key (--dispatcher-app-id, --dispatcher-app-key-file) or a user's token"
            )
        }),
    }
}

/// The run started by this dispatch, polling with backoff for at most [`FIND_LIMIT`] (and never
/// past the deadline). A candidate must carry what only this dispatch does and be started as it
/// was: the run name with this dispatch's signed `dispatch_mac` (its nonce), the workflow file,
/// event `workflow_dispatch`, the dispatched branch as `head_branch` and that branch's head as
/// `head_sha` (a tag of the branch's name reports the same `head_branch`; a head seen at any
/// poll counts, as the branch may move meanwhile), the dispatcher as `actor`, and a
/// `created_at` no earlier than the watermark less [`CLOCK_SKEW_SECONDS`]. Anyone with
/// `actions: write` can start a run with a copy of the inputs, hence the same name: not as the
/// dispatcher. Two or more candidates are an error, never the newest.
fn find_run(
    client: &Client,
    request: &DispatchRequest,
    name: &str,
    watermark: i64,
    progress_log: &mut dyn FnMut(&str),
) -> Result<u64, String> {
    let since = watermark.saturating_sub(CLOCK_SKEW_SECONDS);
    let Some(branch) = request.git_ref.as_str().strip_prefix("refs/heads/") else {
        return Err(format!(
            "the run of a dispatch on {} cannot be told apart: only a branch's run is looked for",
            request.git_ref.as_str()
        ));
    };
    let actor = dispatcher_login(client, request)?;
    let repo = &request.repository;
    let mut heads: Vec<String> = Vec::new();
    let mut refused: Vec<u64> = Vec::new();
    let start = client.clock().elapsed();
    let mut delay = Duration::from_secs(2);
    loop {
        if let Some(head) = client
            .get_ref(repo, &format!("heads/{branch}"))
            .map_err(|e| text(&e))?
            && !heads.contains(&head.object.sha)
        {
            heads.push(head.object.sha);
        }
        let listed = client
            .list_dispatch_runs(repo, &request.workflow, Some(branch))
            .map_err(|e| text(&e))?;
        let mut matching = Vec::new();
        for run in &listed.workflow_runs {
            let created = unix_of(Some(&run.created_at), &format!("run {}", run.id))?;
            let run_actor = run.actor.as_ref().map_or("(none)", |a| a.login.as_str());
            let mismatch = if let Err(why) = check_run_identity(run, request, name) {
                Some(why)
            } else if run.head_branch.as_deref() != Some(branch) || !heads.contains(&run.head_sha) {
                Some(format!(
                    "it runs on {:?} at {}, not branch {branch}'s head ({}): a tag of the branch's name, or another commit",
                    run.head_branch.as_deref().unwrap_or(""),
                    run.head_sha,
                    heads.join(", ")
                ))
            } else if !run_actor.eq_ignore_ascii_case(&actor) {
                Some(format!(
                    "it was started by {run_actor}, not by the dispatcher {actor}"
                ))
            } else if created < since {
                Some(format!(
                    "it was created at {}, before the dispatch ({})",
                    run.created_at,
                    github::date::format_rfc3339(since)
                ))
            } else {
                None
            };
            match mismatch {
                None => matching.push(run.id),
                // Only a run bearing this dispatch's name is worth a word, and once.
                Some(why) if run.display_title == name && !refused.contains(&run.id) => {
                    refused.push(run.id);
                    (progress_log)(&format!(
                        "run {} bears this dispatch's name but is not its run: {why}",
                        run.id
                    ));
                }
                Some(_) => {}
            }
        }
        match matching.as_slice() {
            [] => {}
            [id] => return Ok(*id),
            several => {
                let ids: Vec<String> = several.iter().map(u64::to_string).collect();
                return Err(format!(
                    "{} runs named \"{name}\" by {actor} on {branch} created at or after {} (ids {}): which one this dispatch started is not known, and none is guessed",
                    several.len(),
                    github::date::format_rfc3339(since),
                    ids.join(", ")
                ));
            }
        }
        let waited = client.clock().elapsed().saturating_sub(start);
        if waited + delay > FIND_LIMIT {
            return Err(format!(
                "no run named \"{name}\" by {actor} on {branch} created at or after {} appeared within {} s",
                github::date::format_rfc3339(since),
                FIND_LIMIT.as_secs()
            ));
        }
        client
            .wait(delay, "GET", "(looking for the dispatched run)")
            .map_err(|_| format!("the deadline passed before a run named \"{name}\" appeared"))?;
        delay = (delay * 2).min(Duration::from_secs(15));
    }
}

fn check_run_identity(
    run: &WorkflowRun,
    request: &DispatchRequest,
    name: &str,
) -> Result<(), String> {
    let path = format!(".github/workflows/{}", request.workflow);
    // GitHub may qualify the path with the ref it ran at: only the dispatched one is this
    // dispatch's (a tag of the branch's name is `@refs/tags/...`).
    let path_ok = run.path == path || run.path == format!("{path}@{}", request.git_ref.as_str());
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
    // Each poll after the first is conditional on the last ETag: an unchanged run is a `304`,
    // which does not count against the primary rate limit.
    let mut etag: Option<String> = None;
    while run.status.as_deref() != Some("completed") {
        let timed_out = || {
            format!(
                "timed out: run {} is still {}",
                run.id,
                run.status.as_deref().unwrap_or("pending")
            )
        };
        // The last wait is cut to end on the deadline, where one more poll is made: a
        // `--timeout 8` polls at 0, 2, 6 and 8 s, not only at the backoffs that fit.
        client
            .wait_until_deadline(delay, "GET", "(waiting for the run)")
            .map_err(|_| timed_out())?;
        delay = (delay * 2).min(Duration::from_secs(30));
        match client
            .poll_run(repo, run.id, etag.as_deref())
            .map_err(|e| text(&e))?
        {
            RunPoll::Changed {
                run: now,
                etag: tag,
            } => {
                run = *now;
                etag = tag;
            }
            RunPoll::NotModified => {}
        }
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
            match guard_reasons(client, repo, run, &jobs) {
                Ok(verdict) => {
                    (progress.log)(&format!(
                        "the guard job's verdict: {}, {} violation(s)",
                        verdict.verdict,
                        verdict.violations.len()
                    ));
                    progress.doc.guard_verdict = Some(verdict);
                }
                Err(why) => {
                    (progress.log)(&format!("the guard job's verdict is not available: {why}"));
                    progress.doc.guard_verdict_unavailable = Some(why);
                }
            }
            progress.doc.log_tail = Some(log_tail(client, repo, job));
            if job_named(&jobs, "build-test").is_some_and(|b| b.id == job.id) {
                // Shown beside the decision, never read by it.
                progress.doc.build_findings_non_authoritative =
                    Some(build_findings(client, repo, run));
            }
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

fn unix_of(value: Option<&str>, what: &str) -> Result<i64, String> {
    let text = value.ok_or_else(|| format!("{what} has no time"))?;
    Timestamp::parse_rfc3339(text)
        .map(|t| t.unix_seconds())
        .map_err(|e| format!("{what}: {e}"))
}

/// The guard job's verdict from its artifact: named for this run and attempt, uploaded by this
/// run (`workflow_run.id`), created while the guard job ran and before build-test started (so
/// no later job, and nothing the diff's code did, wrote it: an artifact name is unique in a run,
/// and one replaced later would be created later), the file itself (`archive: false`) bound to
/// the run and attempt.
fn guard_reasons(
    client: &Client,
    repo: &Repository,
    run: &WorkflowRun,
    jobs: &[github::actions::Job],
) -> Result<crate::output::dispatch_result_v2::GuardVerdictDoc, String> {
    let attempt = run.run_attempt.unwrap_or(1);
    let prefix = guard_artifact_prefix(run.id, attempt);
    let listed = client
        .list_run_artifacts(repo, run.id, None)
        .map_err(|e| text(&e))?;
    let matching: Vec<_> = listed
        .artifacts
        .iter()
        .filter(|a| a.name.starts_with(&prefix) && a.name.ends_with(".json"))
        .collect();
    let [artifact] = matching.as_slice() else {
        return Err(format!(
            "{} artifacts named {prefix}<call>.json (one per call of the reusable workflow; the verdict is read when there is exactly one)",
            matching.len()
        ));
    };
    let name = artifact.name.clone();
    if artifact.workflow_run.as_ref().map(|r| r.id) != Some(run.id) || artifact.expired {
        return Err(format!("artifact {name} is not this run's, or has expired"));
    }
    let guard = job_named(jobs, "guard").ok_or("the run has no single guard job")?;
    let created = unix_of(artifact.created_at.as_deref(), "the artifact")?;
    let started = unix_of(guard.started_at.as_deref(), "the guard job's start")?;
    let completed = unix_of(guard.completed_at.as_deref(), "the guard job's end")?;
    if created < started || created > completed {
        return Err(format!(
            "artifact {name} was created at {}, outside the guard job ({} to {})",
            github::date::format_rfc3339(created),
            github::date::format_rfc3339(started),
            github::date::format_rfc3339(completed)
        ));
    }
    if let Some(build) = job_named(jobs, "build-test")
        && let Some(build_started) = build.started_at.as_deref()
    {
        let build_started = unix_of(Some(build_started), "build-test's start")?;
        if created >= build_started {
            return Err(format!(
                "artifact {name} was created at {}, not before build-test started ({})",
                github::date::format_rfc3339(created),
                github::date::format_rfc3339(build_started)
            ));
        }
    }
    let bytes = client
        .download_artifact(repo, artifact.id, GUARD_ARTIFACT_MAX)
        .map_err(|e| text(&e))?;
    if bytes.starts_with(b"PK\x03\x04") {
        return Err(format!(
            "artifact {name} is a zip archive; the guard job uploads the file itself (archive: false)"
        ));
    }
    let file: GuardReasonsFile =
        serde_json::from_slice(&bytes).map_err(|e| format!("artifact {name}: {e}"))?;
    if file.schema != GUARD_REASONS_SCHEMA || file.run_id != run.id || file.run_attempt != attempt {
        return Err(format!(
            "artifact {name} is {:?} for run {} attempt {}, not {GUARD_REASONS_SCHEMA} for run {} attempt {attempt}",
            file.schema, file.run_id, file.run_attempt, run.id
        ));
    }
    let verdict = file
        .verdict
        .ok_or_else(|| format!("artifact {name} holds no verdict (guard check wrote none)"))?;
    let verdict = contract::verdict::VerdictDoc::parse(&verdict.to_string())
        .map_err(|e| format!("artifact {name}: {e}"))?;
    let mut doc = crate::output::dispatch_result_v2::GuardVerdictDoc::from_verdict(
        "guard-job",
        Some(name),
        &verdict,
    );
    doc.readiness = file.readiness;
    Ok(doc)
}

/// What the build-test job's report artifact is named with first.
pub const BUILD_REPORT_ARTIFACT_PREFIX: &str = "build-test-report-non-authoritative-";
/// The largest build-test report artifact downloaded (the zip GitHub serves).
pub const BUILD_REPORT_ARTIFACT_MAX: usize = 4 << 20;
/// The largest `build-test-report.json` read out of it.
pub const BUILD_REPORT_MAX: u64 = 2 << 20;
/// The report's file in the artifact (the job uploads its report directory).
pub const BUILD_REPORT_FILE: &str = "build-test-report.json";

/// The build-test job's findings from its report artifact, `unavailable` with the reason on
/// anything not fully understood. The artifact is listed with "List workflow run artifacts"
/// (`GET /repos/{owner}/{repo}/actions/runs/{run_id}/artifacts`,
/// <https://docs.github.com/en/rest/actions/artifacts#list-workflow-run-artifacts>) and
/// downloaded with "Download an artifact" (`GET .../actions/artifacts/{artifact_id}/zip`,
/// <https://docs.github.com/en/rest/actions/artifacts#download-an-artifact>), which serves a
/// zip archive of what `actions/upload-artifact` uploaded: here the job's report directory.
fn build_findings(
    client: &Client,
    repo: &Repository,
    run: &WorkflowRun,
) -> crate::output::dispatch_result_v2::BuildFindingsDoc {
    use crate::output::dispatch_result_v2::BuildFindingsDoc;
    let attempt = run.run_attempt.unwrap_or(1);
    let suffix = format!("-attempt-{attempt}");
    let listed = match client.list_run_artifacts(repo, run.id, None) {
        Ok(listed) => listed,
        Err(e) => return BuildFindingsDoc::unavailable(None, text(&e)),
    };
    let matching: Vec<_> = listed
        .artifacts
        .iter()
        .filter(|a| a.name.starts_with(BUILD_REPORT_ARTIFACT_PREFIX) && a.name.ends_with(&suffix))
        .collect();
    let [artifact] = matching.as_slice() else {
        return BuildFindingsDoc::unavailable(
            None,
            format!(
                "{} artifacts named {BUILD_REPORT_ARTIFACT_PREFIX}<call>{suffix} (read when there is exactly one)",
                matching.len()
            ),
        );
    };
    let name = artifact.name.clone();
    let unavailable = |reason: String| BuildFindingsDoc::unavailable(Some(name.clone()), reason);
    if artifact.workflow_run.as_ref().map(|r| r.id) != Some(run.id) || artifact.expired {
        return unavailable("not this run's artifact, or expired".to_owned());
    }
    let bytes = match client.download_artifact(repo, artifact.id, BUILD_REPORT_ARTIFACT_MAX) {
        Ok(bytes) => bytes,
        Err(e) => return unavailable(text(&e)),
    };
    match read_build_report(&bytes) {
        Ok(report) => BuildFindingsDoc::of(name, &report),
        Err(reason) => unavailable(reason),
    }
}

/// `build-test-report.json` out of the artifact's zip archive: at most [`BUILD_REPORT_MAX`]
/// bytes, strict JSON of `agent-team-apply/build-test-report/v1` (unknown and duplicate keys
/// refused) that says it is not authoritative.
pub fn read_build_report(zip: &[u8]) -> Result<report::build_test::BuildTestReport, String> {
    use std::io::Read as _;
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(zip))
        .map_err(|e| format!("not a zip archive: {e}"))?;
    let entry = archive
        .by_name(BUILD_REPORT_FILE)
        .map_err(|e| format!("no {BUILD_REPORT_FILE} in the archive: {e}"))?;
    if entry.size() > BUILD_REPORT_MAX {
        return Err(format!(
            "{BUILD_REPORT_FILE} is {} bytes, over the {BUILD_REPORT_MAX}-byte limit",
            entry.size()
        ));
    }
    let mut json = Vec::new();
    entry
        .take(BUILD_REPORT_MAX + 1)
        .read_to_end(&mut json)
        .map_err(|e| format!("{BUILD_REPORT_FILE}: {e}"))?;
    if json.len() as u64 > BUILD_REPORT_MAX {
        return Err(format!(
            "{BUILD_REPORT_FILE} is over the {BUILD_REPORT_MAX}-byte limit"
        ));
    }
    let report: report::build_test::BuildTestReport = serde_json::from_slice(&json)
        .map_err(|e| format!("{BUILD_REPORT_FILE} is not a build-test report: {e}"))?;
    if report.authoritative {
        return Err(format!(
            "{BUILD_REPORT_FILE} says it is authoritative, which no build-test report is"
        ));
    }
    Ok(report)
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

/// The publication is authentic (module documentation, step 5): the draft pull request from
/// `agent-team/<task_id>`, the publishing App's successful check run on its head, and the head
/// commit GitHub signed for the App's bot, this run's publication of this diff and dispatch on
/// the base, with the tree the publish job proved. Each refusal names what did not match.
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
    let head = pull.head.sha.as_str();
    let app_id = request
        .app_id
        .ok_or("no publishing App id: the publication cannot be authenticated")?;

    // The check run: the App's own (filtered by app_id, and each run's app.id checked: a
    // server that ignored the filter must not pass another App's run off as this one's).
    let listed = client
        .list_check_runs(repo, head, &request.check_name, Some(app_id))
        .map_err(|e| text(&e))?;
    let named: Vec<_> = listed
        .check_runs
        .iter()
        .filter(|c| c.name == request.check_name && c.head_sha == head)
        .collect();
    let from_app: Vec<_> = named
        .iter()
        .filter(|c| c.app.as_ref().and_then(|a| a.id) == Some(app_id))
        .collect();
    let Some(check) = from_app.last() else {
        let others: Vec<String> = named
            .iter()
            .map(|c| {
                let app = c.app.as_ref();
                format!(
                    "app {} ({})",
                    app.and_then(|a| a.id)
                        .map_or_else(|| "?".to_owned(), |id| id.to_string()),
                    app.and_then(|a| a.slug.clone()).unwrap_or_default()
                )
            })
            .collect();
        return Err(if others.is_empty() {
            format!(
                "no check run {:?} from App {app_id} on {head}",
                request.check_name
            )
        } else {
            format!(
                "the check run {:?} on {head} does not come from the publishing App {app_id} (created by {}): anyone with checks: write can post a check run of that name",
                request.check_name,
                others.join(", ")
            )
        });
    };
    let slug = check.app.as_ref().and_then(|a| a.slug.clone());
    progress.doc.check_run = Some(CheckRunDoc {
        name: check.name.clone(),
        app_id: check.app.as_ref().and_then(|a| a.id),
        app_slug: slug.clone(),
        conclusion: check.conclusion.clone(),
        html_url: check.html_url.clone(),
    });
    if check.status != "completed" || check.conclusion.as_deref() != Some("success") {
        return Err(format!(
            "the check run {:?} of App {app_id} on {head} concluded {:?}",
            request.check_name, check.conclusion
        ));
    }
    let Some(slug) = slug.filter(|s| !s.is_empty()) else {
        return Err(format!(
            "the check run of App {app_id} names no App slug: its bot cannot be told"
        ));
    };
    let record = check
        .output
        .as_ref()
        .and_then(|o| o.text.as_deref())
        .unwrap_or("");
    let record_line = |key: &str| record.lines().find_map(|l| l.strip_prefix(key));
    let Some(proven_tree) = record_line(PROVEN_TREE_LINE) else {
        return Err(format!(
            "the check run of App {app_id} on {head} names no proven tree ({PROVEN_TREE_LINE:?} line)"
        ));
    };
    let nonce = progress.doc.nonce.clone();
    match record_line(NONCE_TRAILER) {
        Some(found) if found == nonce => {}
        found => {
            return Err(format!(
                "the check run of App {app_id} on {head} is for dispatch nonce {}, not this dispatch's {nonce}",
                found.unwrap_or("(none)")
            ));
        }
    }

    // The head commit: signed by GitHub for the App's bot, this run's publication of this
    // diff and this dispatch on the base, with the tree the publish job proved.
    let commit = client.get_commit(repo, head).map_err(|e| text(&e))?;
    let bot = format!("{slug}[bot]");
    let bot_email = format!("+{bot}@users.noreply.github.com");
    match &commit.verification {
        Some(v) if v.verified && v.reason == "valid" => {}
        Some(v) => {
            return Err(format!(
                "the head commit {} is not signed as verified (verification.verified {}, reason {:?}): only a commit GitHub signed for {bot} counts",
                commit.sha, v.verified, v.reason
            ));
        }
        None => {
            return Err(format!(
                "the head commit {} carries no signature verification",
                commit.sha
            ));
        }
    }
    let is_bot = |a: &github::git::GitActor| a.name == bot && a.email.ends_with(&bot_email);
    let is_github =
        |a: &github::git::GitActor| a.name == "GitHub" && a.email == "noreply@github.com";
    let author_ok = commit.author.as_ref().is_some_and(is_bot);
    let committer_ok = commit
        .committer
        .as_ref()
        .is_some_and(|c| is_bot(c) || is_github(c));
    if !author_ok || !committer_ok {
        let who = |a: Option<&github::git::GitActor>| {
            a.map_or_else(
                || "(none)".to_owned(),
                |a| format!("{} <{}>", a.name, a.email),
            )
        };
        return Err(format!(
            "the head commit {} is signed for another identity: author {}, committer {}; the publishing App's commits are authored by {bot} and committed by it or by GitHub",
            commit.sha,
            who(commit.author.as_ref()),
            who(commit.committer.as_ref())
        ));
    }
    let headline = crate::publish::headline(Some(request.task_id.as_str()));
    if commit.message.lines().next() != Some(headline.as_str()) {
        return Err(format!(
            "the head commit {}'s headline is {:?}, not the plan's {headline:?}",
            commit.sha,
            commit.message.lines().next().unwrap_or("")
        ));
    }
    let run_id = run.id.to_string();
    for (key, want) in [
        ("Run-Id: ", run_id.as_str()),
        ("Diff-Sha256: ", diff_sha256.as_str()),
        (NONCE_TRAILER, nonce.as_str()),
    ] {
        let found = commit_trailer(&commit.message, key);
        if found != Some(want) {
            return Err(format!(
                "the head commit {}'s {} trailer is {}, not {want}",
                commit.sha,
                key.trim_end_matches([':', ' ']),
                found.unwrap_or("(none)")
            ));
        }
    }
    let on_base = commit.parents.len() == 1 && commit.parents[0].sha == request.base.as_str();
    if !on_base {
        let parents: Vec<&str> = commit.parents.iter().map(|p| p.sha.as_str()).collect();
        return Err(format!(
            "the head commit {}'s parents are [{}], not the base {} alone",
            commit.sha,
            parents.join(", "),
            request.base.as_str()
        ));
    }
    if commit.tree.sha != proven_tree {
        return Err(format!(
            "the head commit {}'s tree {} is not the tree the publish job proved ({proven_tree})",
            commit.sha, commit.tree.sha
        ));
    }
    progress.doc.publication = Some(PublicationDoc {
        commit: commit.sha.clone(),
        tree: commit.tree.sha.clone(),
        proven_tree: proven_tree.to_owned(),
        author: bot,
        signature: "valid".to_owned(),
    });
    Ok(())
}
