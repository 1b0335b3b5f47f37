//! Hardware queues in start order (`workload::queues`), on hand-built
//! graphs, in the fast engine and the plain reference alike.

use crate::model::axis::Axis;
use crate::model::link::{Direction, LinkClass};
use crate::model::op::{OpKind, Phase};
use crate::sim::engine::RunResult;
use crate::sim::network::Usage;
use crate::workload::graph::{GpuInfo, Graph, Meta, ResourceInfo, TaskId};
use crate::workload::interference::Sharing;

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
            Axis::Tp as u8,
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
        let first = g.comm(&[0], Axis::Dp as u8, link, 2e6, 0.0, reduce);
        g.launch_first(first);
        let a = g.compute(0, MS, 0.0, 0.0, 0.0, meta);
        let c = g.comm(&[0], Axis::Dp as u8, link, 1e6, 0.0, reduce);
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
