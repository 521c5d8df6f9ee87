#!/usr/bin/env bash
# Check the three release binaries in DIR: statically linked (no program interpreter, no needed
# shared library), at most MAX_BYTES each (default 6,000,000; .ci/run adds glibc's static overhead
# for its glibc builds, see .ci/libc-overhead.sh), and working (each runs, guard accepts the
# bundled sample diff, gate fails a decision with a skipped job).
#
#   .ci/static-check.sh DIR [RUNNER...]
#
# RUNNER runs a binary of another architecture (e.g. qemu-aarch64). Exit 0 when all hold, 1 when
# one does not, 2 on a usage error.
set -euo pipefail

MAX_BYTES="${MAX_BYTES:-6000000}"
dir="${1:?usage: .ci/static-check.sh DIR [RUNNER...]}"
shift
runner=("$@")
[[ -d "$dir" ]] || { echo "static-check: $dir is not a directory" >&2; exit 2; }
command -v readelf >/dev/null || { echo "static-check: readelf (binutils) is required" >&2; exit 2; }

failed=0
fail() { echo "static-check: $*" >&2; failed=1; }

printf '%-8s %12s  %s\n' binary bytes linking
for name in guard gate report; do
  bin="$dir/$name"
  [[ -x "$bin" ]] || { fail "$bin is missing or not executable"; continue; }
  size=$(stat -c %s "$bin")
  # A static (or static-pie) executable has no PT_INTERP and no DT_NEEDED entry.
  interp=$(readelf --program-headers --wide "$bin" | grep -c 'INTERP' || true)
  needed=$(readelf --dynamic --wide "$bin" | grep '(NEEDED)' || true)
  linking=static
  if [[ "$interp" != 0 || -n "$needed" ]]; then
    linking=dynamic
    fail "$name is not statically linked: $(readelf --program-headers --wide "$bin" | grep -A1 INTERP | tr -s ' ' | tail -n 1) ${needed//$'\n'/ }"
  fi
  printf '%-8s %12s  %s\n' "$name" "$size" "$linking"
  if (( size > MAX_BYTES )); then
    fail "$name is $size bytes, more than $MAX_BYTES"
  fi
  version=$("${runner[@]}" "$bin" --version) || { fail "$name --version failed"; continue; }
  [[ "$version" == "$name "* ]] || fail "$name --version printed '$version'"
done

if [[ -x "$dir/guard" ]]; then
  sample="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/fixtures/sample/accept.diff"
  sha="$(sha256sum "$sample" | cut -d ' ' -f 1)"
  out=$("${runner[@]}" "$dir/guard" check --diff "$sample" --expected-sha256 "$sha" \
    --scope 'src/**' --scope 'docs/**' --format json) || fail "guard check of the sample diff failed"
  [[ "$out" == *'"verdict": "accept"'* ]] || fail "guard check did not accept the sample diff"
fi
if [[ -x "$dir/gate" ]]; then
  needs='{"guard":{"result":"success","outputs":{}},"build-test":{"result":"skipped","outputs":{}}}'
  set +e
  "${runner[@]}" "$dir/gate" decide --needs "$needs" --require guard,build-test --run-id 1 \
    --diff-sha256 "$(printf '%064d' 0)" --format json >/dev/null
  rc=$?
  set -e
  [[ "$rc" == 1 ]] || fail "gate decide on a skipped build-test exited $rc, not 1"
fi

if (( failed )); then
  exit 1
fi
echo "static-check: guard, gate and report are static, at most $MAX_BYTES bytes each, and run"
