//! Mutations of the release workflow.

use crate::mutations::{Mutation, replace_in_job, replace_once};

pub(crate) const RELEASE_MUTATIONS: &[Mutation] = &[
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
