//! Sharded data parallelism (model.md section 4): the distributed
//! optimizer's reduce-scatter and parameter all-gather, FSDP's per-layer
//! gathers and reduce-scatters, their bytes, what waits for them, their
//! windows, and the memory each sharding saves.

use overlap_core::memory::{memory_gb, WEIGHT_BYTES_PER_PARAM};
use overlap_core::scenario::Scenario;
use overlap_core::timeline::{Interval, OpKind, Phase, NONE};
use overlap_core::{simulate, simulate_with, Axis, Fidelity, ScenarioInput, Simulation};

const LAYERS: u32 = 4;
const HIDDEN: f64 = 2048.0;
const TP: f64 = 8.0;
const DP: f64 = 2.0;

/// Two DGX A100 nodes: TP 8 inside each node, the DP pair across them
/// (torchtitan's 2D layout: FSDP across nodes, TP inside).
fn scenario(sharding: &str, micro_batches: u32, overlap: &str) -> Scenario {
    let json = format!(
        r#"{{"hardware":{{"preset":"dgx-a100","nodes":2}},
        "workload":{{"layers":{LAYERS},"hidden":2048,"heads":16,"seq":1024,"vocab":32000,
          "micro_batch":1,"global_batch":{},"recompute":"none"}},
        "parallel":{{"tp":8,"pp":1,"dp":2,"dp_sharding":"{sharding}"}},
        "overlap":{{"tp":false,"pp":false{overlap}}}}}"#,
        2 * micro_batches
    );
    ScenarioInput::from_json(&json)
        .unwrap()
        .resolve()
        .unwrap_or_else(|e| panic!("{json}: {e:?}"))
}

/// Parameters of one layer on a TP rank: 12h^2 weights and 13h biases and norms.
fn layer_params() -> f64 {
    (12.0 * HIDDEN * HIDDEN + 13.0 * HIDDEN) / TP
}

fn dp_lane(sim: &Simulation) -> &[Interval] {
    &sim.timeline.gpus[0].comm[Axis::Dp.index()]
}

fn of_kind(sim: &Simulation, op: OpKind) -> Vec<&Interval> {
    dp_lane(sim).iter().filter(|i| i.op == op).collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn zero1_moves_the_bytes_of_an_allreduce_as_reduce_scatter_plus_all_gather() {
    let plain = simulate(&scenario("none", 2, r#","dp":true"#));
    let zero1 = simulate(&scenario(
        "optimizer",
        2,
        r#","dp":true,"param_gather":true"#,
    ));
    let sum = |v: Vec<&Interval>| v.iter().map(|i| i.bytes).sum::<f64>();
    let allreduce = sum(of_kind(&plain, OpKind::AllReduce));
    let reduce_scatter = sum(of_kind(&zero1, OpKind::ReduceScatter));
    let all_gather = sum(of_kind(&zero1, OpKind::AllGather));
    assert!(allreduce > 0.0 && reduce_scatter > 0.0 && all_gather > 0.0);
    // With 2-byte gradients, the gather moves what the reduce-scatter does.
    assert!(
        close(reduce_scatter, all_gather),
        "{reduce_scatter} vs {all_gather}"
    );
    assert!(
        close(reduce_scatter + all_gather, allreduce),
        "{reduce_scatter} + {all_gather} vs {allreduce}"
    );
    assert!(of_kind(&zero1, OpKind::AllReduce).is_empty());
}

#[test]
fn fsdp_collective_bytes_are_the_ring_formula() {
    let sim = simulate(&scenario("full", 2, r#","dp":true"#));
    // Each rank sends (d - 1)/d of the gathered (or reduced) buffer.
    let share = (DP - 1.0) / DP;
    let gather = share * layer_params() * WEIGHT_BYTES_PER_PARAM;
    let reduce = share * layer_params() * 2.0;
    let embedding = share * 32000.0 * HIDDEN / TP * WEIGHT_BYTES_PER_PARAM;
    let gathers = of_kind(&sim, OpKind::AllGather);
    // The first gather also brings the root unit: the (tied) embedding.
    let first = gathers
        .iter()
        .min_by(|a, b| a.start_s.total_cmp(&b.start_s))
        .unwrap();
    assert!(close(first.bytes, gather + embedding), "{}", first.bytes);
    for g in gathers.iter().filter(|g| g.id != first.id) {
        assert!(close(g.bytes, gather), "{g:?}");
    }
    for r in of_kind(&sim, OpKind::ReduceScatter)
        .iter()
        .filter(|r| r.layer != NONE)
    {
        assert!(close(r.bytes, reduce), "{r:?}");
    }
}

/// The first compute op of `layer` in micro-batch `mb` and the pass.
fn layer_ops(sim: &Simulation, layer: u32, mb: u32, backward: bool) -> Vec<&Interval> {
    sim.timeline.gpus[0]
        .compute
        .iter()
        .filter(|c| c.layer == layer && c.micro_batch == mb)
        .filter(|c| (c.phase == Phase::Forward) != backward)
        .collect()
}

#[test]
fn each_parameter_bucket_is_awaited_before_its_first_layer() {
    // Buckets of one layer each: a bucket per layer, each a window of its own.
    let overlap = r#","dp":true,"param_gather":true,"bucket_mb":1"#;
    let sim = simulate(&scenario("optimizer", 2, overlap));
    let gathers = of_kind(&sim, OpKind::AllGather);
    assert_eq!(gathers.len() as u32, LAYERS);
    let mut previous_end = 0.0;
    for g in &gathers {
        let first = layer_ops(&sim, g.layer, 0, false)[0];
        assert!(
            first.start_s >= g.end_s - 1e-12,
            "{g:?} ends after {first:?}"
        );
        // Issued at the step's start, one after the other on the DP stream.
        assert!(close(g.start_s, previous_end), "{g:?}");
        previous_end = g.end_s;
    }
    // The later buckets move under the first micro-batch's forward: the
    // first is wholly exposed, the rest partly hidden.
    assert!(
        close(gathers[0].exposed_s, gathers[0].end_s),
        "{:?}",
        gathers[0]
    );
    for g in &gathers[1..] {
        assert!(g.exposed_s < g.end_s - g.start_s, "{g:?}");
    }
    // Without param_gather they follow the optimizer step, and the step
    // ends when they do.
    let after = simulate(&scenario("optimizer", 2, r#","dp":true,"bucket_mb":1"#));
    let optimizer = after.timeline.gpus[0]
        .compute
        .iter()
        .find(|c| c.op == OpKind::Optimizer)
        .unwrap();
    let gathers = of_kind(&after, OpKind::AllGather);
    assert!(gathers.iter().all(|g| g.start_s >= optimizer.end_s - 1e-12));
    let last = gathers.iter().map(|g| g.end_s).fold(0.0, f64::max);
    assert!(close(last, after.timeline.step_time_s));
    assert!(sim.report.step_time_ms < after.report.step_time_ms);
}

/// FSDP's gathers in launch order, with the layer ops each serves.
fn gathers_and_layers(sim: &Simulation) -> Vec<(&Interval, Vec<&Interval>)> {
    let mut gathers = of_kind(sim, OpKind::AllGather);
    gathers.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
    gathers
        .into_iter()
        .map(|g| {
            let backward = g.phase == Phase::Backward;
            (g, layer_ops(sim, g.layer, g.micro_batch, backward))
        })
        .collect()
}

#[test]
fn fsdp_gathers_each_layer_twice_per_micro_batch() {
    let m = 3;
    let sim = simulate(&scenario("full", m, r#","dp":true"#));
    for layer in 0..LAYERS {
        for mb in 0..m {
            let count = |phase| {
                of_kind(&sim, OpKind::AllGather)
                    .iter()
                    .filter(|g| g.layer == layer && g.micro_batch == mb && g.phase == phase)
                    .count()
            };
            assert_eq!((count(Phase::Forward), count(Phase::Backward)), (1, 1));
        }
    }
    // Inference gathers once, before the forward.
    let json = r#"{"hardware":{"preset":"dgx-a100","nodes":2},
        "workload":{"mode":"inference","layers":4,"hidden":2048,"heads":16,"seq":1024,
          "micro_batch":1,"global_batch":6},
        "parallel":{"tp":8,"pp":1,"dp":2,"dp_sharding":"full"}}"#;
    let inference = simulate(&ScenarioInput::from_json(json).unwrap().resolve().unwrap());
    assert_eq!(
        of_kind(&inference, OpKind::AllGather).len() as u32,
        LAYERS * m
    );
    assert!(of_kind(&inference, OpKind::ReduceScatter).is_empty());
}

#[test]
fn fsdp_prefetch_is_exactly_one_layer_ahead() {
    let sim = simulate(&scenario("full", 2, r#","dp":true"#));
    let pairs = gathers_and_layers(&sim);
    assert_eq!(pairs.len() as u32, 2 * 2 * LAYERS);
    let mut under_previous = 0;
    for w in pairs.windows(2) {
        let (previous_layer, (gather, layer)) = (&w[0].1, (&w[1].0, &w[1].1));
        let previous_start = previous_layer[0].start_s;
        let previous_end = previous_layer.last().unwrap().end_s;
        // Issued as the previous layer is reached on the compute stream (the
        // last compute before it has ended; a TP collective may still stand
        // between the two), not before: one layer ahead.
        let issued_s = sim.timeline.gpus[0]
            .compute
            .iter()
            .map(|c| c.end_s)
            .filter(|&end| end <= previous_start + 1e-12)
            .fold(0.0, f64::max);
        assert!(gather.start_s >= issued_s - 1e-12, "{gather:?}");
        // And it moves while that layer computes.
        if gather.start_s < previous_end {
            under_previous += 1;
        }
        assert!(layer[0].start_s >= gather.end_s - 1e-12, "{gather:?}");
    }
    assert_eq!(under_previous, pairs.len() - 1);
    // Off: each gather waits for the previous layer to finish.
    let serial = simulate(&scenario("full", 2, r#","dp":false"#));
    for w in gathers_and_layers(&serial).windows(2) {
        let previous_end = w[0].1.last().unwrap().end_s;
        assert!(w[1].0.start_s >= previous_end - 1e-12, "{:?}", w[1].0);
    }
    assert!(serial.report.axes[Axis::Dp].exposed_ms > sim.report.axes[Axis::Dp].exposed_ms);
}

#[test]
fn grad_sync_sets_how_many_reduce_scatters_run() {
    let m = 3;
    let count = |grad_sync: &str| {
        let sim = simulate(&scenario(
            "full",
            m,
            &format!(r#","dp":true,"grad_sync":"{grad_sync}""#),
        ));
        let layers: Vec<u32> = of_kind(&sim, OpKind::ReduceScatter)
            .iter()
            .filter(|r| r.layer != NONE)
            .map(|r| r.micro_batch)
            .collect();
        layers
    };
    let every = count("every_micro_batch");
    assert_eq!(every.len() as u32, LAYERS * m);
    let last = count("last_micro_batch");
    assert_eq!(last.len() as u32, LAYERS);
    assert!(last.iter().all(|&mb| mb == m - 1));
}

#[test]
fn fsdp_windows_bound_what_hides() {
    for dp in [true, false] {
        let sim = simulate(&scenario("full", 2, &format!(r#","dp":{dp}"#)));
        let a = &sim.report.axes[Axis::Dp];
        assert!(a.comm_ms > 0.0 && a.window_ms > 0.0, "{a:?}");
        assert!(a.under_compute_ms <= a.window_ms + 1e-9, "{a:?}");
        if dp {
            // Measured 0.44 under compute (0.70 not exposed: the rest runs
            // under the bubble's or another axis's idle).
            assert!(a.hidden > 0.4, "prefetch hides much of it: {a:?}");
        } else {
            assert!(a.hidden < 0.2, "serial gathers hide little: {a:?}");
        }
    }
}

#[test]
fn sharded_reduced_simulation_equals_full() {
    for (sharding, overlap) in [
        (
            "optimizer",
            r#","dp":true,"param_gather":true,"bucket_mb":1"#,
        ),
        ("optimizer", r#","dp":false"#),
        ("full", r#","dp":true"#),
        ("full", r#","dp":false,"grad_sync":"last_micro_batch""#),
    ] {
        let s = scenario(sharding, 2, overlap);
        let reduced = simulate_with(&s, Fidelity::Reduced);
        let full = simulate_with(&s, Fidelity::Full);
        assert!(
            close(reduced.report.step_time_ms, full.report.step_time_ms),
            "{sharding}{overlap}: {} vs {}",
            reduced.report.step_time_ms,
            full.report.step_time_ms
        );
        assert!(close(
            reduced.report.axes[Axis::Dp].exposed_ms,
            full.report.axes[Axis::Dp].exposed_ms
        ));
    }
}

#[test]
fn memory_shards_follow_the_hand_count() {
    let gb = (1u64 << 30) as f64;
    // Parameters on a GPU: 4 layers and the tied embedding, per TP rank.
    let params = f64::from(LAYERS) * layer_params() + 32000.0 * HIDDEN / TP;
    let none = memory_gb(&scenario("none", 2, ""));
    assert!(close(none.weights * gb, 2.0 * params));
    assert!(close(none.gradients * gb, 2.0 * params));
    assert!(close(none.optimizer * gb, 12.0 * params));
    // Megatron's distributed optimizer: 2 + 2 + 12/d bytes per parameter.
    let zero1 = memory_gb(&scenario("optimizer", 2, ""));
    assert!(close(zero1.weights * gb, 2.0 * params));
    assert!(close(zero1.gradients * gb, 2.0 * params));
    assert!(close(zero1.optimizer * gb, 12.0 * params / DP));
    // FSDP: everything sharded, plus the gathered layer and the prefetched
    // one, and the gathered embedding (tied, one stage: one matrix).
    let full = memory_gb(&scenario("full", 2, r#","dp":true"#));
    let gathered = (2.0 * layer_params() + 32000.0 * HIDDEN / TP) * 2.0;
    assert!(close(full.weights * gb, 2.0 * params / DP + gathered));
    assert!(close(full.gradients * gb, 2.0 * params / DP));
    assert!(close(full.optimizer * gb, 12.0 * params / DP));
    // Deferred gradient sync keeps the whole gradient until the last micro-batch.
    let deferred = memory_gb(&scenario(
        "full",
        2,
        r#","dp":true,"grad_sync":"last_micro_batch""#,
    ));
    assert!(close(deferred.gradients * gb, 2.0 * params));
    for m in [none, zero1, full, deferred] {
        let sum = m.weights + m.gradients + m.optimizer + m.activations;
        assert!(close(sum, m.total));
    }
}

#[test]
fn sharding_fields_refuse_what_does_not_apply() {
    let refused = |json: &str, field: &str, words: &str| {
        let e = ScenarioInput::from_json(json)
            .unwrap()
            .resolve()
            .unwrap_err();
        let hit = e.errors.iter().find(|e| e.field == field);
        let hit = hit.unwrap_or_else(|| panic!("{json}: {e:?}"));
        assert!(hit.message.contains(words), "{}", hit.message);
    };
    refused(
        r#"{"hardware":{"nodes":1},"parallel":{"tp":8,"pp":1,"dp":1,"dp_sharding":"full"}}"#,
        "parallel.dp_sharding",
        "valid with dp 1 and cp 1 is \"none\"",
    );
    // The shards span DP x CP (Megatron-LM's `intra_dp_cp_group`,
    // torchtitan's `fsdp` mesh): dp 1 with cp 2 has two ranks to shard
    // across, and is accepted.
    for sharding in ["optimizer", "full"] {
        let json = format!(
            r#"{{"hardware":{{"nodes":1}},"workload":{{"seq":4096,"attention":"flash"}},
            "parallel":{{"tp":4,"cp":2,"pp":1,"dp":1,"dp_sharding":"{sharding}"}}}}"#
        );
        let input = ScenarioInput::from_json(&json).unwrap();
        assert!(input.resolve().is_ok(), "{json}");
    }
    refused(
        r#"{"overlap":{"param_gather":true}}"#,
        "overlap.param_gather",
        "valid is true only with dp_sharding \"optimizer\"",
    );
    refused(
        r#"{"parallel":{"dp_sharding":"optimizer"},"overlap":{"grad_sync":"last_micro_batch"}}"#,
        "overlap.grad_sync",
        "only with dp_sharding \"full\"",
    );
    let e = ScenarioInput::from_json(r#"{"parallel":{"dp_sharding":"zero3"}}"#).unwrap_err();
    assert!(
        e.errors[0].field.contains("dp_sharding") && e.errors[0].message.contains("full"),
        "{e:?}"
    );
}
