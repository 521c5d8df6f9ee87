//! Mutations of the callers: this repository's own and the examples.

use crate::mutations::{Mutation, replace_once};

pub(crate) const CALLER_MUTATIONS: &[Mutation] = &[
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
                "run-name: \"agent-team-apply ${{ inputs.task_id }} ${{ inputs.dispatch_mac }}\"",
                "run-name: \"agent-team-apply ${{ inputs.task_id }}\"",
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
                "permissions: { actions: read, checks: read, contents: read, pull-requests: read }",
                "permissions: { actions: read, checks: read, contents: write, pull-requests: read }",
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

pub(crate) const EXAMPLE_MUTATIONS: &[Mutation] = &[
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
        description: "grow past 28 lines",
        breaks: &["example-within-28-lines"],
        apply: |t| format!("# one\n# two\n{t}"),
    },
];
