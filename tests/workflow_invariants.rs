//! Security invariants of the GitHub Actions workflows, checked over the parsed YAML and, where a
//! property lives in the text (the `# vX.Y.Z` beside a pin), over the raw file.
//!
//! Four kinds of file: the reusable apply/verify workflow (the product), the callers of it (this
//! repository's own and the examples an adopter copies), the project's CI, and its release. Each
//! invariant is a function over a [`Workflow`] returning `Result<(), String>`. One test runs them
//! all on the real files; a mutation test breaks each file one invariant at a time and asserts that
//! exactly the targeted invariant, and no other, notices.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::{Map, Value, json};

const APPLY_WORKFLOW: &str = ".github/workflows/agent-team-apply-verify.yml";
const OWN_CALLER: &str = ".github/workflows/agent-team-apply.yml";
const EXAMPLE_CALLERS: [&str; 3] = [
    "examples/rust.yml",
    "examples/node.yml",
    "examples/python.yml",
];
const CI_WORKFLOW: &str = ".github/workflows/ci.yml";
const RELEASE_WORKFLOW: &str = ".github/workflows/release.yml";

/// Every action any workflow may use, with the commit its tag resolved to when it was verified
/// against the action's repository. Changing a pin means changing this table, in review.
const KNOWN_PINS: &[(&str, &str, &str)] = &[
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
        "step-security/harden-runner",
        "b09bb98e06d4d774595224525879c09bc6e98c40",
        "v2.20.1",
    ),
];

const GUARD: &str = "guard";
const BUILD_TEST: &str = "build-test";
const DECIDE: &str = "decide";
const PUBLISH: &str = "publish";
const JOBS: [&str; 4] = [GUARD, BUILD_TEST, DECIDE, PUBLISH];

/// The jobs that read the diff, and the policy.
const DIFF_JOBS: [&str; 3] = [GUARD, BUILD_TEST, PUBLISH];

/// The dispatch inputs: declared by the caller, read by the reusable workflow from the event.
const DISPATCH_INPUTS: [&str; 7] = [
    "task_id",
    "base_sha",
    "expected_diff_sha256",
    "declared_scope",
    "diff_b64",
    "diff_ref",
    "dispatch_mac",
];
/// Those the dispatcher must always send.
const REQUIRED_DISPATCH_INPUTS: [&str; 4] = [
    "task_id",
    "base_sha",
    "expected_diff_sha256",
    "declared_scope",
];

/// The reusable workflow's own inputs (the caller's configuration) and the secrets it takes.
const CALL_INPUTS: [&str; 7] = [
    "build-command",
    "fetch-command",
    "policy",
    "egress-allow",
    "runner",
    "build-timeout-minutes",
    "timeout-minutes",
];
const CALL_SECRETS: [&str; 3] = [
    "AGENT_TEAM_APP_PRIVATE_KEY",
    "AGENT_TEAM_DISPATCH_KEY",
    "AGENT_TEAM_DISPATCH_KEY_PREVIOUS",
];

/// Where the published reusable workflow lives, as adopters reference it.
const REUSABLE_REF: &str =
    "agent-team/agent-team-apply/.github/workflows/agent-team-apply-verify.yml";
/// How this repository's own caller references it: the same commit.
const LOCAL_REUSABLE_REF: &str = "./.github/workflows/agent-team-apply-verify.yml";
/// An example caller fits on a screen.
const MAX_CALLER_LINES: usize = 25;

const INSTALL_STEP: &str = "Install the pinned agent-team binaries";
const POLICY_STEP: &str = "Read the policy from the trusted commit";
const POLICY_FILE: &str = "\"$RUNNER_TEMP/agent-team/policy.yml\"";
/// Where every job installs its trusted binaries: root-owned at every component.
const TRUSTED_BIN: &str = "/opt/agent-team/bin";

/// A workflow file: its text and its parsed document.
struct Workflow {
    raw: String,
    doc: Value,
}

impl Workflow {
    fn parse(raw: &str) -> Result<Self, String> {
        let doc: Value = serde_saphyr::from_str(raw).map_err(|e| format!("invalid YAML: {e}"))?;
        Ok(Self {
            raw: raw.to_owned(),
            doc,
        })
    }

    fn read(relative: &str) -> String {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
        std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
    }

    fn load(relative: &str) -> Self {
        Self::parse(&Self::read(relative)).unwrap_or_else(|e| panic!("{relative}: {e}"))
    }

    fn jobs(&self) -> Result<&Map<String, Value>, String> {
        self.doc
            .get("jobs")
            .and_then(Value::as_object)
            .ok_or_else(|| "no `jobs` mapping".to_owned())
    }

    fn job(&self, name: &str) -> Result<&Value, String> {
        self.jobs()?
            .get(name)
            .ok_or_else(|| format!("no job `{name}`"))
    }

    fn steps(&self, job: &str) -> Result<&[Value], String> {
        self.job(job)?
            .get("steps")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .ok_or_else(|| format!("job `{job}` has no steps"))
    }

    /// Every step of every job that has steps, with its job's name.
    fn all_steps(&self) -> Result<Vec<(&str, &Value)>, String> {
        let mut all = Vec::new();
        for (name, job) in self.jobs()? {
            if let Some(steps) = job.get("steps").and_then(Value::as_array) {
                for step in steps {
                    all.push((name.as_str(), step));
                }
            }
        }
        Ok(all)
    }

    fn step_named(&self, job: &str, name: &str) -> Result<&Value, String> {
        self.steps(job)?
            .iter()
            .find(|s| str_of(s, "name") == Some(name))
            .ok_or_else(|| format!("job `{job}` has no step `{name}`"))
    }

    /// The `env:` of the workflow.
    fn env(&self, name: &str) -> Option<&str> {
        self.doc
            .pointer(&format!("/env/{name}"))
            .and_then(Value::as_str)
    }
}

type Invariant = fn(&Workflow) -> Result<(), String>;

/// The reusable apply/verify workflow's invariants, by stable id.
const APPLY_INVARIANTS: &[(&str, Invariant)] = &[
    ("reusable-only", reusable_only),
    ("call-interface", call_interface),
    ("dispatch-inputs-from-event", dispatch_inputs_from_event),
    ("top-level-permissions-empty", top_level_permissions_empty),
    ("job-permissions-exact", job_permissions_exact),
    ("needs-chain", needs_chain),
    ("actions-pinned", actions_pinned),
    (
        "checkout-no-persisted-credentials",
        checkout_no_persisted_credentials,
    ),
    ("no-expression-in-run", no_expression_in_run),
    ("secrets-only-in-publish", secrets_only_in_publish),
    ("environment-only-on-publish", environment_only_on_publish),
    ("no-cache", no_cache),
    ("binaries-installed-first", binaries_installed_first),
    ("release-pinned", release_pinned),
    ("inputs-validated-first", inputs_validated_first),
    ("every-download-hash-checked", every_download_hash_checked),
    ("diff-rehashed-in-every-job", diff_rehashed_in_every_job),
    ("no-job-compiles", no_job_compiles),
    ("policy-from-trusted-commit", policy_from_trusted_commit),
    ("readiness-checked", readiness_checked),
    ("harden-runner-first", harden_runner_first),
    ("egress-probed-before-build", egress_probed_before_build),
    ("build-test-order", build_test_order),
    ("build-sandboxed-under-sudo", build_sandboxed_under_sudo),
    ("later-steps-out-of-reach", later_steps_out_of_reach),
    ("deps-fetched-before-sandbox", deps_fetched_before_sandbox),
    ("build-command-from-caller", build_command_from_caller),
    ("decide-runs-unless-cancelled", decide_runs_unless_cancelled),
    ("publish-only-on-pass", publish_only_on_pass),
    ("gate-decision-wired", gate_decision_wired),
    ("publication-from-plan", publication_from_plan),
    ("protected-files-surfaced", protected_files_surfaced),
    ("no-head-checkout-downstream", no_head_checkout_downstream),
    ("no-artifact-read-downstream", no_artifact_read_downstream),
    ("app-token-scoped", app_token_scoped),
    ("app-token-revoked", app_token_revoked),
    ("dispatch-signature-verified", dispatch_signature_verified),
];

/// The invariants of every caller (this repository's own and the examples).
const CALLER_INVARIANTS: &[(&str, Invariant)] = &[
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
const EXAMPLE_INVARIANTS: &[(&str, Invariant)] = &[
    ("example-pins-the-release", example_pins_the_release),
    ("example-within-25-lines", example_within_25_lines),
];

/// The project CI's invariants.
const CI_INVARIANTS: &[(&str, Invariant)] = &[
    ("ci-triggers", ci_triggers),
    ("top-level-permissions-empty", top_level_permissions_empty),
    ("ci-job-permissions-read", ci_job_permissions_read),
    ("actions-pinned", actions_pinned),
    (
        "checkout-no-persisted-credentials",
        checkout_no_persisted_credentials,
    ),
    ("no-expression-in-run", no_expression_in_run),
    ("no-cache", no_cache),
    ("ci-runs-the-checks", ci_runs_the_checks),
    ("ci-tests-as-root", ci_tests_as_root),
];

/// The release workflow's invariants.
const RELEASE_INVARIANTS: &[(&str, Invariant)] = &[
    ("release-on-tags-only", release_on_tags_only),
    ("top-level-permissions-empty", top_level_permissions_empty),
    ("release-job-permissions", release_job_permissions),
    ("actions-pinned", actions_pinned),
    (
        "checkout-no-persisted-credentials",
        checkout_no_persisted_credentials,
    ),
    ("no-expression-in-run", no_expression_in_run),
    ("no-cache", no_cache),
    ("release-builds-static-musl", release_builds_static_musl),
    (
        "release-attests-what-it-publishes",
        release_attests_what_it_publishes,
    ),
];

// ---------------------------------------------------------------------------------------------
// Helpers over parsed values

fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

fn uses_of(step: &Value) -> Option<&str> {
    str_of(step, "uses")
}

fn run_of(step: &Value) -> Option<&str> {
    str_of(step, "run")
}

fn with_of<'a>(step: &'a Value, key: &str) -> Option<&'a Value> {
    step.get("with").and_then(|w| w.get(key))
}

fn uses_action(step: &Value, action: &str) -> bool {
    uses_of(step).is_some_and(|u| u.starts_with(&format!("{action}@")))
}

/// `true`/`false` whether written as a YAML boolean or a string.
fn as_bool(v: Option<&Value>) -> Option<bool> {
    match v? {
        Value::Bool(b) => Some(*b),
        Value::String(s) if s == "true" => Some(true),
        Value::String(s) if s == "false" => Some(false),
        _ => None,
    }
}

/// `if:` text without an optional `${{ }}` wrapper.
fn condition(v: Option<&Value>) -> Option<String> {
    let s = v?.as_str()?.trim();
    let inner = s
        .strip_prefix("${{")
        .and_then(|s| s.strip_suffix("}}"))
        .unwrap_or(s);
    Some(inner.trim().to_owned())
}

/// A job's `needs` as a set (a single string or a list).
fn needs_of(job: &Value) -> BTreeSet<String> {
    match job.get("needs") {
        Some(Value::String(s)) => BTreeSet::from([s.clone()]),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => BTreeSet::new(),
    }
}

/// Every expression in a value: the bodies of `${{ }}` in any string, and whole `if:` conditions
/// (which are expressions even without the wrapper).
fn expressions(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => {
            let mut rest = s.as_str();
            while let Some(start) = rest.find("${{") {
                let after = &rest[start + 3..];
                let end = after.find("}}").unwrap_or(after.len());
                out.push(after[..end].to_owned());
                rest = &after[end..];
            }
        }
        Value::Array(items) => items.iter().for_each(|i| expressions(i, out)),
        Value::Object(map) => {
            for (key, value) in map {
                if key == "if"
                    && let Some(c) = condition(Some(value))
                {
                    out.push(c);
                }
                expressions(value, out);
            }
        }
        _ => {}
    }
}

fn mentions_secrets(v: &Value) -> bool {
    let mut found = Vec::new();
    expressions(v, &mut found);
    found.iter().any(|e| e.contains("secrets"))
}

fn index_of(steps: &[Value], pred: impl Fn(&Value) -> bool) -> Option<usize> {
    steps.iter().position(pred)
}

fn run_contains(step: &Value, needle: &str) -> bool {
    run_of(step).is_some_and(|r| r.contains(needle))
}

fn is_lower_hex(s: &str, len: usize) -> bool {
    s.len() == len
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// `vN.N.N`
fn is_semver_tag(s: &str) -> bool {
    let Some(rest) = s.strip_prefix('v') else {
        return false;
    };
    let parts: Vec<&str> = rest.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// Each command word of a script with its subcommand: the program's file name (quotes and any
/// directory stripped) and its first argument that is not an option. `git -C dir -c k=v apply`
/// yields `("git", "apply")`. Coarse, but errs towards finding commands.
fn commands(script: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for line in script.lines() {
        let words: Vec<String> = line
            .split(|c: char| c.is_whitespace() || matches!(c, ';' | '|' | '&' | '(' | ')' | '`'))
            .filter(|w| !w.is_empty())
            .map(|w| w.trim_matches(['"', '\'']).to_owned())
            .collect();
        for (i, word) in words.iter().enumerate() {
            let program = word.rsplit('/').next().unwrap_or(word).to_owned();
            let mut rest = words[i + 1..].iter();
            let mut subcommand = String::new();
            while let Some(arg) = rest.next() {
                if arg == "-C" || arg == "-c" || arg == "--git-dir" || arg == "--work-tree" {
                    rest.next();
                } else if !arg.starts_with('-') {
                    subcommand.clone_from(arg);
                    break;
                }
            }
            found.push((program, subcommand));
        }
    }
    found
}

// ---------------------------------------------------------------------------------------------
// Apply/verify invariants

/// A script with its `\`-newline continuations joined and runs of blanks collapsed, so that one
/// shell command reads as one line.
fn joined(script: &str) -> String {
    script
        .replace("\\\n", " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The triggers of `on`, whatever its form.
fn triggers(wf: &Workflow) -> Result<Vec<&str>, String> {
    let on = wf.doc.get("on").ok_or("no `on`")?;
    Ok(match on {
        Value::String(s) => vec![s.as_str()],
        Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
        Value::Object(map) => map.keys().map(String::as_str).collect(),
        _ => return Err("`on` is neither a string, a list nor a mapping".into()),
    })
}

fn no_dangerous_trigger_text(wf: &Workflow) -> Result<(), String> {
    for forbidden in ["pull_request_target", "workflow_run"] {
        if wf.raw.contains(forbidden) {
            return Err(format!("`{forbidden}` appears in the file"));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The reusable apply/verify workflow

/// Only `workflow_call` starts it; no `pull_request_target` or `workflow_run` anywhere.
fn reusable_only(wf: &Workflow) -> Result<(), String> {
    let on = triggers(wf)?;
    if on != ["workflow_call"] {
        return Err(format!("triggers are {on:?}, not only workflow_call"));
    }
    no_dangerous_trigger_text(wf)
}

/// The caller configures the build exactly through the documented inputs (`build-command`
/// required, the others optional with defaults; none of them a dispatch input) and passes exactly
/// the publication's secrets, none required.
fn call_interface(wf: &Workflow) -> Result<(), String> {
    let inputs = wf
        .doc
        .pointer("/on/workflow_call/inputs")
        .and_then(Value::as_object)
        .ok_or("no workflow_call inputs")?;
    let names: BTreeSet<&str> = inputs.keys().map(String::as_str).collect();
    let expected: BTreeSet<&str> = CALL_INPUTS.into_iter().collect();
    if names != expected {
        return Err(format!("inputs are {names:?}, expected {expected:?}"));
    }
    for (name, spec) in inputs {
        let required = as_bool(spec.get("required")) == Some(true);
        if required != (name == "build-command") {
            return Err(format!("input `{name}` required: {required}"));
        }
        if !required && spec.get("default").is_none() {
            return Err(format!("optional input `{name}` has no default"));
        }
    }
    let secrets = wf
        .doc
        .pointer("/on/workflow_call/secrets")
        .and_then(Value::as_object)
        .ok_or("no workflow_call secrets")?;
    let names: BTreeSet<&str> = secrets.keys().map(String::as_str).collect();
    let expected: BTreeSet<&str> = CALL_SECRETS.into_iter().collect();
    if names != expected {
        return Err(format!("secrets are {names:?}, expected {expected:?}"));
    }
    if secrets
        .values()
        .any(|s| as_bool(s.get("required")) != Some(false))
    {
        return Err("a secret is required: the caller passes them by name only".into());
    }
    Ok(())
}

/// The dispatch inputs reach the jobs as workflow variables read from the event that started the
/// run (`github.event.inputs.*`), never from a caller-set input; every `inputs.` the file reads
/// is one of its own configuration inputs.
fn dispatch_inputs_from_event(wf: &Workflow) -> Result<(), String> {
    for input in DISPATCH_INPUTS.iter().filter(|i| **i != "dispatch_mac") {
        let var = input.to_ascii_uppercase();
        let expected = format!("${{{{ github.event.inputs.{input} }}}}");
        if wf.env(&var) != Some(expected.as_str()) {
            return Err(format!("workflow env {var} is not `{expected}`"));
        }
    }
    let mut found = Vec::new();
    expressions(&wf.doc, &mut found);
    for expression in &found {
        for (at, _) in expression.match_indices("inputs.") {
            let before = &expression[..at];
            let name: String = expression[at + 7..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
                .collect();
            let from_event = before.ends_with("github.event.");
            let known = if from_event {
                DISPATCH_INPUTS.contains(&name.as_str())
            } else {
                CALL_INPUTS.contains(&name.as_str())
            };
            if !known {
                return Err(format!("`{expression}` reads input `{name}`"));
            }
        }
    }
    Ok(())
}

fn top_level_permissions_empty(wf: &Workflow) -> Result<(), String> {
    match wf.doc.get("permissions") {
        Some(Value::Object(map)) if map.is_empty() => Ok(()),
        other => Err(format!("top-level permissions are {other:?}, not {{}}")),
    }
}

/// Exactly the four jobs: guard, build-test and publish with `contents: read` alone, decide
/// with nothing at all.
fn job_permissions_exact(wf: &Workflow) -> Result<(), String> {
    let names: BTreeSet<&str> = wf.jobs()?.keys().map(String::as_str).collect();
    let expected_names: BTreeSet<&str> = JOBS.into_iter().collect();
    if names != expected_names {
        return Err(format!("jobs are {names:?}, expected {expected_names:?}"));
    }
    for name in JOBS {
        let expected = if name == DECIDE {
            json!({})
        } else {
            json!({ "contents": "read" })
        };
        let permissions = wf.job(name)?.get("permissions");
        if permissions != Some(&expected) {
            return Err(format!(
                "job `{name}` permissions are {permissions:?}, expected {expected}"
            ));
        }
    }
    Ok(())
}

fn needs_chain(wf: &Workflow) -> Result<(), String> {
    let expected: [(&str, &[&str]); 4] = [
        (GUARD, &[]),
        (BUILD_TEST, &[GUARD]),
        (DECIDE, &[BUILD_TEST, GUARD]),
        (PUBLISH, &[BUILD_TEST, DECIDE, GUARD]),
    ];
    for (job, needs) in expected {
        let actual = needs_of(wf.job(job)?);
        let wanted: BTreeSet<String> = needs.iter().map(|s| (*s).to_owned()).collect();
        if actual != wanted {
            return Err(format!("job `{job}` needs {actual:?}, expected {wanted:?}"));
        }
    }
    Ok(())
}

/// Every step `uses:` is `owner/repo@<40-hex>` from [`KNOWN_PINS`], and its line carries the
/// matching `# vX.Y.Z` comment. Local (`./`) and `docker://` actions are not allowed; a job-level
/// `uses:` (a reusable workflow) is the callers' business ([`caller_calls_the_reusable_workflow`]).
fn actions_pinned(wf: &Workflow) -> Result<(), String> {
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

fn checkout_no_persisted_credentials(wf: &Workflow) -> Result<(), String> {
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
fn no_expression_in_run(wf: &Workflow) -> Result<(), String> {
    for (job, step) in wf.all_steps()? {
        if run_contains(step, "${{") {
            let name = str_of(step, "name").unwrap_or("<unnamed>");
            return Err(format!("job `{job}`, step `{name}`: `${{{{` inside `run:`"));
        }
    }
    Ok(())
}

/// `secrets` appears in no expression outside publish (nor at workflow level).
fn secrets_only_in_publish(wf: &Workflow) -> Result<(), String> {
    if let Value::Object(top) = &wf.doc {
        for (key, value) in top {
            if key != "jobs" && mentions_secrets(value) {
                return Err(format!("workflow-level `{key}` references secrets"));
            }
        }
    }
    for (name, job) in wf.jobs()? {
        if name != PUBLISH && mentions_secrets(job) {
            return Err(format!("job `{name}` references secrets"));
        }
    }
    Ok(())
}

/// Only publish names an environment, and it is `agent-team-publish`: runs that did not pass
/// never ask the environment's reviewers, and its secrets reach no other job.
fn environment_only_on_publish(wf: &Workflow) -> Result<(), String> {
    for (name, job) in wf.jobs()? {
        let environment = job.get("environment");
        let expected = (name == PUBLISH).then(|| json!("agent-team-publish"));
        if environment != expected.as_ref() {
            return Err(format!("job `{name}` environment is {environment:?}"));
        }
    }
    Ok(())
}

/// No actions/cache and no setup-* caching: build-test can write the Actions cache of its ref, so
/// nothing may read a cache back.
fn no_cache(wf: &Workflow) -> Result<(), String> {
    for (job, step) in wf.all_steps()? {
        let uses = uses_of(step).unwrap_or("");
        if uses.starts_with("actions/cache") {
            return Err(format!("job `{job}` uses `{uses}`"));
        }
        if step.get("with").and_then(|w| w.get("cache")).is_some() {
            return Err(format!("job `{job}`: `{uses}` is given a `cache:` input"));
        }
    }
    Ok(())
}

/// The first step of a job that is not harden-runner.
fn first_step(wf: &Workflow, job: &str) -> Result<usize, String> {
    wf.steps(job)?
        .iter()
        .position(|s| !uses_action(s, "step-security/harden-runner"))
        .ok_or_else(|| format!("job `{job}` has no steps"))
}

/// Every job opens (after harden-runner) with the same install step: the asset of the runner's
/// architecture downloaded over https only, its SHA-256 checked against the pin before anything
/// reads it, and the binaries installed root-owned under /opt/agent-team/bin, every component
/// of which root creates.
fn binaries_installed_first(wf: &Workflow) -> Result<(), String> {
    let mut scripts = BTreeSet::new();
    for job in JOBS {
        let steps = wf.steps(job)?;
        let step = &steps[first_step(wf, job)?];
        if str_of(step, "name") != Some(INSTALL_STEP) {
            return Err(format!("job `{job}` does not open with `{INSTALL_STEP}`"));
        }
        if step.pointer("/env/ARCH").and_then(Value::as_str) != Some("${{ runner.arch }}") {
            return Err(format!(
                "job `{job}`: the install step does not read runner.arch"
            ));
        }
        let script = run_of(step).unwrap_or_default();
        let flat = joined(script);
        let download = "curl --fail --silent --show-error --location --proto '=https' --tlsv1.2 \
                        --retry 3 --max-time 120 --output \"$dir/asset.tar.gz\" \
                        \"$AGENT_TEAM_RELEASE_URL/$asset\"";
        let check = "echo \"$sha256 $dir/asset.tar.gz\" | sha256sum --check --strict --status";
        let extract = "tar -xzf \"$dir/asset.tar.gz\"";
        let mkdir =
            format!("sudo install -d -o root -g root -m 0755 /opt/agent-team {TRUSTED_BIN}");
        let install = format!(
            "sudo install -o root -g root -m 0555 \"$dir/guard\" \"$dir/gate\" \"$dir/report\" {TRUSTED_BIN}/"
        );
        let at = |needle: &str| flat.find(needle);
        match (
            at(download),
            at(check),
            at(extract),
            at(&mkdir),
            at(&install),
        ) {
            (Some(d), Some(c), Some(x), Some(m), Some(i)) if d < c && c < x && x < m && m < i => {}
            found => {
                return Err(format!(
                    "job `{job}`: the install step does not download, check, extract and install in order: {found:?}"
                ));
            }
        }
        for (arch, suffix) in [("X64", "X64"), ("ARM64", "ARM64")] {
            let mapping = format!(
                "{arch}) asset=\"$AGENT_TEAM_ASSET_{suffix}\" sha256=\"$AGENT_TEAM_SHA256_{suffix}\" ;;"
            );
            if !flat.contains(&mapping) {
                return Err(format!("job `{job}`: the install step lacks `{mapping}`"));
            }
        }
        scripts.insert(script.to_owned());
    }
    if scripts.len() != 1 {
        return Err("the install step differs between jobs".into());
    }
    Ok(())
}

/// The release this file runs: its URL, the asset of each architecture of that same version,
/// and a SHA-256 for each (64 lowercase hex digits).
fn release_pinned(wf: &Workflow) -> Result<(), String> {
    let version = pinned_release(wf)?;
    for (arch, target) in [
        ("X64", "x86_64-unknown-linux-musl"),
        ("ARM64", "aarch64-unknown-linux-musl"),
    ] {
        let asset = wf.env(&format!("AGENT_TEAM_ASSET_{arch}"));
        let expected = format!("agent-team-apply-{version}-{target}.tar.gz");
        if asset != Some(expected.as_str()) {
            return Err(format!(
                "AGENT_TEAM_ASSET_{arch} is {asset:?}, expected {expected}"
            ));
        }
        let sha = wf
            .env(&format!("AGENT_TEAM_SHA256_{arch}"))
            .unwrap_or_default();
        if !is_lower_hex(sha, 64) {
            return Err(format!("AGENT_TEAM_SHA256_{arch} `{sha}` is not a SHA-256"));
        }
    }
    Ok(())
}

/// The version in `AGENT_TEAM_RELEASE_URL` (`https://github.com/OWNER/REPO/releases/download/vX.Y.Z`).
fn pinned_release(wf: &Workflow) -> Result<String, String> {
    let url = wf
        .env("AGENT_TEAM_RELEASE_URL")
        .ok_or("no AGENT_TEAM_RELEASE_URL")?;
    let rest = url
        .strip_prefix("https://github.com/")
        .ok_or_else(|| format!("release URL `{url}` is not on https://github.com/"))?;
    let parts: Vec<&str> = rest.split('/').collect();
    match parts.as_slice() {
        [owner, repo, "releases", "download", version]
            if !owner.is_empty() && !repo.is_empty() && is_semver_tag(version) =>
        {
            Ok((*version).to_owned())
        }
        _ => Err(format!(
            "release URL `{url}` is not .../releases/download/vX.Y.Z"
        )),
    }
}

/// The step after the install is `guard inputs`, the one set of rules, in every job.
fn inputs_validated_first(wf: &Workflow) -> Result<(), String> {
    for job in JOBS {
        let steps = wf.steps(job)?;
        let next = steps
            .get(first_step(wf, job)? + 1)
            .ok_or_else(|| format!("job `{job}` ends after its first step"))?;
        if str_of(next, "id") != Some("validate-inputs")
            || run_of(next).map(str::trim) != Some("/opt/agent-team/bin/guard inputs")
        {
            return Err(format!(
                "job `{job}`: the step after the install is not `/opt/agent-team/bin/guard inputs`"
            ));
        }
    }
    Ok(())
}

/// Whether a script obtains bytes from elsewhere: a download with curl or wget that is kept, a
/// GitHub API read of raw content, a release download, or a decoded inline payload.
fn downloads(script: &str) -> bool {
    let flat = joined(script);
    let kept_curl = flat.split("curl ").skip(1).any(|call| {
        !call
            .split(';')
            .next()
            .unwrap_or_default()
            .contains("--output /dev/null")
    });
    kept_curl
        || flat.contains("wget ")
        || flat.contains("gh release download")
        || flat.contains("application/vnd.github.raw")
        || flat.contains("base64 --decode")
}

/// Every step that obtains bytes compares their SHA-256 with a pinned or dispatched value before
/// the step ends: the install step with `sha256sum --check --strict` against the pin, the diff
/// fetch against `expected_diff_sha256`. No download action exists in the file at all.
fn every_download_hash_checked(wf: &Workflow) -> Result<(), String> {
    for (job, step) in wf.all_steps()? {
        let name = str_of(step, "name").unwrap_or("(unnamed)");
        if uses_of(step).is_some_and(|u| u.starts_with("actions/download-artifact")) {
            return Err(format!("job `{job}`, step `{name}` downloads an artifact"));
        }
        let Some(script) = run_of(step) else { continue };
        if !downloads(script) {
            continue;
        }
        let checked = (script.contains("sha256sum --check --strict")
            && script.contains("\"$sha256  "))
            || (script.contains("actual=\"$(sha256sum ")
                && script.contains(r#"[[ "$actual" != "$EXPECTED_DIFF_SHA256" ]]"#));
        if !checked {
            return Err(format!(
                "job `{job}`, step `{name}` obtains bytes without checking their SHA-256"
            ));
        }
    }
    Ok(())
}

/// Every job that reads the diff obtains the bytes itself and compares their SHA-256 with the
/// expected hash.
fn diff_rehashed_in_every_job(wf: &Workflow) -> Result<(), String> {
    for job in DIFF_JOBS {
        let rehashes = wf.steps(job)?.iter().any(|s| {
            run_contains(s, "actual=\"$(sha256sum \"$diff_file\"")
                && run_contains(s, r#"[[ "$actual" != "$EXPECTED_DIFF_SHA256" ]]"#)
        });
        if !rehashes {
            return Err(format!("job `{job}` does not re-hash the diff"));
        }
    }
    Ok(())
}

/// No job compiles anything of its own (no cargo build, install or run, no rustup, no zig), and
/// every guard, gate or report it runs is the installed one: `/opt/agent-team/bin/<name>`, or
/// `"$bin/<name>"` in a script that sets `bin=/opt/agent-team/bin`.
fn no_job_compiles(wf: &Workflow) -> Result<(), String> {
    for (job, step) in wf.all_steps()? {
        let name = str_of(step, "name").unwrap_or("(unnamed)");
        let Some(script) = run_of(step) else { continue };
        for (program, subcommand) in commands(script) {
            let compiles = match program.as_str() {
                "cargo" => {
                    ["build", "install", "run", "zigbuild", "rustc"].contains(&subcommand.as_str())
                }
                "rustup" | "rustc" | "zig" | "cc" | "gcc" | "make" => true,
                _ => false,
            };
            if compiles {
                return Err(format!(
                    "job `{job}`, step `{name}` runs `{program} {subcommand}`"
                ));
            }
        }
        let bin_set = script
            .lines()
            .any(|l| l.trim() == format!("bin={TRUSTED_BIN}"));
        // The program of each command line (its first word).
        for line in script.lines() {
            let Some(word) = line.split_whitespace().next() else {
                continue;
            };
            let program = word
                .trim_matches('"')
                .rsplit('/')
                .next()
                .unwrap_or_default();
            if !["guard", "gate", "report"].contains(&program)
                || !word.contains('/')
                || word.contains('=')
            {
                continue;
            }
            let trusted = word == format!("{TRUSTED_BIN}/{program}")
                || (bin_set && word == format!("\"$bin/{program}\""));
            if !trusted {
                return Err(format!(
                    "job `{job}`, step `{name}` runs `{word}`, not the installed binary"
                ));
            }
        }
    }
    Ok(())
}

/// guard, build-test and publish read their policy from the trusted checkout of the dispatched
/// commit (never the base or the patched tree) into `$RUNNER_TEMP/agent-team/policy.yml`, and
/// every command that applies a policy is given that file.
fn policy_from_trusted_commit(wf: &Workflow) -> Result<(), String> {
    for job in DIFF_JOBS {
        let steps = wf.steps(job)?;
        let checkout = steps
            .iter()
            .find(|s| {
                uses_action(s, "actions/checkout")
                    && with_of(s, "path").and_then(Value::as_str) == Some("trusted")
            })
            .ok_or_else(|| format!("job `{job}` does not check out the trusted commit"))?;
        if with_of(checkout, "ref").is_some() || with_of(checkout, "repository").is_some() {
            return Err(format!("job `{job}`: the trusted checkout names a ref"));
        }
        let step = wf.step_named(job, POLICY_STEP)?;
        let script = joined(run_of(step).unwrap_or_default());
        for needed in [
            "trusted=\"$GITHUB_WORKSPACE/trusted\"",
            "cp -- \"$trusted/$POLICY_PATH\" \"$RUNNER_TEMP/agent-team/policy.yml\"",
            "cp -- \"$trusted/.github/agent-team-policy.yml\" \"$RUNNER_TEMP/agent-team/policy.yml\"",
        ] {
            if !script.contains(needed) {
                return Err(format!("job `{job}`: the policy step lacks `{needed}`"));
            }
        }
        if step.pointer("/env/POLICY_PATH").and_then(Value::as_str) != Some("${{ inputs.policy }}")
        {
            return Err(format!(
                "job `{job}`: the policy path is not the caller's input"
            ));
        }
    }
    for (job, step) in wf.all_steps()? {
        let script = joined(run_of(step).unwrap_or_default());
        for command in [
            "guard\" check ",
            "guard\" apply ",
            "guard\" readiness ",
            "guard run ",
            "gate publish-plan ",
        ] {
            if script.contains(command) && !script.contains(&format!("--policy {POLICY_FILE}")) {
                return Err(format!(
                    "job `{job}`: `{}` is not given the policy",
                    command.trim_end()
                ));
            }
        }
    }
    Ok(())
}

/// guard checks the base commit's own workflows for the second execution: `guard readiness`
/// over the published branch, with the policy, its exit status the step's, the step neither
/// conditional nor allowed to fail; its document goes to the summary.
fn readiness_checked(wf: &Workflow) -> Result<(), String> {
    let steps = wf.steps(GUARD)?;
    let step = steps
        .iter()
        .find(|s| run_contains(s, "guard\" readiness "))
        .ok_or("guard does not run guard readiness")?;
    let script = run_of(step).unwrap_or_default();
    let flat = joined(script);
    for needed in [
        " readiness --repo base --base \"$BASE_SHA\" --branch \"agent-team/$TASK_ID\" ",
        " --base-branch \"$DEFAULT_BRANCH\" --repository \"$GITHUB_REPOSITORY\" ",
        " --format json > \"$doc\" || status=$?",
        "\"$bin/report\" readiness --doc \"$doc\" --format markdown >> \"$GITHUB_STEP_SUMMARY\"",
    ] {
        if !flat.contains(needed) {
            return Err(format!("guard readiness lacks `{}`", needed.trim()));
        }
    }
    if script.lines().last().map(str::trim) != Some("exit \"$status\"") {
        return Err("the readiness step does not end with guard readiness's status".into());
    }
    if step.pointer("/env/DEFAULT_BRANCH").and_then(Value::as_str)
        != Some("${{ github.event.repository.default_branch }}")
    {
        return Err("the readiness step's DEFAULT_BRANCH is not the repository's".into());
    }
    if step.get("if").is_some() || step.get("continue-on-error").is_some() {
        return Err(
            "the readiness step is conditional or may fail without stopping the job".into(),
        );
    }
    Ok(())
}

/// harden-runner is build-test's first step, blocking egress with an explicit allowlist: every
/// entry `host:443`, none a bare `*`, plus the caller's additions. It must NOT disable sudo: on
/// ubuntu-24.04 `guard run` needs root to create its namespaces (see
/// [`build_sandboxed_under_sudo`]), so the egress block is the second network layer.
fn harden_runner_first(wf: &Workflow) -> Result<(), String> {
    let first = wf
        .steps(BUILD_TEST)?
        .first()
        .ok_or("build-test has no steps")?;
    if !uses_action(first, "step-security/harden-runner") {
        return Err("the first step of build-test is not harden-runner".into());
    }
    if with_of(first, "egress-policy").and_then(Value::as_str) != Some("block") {
        return Err("harden-runner egress-policy is not `block`".into());
    }
    for key in ["disable-sudo", "disable-sudo-and-containers"] {
        if with_of(first, key).is_some() {
            return Err(format!(
                "harden-runner sets `{key}`: guard run needs sudo to create its namespaces"
            ));
        }
    }
    let endpoints = with_of(first, "allowed-endpoints")
        .and_then(Value::as_str)
        .ok_or("harden-runner has no allowed-endpoints")?;
    let extra = "${{ inputs.egress-allow }}";
    for endpoint in endpoints.replace(extra, "").split_whitespace() {
        let host = endpoint
            .strip_suffix(":443")
            .ok_or_else(|| format!("allowed endpoint `{endpoint}` is not :443"))?;
        if host == "*" || host.is_empty() {
            return Err(format!("allowed endpoint `{endpoint}` allows everything"));
        }
    }
    let hardenings = wf
        .steps(BUILD_TEST)?
        .iter()
        .filter(|s| uses_action(s, "step-security/harden-runner"))
        .count();
    if hardenings != 1 {
        return Err(format!("build-test runs harden-runner {hardenings} times"));
    }
    Ok(())
}

/// build-test proves the egress block holds before any patch code runs.
fn egress_probed_before_build(wf: &Workflow) -> Result<(), String> {
    let steps = wf.steps(BUILD_TEST)?;
    let probe = index_of(steps, |s| {
        run_contains(s, "if curl ") && run_contains(s, "https://example.com/")
    })
    .ok_or("build-test has no egress probe")?;
    let untrusted = untrusted_run_index(steps)?;
    if probe > untrusted {
        return Err("the egress probe runs after the patch code".into());
    }
    Ok(())
}

/// The step of build-test that runs patch code under `guard run`.
fn untrusted_run_index(steps: &[Value]) -> Result<usize, String> {
    index_of(steps, |s| {
        run_contains(s, &format!("{TRUSTED_BIN}/guard run "))
    })
    .ok_or_else(|| "no `guard run` step".into())
}

/// build-test: the binaries are installed before the patch is applied; the tree is verified after
/// apply, and again after the build by `guard run` itself (`--verdict`, `--baseline` pinned by
/// the apply step's output), so no later step has to run a check the build could have tampered
/// with.
fn build_test_order(wf: &Workflow) -> Result<(), String> {
    let steps = wf.steps(BUILD_TEST)?;
    let install = index_of(steps, |s| str_of(s, "name") == Some(INSTALL_STEP))
        .ok_or("build-test does not install the binaries")?;
    let apply = index_of(steps, |s| {
        run_contains(s, "guard\" apply ") && run_contains(s, "guard\" verify-tree ")
    })
    .ok_or("build-test does not apply and verify the tree")?;
    let untrusted = untrusted_run_index(steps)?;
    if !(install < apply && apply < untrusted) {
        return Err(format!(
            "build-test order is install {install}, apply {apply}, run {untrusted}"
        ));
    }
    let apply_script = joined(run_of(&steps[apply]).unwrap_or_default());
    if !apply_script.contains(" --declared-scope \"$DECLARED_SCOPE\" ") {
        return Err("guard apply does not read the declared scope by the input's rule".into());
    }
    let run = joined(run_of(&steps[untrusted]).unwrap_or_default());
    for flag in [
        " --verdict \"$RUNNER_TEMP/agent-team/report/verdict.json\" ",
        " --baseline \"$RUNNER_TEMP/agent-team/tree-baseline.json\" ",
        " --baseline-sha256 \"$BASELINE_SHA256\" ",
    ] {
        if !run.contains(flag) {
            return Err(format!(
                "guard run does not check the tree itself: no `{}`",
                flag.trim()
            ));
        }
    }
    if steps[untrusted]
        .pointer("/env/BASELINE_SHA256")
        .and_then(Value::as_str)
        != Some("${{ steps.apply.outputs.baseline_sha256 }}")
    {
        return Err("the baseline hash guard run checks is not the apply step's output".into());
    }
    Ok(())
}

/// The one command of build-test that runs patch code: `guard run`, the root-owned trusted binary,
/// started by root (so that it can build the view and leave root for the work tree's owner
/// itself), with the runner's directories named in its environment so that it hides them, and
/// `--repo` the work tree. No `$(id -g)` anywhere (the runner's primary group is docker), and
/// nothing opts out of the isolation.
fn build_sandboxed_under_sudo(wf: &Workflow) -> Result<(), String> {
    if wf.raw.contains("--no-isolation-because") {
        return Err("the workflow opts out of guard run's isolation".into());
    }
    let steps = wf.steps(BUILD_TEST)?;
    let untrusted = untrusted_run_index(steps)?;
    let script = joined(run_of(&steps[untrusted]).unwrap_or_default());
    let expected_prefix = "sudo /usr/bin/env PATH=\"$PATH\" HOME=\"$HOME\" RUNNER_TEMP=\"$RUNNER_TEMP\" \
                           GITHUB_WORKSPACE=\"$GITHUB_WORKSPACE\" ";
    let Some(start) = script.find("sudo ") else {
        return Err(format!("guard run is not started by sudo: {script}"));
    };
    if !script[start..].starts_with(expected_prefix) {
        return Err(format!(
            "guard run is not started by `{expected_prefix}...`: {script}"
        ));
    }
    let guard = script
        .find(&format!(" {TRUSTED_BIN}/guard run "))
        .ok_or("the guard run is not the trusted binary in /opt/agent-team/bin")?;
    let before_guard = &script[start..guard];
    if before_guard.contains("setpriv") || before_guard.contains("capsh") {
        return Err("something changes guard's privileges before it starts".into());
    }
    if !script[guard..].contains(" run --repo \"$GITHUB_WORKSPACE/work\" ") {
        return Err("guard run does not name the work tree with --repo".into());
    }
    for step in steps {
        if run_of(step).is_some_and(|r| r.contains("$(id -g)") || r.contains("--keep-groups")) {
            return Err("a build-test step keeps the runner's groups (docker)".into());
        }
    }
    Ok(())
}

/// After the build, no step of build-test reads a file or runs a binary the build could have
/// written: binaries only from /opt/agent-team/bin, files only under `$RUNNER_TEMP/agent-team/`
/// (hidden from the build: guard hides RUNNER_TEMP, which its environment names), no work tree,
/// no working directory, no tool found through `PATH` or the workspace, actions only the pinned
/// artifact upload of that report directory.
fn later_steps_out_of_reach(wf: &Workflow) -> Result<(), String> {
    let steps = wf.steps(BUILD_TEST)?;
    let untrusted = untrusted_run_index(steps)?;
    for step in &steps[untrusted + 1..] {
        let name = str_of(step, "name").unwrap_or("(unnamed)");
        if step.get("working-directory").is_some() {
            return Err(format!(
                "step `{name}` runs in a working directory the build could write"
            ));
        }
        if let Some(uses) = uses_of(step) {
            let path = with_of(step, "path")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if !uses.starts_with("actions/upload-artifact@")
                || path != "${{ runner.temp }}/agent-team/report/"
            {
                return Err(format!("step `{name}` uses `{uses}` on `{path}`"));
            }
            continue;
        }
        let script = run_of(step).unwrap_or_default();
        for forbidden in [
            "$GITHUB_WORKSPACE",
            "work/",
            " work ",
            "target/",
            "cargo ",
            "./",
            "$HOME",
        ] {
            if script.contains(forbidden) {
                return Err(format!(
                    "step `{name}` reaches `{forbidden}`, which the build could write"
                ));
            }
        }
        // Line by line: shell structure, the two variables, or a call of a trusted binary.
        for line in script.lines().map(str::trim).filter(|l| !l.is_empty()) {
            let allowed = line.starts_with("\"$bin/")
                || line == format!("bin={TRUSTED_BIN}")
                || line == "dir=\"$RUNNER_TEMP/agent-team/report\""
                || (line.starts_with("if [[ ") && line.ends_with("; then"))
                || line == "fi"
                || line.starts_with("args=(")
                || line.starts_with("--");
            if !allowed {
                return Err(format!(
                    "step `{name}` runs `{line}`, not a trusted binary on trusted inputs"
                ));
            }
        }
    }
    Ok(())
}

/// Dependencies are fetched by a trusted step after apply and before the sandbox: the caller's
/// command, run unprivileged from an empty directory outside the work tree (so the diff's
/// `.cargo/config.toml` or `rust-toolchain.toml` is not read), with lifecycle scripts and
/// toolchain switches turned off by variables, into the same fresh CARGO_HOME and
/// AGENT_TEAM_DEPS the sandboxed build reads (the latter read-only).
fn deps_fetched_before_sandbox(wf: &Workflow) -> Result<(), String> {
    let steps = wf.steps(BUILD_TEST)?;
    let apply = index_of(steps, |s| run_contains(s, "guard\" apply "))
        .ok_or("build-test does not apply the diff")?;
    let untrusted = untrusted_run_index(steps)?;
    let fetch = index_of(steps, |s| run_contains(s, "\"$FETCH_COMMAND\""))
        .ok_or("build-test does not run the fetch command")?;
    if !(apply < fetch && fetch < untrusted) {
        return Err(format!(
            "the fetch (step {fetch}) is not between apply ({apply}) and guard run ({untrusted})"
        ));
    }
    let fetch_step = &steps[fetch];
    let script = run_of(fetch_step).unwrap_or_default();
    let lines: Vec<&str> = script.lines().map(str::trim).collect();
    if fetch_step.get("working-directory").is_some()
        || lines.get(1) != Some(&"cd \"$RUNNER_TEMP/agent-team/fetch\"")
        || lines.get(2) != Some(&"bash -euo pipefail -c \"$FETCH_COMMAND\"")
        || script.contains("sudo")
    {
        return Err(
            "the fetch does not run from an empty directory outside the tree, unprivileged".into(),
        );
    }
    let env = |i: usize, name: &str| {
        steps[i]
            .pointer(&format!("/env/{name}"))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    for (name, value) in [
        ("FETCH_COMMAND", "${{ inputs.fetch-command }}"),
        ("npm_config_ignore_scripts", "true"),
        ("PIP_ONLY_BINARY", ":all:"),
        ("GOTOOLCHAIN", "local"),
    ] {
        if env(fetch, name).as_deref() != Some(value) {
            return Err(format!("the fetch step does not set {name} to `{value}`"));
        }
    }
    for name in ["CARGO_HOME", "AGENT_TEAM_DEPS"] {
        match (env(fetch, name), env(untrusted, name)) {
            (Some(a), Some(b)) if a == b && a.starts_with("${{ runner.temp }}/agent-team/") => {}
            other => {
                return Err(format!(
                    "fetch and build do not share a fresh {name} under runner.temp: {other:?}"
                ));
            }
        }
    }
    let build = joined(run_of(&steps[untrusted]).unwrap_or_default());
    for needed in [
        " --read-only \"$AGENT_TEAM_DEPS\" ",
        " --allow-env AGENT_TEAM_DEPS ",
        " AGENT_TEAM_DEPS=\"$AGENT_TEAM_DEPS\" ",
    ] {
        if !build.contains(needed) {
            return Err(format!("guard run lacks `{}`", needed.trim()));
        }
    }
    Ok(())
}

/// The code guard run executes is the caller's build command, from the caller's file (an input
/// of the call, never of the dispatch), run by bash inside the sandbox.
fn build_command_from_caller(wf: &Workflow) -> Result<(), String> {
    let steps = wf.steps(BUILD_TEST)?;
    let untrusted = untrusted_run_index(steps)?;
    let script = joined(run_of(&steps[untrusted]).unwrap_or_default());
    if !script.ends_with(" -- bash -euo pipefail -c \"$BUILD_COMMAND\"") {
        return Err(format!(
            "guard run does not end with the build command: {script}"
        ));
    }
    if steps[untrusted]
        .pointer("/env/BUILD_COMMAND")
        .and_then(Value::as_str)
        != Some("${{ inputs.build-command }}")
    {
        return Err("the build command is not the caller's `build-command` input".into());
    }
    Ok(())
}

/// decide runs whatever happened upstream (a skipped job must fail the decision, not be skipped
/// itself) unless the run was cancelled.
fn decide_runs_unless_cancelled(wf: &Workflow) -> Result<(), String> {
    let cond = condition(wf.job(DECIDE)?.get("if"));
    if cond.as_deref() != Some("!cancelled()") {
        return Err(format!("decide `if` is {cond:?}, not !cancelled()"));
    }
    Ok(())
}

/// publish runs only when decide succeeded with a pass and the run was not cancelled; decide
/// exports its gate output; publications of one task are serialised.
fn publish_only_on_pass(wf: &Workflow) -> Result<(), String> {
    let publish = wf.job(PUBLISH)?;
    let cond = condition(publish.get("if"));
    let expected =
        "!cancelled() && needs.decide.result == 'success' && needs.decide.outputs.gate == 'pass'";
    if cond.as_deref() != Some(expected) {
        return Err(format!("publish `if` is {cond:?}, not `{expected}`"));
    }
    if wf
        .job(DECIDE)?
        .pointer("/outputs/gate")
        .and_then(Value::as_str)
        != Some("${{ steps.decide.outputs.gate }}")
    {
        return Err("decide does not export its decision as output `gate`".into());
    }
    let group = publish
        .pointer("/concurrency/group")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !group.contains("${{ github.event.inputs.task_id }}")
        || as_bool(publish.pointer("/concurrency/cancel-in-progress")) != Some(false)
    {
        return Err("publications of one task are not serialised".into());
    }
    Ok(())
}

/// `gate decide` writes its JSON decision and `gate=pass|fail` to GITHUB_OUTPUT over exactly its
/// job's needs (decide: guard and build-test; publish, deciding again for the check run: the
/// three), and the next step refuses anything but `pass` read from that output.
fn gate_decision_wired(wf: &Workflow) -> Result<(), String> {
    for (job, require) in [
        (DECIDE, " --require guard,build-test "),
        (PUBLISH, " --require guard,build-test,decide "),
    ] {
        let steps = wf.steps(job)?;
        let decide = index_of(steps, |s| str_of(s, "id") == Some("decide"))
            .ok_or_else(|| format!("{job} has no `decide` step"))?;
        let step = &steps[decide];
        let script = joined(run_of(step).unwrap_or_default());
        for needed in [
            "/opt/agent-team/bin/gate decide --needs \"$NEEDS_JSON\" ",
            require,
            " --github-output \"$GITHUB_OUTPUT\" ",
            " --format json > \"$RUNNER_TEMP/agent-team/decision.json\"",
        ] {
            if !script.contains(needed) {
                return Err(format!("{job}: gate decide lacks `{}`", needed.trim()));
            }
        }
        if step.pointer("/env/NEEDS_JSON").and_then(Value::as_str) != Some("${{ toJSON(needs) }}") {
            return Err(format!("{job}: gate decide does not read toJSON(needs)"));
        }
        let next = steps
            .get(decide + 1)
            .ok_or_else(|| format!("{job}: nothing follows gate decide"))?;
        let env = next.get("env").and_then(Value::as_object);
        let reads_gate = env.is_some_and(|env| {
            env.iter().any(|(name, value)| {
                value.as_str() == Some("${{ steps.decide.outputs.gate }}")
                    && run_of(next).is_some_and(|r| {
                        r.contains(&format!("if [[ \"${name}\" != \"pass\" ]]; then"))
                            && r.contains("exit 1")
                    })
            })
        });
        if !reads_gate {
            return Err(format!(
                "{job}: the step after gate decide does not refuse unless steps.decide.outputs.gate is pass"
            ));
        }
    }
    Ok(())
}

/// The publication is `gate publish-plan`'s document as it is, performed by `gate publish` and
/// nothing else: the plan is made for this repository, branch and base from the trusted
/// checkout; `gate publish` reads that very plan and the decision, is told the same repository,
/// branch, base and base branch (it refuses a plan for anything else), gets the App token as
/// `GH_TOKEN` (the only variable it reads a token from), runs after the token is minted and
/// cannot fail silently; and no other step writes to GitHub (no `gh api` mutation, GraphQL or
/// POST/PATCH/PUT) but the token's revocation, nor calls out once the token exists.
fn publication_from_plan(wf: &Workflow) -> Result<(), String> {
    let steps = wf.steps(PUBLISH)?;
    let plan = steps
        .iter()
        .find_map(|s| run_of(s).filter(|r| r.contains("/gate publish-plan ")))
        .map(joined)
        .ok_or("publish does not run gate publish-plan")?;
    for needed in [
        " --repo trusted ",
        " --base \"$BASE_SHA\" ",
        " --branch \"agent-team/$TASK_ID\" ",
        " --base-branch \"$DEFAULT_BRANCH\" ",
        " --repository \"$GITHUB_REPOSITORY\" ",
        " --out \"$RUNNER_TEMP/agent-team/plan.json\"",
    ] {
        if !plan.contains(needed) {
            return Err(format!("gate publish-plan lacks `{}`", needed.trim()));
        }
    }
    let publish = index_of(steps, |s| run_contains(s, "/gate publish "))
        .ok_or("publish does not run gate publish")?;
    let step = &steps[publish];
    let script = joined(run_of(step).unwrap_or_default());
    for needed in [
        " --plan \"$RUNNER_TEMP/agent-team/plan.json\" ",
        " --repository \"$GITHUB_REPOSITORY\" ",
        " --branch \"agent-team/$TASK_ID\" ",
        " --base \"$BASE_SHA\" ",
        " --base-branch \"$DEFAULT_BRANCH\" ",
        " --decision \"$RUNNER_TEMP/agent-team/decision.json\" ",
    ] {
        if !script.contains(needed) {
            return Err(format!("gate publish lacks `{}`", needed.trim()));
        }
    }
    let mint = index_of(steps, |s| uses_action(s, "actions/create-github-app-token"))
        .ok_or("publish mints no App token")?;
    let id = str_of(&steps[mint], "id").ok_or("the App token step has no id")?;
    let expected_env = format!("${{{{ steps.{id}.outputs.token }}}}");
    if publish < mint
        || step.pointer("/env/GH_TOKEN").and_then(Value::as_str) != Some(&expected_env)
    {
        return Err("gate publish does not get the App token as GH_TOKEN".into());
    }
    if step.get("if").is_some() || as_bool(step.get("continue-on-error")).unwrap_or(false) {
        return Err("gate publish is conditional or may fail without failing the job".into());
    }
    if step
        .get("continue-on-error")
        .is_some_and(|v| !matches!(v, Value::Bool(false)))
    {
        return Err("gate publish's continue-on-error is not plainly false".into());
    }
    for (at, other) in steps.iter().enumerate() {
        let Some(script) = run_of(other) else {
            continue;
        };
        let revocation =
            at == steps.len() - 1 && joined(script) == "gh api --method DELETE /installation/token";
        if revocation {
            continue;
        }
        for line in script.replace("\\\n", " ").lines() {
            // Before the token exists, the install step downloads the release (hash-checked).
            if at > mint && (line.contains("curl") || line.contains("wget")) {
                return Err(format!("publish calls out with `{}`", line.trim()));
            }
            if !line.contains("gh api") || line.contains("--method GET") {
                continue;
            }
            // Without --method, gh sends GET unless a field or an input is given.
            let writes = [
                "graphql",
                "--method",
                " -X",
                " -f ",
                " -F ",
                "--field",
                "--raw-field",
                "--input",
            ]
            .iter()
            .find(|w| line.contains(*w));
            if let Some(write) = writes {
                return Err(format!(
                    "a step other than gate publish writes to GitHub (`gh api ... {}`)",
                    write.trim()
                ));
            }
        }
    }
    Ok(())
}

/// The verdict the gate computed itself reaches `gate publish`, which titles the check run with
/// the protected files and labels the pull request (tested against the stand-in); the step
/// surfaces the count as a warning.
fn protected_files_surfaced(wf: &Workflow) -> Result<(), String> {
    let steps = wf.steps(PUBLISH)?;
    let verdict = "\"$RUNNER_TEMP/agent-team/verdict.json\"";
    let plan = steps
        .iter()
        .find_map(|s| run_of(s).filter(|r| r.contains("/gate publish-plan ")))
        .map(joined)
        .ok_or("publish does not run gate publish-plan")?;
    if !plan.contains(&format!("--verdict-out {verdict}")) {
        return Err("gate publish-plan does not write the verdict it computed".into());
    }
    let publish = steps
        .iter()
        .find_map(|s| run_of(s).filter(|r| r.contains("/gate publish ")))
        .map(joined)
        .ok_or("publish does not run gate publish")?;
    if !publish.contains(&format!("--verdict {verdict}")) {
        return Err("gate publish does not get the gate's verdict".into());
    }
    if !publish.contains("jq -er '.protected_files' \"$result\"") {
        return Err("the publication step does not surface the protected files".into());
    }
    Ok(())
}

/// decide and publish check out only the dispatched commit and never apply the patch.
fn no_head_checkout_downstream(wf: &Workflow) -> Result<(), String> {
    for job in [DECIDE, PUBLISH] {
        for step in wf.steps(job)? {
            if uses_action(step, "actions/checkout") {
                for key in ["ref", "repository"] {
                    if with_of(step, key).is_some() {
                        return Err(format!("{job}: a checkout sets `{key}`"));
                    }
                }
            }
            let Some(script) = run_of(step) else { continue };
            for (program, subcommand) in commands(script) {
                let forbidden = match program.as_str() {
                    "git" => [
                        "apply",
                        "am",
                        "checkout",
                        "switch",
                        "restore",
                        "reset",
                        "pull",
                        "fetch",
                        "merge",
                        "rebase",
                        "cherry-pick",
                        "worktree",
                        "stash",
                    ]
                    .contains(&subcommand.as_str()),
                    "guard" => subcommand == "apply" || subcommand == "run",
                    "patch" => true,
                    _ => false,
                };
                if forbidden {
                    return Err(format!("{job} runs `{program} {subcommand}`"));
                }
            }
        }
    }
    Ok(())
}

/// decide and publish read nothing build-test could have written: no artifact, no cache.
fn no_artifact_read_downstream(wf: &Workflow) -> Result<(), String> {
    for job in [DECIDE, PUBLISH] {
        for step in wf.steps(job)? {
            let uses = uses_of(step).unwrap_or("");
            if uses.starts_with("actions/download-artifact") || uses.starts_with("actions/cache") {
                return Err(format!("{job} uses `{uses}`"));
            }
            if run_contains(step, "gh run download") || run_contains(step, "/artifacts") {
                return Err(format!("{job} reads an artifact"));
            }
        }
    }
    Ok(())
}

/// One App token, minted in publish only, for this repository, with exactly contents, pull
/// requests and checks write, and no workflows permission.
fn app_token_scoped(wf: &Workflow) -> Result<(), String> {
    let minted: Vec<(&str, &Value)> = wf
        .all_steps()?
        .into_iter()
        .filter(|(_, s)| uses_action(s, "actions/create-github-app-token"))
        .collect();
    let [(job, step)] = minted.as_slice() else {
        return Err(format!("{} App token steps, expected 1", minted.len()));
    };
    if *job != PUBLISH {
        return Err(format!("App token minted in `{job}`"));
    }
    let with = step
        .get("with")
        .and_then(Value::as_object)
        .ok_or("App token step has no inputs")?;
    let permissions: Map<String, Value> = with
        .iter()
        .filter(|(k, _)| k.starts_with("permission-"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let expected = json!({
        "permission-contents": "write",
        "permission-pull-requests": "write",
        "permission-checks": "write",
    });
    if Value::Object(permissions.clone()) != expected {
        return Err(format!(
            "App token permissions are {permissions:?}, expected {expected}"
        ));
    }
    if with.get("owner") != Some(&json!("${{ github.repository_owner }}"))
        || with.get("repositories") != Some(&json!("${{ github.event.repository.name }}"))
    {
        return Err("App token is not scoped to this one repository".into());
    }
    if as_bool(with.get("skip-token-revoke")) == Some(true) {
        return Err("App token skips its own revocation".into());
    }
    Ok(())
}

/// The last step of publish revokes the App token whatever happened before it.
fn app_token_revoked(wf: &Workflow) -> Result<(), String> {
    let steps = wf.steps(PUBLISH)?;
    let mint = index_of(steps, |s| uses_action(s, "actions/create-github-app-token"))
        .ok_or("publish mints no App token")?;
    let id = str_of(&steps[mint], "id").ok_or("the App token step has no id")?;
    let last = steps.last().ok_or("publish has no steps")?;
    let cond = condition(last.get("if")).unwrap_or_default();
    let token_env = last.pointer("/env/GH_TOKEN").and_then(Value::as_str);
    let expected_env = format!("${{{{ steps.{id}.outputs.token }}}}");
    if !cond.starts_with("always()")
        || !run_contains(last, "--method DELETE /installation/token")
        || token_env != Some(expected_env.as_str())
    {
        return Err(
            "the last step of publish is not an always() revocation of the App token".into(),
        );
    }
    Ok(())
}

/// publish verifies the dispatcher's signature with `gate verify-dispatch` over the run's own
/// repository and ref and every signed input (the MAC as dispatched), with the environment's
/// keys, before the App token is minted; the step cannot be skipped or its failure ignored.
fn dispatch_signature_verified(wf: &Workflow) -> Result<(), String> {
    let steps = wf.steps(PUBLISH)?;
    let verify = index_of(steps, |s| run_contains(s, "/gate verify-dispatch "))
        .ok_or("publish does not run gate verify-dispatch")?;
    let mint = index_of(steps, |s| uses_action(s, "actions/create-github-app-token"))
        .ok_or("publish mints no App token")?;
    if verify > mint {
        return Err("the dispatch signature is verified after the App token is minted".into());
    }
    let step = &steps[verify];
    let script = joined(run_of(step).unwrap_or_default());
    for needed in [
        " --repository=\"$GITHUB_REPOSITORY\" ",
        " --ref=\"$GITHUB_REF\" ",
        " --task-id=\"$TASK_ID\" ",
        " --base=\"$BASE_SHA\" ",
        " --diff-sha256=\"$EXPECTED_DIFF_SHA256\" ",
        " --declared-scope=\"$DECLARED_SCOPE\" ",
        " --mac=\"$DISPATCH_MAC\"",
    ] {
        if !script.contains(needed) {
            return Err(format!("gate verify-dispatch lacks `{}`", needed.trim()));
        }
    }
    for (name, value) in [
        (
            "AGENT_TEAM_DISPATCH_KEY",
            "${{ secrets.AGENT_TEAM_DISPATCH_KEY }}",
        ),
        (
            "AGENT_TEAM_DISPATCH_KEY_PREVIOUS",
            "${{ secrets.AGENT_TEAM_DISPATCH_KEY_PREVIOUS }}",
        ),
        ("DISPATCH_MAC", "${{ github.event.inputs.dispatch_mac }}"),
    ] {
        if step
            .pointer(&format!("/env/{name}"))
            .and_then(Value::as_str)
            != Some(value)
        {
            return Err(format!(
                "the verification step does not set {name} to `{value}`"
            ));
        }
    }
    if step.get("if").is_some() || step.get("continue-on-error").is_some() {
        return Err(
            "the verification step is conditional or may fail without stopping the job".into(),
        );
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Callers

fn caller_job(wf: &Workflow) -> Result<(&String, &Value), String> {
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
fn caller_dispatch_only(wf: &Workflow) -> Result<(), String> {
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

/// The run is named for its task: the dispatcher finds the run by this name when GitHub does
/// not return it.
fn caller_run_name(wf: &Workflow) -> Result<(), String> {
    let run_name = str_of(&wf.doc, "run-name");
    if run_name != Some("agent-team-apply ${{ inputs.task_id }}") {
        return Err(format!("run-name is {run_name:?}"));
    }
    Ok(())
}

/// One job: the reusable workflow (this commit's, or the published one pinned by full commit
/// SHA), granted `contents: read` and nothing else, with no steps of its own.
fn caller_calls_the_reusable_workflow(wf: &Workflow) -> Result<(), String> {
    let (name, job) = caller_job(wf)?;
    let uses = str_of(job, "uses").ok_or_else(|| format!("job `{name}` calls no workflow"))?;
    let pinned = uses
        .strip_prefix(REUSABLE_REF)
        .and_then(|rest| rest.strip_prefix('@'))
        .is_some_and(|sha| is_lower_hex(sha, 40));
    if uses != LOCAL_REUSABLE_REF && !pinned {
        return Err(format!("job `{name}` calls `{uses}`"));
    }
    if job.get("permissions") != Some(&json!({ "contents": "read" })) {
        return Err(format!(
            "job `{name}` is not granted exactly contents: read"
        ));
    }
    if job.get("steps").is_some() {
        return Err(format!("job `{name}` has steps of its own"));
    }
    Ok(())
}

/// The publication's secrets are passed by name, each as itself, and nothing else: never
/// `secrets: inherit` (every secret of the repository).
fn caller_passes_secrets_by_name(wf: &Workflow) -> Result<(), String> {
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
fn caller_configures_known_inputs(wf: &Workflow) -> Result<(), String> {
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
fn example_pins_the_release(wf: &Workflow) -> Result<(), String> {
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

fn example_within_25_lines(wf: &Workflow) -> Result<(), String> {
    let lines = wf.raw.lines().count();
    if lines > MAX_CALLER_LINES {
        return Err(format!("{lines} lines, more than {MAX_CALLER_LINES}"));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// CI

fn ci_triggers(wf: &Workflow) -> Result<(), String> {
    let on = wf
        .doc
        .get("on")
        .and_then(Value::as_object)
        .ok_or("`on` is not a mapping")?;
    let allowed = ["push", "pull_request", "workflow_dispatch", "merge_group"];
    for trigger in on.keys() {
        if !allowed.contains(&trigger.as_str()) {
            return Err(format!("CI trigger `{trigger}` is not allowed"));
        }
    }
    Ok(())
}

fn ci_job_permissions_read(wf: &Workflow) -> Result<(), String> {
    for (name, job) in wf.jobs()? {
        if job.get("permissions") != Some(&json!({ "contents": "read" })) {
            return Err(format!(
                "CI job `{name}` permissions are not {{contents: read}}"
            ));
        }
    }
    Ok(())
}

/// Exactly what the README says CI runs.
fn ci_runs_the_checks(wf: &Workflow) -> Result<(), String> {
    let scripts: Vec<String> = wf
        .all_steps()?
        .into_iter()
        .filter_map(|(_, s)| run_of(s))
        .map(joined)
        .collect();
    for needed in [
        "cargo fmt --all -- --check",
        "cargo clippy --workspace --all-targets --locked -- -D warnings",
        "cargo test --workspace --locked",
        "RUSTFLAGS=\"-C target-feature=+crt-static\" cargo build --release --locked --workspace --target x86_64-unknown-linux-gnu --bin guard --bin gate --bin report",
        "MAX_BYTES=$((4000000 + libc_overhead)) bash .ci/static-check.sh target/x86_64-unknown-linux-gnu/release",
        "bash .ci/release-build.sh \"$TARGET\" - dist",
        "bash .ci/fuzz.sh 20",
        "cargo deny check advisories bans licenses sources",
        "bash .ci/zizmor.sh",
    ] {
        if !scripts.iter().any(|s| s.contains(needed)) {
            return Err(format!("CI does not run `{needed}`"));
        }
    }
    Ok(())
}

/// The test suite runs as root, as the product's build-test starts guard run, so that the
/// sandbox and containment tests build the real namespaces on a hosted runner.
fn ci_tests_as_root(wf: &Workflow) -> Result<(), String> {
    let (job, step) = wf
        .all_steps()?
        .into_iter()
        .find(|(_, s)| run_contains(s, "cargo test --workspace --locked"))
        .ok_or("CI runs no test suite")?;
    let script = joined(run_of(step).unwrap_or_default());
    if !script.starts_with("sudo --preserve-env env PATH=\"$PATH\" ") {
        return Err(format!(
            "job `{job}` does not run the tests as root: {script}"
        ));
    }
    if wf.job(job)?.get("runs-on") != Some(&json!("ubuntu-24.04")) {
        return Err(format!(
            "job `{job}` is not on a hosted ubuntu-24.04 runner"
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Release

fn release_on_tags_only(wf: &Workflow) -> Result<(), String> {
    let on = wf.doc.get("on");
    if on != Some(&json!({ "push": { "tags": ["v*"] } })) {
        return Err(format!("release triggers are {on:?}, not push of v* tags"));
    }
    no_dangerous_trigger_text(wf)
}

/// The builds read; the attestation alone mints an OIDC token and writes attestations; the
/// publication alone writes contents.
fn release_job_permissions(wf: &Workflow) -> Result<(), String> {
    let expected = [
        ("build", json!({ "contents": "read" })),
        (
            "attest",
            json!({ "contents": "read", "id-token": "write", "attestations": "write" }),
        ),
        ("publish", json!({ "contents": "write" })),
    ];
    let names: BTreeSet<&str> = wf.jobs()?.keys().map(String::as_str).collect();
    let expected_names: BTreeSet<&str> = expected.iter().map(|(n, _)| *n).collect();
    if names != expected_names {
        return Err(format!("jobs are {names:?}, expected {expected_names:?}"));
    }
    for (name, permissions) in expected {
        let actual = wf.job(name)?.get("permissions");
        if actual != Some(&permissions) {
            return Err(format!(
                "job `{name}` permissions are {actual:?}, expected {permissions}"
            ));
        }
    }
    Ok(())
}

/// Both musl targets, built by the checked script (static, at most 4 MB, they run), with the
/// cross linker installed from hash-pinned wheels.
fn release_builds_static_musl(wf: &Workflow) -> Result<(), String> {
    let job = wf.job("build")?;
    let targets = job.pointer("/strategy/matrix/target");
    if targets
        != Some(&json!([
            "x86_64-unknown-linux-musl",
            "aarch64-unknown-linux-musl"
        ]))
    {
        return Err(format!("build targets are {targets:?}"));
    }
    let steps = wf.steps("build")?;
    let build = steps
        .iter()
        .find(|s| run_contains(s, ".ci/release-build.sh"))
        .ok_or("the release is not built by .ci/release-build.sh")?;
    if run_of(build).map(str::trim)
        != Some("bash .ci/release-build.sh \"$TARGET\" \"$VERSION\" dist")
        || build.pointer("/env/TARGET").and_then(Value::as_str) != Some("${{ matrix.target }}")
        || build.pointer("/env/VERSION").and_then(Value::as_str) != Some("${{ github.ref_name }}")
    {
        return Err(
            "the build step is not `.ci/release-build.sh` on the matrix target and tag".into(),
        );
    }
    if !steps.iter().any(|s| {
        run_contains(
            s,
            "pip\" install --quiet --require-hashes --no-deps -r .ci/requirements.txt",
        )
    }) {
        return Err("the cross linker is not installed from hash-pinned requirements".into());
    }
    Ok(())
}

/// SHA256SUMS is written over the built assets, attested, and checked again before the very
/// files it names are published with it.
fn release_attests_what_it_publishes(wf: &Workflow) -> Result<(), String> {
    let attest = wf.steps("attest")?;
    let sums = index_of(attest, |s| {
        run_contains(s, "sha256sum -- *.tar.gz > SHA256SUMS")
    })
    .ok_or("attest does not write SHA256SUMS")?;
    let provenance = index_of(attest, |s| {
        uses_action(s, "actions/attest-build-provenance")
            && with_of(s, "subject-checksums").and_then(Value::as_str) == Some("dist/SHA256SUMS")
    })
    .ok_or("attest does not attest every asset named in SHA256SUMS")?;
    if sums > provenance {
        return Err("the provenance is attested before SHA256SUMS is written".into());
    }
    let publish = wf.steps("publish")?;
    let check = index_of(publish, |s| {
        run_contains(s, "sha256sum --check --strict SHA256SUMS")
    })
    .ok_or("publish does not check the assets against SHA256SUMS")?;
    let create = index_of(publish, |s| {
        run_contains(
            s,
            "gh release create \"$TAG\" dist/*.tar.gz dist/SHA256SUMS ",
        ) && run_contains(s, "--verify-tag")
    })
    .ok_or("publish does not create the release from the checked assets")?;
    if check > create {
        return Err("the assets are published before they are checked".into());
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Tests

fn failing(wf: &Workflow, invariants: &[(&'static str, Invariant)]) -> Vec<(&'static str, String)> {
    invariants
        .iter()
        .filter_map(|(id, check)| check(wf).err().map(|e| (*id, e)))
        .collect()
}

#[test]
fn apply_workflow_holds_every_invariant() {
    let wf = Workflow::load(APPLY_WORKFLOW);
    let failures = failing(&wf, APPLY_INVARIANTS);
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn callers_hold_every_invariant() {
    for file in std::iter::once(OWN_CALLER).chain(EXAMPLE_CALLERS) {
        let wf = Workflow::load(file);
        let failures = failing(&wf, CALLER_INVARIANTS);
        assert!(failures.is_empty(), "{file}: {failures:#?}");
    }
    for file in EXAMPLE_CALLERS {
        let wf = Workflow::load(file);
        let failures = failing(&wf, EXAMPLE_INVARIANTS);
        assert!(failures.is_empty(), "{file}: {failures:#?}");
    }
}

#[test]
fn ci_workflow_holds_every_invariant() {
    let wf = Workflow::load(CI_WORKFLOW);
    let failures = failing(&wf, CI_INVARIANTS);
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn release_workflow_holds_every_invariant() {
    let wf = Workflow::load(RELEASE_WORKFLOW);
    let failures = failing(&wf, RELEASE_INVARIANTS);
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn invariant_ids_are_unique() {
    for list in [
        APPLY_INVARIANTS,
        CALLER_INVARIANTS,
        EXAMPLE_INVARIANTS,
        CI_INVARIANTS,
        RELEASE_INVARIANTS,
    ] {
        let ids: BTreeSet<&str> = list.iter().map(|(id, _)| *id).collect();
        assert_eq!(ids.len(), list.len());
    }
}

#[test]
fn duplicate_keys_are_rejected() {
    // GitHub rejects them too; a parser that silently kept one would let a test see another document.
    let doc = "permissions: {}\npermissions: write-all\n";
    assert!(Workflow::parse(doc).is_err());
}

/// Every workflow file is one of those the invariants above check, and zizmor audits all of them
/// and every example caller (`.ci/zizmor.sh`, run by `.ci/run` and CI).
#[test]
fn every_workflow_is_checked_and_audited() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let listed = |dir: &str| -> BTreeSet<String> {
        std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".yml") || n.ends_with(".yaml"))
            .map(|n| format!("{dir}/{n}"))
            .collect()
    };
    let checked: BTreeSet<String> = [APPLY_WORKFLOW, OWN_CALLER, CI_WORKFLOW, RELEASE_WORKFLOW]
        .into_iter()
        .chain(EXAMPLE_CALLERS)
        .map(str::to_owned)
        .collect();
    let present: BTreeSet<String> = listed(".github/workflows")
        .into_iter()
        .chain(listed("examples"))
        .collect();
    assert_eq!(present, checked);
    let zizmor = Workflow::read(".ci/zizmor.sh");
    assert!(
        zizmor.contains("inputs=(\"$root/.github/workflows/\" \"$root\"/examples/*.yml)"),
        ".ci/zizmor.sh does not audit the workflows and the examples"
    );
    assert_eq!(zizmor.matches("\"${inputs[@]}\"").count(), 2);
}

#[test]
fn every_example_policy_loads() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut seen = 0;
    for entry in std::fs::read_dir(root.join("examples/policy")).unwrap() {
        let path = entry.unwrap().path();
        guard::policy::Policy::load(Some(&path))
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        seen += 1;
    }
    let own = root.join(".github/agent-team-policy.yml");
    guard::policy::Policy::load(Some(&own)).unwrap();
    assert_eq!(seen, 2);
}

// -- text mutations ---------------------------------------------------------------------------

/// Byte range of a job's block: from its `  name:` line to the next key at indentation 0 or 2.
fn job_span(text: &str, job: &str) -> (usize, usize) {
    let header = format!("\n  {job}:\n");
    let start = text
        .find(&header)
        .unwrap_or_else(|| panic!("no job `{job}`"))
        + 1;
    let mut offset = start + header.len() - 1;
    for line in text[offset..].split_inclusive('\n') {
        let indent = line.len() - line.trim_start_matches(' ').len();
        let content = line.trim();
        if !content.is_empty() && !content.starts_with('#') && indent <= 2 {
            return (start, offset);
        }
        offset += line.len();
    }
    (start, text.len())
}

/// Replace the only occurrence of `from` in the whole text.
fn replace_once(text: &str, from: &str, to: &str) -> String {
    assert_eq!(text.matches(from).count(), 1, "`{from}` is not unique");
    text.replacen(from, to, 1)
}

/// Replace the first occurrence of `from` inside one job's block.
fn replace_in_job(text: &str, job: &str, from: &str, to: &str) -> String {
    let (start, end) = job_span(text, job);
    let block = &text[start..end];
    assert!(block.contains(from), "`{from}` not in job `{job}`");
    format!(
        "{}{}{}",
        &text[..start],
        block.replacen(from, to, 1),
        &text[end..]
    )
}

/// Swap the first two steps of a job (with the comments written above each).
fn swap_first_two_steps(text: &str, job: &str) -> String {
    let (start, end) = job_span(text, job);
    let block = &text[start..end];
    let steps_at = block.find("    steps:\n").expect("job has steps") + "    steps:\n".len();
    let lines: Vec<&str> = block[steps_at..].split_inclusive('\n').collect();
    let mut starts = Vec::new();
    let mut previous_was_comment = false;
    for (i, line) in lines.iter().enumerate() {
        let is_step_level = line.starts_with("      ") && !line.starts_with("       ");
        let is_comment = is_step_level && line.trim_start().starts_with('#');
        let is_item = is_step_level && line.trim_start().starts_with("- ");
        if (is_comment || is_item) && !previous_was_comment {
            starts.push(i);
        }
        previous_was_comment = is_comment;
    }
    assert!(starts.len() >= 2, "job `{job}` has fewer than two steps");
    let first = lines[starts[0]..starts[1]].concat();
    let second_end = starts.get(2).copied().unwrap_or(lines.len());
    let second = lines[starts[1]..second_end].concat();
    let rest = lines[second_end..].concat();
    let head = lines[..starts[0]].concat();
    format!(
        "{}{}{head}{second}{first}{rest}{}",
        &text[..start],
        &block[..steps_at],
        &text[end..]
    )
}

struct Mutation {
    description: &'static str,
    /// The invariants this mutation must break, and no others.
    breaks: &'static [&'static str],
    apply: fn(&str) -> String,
}

/// Replace the one line that starts with `prefix` (after its indentation is kept) by `line`.
fn replace_line(text: &str, prefix: &str, line: &str) -> String {
    let matching: Vec<&str> = text.lines().filter(|l| l.starts_with(prefix)).collect();
    assert_eq!(
        matching.len(),
        1,
        "`{prefix}` does not start exactly one line"
    );
    text.replacen(matching[0], line, 1)
}

const CHECKOUT_PIN: &str = "actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1";

const APPLY_MUTATIONS: &[Mutation] = &[
    Mutation {
        description: "let the reusable workflow be dispatched directly",
        breaks: &["reusable-only"],
        apply: |t| {
            replace_once(
                t,
                "on:\n  workflow_call:\n",
                "on:\n  workflow_dispatch:\n  workflow_call:\n",
            )
        },
    },
    Mutation {
        description: "add a pull_request_target trigger",
        breaks: &["reusable-only"],
        apply: |t| {
            replace_once(
                t,
                "on:\n  workflow_call:\n",
                "on:\n  pull_request_target:\n  workflow_call:\n",
            )
        },
    },
    Mutation {
        description: "let the caller set the task id",
        breaks: &["call-interface"],
        apply: |t| {
            replace_once(
                t,
                "    inputs:\n      build-command:\n",
                "    inputs:\n      task_id:\n        type: string\n        required: true\n      build-command:\n",
            )
        },
    },
    Mutation {
        description: "require a secret the caller may not hold",
        breaks: &["call-interface"],
        apply: |t| {
            replace_once(
                t,
                "      AGENT_TEAM_DISPATCH_KEY:\n        required: false\n",
                "      AGENT_TEAM_DISPATCH_KEY:\n        required: true\n",
            )
        },
    },
    Mutation {
        description: "take the task id from the caller instead of the dispatch event",
        breaks: &["dispatch-inputs-from-event"],
        apply: |t| {
            replace_once(
                t,
                "  TASK_ID: ${{ github.event.inputs.task_id }}\n",
                "  TASK_ID: ${{ inputs.task_id }}\n",
            )
        },
    },
    Mutation {
        description: "verify a MAC the caller passes instead of the dispatched one",
        breaks: &["dispatch-inputs-from-event", "dispatch-signature-verified"],
        apply: |t| {
            replace_once(
                t,
                "DISPATCH_MAC: ${{ github.event.inputs.dispatch_mac }}",
                "DISPATCH_MAC: ${{ inputs.dispatch_mac }}",
            )
        },
    },
    Mutation {
        description: "grant write-all at the top",
        breaks: &["top-level-permissions-empty"],
        apply: |t| replace_once(t, "\npermissions: {}\n", "\npermissions: write-all\n"),
    },
    Mutation {
        description: "give build-test contents: write",
        breaks: &["job-permissions-exact"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "      contents: read\n",
                "      contents: write\n",
            )
        },
    },
    Mutation {
        description: "give decide a token that can read the repository",
        breaks: &["job-permissions-exact"],
        apply: |t| {
            replace_in_job(
                t,
                DECIDE,
                "    permissions: {}\n",
                "    permissions:\n      contents: read\n",
            )
        },
    },
    Mutation {
        description: "give publish pull-requests: write on the workflow token",
        breaks: &["job-permissions-exact"],
        apply: |t| {
            replace_in_job(
                t,
                PUBLISH,
                "      contents: read\n",
                "      contents: read\n      pull-requests: write\n",
            )
        },
    },
    Mutation {
        description: "let build-test start without guard",
        breaks: &["needs-chain"],
        apply: |t| replace_in_job(t, BUILD_TEST, "    needs: [guard]\n", ""),
    },
    Mutation {
        description: "let decide ignore guard",
        breaks: &["needs-chain"],
        apply: |t| {
            replace_in_job(
                t,
                DECIDE,
                "needs: [guard, build-test]",
                "needs: [build-test]",
            )
        },
    },
    Mutation {
        description: "let publish start without decide",
        breaks: &["needs-chain"],
        apply: |t| {
            replace_in_job(
                t,
                PUBLISH,
                "needs: [guard, build-test, decide]",
                "needs: [guard, build-test]",
            )
        },
    },
    Mutation {
        description: "pin checkout to a moving tag",
        breaks: &["actions-pinned"],
        apply: |t| replace_in_job(t, GUARD, CHECKOUT_PIN, "actions/checkout@v4"),
    },
    Mutation {
        description: "drop the version comment of a pin",
        breaks: &["actions-pinned"],
        apply: |t| {
            replace_once(
                t,
                "@1b10c78c7865c340bc4f6099eb2f838309f1e8c3 # v3.1.1",
                "@1b10c78c7865c340bc4f6099eb2f838309f1e8c3",
            )
        },
    },
    Mutation {
        description: "pin upload-artifact to an unverified commit",
        breaks: &["actions-pinned"],
        apply: |t| {
            replace_once(
                t,
                "bbbca2ddaa5d8feaa63e36b76fdaad77386f024f",
                "0123456789abcdef0123456789abcdef01234567",
            )
        },
    },
    Mutation {
        description: "let a checkout persist its credentials",
        breaks: &["checkout-no-persisted-credentials"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "persist-credentials: false",
                "persist-credentials: true",
            )
        },
    },
    Mutation {
        description: "drop persist-credentials from publish's checkout",
        breaks: &["checkout-no-persisted-credentials"],
        apply: |t| replace_in_job(t, PUBLISH, "          persist-credentials: false\n", ""),
    },
    Mutation {
        description: "interpolate an input into a script",
        breaks: &["no-expression-in-run"],
        apply: |t| {
            replace_in_job(
                t,
                GUARD,
                "          verdict=\"$RUNNER_TEMP/agent-team/verdict.json\"\n",
                "          verdict=\"$RUNNER_TEMP/agent-team/verdict.json\"\n          echo \"${{ inputs.runner }}\"\n",
            )
        },
    },
    Mutation {
        description: "interpolate the needs JSON into decide's script",
        breaks: &["no-expression-in-run", "gate-decision-wired"],
        apply: |t| {
            replace_in_job(
                t,
                DECIDE,
                "--needs \"$NEEDS_JSON\"",
                "--needs '${{ toJSON(needs) }}'",
            )
        },
    },
    Mutation {
        description: "reference a secret in guard",
        breaks: &["secrets-only-in-publish"],
        apply: |t| {
            replace_in_job(
                t,
                GUARD,
                "GH_TOKEN: ${{ github.token }}",
                "GH_TOKEN: ${{ secrets.X }}",
            )
        },
    },
    Mutation {
        description: "expose a secret to every job through workflow env",
        breaks: &["secrets-only-in-publish"],
        apply: |t| {
            replace_once(
                t,
                "  DIFF_REF: ${{ github.event.inputs.diff_ref }}\n",
                "  DIFF_REF: ${{ github.event.inputs.diff_ref }}\n  KEY: ${{ secrets.AGENT_TEAM_APP_PRIVATE_KEY }}\n",
            )
        },
    },
    Mutation {
        description: "ask the environment's reviewers before the decision",
        breaks: &["environment-only-on-publish"],
        apply: |t| {
            replace_in_job(
                t,
                DECIDE,
                "    permissions: {}\n",
                "    permissions: {}\n    environment: agent-team-publish\n",
            )
        },
    },
    Mutation {
        description: "publish without the environment",
        breaks: &["environment-only-on-publish"],
        apply: |t| replace_in_job(t, PUBLISH, "    environment: agent-team-publish\n", ""),
    },
    Mutation {
        description: "turn on setup-python's cache in build-test",
        breaks: &["no-cache"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "      - name: Prove that egress is blocked\n",
                "      - name: Set up Python\n        uses: actions/setup-python@5fda3b95a4ea91299a34e894583c3862153e4b97 # v7.0.0\n        with:\n          cache: pip\n\n      - name: Prove that egress is blocked\n",
            )
        },
    },
    Mutation {
        description: "add actions/cache",
        breaks: &["no-cache", "actions-pinned"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "      - name: Prove that egress is blocked\n",
                "      - name: Cache\n        uses: actions/cache@0123456789abcdef0123456789abcdef01234567 # v4.2.0\n        with:\n          path: ~/.cargo\n          key: cargo\n\n      - name: Prove that egress is blocked\n",
            )
        },
    },
    Mutation {
        description: "validate the inputs before installing the binaries that validate them",
        breaks: &["binaries-installed-first", "inputs-validated-first"],
        apply: |t| swap_first_two_steps(t, DECIDE),
    },
    Mutation {
        description: "install the binaries without checking their hash",
        breaks: &["binaries-installed-first", "every-download-hash-checked"],
        apply: |t| {
            replace_in_job(
                t,
                GUARD,
                "          if ! echo \"$sha256  $dir/asset.tar.gz\" | sha256sum --check --strict --status; then\n",
                "          if ! true; then\n",
            )
        },
    },
    Mutation {
        description: "install the binaries where the runner user can replace them",
        breaks: &["binaries-installed-first"],
        apply: |t| {
            replace_in_job(
                t,
                PUBLISH,
                "          sudo install -o root -g root -m 0555 ",
                "          install -m 0555 ",
            )
        },
    },
    Mutation {
        description: "let the release download fall back to plain http",
        breaks: &["binaries-installed-first"],
        apply: |t| replace_in_job(t, BUILD_TEST, "--proto '=https' ", ""),
    },
    Mutation {
        description: "pin assets of another version than the release URL",
        breaks: &["release-pinned"],
        apply: |t| {
            replace_once(
                t,
                "  AGENT_TEAM_ASSET_ARM64: agent-team-apply-v0.1.0-",
                "  AGENT_TEAM_ASSET_ARM64: agent-team-apply-v0.0.9-",
            )
        },
    },
    Mutation {
        description: "pin a truncated hash",
        breaks: &["release-pinned"],
        apply: |t| {
            replace_line(
                t,
                "  AGENT_TEAM_SHA256_X64: ",
                "  AGENT_TEAM_SHA256_X64: \"0123456789abcdef\"",
            )
        },
    },
    Mutation {
        description: "let a job go on when its inputs are invalid",
        breaks: &["inputs-validated-first"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "        run: /opt/agent-team/bin/guard inputs\n",
                "        run: /opt/agent-team/bin/guard inputs || true\n",
            )
        },
    },
    Mutation {
        description: "download a tool without checking it",
        breaks: &["every-download-hash-checked"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "      - name: Prove that egress is blocked\n",
                "      - name: Fetch a tool\n        run: curl --fail -sSL -o \"$RUNNER_TEMP/tool\" https://example.com/tool\n\n      - name: Prove that egress is blocked\n",
            )
        },
    },
    Mutation {
        description: "trust the diff bytes in publish without re-hashing",
        breaks: &["diff-rehashed-in-every-job", "every-download-hash-checked"],
        apply: |t| {
            replace_in_job(
                t,
                PUBLISH,
                "actual=\"$(sha256sum \"$diff_file\" | cut -d ' ' -f 1)\"",
                "actual=\"$EXPECTED_DIFF_SHA256\"",
            )
        },
    },
    Mutation {
        description: "compile guard in the guard job",
        breaks: &["no-job-compiles"],
        apply: |t| {
            replace_in_job(
                t,
                GUARD,
                "          bin=/opt/agent-team/bin\n          verdict=",
                "          cargo build --release --locked -p guard\n          bin=/opt/agent-team/bin\n          verdict=",
            )
        },
    },
    Mutation {
        description: "run a guard the checkout built",
        breaks: &["no-job-compiles"],
        apply: |t| {
            replace_in_job(
                t,
                GUARD,
                "          \"$bin/guard\" check ",
                "          \"$GITHUB_WORKSPACE/trusted/target/release/guard\" check ",
            )
        },
    },
    Mutation {
        description: "read the policy from the base commit",
        breaks: &["policy-from-trusted-commit"],
        apply: |t| {
            replace_in_job(
                t,
                GUARD,
                "          trusted=\"$GITHUB_WORKSPACE/trusted\"\n",
                "          trusted=\"$GITHUB_WORKSPACE/base\"\n",
            )
        },
    },
    Mutation {
        description: "apply the diff under the default policy only",
        breaks: &["policy-from-trusted-commit"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "--declared-scope \"$DECLARED_SCOPE\" --policy \"$RUNNER_TEMP/agent-team/policy.yml\"",
                "--declared-scope \"$DECLARED_SCOPE\"",
            )
        },
    },
    Mutation {
        description: "ignore what the readiness check found",
        breaks: &["readiness-checked"],
        apply: |t| {
            replace_once(
                t,
                "--format annotations || true\n          fi\n          exit \"$status\"\n\n  build-test:",
                "--format annotations || true\n          fi\n          exit 0\n\n  build-test:",
            )
        },
    },
    Mutation {
        description: "let the readiness step fail without stopping the run",
        breaks: &["readiness-checked"],
        apply: |t| {
            replace_once(
                t,
                "      - name: Check the repository's own workflows (the second execution)\n",
                "      - name: Check the repository's own workflows (the second execution)\n        continue-on-error: true\n",
            )
        },
    },
    Mutation {
        description: "allow every endpoint",
        breaks: &["harden-runner-first"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "            github.com:443\n",
                "            github.com:443\n            *:443\n",
            )
        },
    },
    Mutation {
        description: "put harden-runner in audit mode",
        breaks: &["harden-runner-first"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "egress-policy: block",
                "egress-policy: audit",
            )
        },
    },
    Mutation {
        description: "disable sudo in build-test (guard run could not create its namespaces)",
        breaks: &["harden-runner-first"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "          egress-policy: block\n",
                "          egress-policy: block\n          disable-sudo: true\n",
            )
        },
    },
    Mutation {
        description: "move harden-runner to second place",
        breaks: &["harden-runner-first", "inputs-validated-first"],
        apply: |t| swap_first_two_steps(t, BUILD_TEST),
    },
    Mutation {
        description: "drop the egress probe",
        breaks: &["egress-probed-before-build"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "if curl --silent --max-time 10 --output /dev/null https://example.com/; then",
                "if false; then",
            )
        },
    },
    Mutation {
        description: "skip the tree check after the build",
        breaks: &["build-test-order"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "              --verdict \"$RUNNER_TEMP/agent-team/report/verdict.json\" \\\n",
                "",
            )
        },
    },
    Mutation {
        description: "apply with the scope as one glob instead of the input's rule",
        breaks: &["build-test-order"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "--declared-scope \"$DECLARED_SCOPE\" --policy",
                "--scope \"$DECLARED_SCOPE\" --policy",
            )
        },
    },
    Mutation {
        description: "run guard run without sudo",
        breaks: &["build-sandboxed-under-sudo"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "sudo /usr/bin/env PATH=",
                "/usr/bin/env PATH=",
            )
        },
    },
    Mutation {
        description: "start guard with the runner's primary group (docker)",
        breaks: &["build-sandboxed-under-sudo"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "            /opt/agent-team/bin/guard run ",
                "            /usr/bin/setpriv --reuid=\"$(id -u)\" --regid=\"$(id -g)\" --clear-groups -- /opt/agent-team/bin/guard run ",
            )
        },
    },
    Mutation {
        description: "do not tell guard where the runner's temp directory is (it stays visible)",
        breaks: &["build-sandboxed-under-sudo"],
        apply: |t| replace_in_job(t, BUILD_TEST, " RUNNER_TEMP=\"$RUNNER_TEMP\" ", " "),
    },
    Mutation {
        description: "opt out of guard run's isolation",
        breaks: &["build-sandboxed-under-sudo"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "--max-output 8388608 ",
                "--no-isolation-because \"harden-runner blocks egress\" --max-output 8388608 ",
            )
        },
    },
    Mutation {
        description: "run guard run in the work tree without --repo (.git stays writable)",
        breaks: &["build-sandboxed-under-sudo"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                " run --repo \"$GITHUB_WORKSPACE/work\" \\\n",
                " run \\\n",
            )
        },
    },
    Mutation {
        description: "render the report with a tool from PATH",
        breaks: &["later-steps-out-of-reach"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "          bin=/opt/agent-team/bin\n          if [[ -s",
                "          bin=/opt/agent-team/bin\n          jq . \"$dir/build-test.json\"\n          if [[ -s",
            )
        },
    },
    Mutation {
        description: "upload the work tree",
        breaks: &["later-steps-out-of-reach"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "          path: ${{ runner.temp }}/agent-team/report/\n",
                "          path: ${{ github.workspace }}/work/\n",
            )
        },
    },
    Mutation {
        description: "fetch the dependencies inside the patched tree (reads its .cargo/config.toml)",
        breaks: &["deps-fetched-before-sandbox"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "          cd \"$RUNNER_TEMP/agent-team/fetch\"\n",
                "          cd \"$GITHUB_WORKSPACE/work\"\n",
            )
        },
    },
    Mutation {
        description: "let npm run lifecycle scripts during the fetch",
        breaks: &["deps-fetched-before-sandbox"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "          npm_config_ignore_scripts: \"true\"\n",
                "          npm_config_ignore_scripts: \"false\"\n",
            )
        },
    },
    Mutation {
        description: "let the build write its fetched dependencies",
        breaks: &["deps-fetched-before-sandbox"],
        apply: |t| replace_in_job(t, BUILD_TEST, " --read-only \"$AGENT_TEAM_DEPS\"", ""),
    },
    Mutation {
        description: "fetch as root",
        breaks: &["deps-fetched-before-sandbox"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "          bash -euo pipefail -c \"$FETCH_COMMAND\"\n",
                "          sudo bash -euo pipefail -c \"$FETCH_COMMAND\"\n",
            )
        },
    },
    Mutation {
        description: "let the dispatch choose what the build runs",
        breaks: &["build-command-from-caller"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "BUILD_COMMAND: ${{ inputs.build-command }}",
                "BUILD_COMMAND: ${{ github.event.inputs.declared_scope }}",
            )
        },
    },
    Mutation {
        description: "append dispatch data to the build command",
        breaks: &["build-command-from-caller"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "-- bash -euo pipefail -c \"$BUILD_COMMAND\"",
                "-- sh -c \"$BUILD_COMMAND $DECLARED_SCOPE\"",
            )
        },
    },
    Mutation {
        description: "decide even in a cancelled run",
        breaks: &["decide-runs-unless-cancelled"],
        apply: |t| {
            replace_in_job(
                t,
                DECIDE,
                "    if: ${{ !cancelled() }}\n",
                "    if: always()\n",
            )
        },
    },
    Mutation {
        description: "skip decide when an upstream job failed",
        breaks: &["decide-runs-unless-cancelled"],
        apply: |t| replace_in_job(t, DECIDE, "    if: ${{ !cancelled() }}\n", ""),
    },
    Mutation {
        description: "publish whatever decide said",
        breaks: &["publish-only-on-pass"],
        apply: |t| {
            replace_in_job(
                t,
                PUBLISH,
                "    if: ${{ !cancelled() && needs.decide.result == 'success' && needs.decide.outputs.gate == 'pass' }}\n",
                "    if: always()\n",
            )
        },
    },
    Mutation {
        description: "publish on a successful decide job without reading its decision",
        breaks: &["publish-only-on-pass"],
        apply: |t| replace_in_job(t, PUBLISH, " && needs.decide.outputs.gate == 'pass'", ""),
    },
    Mutation {
        description: "cancel a publication under way when the task is dispatched again",
        breaks: &["publish-only-on-pass"],
        apply: |t| {
            replace_in_job(
                t,
                PUBLISH,
                "cancel-in-progress: false",
                "cancel-in-progress: true",
            )
        },
    },
    Mutation {
        description: "require only build-test",
        breaks: &["gate-decision-wired"],
        apply: |t| {
            replace_in_job(
                t,
                DECIDE,
                "--require guard,build-test ",
                "--require build-test ",
            )
        },
    },
    Mutation {
        description: "read publish's decision from an output gate decide does not write",
        breaks: &["gate-decision-wired"],
        apply: |t| {
            replace_in_job(
                t,
                PUBLISH,
                "steps.decide.outputs.gate }}",
                "steps.decide.outputs.decision }}",
            )
        },
    },
    Mutation {
        description: "save the decision as text (report check-run reads JSON)",
        breaks: &["gate-decision-wired"],
        apply: |t| replace_in_job(t, DECIDE, " --format json > ", " > "),
    },
    Mutation {
        description: "plan without the repository",
        breaks: &["publication-from-plan"],
        apply: |t| {
            replace_in_job(
                t,
                PUBLISH,
                "--repository \"$GITHUB_REPOSITORY\" --task-id",
                "--task-id",
            )
        },
    },
    Mutation {
        description: "publish a plan other than the one computed here",
        breaks: &["publication-from-plan"],
        apply: |t| {
            replace_in_job(
                t,
                PUBLISH,
                "publish --plan \"$RUNNER_TEMP/agent-team/plan.json\"",
                "publish --plan \"$GITHUB_WORKSPACE/trusted/plan.json\"",
            )
        },
    },
    Mutation {
        description: "publish without telling gate publish the base (it would not check the plan's)",
        breaks: &["publication-from-plan"],
        apply: |t| {
            replace_in_job(
                t,
                PUBLISH,
                "--branch \"agent-team/$TASK_ID\" --base \"$BASE_SHA\" \\\n",
                "--branch \"agent-team/$TASK_ID\" \\\n",
            )
        },
    },
    Mutation {
        description: "publish without the decision",
        breaks: &["publication-from-plan"],
        apply: |t| {
            replace_in_job(
                t,
                PUBLISH,
                " --decision \"$RUNNER_TEMP/agent-team/decision.json\"",
                "",
            )
        },
    },
    Mutation {
        description: "publish with the workflow's own token",
        breaks: &["publication-from-plan"],
        apply: |t| {
            replace_in_job(
                t,
                PUBLISH,
                "GH_TOKEN: ${{ steps.app-token.outputs.token }}\n          DEFAULT_BRANCH",
                "GH_TOKEN: ${{ github.token }}\n          DEFAULT_BRANCH",
            )
        },
    },
    Mutation {
        description: "let a failed publication pass",
        breaks: &["publication-from-plan"],
        apply: |t| {
            replace_in_job(
                t,
                PUBLISH,
                "      - name: Publish, prove the tree, open the draft pull request, post the check run\n",
                "      - name: Publish, prove the tree, open the draft pull request, post the check run\n        continue-on-error: true\n",
            )
        },
    },
    Mutation {
        description: "open a pull request with gh beside gate publish",
        breaks: &["publication-from-plan"],
        apply: |t| {
            replace_in_job(
                t,
                PUBLISH,
                "          protected=\"$(jq -er '.protected_files' \"$result\")\"\n",
                "          gh api --method POST \"repos/$GITHUB_REPOSITORY/pulls\" --input \"$RUNNER_TEMP/agent-team/pr.json\"\n          protected=\"$(jq -er '.protected_files' \"$result\")\"\n",
            )
        },
    },
    Mutation {
        description: "commit with a GraphQL call of its own",
        breaks: &["publication-from-plan"],
        apply: |t| {
            replace_in_job(
                t,
                PUBLISH,
                "          echo \"Draft pull request: $(jq -r",
                "          gh api graphql --input \"$RUNNER_TEMP/agent-team/commit.json\"\n          echo \"Draft pull request: $(jq -r",
            )
        },
    },
    Mutation {
        description: "publish without the gate's verdict",
        breaks: &["protected-files-surfaced"],
        apply: |t| {
            replace_in_job(
                t,
                PUBLISH,
                "            --verdict \"$RUNNER_TEMP/agent-team/verdict.json\" \\\n",
                "",
            )
        },
    },
    Mutation {
        description: "plan without writing the verdict",
        breaks: &["protected-files-surfaced"],
        apply: |t| {
            replace_in_job(
                t,
                PUBLISH,
                " \\\n            --verdict-out \"$RUNNER_TEMP/agent-team/verdict.json\"",
                "",
            )
        },
    },
    Mutation {
        description: "check out a head ref in publish",
        breaks: &["no-head-checkout-downstream", "policy-from-trusted-commit"],
        apply: |t| {
            replace_in_job(
                t,
                PUBLISH,
                "          path: trusted\n",
                "          path: trusted\n          ref: ${{ github.event.inputs.diff_ref }}\n",
            )
        },
    },
    Mutation {
        description: "apply the patch in publish",
        breaks: &["no-head-checkout-downstream"],
        apply: |t| {
            replace_in_job(
                t,
                PUBLISH,
                "          scope_args=()\n",
                "          git -C trusted apply \"$RUNNER_TEMP/agent-team/diff.patch\"\n          scope_args=()\n",
            )
        },
    },
    Mutation {
        description: "download build-test's artifact into publish",
        breaks: &["no-artifact-read-downstream", "every-download-hash-checked"],
        apply: |t| {
            replace_in_job(
                t,
                PUBLISH,
                "      - name: Decide again from the upstream job results\n",
                "      - name: Download\n        uses: actions/download-artifact@3e5f45b2cfb9172054b4087a40e8e0b5a5461e7c # v8.0.1\n\n      - name: Decide again from the upstream job results\n",
            )
        },
    },
    Mutation {
        description: "let the App token push workflows",
        breaks: &["app-token-scoped"],
        apply: |t| {
            replace_in_job(
                t,
                PUBLISH,
                "          permission-checks: write\n",
                "          permission-checks: write\n          permission-workflows: write\n",
            )
        },
    },
    Mutation {
        description: "mint the App token for every repository of the installation",
        breaks: &["app-token-scoped"],
        apply: |t| {
            replace_in_job(
                t,
                PUBLISH,
                "          repositories: ${{ github.event.repository.name }}\n",
                "",
            )
        },
    },
    Mutation {
        description: "revoke the App token only on success",
        breaks: &["app-token-revoked"],
        apply: |t| {
            replace_in_job(
                t,
                PUBLISH,
                "if: ${{ always() && steps.app-token.outputs.token != '' }}",
                "if: ${{ steps.app-token.outputs.token != '' }}",
            )
        },
    },
    Mutation {
        description: "ignore a failed signature check",
        breaks: &["dispatch-signature-verified"],
        apply: |t| {
            replace_once(
                t,
                "      - name: Verify the dispatcher's signature\n",
                "      - name: Verify the dispatcher's signature\n        continue-on-error: true\n",
            )
        },
    },
    Mutation {
        description: "verify the signature without the MAC",
        breaks: &["dispatch-signature-verified"],
        apply: |t| replace_once(t, " --mac=\"$DISPATCH_MAC\"", ""),
    },
    Mutation {
        description: "leave the scope out of the verified fields",
        breaks: &["dispatch-signature-verified"],
        apply: |t| replace_once(t, "--declared-scope=\"$DECLARED_SCOPE\" ", ""),
    },
    Mutation {
        description: "verify with a key from a repository variable",
        breaks: &["dispatch-signature-verified"],
        apply: |t| {
            replace_once(
                t,
                "AGENT_TEAM_DISPATCH_KEY: ${{ secrets.AGENT_TEAM_DISPATCH_KEY }}",
                "AGENT_TEAM_DISPATCH_KEY: ${{ vars.AGENT_TEAM_DISPATCH_KEY }}",
            )
        },
    },
    Mutation {
        description: "verify the signature only after minting the App token",
        breaks: &["dispatch-signature-verified"],
        apply: |t| {
            let start = t
                .find("      # Anyone who can dispatch this workflow")
                .expect("verification comment");
            let end = t[start..]
                .find("      - name: Require the base commit on the default branch")
                .expect("next step")
                + start;
            let step = &t[start..end];
            let without = format!("{}{}", &t[..start], &t[end..]);
            replace_once(
                &without,
                "      - name: Publish, prove the tree, open the draft pull request, post the check run\n",
                &format!(
                    "{step}      - name: Publish, prove the tree, open the draft pull request, post the check run\n"
                ),
            )
        },
    },
];

const CALLER_MUTATIONS: &[Mutation] = &[
    Mutation {
        description: "run the caller on push",
        breaks: &["caller-dispatch-only"],
        apply: |t| {
            replace_once(
                t,
                "on:\n  workflow_dispatch:\n",
                "on:\n  push:\n  workflow_dispatch:\n",
            )
        },
    },
    Mutation {
        description: "let the dispatcher choose the build command",
        breaks: &["caller-dispatch-only"],
        apply: |t| {
            replace_once(
                t,
                "    inputs:\n",
                "    inputs:\n      build_command: { type: string, default: \"\" }\n",
            )
        },
    },
    Mutation {
        description: "make the base commit optional",
        breaks: &["caller-dispatch-only"],
        apply: |t| {
            replace_once(
                t,
                "base_sha: { type: string, required: true }",
                "base_sha: { type: string }",
            )
        },
    },
    Mutation {
        description: "rename the run",
        breaks: &["caller-run-name"],
        apply: |t| {
            replace_once(
                t,
                "run-name: \"agent-team-apply ${{ inputs.task_id }}\"",
                "run-name: \"apply ${{ inputs.task_id }}\"",
            )
        },
    },
    Mutation {
        description: "grant write-all at the top",
        breaks: &["top-level-permissions-empty"],
        apply: |t| replace_once(t, "\npermissions: {}\n", "\npermissions: write-all\n"),
    },
    Mutation {
        description: "call the published workflow at a moving branch",
        breaks: &["caller-calls-the-reusable-workflow"],
        apply: |t| {
            replace_once(
                t,
                "uses: ./.github/workflows/agent-team-apply-verify.yml",
                "uses: agent-team/agent-team-apply/.github/workflows/agent-team-apply-verify.yml@main",
            )
        },
    },
    Mutation {
        description: "grant the call contents: write",
        breaks: &["caller-calls-the-reusable-workflow"],
        apply: |t| {
            replace_once(
                t,
                "permissions: { contents: read }",
                "permissions: { contents: write }",
            )
        },
    },
    Mutation {
        description: "pass every secret of the repository",
        breaks: &["caller-passes-secrets-by-name"],
        apply: |t| {
            let start = t.find("    secrets:\n").expect("secrets");
            let end = t.find("    with:\n").expect("with");
            format!("{}    secrets: inherit\n{}", &t[..start], &t[end..])
        },
    },
    Mutation {
        description: "pass one more secret",
        breaks: &["caller-passes-secrets-by-name"],
        apply: |t| {
            replace_once(
                t,
                "    secrets:\n",
                "    secrets:\n      NPM_TOKEN: ${{ secrets.NPM_TOKEN }}\n",
            )
        },
    },
    Mutation {
        description: "build what the dispatch says",
        breaks: &["caller-configures-known-inputs"],
        apply: |t| {
            let line = t
                .lines()
                .find(|l| l.trim_start().starts_with("build-command:"))
                .expect("build-command");
            t.replacen(line, "      build-command: ${{ inputs.declared_scope }}", 1)
        },
    },
    Mutation {
        description: "set an input the workflow does not have",
        breaks: &["caller-configures-known-inputs"],
        apply: |t| replace_once(t, "    with:\n", "    with:\n      required-jobs: guard\n"),
    },
];

const EXAMPLE_MUTATIONS: &[Mutation] = &[
    Mutation {
        description: "call the published workflow at a moving branch",
        breaks: &[
            "caller-calls-the-reusable-workflow",
            "example-pins-the-release",
        ],
        apply: |t| {
            let line = t
                .lines()
                .find(|l| l.trim_start().starts_with("uses: "))
                .expect("uses");
            t.replacen(
                line,
                "    uses: agent-team/agent-team-apply/.github/workflows/agent-team-apply-verify.yml@main # v0.1.0",
                1,
            )
        },
    },
    Mutation {
        description: "name another version than the workflow runs",
        breaks: &["example-pins-the-release"],
        apply: |t| replace_once(t, " # v0.1.0\n", " # v0.2.0\n"),
    },
    Mutation {
        description: "grow past 25 lines",
        breaks: &["example-within-25-lines"],
        apply: |t| format!("# one\n# two\n{t}"),
    },
];

const CI_MUTATIONS: &[Mutation] = &[
    Mutation {
        description: "run CI on pull_request_target",
        breaks: &["ci-triggers"],
        apply: |t| replace_once(t, "  pull_request:\n", "  pull_request_target:\n"),
    },
    Mutation {
        description: "grant CI write-all",
        breaks: &["top-level-permissions-empty"],
        apply: |t| replace_once(t, "\npermissions: {}\n", "\npermissions: write-all\n"),
    },
    Mutation {
        description: "give a CI job contents: write",
        breaks: &["ci-job-permissions-read"],
        apply: |t| replace_in_job(t, "zizmor", "contents: read", "contents: write"),
    },
    Mutation {
        description: "pin setup-python to a tag",
        breaks: &["actions-pinned"],
        apply: |t| {
            replace_once(
                t,
                "actions/setup-python@5fda3b95a4ea91299a34e894583c3862153e4b97",
                "actions/setup-python@v7",
            )
        },
    },
    Mutation {
        description: "persist CI checkout credentials",
        breaks: &["checkout-no-persisted-credentials"],
        apply: |t| {
            replace_in_job(
                t,
                "test",
                "persist-credentials: false",
                "persist-credentials: true",
            )
        },
    },
    Mutation {
        description: "interpolate the ref into a CI script",
        breaks: &["no-expression-in-run"],
        apply: |t| {
            replace_once(
                t,
                "run: cargo fmt --all -- --check",
                "run: echo \"${{ github.ref }}\" && cargo fmt --all -- --check",
            )
        },
    },
    Mutation {
        description: "cache pip in CI",
        breaks: &["no-cache"],
        apply: |t| {
            replace_once(
                t,
                "python-version: \"3.12\"\n",
                "python-version: \"3.12\"\n          cache: pip\n",
            )
        },
    },
    Mutation {
        description: "drop clippy's -D warnings",
        breaks: &["ci-runs-the-checks"],
        apply: |t| replace_once(t, " -- -D warnings", ""),
    },
    Mutation {
        description: "only build the fuzz targets",
        breaks: &["ci-runs-the-checks"],
        apply: |t| replace_once(t, "bash .ci/fuzz.sh 20", "bash .ci/fuzz.sh 1"),
    },
    Mutation {
        description: "leave the advisories out of cargo deny",
        breaks: &["ci-runs-the-checks"],
        apply: |t| replace_once(t, "check advisories bans", "check bans"),
    },
    Mutation {
        description: "run the tests as the runner user (the sandbox tests need root)",
        breaks: &["ci-tests-as-root"],
        apply: |t| {
            let start = t
                .find("          sudo --preserve-env env PATH=")
                .expect("sudo");
            let end = t[start..]
                .find("cargo test --workspace")
                .expect("cargo test")
                + start;
            format!("{}          {}", &t[..start], &t[end..])
        },
    },
];

const RELEASE_MUTATIONS: &[Mutation] = &[
    Mutation {
        description: "release on every push to main",
        breaks: &["release-on-tags-only"],
        apply: |t| {
            replace_once(
                t,
                "  push:\n    tags: [\"v*\"]\n",
                "  push:\n    branches: [main]\n    tags: [\"v*\"]\n",
            )
        },
    },
    Mutation {
        description: "grant the release write-all",
        breaks: &["top-level-permissions-empty"],
        apply: |t| replace_once(t, "\npermissions: {}\n", "\npermissions: write-all\n"),
    },
    Mutation {
        description: "let the build mint an OIDC token",
        breaks: &["release-job-permissions"],
        apply: |t| {
            replace_in_job(
                t,
                "build",
                "      contents: read\n",
                "      contents: read\n      id-token: write\n",
            )
        },
    },
    Mutation {
        description: "let the attestation write contents",
        breaks: &["release-job-permissions"],
        apply: |t| {
            replace_in_job(
                t,
                "attest",
                "      contents: read\n",
                "      contents: write\n",
            )
        },
    },
    Mutation {
        description: "attest with a moving tag",
        breaks: &["actions-pinned"],
        apply: |t| {
            replace_once(
                t,
                "actions/attest-build-provenance@a2bbfa25375fe432b6a289bc6b6cd05ecd0c4c32 # v4.1.0",
                "actions/attest-build-provenance@v4 # v4.1.0",
            )
        },
    },
    Mutation {
        description: "persist the build's checkout credentials",
        breaks: &["checkout-no-persisted-credentials"],
        apply: |t| replace_once(t, "persist-credentials: false", "persist-credentials: true"),
    },
    Mutation {
        description: "interpolate the target into the build script",
        breaks: &["no-expression-in-run", "release-builds-static-musl"],
        apply: |t| {
            replace_once(
                t,
                "run: bash .ci/release-build.sh \"$TARGET\" \"$VERSION\" dist",
                "run: bash .ci/release-build.sh \"${{ matrix.target }}\" \"$VERSION\" dist",
            )
        },
    },
    Mutation {
        description: "cache the cargo registry in the build",
        breaks: &["no-cache", "actions-pinned"],
        apply: |t| {
            replace_once(
                t,
                "      - name: Build, check and pack\n",
                "      - name: Cache\n        uses: actions/cache@0123456789abcdef0123456789abcdef01234567 # v4.2.0\n        with:\n          path: ~/.cargo\n          key: cargo\n\n      - name: Build, check and pack\n",
            )
        },
    },
    Mutation {
        description: "release x86_64 only",
        breaks: &["release-builds-static-musl"],
        apply: |t| {
            replace_once(
                t,
                "[x86_64-unknown-linux-musl, aarch64-unknown-linux-musl]",
                "[x86_64-unknown-linux-musl]",
            )
        },
    },
    Mutation {
        description: "install the cross linker without hashes",
        breaks: &["release-builds-static-musl"],
        apply: |t| replace_once(t, "--require-hashes --no-deps ", "--no-deps "),
    },
    Mutation {
        description: "publish without checking the assets against SHA256SUMS",
        breaks: &["release-attests-what-it-publishes"],
        apply: |t| {
            replace_once(
                t,
                "          sha256sum --check --strict SHA256SUMS\n",
                "          cat SHA256SUMS\n",
            )
        },
    },
    Mutation {
        description: "attest one file instead of every asset",
        breaks: &["release-attests-what-it-publishes"],
        apply: |t| {
            replace_once(
                t,
                "          subject-checksums: dist/SHA256SUMS\n",
                "          subject-path: dist/SHA256SUMS\n",
            )
        },
    },
];

/// Apply each mutation to `file` and check that exactly its invariants (of `lists`) break, and
/// that every invariant of the lists is broken by some mutation.
fn check_mutations(
    file: &str,
    lists: &[&[(&'static str, Invariant)]],
    must_cover: &[(&'static str, Invariant)],
    mutations: &[Mutation],
) {
    let original = Workflow::load(file);
    let all: Vec<(&'static str, Invariant)> =
        lists.iter().flat_map(|l| l.iter().copied()).collect();
    let mut covered = BTreeSet::new();
    for mutation in mutations {
        let mutated_text = (mutation.apply)(&original.raw);
        assert_ne!(
            mutated_text, original.raw,
            "{file}: {}: no change",
            mutation.description
        );
        let mutated = Workflow::parse(&mutated_text)
            .unwrap_or_else(|e| panic!("{file}: {}: {e}\n{mutated_text}", mutation.description));
        let failed: BTreeSet<&str> = failing(&mutated, &all)
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        let expected: BTreeSet<&str> = mutation.breaks.iter().copied().collect();
        assert_eq!(
            failed, expected,
            "{file}: mutation `{}` broke {failed:?}, expected exactly {expected:?}",
            mutation.description
        );
        covered.extend(expected);
    }
    let uncovered: Vec<&str> = must_cover
        .iter()
        .map(|(id, _)| *id)
        .filter(|id| !covered.contains(id))
        .collect();
    assert!(
        uncovered.is_empty(),
        "{file}: invariants no mutation exercises: {uncovered:?}"
    );
}

#[test]
fn each_mutation_breaks_exactly_its_invariant() {
    check_mutations(
        APPLY_WORKFLOW,
        &[APPLY_INVARIANTS],
        APPLY_INVARIANTS,
        APPLY_MUTATIONS,
    );
}

#[test]
fn each_caller_mutation_breaks_exactly_its_invariant() {
    check_mutations(
        OWN_CALLER,
        &[CALLER_INVARIANTS],
        CALLER_INVARIANTS,
        CALLER_MUTATIONS,
    );
    for example in EXAMPLE_CALLERS {
        check_mutations(
            example,
            &[CALLER_INVARIANTS, EXAMPLE_INVARIANTS],
            EXAMPLE_INVARIANTS,
            EXAMPLE_MUTATIONS,
        );
    }
}

#[test]
fn each_ci_mutation_breaks_exactly_its_invariant() {
    check_mutations(CI_WORKFLOW, &[CI_INVARIANTS], CI_INVARIANTS, CI_MUTATIONS);
}

#[test]
fn each_release_mutation_breaks_exactly_its_invariant() {
    check_mutations(
        RELEASE_WORKFLOW,
        &[RELEASE_INVARIANTS],
        RELEASE_INVARIANTS,
        RELEASE_MUTATIONS,
    );
}
