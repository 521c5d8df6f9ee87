//! Invariants and checks that several kinds of workflow file hold alike (their tables name them).

use serde_json::Value;

use crate::model::{
    Workflow, as_bool, is_lower_hex, is_semver_tag, run_contains, str_of, uses_action, uses_of,
    with_of,
};

/// Every action any workflow may use, with the commit its tag resolved to when it was verified
/// against the action's repository. Changing a pin means changing this table, in review.
pub(crate) const KNOWN_PINS: &[(&str, &str, &str)] = &[
    (
        "actions/checkout",
        "3d3c42e5aac5ba805825da76410c181273ba90b1",
        "v7.0.1",
    ),
    (
        "actions/upload-artifact",
        "bbbca2ddaa5d8feaa63e36b76fdaad77386f024f",
        "v7.0.0",
    ),
    (
        "actions/download-artifact",
        "3e5f45b2cfb9172054b4087a40e8e0b5a5461e7c",
        "v8.0.1",
    ),
    (
        "actions/setup-python",
        "5fda3b95a4ea91299a34e894583c3862153e4b97",
        "v7.0.0",
    ),
    (
        "actions/create-github-app-token",
        "1b10c78c7865c340bc4f6099eb2f838309f1e8c3",
        "v3.1.1",
    ),
    (
        "actions/attest-build-provenance",
        "a2bbfa25375fe432b6a289bc6b6cd05ecd0c4c32",
        "v4.1.0",
    ),
    (
        "actions/cache/restore",
        "27d5ce7f107fe9357f9df03efb73ab90386fccae",
        "v5.0.5",
    ),
    (
        "step-security/harden-runner",
        "b09bb98e06d4d774595224525879c09bc6e98c40",
        "v2.20.1",
    ),
];

pub(crate) fn no_dangerous_trigger_text(wf: &Workflow) -> Result<(), String> {
    for forbidden in ["pull_request_target", "workflow_run"] {
        if wf.raw.contains(forbidden) {
            return Err(format!("`{forbidden}` appears in the file"));
        }
    }
    Ok(())
}

pub(crate) fn top_level_permissions_empty(wf: &Workflow) -> Result<(), String> {
    match wf.doc.get("permissions") {
        Some(Value::Object(map)) if map.is_empty() => Ok(()),
        other => Err(format!("top-level permissions are {other:?}, not {{}}")),
    }
}

/// Every step `uses:` is `owner/repo@<40-hex>` from [`KNOWN_PINS`], and its line carries the
/// matching `# vX.Y.Z` comment. Local (`./`) and `docker://` actions are not allowed; a job-level
/// `uses:` (a reusable workflow) is the callers' business ([`caller_calls_the_reusable_workflow`]).
pub(crate) fn actions_pinned(wf: &Workflow) -> Result<(), String> {
    let mut parsed = Vec::new();
    for (job, step) in wf.all_steps()? {
        if let Some(u) = uses_of(step) {
            parsed.push((job, u));
        }
    }
    for (job, uses) in &parsed {
        let (action, sha) = uses
            .split_once('@')
            .ok_or_else(|| format!("job `{job}`: `{uses}` has no @ref"))?;
        if !is_lower_hex(sha, 40) {
            return Err(format!(
                "job `{job}`: `{uses}` is not pinned to a full commit SHA"
            ));
        }
        if !KNOWN_PINS.iter().any(|(a, s, _)| *a == action && *s == sha) {
            return Err(format!("job `{job}`: `{uses}` is not a verified pin"));
        }
    }

    // The comment lives only in the text: check every line that says `uses:` in a step.
    let mut raw_count = 0;
    for (number, line) in wf.raw.lines().enumerate() {
        let trimmed = line.trim_start();
        let Some(rest) = trimmed.strip_prefix("- uses:").or_else(|| {
            // `uses:` as a later key of a step (more indented than a job's keys).
            (line.len() - trimmed.len() > 4)
                .then(|| trimmed.strip_prefix("uses:"))
                .flatten()
        }) else {
            continue;
        };
        raw_count += 1;
        let rest = rest.trim();
        let (value, comment) = rest
            .split_once(" #")
            .ok_or_else(|| format!("line {}: `uses:` without a `# vX.Y.Z` comment", number + 1))?;
        let tag = comment.trim();
        if !is_semver_tag(tag) {
            return Err(format!(
                "line {}: comment `{tag}` is not a vX.Y.Z tag",
                number + 1
            ));
        }
        let Some((action, sha)) = value.trim().split_once('@') else {
            return Err(format!("line {}: `{value}` has no @ref", number + 1));
        };
        if !KNOWN_PINS
            .iter()
            .any(|(a, s, t)| *a == action && *s == sha && *t == tag)
        {
            return Err(format!(
                "line {}: `{value}` with comment `{tag}` does not match a verified pin",
                number + 1
            ));
        }
    }
    if raw_count != parsed.len() {
        return Err(format!(
            "{} step `uses:` lines in the text but {} in the document (flow-style uses?)",
            raw_count,
            parsed.len()
        ));
    }
    Ok(())
}

pub(crate) fn checkout_no_persisted_credentials(wf: &Workflow) -> Result<(), String> {
    for (job, step) in wf.all_steps()? {
        if uses_action(step, "actions/checkout")
            && as_bool(with_of(step, "persist-credentials")) != Some(false)
        {
            return Err(format!(
                "job `{job}`: a checkout lacks `persist-credentials: false`"
            ));
        }
    }
    Ok(())
}

/// No `${{` inside any `run:` script: inputs, event data and outputs arrive through `env:`.
pub(crate) fn no_expression_in_run(wf: &Workflow) -> Result<(), String> {
    for (job, step) in wf.all_steps()? {
        if run_contains(step, "${{") {
            let name = str_of(step, "name").unwrap_or("<unnamed>");
            return Err(format!("job `{job}`, step `{name}`: `${{{{` inside `run:`"));
        }
    }
    Ok(())
}

/// Why a step saves an Actions cache, if it does: `actions/cache` (its post step saves),
/// `actions/cache/save`, a `cache:` input other than `false` or empty (the `setup-*` actions save
/// after the job), and the `setup-*` actions that cache unless told not to: `setup-go` (`cache`
/// defaults to `true`) and `setup-node` from v5 (`package-manager-cache` defaults to `true`).
/// `actions/cache/restore` has no post step and saves nothing.
pub(crate) fn cache_save(step: &Value) -> Option<String> {
    let uses = uses_of(step).unwrap_or("");
    let action = uses.split('@').next().unwrap_or("");
    if action == "actions/cache" || action == "actions/cache/save" {
        return Some(format!("`{uses}` saves a cache"));
    }
    let off = |key: &str| match with_of(step, key) {
        None => None,
        Some(Value::Bool(b)) => Some(!b),
        Some(Value::String(s)) => Some(s.is_empty() || s == "false"),
        Some(_) => Some(false),
    };
    if off("cache") == Some(false) {
        return Some(format!(
            "`{uses}` is given a `cache:` input, saved after the job"
        ));
    }
    if action == "actions/setup-go" && off("cache") != Some(true) {
        return Some(format!(
            "`{uses}` caches by default (`cache: false` is missing)"
        ));
    }
    if action == "actions/setup-node" && off("package-manager-cache") != Some(true) {
        return Some(format!(
            "`{uses}` caches by default (`package-manager-cache: false` is missing)"
        ));
    }
    None
}

/// No cache at all, restored or saved: the project's own CI and release build from nothing.
pub(crate) fn no_cache(wf: &Workflow) -> Result<(), String> {
    for (job, step) in wf.all_steps()? {
        let uses = uses_of(step).unwrap_or("");
        if uses.starts_with("actions/cache") {
            return Err(format!("job `{job}` uses `{uses}`"));
        }
        if let Some(why) = cache_save(step) {
            return Err(format!("job `{job}`: {why}"));
        }
    }
    Ok(())
}
