#!/usr/bin/env bash
# Measure the reusable workflow's setup: its install step, run as written, against a local HTTP
# stand-in for GitHub's release download, compared with the setup it replaced (a release build of
# the three binaries from source, as every job of the old workflow ran it).
#
#   .ci/bench-setup.sh BIN_DIR [RUNS]
#
# BIN_DIR holds release builds of guard, gate and report (e.g. the static ones .ci/run builds in
# target/x86_64-unknown-linux-gnu/release). The script packs them as a release asset
# (.ci/pack-release.sh), serves it on 127.0.0.1, extracts the install step's script from
# .github/workflows/agent-team-apply-verify.yml and runs it RUNS times (default 5) with the asset's
# URL and SHA-256, changing three things only: the scheme (`--proto '=http'`: the stand-in has no
# TLS), the install root (a temporary directory instead of /opt/agent-team), and `sudo` (a
# pass-through when run as root without sudo). It then times, once, the baseline: a cold
# `cargo build --release --locked -p guard -p gate -p report` in a fresh target directory with the
# crates already downloaded. Needs python3 with PyYAML (reads the workflow), curl, sha256sum.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bin="$(cd "${1:?usage: .ci/bench-setup.sh BIN_DIR [RUNS]}" && pwd)"
runs="${2:-5}"
work="$(mktemp -d)"
server_pid=""
cleanup() {
  if [[ -n "$server_pid" ]]; then kill "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

asset_path="$(bash .ci/pack-release.sh "$bin" v0.0.0-bench x86_64-unknown-linux-musl "$work/www")"
asset="$(basename "$asset_path")"
sha256="$(sha256sum "$asset_path" | cut -d ' ' -f 1)"
port=$((20000 + RANDOM % 20000))
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$work/www" >/dev/null 2>&1 &
server_pid=$!
for _ in $(seq 50); do curl -fs -o /dev/null "http://127.0.0.1:$port/$asset" && break; sleep 0.1; done

python3 - "$work/install.sh" <<'PY'
import sys, yaml
doc = yaml.safe_load(open(".github/workflows/agent-team-apply-verify.yml"))
steps = doc["jobs"]["guard"]["steps"]
script = next(s["run"] for s in steps if s.get("name") == "Install the pinned agent-team binaries")
for old, new in [("--proto '=https'", "--proto '=http'"), ("/opt/agent-team", "$BENCH_ROOT")]:
    assert old in script, old
    script = script.replace(old, new)
open(sys.argv[1], "w").write("set -euo pipefail\n" + script)
PY
mkdir -p "$work/shim"
if [[ $(id -u) == 0 ]] && ! command -v sudo >/dev/null; then
  printf '#!/bin/sh\nexec "$@"\n' > "$work/shim/sudo"
  chmod +x "$work/shim/sudo"
fi

ms() { echo $(( $(date +%s%N) / 1000000 )); }
times=()
for i in $(seq "$runs"); do
  root="$work/root-$i"
  t0=$(ms)
  PATH="$work/shim:$PATH" BENCH_ROOT="$root" ARCH=X64 \
    AGENT_TEAM_RELEASE_URL="http://127.0.0.1:$port" AGENT_TEAM_ASSET_X64="$asset" \
    AGENT_TEAM_SHA256_X64="$sha256" bash "$work/install.sh" >/dev/null
  times+=($(( $(ms) - t0 )))
  [[ -x "$root/bin/gate" && -x "$root/bin/report" ]] || { echo "bench-setup: nothing installed" >&2; exit 1; }
done
median=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
# The parts: one download, one hash check, one extraction.
t0=$(ms); curl -fsS -o "$work/dl" "http://127.0.0.1:$port/$asset"; t_dl=$(( $(ms) - t0 ))
t0=$(ms); sha256sum "$work/dl" >/dev/null; t_sha=$(( $(ms) - t0 ))
t0=$(ms); mkdir -p "$work/x" && tar -xzf "$work/dl" -C "$work/x"; t_tar=$(( $(ms) - t0 ))

t0=$(ms)
CARGO_TARGET_DIR="$work/cold-target" cargo build --quiet --release --locked --offline \
  -p guard -p gate -p report
t_build=$(( $(ms) - t0 ))

size=$(stat -c %s "$asset_path")
printf 'asset                %s, %d bytes (guard %d, gate %d, report %d unpacked)\n' "$asset" "$size" \
  "$(stat -c %s "$bin/guard")" "$(stat -c %s "$bin/gate")" "$(stat -c %s "$bin/report")"
printf 'install step         median %d ms of %d runs (%s)\n' "$median" "$runs" "${times[*]}"
printf '  download (local)   %d ms\n  sha256             %d ms\n  extract            %d ms\n' "$t_dl" "$t_sha" "$t_tar"
printf 'baseline (cold release build of the three, crates cached): %d ms\n' "$t_build"
awk -v a="$median" -v b="$t_build" 'BEGIN { printf "install / baseline   %.4f (%.0fx faster)\n", a / b, b / a }'
