//! The fast engine's own tests: events planned once, collectives timed
//! alone, and sequence numbers renumbered, each against the plain reference.

// Test-only (engine.rs declares it under `#[cfg(test)]`), and marked so
// here too for the layer check (`tests/layers.rs`), which lets tests reach
// any layer: the renumbering test reads a preset.
#[cfg(test)]
use super::*;
use crate::input::presets;
use crate::model::axis::Axis;
use crate::model::fidelity::Fidelity;
use crate::model::link::{Direction, LinkClass};
use crate::model::op::{OpKind, Phase};
use crate::sim::network::Usage;
use crate::workload;
use crate::workload::graph::task::{GpuInfo, Meta, ResourceInfo};

/// One GPU and one 1 GB/s link. A PP send starts at once: 1 ms of
/// latency, then 3 MB (3 ms alone). A compute op of `compute_s`, then a
/// DP collective on the same link: 0.5 ms of latency, then 1 MB.
fn send_then_collective(compute_s: f64) -> Graph {
    let mut g = Graph::default();
    // A queue per stream: the send and the collective may overlap.
    g.max_connections = 4;
    g.add_gpu(GpuInfo::lone(0));
    g.add_resource(ResourceInfo {
        gpu: Some(0),
        class: LinkClass::Network,
        direction: Direction::Out,
        capacity_bps: 1e9,
    });
    let link = g.add_pattern(vec![Usage {
        resource: 0,
        weight: 1.0,
    }]);
    let meta = Meta::new(OpKind::Gemm, Phase::Forward);
    g.comm(&[0], Axis::Pp, link, 3e6, 1e-3, meta.op(OpKind::Send));
    let op = g.compute(0, compute_s, 0.0, 0.0, 0.0, meta);
    let reduce = g.comm(
        &[0],
        Axis::Dp,
        link,
        1e6,
        0.5e-3,
        meta.op(OpKind::AllReduce),
    );
    g.dep(op, reduce);
    g.finish();
    g
}

/// A matmul that starts beside a collective timed alone, which ends
/// before it: slowed (a 50% tax) until the collective ends, then at
/// full speed. Its end is planned once, as it starts, to the same sum
/// the collective's end would give it: no event is superseded. Sends
/// of other GPUs joining the link first make the collective a flow of
/// the network, which then ends after the matmul's planned end: the
/// matmul is planned again, and the times are the plain reference's.
/// So it is when a second collective of the GPU starts, on another
/// link, and outlasts the first: the tax stays as the first ends.
#[test]
fn a_matmul_beside_a_collective_timed_alone_is_planned_once() {
    #[derive(PartialEq)]
    enum Beside {
        Nothing,
        SendsOnItsLink,
        ASecondCollective,
    }
    let build = |beside: Beside| {
        let mut g = Graph::default();
        g.max_connections = 4;
        for gpu in 0..5 {
            g.add_gpu(GpuInfo::lone(gpu));
        }
        for gpu in 0..2 {
            g.add_resource(ResourceInfo {
                gpu: Some(gpu),
                class: LinkClass::Nvlink,
                direction: Direction::Out,
                capacity_bps: 1e9,
            });
        }
        let [link, other_link] = [0, 1].map(|resource| {
            g.add_pattern(vec![Usage {
                resource,
                weight: 1.0,
            }])
        });
        let meta = Meta::new(OpKind::Gemm, Phase::Forward);
        let first = g.compute(0, 1e-3, 0.0, 0.0, 0.0, meta);
        // 0.5 ms of latency, then 0.5 MB at 1 GB/s: alone, it ends at 2 ms.
        let all_reduce = meta.op(OpKind::AllReduce);
        let reduce = g.comm(&[0], Axis::Tp, link, 0.5e6, 0.5e-3, all_reduce);
        g.dep(first, reduce);
        // 2 ms of work: 0.5 ms of it done by 2 ms, at half speed.
        let second = g.compute(0, 2e-3, 0.0, 0.0, 0.0, meta);
        if beside == Beside::SendsOnItsLink {
            // GPUs 1 to 4 each send 10 MB on the link from 1.2 ms,
            // while the all-reduce still pays its latency: from 1.5 ms
            // it gets a fifth of the link, and ends at 4 ms.
            for gpu in 1..5 {
                let before = g.compute(gpu, 1.2e-3, 0.0, 0.0, 0.0, meta);
                let send = meta.op(OpKind::Send);
                let send = g.comm(&[gpu], Axis::Pp, link, 1e7, 0.0, send);
                g.dep(before, send);
            }
        }
        if beside == Beside::ASecondCollective {
            // From 1.2 ms to 4.2 ms, GPU 0 a member, on GPU 1's link.
            let before = g.compute(1, 1.2e-3, 0.0, 0.0, 0.0, meta);
            let gather = meta.op(OpKind::AllGather);
            let gather = g.comm(&[1, 0], Axis::Dp, other_link, 3e6, 0.0, gather);
            g.dep(before, gather);
        }
        g.finish();
        (g, second)
    };
    let tax = Sharing::Tax(0.5);
    let (g, second) = build(Beside::Nothing);
    let fast = run(&g, true, &tax);
    let plain = crate::sim::plain::run(&g, true, &tax);
    for end_s in [fast.end_s[second as usize], plain.end_s[second as usize]] {
        assert!((end_s - 3.5e-3).abs() < 1e-15, "{end_s}");
    }
    assert_eq!(
        (fast.events, fast.planned_events),
        (3, 3),
        "no event superseded"
    );
    // Slowed until 4 ms (1.5 ms of its work done), then 0.5 ms more;
    // slowed until 4.2 ms (1.6 ms done), then 0.4 ms more.
    for (beside, expected_s) in [
        (Beside::SendsOnItsLink, 4.5e-3),
        (Beside::ASecondCollective, 4.6e-3),
    ] {
        let (g, second) = build(beside);
        let fast = run(&g, true, &tax);
        let plain = crate::sim::plain::run(&g, true, &tax);
        for (f, p) in fast.end_s.iter().zip(&plain.end_s) {
            assert!((f - p).abs() < 1e-15, "fast {f} plain {p}");
        }
        let end_s = fast.end_s[second as usize];
        assert!((end_s - expected_s).abs() < 1e-15, "{end_s}");
    }
}

/// A collective timed alone from its start (one event) gives what the
/// network gives it, whether another joins its link during its latency,
/// while it moves, or only after it ended; so do the link's logs.
#[test]
fn a_collective_timed_alone_gives_the_network_times() {
    let sharing = Sharing::Tax(0.0);
    // The collective joins at 0.7 ms (the send still pays its latency),
    // at 2 ms (the send moves, 1 MB of 3 sent), at 5.5 ms (it ended at
    // 4). The link then moves the 4 MB from its first byte on without a
    // pause, at 1 GB/s: the send ends at 4.7, 5 and 4 ms.
    for (compute_s, send_end_s) in [(0.2e-3, 4.7e-3), (1.5e-3, 5e-3), (5e-3, 4e-3)] {
        let g = send_then_collective(compute_s);
        let fast = run(&g, true, &sharing);
        let plain = crate::sim::plain::run(&g, true, &sharing);
        let close = |a: f64, b: f64| (a - b).abs() < 1e-15;
        for t in 0..g.tasks.len() {
            assert!(
                close(fast.start_s[t], plain.start_s[t]),
                "{compute_s}: task {t}"
            );
            assert!(
                close(fast.end_s[t], plain.end_s[t]),
                "{compute_s}: task {t}"
            );
        }
        assert!(
            close(fast.end_s[0], send_end_s),
            "{compute_s}: {}",
            fast.end_s[0]
        );
        let (f, p) = (&fast.links[0], &plain.links[0]);
        assert!(close(f.busy_s, p.busy_s) && close(f.shared_s, p.shared_s));
        assert!((f.bytes - p.bytes).abs() < 1e-3, "{} {}", f.bytes, p.bytes);
        assert!((f.bytes - 4e6).abs() < 1e-3, "{}", f.bytes);
    }
    // Alone all along, each collective is one event; the compute op one.
    let alone = run(&send_then_collective(5e-3), true, &sharing);
    assert_eq!(alone.events, 3);
}

/// Sequence numbers that run out mid-run are numbered again in order:
/// the timeline is the same bit for bit.
#[test]
fn renumbered_sequence_gives_the_same_timeline() {
    let s = presets::scenario("contention").unwrap();
    let g = workload::build(
        &s,
        Fidelity::Reduced,
        0,
        &crate::collective::Libraries::of(&s),
    );
    let sharing = Sharing::of(&s);
    let plain = run_from_seq(&g, true, true, &sharing, 0).charge_here(&g);
    assert!(plain.planned_events > 1000, "enough pushes to run out");
    // The numbers run out halfway through.
    let first_seq = u32::MAX - (plain.planned_events / 2) as u32;
    let wrapped = run_from_seq(&g, true, true, &sharing, first_seq).charge_here(&g);
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&plain.start_s), bits(&wrapped.start_s));
    assert_eq!(bits(&plain.end_s), bits(&wrapped.end_s));
    assert_eq!(bits(&plain.exposed_s), bits(&wrapped.exposed_s));
    assert_eq!(plain.step_time_s.to_bits(), wrapped.step_time_s.to_bits());
    assert_eq!(plain.events, wrapped.events);
}
