//! Security invariants of the GitHub Actions workflows, checked over the parsed YAML and, where a
//! property lives in the text (the `# vX.Y.Z` beside a pin), over the raw file.
//!
//! Four kinds of file: the reusable apply/verify workflow (the product), the callers of it (this
//! repository's own and the examples an adopter copies), the project's CI, and its release. Each
//! invariant is a function over a [`Workflow`] returning `Result<(), String>`. One test runs them
//! all on the real files; a mutation test breaks each file one invariant at a time and asserts that
//! exactly the targeted invariant, and no other, notices.
//!
//! Layout: [`model`] reads a file into a [`Workflow`] (duplicate keys rejected) and gives the
//! accessors every invariant uses; [`invariants`] holds one module per kind of file, each with its
//! table of invariants by stable id, and [`invariants::shared`] those several kinds hold alike (the
//! table of verified action pins among them); [`mutations`] holds the mutation tables, one module
//! per kind of file, and the check that runs them. This file holds the tests.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod invariants;
mod model;
mod mutations;

use std::collections::BTreeSet;
use std::path::Path;

use crate::invariants::apply::APPLY_INVARIANTS;
use crate::invariants::callers::{CALLER_INVARIANTS, EXAMPLE_INVARIANTS};
use crate::invariants::ci::CI_INVARIANTS;
use crate::invariants::failing;
use crate::invariants::release::{RELEASE_INVARIANTS, RELEASE_PUBLISH_INVARIANTS};
use crate::model::{
    APPLY_WORKFLOW, CI_WORKFLOW, EXAMPLE_CALLERS, OWN_CALLER, RELEASE_PUBLISH_WORKFLOW,
    RELEASE_WORKFLOW, Workflow,
};
use crate::mutations::apply::APPLY_MUTATIONS;
use crate::mutations::callers::{CALLER_MUTATIONS, EXAMPLE_MUTATIONS};
use crate::mutations::check_mutations;
use crate::mutations::ci::CI_MUTATIONS;
use crate::mutations::release::{RELEASE_MUTATIONS, RELEASE_PUBLISH_MUTATIONS};

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
    let wf = Workflow::load(RELEASE_PUBLISH_WORKFLOW);
    let failures = failing(&wf, RELEASE_PUBLISH_INVARIANTS);
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
        RELEASE_PUBLISH_INVARIANTS,
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
    let checked: BTreeSet<String> = [
        APPLY_WORKFLOW,
        OWN_CALLER,
        CI_WORKFLOW,
        RELEASE_WORKFLOW,
        RELEASE_PUBLISH_WORKFLOW,
    ]
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
    check_mutations(
        RELEASE_PUBLISH_WORKFLOW,
        &[RELEASE_PUBLISH_INVARIANTS],
        RELEASE_PUBLISH_INVARIANTS,
        RELEASE_PUBLISH_MUTATIONS,
    );
}

/// `gate init` writes, for each build system it detects, a caller that holds every invariant
/// an example caller holds (zizmor audits the examples it is made from).
#[test]
fn callers_written_by_gate_init_hold_every_invariant() {
    for (files, system) in [
        (&["Cargo.toml"][..], gate::init::BuildSystem::Rust),
        (&["go.mod"], gate::init::BuildSystem::Go),
        (&["package.json"], gate::init::BuildSystem::Node),
        (
            &["package.json", "pnpm-lock.yaml"],
            gate::init::BuildSystem::NodePnpm,
        ),
        (
            &["package.json", "yarn.lock"],
            gate::init::BuildSystem::NodeYarn,
        ),
        (
            &["package.json", "yarn.lock", ".yarnrc.yml"],
            gate::init::BuildSystem::NodeYarnBerry,
        ),
        (&["pyproject.toml"], gate::init::BuildSystem::Python),
        (
            &["pyproject.toml", "uv.lock"],
            gate::init::BuildSystem::PythonUv,
        ),
        (
            &["pyproject.toml", "poetry.lock"],
            gate::init::BuildSystem::PythonPoetry,
        ),
        (
            &["pyproject.toml", "pdm.lock"],
            gate::init::BuildSystem::PythonPdm,
        ),
    ] {
        let marker = files.join(" ");
        let repo = tempfile::tempdir().unwrap();
        for file in files {
            std::fs::write(repo.path().join(file), "{}\n").unwrap();
        }
        let request = gate::init::InitRequest {
            dir: repo.path().to_path_buf(),
            build_system: None,
            pin: Some("89abcdef0123456789abcdef0123456789abcdef".into()),
            tag: Some("v0.1.0".into()),
            app_id: Some(4711),
            repository: None,
        };
        let plan = gate::init::plan(&request).unwrap();
        assert_eq!(plan.build_system, system);
        gate::init::write(repo.path(), &plan, false)
            .unwrap()
            .unwrap();
        let written = repo.path().join(OWN_CALLER);
        let wf = Workflow::parse(&std::fs::read_to_string(&written).unwrap()).unwrap();
        let mut failures = failing(&wf, CALLER_INVARIANTS);
        failures.extend(failing(&wf, EXAMPLE_INVARIANTS));
        assert!(failures.is_empty(), "{marker}: {failures:#?}");
    }
}
