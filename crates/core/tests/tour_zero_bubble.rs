//! The tour chapter "The bubble is compute that could hide communication"
//! (src/ui/tour.rs): its scenario built as the chapter builds it (the
//! `didactic` preset with 1F1B, then ZB-1p), simulated before and after,
//! and every sentence of its intro and explanation checked against those
//! figures. Sentences with figures are written here from the simulation and
//! must appear word for word in the chapter.

use overlap_core::scenario::Schedule;
use overlap_core::schedule::{peak_in_flight, stage_program, Pass};
use overlap_core::timeline::{GpuLanes, Phase, NONE};
use overlap_core::{presets, simulate, Axis, Report, Scenario, ScenarioInput, Simulation};

const TITLE: &str = "The bubble is compute that could hide communication";

/// The chapter's scenario: its preset, its setup, and, after, its action.
fn chapter_input(after: bool) -> ScenarioInput {
    let mut input = presets::find("didactic")
        .expect("the preset exists")
        .input();
    input.parallel.schedule = Some(Schedule::OneFOneB);
    if after {
        input.parallel.schedule = Some(Schedule::ZeroBubble1p);
    }
    input
}

fn run(after: bool) -> (Scenario, Simulation) {
    let s = chapter_input(after).resolve().expect("a valid scenario");
    let sim = simulate(&s);
    (s, sim)
}

/// The chapter's text as written in the view crate's chapter table, with Rust's
/// line continuations (a backslash, the line break and the next line's
/// indentation) removed.
fn tour_text() -> String {
    let src = include_str!("../../view/src/tour/chapters.rs");
    let mut out = String::with_capacity(src.len());
    let mut chars = src.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && chars.peek() == Some(&'\n') {
            chars.next();
            while chars.peek().is_some_and(|c| c.is_whitespace()) {
                chars.next();
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn assert_in_chapter(sentence: &str) {
    let text = tour_text();
    let start = text
        .find(&format!("title: \"{TITLE}\""))
        .expect("the chapter is in the view crate's chapter table");
    let chapter = &text[start..];
    let end = chapter[1..]
        .find("Chapter {")
        .map_or(chapter.len(), |e| e + 1);
    assert!(
        chapter[..end].contains(sentence),
        "the chapter does not say, word for word: {sentence}"
    );
}

/// When a GPU is done: its last compute op (the optimizer) or transfer.
fn finish_s(gpu: &GpuLanes) -> f64 {
    let compute = gpu.compute.iter().map(|iv| iv.end_s);
    let comm = gpu.comm.iter().flatten().map(|iv| iv.end_s);
    compute.chain(comm).fold(0.0, f64::max)
}

fn slowest_stage(sim: &Simulation) -> u32 {
    let mut best = &sim.timeline.gpus[0];
    for g in &sim.timeline.gpus {
        if finish_s(g) > finish_s(best) {
            best = g;
        }
    }
    best.stage
}

fn gpu_of_stage(sim: &Simulation, stage: u32) -> &GpuLanes {
    sim.timeline
        .gpus
        .iter()
        .find(|g| g.stage == stage)
        .expect("a GPU of the stage")
}

/// Backward compute ops of layers, in the order they ran.
fn backward_ops(gpu: &GpuLanes) -> Vec<&overlap_core::timeline::Interval> {
    gpu.compute
        .iter()
        .filter(|iv| iv.phase == Phase::Backward && iv.layer != NONE)
        .collect()
}

fn dp(r: &Report) -> &overlap_core::output::report::AxisReport {
    r.axes.get(Axis::Dp)
}

#[test]
fn the_intro_holds_on_the_chapters_scenario() {
    let (s, before) = run(false);
    let r = &before.report;
    // "1F1B on two DGX A100 nodes, every overlap on."
    assert_eq!(s.hardware.nodes, 2);
    assert_eq!(s.parallel.schedule, Schedule::OneFOneB);
    assert!(s.overlap.tp && s.overlap.pp && s.overlap.dp);
    assert_in_chapter("1F1B on two DGX A100 nodes, every overlap on.");
    // "Each of the two stages idles in the pipeline bubble while the other
    // works, and the DP reduction hides behind the last micro-batch's backward."
    assert_eq!(s.parallel.pp, 2);
    assert!(r.bubble_fraction > 0.1, "bubble {}", r.bubble_fraction);
    // The DP reduction's buckets: the tied embedding's all-reduce on the DP
    // lane runs after the whole backward and hides nothing, by design.
    assert!(dp(r).window_ms > 0.0, "{:?}", dp(r));
    let (mut comm_s, mut exposed_s) = (0.0, 0.0);
    for g in &before.timeline.gpus {
        for iv in &g.comm[Axis::Dp.index()] {
            if iv.op != overlap_core::timeline::OpKind::EmbeddingAllReduce {
                comm_s += iv.end_s - iv.start_s;
                exposed_s += iv.exposed_s;
            }
        }
    }
    assert!(
        comm_s > 0.0 && exposed_s < 0.5 * comm_s,
        "{exposed_s} of {comm_s} s exposed"
    );
    assert_in_chapter(
        "Each of the two stages idles in the pipeline bubble while the other works, and the DP \
         reduction hides behind the last micro-batch's backward.",
    );
    // "ZB-1p splits each backward into B, the input gradient the previous
    // stage waits for, and W, the weight gradient that only the DP reduction
    // waits for."
    assert!(Schedule::ZeroBubble1p.splits_backward());
    assert!(!Schedule::OneFOneB.splits_backward());
    assert_in_chapter(
        "ZB-1p splits each backward into B, the input gradient the previous stage waits for, and W, \
         the weight gradient that only the DP reduction waits for.",
    );
}

#[test]
fn the_explanation_holds_before_and_after() {
    let (_, before) = run(false);
    let (s, after) = run(true);
    let (b, a) = (&before.report, &after.report);
    println!(
        "1F1B -> ZB-1p: step {:.2} -> {:.2} ms, bubble {:.3} -> {:.3}, DP window {:.2} -> {:.2} ms, \
         DP exposed {:.3} -> {:.3} ms",
        b.step_time_ms,
        a.step_time_ms,
        b.bubble_fraction,
        a.bubble_fraction,
        dp(b).window_ms,
        dp(a).window_ms,
        dp(b).exposed_ms,
        dp(a).exposed_ms
    );

    // The bubble and the step shrink.
    assert!(a.bubble_fraction < b.bubble_fraction);
    assert!(a.step_time_ms < b.step_time_ms);
    // The figures are placeholders the page fills from these two runs.
    assert_in_chapter(
        "W fills part of the bubble: it falls from {before:bubble_fraction} to {bubble_fraction} of the \
         step. The step goes from {before:step_time_ms} to {step_time_ms}.",
    );

    // The DP window shrinks.
    assert!(dp(a).window_ms < dp(b).window_ms);
    assert_in_chapter(
        "But the DP window shrinks from {before:axes.dp.window_ms} to {axes.dp.window_ms}.",
    );

    // The first stage finishes the step in both runs and holds no W back:
    // it already keeps as many micro-batches alive as 1F1B does.
    assert_eq!(slowest_stage(&before), 0);
    assert_eq!(slowest_stage(&after), 0);
    let (p, m) = (s.parallel.pp, s.micro_batches());
    let first = stage_program(Schedule::ZeroBubble1p, 0, p, m, 1, true);
    for (k, step) in first.iter().enumerate() {
        if step.pass == Pass::InputGrad {
            let next = first[k + 1];
            assert!(
                matches!(next.pass, Pass::WeightGrad | Pass::HeldWeightGrads)
                    && next.micro_batch == step.micro_batch,
                "the first stage holds the W of micro-batch {} back",
                step.micro_batch
            );
        }
    }
    assert_eq!(
        peak_in_flight(&first, 1),
        peak_in_flight(&stage_program(Schedule::OneFOneB, 0, p, m, 1, true), 1)
    );
    // Its last micro-batch runs every B before any W.
    let ops = backward_ops(gpu_of_stage(&after, 0));
    let last_mb: Vec<_> = ops.iter().filter(|iv| iv.micro_batch == m - 1).collect();
    let last_b_end = last_mb
        .iter()
        .filter(|iv| !iv.op.is_weight_gradient())
        .map(|iv| iv.end_s)
        .fold(0.0, f64::max);
    let first_w_start = last_mb
        .iter()
        .filter(|iv| iv.op.is_weight_gradient())
        .map(|iv| iv.start_s)
        .fold(f64::INFINITY, f64::min);
    assert!(last_b_end <= first_w_start + 1e-12);
    assert_in_chapter(
        "The first stage finishes the step and holds no W back, as it already keeps as many \
         micro-batches alive as 1F1B allows: its last micro-batch runs all its B before any W, so its \
         gradients become final only in that last W.",
    );

    // The second stage runs its last two W after its last B, layer by layer,
    // and its own reduction starts under them.
    let second = gpu_of_stage(&after, 1);
    let ops = backward_ops(second);
    let last_b = ops
        .iter()
        .rposition(|iv| !iv.op.is_weight_gradient())
        .expect("B ops");
    let held = &ops[last_b + 1..];
    let mut mbs: Vec<u32> = held.iter().map(|iv| iv.micro_batch).collect();
    mbs.sort_unstable();
    mbs.dedup();
    assert_eq!(mbs, vec![m - 2, m - 1], "the W after the last B");
    let layers: Vec<u32> = held.iter().map(|iv| iv.layer).collect();
    assert!(
        layers.windows(2).all(|w| w[0] >= w[1]),
        "layer by layer: {layers:?}"
    );
    let first_dp = second.comm[Axis::Dp.index()]
        .iter()
        .map(|iv| iv.start_s)
        .fold(f64::INFINITY, f64::min);
    let last_w_end = held.last().expect("held W").end_s;
    assert!(
        first_dp < last_w_end,
        "the second stage's first DP bucket starts at {first_dp}, after its last W ends at {last_w_end}"
    );
    assert_in_chapter(
        "The second stage runs its last two W after its last B, layer by layer, and its own reduction \
         starts under them.",
    );

    // DP exposure does not move: on the first stage the last bucket is
    // reduced after the last backward op in both runs.
    assert_eq!(
        format!("{:.1}", dp(b).exposed_ms * 1e3),
        format!("{:.1}", dp(a).exposed_ms * 1e3)
    );
    for sim in [&before, &after] {
        let gpu = gpu_of_stage(sim, 0);
        let last_backward_end = backward_ops(gpu)
            .iter()
            .map(|iv| iv.end_s)
            .fold(0.0, f64::max);
        let last_dp_start = gpu.comm[Axis::Dp.index()]
            .iter()
            .map(|iv| iv.start_s)
            .fold(0.0, f64::max);
        assert!(last_dp_start + 1e-12 >= last_backward_end);
    }
    assert_in_chapter(
        "DP exposed stays at {axes.dp.exposed_ms}: on the first stage the last bucket and the tied \
         embedding's all-reduce run after the last backward op either way.",
    );
}
