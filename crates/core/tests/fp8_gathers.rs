//! FP8 with tensorwise scaling (model.md 4e): TP's all-gathers move fp8
//! values, half the bf16 bytes, while its reduce-scatters keep bf16
//! (torchao's Float8ColwiseParallel and Float8RowwiseParallel), read from
//! the timeline.

use overlap_core::scenario::{Precision, Scenario, Workload};
use overlap_core::timeline::{Axis, OpKind};
use overlap_core::{presets, simulate, Simulation};

fn with_precision(precision: Precision, tp_mode_async: bool) -> Scenario {
    let mut s = presets::scenario("llama3-8b-fsdp").unwrap();
    if let Workload::Transformer(t) = &mut s.workload {
        t.precision = precision;
        t.layers = 2;
    }
    if tp_mode_async {
        s.overlap.tp_mode = overlap_core::scenario::TpMode::Async;
    }
    s
}

/// Bytes of each TP collective of `op` on GPU 0, in timeline order.
fn tp_bytes(sim: &Simulation, op: OpKind) -> Vec<f64> {
    sim.timeline.gpus[0].comm[Axis::Tp.index()]
        .iter()
        .filter(|i| i.op == op)
        .map(|i| i.bytes)
        .collect()
}

#[test]
fn tp_all_gathers_move_half_the_bf16_bytes_in_fp8_and_reduce_scatters_the_same() {
    for async_tp in [false, true] {
        let bf16 = simulate(&with_precision(Precision::Bf16, async_tp));
        let fp8 = simulate(&with_precision(Precision::Fp8, async_tp));
        let (a, b) = (
            tp_bytes(&bf16, OpKind::AllGather),
            tp_bytes(&fp8, OpKind::AllGather),
        );
        assert!(!a.is_empty(), "async {async_tp}: no TP all-gather");
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(&b) {
            assert!(
                (y - x / 2.0).abs() < 1e-9 * x,
                "async {async_tp}: {y} vs {x}"
            );
        }
        let (a, b) = (
            tp_bytes(&bf16, OpKind::ReduceScatter),
            tp_bytes(&fp8, OpKind::ReduceScatter),
        );
        assert!(!a.is_empty());
        assert_eq!(a, b, "async {async_tp}");
    }
}

/// Seconds of GPU 0's optimizer step.
fn optimizer_s(sim: &Simulation) -> f64 {
    let ops: Vec<_> = sim.timeline.gpus[0]
        .compute
        .iter()
        .filter(|c| c.op == OpKind::Optimizer)
        .collect();
    assert_eq!(ops.len(), 1);
    ops[0].end_s - ops[0].start_s
}

#[test]
fn fsdp_fp8_gathers_charge_the_weight_scale_once_per_step_on_the_shard() {
    // torchtitan's Float8 with enable_fsdp_float8_all_gather and
    // precompute_float8_dynamic_scale_for_fsdp: after the optimizer, each
    // rank reads its weight shard once for the scale (2 bytes per value),
    // whatever the number of micro-batches.
    let mut extra_s = Vec::new();
    for micro_batches in [1, 2, 4] {
        let mut s = with_precision(Precision::Fp8, false);
        if let Workload::Transformer(t) = &mut s.workload {
            t.global_batch = 8 * micro_batches;
        }
        s.overlap.fp8_all_gather = false;
        let without = optimizer_s(&simulate(&s));
        s.overlap.fp8_all_gather = true;
        let with = optimizer_s(&simulate(&s));
        extra_s.push(with - without);
    }
    // By hand: two Llama-3-8B layers on a TP rank of 8, over FSDP 8.
    let s = with_precision(Precision::Fp8, false);
    let Workload::Transformer(t) = &s.workload else {
        unreachable!()
    };
    let layer = overlap_core::workload::cost::params::layer_params_whole(t);
    let want = 2.0 * 2.0 * layer / 8.0 / 8.0 / s.hardware.hbm_achievable_bps();
    for x in &extra_s {
        assert!((x - want).abs() < 1e-9 * want, "{extra_s:?} vs {want}");
    }
}
