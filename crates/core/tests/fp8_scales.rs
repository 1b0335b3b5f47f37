//! FP8's tensorwise scales agreed across the TP group (model.md 4e,
//! `workload/build/transformer/fp8_scales.rs`): one all-reduce of the fp32
//! maximum per cast of a TP-sharded tensor, counted against torchtitan's
//! plan and torchao's Float8Linear by hand, read from the timeline.

use std::collections::BTreeMap;

use overlap_core::scenario::{DpSharding, Precision, Recompute, Scenario, TpMode, Workload};
use overlap_core::timeline::{Axis, Interval, OpKind, Phase};
use overlap_core::{presets, simulate, Simulation};

/// Llama 3 8B's shape in torchtitan's FSDP x TP 8 layout, cut to two layers.
fn scenario(precision: Precision, fp8_all_gather: bool, tp_mode: Option<TpMode>) -> Scenario {
    let mut s = presets::scenario("llama3-8b-fsdp").unwrap();
    if let Workload::Transformer(t) = &mut s.workload {
        t.precision = precision;
        t.layers = 2;
    }
    s.overlap.fp8_all_gather = fp8_all_gather;
    // TP blocking (`None`) or overlapped in each form.
    s.overlap.tp = tp_mode.is_some();
    if let Some(mode) = tp_mode {
        s.overlap.tp_mode = mode;
    }
    s
}

/// Blocking TP and each TP overlap form.
const FORMS: [Option<TpMode>; 4] = [
    None,
    Some(TpMode::Chunked),
    Some(TpMode::Megatron),
    Some(TpMode::Async),
];

/// A scale's reduction: a TP all-reduce of one fp32 (a few bytes on the wire).
fn is_scale_reduction(i: &Interval) -> bool {
    i.op == OpKind::AllReduce && i.bytes < 64.0
}

/// GPU 0's scale reductions, counted per (phase, layer, micro-batch).
fn reductions(sim: &Simulation) -> BTreeMap<(Phase, u32, u32), u32> {
    let mut counts = BTreeMap::new();
    for i in &sim.timeline.gpus[0].comm[Axis::Tp.index()] {
        if is_scale_reduction(i) {
            *counts.entry((i.phase, i.layer, i.micro_batch)).or_default() += 1;
        }
    }
    counts
}

/// Forward, backward and recomputation counts expected in every layer and
/// micro-batch: the four inputs forward and the seven output gradients
/// backward, and the seven weights each way when they are cast per use
/// (no fp8 FSDP gathers); full recomputation repeats the forward's.
fn expected(weights_per_use: bool, recompute: Recompute) -> Vec<(Phase, u32)> {
    let weights = if weights_per_use { 7 } else { 0 };
    let mut e = vec![
        (Phase::Forward, 4 + weights),
        (Phase::Backward, 7 + weights),
    ];
    if recompute == Recompute::Full {
        e.push((Phase::Recompute, 4 + weights));
    }
    e
}

#[test]
fn each_cast_of_a_tp_sharded_tensor_reduces_its_scale_once() {
    for tp_mode in FORMS {
        for fp8_all_gather in [true, false] {
            for recompute in [Recompute::Selective, Recompute::Full] {
                let mut s = scenario(Precision::Fp8, fp8_all_gather, tp_mode);
                if let Workload::Transformer(t) = &mut s.workload {
                    t.recompute = recompute;
                }
                let sim = simulate(&s);
                let counts = reductions(&sim);
                let case = format!("{tp_mode:?}, fp8 gathers {fp8_all_gather}, {recompute:?}");
                let want = expected(!s.fsdp_gathers_fp8_weights(), recompute);
                let micro_batches = 2; // global batch 16 over dp 8
                assert_eq!(
                    counts.len(),
                    want.len() * 2 * micro_batches,
                    "{case}: {counts:?}"
                );
                for layer in 0..2 {
                    for mb in 0..micro_batches as u32 {
                        for &(phase, n) in &want {
                            assert_eq!(
                                counts.get(&(phase, layer, mb)),
                                Some(&n),
                                "{case}: {phase:?} layer {layer} mb {mb}"
                            );
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn bf16_and_a_single_tp_rank_reduce_no_scale() {
    let bf16 = simulate(&scenario(Precision::Bf16, false, Some(TpMode::Async)));
    assert!(reductions(&bf16).is_empty());
    let mut s = scenario(Precision::Fp8, true, Some(TpMode::Async));
    s.parallel.tp = 1;
    s.parallel.dp = 64;
    if let Workload::Transformer(t) = &mut s.workload {
        t.global_batch = 128;
    }
    assert!(reductions(&simulate(&s)).is_empty());
}

#[test]
fn the_compute_stream_waits_for_every_reduction() {
    // The reduction stands between the kernel whose output it scales and
    // the cast that needs the scale: no kernel of the GPU runs beside it,
    // and it costs the step at least its own time.
    for tp_mode in FORMS {
        let sim = simulate(&scenario(Precision::Fp8, true, tp_mode));
        let gpu = &sim.timeline.gpus[0];
        let scale: Vec<&Interval> = gpu.comm[Axis::Tp.index()]
            .iter()
            .filter(|i| is_scale_reduction(i))
            .collect();
        assert!(!scale.is_empty());
        for r in &scale {
            assert!(r.end_s > r.start_s);
            for c in &gpu.compute {
                let overlap = r.end_s.min(c.end_s) - r.start_s.max(c.start_s);
                assert!(
                    overlap <= 1e-12,
                    "{tp_mode:?}: {:?} under {:?} at {} s",
                    r.op,
                    c.op,
                    r.start_s
                );
            }
        }
    }
}

#[test]
fn a_zero_bubble_schedule_reduces_the_gradients_scales_in_b_and_none_in_w() {
    // B computes the input gradients from the cast output gradients; W
    // reuses them (torchao's Float8Linear casts each once per backward),
    // so the backward's seven reductions all fall in B.
    let mut s = scenario(Precision::Fp8, true, None);
    s.parallel.pp = 2;
    s.parallel.dp = 4;
    s.parallel.dp_sharding = DpSharding::Optimizer;
    s.parallel.schedule = overlap_core::scenario::Schedule::ZeroBubble1p;
    if let Workload::Transformer(t) = &mut s.workload {
        t.layers = 4;
        t.global_batch = 16;
    }
    let sim = simulate(&s);
    let gpu = &sim.timeline.gpus[0];
    let scale: Vec<&Interval> = gpu.comm[Axis::Tp.index()]
        .iter()
        .filter(|i| is_scale_reduction(i))
        .collect();
    // Weights are cast per use without FSDP's fp8 gathers: 11 forward and
    // 14 backward per layer and micro-batch.
    let micro_batches = 4; // global batch 16 over dp 4
    let layers_here = 2;
    let forward = scale.iter().filter(|i| i.phase == Phase::Forward).count();
    let backward = scale.iter().filter(|i| i.phase == Phase::Backward).count();
    assert_eq!(forward, 11 * layers_here * micro_batches);
    assert_eq!(backward, 14 * layers_here * micro_batches);
    // W ran apart from B, deferred past a later micro-batch's B, and added
    // none: had it reduced the gradients' scales again, the backward's
    // count would double.
    let deferred = sim.timeline.gpus.iter().any(|g| {
        let ops = |kind: OpKind| g.compute.iter().filter(move |c| c.op == kind);
        ops(OpKind::QkvWgrad).any(|w| {
            ops(OpKind::QkvDgrad).any(|b| b.micro_batch > w.micro_batch && b.end_s <= w.start_s)
        })
    });
    assert!(deferred, "no W deferred past a later B");
}
