//! What the report says holds together on the GPU it reports, whatever the
//! scenario: the presets with up to four fields of the field table changed
//! to values within their ranges. Every figure is finite; each axis's
//! communication is its three parts (under compute, exposed, under idle
//! charged elsewhere), none negative, so a GPU's exposed time on an axis
//! never exceeds the time that axis had a collective in flight on it; the
//! time under compute never exceeds the window (model.md section 5);
//! compute, exposed time and bubble make the step, each idle instant
//! charged once; shares stay within 0..1.
//!
//! The cases come from proptest, from the seed `scripts/test.sh` fixes.

use overlap_core::input::fields::{Field, Kind, FIELDS};
use overlap_core::presets::{self, PRESETS};
use overlap_core::{Axis, Report, Scenario, ScenarioInput, Simulator};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::Value;

/// Scenarios above this many ops per run are left out: the test is about
/// how the figures relate, which small and large steps compute alike.
const MAX_OPS: u64 = 200_000;

/// Cases drawn.
const CASES: u32 = 256;

/// Slack for sums of many floating-point terms, relative to the step.
const SLACK: f64 = 1e-9;

/// A value for `field` from a random draw: mostly within the page's slider,
/// sometimes anywhere in the valid range.
fn value(field: &Field, raw: u64, anywhere: bool) -> Value {
    let unit = (raw >> 11) as f64 / (1u64 << 53) as f64;
    let pick = |min: f64, max: f64| {
        let (lo, hi) = if anywhere {
            (min, max.min(min + 1e6))
        } else {
            (field.slider.0.max(min), field.slider.1.min(max))
        };
        lo + unit * (hi - lo).max(0.0)
    };
    let nth = |len: usize| (raw % len as u64) as usize;
    match field.kind {
        Kind::Int { min, max } => Value::from(pick(f64::from(min), f64::from(max)).round() as u64),
        Kind::Real { min, max } => serde_json::Number::from_f64(pick(min, max))
            .map(Value::Number)
            .unwrap_or(Value::Null),
        Kind::IntOf { choices, .. } => {
            Value::from(choices[nth(choices.len())].name.parse::<u64>().unwrap())
        }
        Kind::Bool => Value::Bool(raw.is_multiple_of(2)),
        Kind::Enum(choices) => Value::from(choices[nth(choices.len())].name),
        // A layout is written for one pp and depth: a random one is refused
        // (`tests/pipeline_layout.rs` checks the figures of real ones).
        Kind::Layout => Value::Null,
        Kind::Switches { choices, .. } => {
            field.parse_text(choices[nth(choices.len())].name).unwrap()
        }
    }
}

/// The report's figures, checked against one another.
fn check(what: &str, r: &Report) {
    let step = r.step_time_ms;
    assert!(step.is_finite() && step > 0.0, "{what}: step {step}");
    let slack = SLACK * step;
    assert!(
        r.compute_ms <= step + slack,
        "{what}: compute {} > step {step}",
        r.compute_ms
    );
    let mut exposed_total = 0.0;
    for axis in Axis::ALL {
        let (name, a) = (axis.name(), r.axes.get(axis));
        let parts = [a.under_compute_ms, a.exposed_ms, a.under_idle_ms];
        for x in [a.comm_ms, a.window_ms, a.contention_ms]
            .iter()
            .chain(&parts)
        {
            assert!(x.is_finite() && *x >= -slack, "{what}: {name} {a:?}");
        }
        // The three parts of the axis's communication are all of it.
        assert!(
            (parts.iter().sum::<f64>() - a.comm_ms).abs() <= slack,
            "{what}: {name} parts {parts:?} of {}",
            a.comm_ms
        );
        assert!(
            a.under_compute_ms <= a.window_ms + slack,
            "{what}: {name} hidden {} > window {}",
            a.under_compute_ms,
            a.window_ms
        );
        // One meaning of hidden (model.md 6): the share under compute,
        // never above window / comm; `not_exposed` keeps 1 - exposed/comm.
        if a.comm_ms > 0.0 {
            let rel = SLACK * step / a.comm_ms;
            assert!(
                (a.hidden - a.under_compute_ms / a.comm_ms).abs() <= rel,
                "{what}: {name} hidden {a:?}"
            );
            assert!(
                (a.not_exposed - (1.0 - a.exposed_ms / a.comm_ms)).abs() <= rel,
                "{what}: {name} not exposed {a:?}"
            );
            assert!(
                a.hidden <= a.window_ms / a.comm_ms + rel,
                "{what}: {name} {a:?}"
            );
        }
        // The heaviest GPU moves at least what the GPU read on moves.
        assert!(
            a.heaviest.comm_ms >= a.comm_ms - slack,
            "{what}: {name} heaviest {:?} under {}",
            a.heaviest,
            a.comm_ms
        );
        exposed_total += a.exposed_ms;
    }
    // Each idle instant charged once: compute, exposed and bubble are the step.
    let bubble_ms = r.bubble_fraction * step;
    assert!(
        (r.compute_ms + exposed_total + bubble_ms - step).abs() <= slack,
        "{what}: compute {} + exposed {exposed_total} + bubble {bubble_ms} != step {step}",
        r.compute_ms
    );
    let shares = [
        ("mfu", r.mfu),
        ("bubble", r.bubble_fraction),
        ("tp hidden", r.axes[Axis::Tp].hidden),
        ("pp hidden", r.axes[Axis::Pp].hidden),
        ("dp hidden", r.axes[Axis::Dp].hidden),
        ("nvlink busy", r.links.nvlink.busy),
        ("nvlink shared", r.links.nvlink.shared),
        ("network busy", r.links.network.busy),
        ("network shared", r.links.network.shared),
    ];
    for (name, x) in shares {
        assert!((-SLACK..=1.0 + SLACK).contains(&x), "{what}: {name} {x}");
    }
}

/// The scenario's figures, checked, unless it is refused or too large
/// here; whether they were checked.
fn figures_hold_together(what: &str, input: ScenarioInput) -> bool {
    let Ok(s) = input.resolve() else {
        return false;
    };
    if overlap_core::workload::estimated_ops(&s) > MAX_OPS {
        return false;
    }
    match Simulator::default().simulate_report(&s) {
        Ok(figures) => {
            check(what, &figures.report);
            true
        }
        Err(_) => false,
    }
}

fn edited(preset: usize, edits: &[(usize, u64, bool)]) -> (String, ScenarioInput) {
    let p = &PRESETS[preset];
    let mut input = p.input();
    let mut what = p.id.to_string();
    for &(f, raw, anywhere) in edits {
        let field = &FIELDS[f];
        let v = value(field, raw, anywhere);
        if (field.set)(&mut input, Some(&v)).is_ok() {
            what += &format!(" {}={v}", field.path);
        }
    }
    (what, input)
}

#[test]
fn presets_with_fields_changed_report_figures_that_hold_together() {
    let edit = (0..FIELDS.len(), any::<u64>(), prop::bool::weighted(0.25));
    let case = (0..PRESETS.len(), prop::collection::vec(edit, 1..=4));
    let mut runner = TestRunner::new(Config {
        cases: CASES,
        failure_persistence: None,
        ..Config::default()
    });
    let checked = std::cell::Cell::new(0);
    runner
        .run(&case, |(preset, edits)| {
            let (what, input) = edited(preset, &edits);
            if figures_hold_together(&what, input) {
                checked.set(checked.get() + 1);
            }
            Ok(())
        })
        .unwrap();
    // Most edits are refused (a TP degree that does not divide the node,
    // ...): enough must remain for the check to mean something.
    assert!(checked.get() >= CASES / 4, "{} checked", checked.get());
}

/// The case the check above first found: CoCoNet's inference preset with
/// an odd layer count, so that the receiving stage is the one reported.
/// That stage waits while the sending stage reduces its output (a
/// ReduceScatter on the sender's NVLink): time it spends waiting on
/// another GPU's work, bubble to it, not its pipeline traffic exposed.
#[test]
fn a_stage_waiting_on_the_senders_reduction_counts_it_as_bubble() {
    let mut input = presets::find("coconet-inference").unwrap().input();
    input.workload.layers = Some(67);
    let s: Scenario = input.resolve().unwrap();
    let r = Simulator::default().simulate_report(&s).unwrap().report;
    check("coconet-inference at 67 layers", &r);
    // Everything the receiving stage moved over the boundary stood in its
    // way, and nothing more: 2.53 ms of 2.92 ms of waiting before.
    let pp = &r.axes[Axis::Pp];
    assert!(pp.comm_ms > 2.0, "{pp:?}");
    assert!(
        (pp.exposed_ms - pp.comm_ms).abs() <= SLACK * r.step_time_ms,
        "{pp:?}"
    );
}
