//! Mutations of the reusable apply/verify workflow.

use crate::invariants::apply::{BUILD_TEST, DECIDE, GUARD, PUBLISH};
use crate::mutations::{
    CHECKOUT_PIN, Mutation, replace_in_job, replace_line, replace_once, swap_first_two_steps,
};

pub(crate) const APPLY_MUTATIONS: &[Mutation] = &[
    Mutation {
        description: "let the reusable workflow be dispatched directly",
        breaks: &["reusable-only"],
        apply: |t| {
            replace_once(
                t,
                "on:\n  workflow_call:\n",
                "on:\n  workflow_dispatch:\n  workflow_call:\n",
            )
        },
    },
    Mutation {
        description: "add a pull_request_target trigger",
        breaks: &["reusable-only"],
        apply: |t| {
            replace_once(
                t,
                "on:\n  workflow_call:\n",
                "on:\n  pull_request_target:\n  workflow_call:\n",
            )
        },
    },
    Mutation {
        description: "let the caller set the task id",
        breaks: &["call-interface"],
        apply: |t| {
            replace_once(
                t,
                "    inputs:\n      build-command:\n",
                "    inputs:\n      task_id:\n        type: string\n        required: true\n      build-command:\n",
            )
        },
    },
    Mutation {
        description: "let a caller forget the dispatch key's mapping",
        breaks: &["call-interface"],
        apply: |t| {
            replace_once(
                t,
                "      AGENT_TEAM_DISPATCH_KEY:\n        required: true\n",
                "      AGENT_TEAM_DISPATCH_KEY:\n        required: false\n",
            )
        },
    },
    Mutation {
        description: "take the task id from the caller instead of the dispatch event",
        breaks: &["dispatch-inputs-from-event"],
        apply: |t| {
            replace_once(
                t,
                "  TASK_ID: ${{ github.event.inputs.task_id }}\n",
                "  TASK_ID: ${{ inputs.task_id }}\n",
            )
        },
    },
    Mutation {
        description: "verify a MAC the caller passes instead of the dispatched one",
        breaks: &["dispatch-inputs-from-event", "dispatch-signature-verified"],
        apply: |t| {
            replace_in_job(
                t,
                PUBLISH,
                "DISPATCH_MAC: ${{ github.event.inputs.dispatch_mac }}",
                "DISPATCH_MAC: ${{ inputs.dispatch_mac }}",
            )
        },
    },
    Mutation {
        description: "grant write-all at the top",
        breaks: &["top-level-permissions-empty"],
        apply: |t| replace_once(t, "\npermissions: {}\n", "\npermissions: write-all\n"),
    },
    Mutation {
        description: "give build-test contents: write",
        breaks: &["job-permissions-exact"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "      contents: read\n",
                "      contents: write\n",
            )
        },
    },
    Mutation {
        description: "give decide a token that can read the repository",
        breaks: &["job-permissions-exact"],
        apply: |t| {
            replace_in_job(
                t,
                DECIDE,
                "    permissions: {}\n",
                "    permissions:\n      contents: read\n",
            )
        },
    },
    Mutation {
        description: "give publish pull-requests: write on the workflow token",
        breaks: &["job-permissions-exact"],
        apply: |t| {
            replace_in_job(
                t,
                PUBLISH,
                "      contents: read\n",
                "      contents: read\n      pull-requests: write\n",
            )
        },
    },
    Mutation {
        description: "let build-test start without guard",
        breaks: &["needs-chain"],
        apply: |t| replace_in_job(t, BUILD_TEST, "    needs: [guard]\n", ""),
    },
    Mutation {
        description: "let decide ignore guard",
        breaks: &["needs-chain"],
        apply: |t| {
            replace_in_job(
                t,
                DECIDE,
                "needs: [guard, build-test]",
                "needs: [build-test]",
            )
        },
    },
    Mutation {
        description: "let publish start without decide",
        breaks: &["needs-chain"],
        apply: |t| {
            replace_in_job(
                t,
                PUBLISH,
                "needs: [guard, build-test, decide]",
                "needs: [guard, build-test]",
            )
        },
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
            replace_in_job(
                t,
                BUILD_TEST,
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
        description: "drop persist-credentials from publish's checkout",
        breaks: &["checkout-no-persisted-credentials"],
        apply: |t| replace_in_job(t, PUBLISH, "          persist-credentials: false\n", ""),
    },
    Mutation {
        description: "interpolate an input into a script",
        breaks: &["no-expression-in-run"],
        apply: |t| {
            replace_in_job(
                t,
                GUARD,
                "          verdict=\"$RUNNER_TEMP/agent-team/verdict.json\"\n",
                "          verdict=\"$RUNNER_TEMP/agent-team/verdict.json\"\n          echo \"${{ inputs.runner }}\"\n",
            )
        },
    },
    Mutation {
        description: "interpolate the needs JSON into decide's script",
        breaks: &["no-expression-in-run", "gate-decision-wired"],
        apply: |t| {
            replace_in_job(
                t,
                DECIDE,
                "--needs \"$NEEDS_JSON\"",
                "--needs '${{ toJSON(needs) }}'",
            )
        },
    },
    Mutation {
        description: "reference a secret in guard",
        breaks: &["secrets-only-in-publish"],
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
        description: "expose a secret to every job through workflow env",
        breaks: &["secrets-only-in-publish"],
        apply: |t| {
            replace_once(
                t,
                "  DIFF_REF: ${{ github.event.inputs.diff_ref }}\n",
                "  DIFF_REF: ${{ github.event.inputs.diff_ref }}\n  KEY: ${{ secrets.AGENT_TEAM_APP_PRIVATE_KEY }}\n",
            )
        },
    },
    Mutation {
        description: "ask the environment's reviewers before the decision",
        breaks: &["environment-only-on-publish"],
        apply: |t| {
            replace_in_job(
                t,
                DECIDE,
                "    permissions: {}\n",
                "    permissions: {}\n    environment: agent-team-publish\n",
            )
        },
    },
    Mutation {
        description: "publish without the environment",
        breaks: &["environment-only-on-publish"],
        apply: |t| {
            replace_in_job(
                t,
                PUBLISH,
                "    environment: ${{ inputs.environment }}\n",
                "",
            )
        },
    },
    Mutation {
        description: "change the environment's default",
        breaks: &["publication-names-wired"],
        apply: |t| {
            replace_once(
                t,
                "        default: agent-team-publish\n",
                "        default: agent-team\n",
            )
        },
    },
    Mutation {
        description: "publish without checking the environment's name",
        breaks: &["publication-names-wired"],
        apply: |t| {
            replace_once(
                t,
                "          if [[ ! \"$PUBLISH_ENVIRONMENT\" =~ ^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$ ]]; then\n",
                "          if false; then\n",
            )
        },
    },
    Mutation {
        description: "post the check run under the default name whatever the caller chose",
        breaks: &["publication-names-wired"],
        apply: |t| replace_once(t, " --check-name \"$CHECK_RUN_NAME\"", ""),
    },
    Mutation {
        description: "never ask the protected files' reviewers",
        breaks: &["publication-names-wired"],
        apply: |t| replace_once(t, " --protected-reviewers \"$PROTECTED_REVIEWERS\"", ""),
    },
    Mutation {
        description: "label with a value the dispatch chooses",
        breaks: &["publication-names-wired"],
        apply: |t| {
            replace_once(
                t,
                "          PROTECTED_LABEL: ${{ inputs.protected-label }}\n",
                "          PROTECTED_LABEL: ${{ github.event.inputs.pr_title }}\n",
            )
        },
    },
    Mutation {
        description: "turn on setup-python's cache in build-test",
        breaks: &["cache-restore-only"],
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
        description: "save a cache with actions/cache in build-test",
        breaks: &["cache-restore-only", "actions-pinned"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "      - name: Prove that egress is blocked\n",
                "      - name: Cache\n        uses: actions/cache@27d5ce7f107fe9357f9df03efb73ab90386fccae # v5.0.5\n        with:\n          path: ~/.cargo\n          key: cargo\n\n      - name: Prove that egress is blocked\n",
            )
        },
    },
    Mutation {
        description: "save a cache with actions/cache/save in build-test",
        breaks: &["cache-restore-only", "actions-pinned"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "      - name: Prove that egress is blocked\n",
                "      - name: Cache\n        uses: actions/cache/save@27d5ce7f107fe9357f9df03efb73ab90386fccae # v5.0.5\n        with:\n          path: ~/.cargo\n          key: cargo\n\n      - name: Prove that egress is blocked\n",
            )
        },
    },
    Mutation {
        description: "turn on setup-node's cache in build-test",
        breaks: &["cache-restore-only", "actions-pinned"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "      - name: Prove that egress is blocked\n",
                "      - name: Set up Node\n        uses: actions/setup-node@0123456789abcdef0123456789abcdef01234567 # v5.0.0\n        with:\n          node-version: 22\n          cache: npm\n\n      - name: Prove that egress is blocked\n",
            )
        },
    },
    Mutation {
        description: "use setup-node in build-test without turning its package-manager cache off",
        breaks: &["cache-restore-only", "actions-pinned"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "      - name: Prove that egress is blocked\n",
                "      - name: Set up Node\n        uses: actions/setup-node@0123456789abcdef0123456789abcdef01234567 # v5.0.0\n        with:\n          node-version: 22\n\n      - name: Prove that egress is blocked\n",
            )
        },
    },
    Mutation {
        description: "use setup-go in build-test, whose cache is on by default",
        breaks: &["cache-restore-only", "actions-pinned"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "      - name: Prove that egress is blocked\n",
                "      - name: Set up Go\n        uses: actions/setup-go@0123456789abcdef0123456789abcdef01234567 # v6.0.0\n        with:\n          go-version: stable\n\n      - name: Prove that egress is blocked\n",
            )
        },
    },
    Mutation {
        description: "turn on setup-java's cache in build-test",
        breaks: &["cache-restore-only", "actions-pinned"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "      - name: Prove that egress is blocked\n",
                "      - name: Set up Java\n        uses: actions/setup-java@0123456789abcdef0123456789abcdef01234567 # v5.0.0\n        with:\n          distribution: temurin\n          java-version: 21\n          cache: maven\n\n      - name: Prove that egress is blocked\n",
            )
        },
    },
    Mutation {
        description: "restore a cache in publish",
        breaks: &["cache-restore-only", "no-artifact-read-downstream"],
        apply: |t| {
            replace_in_job(
                t,
                PUBLISH,
                "      - name: Verify the environments the readiness check counts on\n",
                "      - name: Cache\n        uses: actions/cache/restore@27d5ce7f107fe9357f9df03efb73ab90386fccae # v5.0.5\n        with:\n          path: ~/.cargo\n          key: cargo\n\n      - name: Verify the environments the readiness check counts on\n",
            )
        },
    },
    Mutation {
        description: "restore the cache after the checkouts and the policy",
        breaks: &["cache-restore-only"],
        apply: |t| {
            let start = t
                .find("      - name: Restore the caller's cache")
                .expect("restore step");
            let end = t[start..]
                .find("      - name: Check out the dispatched commit (trusted)")
                .expect("next step")
                + start;
            let step = &t[start..end];
            let without = format!("{}{}", &t[..start], &t[end..]);
            replace_in_job(
                &without,
                BUILD_TEST,
                "      - name: Fetch the build's dependencies (trusted, before the sandbox)\n",
                &format!(
                    "{step}      - name: Fetch the build's dependencies (trusted, before the sandbox)\n"
                ),
            )
        },
    },
    Mutation {
        description: "restore a cache the caller did not ask for",
        breaks: &["cache-restore-only"],
        apply: |t| replace_once(t, "        if: ${{ inputs.cache-key != '' }}\n", ""),
    },
    Mutation {
        description: "let a cache path reach into the workspace",
        breaks: &["cache-restore-only"],
        apply: |t| {
            replace_once(
                t,
                "for inside in \"$GITHUB_WORKSPACE\" \"$RUNNER_TEMP\" /opt/agent-team; do",
                "for inside in /opt/agent-team; do",
            )
        },
    },
    Mutation {
        description: "validate the inputs before installing the binaries that validate them",
        breaks: &["binaries-installed-first", "inputs-validated-first"],
        apply: |t| swap_first_two_steps(t, DECIDE),
    },
    Mutation {
        description: "install the binaries without checking their hash",
        breaks: &["binaries-installed-first", "every-download-hash-checked"],
        apply: |t| {
            replace_in_job(
                t,
                GUARD,
                "          if ! echo \"$sha256  $dir/asset.tar.gz\" | sha256sum --check --strict --status; then\n",
                "          if ! true; then\n",
            )
        },
    },
    Mutation {
        description: "install the binaries where the runner user can replace them",
        breaks: &["binaries-installed-first"],
        apply: |t| {
            replace_in_job(
                t,
                PUBLISH,
                "          sudo install -o root -g root -m 0555 ",
                "          install -m 0555 ",
            )
        },
    },
    Mutation {
        description: "let the release download fall back to plain http",
        breaks: &["binaries-installed-first"],
        apply: |t| replace_in_job(t, BUILD_TEST, "--proto '=https' ", ""),
    },
    Mutation {
        description: "pin assets of another version than the release URL",
        breaks: &["release-pinned"],
        apply: |t| {
            replace_once(
                t,
                "  AGENT_TEAM_ASSET_ARM64: agent-team-apply-v0.1.0-",
                "  AGENT_TEAM_ASSET_ARM64: agent-team-apply-v0.0.9-",
            )
        },
    },
    Mutation {
        description: "pin a truncated hash",
        breaks: &["release-pinned"],
        apply: |t| {
            replace_line(
                t,
                "  AGENT_TEAM_SHA256_X64: ",
                "  AGENT_TEAM_SHA256_X64: \"0123456789abcdef\"",
            )
        },
    },
    Mutation {
        description: "let a job go on when its inputs are invalid",
        breaks: &["inputs-validated-first"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "        run: /opt/agent-team/bin/guard inputs\n",
                "        run: /opt/agent-team/bin/guard inputs || true\n",
            )
        },
    },
    Mutation {
        description: "download a tool without checking it",
        breaks: &["every-download-hash-checked"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "      - name: Prove that egress is blocked\n",
                "      - name: Fetch a tool\n        run: curl --fail -sSL -o \"$RUNNER_TEMP/tool\" https://example.com/tool\n\n      - name: Prove that egress is blocked\n",
            )
        },
    },
    Mutation {
        description: "trust the diff bytes in publish without re-hashing",
        breaks: &["diff-rehashed-in-every-job", "every-download-hash-checked"],
        apply: |t| {
            replace_in_job(
                t,
                PUBLISH,
                "actual=\"$(sha256sum \"$diff_file\" | cut -d ' ' -f 1)\"",
                "actual=\"$EXPECTED_DIFF_SHA256\"",
            )
        },
    },
    Mutation {
        description: "compile guard in the guard job",
        breaks: &["no-job-compiles"],
        apply: |t| {
            replace_in_job(
                t,
                GUARD,
                "          bin=/opt/agent-team/bin\n          verdict=",
                "          cargo build --release --locked -p guard\n          bin=/opt/agent-team/bin\n          verdict=",
            )
        },
    },
    Mutation {
        description: "run a guard the checkout built",
        breaks: &["no-job-compiles"],
        apply: |t| {
            replace_in_job(
                t,
                GUARD,
                "          \"$bin/guard\" check ",
                "          \"$GITHUB_WORKSPACE/trusted/target/release/guard\" check ",
            )
        },
    },
    Mutation {
        description: "read the policy from the base commit",
        breaks: &["policy-from-trusted-commit"],
        apply: |t| {
            replace_in_job(
                t,
                GUARD,
                "          trusted=\"$GITHUB_WORKSPACE/trusted\"\n",
                "          trusted=\"$GITHUB_WORKSPACE/base\"\n",
            )
        },
    },
    Mutation {
        description: "apply the diff under the default policy only",
        breaks: &["policy-from-trusted-commit"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "--declared-scope \"$DECLARED_SCOPE\" --policy \"$RUNNER_TEMP/agent-team/policy.yml\"",
                "--declared-scope \"$DECLARED_SCOPE\"",
            )
        },
    },
    Mutation {
        description: "ignore what the readiness check found",
        breaks: &["readiness-checked"],
        apply: |t| {
            replace_once(
                t,
                "--format annotations || true\n          fi\n          exit \"$status\"\n\n      # The verdict and the readiness report",
                "--format annotations || true\n          fi\n          exit 0\n\n      # The verdict and the readiness report",
            )
        },
    },
    Mutation {
        description: "let the readiness step fail without stopping the run",
        breaks: &["readiness-checked"],
        apply: |t| {
            replace_once(
                t,
                "      - name: Check the repository's own workflows (the second execution)\n",
                "      - name: Check the repository's own workflows (the second execution)\n        continue-on-error: true\n",
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
        description: "move harden-runner to second place",
        breaks: &["harden-runner-first", "inputs-validated-first"],
        apply: |t| swap_first_two_steps(t, BUILD_TEST),
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
        description: "apply with the scope as one glob instead of the input's rule",
        breaks: &["build-test-order"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "--declared-scope \"$DECLARED_SCOPE\" --policy",
                "--scope \"$DECLARED_SCOPE\" --policy",
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
                "--max-output 8388608 ",
                "--no-isolation-because \"harden-runner blocks egress\" --max-output 8388608 ",
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
        description: "let the build write a directory of the workspace in place",
        breaks: &["build-tree-discarded"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "              --write-budget-bytes 4294967296",
                "              --writable \"$GITHUB_WORKSPACE/work/target\" --write-budget-bytes 4294967296",
            )
        },
    },
    Mutation {
        description: "drop the build's write budget",
        breaks: &["build-tree-discarded"],
        apply: |t| replace_in_job(t, BUILD_TEST, " --write-budget-inodes 500000", ""),
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
        description: "fetch the dependencies inside the patched tree (reads its .cargo/config.toml)",
        breaks: &["deps-fetched-before-sandbox"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "          cd \"$RUNNER_TEMP/agent-team/fetch\"\n",
                "          cd \"$GITHUB_WORKSPACE/work\"\n",
            )
        },
    },
    Mutation {
        description: "let npm run lifecycle scripts during the fetch",
        breaks: &["deps-fetched-before-sandbox"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "          npm_config_ignore_scripts: \"true\"\n",
                "          npm_config_ignore_scripts: \"false\"\n",
            )
        },
    },
    Mutation {
        description: "let the build write its fetched dependencies",
        breaks: &["deps-fetched-before-sandbox"],
        apply: |t| replace_in_job(t, BUILD_TEST, " --read-only \"$AGENT_TEAM_DEPS\"", ""),
    },
    Mutation {
        description: "fetch as root",
        breaks: &["deps-fetched-before-sandbox"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "          bash -euo pipefail -c \"$FETCH_COMMAND\"\n",
                "          sudo bash -euo pipefail -c \"$FETCH_COMMAND\"\n",
            )
        },
    },
    Mutation {
        description: "set up the toolchain after the diff is applied",
        breaks: &["setup-before-the-diff"],
        apply: |t| {
            let start = t
                .find("      # Trusted, with the network harden-runner allows, before the diff")
                .expect("setup comment");
            let end = t[start..]
                .find("      - name: Fetch the diff and re-hash it")
                .expect("next step")
                + start;
            let step = &t[start..end];
            let without = format!("{}{}", &t[..start], &t[end..]);
            replace_once(
                &without,
                "      - name: Build and test the patched tree, then check what it wrote\n",
                &format!(
                    "{step}      - name: Build and test the patched tree, then check what it wrote\n"
                ),
            )
        },
    },
    Mutation {
        description: "give the setup command the job's token",
        breaks: &["setup-before-the-diff"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "          SETUP_COMMAND: ${{ inputs.setup-command }}\n",
                "          SETUP_COMMAND: ${{ inputs.setup-command }}\n          GH_TOKEN: ${{ github.token }}\n",
            )
        },
    },
    Mutation {
        description: "give the setup command a secret",
        breaks: &["setup-before-the-diff", "secrets-only-in-publish"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "          SETUP_COMMAND: ${{ inputs.setup-command }}\n",
                "          SETUP_COMMAND: ${{ inputs.setup-command }}\n          KEY: ${{ secrets.AGENT_TEAM_DISPATCH_KEY }}\n",
            )
        },
    },
    Mutation {
        description: "run the setup command in the work tree",
        breaks: &["setup-before-the-diff"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "          cd \"$RUNNER_TEMP/agent-team/setup\"\n",
                "          cd \"$GITHUB_WORKSPACE/work\"\n",
            )
        },
    },
    Mutation {
        description: "let the build write what the setup installed",
        breaks: &["setup-before-the-diff"],
        apply: |t| replace_in_job(t, BUILD_TEST, " --read-only \"$AGENT_TEAM_TOOLS\"", ""),
    },
    Mutation {
        description: "run the setup command in publish",
        breaks: &["setup-before-the-diff"],
        apply: |t| {
            replace_in_job(
                t,
                PUBLISH,
                "      - name: Verify the environments the readiness check counts on\n",
                "      - name: Setup\n        env:\n          SETUP_COMMAND: ${{ inputs.setup-command }}\n        run: bash -c \"$SETUP_COMMAND\"\n\n      - name: Verify the environments the readiness check counts on\n",
            )
        },
    },
    Mutation {
        description: "let the dispatch choose what the build runs",
        breaks: &["build-command-from-caller"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "BUILD_COMMAND: ${{ inputs.build-command }}",
                "BUILD_COMMAND: ${{ github.event.inputs.declared_scope }}",
            )
        },
    },
    Mutation {
        description: "append dispatch data to the build command",
        breaks: &["build-command-from-caller"],
        apply: |t| {
            replace_in_job(
                t,
                BUILD_TEST,
                "-- bash -euo pipefail -c \"$BUILD_COMMAND\"",
                "-- sh -c \"$BUILD_COMMAND $DECLARED_SCOPE\"",
            )
        },
    },
    Mutation {
        description: "decide even in a cancelled run",
        breaks: &["decide-runs-unless-cancelled"],
        apply: |t| {
            replace_in_job(
                t,
                DECIDE,
                "    if: ${{ !cancelled() }}\n",
                "    if: always()\n",
            )
        },
    },
    Mutation {
        description: "skip decide when an upstream job failed",
        breaks: &["decide-runs-unless-cancelled"],
        apply: |t| replace_in_job(t, DECIDE, "    if: ${{ !cancelled() }}\n", ""),
    },
    Mutation {
        description: "publish whatever decide said",
        breaks: &["publish-only-on-pass"],
        apply: |t| {
            replace_in_job(
                t,
                PUBLISH,
                "    if: ${{ !cancelled() && needs.decide.result == 'success' && needs.decide.outputs.gate == 'pass' }}\n",
                "    if: always()\n",
            )
        },
    },
    Mutation {
        description: "publish on a successful decide job without reading its decision",
        breaks: &["publish-only-on-pass"],
        apply: |t| replace_in_job(t, PUBLISH, " && needs.decide.outputs.gate == 'pass'", ""),
    },
    Mutation {
        description: "cancel a publication under way when the task is dispatched again",
        breaks: &["publish-only-on-pass"],
        apply: |t| {
            replace_in_job(
                t,
                PUBLISH,
                "cancel-in-progress: false",
                "cancel-in-progress: true",
            )
        },
    },
    Mutation {
        description: "require only build-test",
        breaks: &["gate-decision-wired"],
        apply: |t| {
            replace_in_job(
                t,
                DECIDE,
                "--require guard,build-test ",
                "--require build-test ",
            )
        },
    },
    Mutation {
        description: "read publish's decision from an output gate decide does not write",
        breaks: &["gate-decision-wired"],
        apply: |t| {
            replace_in_job(
                t,
                PUBLISH,
                "steps.decide.outputs.gate }}",
                "steps.decide.outputs.decision }}",
            )
        },
    },
    Mutation {
        description: "save the decision as text (report check-run reads JSON)",
        breaks: &["gate-decision-wired"],
        apply: |t| replace_in_job(t, DECIDE, " --format json > ", " > "),
    },
    Mutation {
        description: "plan without the repository",
        breaks: &["publication-from-plan"],
        apply: |t| {
            replace_in_job(
                t,
                PUBLISH,
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
                PUBLISH,
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
                PUBLISH,
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
                PUBLISH,
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
                PUBLISH,
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
                PUBLISH,
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
                PUBLISH,
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
                PUBLISH,
                "          echo \"Draft pull request: $(jq -r",
                "          gh api graphql --input \"$RUNNER_TEMP/agent-team/commit.json\"\n          echo \"Draft pull request: $(jq -r",
            )
        },
    },
    Mutation {
        description: "publish without the gate's verdict",
        breaks: &["protected-files-surfaced"],
        apply: |t| {
            replace_in_job(
                t,
                PUBLISH,
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
                PUBLISH,
                " \\\n            --verdict-out \"$RUNNER_TEMP/agent-team/verdict.json\"",
                "",
            )
        },
    },
    Mutation {
        description: "check out a head ref in publish",
        breaks: &["no-head-checkout-downstream", "policy-from-trusted-commit"],
        apply: |t| {
            replace_in_job(
                t,
                PUBLISH,
                "          path: trusted\n",
                "          path: trusted\n          ref: ${{ github.event.inputs.diff_ref }}\n",
            )
        },
    },
    Mutation {
        description: "apply the patch in publish",
        breaks: &["no-head-checkout-downstream"],
        apply: |t| {
            replace_in_job(
                t,
                PUBLISH,
                "          scope_args=()\n",
                "          git -C trusted apply \"$RUNNER_TEMP/agent-team/diff.patch\"\n          scope_args=()\n",
            )
        },
    },
    Mutation {
        description: "download build-test's artifact into publish",
        breaks: &["no-artifact-read-downstream", "every-download-hash-checked"],
        apply: |t| {
            replace_in_job(
                t,
                PUBLISH,
                "      - name: Decide again from the upstream job results\n",
                "      - name: Download\n        uses: actions/download-artifact@3e5f45b2cfb9172054b4087a40e8e0b5a5461e7c # v8.0.1\n\n      - name: Decide again from the upstream job results\n",
            )
        },
    },
    Mutation {
        description: "let the App token push workflows",
        breaks: &["app-token-scoped"],
        apply: |t| {
            replace_in_job(
                t,
                PUBLISH,
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
                PUBLISH,
                "          repositories: ${{ github.event.repository.name }}\n",
                "",
            )
        },
    },
    Mutation {
        description: "revoke the App token only on success",
        breaks: &["app-token-revoked"],
        apply: |t| {
            replace_in_job(
                t,
                PUBLISH,
                "if: ${{ always() && steps.app-token.outputs.token != '' }}",
                "if: ${{ steps.app-token.outputs.token != '' }}",
            )
        },
    },
    Mutation {
        description: "ignore a failed signature check",
        breaks: &["dispatch-signature-verified"],
        apply: |t| {
            replace_in_job(
                t,
                PUBLISH,
                "      - name: Verify the dispatcher's signature\n",
                "      - name: Verify the dispatcher's signature\n        continue-on-error: true\n",
            )
        },
    },
    Mutation {
        description: "verify the signature without the MAC",
        breaks: &["dispatch-signature-verified"],
        apply: |t| replace_in_job(t, PUBLISH, " --mac=\"$DISPATCH_MAC\"", ""),
    },
    Mutation {
        description: "leave the scope out of the verified fields",
        breaks: &["dispatch-signature-verified"],
        apply: |t| replace_in_job(t, PUBLISH, "--declared-scope=\"$DECLARED_SCOPE\" ", ""),
    },
    Mutation {
        description: "leave the caller workflow out of guard's verified fields",
        breaks: &["dispatch-signature-verified"],
        apply: |t| replace_in_job(t, GUARD, " --workflow-ref=\"$GITHUB_WORKFLOW_REF\"", ""),
    },
    Mutation {
        description: "skip the replay check in guard",
        breaks: &["dispatch-signature-verified"],
        apply: |t| replace_in_job(t, GUARD, " --run-attempt=\"$GITHUB_RUN_ATTEMPT\"", ""),
    },
    Mutation {
        description: "look up the replay record without the App's id in guard",
        breaks: &["dispatch-signature-verified"],
        apply: |t| {
            replace_in_job(
                t,
                GUARD,
                "          AGENT_TEAM_APP_ID: ${{ vars.AGENT_TEAM_APP_ID }}\n",
                "",
            )
        },
    },
    Mutation {
        description: "let guard write checks",
        breaks: &["job-permissions-exact"],
        apply: |t| replace_in_job(t, GUARD, "      checks: read\n", "      checks: write\n"),
    },
    Mutation {
        description: "let guard write pull requests",
        breaks: &["job-permissions-exact"],
        apply: |t| {
            replace_in_job(
                t,
                GUARD,
                "      pull-requests: read\n",
                "      pull-requests: write\n",
            )
        },
    },
    Mutation {
        description: "leave the agent's title out of publish's verified fields",
        breaks: &["dispatch-signature-verified"],
        apply: |t| replace_in_job(t, PUBLISH, " --pr-title=\"$PR_TITLE\"", ""),
    },
    Mutation {
        description: "check the signature in guard only after the checkouts",
        breaks: &["dispatch-signature-verified"],
        apply: |t| {
            let (start, end) = {
                let start = t
                    .find("      # Before any other work: the dispatcher's signature")
                    .expect("guard's verification");
                let end = t[start..]
                    .find("      - name: Check out the dispatched commit (trusted)\n")
                    .expect("next step")
                    + start;
                (start, end)
            };
            let step = &t[start..end];
            let without = format!("{}{}", &t[..start], &t[end..]);
            replace_in_job(
                &without,
                GUARD,
                "      - name: Read the policy from the trusted commit\n",
                &format!("{step}      - name: Read the policy from the trusted commit\n"),
            )
        },
    },
    Mutation {
        description: "give guard the App's private key",
        breaks: &["secrets-only-in-publish", "dispatch-signature-verified"],
        apply: |t| {
            replace_in_job(
                t,
                GUARD,
                "AGENT_TEAM_DISPATCH_KEY_PREVIOUS: ${{ secrets.AGENT_TEAM_DISPATCH_KEY_PREVIOUS }}",
                "AGENT_TEAM_DISPATCH_KEY_PREVIOUS: ${{ secrets.AGENT_TEAM_APP_PRIVATE_KEY }}",
            )
        },
    },
    Mutation {
        description: "upload the guard's verdict zipped",
        breaks: &["guard-verdict-uploaded"],
        apply: |t| replace_in_job(t, GUARD, "          archive: false\n", ""),
    },
    Mutation {
        description: "upload the guard's verdict only when guard passed",
        breaks: &["guard-verdict-uploaded"],
        apply: |t| {
            replace_in_job(
                t,
                GUARD,
                "        if: ${{ !cancelled() && steps.guard-reasons.outputs.file != '' }}\n",
                "        if: ${{ success() && steps.guard-reasons.outputs.file != '' }}\n",
            )
        },
    },
    Mutation {
        description: "let guard ask the publishing environment's reviewers",
        breaks: &["environment-only-on-publish"],
        apply: |t| {
            replace_in_job(
                t,
                GUARD,
                "    environment: agent-team-verify\n",
                "    environment: agent-team-publish\n",
            )
        },
    },
    Mutation {
        description: "verify with a key from a repository variable",
        breaks: &["dispatch-signature-verified"],
        apply: |t| {
            replace_in_job(
                t,
                PUBLISH,
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
];
