#!/usr/bin/env bash
# Print how many bytes glibc's static parts add to a minimal Rust program built with the
# workspace's release profile: the size of its `-C target-feature=+crt-static` build minus the
# size of its dynamic build, both stripped.
#
# The release assets are linked against musl, whose static C library is a small fraction of
# glibc's; this machine has no musl standard library, so .ci/run checks statically linked glibc
# builds and allows exactly this much on top of the 6 MB budget. A real binary pulls in more of
# glibc than this minimal one (name resolution, number parsing), so the allowance is smaller than
# what glibc really adds to it: the check errs on the strict side. The musl build of a release
# (.ci/release-build.sh) is held to the plain 6 MB.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src"
# The same [profile.release] as the workspace.
{
  printf '[package]\nname = "libc-overhead"\nversion = "0.0.0"\nedition = "2024"\n\n[workspace]\n\n'
  sed -n '/^\[profile\.release\]/,/^$/p' Cargo.toml
} > "$work/Cargo.toml"
cat > "$work/src/main.rs" <<'RS'
fn main() {
    let args: Vec<String> = std::env::args().collect();
    println!("{} argument(s)", args.len());
}
RS
build() {
  CARGO_TARGET_DIR="$work/target" cargo build --quiet --release --offline \
    --manifest-path "$work/Cargo.toml" --target x86_64-unknown-linux-gnu "$@" >&2
}
RUSTFLAGS="-C target-feature=+crt-static" build
static=$(stat -c %s "$work/target/x86_64-unknown-linux-gnu/release/libc-overhead")
mv "$work/target/x86_64-unknown-linux-gnu/release/libc-overhead" "$work/static"
RUSTFLAGS="" build
dynamic=$(stat -c %s "$work/target/x86_64-unknown-linux-gnu/release/libc-overhead")
"$work/static" >/dev/null
echo "libc-overhead: static $static bytes, dynamic $dynamic bytes" >&2
echo $((static - dynamic))
