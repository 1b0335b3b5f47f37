//! Bus bandwidth against message size, as nccl-tests' all_reduce_perf
//! prints it, for the calibration systems of model.md 2b: the cost model's
//! prediction next to the public figures, and (inside one node) the
//! simulated AllReduce of the same size. Run with `--nocapture` to see the
//! table.

use overlap_core::collective::Collective;
use overlap_core::collective_cost::{choose, Algorithm, CallShape, Fabric, Protocol};
use overlap_core::timeline::Axis;
use overlap_core::{simulate, HardwarePreset, Scenario, ScenarioInput};

const MB: f64 = 1024.0 * 1024.0;

/// Sizes 1 MB to 1 GB, powers of 4, with 2 MB where H100's choice switches.
const SIZES_MB: [f64; 7] = [1.0, 2.0, 4.0, 16.0, 64.0, 256.0, 1024.0];

struct System {
    name: &'static str,
    preset: HardwarePreset,
    ranks: u32,
    per_node: u32,
    /// Public bus bandwidths, GB/s, by size in MB (model.md 2b).
    published: &'static [(f64, &'static str)],
}

fn systems() -> [System; 3] {
    [
        System {
            name: "8 x A100 (NVSwitch)",
            preset: HardwarePreset::DgxA100,
            ranks: 8,
            per_node: 8,
            published: &[(1024.0, "200-230 (nccl-tests #149, #178)")],
        },
        System {
            name: "8 x H100 (NVSwitch 3)",
            preset: HardwarePreset::DgxH100,
            ranks: 8,
            per_node: 8,
            published: &[
                (1.0, "Ring/LL chosen (#309)"),
                (2.0, "NVLS/Simple chosen (#309)"),
                (1024.0, "~370 ring, ~480 NVLS (#212, #290, #309)"),
            ],
        },
        System {
            name: "2 x 8 H100 (NDR 400G, 50 GB/s per GPU)",
            preset: HardwarePreset::DgxH100,
            ranks: 16,
            per_node: 8,
            published: &[
                (1.0, "~10 (non-IB cloud: shape only)"),
                (8.0, "~27"),
                (64.0, "~100"),
                (1024.0, "~300; 46-48 per NDR NIC"),
            ],
        },
    ]
}

fn fabric(sys: &System) -> Fabric {
    Fabric::of(
        &sys.preset.hardware(),
        sys.preset == HardwarePreset::DgxH100,
    )
}

fn shape(sys: &System, size_mb: f64) -> CallShape {
    CallShape {
        kind: Collective::AllReduce,
        ranks: sys.ranks,
        per_node: sys.per_node,
        size_bytes: size_mb * MB,
    }
}

/// The simulator's own AllReduce of `size_mb` on one node: a GEMM of no
/// consequence, then its output reduced, overlap off.
fn simulated_bus_gbps(sys: &System, size_mb: f64) -> f64 {
    let n = 512u64;
    let m = (size_mb * MB / 2.0 / n as f64) as u64;
    let json = format!(
        r#"{{"hardware":{{"preset":"{}","nodes":1}},
            "workload":{{"kind":"matmul_allreduce","m":{m},"n":{n},"k":8}},
            "parallel":{{"tp":{}}},"overlap":{{"tp":false}},"sm_tax":0}}"#,
        sys.preset.name(),
        sys.ranks
    );
    let s: Scenario = ScenarioInput::from_json(&json).unwrap().resolve().unwrap();
    let sim = simulate(&s);
    let ar = &sim.timeline.gpus[0].comm[Axis::Tp.index()][0];
    let bus_bytes = Collective::AllReduce.bytes_per_rank(sys.ranks, 2.0 * (m * n) as f64);
    bus_bytes / (ar.end_s - ar.start_s) / 1e9
}

#[test]
fn bus_bandwidth_against_message_size_matches_the_public_figures() {
    for sys in systems() {
        let f = fabric(&sys);
        println!("\n{}: all_reduce bus bandwidth, GB/s", sys.name);
        println!(
            "{:>8} {:>10} {:>10} {:>7} {:>7} {:>8}  published",
            "size", "predicted", "simulated", "algo", "proto", "channels"
        );
        let mut last_bus = 0.0;
        let mut protocols = Vec::new();
        for size_mb in SIZES_MB {
            let shape = shape(&sys, size_mb);
            let call = choose(&f, &shape);
            let bus = call.bus_gbps(&shape);
            let simulated = if sys.ranks == sys.per_node {
                format!("{:.1}", simulated_bus_gbps(&sys, size_mb))
            } else {
                "-".to_string()
            };
            let published = sys
                .published
                .iter()
                .find(|(s, _)| *s == size_mb)
                .map_or("", |(_, p)| p);
            println!(
                "{:>6}MB {:>10.1} {:>10} {:>7} {:>7} {:>8}  {}",
                size_mb,
                bus,
                simulated,
                call.algorithm.label(),
                call.protocol.label(),
                call.channels,
                published
            );
            assert!(
                bus > last_bus,
                "{}: bus bandwidth falls at {size_mb} MB",
                sys.name
            );
            last_bus = bus;
            protocols.push(call.protocol);
        }
        // From a latency-bound protocol at small sizes to a bandwidth one.
        assert!(
            protocols[0] < Protocol::Simple,
            "{}: {protocols:?}",
            sys.name
        );
        assert_eq!(protocols.last(), Some(&Protocol::Simple), "{}", sys.name);
    }
}

#[test]
fn a100_node_reaches_nccl_tests_bus_bandwidth_at_large_sizes() {
    let sys = &systems()[0];
    let shape = shape(sys, 1024.0);
    let bus = choose(&fabric(sys), &shape).bus_gbps(&shape);
    // Published 200-230 GB/s; band: that range widened by 5%.
    assert!((190.0..=242.0).contains(&bus), "{bus}");
    let simulated = simulated_bus_gbps(sys, 1024.0);
    assert!((simulated - bus).abs() / bus < 0.01, "{simulated} vs {bus}");
}

#[test]
fn h100_node_switches_from_ring_ll_to_nvls_simple_between_1_and_2_mb() {
    let sys = &systems()[1];
    let f = fabric(sys);
    let small = choose(&f, &shape(sys, 1.0));
    assert_eq!(
        (small.algorithm, small.protocol),
        (Algorithm::Ring, Protocol::Ll)
    );
    let switched = choose(&f, &shape(sys, 2.0));
    assert_eq!(
        (switched.algorithm, switched.protocol),
        (Algorithm::Nvls, Protocol::Simple)
    );
    // Published: ~480 GB/s with NVLS, ~370 with rings; within 10%.
    let large = shape(sys, 1024.0);
    let nvls = choose(&f, &large).bus_gbps(&large);
    assert!((432.0..=528.0).contains(&nvls), "{nvls}");
    let ring_only = Fabric { nvls: false, ..f };
    let ring = choose(&ring_only, &large).bus_gbps(&large);
    assert!((333.0..=407.0).contains(&ring), "{ring}");
}

#[test]
fn two_h100_nodes_follow_the_published_curve_shape() {
    let sys = &systems()[2];
    let f = fabric(sys);
    let bus = |mb: f64| {
        let s = shape(sys, mb);
        choose(&f, &s).bus_gbps(&s)
    };
    // The published log is of a non-InfiniBand network with a higher
    // latency per hop than InfiniBand's: compare the shape, not the level.
    // There 1 MB reaches 3% of the large-message figure (10 of 300) and
    // 64 MB a third (100 of 300); with InfiniBand's lower latency the small
    // sizes fare better here (about 13% at 1 MB), so the bands are wide.
    let large = bus(1024.0);
    assert!(bus(1.0) / large < 0.2, "{} of {large}", bus(1.0));
    let mid = bus(64.0) / large;
    assert!((0.3..=0.9).contains(&mid), "{mid}");
    // Over NDR InfiniBand the 8 NICs of a node bound it: 8 x 46-48 GB/s.
    assert!(
        (8.0 * 46.0 * 0.9..=8.0 * 48.0 * 1.1).contains(&large),
        "{large}"
    );
}
