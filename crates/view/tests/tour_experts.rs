//! The tour's expert chapters (10 and 13) state only what their own
//! scenarios' figures show: the all-to-all hidden under another
//! micro-batch, and DualPipeV's chunk pairs (see `tour_chapters.rs`).

mod common;
use common::*;

use overlap_core::scenario::{Schedule, Workload};
use overlap_core::timeline::{Axis, Interval, OpKind, Phase, NONE};
use overlap_core::{ScenarioInput, Simulation};
use overlap_view::tour::CHAPTERS;
use std::collections::{BTreeMap, BTreeSet};

#[test]
fn expert_chapter_hides_the_all_to_all_under_the_other_micro_batch() {
    let (c, r) = runs("Experts");
    // Intro: "two DGX H100 nodes: 16 experts per layer, one on each GPU
    // (EP 16), and each token goes to the GPUs of its 2 experts".
    let s = scenario_before(c);
    let t = transformer(&s);
    let moe = t.moe.as_ref().expect("experts");
    assert_eq!(s.hardware_preset.name(), "dgx-h100");
    assert_eq!((s.hardware.nodes, s.hardware.gpus()), (2, 16));
    assert_eq!((moe.experts, moe.top_k, s.parallel.ep), (16, 2, 16));
    assert!((0..t.layers).all(|l| t.is_moe_layer(l)), "a dense layer");
    assert!(!s.overlap.ep.is_on() && s.parallel.schedule == Schedule::OneFOneB);
    // "Each GPU runs 8 micro-batches a step."
    let micro_batches = micro_batches_of(&r.before.timeline.gpus[0]);
    assert_eq!(micro_batches.len(), 8);
    let last_mb = *micro_batches.last().unwrap();
    // "With EP overlap off all of the all-to-alls stalls compute, and their
    // window is only" the backward's expert weight gradients (a window is
    // the axis's, reported with overlap off too, model.md 5): the experts
    // follow the dispatch, and the compute after a combine waits for it.
    let (b, a) = (&r.before.report, &r.after.report);
    assert!(all_exposed(b, Axis::Ep));
    assert_eq!(r.before.timeline.gpus.len(), 1);
    let wgrad_ms: f64 = r.before.timeline.gpus[0]
        .compute
        .iter()
        .filter(|i| i.op == OpKind::ExpertsWgrad)
        .map(|i| (i.end_s - i.start_s) * 1e3)
        .sum();
    let window_ms = b.axes.get(Axis::Ep).window_ms;
    assert!(
        wgrad_ms > 0.0 && (window_ms - wgrad_ms).abs() <= 1e-9 * wgrad_ms,
        "EP window {window_ms} ms against the weight gradients' {wgrad_ms} ms"
    );
    for g in &r.before.timeline.gpus {
        for op in &g.comm[Axis::Ep.index()] {
            let next = first_compute_after(g, op.end_s).expect("compute after each all-to-all");
            if op.phase == Phase::Forward && op.op == OpKind::Dispatch {
                assert_eq!(
                    (next.op, next.layer, next.micro_batch),
                    (OpKind::Experts, op.layer, op.micro_batch)
                );
            }
            if op.phase == Phase::Forward && op.op == OpKind::Combine {
                assert_eq!(next.micro_batch, op.micro_batch);
                assert!(
                    next.layer == op.layer + 1 || next.op == OpKind::Logits,
                    "{:?} of layer {} after layer {}'s combine",
                    next.op,
                    next.layer,
                    op.layer
                );
            }
        }
    }
    // Question: "Without a pipeline Megatron-LM then runs combined 1F1B".
    let sa = c.after_input().unwrap().resolve().unwrap();
    assert_eq!(
        (sa.parallel.pp, sa.parallel.schedule),
        (1, Schedule::OneFOneB)
    );
    let form = overlap_core::workload::build::schedule::merged_passes::ep_form(&sa);
    assert!(form.combined_1f1b && !form.shared_expert && !form.dispatch_wgrad);
    assert!(overlap_core::workload::build::schedule::merged_passes::merges_passes(&sa));
    // Answer: more than half of the wait is gone.
    assert_eq!((c.answer.unwrap())(&r.outcome()), 0);
    let (before_ep, after_ep) = (b.axes.get(Axis::Ep), a.axes.get(Axis::Ep));
    assert!(before_ep.under_compute_ms == 0.0 && after_ep.under_compute_ms > 0.0);
    // Verdict: "The rest, {hidden} of it, now hides under compute."
    assert!(close(
        after_ep.hidden,
        after_ep.under_compute_ms / after_ep.comm_ms,
        1e-9
    ));
    assert!(close(
        after_ep.exposed_ms + after_ep.under_compute_ms,
        after_ep.comm_ms,
        1e-9
    ));
    // Explain: "the forward's first layer is paired with the backward's
    // last, and so on down" (the micro-batch before it), "and each pair runs
    // in fixed phases: the backward's combine under the forward's
    // attention; the forward's dispatch under the backward's experts; the
    // backward's dispatch under those experts' weight gradients, which need
    // nothing it brings; the forward's combine under the backward's
    // attention." An all-to-all shows as one interval per link class it
    // crosses (NVLink, the network).
    let experts = |x: &Interval| {
        matches!(
            x.op,
            OpKind::Experts | OpKind::ExpertsDgrad | OpKind::ExpertsWgrad
        )
    };
    let mut beside = BTreeSet::new();
    for g in &r.after.timeline.gpus {
        for op in &g.comm[Axis::Ep.index()] {
            for x in g.compute.iter().filter(|x| together_s(op, x) > 0.0) {
                let partner = match op.phase {
                    Phase::Forward => op.micro_batch.checked_sub(1),
                    _ => Some(op.micro_batch + 1),
                };
                let fits = match (op.phase, op.op) {
                    (Phase::Backward, OpKind::Combine) => {
                        x.phase == Phase::Forward && !experts(x) && Some(x.micro_batch) == partner
                    }
                    (Phase::Forward, OpKind::Dispatch) => {
                        x.op == OpKind::ExpertsDgrad && Some(x.micro_batch) == partner
                    }
                    (Phase::Backward, OpKind::Dispatch) => {
                        x.op == OpKind::ExpertsWgrad && x.micro_batch == op.micro_batch
                    }
                    (Phase::Forward, OpKind::Combine) => {
                        x.phase == Phase::Backward && !experts(x) && Some(x.micro_batch) == partner
                    }
                    _ => false,
                };
                assert!(
                    fits,
                    "{:?} {:?} of micro-batch {} beside {:?} of {}",
                    op.phase, op.op, op.micro_batch, x.op, x.micro_batch
                );
                beside.insert((op.phase, op.op));
            }
            // The pairs: forward layer i with backward layer L - 1 - i.
            if op.phase == Phase::Forward && op.op == OpKind::Dispatch {
                for x in g.compute.iter().filter(|x| together_s(op, x) > 0.0) {
                    assert_eq!(x.layer, t.layers - 1 - op.layer);
                }
            }
        }
    }
    assert_eq!(beside.len(), 4, "{beside:?}");
    // "EP's window grows from … to …, more than the traffic".
    assert!(after_ep.window_ms > before_ep.window_ms);
    assert!(after_ep.window_ms > after_ep.comm_ms);
    // "Every all-to-all of a paired pass hides in full. What stays exposed
    // is the first micro-batch's forward and the last one's backward: they
    // have no partner, and their all-to-alls wait as they did before."
    let unpaired = |op: &Interval| {
        (op.phase == Phase::Forward && op.micro_batch == 0)
            || (op.phase == Phase::Backward && op.micro_batch == last_mb)
    };
    let merged = merged_steps(&sa, 0, last_mb + 1);
    let exposed_s = |sim: &Simulation, keep: &dyn Fn(&Interval) -> bool| -> f64 {
        sim.timeline.gpus[0].comm[Axis::Ep.index()]
            .iter()
            .filter(|op| keep(op))
            .map(|op| op.exposed_s)
            .sum()
    };
    for g in &r.after.timeline.gpus {
        for op in &g.comm[Axis::Ep.index()] {
            assert_eq!(
                merged.contains(&(op.phase, op.micro_batch, op.chunk)),
                !unpaired(op)
            );
            if unpaired(op) {
                assert!(g
                    .compute
                    .iter()
                    .all(|x| together_s(op, x) == 0.0 || x.micro_batch == op.micro_batch));
            } else {
                assert_eq!(op.exposed_s, 0.0, "{op:?}");
            }
        }
    }
    assert!(close(
        exposed_s(&r.after, &unpaired) * 1e3,
        after_ep.exposed_ms,
        1e-6
    ));
    assert!(close(
        exposed_s(&r.after, &unpaired),
        exposed_s(&r.before, &unpaired),
        0.01
    ));
    assert!(after_ep.exposed_ms > 0.0);
    // The zoom shows one of the all-to-alls that still stall compute, of a
    // pass with no partner.
    let (t0, t1) = c.focus.span_s(&r.after.timeline).expect("a region");
    let shown = r.after.timeline.gpus.iter().any(|g| {
        g.comm[Axis::Ep.index()]
            .iter()
            .any(|op| unpaired(op) && op.exposed_s > 0.0 && op.start_s >= t0 && op.end_s <= t1)
    });
    assert!(shown, "{t0}..{t1}");
}

#[test]
fn dualpipe_chapter_pairs_the_chunks_and_fills_the_bubble() {
    use overlap_core::schedule::{peak_in_flight, stage_program};
    use overlap_core::workload::cost::stage_layers::stage_layers;
    let (c, r) = runs("DualPipe exists");
    let (sb, sa) = (
        scenario_before(c),
        c.after_input().unwrap().resolve().unwrap(),
    );
    // Intro: "Chapter 10's mixture of experts, two of its stages in a
    // pipeline: four DGX H100 nodes, two pipeline stages of two nodes each,
    // EP 16 inside each stage, 8 micro-batches a step."
    let ch10 = scenario_before(
        CHAPTERS
            .iter()
            .find(|c| c.title.starts_with("Experts"))
            .unwrap(),
    );
    let Workload::Transformer(t) = &sb.workload else {
        panic!("a transformer");
    };
    let Workload::Transformer(t10) = &ch10.workload else {
        panic!("a transformer");
    };
    assert_eq!(t, t10, "chapter 10's model");
    assert_eq!(ch10.parallel.pp, 1);
    assert_eq!(sb.hardware_preset.name(), "dgx-h100");
    assert_eq!(
        (sb.hardware.nodes, sb.parallel.pp, sb.parallel.ep),
        (4, 2, 16)
    );
    let per_stage = sb.hardware.gpus() / u64::from(sb.parallel.pp);
    assert_eq!(per_stage, 2 * u64::from(sb.hardware.gpus_per_node));
    assert_eq!(u64::from(sb.parallel.ep), ch10.hardware.gpus());
    assert!(u64::from(sb.parallel.ep) <= per_stage);
    let micro_batches = micro_batches_of(&r.before.timeline.gpus[0]);
    assert_eq!(micro_batches.len(), 8);
    let m = micro_batches.len() as u32;
    // "EP overlap is on, but Megatron-LM refuses combined 1F1B on a pipeline
    // without virtual stages, so 1F1B runs each pass alone. All EP overlap
    // can do here is run the backward's dispatch under the experts' weight
    // gradients (this model has no shared expert …)."
    assert_eq!(
        (sb.parallel.schedule, sb.parallel.virtual_stages),
        (Schedule::OneFOneB, 1)
    );
    assert!(
        sb.overlap.ep.is_on()
            && !overlap_core::workload::build::schedule::merged_passes::merges_passes(&sb)
    );
    let mut refused = c.before_input().unwrap();
    refused.overlap.ep = Some(
        serde_json::from_str::<overlap_core::scenario::EpOverlap>(r#"["combined_1f1b"]"#).unwrap(),
    );
    let err = refused
        .resolve()
        .expect_err("Megatron refuses it")
        .to_string();
    assert!(err.contains("combined_1f1b"), "{err}");
    assert_eq!(t.moe.as_ref().unwrap().shared_experts, 0);
    for g in &r.before.timeline.gpus {
        for op in &g.comm[Axis::Ep.index()] {
            for x in g.compute.iter().filter(|x| together_s(op, x) > 0.0) {
                // Besides, as on any pipeline, a stage's last combine runs
                // while the next micro-batch's forward starts on that stage.
                let stage_end = (op.phase, op.op, x.phase, x.micro_batch)
                    == (
                        Phase::Forward,
                        OpKind::Combine,
                        Phase::Forward,
                        op.micro_batch + 1,
                    )
                    && (0..sb.parallel.pp)
                        .any(|st| stage_layers(t.layers, sb.parallel.pp, st).end == op.layer + 1);
                assert!(
                    stage_end
                        || (op.phase, op.op, x.op, x.micro_batch)
                            == (
                                Phase::Backward,
                                OpKind::Dispatch,
                                OpKind::ExpertsWgrad,
                                op.micro_batch
                            ),
                    "{:?} {:?} of layer {} beside {:?} of micro-batch {}",
                    op.phase,
                    op.op,
                    op.layer,
                    x.op,
                    x.micro_batch
                );
            }
        }
    }
    // "On the GPU that finishes last": the report's GPU is the first
    // stage's, before and after, and it ends last.
    let (gb, ga) = (reported_gpu(&r.before), reported_gpu(&r.after));
    let lane_end = |sim: &Simulation, g: usize| {
        let lanes = &sim.timeline.gpus[g];
        lanes
            .compute
            .iter()
            .chain(lanes.comm.iter().flatten())
            .map(|x| x.end_s)
            .fold(f64::NEG_INFINITY, f64::max)
    };
    for (sim, g) in [(&r.before, gb), (&r.after, ga)] {
        assert_eq!(g, 0, "the first stage's GPU is the report's");
        for other in 0..sim.timeline.gpus.len() {
            assert!(lane_end(sim, g) >= lane_end(sim, other) - 1e-9);
        }
    }
    // Question: "each GPU holds two chunks of the layers in a V, the first
    // GPU the first layers and the last".
    assert_eq!(
        (sa.parallel.schedule, sa.parallel.virtual_stages),
        (Schedule::DualPipeV, 2)
    );
    let pp = sa.parallel.pp;
    assert_eq!(sa.parallel.schedule.virtual_stage(0, 0, pp), 0);
    assert_eq!(sa.parallel.schedule.virtual_stage(0, 1, pp), 2 * pp - 1);
    // "… and in the middle of the step it runs a forward chunk of one
    // micro-batch and a backward chunk of another as one pass".
    assert!(overlap_core::workload::build::schedule::merged_passes::merges_passes(&sa));
    let merged = merged_steps(&sa, 0, m);
    assert!(!merged.is_empty());
    for (phase, mb, _) in &merged {
        assert!(
            (*phase == Phase::Forward && *mb > 0) || (*phase == Phase::Backward && mb + 1 < m),
            "{merged:?}"
        );
    }
    let (b, a) = (&r.before.report, &r.after.report);
    let (ep_b, ep_a) = (b.axes.get(Axis::Ep), a.axes.get(Axis::Ep));
    // Answer: EP's exposed time shrinks.
    assert_eq!((c.answer.unwrap())(&r.outcome()), 2);
    // Explain: "a forward chunk's all-to-alls run under the backward
    // chunk's compute and the backward's under the forward's".
    for phase in [Phase::Forward, Phase::Backward] {
        let under_other = r.after.timeline.gpus.iter().any(|g| {
            g.comm[Axis::Ep.index()]
                .iter()
                .filter(|op| op.phase == phase)
                .any(|op| {
                    g.compute.iter().any(|x| {
                        x.phase != phase
                            && x.micro_batch != op.micro_batch
                            && together_s(op, x) > 0.0
                    })
                })
        });
        assert!(
            under_other,
            "no {phase:?} all-to-all under another's compute"
        );
    }
    // "{hidden} of EP's communication hides under compute, against
    // {before} with 1F1B. Its exposed time falls …, of about the same
    // traffic".
    assert!(ep_a.hidden > 2.0 * ep_b.hidden, "{ep_b:?} {ep_a:?}");
    assert!(ep_a.exposed_ms < 0.5 * ep_b.exposed_ms);
    assert!(close(ep_a.comm_ms, ep_b.comm_ms, 0.05), "{ep_b:?} {ep_a:?}");
    // "Nearly all of what stays exposed belongs to the chunks DualPipeV
    // runs alone, in its warm-up and its cool-down."
    let (mut paired_s, mut alone_s) = (0.0, 0.0);
    for op in &r.after.timeline.gpus[0].comm[Axis::Ep.index()] {
        if merged.contains(&(op.phase, op.micro_batch, op.chunk)) {
            paired_s += op.exposed_s;
        } else {
            alone_s += op.exposed_s;
        }
    }
    assert!(
        close((paired_s + alone_s) * 1e3, ep_a.exposed_ms, 1e-6),
        "{paired_s} + {alone_s} s"
    );
    assert!(
        alone_s > 5.0 * paired_s,
        "paired {paired_s} s, alone {alone_s} s"
    );
    // "The V fills the pipeline too: the bubble falls".
    assert!(a.bubble_fraction < 0.5 * b.bubble_fraction);
    // "The first GPU now computes the output layer and the loss besides
    // the embedding, and is busy … longer than 1F1B's first stage: the
    // output layer's forward and backward, and compute slowed a little by
    // the all-to-alls now running beside it": with EP overlap off in both,
    // the difference is the output layer's alone; with it on, the compute
    // that runs beside an all-to-all takes longer than the same op alone.
    let logits = |x: &Interval| matches!(x.op, OpKind::Logits | OpKind::LogitsBackward);
    let logits_s = |sim: &Simulation| -> f64 {
        sim.timeline.gpus[0]
            .compute
            .iter()
            .filter(|x| logits(x))
            .map(|x| x.end_s - x.start_s)
            .sum()
    };
    assert_eq!(logits_s(&r.before), 0.0);
    assert!(logits_s(&r.after) > 0.0);
    let busy_more_ms = a.compute_ms - b.compute_ms;
    let logits_ms = logits_s(&r.after) * 1e3;
    let off = |mut i: ScenarioInput| {
        i.overlap.ep = Some(false.into());
        run(&i)
    };
    let (b_off, a_off) = (
        off(c.before_input().unwrap()),
        off(c.after_input().unwrap()),
    );
    let more_off_ms = a_off.report.compute_ms - b_off.report.compute_ms;
    assert!(
        close(more_off_ms, logits_s(&a_off) * 1e3, 0.02),
        "{more_off_ms} ms"
    );
    assert!(
        busy_more_ms > logits_ms && busy_more_ms < 1.2 * logits_ms,
        "{busy_more_ms} ms, logits {logits_ms} ms"
    );
    let slowed = {
        let g = &r.after.timeline.gpus[0];
        let beside_ep = |x: &Interval| {
            g.comm[Axis::Ep.index()]
                .iter()
                .any(|op| together_s(op, x) > 0.0)
        };
        let key = |x: &Interval| (x.op, x.phase, x.layer, x.chunk);
        let alone: BTreeMap<_, f64> = g
            .compute
            .iter()
            .filter(|x| !beside_ep(x) && x.micro_batch != NONE)
            .map(|x| (key(x), x.end_s - x.start_s))
            .collect();
        g.compute.iter().filter(|x| beside_ep(x)).any(|x| {
            alone
                .get(&key(x))
                .is_some_and(|&d| x.end_s - x.start_s > 1.01 * d)
        })
    };
    assert!(slowed, "no compute slower beside an all-to-all");
    // "the step is still … shorter".
    assert!(a.step_time_ms < b.step_time_ms);
    // "Memory grows on the first GPU. … DualPipeV has twice as many stages
    // as GPUs: here each GPU's two chunks hold one 1F1B stage's layers
    // between them, and only the output layer adds to the first GPU's
    // weights".
    let stage = stage_layers(t.layers, pp, 0).len();
    for vs in 0..2 * pp {
        assert_eq!(2 * stage_layers(t.layers, 2 * pp, vs).len(), stage, "{vs}");
    }
    assert_eq!(
        sa.parallel.pp * sa.parallel.virtual_stages,
        2 * sb.parallel.pp
    );
    let (mb_, ma) = (
        overlap_core::memory::stage_memory(&sb, t),
        overlap_core::memory::stage_memory(&sa, t),
    );
    assert!(a.memory_gb.total > b.memory_gb.total);
    let embedding = mb_[0].embedding_params;
    assert!(embedding > 0.0 && ma[0].embedding_params == 2.0 * embedding);
    assert!(a.memory_gb.weights > b.memory_gb.weights);
    assert_eq!(
        ma[0].params - ma[0].embedding_params,
        mb_[0].params - embedding
    );
    assert_eq!(ma[0].expert_params, mb_[0].expert_params);
    // "Its activations grow …, as DualPipeV keeps more forwards alive on it
    // than 1F1B."
    assert!(a.memory_gb.activations > b.memory_gb.activations);
    assert!(close(
        a.memory_gb.activations / b.memory_gb.activations,
        ma[0].activation_bytes / mb_[0].activation_bytes,
        1e-9
    ));
    let plain = peak_in_flight(
        &stage_program(Schedule::OneFOneB, 0, sb.parallel.pp, m, 1, true),
        1,
    );
    assert_eq!(mb_[0].in_flight, plain);
    assert!(ma[0].in_flight > plain);
    // The zoom shows an all-to-all the compute waits for.
    let (t0, t1) = c.focus.span_s(&r.after.timeline).expect("a region");
    let shown = r.after.timeline.gpus.iter().any(|g| {
        g.comm[Axis::Ep.index()]
            .iter()
            .any(|op| op.exposed_s > 0.0 && op.start_s >= t0 && op.end_s <= t1)
    });
    assert!(shown, "{t0}..{t1}");
}
