//! Which runs answer in two messages: the figures as soon as the core's
//! report-only path returns them, then the timeline. Decided from the core's
//! own prediction of a run's work (`workload::build::run_cost`), never from a list of
//! presets, so that any scenario as large as the big presets gets its
//! figures first, and none of the small ones pays for a second message.

use overlap_core::workload::build::run_cost;
use overlap_core::Scenario;

/// Engine events (planned, both runs counted: the core's upper bound) from
/// which a run's timeline takes long enough in the worker to be worth
/// showing its figures first. The presets fall well apart around it: the
/// zero-bubble and FSDP presets plan at most about 360 000 and simulate in a
/// few tens of milliseconds; the 175B and 145.6B presets plan over a million,
/// the 1T preset about 40 million.
pub const FIGURES_FIRST_MIN_PLANNED_EVENTS: u64 = 1_000_000;

/// True when the worker should post the scenario's figures before
/// computing its timeline.
pub fn figures_first(scenario: &Scenario) -> bool {
    run_cost::cost(scenario).planned_events >= FIGURES_FIRST_MIN_PLANNED_EVENTS
}

#[cfg(test)]
mod tests {
    use super::*;
    use overlap_core::presets;

    fn scenario(id: &str) -> Scenario {
        presets::find(id)
            .unwrap_or_else(|| panic!("no preset {id}"))
            .input()
            .resolve()
            .unwrap_or_else(|e| panic!("{id} does not resolve: {e:?}"))
    }

    #[test]
    fn the_default_scenario_answers_in_one_message_and_1t_figures_first() {
        for p in presets::PRESETS {
            let s = scenario(p.id);
            println!(
                "{:26} planned events {:>10} figures first {}",
                p.id,
                run_cost::cost(&s).planned_events,
                figures_first(&s)
            );
        }
        assert!(!figures_first(
            &presets::default_preset().input().resolve().unwrap()
        ));
        assert!(figures_first(&scenario("megatron-1t")));
        let mut on = presets::find("megatron-1t").unwrap().input();
        on.overlap.tp = Some(true);
        assert!(figures_first(&on.resolve().unwrap()));
    }
}
