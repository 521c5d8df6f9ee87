//! The reusable apply/verify workflow (the product).

use serde_json::{Map, Value, json};
use std::collections::BTreeSet;

use crate::invariants::Invariant;
use crate::invariants::shared::{
    actions_pinned, cache_save, checkout_no_persisted_credentials, no_dangerous_trigger_text,
    no_expression_in_run, top_level_permissions_empty,
};
use crate::model::{
    Workflow, as_bool, commands, condition, expressions, index_of, is_lower_hex, is_semver_tag,
    joined, mentions_secrets, needs_of, run_contains, run_of, str_of, triggers, uses_action,
    uses_of, with_of,
};

pub(crate) const GUARD: &str = "guard";

pub(crate) const BUILD_TEST: &str = "build-test";

pub(crate) const DECIDE: &str = "decide";

pub(crate) const PUBLISH: &str = "publish";

pub(crate) const JOBS: [&str; 4] = [GUARD, BUILD_TEST, DECIDE, PUBLISH];

/// The jobs that read the diff, and the policy.
pub(crate) const DIFF_JOBS: [&str; 3] = [GUARD, BUILD_TEST, PUBLISH];

/// The dispatch inputs: declared by the caller, read by the reusable workflow from the event.
pub(crate) const DISPATCH_INPUTS: [&str; 10] = [
    "task_id",
    "base_sha",
    "expected_diff_sha256",
    "declared_scope",
    "diff_b64",
    "diff_ref",
    "dispatch_mac",
    "pr_title",
    "pr_description",
    "revise_pull_request",
];

/// Those the dispatcher must always send.
pub(crate) const REQUIRED_DISPATCH_INPUTS: [&str; 4] = [
    "task_id",
    "base_sha",
    "expected_diff_sha256",
    "declared_scope",
];

/// The reusable workflow's own inputs (the caller's configuration) and the secrets it takes.
pub(crate) const CALL_INPUTS: [&str; 16] = [
    "build-command",
    "setup-command",
    "cache-key",
    "cache-paths",
    "cache-restore-keys",
    "fetch-command",
    "policy",
    "egress-allow",
    "toolchain-paths",
    "environment",
    "protected-label",
    "check-run-name",
    "protected-reviewers",
    "runner",
    "build-timeout-minutes",
    "timeout-minutes",
];

pub(crate) const CALL_SECRETS: [&str; 3] = [
    "AGENT_TEAM_APP_PRIVATE_KEY",
    "AGENT_TEAM_DISPATCH_KEY",
    "AGENT_TEAM_DISPATCH_KEY_PREVIOUS",
];

/// Where the published reusable workflow lives, as adopters reference it.
pub(crate) const REUSABLE_REF: &str =
    "agent-team/agent-team-apply/.github/workflows/agent-team-apply-verify.yml";

/// How this repository's own caller references it: the same commit.
pub(crate) const LOCAL_REUSABLE_REF: &str = "./.github/workflows/agent-team-apply-verify.yml";

/// An example caller fits on a screen.
pub(crate) const MAX_CALLER_LINES: usize = 28;

pub(crate) const INSTALL_STEP: &str = "Install the pinned agent-team binaries";

pub(crate) const POLICY_STEP: &str = "Read the policy from the trusted commit";

pub(crate) const POLICY_FILE: &str = "\"$RUNNER_TEMP/agent-team/policy.yml\"";

/// Where every job installs its trusted binaries: root-owned at every component.
pub(crate) const TRUSTED_BIN: &str = "/opt/agent-team/bin";

/// The reusable apply/verify workflow's invariants, by stable id.
pub(crate) const APPLY_INVARIANTS: &[(&str, Invariant)] = &[
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
    ("cache-restore-only", cache_restore_only),
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
    ("build-tree-discarded", build_tree_discarded),
    ("deps-fetched-before-sandbox", deps_fetched_before_sandbox),
    ("setup-before-the-diff", setup_before_the_diff),
    ("build-command-from-caller", build_command_from_caller),
    ("decide-runs-unless-cancelled", decide_runs_unless_cancelled),
    ("publish-only-on-pass", publish_only_on_pass),
    ("gate-decision-wired", gate_decision_wired),
    ("publication-from-plan", publication_from_plan),
    ("protected-files-surfaced", protected_files_surfaced),
    ("publication-names-wired", publication_names_wired),
    ("no-head-checkout-downstream", no_head_checkout_downstream),
    ("no-artifact-read-downstream", no_artifact_read_downstream),
    ("app-token-scoped", app_token_scoped),
    ("app-token-revoked", app_token_revoked),
    ("dispatch-signature-verified", dispatch_signature_verified),
    ("guard-verdict-uploaded", guard_verdict_uploaded),
];

/// guard's last steps upload its verdict and readiness for the dispatcher, whatever the checks
/// concluded (unless the run was cancelled): one file named for the run and attempt, uploaded
/// as is (`archive: false`) with the pinned upload-artifact.
pub(crate) fn guard_verdict_uploaded(wf: &Workflow) -> Result<(), String> {
    let steps = wf.steps(GUARD)?;
    let Some(collect) = steps
        .iter()
        .find(|s| str_of(s, "id") == Some("guard-reasons"))
    else {
        return Err("guard does not collect its verdict for the dispatcher".into());
    };
    let script = joined(run_of(collect).unwrap_or_default());
    if !script.contains("agent-team-guard-$GITHUB_RUN_ID-$GITHUB_RUN_ATTEMPT-$call.json")
        || !script.contains("\"agent-team-apply/guard-reasons/v1\"")
        || str_of(collect, "if") != Some("${{ !cancelled() }}")
    {
        return Err(
            "guard's verdict file is not named for the run and attempt, or not always written"
                .into(),
        );
    }
    let Some(upload) = steps
        .iter()
        .find(|s| uses_action(s, "actions/upload-artifact"))
    else {
        return Err("guard uploads no artifact".into());
    };
    let with = |key: &str| {
        with_of(upload, key).map(|v| match v {
            Value::Bool(b) => b.to_string(),
            other => other.as_str().unwrap_or_default().to_owned(),
        })
    };
    if with("archive").as_deref() != Some("false")
        || with("path").as_deref() != Some("${{ steps.guard-reasons.outputs.file }}")
        || str_of(upload, "if")
            != Some("${{ !cancelled() && steps.guard-reasons.outputs.file != '' }}")
    {
        return Err(
            "guard's verdict is not uploaded as is, or not whatever the checks concluded".into(),
        );
    }
    Ok(())
}

/// Only `workflow_call` starts it; no `pull_request_target` or `workflow_run` anywhere.
pub(crate) fn reusable_only(wf: &Workflow) -> Result<(), String> {
    let on = triggers(wf)?;
    if on != ["workflow_call"] {
        return Err(format!("triggers are {on:?}, not only workflow_call"));
    }
    no_dangerous_trigger_text(wf)
}

/// The caller configures the build exactly through the documented inputs (`build-command`
/// required, the others optional with defaults; none of them a dispatch input) and passes exactly
/// the publication's secrets, none required.
pub(crate) fn call_interface(wf: &Workflow) -> Result<(), String> {
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
    // The App key and the dispatch key must be passed by name (GitHub fails a call without
    // them before any job starts, naming the secret); the previous dispatch key is optional.
    if secrets.iter().any(|(name, s)| {
        as_bool(s.get("required")) != Some(name != "AGENT_TEAM_DISPATCH_KEY_PREVIOUS")
    }) {
        return Err("the App key and the dispatch key are not both required, or the previous dispatch key is".into());
    }
    Ok(())
}

/// The dispatch inputs reach the jobs as workflow variables read from the event that started the
/// run (`github.event.inputs.*`), never from a caller-set input; every `inputs.` the file reads
/// is one of its own configuration inputs.
pub(crate) fn dispatch_inputs_from_event(wf: &Workflow) -> Result<(), String> {
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

/// Exactly the four jobs, each with its grant: guard reads checks and pull requests (the replay
/// check: the App's record, a check run on the base, and the pull request it names), publish
/// reads the environments' settings (`actions: read`), decide nothing; every other job reads
/// contents.
pub(crate) fn job_grant(name: &str) -> serde_json::Value {
    match name {
        DECIDE => json!({}),
        GUARD => json!({ "checks": "read", "contents": "read", "pull-requests": "read" }),
        PUBLISH => json!({ "actions": "read", "contents": "read" }),
        _ => json!({ "contents": "read" }),
    }
}

/// What a caller grants the call: the union of the jobs' grants (a called job is never granted
/// more than its caller).
pub(crate) fn caller_grant() -> serde_json::Value {
    let mut union = serde_json::Map::new();
    for name in JOBS {
        if let serde_json::Value::Object(grant) = job_grant(name) {
            union.extend(grant);
        }
    }
    serde_json::Value::Object(union)
}

pub(crate) fn job_permissions_exact(wf: &Workflow) -> Result<(), String> {
    let names: BTreeSet<&str> = wf.jobs()?.keys().map(String::as_str).collect();
    let expected_names: BTreeSet<&str> = JOBS.into_iter().collect();
    if names != expected_names {
        return Err(format!("jobs are {names:?}, expected {expected_names:?}"));
    }
    for name in JOBS {
        let expected = job_grant(name);
        let permissions = wf.job(name)?.get("permissions");
        if permissions != Some(&expected) {
            return Err(format!(
                "job `{name}` permissions are {permissions:?}, expected {expected}"
            ));
        }
    }
    Ok(())
}

pub(crate) fn needs_chain(wf: &Workflow) -> Result<(), String> {
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

/// `secrets` appears in no expression outside publish (nor at workflow level), except the
/// dispatch keys in the env of guard's signature check: guard runs no patch code.
pub(crate) fn secrets_only_in_publish(wf: &Workflow) -> Result<(), String> {
    if let Value::Object(top) = &wf.doc {
        for (key, value) in top {
            if key != "jobs" && mentions_secrets(value) {
                return Err(format!("workflow-level `{key}` references secrets"));
            }
        }
    }
    for (name, job) in wf.jobs()? {
        if name == PUBLISH {
            continue;
        }
        let mut job = job.clone();
        if name == GUARD
            && let Some(Value::Array(steps)) = job.get_mut("steps")
        {
            for step in steps.iter_mut() {
                if str_of(step, "name") != Some(VERIFY_STEP) {
                    continue;
                }
                if let Some(Value::Object(env)) = step.get_mut("env") {
                    for key in DISPATCH_KEYS {
                        if env.get(key).and_then(Value::as_str)
                            == Some(format!("${{{{ secrets.{key} }}}}").as_str())
                        {
                            env.remove(key);
                        }
                    }
                }
            }
        }
        if mentions_secrets(&job) {
            return Err(format!("job `{name}` references secrets"));
        }
    }
    Ok(())
}

/// The step of guard and publish that checks the dispatcher's signature.
pub(crate) const VERIFY_STEP: &str = "Verify the dispatcher's signature";

/// The only secrets guard may read.
pub(crate) const DISPATCH_KEYS: [&str; 2] = [
    "AGENT_TEAM_DISPATCH_KEY",
    "AGENT_TEAM_DISPATCH_KEY_PREVIOUS",
];

/// publish names the caller's `environment` (`agent-team-publish` by default: the App key;
/// reviewers are asked only for runs that passed), guard names `agent-team-verify` (the dispatch keys, no reviewers), and no other job
/// names an environment.
pub(crate) fn environment_only_on_publish(wf: &Workflow) -> Result<(), String> {
    for (name, job) in wf.jobs()? {
        let environment = job.get("environment");
        let expected = match name.as_str() {
            PUBLISH => Some(json!("${{ inputs.environment }}")),
            GUARD => Some(json!("agent-team-verify")),
            _ => None,
        };
        if environment != expected.as_ref() {
            return Err(format!("job `{name}` environment is {environment:?}"));
        }
    }
    Ok(())
}

/// No job saves a cache (build-test runs the patch on the dispatched ref, whose cache scope every
/// workflow of the default branch reads; the other jobs need none), and the one cache read is
/// the pinned, restore-only `actions/cache/restore` in build-test: only when the caller gave a
/// key, after the step that checks the cache inputs and before any checkout, the policy or the
/// diff reach the job, with exactly the caller's key, paths and restore keys.
pub(crate) fn cache_restore_only(wf: &Workflow) -> Result<(), String> {
    for (job, step) in wf.all_steps()? {
        if let Some(why) = cache_save(step) {
            return Err(format!("job `{job}`: {why}"));
        }
        if job != BUILD_TEST && uses_of(step).is_some_and(|u| u.starts_with("actions/cache")) {
            return Err(format!("job `{job}` reads a cache"));
        }
    }
    let steps = wf.steps(BUILD_TEST)?;
    let restores: Vec<usize> = (0..steps.len())
        .filter(|&i| uses_of(&steps[i]).is_some_and(|u| u.starts_with("actions/cache")))
        .collect();
    let &[restore] = restores.as_slice() else {
        return Err(format!(
            "build-test has {} cache steps, expected one restore",
            restores.len()
        ));
    };
    let step = &steps[restore];
    if !uses_action(step, "actions/cache/restore") {
        return Err("build-test's cache step is not actions/cache/restore".into());
    }
    let first_checkout = index_of(steps, |s| uses_action(s, "actions/checkout"))
        .ok_or("build-test checks nothing out")?;
    let policy = index_of(steps, |s| str_of(s, "name") == Some(POLICY_STEP))
        .ok_or("build-test does not read the policy")?;
    if restore > first_checkout || restore > policy {
        return Err("the cache is restored after a checkout or the policy reached the job".into());
    }
    if condition(step.get("if")).as_deref() != Some("inputs.cache-key != ''") {
        return Err("the cache is restored without the caller's key".into());
    }
    let expected = json!({
        "key": "${{ inputs.cache-key }}",
        "path": "${{ inputs.cache-paths }}",
        "restore-keys": "${{ inputs.cache-restore-keys }}",
    });
    if step.get("with") != Some(&expected) {
        return Err(format!(
            "the restore's inputs are {:?}, not exactly {expected}",
            step.get("with")
        ));
    }
    let check = restore
        .checked_sub(1)
        .map(|i| &steps[i])
        .filter(|s| str_of(s, "name") == Some("Check the cache inputs"))
        .ok_or("the cache inputs are not checked right before the restore")?;
    let script = run_of(check).unwrap_or_default();
    let guarded = condition(check.get("if")).is_some_and(|c| {
        c.contains("inputs.cache-key != ''") && c.contains("inputs.cache-paths != ''")
    });
    if !guarded
        || !script
            .contains(r#"for inside in "$GITHUB_WORKSPACE" "$RUNNER_TEMP" /opt/agent-team; do"#)
        || !script.contains("exit \"$status\"")
    {
        return Err("the cache paths are not refused inside the workspace and RUNNER_TEMP".into());
    }
    Ok(())
}

/// The first step of a job that is not harden-runner.
pub(crate) fn first_step(wf: &Workflow, job: &str) -> Result<usize, String> {
    wf.steps(job)?
        .iter()
        .position(|s| !uses_action(s, "step-security/harden-runner"))
        .ok_or_else(|| format!("job `{job}` has no steps"))
}

/// Every job opens (after harden-runner) with the same install step: the asset of the runner's
/// architecture downloaded over https only, its SHA-256 checked against the pin before anything
/// reads it, and the binaries installed root-owned under /opt/agent-team/bin, every component
/// of which root creates.
pub(crate) fn binaries_installed_first(wf: &Workflow) -> Result<(), String> {
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
pub(crate) fn release_pinned(wf: &Workflow) -> Result<(), String> {
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
pub(crate) fn pinned_release(wf: &Workflow) -> Result<String, String> {
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
pub(crate) fn inputs_validated_first(wf: &Workflow) -> Result<(), String> {
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
pub(crate) fn downloads(script: &str) -> bool {
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
pub(crate) fn every_download_hash_checked(wf: &Workflow) -> Result<(), String> {
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
pub(crate) fn diff_rehashed_in_every_job(wf: &Workflow) -> Result<(), String> {
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
pub(crate) fn no_job_compiles(wf: &Workflow) -> Result<(), String> {
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
pub(crate) fn policy_from_trusted_commit(wf: &Workflow) -> Result<(), String> {
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

/// guard checks the repository's own workflows for the second execution (the base's and the
/// default branch head's), and publish checks them again before the App token is minted:
/// `guard readiness` over the published branch, with the policy, its exit status the step's, the
/// step neither conditional nor allowed to fail; its document goes to the summary.
pub(crate) fn readiness_checked(wf: &Workflow) -> Result<(), String> {
    readiness_step_checked(wf, GUARD, "base")?;
    readiness_step_checked(wf, PUBLISH, "trusted")?;
    let steps = wf.steps(PUBLISH)?;
    let position = |pred: &dyn Fn(&Value) -> bool| steps.iter().position(pred);
    let readiness = position(&|s| run_contains(s, "guard\" readiness "));
    let mint = position(&|s| {
        s.get("name").and_then(Value::as_str) == Some("Mint the App installation token")
    });
    match (readiness, mint) {
        (Some(r), Some(m)) if r < m => Ok(()),
        _ => Err("publish does not run guard readiness before minting the App token".into()),
    }
}

fn readiness_step_checked(wf: &Workflow, job: &str, repo: &str) -> Result<(), String> {
    let steps = wf.steps(job)?;
    let step = steps
        .iter()
        .find(|s| run_contains(s, "guard\" readiness "))
        .ok_or_else(|| format!("{job} does not run guard readiness"))?;
    let script = run_of(step).unwrap_or_default();
    let flat = joined(script);
    let head =
        format!(" readiness --repo {repo} --base \"$BASE_SHA\" --branch \"agent-team/$TASK_ID\" ");
    for needed in [
        head.as_str(),
        " --default-head \"$default_head\" ",
        " --base-branch \"$DEFAULT_BRANCH\" --repository \"$GITHUB_REPOSITORY\" ",
        " --format json > \"$doc\" || status=$?",
        "\"$bin/report\" readiness --doc \"$doc\" --format markdown >> \"$GITHUB_STEP_SUMMARY\"",
    ] {
        if !flat.contains(needed) {
            return Err(format!("{job}: guard readiness lacks `{}`", needed.trim()));
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
pub(crate) fn harden_runner_first(wf: &Workflow) -> Result<(), String> {
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
pub(crate) fn egress_probed_before_build(wf: &Workflow) -> Result<(), String> {
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
pub(crate) fn untrusted_run_index(steps: &[Value]) -> Result<usize, String> {
    index_of(steps, |s| {
        run_contains(s, &format!("{TRUSTED_BIN}/guard run "))
    })
    .ok_or_else(|| "no `guard run` step".into())
}

/// build-test: the binaries are installed before the patch is applied; the tree is verified after
/// apply, and again after the build by `guard run` itself (`--verdict`, `--baseline` pinned by
/// the apply step's output), so no later step has to run a check the build could have tampered
/// with.
pub(crate) fn build_test_order(wf: &Workflow) -> Result<(), String> {
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
pub(crate) fn build_sandboxed_under_sudo(wf: &Workflow) -> Result<(), String> {
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

/// No step after `guard run` reads the build's tree, the post steps of the actions before it
/// included (`actions/checkout`'s runs `git submodule foreach --recursive` in `work`, outside the
/// sandbox, with the job's token, whatever the job's outcome): the build writes `work` only
/// through guard's overlay, which exists only when guard starts as root (`sudo`), and whose
/// bounded upper layer guard discards (that guard starts as root is
/// [`build_sandboxed_under_sudo`]'s). So nothing is declared `--writable` (a host directory the
/// build would write in place), and the write budget is explicit. The later steps' own reads
/// are [`later_steps_out_of_reach`]'s.
pub(crate) fn build_tree_discarded(wf: &Workflow) -> Result<(), String> {
    let steps = wf.steps(BUILD_TEST)?;
    let untrusted = untrusted_run_index(steps)?;
    let script = joined(run_of(&steps[untrusted]).unwrap_or_default());
    let guard = script
        .find(&format!(" {TRUSTED_BIN}/guard run "))
        .ok_or("no trusted guard run")?;
    let args = &script[guard..];
    if args.contains("--writable") {
        return Err("guard run declares a host directory --writable: the build writes it in place, and later steps read it".into());
    }
    for flag in ["--write-budget-bytes ", "--write-budget-inodes "] {
        if !args.contains(flag) {
            return Err(format!("guard run does not set `{}`", flag.trim()));
        }
    }
    Ok(())
}

/// After the build, no step of build-test reads a file or runs a binary the build could have
/// written: binaries only from /opt/agent-team/bin, files only under `$RUNNER_TEMP/agent-team/`
/// (hidden from the build: guard hides RUNNER_TEMP, which its environment names), no work tree,
/// no working directory, no tool found through `PATH` or the workspace, actions only the pinned
/// artifact upload of that report directory.
pub(crate) fn later_steps_out_of_reach(wf: &Workflow) -> Result<(), String> {
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
pub(crate) fn deps_fetched_before_sandbox(wf: &Workflow) -> Result<(), String> {
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

/// The caller's setup command (a toolchain the image lacks) runs in build-test alone, before the
/// diff reaches the job (before its fetch and its apply: the work tree is still the base), from
/// an empty directory outside the checkouts, unprivileged, with exactly its command and
/// AGENT_TEAM_TOOLS in its environment (no secret, no token), and only when the caller gave one;
/// what it installs there is bound read-only into the build.
pub(crate) fn setup_before_the_diff(wf: &Workflow) -> Result<(), String> {
    for (job, step) in wf.all_steps()? {
        if job != BUILD_TEST && run_contains(step, "$SETUP_COMMAND") {
            return Err(format!("job `{job}` runs the setup command"));
        }
    }
    let steps = wf.steps(BUILD_TEST)?;
    let setup = index_of(steps, |s| run_contains(s, "\"$SETUP_COMMAND\""))
        .ok_or("build-test does not run the setup command")?;
    let diff = index_of(steps, |s| run_contains(s, "/agent-team/diff.patch\""))
        .ok_or("build-test does not fetch the diff")?;
    if setup > diff {
        return Err(format!(
            "the setup (step {setup}) runs after the diff is fetched (step {diff})"
        ));
    }
    let step = &steps[setup];
    let tools = "${{ runner.temp }}/agent-team/tools";
    let expected_env = json!({
        "SETUP_COMMAND": "${{ inputs.setup-command }}",
        "AGENT_TEAM_TOOLS": tools,
    });
    if step.get("env") != Some(&expected_env) {
        return Err(format!(
            "the setup step's environment is {:?}, not exactly {expected_env}",
            step.get("env")
        ));
    }
    if mentions_secrets(step) {
        return Err("the setup step reads a secret".into());
    }
    if condition(step.get("if")).as_deref() != Some("inputs.setup-command != ''") {
        return Err("the setup step does not run only when the caller gave a command".into());
    }
    let script = run_of(step).unwrap_or_default();
    let lines: Vec<&str> = script.lines().map(str::trim).collect();
    if step.get("working-directory").is_some()
        || step.get("uses").is_some()
        || lines
            != [
                "mkdir -p \"$RUNNER_TEMP/agent-team/setup\" \"$AGENT_TEAM_TOOLS\"",
                "cd \"$RUNNER_TEMP/agent-team/setup\"",
                "bash -euo pipefail -c \"$SETUP_COMMAND\"",
            ]
    {
        return Err(
            "the setup does not run from an empty directory outside the checkouts, unprivileged"
                .into(),
        );
    }
    let untrusted = untrusted_run_index(steps)?;
    if steps[untrusted]
        .pointer("/env/AGENT_TEAM_TOOLS")
        .and_then(Value::as_str)
        != Some(tools)
    {
        return Err("the build does not read the setup's AGENT_TEAM_TOOLS".into());
    }
    let build = joined(run_of(&steps[untrusted]).unwrap_or_default());
    for needed in [
        " --read-only \"$AGENT_TEAM_TOOLS\" ",
        " --allow-env AGENT_TEAM_TOOLS ",
        " AGENT_TEAM_TOOLS=\"$AGENT_TEAM_TOOLS\" ",
    ] {
        if !build.contains(needed) {
            return Err(format!("guard run lacks `{}`", needed.trim()));
        }
    }
    Ok(())
}

/// The code guard run executes is the caller's build command, from the caller's file (an input
/// of the call, never of the dispatch), run by bash inside the sandbox.
pub(crate) fn build_command_from_caller(wf: &Workflow) -> Result<(), String> {
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
pub(crate) fn decide_runs_unless_cancelled(wf: &Workflow) -> Result<(), String> {
    let cond = condition(wf.job(DECIDE)?.get("if"));
    if cond.as_deref() != Some("!cancelled()") {
        return Err(format!("decide `if` is {cond:?}, not !cancelled()"));
    }
    Ok(())
}

/// publish runs only when decide succeeded with a pass and the run was not cancelled; decide
/// exports its gate output; publications of one task are serialised.
pub(crate) fn publish_only_on_pass(wf: &Workflow) -> Result<(), String> {
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
pub(crate) fn gate_decision_wired(wf: &Workflow) -> Result<(), String> {
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
pub(crate) fn publication_from_plan(wf: &Workflow) -> Result<(), String> {
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
        " --revise \"$REVISE_PULL_REQUEST\" ",
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
            at == steps.len() - 1 && joined(script) == "/opt/agent-team/bin/gate revoke-token";
        if revocation {
            continue;
        }
        for line in script.replace("\\\n", " ").lines() {
            // Before the token exists, the install step downloads the release (hash-checked).
            if at > mint && (line.contains("curl") || line.contains("wget")) {
                return Err(format!("publish calls out with `{}`", line.trim()));
            }
            if line.contains("gate revoke-token") {
                return Err("a step other than the last revokes the App token".to_owned());
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
pub(crate) fn protected_files_surfaced(wf: &Workflow) -> Result<(), String> {
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

/// The names a caller may choose keep today's values as defaults and reach what uses them:
/// `environment` is publish's (checked by its first step after the inputs, before any checkout
/// or token), `check-run-name`, `protected-label` and `protected-reviewers` reach `gate publish`
/// (which refuses an odd value before any request) through its environment, never through `run:`.
pub(crate) fn publication_names_wired(wf: &Workflow) -> Result<(), String> {
    for (input, default) in [
        ("environment", "agent-team-publish"),
        ("protected-label", "agent-team: protected files"),
        ("check-run-name", "agent-team-apply / gate"),
        ("protected-reviewers", ""),
    ] {
        let found = wf
            .doc
            .pointer(&format!("/on/workflow_call/inputs/{input}/default"))
            .and_then(Value::as_str);
        if found != Some(default) {
            return Err(format!(
                "input `{input}` defaults to {found:?}, not {default:?}"
            ));
        }
    }
    let steps = wf.steps(PUBLISH)?;
    let check = steps
        .get(first_step(wf, PUBLISH)? + 2)
        .ok_or("publish ends after validating its inputs")?;
    let script = run_of(check).unwrap_or_default();
    if check
        .pointer("/env/PUBLISH_ENVIRONMENT")
        .and_then(Value::as_str)
        != Some("${{ inputs.environment }}")
        || !script.contains(
            r#"if [[ ! "$PUBLISH_ENVIRONMENT" =~ ^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$ ]]; then"#,
        )
    {
        return Err("publish does not check the environment's name before anything else".into());
    }
    let publish = steps
        .iter()
        .find(|s| run_contains(s, "/gate publish "))
        .ok_or("publish does not run gate publish")?;
    let flat = joined(run_of(publish).unwrap_or_default());
    for (var, input, flag) in [
        ("CHECK_RUN_NAME", "check-run-name", "--check-name"),
        ("PROTECTED_LABEL", "protected-label", "--protected-label"),
        (
            "PROTECTED_REVIEWERS",
            "protected-reviewers",
            "--protected-reviewers",
        ),
    ] {
        let wanted = format!("${{{{ inputs.{input} }}}}");
        if publish
            .pointer(&format!("/env/{var}"))
            .and_then(Value::as_str)
            != Some(wanted.as_str())
            || !flat.contains(&format!(" {flag} \"${var}\" "))
        {
            return Err(format!(
                "gate publish does not get `{input}` as `{flag} \"${var}\"`"
            ));
        }
    }
    Ok(())
}

/// decide and publish check out only the dispatched commit and never apply the patch.
pub(crate) fn no_head_checkout_downstream(wf: &Workflow) -> Result<(), String> {
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
pub(crate) fn no_artifact_read_downstream(wf: &Workflow) -> Result<(), String> {
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
pub(crate) fn app_token_scoped(wf: &Workflow) -> Result<(), String> {
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
pub(crate) fn app_token_revoked(wf: &Workflow) -> Result<(), String> {
    let steps = wf.steps(PUBLISH)?;
    let mint = index_of(steps, |s| uses_action(s, "actions/create-github-app-token"))
        .ok_or("publish mints no App token")?;
    let id = str_of(&steps[mint], "id").ok_or("the App token step has no id")?;
    let last = steps.last().ok_or("publish has no steps")?;
    let cond = condition(last.get("if")).unwrap_or_default();
    let token_env = last.pointer("/env/GH_TOKEN").and_then(Value::as_str);
    let expected_env = format!("${{{{ steps.{id}.outputs.token }}}}");
    if !cond.starts_with("always()")
        || run_of(last).map(joined).as_deref() != Some("/opt/agent-team/bin/gate revoke-token")
        || token_env != Some(expected_env.as_str())
    {
        return Err(
            "the last step of publish is not an always() revocation of the App token".into(),
        );
    }
    Ok(())
}

/// guard verifies the dispatcher's signature with `gate verify-dispatch` right after validating
/// the inputs, before any other work (so an unsigned dispatch fails before reviewers are asked),
/// and publish verifies it again before the App token is minted; both over the run's own
/// repository, ref and caller workflow and every signed input (the MAC as dispatched), with the
/// environment's keys; neither step can be skipped or its failure ignored.
pub(crate) fn dispatch_signature_verified(wf: &Workflow) -> Result<(), String> {
    let guard = wf.steps(GUARD)?;
    let validate = index_of(guard, |s| str_of(s, "id") == Some("validate-inputs"))
        .ok_or("guard does not validate its inputs")?;
    let first = index_of(guard, |s| run_contains(s, "/gate verify-dispatch "))
        .ok_or("guard does not run gate verify-dispatch")?;
    if first != validate + 1 {
        return Err("guard does not verify the signature right after validating the inputs".into());
    }
    verify_step(&guard[first], "guard")?;
    // The replay record is the publishing App's check run: both checks name the App.
    let app_id = "${{ vars.AGENT_TEAM_APP_ID }}";
    if guard[first]
        .pointer("/env/AGENT_TEAM_APP_ID")
        .and_then(Value::as_str)
        != Some(app_id)
    {
        return Err(format!(
            "guard: gate verify-dispatch does not get AGENT_TEAM_APP_ID: {app_id} (the replay record's App)"
        ));
    }
    let publish_steps = wf.steps(PUBLISH)?;
    let publish_step = index_of(publish_steps, |s| run_contains(s, "/gate publish "))
        .ok_or("publish does not run gate publish")?;
    if publish_steps[publish_step]
        .pointer("/env/AGENT_TEAM_APP_ID")
        .and_then(Value::as_str)
        != Some(app_id)
    {
        return Err(format!(
            "publish: gate publish does not get AGENT_TEAM_APP_ID: {app_id} (the replay record's App)"
        ));
    }
    let script = joined(run_of(&guard[first]).unwrap_or_default());
    for needed in [
        " --run-id=\"$GITHUB_RUN_ID\" ",
        " --run-attempt=\"$GITHUB_RUN_ATTEMPT\" ",
    ] {
        if !script.contains(needed) {
            return Err(format!(
                "guard: gate verify-dispatch lacks `{}` (the replay check)",
                needed.trim()
            ));
        }
    }
    let steps = wf.steps(PUBLISH)?;
    let verify = index_of(steps, |s| run_contains(s, "/gate verify-dispatch "))
        .ok_or("publish does not run gate verify-dispatch")?;
    let mint = index_of(steps, |s| uses_action(s, "actions/create-github-app-token"))
        .ok_or("publish mints no App token")?;
    if verify > mint {
        return Err("the dispatch signature is verified after the App token is minted".into());
    }
    verify_step(&steps[verify], "publish")
}

fn verify_step(step: &Value, job: &str) -> Result<(), String> {
    let script = joined(run_of(step).unwrap_or_default());
    for needed in [
        " --repository=\"$GITHUB_REPOSITORY\" ",
        " --ref=\"$GITHUB_REF\" ",
        " --task-id=\"$TASK_ID\" ",
        " --base=\"$BASE_SHA\" ",
        " --diff-sha256=\"$EXPECTED_DIFF_SHA256\" ",
        " --declared-scope=\"$DECLARED_SCOPE\" ",
        " --workflow-ref=\"$GITHUB_WORKFLOW_REF\" ",
        " --pr-title=\"$PR_TITLE\" ",
        " --pr-description=\"$PR_DESCRIPTION\" ",
        " --revise=\"$REVISE_PULL_REQUEST\" ",
        " --mac=\"$DISPATCH_MAC\"",
    ] {
        if !script.contains(needed) {
            return Err(format!(
                "{job}: gate verify-dispatch lacks `{}`",
                needed.trim()
            ));
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
                "{job}: the verification step does not set {name} to `{value}`"
            ));
        }
    }
    if step.get("if").is_some() || step.get("continue-on-error").is_some() {
        return Err(format!(
            "{job}: the verification step is conditional or may fail without stopping the job"
        ));
    }
    Ok(())
}
