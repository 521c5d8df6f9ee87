//! Security invariants of the GitHub Actions workflows, checked over the parsed YAML and, where a
//! property lives in the text (the `# vX.Y.Z` beside a pin), over the raw file.
//!
//! Each invariant is a function over a [`Workflow`] returning `Result<(), String>`. One test runs them
//! all on the real files; a mutation test breaks the apply/verify workflow one invariant at a time and
//! asserts that exactly the targeted invariant, and no other, notices.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::{Map, Value, json};

const APPLY_WORKFLOW: &str = ".github/workflows/agent-team-apply-verify.yml";
const CI_WORKFLOW: &str = ".github/workflows/ci.yml";

/// Every action either workflow may use, with the commit its tag resolved to when it was verified
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
        "step-security/harden-runner",
        "b09bb98e06d4d774595224525879c09bc6e98c40",
        "v2.20.1",
    ),
];

const GUARD: &str = "guard";
const BUILD_TEST: &str = "build-test";
const GATE: &str = "gate-and-pr";

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

    fn load(relative: &str) -> Self {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
        let raw = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        Self::parse(&raw).unwrap_or_else(|e| panic!("{relative}: {e}"))
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

    /// Every step of every job, with its job's name.
    fn all_steps(&self) -> Result<Vec<(&str, &Value)>, String> {
        let mut all = Vec::new();
        for name in self.jobs()?.keys() {
            for step in self.steps(name)? {
                all.push((name.as_str(), step));
            }
        }
        Ok(all)
    }
}

type Invariant = fn(&Workflow) -> Result<(), String>;

/// The apply/verify workflow's invariants, by stable id.
const APPLY_INVARIANTS: &[(&str, Invariant)] = &[
    ("dispatch-only", dispatch_only),
    ("inputs-declared", inputs_declared),
    ("run-name-and-concurrency", run_name_and_concurrency),
    ("top-level-permissions-empty", top_level_permissions_empty),
    ("job-permissions-exact", job_permissions_exact),
    ("needs-chain", needs_chain),
    ("actions-pinned", actions_pinned),
    (
        "checkout-no-persisted-credentials",
        checkout_no_persisted_credentials,
    ),
    ("no-expression-in-run", no_expression_in_run),
    ("secrets-only-in-gate", secrets_only_in_gate),
    ("no-cache", no_cache),
    ("inputs-validated-first", inputs_validated_first),
    ("diff-rehashed-in-every-job", diff_rehashed_in_every_job),
    ("harden-runner-first", harden_runner_first),
    ("egress-probed-before-build", egress_probed_before_build),
    ("build-test-order", build_test_order),
    ("build-sandboxed-under-sudo", build_sandboxed_under_sudo),
    ("later-steps-out-of-reach", later_steps_out_of_reach),
    ("deps-fetched-before-sandbox", deps_fetched_before_sandbox),
    ("gate-decision-wired", gate_decision_wired),
    ("publication-from-plan", publication_from_plan),
    ("protected-files-surfaced", protected_files_surfaced),
    ("gate-always-runs", gate_always_runs),
    ("gate-no-head-checkout", gate_no_head_checkout),
    ("gate-builds-own-binaries", gate_builds_own_binaries),
    ("app-token-scoped", app_token_scoped),
    ("app-token-revoked", app_token_revoked),
    ("dispatch-signature-verified", dispatch_signature_verified),
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

/// Only `workflow_dispatch` triggers it; no `pull_request_target` or `workflow_run` anywhere.
fn dispatch_only(wf: &Workflow) -> Result<(), String> {
    let on = wf.doc.get("on").ok_or("no `on`")?;
    let triggers: Vec<&str> = match on {
        Value::String(s) => vec![s.as_str()],
        Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
        Value::Object(map) => map.keys().map(String::as_str).collect(),
        _ => return Err("`on` is neither a string, a list nor a mapping".into()),
    };
    if triggers != ["workflow_dispatch"] {
        return Err(format!(
            "triggers are {triggers:?}, not only workflow_dispatch"
        ));
    }
    for forbidden in ["pull_request_target", "workflow_run"] {
        if wf.raw.contains(forbidden) {
            return Err(format!("`{forbidden}` appears in the file"));
        }
    }
    Ok(())
}

/// GitHub's cap on the number of `workflow_dispatch` inputs.
const MAX_DISPATCH_INPUTS: usize = 25;

/// The dispatch inputs are exactly the documented ones, all strings, within GitHub's 25.
fn inputs_declared(wf: &Workflow) -> Result<(), String> {
    let inputs = wf
        .doc
        .pointer("/on/workflow_dispatch/inputs")
        .and_then(Value::as_object)
        .ok_or("no workflow_dispatch inputs")?;
    let names: BTreeSet<&str> = inputs.keys().map(String::as_str).collect();
    let expected = BTreeSet::from([
        "task_id",
        "base_sha",
        "expected_diff_sha256",
        "declared_scope",
        "diff_b64",
        "diff_ref",
        "dispatch_mac",
    ]);
    if names.len() > MAX_DISPATCH_INPUTS {
        return Err(format!(
            "{} inputs, GitHub accepts at most {MAX_DISPATCH_INPUTS}",
            names.len()
        ));
    }
    if names != expected {
        return Err(format!("inputs are {names:?}, expected {expected:?}"));
    }
    for (name, spec) in inputs {
        if str_of(spec, "type") != Some("string") {
            return Err(format!("input `{name}` is not `type: string`"));
        }
    }
    Ok(())
}

fn run_name_and_concurrency(wf: &Workflow) -> Result<(), String> {
    let run_name = str_of(&wf.doc, "run-name");
    if run_name != Some("agent-team-apply ${{ inputs.task_id }}") {
        return Err(format!("run-name is {run_name:?}"));
    }
    let concurrency = wf.doc.get("concurrency").ok_or("no concurrency")?;
    let expected = json!({
        "group": "agent-team-apply-${{ inputs.task_id }}",
        "cancel-in-progress": false,
    });
    if *concurrency != expected {
        return Err(format!("concurrency is {concurrency}, expected {expected}"));
    }
    Ok(())
}

fn top_level_permissions_empty(wf: &Workflow) -> Result<(), String> {
    match wf.doc.get("permissions") {
        Some(Value::Object(map)) if map.is_empty() => Ok(()),
        other => Err(format!("top-level permissions are {other:?}, not {{}}")),
    }
}

/// Exactly three jobs, each granted `contents: read` and nothing else.
fn job_permissions_exact(wf: &Workflow) -> Result<(), String> {
    let names: BTreeSet<&str> = wf.jobs()?.keys().map(String::as_str).collect();
    let expected_names = BTreeSet::from([GUARD, BUILD_TEST, GATE]);
    if names != expected_names {
        return Err(format!("jobs are {names:?}, expected {expected_names:?}"));
    }
    for name in [GUARD, BUILD_TEST, GATE] {
        let permissions = wf.job(name)?.get("permissions");
        if permissions != Some(&json!({ "contents": "read" })) {
            return Err(format!(
                "job `{name}` permissions are {permissions:?}, expected {{contents: read}}"
            ));
        }
    }
    Ok(())
}

fn needs_chain(wf: &Workflow) -> Result<(), String> {
    let expected: [(&str, &[&str]); 3] = [
        (GUARD, &[]),
        (BUILD_TEST, &[GUARD]),
        (GATE, &[BUILD_TEST, GUARD]),
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

/// Every `uses:` is `owner/repo@<40-hex>` from [`KNOWN_PINS`], and its line carries the matching
/// `# vX.Y.Z` comment. Local (`./`) and `docker://` actions are not allowed.
fn actions_pinned(wf: &Workflow) -> Result<(), String> {
    let mut parsed = Vec::new();
    for (job_name, job) in wf.jobs()? {
        if let Some(u) = uses_of(job) {
            parsed.push((job_name.as_str(), u));
        }
        for step in wf.steps(job_name)? {
            if let Some(u) = uses_of(step) {
                parsed.push((job_name.as_str(), u));
            }
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

    // The comment lives only in the text: check every line that says `uses:`.
    let mut raw_count = 0;
    for (number, line) in wf.raw.lines().enumerate() {
        let trimmed = line.trim_start();
        let trimmed = trimmed.strip_prefix("- ").unwrap_or(trimmed).trim_start();
        let Some(rest) = trimmed.strip_prefix("uses:") else {
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
            "{} `uses:` lines in the text but {} in the document (flow-style uses?)",
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

/// `secrets` appears in no expression outside gate-and-pr (nor at workflow level).
fn secrets_only_in_gate(wf: &Workflow) -> Result<(), String> {
    if let Value::Object(top) = &wf.doc {
        for (key, value) in top {
            if key != "jobs" && mentions_secrets(value) {
                return Err(format!("workflow-level `{key}` references secrets"));
            }
        }
    }
    for (name, job) in wf.jobs()? {
        if name != GATE && mentions_secrets(job) {
            return Err(format!("job `{name}` references secrets"));
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

/// Every job validates the inputs in its first step (build-test: first after harden-runner),
/// with the same script in every job.
fn inputs_validated_first(wf: &Workflow) -> Result<(), String> {
    let mut scripts = BTreeSet::new();
    for job in [GUARD, BUILD_TEST, GATE] {
        let first = wf
            .steps(job)?
            .iter()
            .find(|s| !uses_action(s, "step-security/harden-runner"))
            .ok_or_else(|| format!("job `{job}` has no steps"))?;
        if str_of(first, "id") != Some("validate-inputs") {
            return Err(format!(
                "job `{job}`: the first step is not the `validate-inputs` step"
            ));
        }
        let script = run_of(first).unwrap_or_default();
        for pattern in [
            "^[0-9a-f]{40}$",
            "^[0-9a-f]{64}$",
            "TASK_ID",
            "DECLARED_SCOPE",
        ] {
            if !script.contains(pattern) {
                return Err(format!("job `{job}`: input validation lacks `{pattern}`"));
            }
        }
        scripts.insert(script.to_owned());
    }
    if scripts.len() != 1 {
        return Err("the input validation differs between jobs".into());
    }
    Ok(())
}

/// Every job obtains the diff bytes itself and compares their SHA-256 with the expected hash.
fn diff_rehashed_in_every_job(wf: &Workflow) -> Result<(), String> {
    for job in [GUARD, BUILD_TEST, GATE] {
        let rehashes = wf.steps(job)?.iter().any(|s| {
            run_contains(s, "sha256sum")
                && run_contains(s, r#"[[ "$actual" != "$EXPECTED_DIFF_SHA256" ]]"#)
        });
        if !rehashes {
            return Err(format!("job `{job}` does not re-hash the diff"));
        }
    }
    Ok(())
}

/// harden-runner is build-test's first step, blocking egress with an explicit allowlist. It must NOT
/// disable sudo: on ubuntu-24.04 `guard run` needs root to create its namespaces (see
/// [`build_sandboxed_under_sudo`]), so the egress block is the second network layer, not the only one.
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
    for endpoint in endpoints.split_whitespace() {
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

/// Where build-test installs its trusted binaries: root-owned at every component.
const TRUSTED_BIN: &str = "/opt/agent-team/bin";

/// The step of build-test that runs patch code under `guard run`.
fn untrusted_run_index(steps: &[Value]) -> Result<usize, String> {
    index_of(steps, |s| {
        run_contains(s, &format!("{TRUSTED_BIN}/guard run "))
    })
    .ok_or_else(|| "no `guard run` step".into())
}

/// build-test: guard is built from the trusted commit before the patch is applied; the tree is
/// verified after apply, and again after the build by `guard run` itself (`--verdict`,
/// `--baseline` pinned by the apply step's output), so no later step has to run a check the
/// build could have tampered with.
fn build_test_order(wf: &Workflow) -> Result<(), String> {
    let steps = wf.steps(BUILD_TEST)?;
    let build_guard = index_of(steps, |s| {
        run_contains(s, "cargo build --release --locked -p guard")
            && str_of(s, "working-directory") == Some("trusted")
    })
    .ok_or("build-test does not build guard from the trusted checkout")?;
    let apply = index_of(steps, |s| {
        run_contains(s, "guard\" apply ") && run_contains(s, "guard\" verify-tree ")
    })
    .ok_or("build-test does not apply and verify the tree")?;
    let untrusted = untrusted_run_index(steps)?;
    if !(build_guard < apply && apply < untrusted) {
        return Err(format!(
            "build-test order is build {build_guard}, apply {apply}, run {untrusted}"
        ));
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

/// A script with its `\`-newline continuations joined and runs of blanks collapsed, so that one
/// shell command reads as one line.
fn joined(script: &str) -> String {
    script
        .replace("\\\n", " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
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
    let script = joined(run_of(&steps[untrusted_run_index(steps)?]).unwrap_or_default());
    let expected_prefix = "sudo /usr/bin/env PATH=\"$PATH\" HOME=\"$HOME\" RUNNER_TEMP=\"$RUNNER_TEMP\" \
                           GITHUB_WORKSPACE=\"$GITHUB_WORKSPACE\" ";
    if !script.starts_with(expected_prefix) {
        return Err(format!(
            "guard run is not started by `{expected_prefix}...`: {script}"
        ));
    }
    let guard = script
        .find(&format!(" {TRUSTED_BIN}/guard run "))
        .ok_or("the guard run is not the trusted binary in /opt/agent-team/bin")?;
    let before_guard = &script[..guard];
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
    let lines: Vec<&str> = steps
        .iter()
        .filter_map(run_of)
        .flat_map(str::lines)
        .map(str::trim)
        .collect();
    let dirs_by_root = lines
        .contains(&"sudo install -d -o root -g root -m 0755 /opt/agent-team /opt/agent-team/bin");
    let installed_by_root = lines.iter().any(|l| {
        l.starts_with("sudo install -o root -g root -m 0555 ")
            && l.contains("target/release/guard")
            && l.ends_with(" /opt/agent-team/bin/")
    });
    if !(dirs_by_root && installed_by_root) {
        return Err(
            "the guard that build-test runs is not installed in root-owned /opt/agent-team/bin"
                .into(),
        );
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

/// Dependencies are fetched by a trusted step after apply and before the sandbox, outside the work
/// tree (so the diff's `.cargo/config.toml` or `rust-toolchain.toml` is not read), into the same
/// fresh CARGO_HOME the sandboxed build reads; the build itself runs `--offline`.
fn deps_fetched_before_sandbox(wf: &Workflow) -> Result<(), String> {
    let steps = wf.steps(BUILD_TEST)?;
    let apply = index_of(steps, |s| run_contains(s, "guard\" apply "))
        .ok_or("build-test does not apply the diff")?;
    let untrusted = untrusted_run_index(steps)?;
    let fetch = index_of(steps, |s| {
        run_contains(
            s,
            "cargo fetch --locked --manifest-path \"$GITHUB_WORKSPACE/work/Cargo.toml\"",
        )
    })
    .ok_or("build-test does not fetch the dependencies with cargo fetch --locked")?;
    if !(apply < fetch && fetch < untrusted) {
        return Err(format!(
            "cargo fetch (step {fetch}) is not between apply ({apply}) and guard run ({untrusted})"
        ));
    }
    let fetch_step = &steps[fetch];
    let script = run_of(fetch_step).unwrap_or_default();
    if fetch_step.get("working-directory").is_some()
        || script.lines().next().map(str::trim) != Some("cd \"$RUNNER_TEMP\"")
        || script.contains("sudo")
    {
        return Err("cargo fetch does not run first thing from $RUNNER_TEMP, unprivileged".into());
    }
    let cargo_home = |i: usize| steps[i].pointer("/env/CARGO_HOME").and_then(Value::as_str);
    match (cargo_home(fetch), cargo_home(untrusted)) {
        (Some(a), Some(b)) if a == b && a.starts_with("${{ runner.temp }}/") => {}
        other => {
            return Err(format!(
                "fetch and build do not share a fresh CARGO_HOME under runner.temp: {other:?}"
            ));
        }
    }
    let build = joined(run_of(&steps[untrusted]).unwrap_or_default());
    let command = build
        .split_once(" -- cargo ")
        .map(|(_, c)| c)
        .ok_or("guard run does not run cargo")?;
    if !command.split_whitespace().any(|w| w == "--offline") {
        return Err(format!(
            "the sandboxed build is not --offline: cargo {command}"
        ));
    }
    Ok(())
}

/// `gate decide` writes its JSON decision (for `report check-run`) and `gate=pass|fail` to
/// GITHUB_OUTPUT, over exactly the two upstream jobs, and the next step refuses anything but `pass`
/// read from that output.
fn gate_decision_wired(wf: &Workflow) -> Result<(), String> {
    let steps = wf.steps(GATE)?;
    let decide = index_of(steps, |s| str_of(s, "id") == Some("decide"))
        .ok_or("gate-and-pr has no `decide` step")?;
    let script = joined(run_of(&steps[decide]).unwrap_or_default());
    for needed in [
        "/gate\" decide ",
        " --require guard,build-test ",
        " --github-output \"$GITHUB_OUTPUT\" ",
        " --format json > \"$RUNNER_TEMP/agent-team/decision.json\"",
    ] {
        if !script.contains(needed) {
            return Err(format!("gate decide lacks `{}`", needed.trim()));
        }
    }
    let next = steps.get(decide + 1).ok_or("nothing follows gate decide")?;
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
        return Err(
            "the step after gate decide does not refuse unless steps.decide.outputs.gate is pass"
                .into(),
        );
    }
    Ok(())
}

/// The publication is `gate publish-plan`'s document as it is, performed by `gate publish` and
/// nothing else: the plan is made for this repository, branch and base from the trusted
/// checkout; `gate publish` reads that very plan and the decision, is told the same repository,
/// branch, base and base branch (it refuses a plan for anything else), gets the App token as
/// `GH_TOKEN` (the only variable it reads a token from), runs after the token is minted and
/// cannot fail silently; and no other step writes to GitHub (no `gh api` mutation, GraphQL or
/// POST/PATCH/PUT) but the token's revocation.
fn publication_from_plan(wf: &Workflow) -> Result<(), String> {
    let steps = wf.steps(GATE)?;
    let plan = steps
        .iter()
        .find_map(|s| run_of(s).filter(|r| r.contains("/gate\" publish-plan ")))
        .map(joined)
        .ok_or("gate-and-pr does not run gate publish-plan")?;
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
    let publish = index_of(steps, |s| run_contains(s, "/gate\" publish "))
        .ok_or("gate-and-pr does not run gate publish")?;
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
        .ok_or("gate-and-pr mints no App token")?;
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
            if line.contains("curl") || line.contains("wget") {
                return Err(format!("gate-and-pr calls out with `{}`", line.trim()));
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
    let steps = wf.steps(GATE)?;
    let verdict = "\"$RUNNER_TEMP/agent-team/verdict.json\"";
    let plan = steps
        .iter()
        .find_map(|s| run_of(s).filter(|r| r.contains("/gate\" publish-plan ")))
        .map(joined)
        .ok_or("gate-and-pr does not run gate publish-plan")?;
    if !plan.contains(&format!("--verdict-out {verdict}")) {
        return Err("gate publish-plan does not write the verdict it computed".into());
    }
    let publish = steps
        .iter()
        .find_map(|s| run_of(s).filter(|r| r.contains("/gate\" publish ")))
        .map(joined)
        .ok_or("gate-and-pr does not run gate publish")?;
    if !publish.contains(&format!("--verdict {verdict}")) {
        return Err("gate publish does not get the gate's verdict".into());
    }
    if !publish.contains("jq -er '.protected_files' \"$result\"") {
        return Err("the publication step does not surface the protected files".into());
    }
    Ok(())
}

fn gate_always_runs(wf: &Workflow) -> Result<(), String> {
    let cond = condition(wf.job(GATE)?.get("if"));
    if cond.as_deref() != Some("always()") {
        return Err(format!("gate-and-pr `if` is {cond:?}, not always()"));
    }
    Ok(())
}

/// gate-and-pr checks out only the workflow's own commit and never applies the patch.
fn gate_no_head_checkout(wf: &Workflow) -> Result<(), String> {
    for step in wf.steps(GATE)? {
        if uses_action(step, "actions/checkout") {
            for key in ["ref", "repository"] {
                if with_of(step, key).is_some() {
                    return Err(format!("gate-and-pr checkout sets `{key}`"));
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
                return Err(format!("gate-and-pr runs `{program} {subcommand}`"));
            }
        }
    }
    Ok(())
}

/// gate-and-pr builds gate and report itself from the trusted checkout, runs only those binaries,
/// and downloads nothing (no artifact, no cache) that build-test could have written.
fn gate_builds_own_binaries(wf: &Workflow) -> Result<(), String> {
    let steps = wf.steps(GATE)?;
    if index_of(steps, |s| {
        run_contains(s, "cargo build --release --locked -p gate -p report")
            && str_of(s, "working-directory") == Some("trusted")
    })
    .is_none()
    {
        return Err("gate-and-pr does not build gate from the trusted checkout".into());
    }
    for step in steps {
        let uses = uses_of(step).unwrap_or("");
        if uses.starts_with("actions/download-artifact") || uses.starts_with("actions/cache") {
            return Err(format!("gate-and-pr uses `{uses}`"));
        }
        let Some(script) = run_of(step) else { continue };
        for binary in ["gate\" ", "report\" "] {
            for (at, _) in script.match_indices(binary) {
                let before = &script[..at];
                if !before.ends_with("$GITHUB_WORKSPACE/trusted/target/release/") {
                    return Err(format!(
                        "gate-and-pr runs a `{}` binary not built here",
                        binary.trim_end_matches(['"', ' '])
                    ));
                }
            }
        }
    }
    Ok(())
}

/// One App token, minted in gate-and-pr only, for this repository, with exactly contents, pull
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
    if *job != GATE {
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

/// The last step of gate-and-pr revokes the App token whatever happened before it.
fn app_token_revoked(wf: &Workflow) -> Result<(), String> {
    let steps = wf.steps(GATE)?;
    let mint = index_of(steps, |s| uses_action(s, "actions/create-github-app-token"))
        .ok_or("gate-and-pr mints no App token")?;
    let id = str_of(&steps[mint], "id").ok_or("the App token step has no id")?;
    let last = steps.last().ok_or("gate-and-pr has no steps")?;
    let cond = condition(last.get("if")).unwrap_or_default();
    let token_env = last.pointer("/env/GH_TOKEN").and_then(Value::as_str);
    let expected_env = format!("${{{{ steps.{id}.outputs.token }}}}");
    if !cond.starts_with("always()")
        || !run_contains(last, "--method DELETE /installation/token")
        || token_env != Some(expected_env.as_str())
    {
        return Err(
            "the last step of gate-and-pr is not an always() revocation of the App token".into(),
        );
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// CI invariants

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

fn ci_runs_the_checks(wf: &Workflow) -> Result<(), String> {
    let scripts: Vec<&str> = wf
        .all_steps()?
        .into_iter()
        .filter_map(|(_, s)| run_of(s))
        .collect();
    for needed in [
        "cargo fmt --all -- --check",
        "-- -D warnings",
        "cargo clippy",
        "--all-targets",
        "cargo test --workspace --locked",
        "cargo fuzz build",
        ".ci/zizmor.sh",
    ] {
        if !scripts.iter().any(|s| s.contains(needed)) {
            return Err(format!("CI does not run `{needed}`"));
        }
    }
    Ok(())
}

/// gate-and-pr verifies the dispatcher's signature with `gate verify-dispatch` over the run's own
/// repository and ref and every signed input, with the environment's keys, before the App token is
/// minted; the step cannot be skipped or its failure ignored.
fn dispatch_signature_verified(wf: &Workflow) -> Result<(), String> {
    let steps = wf.steps(GATE)?;
    let verify = index_of(steps, |s| run_contains(s, "/gate\" verify-dispatch "))
        .ok_or("gate-and-pr does not run gate verify-dispatch")?;
    let mint = index_of(steps, |s| uses_action(s, "actions/create-github-app-token"))
        .ok_or("gate-and-pr mints no App token")?;
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
        ("DISPATCH_MAC", "${{ inputs.dispatch_mac }}"),
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
fn ci_workflow_holds_every_invariant() {
    let wf = Workflow::load(CI_WORKFLOW);
    let failures = failing(&wf, CI_INVARIANTS);
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn invariant_ids_are_unique() {
    for list in [APPLY_INVARIANTS, CI_INVARIANTS] {
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

const CHECKOUT_PIN: &str = "actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1";

const APPLY_MUTATIONS: &[Mutation] = &[
    Mutation {
        description: "add a pull_request_target trigger",
        breaks: &["dispatch-only"],
        apply: |t| {
            replace_once(
                t,
                "on:\n  workflow_dispatch:\n",
                "on:\n  pull_request_target:\n  workflow_dispatch:\n",
            )
        },
    },
    Mutation {
        description: "add a push trigger",
        breaks: &["dispatch-only"],
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
        breaks: &["inputs-declared"],
        apply: |t| {
            replace_once(
                t,
                "    inputs:\n",
                "    inputs:\n      build_command:\n        type: string\n        required: false\n",
            )
        },
    },
    Mutation {
        description: "rename the run",
        breaks: &["run-name-and-concurrency"],
        apply: |t| {
            replace_once(
                t,
                "run-name: \"agent-team-apply ${{ inputs.task_id }}\"",
                "run-name: \"apply ${{ inputs.task_id }}\"",
            )
        },
    },
    Mutation {
        description: "cancel a running apply when the task is dispatched again",
        breaks: &["run-name-and-concurrency"],
        apply: |t| replace_once(t, "cancel-in-progress: false", "cancel-in-progress: true"),
    },
    Mutation {
        description: "grant write-all at the top",
        breaks: &["top-level-permissions-empty"],
        apply: |t| replace_once(t, "\npermissions: {}\n", "\npermissions: write-all\n"),
    },
    Mutation {
        description: "give build-test contents: write",
        breaks: &["job-permissions-exact"],
        apply: |t| replace_in_job(t, BUILD_TEST, "contents: read", "contents: write"),
    },
    Mutation {
        description: "give guard pull-requests: write",
        breaks: &["job-permissions-exact"],
        apply: |t| {
            replace_in_job(
                t,
                GUARD,
                "      contents: read\n",
                "      contents: read\n      pull-requests: write\n",
            )
        },
    },
    Mutation {
        description: "give gate-and-pr contents: write on the workflow token",
        breaks: &["job-permissions-exact"],
        apply: |t| replace_in_job(t, GATE, "contents: read", "contents: write"),
    },
    Mutation {
        description: "let build-test start without guard",
        breaks: &["needs-chain"],
        apply: |t| replace_in_job(t, BUILD_TEST, "    needs: [guard]\n", ""),
    },
    Mutation {
        description: "let the gate ignore guard",
        breaks: &["needs-chain"],
        apply: |t| replace_in_job(t, GATE, "needs: [guard, build-test]", "needs: [build-test]"),
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
        description: "drop persist-credentials from the gate's checkout",
        breaks: &["checkout-no-persisted-credentials"],
        apply: |t| replace_in_job(t, GATE, "          persist-credentials: false\n", ""),
    },
    Mutation {
        description: "interpolate an input into a script",
        breaks: &["no-expression-in-run"],
        apply: |t| {
            replace_in_job(
                t,
                GUARD,
                "          bin=\"$GITHUB_WORKSPACE/trusted/target/release\"\n",
                "          bin=\"$GITHUB_WORKSPACE/trusted/target/release\"\n          echo \"${{ inputs.task_id }}\"\n",
            )
        },
    },
    Mutation {
        description: "interpolate the needs JSON into the gate's script",
        breaks: &["no-expression-in-run"],
        apply: |t| {
            replace_in_job(
                t,
                GATE,
                "--needs \"$NEEDS_JSON\"",
                "--needs '${{ toJSON(needs) }}'",
            )
        },
    },
    Mutation {
        description: "reference a secret in guard",
        breaks: &["secrets-only-in-gate"],
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
        description: "reference a secret in build-test",
        breaks: &["secrets-only-in-gate"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "GH_TOKEN: ${{ github.token }}",
                "GH_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
            )
        },
    },
    Mutation {
        description: "expose a secret to every job through workflow env",
        breaks: &["secrets-only-in-gate"],
        apply: |t| {
            replace_once(
                t,
                "  DIFF_REF: ${{ inputs.diff_ref }}\n",
                "  DIFF_REF: ${{ inputs.diff_ref }}\n  KEY: ${{ secrets.AGENT_TEAM_APP_PRIVATE_KEY }}\n",
            )
        },
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
        description: "check out before validating the inputs",
        breaks: &["inputs-validated-first"],
        apply: |t| swap_first_two_steps(t, GATE),
    },
    Mutation {
        description: "weaken the validation in one job",
        breaks: &["inputs-validated-first"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "[[ \"$EXPECTED_DIFF_SHA256\" =~ ^[0-9a-f]{64}$ ]]",
                "[[ \"$EXPECTED_DIFF_SHA256\" =~ ^[0-9a-f]+$ ]]",
            )
        },
    },
    Mutation {
        description: "trust the diff bytes in build-test without re-hashing",
        breaks: &["diff-rehashed-in-every-job"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "actual=\"$(sha256sum \"$diff_file\" | cut -d ' ' -f 1)\"",
                "actual=\"$EXPECTED_DIFF_SHA256\"",
            )
        },
    },
    Mutation {
        description: "move harden-runner to second place",
        breaks: &["harden-runner-first"],
        apply: |t| swap_first_two_steps(t, BUILD_TEST),
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
        description: "disable sudo and containers in build-test",
        breaks: &["harden-runner-first"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "          egress-policy: block\n",
                "          egress-policy: block\n          disable-sudo-and-containers: \"true\"\n",
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
                "--timeout 2700 ",
                "--no-isolation-because \"harden-runner blocks egress\" --timeout 2700 ",
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
        description: "install guard where the build (runner user) can replace it",
        breaks: &["build-sandboxed-under-sudo"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "sudo install -o root -g root -m 0555 ",
                "install -m 0555 ",
            )
        },
    },
    Mutation {
        description: "create the binary directory as the runner user",
        breaks: &["build-sandboxed-under-sudo"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "sudo install -d -o root -g root -m 0755 /opt/agent-team /opt/agent-team/bin",
                "sudo install -d -o runner -m 0755 /opt/agent-team /opt/agent-team/bin",
            )
        },
    },
    Mutation {
        description: "check the tree after the build in a later step with a binary from the work tree",
        breaks: &["later-steps-out-of-reach"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "      # For humans only: written after attacker code ran, so nothing downstream reads it.\n",
                "      - name: Verify again\n        run: work/target/release/guard verify-tree --after-build\n\n      # For humans only: written after attacker code ran, so nothing downstream reads it.\n",
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
        description: "build online",
        breaks: &["deps-fetched-before-sandbox"],
        apply: |t| replace_in_job(t, BUILD_TEST, "--locked --offline", "--locked"),
    },
    Mutation {
        description: "fetch the dependencies inside the patched tree (reads its .cargo/config.toml)",
        breaks: &["deps-fetched-before-sandbox"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "          cd \"$RUNNER_TEMP\"\n          cargo fetch",
                "          cd \"$GITHUB_WORKSPACE/work\"\n          cargo fetch",
            )
        },
    },
    Mutation {
        description: "fetch into another CARGO_HOME than the build reads",
        breaks: &["deps-fetched-before-sandbox"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "          CARGO_HOME: ${{ runner.temp }}/agent-team/cargo-home\n        run: |\n          cd",
                "          CARGO_HOME: ${{ runner.temp }}/cargo-home\n        run: |\n          cd",
            )
        },
    },
    Mutation {
        description: "fetch without --locked (the fetch may rewrite Cargo.lock)",
        breaks: &["deps-fetched-before-sandbox"],
        apply: |t| replace_in_job(t, BUILD_TEST, "cargo fetch --locked ", "cargo fetch "),
    },
    Mutation {
        description: "read the decision from an output gate decide does not write",
        breaks: &["gate-decision-wired"],
        apply: |t| {
            replace_in_job(
                t,
                GATE,
                "steps.decide.outputs.gate }}",
                "steps.decide.outputs.decision }}",
            )
        },
    },
    Mutation {
        description: "save the decision as text (report check-run reads JSON)",
        breaks: &["gate-decision-wired"],
        apply: |t| replace_in_job(t, GATE, " --format json > ", " > "),
    },
    Mutation {
        description: "require only build-test",
        breaks: &["gate-decision-wired"],
        apply: |t| {
            replace_in_job(
                t,
                GATE,
                "--require guard,build-test",
                "--require build-test",
            )
        },
    },
    Mutation {
        description: "plan without the repository",
        breaks: &["publication-from-plan"],
        apply: |t| {
            replace_in_job(
                t,
                GATE,
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
                GATE,
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
                GATE,
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
                GATE,
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
                GATE,
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
                GATE,
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
                GATE,
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
                GATE,
                "          echo \"Draft pull request: $(jq -r",
                "          gh api graphql --input \"$RUNNER_TEMP/agent-team/commit.json\"\n          echo \"Draft pull request: $(jq -r",
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
        description: "build guard from the patched tree",
        breaks: &["build-test-order"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "      - name: Build guard and report from the trusted commit\n        working-directory: trusted\n",
                "      - name: Build guard and report from the trusted commit\n        working-directory: work\n",
            )
        },
    },
    Mutation {
        description: "drop if: always() from the gate",
        breaks: &["gate-always-runs"],
        apply: |t| replace_in_job(t, GATE, "    if: always()\n", ""),
    },
    Mutation {
        description: "run the gate only on success",
        breaks: &["gate-always-runs"],
        apply: |t| replace_in_job(t, GATE, "    if: always()\n", "    if: success()\n"),
    },
    Mutation {
        description: "publish without the gate's verdict",
        breaks: &["protected-files-surfaced"],
        apply: |t| {
            replace_in_job(
                t,
                GATE,
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
                GATE,
                " \\\n            --verdict-out \"$RUNNER_TEMP/agent-team/verdict.json\"",
                "",
            )
        },
    },
    Mutation {
        description: "check out a head ref in the gate",
        breaks: &["gate-no-head-checkout"],
        apply: |t| {
            replace_in_job(
                t,
                GATE,
                "          path: trusted\n",
                "          path: trusted\n          ref: ${{ inputs.diff_ref }}\n",
            )
        },
    },
    Mutation {
        description: "apply the patch in the gate",
        breaks: &["gate-no-head-checkout"],
        apply: |t| {
            replace_in_job(
                t,
                GATE,
                "          mkdir -p \"$RUNNER_TEMP/agent-team\"\n          \"$GITHUB_WORKSPACE",
                "          mkdir -p \"$RUNNER_TEMP/agent-team\"\n          git -C trusted apply \"$RUNNER_TEMP/agent-team/diff.patch\"\n          \"$GITHUB_WORKSPACE",
            )
        },
    },
    Mutation {
        description: "run a gate binary from a place build-test could write",
        breaks: &["gate-builds-own-binaries"],
        apply: |t| {
            replace_in_job(
                t,
                GATE,
                "\"$GITHUB_WORKSPACE/trusted/target/release/gate\" decide",
                "\"$RUNNER_TEMP/bin/gate\" decide",
            )
        },
    },
    Mutation {
        description: "download build-test's artifact into the gate",
        breaks: &["gate-builds-own-binaries", "actions-pinned"],
        apply: |t| {
            replace_in_job(
                t,
                GATE,
                "      - name: Decide from the upstream job results\n",
                "      - name: Download\n        uses: actions/download-artifact@fa0a91b85d4f404e444e00e005971372dc801d16 # v4.1.8\n\n      - name: Decide from the upstream job results\n",
            )
        },
    },
    Mutation {
        description: "let the App token push workflows",
        breaks: &["app-token-scoped"],
        apply: |t| {
            replace_in_job(
                t,
                GATE,
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
                GATE,
                "          repositories: ${{ github.event.repository.name }}\n",
                "",
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
    Mutation {
        description: "declare 25 more inputs than GitHub accepts",
        breaks: &["inputs-declared"],
        apply: |t| {
            let extra: String = (0..25)
                .map(|i| {
                    format!("      extra_{i}:\n        type: string\n        required: false\n")
                })
                .collect();
            replace_once(t, "    inputs:\n", &format!("    inputs:\n{extra}"))
        },
    },
    Mutation {
        description: "revoke the App token only on success",
        breaks: &["app-token-revoked"],
        apply: |t| {
            replace_in_job(
                t,
                GATE,
                "if: ${{ always() && steps.app-token.outputs.token != '' }}",
                "if: ${{ steps.app-token.outputs.token != '' }}",
            )
        },
    },
];

#[test]
fn each_mutation_breaks_exactly_its_invariant() {
    let original = Workflow::load(APPLY_WORKFLOW);
    let mut covered = BTreeSet::new();
    for mutation in APPLY_MUTATIONS {
        let mutated_text = (mutation.apply)(&original.raw);
        assert_ne!(
            mutated_text, original.raw,
            "{}: no change",
            mutation.description
        );
        let mutated = Workflow::parse(&mutated_text)
            .unwrap_or_else(|e| panic!("{}: {e}\n{mutated_text}", mutation.description));
        let failed: BTreeSet<&str> = failing(&mutated, APPLY_INVARIANTS)
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        let expected: BTreeSet<&str> = mutation.breaks.iter().copied().collect();
        assert_eq!(
            failed, expected,
            "mutation `{}` broke {failed:?}, expected exactly {expected:?}",
            mutation.description
        );
        covered.extend(expected);
    }
    let uncovered: Vec<&str> = APPLY_INVARIANTS
        .iter()
        .map(|(id, _)| *id)
        .filter(|id| !covered.contains(id))
        .collect();
    assert!(
        uncovered.is_empty(),
        "invariants no mutation exercises: {uncovered:?}"
    );
}

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
];

#[test]
fn each_ci_mutation_breaks_exactly_its_invariant() {
    let original = Workflow::load(CI_WORKFLOW);
    let mut covered = BTreeSet::new();
    for mutation in CI_MUTATIONS {
        let mutated = Workflow::parse(&(mutation.apply)(&original.raw))
            .unwrap_or_else(|e| panic!("{}: {e}", mutation.description));
        let failed: BTreeSet<&str> = failing(&mutated, CI_INVARIANTS)
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        let expected: BTreeSet<&str> = mutation.breaks.iter().copied().collect();
        assert_eq!(
            failed, expected,
            "mutation `{}` broke {failed:?}, expected exactly {expected:?}",
            mutation.description
        );
        covered.extend(expected);
    }
    let uncovered: Vec<&str> = CI_INVARIANTS
        .iter()
        .map(|(id, _)| *id)
        .filter(|id| !covered.contains(id))
        .collect();
    assert!(
        uncovered.is_empty(),
        "CI invariants no mutation exercises: {uncovered:?}"
    );
}
