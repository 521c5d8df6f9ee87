//! Mutations of the release workflow.

use crate::mutations::{Mutation, replace_in_job, replace_once};

pub(crate) const RELEASE_MUTATIONS: &[Mutation] = &[
    Mutation {
        description: "release on every push to main too",
        breaks: &["release-dispatched-on-default-branch"],
        apply: |t| {
            replace_once(
                t,
                "on:\n  workflow_dispatch:\n",
                "on:\n  push:\n    branches: [main]\n  workflow_dispatch:\n",
            )
        },
    },
    Mutation {
        description: "build a release from any branch",
        breaks: &["release-dispatched-on-default-branch"],
        apply: |t| {
            replace_once(
                t,
                "if [[ \"$REF\" != \"refs/heads/$DEFAULT_BRANCH\" ]]; then",
                "if false; then",
            )
        },
    },
    Mutation {
        description: "build the branch's head as checked out later, not the dispatched commit",
        breaks: &["release-dispatched-on-default-branch"],
        apply: |t| replace_once(t, "          ref: ${{ github.sha }}\n", ""),
    },
    Mutation {
        description: "let the publication's job token write contents",
        breaks: &["release-job-permissions"],
        apply: |t| {
            replace_in_job(
                t,
                "publish",
                "      contents: read\n",
                "      contents: write\n",
            )
        },
    },
    Mutation {
        description: "publish before the attestation",
        breaks: &["release-attests-what-it-publishes"],
        apply: |t| {
            replace_in_job(
                t,
                "publish",
                "    needs: [attest]\n",
                "    needs: [build]\n",
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

pub(crate) const RELEASE_PUBLISH_MUTATIONS: &[Mutation] = &[
    Mutation {
        description: "grant the publication write-all",
        breaks: &["top-level-permissions-empty"],
        apply: |t| replace_once(t, "\npermissions: {}\n", "\npermissions: write-all\n"),
    },
    Mutation {
        description: "restore a cache before checking the assets",
        breaks: &["no-cache", "actions-pinned"],
        apply: |t| {
            replace_once(
                t,
                "      - name: Check the assets against SHA256SUMS\n",
                "      - name: Cache\n        uses: actions/cache@0123456789abcdef0123456789abcdef01234567 # v4.2.0\n        with:\n          path: ~/.cargo\n          key: cargo\n\n      - name: Check the assets against SHA256SUMS\n",
            )
        },
    },
    Mutation {
        description: "publish on a push as well",
        breaks: &["release-publish-called-only"],
        apply: |t| {
            replace_once(
                t,
                "on:\n  workflow_call:\n",
                "on:\n  push:\n  workflow_call:\n",
            )
        },
    },
    Mutation {
        description: "grant the job token contents write",
        breaks: &["release-publish-token"],
        apply: |t| {
            replace_in_job(
                t,
                "publish",
                "      contents: read\n",
                "      contents: write\n",
            )
        },
    },
    Mutation {
        description: "mint the token outside the protected environment",
        breaks: &["release-publish-token"],
        apply: |t| replace_once(t, "    environment: agent-team-release\n", ""),
    },
    Mutation {
        description: "let the release App token open pull requests too",
        breaks: &["release-publish-token"],
        apply: |t| {
            replace_once(
                t,
                "          permission-workflows: write\n",
                "          permission-workflows: write\n          permission-pull-requests: write\n",
            )
        },
    },
    Mutation {
        description: "give the token to the pin step",
        breaks: &["release-publish-token"],
        apply: |t| {
            replace_once(
                t,
                "        working-directory: built\n        env:\n          VERSION: ${{ inputs.version }}\n        run: bash .ci/pin-release.sh",
                "        working-directory: built\n        env:\n          GH_TOKEN: ${{ steps.app-token.outputs.token }}\n          VERSION: ${{ inputs.version }}\n        run: bash .ci/pin-release.sh",
            )
        },
    },
    Mutation {
        description: "revoke only when the release succeeded",
        breaks: &["release-publish-token"],
        apply: |t| {
            replace_once(
                t,
                "        if: ${{ always() && steps.app-token.outputs.token != '' }}\n",
                "        if: ${{ steps.app-token.outputs.token != '' }}\n",
            )
        },
    },
    Mutation {
        description: "publish without checking the assets against SHA256SUMS",
        breaks: &["release-publish-order"],
        apply: |t| {
            replace_once(
                t,
                "          sha256sum --check --strict SHA256SUMS\n",
                "          cat SHA256SUMS\n",
            )
        },
    },
    Mutation {
        description: "pin the head of the branch instead of the built commit",
        breaks: &["release-publish-order"],
        apply: |t| {
            replace_once(
                t,
                "          ref: ${{ github.sha }}\n",
                "          ref: main\n",
            )
        },
    },
    Mutation {
        description: "release before pinning",
        breaks: &["release-publish-order"],
        apply: |t| {
            replace_once(
                t,
                "run: bash .ci/pin-release.sh \"$VERSION\"",
                "run: true bash .ci/pin-release.sh \"$VERSION\"",
            )
        },
    },
    Mutation {
        description: "persist the checkout's credentials",
        breaks: &["checkout-no-persisted-credentials"],
        apply: |t| replace_once(t, "persist-credentials: false", "persist-credentials: true"),
    },
    Mutation {
        description: "interpolate the version into a script",
        breaks: &["no-expression-in-run"],
        apply: |t| {
            replace_once(
                t,
                "test \"$(wc -l < SHA256SUMS)\" -eq 2\n",
                "test \"$(wc -l < SHA256SUMS)\" -eq 2\n          echo ${{ inputs.version }}\n",
            )
        },
    },
    Mutation {
        description: "collect the release with a moving tag",
        breaks: &["actions-pinned"],
        apply: |t| {
            replace_once(
                t,
                "actions/download-artifact@3e5f45b2cfb9172054b4087a40e8e0b5a5461e7c # v8.0.1",
                "actions/download-artifact@v8 # v8.0.1",
            )
        },
    },
];
