//! Mutations of the project's CI workflow.

use crate::mutations::{Mutation, replace_in_job, replace_once};

pub(crate) const CI_MUTATIONS: &[Mutation] = &[
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
