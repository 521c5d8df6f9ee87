//! What one job holds and does: its credentials, whether a privileged job runs the branch's code,
//! and whether a policy-listed environment gates it.
//!
//! **Credentials** ("Automatic token authentication", "Controlling permissions for
//! GITHUB_TOKEN", "Choosing the runner for a job" in GitHub's Actions docs):
//!
//! - a secret: `secrets.X`, `secrets['X']`, the whole context (`toJSON(secrets)`), or
//!   `secrets: inherit` in a reusable-workflow call; `secrets.GITHUB_TOKEN` is the token below;
//! - a `GITHUB_TOKEN` with any write grant: the job's `permissions`, else the workflow's, else
//!   the repository's default (Settings → Actions → General → Workflow permissions), which no
//!   file shows: the policy's `readiness.default-token` declares it (`write` unless set). With
//!   `pull-requests: write` the agent's tests could rewrite the draft's body or labels, with
//!   `actions: write` re-run workflows, with `checks: write` forge the gate's check;
//! - `id-token: write`: an OIDC token a cloud role may trust;
//! - a runner that is not GitHub-hosted: a self-hosted runner outlives the job (persistence).
//!   A label this reader does not know as GitHub-hosted, a runner group, or a label chosen by an
//!   expression it cannot resolve counts.

use serde_json::{Map, Value};

use super::expr;

/// The repository's default `GITHUB_TOKEN` grant, declared by the policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DefaultToken {
    /// "Read repository contents and packages permissions".
    Read,
    /// "Read and write permissions" (GitHub's default for older repositories and organisations).
    Write,
}

/// One credential a job holds.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Credential {
    /// A secret's name (upper case), `*` for the whole context, `inherit` for `secrets: inherit`.
    Secret(String),
    /// A write grant of the run's token: `write-all`, `<scope>: write`, or the repository default.
    Token(String),
    /// `id-token: write`.
    IdToken,
    /// A runner label (or group) that is not GitHub-hosted.
    Runner(String),
}

impl Credential {
    /// One phrase for a human and the document.
    pub fn phrase(&self) -> String {
        match self {
            Credential::Secret(name) if name == "inherit" => "secrets: inherit".to_owned(),
            Credential::Secret(name) if name == "*" => "every secret (the whole context)".into(),
            Credential::Secret(name) => format!("secret {name}"),
            Credential::Token(grant) => format!("GITHUB_TOKEN {grant}"),
            Credential::IdToken => "id-token: write".to_owned(),
            Credential::Runner(label) => format!("runner {label}"),
        }
    }
}

/// Every credential of a job; `top_secrets` are those read at the workflow's top level.
pub fn credentials(
    top: &Map<String, Value>,
    job: &Map<String, Value>,
    top_secrets: &[String],
    default_token: DefaultToken,
) -> Result<Vec<Credential>, String> {
    let mut out: Vec<Credential> = top_secrets
        .iter()
        .map(|s| Credential::Secret(s.clone()))
        .collect();
    let mut names = Vec::new();
    secrets_in(&Value::Object(job.clone()), &mut names);
    if job.get("secrets").and_then(Value::as_str) == Some("inherit") {
        names.push("inherit".to_owned());
    }
    out.extend(names.into_iter().map(Credential::Secret));
    let permissions = job.get("permissions").or_else(|| top.get("permissions"));
    match permissions {
        None => {
            if default_token == DefaultToken::Write {
                out.push(Credential::Token(
                    "with the repository's default grant (policy readiness.default-token: write)"
                        .into(),
                ));
            }
        }
        Some(value) => out.extend(token_grants(value)?),
    }
    if job.get("uses").is_none() {
        out.extend(runner_credentials(job)?);
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// The write grants of a `permissions` value.
fn token_grants(value: &Value) -> Result<Vec<Credential>, String> {
    match value {
        Value::String(s) => match s.trim() {
            "read-all" => Ok(Vec::new()),
            "write-all" => Ok(vec![
                Credential::Token("write-all".into()),
                Credential::IdToken,
            ]),
            other => Err(format!(
                "`permissions: {other}` is not read-all, write-all or a mapping"
            )),
        },
        Value::Object(map) => {
            let mut out = Vec::new();
            for (scope, level) in map {
                let level = level
                    .as_str()
                    .ok_or_else(|| format!("`permissions.{scope}` is not a string"))?;
                match (scope.as_str(), level) {
                    (_, "read" | "none") => {}
                    ("id-token", "write") => out.push(Credential::IdToken),
                    (_, "write") => out.push(Credential::Token(format!("{scope}: write"))),
                    (_, other) => {
                        return Err(format!(
                            "`permissions.{scope}: {other}` is not read, write or none"
                        ));
                    }
                }
            }
            Ok(out)
        }
        Value::Null => Ok(Vec::new()),
        _ => Err("`permissions` is not a string or a mapping".into()),
    }
}

/// Whether a runner label is one of GitHub's hosted images ("GitHub-hosted runners reference":
/// `ubuntu-*`, `windows-*`, `macos-*` with a version or `latest`, and their `-arm`, `-large`,
/// `-xlarge` and `-intel` variants).
pub fn github_hosted(label: &str) -> bool {
    let label = label.trim().to_ascii_lowercase();
    let (os, rest) = match label.split_once('-') {
        Some(parts) => parts,
        None => return false,
    };
    if !matches!(os, "ubuntu" | "windows" | "macos") {
        return false;
    }
    let mut parts = rest.split('-');
    let version = parts.next().unwrap_or_default();
    let version_ok = version == "latest"
        || (!version.is_empty()
            && version.bytes().all(|b| b.is_ascii_digit() || b == b'.')
            && version.bytes().next().is_some_and(|b| b.is_ascii_digit()));
    version_ok && parts.all(|p| matches!(p, "arm" | "large" | "xlarge" | "intel" | "arm64"))
}

/// The runner credentials of a job's `runs-on`.
fn runner_credentials(job: &Map<String, Value>) -> Result<Vec<Credential>, String> {
    let Some(runs_on) = job.get("runs-on") else {
        return Err("a job has neither `runs-on` nor `uses`".into());
    };
    let mut labels: Vec<String> = Vec::new();
    let mut groups: Vec<String> = Vec::new();
    match runs_on {
        Value::String(s) => labels.push(s.clone()),
        Value::Array(items) => {
            for item in items {
                labels.push(
                    item.as_str()
                        .ok_or("`runs-on` holds a non-string")?
                        .to_owned(),
                );
            }
        }
        Value::Object(map) => {
            if let Some(group) = map.get("group") {
                groups.push(group.as_str().unwrap_or("(not a string)").to_owned());
            }
            match map.get("labels") {
                None => {}
                Some(Value::String(s)) => labels.push(s.clone()),
                Some(Value::Array(items)) => {
                    for item in items {
                        labels.push(
                            item.as_str()
                                .ok_or("`runs-on.labels` holds a non-string")?
                                .to_owned(),
                        );
                    }
                }
                Some(_) => return Err("`runs-on.labels` is not a list".into()),
            }
        }
        _ => return Err("`runs-on` is not a string, a list or a mapping".into()),
    }
    let mut out: Vec<Credential> = groups
        .into_iter()
        .map(|g| Credential::Runner(format!("group {g}")))
        .collect();
    for label in labels {
        for resolved in resolve_label(&label, job) {
            match resolved {
                Some(l) if github_hosted(&l) => {}
                Some(l) => out.push(Credential::Runner(l)),
                None => out.push(Credential::Runner(format!("chosen by `{label}`"))),
            }
        }
    }
    Ok(out)
}

/// The labels a `runs-on` entry can be: itself, or for exactly `${{ matrix.KEY }}` (or
/// `matrix.KEY.FIELD...` over a list of objects) the literal values of that matrix entry,
/// `include` entries too (`None` for one not known).
fn resolve_label(label: &str, job: &Map<String, Value>) -> Vec<Option<String>> {
    if !label.contains("${{") {
        return vec![Some(label.to_owned())];
    }
    let path: Option<Vec<&str>> = label
        .trim()
        .strip_prefix("${{")
        .and_then(|r| r.strip_suffix("}}"))
        .map(str::trim)
        .and_then(|body| body.strip_prefix("matrix."))
        .map(|rest| rest.split('.').collect::<Vec<_>>())
        .filter(|keys| {
            keys.iter().all(|k| {
                !k.is_empty()
                    && k.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
            })
        });
    let matrix = job
        .get("strategy")
        .and_then(|s| s.get("matrix"))
        .and_then(Value::as_object);
    let (Some(path), Some(matrix)) = (path, matrix) else {
        return vec![None];
    };
    let Some((first, rest)) = path.split_first() else {
        return vec![None];
    };
    // The value at `rest` below one matrix value; `None` when it is not a literal string.
    let below = |value: &Value| -> Option<String> {
        let mut at = value;
        for key in rest {
            at = at.get(*key)?;
        }
        at.as_str().map(str::to_owned)
    };
    let mut values = Vec::new();
    match matrix.get(*first) {
        Some(Value::Array(items)) => values.extend(items.iter().map(below)),
        Some(_) => values.push(None),
        None => {}
    }
    match matrix.get("include") {
        None => {}
        Some(Value::Array(entries)) => {
            for entry in entries {
                if let Some(value) = entry.get(*first) {
                    values.push(below(value));
                }
            }
        }
        Some(_) => values.push(None),
    }
    if values.is_empty() {
        values.push(None);
    }
    values
}

/// Every secret read in the expressions of a value (strings' `${{ }}` and `if:` conditions).
/// An expression this reader cannot parse counts as reading every secret when it mentions
/// `secrets` at all.
pub fn secrets_in(value: &Value, out: &mut Vec<String>) {
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

/// The contexts a privileged event's payload fills with the branch's refs and commits: a job
/// that checks one of these out, or fetches it, runs the branch's code.
const BRANCH_CONTEXTS: &[&str] = &[
    "github.event.pull_request.head",
    "github.event.pull_request.merge_commit_sha",
    "github.event.pull_request.number",
    "github.event.number",
    "github.head_ref",
    "github.event.workflow_run.head_sha",
    "github.event.workflow_run.head_branch",
    "github.event.workflow_run.head_commit",
    "github.event.workflow_run.pull_requests",
    "github.event.check_suite.head_sha",
    "github.event.check_suite.head_branch",
    "github.event.check_suite.pull_requests",
    "github.event.check_run.head_sha",
    "github.event.check_run.check_suite",
    "github.event.check_run.pull_requests",
    "github.event.issue.number",
    "github.event.issue.pull_request",
    "github.event.sha",
    "github.event.branches",
    "github.event.commit",
];

/// Shell words that fetch or switch to a ref.
const FETCH_WORDS: &[&str] = &[
    "git checkout",
    "git switch",
    "git fetch",
    "git reset",
    "git pull",
    "git merge",
    "git worktree",
    "git clone",
];

/// Whether a privileged job runs the branch's code, and how: a checkout of a branch-controlled
/// ref, a fetch of `refs/pull/*`, or a download of another run's artifacts.
pub fn branch_exposure(job: &Map<String, Value>) -> Option<String> {
    let steps = job.get("steps").and_then(Value::as_array)?;
    let mut runs_fetch = false;
    let mut branch_values: Vec<String> = Vec::new();
    for step in steps {
        let Some(step) = step.as_object() else {
            continue;
        };
        let uses = step
            .get("uses")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_ascii_lowercase();
        let with = step.get("with").and_then(Value::as_object);
        let input = |name: &str| -> Option<String> {
            with.and_then(|w| {
                w.iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case(name))
                    .map(|(_, v)| value_text(v))
            })
        };
        if uses.starts_with("actions/checkout@") || uses == "actions/checkout" {
            for name in ["ref", "repository"] {
                if let Some(value) = input(name)
                    && let Some(why) = branch_controlled(&value).or_else(|| chosen_ref(&value))
                {
                    return Some(format!("actions/checkout `{name}: {value}` ({why})"));
                }
            }
        }
        if uses.starts_with("actions/download-artifact@")
            && let Some(run_id) = input("run-id").or_else(|| input("run_id"))
        {
            return Some(format!(
                "actions/download-artifact with `run-id: {run_id}` (another run's artifacts)"
            ));
        }
        if uses.starts_with("dawidd6/action-download-artifact@") {
            return Some("dawidd6/action-download-artifact (another run's artifacts)".into());
        }
        if uses.starts_with("actions/github-script@")
            && let Some(script) = input("script")
        {
            let lower = script.to_ascii_lowercase();
            if lower.contains("downloadartifact") || lower.contains("listworkflowrunartifacts") {
                return Some("actions/github-script downloading a run's artifacts".into());
            }
        }
        if let Some(run) = step.get("run").and_then(Value::as_str) {
            let lower = run.to_ascii_lowercase();
            if lower.contains("gh run download") {
                return Some("`gh run download` (another run's artifacts)".into());
            }
            if lower.contains("gh pr checkout") {
                return Some("`gh pr checkout` (the pull request's head)".into());
            }
            if lower.contains("refs/pull/") || lower.contains("pull/${{") {
                return Some("a `run` step fetching `refs/pull/*`".into());
            }
            if FETCH_WORDS.iter().any(|w| lower.contains(w)) {
                runs_fetch = true;
                // `git fetch origin pull/$PR/head`
                if lower.contains("pull/") && (lower.contains("/head") || lower.contains("/merge"))
                {
                    return Some("a `run` step fetching a pull request's `pull/<n>/head`".into());
                }
                if let Some(why) = chosen_ref(run) {
                    return Some(format!("a `run` step fetching or switching to {why}"));
                }
            }
            branch_values.push(run.to_owned());
        }
        if let Some(env) = step.get("env") {
            branch_values.push(value_text(env));
        }
    }
    if let Some(env) = job.get("env") {
        branch_values.push(value_text(env));
    }
    if runs_fetch && let Some(why) = branch_values.iter().find_map(|v| branch_controlled(v)) {
        return Some(format!("a `run` step fetching or switching to {why}"));
    }
    None
}

fn value_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Why a string names a branch-controlled ref: a `refs/pull/` path, or an expression reading one
/// of [`BRANCH_CONTEXTS`].
fn branch_controlled(text: &str) -> Option<String> {
    let lower = text.to_ascii_lowercase();
    if lower.contains("refs/pull/") {
        return Some("a `refs/pull/` ref".into());
    }
    let bodies = expr::embedded(text).unwrap_or_else(|_| vec![text]);
    for body in bodies {
        let compact: String = body
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect::<String>()
            .to_ascii_lowercase();
        if let Some(context) = BRANCH_CONTEXTS.iter().find(|c| compact.contains(*c)) {
            return Some(format!("`{context}`"));
        }
    }
    None
}

/// Contexts that name the default branch's side in a privileged run: a ref built only from these
/// is not the branch's.
const DEFAULT_SIDE: &[&str] = &[
    "github.sha",
    "github.ref",
    "github.ref_name",
    "github.base_ref",
    "github.repository",
    "github.workspace",
    "github.server_url",
    "github.event.repository.default_branch",
    "github.event.repository.full_name",
    "github.event.pull_request.base.",
    "github.event.workflow_run.repository.",
    "secrets.",
    "github.token",
];

/// Why a ref given to a checkout or a fetch may be the branch's: an expression reading something
/// other than the default branch's side (a previous step's output, `needs`, `env`, the payload),
/// which a slash-command job typically fills with the pull request's head.
fn chosen_ref(text: &str) -> Option<String> {
    let bodies = expr::embedded(text).ok()?;
    for body in bodies {
        let Ok(parsed) = expr::parse(body) else {
            return Some(format!("`{}`, which this reader cannot parse", body.trim()));
        };
        let mut outside = None;
        expr::contexts_read(&parsed, &mut |path| {
            if outside.is_none()
                && !DEFAULT_SIDE
                    .iter()
                    .any(|d| path == d.trim_end_matches('.') || path.starts_with(d))
            {
                outside = Some(path.to_owned());
            }
        });
        if let Some(path) = outside {
            return Some(format!("`{path}`, a ref chosen at run time"));
        }
    }
    None
}

/// The literal environment name of a job, when it has one.
pub fn literal_environment(value: Option<&Value>) -> Option<&str> {
    let name = match value {
        Some(Value::String(s)) => Some(s.as_str()),
        Some(Value::Object(map)) => map.get("name").and_then(Value::as_str),
        _ => None,
    };
    name.map(str::trim)
        .filter(|n| !n.is_empty() && !n.contains("${{"))
}
