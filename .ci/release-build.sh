#!/usr/bin/env bash
# Build the release binaries for one target with the release profile, check them
# (.ci/static-check.sh: static, at most 6 MB each, they run) and pack them.
#
#   .ci/release-build.sh TARGET VERSION OUTDIR
#
# TARGET is x86_64-unknown-linux-musl or aarch64-unknown-linux-musl, built with cargo-zigbuild
# (zig as the C compiler and linker: ring compiles C and assembly for the target). VERSION is the
# tag (vX.Y.Z), which must equal the workspace version, or `-` for the workspace version (CI's
# check of the release build). OUTDIR receives
# agent-team-apply-VERSION-TARGET.tar.gz (.ci/pack-release.sh).
# An aarch64 binary is run under qemu-aarch64 (from qemu-user-static) for its check.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

target="${1:?usage: .ci/release-build.sh TARGET VERSION OUTDIR}"
version="${2:?usage: .ci/release-build.sh TARGET VERSION OUTDIR}"
out="${3:?usage: .ci/release-build.sh TARGET VERSION OUTDIR}"

case "$target" in
  x86_64-unknown-linux-musl) runner=() ;;
  aarch64-unknown-linux-musl)
    command -v qemu-aarch64-static >/dev/null || { echo "release-build: qemu-aarch64-static is required to run the aarch64 binaries" >&2; exit 2; }
    runner=(qemu-aarch64-static) ;;
  *) echo "release-build: unsupported target $target" >&2; exit 2 ;;
esac
workspace_version="$(cargo metadata --locked --no-deps --format-version 1 \
  | python3 -c 'import json, sys; print({p["name"]: p["version"] for p in json.load(sys.stdin)["packages"]}["guard"])')"
if [[ "$version" == - ]]; then
  version="v$workspace_version"
fi
if [[ "$version" != "v$workspace_version" ]]; then
  echo "release-build: tag $version is not the workspace version v$workspace_version" >&2
  exit 2
fi

cargo zigbuild --release --locked --workspace --no-default-features --target "$target" --bin guard --bin gate --bin report
bin="target/$target/release"
bash .ci/static-check.sh "$bin" "${runner[@]}"

asset="$(bash .ci/pack-release.sh "$bin" "$version" "$target" "$out")"
ls -l "$asset"
