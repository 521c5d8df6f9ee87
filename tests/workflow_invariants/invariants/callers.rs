//! The callers of the reusable workflow: this repository's own and the examples an adopter copies.

use serde_json::{Map, Value, json};
use std::collections::BTreeSet;

use crate::invariants::Invariant;
use crate::invariants::apply::{
    CALL_INPUTS, CALL_SECRETS, DISPATCH_INPUTS, LOCAL_REUSABLE_REF, MAX_CALLER_LINES,
    REQUIRED_DISPATCH_INPUTS, REUSABLE_REF, pinned_release,
};
use crate::invariants::shared::{no_dangerous_trigger_text, top_level_permissions_empty};
use crate::model::{APPLY_WORKFLOW, Workflow, as_bool, is_lower_hex, str_of, triggers};

/// The invariants of every caller (this repository's own and the examples).
pub(crate) const CALLER_INVARIANTS: &[(&str, Invariant)] = &[
    ("caller-dispatch-only", caller_dispatch_only),
    ("caller-run-name", caller_run_name),
    ("top-level-permissions-empty", top_level_permissions_empty),
    (
        "caller-calls-the-reusable-workflow",
        caller_calls_the_reusable_workflow,
    ),
    (
        "caller-passes-secrets-by-name",
        caller_passes_secrets_by_name,
    ),
    (
        "caller-configures-known-inputs",
        caller_configures_known_inputs,
    ),
];

/// What an adopter copies holds besides: a full-SHA pin of the published workflow, and it fits.
pub(crate) const EXAMPLE_INVARIANTS: &[(&str, Invariant)] = &[
    ("example-pins-the-release", example_pins_the_release),
    ("example-within-28-lines", example_within_28_lines),
];

pub(crate) fn caller_job(wf: &Workflow) -> Result<(&String, &Value), String> {
    let jobs = wf.jobs()?;
    match jobs.iter().collect::<Vec<_>>().as_slice() {
        [one] => Ok(*one),
        _ => Err(format!(
            "{} jobs, expected the one that calls the workflow",
            jobs.len()
        )),
    }
}

/// Only `workflow_dispatch`, with exactly the dispatch inputs (strings; the four the dispatcher
/// always sends required, the others defaulting to empty), within GitHub's 25.
pub(crate) fn caller_dispatch_only(wf: &Workflow) -> Result<(), String> {
    let on = triggers(wf)?;
    if on != ["workflow_dispatch"] {
        return Err(format!("triggers are {on:?}, not only workflow_dispatch"));
    }
    no_dangerous_trigger_text(wf)?;
    let inputs = wf
        .doc
        .pointer("/on/workflow_dispatch/inputs")
        .and_then(Value::as_object)
        .ok_or("no workflow_dispatch inputs")?;
    let names: BTreeSet<&str> = inputs.keys().map(String::as_str).collect();
    let expected: BTreeSet<&str> = DISPATCH_INPUTS.into_iter().collect();
    if names != expected {
        return Err(format!("inputs are {names:?}, expected {expected:?}"));
    }
    for (name, spec) in inputs {
        if spec.get("type").is_some_and(|t| t != "string") {
            return Err(format!("input `{name}` is not a string"));
        }
        let required = REQUIRED_DISPATCH_INPUTS.contains(&name.as_str());
        if as_bool(spec.get("required")).unwrap_or(false) != required {
            return Err(format!("input `{name}`: required must be {required}"));
        }
        if !required && spec.get("default") != Some(&json!("")) {
            return Err(format!("optional input `{name}` does not default to empty"));
        }
    }
    Ok(())
}

/// The run is named for its task and its signed `dispatch_mac` (the dispatch's nonce): the
/// dispatcher finds the run by this exact name when GitHub does not return it.
pub(crate) fn caller_run_name(wf: &Workflow) -> Result<(), String> {
    let run_name = str_of(&wf.doc, "run-name");
    if run_name != Some("agent-team-apply ${{ inputs.task_id }} ${{ inputs.dispatch_mac }}") {
        return Err(format!("run-name is {run_name:?}"));
    }
    Ok(())
}

/// One job: the reusable workflow (this commit's, or the published one pinned by full commit
/// SHA), granted exactly what the reusable workflow's jobs ask for together (a called job may
/// not be granted more than its caller: GitHub refuses such a workflow), with no steps of its
/// own.
pub(crate) fn caller_calls_the_reusable_workflow(wf: &Workflow) -> Result<(), String> {
    let (name, job) = caller_job(wf)?;
    let uses = str_of(job, "uses").ok_or_else(|| format!("job `{name}` calls no workflow"))?;
    let pinned = uses
        .strip_prefix(REUSABLE_REF)
        .and_then(|rest| rest.strip_prefix('@'))
        .is_some_and(|sha| is_lower_hex(sha, 40));
    if uses != LOCAL_REUSABLE_REF && !pinned {
        return Err(format!("job `{name}` calls `{uses}`"));
    }
    let expected = crate::invariants::apply::caller_grant();
    if job.get("permissions") != Some(&expected) {
        return Err(format!("job `{name}` is not granted exactly {expected}"));
    }
    if job.get("steps").is_some() {
        return Err(format!("job `{name}` has steps of its own"));
    }
    Ok(())
}

/// The publication's secrets are passed by name, each as itself, and nothing else: never
/// `secrets: inherit` (every secret of the repository).
pub(crate) fn caller_passes_secrets_by_name(wf: &Workflow) -> Result<(), String> {
    let (name, job) = caller_job(wf)?;
    let expected: Map<String, Value> = CALL_SECRETS
        .iter()
        .map(|s| ((*s).to_owned(), json!(format!("${{{{ secrets.{s} }}}}"))))
        .collect();
    match job.get("secrets") {
        Some(Value::Object(map)) if *map == expected => Ok(()),
        other => Err(format!("job `{name}` passes secrets {other:?}")),
    }
}

/// The caller configures only inputs the workflow has, names a build command, and writes its
/// configuration literally: nothing from the dispatch (or any expression) reaches a command.
pub(crate) fn caller_configures_known_inputs(wf: &Workflow) -> Result<(), String> {
    let (name, job) = caller_job(wf)?;
    let with = job
        .get("with")
        .and_then(Value::as_object)
        .ok_or_else(|| format!("job `{name}` configures nothing"))?;
    for (key, value) in with {
        if !CALL_INPUTS.contains(&key.as_str()) {
            return Err(format!("job `{name}` sets unknown input `{key}`"));
        }
        if value.as_str().is_some_and(|v| v.contains("${{")) {
            return Err(format!("job `{name}` sets `{key}` from an expression"));
        }
    }
    if with
        .get("build-command")
        .and_then(Value::as_str)
        .is_none_or(|c| c.trim().is_empty())
    {
        return Err(format!("job `{name}` names no build command"));
    }
    Ok(())
}

/// An example pins the published workflow by full commit SHA with the version it runs beside it,
/// and that is the version the workflow pins.
pub(crate) fn example_pins_the_release(wf: &Workflow) -> Result<(), String> {
    let line = wf
        .raw
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("uses: "))
        .ok_or("no `uses:` line")?;
    let (value, comment) = line
        .trim_start_matches("uses: ")
        .split_once(" # ")
        .ok_or("the `uses:` line has no `# vX.Y.Z` comment")?;
    let sha = value
        .strip_prefix(REUSABLE_REF)
        .and_then(|rest| rest.strip_prefix('@'))
        .ok_or_else(|| format!("`{value}` is not the published workflow"))?;
    if !is_lower_hex(sha, 40) {
        return Err(format!("`{value}` is not pinned to a full commit SHA"));
    }
    let pinned = pinned_release(&Workflow::load(APPLY_WORKFLOW))?;
    if comment.trim() != pinned {
        return Err(format!(
            "the example names {}, the workflow runs {pinned}",
            comment.trim()
        ));
    }
    Ok(())
}

pub(crate) fn example_within_28_lines(wf: &Workflow) -> Result<(), String> {
    let lines = wf.raw.lines().count();
    if lines > MAX_CALLER_LINES {
        return Err(format!("{lines} lines, more than {MAX_CALLER_LINES}"));
    }
    Ok(())
}
