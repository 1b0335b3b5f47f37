#!/usr/bin/env bash
# Builds the static site into dist/: relative paths, no network needed, so it
# can be copied to any folder of any static host (see docs/course-authors.md).
# Beside the app it writes the widget, dist/overlap-lab.js, which other pages
# import (notebooks, MyST, Quarto, plain HTML).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export PATH="$HOME/.cargo/bin:$PWD/node_modules/.bin:$PATH"
trunk build --release --offline --skip-version-check
node widget/build.mjs dist
echo "Static site in $(pwd)/dist"
