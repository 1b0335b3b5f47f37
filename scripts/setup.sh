#!/usr/bin/env bash
# Installs what building, serving and testing Overlap Lab needs, and nothing that is
# already there. Facts behind each step: ../shared/toolchain.md.
#   scripts/setup.sh        what serving needs (wasm target, trunk, wasm-bindgen, wasm-opt)
#   scripts/setup.sh test   the above plus headless Chromium and the browser-test driver,
#                           and HolisticTraceAnalysis in .venv-hta for the trace test
set -euo pipefail
cd "$(dirname "$0")/.."

TRUNK_VERSION=0.21.14        # 0.22 needs a newer rustc than this machine has
BINARYEN_VERSION=132         # Debian's binaryen 108 breaks wasm-bindgen's reference types
export PATH="$HOME/.cargo/bin:$PWD/node_modules/.bin:$PATH"

say() { printf '[setup] %s\n' "$*" >&2; }

# The wasm-bindgen CLI must equal the wasm-bindgen crate in Cargo.lock exactly.
wasm_bindgen_version() {
  awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock
}

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

if ! trunk --version 2>/dev/null | grep -q " $TRUNK_VERSION"; then
  say "installing trunk $TRUNK_VERSION (about 12 minutes on 2 cores)"
  cargo install --locked "trunk@$TRUNK_VERSION"
fi

wbg=$(wasm_bindgen_version)
if ! wasm-bindgen --version 2>/dev/null | grep -q " $wbg"; then
  say "installing wasm-bindgen-cli $wbg (about 3 minutes)"
  # Not --locked: the CLI's own lock file names a crate version the registry lacks.
  cargo install --force wasm-bindgen-cli --version "$wbg"
fi

need_npm=0
[ -x node_modules/.bin/wasm-opt ] || need_npm=1
if [ "${1:-}" = test ] && [ ! -d node_modules/playwright-core ]; then need_npm=1; fi
if [ "$need_npm" = 1 ]; then
  say "installing wasm-opt (npm binaryen@$BINARYEN_VERSION) and playwright-core"
  npm ci --no-audit --no-fund --loglevel=error
fi

if [ "${1:-}" = test ] && ! { [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; }; then
  say "installing Debian's chromium and chromium-driver"
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium chromium-driver >/dev/null
fi

# HolisticTraceAnalysis reads the Kineto traces in tests/hta; it lives in its
# own virtual environment so that nothing is installed into the system Python.
HTA_VERSION=0.5.0
if [ "${1:-}" = test ] && ! .venv-hta/bin/python -c \
    "import importlib.metadata as m, sys; sys.exit(m.version('HolisticTraceAnalysis') != '$HTA_VERSION')" 2>/dev/null; then
  say "installing HolisticTraceAnalysis $HTA_VERSION into .venv-hta (about 3 minutes)"
  python3 -m venv .venv-hta
  .venv-hta/bin/pip install --quiet --disable-pip-version-check -r tests/hta/requirements.txt
fi
