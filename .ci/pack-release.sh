#!/usr/bin/env bash
# Pack release binaries the way the reusable workflow's install step unpacks them.
#
#   .ci/pack-release.sh BIN_DIR VERSION TARGET OUTDIR
#
# Writes OUTDIR/agent-team-apply-VERSION-TARGET.tar.gz: one directory of that name holding guard,
# gate, report, the licences and the README; reproducible (sorted, numeric root owner, the last
# commit's time, gzip -n). Prints the asset's path.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bin="${1:?usage: .ci/pack-release.sh BIN_DIR VERSION TARGET OUTDIR}"
version="${2:?usage: .ci/pack-release.sh BIN_DIR VERSION TARGET OUTDIR}"
target="${3:?usage: .ci/pack-release.sh BIN_DIR VERSION TARGET OUTDIR}"
out="${4:?usage: .ci/pack-release.sh BIN_DIR VERSION TARGET OUTDIR}"
name="agent-team-apply-$version-$target"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
mkdir "$stage/$name"
cp "$bin/guard" "$bin/gate" "$bin/report" LICENSE-MIT LICENSE-APACHE README.md "$stage/$name/"
mkdir -p "$out"
epoch="$(git log -1 --format=%ct 2>/dev/null || echo 0)"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" --format=gnu \
  -C "$stage" -cf - "$name" | gzip -n -9 > "$out/$name.tar.gz"
echo "$out/$name.tar.gz"
