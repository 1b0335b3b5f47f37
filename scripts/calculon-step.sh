#!/usr/bin/env bash
# Times one 1T step in Calculon and in overlap-lab, whole processes side by
# side in one run, and prints the ratios (issue 56's goal: overlap off at
# most 0.10 of Calculon's time, every overlap on at most 0.15).
#
# Calculon: `calculon llm` on its megatron-1T model with the 1T row of
# Korthikanti et al.'s Table 5 (validation/seqsel/tab5/megatron-1T_full.json:
# TP 8, PP 64, 512 micro-batches of 1, full recomputation) on
# systems/a100_80g.json, writing its JSON. overlap-lab: `simulate --json`
# of the preset megatron-1t (Narayanan et al.'s 1T row: TP 8, PP 64, 512
# micro-batches per pipeline, full recomputation), the scenario and its
# all-off baseline, once as shipped (every overlap off) and once with TP,
# PP and DP overlap on at four TP chunks (the criterion benchmark's
# "all overlaps").
#
# Calculon comes from a checkout of its public repository, installed in a
# virtual environment of its own (`calculon-setup.sh` says how).
#
#   CALCULON_DIR=~/src/calculon scripts/calculon-step.sh
#
# Environment:
#   CALCULON_DIR   Calculon's checkout (required)
#   CALCULON_VENV  a virtual environment to make or reuse (default: a scratch one)
#   RUNS           runs of each process; the medians are compared (default 15)
#   OVERLAP_LAB    the overlap-lab binary (default: built here, release)
#
# Each process is timed by /usr/bin/time: wall clock and CPU (user +
# system). Run it on an otherwise idle machine for the wall ratio.
set -euo pipefail

runs="${RUNS:-15}"
if ! [[ "$runs" =~ ^[0-9]+$ ]] || (( runs < 1 || runs > 1000 )); then
    echo "calculon-step.sh: RUNS must be a whole number from 1 to 1000, not \"$runs\"" >&2
    exit 2
fi
script=calculon-step.sh
needs=models/megatron-1T.json
# shellcheck source=scripts/calculon-setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/calculon-setup.sh"

# The preset with TP, PP and DP overlap on at four TP chunks.
all_on="$work/megatron-1t-all-on.json"
cat > "$all_on" <<'JSON'
{"hardware":{"preset":"dgx-a100","nodes":384},
 "workload":{"layers":128,"hidden":25600,"heads":160,"seq":2048,"vocab":51200,"micro_batch":1,
             "global_batch":3072,"recompute":"full","sequence_parallel":false,"attention":"materialized"},
 "parallel":{"tp":8,"pp":64,"dp":6,"schedule":"1f1b","virtual_stages":1,"scatter_gather":true},
 "overlap":{"tp":true,"pp":true,"dp":true,"tp_chunks":4,"grad_bytes":2}}
JSON

# Runs "$@" RUNS times and prints the median wall and CPU seconds.
median_of() {
    local walls=() cpus=()
    for ((i = 0; i < runs; i++)); do
        /usr/bin/time -f "%e %U %S" -o "$work/time" "$@" > /dev/null
        read -r wall user sys < "$work/time"
        walls+=("$wall")
        cpus+=("$(echo "$user + $sys" | bc -l)")
    done
    local mid=$((runs / 2))
    printf '%s %s\n' \
        "$(printf '%s\n' "${walls[@]}" | sort -g | sed -n "$((mid + 1))p")" \
        "$(printf '%s\n' "${cpus[@]}" | sort -g | sed -n "$((mid + 1))p")"
}

echo "Each process $runs times; medians of wall clock and CPU (user + system), seconds"
read -r c_wall c_cpu < <(cd "$CALCULON_DIR" && median_of "$venv/bin/calculon" llm \
    models/megatron-1T.json validation/seqsel/tab5/megatron-1T_full.json \
    systems/a100_80g.json "$work/calculon-1t.json")
printf '  Calculon llm, megatron-1T (Table 5 row):    wall %.3f  CPU %.3f\n' "$c_wall" "$c_cpu"
read -r off_wall off_cpu < <(median_of "$bin" simulate preset:megatron-1t --json)
printf '  overlap-lab, megatron-1t, overlap off:      wall %.3f  CPU %.3f\n' "$off_wall" "$off_cpu"
read -r on_wall on_cpu < <(median_of "$bin" simulate "$all_on" --json)
printf '  overlap-lab, megatron-1t, every overlap on: wall %.3f  CPU %.3f\n' "$on_wall" "$on_cpu"

ratio() { echo "$1 / $2" | bc -l; }
printf 'overlap off: %.3f of Calculon'"'"'s wall time, %.3f of its CPU (goal 0.10)\n' \
    "$(ratio "$off_wall" "$c_wall")" "$(ratio "$off_cpu" "$c_cpu")"
printf 'every overlap on: %.3f of Calculon'"'"'s wall time, %.3f of its CPU (goal 0.15)\n' \
    "$(ratio "$on_wall" "$c_wall")" "$(ratio "$on_cpu" "$c_cpu")"
