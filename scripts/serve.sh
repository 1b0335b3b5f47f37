#!/usr/bin/env bash
# Serves Overlap Lab at http://127.0.0.1:8080 on the default scenario,
# installing whatever is missing first (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export PATH="$HOME/.cargo/bin:$PWD/node_modules/.bin:$PATH"
echo "Overlap Lab: building, then serving at http://127.0.0.1:8080"
# --offline and --skip-version-check: Trunk must not reach for the network;
# every tool it needs is already installed.
exec trunk serve --release --offline --skip-version-check --address 127.0.0.1 --port 8080
