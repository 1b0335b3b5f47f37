//! Decomposed TP overlap (PyTorch Async TP, Transformer Engine's
//! userbuffers; model.md section 4): with sequence parallelism and TP
//! overlap on, every SP AllGather and ReduceScatter becomes tp - 1 ring
//! steps of one sequence slice, each under the GEMM on the slice already
//! present, in forward and in backward. Without sequence parallelism TP
//! overlap stays the chunked GEMM + AllReduce.

use overlap_core::scenario::Scenario;
use overlap_core::timeline::{Axis, OpKind, Phase};
use overlap_core::{simulate, ScenarioInput, Simulation};

fn scenario(sp: bool, tp_overlap: bool) -> Scenario {
    ScenarioInput::from_json(&format!(
        r#"{{"hardware":{{"preset":"dgx-h100","nodes":1}},
        "workload":{{"layers":2,"hidden":4096,"heads":32,"kv_heads":8,"ffn_hidden":14336,"mlp":"swiglu",
          "seq":4096,"micro_batch":1,"global_batch":1,"vocab":128256,"sequence_parallel":{sp}}},
        "parallel":{{"tp":8,"pp":1,"dp":1}},
        "overlap":{{"tp":{tp_overlap}}}}}"#
    ))
    .unwrap()
    .resolve()
    .unwrap()
}

/// TP transfers of layer 0 in `phase`, by kind.
fn tp_ops(sim: &Simulation, phase: Phase, op: OpKind) -> Vec<(u32, f64)> {
    sim.timeline.gpus[0].comm[Axis::Tp.index()]
        .iter()
        .filter(|i| i.phase == phase && i.layer == 0 && i.op == op)
        .map(|i| (i.chunk, i.bytes))
        .collect()
}

#[test]
fn sp_gathers_and_scatters_become_tp_minus_one_ring_steps_forward_and_backward() {
    let sim = simulate(&scenario(true, true));
    let slice_bytes = 4096.0 * 4096.0 * 2.0 / 8.0;
    // Forward: two gathers (before QKV and the MLP), two scatters (after
    // the projection and the MLP), 7 steps each.
    let ag = tp_ops(&sim, Phase::Forward, OpKind::AllGather);
    let rs = tp_ops(&sim, Phase::Forward, OpKind::ReduceScatter);
    assert_eq!((ag.len(), rs.len()), (14, 14), "{ag:?} {rs:?}");
    // Backward: the output gradients gathered for the two row-parallel
    // GEMMs' input gradients and the inputs gathered for the two
    // column-parallel weight gradients; the column-parallel input
    // gradients scattered.
    let ag_b = tp_ops(&sim, Phase::Backward, OpKind::AllGather);
    let rs_b = tp_ops(&sim, Phase::Backward, OpKind::ReduceScatter);
    assert_eq!((ag_b.len(), rs_b.len()), (28, 14), "{ag_b:?} {rs_b:?}");
    for (chunk, bytes) in ag.iter().chain(&rs).chain(&ag_b).chain(&rs_b) {
        assert!(*chunk < 7);
        assert!((bytes - slice_bytes).abs() < 1e-6 * slice_bytes, "{bytes}");
    }
    // No undivided SP collective is left, and no AllReduce.
    let tp = &sim.timeline.gpus[0].comm[Axis::Tp.index()];
    assert!(tp.iter().all(|i| i.op != OpKind::AllReduce));
    // The GEMM beside each is in 8 pieces: QKV's forward, for one.
    let qkv_pieces = sim.timeline.gpus[0]
        .compute
        .iter()
        .filter(|i| i.phase == Phase::Forward && i.layer == 0 && i.op == OpKind::Qkv)
        .count();
    assert!(qkv_pieces >= 8, "{qkv_pieces}");
}

#[test]
fn each_ring_step_has_the_gemm_beside_it_as_its_window_and_mostly_hides() {
    let sim = simulate(&scenario(true, true));
    let tp = &sim.timeline.gpus[0].comm[Axis::Tp.index()];
    assert!(tp.iter().all(|i| i.window.is_some()));
    let r = &sim.report;
    let on = r.axes.get(Axis::Tp);
    println!(
        "async TP: step {:.3} ms (all off {:.3}), TP comm {:.3} ms, exposed {:.3} ms, hidden {:.2}",
        r.step_time_ms, r.baseline_ms, on.comm_ms, on.exposed_ms, on.hidden
    );
    assert!(on.hidden > 0.5, "{on:?}");
    let off = simulate(&scenario(true, false)).report;
    assert!(off.axes.get(Axis::Tp).hidden < 0.05);
    assert!(
        r.step_time_ms < off.step_time_ms,
        "{} vs {}",
        r.step_time_ms,
        off.step_time_ms
    );
}

#[test]
fn without_sequence_parallelism_tp_overlap_stays_chunked_allreduce() {
    let sim = simulate(&scenario(false, true));
    let tp = &sim.timeline.gpus[0].comm[Axis::Tp.index()];
    assert!(
        tp.iter().all(|i| i.op == OpKind::AllReduce),
        "only AllReduce"
    );
    // The default four chunks per row-parallel GEMM in forward.
    let forward = tp
        .iter()
        .filter(|i| i.phase == Phase::Forward && i.layer == 0)
        .count();
    assert_eq!(forward, 8);
}
