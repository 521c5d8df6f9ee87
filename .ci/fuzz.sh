#!/usr/bin/env bash
# Build every `cargo fuzz` target in fuzz/ and run each for a fixed time.
#
#   .ci/fuzz.sh [SECONDS]          seconds per target (default: $FUZZ_SECONDS, else 30)
#   FUZZ_SECONDS=3600 .ci/fuzz.sh  a long run
#
# Environment:
#   FUZZ_SANITIZER  none (default) or address. `none` is still coverage-guided by libFuzzer (the
#                   sancov passes are stable -C flags) and runs about 4x more executions per second
#                   than AddressSanitizer; the code under test forbids unsafe code, so what the
#                   fuzzers look for is panics and broken properties, not memory errors.
#   FUZZ_TARGETS    space-separated subset of targets (default: all of `cargo fuzz list`)
#
# Stable toolchain only. With the default sanitizer `none`, cargo fuzz passes only stable rustc flags.
# AddressSanitizer needs the nightly-only -Zsanitizer=address, which stable rustc accepts with
# RUSTC_BOOTSTRAP=1; that is set for the cargo fuzz commands then, and for nothing else.
#
# Seeds are assembled at run time in a temporary directory: fixtures/**/*.diff, git's apply corpus
# (tests/corpus/git-apply, GPL-2.0 test data), guard's default policy, and the hand-written
# fuzz/seeds/.
# New inputs libFuzzer finds go to fuzz/corpus/<target> (ignored by git), so repeated local runs
# build on each other; CI starts from the seeds alone. A crash leaves its input in
# fuzz/artifacts/<target>/ and makes this script exit non-zero after all targets have run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD

CARGO_FUZZ_VERSION=0.13.2
PER_TARGET="${1:-${FUZZ_SECONDS:-30}}"
SANITIZER="${FUZZ_SANITIZER:-none}"
CORPUS_DIR="$ROOT/tests/corpus/git-apply"

case "$PER_TARGET" in
  '' | *[!0-9]* | 0) echo "fuzz.sh: seconds per target must be a positive integer, got '$PER_TARGET'" >&2; exit 2 ;;
esac
case "$SANITIZER" in
  address | none) ;;
  *) echo "fuzz.sh: FUZZ_SANITIZER must be address or none, got '$SANITIZER'" >&2; exit 2 ;;
esac

step() { printf '\n--- fuzz: %s (%ss)\n' "$1" "$SECONDS"; }

step "cargo-fuzz $CARGO_FUZZ_VERSION"
if [ "$(cargo fuzz --version 2>/dev/null || true)" != "cargo-fuzz $CARGO_FUZZ_VERSION" ]; then
  cargo install cargo-fuzz --locked --version "$CARGO_FUZZ_VERSION"
fi
cargo fuzz --version

step "format"
# The fuzz crate is outside the root workspace, so the root `cargo fmt --all` does not see it.
cargo fmt --manifest-path fuzz/Cargo.toml -- --check

step "build (sanitizer: $SANITIZER)"
# cargo fuzz has no --locked; fetching with it first fails if fuzz/Cargo.lock is out of date.
cargo fetch --locked --manifest-path fuzz/Cargo.toml --target "$(rustc -vV | sed -n 's/^host: //p')"
build_start=$SECONDS
# -O -a: release optimisation with debug assertions and overflow checks (cargo fuzz's default).
# One target dir per sanitizer, so switching does not rebuild everything.
FUZZ_FLAGS=(-O -a --sanitizer "$SANITIZER" --target-dir "fuzz/target/$SANITIZER")
fuzz() {
  if [ "$SANITIZER" = address ]; then
    RUSTC_BOOTSTRAP=1 cargo fuzz "$@"
  else
    cargo fuzz "$@"
  fi
}
fuzz build "${FUZZ_FLAGS[@]}"
echo "fuzz targets built in $((SECONDS - build_start)) s"

read -r -a TARGETS <<<"${FUZZ_TARGETS:-$(cargo fuzz list | tr '\n' ' ')}"

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# seed_dir TARGET: print a fresh directory holding that target's seeds.
seed_dir() {
  local target=$1 dir="$WORK/seeds/$1" f name
  mkdir -p "$dir"
  if [ -d "fuzz/seeds/$target" ]; then
    cp fuzz/seeds/"$target"/* "$dir"/
  fi
  case "$target" in
    parse_diff | diff_roundtrip)
      while IFS= read -r -d '' f; do
        name=${f#fixtures/}
        cp "$f" "$dir/fixture-${name//\//_}"
      done < <(find fixtures -type f -name '*.diff' -print0)
      for f in "$CORPUS_DIR"/*/patch.diff; do
        [ -f "$f" ] || { echo "fuzz.sh: no git-apply corpus at $CORPUS_DIR" >&2; exit 2; }
        name=$(basename "$(dirname "$f")")
        cp "$f" "$dir/git-apply-$name.diff"
      done
      ;;
    policy_yaml)
      cp guard/src/default-policy.yml "$dir/default-policy.yml"
      ;;
  esac
  echo "$dir"
}

dict_for() {
  case "$1" in
    parse_diff | diff_roundtrip) echo fuzz/dicts/diff.dict ;;
    policy_yaml) echo fuzz/dicts/yaml.dict ;;
    gate_decide) echo fuzz/dicts/json.dict ;;
  esac
}

declare -A EXECS STATUS
failed=0
for target in "${TARGETS[@]}"; do
  step "run $target for ${PER_TARGET}s"
  seeds=$(seed_dir "$target")
  corpus="fuzz/corpus/$target"
  mkdir -p "$corpus"
  args=(-max_total_time="$PER_TARGET" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048)
  dict=$(dict_for "$target")
  if [ -n "$dict" ]; then
    args+=(-dict="$dict")
  fi
  log="$WORK/$target.log"
  set +e
  fuzz run "${FUZZ_FLAGS[@]}" "$target" "$corpus" "$seeds" -- "${args[@]}" >"$log" 2>&1
  rc=$?
  set -e
  EXECS[$target]=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  if [ "$rc" -eq 0 ]; then
    STATUS[$target]=ok
  else
    STATUS[$target]="FAILED (exit $rc)"
    failed=1
    # The panic message, libFuzzer's verdict, the input and cargo fuzz's reproduction hints.
    sed -n '/panicked at/,/^stack backtrace:/p' "$log" | head -n 30
    sed -n '/^SUMMARY: libFuzzer/,/^Error: /p' "$log" | grep -v -E '^(stat::|$)' | head -n 40
  fi
  echo "$target: ${EXECS[$target]:-?} executions, ${STATUS[$target]}"
done

step "summary (${PER_TARGET}s per target, sanitizer $SANITIZER)"
for target in "${TARGETS[@]}"; do
  printf '%-16s %12s executions  %s\n' "$target" "${EXECS[$target]:-?}" "${STATUS[$target]}"
done
if [ "$failed" -ne 0 ]; then
  echo "fuzz: a target crashed; inputs are under fuzz/artifacts/ (minimise with: cargo fuzz tmin ${FUZZ_FLAGS[*]} <target> <input>)" >&2
  exit 1
fi
