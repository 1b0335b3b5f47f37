#!/usr/bin/env bash
# Times Calculon's layout search (`llm-optimal-execution`) against
# `overlap-lab search` on the same problem: Korthikanti et al.'s and
# Calculon's megatron-22B model (48 layers, hidden 6144, 64 heads, sequence
# 2048) on 64 A100 80 GB, with a maximum batch of 512 (each layout's batch
# the largest multiple of its data parallelism not above it, as Calculon
# takes it). Prints both times, their ratio and both best layouts.
#
# Calculon comes from a checkout of its public repository, installed in a
# virtual environment of its own (`calculon-setup.sh` says how).
#
#   CALCULON_DIR=~/src/calculon scripts/calculon-search.sh
#
# Environment:
#   CALCULON_DIR   Calculon's checkout (required)
#   CALCULON_VENV  a virtual environment to make or reuse (default: a scratch one)
#   CPUS           processes Calculon runs on (default: every core, as ours)
#   OVERLAP_LAB    the overlap-lab binary (default: built here, release)
#   CALCULON_OUT   a directory to keep Calculon's log and best executions in
#   SAMPLE_EVERY   estimate Calculon's time instead of running its whole
#                  search: its own command over its own enumeration, with one
#                  execution in SAMPLE_EVERY modelled and timed, the rest
#                  refused at once (calculon-sample.py says how the estimate
#                  is made); its best layout is then the sample's
#
# Both are timed as whole processes, wall clock and CPU (user + system,
# children included: Calculon's worker processes), and both ratios are
# printed. The CPU ratio holds on a busy machine; the wall ratio only when
# nothing else runs.
#
# Calculon's full search takes tens of minutes on a small machine.
set -euo pipefail

script=calculon-search.sh
needs=models/megatron-22B.json
# shellcheck source=scripts/calculon-setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/calculon-setup.sh"
cpus="${CPUS:-$(nproc)}"

# The same model as scenario JSON: Calculon's megatron-22B.json (hidden
# 6144, feedforward 24576 = 4 x hidden, 64 heads of 96, 48 blocks, sequence
# 2048) in Megatron-LM's GPT, whose vocabulary Calculon leaves out (51200,
# Megatron's padded GPT-2 vocabulary); A100 80 GB in DGX A100 nodes, as
# Calculon's systems/a100_80g.json; attention as Megatron-LM ran it in 2022
# (scores materialised). The search sets the layout.
scenario="$work/megatron-22b.json"
cat > "$scenario" <<'JSON'
{"hardware": {"preset": "dgx-a100", "nodes": 8, "hbm_gb": 80},
 "workload": {"layers": 48, "hidden": 6144, "heads": 64, "seq": 2048, "vocab": 51200,
              "micro_batch": 1, "global_batch": 512, "attention": "materialized"}}
JSON

# Runs a command under /usr/bin/time and leaves "wall cpu" seconds in $2.
timed() {
    local out="$1"
    shift
    /usr/bin/time -f "%e %U %S" -o "$work/time" "$@" > "$out"
    read -r wall user sys < "$work/time"
    echo "$wall $(echo "$user + $sys" | bc -l)"
}

calculon_args=(llm-optimal-execution models/megatron-22B.json 64 512 float16
    systems/a100_80g.json "$work/calculon.json" -c "$cpus")
if [[ -n "${SAMPLE_EVERY:-}" ]]; then
    echo "Calculon: llm-optimal-execution megatron-22B on 64 A100 80 GB, max batch 512, $cpus processes," \
        "one execution in $SAMPLE_EVERY modelled (an estimate)"
    mkdir -p "$work/timings"
    read -r calculon_wall calculon_cpu < <(cd "$CALCULON_DIR" && timed "$work/calculon.log" \
        "$venv/bin/python" "$here/scripts/calculon-sample.py" "$SAMPLE_EVERY" "$work/timings" -- \
        "${calculon_args[@]}")
    total=$(sed -n 's/^Total executions: //p' "$work/calculon.log")
    # Its whole search's CPU, estimated; then its wall time as the whole
    # search would spread it over $cpus processes.
    read -r calculon_cpu calculon_low calculon_high < <("$venv/bin/python" - "$work/timings" \
        "$total" "$calculon_cpu" <<'PY'
import glob, math, sys
rows = [line.split() for f in glob.glob(sys.argv[1] + '/*.txt') for line in open(f)]
times = [float(t) for t, _ in rows]
good = sum(int(g) for _, g in rows)
total, whole = int(sys.argv[2]), float(sys.argv[3])
n = len(times)
mean = sum(times) / n
sd = math.sqrt(sum((t - mean) ** 2 for t in times) / (n - 1))
around = whole - sum(times)
half = 1.96 * sd / math.sqrt(n) * total
print(around + total * mean, around + total * mean - half, around + total * mean + half)
print(f'  {total} executions enumerated, {n} modelled ({good} good), {mean * 1e3:.3f} ms of CPU each '
      f'(sd {sd * 1e3:.3f}); {around:.1f} s around the model, measured whole', file=sys.stderr)
PY
)
    calculon_wall=$(echo "$calculon_cpu / $cpus" | bc -l)
    printf '  estimated CPU of the whole search: %.0f s (95%%: %.0f to %.0f s), %.0f s wall on %s processes\n' \
        "$calculon_cpu" "$calculon_low" "$calculon_high" "$calculon_wall" "$cpus"
else
    echo "Calculon: llm-optimal-execution megatron-22B on 64 A100 80 GB, max batch 512, $cpus processes"
    read -r calculon_wall calculon_cpu < <(cd "$CALCULON_DIR" && timed "$work/calculon.log" \
        "$venv/bin/calculon" "${calculon_args[@]}")
fi
if [[ -n "${CALCULON_OUT:-}" ]]; then
    mkdir -p "$CALCULON_OUT"
    cp "$work/calculon.log" "$work/calculon.json" "$CALCULON_OUT/"
fi
grep -E "Total executions|Good executions|Best sample rate|Calculation rate" "$work/calculon.log" || true
"$venv/bin/python" - "$work/calculon.json" "${SAMPLE_EVERY:+of the sampled executions}" <<'PY'
import json, sys
best = json.load(open(sys.argv[1]))["0"]
e, s = best["execution"], best["stats"]
print(f"  best{' ' + sys.argv[2] if sys.argv[2] else ''}: tp {e['tensor_par']}, pp {e['pipeline_par']} (interleaving {e['pipeline_interleaving']}), "
      f"dp {e['data_par']}, micro-batch {e['microbatch_size']}, batch {e['batch_size']}, "
      f"recompute {e['activation_recompute']}, optimizer sharding {e['optimizer_sharding']}: "
      f"{s['total_time']:.3f} s per batch, {s['sample_rate']:.1f} samples/s")
PY

echo
echo "overlap-lab search: the same model on 64 A100 80 GB, max batch 512, $cpus cores"
read -r ours_wall ours_cpu < <(timed "$work/ours.txt" \
    "$bin" search "$scenario" --gpus 64 --max-batch 512)
head -1 "$work/ours.txt"
tail -1 "$work/ours.txt"

echo
printf 'wall: Calculon %.1f s, overlap-lab %.1f s: overlap-lab takes %.3f of Calculon'"'"'s time\n' \
    "$calculon_wall" "$ours_wall" "$(echo "$ours_wall / $calculon_wall" | bc -l)"
printf 'CPU:  Calculon %.1f s, overlap-lab %.1f s: overlap-lab takes %.3f of Calculon'"'"'s CPU\n' \
    "$calculon_cpu" "$ours_cpu" "$(echo "$ours_cpu / $calculon_cpu" | bc -l)"
