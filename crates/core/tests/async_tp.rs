//! Decomposed TP overlap (PyTorch Async TP, Transformer Engine's
//! userbuffers; model.md section 4): with sequence parallelism and TP
//! overlap on, every SP AllGather and ReduceScatter becomes tp - 1 ring
//! steps of one sequence slice, each under the GEMM on the slice already
//! present, in forward and in backward. Without sequence parallelism TP
//! overlap stays the chunked GEMM + AllReduce.

use overlap_core::scenario::Scenario;
use overlap_core::timeline::{Axis, OpKind, Phase};
use overlap_core::{simulate, simulate_plain, simulate_with, Fidelity, ScenarioInput, Simulation};

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

/// Llama-3-8B-shaped layers on two DGX H100, TP 8 x PP 2, four
/// micro-batches, with SP and the schedule given.
fn pipelined(schedule: &str, tp_overlap: bool) -> Scenario {
    let v = if ["zb-v", "dualpipe-v"].contains(&schedule) {
        2
    } else {
        1
    };
    ScenarioInput::from_json(&format!(
        r#"{{"hardware":{{"preset":"dgx-h100","nodes":2}},
        "workload":{{"layers":8,"hidden":4096,"heads":32,"kv_heads":8,"ffn_hidden":14336,"mlp":"swiglu",
          "seq":4096,"micro_batch":1,"global_batch":4,"vocab":128256,"sequence_parallel":true}},
        "parallel":{{"tp":8,"pp":2,"dp":1,"schedule":"{schedule}","virtual_stages":{v}}},
        "overlap":{{"tp":{tp_overlap}}}}}"#
    ))
    .unwrap()
    .resolve()
    .unwrap()
}

/// Compute pieces of layer `layer`, micro-batch 0, backward, of kind `op`.
fn pieces(sim: &Simulation, layer: u32, op: OpKind) -> usize {
    sim.timeline.gpus[0]
        .compute
        .iter()
        .filter(|i| {
            i.phase == Phase::Backward && i.layer == layer && i.micro_batch == 0 && i.op == op
        })
        .count()
}

#[test]
fn split_backward_decomposes_its_sp_collectives_into_ring_steps_under_gemm_pieces() {
    let slice_bytes = 4096.0 * 4096.0 * 2.0 / 8.0;
    for schedule in ["zb-1p", "zb-2p", "zb-v", "dualpipe-v"] {
        let sim = simulate(&pipelined(schedule, true));
        let tp = &sim.timeline.gpus[0].comm[Axis::Tp.index()];
        let backward: Vec<_> = tp
            .iter()
            .filter(|i| i.phase == Phase::Backward && i.micro_batch == 0)
            .collect();
        let layer = backward[0].layer;
        let of = |op: OpKind| {
            backward
                .iter()
                .filter(|i| i.layer == layer && i.op == op)
                .count()
        };
        // B gathers the output gradients of the two row-parallel GEMMs and
        // scatters the input gradients of the two column-parallel ones; W
        // gathers the layer input again for the two column-parallel weight
        // gradients: 7 ring steps each, as in a whole backward.
        assert_eq!(
            (of(OpKind::AllGather), of(OpKind::ReduceScatter)),
            (28, 14),
            "{schedule}"
        );
        // Every SP transfer is one ring step of one sequence slice, with the
        // GEMM piece beside it as its window: none is blocking and whole.
        for i in tp.iter().filter(|i| i.op != OpKind::Send) {
            assert!(i.chunk < 7, "{schedule}: {i:?}");
            assert!(
                (i.bytes - slice_bytes).abs() < 1e-6 * slice_bytes,
                "{schedule}: {i:?}"
            );
            assert!(i.window.is_some(), "{schedule}: {i:?}");
        }
        // B's input gradients and W's weight gradients run in 8 pieces, the
        // down and output projections' weight gradients whole beside them.
        assert_eq!(pieces(&sim, layer, OpKind::QkvDgrad), 8, "{schedule}");
        assert_eq!(pieces(&sim, layer, OpKind::MlpUpDgrad), 1 + 8, "{schedule}");
        assert_eq!(pieces(&sim, layer, OpKind::MlpUpWgrad), 1 + 8, "{schedule}");
        assert_eq!(pieces(&sim, layer, OpKind::QkvWgrad), 1 + 8, "{schedule}");
        // Each ring step moves while a compute op runs on the same GPU,
        // except beside GEMM pieces shorter than a step, where the ring
        // falls behind its pieces: the QKV GEMMs' (768 columns with GQA),
        // e.g. the tail of the input gradient's ReduceScatter, which no W
        // follows in B to hide, as one does in a whole backward.
        let compute = &sim.timeline.gpus[0].compute;
        let overlapped = |s: &&&overlap_core::timeline::Interval| {
            compute
                .iter()
                .any(|c| c.start_s < s.end_s && s.start_s < c.end_s)
        };
        let alone: Vec<_> = backward.iter().filter(|s| !overlapped(s)).collect();
        for s in &alone {
            let (piece_start, piece_end) = s.window.unwrap();
            assert!(
                piece_end - piece_start < s.end_s - s.start_s,
                "{schedule}: a ring step ran alone beside a longer GEMM piece: {s:?}"
            );
        }
        assert!(
            alone.len() * 10 < backward.len(),
            "{schedule}: {} of {} ring steps ran alone",
            alone.len(),
            backward.len()
        );
    }
}

#[test]
fn split_backward_hides_most_tp_time_and_keeps_its_bubble_below_1f1b() {
    let step = |schedule: &str, on: bool| simulate(&pipelined(schedule, on)).report;
    let one_f_one_b = step("1f1b", true);
    for schedule in ["zb-1p", "zb-2p"] {
        let on = step(schedule, true);
        let off = step(schedule, false);
        let tp_on = on.axes.get(Axis::Tp);
        println!(
            "{schedule}, SP: step {:.3} ms with TP overlap (off {:.3}), TP hidden {:.2}, \
             bubble {:.3} (1F1B {:.3})",
            on.step_time_ms,
            off.step_time_ms,
            tp_on.hidden,
            on.bubble_fraction,
            one_f_one_b.bubble_fraction
        );
        assert!(tp_on.hidden > 0.5, "{schedule}: {tp_on:?}");
        assert!(off.axes.get(Axis::Tp).hidden < 0.05, "{schedule}");
        assert!(on.step_time_ms < off.step_time_ms, "{schedule}");
        assert!(
            on.bubble_fraction < one_f_one_b.bubble_fraction,
            "{schedule}: {} vs 1F1B {}",
            on.bubble_fraction,
            one_f_one_b.bubble_fraction
        );
    }
}

#[test]
fn fast_engine_equals_plain_on_a_split_backward_with_async_tp() {
    for schedule in ["zb-1p", "zb-v"] {
        let s = pipelined(schedule, true);
        for fidelity in [Fidelity::Reduced, Fidelity::Full] {
            let fast = simulate_with(&s, fidelity).timeline;
            let plain = simulate_plain(&s, fidelity).timeline;
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * plain.step_time_s;
            assert!(close(fast.step_time_s, plain.step_time_s), "{schedule}");
            assert_eq!(fast.gpus.len(), plain.gpus.len());
            for (f, p) in fast.gpus.iter().zip(&plain.gpus) {
                let lanes = |g: &overlap_core::timeline::GpuLanes| {
                    let mut all: Vec<_> = g.compute.clone();
                    for lane in &g.comm {
                        all.extend(lane.iter().cloned());
                    }
                    all
                };
                let (f, p) = (lanes(f), lanes(p));
                assert_eq!(f.len(), p.len(), "{schedule}");
                for (a, b) in f.iter().zip(&p) {
                    assert!(
                        a.id == b.id
                            && a.op == b.op
                            && close(a.start_s, b.start_s)
                            && close(a.end_s, b.end_s)
                            && close(a.exposed_s, b.exposed_s),
                        "{schedule} {fidelity:?}:\n fast  {a:?}\n plain {b:?}"
                    );
                }
            }
        }
    }
}
