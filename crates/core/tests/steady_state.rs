//! Figures from the steady state (`steady_state.rs`): three short runs
//! extrapolated to the scenario's micro-batch count must give the figures
//! of the full simulation to 1e-9, and must be used on the largest presets.

use overlap_core::steady_state::steady_counts;
use overlap_core::{presets, simulate, simulate_report, Figures, Report, Scenario, ScenarioInput};
use proptest::prelude::*;

/// Equal to a part in a billion of the larger, or both within 1e-12 of
/// zero (ms or a fraction: far below anything the report prints).
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()) || (a - b).abs() <= 1e-12
}

fn compare(what: &str, path: &str, a: &serde_json::Value, b: &serde_json::Value) {
    use serde_json::Value;
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            assert_eq!(x.len(), y.len(), "{what}{path}");
            for (k, v) in x {
                compare(what, &format!("{path}.{k}"), v, &y[k]);
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            assert_eq!(x.len(), y.len(), "{what}{path}");
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                compare(what, &format!("{path}[{i}]"), v, w);
            }
        }
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            assert!(
                close(x, y),
                "{what}{path}: extrapolated {x} vs simulated {y}"
            );
        }
        _ => assert_eq!(a, b, "{what}{path}"),
    }
}

/// Every figure of the two reports agrees to 1e-9 (see [`close`]).
fn same_figures(what: &str, extrapolated: &Report, full: &Report) {
    compare(
        what,
        "",
        &serde_json::to_value(extrapolated).unwrap(),
        &serde_json::to_value(full).unwrap(),
    );
}

/// The report-only figures against the full simulation's; whether the
/// scenario's figures were extrapolated.
fn check(what: &str, s: &Scenario) -> Figures {
    let only = simulate_report(s);
    let full = simulate(s);
    same_figures(what, &only.report, &full.report);
    only
}

#[test]
fn extrapolated_figures_equal_the_full_simulation_on_the_presets() {
    let mut extrapolated = Vec::new();
    for p in presets::PRESETS {
        // 1T is simulated in full by the benchmark, not here.
        if p.id == "megatron-1t" {
            continue;
        }
        let s = presets::scenario(p.id).unwrap();
        let mut on = s.clone();
        on.overlap.tp = true;
        on.overlap.pp = true;
        on.overlap.dp = true;
        for (what, s) in [(p.id.to_string(), s), (format!("{} all on", p.id), on)] {
            let f = check(&what, &s);
            if f.extrapolated_from.is_some() {
                extrapolated.push(what.clone());
            }
            assert_eq!(
                f.extrapolated_from,
                f.extrapolated_from.and(steady_counts(&s))
            );
        }
    }
    println!("extrapolated: {extrapolated:?}");
    assert!(
        extrapolated
            .iter()
            .any(|w| w.starts_with("megatron-145.6b")),
        "145.6B was not extrapolated: {extrapolated:?}"
    );
}
