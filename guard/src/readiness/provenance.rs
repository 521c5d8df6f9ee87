//! Where the code a job runs comes from. A job holding credentials matters only when it runs the
//! branch's code; this module decides, for the steps of one job (local composite actions already
//! expanded into them), whether it does, how, or that it cannot be told:
//!
//! - **a checkout**: on the branch's own events (`push`, `pull_request`, ...) `actions/checkout`
//!   takes the branch's commit unless its `ref` names the default branch's side; on privileged
//!   triggers only a ref the branch controls counts ([`super::jobs`]); on `repository_dispatch`
//!   and `workflow_dispatch`, a ref read from the payload or the inputs;
//! - **a local action** that is not composite (JavaScript or Docker, from the workspace);
//! - **an artifact of the same run** (`actions/download-artifact` without `run-id`, by name,
//!   pattern or all) uploaded by a job that runs the branch's code;
//! - **a well-known action** that fetches branch content or other runs' artifacts itself
//!   ([`KNOWN_ACTIONS`], each citing its documentation);
//! - **a command that fetches code**: `git fetch`/`checkout` of `pull/<n>/head`, `refs/pull/`, a
//!   ref from the payload (directly or through `env:`), `gh pr checkout`, the API's
//!   `tarball`/`zipball` of such a ref, `gh run download`, the API's `.../artifacts`;
//! - **a repository script** a `run:` step executes (`./x.sh`, `bash x`, `python x.py`, `make`,
//!   `npm run`, ...): its text, read from the same commit, is judged like the step; a script
//!   that is not in the commit cannot be judged, and the job is a finding with that reason.
//!
//! A job with none of these runs no code of the branch and is cleared, with the reason.

use globset::GlobBuilder;
use serde_json::{Map, Value};

use super::ReadFile;
use super::expr;
use super::jobs::{FETCH_WORDS, branch_controlled, chosen_ref, value_text};

/// How a job's checkout and payload are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lens {
    /// The branch's own events and the merge: the workspace's default checkout is the branch's
    /// code (`push`, `create`, deployments, pull request events, `merge_group`).
    Branch,
    /// The default branch's code with data about the branch (`pull_request_target`,
    /// `workflow_run`, `issue_comment`, `check_*`, `status`).
    Privileged,
    /// A dispatch (`repository_dispatch`, `workflow_dispatch`): its payload or inputs carry
    /// whatever the sender put there.
    Dispatch,
}

/// What one job runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The branch's code, and how.
    Runs(String),
    /// Not known: the reason (fail closed: a finding).
    Unknown(String),
    /// No code of the branch: why.
    Clear(String),
}

/// An artifact uploaded in the same run by a job that runs the branch's code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Producer {
    pub job: String,
    pub artifact: String,
}

/// What a job's steps are judged with.
pub struct Context<'a> {
    pub read: &'a ReadFile<'a>,
    pub lens: Lens,
    /// `owner/name`: a checkout of another repository is not the branch's code.
    pub repository: &'a str,
    pub producers: &'a [Producer],
}

/// A well-known action that fetches or executes branch content, or downloads other runs'
/// artifacts, inside itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnownAction {
    /// `owner/name[/path]`, lower case, without `@ref`.
    pub action: &'static str,
    /// Only when one of these inputs is given (empty: always).
    pub only_with: &'static [&'static str],
    /// What it does, as its documentation says.
    pub does: &'static str,
    /// Its documentation.
    pub docs: &'static str,
}

/// The registry of well-known actions ([`KnownAction`]); REFERENCE.md lists the same table.
pub const KNOWN_ACTIONS: &[KnownAction] = &[
    KnownAction {
        action: "actions/download-artifact",
        only_with: &["run-id", "run_id"],
        does: "downloads the artifacts of another workflow run (`run-id`, with `github-token`)",
        docs: "https://github.com/actions/download-artifact",
    },
    KnownAction {
        action: "dawidd6/action-download-artifact",
        only_with: &[],
        does: "downloads an artifact of another workflow run, chosen by workflow, pull request, commit, branch or run id",
        docs: "https://github.com/dawidd6/action-download-artifact",
    },
    KnownAction {
        action: "py-cov-action/python-coverage-comment-action",
        only_with: &[],
        does: "on `workflow_run`, finds the run that triggered the workflow and downloads its coverage artifact",
        docs: "https://github.com/py-cov-action/python-coverage-comment-action",
    },
    KnownAction {
        action: "openttd/actions/checkout-pull-request",
        only_with: &[],
        does: "fetches and checks out every commit of the pull request",
        docs: "https://github.com/OpenTTD/actions",
    },
];

/// The registry entry of a step's `uses`, when `input` gives one of its inputs.
pub fn known_action(uses: &str, input: &dyn Fn(&str) -> Option<String>) -> Option<KnownAction> {
    let action = uses
        .split('@')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    KNOWN_ACTIONS.iter().copied().find(|k| {
        k.action == action
            && (k.only_with.is_empty() || k.only_with.iter().any(|i| input(i).is_some()))
    })
}

/// The contexts a dispatch's sender fills.
const PAYLOAD_CONTEXTS: &[&str] = &[
    "github.event.client_payload",
    "github.event.inputs",
    "inputs",
];

/// The payload context an expression in `text` reads, when it reads one.
pub fn payload_read(text: &str) -> Option<String> {
    let bodies = expr::embedded(text).ok()?;
    for body in bodies {
        let Ok(parsed) = expr::parse(body) else {
            return Some(format!("`{}`, which this reader cannot parse", body.trim()));
        };
        let mut found = None;
        expr::contexts_read(&parsed, &mut |path| {
            if found.is_none()
                && PAYLOAD_CONTEXTS
                    .iter()
                    .any(|p| path == *p || path.starts_with(&format!("{p}.")))
            {
                found = Some(path.to_owned());
            }
        });
        if found.is_some() {
            return found;
        }
    }
    None
}

/// Contexts that name the default branch on the branch's own events: a checkout of these is not
/// the branch's code.
const BASE_SIDE: &[&str] = &[
    "github.event.repository.default_branch",
    "github.base_ref",
    "github.event.pull_request.base",
    "github.event.merge_group.base_ref",
    "github.event.merge_group.base_sha",
];

/// On the branch's own events, why an `actions/checkout` takes the branch's code: no `ref` (the
/// event's commit), or a `ref` that is not a literal or the base's side. A checkout of another
/// repository, named literally, is not the branch's.
fn branch_checkout(
    reference: Option<String>,
    repository: Option<String>,
    own: &str,
) -> Option<String> {
    if let Some(repo) = &repository
        && !repo.contains("${{")
        && !repo.trim().eq_ignore_ascii_case(own)
    {
        return None;
    }
    let Some(reference) = reference.filter(|r| !r.trim().is_empty()) else {
        return Some("actions/checkout of the event's commit (the branch's code)".into());
    };
    if !reference.contains("${{") {
        return None;
    }
    let bodies = expr::embedded(&reference).unwrap_or_default();
    for body in bodies {
        let Ok(parsed) = expr::parse(body) else {
            return Some(format!(
                "actions/checkout `ref: {reference}`, which this reader cannot parse"
            ));
        };
        let mut outside = None;
        expr::contexts_read(&parsed, &mut |path| {
            if outside.is_none()
                && !BASE_SIDE
                    .iter()
                    .any(|b| path == *b || path.starts_with(&format!("{b}.")))
            {
                outside = Some(path.to_owned());
            }
        });
        if let Some(path) = outside {
            return Some(format!(
                "actions/checkout `ref: {reference}` (`{path}`, which can be the branch)"
            ));
        }
    }
    None
}

/// Whether a download by `name`/`pattern` (neither: every artifact) takes `artifact`. A name or
/// pattern chosen by an expression takes it (fail closed).
fn downloads(name: Option<&str>, pattern: Option<&str>, artifact: &str) -> bool {
    if let Some(name) = name {
        return name.contains("${{") || artifact.contains("${{") || name.trim() == artifact;
    }
    if let Some(pattern) = pattern {
        if pattern.contains("${{") || artifact.contains("${{") {
            return true;
        }
        return GlobBuilder::new(pattern.trim())
            .literal_separator(false)
            .build()
            .map(|g| g.compile_matcher().is_match(artifact))
            .unwrap_or(true);
    }
    true
}

/// A command in `text` that fetches code or artifacts, read through `lens`.
fn fetching_command(text: &str, lens: Lens, env: &[String]) -> Option<String> {
    let lower = text.to_ascii_lowercase();
    if lower.contains("gh run download") {
        return Some("`gh run download` (another run's artifacts)".into());
    }
    if lower.contains("gh pr checkout") {
        return Some("`gh pr checkout` (the pull request's head)".into());
    }
    if lower.contains("refs/pull/") || lower.contains("pull/${{") {
        return Some("a fetch of `refs/pull/*`".into());
    }
    let web = [
        "gh api",
        "curl ",
        "wget ",
        "invoke-webrequest",
        "github.rest",
        "octokit",
    ]
    .iter()
    .any(|w| lower.contains(w));
    if web && lower.contains("/artifacts") {
        return Some("a download of a run's artifacts through the API (`.../artifacts`)".into());
    }
    let archive = ["/tarball/", "/zipball/", "/tarball\"", "/zipball\""]
        .iter()
        .any(|w| lower.contains(w));
    if archive {
        let why = match lens {
            Lens::Branch => Some("the branch's commit".to_owned()),
            Lens::Privileged => branch_controlled(text)
                .or_else(|| chosen_ref(text))
                .or_else(|| env.iter().find_map(|v| branch_controlled(v))),
            Lens::Dispatch => {
                payload_read(text).or_else(|| env.iter().find_map(|v| payload_read(v)))
            }
        };
        if let Some(why) = why {
            return Some(format!("the API's tarball or zipball of {why}"));
        }
    }
    if FETCH_WORDS.iter().any(|w| lower.contains(w)) {
        if lower.contains("pull/") && (lower.contains("/head") || lower.contains("/merge")) {
            return Some("a fetch of a pull request's `pull/<n>/head`".into());
        }
        let why = match lens {
            Lens::Branch => Some("refs that can be the branch's".to_owned()),
            Lens::Privileged => chosen_ref(text)
                .or_else(|| branch_controlled(text))
                .or_else(|| env.iter().find_map(|v| branch_controlled(v))),
            Lens::Dispatch => {
                payload_read(text).or_else(|| env.iter().find_map(|v| payload_read(v)))
            }
        };
        if let Some(why) = why {
            return Some(format!("a `git` fetch or switch to {why}"));
        }
    }
    None
}

/// Interpreters whose first operand is a script file (`.` and `source` read one into the shell).
const INTERPRETERS: &[&str] = &[
    ".",
    "source",
    "bash",
    "sh",
    "zsh",
    "dash",
    "ksh",
    "python",
    "python3",
    "node",
    "ruby",
    "perl",
    "pwsh",
    "powershell",
    "deno",
    "bun",
    "php",
    "tsx",
    "ts-node",
];

/// The repository files a `run:` script executes: `./x`, `<interpreter> x` (flags skipped; `-c`,
/// `-e`, `-m` run no file), `make` (the `Makefile`), `npm`/`yarn`/`pnpm` scripts (the
/// `package.json`). A path chosen by a variable is returned as written (it cannot be read).
pub fn repository_scripts(run: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |p: String| {
        if !out.contains(&p) {
            out.push(p);
        }
    };
    for line in run.lines() {
        let line = line.split(" #").next().unwrap_or_default();
        if line.trim_start().starts_with('#') {
            continue;
        }
        for segment in line.split(['&', '|', ';', '(', ')']) {
            let words: Vec<&str> = segment
                .split_whitespace()
                .map(|w| w.trim_matches(|c| c == '"' || c == '\''))
                .filter(|w| !w.is_empty())
                .collect();
            // Skip leading `VAR=value` assignments and `exec`/`time`/`sudo`.
            let mut words = words
                .into_iter()
                .skip_while(|w| w.contains('=') || matches!(*w, "exec" | "time" | "sudo" | "env"));
            let Some(first) = words.next() else {
                continue;
            };
            if let Some(path) = first.strip_prefix("./") {
                if !path.is_empty() {
                    push(path.to_owned());
                }
                continue;
            }
            if INTERPRETERS.contains(&first) {
                for word in words.by_ref() {
                    if matches!(
                        word,
                        "-c" | "-e" | "-m" | "--eval" | "-Command" | "-command"
                    ) {
                        break;
                    }
                    if word.starts_with('-') {
                        continue;
                    }
                    if word.starts_with('/') || word.starts_with('~') || word.contains("://") {
                        break;
                    }
                    push(word.strip_prefix("./").unwrap_or(word).to_owned());
                    break;
                }
                continue;
            }
            match first {
                "make" | "gmake" => push("Makefile".to_owned()),
                "npm" | "yarn" | "pnpm"
                    if words.next().is_some_and(|w| {
                        matches!(w, "run" | "test" | "start" | "run-script" | "t")
                    }) =>
                {
                    push("package.json".to_owned());
                }
                _ => {}
            }
        }
    }
    out
}

/// The text of a repository script for judging: `Err` with the reason when it cannot be read.
fn script_text(path: &str, read: &ReadFile<'_>) -> Result<String, String> {
    if path.contains('$') || path.contains("..") {
        return Err(format!(
            "`{path}`, run by a `run` step, is chosen at run time: the provenance of the code it runs cannot be established"
        ));
    }
    let candidates: Vec<String> = if path == "Makefile" {
        vec!["Makefile".into(), "makefile".into(), "GNUmakefile".into()]
    } else {
        vec![path.to_owned()]
    };
    for candidate in &candidates {
        match read(candidate) {
            Ok(Some(bytes)) => return Ok(String::from_utf8_lossy(&bytes).into_owned()),
            Ok(None) => {}
            Err(e) => {
                return Err(format!(
                    "`{candidate}`, run by a `run` step, cannot be read ({e}): the provenance of the code it runs cannot be established"
                ));
            }
        }
    }
    // A build tool's manifest that is not there makes the command fail: it runs nothing.
    if path == "Makefile" || path == "package.json" {
        return Ok(String::new());
    }
    Err(format!(
        "`{path}`, run by a `run` step, is not in this commit: the provenance of the code it runs cannot be established"
    ))
}

/// How many repository scripts one `run` step is followed through (the scripts it runs, the
/// scripts those run, ...); past it, the provenance of the code cannot be established.
pub const MAX_SCRIPTS: usize = 32;

/// How deep scripts that run scripts are followed; deeper cannot be established either.
pub const MAX_SCRIPT_DEPTH: usize = 4;

/// Whether a script is read for the scripts it runs in turn: shell scripts (by name or `#!`) and
/// the `Makefile`, whose recipes are shell. Other languages' files are read for fetching
/// commands only (their own calls are not shell words).
fn runs_shell(path: &str, text: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.ends_with(".sh")
        || name.ends_with(".bash")
        || matches!(name, "Makefile" | "makefile" | "GNUmakefile")
        || text
            .lines()
            .next()
            .is_some_and(|l| l.starts_with("#!") && (l.ends_with("sh") || l.contains("sh ")))
}

/// The first fetching command found in the repository scripts a `run` step executes, followed
/// through the scripts those run (at most [`MAX_SCRIPTS`] files, [`MAX_SCRIPT_DEPTH`] deep):
/// `Ok(Some(why))`, `Ok(None)` when none fetches, `Err(reason)` when one cannot be read or the
/// bounds are passed.
fn scripts_fetching(
    run: &str,
    ctx: &Context<'_>,
    env: &[String],
) -> Result<Option<String>, String> {
    let mut seen: Vec<String> = Vec::new();
    let mut level: Vec<(String, Vec<String>)> = repository_scripts(run)
        .into_iter()
        .map(|s| (s, Vec::new()))
        .collect();
    let mut unknown: Option<String> = None;
    for depth in 0..=MAX_SCRIPT_DEPTH {
        let mut next = Vec::new();
        for (script, via) in level {
            if seen.contains(&script) {
                continue;
            }
            if seen.len() == MAX_SCRIPTS {
                return Err(format!(
                    "a `run` step runs more than {MAX_SCRIPTS} repository scripts: the provenance of the code it runs cannot be established"
                ));
            }
            seen.push(script.clone());
            let chain = via
                .iter()
                .chain(std::iter::once(&script))
                .map(|s| format!("`{s}`"))
                .collect::<Vec<_>>()
                .join(" -> ");
            match script_text(&script, ctx.read) {
                Ok(text) => {
                    if let Some(why) = fetching_command(&text, ctx.lens, env) {
                        return Ok(Some(format!("{chain}, run by a `run` step: {why}")));
                    }
                    if runs_shell(&script, &text) {
                        let mut via = via.clone();
                        via.push(script.clone());
                        for inner in repository_scripts(&text) {
                            if depth == MAX_SCRIPT_DEPTH {
                                return Err(format!(
                                    "{chain} runs `{inner}`: scripts nested deeper than {MAX_SCRIPT_DEPTH} are not followed, so the provenance of the code they run cannot be established"
                                ));
                            }
                            next.push((inner, via.clone()));
                        }
                    }
                }
                Err(reason) if via.is_empty() => {
                    unknown.get_or_insert(reason);
                }
                Err(reason) => {
                    let via = via
                        .iter()
                        .map(|s| format!("`{s}`"))
                        .collect::<Vec<_>>()
                        .join(" -> ");
                    unknown.get_or_insert(format!("{via}: {reason}"));
                }
            }
        }
        if next.is_empty() {
            break;
        }
        level = next;
    }
    match unknown {
        Some(reason) => Err(reason),
        None => Ok(None),
    }
}

/// Whether the steps of `job` run the branch's code under `ctx`.
pub fn steps_verdict(job: &Map<String, Value>, ctx: &Context<'_>) -> Verdict {
    let steps = job
        .get("steps")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut env_values: Vec<String> = Vec::new();
    if let Some(env) = job.get("env") {
        env_values.push(value_text(env));
    }
    let mut ran: Vec<String> = Vec::new();
    let mut unknown: Option<String> = None;
    let mut has_checkout = false;
    for step in &steps {
        let Some(step) = step.as_object() else {
            continue;
        };
        let uses_raw = step
            .get("uses")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .trim();
        let uses = uses_raw.to_ascii_lowercase();
        let action = uses.split('@').next().unwrap_or_default().to_owned();
        let with = step.get("with").and_then(Value::as_object);
        let input = |name: &str| -> Option<String> {
            with.and_then(|w| {
                w.iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case(name))
                    .map(|(_, v)| value_text(v))
            })
        };
        let mut step_env = env_values.clone();
        if let Some(env) = step.get("env") {
            step_env.push(value_text(env));
        }
        if action == "actions/checkout" {
            has_checkout = true;
            match ctx.lens {
                Lens::Branch => {
                    if let Some(why) =
                        branch_checkout(input("ref"), input("repository"), ctx.repository)
                    {
                        return Verdict::Runs(why);
                    }
                }
                Lens::Privileged => {
                    for name in ["ref", "repository"] {
                        if let Some(value) = input(name)
                            && let Some(why) =
                                branch_controlled(&value).or_else(|| chosen_ref(&value))
                        {
                            return Verdict::Runs(format!(
                                "actions/checkout `{name}: {value}` ({why})"
                            ));
                        }
                    }
                }
                Lens::Dispatch => {
                    for name in ["ref", "repository"] {
                        if let Some(value) = input(name)
                            && let Some(path) = payload_read(&value)
                        {
                            return Verdict::Runs(format!(
                                "actions/checkout `{name}: {value}` (`{path}`)"
                            ));
                        }
                    }
                }
            }
        }
        if let Some(local) = uses_raw.strip_prefix("./")
            && ctx.lens == Lens::Branch
        {
            return Verdict::Runs(format!("the local action `./{local}`, from the workspace"));
        }
        if let Some(known) = known_action(&uses, &input) {
            return Verdict::Runs(format!(
                "`{uses_raw}`, which {} ({})",
                known.does, known.docs
            ));
        }
        if action == "actions/download-artifact"
            && input("run-id").is_none()
            && input("run_id").is_none()
        {
            let name = input("name");
            let pattern = input("pattern");
            if let Some(p) = ctx
                .producers
                .iter()
                .find(|p| downloads(name.as_deref(), pattern.as_deref(), &p.artifact))
            {
                return Verdict::Runs(format!(
                    "the artifact `{}` of job `{}`, which runs the branch's code (actions/download-artifact of the same run)",
                    p.artifact, p.job
                ));
            }
        }
        if action == "actions/github-script"
            && let Some(script) = input("script")
        {
            let lower = script.to_ascii_lowercase();
            if lower.contains("downloadartifact") || lower.contains("listworkflowrunartifacts") {
                return Verdict::Runs("actions/github-script downloading a run's artifacts".into());
            }
        }
        if let Some(run) = step.get("run").and_then(Value::as_str) {
            if let Some(why) = fetching_command(run, ctx.lens, &step_env) {
                return Verdict::Runs(format!("a `run` step: {why}"));
            }
            match scripts_fetching(run, ctx, &step_env) {
                Ok(Some(why)) => return Verdict::Runs(why),
                Ok(None) => {}
                // On the branch's own events a script run from the branch's checkout is
                // caught by the checkout; without one, the workspace holds none of its
                // files, and one missing cannot be judged either way.
                Err(reason) => {
                    unknown.get_or_insert(reason);
                }
            }
            ran.push("a `run` script".to_owned());
        }
        if !uses_raw.is_empty() {
            ran.push(format!("`{uses_raw}`"));
        }
    }
    if let Some(reason) = unknown {
        return Verdict::Unknown(reason);
    }
    ran.dedup();
    let runs = if ran.is_empty() {
        "nothing".to_owned()
    } else {
        ran.join(", ")
    };
    Verdict::Clear(match ctx.lens {
        Lens::Branch if has_checkout => format!(
            "runs no code of the branch: its checkouts name the default branch's side or another repository; it runs {runs}"
        ),
        Lens::Branch => format!(
            "runs no code of the branch: no checkout, no local action, no artifact of a job that runs the branch's code, no command that fetches code; it runs {runs}"
        ),
        Lens::Privileged => format!(
            "runs the default branch's code only: no checkout or fetch of a ref the branch controls, no artifact of the branch's runs; it runs {runs}"
        ),
        Lens::Dispatch => format!(
            "checks out or fetches no ref from the dispatch's payload or inputs; it runs {runs}"
        ),
    })
}

/// The artifacts a job uploads (`actions/upload-artifact`, `name` defaulting to `artifact`).
pub fn uploads(job: &Map<String, Value>) -> Vec<String> {
    let mut out = Vec::new();
    for step in job
        .get("steps")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let uses = step
            .get("uses")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_ascii_lowercase();
        if uses.split('@').next() == Some("actions/upload-artifact") {
            let name = step
                .get("with")
                .and_then(|w| w.get("name"))
                .map(value_text)
                .unwrap_or_else(|| "artifact".to_owned());
            out.push(name);
        }
    }
    out
}

/// Which dispatch a step sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DispatchKind {
    Repository,
    Workflow,
}

/// A step of a workflow of the repository that sends a dispatch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sender {
    pub workflow: String,
    pub job: String,
    pub kind: DispatchKind,
    /// The `event_type` of a repository dispatch, when it is a literal (`None`: any type).
    pub event_type: Option<String>,
    /// The event data the payload or inputs carry, when they carry any.
    pub carries: Option<String>,
}

/// The literal `event_type` a repository dispatch step sends: `peter-evans/repository-dispatch`'s
/// `event-type` input, or `event_type=<type>` in a `run:` (`gh api -f event_type=...`, a JSON
/// body's `"event_type": "..."`). `None` when it is chosen by an expression or not found.
pub fn dispatch_type(step: &Map<String, Value>) -> Option<String> {
    let literal = |v: &str| {
        let v = v.trim().trim_matches(|c| c == '"' || c == '\'');
        (!v.is_empty() && !v.contains("${{") && !v.contains('$')).then(|| v.to_owned())
    };
    if let Some(with) = step.get("with").and_then(Value::as_object)
        && let Some(value) = with.get("event-type")
    {
        return literal(&value_text(value));
    }
    let run = step.get("run").and_then(Value::as_str)?;
    let at = run.find("event_type")?;
    let rest = run.get(at + "event_type".len()..)?;
    let rest = rest.trim_start_matches(['"', '\'', ':', '=', ' ']);
    let end = rest
        .find(|c: char| c.is_whitespace() || c == '"' || c == '\'' || c == ',' || c == '}')
        .unwrap_or(rest.len());
    literal(rest.get(..end)?)
}

/// The dispatch a step sends, when it sends one: `peter-evans/repository-dispatch`,
/// `benc-uk/workflow-dispatch`, `gh workflow run`, the REST API's `.../dispatches`, or
/// `actions/github-script` calling `createDispatchEvent`/`createWorkflowDispatch`.
pub fn dispatch_sent(step: &Map<String, Value>) -> Option<DispatchKind> {
    let uses = step
        .get("uses")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_ascii_lowercase();
    let action = uses.split('@').next().unwrap_or_default();
    if action == "peter-evans/repository-dispatch" {
        return Some(DispatchKind::Repository);
    }
    if action == "benc-uk/workflow-dispatch" {
        return Some(DispatchKind::Workflow);
    }
    let text = [
        step.get("run").map(value_text),
        step.get("with")
            .and_then(|w| w.get("script"))
            .map(value_text),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join("\n")
    .to_ascii_lowercase();
    if text.contains("gh workflow run") || text.contains("createworkflowdispatch") {
        return Some(DispatchKind::Workflow);
    }
    if text.contains("/dispatches") {
        return Some(if text.contains("/workflows/") {
            DispatchKind::Workflow
        } else {
            DispatchKind::Repository
        });
    }
    if text.contains("createdispatchevent") {
        return Some(DispatchKind::Repository);
    }
    None
}

/// The event data a sending step puts in the payload: a branch-controlled context, or a value
/// chosen at run time (a step's output, `needs`, `env`).
pub fn dispatch_carries(step: &Map<String, Value>) -> Option<String> {
    let text = value_text(&Value::Object(step.clone()));
    branch_controlled(&text).or_else(|| chosen_ref(&text))
}
