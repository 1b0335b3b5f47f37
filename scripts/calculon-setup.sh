# Sourced by the scripts that run Calculon beside overlap-lab
# (calculon-search.sh, calculon-step.sh): checks CALCULON_DIR, makes a
# scratch directory ($work, removed on exit), installs Calculon in a
# virtual environment ($venv) and finds the overlap-lab binary ($bin).
#
# Calculon is not on a package registry, and this project's machines reach
# nothing but package registries: check its source out yourself
# (https://github.com/calculon-ai/calculon) and give its path in
# CALCULON_DIR. The virtual environment is a scratch one, deleted at the
# end, unless CALCULON_VENV names one to keep; it gets the packages
# Calculon imports but does not declare (numpy, pandas, psutil) from PyPI,
# and Calculon itself from CALCULON_DIR (`pip install -e`). Nothing of
# Calculon is copied into this repository. OVERLAP_LAB names an
# overlap-lab binary; without it the release build here is used.
#
# The sourcing script sets `script` (its name, for messages) and `needs`
# (a file of Calculon's checkout it reads) first.

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

if [[ -z "${CALCULON_DIR:-}" ]]; then
    echo "$script: set CALCULON_DIR to a checkout of https://github.com/calculon-ai/calculon" >&2
    echo "  (pip cannot fetch it from GitHub here: only package registries are reachable)" >&2
    exit 2
fi
if [[ ! -f "$CALCULON_DIR/setup.py" || ! -f "$CALCULON_DIR/$needs" ]]; then
    echo "$script: $CALCULON_DIR is not a Calculon checkout (no setup.py or $needs)" >&2
    exit 2
fi
work="$(mktemp -d)"
venv="${CALCULON_VENV:-$work/venv}"
cleanup() { rm -rf "$work"; }
trap cleanup EXIT

if [[ ! -x "$venv/bin/calculon" ]]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --upgrade pip
    # Imported by calculon/ (llm/optimal_execution.py: psutil; numpy and
    # pandas elsewhere) but not in its install_requires.
    "$venv/bin/pip" install --quiet numpy pandas psutil
    "$venv/bin/pip" install --quiet -e "$CALCULON_DIR"
fi

bin="${OVERLAP_LAB:-}"
if [[ -z "$bin" ]]; then
    (cd "$here" && cargo build --release -p overlap-lab --quiet)
    bin="$here/target/release/overlap-lab"
fi
