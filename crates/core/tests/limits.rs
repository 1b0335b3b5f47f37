//! The two operation limits: a step's figures, which extrapolate from its
//! steady state and so may hold up to `MAX_SIMULATED_OPS`, and its timeline,
//! the whole step at once, held to `MAX_TIMELINE_OPS`. A step over the
//! figures' limit is refused before anything runs, naming a control; one
//! over the timeline's alone still has its figures, and its timeline is
//! refused naming `workload.global_batch` and the value that would draw it.

use overlap_core::scenario::Workload;
use overlap_core::workload::build::run_cost::{budget_within, cost_within};
use overlap_core::{
    presets, simulate_report, timeline_refusal, Fidelity, FieldError, Scenario, ScenarioInput,
    Simulator, MAX_SIMULATED_OPS, MAX_TIMELINE_OPS,
};

/// The 1T-parameter preset (512 micro-batches per pipeline) with every
/// overlap on at four TP chunks and `times` its global batch.
fn one_t_on(times: u32) -> ScenarioInput {
    let mut input = presets::find("megatron-1t").unwrap().input();
    input.overlap.tp = Some(true);
    input.overlap.pp = Some(true);
    input.overlap.dp = Some(true);
    input.overlap.tp_chunks = Some(4);
    input.workload.global_batch = Some(3072 * times);
    input
}

fn with_batch(input: &ScenarioInput, global_batch: u32) -> ScenarioInput {
    let mut i = input.clone();
    i.workload.global_batch = Some(global_batch);
    i
}

fn global_batch(s: &Scenario) -> u32 {
    match &s.workload {
        Workload::Transformer(t) => t.global_batch,
        Workload::MatmulAllreduce(_) | Workload::Collective(_) => unreachable!("a transformer"),
    }
}

/// The number after the last "global_batch ... " in a message: the value it proposes.
fn proposed_batch(e: &FieldError) -> u32 {
    let tail = &e.message[e.message.rfind("global_batch").expect("names it")..];
    tail.split(|c: char| !c.is_ascii_digit())
        .find(|w| !w.is_empty())
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("no value in {e}"))
}

#[test]
fn the_figures_limit_is_twenty_times_the_one_t_step_with_every_overlap_on() {
    let s = one_t_on(1).resolve().unwrap();
    let ops = cost_within(&s, u64::MAX).unwrap().ops;
    println!("1T all on: {ops} ops; limits {MAX_SIMULATED_OPS} / {MAX_TIMELINE_OPS}");
    assert!(ops > 3_000_000 && ops <= MAX_TIMELINE_OPS, "{ops}");
    assert!(20 * ops <= MAX_SIMULATED_OPS);
    assert_eq!(timeline_refusal(&s), None, "1T all on keeps its timeline");
}

#[test]
fn one_t_with_twenty_times_the_micro_batches_gives_figures_and_refuses_its_timeline() {
    let input = one_t_on(20);
    let s = input.resolve().expect("the figures' limit admits it");
    let step = cost_within(&s, u64::MAX).unwrap();
    assert!(step.ops > 60_000_000, "{step:?}");
    // What the figures may simulate: three short runs per scenario (one
    // where its last marks periods that repeat), far below a timeline.
    let budget = budget_within(&s, MAX_TIMELINE_OPS).expect("short runs");
    assert_eq!(budget.step, step);
    assert!(budget.figures.ops < MAX_TIMELINE_OPS / 4, "{budget:?}");

    let figures = simulate_report(&s).expect("its figures");
    // One run of 68 micro-batches, whose two marked periods stand for 69 and 70.
    assert_eq!(figures.extrapolated_from, Some([68, 69, 70]));
    let r = &figures.report;
    assert!(
        r.step_time_ms > 0.0 && r.baseline_ms > r.step_time_ms,
        "{r:?}"
    );
    // Twenty times the micro-batches: the step takes about twenty times as
    // long (the fill and the step's end are paid once).
    let one = simulate_report(&one_t_on(1).resolve().unwrap()).unwrap();
    let ratio = r.step_time_ms / one.report.step_time_ms;
    assert!(ratio > 17.0 && ratio < 20.0, "{ratio}");

    let e = timeline_refusal(&s).expect("its timeline is over the limit");
    assert_eq!(e.field, "workload.global_batch", "{e}");
    assert!(e.message.contains("62.9 M operations"), "{e}");
    assert!(e.message.contains("limit of 3.5 M"), "{e}");
    let best = proposed_batch(&e);
    // The proposed batch draws, the next valid one (one micro-batch per replica more) does not.
    let at = |b: u32| with_batch(&input, b).resolve().unwrap();
    assert_eq!(timeline_refusal(&at(best)), None, "{e}");
    assert!(timeline_refusal(&at(best + 6)).is_some(), "{e}");
    assert_eq!(global_batch(&at(best)), best);

    let refused = Simulator::default().try_simulate(&s).expect_err("refused");
    assert_eq!(refused, e);
}

#[test]
fn a_step_over_the_figures_limit_is_refused_before_anything_runs_naming_the_control() {
    // TP overlap's chunks multiply the step's ops: they are named first.
    let on = one_t_on(25);
    let e = on.resolve().unwrap_err();
    let first = &e.errors[0];
    assert_eq!(first.field, "overlap.tp_chunks", "{first}");
    assert!(first.message.contains("limit of 70.0 M"), "{first}");
    let chunks: u32 = first.message.rsplit(' ').next().unwrap().parse().unwrap();
    let mut fewer = on.clone();
    fewer.overlap.tp_chunks = Some(chunks);
    assert!(fewer.resolve().is_ok(), "{first}");

    // Without TP overlap, the batch.
    let mut off = one_t_on(50);
    off.overlap.tp = Some(false);
    let e = off.resolve().unwrap_err();
    let first = &e.errors[0];
    assert_eq!(first.field, "workload.global_batch", "{first}");
    assert!(first.message.contains("limit of 70.0 M"), "{first}");
    let best = proposed_batch(first);
    assert!(with_batch(&off, best).resolve().is_ok(), "{first}");
    assert!(with_batch(&off, best + 6).resolve().is_err(), "{first}");
    assert!(best >= 40 * 3072, "{first}");
}

#[test]
fn a_gpipe_step_over_the_limit_of_one_run_is_refused_up_front() {
    // GPipe has no steady state to extrapolate from: its figures simulate
    // the whole step at once, so the limit of one run applies to it.
    let mut input = one_t_on(1);
    input.parallel.schedule = Some(overlap_core::scenario::Schedule::Gpipe);
    input.overlap.tp = Some(false);
    let fits = input
        .resolve()
        .expect("1T with GPipe, TP overlap off, fits");
    assert_eq!(timeline_refusal(&fits), None);
    let over = with_batch(&input, 3072 * 4);
    let e = over.resolve().unwrap_err();
    let first = &e.errors[0];
    assert_eq!(first.field, "workload.global_batch", "{first}");
    assert!(first.message.contains("no steady state"), "{first}");
    assert!(first.message.contains("limit of 3.5 M"), "{first}");
    let best = proposed_batch(first);
    assert!(with_batch(&input, best).resolve().is_ok(), "{first}");
    assert!(with_batch(&input, best + 6).resolve().is_err(), "{first}");
    // The same schedule at the same batch in 1F1B extrapolates: its figures fit.
    let mut one_f_one_b = over.clone();
    one_f_one_b.parallel.schedule = Some(overlap_core::scenario::Schedule::OneFOneB);
    assert!(one_f_one_b.resolve().is_ok());
}

#[test]
fn a_steady_state_that_fails_over_the_limit_of_one_run_is_refused_naming_the_batch() {
    let input = one_t_on(20);
    let s = input.resolve().unwrap();
    let mut sim = Simulator::with_failing_steady_state(Fidelity::Reduced);
    let e = sim
        .simulate_report(&s)
        .expect_err("no full run of 63 M ops");
    assert_eq!(e.field, "workload.global_batch", "{e}");
    assert!(e.message.contains("cannot be extrapolated"), "{e}");
    assert!(e.message.contains("62.9 M"), "{e}");
    let best = proposed_batch(&e);
    assert_eq!(
        timeline_refusal(&with_batch(&input, best).resolve().unwrap()),
        None,
        "{e}"
    );
    assert!(timeline_refusal(&with_batch(&input, best + 6).resolve().unwrap()).is_some());
}

#[test]
fn a_steady_state_that_fails_within_the_limit_is_simulated_in_full() {
    // The 145.6B preset extrapolates; forced to fail, it runs in full and
    // gives the same figures.
    let s = presets::scenario("megatron-145.6b").unwrap();
    let extrapolated = simulate_report(&s).unwrap();
    assert!(extrapolated.extrapolated_from.is_some());
    let full = Simulator::with_failing_steady_state(Fidelity::Reduced)
        .simulate_report(&s)
        .expect("within the limit of one run");
    assert_eq!(full.extrapolated_from, None);
    let (a, b) = (extrapolated.report.step_time_ms, full.report.step_time_ms);
    assert!((a - b).abs() <= 1e-9 * b, "{a} vs {b}");
}

#[test]
fn one_t_all_off_at_ten_and_twenty_times_the_batch_gives_figures_on_one_line() {
    // Its DP reduction and optimizer step are the same at every count; the
    // three short runs give their sums equal up to rounding, which must not
    // read as a change of slope. The step at 1, 10 and 20 times the batch
    // then lies on one line: past the fill, each micro-batch adds a period.
    let figures = |times: u32| {
        let mut input = one_t_on(times);
        input.overlap.tp = Some(false);
        input.overlap.pp = Some(false);
        input.overlap.dp = Some(false);
        let s = input.resolve().expect("within the figures' limit");
        let f = simulate_report(&s).expect("extrapolated");
        assert!(f.extrapolated_from.is_some(), "{times}x: simulated whole");
        f.report
    };
    let (one, ten, twenty) = (figures(1), figures(10), figures(20));
    let (a, b, c) = (one.step_time_ms, ten.step_time_ms, twenty.step_time_ms);
    println!("1T all off: step {a} / {b} / {c} ms at 1x / 10x / 20x");
    let period_ms = (c - b) / (10.0 * 512.0);
    assert!(
        ((b - a) / (9.0 * 512.0) - period_ms).abs() <= 1e-9 * period_ms,
        "{a} {b} {c}"
    );
    let dp = |r: &overlap_core::Report| r.axes.get(overlap_core::Axis::Dp).comm_ms;
    assert!(
        (dp(&twenty) - dp(&one)).abs() <= 1e-9 * dp(&one),
        "DP {} vs {}",
        dp(&one),
        dp(&twenty)
    );
}

/// When not even one layer per stage and one micro-batch fit, the refusal
/// names the largest pp that does, with the dp that keeps the GPU count,
/// and that suggestion is accepted: 4,096 stages of CP 2 at 64K tokens share
/// the network too densely to re-rate, 512 do not.
#[test]
fn too_many_stages_are_refused_with_the_largest_pp_that_fits() {
    let text = r#"{"hardware":{"nodes":8192},"parallel":{"tp":8,"pp":4096,"dp":1,"cp":2},
        "workload":{"layers":4096,"global_batch":1,"micro_batch":1,"seq":65536}}"#;
    let e = ScenarioInput::from_json(text)
        .unwrap()
        .resolve()
        .unwrap_err();
    let f = &e.errors[0];
    assert_eq!(f.field, "parallel.pp", "{e}");
    assert!(
        f.message
            .contains("the largest valid pp here is 512 (with dp 8 and global_batch 8)"),
        "{e}"
    );
    let suggested = text
        .replace(r#""pp":4096,"dp":1"#, r#""pp":512,"dp":8"#)
        .replace(r#""global_batch":1"#, r#""global_batch":8"#);
    ScenarioInput::from_json(&suggested)
        .unwrap()
        .resolve()
        .expect("the suggested pp is accepted");
}
