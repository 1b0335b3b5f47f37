//! The tour's FSDP chapter ("FSDP: the parameter all-gather hides behind
//! one layer", src/ui/tour.rs): every sentence of its intro and explanation
//! checked against the chapter's own scenario, built as the chapter builds
//! it: the preset, its setup (DP overlap off), its action (DP overlap on).

use overlap_core::presets;
use overlap_core::scenario::{DpSharding, Scenario};
use overlap_core::timeline::{GpuLanes, Interval, OpKind, Phase};
use overlap_core::{simulate, Axis, ScenarioInput, Simulation};

const PRESET: &str = "llama3-8b-fsdp";

fn input(dp_overlap: bool) -> ScenarioInput {
    let mut i = presets::find(PRESET).unwrap().input();
    i.overlap.dp = Some(dp_overlap);
    i
}

fn before() -> Scenario {
    input(false).resolve().unwrap()
}

fn after() -> Scenario {
    input(true).resolve().unwrap()
}

fn gathers(g: &GpuLanes) -> Vec<&Interval> {
    g.comm[Axis::Dp.index()]
        .iter()
        .filter(|c| c.op == OpKind::AllGather)
        .collect()
}

/// The compute ops of `layer` in micro-batch `mb`, forward or backward
/// (recomputation included).
fn layer_ops(g: &GpuLanes, layer: u32, mb: u32, backward: bool) -> Vec<&Interval> {
    g.compute
        .iter()
        .filter(|c| {
            c.layer == layer && c.micro_batch == mb && (c.phase != Phase::Forward) == backward
        })
        .collect()
}

fn span(ops: &[&Interval]) -> (f64, f64) {
    (ops[0].start_s, ops.last().unwrap().end_s)
}

#[test]
fn intro_an_8b_model_on_64_h100_fsdp_across_8_nodes_tp_8_inside() {
    // "An 8B model on 64 H100: FSDP shards it across the 8 nodes, and TP 8
    // splits each layer inside a node."
    let s = before();
    assert_eq!(s.hardware.gpus(), 64);
    assert_eq!(s.hardware.nodes, 8);
    assert_eq!(s.hardware_preset.name(), "dgx-h100");
    assert_eq!(s.parallel.dp_sharding, DpSharding::Full);
    assert_eq!((s.parallel.tp, s.parallel.dp), (8, 8));
    assert_eq!(s.parallel.tp, s.hardware.gpus_per_node);
    // 8B, counted by hand: per layer the Q and output projections (h x h
    // each), K and V (h x kv_heads x head_dim each) and SwiGLU's three
    // h x ffn_hidden GEMMs; the untied input embedding and output layer.
    let overlap_core::scenario::Workload::Transformer(t) = &s.workload else {
        unreachable!()
    };
    let h = f64::from(t.hidden);
    let kv = f64::from(t.kv_heads) * h / f64::from(t.heads);
    let ffn = f64::from(t.ffn_hidden);
    let layer = 2.0 * h * h + 2.0 * h * kv + 3.0 * h * ffn;
    let params = f64::from(t.layers) * layer + 2.0 * f64::from(t.vocab) * h;
    assert!(!t.tied_embeddings);
    assert!((7.5e9..8.5e9).contains(&params), "{params}");
}

#[test]
fn intro_each_layer_is_gathered_before_forward_and_backward_and_gpus_wait() {
    // "Each layer's parameters are all-gathered over the network before its
    // forward and again before its backward."
    let s = before();
    let sim = simulate(&s);
    let g = &sim.timeline.gpus[0];
    let overlap_core::scenario::Workload::Transformer(t) = &s.workload else {
        unreachable!()
    };
    let m = s.micro_batches();
    let all = gathers(g);
    assert_eq!(all.len() as u32, 2 * t.layers * m);
    for layer in 0..t.layers {
        for mb in 0..m {
            for (phase, backward) in [(Phase::Forward, false), (Phase::Backward, true)] {
                let gather = all
                    .iter()
                    .find(|c| c.layer == layer && c.micro_batch == mb && c.phase == phase)
                    .unwrap();
                assert!(span(&layer_ops(g, layer, mb, backward)).0 >= gather.end_s - 1e-12);
            }
        }
    }
    // Over the network: the DP group spans the nodes.
    assert!(sim.report.links.network.busy > 0.0);
    // "With DP overlap off, the GPUs wait for every gather": no compute runs
    // while one is in flight. (Its idle time is DP's, though a gradient's
    // ReduceScatter that ends with the gather may take the charge.)
    for c in &all {
        let computing: f64 = g
            .compute
            .iter()
            .map(|op| (op.end_s.min(c.end_s) - op.start_s.max(c.start_s)).max(0.0))
            .sum();
        assert!(computing <= 0.01 * (c.end_s - c.start_s), "{c:?}");
    }
    let dp = &sim.report.axes[Axis::Dp];
    assert!(dp.exposed_ms >= 0.99 * dp.comm_ms, "{dp:?}");
}

fn dp(sim: &Simulation) -> &overlap_core::report::AxisReport {
    &sim.report.axes[Axis::Dp]
}

#[test]
fn explain_almost_none_stalls_each_gather_under_the_layer_before() {
    let (off, on) = (simulate(&before()), simulate(&after()));
    // "Almost none: ..."
    // 0.85 is not exposed since causal attention shortened each layer
    // (issue 55; above 0.9 before): still under the answer's 0.2 of DP
    // stalling. (The stall is exposed time, so `not_exposed`; `hidden`
    // counts only the share under compute.)
    assert!(dp(&on).not_exposed > 0.8, "{:?}", dp(&on));
    assert!(dp(&on).exposed_ms < 0.2 * dp(&on).comm_ms);
    assert!(dp(&on).exposed_ms < 0.2 * dp(&off).exposed_ms);
    assert!(on.report.step_time_ms < off.report.step_time_ms);
    // "... each gather now runs under the layer before it, FSDP's prefetch
    // window of one layer."
    let g = &on.timeline.gpus[0];
    let mut all = gathers(g);
    all.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
    let ops = |c: &Interval| {
        span(&layer_ops(
            g,
            c.layer,
            c.micro_batch,
            c.phase != Phase::Forward,
        ))
    };
    for w in all.windows(3) {
        // Issued once the layer two before has computed (one layer ahead,
        // no more), and moving while the layer before computes.
        assert!(w[2].start_s >= ops(w[0]).1 - 1e-12, "{:?}", w[2]);
        assert!(w[2].start_s < ops(w[1]).1, "{:?}", w[2]);
    }
}

#[test]
fn explain_a_forward_layer_outlasts_the_next_gather_taken_alone() {
    // "A layer's forward computes for longer than the next layer's gather
    // takes alone, so the network keeps up; only a gather that shares the
    // network with a gradient reduce-scatter stretches past its layer."
    let on = simulate(&after());
    let g = &on.timeline.gpus[0];
    let all = gathers(g);
    let reduce_scatters: Vec<&Interval> = g.comm[Axis::Dp.index()]
        .iter()
        .filter(|c| c.op == OpKind::ReduceScatter)
        .collect();
    let (mut alone, mut stretched) = (0, 0);
    // The first gather also brings the embeddings; the rest are one layer each.
    for c in all
        .iter()
        .filter(|c| c.phase == Phase::Forward && c.layer > 0)
    {
        let previous = layer_ops(g, c.layer - 1, c.micro_batch, false);
        let (from, to) = span(&previous);
        let shares = reduce_scatters
            .iter()
            .any(|r| r.start_s < c.end_s && r.end_s > c.start_s);
        if c.contention_s == 0.0 {
            alone += 1;
            assert!(to - from > c.end_s - c.start_s, "{c:?}");
            assert!(c.exposed_s < 1e-9, "{c:?}");
        } else if c.end_s - c.start_s > to - from {
            stretched += 1;
            assert!(
                shares,
                "a gather outlasts its layer without a reduce-scatter beside it: {c:?}"
            );
        }
    }
    assert!(
        alone > stretched && stretched > 0,
        "{alone} alone, {stretched} stretched"
    );
}

#[test]
fn explain_a_quarter_of_the_network_and_most_stalls_again() {
    // "The window is never more than one layer: on a network a quarter as
    // fast every gather outlasts a forward layer, and most of the DP time
    // stalls the GPUs again."
    let s = after();
    let mut slow = input(true);
    slow.hardware.nic_gbps = Some(s.hardware.nic_gbps / 4.0);
    let sim = simulate(&slow.resolve().unwrap());
    let g = &sim.timeline.gpus[0];
    let forward: Vec<&Interval> = gathers(g)
        .into_iter()
        .filter(|c| c.phase == Phase::Forward && c.layer > 0)
        .collect();
    for c in &forward {
        let (from, to) = span(&layer_ops(g, c.layer - 1, c.micro_batch, false));
        assert!(c.end_s - c.start_s > to - from, "{c:?}");
        assert!(c.exposed_s > 0.0, "{c:?}");
    }
    // "Most": more than half, and well short of all of it (about 74% today).
    let stalled = 1.0 - dp(&sim).not_exposed;
    assert!((0.6..0.9).contains(&stalled), "{:?}", dp(&sim));
}
