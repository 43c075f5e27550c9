#!/usr/bin/env bash
# Installs the Debian packages the test servers need (listed in .ci/apt-packages: PostgreSQL 15 for the
# postgres test project, OpenStack Swift for the S3 blob store tests, ...) when any is missing. Runs before `npm test`; a no-op once they are there.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
for pkg in $(grep -v '^#' .ci/apt-packages 2>/dev/null); do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
  sudo=(sudo)
else
  echo "npm test needs these Debian packages: ${missing[*]}" >&2
  echo "install them with: sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
  exit 1
fi
echo "installing Debian packages the tests need: ${missing[*]}" >&2
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
