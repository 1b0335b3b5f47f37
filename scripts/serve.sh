#!/usr/bin/env bash
# Serves Overlap Lab at http://127.0.0.1:8080 on the default scenario,
# installing whatever is missing first (scripts/setup.sh).
# What it serves is the static site scripts/build-site.sh writes (dist/: the
# app, its worker and the widget overlap-lab.js), through the same static
# server the browser tests use: no development reload script, so the page's
# Content-Security-Policy holds and the console stays clean. After an edit,
# run it again (or scripts/build-site.sh in another shell and reload).
#   PORT=9000 scripts/serve.sh   serves on another port
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build-site.sh
exec node scripts/static-server.mjs dist "${PORT:-8080}"
