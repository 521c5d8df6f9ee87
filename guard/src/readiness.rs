//! The second execution. Once the draft pull request exists, its branch `agent-team/<task_id>`
//! runs the repository's own workflows: on the publication itself (`push`, `create`,
//! `pull_request`, the gate's `check_run`, ...) and on every person's action on the draft (a
//! label, a review, a comment, marking it ready). A branch of the same repository gets the
//! repository's secrets and its default token there, and the apply/verify workflow's isolation
//! does not reach those runs. This module lists every job that would run the agent's code with
//! credentials before a person has decided.
//!
//! - **Events** ([`events`]): each event a workflow names is classed by the code and workflow
//!   files its run uses, following GitHub's "Events that trigger workflows": the branch's own
//!   commit (`push`, `create`, deployments: the base commit's workflows, as the diff cannot touch
//!   `.github/**`), the merge into the default branch (`pull_request` and its review events,
//!   `merge_group`: the default branch head's workflows), the default branch's code with data
//!   about the branch (privileged: `pull_request_target`, `workflow_run`, `issue_comment`,
//!   `check_*`, `status`), or safe (a documented allow-list). A name outside the model is judged
//!   like a branch event (`unmodelled-event`).
//! - **Filters**: `branches`/`branches-ignore` with GitHub's filter syntax ([`filter`]) where
//!   GitHub applies them (the pushed branch, a pull request's or merge group's base, the head
//!   branch of a `workflow_run`); a tag-only `push` does not run for a branch. `paths` and
//!   `types` are not evaluated: every activity type is a person's action on the draft.
//! - **Conditions** ([`expr`]): a job's `if:` is evaluated in three values with what is known of
//!   the run (`github.event_name`, `ref` — `refs/pull/<n>/merge` on a pull request —, `ref_name`,
//!   `head_ref`, `base_ref`, the payload's branches); GitHub's implicit `success() &&` is added
//!   only when the condition calls none of `success()`, `failure()`, `always()`, `cancelled()`.
//!   Only a condition false whatever the unknowns are excludes the job.
//! - **Credentials** ([`jobs`]): secrets (also `secrets: inherit`), a `GITHUB_TOKEN` with any
//!   write grant (the policy declares the repository's default), `id-token: write`, a runner not
//!   hosted by GitHub. A step's own `if:` does not protect: the job's credentials reach the
//!   runner with the job.
//! - **Provenance** ([`provenance`]): a job with credentials is a finding only when it runs the
//!   branch's code: on the branch's own events a checkout of the event's commit (or any ref not
//!   the base's side), a non-composite local action, a fetching command; on privileged triggers
//!   a checkout or fetch of a ref the branch controls (`github.event.pull_request.head.sha`,
//!   `workflow_run.head_sha`, `refs/pull/<n>/head`, `github.head_ref`, ...); on dispatches a
//!   ref from the payload or inputs, judged with the repository's senders; everywhere another
//!   run's artifacts, an artifact of the same run uploaded by a job that runs the branch's code,
//!   a well-known action that does either, or a repository script doing any of these. Where
//!   that cannot be established (a script named by a variable or absent from the commit), the
//!   job is a finding with the reason. A job doing none of these is cleared ([`Cleared`]), and
//!   the document says why.
//! - **Environments**: only an environment the policy lists in
//!   `readiness.protected-environments` gates a job (GitHub creates a missing environment
//!   unprotected on first use); `readiness.accept` accepts one job with a reason, and the finding
//!   stays in the report.
//!
//! A workflow file this reader cannot read (not UTF-8, not YAML, over the size limit, not a
//! workflow, a filter or condition it cannot parse) is a finding too: it cannot be shown safe.

pub mod events;
pub mod expr;
pub mod filter;
pub mod jobs;
pub mod provenance;

use serde_json::{Map, Value};

use contract::ids::CommitId;
use contract::readiness::{
    ClearedDoc, FindingDoc, ReadinessDoc, ReadinessMode, ReadinessResult, ReadinessSchema,
};
pub use contract::readiness::{ReadinessEvent as Event, ReadinessRule as Rule};

use events::Class;
use expr::{Scope, Val};
use filter::Pattern;
pub use jobs::{Credential, DefaultToken};
use provenance::{Context, DispatchKind, Lens, Producer, Sender, Verdict};

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

/// One workflow file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkflowFile {
    /// Its path in the repository (`.github/workflows/ci.yml`).
    pub path: String,
    pub bytes: Vec<u8>,
}

/// One job the policy accepts (`readiness.accept`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Acceptance {
    pub workflow: String,
    pub job: String,
    pub reason: String,
}

/// What the policy says about the second execution (`readiness:`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// The repository's default `GITHUB_TOKEN` grant.
    pub default_token: DefaultToken,
    /// Environments whose protection rules an administrator has checked (required reviewers, or
    /// deployment branches that exclude `agent-team/**`); compared case-insensitively, as GitHub
    /// names environments.
    pub protected_environments: Vec<String>,
    pub accept: Vec<Acceptance>,
}

impl Default for Settings {
    /// Fail closed: a write default token, no protected environment, nothing accepted.
    fn default() -> Settings {
        Settings {
            default_token: DefaultToken::Write,
            protected_environments: Vec::new(),
            accept: Vec::new(),
        }
    }
}

/// Which events a set of workflow files is judged for: the base commit's run for the branch's
/// own commit, the default branch head's for the merge and the privileged triggers. A name not
/// in the model is judged in both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reads {
    /// The base commit's files, which are also the default branch head's.
    Both,
    /// The base commit's files (`push`, `create`, deployments).
    Base,
    /// The default branch head's files (pull request events, `merge_group`, privileged).
    DefaultHead,
}

impl Reads {
    fn judges(self, class: Class) -> bool {
        match (self, class) {
            (_, Class::Safe) => false,
            (Reads::Both, _) | (_, Class::Unknown) => true,
            (Reads::Base, Class::Branch) => true,
            (Reads::DefaultHead, Class::Merge | Class::Privileged | Class::Dispatch) => true,
            _ => false,
        }
    }
}

/// What the readiness check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub rule: Rule,
    pub workflow: String,
    /// The job id (every rule but `unreadable-workflow`).
    pub job: Option<String>,
    /// The job's `name:`, when it has a literal one.
    pub name: Option<String>,
    pub events: Vec<Event>,
    pub credentials: Vec<Credential>,
    /// How a privileged job runs the branch's code; the event names not modelled; why a file is
    /// unreadable.
    pub detail: Option<String>,
    /// The policy's reason when it accepts the job.
    pub accepted: Option<String>,
}

impl Finding {
    /// A file that cannot be read.
    pub fn unreadable(workflow: &str, reason: String) -> Finding {
        Finding {
            rule: Rule::UnreadableWorkflow,
            workflow: workflow.to_owned(),
            job: None,
            name: None,
            events: Vec::new(),
            credentials: Vec::new(),
            detail: Some(reason),
            accepted: None,
        }
    }

    pub fn rule(&self) -> Rule {
        self.rule
    }

    pub fn workflow(&self) -> &str {
        &self.workflow
    }

    /// The secret names among the credentials.
    pub fn secrets(&self) -> Vec<String> {
        self.credentials
            .iter()
            .filter_map(|c| match c {
                Credential::Secret(name) => Some(name.clone()),
                _ => None,
            })
            .collect()
    }

    /// One line for a human (not escaped: the caller escapes for its sink): which event, which
    /// job, which credential.
    pub fn message(&self) -> String {
        let job = self.job.as_deref().unwrap_or_default();
        let events: Vec<&str> = self.events.iter().map(|e| e.name()).collect();
        let credentials: Vec<String> = self.credentials.iter().map(Credential::phrase).collect();
        let detail = self.detail.as_deref().unwrap_or_default();
        match self.rule {
            Rule::UnprotectedSecretJob if !detail.is_empty() => format!(
                "job `{job}` would run the published branch's code on {} with {} and no protected environment, through {detail}",
                events.join(", "),
                credentials.join(", ")
            ),
            Rule::UnprotectedSecretJob => format!(
                "job `{job}` would run the published branch's code on {} with {} and no protected environment",
                events.join(", "),
                credentials.join(", ")
            ),
            Rule::PrivilegedCheckout => format!(
                "job `{job}` runs on {} (the default branch's workflow) with {}, and runs the branch's code through {detail}",
                events.join(", "),
                credentials.join(", ")
            ),
            Rule::UnmodelledEvent => format!(
                "job `{job}` runs on {detail}, which this check does not know to be safe, with {}",
                credentials.join(", ")
            ),
            Rule::UnreadableWorkflow => {
                format!("cannot be read, so cannot be shown safe: {detail}")
            }
        }
    }

    /// The one-line fix.
    pub fn fix(&self) -> String {
        let only_default_token = !self.credentials.is_empty()
            && self.credentials.iter().all(|c| {
                matches!(c, Credential::Token(grant) if grant.starts_with("with the repository's default"))
            });
        match self.rule {
            Rule::UnprotectedSecretJob if only_default_token => "declare `permissions: contents: read` on the workflow or the job (or, once the repository's default token is read-only, set the policy's `readiness.default-token: read`)".to_owned(),
            Rule::UnprotectedSecretJob => "skip the job for agent branches (`if: ${{ !startsWith(github.head_ref || github.ref_name, 'agent-team/') }}`), drop the credential, or gate it with an environment listed in the policy's `readiness.protected-environments`".to_owned(),
            Rule::PrivilegedCheckout => "do not check out or download the branch's code in a job that holds credentials: build it in a `pull_request` job with `permissions: {}` and no secrets".to_owned(),
            Rule::UnmodelledEvent => "remove the trigger, or drop the job's credentials (or accept the job in the policy's `readiness.accept` with a reason)".to_owned(),
            Rule::UnreadableWorkflow => "make the file a workflow GitHub can read (valid UTF-8 YAML with `on` and `jobs`), or remove it".to_owned(),
        }
    }

    /// The finding as the readiness document carries it.
    pub fn to_doc(&self, commit: &CommitId) -> FindingDoc {
        FindingDoc {
            rule: self.rule,
            workflow: self.workflow.clone(),
            commit: commit.clone(),
            job: self.job.clone(),
            job_name: self.name.clone(),
            events: self.events.clone(),
            secrets: self.secrets(),
            credentials: self.credentials.iter().map(Credential::phrase).collect(),
            detail: self.detail.clone(),
            accepted: self.accepted.clone(),
            message: self.message(),
            fix: self.fix(),
        }
    }
}

/// A job that holds credentials and gives no finding, and why: it runs no code of the branch,
/// its condition is false, or a protected environment gates it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cleared {
    pub workflow: String,
    pub job: String,
    /// The job's `name:`, when it has a literal one.
    pub name: Option<String>,
    pub events: Vec<Event>,
    pub credentials: Vec<Credential>,
    pub reason: String,
}

impl Cleared {
    /// The cleared job as the readiness document carries it.
    pub fn to_doc(&self, commit: &CommitId) -> ClearedDoc {
        ClearedDoc {
            workflow: self.workflow.clone(),
            commit: commit.clone(),
            job: self.job.clone(),
            job_name: self.name.clone(),
            events: self.events.clone(),
            credentials: self.credentials.iter().map(Credential::phrase).collect(),
            reason: self.reason.clone(),
        }
    }
}

/// What the check found over a set of workflow files: the findings, and the credentialed jobs
/// cleared with their reasons.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Review {
    pub findings: Vec<Finding>,
    pub cleared: Vec<Cleared>,
}

/// The commits read and the files found at each.
#[derive(Debug, Clone)]
pub struct Commits {
    pub base: CommitId,
    pub base_workflows: Vec<String>,
    pub default_head: CommitId,
    pub default_head_workflows: Vec<String>,
}

/// The readiness document of `findings` (each with the commit its file was read at).
pub fn document(
    target: &Target,
    commits: Commits,
    findings: &[(CommitId, Finding)],
    mode: ReadinessMode,
) -> ReadinessDoc {
    document_with(target, commits, findings, &[], mode)
}

/// [`document`], with the credentialed jobs cleared (each with the commit its file was read at).
pub fn document_with(
    target: &Target,
    commits: Commits,
    findings: &[(CommitId, Finding)],
    cleared: &[(CommitId, Cleared)],
    mode: ReadinessMode,
) -> ReadinessDoc {
    let open = findings
        .iter()
        .filter(|(_, f)| f.accepted.is_none())
        .count();
    ReadinessDoc {
        schema: ReadinessSchema,
        result: ReadinessResult::of(open, mode),
        mode,
        base_commit: commits.base,
        default_head: commits.default_head,
        branch: target.branch.clone(),
        base_branch: target.base_branch.clone(),
        repository: target.repository.clone(),
        workflows: commits.base_workflows,
        default_head_workflows: commits.default_head_workflows,
        findings: findings.iter().map(|(c, f)| f.to_doc(c)).collect(),
        cleared: cleared.iter().map(|(c, j)| j.to_doc(c)).collect(),
    }
}

/// The findings over a set of workflow files, in file then job order, judged for the events
/// `reads` selects; the policy's acceptances applied.
pub fn assess(
    files: &[WorkflowFile],
    target: &Target,
    settings: &Settings,
    reads: Reads,
) -> Vec<Finding> {
    let among = |path: &str| -> Result<Option<Vec<u8>>, String> {
        Ok(files
            .iter()
            .find(|f| f.path == path)
            .map(|f| f.bytes.clone()))
    };
    assess_in(files, &among, target, settings, reads)
}

/// Reads one file of the commit the workflow files come from: `Ok(None)` when there is none at
/// that path, `Err` when it cannot be read as a regular file.
pub type ReadFile<'a> = dyn Fn(&str) -> Result<Option<Vec<u8>>, String> + 'a;

/// [`assess`], with the local actions (`uses: ./dir`) and reusable workflows (`uses:
/// ./.github/workflows/x.yml`) a job names read from the same commit through `read`.
pub fn assess_in(
    files: &[WorkflowFile],
    read: &ReadFile<'_>,
    target: &Target,
    settings: &Settings,
    reads: Reads,
) -> Vec<Finding> {
    review_in(files, read, target, settings, reads).findings
}

/// [`assess_in`], with the credentialed jobs that give no finding and why ([`Cleared`]).
pub fn review_in(
    files: &[WorkflowFile],
    read: &ReadFile<'_>,
    target: &Target,
    settings: &Settings,
    reads: Reads,
) -> Review {
    let senders = dispatch_senders(files);
    let mut review = Review::default();
    for file in files {
        match assess_file(file, files, read, target, settings, reads, &senders) {
            Ok((mut found, mut cleared)) => {
                review.findings.append(&mut found);
                review.cleared.append(&mut cleared);
            }
            Err(reason) => review
                .findings
                .push(Finding::unreadable(&file.path, reason)),
        }
    }
    for finding in &mut review.findings {
        if let Some(job) = &finding.job
            && let Some(accept) = settings
                .accept
                .iter()
                .find(|a| a.workflow == finding.workflow && &a.job == job)
        {
            finding.accepted = Some(accept.reason.clone());
        }
    }
    review
}

/// Every step of the files that sends a dispatch ([`provenance::dispatch_sent`]); a file this
/// reader cannot parse sends none here (it is a finding of its own).
fn dispatch_senders(files: &[WorkflowFile]) -> Vec<Sender> {
    let mut out = Vec::new();
    for file in files {
        let Ok(doc) = parse_workflow(&file.bytes) else {
            continue;
        };
        let Some(jobs) = doc.get("jobs").and_then(Value::as_object) else {
            continue;
        };
        for (id, job) in jobs {
            for step in job
                .get("steps")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_object)
            {
                if let Some(kind) = provenance::dispatch_sent(step) {
                    out.push(Sender {
                        workflow: file.path.clone(),
                        job: id.clone(),
                        kind,
                        event_type: provenance::dispatch_type(step),
                        carries: provenance::dispatch_carries(step),
                    });
                }
            }
        }
    }
    out
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

/// The events a workflow's `on` names, each with its configuration (`null` when bare).
fn named_events(on: &Value) -> Result<Vec<(String, Value)>, String> {
    match on {
        Value::String(s) => Ok(vec![(s.clone(), Value::Null)]),
        Value::Array(items) => items
            .iter()
            .map(|i| {
                i.as_str()
                    .map(|s| (s.to_owned(), Value::Null))
                    .ok_or_else(|| "`on` holds a non-string".to_owned())
            })
            .collect(),
        Value::Object(map) => Ok(map.iter().map(|(k, v)| (k.clone(), v.clone())).collect()),
        _ => Err("`on` is not a string, a list or a mapping".into()),
    }
}

/// One job's judgement for one event.
struct Exposure {
    rule: Rule,
    detail: Option<String>,
}

fn assess_file(
    file: &WorkflowFile,
    all: &[WorkflowFile],
    read: &ReadFile<'_>,
    target: &Target,
    settings: &Settings,
    reads: Reads,
    senders: &[Sender],
) -> Result<(Vec<Finding>, Vec<Cleared>), String> {
    let doc = parse_workflow(&file.bytes)?;
    let top = doc.as_object().ok_or("not a mapping")?;
    // YAML 1.1 readers take a bare `on` for `true`; serde-saphyr keeps the key as written.
    let on = top.get("on").ok_or("no `on`")?;
    let jobs = top
        .get("jobs")
        .and_then(Value::as_object)
        .ok_or("no `jobs` mapping")?;

    // (event, or None for a name outside the model; the name as written)
    let mut fired: Vec<(Option<Event>, String)> = Vec::new();
    // The `repository_dispatch` types this workflow receives (`None`: every type).
    let mut dispatch_types: Option<Vec<String>> = None;
    for (name, config) in named_events(on)? {
        let event = Event::from_name(&name);
        let class = event.map_or(Class::Unknown, events::class);
        if !reads.judges(class) {
            continue;
        }
        if let Some(event) = event
            && !triggered(event, &config, target)?
        {
            continue;
        }
        if event == Some(Event::RepositoryDispatch) {
            dispatch_types = received_types(&config);
        }
        fired.push((event, name));
    }
    if fired.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }

    // Secrets read at the top level (env, defaults, ...) reach every job.
    let mut top_secrets = Vec::new();
    for (key, value) in top {
        if key != "jobs" && key != "on" {
            jobs::secrets_in(value, &mut top_secrets);
        }
    }
    let ids: Vec<&String> = jobs.keys().collect();
    let mut per_job: Vec<(Vec<Credential>, bool)> = Vec::new();
    for id in &ids {
        let job = jobs
            .get(*id)
            .and_then(Value::as_object)
            .ok_or_else(|| format!("job `{id}` is not a mapping"))?;
        let mut credentials = jobs::credentials(top, job, &top_secrets, settings.default_token)
            .map_err(|e| format!("job `{id}`: {e}"))?;
        if let Some(called) = job.get("uses").and_then(Value::as_str) {
            credentials
                .extend(called_runners(called, all).map_err(|e| format!("job `{id}`: {e}"))?);
            credentials.sort();
            credentials.dedup();
        }
        // Gated when every name the environment can take is a protected one.
        let gated = jobs::environment_names(job).is_some_and(|names| {
            names.iter().all(|env| {
                settings
                    .protected_environments
                    .iter()
                    .any(|p| p.eq_ignore_ascii_case(env))
            })
        });
        per_job.push((credentials, gated));
    }

    // (job index, rule, detail) -> events
    let mut grouped: Vec<(usize, Rule, Option<String>, Vec<Event>)> = Vec::new();
    // (job index, reason) -> events
    let mut cleared: Vec<(usize, String, Vec<Event>)> = Vec::new();
    let mut clear = |index: usize, reason: String, event: Option<Event>| match cleared
        .iter_mut()
        .find(|(i, r, _)| *i == index && *r == reason)
    {
        Some((_, _, events)) => {
            if let Some(event) = event
                && !events.contains(&event)
            {
                events.push(event);
            }
        }
        None => cleared.push((index, reason, event.into_iter().collect())),
    };
    // The senders whose dispatch can start this workflow: a `repository_dispatch` of a type it
    // receives (a type an expression chooses, or a workflow receiving every type, matches), and
    // every `workflow_dispatch` sender.
    let relevant: Vec<Sender> = senders
        .iter()
        .filter(|s| match (&s.event_type, &dispatch_types) {
            (Some(sent), Some(types)) if s.kind == DispatchKind::Repository => {
                types.iter().any(|t| t == sent)
            }
            _ => true,
        })
        .cloned()
        .collect();
    for (event, name) in &fired {
        let class = event.map_or(Class::Unknown, events::class);
        let lens = match class {
            Class::Branch | Class::Merge | Class::Unknown => Lens::Branch,
            Class::Privileged => Lens::Privileged,
            Class::Dispatch => Lens::Dispatch,
            Class::Safe => continue,
        };
        let excluded = excluded_jobs(jobs, *event, target)?;
        let holds: Vec<bool> = per_job.iter().map(|(c, _)| !c.is_empty()).collect();
        let verdicts = run_verdicts(jobs, &ids, &excluded, &holds, read, lens, target)?;
        for (index, id) in ids.iter().enumerate() {
            let (Some((credentials, gated)), Some(verdict)) =
                (per_job.get(index), verdicts.get(index))
            else {
                continue;
            };
            if credentials.is_empty() {
                continue;
            }
            if excluded.get(index).copied().unwrap_or(false) {
                clear(
                    index,
                    format!("its `if:` (or a job it needs) is false on `{name}`"),
                    *event,
                );
                continue;
            }
            if *gated {
                let names = jobs
                    .get(*id)
                    .and_then(Value::as_object)
                    .and_then(jobs::environment_names)
                    .unwrap_or_default();
                clear(
                    index,
                    format!(
                        "gated by the protected environment {}",
                        names
                            .iter()
                            .map(|n| format!("`{n}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    *event,
                );
                continue;
            }
            let exposure = match (class, verdict) {
                (Class::Unknown, _) => Exposure {
                    rule: Rule::UnmodelledEvent,
                    detail: Some(format!("`{name}`")),
                },
                (_, Verdict::Clear(reason)) => {
                    clear(index, reason.clone(), *event);
                    continue;
                }
                (Class::Branch | Class::Merge, Verdict::Runs(how) | Verdict::Unknown(how)) => {
                    Exposure {
                        rule: Rule::UnprotectedSecretJob,
                        detail: Some(how.clone()),
                    }
                }
                (Class::Dispatch, Verdict::Runs(how)) => {
                    match dispatch_detail(how, *event, &relevant) {
                        Ok(detail) => Exposure {
                            rule: Rule::PrivilegedCheckout,
                            detail: Some(detail),
                        },
                        Err(reason) => {
                            clear(index, reason, *event);
                            continue;
                        }
                    }
                }
                (Class::Dispatch, Verdict::Unknown(why)) => {
                    match relevant
                        .iter()
                        .find(|s| s.kind == dispatch_kind(*event) && s.carries.is_some())
                    {
                        Some(sender) => Exposure {
                            rule: Rule::PrivilegedCheckout,
                            detail: Some(format!(
                                "{why}; the dispatch `{}` job `{}` sends carries {}",
                                sender.workflow,
                                sender.job,
                                sender.carries.as_deref().unwrap_or_default()
                            )),
                        },
                        None => {
                            clear(
                                index,
                                format!(
                                    "{why}, but no sender of the dispatch in this repository puts event data in it"
                                ),
                                *event,
                            );
                            continue;
                        }
                    }
                }
                (_, Verdict::Runs(how) | Verdict::Unknown(how)) => Exposure {
                    rule: Rule::PrivilegedCheckout,
                    detail: Some(how.clone()),
                },
            };
            match grouped.iter_mut().find(|(i, r, d, _)| {
                *i == index
                    && *r == exposure.rule
                    && (*r != Rule::UnmodelledEvent || *d == exposure.detail)
            }) {
                Some((_, _, detail, events)) => {
                    if let Some(event) = event
                        && !events.contains(event)
                    {
                        events.push(*event);
                    }
                    if detail.is_none() {
                        *detail = exposure.detail;
                    }
                }
                None => grouped.push((
                    index,
                    exposure.rule,
                    exposure.detail,
                    event.iter().copied().collect(),
                )),
            }
        }
    }
    grouped.sort_by_key(|(index, rule, _, _)| (*index, *rule));
    // A job with a finding is not also cleared (on another of its events).
    cleared.retain(|(index, _, _)| !grouped.iter().any(|(i, _, _, _)| i == index));
    cleared.sort_by_key(|(index, _, _)| *index);
    let literal_name = |job: &Value| {
        job.get("name")
            .and_then(Value::as_str)
            .filter(|n| !n.contains("${{"))
            .map(str::to_owned)
    };
    let findings = grouped
        .into_iter()
        .filter_map(|(index, rule, detail, events)| {
            let id = ids.get(index)?;
            let job = jobs.get(*id)?;
            let (credentials, _) = per_job.get(index)?;
            Some(Finding {
                rule,
                workflow: file.path.clone(),
                job: Some((*id).clone()),
                name: literal_name(job),
                events,
                credentials: credentials.clone(),
                detail,
                accepted: None,
            })
        })
        .collect();
    let cleared = cleared
        .into_iter()
        .filter_map(|(index, reason, events)| {
            let id = ids.get(index)?;
            let job = jobs.get(*id)?;
            let (credentials, _) = per_job.get(index)?;
            Some(Cleared {
                workflow: file.path.clone(),
                job: (*id).clone(),
                name: literal_name(job),
                events,
                credentials: credentials.clone(),
                reason,
            })
        })
        .collect();
    Ok((findings, cleared))
}

/// The `types` of an `on.repository_dispatch` configuration, when it lists literal ones.
fn received_types(config: &Value) -> Option<Vec<String>> {
    let types = config.get("types")?;
    let list: Vec<String> = match types {
        Value::String(s) => vec![s.clone()],
        Value::Array(items) => items
            .iter()
            .map(|i| i.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()?,
        _ => return None,
    };
    list.iter().all(|t| !t.contains("${{")).then_some(list)
}

/// The dispatch an event receives.
fn dispatch_kind(event: Option<Event>) -> DispatchKind {
    if event == Some(Event::WorkflowDispatch) {
        DispatchKind::Workflow
    } else {
        DispatchKind::Repository
    }
}

/// The detail of a dispatch receiver that checks out a ref from its payload (`how`), with the
/// repository's senders of that dispatch: `Err` with the reason to clear it when every sender
/// fills the payload with no event data.
fn dispatch_detail(how: &str, event: Option<Event>, senders: &[Sender]) -> Result<String, String> {
    let kind = dispatch_kind(event);
    let of_kind: Vec<&Sender> = senders.iter().filter(|s| s.kind == kind).collect();
    let name = |s: &Sender| format!("`{}` job `{}`", s.workflow, s.job);
    if let Some(sender) = of_kind.iter().find(|s| s.carries.is_some()) {
        return Ok(format!(
            "{how}, filled by the dispatch {} sends with {}",
            name(sender),
            sender.carries.as_deref().unwrap_or_default()
        ));
    }
    if of_kind.is_empty() && kind == DispatchKind::Workflow {
        // Only a token that may dispatch workflows (`actions: write`) starts it, with inputs
        // of its holder's choosing: a person with write access or the adopter's own dispatcher,
        // never the agent's branch, which holds no token.
        return Err(format!(
            "{how}, and no workflow of this repository dispatches it: its inputs come from whoever holds a token that may dispatch workflows (actions: write), which the branch's code does not"
        ));
    }
    if of_kind.is_empty() {
        return Ok(format!(
            "{how}; no workflow of this repository sends this dispatch, so the ref it names is unverified"
        ));
    }
    Err(format!(
        "{how}, and every sender of the dispatch in this repository ({}) fills it with no event data",
        of_kind
            .iter()
            .map(|s| name(s))
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

/// Each job's [`Verdict`] for one event: the artifacts uploaded by jobs that run the branch's
/// code are followed into the jobs of the same run that download them, until nothing changes.
/// A local file a job without credentials cannot read fails that job at GitHub (it uploads
/// nothing): its verdict is [`Verdict::Unknown`], which is no producer and no finding; for a job
/// holding credentials it is an error (the file is unreadable).
fn run_verdicts(
    jobs: &Map<String, Value>,
    ids: &[&String],
    excluded: &[bool],
    holds: &[bool],
    read: &ReadFile<'_>,
    lens: Lens,
    target: &Target,
) -> Result<Vec<Verdict>, String> {
    let mut producers: Vec<Producer> = Vec::new();
    loop {
        let mut verdicts = Vec::with_capacity(ids.len());
        for (index, id) in ids.iter().enumerate() {
            let job = jobs
                .get(*id)
                .and_then(Value::as_object)
                .ok_or_else(|| format!("job `{id}` is not a mapping"))?;
            if excluded.get(index).copied().unwrap_or(false) {
                verdicts.push(Verdict::Clear("not run".into()));
                continue;
            }
            let ctx = Context {
                read,
                lens,
                repository: &target.repository,
                producers: &producers,
            };
            match job_verdict(job, &ctx, 0, &mut Vec::new()) {
                Ok(verdict) => verdicts.push(verdict),
                Err(e) if !holds.get(index).copied().unwrap_or(true) => {
                    verdicts.push(Verdict::Unknown(e));
                }
                Err(e) => return Err(format!("job `{id}`: {e}")),
            }
        }
        let mut next: Vec<Producer> = Vec::new();
        for (index, id) in ids.iter().enumerate() {
            if let (Some(Verdict::Runs(_)), Some(job)) = (
                verdicts.get(index),
                jobs.get(*id).and_then(Value::as_object),
            ) {
                let expanded = expand_local_actions(job, read, 0, &mut Vec::new())
                    .map_err(|e| format!("job `{id}`: {e}"))?;
                for artifact in provenance::uploads(&expanded) {
                    next.push(Producer {
                        job: (*id).clone(),
                        artifact,
                    });
                }
            }
        }
        // Producers only grow, and are bounded by the uploads of the file.
        if next.len() <= producers.len() {
            return Ok(verdicts);
        }
        producers = next;
    }
}

/// How deep local actions and reusable workflows are followed (GitHub allows four levels of
/// reusable workflows and ten of composite actions); deeper is a finding.
const MAX_LOCAL_DEPTH: usize = 10;

/// A local action's or reusable workflow's path in the repository, from `uses: ./path`.
fn local_path(uses: &str) -> Option<&str> {
    uses.strip_prefix("./")
        .map(|p| p.trim_end_matches('/'))
        .filter(|p| !p.is_empty())
}

/// Whether a job runs the branch's code ([`provenance::steps_verdict`]), following what it runs
/// of this commit: the steps of each local composite action (`uses: ./dir`, its `action.yml` or
/// `action.yaml`; they run in the calling job, with its credentials) and the jobs of a local
/// reusable workflow (`uses: ./.github/workflows/x.yml`, with the secrets and inputs the caller
/// hands it), each recursively. An input the caller fills from the payload reaches a checkout or
/// a fetch as `inputs.X`, which counts as a ref chosen at run time. A local file that is missing,
/// not readable, deeper than [`MAX_LOCAL_DEPTH`] or in a cycle is an error: the job cannot be
/// shown safe. A reusable workflow of another repository cannot be read: on the branch's own
/// events it may check the branch out (not known); elsewhere it runs the branch's code when the
/// caller hands it a ref the branch controls.
fn job_verdict(
    job: &Map<String, Value>,
    ctx: &Context<'_>,
    depth: usize,
    seen: &mut Vec<String>,
) -> Result<Verdict, String> {
    if let Some(called) = job.get("uses").and_then(Value::as_str) {
        let Some(path) = local_path(called) else {
            let handed = job.get("with").map(jobs::value_text).unwrap_or_default();
            return Ok(match ctx.lens {
                Lens::Branch => Verdict::Unknown(format!(
                    "calls `{called}`, a reusable workflow of another repository that this reader cannot see (it may check out the branch)"
                )),
                Lens::Privileged => {
                    match jobs::branch_controlled(&handed).or_else(|| jobs::chosen_ref(&handed)) {
                        Some(why) => Verdict::Runs(format!("`{called}` handed {why}")),
                        None => Verdict::Clear(format!(
                            "calls `{called}` with no ref the branch controls"
                        )),
                    }
                }
                Lens::Dispatch => match provenance::payload_read(&handed) {
                    Some(path) => Verdict::Runs(format!("`{called}` handed `{path}`")),
                    None => Verdict::Clear(format!(
                        "calls `{called}` with nothing from the dispatch's payload or inputs"
                    )),
                },
            });
        };
        let doc = local_file(path, ctx.read, depth, seen)?;
        let Some(jobs) = doc.get("jobs").and_then(Value::as_object) else {
            return Err(format!("`{called}` has no `jobs` mapping"));
        };
        let inner = Context {
            read: ctx.read,
            lens: ctx.lens,
            repository: ctx.repository,
            producers: &[],
        };
        let mut unknown = None;
        for (id, called_job) in jobs {
            let called_job = called_job
                .as_object()
                .ok_or_else(|| format!("`{called}`: job `{id}` is not a mapping"))?;
            match job_verdict(called_job, &inner, depth + 1, seen)? {
                Verdict::Runs(how) => {
                    seen.pop();
                    return Ok(Verdict::Runs(format!("`{called}` job `{id}`: {how}")));
                }
                Verdict::Unknown(why) => {
                    unknown.get_or_insert(format!("`{called}` job `{id}`: {why}"));
                }
                Verdict::Clear(_) => {}
            }
        }
        seen.pop();
        return Ok(match unknown {
            Some(why) => Verdict::Unknown(why),
            None => Verdict::Clear(format!(
                "calls `{called}`, none of whose jobs runs the branch's code"
            )),
        });
    }
    let expanded = expand_local_actions(job, ctx.read, depth, seen)?;
    Ok(provenance::steps_verdict(&expanded, ctx))
}

/// Read and parse a local file for [`job_verdict`], refusing depth and cycles; pushes
/// `path` on `seen` (the caller pops it).
fn local_file(
    path: &str,
    read: &ReadFile<'_>,
    depth: usize,
    seen: &mut Vec<String>,
) -> Result<Value, String> {
    if depth >= MAX_LOCAL_DEPTH {
        return Err(format!(
            "`./{path}`: local actions and workflows nested deeper than {MAX_LOCAL_DEPTH}"
        ));
    }
    if seen.iter().any(|p| p == path) {
        return Err(format!(
            "`./{path}` uses itself ({} -> ./{path})",
            seen.join(" -> ")
        ));
    }
    let bytes = read(path)
        .map_err(|e| format!("`./{path}`: {e}"))?
        .ok_or_else(|| format!("`./{path}`: no such file at this commit"))?;
    let doc = parse_workflow(&bytes).map_err(|e| format!("`./{path}`: {e}"))?;
    seen.push(path.to_owned());
    Ok(doc)
}

/// The job with each step `uses: ./dir` of a composite action replaced by that action's steps
/// (recursively); other local actions (JavaScript, Docker) stay as they are, once their
/// `action.yml` is read.
fn expand_local_actions(
    job: &Map<String, Value>,
    read: &ReadFile<'_>,
    depth: usize,
    seen: &mut Vec<String>,
) -> Result<Map<String, Value>, String> {
    let Some(steps) = job.get("steps").and_then(Value::as_array) else {
        return Ok(job.clone());
    };
    let mut out = Vec::with_capacity(steps.len());
    for step in steps {
        let Some(dir) = step
            .get("uses")
            .and_then(Value::as_str)
            .and_then(local_path)
        else {
            out.push(step.clone());
            continue;
        };
        let yml = format!("{dir}/action.yml");
        let path = if read(&yml).map_err(|e| format!("`./{yml}`: {e}"))?.is_some() {
            yml
        } else {
            format!("{dir}/action.yaml")
        };
        let action = local_file(&path, read, depth, seen)?;
        let runs = action.get("runs").and_then(Value::as_object);
        let using = runs
            .and_then(|r| r.get("using"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        if !using.eq_ignore_ascii_case("composite") {
            seen.pop();
            out.push(step.clone());
            continue;
        }
        let inner = runs
            .and_then(|r| r.get("steps"))
            .and_then(Value::as_array)
            .ok_or_else(|| format!("`./{path}`: a composite action without `runs.steps`"))?;
        let mut nested = Map::new();
        nested.insert("steps".into(), Value::Array(inner.clone()));
        let expanded = expand_local_actions(&nested, read, depth + 1, seen)?;
        seen.pop();
        if let Some(Value::Array(inner)) = expanded.get("steps") {
            // The calling step's `with:` and `env:` travel with the action's steps, as `env`
            // entries of each (named by the depth, so none hides another): what it hands the
            // action (a payload ref) is what the steps read as `inputs.X`.
            let handed: Vec<(String, Value)> = ["with", "env"]
                .iter()
                .filter_map(|key| step.get(*key).and_then(Value::as_object))
                .flat_map(|map| map.iter())
                .map(|(name, value)| (format!("{name}@caller{depth}"), value.clone()))
                .collect();
            for inner_step in inner {
                let mut inner_step = inner_step.clone();
                if let Some(map) = inner_step.as_object_mut()
                    && !handed.is_empty()
                {
                    let mut env = map
                        .get("env")
                        .and_then(Value::as_object)
                        .cloned()
                        .unwrap_or_default();
                    env.extend(handed.iter().cloned());
                    map.insert("env".into(), Value::Object(env));
                }
                out.push(inner_step);
            }
        }
    }
    let mut job = job.clone();
    job.insert("steps".into(), Value::Array(out));
    Ok(job)
}

/// The runners of a reusable workflow of this repository (`uses: ./.github/workflows/x.yml`): its
/// jobs run on their own `runs-on`, so a self-hosted runner there is the calling job's
/// credential. A called file that is not among the files read makes GitHub refuse the run (no
/// job of it runs); a workflow of another repository runs on runners its jobs name, which this
/// reader cannot see, and is not counted.
fn called_runners(called: &str, all: &[WorkflowFile]) -> Result<Vec<Credential>, String> {
    let Some(path) = called.strip_prefix("./") else {
        return Ok(Vec::new());
    };
    let Some(file) = all.iter().find(|f| f.path == path) else {
        return Ok(Vec::new());
    };
    let doc = parse_workflow(&file.bytes).map_err(|e| format!("`{called}`: {e}"))?;
    let mut out = Vec::new();
    if let Some(jobs) = doc.get("jobs").and_then(Value::as_object) {
        for job in jobs.values().filter_map(Value::as_object) {
            if job.get("uses").is_none() {
                let runners = jobs::credentials(&Map::new(), job, &[], DefaultToken::Read)
                    .map_err(|e| format!("`{called}`: {e}"))?;
                out.extend(
                    runners
                        .into_iter()
                        .filter(|c| matches!(c, Credential::Runner(_))),
                );
            }
        }
    }
    Ok(out)
}

/// Whether the event's configuration (its filters) starts the workflow for the target.
fn triggered(event: Event, config: &Value, target: &Target) -> Result<bool, String> {
    let name = event.name();
    let filters = match config {
        Value::Null => return Ok(true),
        Value::Object(filters) => filters,
        // `schedule` is a list; other shapes GitHub would refuse: fail closed, it runs.
        Value::Array(_) => return Ok(true),
        _ => return Err(format!("`on.{name}` is not a mapping")),
    };
    let Some(branch) = events::filtered_branch(event, target) else {
        return Ok(true);
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

/// For each job (in `jobs` order): whether it is certainly not run for `event`.
fn excluded_jobs(
    jobs: &Map<String, Value>,
    event: Option<Event>,
    target: &Target,
) -> Result<Vec<bool>, String> {
    let ids: Vec<&String> = jobs.keys().collect();
    let github = events::github_context(event, target);
    let mut state: Vec<Option<bool>> = vec![None; ids.len()];
    for index in 0..ids.len() {
        let mut visiting = vec![false; ids.len()];
        let run = Run {
            jobs,
            ids: &ids,
            github: &github,
        };
        run.excluded(index, &mut state, &mut visiting)?;
    }
    Ok(state.into_iter().map(|s| s.unwrap_or(false)).collect())
}

struct Run<'a> {
    jobs: &'a Map<String, Value>,
    ids: &'a [&'a String],
    github: &'a Val,
}

impl Run<'_> {
    fn excluded(
        &self,
        index: usize,
        state: &mut [Option<bool>],
        visiting: &mut [bool],
    ) -> Result<bool, String> {
        if let Some(Some(known)) = state.get(index) {
            return Ok(*known);
        }
        let (Some(id), Some(job)) = (
            self.ids.get(index),
            self.ids.get(index).and_then(|id| self.jobs.get(*id)),
        ) else {
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
            Some(Value::Array(items)) => items
                .iter()
                .map(|i| {
                    i.as_str()
                        .ok_or_else(|| format!("job `{id}`: `needs` holds a non-string"))
                })
                .collect::<Result<_, _>>()?,
            Some(_) => return Err(format!("job `{id}`: `needs` is not a list")),
        };
        let mut need_excluded = false;
        for need in &needs {
            let Some(at) = self.ids.iter().position(|i| i.as_str() == *need) else {
                return Err(format!("job `{id}` needs `{need}`, which does not exist"));
            };
            if self.excluded(at, state, visiting)? {
                need_excluded = true;
            }
        }
        let scope = RunScope {
            github: self.github,
            has_needs: !needs.is_empty(),
            need_excluded,
        };
        let result = match job.get("if") {
            // The implicit `success()`: false when a needed job is skipped.
            None => need_excluded,
            Some(Value::Bool(b)) => need_excluded || !b,
            Some(Value::Number(n)) => need_excluded || n.as_f64().is_some_and(|n| n == 0.0),
            Some(Value::String(text)) => {
                let calls_status = condition_calls_status(text);
                let value = expr::condition(text, &scope)
                    .map_err(|e| format!("job `{id}`: cannot read its `if`: {e}"))?;
                let certainly_false = value.truthy() == Some(false);
                if calls_status {
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
}

/// Whether an `if:` calls a status function anywhere (then GitHub adds no `success() &&`).
fn condition_calls_status(text: &str) -> bool {
    let Ok(bodies) = expr::embedded(text) else {
        return false;
    };
    let whole = if bodies.is_empty() {
        vec![text]
    } else {
        bodies
    };
    whole
        .iter()
        .filter_map(|b| expr::parse(b).ok())
        .any(|e| expr::calls_status(&e))
}

/// What an `if:` of the second execution can know.
struct RunScope<'a> {
    github: &'a Val,
    has_needs: bool,
    need_excluded: bool,
}

impl Scope for RunScope<'_> {
    fn context(&self, name: &str) -> Option<Val> {
        let open = || Val::obj([], true);
        Some(match name {
            "github" => self.github.clone(),
            // None of the modelled events has inputs: every `inputs.x` is null.
            "inputs" => Val::obj([], false),
            "secrets" | "vars" | "env" | "needs" | "matrix" | "strategy" | "job" | "jobs"
            | "steps" | "runner" => open(),
            _ => return None,
        })
    }

    /// Job-level status functions ("Status check functions"): `always()` is true; `success()`
    /// is true with no needed job and false when a needed job is skipped; `failure()` is false
    /// with no needed job; `cancelled()` (a person can cancel the run) is unknown.
    fn status(&self, function: &str) -> Val {
        match function {
            "always" => Val::Bool(true),
            "success" if self.need_excluded => Val::Bool(false),
            "success" if !self.has_needs => Val::Bool(true),
            "failure" if !self.has_needs => Val::Bool(false),
            _ => Val::UNKNOWN,
        }
    }
}

/// The workflow files of one commit of `repo` and the findings over them, as `guard readiness`
/// reads a commit: `.github/workflows/*.y(a)ml` from git's objects (a file that is not a regular
/// one is an `unreadable-workflow` finding), local actions and reusable workflows from the same
/// commit's tree.
pub fn assess_commit(
    repo: &crate::git::GitRepo,
    commit: &str,
    target: &Target,
    settings: &Settings,
    reads: Reads,
) -> Result<CommitAssessment, String> {
    let read_commit = CommitFiles::read(repo, commit)?;
    let read = |path: &str| read_commit.file(repo, path);
    let (files, names) = (&read_commit.files, read_commit.names.clone());
    let mut findings = read_commit.unreadable.clone();
    findings.extend(assess_in(files, &read, target, settings, reads));
    let mut environments: Vec<String> = Vec::new();
    for file in files {
        for name in environments_named(&file.bytes) {
            if !environments.iter().any(|e| e.eq_ignore_ascii_case(&name)) {
                environments.push(name);
            }
        }
    }
    Ok(CommitAssessment {
        workflows: names,
        findings,
        environments,
    })
}

/// The workflow files of one commit as `guard readiness` reads them: `.github/workflows/*.y(a)ml`
/// from git's objects (a file that is not a regular one is an `unreadable-workflow` finding), and
/// the commit's tree, from which local actions, reusable workflows and scripts are read.
pub struct CommitFiles {
    /// Every workflow file's path (display form), in path order.
    pub names: Vec<String>,
    /// The readable ones.
    pub files: Vec<WorkflowFile>,
    /// One finding for each that is not a regular file.
    pub unreadable: Vec<Finding>,
    tree: std::collections::HashMap<Vec<u8>, crate::git::TreeEntry>,
}

impl CommitFiles {
    pub fn read(repo: &crate::git::GitRepo, commit: &str) -> Result<CommitFiles, String> {
        let entries = repo.workflow_files(commit).map_err(|e| e.to_string())?;
        let mut out = CommitFiles {
            names: Vec::new(),
            files: Vec::new(),
            unreadable: Vec::new(),
            tree: repo
                .tree_entries(commit)
                .map_err(|e| e.to_string())?
                .into_iter()
                .collect(),
        };
        for (path, content) in entries {
            out.names.push(path.clone());
            match content {
                Ok(bytes) => out.files.push(WorkflowFile { path, bytes }),
                Err(reason) => out.unreadable.push(Finding::unreadable(&path, reason)),
            }
        }
        Ok(out)
    }

    /// A file of the commit's tree for [`ReadFile`]: `None` when absent, an error when it is not
    /// a regular file.
    pub fn file(&self, repo: &crate::git::GitRepo, path: &str) -> Result<Option<Vec<u8>>, String> {
        let Some(entry) = self.tree.get(path.as_bytes()) else {
            return Ok(None);
        };
        if entry.mode != 0o100644 && entry.mode != 0o100755 {
            return Err(format!("not a regular file (mode {:o})", entry.mode));
        }
        let mut blobs = repo
            .blobs(&[entry.oid.as_str()])
            .map_err(|e| e.to_string())?;
        Ok(blobs.pop())
    }
}

/// What [`assess_commit`] read and found.
#[derive(Debug, Clone)]
pub struct CommitAssessment {
    /// The workflow files read (display form), in path order.
    pub workflows: Vec<String>,
    pub findings: Vec<Finding>,
    /// The environments the workflow files' jobs name, first spelling of each (GitHub compares
    /// them case-insensitively).
    pub environments: Vec<String>,
}

/// The environment names the jobs of a workflow file name (literal, or every value its
/// expression can take), in job order; nothing for a file that cannot be parsed.
pub fn environments_named(bytes: &[u8]) -> Vec<String> {
    let Ok(Value::Object(workflow)) = parse_workflow(bytes) else {
        return Vec::new();
    };
    let Some(Value::Object(jobs)) = workflow.get("jobs") else {
        return Vec::new();
    };
    jobs.values()
        .filter_map(Value::as_object)
        .filter_map(jobs::environment_names)
        .flatten()
        .collect()
}
