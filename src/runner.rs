//! Runs the core on the current scenario input: resolve (which explains any
//! invalid field), simulate, then hand the figures to the signals and the
//! timeline to the scene. The page computes nothing itself.

use std::cell::Cell;
use std::time::Duration;

use leptos::prelude::*;
use overlap_core::ScenarioInput;

use crate::dom;
use crate::frame;
use crate::state::AppState;

/// A simulation slower than this blocks the page long enough that a slider
/// drag would queue one per pixel. Changes arriving within `SETTLE_MS` of a
/// slow run are coalesced into one run once the input rests; an isolated
/// change (a click on a switch) still runs at once.
const SLOW_SIM_MS: f64 = 120.0;
const SETTLE_MS: f64 = 250.0;

thread_local! {
    /// Remembers the last all-off baseline: flipping an overlap switch then
    /// re-simulates only the scenario, not its unchanged baseline.
    static SIMULATOR: std::cell::RefCell<overlap_core::Simulator> =
        std::cell::RefCell::new(overlap_core::Simulator::default());
    static LAST_SIM_MS: Cell<f64> = const { Cell::new(0.0) };
    static LAST_RUN_END_MS: Cell<f64> = const { Cell::new(f64::NEG_INFINITY) };
    static GENERATION: Cell<u64> = const { Cell::new(0) };
}

/// Re-simulates whenever the scenario input changes.
pub fn install(state: AppState) {
    Effect::new(move |_| {
        let input = state.input.get();
        let generation = GENERATION.with(|g| {
            g.set(g.get() + 1);
            g.get()
        });
        let slow = LAST_SIM_MS.with(Cell::get) > SLOW_SIM_MS;
        let recent = dom::now_ms() - LAST_RUN_END_MS.with(Cell::get) < SETTLE_MS;
        if slow && recent {
            set_timeout(
                move || {
                    if GENERATION.with(Cell::get) == generation {
                        run(state, &state.input.get_untracked());
                    }
                },
                Duration::from_millis(SETTLE_MS as u64),
            );
        } else {
            run(state, &input);
        }
    });
}

fn run(state: AppState, input: &ScenarioInput) {
    let t0 = dom::now_ms();
    let scenario = match input.resolve() {
        Ok(s) => s,
        Err(e) => {
            // Keep the last valid timeline on screen; the controls explain.
            state.errors.set(e.errors);
            dom::set_body_data("errors", "1");
            return;
        }
    };
    let sim = SIMULATOR.with(|s| s.borrow_mut().simulate(&scenario));
    let sim_ms = dom::now_ms() - t0;
    LAST_SIM_MS.with(|c| c.set(sim_ms));
    // For the page benchmark: how much of a control change is the core's.
    dom::set_body_data("sim-ms", &format!("{sim_ms:.1}"));
    let gpus = sim.timeline.gpus.len();
    let names: Vec<String> = sim
        .timeline
        .gpus
        .iter()
        .map(|g| format!("GPU {} (stage {})", g.rank, g.stage))
        .collect();
    let represents = sim.timeline.gpus.first().map(|g| g.represents).unwrap_or(1);
    let note = if sim.timeline.reduced && represents > 1 {
        format!(
            "{gpus} simulated GPU{} stand for all {} GPUs: each lane group is one GPU standing for {represents} \
             (its TP group and DP replicas behave identically, so they are simulated once).",
            if gpus == 1 { "" } else { "s" },
            scenario.hardware.gpus()
        )
    } else {
        format!("Every one of the {gpus} GPUs is simulated and drawn.")
    };
    {
        let scene = state.scene();
        let mut scene = scene.borrow_mut();
        scene.set_timeline(sim.timeline, !dom::reduced_motion(), dom::now_ms());
        if dom::reduced_motion() {
            scene.playing = false;
            scene.playhead_s = f64::INFINITY;
        }
    }
    let previous = state.report.get_untracked();
    if previous.is_some() {
        state.ghost.set(previous);
    }
    state.report.set(Some(sim.report));
    state.errors.set(Vec::new());
    dom::set_body_data("errors", "0");
    state.resolved.set(Some(scenario));
    state.represents_note.set(note);
    state.gpu_names.set(names);
    if state.link_gpu.get_untracked() >= gpus {
        state.link_gpu.set(0);
    }
    LAST_RUN_END_MS.with(|c| c.set(dom::now_ms()));
    state.run_seq.update(|n| *n += 1);
    // Tests wait on this to know the figures belong to the latest input.
    dom::set_body_data("run-seq", &state.run_seq.get_untracked().to_string());
    frame::paint_now();
    // The whole run, painting included: the page's share is run-ms - sim-ms.
    dom::set_body_data("run-ms", &format!("{:.1}", dom::now_ms() - t0));
}
