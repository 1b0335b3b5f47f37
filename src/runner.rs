//! Runs the core on the current scenario input: resolve (which explains any
//! invalid field), simulate, then hand the figures to the signals and the
//! timeline to the scene. The page computes nothing itself.

use leptos::prelude::*;
use overlap_core::ScenarioInput;

use crate::dom;
use crate::frame;
use crate::state::AppState;

/// Re-simulates whenever the scenario input changes.
pub fn install(state: AppState) {
    Effect::new(move |_| {
        let input = state.input.get();
        run(state, &input);
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
    let sim = overlap_core::simulate(&scenario);
    // For the page benchmark: how much of a control change is the core's.
    dom::set_body_data("sim-ms", &format!("{:.1}", dom::now_ms() - t0));
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
    state.run_seq.update(|n| *n += 1);
    // Tests wait on this to know the figures belong to the latest input.
    dom::set_body_data("run-seq", &state.run_seq.get_untracked().to_string());
    frame::request();
}
