#!/usr/bin/env bash
# `npm run setup`: everything a fresh Debian/Ubuntu machine needs before
# `npm test`, and nothing when it is all there already:
#   1. the system packages the tests and agent CLIs run (apt-get, as root or
#      through passwordless `sudo -n`; otherwise the exact command to run),
#   2. npm install (the locked versions; `npm ci` refuses opencode-ai's lock entries),
#   3. the check `npm test` makes before any test (scripts/setup-check.mjs →
#      test/preflight.ts), which includes the bwrap backend's namespace probe.
set -euo pipefail
cd "$(dirname "$0")/.."

# package:command[|other name]. test/preflight.ts checks the same commands (ripgrep is for the agent CLIs).
PACKAGES=(bubblewrap:bwrap socat:socat ripgrep:rg "chromium:chromium|chromium-browser" git:git curl:curl procps:ps cmark-gfm:cmark-gfm)
# Run directly (bash scripts/setup.sh) on a machine without Node: bring the distribution's.
command -v npm >/dev/null 2>&1 || PACKAGES+=(nodejs:node npm:npm)

has_any() {
  local name
  IFS='|' read -ra names <<<"$1"
  for name in "${names[@]}"; do command -v "$name" >/dev/null 2>&1 && return 0; done
  return 1
}

missing=()
for entry in "${PACKAGES[@]}"; do
  has_any "${entry#*:}" || missing+=("${entry%%:*}")
done

if ((${#missing[@]})); then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "setup: missing system packages: ${missing[*]}. This script installs them with apt-get (Debian/Ubuntu);" >&2
    echo "install them with this system's package manager, then run 'npm run setup' again." >&2
    exit 1
  fi
  if [ "$(id -u)" = 0 ]; then
    sudo=()
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo=(sudo -n)
  else
    echo "setup: missing system packages: ${missing[*]}. Installing them needs root, and sudo here asks for a password." >&2
    echo "Run this, then 'npm run setup' again:" >&2
    echo "" >&2
    echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
    echo "" >&2
    exit 1
  fi
  echo "setup: installing ${missing[*]} with apt-get${sudo[*]:+ (through sudo)}"
  # The package lists only when something is installed: a set-up machine needs no network here.
  ${sudo[@]+"${sudo[@]}"} env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  ${sudo[@]+"${sudo[@]}"} env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
else
  echo "setup: system packages present (bubblewrap socat ripgrep chromium git curl procps)"
fi

echo "setup: npm install"
npm install --no-audit --no-fund

# As `npm test` runs: Node 24 from the `node` devDependency first on PATH.
if ! node_modules/.bin/node -e 'process.exit(process.versions.node.split(".")[0] === "24" ? 0 : 1)' 2>/dev/null; then
  echo "setup: npm install did not bring Node 24 (node_modules/.bin/node, from the 'node' dev dependency, whose install script downloads it)." >&2
  echo "Check npm's output above, then run 'npm run setup' again." >&2
  exit 1
fi
PATH="$PWD/node_modules/.bin:$PATH" node --experimental-transform-types --disable-warning=ExperimentalWarning scripts/setup-check.mjs
