//! The project's CI workflow.

use serde_json::{Value, json};

use crate::invariants::Invariant;
use crate::invariants::shared::{
    actions_pinned, checkout_no_persisted_credentials, no_cache, no_expression_in_run,
    top_level_permissions_empty,
};
use crate::model::{Workflow, joined, run_contains, run_of};

/// The project CI's invariants.
pub(crate) const CI_INVARIANTS: &[(&str, Invariant)] = &[
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

pub(crate) fn ci_triggers(wf: &Workflow) -> Result<(), String> {
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

pub(crate) fn ci_job_permissions_read(wf: &Workflow) -> Result<(), String> {
    for (name, job) in wf.jobs()? {
        if job.get("permissions") != Some(&json!({ "contents": "read" })) {
            return Err(format!(
                "CI job `{name}` permissions are not {{contents: read}}"
            ));
        }
    }
    Ok(())
}

/// Exactly what EVIDENCE.md ("What CI runs") says CI runs.
pub(crate) fn ci_runs_the_checks(wf: &Workflow) -> Result<(), String> {
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
        "RUSTFLAGS=\"-C target-feature=+crt-static\" cargo build --release --locked --workspace --no-default-features --target x86_64-unknown-linux-gnu --bin guard --bin gate --bin report",
        "MAX_BYTES=$((6000000 + libc_overhead)) bash .ci/static-check.sh target/x86_64-unknown-linux-gnu/release",
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
pub(crate) fn ci_tests_as_root(wf: &Workflow) -> Result<(), String> {
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
