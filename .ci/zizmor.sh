#!/usr/bin/env bash
# Audit .github/workflows/, the example callers (examples/*.yml) and the callers `gate init`
# writes, with a pinned zizmor; any finding fails.
# Installs into a private virtualenv so neither the system Python nor the work tree is touched.
set -euo pipefail

ZIZMOR_VERSION="1.32.0"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${ZIZMOR_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-team-apply/zizmor-$ZIZMOR_VERSION}"

if [[ ! -x "$venv/bin/zizmor" ]] || [[ "$("$venv/bin/zizmor" --version)" != "zizmor $ZIZMOR_VERSION" ]]; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "zizmor==$ZIZMOR_VERSION"
fi

# zizmor exits non-zero when it reports any finding; the JSON count is a second, explicit check
# (an ignore comment in a workflow still silences a finding: review those like code).
inputs=("$root/.github/workflows/" "$root"/examples/*.yml)
# And the callers `gate init` writes for a Rust, a Node and a Python repository.
gate="$root/target/x86_64-unknown-linux-gnu/release/gate"
if [[ ! -x "$gate" ]]; then
  cargo build --locked -q --manifest-path "$root/Cargo.toml" -p gate --bin gate
  gate="$root/target/debug/gate"
fi
written="$(mktemp -d)"
trap 'rm -rf "$written"' EXIT
for marker in Cargo.toml package.json pyproject.toml; do
  dir="$written/${marker%%.*}"
  mkdir -p "$dir"
  echo '{}' > "$dir/$marker"
  "$gate" init --dir "$dir" --pin 89abcdef0123456789abcdef0123456789abcdef --tag v0.1.0 --app-id 4711 --repository octo/repo > /dev/null
  inputs+=("$dir/.github/workflows/agent-team-apply.yml")
done
"$venv/bin/zizmor" --offline --strict-collection --no-progress --color never "${inputs[@]}"
findings="$("$venv/bin/zizmor" --offline --strict-collection --no-progress --format json "${inputs[@]}" 2>/dev/null | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))')"
if [[ "$findings" != "0" ]]; then
  echo "zizmor: $findings finding(s)" >&2
  exit 1
fi
echo "zizmor: 0 findings"
