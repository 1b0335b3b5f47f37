//! The report-only path (`simulate_report`) skips the timeline and the link
//! samples, and takes its figures from the steady state where it can
//! (`steady_state.rs`); its figures must be those of the full simulation:
//! exactly when it simulated the step in full, to 1e-9 relative when it
//! extrapolated.

use overlap_core::{presets, simulate, simulate_report, Scenario, Simulator};

mod common;
use common::same_figures::same_json;

fn same_report(what: &str, s: &Scenario) {
    let full = simulate(s);
    let only = simulate_report(s).expect("within the budget");
    let (a, b) = (
        serde_json::to_value(&full.report).unwrap(),
        serde_json::to_value(&only.report).unwrap(),
    );
    if only.extrapolated_from.is_none() && only.baseline_extrapolated_from.is_none() {
        assert_eq!(
            a, b,
            "{what}: the report-only figures differ from the full simulation's"
        );
        // A step whose steady state was tried and did not hold would run
        // its short runs and then the whole step; none of these does
        // (`workload::build::schedule::short_runs_pay`): the events are the full
        // run's.
        assert_eq!(full.events, only.events, "{what}: events");
        assert_eq!(
            full.planned_events, only.planned_events,
            "{what}: planned events"
        );
    } else {
        same_json(what, ("full", "report-only"), "", &a, &b);
    }
}

#[test]
fn report_only_equals_the_full_simulation_on_every_small_and_medium_preset() {
    let mut checked = 0;
    for p in presets::PRESETS {
        // The largest steps are covered by the benchmark, not by a test.
        if p.id.starts_with("megatron-1") && p.id != "megatron-1.7b" {
            continue;
        }
        let s = presets::scenario(p.id).unwrap();
        same_report(p.id, &s);
        let mut on = s.clone();
        on.overlap.tp = true;
        on.overlap.pp = true;
        on.overlap.dp = true;
        same_report(&format!("{} with every overlap on", p.id), &on);
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} presets checked");
}

#[test]
fn a_simulator_reuses_its_baseline_for_reports_as_for_timelines() {
    let s = presets::scenario("didactic").unwrap();
    let mut on = s.clone();
    on.overlap.tp = !on.overlap.tp;
    let mut sim = Simulator::default();
    let first = sim.simulate_report(&s).expect("within the budget");
    let second = sim.simulate_report(&on).expect("within the budget");
    // The second run reuses the baseline the first computed: only its own events.
    let alone = simulate_report(&on).expect("within the budget");
    assert!(second.events < alone.events || on.all_overlap_off() == on);
    assert_eq!(second.report.baseline_ms, alone.report.baseline_ms);
    assert_eq!(first.report.step_time_ms, simulate(&s).report.step_time_ms);
}
