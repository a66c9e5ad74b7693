#!/usr/bin/env bash
# Installs the Debian packages npukit needs that are missing. As root it runs apt-get itself;
# otherwise it prints the exact command and exits 1. Exit 0 when everything is present.
set -euo pipefail
trap 'echo "scripts/install-deps.sh: failed: $BASH_COMMAND" >&2' ERR

packages=(
  g++ cmake ninja-build pkg-config
  libncurses-dev libsqlite3-dev sqlite3 nlohmann-json3-dev libcli11-dev libcpp-httplib-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  tmux curl dpkg-dev
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
  echo "npukit: missing Debian packages: ${missing[*]}" >&2
  echo "run: sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi

echo "npukit: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
