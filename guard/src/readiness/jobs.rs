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

/// GitHub's hosted runner labels as of 2026-12-02: the standard runners ("GitHub-hosted runners
/// reference", docs.github.com/en/actions/reference/runners/github-hosted-runners, "Standard
/// GitHub-hosted runners for public repositories" and "... for private repositories") and the
/// macOS larger runners ("Larger runners reference", the `-large`/`-xlarge` labels), with the
/// images' own table (github.com/actions/runner-images, README "Available Images"). A label
/// not here (a retired image, a future one, a custom larger runner's name) counts as a runner
/// this reader does not know to be hosted: a self-hosted runner can carry any label.
pub const HOSTED_LABELS: &[&str] = &[
    "ubuntu-latest",
    "ubuntu-26.04",
    "ubuntu-24.04",
    "ubuntu-22.04",
    "ubuntu-slim",
    "ubuntu-26.04-arm",
    "ubuntu-24.04-arm",
    "ubuntu-22.04-arm",
    "windows-latest",
    "windows-2025",
    "windows-2025-vs2026",
    "windows-2022",
    "windows-11-arm",
    "macos-latest",
    "macos-26",
    "macos-15",
    "macos-14",
    "macos-13",
    "macos-26-intel",
    "macos-15-intel",
    "macos-latest-large",
    "macos-26-large",
    "macos-15-large",
    "macos-14-large",
    "macos-13-large",
    "macos-latest-xlarge",
    "macos-26-xlarge",
    "macos-15-xlarge",
    "macos-14-xlarge",
    "macos-13-xlarge",
];

/// Whether a runner label is one of GitHub's hosted labels ([`HOSTED_LABELS`]; labels are
/// case-insensitive).
pub fn github_hosted(label: &str) -> bool {
    let label = label.trim();
    HOSTED_LABELS.iter().any(|l| l.eq_ignore_ascii_case(label))
}

/// What a job-level value (`runs-on`, `environment`) can read: the job's matrix, enumerated;
/// every other context open (unknown).
pub struct MatrixScope<'a> {
    job: &'a Map<String, Value>,
}

impl<'a> MatrixScope<'a> {
    pub fn new(job: &'a Map<String, Value>) -> MatrixScope<'a> {
        MatrixScope { job }
    }
}

impl expr::Scope for MatrixScope<'_> {
    fn context(&self, name: &str) -> Option<expr::Val> {
        matches!(
            name,
            "github"
                | "inputs"
                | "vars"
                | "needs"
                | "matrix"
                | "strategy"
                | "secrets"
                | "env"
                | "job"
                | "jobs"
                | "steps"
                | "runner"
        )
        .then(|| expr::Val::obj([], true))
    }

    fn status(&self, _function: &str) -> expr::Val {
        expr::Val::UNKNOWN
    }

    /// `matrix.KEY[.FIELD...]` over the matrix written in the job: each value of the key's
    /// list and of the `include` entries naming it, and `null` where a combination can lack it
    /// (an `include` entry without it may add a combination of its own). A matrix built by an
    /// expression enumerates nothing.
    fn choices(&self, path: &str) -> Option<Vec<expr::Val>> {
        let rest = path.strip_prefix("matrix.")?;
        let mut keys = rest.split('.');
        let first = keys.next()?;
        let below: Vec<&str> = keys.collect();
        let matrix = self
            .job
            .get("strategy")
            .and_then(|s| s.get("matrix"))
            .and_then(Value::as_object)?;
        let find = |map: &Map<String, Value>| -> Option<Value> {
            map.iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(first))
                .map(|(_, v)| v.clone())
        };
        let mut values: Vec<expr::Val> = Vec::new();
        let base_key = matrix
            .iter()
            .any(|(k, _)| k != "include" && k != "exclude" && k.eq_ignore_ascii_case(first));
        if base_key {
            match find(matrix) {
                Some(Value::Array(items)) => values.extend(items.iter().map(expr::Val::from_json)),
                _ => return None,
            }
        }
        let mut may_lack = !base_key;
        match matrix.get("include") {
            None => {}
            Some(Value::Array(entries)) => {
                for entry in entries {
                    match entry.as_object().map(find) {
                        Some(Some(value)) => values.push(expr::Val::from_json(&value)),
                        Some(None) => may_lack = true,
                        None => return None,
                    }
                }
            }
            Some(_) => return None,
        }
        if may_lack {
            values.push(expr::Val::Null);
        }
        let mut out = Vec::new();
        for value in values {
            let mut at = value;
            for key in &below {
                at = match at {
                    expr::Val::Obj {
                        fields,
                        open: false,
                    } => fields
                        .get(&key.to_ascii_lowercase())
                        .cloned()
                        .unwrap_or(expr::Val::Null),
                    _ => expr::Val::Null,
                };
            }
            if !out.contains(&at) {
                out.push(at);
            }
        }
        Some(out)
    }
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

/// The labels a `runs-on` entry can be: itself, or the values of its expressions over the job's
/// matrix ([`MatrixScope`]: `${{ matrix.os }}`, `${{ matrix.os || 'ubuntu-latest' }}`,
/// `${{ matrix.os }}-latest`); `None` for one not known.
fn resolve_label(label: &str, job: &Map<String, Value>) -> Vec<Option<String>> {
    if !label.contains("${{") {
        return vec![Some(label.to_owned())];
    }
    match expr::possible_strings(label, &MatrixScope::new(job)) {
        Ok(Some(values)) if !values.is_empty() => values.into_iter().map(Some).collect(),
        _ => vec![None],
    }
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
pub(crate) const FETCH_WORDS: &[&str] = &[
    "git checkout",
    "git switch",
    "git fetch",
    "git reset",
    "git pull",
    "git merge",
    "git worktree",
    "git clone",
];

pub(crate) fn value_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Why a string names a branch-controlled ref: a `refs/pull/` path, or an expression reading one
/// of [`BRANCH_CONTEXTS`].
pub(crate) fn branch_controlled(text: &str) -> Option<String> {
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
pub(crate) fn chosen_ref(text: &str) -> Option<String> {
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

/// Every name a job's `environment` can be: the literal, or every value of its expression over
/// the job's matrix and the branches of `&&`, `||` and `case()`; `None` when one is not known
/// (or the job has none).
pub fn environment_names(job: &Map<String, Value>) -> Option<Vec<String>> {
    let name = match job.get("environment")? {
        Value::String(s) => s.as_str(),
        Value::Object(map) => map.get("name").and_then(Value::as_str)?,
        _ => return None,
    };
    let names = expr::possible_strings(name, &MatrixScope::new(job)).ok()??;
    let names: Vec<String> = names.into_iter().map(|n| n.trim().to_owned()).collect();
    // An empty name runs the job without an environment.
    (!names.is_empty() && names.iter().all(|n| !n.is_empty())).then_some(names)
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
