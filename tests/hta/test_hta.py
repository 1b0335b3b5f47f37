"""HolisticTraceAnalysis reads Overlap Lab's Kineto traces as a real job's.

For each preset below, the release CLI writes one trace per simulated GPU
(`overlap-lab trace --kineto DIR preset:NAME`) and its report
(`simulate --json`); HTA 0.5.0 (`TraceAnalysis(trace_dir=DIR)`) then
analyses the directory. The comparisons, per rank, in percentage points:

- overlap: HTA's `get_comm_comp_overlap()` `comp_comm_overlap_pctg` against
  100 x the report's `hta_overlap_per_gpu` (files sorted by rank, as the
  report orders its GPUs), within 0.5;
- temporal breakdown: HTA's `get_temporal_breakdown()` `compute_time_pctg`
  and `idle_time_pctg` against the simulator's own figures for that GPU,
  which the file states in its `overlapLab` object: 100 x `compute_us` /
  `kernel_span_us` and 100 x `idle_us` / `kernel_span_us`, where the span
  runs from the GPU's first kernel start to its last kernel end, compute is
  the union of its compute kernels and idle is the span less the union of
  all its kernels (hta.rs), within 0.5.

The files hold whole microseconds and the simulator's figures are exact, so
the two differ only by the rounding of each kernel's ends.

Run: `.venv-hta/bin/python -m pytest -q tests/hta` after
`cargo build --release -p overlap-lab` (OVERLAP_LAB_CLI names another binary).
"""

import json
import logging

import pytest
from hta.trace_analysis import TraceAnalysis
from overlap_cli import cli

PRESETS = ["didactic", "contention"]
TOLERANCE_PP = 0.5

# HTA logs every parse at WARNING; only its errors matter here.
logging.getLogger("hta").setLevel(logging.ERROR)


@pytest.fixture(scope="module", params=PRESETS)
def run(request, tmp_path_factory):
    """One preset's traces, report and HTA analysis."""
    preset = request.param
    trace_dir = tmp_path_factory.mktemp(f"kineto-{preset}")
    cli("trace", "--kineto", str(trace_dir), f"preset:{preset}")
    report = json.loads(cli("simulate", "--json", f"preset:{preset}"))
    files = {}
    for path in trace_dir.glob("*.json"):
        doc = json.loads(path.read_text())
        files[doc["distributedInfo"]["rank"]] = doc
    analysis = TraceAnalysis(trace_dir=str(trace_dir))
    return preset, report, files, analysis


def by_rank(frame):
    return {int(row["rank"]): row for _, row in frame.iterrows()}


def test_hta_loads_one_rank_per_simulated_gpu(run):
    preset, report, files, analysis = run
    ranks = sorted(files)
    assert ranks, f"{preset}: no trace written"
    assert sorted(analysis.t.get_ranks()) == ranks
    assert len(report["hta_overlap_per_gpu"]) == len(ranks)
    for rank, doc in files.items():
        assert doc["distributedInfo"]["world_size"] >= len(ranks)
        assert doc["overlapLab"]["stands_for"].split("-")[0] == str(rank)


def test_overlap_per_rank_matches_the_report(run):
    preset, report, files, analysis = run
    hta = by_rank(analysis.get_comm_comp_overlap(visualize=False))
    for rank, ours in zip(sorted(files), report["hta_overlap_per_gpu"]):
        theirs = float(hta[rank]["comp_comm_overlap_pctg"])
        print(f"{preset} rank {rank}: HTA overlap {theirs:.2f}%, report {100 * ours:.2f}%")
        assert abs(theirs - 100 * ours) <= TOLERANCE_PP, (preset, rank, theirs, 100 * ours)
    mean = sum(report["hta_overlap_per_gpu"]) / len(report["hta_overlap_per_gpu"])
    assert abs(report["hta_overlap"] - mean) < 1e-12


def test_temporal_breakdown_matches_the_simulator(run):
    preset, report, files, analysis = run
    hta = by_rank(analysis.get_temporal_breakdown(visualize=False))
    for rank, doc in sorted(files.items()):
        ours = doc["overlapLab"]
        span = ours["kernel_span_us"]
        compute = 100 * ours["compute_us"] / span
        idle = 100 * ours["idle_us"] / span
        row = hta[rank]
        print(
            f"{preset} rank {rank}: HTA compute {row['compute_time_pctg']:.2f}% idle "
            f"{row['idle_time_pctg']:.2f}%, simulator compute {compute:.2f}% idle {idle:.2f}%"
        )
        assert abs(float(row["compute_time_pctg"]) - compute) <= TOLERANCE_PP, (preset, rank)
        assert abs(float(row["idle_time_pctg"]) - idle) <= TOLERANCE_PP, (preset, rank)
        # HTA's span is the same stretch of time, to the rounding of its ends.
        assert abs(float(row["kernel_time(us)"]) - span) <= 2, (preset, rank)
