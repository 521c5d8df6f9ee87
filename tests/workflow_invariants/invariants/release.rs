//! The release workflow.

use serde_json::{Value, json};
use std::collections::BTreeSet;

use crate::invariants::Invariant;
use crate::invariants::shared::{
    actions_pinned, checkout_no_persisted_credentials, no_cache, no_dangerous_trigger_text,
    no_expression_in_run, top_level_permissions_empty,
};
use crate::model::{Workflow, index_of, run_contains, run_of, str_of, uses_action, with_of};

/// The release workflow's invariants.
pub(crate) const RELEASE_INVARIANTS: &[(&str, Invariant)] = &[
    (
        "release-dispatched-on-default-branch",
        release_dispatched_on_default_branch,
    ),
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

/// Dispatched by hand with the version, and the build refuses any ref but the default branch
/// before it checks out the dispatched commit (`github.sha`): a tag is created by the release,
/// never a trigger of it.
pub(crate) fn release_dispatched_on_default_branch(wf: &Workflow) -> Result<(), String> {
    let on = wf.doc.get("on");
    let expected = json!({ "workflow_dispatch": { "inputs": { "version": {
        "description": "The version to release, vX.Y.Z: the workspace version of the dispatched commit",
        "required": true,
        "type": "string",
    } } } });
    if on != Some(&expected) {
        return Err(format!(
            "release triggers are {on:?}, not a dispatch with the version"
        ));
    }
    let steps = wf.steps("build")?;
    let guard = steps.first().ok_or("build has no steps")?;
    if !run_contains(
        guard,
        "if [[ \"$REF\" != \"refs/heads/$DEFAULT_BRANCH\" ]]; then",
    ) || guard.pointer("/env/REF").and_then(Value::as_str) != Some("${{ github.ref }}")
        || guard.pointer("/env/DEFAULT_BRANCH").and_then(Value::as_str)
            != Some("${{ github.event.repository.default_branch }}")
    {
        return Err(
            "the build's first step does not refuse a ref other than the default branch".into(),
        );
    }
    let checkout = steps
        .iter()
        .find(|s| uses_action(s, "actions/checkout"))
        .ok_or("build does not check out")?;
    if with_of(checkout, "ref").and_then(Value::as_str) != Some("${{ github.sha }}") {
        return Err("build does not check out the dispatched commit (github.sha)".into());
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
        // The caller's cap on release-publish.yml's job token: the writes use an App token.
        ("publish", json!({ "contents": "read" })),
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
        || build.pointer("/env/VERSION").and_then(Value::as_str) != Some("${{ inputs.version }}")
    {
        return Err(
            "the build step is not `.ci/release-build.sh` on the matrix target and version".into(),
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
    let publish = wf.job("publish")?;
    if str_of(publish, "uses") != Some("./.github/workflows/release-publish.yml")
        || publish.pointer("/with/version").and_then(Value::as_str) != Some("${{ inputs.version }}")
        || crate::model::needs_of(publish) != BTreeSet::from(["attest".to_owned()])
    {
        return Err("publish is not release-publish.yml on the version, after attest".into());
    }
    Ok(())
}

/// release-publish.yml: called only, by release.yml.
pub(crate) const RELEASE_PUBLISH_INVARIANTS: &[(&str, Invariant)] = &[
    ("release-publish-called-only", release_publish_called_only),
    ("top-level-permissions-empty", top_level_permissions_empty),
    ("actions-pinned", actions_pinned),
    (
        "checkout-no-persisted-credentials",
        checkout_no_persisted_credentials,
    ),
    ("no-expression-in-run", no_expression_in_run),
    ("no-cache", no_cache),
    ("release-publish-token", release_publish_token),
    ("release-publish-order", release_publish_order),
];

pub(crate) fn release_publish_called_only(wf: &Workflow) -> Result<(), String> {
    let triggers: Vec<&str> = crate::model::triggers(wf)?;
    if triggers != ["workflow_call"] {
        return Err(format!(
            "triggers are {triggers:?}, not workflow_call alone"
        ));
    }
    no_dangerous_trigger_text(wf)
}

/// One job; its own token reads; the writes are the release App's token, minted in the
/// protected environment with contents and workflows write and nothing else, given only to
/// `gate release` and the revocation, which always runs.
pub(crate) fn release_publish_token(wf: &Workflow) -> Result<(), String> {
    let names: Vec<&str> = wf.jobs()?.keys().map(String::as_str).collect();
    if names != ["publish"] {
        return Err(format!("jobs are {names:?}, expected [publish]"));
    }
    let job = wf.job("publish")?;
    if job.get("permissions") != Some(&json!({ "contents": "read" })) {
        return Err(format!(
            "publish's permissions are {:?}",
            job.get("permissions")
        ));
    }
    if str_of(job, "environment") != Some("agent-team-release") {
        return Err("publish does not run in the agent-team-release environment".into());
    }
    let steps = wf.steps("publish")?;
    let mint: Vec<&Value> = steps
        .iter()
        .filter(|s| uses_action(s, "actions/create-github-app-token"))
        .collect();
    let [mint] = mint.as_slice() else {
        return Err("publish does not mint exactly one App token".into());
    };
    let with = mint
        .get("with")
        .and_then(Value::as_object)
        .ok_or("the token step has no with")?;
    let permissions: BTreeSet<(&str, &str)> = with
        .iter()
        .filter(|(k, _)| k.starts_with("permission-"))
        .map(|(k, v)| (k.as_str(), v.as_str().unwrap_or("?")))
        .collect();
    if permissions
        != BTreeSet::from([
            ("permission-contents", "write"),
            ("permission-workflows", "write"),
        ])
        || with.get("private-key").and_then(Value::as_str)
            != Some("${{ secrets.AGENT_TEAM_RELEASE_APP_PRIVATE_KEY }}")
        || with.get("repositories").and_then(Value::as_str)
            != Some("${{ github.event.repository.name }}")
    {
        return Err(format!("the release App token is {with:?}"));
    }
    let holders: Vec<&str> = steps
        .iter()
        .filter(|s| s.pointer("/env/GH_TOKEN").is_some())
        .filter_map(|s| str_of(s, "name"))
        .collect();
    let expected = [
        "Make the pin commit, tag it and publish the release",
        "Revoke the release App's installation token",
    ];
    if holders != expected
        || steps.iter().any(|s| {
            s.pointer("/env/GH_TOKEN").is_some()
                && s.pointer("/env/GH_TOKEN").and_then(Value::as_str)
                    != Some("${{ steps.app-token.outputs.token }}")
        })
    {
        return Err(format!("the token reaches {holders:?}"));
    }
    let revoke = steps.last().ok_or("no steps")?;
    if !run_contains(revoke, "revoke-token")
        || crate::model::condition(revoke.get("if")).as_deref()
            != Some("always() && steps.app-token.outputs.token != ''")
    {
        return Err("the token is not revoked last, always".into());
    }
    Ok(())
}

/// The assets are checked against SHA256SUMS (and the gate that publishes is unpacked from the
/// checked asset) before the pin is written, and the pin before `gate release`; the pin commit
/// carries the files the pin changed, of the built commit.
pub(crate) fn release_publish_order(wf: &Workflow) -> Result<(), String> {
    let steps = wf.steps("publish")?;
    let check = index_of(steps, |s| {
        run_contains(s, "sha256sum --check --strict SHA256SUMS")
            && run_contains(
                s,
                "tar -xzf \"agent-team-apply-$VERSION-x86_64-unknown-linux-musl.tar.gz\"",
            )
    })
    .ok_or("publish does not check the assets and unpack gate from the checked asset")?;
    let checkout = index_of(steps, |s| {
        uses_action(s, "actions/checkout")
            && with_of(s, "ref").and_then(Value::as_str) == Some("${{ github.sha }}")
    })
    .ok_or("publish does not check out the built commit")?;
    let pin = index_of(steps, |s| {
        run_of(s).map(str::trim)
            == Some("bash .ci/pin-release.sh \"$VERSION\" \"$RUNNER_TEMP/dist/SHA256SUMS\" \"$GITHUB_REPOSITORY\" \"$GITHUB_SERVER_URL\"")
    })
    .ok_or("publish does not pin with .ci/pin-release.sh")?;
    let release = index_of(steps, |s| {
        run_contains(s, "\"$RUNNER_TEMP/gate/gate\" release ")
            && run_contains(s, "--built \"$GITHUB_SHA\"")
            && run_contains(s, "done < <(git diff --name-only -z)")
    })
    .ok_or("publish does not run gate release on the built commit's pinned files")?;
    if !(check < checkout && checkout < pin && pin < release) {
        return Err("the steps are not: check, check out, pin, release".into());
    }
    Ok(())
}
