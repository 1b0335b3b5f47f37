//! NCCL's tuning model against its own source and published logs.

use super::tuner::*;
use super::*;

fn node(nvlink_gbps: f64, generation: Generation, nvls: bool) -> Fabric {
    Fabric {
        nvlink_bps: nvlink_gbps * generation.nvlink_efficiency() * 1e9,
        nic_bps: 50.0 * 0.94e9,
        nvlink_latency_s: 2e-6,
        network_latency_s: 5e-6,
        nvls,
        generation,
        amd_cpu: false,
    }
}

fn a100() -> Fabric {
    node(300.0, Generation::Ampere, false)
}

fn all_reduce(ranks: u32, per_node: u32, size_bytes: f64) -> CallShape {
    CallShape {
        kind: Collective::AllReduce,
        ranks,
        per_node,
        size_bytes,
    }
}

#[test]
fn small_messages_choose_ll_and_large_ones_simple() {
    let f = a100();
    let small = choose(&f, &all_reduce(8, 8, 64e3));
    let large = choose(&f, &all_reduce(8, 8, 1e9));
    assert_eq!(small.protocol, Protocol::Ll);
    assert_eq!(large.protocol, Protocol::Simple);
    assert_eq!(small.algorithm, Algorithm::Ring);
    assert!(small.bus_gbps(&all_reduce(8, 8, 64e3)) < large.bus_gbps(&all_reduce(8, 8, 1e9)) / 4.0);
}

#[test]
fn ring_ll_runs_at_half_the_bus_bandwidth_under_the_architecture_cap() {
    // Hopper, one node: half of 8 x 18 x 20.6 GB/s... of 370.8 is 185.4,
    // above the 141 GB/s cap; a large LL call's bus bandwidth is the cap.
    let f = node(450.0, Generation::Hopper, false);
    let shape = all_reduce(8, 8, 1e9);
    let ll = candidate(&f, &shape, Algorithm::Ring, Protocol::Ll).unwrap();
    assert!(
        (ll.bus_gbps(&shape) - 141.0).abs() < 0.5,
        "{}",
        ll.bus_gbps(&shape)
    );
    // Volta (DGX-2, 16 ranks): half of 120 GB/s is 60, above its 39 cap.
    let v = node(150.0, Generation::Volta, false);
    let shape16 = all_reduce(16, 16, 1e9);
    let ll = candidate(&v, &shape16, Algorithm::Ring, Protocol::Ll).unwrap();
    assert!((ll.bus_gbps(&shape16) - 39.0).abs() < 0.5);
    // An A100 ring's Simple reaches NCCL's 12 x 20 GB/s.
    let big = all_reduce(8, 8, 1e12);
    let simple = candidate(&a100(), &big, Algorithm::Ring, Protocol::Simple).unwrap();
    assert!(
        (simple.bus_gbps(&big) - 240.0).abs() < 0.1,
        "{}",
        simple.bus_gbps(&big)
    );
}

#[test]
fn latencies_are_tuning_cc_s() {
    let f = a100();
    // Ring LL in one node: 6.6 us base and 14 hops of 0.6 us.
    let c = candidate(&f, &all_reduce(8, 8, 8.0), Algorithm::Ring, Protocol::Ll).unwrap();
    assert!((c.latency_s - 15.0e-6).abs() < 1e-12, "{}", c.latency_s);
    // Tree Simple across 4 nodes of 8: no base, 2 x (7 NVLink hops of
    // 28 us + 2 levels of 28 us on the network).
    let t = candidate(
        &f,
        &all_reduce(32, 8, 8.0),
        Algorithm::Tree,
        Protocol::Simple,
    )
    .unwrap();
    assert!(
        (t.latency_s - 2.0 * (7.0 + 2.0) * 28e-6).abs() < 1e-12,
        "{}",
        t.latency_s
    );
}

#[test]
fn nvls_takes_large_allreduces_on_nvswitch_3() {
    let f = node(450.0, Generation::Hopper, true);
    assert_eq!(
        choose(&f, &all_reduce(8, 8, 512e3)).algorithm,
        Algorithm::Ring
    );
    let large = choose(&f, &all_reduce(8, 8, 64e6));
    assert_eq!(
        (large.algorithm, large.protocol),
        (Algorithm::Nvls, Protocol::Simple)
    );
    assert_eq!(
        choose(
            &node(450.0, Generation::Hopper, false),
            &all_reduce(8, 8, 64e6)
        )
        .algorithm,
        Algorithm::Ring
    );
}

#[test]
fn nvls_is_offered_for_allgather_and_reducescatter_in_one_node() {
    let f = node(450.0, Generation::Hopper, true);
    for kind in [Collective::AllGather, Collective::ReduceScatter] {
        let shape = CallShape {
            kind,
            ranks: 8,
            per_node: 8,
            size_bytes: 4e6,
        };
        // Offered at NCCL's own NVLS latency (tuning.cc hwLat), timed as
        // it achieves (the AllReduce's fitted latency).
        let offered = candidate(&f, &shape, Algorithm::Nvls, Protocol::Simple);
        assert!((offered.unwrap().latency_s - 25e-6).abs() < 1e-15);
        let nvls = choose_algorithm(&f, &shape, Algorithm::Nvls).unwrap();
        assert!((nvls.latency_s - NVLS_ACHIEVED_LATENCY_US * 1e-6).abs() < 1e-15);
        // NVLS receives (or sends) the whole buffer, a ring 7/8 of it.
        let ring = choose_algorithm(&f, &shape, Algorithm::Ring).unwrap();
        assert!(nvls.time_s > ring.time_s);
        assert_eq!(choose(&f, &shape).algorithm, Algorithm::Ring);
        let across = CallShape { ranks: 16, ..shape };
        assert!(choose_algorithm(&f, &across, Algorithm::Nvls).is_none());
    }
}

#[test]
fn tree_wins_latency_bound_allreduces_across_many_nodes() {
    let f = a100();
    let shape = all_reduce(64 * 8, 8, 1e6);
    let c = choose(&f, &shape);
    assert_eq!(c.algorithm, Algorithm::Tree);
    // The tree's latency grows with log2 of the nodes, the ring's with the ranks.
    let ring = candidate(&f, &shape, Algorithm::Ring, c.protocol).unwrap();
    assert!(c.latency_s * 4.0 < ring.latency_s);
}

#[test]
fn channels_shrink_for_small_messages() {
    let f = a100();
    assert_eq!(choose(&f, &all_reduce(8, 8, 1e9)).channels, NVLINK_CHANNELS);
    // Ring LL: 512 threads x 8 bytes x 8 ranks = 32 KiB per channel.
    let c = choose(&f, &all_reduce(8, 8, 100e3));
    assert_eq!((c.protocol, c.channels), (Protocol::Ll, 3));
    assert_eq!(choose(&f, &all_reduce(8, 8, 8.0)).channels, 1);
    assert_eq!(send(&f, 1e6, true).channels, P2P_CHANNELS);
}

#[test]
fn a_fused_piece_keeps_the_whole_call_s_choice() {
    let f = a100();
    let whole = choose(&f, &all_reduce(8, 8, 64e6));
    let piece = whole.piece(8);
    assert_eq!(piece.kernel(), whole.kernel());
    assert!((piece.wire_bytes * 8.0 - whole.wire_bytes).abs() < 1e-6);
}

#[test]
fn a_single_rank_costs_nothing() {
    let c = choose(&a100(), &all_reduce(1, 1, 1e6));
    assert_eq!((c.time_s, c.wire_bytes), (0.0, 0.0));
    assert_eq!(all_to_all(&a100(), 1, 1, 1e6).time_s, 0.0);
}
