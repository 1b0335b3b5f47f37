//! One charge per idle instant (model.md 5), on every simulated GPU, not
//! only the one the report reads: compute, the idle time charged to each
//! axis and the bubble add up to the step, to a part in a billion; each
//! axis's communication is its three parts (under compute, exposed, under
//! idle charged elsewhere), none negative; and the part under compute never
//! exceeds the window. Over every preset's whole step and random scenarios
//! (by the fast engine and the plain reference), from the seed
//! `scripts/test.sh` fixes.

use overlap_core::{gpu_steps, presets, ScenarioInput};
use proptest::prelude::*;

mod common;
use common::small_scenario;

/// Rounding allowance: a part in a billion of the step.
const SLACK: f64 = 1e-9;

fn check(what: &str, (step_s, gpus): &(f64, Vec<overlap_core::GpuStep>)) {
    assert!(*step_s > 0.0 && !gpus.is_empty(), "{what}");
    let slack = SLACK * step_s;
    for g in gpus {
        let exposed: f64 = g.exposed_s.iter().sum();
        assert!(
            (g.compute_s + exposed + g.bubble_s - step_s).abs() <= slack && g.bubble_s >= -slack,
            "{what}, rank {}: compute {} + exposed {:?} + bubble {} != step {step_s}",
            g.rank,
            g.compute_s,
            g.exposed_s,
            g.bubble_s
        );
        for a in 0..overlap_core::Axis::COUNT {
            let parts = [g.under_compute_s[a], g.exposed_s[a], g.under_idle_s[a]];
            assert!(
                parts.iter().all(|&x| x >= -slack)
                    && (parts.iter().sum::<f64>() - g.comm_s[a]).abs() <= slack,
                "{what}, rank {}, axis {a}: parts {parts:?} of {}",
                g.rank,
                g.comm_s[a]
            );
            assert!(
                g.under_compute_s[a] <= g.window_s[a] + slack,
                "{what}, rank {}, axis {a}: {} under compute, window {}",
                g.rank,
                g.under_compute_s[a],
                g.window_s[a]
            );
        }
    }
}

#[test]
fn every_presets_gpus_charge_each_idle_instant_once() {
    for p in presets::PRESETS {
        let s = presets::scenario(p.id).unwrap();
        check(p.id, &gpu_steps(&s, false));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn random_scenarios_charge_each_idle_instant_once(
        small in small_scenario::small(small_scenario::ALL_SCHEDULES, 4, 4),
        tax in 0.0f64..0.5,
    ) {
        let json = small.json("", &format!(r#","sm_tax":{tax}"#));
        let Ok(s) = ScenarioInput::from_json(&json).unwrap().resolve() else {
            return Ok(());
        };
        check(&json, &gpu_steps(&s, false));
        check(&format!("{json} (plain)"), &gpu_steps(&s, true));
    }
}
