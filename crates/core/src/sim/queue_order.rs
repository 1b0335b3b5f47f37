//! Hardware queues in start order (`workload::graph::queues`), on hand-built
//! graphs, in the fast engine and the plain reference alike.

use crate::model::axis::Axis;
use crate::model::link::{Direction, LinkClass};
use crate::model::op::{OpKind, Phase};
use crate::sim::engine::RunResult;
use crate::sim::network::Usage;
use crate::workload::graph::interference::Sharing;
use crate::workload::graph::task::{GpuInfo, Meta, ResourceInfo, TaskId};
use crate::workload::graph::Graph;

/// One GPU with a 1 GB/s link, and the graph's queues.
fn one_gpu(max_connections: u32) -> (Graph, u32) {
    let mut g = Graph::default();
    g.max_connections = max_connections;
    g.add_gpu(GpuInfo::lone(0));
    g.add_resource(ResourceInfo {
        gpu: Some(0),
        class: LinkClass::Nvlink,
        direction: Direction::Out,
        capacity_bps: 1e9,
    });
    let link = g.add_pattern(vec![Usage {
        resource: 0,
        weight: 1.0,
    }]);
    (g, link)
}

fn both(g: &Graph) -> [RunResult; 2] {
    let free = Sharing::Tax(0.0);
    let fast = crate::sim::engine::run(g, true, &free);
    let plain = crate::sim::plain::run(g, true, &free);
    for t in 0..g.tasks.len() {
        assert!(
            (fast.start_s[t] - plain.start_s[t]).abs() < 1e-15,
            "task {t}"
        );
        assert!((fast.end_s[t] - plain.end_s[t]).abs() < 1e-15, "task {t}");
    }
    [fast, plain]
}

const MS: f64 = 1e-3;

/// GEMM A (1 ms), then a collective C launched after it that needs A's
/// output (2 ms: 1 MB at 1 GB/s... plus 1 ms latency), then GEMM B (1 ms),
/// which does not need C. On one queue B may start as soon as C has
/// started: it runs beside C, as Megatron's weight-gradient GEMM runs
/// beside the input gradient's reduction launched ahead of it.
#[test]
fn a_collective_launched_ahead_of_a_gemm_runs_beside_it_on_one_queue() {
    for queues in [1, 8] {
        let (mut g, link) = one_gpu(queues);
        let meta = Meta::new(OpKind::Gemm, Phase::Backward);
        let a = g.compute(0, MS, 0.0, 0.0, 0.0, meta);
        let c = g.comm(
            &[0],
            Axis::Tp,
            link,
            1e6,
            MS,
            meta.op(OpKind::ReduceScatter),
        );
        g.dep(a, c);
        let b = g.compute(0, MS, 0.0, 0.0, 0.0, meta);
        g.finish();
        for r in both(&g) {
            assert_eq!(r.start_s[b as usize], MS, "{queues} queues");
            assert_eq!(r.start_s[c as usize], MS, "{queues} queues");
        }
    }
}

/// As above, but C must first wait for an earlier collective C0 of its
/// stream (2 ms of transfer from the start): on one queue C stands at the
/// head blocked, and B behind it waits until C0 ends and C starts; with a
/// queue per stream B runs at once.
#[test]
fn a_blocked_collective_at_the_head_of_the_queue_holds_the_gemm_behind_it() {
    let starts = |queues: u32| {
        let (mut g, link) = one_gpu(queues);
        let meta = Meta::new(OpKind::Gemm, Phase::Backward);
        let reduce = meta.op(OpKind::AllReduce);
        let first = g.comm(&[0], Axis::Dp, link, 2e6, 0.0, reduce);
        g.launch_first(first);
        let a = g.compute(0, MS, 0.0, 0.0, 0.0, meta);
        let c = g.comm(&[0], Axis::Dp, link, 1e6, 0.0, reduce);
        g.dep(a, c);
        g.dep(first, c);
        let b: TaskId = g.compute(0, MS, 0.0, 0.0, 0.0, meta);
        g.finish();
        let [fast, _] = both(&g);
        (fast.start_s[a as usize], fast.start_s[b as usize])
    };
    assert_eq!(starts(8), (0.0, MS));
    // A starts once `first` has started (at 0); B once C has, at 2 ms.
    assert_eq!(starts(1), (0.0, 2.0 * MS));
}

/// SMs and HBM shared as modelled, on a GPU of 100 SMs.
fn modelled() -> Sharing {
    Sharing::Modelled(crate::workload::graph::interference::Modelled {
        sms: 100,
        hbm_bps: 2e12,
        channels_override: None,
    })
}

/// Op A (1 ms), then a TP collective C that needs A's output and GEMM B
/// (2 ms, 200 tiles: two waves of 1 ms on 100 SMs), which does not need C,
/// both ready as A ends (model.md 3b). With a queue per stream they race
/// for the SMs and B's first wave wins: C starts 1 ms later, when it drains.
/// With one queue C, launched ahead of B, starts first. A B that opens with
/// memory-bound kernels (or a copy-engine C, or no SMs modelled) races for
/// nothing: C starts with it.
#[test]
fn a_gemm_ready_with_a_collective_on_another_queue_takes_the_sms_with_its_first_wave() {
    let build = |queues: u32, b_memory_s: f64, copy_engines: bool| {
        let (mut g, link) = one_gpu(queues);
        let meta = Meta::new(OpKind::Gemm, Phase::Backward);
        let a = g.compute(0, MS, 0.0, 0.0, 0.0, meta);
        let c = g.comm(&[0], Axis::Tp, link, 1e6, 0.0, meta.op(OpKind::AllGather));
        g.dep(a, c);
        if copy_engines {
            g.on_copy_engines(c);
        }
        let b = g.compute(0, 2.0 * MS, b_memory_s, 200.0, 0.0, meta);
        g.finish();
        (g, c, b)
    };
    let starts = |g: &Graph, c: TaskId, b: TaskId, sharing: &Sharing| {
        let fast = crate::sim::engine::run(g, true, sharing);
        let plain = crate::sim::plain::run(g, true, sharing);
        for t in 0..g.tasks.len() {
            for (f, p) in [
                (fast.start_s[t], plain.start_s[t]),
                (fast.end_s[t], plain.end_s[t]),
            ] {
                assert!((f - p).abs() < 1e-15, "task {t}: fast {f}, plain {p}");
            }
        }
        (fast.start_s[c as usize], fast.start_s[b as usize])
    };
    let sharing = modelled();
    let (g, c, b) = build(8, 0.0, false);
    assert_eq!(starts(&g, c, b, &sharing), (2.0 * MS, MS));
    let (g, c, b) = build(1, 0.0, false);
    assert_eq!(starts(&g, c, b, &sharing), (MS, MS));
    for (g, c, b) in [build(8, 0.5 * MS, false), build(8, 0.0, true)] {
        assert_eq!(starts(&g, c, b, &sharing), (MS, MS));
    }
    let (g, c, b) = build(8, 0.0, false);
    assert_eq!(starts(&g, c, b, &Sharing::Tax(0.2)), (MS, MS));
}
