//! The routes, each following the shape of its operation in GitHub's REST description.

use std::collections::BTreeMap;

use base64::Engine;
use serde_json::{Value, json};

use crate::git::Object;
use crate::http::{Recorded, Reply};
use crate::{
    CALLER_JOB, CheckRunState, DECIDE_STEP, DispatchMode, Forgery, JOBS, JobState, OTHER_APP_ID,
    Outcome, PullState, RunState, State,
};

const DOCS: &str = "https://docs.github.com/rest";
/// GitHub's cap on the inputs of one dispatch
/// (<https://docs.github.com/en/actions/reference/workflows-and-actions/events-that-trigger-workflows#workflow_dispatch>).
const MAX_INPUTS: usize = 25;
const MAX_INPUT_PAYLOAD: usize = 65_535;

fn error(status: u16, message: &str) -> Reply {
    Reply::json(
        status,
        &json!({ "message": message, "documentation_url": DOCS }),
    )
}

fn not_found() -> Reply {
    error(404, "Not Found")
}

/// The canned answer for `req`, if a fault takes it, and whether the request takes effect first.
fn take_fault(state: &mut State, req: &Recorded) -> Option<(crate::Canned, bool)> {
    let count = state.scenario.faults.len();
    state.fault_passes.resize(count, 0);
    let index = state.scenario.faults.iter().position(|f| {
        f.method == req.method && req.path.starts_with(&f.path_prefix) && !f.responses.is_empty()
    })?;
    let fault = &mut state.scenario.faults[index];
    if state.fault_passes[index] < fault.pass_first {
        state.fault_passes[index] += 1;
        return None;
    }
    let handle_first = fault.handle_first;
    fault.responses.pop_front().map(|c| (c, handle_first))
}

/// Moves the refs a [`crate::RefMove`] names when its request arrives (each once).
fn apply_ref_moves(state: &mut State, req: &Recorded) {
    let due: Vec<crate::RefMove> = state
        .scenario
        .ref_moves
        .iter()
        .filter(|m| m.method == req.method && req.path.starts_with(&m.path_prefix))
        .cloned()
        .collect();
    state
        .scenario
        .ref_moves
        .retain(|m| !(m.method == req.method && req.path.starts_with(&m.path_prefix)));
    for moved in due {
        state.git.refs.insert(moved.name, moved.to);
    }
}

fn canned_reply(state: &State, canned: crate::Canned) -> Option<Reply> {
    if canned.status == 0 {
        return None;
    }
    let mut reply = Reply::json(canned.status, &Value::Null);
    reply.body = canned.body.into_bytes();
    for (name, value) in canned.headers {
        // A reset written `+N` is N seconds after the server's now.
        let value = match value.strip_prefix('+') {
            Some(offset) => (state.now + offset.parse::<i64>().unwrap_or(0)).to_string(),
            None => value,
        };
        reply.headers.push((name, value));
    }
    Some(reply)
}

pub fn handle(state: &mut State, req: &Recorded, base: &str) -> Option<Reply> {
    if let Some(canned) = crate::limits::refuse(state, req) {
        return canned_reply(state, canned);
    }
    apply_ref_moves(state, req);
    match take_fault(state, req) {
        Some((canned, false)) => canned_reply(state, canned),
        Some((canned, true)) => {
            let _taken_effect = route(state, req, base);
            canned_reply(state, canned)
        }
        None => route(state, req, base),
    }
}

fn route(state: &mut State, req: &Recorded, base: &str) -> Option<Reply> {
    if let Some(rest) = req.path.strip_prefix("/_blob/job-logs/") {
        // A signed download URL: no token expected (or wanted).
        let job = rest.parse::<u64>().ok();
        let log = state
            .runs
            .iter()
            .flat_map(|r| r.jobs.iter())
            .find(|j| Some(j.id) == job)
            .map(|j| j.log.clone());
        return Some(match log {
            Some(log) => Reply {
                status: 200,
                headers: vec![("content-type".into(), "text/plain".into())],
                body: log.into_bytes(),
            },
            None => not_found(),
        });
    }
    if let Some(rest) = req.path.strip_prefix("/_blob/artifacts/") {
        // The signed download URL the API redirects to: the file itself (`archive: false`).
        let id = rest.parse::<u64>().ok();
        return Some(match state.artifacts.iter().find(|a| Some(a.id) == id) {
            Some(a) => Reply {
                status: 200,
                headers: vec![("content-type".into(), "application/octet-stream".into())],
                body: a.bytes.clone(),
            },
            None => not_found(),
        });
    }
    // The manifest flow: github.com's form, and the code's exchange, neither authenticated.
    if let Some(reply) = crate::manifests::web_route(state, req) {
        return Some(reply);
    }
    if let ["app-manifests", code, "conversions"] = req
        .path
        .trim_start_matches('/')
        .trim_start_matches("api/v3/")
        .split('/')
        .collect::<Vec<_>>()
        .as_slice()
        && req.method == "POST"
    {
        return Some(crate::manifests::conversion(state, code));
    }
    {
        let segments: Vec<String> = req
            .path
            .trim_start_matches('/')
            .trim_start_matches("api/v3/")
            .split('/')
            .map(crate::http::decode_segment)
            .collect();
        let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
        if let Some(reply) = crate::dispatcher_app::route(state, req, &segments) {
            return Some(reply);
        }
    }
    if let ["app", "installations", _, "access_tokens"] = req
        .path
        .trim_start_matches('/')
        .trim_start_matches("api/v3/")
        .split('/')
        .collect::<Vec<_>>()
        .as_slice()
        && req.method == "POST"
    {
        return Some(mint_installation_token(state, req));
    }
    let presented = req
        .header("authorization")
        .and_then(|h| h.strip_prefix("Bearer "))
        .unwrap_or("")
        .to_owned();
    let known = presented == state.scenario.token
        || state.scenario.installation_tokens.contains(&presented);
    if !known || state.revoked_tokens.contains(&presented) {
        return Some(error(401, "Bad credentials"));
    }
    let segments: Vec<String> = req
        .path
        .trim_start_matches('/')
        .split('/')
        .map(crate::http::decode_segment)
        .collect();
    let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
    // GitHub Enterprise Server serves the REST API under `/api/v3` and GraphQL at `/api/graphql`.
    let segments = match segments.as_slice() {
        ["api", "v3", rest @ ..] => rest,
        ["api", "graphql"] => &segments[1..],
        all => all,
    };
    Some(match segments {
        ["graphql"] if req.method == "POST" => graphql(state, req),
        ["installation", "token"] if req.method == "DELETE" => revoke_token(state, &presented),
        ["user"] if req.method == "GET" => authenticated_user(state, &presented),
        [
            "api",
            "uploads",
            "repos",
            owner,
            repo,
            "releases",
            id,
            "assets",
        ] if req.method == "POST" => crate::releases::upload(state, req, owner, repo, id),
        ["repos", owner, repo, rest @ ..]
            if owner.eq_ignore_ascii_case(&state.scenario.owner)
                && repo.eq_ignore_ascii_case(&state.scenario.repo) =>
        {
            repo_route(state, req, rest, base)
        }
        ["repos", owner, repo, "contents", path @ ..] if req.method == "GET" => {
            other_contents(state, req, &format!("{owner}/{repo}"), &path.join("/"))
        }
        // The settings `gate doctor` reads (crate::settings).
        _ => crate::settings::global_route(state, req, segments, base).unwrap_or_else(not_found),
    })
}

fn repo_route(state: &mut State, req: &Recorded, rest: &[&str], base: &str) -> Reply {
    let method = req.method.as_str();
    match (method, rest) {
        ("GET", ["actions", "workflows", workflow]) if is_workflow(state, workflow) => {
            get_workflow(state)
        }
        ("POST", ["actions", "workflows", workflow, "dispatches"])
            if is_workflow(state, workflow) =>
        {
            dispatch(state, req, base)
        }
        ("GET", ["actions", "workflows", workflow, "runs"]) if is_workflow(state, workflow) => {
            list_runs(state, req, base)
        }
        ("GET", ["actions", "runs", id]) => get_run(state, req, id, base),
        ("GET", ["actions", "runs", id, "jobs"]) => list_jobs(state, req, id, base),
        ("GET", ["actions", "jobs", id, "logs"]) => job_logs(state, id, base),
        ("GET", ["actions", "runs", id, "artifacts"]) => list_artifacts(state, req, id, base),
        ("GET", ["actions", "artifacts", id, "zip"]) => download_artifact(state, id, base),
        ("POST", ["git", "blobs"]) => create_blob(state, req, base),
        ("POST", ["git", "trees"]) => create_tree(state, req, base),
        ("POST", ["git", "commits"]) => create_commit(state, req),
        ("GET", ["git", "commits", sha]) => match commit_json(state, sha) {
            Some(mut value) => {
                if let Some(crate::Tamper::ReadBackTree(tree)) = &state.scenario.tamper
                    && state.created_commits.contains(*sha)
                {
                    value["tree"] = json!({ "sha": tree });
                }
                Reply::json(200, &value)
            }
            None => not_found(),
        },
        ("POST", ["git", "refs"]) => create_ref(state, req),
        ("PATCH", ["git", "refs", name @ ..]) => update_ref(state, req, &name.join("/")),
        ("GET", ["git", "ref", name @ ..]) => {
            let full = format!("refs/{}", name.join("/"));
            match state.git.refs.get(&full) {
                Some(sha) => Reply::json(200, &ref_json(&full, sha)),
                None => not_found(),
            }
        }
        ("GET", ["pulls"]) => list_pulls(state, req, base),
        ("POST", ["pulls"]) => create_pull(state, req),
        ("POST", ["issues", number, "labels"]) => add_labels(state, req, number),
        ("POST", ["pulls", number, "requested_reviewers"]) => request_reviewers(state, req, number),
        ("GET", ["commits", sha, "check-runs"]) => list_check_runs(state, req, sha, base),
        ("POST", ["check-runs"]) => create_check_run(state, req),
        ("PATCH", ["check-runs", id]) => update_check_run(state, req, id),
        ("GET", ["pulls", number]) => get_pull(state, number),
        ("PATCH", ["pulls", number]) => update_pull(state, req, number),
        ("GET", ["contents", path @ ..]) => get_contents(state, req, &path.join("/")),
        ("GET", ["compare", basehead]) => compare(state, basehead),
        _ => crate::releases::repo_route(state, req, rest, base)
            // The settings `gate doctor` reads (crate::settings).
            .or_else(|| crate::settings::repo_route(state, req, rest, base))
            .unwrap_or_else(not_found),
    }
}

fn is_workflow(state: &State, workflow: &str) -> bool {
    workflow == state.scenario.workflow_file || workflow == "4242"
}

/// "Get a workflow": schema `workflow`.
fn get_workflow(state: &State) -> Reply {
    let s = &state.scenario;
    Reply::json(
        200,
        &json!({
            "id": 4242,
            "node_id": "W_standin",
            "name": s.workflow_name,
            "path": format!(".github/workflows/{}", s.workflow_file),
            "state": s.workflow_state,
            "created_at": "2026-01-01T00:00:00Z",
            "updated_at": "2026-01-01T00:00:00Z",
            "url": "",
            "html_url": format!("https://github.com/{}/{}/actions/workflows/{}", s.owner, s.repo, s.workflow_file),
            "badge_url": "",
        }),
    )
}

/// "Create a workflow dispatch event": body `ref`, `inputs` (≤ 25, ≤ 65,535 characters),
/// `return_run_details`; `200` `workflow-dispatch-response` or `204`.
fn dispatch(state: &mut State, req: &Recorded, base: &str) -> Reply {
    let body = req.json();
    let Some(git_ref) = body.get("ref").and_then(Value::as_str) else {
        return error(422, "Invalid request.\n\n\"ref\" wasn't supplied.");
    };
    let empty = serde_json::Map::new();
    let inputs = body
        .get("inputs")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    if inputs.len() > MAX_INPUTS {
        return error(
            422,
            "you may only define up to 25 `inputs` for a `workflow_dispatch` event",
        );
    }
    if Value::Object(inputs.clone()).to_string().chars().count() > MAX_INPUT_PAYLOAD {
        return error(422, "inputs are too large");
    }
    let mut strings = BTreeMap::new();
    for (name, value) in inputs {
        match value.as_str() {
            Some(v) => {
                strings.insert(name.clone(), v.to_owned());
            }
            None => {
                return error(
                    422,
                    &format!("Invalid value for input {name}: not a string"),
                );
            }
        }
    }
    let asks_details = body.get("return_run_details").and_then(Value::as_bool) == Some(true);
    if let DispatchMode::RejectParameter(status) = state.scenario.dispatch
        && body.get("return_run_details").is_some()
    {
        return error(
            status,
            "Invalid request.\n\n\"return_run_details\" is not a permitted key.",
        );
    }
    if !state.scenario.creates_run {
        return Reply::empty(204);
    }
    let id = state.next_id() * 1000;
    let task = strings.get("task_id").cloned().unwrap_or_default();
    let mac = strings.get("dispatch_mac").cloned().unwrap_or_default();
    let outcome = state.scenario.outcome.clone();
    let actor = dispatcher_login(state, req);
    let head_sha = state
        .git
        .refs
        .get(git_ref)
        .cloned()
        .unwrap_or_else(|| crate::PLACEHOLDER_HEAD.to_owned());
    let workflow_path = format!(".github/workflows/{}", state.scenario.workflow_file);
    // The caller's `run-name: "agent-team-apply ${{ inputs.task_id }} ${{ inputs.dispatch_mac }}"`.
    let display_title = state
        .scenario
        .run_name
        .clone()
        .unwrap_or_else(|| format!("agent-team-apply {task} {mac}"));
    for intruder in state.scenario.intruders.clone() {
        let intruder_id = state.next_id();
        state.runs.push(RunState {
            id: intruder_id,
            display_title: display_title.clone(),
            created_at: state.now + intruder.offset_seconds,
            status: "queued".into(),
            conclusion: None,
            inputs: strings.clone(),
            git_ref: intruder.git_ref,
            actor: intruder.actor,
            head_sha: intruder.head_sha.unwrap_or_else(|| head_sha.clone()),
            workflow_path: intruder
                .workflow_path
                .unwrap_or_else(|| workflow_path.clone()),
            polls: 0,
            listed: u32::MAX,
            jobs: Vec::new(),
            outcome: Outcome::Pending,
        });
    }
    state.runs.push(RunState {
        id,
        display_title,
        created_at: state.now,
        status: "queued".into(),
        conclusion: None,
        inputs: strings,
        git_ref: git_ref.to_owned(),
        actor,
        head_sha,
        workflow_path,
        polls: 0,
        listed: 0,
        jobs: Vec::new(),
        outcome,
    });
    if asks_details && state.scenario.dispatch == DispatchMode::RunDetails {
        let s = &state.scenario;
        Reply::json(
            200,
            &json!({
                "workflow_run_id": id,
                "run_url": format!("{base}/repos/{}/{}/actions/runs/{id}", s.owner, s.repo),
                "html_url": format!("https://github.com/{}/{}/actions/runs/{id}", s.owner, s.repo),
            }),
        )
    } else {
        Reply::empty(204)
    }
}

/// Schema `workflow-run` (the fields a client reads, and a few more).
fn run_json(state: &State, run: &RunState, base: &str) -> Value {
    let s = &state.scenario;
    json!({
        "id": run.id,
        "name": s.workflow_name,
        "node_id": format!("WFR_{}", run.id),
        "display_title": run.display_title,
        "run_number": run.id % 1000 + 1,
        "run_attempt": 1,
        "event": "workflow_dispatch",
        "status": run.status,
        "conclusion": run.conclusion,
        "workflow_id": 4242,
        "path": run.workflow_path,
        "head_branch": head_branch(&run.git_ref),
        "head_sha": run.head_sha,
        "actor": {"login": run.actor, "type": if run.actor.ends_with("[bot]") { "Bot" } else { "User" }},
        "triggering_actor": {"login": run.actor},
        "created_at": github::date::format_rfc3339(run.created_at),
        "updated_at": github::date::format_rfc3339(
            state.run_versions.get(&run.id).map_or(run.created_at, |v| v.2)
        ),
        "url": format!("{base}/repos/{}/{}/actions/runs/{}", s.owner, s.repo, run.id),
        "html_url": format!("https://github.com/{}/{}/actions/runs/{}", s.owner, s.repo, run.id),
        "jobs_url": format!("{base}/repos/{}/{}/actions/runs/{}/jobs", s.owner, s.repo, run.id),
    })
}

/// "List workflow runs for a workflow"
/// (<https://docs.github.com/en/rest/actions/workflow-runs#list-workflow-runs-for-a-workflow>):
/// `{total_count, workflow_runs}`, newest first, in pages ([`crate::page`]).
/// Note when each run's status or conclusion changed: its `updated_at` (and so its `ETag`)
/// changes then, and only then.
fn touch_runs(state: &mut State) {
    let now = state.now;
    for run in &state.runs {
        let changed = state
            .run_versions
            .get(&run.id)
            .is_none_or(|(status, conclusion, _)| {
                *status != run.status || *conclusion != run.conclusion
            });
        if changed {
            let at = if state.run_versions.contains_key(&run.id) {
                now
            } else {
                run.created_at
            };
            state
                .run_versions
                .insert(run.id, (run.status.clone(), run.conclusion.clone(), at));
        }
    }
}

/// A weak `ETag` of a body, as GitHub sends them (`W/"<hex>"`).
fn etag_of(body: &[u8]) -> String {
    use sha1::Digest;
    let digest = sha1::Sha1::digest(body);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("W/\"{hex}\"")
}

/// Whether `If-None-Match` (a list of tags, or `*`) names `etag`; weak comparison.
fn none_match(req: &Recorded, etag: &str) -> bool {
    let strip = |t: &str| t.trim().trim_start_matches("W/").to_owned();
    req.header("if-none-match").is_some_and(|v| {
        v.split(',')
            .any(|t| t.trim() == "*" || strip(t) == strip(etag))
    })
}

fn list_runs(state: &mut State, req: &Recorded, base: &str) -> Reply {
    state.run_list_requests += 1;
    touch_runs(state);
    let listed_after = state.scenario.listed_after;
    for run in &mut state.runs {
        run.listed = run.listed.saturating_add(1);
    }
    let branch = req.query("branch").map(str::to_owned);
    let mut runs: Vec<&RunState> = state
        .runs
        .iter()
        .filter(|r| r.listed > listed_after)
        .filter(|r| {
            branch
                .as_deref()
                .is_none_or(|b| head_branch(&r.git_ref) == b)
        })
        .collect();
    runs.sort_by_key(|r| std::cmp::Reverse((r.created_at, r.id)));
    let list: Vec<Value> = runs.iter().map(|r| run_json(state, r, base)).collect();
    crate::page::serve(
        req,
        base,
        list,
        crate::page::MAX_PER_PAGE,
        |total, page| json!({ "total_count": total, "workflow_runs": page }),
    )
}

/// A run's `head_branch`: the branch, or a tag's name for a run on a tag (GitHub reports both
/// alike, and its `branch` filter matches either).
fn head_branch(git_ref: &str) -> &str {
    git_ref
        .strip_prefix("refs/heads/")
        .or_else(|| git_ref.strip_prefix("refs/tags/"))
        .unwrap_or(git_ref)
}

/// The `actor.login` of a dispatch made with the request's token: the user of
/// [`crate::Scenario::token`], the dispatcher App's bot for the tokens it minted, else the
/// publishing App's bot.
fn dispatcher_login(state: &State, req: &Recorded) -> String {
    let presented = req
        .header("authorization")
        .and_then(|h| h.strip_prefix("Bearer "))
        .unwrap_or("");
    if presented == state.scenario.token {
        return state.scenario.token_login.clone();
    }
    match &state.scenario.dispatcher_app {
        Some(app) if app.minted.iter().any(|t| t == presented) => format!("{}[bot]", app.slug),
        _ => format!("{}[bot]", state.scenario.app_slug),
    }
}

/// "Get the authenticated user" (`GET /user`,
/// <https://docs.github.com/en/rest/users/users#get-the-authenticated-user>): the token's user;
/// an installation token has none (`403 Resource not accessible by integration`).
fn authenticated_user(state: &State, presented: &str) -> Reply {
    if presented == state.scenario.token {
        Reply::json(
            200,
            &json!({"login": state.scenario.token_login, "id": 583231, "type": "User"}),
        )
    } else {
        error(403, "Resource not accessible by integration")
    }
}

/// "Get a workflow run": in progress for the scripted number of polls, then completed. With an
/// `ETag` and, to an `If-None-Match` naming it, `304 Not Modified` without a body.
fn get_run(state: &mut State, req: &Recorded, id: &str, base: &str) -> Reply {
    let Ok(id) = id.parse::<u64>() else {
        return not_found();
    };
    let threshold = state.scenario.polls_until_complete;
    let Some(run) = state.runs.iter_mut().find(|r| r.id == id) else {
        return not_found();
    };
    if run.status != "completed" && run.outcome != Outcome::Pending {
        run.polls += 1;
        if run.polls > threshold {
            let outcome = run.outcome.clone();
            complete_run(state, id, outcome);
        } else {
            run.status = "in_progress".into();
        }
    }
    touch_runs(state);
    let Some(run) = state.runs.iter().find(|r| r.id == id) else {
        return not_found();
    };
    let mut reply = Reply::json(200, &run_json(state, run, base));
    let etag = etag_of(&reply.body);
    if none_match(req, &etag) {
        reply = Reply::empty(304);
    }
    reply.headers.push(("etag".into(), etag));
    reply
}

fn job(state: &mut State, name: &str, conclusion: &str, failing_step: Option<&str>) -> JobState {
    let id = state.next_id() * 1000 + 7;
    let extra = state.scenario.failed_log_extra.clone();
    let mut steps = vec![("Set up job".to_owned(), Some("success".to_owned()))];
    let mut log = format!("2026-03-01T12:00:00.0000000Z ##[group]Run {name}\n");
    match (conclusion, failing_step) {
        ("failure", Some(step)) => {
            steps.push((step.to_owned(), Some("failure".to_owned())));
            log.push_str(&format!(
                "2026-03-01T12:00:01.0000000Z {step}: error[build-wrote]: .github/workflows/release.yml (created)\n\
                 {extra}2026-03-01T12:00:01.0000000Z ##[error]Process completed with exit code 1.\n"
            ));
        }
        ("skipped" | "cancelled", _) => {}
        _ => steps.push(("Run".to_owned(), Some(conclusion.to_owned()))),
    }
    steps.push(("Complete job".to_owned(), Some("success".to_owned())));
    JobState {
        id,
        name: format!("{CALLER_JOB} / {name}"),
        status: "completed".into(),
        conclusion: Some(conclusion.to_owned()),
        steps,
        log,
        started_at: None,
        completed_at: None,
    }
}

/// Finish a run: its jobs, its conclusion, and on a pass the publication.
pub fn complete_run(state: &mut State, run_id: u64, outcome: Outcome) -> bool {
    let Some(index) = state.runs.iter().position(|r| r.id == run_id) else {
        return false;
    };
    if state.runs[index].status == "completed" {
        return false;
    }
    let (jobs, conclusion) = match &outcome {
        Outcome::Passed | Outcome::PassedWithoutPullRequest => (
            JOBS.iter()
                .map(|j| job(state, j, "success", None))
                .collect::<Vec<_>>(),
            "success",
        ),
        Outcome::Failed { job: failed, step } => {
            let mut jobs = Vec::new();
            let mut failed_yet = false;
            for name in JOBS {
                let j = if name == failed {
                    failed_yet = true;
                    job(state, name, "failure", Some(step))
                } else if !failed_yet {
                    job(state, name, "success", None)
                } else if name == "decide" {
                    job(state, name, "failure", Some(DECIDE_STEP))
                } else {
                    job(state, name, "skipped", None)
                };
                jobs.push(j);
            }
            (jobs, "failure")
        }
        Outcome::Cancelled => (
            vec![
                job(state, "guard", "success", None),
                job(state, "build-test", "cancelled", None),
                job(state, "decide", "skipped", None),
                job(state, "publish", "skipped", None),
            ],
            "cancelled",
        ),
        Outcome::Pending => return false,
    };
    if matches!(outcome, Outcome::Passed | Outcome::PassedWithoutPullRequest) {
        publish(state, index, outcome == Outcome::Passed);
    }
    // Each job that ran took its slot: guard +0..+5, build-test +10..+15, ...
    let created = state.runs[index].created_at;
    let mut jobs = jobs;
    for (i, job) in jobs.iter_mut().enumerate() {
        if job.conclusion.as_deref() != Some("skipped") {
            let at = created + 10 * i64::try_from(i).unwrap_or(0);
            job.started_at = Some(at);
            job.completed_at = Some(at + 5);
        }
    }
    if let Some((offset, bytes)) = state.scenario.guard_artifact.clone() {
        let id = state.next_id();
        let run_id = state.runs[index].id;
        // `RUN_ID` in the scripted file stands for the run's id.
        let bytes = String::from_utf8_lossy(&bytes)
            .replace("RUN_ID", &run_id.to_string())
            .into_bytes();
        state.artifacts.push(crate::ArtifactState {
            id,
            name: format!("agent-team-guard-{run_id}-1-standin.json"),
            run_id,
            created_at: created + offset,
            bytes,
        });
    }
    if let Some(bytes) = state.scenario.build_test_artifact.clone() {
        let id = state.next_id();
        let run_id = state.runs[index].id;
        state.artifacts.push(crate::ArtifactState {
            id,
            name: "build-test-report-non-authoritative-standin-attempt-1".to_owned(),
            run_id,
            created_at: created + 15,
            bytes,
        });
    }
    let run = &mut state.runs[index];
    run.jobs = jobs;
    run.status = "completed".into();
    run.conclusion = Some(conclusion.to_owned());
    run.outcome = outcome;
    true
}

/// See [`crate::StandIn::finish_run_with_jobs`].
pub fn finish_run_with_jobs(
    state: &mut State,
    run_id: u64,
    reports: Vec<crate::JobReport>,
) -> bool {
    let Some(index) = state.runs.iter().position(|r| r.id == run_id) else {
        return false;
    };
    if state.runs[index].status == "completed" || state.runs[index].outcome != Outcome::Pending {
        return false;
    }
    let conclusion = if reports.iter().all(|j| j.conclusion == "success") && !reports.is_empty() {
        "success"
    } else if reports.iter().any(|j| j.conclusion == "cancelled") {
        "cancelled"
    } else {
        "failure"
    };
    let mut jobs = Vec::new();
    for report in reports {
        let id = state.next_id() * 1000 + 7;
        let mut steps = vec![("Set up job".to_owned(), Some("success".to_owned()))];
        steps.extend(report.steps.into_iter().map(|(n, c)| (n, Some(c))));
        if report.conclusion != "skipped" {
            steps.push(("Complete job".to_owned(), Some("success".to_owned())));
        }
        jobs.push(JobState {
            id,
            // A name that already names its caller's job (`<caller job> / <job>`, a caller that
            // calls the reusable workflow more than once) is listed as it is.
            name: if report.name.contains(" / ") {
                report.name.clone()
            } else {
                format!("{CALLER_JOB} / {}", report.name)
            },
            status: "completed".into(),
            conclusion: Some(report.conclusion),
            steps,
            log: report.log,
            started_at: report.started_at,
            completed_at: report.completed_at,
        });
    }
    let run = &mut state.runs[index];
    run.jobs = jobs;
    run.status = "completed".into();
    run.conclusion = Some(conclusion.to_owned());
    true
}

/// What publish leaves behind on a pass: the replay record (the App's check run on the base
/// named after the nonce, as `gate publish` writes it first), the branch, the commit (with its
/// trailers: the dispatch's nonce from its `dispatch_mac` input among them), the App's check
/// run (its output naming the proven tree and the nonce, as `gate publish` writes them) and the
/// draft pull request; or, with a [`Forgery`], the forged version of one of them.
fn publish(state: &mut State, index: usize, open_pull: bool) {
    let run = state.runs[index].clone();
    let input = |name: &str| run.inputs.get(name).cloned().unwrap_or_default();
    let task = input("task_id");
    // `v2:<nonce>:<expires>:<tag>`
    let nonce = input("dispatch_mac")
        .split(':')
        .nth(1)
        .unwrap_or_default()
        .to_owned();
    let record_id = state.next_id();
    // A revision (`revise_pull_request`) adds its commit to that draft and opens none.
    let revised = input("revise_pull_request").parse::<u64>().ok();
    let record_pull = revised.unwrap_or_else(|| u64::try_from(state.pulls.len()).unwrap_or(0) + 1);
    state.check_runs.push(CheckRunState {
        id: record_id,
        name: format!("agent-team-apply dispatch {nonce}"),
        head_sha: input("base_sha"),
        conclusion: Some("neutral".into()),
        app_id: state.scenario.app_id,
        app_slug: state.scenario.app_slug.clone(),
        output_text: String::new(),
        external_id: Some(nonce.clone()),
        output_summary: format!(
            "Run-Id: {}\nBranch: agent-team/{task}\n{}",
            run.id,
            if open_pull {
                format!("Pull-Request: #{record_pull}\n")
            } else {
                String::new()
            }
        ),
    });
    let blob = state.git.put_blob(b"published by the stand-in\n".to_vec());
    let mut leaves = BTreeMap::new();
    leaves.insert("CHANGES.txt".to_owned(), ("100644".to_owned(), blob));
    let tree = state.git.build(&leaves);
    let message = format!(
        "agent-team-apply {task}: apply verified diff\n\nDiff-Sha256: {}\nTask-Id: {task}\nRun-Id: {}\nDispatch-Nonce: {nonce}\n",
        input("expected_diff_sha256"),
        run.id
    );
    let forgery = state.scenario.forgery.clone();
    let forged_commit = matches!(
        forgery,
        Some(Forgery::UnsignedHead | Forgery::ForeignSignedHead)
    );
    let commit = state.git.put_commit(
        &tree,
        &[input("base_sha")],
        &message,
        state.now,
        forged_commit,
    );
    if forgery == Some(Forgery::ForeignSignedHead) {
        state.foreign_signed.insert(commit.clone());
    }
    let branch = format!("agent-team/{task}");
    state
        .git
        .refs
        .insert(format!("refs/heads/{branch}"), commit.clone());
    let check_id = state.next_id();
    let (app_id, app_slug) = match forgery {
        Some(Forgery::CheckRunFromOtherApp) => (OTHER_APP_ID, "github-actions".to_owned()),
        _ => (state.scenario.app_id, state.scenario.app_slug.clone()),
    };
    let proven = match &forgery {
        Some(Forgery::ProvenTree(other)) => other.clone(),
        _ => tree,
    };
    state.check_runs.push(CheckRunState {
        id: check_id,
        name: state.scenario.check_name.clone(),
        head_sha: commit.clone(),
        conclusion: Some("success".into()),
        app_id,
        app_slug,
        output_text: format!("Proven-Tree: {proven}\nDispatch-Nonce: {nonce}\n\n### Reasons\n"),
        external_id: None,
        output_summary: String::new(),
    });
    if open_pull && revised.is_none() {
        let number = u64::try_from(state.pulls.len()).unwrap_or(0) + 1;
        state.pulls.push(PullState {
            number,
            title: format!("agent-team-apply {task}"),
            body: String::new(),
            head: branch,
            head_sha: commit,
            base: "main".into(),
            draft: true,
            state: "open".into(),
            labels: Vec::new(),
            requested_reviewers: Vec::new(),
            requested_teams: Vec::new(),
            merged: false,
            user: format!("{}[bot]", state.scenario.app_slug),
        });
    }
}

/// "List workflow run artifacts"
/// (<https://docs.github.com/en/rest/actions/artifacts#list-workflow-run-artifacts>): the `name`
/// filter; `{total_count, artifacts}`, each with `workflow_run.id` and `created_at`, in pages
/// ([`crate::page`]; the order is not documented: upload order here).
fn list_artifacts(state: &State, req: &Recorded, id: &str, base: &str) -> Reply {
    let Some(run_id) = id.parse::<u64>().ok() else {
        return not_found();
    };
    let name = req.query("name");
    let list: Vec<Value> = state
        .artifacts
        .iter()
        .filter(|a| a.run_id == run_id && name.is_none_or(|n| n == a.name))
        .map(|a| {
            json!({
                "id": a.id,
                "node_id": format!("MDg6QXJ0aWZhY3Q{}", a.id),
                "name": a.name,
                "size_in_bytes": a.bytes.len(),
                "archive_download_url": format!("/repos/{}/{}/actions/artifacts/{}/zip", state.scenario.owner, state.scenario.repo, a.id),
                "expired": false,
                "created_at": github::date::format_rfc3339(a.created_at),
                "workflow_run": { "id": a.run_id },
            })
        })
        .collect();
    crate::page::serve(
        req,
        base,
        list,
        crate::page::MAX_PER_PAGE,
        |total, page| json!({ "total_count": total, "artifacts": page }),
    )
}

/// "Download an artifact"
/// (<https://docs.github.com/en/rest/actions/artifacts#download-an-artifact>): `302` to a
/// short-lived URL of the content.
fn download_artifact(state: &State, id: &str, base: &str) -> Reply {
    match id
        .parse::<u64>()
        .ok()
        .and_then(|id| state.artifacts.iter().find(|a| a.id == id))
    {
        Some(a) => Reply {
            status: 302,
            headers: vec![(
                "location".into(),
                format!("{base}/_blob/artifacts/{}", a.id),
            )],
            body: Vec::new(),
        },
        None => not_found(),
    }
}

/// "List jobs for a workflow run"
/// (<https://docs.github.com/en/rest/actions/workflow-jobs#list-jobs-for-a-workflow-run>):
/// `{total_count, jobs}` with `steps`, in pages ([`crate::page`]; in the order the jobs ran).
fn list_jobs(state: &State, req: &Recorded, id: &str, base: &str) -> Reply {
    let Some(run) = id
        .parse::<u64>()
        .ok()
        .and_then(|id| state.runs.iter().find(|r| r.id == id))
    else {
        return not_found();
    };
    let s = &state.scenario;
    let jobs: Vec<Value> = run
        .jobs
        .iter()
        .map(|j| {
            json!({
                "id": j.id,
                "run_id": run.id,
                "name": j.name,
                "workflow_name": s.workflow_name,
                "status": j.status,
                "conclusion": j.conclusion,
                "html_url": format!("https://github.com/{}/{}/actions/runs/{}/job/{}", s.owner, s.repo, run.id, j.id),
                "started_at": j.started_at.map(github::date::format_rfc3339),
                "completed_at": j.completed_at.map(github::date::format_rfc3339),
                "steps": j.steps.iter().enumerate().map(|(i, (name, conclusion))| json!({
                    "name": name,
                    "status": "completed",
                    "conclusion": conclusion,
                    "number": i + 1,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    crate::page::serve(
        req,
        base,
        jobs,
        crate::page::MAX_PER_PAGE,
        |total, page| json!({ "total_count": total, "jobs": page }),
    )
}

/// "Download job logs for a workflow run": `302` to a short-lived URL.
fn job_logs(state: &State, id: &str, base: &str) -> Reply {
    let Ok(id) = id.parse::<u64>() else {
        return not_found();
    };
    if !state
        .runs
        .iter()
        .flat_map(|r| r.jobs.iter())
        .any(|j| j.id == id)
    {
        return not_found();
    }
    let mut reply = Reply::empty(302);
    reply.headers.push((
        "location".into(),
        format!("{base}/_blob/job-logs/{id}?sig=standin"),
    ));
    reply
}

fn blob_content(body: &Value) -> Option<Vec<u8>> {
    let content = body.get("content")?.as_str()?;
    match body
        .get("encoding")
        .and_then(Value::as_str)
        .unwrap_or("utf-8")
    {
        "utf-8" => Some(content.as_bytes().to_vec()),
        "base64" => {
            let compact: String = content
                .chars()
                .filter(|c| !c.is_ascii_whitespace())
                .collect();
            base64::engine::general_purpose::STANDARD
                .decode(compact)
                .ok()
        }
        _ => None,
    }
}

/// "Create a blob": `{content, encoding}` → `201 {sha, url}`.
fn create_blob(state: &mut State, req: &Recorded, base: &str) -> Reply {
    let Some(bytes) = blob_content(&req.json()) else {
        return error(
            422,
            "Invalid request.\n\n\"content\" wasn't supplied or is not valid.",
        );
    };
    let sha = state.git.put_blob(bytes);
    let s = &state.scenario;
    Reply::json(
        201,
        &json!({ "sha": sha, "url": format!("{base}/repos/{}/{}/git/blobs/{sha}", s.owner, s.repo) }),
    )
}

fn valid_tree_path(path: &str) -> bool {
    !path.is_empty()
        && path
            .split('/')
            .all(|c| !c.is_empty() && c != "." && c != ".." && c != ".git")
}

/// "Create a tree": `base_tree` and `tree[]` of `{path, mode, type, sha|content}`; `sha: null`
/// deletes. `201 {sha, url, tree, truncated}`.
fn create_tree(state: &mut State, req: &Recorded, base: &str) -> Reply {
    let body = req.json();
    let mut leaves = match body.get("base_tree").and_then(Value::as_str) {
        Some(tree) => match state.git.flatten(tree) {
            Some(leaves) => leaves,
            None => return error(422, "Invalid request.\n\nbase_tree is not a valid tree."),
        },
        None => BTreeMap::new(),
    };
    let Some(entries) = body.get("tree").and_then(Value::as_array) else {
        return error(422, "Invalid request.\n\n\"tree\" wasn't supplied.");
    };
    for entry in entries {
        let path = entry.get("path").and_then(Value::as_str).unwrap_or("");
        let mode = entry.get("mode").and_then(Value::as_str).unwrap_or("");
        if !valid_tree_path(path) {
            return error(422, "tree.path contains a malformed path component");
        }
        if !matches!(mode, "100644" | "100755" | "040000" | "160000" | "120000") {
            return error(422, "tree.mode is not a valid mode");
        }
        let id = match (
            entry.get("sha"),
            entry.get("content").and_then(Value::as_str),
        ) {
            (Some(Value::Null), _) => {
                leaves.retain(|p, _| p != path && !p.starts_with(&format!("{path}/")));
                continue;
            }
            (Some(Value::String(sha)), _) => {
                if !state.git.objects.contains_key(sha) {
                    return error(422, &format!("tree.sha {sha} is not a valid object"));
                }
                sha.clone()
            }
            (_, Some(content)) => state.git.put_blob(content.as_bytes().to_vec()),
            _ => return error(422, "tree entry needs sha or content"),
        };
        if mode == "040000" {
            let Some(sub) = state.git.flatten(&id) else {
                return error(422, "tree.sha is not a tree");
            };
            leaves.retain(|p, _| !p.starts_with(&format!("{path}/")));
            for (p, leaf) in sub {
                leaves.insert(format!("{path}/{p}"), leaf);
            }
        } else {
            leaves.insert(path.to_owned(), (mode.to_owned(), id));
        }
    }
    tamper_leaves(state, &mut leaves);
    let sha = state.git.build(&leaves);
    let top: Vec<Value> = match state.git.objects.get(&sha) {
        Some(Object::Tree(entries)) => entries
            .iter()
            .map(|(mode, path, id)| {
                json!({ "path": path, "mode": mode, "type": if mode == "040000" { "tree" } else { "blob" }, "sha": id })
            })
            .collect(),
        _ => Vec::new(),
    };
    let s = &state.scenario;
    Reply::json(
        201,
        &json!({
            "sha": sha,
            "url": format!("{base}/repos/{}/{}/git/trees/{sha}", s.owner, s.repo),
            "tree": top,
            "truncated": false,
        }),
    )
}

fn commit_json(state: &State, sha: &str) -> Option<Value> {
    let Object::Commit {
        tree,
        parents,
        message,
        custom_identity,
    } = state.git.objects.get(sha)?
    else {
        return None;
    };
    // A commit the token made without an identity is the App's: authored by its bot and
    // signed by GitHub ("Signature verification for bots",
    // <https://docs.github.com/en/authentication/managing-commit-signature-verification/about-commit-signature-verification#signature-verification-for-bots>),
    // committed as GitHub (`noreply@github.com`). Any other commit is someone else's: unsigned,
    // or signed with that user's own key (`verified: true`, reason `valid`, for that user).
    // Schema `git-commit` ("Get a commit object",
    // <https://docs.github.com/en/rest/git/commits#get-a-commit-object>): `author` and
    // `committer` are `{name, email, date}`; `verification` is `{verified, reason, signature,
    // payload, verified_at}`.
    let date = github::date::format_rfc3339(state.now);
    let s = &state.scenario;
    let bot = format!("{}[bot]", s.app_slug);
    let bot_email = format!("{}+{bot}@users.noreply.github.com", s.bot_user_id);
    let foreign = state.foreign_signed.contains(sha);
    let (author, committer, verified, reason) = if !custom_identity {
        (
            json!({ "name": bot, "email": bot_email, "date": date }),
            json!({ "name": "GitHub", "email": "noreply@github.com", "date": date }),
            true,
            "valid",
        )
    } else {
        let mallory = json!({ "name": "mallory", "email": "mallory@example.com", "date": date });
        (
            mallory.clone(),
            mallory,
            foreign,
            if foreign { "valid" } else { "unsigned" },
        )
    };
    Some(json!({
        "sha": sha,
        "node_id": format!("C_{sha}"),
        "message": message,
        "tree": { "sha": tree },
        "parents": parents.iter().map(|p| json!({ "sha": p })).collect::<Vec<_>>(),
        "author": author,
        "committer": committer,
        "verification": {
            "verified": verified,
            "reason": reason,
            "signature": if verified { Value::String("-----BEGIN PGP SIGNATURE-----".into()) } else { Value::Null },
            "payload": if verified { Value::String(format!("tree {tree}")) } else { Value::Null },
            "verified_at": if verified { Value::String(date.clone()) } else { Value::Null },
        },
    }))
}

/// "Create a commit": `{message, tree, parents, author?, committer?}` → `201`.
fn create_commit(state: &mut State, req: &Recorded) -> Reply {
    let body = req.json();
    let (Some(message), Some(tree)) = (
        body.get("message").and_then(Value::as_str),
        body.get("tree").and_then(Value::as_str),
    ) else {
        return error(
            422,
            "Invalid request.\n\n\"message\" and \"tree\" are required.",
        );
    };
    if !matches!(state.git.objects.get(tree), Some(Object::Tree(_))) {
        return error(422, "Tree SHA does not exist");
    }
    let parents: Vec<String> = body
        .get("parents")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    if parents
        .iter()
        .any(|p| !matches!(state.git.objects.get(p), Some(Object::Commit { .. })))
    {
        return error(422, "Parent SHA does not exist or is not a commit object");
    }
    let custom = ["author", "committer", "signature"]
        .iter()
        .any(|k| body.get(*k).is_some());
    let sha = state
        .git
        .put_commit(tree, &parents, message, state.now, custom);
    state.created_commits.insert(sha.clone());
    match commit_json(state, &sha) {
        Some(value) => Reply::json(201, &value),
        None => error(500, "commit vanished"),
    }
}

fn ref_json(name: &str, sha: &str) -> Value {
    json!({
        "ref": name,
        "node_id": format!("REF_{name}"),
        "url": "",
        "object": { "sha": sha, "type": "commit", "url": "" },
    })
}

/// "Create a reference": `{ref, sha}`; `422` when it exists or the object does not.
fn create_ref(state: &mut State, req: &Recorded) -> Reply {
    let body = req.json();
    let (Some(name), Some(sha)) = (
        body.get("ref").and_then(Value::as_str),
        body.get("sha").and_then(Value::as_str),
    ) else {
        return error(422, "Invalid request.\n\n\"ref\" and \"sha\" are required.");
    };
    if !name.starts_with("refs/") || name.matches('/').count() < 2 {
        return error(422, "Reference name is invalid");
    }
    if !matches!(state.git.objects.get(sha), Some(Object::Commit { .. })) {
        return error(422, "Object does not exist");
    }
    if state.git.refs.contains_key(name) {
        return error(422, "Reference already exists");
    }
    if let Some(refusal) = workflows_refusal(state, sha) {
        return error(422, &refusal);
    }
    state.git.refs.insert(name.to_owned(), sha.to_owned());
    Reply::json(201, &ref_json(name, sha))
}

fn is_ancestor(state: &State, ancestor: &str, commit: &str) -> bool {
    let mut stack = vec![commit.to_owned()];
    let mut seen = std::collections::HashSet::new();
    while let Some(c) = stack.pop() {
        if c == ancestor {
            return true;
        }
        if !seen.insert(c.clone()) {
            continue;
        }
        if let Some(Object::Commit { parents, .. }) = state.git.objects.get(&c) {
            stack.extend(parents.iter().cloned());
        }
    }
    false
}

/// "Update a reference": `{sha, force}`; `422` unless it exists and the move is a fast
/// forward or forced.
fn update_ref(state: &mut State, req: &Recorded, name: &str) -> Reply {
    let full = format!("refs/{name}");
    let body = req.json();
    let Some(sha) = body.get("sha").and_then(Value::as_str) else {
        return error(422, "Invalid request.\n\n\"sha\" wasn't supplied.");
    };
    let force = body.get("force").and_then(Value::as_bool) == Some(true);
    let Some(old) = state.git.refs.get(&full).cloned() else {
        return error(422, "Reference does not exist");
    };
    if !matches!(state.git.objects.get(sha), Some(Object::Commit { .. })) {
        return error(422, "Object does not exist");
    }
    if !force && !is_ancestor(state, &old, sha) {
        return error(422, "Update is not a fast forward");
    }
    if let Some(refusal) = workflows_refusal(state, sha) {
        return error(422, &refusal);
    }
    state.git.refs.insert(full.clone(), sha.to_owned());
    Reply::json(200, &ref_json(&full, sha))
}

/// Schema `pull-request`: an open pull request's `head.sha` is its branch's current head (a
/// push to the branch moves it), a closed one keeps the head it had; `user` is the `simple-user`
/// who opened it (`type: Bot` for an App's `<slug>[bot]`); `merged` as "Get a pull request"
/// gives it (<https://docs.github.com/en/rest/pulls/pulls#get-a-pull-request>).
fn pull_json(state: &State, pull: &PullState) -> Value {
    let s = &state.scenario;
    let full_name = format!("{}/{}", s.owner, s.repo);
    let head_sha = match state.git.refs.get(&format!("refs/heads/{}", pull.head)) {
        Some(sha) if pull.state == "open" => sha.clone(),
        _ => pull.head_sha.clone(),
    };
    let kind = if pull.user.ends_with("[bot]") {
        "Bot"
    } else {
        "User"
    };
    json!({
        "number": pull.number,
        "html_url": format!("https://github.com/{full_name}/pull/{}", pull.number),
        "state": pull.state,
        "title": pull.title,
        "body": pull.body,
        "draft": pull.draft,
        "labels": pull.labels.iter().map(|l| json!({ "name": l })).collect::<Vec<_>>(),
        "requested_reviewers": pull.requested_reviewers.iter().map(|l| json!({ "login": l })).collect::<Vec<_>>(),
        "requested_teams": pull.requested_teams.iter().map(|s| json!({ "slug": s })).collect::<Vec<_>>(),
        "merged": pull.merged,
        "user": { "login": pull.user, "type": kind },
        "head": { "ref": pull.head, "sha": head_sha, "label": format!("{}:{}", s.owner, pull.head), "repo": { "full_name": full_name } },
        "base": { "ref": pull.base, "sha": "", "label": format!("{}:{}", s.owner, pull.base), "repo": { "full_name": full_name } },
    })
}

/// "List pull requests" (<https://docs.github.com/en/rest/pulls/pulls#list-pull-requests>):
/// `head=owner:branch`, `state` (`open` unless given; `all`), sorted by creation, `direction`
/// "Default: `desc` when sort is `created` or sort is not specified" (newest first; `asc` on
/// request), in pages ([`crate::page`]).
fn list_pulls(state: &State, req: &Recorded, base: &str) -> Reply {
    let head = req.query("head").map(str::to_owned);
    let wanted = req.query("state").unwrap_or("open").to_owned();
    let owner = state.scenario.owner.clone();
    let list: Vec<Value> = state
        .pulls
        .iter()
        .filter(|p| {
            head.as_deref()
                .is_none_or(|h| h == format!("{owner}:{}", p.head))
        })
        .filter(|p| wanted == "all" || p.state == wanted)
        .map(|p| pull_json(state, p))
        .collect();
    // Numbers grow with creation: oldest first as kept, newest first unless asked otherwise.
    let mut list = list;
    match req.query("direction") {
        None | Some("desc") => list.reverse(),
        Some("asc") => {}
        Some(_) => return error(422, "Invalid value for parameter direction"),
    }
    crate::page::serve(req, base, list, crate::page::MAX_PER_PAGE, |_, page| {
        Value::Array(page)
    })
}

/// "Create a pull request": `{title, body, head, base, draft}` → `201`; `422` when `draft` is
/// asked of a repository without draft pull requests ("Draft pull requests are not supported in
/// this repository.", as GitHub answers) or an open pull request from `head` into `base`
/// exists ("Validation Failed" with a `custom` error naming it).
fn create_pull(state: &mut State, req: &Recorded) -> Reply {
    let body = req.json();
    let text = |k: &str| body.get(k).and_then(Value::as_str).map(str::to_owned);
    let (Some(title), Some(head), Some(base)) = (text("title"), text("head"), text("base")) else {
        return error(422, "Validation Failed");
    };
    let Some(head_sha) = state.git.refs.get(&format!("refs/heads/{head}")).cloned() else {
        return error(422, "Validation Failed (head invalid)");
    };
    let draft = body.get("draft").and_then(Value::as_bool) == Some(true);
    if draft && !state.scenario.draft_pull_requests {
        return Reply::json(
            422,
            &json!({
                "message": "Draft pull requests are not supported in this repository.",
                "documentation_url": "https://docs.github.com/rest/pulls/pulls#create-a-pull-request",
            }),
        );
    }
    if state
        .pulls
        .iter()
        .any(|p| p.state == "open" && p.head == head && p.base == base)
    {
        return Reply::json(
            422,
            &json!({
                "message": "Validation Failed",
                "errors": [{
                    "resource": "PullRequest",
                    "code": "custom",
                    "message": format!("A pull request already exists for {}:{head}.", state.scenario.owner),
                }],
                "documentation_url": "https://docs.github.com/rest/pulls/pulls#create-a-pull-request",
            }),
        );
    }
    let pull = PullState {
        number: u64::try_from(state.pulls.len()).unwrap_or(0) + 1,
        title,
        body: text("body").unwrap_or_default(),
        head,
        head_sha,
        base,
        draft,
        state: "open".into(),
        labels: Vec::new(),
        requested_reviewers: Vec::new(),
        requested_teams: Vec::new(),
        merged: false,
        // The token is the App's installation token: its pull requests are its bot's.
        user: format!("{}[bot]", state.scenario.app_slug),
    };
    let value = pull_json(state, &pull);
    state.pulls.push(pull);
    Reply::json(201, &value)
}

/// Schema `check-run`: `app` is the `integration` that created it (`id`, `slug`, ...), `output`
/// `{title, summary, text, annotations_count, annotations_url}`
/// (<https://docs.github.com/en/rest/checks/runs#get-a-check-run>).
fn check_run_json(run: &CheckRunState) -> Value {
    json!({
        "id": run.id,
        "name": run.name,
        "head_sha": run.head_sha,
        "status": "completed",
        "conclusion": run.conclusion,
        "html_url": format!("https://github.com/checks/{}", run.id),
        "external_id": run.external_id,
        "app": { "id": run.app_id, "slug": run.app_slug },
        "output": {
            "title": "Gate",
            "summary": run.output_summary,
            "text": run.output_text,
            "annotations_count": 0,
        },
    })
}

/// "List check runs for a Git reference"
/// (<https://docs.github.com/en/rest/checks/runs#list-check-runs-for-a-git-reference>): the
/// `check_name` and `app_id` query filters; `{total_count, check_runs}`, in pages
/// ([`crate::page`]; the order is not documented: creation order here).
fn list_check_runs(state: &State, req: &Recorded, sha: &str, base: &str) -> Reply {
    let name = req.query("check_name");
    let app_id = req.query("app_id").map(|a| a.parse::<u64>().unwrap_or(0));
    let list: Vec<Value> = state
        .check_runs
        .iter()
        .filter(|c| c.head_sha == sha && name.is_none_or(|n| n == c.name))
        .filter(|c| app_id.is_none_or(|a| a == c.app_id))
        .map(check_run_json)
        .collect();
    crate::page::serve(
        req,
        base,
        list,
        crate::page::MAX_PER_PAGE,
        |total, page| json!({ "total_count": total, "check_runs": page }),
    )
}

/// "Create a check run": `{name, head_sha, status, conclusion, ...}` → `201`.
fn create_check_run(state: &mut State, req: &Recorded) -> Reply {
    let body = req.json();
    let (Some(name), Some(head_sha)) = (
        body.get("name").and_then(Value::as_str),
        body.get("head_sha").and_then(Value::as_str),
    ) else {
        return error(422, "Validation Failed");
    };
    // Created by the App whose installation token made the request.
    let run = CheckRunState {
        id: state.next_id(),
        name: name.to_owned(),
        head_sha: head_sha.to_owned(),
        conclusion: body
            .get("conclusion")
            .and_then(Value::as_str)
            .map(str::to_owned),
        app_id: state.scenario.app_id,
        app_slug: state.scenario.app_slug.clone(),
        output_text: body
            .pointer("/output/text")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        external_id: body
            .get("external_id")
            .and_then(Value::as_str)
            .map(str::to_owned),
        output_summary: body
            .pointer("/output/summary")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
    };
    let value = check_run_json(&run);
    state.check_runs.push(run);
    Reply::json(201, &value)
}

/// "Update a check run" (<https://docs.github.com/en/rest/checks/runs#update-a-check-run>):
/// `external_id`, `conclusion`, `output.summary`, `output.text` replaced when given; `200`. The
/// token's App may update only its own check runs (another App's: `403`, "Resource not
/// accessible by integration"); there is no route that deletes one.
fn update_check_run(state: &mut State, req: &Recorded, id: &str) -> Reply {
    let body = req.json();
    let app_id = state.scenario.app_id;
    let Some(run) = state
        .check_runs
        .iter_mut()
        .find(|c| id.parse::<u64>().ok() == Some(c.id))
    else {
        return not_found();
    };
    if run.app_id != app_id {
        return error(403, "Resource not accessible by integration");
    }
    if let Some(external_id) = body.get("external_id").and_then(Value::as_str) {
        run.external_id = Some(external_id.to_owned());
    }
    if let Some(conclusion) = body.get("conclusion").and_then(Value::as_str) {
        run.conclusion = Some(conclusion.to_owned());
    }
    if let Some(summary) = body.pointer("/output/summary").and_then(Value::as_str) {
        run.output_summary = summary.to_owned();
    }
    if let Some(text) = body.pointer("/output/text").and_then(Value::as_str) {
        run.output_text = text.to_owned();
    }
    let value = check_run_json(run);
    Reply::json(200, &value)
}

/// "Get a pull request" (<https://docs.github.com/en/rest/pulls/pulls#get-a-pull-request>).
fn get_pull(state: &State, number: &str) -> Reply {
    match state
        .pulls
        .iter()
        .find(|p| number.parse::<u64>().ok() == Some(p.number))
    {
        Some(pull) => Reply::json(200, &pull_json(state, pull)),
        None => not_found(),
    }
}

/// "Update a pull request" (<https://docs.github.com/en/rest/pulls/pulls#update-a-pull-request>):
/// `{title, body, state, base}`, each optional (only `title`, `body` and `state` are kept here);
/// `200` with the pull request, `404` for an unknown number, `422` for a field of the wrong type
/// or a `state` other than `open` or `closed`.
fn update_pull(state: &mut State, req: &Recorded, number: &str) -> Reply {
    let body = req.json();
    let Some(index) = number
        .parse::<u64>()
        .ok()
        .and_then(|n| state.pulls.iter().position(|p| p.number == n))
    else {
        return not_found();
    };
    let text = |k: &str| match body.get(k) {
        None => Ok(None),
        Some(Value::String(v)) => Ok(Some(v.clone())),
        Some(_) => Err(()),
    };
    let (Ok(title), Ok(new_body), Ok(new_state)) = (text("title"), text("body"), text("state"))
    else {
        return error(422, "Validation Failed");
    };
    if new_state
        .as_deref()
        .is_some_and(|s| s != "open" && s != "closed")
    {
        return error(422, "Validation Failed");
    }
    let pull = &mut state.pulls[index];
    if let Some(title) = title {
        pull.title = title;
    }
    if let Some(new_body) = new_body {
        pull.body = new_body;
    }
    if let Some(new_state) = new_state {
        pull.state = new_state;
    }
    let pull = state.pulls[index].clone();
    Reply::json(200, &pull_json(state, &pull))
}

/// "Revoke an installation access token" (`DELETE /installation/token`,
/// <https://docs.github.com/en/rest/apps/installations#revoke-an-installation-access-token>):
/// `204`, and the token it was called with is refused from then on (`401`).
fn revoke_token(state: &mut State, token: &str) -> Reply {
    state.revoked_tokens.insert(token.to_owned());
    Reply {
        status: 204,
        headers: Vec::new(),
        body: Vec::new(),
    }
}

/// "Create an installation access token for an App" (`POST
/// /app/installations/{installation_id}/access_tokens`,
/// <https://docs.github.com/en/rest/apps/apps#create-an-installation-access-token-for-an-app>),
/// authenticated with the App's JSON web token: `201` with `token` and `expires_at`; each call
/// mints another token.
fn mint_installation_token(state: &mut State, req: &Recorded) -> Reply {
    let jwt = req
        .header("authorization")
        .and_then(|h| h.strip_prefix("Bearer "));
    if state.scenario.app_jwt.is_none() || jwt != state.scenario.app_jwt.as_deref() {
        return error(401, "A JSON web token could not be decoded");
    }
    let token = format!(
        "ghs_standinInstallation{:016}",
        state.scenario.installation_tokens.len() + 1
    );
    state.scenario.installation_tokens.push(token.clone());
    Reply::json(
        201,
        &json!({
            "token": token,
            "expires_at": "2026-01-01T01:00:00Z",
            "permissions": {"contents": "write", "pull_requests": "write", "checks": "write"},
            "repository_selection": "selected",
        }),
    )
}

/// A branch name or a commit id, as the stand-in's Git database resolves it.
fn resolve_commit(state: &State, name: &str) -> Option<String> {
    if let Some(id) = state.git.refs.get(&format!("refs/heads/{name}")) {
        return Some(id.clone());
    }
    matches!(
        state.git.objects.get(name),
        Some(crate::git::Object::Commit { .. })
    )
    .then(|| name.to_owned())
}

/// "Compare two commits" (`GET /repos/{owner}/{repo}/compare/{base}...{head}`,
/// <https://docs.github.com/en/rest/commits/commits#compare-two-commits>): `status` is
/// `identical`, `ahead` (head has commits base lacks), `behind` or `diverged`; `404` when either
/// side is unknown. Only `status` and the two commits' ids are served.
fn compare(state: &State, basehead: &str) -> Reply {
    let Some((base, head)) = basehead.split_once("...") else {
        return not_found();
    };
    let (Some(base), Some(head)) = (resolve_commit(state, base), resolve_commit(state, head))
    else {
        return not_found();
    };
    let status = if base == head {
        "identical"
    } else if state.git.is_ancestor(&base, &head) {
        "ahead"
    } else if state.git.is_ancestor(&head, &base) {
        "behind"
    } else {
        "diverged"
    };
    Reply::json(
        200,
        &json!({
            "status": status,
            "base_commit": {"sha": base},
            "commits": [],
        }),
    )
}

/// "Get repository content" with `ref`; the raw media type answers the bytes.
/// "Get repository content" of another repository, at a commit (`Scenario::other_files`), raw.
fn other_contents(state: &State, req: &Recorded, repository: &str, path: &str) -> Reply {
    let reference = req.query("ref").unwrap_or("");
    match state
        .scenario
        .other_files
        .iter()
        .find(|(r, c, p, _)| r.eq_ignore_ascii_case(repository) && c == reference && p == path)
    {
        Some((_, _, _, bytes)) if req.header("accept").is_some_and(|a| a.contains("raw")) => {
            Reply {
                status: 200,
                headers: vec![("content-type".into(), "application/vnd.github.raw".into())],
                body: bytes.clone(),
            }
        }
        Some(_) => error(
            415,
            "the stand-in serves other repositories' files raw only",
        ),
        None => not_found(),
    }
}

fn get_contents(state: &State, req: &Recorded, path: &str) -> Reply {
    let reference = req.query("ref").unwrap_or("main");
    let commit = state
        .git
        .refs
        .get(&format!("refs/heads/{reference}"))
        .cloned()
        .unwrap_or_else(|| reference.to_owned());
    let Some(bytes) = state.git.read_path(&commit, path) else {
        return not_found();
    };
    if req.header("accept").is_some_and(|a| a.contains("raw")) {
        return Reply {
            status: 200,
            headers: vec![("content-type".into(), "application/vnd.github.raw".into())],
            body: bytes.to_vec(),
        };
    }
    Reply::json(
        200,
        &json!({
            "type": "file",
            "encoding": "base64",
            "path": path,
            "size": bytes.len(),
            "content": base64::engine::general_purpose::STANDARD.encode(bytes),
        }),
    )
}

/// Adds the [`crate::Tamper::ExtraFile`] to a tree being written for a publication.
fn tamper_leaves(state: &mut State, leaves: &mut BTreeMap<String, (String, String)>) {
    if let Some(crate::Tamper::ExtraFile { path, contents }) = state.scenario.tamper.clone() {
        let id = state.git.put_blob(contents);
        leaves.insert(path, ("100644".to_owned(), id));
    }
}

/// GitHub refuses an App without the `workflows` permission any ref update that would change
/// what `.github/workflows` holds relative to the default branch; the stand-in compares the
/// target commit's workflow files with the default branch head's. The wording is the refusal
/// GitHub gives for such a push ("refusing to allow a GitHub App to create or update workflow
/// `<path>` without `workflows` permission").
fn workflows_refusal(state: &State, commit: &str) -> Option<String> {
    if !state.scenario.app_without_workflows_permission {
        return None;
    }
    let default = state
        .git
        .refs
        .get(&format!("refs/heads/{}", state.scenario.default_branch))?;
    let workflows = |commit: &str| -> BTreeMap<String, (String, String)> {
        state
            .git
            .commit_tree(commit)
            .and_then(|tree| state.git.flatten(tree))
            .unwrap_or_default()
            .into_iter()
            .filter(|(path, _)| path.starts_with(".github/workflows/"))
            .collect()
    };
    let (ours, theirs) = (workflows(commit), workflows(default));
    let differing = ours
        .keys()
        .chain(theirs.keys())
        .find(|path| ours.get(*path) != theirs.get(*path))?;
    Some(format!(
        "refusing to allow a GitHub App to create or update workflow `{differing}` without \
         `workflows` permission"
    ))
}

/// A GraphQL answer with one error for the `createCommitOnBranch` field (GraphQL's "Response"
/// format, <https://spec.graphql.org/October2021/#sec-Errors>, with GitHub's `type`).
fn graphql_error(kind: &str, message: &str) -> Reply {
    Reply::json(
        200,
        &json!({
            "data": { "createCommitOnBranch": null },
            "errors": [{
                "type": kind,
                "path": ["createCommitOnBranch"],
                "locations": [{ "line": 1, "column": 58 }],
                "message": message,
            }],
        }),
    )
}

/// `POST /graphql` `{query, variables}`: only `createCommitOnBranch(input: $input)`
/// (<https://docs.github.com/en/graphql/reference/mutations#createcommitonbranch>), on the
/// repository this stand-in models. The branch must exist and point at `expectedHeadOid`; the
/// `fileChanges` are applied to its tree (deletions of existing paths; additions written as
/// `100644` whatever the path's mode was); paths are unique across both lists; the commit's
/// message is the headline, a blank line and the body; its only parent is the old head.
fn graphql(state: &mut State, req: &Recorded) -> Reply {
    let body = req.json();
    let query = body.get("query").and_then(Value::as_str).unwrap_or("");
    if !query.contains("createCommitOnBranch(input: $input)") {
        return Reply::json(
            200,
            &json!({ "errors": [{ "message": "the stand-in answers createCommitOnBranch(input: $input) only" }] }),
        );
    }
    let Some(input) = body.pointer("/variables/input") else {
        return Reply::json(
            200,
            &json!({ "errors": [{ "message": "Variable $input of type CreateCommitOnBranchInput! was provided invalid value" }] }),
        );
    };
    let s = &state.scenario;
    let full_name = format!("{}/{}", s.owner, s.repo);
    let text = |pointer: &str| input.pointer(pointer).and_then(Value::as_str);
    let repo = text("/branch/repositoryNameWithOwner").unwrap_or("");
    if !repo.eq_ignore_ascii_case(&full_name) {
        return graphql_error(
            "NOT_FOUND",
            &format!("Could not resolve to a Repository with the name '{repo}'."),
        );
    }
    let branch = text("/branch/branchName").unwrap_or("");
    let ref_name = format!("refs/heads/{branch}");
    let Some(head) = state.git.refs.get(&ref_name).cloned() else {
        return graphql_error(
            "NOT_FOUND",
            &format!("Could not resolve to a Ref with the name '{ref_name}'."),
        );
    };
    let expected = text("/expectedHeadOid").unwrap_or("");
    if head != expected {
        return graphql_error(
            "STALE_DATA",
            &format!(
                "Expected branch to point to \"{expected}\" but it did not. Pull and try again."
            ),
        );
    }
    let Some(mut leaves) = state
        .git
        .commit_tree(&head)
        .map(str::to_owned)
        .and_then(|tree| state.git.flatten(&tree))
    else {
        return graphql_error("NOT_FOUND", "the branch head is not a commit");
    };
    let list = |name: &str| {
        input
            .pointer(&format!("/fileChanges/{name}"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let (additions, deletions) = (list("additions"), list("deletions"));
    let mut seen = std::collections::BTreeSet::new();
    for change in additions.iter().chain(&deletions) {
        let path = change.get("path").and_then(Value::as_str).unwrap_or("");
        if !valid_tree_path(path) || !seen.insert(path.to_owned()) {
            return graphql_error(
                "UNPROCESSABLE",
                &format!("A path was invalid or given twice: '{path}'"),
            );
        }
    }
    for deletion in &deletions {
        let path = deletion.get("path").and_then(Value::as_str).unwrap_or("");
        if leaves.remove(path).is_none() {
            return graphql_error(
                "UNPROCESSABLE",
                &format!(
                    "A path was requested for deletion which does not exist as of commit oid `{head}`"
                ),
            );
        }
    }
    for addition in &additions {
        let path = addition.get("path").and_then(Value::as_str).unwrap_or("");
        let contents = addition
            .get("contents")
            .and_then(Value::as_str)
            .unwrap_or("");
        let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(contents) else {
            return graphql_error("UNPROCESSABLE", "contents is not valid Base64");
        };
        let id = state.git.put_blob(bytes);
        leaves.retain(|p, _| !p.starts_with(&format!("{path}/")));
        leaves.insert(path.to_owned(), ("100644".to_owned(), id));
    }
    tamper_leaves(state, &mut leaves);
    let tree = state.git.build(&leaves);
    let headline = text("/message/headline").unwrap_or("");
    let message = match text("/message/body") {
        Some(body) if !body.is_empty() => format!("{headline}\n\n{body}"),
        _ => headline.to_owned(),
    };
    let commit = state.git.put_commit(
        &tree,
        std::slice::from_ref(&head),
        &message,
        state.now,
        false,
    );
    if let Some(refusal) = workflows_refusal(state, &commit) {
        return graphql_error("FORBIDDEN", &refusal);
    }
    state.created_commits.insert(commit.clone());
    state.git.refs.insert(ref_name, commit.clone());
    Reply::json(
        200,
        &json!({ "data": { "createCommitOnBranch": { "commit": { "oid": commit } } } }),
    )
}

/// "Add labels to an issue" (a pull request is an issue): `{labels: [names]}` → `200` with every
/// label the issue has; `404` for an unknown number, `422` without a list of names.
fn add_labels(state: &mut State, req: &Recorded, number: &str) -> Reply {
    let body = req.json();
    let Some(names) = body
        .get("labels")
        .and_then(Value::as_array)
        .and_then(|list| {
            list.iter()
                .map(|v| v.as_str().map(str::to_owned))
                .collect::<Option<Vec<String>>>()
        })
    else {
        return error(422, "Invalid request.\n\n\"labels\" wasn't supplied.");
    };
    let Some(pull) = number
        .parse::<u64>()
        .ok()
        .and_then(|n| state.pulls.iter_mut().find(|p| p.number == n))
    else {
        return not_found();
    };
    for name in names {
        if !pull.labels.contains(&name) {
            pull.labels.push(name);
        }
    }
    let labels: Vec<Value> = pull
        .labels
        .iter()
        .map(|l| json!({ "name": l, "default": false }))
        .collect();
    Reply::json(200, &Value::Array(labels))
}

/// "Request reviewers for a pull request"
/// (<https://docs.github.com/en/rest/pulls/review-requests#request-reviewers-for-a-pull-request>):
/// `{reviewers: [logins], team_reviewers: [slugs]}`, at least one of them given → `201` with the
/// pull request; `404` for an unknown number, `422` for a body without either list or with a
/// value that is not a string. Requesting a reviewer again changes nothing.
fn request_reviewers(state: &mut State, req: &Recorded, number: &str) -> Reply {
    let body = req.json();
    let list = |key: &str| -> Option<Option<Vec<String>>> {
        match body.get(key) {
            None => Some(None),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| v.as_str().map(str::to_owned))
                .collect::<Option<Vec<String>>>()
                .map(Some),
            Some(_) => None,
        }
    };
    let (Some(users), Some(teams)) = (list("reviewers"), list("team_reviewers")) else {
        return error(422, "Invalid request.\n\nFor 'items', is not a string.");
    };
    if users.is_none() && teams.is_none() {
        return error(
            422,
            "Invalid request.\n\nNo subschema in \"anyOf\" matched.\n\"reviewers\" wasn't supplied.",
        );
    }
    let Some(index) = number
        .parse::<u64>()
        .ok()
        .and_then(|n| state.pulls.iter().position(|p| p.number == n))
    else {
        return not_found();
    };
    let pull = &mut state.pulls[index];
    for (new, held) in [
        (users.unwrap_or_default(), &mut pull.requested_reviewers),
        (teams.unwrap_or_default(), &mut pull.requested_teams),
    ] {
        for name in new {
            if !held.contains(&name) {
                held.push(name);
            }
        }
    }
    let pull = state.pulls[index].clone();
    Reply::json(201, &pull_json(state, &pull))
}
