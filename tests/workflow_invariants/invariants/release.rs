//! The release workflow.

use serde_json::{Value, json};
use std::collections::BTreeSet;

use crate::invariants::Invariant;
use crate::invariants::shared::{
    actions_pinned, checkout_no_persisted_credentials, no_cache, no_dangerous_trigger_text,
    no_expression_in_run, top_level_permissions_empty,
};
use crate::model::{Workflow, index_of, run_contains, run_of, uses_action, with_of};

/// The release workflow's invariants.
pub(crate) const RELEASE_INVARIANTS: &[(&str, Invariant)] = &[
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

pub(crate) fn release_on_tags_only(wf: &Workflow) -> Result<(), String> {
    let on = wf.doc.get("on");
    if on != Some(&json!({ "push": { "tags": ["v*"] } })) {
        return Err(format!("release triggers are {on:?}, not push of v* tags"));
    }
    no_dangerous_trigger_text(wf)
}

/// The builds read; the attestation alone mints an OIDC token and writes attestations; the
/// publication alone writes contents.
pub(crate) fn release_job_permissions(wf: &Workflow) -> Result<(), String> {
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

/// Both musl targets, built by the checked script (static, at most 6 MB, they run), with the
/// cross linker installed from hash-pinned wheels.
pub(crate) fn release_builds_static_musl(wf: &Workflow) -> Result<(), String> {
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
pub(crate) fn release_attests_what_it_publishes(wf: &Workflow) -> Result<(), String> {
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
