//! Hardware work queues (model.md 3b): with one queue the kernels of every
//! stream of a GPU run one after another in launch order, and overlap that
//! the streams allow does not happen.

use overlap_core::model::scenario::DpSharding;
use overlap_core::timeline::Interval;
use overlap_core::{presets, simulate, Axis, Scenario};

/// Megatron-LM issue 1468's shape (published.md 7, the `one-queue` preset):
/// 8B there (a 6.7B GPT here), TP 1, DP 64 on eight DGX H100, DP overlap on,
/// gradients all-reduced in buckets.
fn issue_1468(max_connections: u32) -> Scenario {
    let mut s = presets::scenario("one-queue").unwrap();
    s.hardware.max_connections = max_connections;
    s
}

/// The issue's own flags, `--overlap-grad-reduce --overlap-param-gather`,
/// which need Megatron-LM's distributed optimizer: the gradients
/// reduce-scattered under the backward, the updated parameters all-gathered
/// under the first forward, their gathers issued as the step starts. The
/// issue saw neither overlap with one queue. Before the gathers took their
/// place in the queue (`Graph::launch_first`), 44.5% of DP's time hid here
/// with one queue: every gather ran beside the forward.
fn issue_1468_flags(max_connections: u32) -> Scenario {
    let mut s = issue_1468(max_connections);
    s.parallel.dp_sharding = DpSharding::Optimizer;
    s.overlap.param_gather = true;
    s
}

#[test]
fn one_queue_hides_next_to_nothing_of_the_dp_reduction_and_eight_hide_most() {
    for (name, shape) in [
        ("all-reduce", issue_1468 as fn(u32) -> Scenario),
        ("reduce-scatter and param gather", issue_1468_flags),
    ] {
        let one = simulate(&shape(1)).report;
        let eight = simulate(&shape(8)).report;
        let (h1, h8) = (
            one.axes.get(Axis::Dp).hidden,
            eight.axes.get(Axis::Dp).hidden,
        );
        println!(
            "issue 1468 shape, {name}: DP comm {:.1} ms; hidden {:.3} with 1 queue (step {:.1} ms), {:.3} with 8 (step {:.1} ms)",
            eight.axes.get(Axis::Dp).comm_ms,
            h1,
            one.step_time_ms,
            h8,
            eight.step_time_ms
        );
        assert!(h1 < 0.05, "{name}: 1 queue hides {h1}");
        assert!(h8 > 0.6, "{name}: 8 queues hide {h8}");
        assert!(one.step_time_ms > eight.step_time_ms);
    }
}

/// Intervals a GPU's own queues hold: its compute, and the collectives it launches.
fn own_kernels(sim: &overlap_core::Simulation, gpu: usize) -> Vec<(&'static str, Interval)> {
    let lanes = &sim.timeline.gpus[gpu];
    let mut all: Vec<(&'static str, Interval)> = lanes
        .compute
        .iter()
        .map(|iv| ("compute", iv.clone()))
        .collect();
    for axis in Axis::ALL {
        for iv in &lanes.comm[axis.index()] {
            if iv.owner as usize == gpu {
                all.push((axis.label(), iv.clone()));
            }
        }
    }
    all.sort_by(|a, b| a.1.start_s.total_cmp(&b.1.start_s));
    all
}

#[test]
fn with_one_queue_no_two_kernels_of_a_gpu_run_at_once() {
    // Gathers issued as the step starts (the distributed optimizer's with
    // param_gather, FSDP's first two) wait for no compute op, yet are
    // launched by the GPU: they too run alone.
    let mut cases = vec![issue_1468(1), issue_1468_flags(1)];
    for id in [
        "didactic",
        "contention",
        "llama3-8b-fsdp",
        "distributed-optimizer",
    ] {
        let mut s = presets::scenario(id).unwrap();
        s.hardware.max_connections = 1;
        // Slices gathered on arrival are launched by no compute op of the
        // receiver: keep them out of this check.
        s.parallel.scatter_gather = false;
        cases.push(s);
    }
    for s in cases {
        let sim = simulate(&s);
        let mut overlapping_with_eight = 0;
        for gpu in 0..sim.timeline.gpus.len() {
            let kernels = own_kernels(&sim, gpu);
            for pair in kernels.windows(2) {
                let (a, b) = (&pair[0].1, &pair[1].1);
                assert!(
                    b.start_s >= a.end_s - 1e-12,
                    "GPU {gpu}: {} {:?} [{}, {}] overlaps {} {:?} [{}, {}]",
                    pair[0].0,
                    a.op,
                    a.start_s,
                    a.end_s,
                    pair[1].0,
                    b.op,
                    b.start_s,
                    b.end_s
                );
            }
        }
        // The check can fail: with eight queues the same scenario overlaps.
        let mut free = s.clone();
        free.hardware.max_connections = 8;
        let sim8 = simulate(&free);
        for gpu in 0..sim8.timeline.gpus.len() {
            let kernels = own_kernels(&sim8, gpu);
            overlapping_with_eight += kernels
                .windows(2)
                .filter(|p| p[1].1.start_s < p[0].1.end_s - 1e-12)
                .count();
        }
        assert!(overlapping_with_eight > 0);
    }
}

/// A queue one stream has to itself (with three queues, TP's and PP's) adds
/// no dependency: before, it chained each send to the previous one of its
/// axis, and a GPU idle waiting on the later send was charged the earlier
/// one's transfer between two other GPUs, exposing PP 1.5 times its
/// communication. Compute and DP still share a queue, as CUDA maps them.
#[test]
fn a_queue_of_its_own_orders_nothing_and_exposure_stays_within_communication() {
    let json = |queues: u32| {
        format!(
            r#"{{"hardware":{{"preset":"dgx-a100","nodes":3,"gpus_per_node":1,"nic_gbps":0.01,"max_connections":{queues}}},
            "workload":{{"layers":3,"hidden":512,"heads":8,"seq":256,"vocab":1000,"micro_batch":1,"global_batch":1}},
            "parallel":{{"tp":1,"pp":3,"dp":1,"schedule":"gpipe"}},
            "overlap":{{"tp":false,"pp":false,"dp":false}},"sm_tax":0}}"#
        )
    };
    let run = |queues| simulate(&overlap_core::parse_scenario(&json(queues)).unwrap()).report;
    let (three, eight) = (run(3), run(8));
    let pp = three.axes.get(Axis::Pp);
    assert!(
        pp.exposed_ms <= pp.comm_ms * (1.0 + 1e-9),
        "PP exposed {} ms > comm {} ms",
        pp.exposed_ms,
        pp.comm_ms
    );
    // Nothing shares a queue here but compute and DP, and there is no DP
    // traffic: three queues run as eight.
    assert_eq!(three.step_time_ms, eight.step_time_ms);
    assert_eq!(pp.exposed_ms, eight.axes.get(Axis::Pp).exposed_ms);
}
