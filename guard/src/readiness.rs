//! The second execution. Once the draft pull request exists, its branch `agent-team/<task_id>`
//! runs the repository's own `push` and `pull_request` workflows with the agent's code, and a
//! branch of the same repository gets the repository's secrets. The apply/verify workflow's
//! isolation does not reach those runs. This module reads the workflows of the base commit (the
//! diff may not touch `.github/**`, so they are the ones that will run) and lists every job that
//! would run on that branch, reads secrets, and names no environment.
//!
//! What counts, and why:
//!
//! - **Triggers**: `push` to the branch (`branches`/`branches-ignore` matched against it with
//!   GitHub's filter syntax, see [`filter`]; a `push` filtered by tags alone does not run for a
//!   branch) and `pull_request` into the default branch (its `branches` filters match the base
//!   branch). Every activity type counts (a label or a review request runs the same code), and
//!   `paths` filters are not evaluated (the job may run).
//! - **The job's condition**: `if:` is evaluated with what is known of the run (the event, `ref`,
//!   `head_ref`, the pull request's branches, that it is a draft from this repository, `inputs`
//!   empty); everything else (`needs`, `vars`, the actor, ...) is unknown. Only a condition that
//!   is false whatever the unknowns are excludes the job; a job whose needed job is excluded is
//!   excluded too unless its condition calls `always()`, `failure()` or `cancelled()`.
//! - **Secrets**: any `secrets.*` read anywhere in the job or in the workflow's top-level `env`
//!   (`secrets.GITHUB_TOKEN`, the run's own token, is not counted), `toJSON(secrets)`, and a
//!   reusable workflow called with `secrets: inherit`. A step's own `if:` does not protect: the
//!   job's secrets reach the runner with the job, and code that ran earlier in the same job can
//!   read the runner's memory (hosted runners grant sudo).
//! - **Environment**: a job with a literal `environment` is left to that environment's protection
//!   rules (required reviewers, deployment branches), which this reader cannot see; an environment
//!   chosen by an expression could be empty, so it does not count.
//!
//! A workflow file this reader cannot read (not UTF-8, not YAML, over the size limit, not a
//! workflow, a filter or condition it cannot parse) is a finding too: it cannot be shown safe.

pub mod expr;
pub mod filter;

use serde_json::Value;

use contract::readiness::{
    FindingDoc, ReadinessDoc, ReadinessMode, ReadinessResult, ReadinessSchema,
};
pub use contract::readiness::{ReadinessEvent as Event, ReadinessRule as Rule};

use expr::{Scope, Val};
use filter::Pattern;

/// Largest workflow file read.
pub const MAX_WORKFLOW_BYTES: usize = 1024 * 1024;

/// The run the published branch will see.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The branch the publication pushes: `agent-team/<task_id>`.
    pub branch: String,
    /// The branch the draft pull request targets (the default branch).
    pub base_branch: String,
    /// `owner/name` of the repository.
    pub repository: String,
}

/// One workflow file of the base tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkflowFile {
    /// Its path in the repository (`.github/workflows/ci.yml`).
    pub path: String,
    pub bytes: Vec<u8>,
}

/// What the readiness check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding {
    UnprotectedSecretJob {
        workflow: String,
        job: String,
        /// The job's `name:`, when it has a literal one.
        name: Option<String>,
        events: Vec<Event>,
        /// Secret names read (upper case), `*` for the whole context, `inherit` for `secrets:
        /// inherit`.
        secrets: Vec<String>,
    },
    UnreadableWorkflow {
        workflow: String,
        reason: String,
    },
}

impl Finding {
    pub fn rule(&self) -> Rule {
        match self {
            Finding::UnprotectedSecretJob { .. } => Rule::UnprotectedSecretJob,
            Finding::UnreadableWorkflow { .. } => Rule::UnreadableWorkflow,
        }
    }

    pub fn workflow(&self) -> &str {
        match self {
            Finding::UnprotectedSecretJob { workflow, .. }
            | Finding::UnreadableWorkflow { workflow, .. } => workflow,
        }
    }

    /// One line for a human (not escaped: the caller escapes for its sink).
    pub fn message(&self) -> String {
        match self {
            Finding::UnprotectedSecretJob {
                job,
                events,
                secrets,
                ..
            } => {
                let events: Vec<&str> = events.iter().map(|e| e.name()).collect();
                format!(
                    "job `{job}` would run on {} of the published branch with secrets ({}) and no environment",
                    events.join(" and "),
                    secrets.join(", ")
                )
            }
            Finding::UnreadableWorkflow { reason, .. } => {
                format!("cannot be read, so cannot be shown safe: {reason}")
            }
        }
    }
}

impl Finding {
    /// The finding as the readiness document carries it.
    pub fn to_doc(&self) -> FindingDoc {
        let (job, job_name, events, secrets) = match self {
            Finding::UnprotectedSecretJob {
                job,
                name,
                events,
                secrets,
                ..
            } => (
                Some(job.clone()),
                name.clone(),
                events.clone(),
                secrets.clone(),
            ),
            Finding::UnreadableWorkflow { .. } => (None, None, Vec::new(), Vec::new()),
        };
        FindingDoc {
            rule: self.rule(),
            workflow: self.workflow().to_owned(),
            job,
            job_name,
            events,
            secrets,
            message: self.message(),
        }
    }
}

/// The readiness document of `findings` over the `workflows` read at `base_commit`.
pub fn document(
    target: &Target,
    base_commit: contract::ids::CommitId,
    workflows: Vec<String>,
    findings: &[Finding],
    mode: ReadinessMode,
) -> ReadinessDoc {
    ReadinessDoc {
        schema: ReadinessSchema,
        result: ReadinessResult::of(findings.len(), mode),
        mode,
        base_commit,
        branch: target.branch.clone(),
        base_branch: target.base_branch.clone(),
        repository: target.repository.clone(),
        workflows,
        findings: findings.iter().map(Finding::to_doc).collect(),
    }
}

/// The findings over a set of workflow files, in file then job order.
pub fn assess(files: &[WorkflowFile], target: &Target) -> Vec<Finding> {
    let mut findings = Vec::new();
    for file in files {
        match assess_file(file, target) {
            Ok(mut found) => findings.append(&mut found),
            Err(reason) => findings.push(Finding::UnreadableWorkflow {
                workflow: file.path.clone(),
                reason,
            }),
        }
    }
    findings
}

/// Parse a workflow file as YAML into a generic value, under a budget.
pub fn parse_workflow(bytes: &[u8]) -> Result<Value, String> {
    if bytes.len() > MAX_WORKFLOW_BYTES {
        return Err(format!("larger than {MAX_WORKFLOW_BYTES} bytes"));
    }
    let text = std::str::from_utf8(bytes).map_err(|_| "not UTF-8".to_owned())?;
    let options = serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_reader_input_bytes: Some(MAX_WORKFLOW_BYTES),
            max_events: 1_000_000,
            max_aliases: 1_000,
            max_anchors: 1_000,
            max_depth: 64,
            max_documents: 1,
            max_nodes: 500_000,
            max_total_scalar_bytes: MAX_WORKFLOW_BYTES,
            max_merge_keys: 0,
        },
        duplicate_keys: serde_saphyr::DuplicateKeyPolicy::Error,
        merge_keys: serde_saphyr::MergeKeyPolicy::Error,
        with_snippet: false,
    };
    serde_saphyr::from_str_with_options::<Value>(text, options)
        .map_err(|e| format!("not YAML: {}", e.without_snippet()))
}

fn assess_file(file: &WorkflowFile, target: &Target) -> Result<Vec<Finding>, String> {
    let doc = parse_workflow(&file.bytes)?;
    let top = doc.as_object().ok_or("not a mapping")?;
    let on = top.get("on").ok_or("no `on`")?;
    let jobs = top
        .get("jobs")
        .and_then(Value::as_object)
        .ok_or("no `jobs` mapping")?;
    let mut events = Vec::new();
    for &event in Event::ALL {
        if triggered(on, event, target)? {
            events.push(event);
        }
    }
    if events.is_empty() {
        return Ok(Vec::new());
    }
    // Secrets read at the top level (env, defaults, ...) reach every job.
    let mut top_secrets = Vec::new();
    for (key, value) in top {
        if key != "jobs" && key != "on" {
            secrets_in(value, &mut top_secrets);
        }
    }

    let mut findings = Vec::new();
    let mut skipped: Vec<Vec<bool>> = Vec::new();
    for &event in &events {
        skipped.push(excluded_jobs(jobs, event, target)?);
    }
    for (index, (id, job)) in jobs.iter().enumerate() {
        let job_map = job
            .as_object()
            .ok_or_else(|| format!("job `{id}` is not a mapping"))?;
        if has_literal_environment(job_map.get("environment")) {
            continue;
        }
        let mut secrets = top_secrets.clone();
        secrets_in(job, &mut secrets);
        if job_map.get("secrets").and_then(Value::as_str) == Some("inherit") {
            secrets.push("inherit".to_owned());
        }
        secrets.sort();
        secrets.dedup();
        if secrets.is_empty() {
            continue;
        }
        let runs_on: Vec<Event> = events
            .iter()
            .zip(&skipped)
            .filter(|(_, excluded)| !excluded.get(index).copied().unwrap_or(false))
            .map(|(event, _)| *event)
            .collect();
        if runs_on.is_empty() {
            continue;
        }
        findings.push(Finding::UnprotectedSecretJob {
            workflow: file.path.clone(),
            job: id.clone(),
            name: job_map
                .get("name")
                .and_then(Value::as_str)
                .filter(|n| !n.contains("${{"))
                .map(str::to_owned),
            events: runs_on,
            secrets,
        });
    }
    Ok(findings)
}

/// Whether `on` starts the workflow for `event` on the target.
fn triggered(on: &Value, event: Event, target: &Target) -> Result<bool, String> {
    let name = event.name();
    let config = match on {
        Value::String(s) => return Ok(s == name),
        Value::Array(items) => {
            return Ok(items.iter().any(|i| i.as_str() == Some(name)));
        }
        Value::Object(map) => match map.get(name) {
            None => return Ok(false),
            Some(config) => config,
        },
        _ => return Err("`on` is not a string, a list or a mapping".into()),
    };
    let filters = match config {
        Value::Null => return Ok(true),
        Value::Object(filters) => filters,
        _ => return Err(format!("`on.{name}` is not a mapping")),
    };
    let list = |key: &str| -> Result<Option<Vec<Pattern>>, String> {
        let Some(value) = filters.get(key) else {
            return Ok(None);
        };
        let items: Vec<&str> = match value {
            Value::String(s) => vec![s.as_str()],
            Value::Array(items) => items
                .iter()
                .map(|i| {
                    i.as_str()
                        .ok_or_else(|| format!("`on.{name}.{key}` holds a non-string"))
                })
                .collect::<Result<_, _>>()?,
            _ => return Err(format!("`on.{name}.{key}` is not a list")),
        };
        items
            .iter()
            .map(|p| Pattern::parse(p).map_err(|e| format!("`on.{name}.{key}`: {e}")))
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    };
    let branches = list("branches")?;
    let ignored = list("branches-ignore")?;
    // A pull request's branch filters name its base branch; a push's the pushed branch.
    let branch = match event {
        Event::Push => &target.branch,
        Event::PullRequest => &target.base_branch,
    };
    match (branches, ignored) {
        (Some(_), Some(_)) => Err(format!(
            "`on.{name}` has both `branches` and `branches-ignore`"
        )),
        (Some(patterns), None) => Ok(filter::included(&patterns, branch)),
        (None, Some(patterns)) => Ok(!filter::included(&patterns, branch)),
        (None, None) => {
            let tags_only = event == Event::Push
                && (filters.contains_key("tags") || filters.contains_key("tags-ignore"));
            Ok(!tags_only)
        }
    }
}

fn has_literal_environment(value: Option<&Value>) -> bool {
    let name = match value {
        Some(Value::String(s)) => Some(s.as_str()),
        Some(Value::Object(map)) => map.get("name").and_then(Value::as_str),
        _ => None,
    };
    name.is_some_and(|n| !n.trim().is_empty() && !n.contains("${{"))
}

/// Every secret read in the expressions of a value (strings' `${{ }}` and `if:` conditions).
/// An expression this reader cannot parse counts as reading every secret when it mentions
/// `secrets` at all.
fn secrets_in(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => {
            let bodies = expr::embedded(s).unwrap_or_else(|_| vec![s.as_str()]);
            for body in bodies {
                scan_expression(body, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|i| secrets_in(i, out)),
        Value::Object(map) => {
            for (key, v) in map {
                if key == "if"
                    && let Value::String(condition) = v
                    && !condition.contains("${{")
                {
                    scan_expression(condition, out);
                    continue;
                }
                secrets_in(v, out);
            }
        }
        _ => {}
    }
}

fn scan_expression(text: &str, out: &mut Vec<String>) {
    match expr::parse(text) {
        Ok(parsed) => out.extend(expr::secrets_read(&parsed)),
        Err(_) if text.to_ascii_lowercase().contains("secrets") => out.push("*".to_owned()),
        Err(_) => {}
    }
}

/// For each job (in `jobs` order): whether it is certainly not run for `event`.
fn excluded_jobs(
    jobs: &serde_json::Map<String, Value>,
    event: Event,
    target: &Target,
) -> Result<Vec<bool>, String> {
    let ids: Vec<&String> = jobs.keys().collect();
    let mut state: Vec<Option<bool>> = vec![None; ids.len()];
    for index in 0..ids.len() {
        let mut visiting = vec![false; ids.len()];
        excluded(index, jobs, &ids, event, target, &mut state, &mut visiting)?;
    }
    Ok(state.into_iter().map(|s| s.unwrap_or(false)).collect())
}

fn excluded(
    index: usize,
    jobs: &serde_json::Map<String, Value>,
    ids: &[&String],
    event: Event,
    target: &Target,
    state: &mut [Option<bool>],
    visiting: &mut [bool],
) -> Result<bool, String> {
    if let Some(Some(known)) = state.get(index) {
        return Ok(*known);
    }
    let (Some(id), Some(job)) = (ids.get(index), ids.get(index).and_then(|id| jobs.get(*id)))
    else {
        return Ok(false);
    };
    if visiting.get(index).copied().unwrap_or(false) {
        return Err(format!("job `{id}` needs itself (a cycle)"));
    }
    if let Some(v) = visiting.get_mut(index) {
        *v = true;
    }
    let needs: Vec<&str> = match job.get("needs") {
        None => Vec::new(),
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).collect(),
        Some(_) => return Err(format!("job `{id}`: `needs` is not a list")),
    };
    let mut need_excluded = false;
    for need in needs {
        let Some(at) = ids.iter().position(|i| i.as_str() == need) else {
            return Err(format!("job `{id}` needs `{need}`, which does not exist"));
        };
        if excluded(at, jobs, ids, event, target, state, visiting)? {
            need_excluded = true;
        }
    }
    let scope = RunScope {
        event,
        target,
        need_excluded,
    };
    let result = match job.get("if") {
        None => need_excluded,
        Some(Value::Bool(b)) => need_excluded || !b,
        Some(Value::Number(n)) => need_excluded || n.as_f64().is_some_and(|n| n == 0.0),
        Some(Value::String(text)) => {
            let overrides = expr::embedded(text)
                .ok()
                .map(|bodies| {
                    let whole = if bodies.is_empty() {
                        vec![text.as_str()]
                    } else {
                        bodies
                    };
                    whole
                        .iter()
                        .filter_map(|b| expr::parse(b).ok())
                        .any(|e| expr::overrides_status(&e))
                })
                .unwrap_or(false);
            let value = expr::condition(text, &scope)
                .map_err(|e| format!("job `{id}`: cannot read its `if`: {e}"))?;
            let certainly_false = value.truthy() == Some(false);
            if overrides {
                certainly_false
            } else {
                need_excluded || certainly_false
            }
        }
        Some(_) => return Err(format!("job `{id}`: `if` is not a string or a boolean")),
    };
    if let Some(v) = visiting.get_mut(index) {
        *v = false;
    }
    if let Some(s) = state.get_mut(index) {
        *s = Some(result);
    }
    Ok(result)
}

/// What an `if:` of the second execution can know.
struct RunScope<'a> {
    event: Event,
    target: &'a Target,
    need_excluded: bool,
}

impl Scope for RunScope<'_> {
    fn context(&self, name: &str) -> Option<Val> {
        let t = self.target;
        let open = || Val::obj([], true);
        Some(match name {
            "github" => {
                let owner = t.repository.split('/').next().unwrap_or_default();
                let repo = || {
                    Val::obj(
                        [
                            ("full_name", Val::str(&t.repository)),
                            ("fork", Val::Bool(false)),
                        ],
                        true,
                    )
                };
                let (reference, ref_name, head_ref, base_ref, pull_request) = match self.event {
                    Event::Push => (
                        Val::Str(format!("refs/heads/{}", t.branch)),
                        Val::str(&t.branch),
                        Val::str(""),
                        Val::str(""),
                        Val::Null,
                    ),
                    Event::PullRequest => (
                        // refs/pull/<number>/merge: the number is not known yet.
                        Val::Unknown { truthy: Some(true) },
                        Val::Unknown { truthy: Some(true) },
                        Val::str(&t.branch),
                        Val::str(&t.base_branch),
                        Val::obj(
                            [
                                ("draft", Val::Bool(true)),
                                (
                                    "head",
                                    Val::obj(
                                        [("ref", Val::str(&t.branch)), ("repo", repo())],
                                        true,
                                    ),
                                ),
                                (
                                    "base",
                                    Val::obj(
                                        [("ref", Val::str(&t.base_branch)), ("repo", repo())],
                                        true,
                                    ),
                                ),
                            ],
                            true,
                        ),
                    ),
                };
                let event = Val::obj(
                    [
                        ("pull_request", pull_request),
                        (
                            "repository",
                            Val::obj(
                                [
                                    ("full_name", Val::str(&t.repository)),
                                    ("fork", Val::Bool(false)),
                                ],
                                true,
                            ),
                        ),
                    ],
                    true,
                );
                Val::obj(
                    [
                        ("event_name", Val::str(self.event.name())),
                        ("ref", reference),
                        ("ref_name", ref_name),
                        ("ref_type", Val::str("branch")),
                        ("head_ref", head_ref),
                        ("base_ref", base_ref),
                        ("repository", Val::str(&t.repository)),
                        ("repository_owner", Val::str(owner)),
                        ("event", event),
                    ],
                    true,
                )
            }
            // A push or pull_request run has no inputs: every `inputs.x` is null.
            "inputs" => Val::obj([], false),
            "secrets" | "vars" | "env" | "needs" | "matrix" | "strategy" | "job" | "jobs"
            | "steps" | "runner" => open(),
            _ => return None,
        })
    }

    fn status(&self, function: &str) -> Val {
        match function {
            "always" => Val::Bool(true),
            "success" if self.need_excluded => Val::Bool(false),
            _ => Val::UNKNOWN,
        }
    }
}
