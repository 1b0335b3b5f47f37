//! Windows and exposure (model.md 5 and 6): on any scenario and for every
//! axis, exposed time never exceeds the axis's communication, and hidden
//! time (communication minus exposed) never exceeds its window. Windows are
//! reported whether the overlap switch is on or off.

use overlap_core::{presets, simulate, Axis, Report, ScenarioInput};
use proptest::prelude::*;

mod common;
use common::small_scenario;

/// Rounding allowance: a part in a billion of the step.
fn tolerance_ms(r: &Report) -> f64 {
    1e-9 * r.step_time_ms.max(1e-6)
}

fn check(what: &str, r: &Report) {
    let tol = tolerance_ms(r);
    for axis in Axis::ALL {
        let a = r.axes.get(axis);
        assert!(
            a.exposed_ms <= a.comm_ms + tol,
            "{what}: {} exposed {} > comm {}",
            axis.label(),
            a.exposed_ms,
            a.comm_ms
        );
        assert!(
            a.comm_ms - a.exposed_ms <= a.window_ms + tol,
            "{what}: {} hides {} behind a window of {}",
            axis.label(),
            a.comm_ms - a.exposed_ms,
            a.window_ms
        );
    }
}

#[test]
fn presets_hide_no_more_than_their_windows() {
    for p in presets::PRESETS {
        if p.id.starts_with("megatron-1t") || p.id.contains("175b") {
            continue; // large: covered by their smaller siblings
        }
        let s = presets::scenario(p.id).unwrap();
        check(p.id, &simulate(&s).report);
    }
}

#[test]
fn windows_are_reported_with_overlap_off() {
    let mut s = presets::scenario("didactic").unwrap();
    s.overlap.tp = false;
    s.overlap.pp = false;
    s.overlap.dp = false;
    let r = simulate(&s).report;
    for axis in Axis::ALL {
        let a = r.axes.get(axis);
        println!(
            "{}: comm {:.3} ms, window {:.3} ms",
            axis.label(),
            a.comm_ms,
            a.window_ms
        );
        assert!(
            a.window_ms > 0.0,
            "{} has no window with overlap off",
            axis.label()
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(120))]

    #[test]
    fn hidden_time_never_exceeds_the_window(
        small in small_scenario::small(small_scenario::FIRST_SCHEDULES, 4, 6),
        tax in 0.0f64..0.9,
    ) {
        let json = small.json("", &format!(r#","sm_tax":{tax}"#));
        let Ok(s) = ScenarioInput::from_json(&json).unwrap().resolve() else {
            return Ok(());
        };
        check(&json, &simulate(&s).report);
    }
}
