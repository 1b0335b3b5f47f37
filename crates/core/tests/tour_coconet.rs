//! The tour's CoCoNet chapter (src/ui/tour.rs, the last of `CHAPTERS`):
//! every sentence of its intro and explanation checked against the
//! chapter's own scenario, built as the chapter builds it (the
//! `coconet-inference` preset, its setup, then its action), simulated
//! before and after.

use overlap_core::timeline::{Direction, LinkClass, LinkLane, OpKind};
use overlap_core::workload::build::hbm_ledger::hbm_ledger;
use overlap_core::{presets, simulate, Axis, Scenario, ScenarioInput, Simulation};

fn chapter_input() -> ScenarioInput {
    let mut i = presets::find("coconet-inference").unwrap().input();
    // setup
    i.overlap.pp_chunks = Some(1);
    i.overlap.fuse = Some(false);
    i
}

fn before() -> Scenario {
    chapter_input().resolve().unwrap()
}

fn after() -> Scenario {
    let mut i = chapter_input();
    // action
    i.overlap.pp_chunks = Some(8);
    i.overlap.fuse = Some(true);
    i.resolve().unwrap()
}

fn only_slicing() -> Scenario {
    let mut s = before();
    s.overlap.pp_chunks = 8;
    s
}

fn link(sim: &Simulation, gpu: usize, class: LinkClass, direction: Direction) -> &LinkLane {
    sim.timeline
        .links
        .iter()
        .find(|l| l.gpu == Some(gpu) && l.class == class && l.direction == direction)
        .unwrap()
}

/// Instants (sample starts) at which both links carry the given axes.
fn together(a: &LinkLane, axis_a: Axis, b: &LinkLane, axis_b: Axis) -> usize {
    let on = |l: &LinkLane, axis: Axis, t: f64| {
        let i = l.samples.partition_point(|s| s.t_s <= t);
        i > 0 && l.samples[i - 1].gbps[axis.index()] > 0.0
    };
    a.samples
        .iter()
        .chain(&b.samples)
        .filter(|s| on(a, axis_a, s.t_s) && on(b, axis_b, s.t_s))
        .count()
}

#[test]
fn intro_two_dgx2_nodes_tp16_one_stage_per_node_overlap_on() {
    let s = before();
    // "GPT-2 8.3B inference on two DGX-2 nodes"
    let overlap_core::scenario::Workload::Transformer(t) = &s.workload else {
        panic!("a transformer")
    };
    assert_eq!((t.layers, t.hidden, t.heads), (72, 3072, 32));
    assert_eq!(t.mode, overlap_core::scenario::Mode::Inference);
    assert_eq!(s.hardware_preset, overlap_core::HardwarePreset::Dgx2V100);
    assert_eq!(s.hardware.nodes, 2);
    // "TP 16 inside each node, one pipeline stage per node"
    assert_eq!((s.parallel.tp, s.parallel.pp), (16, 2));
    assert_eq!(s.hardware.gpus_per_node, 16);
    // "TP overlap and asynchronous sends are on"
    assert!(s.overlap.tp && s.overlap.pp);
    // "the AllReduce finishes, each GPU sends its 1/16 slice over its own
    // NIC, and the next node gathers the slices, one step after another"
    assert!(s.parallel.scatter_gather && s.overlap.pp_chunks == 1);
    let sim = simulate(&s);
    let pp = &sim.timeline.gpus[0].comm[Axis::Pp.index()];
    let sends: Vec<_> = pp.iter().filter(|i| i.op == OpKind::Send).collect();
    assert_eq!(sends.len() as u32, s.micro_batches());
    let activation = 2.0 * 8.0 * 1024.0 * 3072.0;
    assert!(sends
        .iter()
        .all(|i| (i.bytes - activation / 16.0).abs() < 1e-6));
    assert!(pp.iter().all(|i| i.op != OpKind::ReduceScatter));
    let gathers = sim.timeline.gpus[1].comm[Axis::Pp.index()]
        .iter()
        .filter(|i| i.op == OpKind::AllGather)
        .count();
    assert_eq!(gathers as u32, s.micro_batches());
}

#[test]
fn explain_fusion_gives_nearly_all_of_the_gain() {
    let (b, sliced, a) = (
        simulate(&before()).report,
        simulate(&only_slicing()).report,
        simulate(&after()).report,
    );
    let gain_ms = b.step_time_ms - a.step_time_ms;
    let from_fusion = (sliced.step_time_ms - a.step_time_ms) / gain_ms;
    println!(
        "step {:.2} -> {:.2} ms (slicing alone {:.2}); fusion's share of the gain {from_fusion:.3}",
        b.step_time_ms, a.step_time_ms, sliced.step_time_ms
    );
    // "Fusion gives nearly all of it"
    assert!(gain_ms > 0.0 && from_fusion > 0.95, "{from_fusion}");
    // "so the step barely moves" (slicing alone)
    assert!(b.step_time_ms / sliced.step_time_ms < 1.005);
}

#[test]
fn explain_71_kernels_per_micro_batch_about_56_ms_their_bytes_on_the_allreduces() {
    let (s0, s1) = (before(), after());
    let (l0, l1) = (hbm_ledger(&s0), hbm_ledger(&s1));
    let chunks = s1.overlap.tp_chunks;
    // "71 bias-dropout-add kernels per micro-batch leave each stage's compute stream"
    assert_eq!(l1.fused_collectives, 71 * chunks * s1.micro_batches());
    // "compute is busy {diff:compute_ms} less": about 63 ms of the step
    let (b, a) = (simulate(&s0).report, simulate(&s1).report);
    let removed = b.compute_ms - a.compute_ms;
    println!("compute {:.2} -> {:.2} ms", b.compute_ms, a.compute_ms);
    assert!((60.0..66.0).contains(&removed), "{removed}");
    // "their bytes ride on the AllReduces' HBM traffic"
    assert!(
        l1.fused_bytes > 0.0 && (l1.fused_bytes - (l0.kernel_bytes - l1.kernel_bytes)).abs() < 1.0
    );
}

#[test]
fn explain_slicing_puts_nvlink_and_the_nic_to_work_together_and_cuts_pp_exposed() {
    let (s0, s1) = (before(), after());
    let (b, a) = (simulate(&s0), simulate(&s1));
    // "makes the NVLink and the NIC of one GPU carry the boundary at the same moments"
    let sender = |sim: &Simulation| {
        together(
            link(sim, 0, LinkClass::Nvlink, Direction::Out),
            Axis::Pp,
            link(sim, 0, LinkClass::Network, Direction::Out),
            Axis::Pp,
        )
    };
    assert_eq!(sender(&b), 0);
    assert!(sender(&a) > 0);
    // "and cuts PP's exposed time"
    let exposed = |sim: &Simulation| sim.report.axes[Axis::Pp].exposed_ms;
    println!("PP exposed {:.3} -> {:.3} ms", exposed(&b), exposed(&a));
    assert!(exposed(&a) < exposed(&b));
    // "the boundary takes about 1 ms per micro-batch here"
    let per_mb = b.report.axes[Axis::Pp].comm_ms / f64::from(s0.micro_batches());
    println!("PP comm per micro-batch {per_mb:.3} ms");
    assert!((0.7..1.4).contains(&per_mb), "{per_mb}");
}

#[test]
fn explain_the_gather_shares_nvlink_with_the_receivers_tp_allreduces() {
    let a = simulate(&after());
    let nvl_in = link(&a, 1, LinkClass::Nvlink, Direction::In);
    // "On the receiving node the gather shares NVLink with that stage's own TP AllReduces."
    assert!(together(nvl_in, Axis::Pp, nvl_in, Axis::Tp) > 0);
}
