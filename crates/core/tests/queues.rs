//! Hardware work queues (model.md 3b): each queue starts its kernels in
//! launch order, a kernel starting only once the one ahead of it has
//! started, and one that cannot start yet holds everything behind it. From
//! that one rule and the frameworks' launch order, one queue holds the
//! forward behind Megatron's parameter gathers (Megatron-LM issue 1468) and
//! lets Megatron's TP collectives run beside the GEMMs launched after them.

use overlap_core::model::op::{OpKind, Phase};
use overlap_core::model::scenario::{DpSharding, TpMode};
use overlap_core::timeline::Interval;
use overlap_core::{presets, simulate, Axis, Scenario};

/// Megatron-LM issue 1468's shape (published.md 7, the `one-queue` preset)
/// with gradients all-reduced in buckets: 8B there (a 6.7B GPT here), TP 1,
/// DP 64 on eight DGX H100, DP overlap on.
fn issue_1468(max_connections: u32) -> Scenario {
    let mut s = presets::scenario("one-queue").unwrap();
    s.hardware.max_connections = max_connections;
    s.parallel.dp_sharding = DpSharding::None;
    s.overlap.param_gather = false;
    s
}

/// The issue's own flags, `--overlap-grad-reduce --overlap-param-gather`,
/// which need Megatron-LM's distributed optimizer: the gradients
/// reduce-scattered under the backward, the updated parameters all-gathered
/// under the first forward, their gathers issued as the step starts (the
/// `one-queue` preset itself). The issue saw neither overlap with one queue.
fn issue_1468_flags(max_connections: u32) -> Scenario {
    let mut s = presets::scenario("one-queue").unwrap();
    s.hardware.max_connections = max_connections;
    assert!(s.parallel.dp_sharding == DpSharding::Optimizer && s.overlap.param_gather);
    s
}

/// The issue's own flags. The parameter gathers are launched as the step
/// starts, ahead of the first forward's kernels, one after another on the
/// DP stream: with one queue the last of them stands at the head, blocked
/// until the one before it ends, and the forward waits behind it, so the
/// gathers hide nothing; with eight they run beside the forward. The
/// gradient reduce-scatters, each launched ahead of the next backward GEMM,
/// start first and run beside it with one queue as with eight.
#[test]
fn one_queue_holds_the_forward_behind_the_parameter_gathers() {
    let one = simulate(&issue_1468_flags(1)).report;
    let eight = simulate(&issue_1468_flags(8)).report;
    let (h1, h8) = (
        one.axes.get(Axis::Dp).hidden,
        eight.axes.get(Axis::Dp).hidden,
    );
    println!(
        "issue 1468 flags: DP comm {:.1} ms; hidden {h1:.3} with 1 queue (step {:.1} ms), {h8:.3} with 8 (step {:.1} ms)",
        eight.axes.get(Axis::Dp).comm_ms,
        one.step_time_ms,
        eight.step_time_ms
    );
    // Measured 0.622 against 0.940: the gathers held at the head are 46 of
    // DP's 122 ms (the fp32 reduce-scatters are the rest, and hide).
    assert!((0.60..0.65).contains(&h1) && h8 > 0.9, "{h1} {h8}");
    // Measured 366.3 ms against 331.4.
    assert!(one.step_time_ms > eight.step_time_ms * 1.05);
    // The forward's first GEMM starts only once the gathers but the last
    // have ended.
    let sim = simulate(&issue_1468_flags(1));
    let lanes = &sim.timeline.gpus[0];
    let gathers: Vec<&Interval> = lanes.comm[Axis::Dp.index()]
        .iter()
        .filter(|iv| iv.op == OpKind::AllGather)
        .collect();
    let first_compute = lanes.compute.first().unwrap().start_s;
    let second_last_end = gathers[gathers.len() - 2].end_s;
    assert!(
        first_compute >= second_last_end - 1e-12,
        "{first_compute} < {second_last_end}"
    );
}

/// Known gap, pinned: with gradients all-reduced in buckets (the `one-queue`
/// preset), issue 1468 saw no overlap with one queue. In start order each
/// bucket's reduction, launched ahead of the next backward GEMM, starts
/// first and runs beside it, and a bucket waits for the one before it only
/// where the reductions outrun the backward. The fp32 reductions (161 ms)
/// outrun it at the end of the step with any number of queues, so one
/// queue hides about as much as eight (0.608 against 0.611, the same
/// 396.4 ms step, since causal attention; 0.755 against 0.752 and 414.6 ms
/// before; the blocked reductions' idle time is charged a little
/// differently). What else in the issue's runs held the queue is not
/// modelled.
#[test]
fn one_queue_hides_the_bucketed_all_reduce_as_eight_do_a_known_gap() {
    let one = simulate(&issue_1468(1)).report;
    let eight = simulate(&issue_1468(8)).report;
    let (h1, h8) = (
        one.axes.get(Axis::Dp).hidden,
        eight.axes.get(Axis::Dp).hidden,
    );
    println!(
        "issue 1468 shape, all-reduce: hidden {h1:.3} with 1 queue, {h8:.3} with 8; \
         step {:.1} ms, DP comm {:.1} ms",
        one.step_time_ms,
        one.axes.get(Axis::Dp).comm_ms
    );
    // 0.608 since causal attention shortened the backward the reductions
    // hide under (issue 55; 0.74-0.77 before).
    assert!((0.59..0.63).contains(&h1), "{h1}");
    assert!((h1 - h8).abs() < 0.01, "{h1} {h8}");
    assert_eq!(one.step_time_ms, eight.step_time_ms);
}

/// Megatron's TP overlap with sequence parallelism (`tp_mode: "megatron"`)
/// on Korthikanti et al.'s 175B, one queue, as Megatron-LM requires: in the
/// backward the layer input's AllGather is launched ahead of the
/// input-gradient GEMM and the input gradient's ReduceScatter ahead of the
/// weight-gradient GEMM; each starts first and runs beside its GEMM. Under
/// the first version's finish-to-start queues this hid nothing.
#[test]
fn megatron_tp_overlap_runs_each_backward_collective_beside_its_gemm_on_one_queue() {
    let mut s = presets::scenario("korthikanti-175b-seqsel").unwrap();
    s.hardware.max_connections = 1;
    s.overlap.tp = true;
    s.overlap.tp_mode = TpMode::Megatron;
    let sim = simulate(&s);
    let tp = sim.report.axes.get(Axis::Tp);
    println!(
        "175B seq+sel, Megatron TP overlap, 1 queue: TP comm {:.1} ms, hidden {:.3}",
        tp.comm_ms, tp.hidden
    );
    // Measured 0.400 under compute (hidden), and 0.428 not exposed (0.028
    // more in flight while the stream waited on something charged before
    // it): the forward's four collectives per layer and the backward's two
    // mirrored AllGathers still block. The same with eight queues: there
    // three of each layer's four backward collectives lose the SM race and
    // start a first wave (0.35 ms) after their GEMM, yet each still ends
    // under it (`one_queue_wins_the_sm_race_that_eight_lose_in_megatrons_tp_overlap`
    // is a shape where they do not).
    // Not exposed: 0.443 until pipeline sends waited for their receives
    // (model.md 4); 0.428 since, each steady forward's output leaving after
    // the backward beside it, as Megatron-LM's interleaved schedule sends it,
    // which moves the pipeline's waits the TP collectives sat under.
    assert!((0.39..0.41).contains(&tp.hidden), "{}", tp.hidden);
    assert!((0.42..0.44).contains(&tp.not_exposed), "{}", tp.not_exposed);
    let eight = {
        let mut s = s.clone();
        s.hardware.max_connections = 8;
        simulate(&s).report
    };
    assert_eq!(eight.axes.get(Axis::Tp).hidden, tp.hidden);
    // Each backward AllGather and ReduceScatter starts with a GEMM.
    let lanes = &sim.timeline.gpus[0];
    let beside = lanes.comm[Axis::Tp.index()]
        .iter()
        .filter(|iv| iv.phase == Phase::Backward)
        .filter(|iv| {
            lanes
                .compute
                .iter()
                .any(|c| c.start_s == iv.start_s && c.end_s > iv.start_s)
        })
        .count();
    // Two of each per layer and micro-batch: 96 layers over 8 stages, 64
    // micro-batches.
    assert_eq!(beside, 4 * 96 / 8 * 64);
    // Overlap off: the same collectives block, and nothing runs under
    // compute (4% of TP's time is in flight while the stream's idle time is
    // charged elsewhere, and is not exposed either).
    s.overlap.tp = false;
    assert_eq!(simulate(&s).report.axes.get(Axis::Tp).under_compute_ms, 0.0);
}

/// Megatron's TP overlap with sequence parallelism on H100, where the
/// backward's collectives outlast their GEMMs' tails (the 22B preset's
/// shape narrowed to a 4096-wide model, 48 layers, TP 8 on one DGX H100):
/// the SM race (model.md 3b) is what one queue wins. With eight queues each
/// collective and the GEMM ready with it go through different queues, the
/// GEMM's first wave takes the SMs and the collective starts when it drains;
/// with one, the collective, launched first, starts with the GEMM. Read from
/// the timeline, then in the figures: one queue beats eight.
#[test]
fn one_queue_wins_the_sm_race_that_eight_lose_in_megatrons_tp_overlap() {
    let run = |queues: u32| {
        let json = format!(
            r#"{{"hardware":{{"preset":"dgx-h100","nodes":1,"max_connections":{queues}}},
            "workload":{{"layers":48,"hidden":4096,"heads":32,"seq":2048,"vocab":51200,"micro_batch":4,
              "global_batch":4,"recompute":"selective","sequence_parallel":true,"attention":"materialized"}},
            "parallel":{{"tp":8,"pp":1,"dp":1,"schedule":"1f1b"}},
            "overlap":{{"tp":true,"pp":false,"dp":false,"tp_mode":"megatron"}}}}"#
        );
        simulate(&overlap_core::parse_scenario(&json).unwrap())
    };
    let (one, eight) = (run(1), run(8));
    // When each backward TP collective starts after the start of the
    // compute op running then, on the first GPU.
    let lags = |sim: &overlap_core::Simulation| -> Vec<(OpKind, f64)> {
        let lanes = &sim.timeline.gpus[0];
        lanes.comm[Axis::Tp.index()]
            .iter()
            .filter(|iv| iv.phase == Phase::Backward)
            .filter_map(|iv| {
                let c = lanes
                    .compute
                    .iter()
                    .find(|c| c.start_s <= iv.start_s && c.end_s > iv.start_s)?;
                Some((c.op, iv.start_s - c.start_s))
            })
            .collect()
    };
    let (lags1, lags8) = (lags(&one), lags(&eight));
    // Per layer: the MLP's and attention's AllGather under the input
    // gradient, their ReduceScatter under the weight gradient.
    assert_eq!(lags1.len(), 4 * 48, "{lags1:?}");
    assert_eq!(lags8.len(), lags1.len());
    assert!(lags1.iter().all(|&(_, lag)| lag == 0.0), "{lags1:?}");
    // With eight queues the ones whose op opens with its GEMM (attention's
    // input gradient, both weight gradients) start a first wave late: a
    // third of the GEMM here (three waves on 132 SMs). The MLP's input
    // gradient opens with GeLU's backward, short blocks the gather does not
    // wait out.
    let late: Vec<_> = lags8.iter().filter(|(_, lag)| *lag > 0.0).collect();
    assert_eq!(late.len(), 3 * 48, "{lags8:?}");
    for (op, _) in &late {
        assert!(
            matches!(op, OpKind::QkvDgrad | OpKind::MlpUpWgrad | OpKind::QkvWgrad),
            "{op:?}"
        );
    }
    let (tp1, tp8) = (
        one.report.axes.get(Axis::Tp),
        eight.report.axes.get(Axis::Tp),
    );
    println!(
        "Megatron TP overlap, 4096 wide on H100: 1 queue step {:.2} ms, TP hidden {:.3}; 8 queues {:.2} ms, {:.3}",
        one.report.step_time_ms, tp1.hidden, eight.report.step_time_ms, tp8.hidden
    );
    // Measured 212.16 ms and 0.389 against 217.33 ms and 0.315 (the same
    // 212.16 ms and 0.389 with either count before the race).
    assert!(
        tp1.hidden > tp8.hidden + 0.05,
        "{} {}",
        tp1.hidden,
        tp8.hidden
    );
    assert!(one.report.step_time_ms < eight.report.step_time_ms * 0.99);
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
