"""`overlap-lab import` splits communication into transfer and wait, and
ranks the late ranks, as an independent reading of the raw events says.

For each set of ranks below, this file reads the traces' events itself
(json, no HTA, no code shared with the importer) and computes, per rank:
the step window (the kernels launched inside `ProfilerStep#N` marks, else
all), each collective matched across ranks (the k-th kernel of the same
process group, or of the same stream, name and size, in start order), its
transfer (the shortest of its ranks' kernels), each kernel's transfer part
(its last `transfer` µs) and so the rank's transfer and wait (communication
time in flight less transfer, as unions of intervals), and how often each
rank arrived last (its kernel the shortest while another's ran longer) with
the others' wait on those collectives. The CLI's `import --json` must give
the same figures to 1e-9 ms.

- tests/data/hta/all_to_all: two ranks of a 128-GPU job (HTA's own test
  traces), NCCL kernels with no process group, two profiler steps.
- Four ranks written here: all-reduces of the group [0, 1, 2, 3] stated on
  each kernel, rank 1 arriving last most often, and compute beside them.
"""

import json
import gzip
from pathlib import Path

import pytest
from overlap_cli import ROOT, cli

TOLERANCE_MS = 1e-9


def load(path):
    opener = gzip.open if path.read_bytes()[:2] == b"\x1f\x8b" else open
    with opener(path, "rt") as f:
        return json.load(f)


def union(intervals):
    out = []
    for a, b in sorted(intervals):
        if b <= a:
            continue
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def length(intervals):
    return sum(b - a for a, b in intervals)


def clip(intervals, lo, hi):
    return [(max(a, lo), min(b, hi)) for a, b in intervals if min(b, hi) > max(a, lo)]


def rank_of(path):
    """One rank's GPU kernels, step window and communication kernels."""
    doc = load(path)
    events = [e for e in doc["traceEvents"] if e.get("ph") == "X" and "ts" in e and "dur" in e]
    launches = {
        e["args"]["correlation"]: e["ts"]
        for e in events
        if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})
    }
    steps = sorted(
        (e["ts"], e["ts"] + e["dur"])
        for e in events
        if str(e.get("name", "")).startswith("ProfilerStep#") and e.get("cat") != "gpu_user_annotation"
    )
    numbers = {e["name"] for e in events if str(e.get("name", "")).startswith("ProfilerStep#")}
    kernels = [e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]

    def in_step(k):
        if not steps:
            return True
        t = launches.get(k["args"].get("correlation"), k["ts"])
        inside = [s for s in steps if s[0] <= t]
        return bool(inside) and inside[-1][1] >= t

    marked = [k for k in kernels if in_step(k)]
    span = marked if steps and marked else kernels
    n_steps = len(numbers) if steps and marked else 1
    lo = min(k["ts"] for k in span)
    hi = max(k["ts"] + k["dur"] for k in span)
    comm = sorted(
        (k for k in kernels if k.get("cat") == "kernel" and k["name"].startswith("nccl")),
        key=lambda k: k["ts"],
    )
    return {
        "rank": doc["distributedInfo"]["rank"],
        "window": (lo, hi),
        "steps": n_steps,
        "comm": comm,
        "in_step": in_step,
    }


def key_of(k):
    a = k["args"]
    if "Process Group Ranks" in a or "Process Group Name" in a:
        return ("group", a.get("Process Group Ranks"), a.get("Process Group Name"), a.get("Collective name"))
    return ("stream", a.get("stream"), k["name"], a.get("In msg nelems"))


def expected(paths):
    ranks = sorted((rank_of(p) for p in paths), key=lambda r: r["rank"])
    found = {}
    for i, r in enumerate(ranks):
        seen = {}
        for k in r["comm"]:
            key = key_of(k)
            seen[key] = seen.get(key, 0) + 1
            found.setdefault((key, seen[key]), []).append((i, k))
    transfer = {}
    late = [{"last": 0, "collectives": 0, "idle_us": 0.0} for _ in ranks]
    for parts in found.values():
        if len(parts) < 2:
            continue
        t = min(k["dur"] for _, k in parts)
        last = next(i for i, k in parts if k["dur"] == t)
        idle = sum(k["dur"] - t for _, k in parts)
        for i, k in parts:
            transfer[id(k)] = t
            if ranks[i]["in_step"](k):
                late[i]["collectives"] += 1
        late_kernel = next(k for i, k in parts if i == last)
        if idle > 0 and ranks[last]["in_step"](late_kernel):
            late[last]["last"] += 1
            late[last]["idle_us"] += idle
    out = []
    for i, r in enumerate(ranks):
        lo, hi = r["window"]
        comm = union(clip([(k["ts"], k["ts"] + k["dur"]) for k in r["comm"]], lo, hi))
        parts = []
        for k in r["comm"]:
            end = k["ts"] + k["dur"]
            start = max(end - transfer[id(k)], k["ts"]) if id(k) in transfer else k["ts"]
            parts.append((start, end))
        moved = union(clip(parts, lo, hi))
        per_step = 1e3 * r["steps"]
        out.append(
            {
                "rank": r["rank"],
                "transfer_ms": length(moved) / per_step,
                "wait_ms": (length(comm) - length(moved)) / per_step,
                "last": late[i]["last"],
                "collectives": late[i]["collectives"],
                "idle_caused_ms": late[i]["idle_us"] / per_step,
            }
        )
    return out


# The rank that arrives last at each of the eight collectives.
LATE = [1, 1, 2, 1, 3, 1, 0, 1]


def four_ranks(directory):
    """Four ranks: eight all-reduces of group [0, 1, 2, 3], ending together,
    the last rank arriving as LATE says; a compute kernel beside each."""
    group = {"Process Group Ranks": "[0, 1, 2, 3]", "Process Group Name": "0", "Collective name": "allreduce"}
    for rank in range(4):
        events = []
        for c in range(8):
            end = 1000 * (c + 1)
            # Rank LATE[c] is last (shortest); the others wait more, by rank.
            dur = 50 + 3 * c + (0 if rank == LATE[c] else 5 * (rank + 1) + c)
            events.append({"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(x)",
                           "pid": rank, "tid": 13, "ts": end - dur, "dur": dur,
                           "args": dict(group, device=rank, stream=13)})
            events.append({"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16bf16_bf16f32",
                           "pid": rank, "tid": 7, "ts": end - 200 + 7 * rank, "dur": 120,
                           "args": {"device": rank, "stream": 7}})
        doc = {"distributedInfo": {"rank": rank, "world_size": 4}, "traceEvents": events}
        (directory / f"rank{rank}.json").write_text(json.dumps(doc))
    return directory


@pytest.fixture(params=["hta/all_to_all", "four ranks"])
def case(request, tmp_path):
    if request.param == "four ranks":
        directory = four_ranks(tmp_path)
    else:
        directory = ROOT / "tests" / "data" / request.param
    paths = sorted(p for p in Path(directory).iterdir() if p.name.endswith((".json", ".json.gz")))
    return request.param, json.loads(cli("import", "--json", str(directory))), expected(paths)


def test_transfer_and_wait_per_rank(case):
    name, ours, want = case
    assert [g["rank"] for g in ours["gpus"]] == [w["rank"] for w in want]
    for g, w in zip(ours["gpus"], want):
        print(f"{name} rank {w['rank']}: transfer {w['transfer_ms']:.4f} ms, wait {w['wait_ms']:.4f} ms")
        assert abs(g["transfer_ms"] - w["transfer_ms"]) < TOLERANCE_MS, (name, g, w)
        assert abs(g["wait_ms"] - w["wait_ms"]) < TOLERANCE_MS, (name, g, w)


def test_late_ranks(case):
    name, ours, want = case
    late = ours["over_ranks"]["late_ranks"]
    by_rank = {w["rank"]: w for w in want}
    assert sorted(l["rank"] for l in late) == sorted(by_rank)
    for l in late:
        w = by_rank[l["rank"]]
        assert (l["last"], l["collectives"]) == (w["last"], w["collectives"]), (name, l, w)
        assert abs(l["idle_caused_ms"] - w["idle_caused_ms"]) < TOLERANCE_MS, (name, l, w)
    # Most often last first.
    assert [l["last"] for l in late] == sorted((l["last"] for l in late), reverse=True)
