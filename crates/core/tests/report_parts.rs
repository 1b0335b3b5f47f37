//! A step's figures made of independent parts (`Simulator::report_parts`):
//! whether the parts run on one thread or several, in this simulator or in
//! another one and sent back as JSON (as the page's second worker sends
//! them), the figures are the same bit for bit.

use overlap_core::steady_state::marked_counts;
use overlap_core::{presets, Fidelity, PartRan, Scenario, Simulator};

fn report_json(sim: &mut Simulator, s: &Scenario) -> String {
    let figures = sim.simulate_report(s).expect("within the budget");
    serde_json::to_string(&figures.report).unwrap()
}

/// The figures of `s` with every part run by a simulator of its own and
/// carried as JSON text, as between two workers.
fn from_carried_parts(s: &Scenario) -> (String, usize) {
    let mut sim = Simulator::default();
    let parts = sim.report_parts(s);
    let ran: Vec<PartRan> = parts
        .iter()
        .rev()
        .map(|&part| {
            let text = serde_json::to_string(&Simulator::default().run_part(s, part)).unwrap();
            serde_json::from_str(&text).expect("a part's result reads back")
        })
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let figures = sim.report_from_parts(s, ran).expect("within the budget");
    (serde_json::to_string(&figures.report).unwrap(), parts.len())
}

fn scenarios() -> Vec<(String, Scenario)> {
    let mut all = Vec::new();
    for id in ["didactic", "megatron-1.7b", "megatron-145.6b", "zb-1.5b-24"] {
        let s = presets::scenario(id).unwrap();
        let mut on = s.clone();
        on.overlap.tp = true;
        on.overlap.pp = true;
        on.overlap.dp = true;
        all.push((id.to_string(), s));
        all.push((format!("{id} with every overlap on"), on));
    }
    all
}

#[test]
fn figures_are_the_same_on_one_thread_or_several() {
    for (name, s) in scenarios() {
        let one = report_json(&mut Simulator::default().with_threads(1), &s);
        for threads in [2, 5] {
            let many = report_json(&mut Simulator::default().with_threads(threads), &s);
            assert_eq!(one, many, "{name}: {threads} threads");
        }
    }
}

#[test]
fn parts_run_elsewhere_and_carried_as_json_give_the_same_figures() {
    let mut steady = 0;
    for (name, s) in scenarios() {
        let here = report_json(&mut Simulator::default(), &s);
        let (carried, parts) = from_carried_parts(&s);
        assert_eq!(here, carried, "{name}");
        // Three short runs of the scenario (one where its last marks its
        // periods), and as many of its baseline unless the scenario is its
        // own baseline.
        if overlap_core::steady_state::steady_counts(&s).is_some() {
            steady += 1;
            let runs = if marked_counts(&s).is_some() { 1 } else { 3 };
            let expected = if s.all_overlap_off() == s {
                runs
            } else {
                2 * runs
            };
            assert_eq!(parts, expected, "{name}: parts");
        }
    }
    assert!(steady >= 4, "only {steady} scenarios with a steady state");
}

#[test]
fn a_remembered_baseline_is_not_listed_again() {
    let s = presets::scenario("megatron-145.6b").unwrap();
    let mut on = s.clone();
    on.overlap.tp = true;
    let mut sim = Simulator::new(Fidelity::Reduced);
    // One run of the scenario and one of its baseline, each standing for
    // three by its marked periods.
    assert_eq!(sim.report_parts(&on).len(), 2);
    sim.simulate_report(&on).unwrap();
    let mut dp = on.clone();
    dp.overlap.dp = true;
    let parts = sim.report_parts(&dp);
    assert_eq!(parts.len(), 1, "{parts:?}");
    assert!(parts.iter().all(|p| !p.baseline));
}

#[test]
fn parts_not_as_listed_are_run_again_rather_than_trusted() {
    let s = presets::scenario("megatron-145.6b").unwrap();
    let mut on = s.clone();
    on.overlap.pp = true;
    let here = report_json(&mut Simulator::default(), &on);
    let mut sim = Simulator::default();
    let parts = sim.report_parts(&on);
    // Only the first part's result came back.
    let first = vec![sim.run_part(&on, parts[0])];
    let figures = sim.report_from_parts(&on, first).unwrap();
    assert_eq!(here, serde_json::to_string(&figures.report).unwrap());
    // None came back.
    let figures = Simulator::default().report_from_parts(&on, vec![]).unwrap();
    assert_eq!(here, serde_json::to_string(&figures.report).unwrap());
}

/// Each scenario's short runs are listed largest first, so that a thread's
/// next run fits in the memory its previous one left (`workload::graph::recycle`),
/// and the figures still come out as from the counts in rising order.
#[test]
fn short_runs_are_listed_largest_first() {
    // One stage: three short runs (a run marks its periods by the first
    // stage's gradients arriving from the second).
    let mut on = presets::scenario("megatron-18.4b").unwrap();
    on.overlap.tp = true;
    assert_eq!(marked_counts(&on), None);
    let parts = Simulator::default().report_parts(&on);
    for baseline in [false, true] {
        let counts: Vec<u32> = parts
            .iter()
            .filter(|p| p.baseline == baseline)
            .filter_map(|p| p.micro_batches)
            .collect();
        assert_eq!(counts.len(), 3, "{parts:?}");
        assert!(counts.windows(2).all(|w| w[0] > w[1]), "{counts:?}");
    }
    let one = report_json(&mut Simulator::default().with_threads(1), &on);
    let two = report_json(&mut Simulator::default().with_threads(2), &on);
    assert_eq!(one, two);
    let whole = Simulator::default().simulate(&on).report;
    let figures = Simulator::default().simulate_report(&on).unwrap();
    assert!(figures.extrapolated_from.is_some(), "from the short runs");
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(b.abs());
    assert!(
        close(figures.report.step_time_ms, whole.step_time_ms),
        "{} against the whole step's {}",
        figures.report.step_time_ms,
        whole.step_time_ms
    );
    assert!(close(figures.report.baseline_ms, whole.baseline_ms));
}

/// A part's events are its own share of the figures' count: the parts of a
/// step add up to what `simulate_report` says it processed (the benchmark
/// weighs each part's time by them).
#[test]
fn the_parts_events_add_up_to_the_figures() {
    for (name, s) in scenarios() {
        let sim = Simulator::default();
        let ran: Vec<PartRan> = sim
            .report_parts(&s)
            .into_iter()
            .map(|part| sim.run_part(&s, part))
            .collect();
        assert!(
            ran.iter().all(|r| r.events() > 0),
            "{name}: a part without events"
        );
        let sum: u64 = ran.iter().map(PartRan::events).sum();
        let figures = Simulator::default().simulate_report(&s).unwrap();
        assert_eq!(sum, figures.events, "{name}");
    }
}

/// A run whose marked periods do not repeat is made again further past
/// the fill, and where none repeats, the last is joined by the two short
/// runs one and two units shorter on the thread (or worker) that has its
/// part: the figures are then the three runs', as equal to the whole
/// step's, and the part carries every run's events.
#[test]
fn marked_periods_that_do_not_repeat_give_the_three_short_runs() {
    let mut on = presets::scenario("megatron-145.6b").unwrap();
    on.overlap.tp = true;
    let tries = overlap_core::steady_state::marked_run_counts(&on);
    assert!(tries.len() > 1, "{tries:?}");
    let last = tries[tries.len() - 1];
    let counts = Some([last - 2, last - 1, last]);
    assert!(marked_counts(&on).is_some());
    let marked = Simulator::default().simulate_report(&on).unwrap();
    let failing = Simulator::with_failing_marks(Fidelity::Reduced);
    let parts = failing.report_parts(&on);
    assert_eq!(parts.len(), 2, "{parts:?}");
    let events: Vec<u64> = parts
        .iter()
        .map(|&p| failing.run_part(&on, p).events())
        .collect();
    let figures = Simulator::with_failing_marks(Fidelity::Reduced)
        .simulate_report(&on)
        .unwrap();
    assert_eq!(figures.extrapolated_from, counts);
    assert_eq!(figures.baseline_extrapolated_from, counts);
    assert_eq!(figures.events, events.iter().sum::<u64>());
    assert!(
        figures.events > 2 * marked.events,
        "{} against {}",
        figures.events,
        marked.events
    );
    let whole = Simulator::default().simulate(&on).report;
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(b.abs());
    for (a, b, what) in [
        (figures.report.step_time_ms, whole.step_time_ms, "step"),
        (figures.report.baseline_ms, whole.baseline_ms, "baseline"),
        (
            marked.report.step_time_ms,
            whole.step_time_ms,
            "marked step",
        ),
    ] {
        assert!(close(a, b), "{what}: {a} against the whole step's {b}");
    }
}
