#!/usr/bin/env bash
# Pin a published release in the reusable workflow: its download URL, asset names and SHA-256s
# (the lines the install step of every job reads), and the version the example callers name.
#
#   .ci/pin-release.sh VERSION SHA256SUMS [OWNER/REPO [SERVER_URL]]
#
# VERSION is the tag (vX.Y.Z); SHA256SUMS is the file of that release (download it and check its
# attestation first: gh attestation verify <asset> --repo OWNER/REPO). OWNER/REPO and SERVER_URL
# (https://github.com, a GitHub Enterprise Server's https://HOST, or a fork's server) default to
# the ones the workflow pins now. The release URL is SERVER_URL/OWNER/REPO/releases/download/VERSION;
# the rule links of every report (`report` reads AGENT_TEAM_RELEASE_URL) point at the same
# repository's README at VERSION. Review the diff, commit it, and give adopters that commit's
# id: the examples' `@<commit>` is updated by hand to it in the next commit.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

usage='usage: .ci/pin-release.sh VERSION SHA256SUMS [OWNER/REPO [SERVER_URL]]'
version="${1:?$usage}"
sums="${2:?$usage}"
workflow=.github/workflows/agent-team-apply-verify.yml
[[ "$version" =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "pin-release: VERSION must be vX.Y.Z" >&2; exit 2; }
current_url="$(sed -n 's/^  AGENT_TEAM_RELEASE_URL: //p' "$workflow")"
repo="${3:-$(sed -n 's#^https://[^/]*/\([^/]*/[^/]*\)/releases/download/.*#\1#p' <<<"$current_url")}"
server="${4:-$(sed -n 's#^\(https://[^/]*\)/[^/]*/[^/]*/releases/download/.*#\1#p' <<<"$current_url")}"
[[ "$repo" =~ ^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$ ]] || { echo "pin-release: OWNER/REPO '$repo' is not valid" >&2; exit 2; }
[[ "$server" =~ ^https://[A-Za-z0-9.-]+(:[0-9]+)?$ ]] || { echo "pin-release: SERVER_URL '$server' is not https://HOST[:PORT]" >&2; exit 2; }

declare -A sha
for target in x86_64-unknown-linux-musl aarch64-unknown-linux-musl; do
  asset="agent-team-apply-$version-$target.tar.gz"
  line="$(grep -E "^[0-9a-f]{64}  $asset\$" "$sums" || true)"
  [[ -n "$line" ]] || { echo "pin-release: $sums has no line for $asset" >&2; exit 1; }
  sha[$target]="${line%%  *}"
done

sed -i \
  -e "s#^  AGENT_TEAM_RELEASE_URL: .*#  AGENT_TEAM_RELEASE_URL: $server/$repo/releases/download/$version#" \
  -e "s#^  AGENT_TEAM_ASSET_X64: .*#  AGENT_TEAM_ASSET_X64: agent-team-apply-$version-x86_64-unknown-linux-musl.tar.gz#" \
  -e "s#^  AGENT_TEAM_SHA256_X64: .*#  AGENT_TEAM_SHA256_X64: \"${sha[x86_64-unknown-linux-musl]}\"#" \
  -e "s#^  AGENT_TEAM_ASSET_ARM64: .*#  AGENT_TEAM_ASSET_ARM64: agent-team-apply-$version-aarch64-unknown-linux-musl.tar.gz#" \
  -e "s#^  AGENT_TEAM_SHA256_ARM64: .*#  AGENT_TEAM_SHA256_ARM64: \"${sha[aarch64-unknown-linux-musl]}\"#" \
  "$workflow"
sed -i -E "s#(agent-team-apply-verify\.yml@[0-9a-f]{40}) \# v[0-9]+\.[0-9]+\.[0-9]+#\1 \# $version#" examples/*.yml
git --no-pager diff --stat -- "$workflow" examples/
